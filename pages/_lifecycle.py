"""The end of a dashboard session in the server: memory goes back when browser tabs close.

Streamlit (1.67) keeps a disconnected session for ``server.disconnectedSessionTTL`` seconds so a
tab that reconnects finds its state. Its store (``MemorySessionStorage``, a TTL cache) drops an
expired session only lazily, on the next write: on a server nobody connects to any more, closed
sessions (their ``st.session_state``, caches, uploaded files) stayed for good. It has no public
hook for a session's end either.

:func:`start_reaper` starts, once per server process, a daemon thread that every
:data:`REAP_SECONDS`

* expires the stored sessions whose TTL has passed and shuts them down on the server's event
  loop (what ``close_session`` does for a tab that closes for good: uploaded files, media and
  session caches are released), and
* when a session disconnected or was expired, or a fit thread ended, since the last pass,
  trims the allocator (:func:`dpcore.core.memory.release_memory`): the fit threads' freed
  temporaries go back to the system instead of waiting in malloc's free lists.

It sets glibc's thresholds (:func:`dpcore.core.memory.tune_allocator`) when it starts, and first
loads the compiled kernels (:func:`dpcore.core.kernels.warm_up`, ≈ 40 MiB of LLVM and machine code
that would otherwise count against the first session that fits k-means). Set
``DPCORE_MEMORY_LOG=1`` to have the server print its RSS and malloc's in-use / free-held split
after every trim.

The Streamlit internals it touches are checked by ``tests/test_lifecycle.py``; if a later
Streamlit moves them the thread only trims memory, and the dashboard works as before.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from typing import Any

from dpcore.core.kernels import warm_up
from dpcore.core.memory import allocator_stats, release_memory, resident_bytes, tune_allocator

#: Seconds between two passes of the reaper (a pass costs microseconds when nothing ended).
REAP_SECONDS = 2.0

_LOG = logging.getLogger(__name__)
#: ``DPCORE_MEMORY_LOG=1``: print the server's RSS and malloc's split after every release.
_VERBOSE = os.environ.get("DPCORE_MEMORY_LOG", "") not in ("", "0")
_started = threading.Lock()
_thread: threading.Thread | None = None


def _manager() -> Any | None:
    from streamlit.runtime import Runtime

    if not Runtime.exists():
        return None
    return getattr(Runtime.instance(), "_session_mgr", None)


def _active_ids(mgr: Any) -> set[str]:
    return {info.session.id for info in mgr.list_active_sessions()}


def expire_stored_sessions(mgr: Any, loop: Any) -> int:
    """Remove the stored sessions whose TTL passed and shut them down; their number.

    Runs the removal under the manager's storage lock and the shutdowns on ``loop`` (the
    server's event loop: AppSession is not thread-safe); returns 0 when the internals are not
    there.
    """
    cache = getattr(getattr(mgr, "_session_storage", None), "_cache", None)
    lock = getattr(mgr, "_storage_lock", None)
    if cache is None or lock is None or not hasattr(cache, "expire"):
        return 0
    with lock:
        expired = cache.expire()
    if not expired:
        return 0

    def shut_down() -> None:
        for _, info in expired:
            if not mgr.is_active_session(info.session.id):  # never one that reconnected
                info.session.shutdown()

    try:
        loop.call_soon_threadsafe(shut_down)
    except Exception:  # loop closed (server stopping): the sessions are dropped anyway
        _LOG.debug("expired sessions not shut down", exc_info=True)
    return len(expired)


def _event_loop() -> Any | None:
    from streamlit.runtime import Runtime

    try:
        return Runtime.instance()._get_async_objs().eventloop
    except Exception:  # internals moved: expired sessions are then dropped without shutdown
        return None


def _runs() -> int:
    from pages._run import RUN_THREAD_PREFIX

    return sum(t.name.startswith(RUN_THREAD_PREFIX) for t in threading.enumerate())


def _reap_forever() -> None:
    previous: set[str] = set()
    runs = 0
    while True:
        time.sleep(REAP_SECONDS)
        try:
            mgr = _manager()
            if mgr is None:
                continue
            active = _active_ids(mgr)
            ended = previous - active  # disconnected since the last pass
            previous = active
            runs, runs_before = _runs(), runs  # a fit thread (pages/_run.py) that ended
            expired = expire_stored_sessions(mgr, _event_loop())
            if ended or expired or runs < runs_before:
                if expired:
                    time.sleep(0.2)  # let the event loop run the shutdowns first
                t0 = time.perf_counter()
                freed = release_memory()
                if _VERBOSE:
                    stats = {k: f"{v / 2**20:.1f}" for k, v in allocator_stats().items()}
                    print(f"dpcore memory: {len(ended)} session(s) ended, {expired} expired, "
                          f"{freed / 2**20:.1f} MiB returned in "
                          f"{time.perf_counter() - t0:.3f} s; RSS "
                          f"{resident_bytes() / 2**20:.1f} MiB; malloc MiB {stats}",
                          file=sys.stderr, flush=True)
        except Exception:  # the reaper never takes the server down
            _LOG.debug("session reaper pass failed", exc_info=True)


def _real_server() -> bool:
    """True in a Streamlit server; False under AppTest (its Runtime is a mock), so tests in
    the same process keep glibc's defaults (the tuning slows max-cover ~2×, see
    dpcore.core.memory)."""
    from streamlit.runtime import Runtime

    return Runtime.exists() and isinstance(Runtime.instance(), Runtime)


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

    Does nothing outside a real server (AppTest).
    """
    global _thread
    if not _real_server():
        return False
    with _started:
        if _thread is not None and _thread.is_alive():
            return False
        tune_allocator()
        _thread = threading.Thread(target=_warm_then_reap, daemon=True, name="dpcore-reaper")
        _thread.start()
        return True
