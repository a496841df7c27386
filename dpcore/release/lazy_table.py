"""A dict filled on demand, for the registry's tables of runnable mechanisms.

:data:`dpcore.release.registry.MECHANISMS` (and ``UNAVAILABLE``) used to import every mechanism
module when the registry was imported: ``dpcore run dplloyd`` paid for scipy.stats and the rest
(≈ 0.9 s under load, issue 23.7). A :class:`LazyTable` asks its loader for one key when that key
is read, tested or popped, and for every key when it is iterated, counted or listed, so code that
treats it as a plain dict sees the same contents.
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["LazyTable"]


class LazyTable(dict):
    """A dict whose keys are loaded on demand (module docstring).

    Parameters
    ----------
    load_one : callable
        ``key -> None``: load that key (into this or a sibling table) if it is known and not
        loaded yet; a no-op otherwise.
    load_all : callable
        ``() -> None``: load every known key.
    loaded : set
        Keys already loaded; a key set at run time joins it, so a later load never replaces it.
    """

    def __init__(self, load_one: Callable[[object], None], load_all: Callable[[], None],
                 loaded: set) -> None:
        super().__init__()
        self._one, self._all, self._loaded = load_one, load_all, loaded

    def __getitem__(self, key):
        self._one(key)
        return super().__getitem__(key)

    def __contains__(self, key) -> bool:
        self._one(key)
        return super().__contains__(key)

    def get(self, key, default=None):
        self._one(key)
        return super().get(key, default)

    def pop(self, key, *default):
        self._one(key)
        return super().pop(key, *default)

    def __setitem__(self, key, value) -> None:
        self._loaded.add(key)
        super().__setitem__(key, value)

    def __iter__(self):
        self._all()
        return super().__iter__()

    def __len__(self) -> int:
        self._all()
        return super().__len__()

    def keys(self):
        self._all()
        return super().keys()

    def values(self):
        self._all()
        return super().values()

    def items(self):
        self._all()
        return super().items()

    def __repr__(self) -> str:
        self._all()
        return super().__repr__()
