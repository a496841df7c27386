"""A least-recently-used cache bounded in bytes, for one dashboard session (no Streamlit).

Streamlit's ``st.cache_data`` is global (shared by every session) and bounded by entry count,
so one session's 10⁶ × 100 mixture stayed in memory after the session closed. A page keeps its
heavy results in a :class:`ByteBoundedCache` stored in ``st.session_state`` instead: it holds at
most ``max_bytes`` (by default a quarter of the session budget, :mod:`dpcore.data.limits`), evicts
the least recently used entries first, refuses an entry larger than the whole budget, and goes
away with the session.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

import numpy as np

from dpcore.data import limits

__all__ = ["ByteBoundedCache", "nbytes_of", "session_cache"]


def nbytes_of(value: Any, _depth: int = 0) -> int:
    """Approximate memory held by ``value``: numpy buffers, pandas frames (deep), containers
    and objects' attributes summed (depth-limited); ``sys.getsizeof`` for anything else."""
    if _depth > 6:
        return 0
    if isinstance(value, np.ndarray):
        base = value.base  # a view pins its whole base in memory
        return int(max(value.nbytes, getattr(base, "nbytes", 0) if base is not None else 0))
    if hasattr(value, "memory_usage") and hasattr(value, "columns"):  # DataFrame
        try:
            return int(value.memory_usage(deep=True).sum())
        except Exception:
            return sys.getsizeof(value)
    if hasattr(value, "memory_usage") and hasattr(value, "index"):  # Series
        try:
            return int(value.memory_usage(deep=True))
        except Exception:
            return sys.getsizeof(value)
    if isinstance(value, str | bytes | bytearray | int | float | bool | type(None)):
        return sys.getsizeof(value)
    if isinstance(value, dict):
        return sys.getsizeof(value) + sum(nbytes_of(k, _depth + 1) + nbytes_of(v, _depth + 1)
                                          for k, v in value.items())
    if isinstance(value, list | tuple | set | frozenset):
        return sys.getsizeof(value) + sum(nbytes_of(v, _depth + 1) for v in value)
    attrs = getattr(value, "__dict__", None)
    if attrs is not None:
        return sys.getsizeof(value) + nbytes_of(attrs, _depth + 1)
    slots = getattr(type(value), "__slots__", ())
    if slots:
        return sys.getsizeof(value) + sum(nbytes_of(getattr(value, s, None), _depth + 1)
                                          for s in slots)
    return sys.getsizeof(value)


class ByteBoundedCache:
    """LRU mapping bounded by the summed :func:`nbytes_of` of its values (thread-safe).

    Parameters
    ----------
    max_bytes : int
        Budget; an entry larger than it is not stored (``put`` returns False).
    """

    def __init__(self, max_bytes: int) -> None:
        if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < 1:
            raise limits.ParameterError("max_bytes", f"max_bytes must be a positive integer, "
                                                     f"got {max_bytes!r}")
        self.max_bytes = max_bytes
        self._items: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.evictions = 0

    @property
    def nbytes(self) -> int:
        """Bytes currently held."""
        return self._bytes

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items

    def get(self, key: Hashable, default: Any = None) -> Any:
        """The value (marked as most recently used), or ``default``."""
        with self._lock:
            if key not in self._items:
                return default
            self._items.move_to_end(key)
            return self._items[key][0]

    def put(self, key: Hashable, value: Any) -> bool:
        """Store ``value``, evicting least recently used entries until it fits.

        Returns False (and stores nothing, dropping an older value under ``key``) when the
        value alone exceeds ``max_bytes``.
        """
        size = nbytes_of(value)
        with self._lock:
            self._drop(key)
            if size > self.max_bytes:
                return False
            while self._items and self._bytes + size > self.max_bytes:
                old, _ = next(iter(self._items.items()))
                self._drop(old)
                self.evictions += 1
            self._items[key] = (value, size)
            self._bytes += size
            return True

    def get_or_compute(self, key: Hashable, compute: Any) -> Any:
        """``get(key)``, or ``compute()`` stored under ``key`` (if it fits) and returned."""
        sentinel = object()
        value = self.get(key, sentinel)
        if value is sentinel:
            value = compute()
            self.put(key, value)
        return value

    def pop(self, key: Hashable, default: Any = None) -> Any:
        with self._lock:
            item = self._items.get(key)
            self._drop(key)
            return default if item is None else item[0]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self._bytes = 0

    def _drop(self, key: Hashable) -> None:
        item = self._items.pop(key, None)
        if item is not None:
            self._bytes -= item[1]


def session_cache(share: float = 0.25) -> ByteBoundedCache:
    """A cache holding at most ``share`` of the session memory budget
    (``DPCORE_SESSION_MEMORY_MB``)."""
    if not 0 < share <= 1:
        raise limits.ParameterError("share", f"share must be in (0, 1], got {share!r}")
    return ByteBoundedCache(max(1, int(limits.session_memory_bytes() * share)))
