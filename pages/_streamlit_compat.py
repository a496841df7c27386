"""The only Streamlit internals the dashboard touches, kept here, feature-detected.

Everything else in ``app.py`` and ``pages/`` uses public Streamlit API. These two needs have no
public API in Streamlit 1.67 (looked for in ``st.context``, ``st.runtime``, ``st.session_state``,
``st.cache_resource(scope="session", on_release=...)`` and the configuration options):

* :func:`is_real_server`: whether the script runs in a ``streamlit run`` server or under
  ``AppTest``. AppTest installs a mock in place of the server's ``Runtime``, so the public
  ``st.runtime.exists()`` is true in both. The session reaper (``pages/_lifecycle.py``) tunes the
  process's allocator, which must not happen inside a pytest process.
* :func:`expire_disconnected_sessions`: Streamlit keeps a disconnected session for
  ``server.disconnectedSessionTTL`` seconds so that a tab that reconnects finds its state, in a
  TTL cache that drops an expired session only lazily (on the next disconnect's write) and
  without shutting it down. On a server nobody connects to any more, a closed tab's
  ``st.session_state``, uploaded files and media stayed for good. The public session-end hook
  (a session-scoped ``st.cache_resource`` whose ``on_release`` runs on disconnect, used in
  ``pages/_lifecycle.py``) fires when the tab closes, not when the reconnection window ends, and
  gives no handle to shut the session down.

Each function checks that the internals it reads are there. When a Streamlit upgrade has moved
one, it logs one warning naming the feature it skips and returns the "do nothing" answer
(``False`` / ``0``): the dashboard runs as before, and only expired sessions wait for Streamlit's
own lazy expiry. ``tests/test_streamlit_compat.py`` checks both the internals in the installed
Streamlit (an upgrade that moves them fails there, not silently in production) and the
degraded path.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

_LOG = logging.getLogger(__name__)
_warned: set[str] = set()
_warned_lock = threading.Lock()


def _skip(feature: str, missing: str) -> None:
    """Log once per process that ``feature`` is skipped because ``missing`` is not there."""
    with _warned_lock:
        if feature in _warned:
            return
        _warned.add(feature)
    try:
        import streamlit

        version = streamlit.__version__
    except Exception:  # pragma: no cover - streamlit always imports where this runs
        version = "?"
    _LOG.warning("dpcore: %s skipped: Streamlit %s has no %s (the dashboard works without it)",
                 feature, version, missing)


def _runtime_class() -> Any | None:
    try:
        from streamlit.runtime.runtime import Runtime
    except ImportError:
        return None
    if not all(hasattr(Runtime, a) for a in ("exists", "instance")):
        return None
    return Runtime


def is_real_server() -> bool:
    """True in a ``streamlit run`` server; False under AppTest (a mock Runtime) or bare Python."""
    runtime = _runtime_class()
    if runtime is None:
        _skip("server detection (allocator tuning, session reaping)",
              "streamlit.runtime.runtime.Runtime")
        return False
    try:
        # type(), not isinstance(): AppTest's mock is a MagicMock(spec=Runtime), which passes
        # isinstance() (so before this check the tests' process had its allocator tuned)
        return bool(runtime.exists()) and issubclass(type(runtime.instance()), runtime)
    except Exception:  # never let a detection failure reach the page
        _LOG.debug("server detection failed", exc_info=True)
        return False


def _session_manager() -> Any | None:
    runtime = _runtime_class()
    if runtime is None or not runtime.exists():
        return None
    mgr = getattr(runtime.instance(), "_session_mgr", None)
    if mgr is None:
        _skip("expiry of disconnected sessions", "Runtime._session_mgr")
    return mgr


def _event_loop() -> Any | None:
    runtime = _runtime_class()
    try:
        return runtime.instance()._get_async_objs().eventloop  # type: ignore[union-attr]
    except Exception:
        _skip("shutdown of expired sessions", "Runtime._get_async_objs().eventloop")
        return None


def expire_stored_sessions(mgr: Any, loop: Any | None) -> int:
    """Drop ``mgr``'s stored sessions whose TTL passed, shut them down on ``loop``; their number.

    The removal runs under the manager's storage lock, the shutdowns on ``loop`` (the server's
    event loop: an AppSession is not thread-safe); a session that reconnected meanwhile is never
    shut down. Without ``loop`` the expired sessions are only dropped (their uploaded files and
    media then stay until the server stops). Returns 0 when the internals are not there.
    """
    cache = getattr(getattr(mgr, "_session_storage", None), "_cache", None)
    lock = getattr(mgr, "_storage_lock", None)
    if cache is None or lock is None or not hasattr(cache, "expire") \
            or not hasattr(mgr, "is_active_session"):
        _skip("expiry of disconnected sessions",
              "session manager _session_storage._cache.expire / _storage_lock")
        return 0
    with lock:
        expired = cache.expire()
    if not expired:
        return 0

    def shut_down() -> None:
        for _, info in expired:
            if not mgr.is_active_session(info.session.id):  # never one that reconnected
                info.session.shutdown()

    if loop is not None:
        try:
            loop.call_soon_threadsafe(shut_down)
        except Exception:  # loop closed (server stopping): the sessions are dropped anyway
            _LOG.debug("expired sessions not shut down", exc_info=True)
    return len(expired)


def expire_disconnected_sessions() -> int:
    """In a real server: expire and shut down the disconnected sessions past their TTL.

    Returns how many were expired; 0 outside a server or where the internals moved.
    """
    if not is_real_server():
        return 0
    mgr = _session_manager()
    if mgr is None:
        return 0
    return expire_stored_sessions(mgr, _event_loop())
