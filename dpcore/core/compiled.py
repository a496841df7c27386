"""One way to compile dpcore's inner loops: numba, ``nogil``, cached on disk where possible,
and loaded only when first called.

The compiled kernels (:mod:`dpcore.core.kernels`) release the GIL so that dpcore's own
row-block threads run in parallel; numba (PyPI wheels, no compiler needed) compiles each on
first use (≈ 1 s) and caches the machine code next to its module.

Loading is lazy: importing numba (≈ 0.25 s) and loading a cached kernel (≈ 0.3–0.5 s for LLVM's
start-up, several seconds on a loaded machine) happen at a kernel's first call, not at import.
A command-line fit of a small table, which the callers serve with numpy instead
(:data:`dpcore.core.kernels.COMPILED_MIN_WORK`), never pays them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

__all__ = ["LazyKernel", "nogil_jit"]


class LazyKernel:
    """A numba ``njit(nogil=True)`` dispatcher made at the first call (or attribute access).

    Attributes other than ``__call__`` (``signatures``, ``targetoptions``, ...) are the
    dispatcher's; :attr:`loaded` says whether it exists yet.
    """

    def __init__(self, fn: Callable, fastmath: bool | set[str]) -> None:
        self.py_func = fn
        self._fastmath = fastmath
        self._jit: Any = None
        self._lock = threading.Lock()
        self.__name__ = fn.__name__
        self.__doc__ = fn.__doc__

    @property
    def loaded(self) -> bool:
        return self._jit is not None

    def dispatcher(self) -> Any:
        """The numba dispatcher (made, and numba imported, on the first request)."""
        if self._jit is None:
            with self._lock:
                if self._jit is None:
                    from numba import njit
                    try:
                        self._jit = njit(nogil=True, cache=True,
                                         fastmath=self._fastmath)(self.py_func)
                    except RuntimeError:
                        self._jit = njit(nogil=True, fastmath=self._fastmath)(self.py_func)
        return self._jit

    def __call__(self, *args):
        return (self._jit or self.dispatcher())(*args)

    def __getattr__(self, name: str):
        if name.startswith("__") or name in {"py_func", "_fastmath", "_jit", "_lock"}:
            raise AttributeError(name)
        return getattr(self.dispatcher(), name)


def nogil_jit(fn: Callable | None = None, *, fastmath: bool | set[str] = False):
    """``numba.njit(nogil=True)``, made lazily (:class:`LazyKernel`), with the on-disk cache
    when some cache directory is writable.

    numba refuses ``cache=True`` outright (RuntimeError at decoration) when neither the
    package's ``__pycache__`` nor a user cache directory can be written, e.g. a read-only
    install under a read-only home: then compile per process instead of failing.
    ``fastmath`` is numba's (e.g. ``{"reassoc"}`` lets a sum vectorise); usable as
    ``@nogil_jit`` or ``@nogil_jit(fastmath=...)``.
    """
    if fn is None:
        return lambda f: nogil_jit(f, fastmath=fastmath)
    return LazyKernel(fn, fastmath)
