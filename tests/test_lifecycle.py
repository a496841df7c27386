"""Memory going back after a dashboard session ends: :mod:`dpcore.core.memory` and
``pages/_lifecycle.py`` (the end-to-end number is ``tests/e2e/test_hostile_e2e.py``)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="glibc allocator and /proc are Linux's")

# Allocates 96 MiB in 4 MiB numpy blocks from a worker thread (its own malloc arena, as a fit
# thread's), after one 16 MiB block was freed (which raises glibc's dynamic mmap threshold, so
# the 4 MiB blocks land on the heap), keeps every 8th block so the freed ones sit between live
# ones (the heap top cannot shrink), frees the rest and prints the resident MiB before and
# after the call under test.
_CHILD = """
import sys, threading, numpy as np
from dpcore.core import memory
if sys.argv[1] == "tuned":
    assert memory.tune_allocator()
big = np.ones(16 << 17); del big
kept = []
def work():
    blocks = [np.ones(1 << 19) for _ in range(24)]
    kept.extend(blocks[::8]); blocks.clear()
t = threading.Thread(target=work); t.start(); t.join()
before = memory.resident_bytes()
freed = memory.release_memory() if sys.argv[2] == "release" else 0
print(before / 2**20, memory.resident_bytes() / 2**20, freed / 2**20)
"""


def _child(tuned: str, release: str) -> tuple[float, float, float]:
    out = subprocess.run([sys.executable, "-c", _CHILD, tuned, release], capture_output=True,
                         text=True, timeout=120, check=True)
    before, after, freed = map(float, out.stdout.split())
    return before, after, freed


def test_release_memory_gives_freed_heap_back():
    """A worker thread's freed 4 MiB blocks stay resident under glibc's defaults and go back
    with :func:`release_memory`. Catches a release that does not reach ``malloc_trim`` (wrong
    library, no-op off the main arena) or that only collects garbage."""
    before, after, _ = _child("default", "keep")
    assert after > before - 10  # the premise: freeing alone gives back little
    before, after, freed = _child("default", "release")
    assert before - after > 50 and freed > 50, (before, after, freed)


def test_tuned_allocator_returns_large_blocks_without_a_trim():
    """After :func:`tune_allocator` a 4 MiB block is its own mapping, unmapped on free, so RSS
    falls without any trim. Catches wrong ``mallopt`` parameter numbers or values (mallopt
    then returns 0, or the threshold stays dynamic)."""
    after = _child("tuned", "keep")[1]
    baseline_after = _child("default", "keep")[1]
    assert after < baseline_after - 50, (after, baseline_after)


class _Session:
    def __init__(self, sid: str) -> None:
        self.id = sid
        self.shut = threading.Event()

    def shutdown(self) -> None:
        self.shut.set()


class _Loop:
    """Stands in for the server's event loop: runs the callback at once, records the thread."""

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
    that shuts down a session a tab is using again, and storage internals that moved in a
    Streamlit upgrade (the attributes read here are the ones the server's reaper reads)."""
    from pages._lifecycle import expire_stored_sessions

    mgr, sessions = _manager(ttl=60, active=set())
    loop = _Loop()
    assert expire_stored_sessions(mgr, loop) == 0 and loop.calls == 0
    assert len(mgr._session_storage._cache._data) == 3

    mgr, sessions = _manager(ttl=0.05, active={"s1"})
    time.sleep(0.1)
    assert expire_stored_sessions(mgr, loop) == 3 and loop.calls == 1
    assert mgr._session_storage.list() == [] and not mgr._session_storage._cache._data
    assert [s.shut.is_set() for s in sessions] == [True, False, True]


def test_reaper_reads_the_runtime_internals_it_needs():
    """The names the reaper reads off a running server exist in the installed Streamlit (a
    renamed one would silently turn the reaper into a no-op)."""
    import inspect

    from streamlit.runtime.runtime import Runtime
    from streamlit.runtime.websocket_session_manager import WebsocketSessionManager

    assert hasattr(Runtime, "_get_async_objs") and hasattr(Runtime, "exists")
    assert "self._session_mgr" in inspect.getsource(Runtime.__init__)
    init = inspect.getsource(WebsocketSessionManager.__init__)
    assert "self._storage_lock" in init and "self._session_storage" in init
    assert hasattr(WebsocketSessionManager, "list_active_sessions")
