"""The dashboard's contact points with Streamlit (issue 21, item 7).

* ``pages/_streamlit_compat.py``, the only module that reads Streamlit internals: the internals
  are there in the installed Streamlit, the expiry does what the reaper needs, and a Streamlit
  without them degrades to a logged no-op.
* The public replacements of the internals used before: the session-end hook
  (``pages/_lifecycle.session_life``: a session-scoped ``st.cache_resource`` with
  ``on_release``) that stops a run whose tab closed, and the legacy ``pages/`` router left
  through ``st.navigation`` (``pages/_common._leave_legacy_router``).

The real-server paths (a closed tab's fit stops, memory returns after the reconnection window,
a fresh server's first deep link) are ``tests/e2e/test_hostile_e2e.py`` and
``tests/e2e/test_app_e2e.py``.
"""

from __future__ import annotations

import inspect
import logging
import threading
import time
from types import SimpleNamespace

import pytest
import streamlit as st
import streamlit.testing.v1.app_test as _app_test
from apptest_helpers import APP, clear_caches
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

from pages import _streamlit_compat as compat

pytestmark = pytest.mark.filterwarnings(
    "ignore::dpcore.privacy.guarantees.PrivacyLeakWarning", "ignore::UserWarning"
)


@pytest.fixture(autouse=True)
def _fresh_warnings(monkeypatch):
    monkeypatch.setattr(compat, "_warned", set())


# -- pages/_streamlit_compat.py: the internals, and what happens without them -----------------


def test_the_internals_read_exist_in_the_installed_streamlit():
    """The names the reaper reads off a running server exist (a renamed one would turn it into
    a logged no-op: fail here, at the upgrade, instead)."""
    from streamlit.runtime.memory_session_storage import MemorySessionStorage
    from streamlit.runtime.runtime import Runtime
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    assert compat._runtime_class() is Runtime
    assert hasattr(Runtime, "_get_async_objs")
    assert "self._session_mgr" in inspect.getsource(Runtime.__init__)
    init = inspect.getsource(WebsocketSessionManager.__init__)
    assert "self._storage_lock" in init and "self._session_storage" in init
    assert hasattr(WebsocketSessionManager, "is_active_session")
    assert hasattr(MemorySessionStorage(ttl_seconds=1)._cache, "expire")


class _Session:
    def __init__(self, sid: str) -> None:
        self.id = sid
        self.shut = threading.Event()

    def shutdown(self) -> None:
        self.shut.set()


class _Loop:
    """Stands in for the server's event loop: runs the callback at once."""

    def __init__(self) -> None:
        self.calls = 0

    def call_soon_threadsafe(self, fn) -> None:
        self.calls += 1
        fn()


def _manager(ttl: float, active: set[str]):
    from streamlit.runtime.memory_session_storage import MemorySessionStorage
    from streamlit.runtime.session_manager import SessionInfo

    storage = MemorySessionStorage(ttl_seconds=ttl)
    sessions = [_Session(f"s{i}") for i in range(3)]
    for s in sessions:
        storage.save(SessionInfo(client=None, session=s))  # type: ignore[arg-type]
    mgr = SimpleNamespace(_session_storage=storage, _storage_lock=threading.Lock(),
                          is_active_session=lambda sid: sid in active)
    return mgr, sessions


def test_expired_sessions_are_removed_and_shut_down_on_the_loop():
    """Stored sessions past their TTL are removed from Streamlit's real storage and shut down
    (their uploaded files and caches released), except one that reconnected meanwhile; none
    before the TTL. Catches a reaper that only lists (Streamlit's TTL cache reaps lazily), one
    that shuts down a session a tab is using again, and storage internals that moved."""
    mgr, sessions = _manager(ttl=60, active=set())
    loop = _Loop()
    assert compat.expire_stored_sessions(mgr, loop) == 0 and loop.calls == 0
    assert len(mgr._session_storage._cache._data) == 3

    mgr, sessions = _manager(ttl=0.05, active={"s1"})
    time.sleep(0.1)
    assert compat.expire_stored_sessions(mgr, loop) == 3 and loop.calls == 1
    assert mgr._session_storage.list() == [] and not mgr._session_storage._cache._data
    assert [s.shut.is_set() for s in sessions] == [True, False, True]


def test_without_the_event_loop_expired_sessions_are_dropped_without_shutdown():
    mgr, sessions = _manager(ttl=0.05, active=set())
    time.sleep(0.1)
    assert compat.expire_stored_sessions(mgr, None) == 3
    assert mgr._session_storage.list() == [] and not any(s.shut.is_set() for s in sessions)


def test_moved_storage_internals_skip_the_expiry_with_one_log_line(caplog):
    """A Streamlit whose session manager lacks the storage internals: nothing expires, nothing
    raises, one warning names the skipped feature (not one per reaper pass)."""
    mgr = SimpleNamespace(is_active_session=lambda sid: False)
    with caplog.at_level(logging.WARNING, logger=compat.__name__):
        assert compat.expire_stored_sessions(mgr, _Loop()) == 0
        assert compat.expire_stored_sessions(mgr, _Loop()) == 0
    lines = [r.getMessage() for r in caplog.records if r.name == compat.__name__]
    assert len(lines) == 1 and "expiry of disconnected sessions skipped" in lines[0], lines


def test_a_missing_runtime_class_means_no_server_features(monkeypatch, caplog):
    monkeypatch.setattr(compat, "_runtime_class", lambda: None)
    with caplog.at_level(logging.WARNING, logger=compat.__name__):
        assert compat.is_real_server() is False
        assert compat.expire_disconnected_sessions() == 0
    assert any("server detection" in r.getMessage() for r in caplog.records)


def test_not_a_real_server_in_bare_python_or_under_apptest():
    """The reaper (allocator tuning) must never start in the tests' process."""
    assert compat.is_real_server() is False
    assert compat.expire_disconnected_sessions() == 0

    def script():
        import streamlit as st

        from pages._streamlit_compat import is_real_server

        st.session_state["real"] = is_real_server()

    at = AppTest.from_function(script).run()
    assert not at.exception and at.session_state["real"] is False


# -- public replacements: the session-end hook --------------------------------------------------


def test_session_end_hook_fires_on_release():
    """``session_life`` is one object per session (AppTest has one session id, "test session
    id", so one session here; a server's sessions each get their own), and Streamlit's release
    of the session's resources (on disconnect; here ``st.cache_resource.clear()``, which calls
    the same ``on_release``) ends it and counts it for the reaper; the next run gets a new one."""
    from pages import _lifecycle

    def script():
        import streamlit as st

        from pages._lifecycle import session_life

        st.session_state["life"] = session_life()
        st.session_state["again"] = session_life()

    clear_caches()
    at = AppTest.from_function(script).run()
    life = at.session_state["life"]
    assert life is at.session_state["again"] and not life.ended.is_set()
    before = _lifecycle.sessions_ended()
    st.cache_resource.clear()
    assert life.ended.is_set() and _lifecycle.sessions_ended() == before + 1
    at.run()
    assert at.session_state["life"] is not life and not at.session_state["life"].ended.is_set()


def test_session_life_outside_a_script_run_is_none_not_an_error():
    from pages._lifecycle import session_life

    life = session_life()
    assert life is None or not life.ended.is_set()


def test_a_background_run_stops_when_its_session_ends():
    """A fit thread whose browser session ended stops at its next checkpoint (it used to ask
    the Runtime whether its session id was still active)."""

    def script():
        import time

        import streamlit as st

        from dpcore.core.cancel import checkpoint
        from pages._run import start

        def slow():
            for i in range(3000):
                checkpoint(i / 3000, f"step {i}")
                time.sleep(0.01)
            return "finished"

        if "job" not in st.session_state:
            st.session_state["job"] = start("t", "k", slow, background=True)

    clear_caches()
    at = AppTest.from_function(script).run()
    job = at.session_state["job"]
    time.sleep(0.3)
    assert not job.done and 0 < job.fraction < 1  # running, reporting progress
    t0 = time.monotonic()
    st.cache_resource.clear()  # what Streamlit does to a session's resources on disconnect
    job.thread.join(timeout=3)
    assert job.done and job.cancelled and job.result is None, job
    assert time.monotonic() - t0 < 1.0


# -- public replacements: leaving the legacy pages/ router ---------------------------------------


def test_a_page_run_by_the_legacy_router_reruns_through_the_frame(monkeypatch):
    """With AppTest's own PagesManager every run starts in Streamlit's legacy ``pages/`` router
    (as a fresh server's first session does), which runs the page file without ``app.py``. The
    page leaves it through ``st.navigation`` + ``st.rerun``: the frame (sidebar) is there and
    the page asked for is shown."""
    monkeypatch.setattr(_app_test, "PagesManager", PagesManager)
    clear_caches()
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    at.switch_page("pages/ledger.py").run()
    assert not at.exception
    assert [t.value for t in at.title][:1] == ["Privacy ledger"], [t.value for t in at.title]
    assert at.sidebar.selectbox(key="data").value == "cities"
    assert "pages/ledger.py" in at.session_state["nav_pages"]  # app.py's navigation ran


def test_leaving_the_legacy_router_never_loops(monkeypatch, caplog):
    """Were the page ever misjudged as run without ``app.py`` (the frame not found on the call
    stack), it re-runs once, then shows the page as it is with a log line, instead of
    re-running for ever."""
    from pages import _common

    clear_caches()
    at = AppTest.from_file(APP, default_timeout=60).run()
    judged = _common._running_page

    def misjudged():  # a page never finds app.py below it; app.py's own call is unchanged
        in_frame, page = judged()
        return (False, page) if page is not None else (in_frame, page)

    monkeypatch.setattr(_common, "_running_page", misjudged)
    with caplog.at_level(logging.WARNING, logger=_common.__name__):
        at.switch_page("pages/ledger.py").run()
    assert not at.exception
    assert [t.value for t in at.title][:1] == ["Privacy ledger"]
    assert any("without app.py twice" in r.getMessage() for r in caplog.records)
