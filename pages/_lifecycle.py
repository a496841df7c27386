"""The end of a dashboard session in the server: memory goes back when browser tabs close.

Streamlit (1.67) keeps a disconnected session for ``server.disconnectedSessionTTL`` seconds so a
tab that reconnects finds its state. Its store (a TTL cache) drops an expired session only
lazily, on the next write: on a server nobody connects to any more, closed sessions (their
``st.session_state``, caches, uploaded files) stayed for good.

:func:`session_life` is the public session-end hook: a session-scoped ``st.cache_resource`` whose
``on_release`` Streamlit calls when the session disconnects (or is shut down). Run threads
(``pages/_run.py``) watch it to stop a fit whose tab closed; the reaper counts the ends.

:func:`start_reaper` starts, once per server process, a daemon thread that every
:data:`REAP_SECONDS`

* expires the stored sessions whose TTL has passed and shuts them down on the server's event
  loop (what ``close_session`` does for a tab that closes for good: uploaded files, media and
  session caches are released); no public API does this, so it is
  :func:`pages._streamlit_compat.expire_disconnected_sessions`, which degrades to a logged no-op
  where a Streamlit upgrade moved the internals it reads, and
* when a session disconnected or was expired, or a fit thread ended, since the last pass,
  trims the allocator (:func:`dpcore.core.memory.release_memory`): the fit threads' freed
  temporaries go back to the system instead of waiting in malloc's free lists.

It sets glibc's thresholds (:func:`dpcore.core.memory.tune_allocator`) when it starts, and first
loads the compiled kernels (:func:`dpcore.core.kernels.warm_up`, ≈ 40 MiB of LLVM and machine code
that would otherwise count against the first session that fits k-means). Set
``DPCORE_MEMORY_LOG=1`` to have the server print its RSS and malloc's in-use / free-held split
after every trim.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time

import streamlit as st

from dpcore.core.kernels import warm_up
from dpcore.core.memory import allocator_stats, release_memory, resident_bytes, tune_allocator
from pages._streamlit_compat import expire_disconnected_sessions, is_real_server

#: Seconds between two passes of the reaper (a pass costs microseconds when nothing ended).
REAP_SECONDS = 2.0

_LOG = logging.getLogger(__name__)
#: ``DPCORE_MEMORY_LOG=1``: print the server's RSS and malloc's split after every release.
_VERBOSE = os.environ.get("DPCORE_MEMORY_LOG", "") not in ("", "0")
_started = threading.Lock()
_thread: threading.Thread | None = None
_ended_lock = threading.Lock()
_sessions_ended = 0


class SessionLife:
    """One browser session's life: :attr:`ended` is set when Streamlit releases the session."""

    def __init__(self) -> None:
        self.ended = threading.Event()


def _session_released(life: SessionLife) -> None:
    # Called by Streamlit on the server's event loop (or by st.cache_resource.clear()): only
    # thread-safe work here, no session state.
    global _sessions_ended
    life.ended.set()
    with _ended_lock:
        _sessions_ended += 1


@st.cache_resource(scope="session", on_release=_session_released, show_spinner=False)
def _session_life() -> SessionLife:
    return SessionLife()


def session_life() -> SessionLife | None:
    """The current session's :class:`SessionLife` (None outside a script run)."""
    try:
        return _session_life()
    except Exception:  # no script run context (bare Python): nothing ever ends it
        _LOG.debug("no session-scoped resource outside a script run", exc_info=True)
        return None


def sessions_ended() -> int:
    """How many sessions of this process have ended (disconnected or shut down) so far."""
    return _sessions_ended


def _runs() -> int:
    from pages._run import RUN_THREAD_PREFIX

    return sum(t.name.startswith(RUN_THREAD_PREFIX) for t in threading.enumerate())


def _reap_forever() -> None:
    ended_before = sessions_ended()
    runs = 0
    while True:
        time.sleep(REAP_SECONDS)
        try:
            ended_now = sessions_ended()
            ended, ended_before = ended_now - ended_before, ended_now  # since the last pass
            runs, runs_before = _runs(), runs  # a fit thread (pages/_run.py) that ended
            expired = expire_disconnected_sessions()
            if ended or expired or runs < runs_before:
                if expired:
                    time.sleep(0.2)  # let the event loop run the shutdowns first
                t0 = time.perf_counter()
                freed = release_memory()
                if _VERBOSE:
                    stats = {k: f"{v / 2**20:.1f}" for k, v in allocator_stats().items()}
                    print(f"dpcore memory: {ended} session(s) ended, {expired} expired, "
                          f"{freed / 2**20:.1f} MiB returned in "
                          f"{time.perf_counter() - t0:.3f} s; RSS "
                          f"{resident_bytes() / 2**20:.1f} MiB; malloc MiB {stats}",
                          file=sys.stderr, flush=True)
        except Exception:  # the reaper never takes the server down
            _LOG.debug("session reaper pass failed", exc_info=True)


def _warm_then_reap() -> None:
    # The compiled kernels' first load (LLVM, ≈ 40 MiB) belongs to the server's start, not to
    # the first session's memory or time (dpcore.core.kernels.warm_up).
    try:
        warm_up()
    except Exception:  # pragma: no cover - a fit would compile them anyway
        pass
    _reap_forever()


def start_reaper() -> bool:
    """Tune the allocator and start the reaper thread (idempotent); True if started now.

    Every run of the frame calls it, so it also registers the session's end hook
    (:func:`session_life`). Does nothing more outside a real server: under AppTest the tests'
    process keeps glibc's defaults (the tuning slows max-cover ~2×, see dpcore.core.memory).
    """
    global _thread
    session_life()
    if not is_real_server():
        return False
    with _started:
        if _thread is not None and _thread.is_alive():
            return False
        tune_allocator()
        _thread = threading.Thread(target=_warm_then_reap, daemon=True, name="dpcore-reaper")
        _thread.start()
        return True
