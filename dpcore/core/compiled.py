"""One way to compile dpcore's inner loops: numba, ``nogil``, cached on disk where possible.

The compiled kernels (:mod:`dpcore.core.kernels`, :mod:`dpcore.mechanisms.importance.grid`) release
the GIL so that dpcore's own row-chunk threads run in parallel; numba (PyPI wheels, no compiler
needed) compiles each on first use (≈ 1 s) and caches the machine code next to its module.
"""

from __future__ import annotations

from collections.abc import Callable

from numba import njit

__all__ = ["nogil_jit"]


def nogil_jit(fn: Callable | None = None, *, fastmath: bool | set[str] = False):
    """``numba.njit(nogil=True)``, with the on-disk cache when some cache directory is writable.

    numba refuses ``cache=True`` outright (RuntimeError at decoration) when neither the
    package's ``__pycache__`` nor a user cache directory can be written, e.g. a read-only
    install under a read-only home: then compile per process instead of failing to import.
    ``fastmath`` is numba's (e.g. ``{"reassoc"}`` lets a sum vectorise); usable as
    ``@nogil_jit`` or ``@nogil_jit(fastmath=...)``.
    """
    if fn is None:
        return lambda f: nogil_jit(f, fastmath=fastmath)
    try:
        return njit(nogil=True, cache=True, fastmath=fastmath)(fn)
    except RuntimeError:
        return njit(nogil=True, fastmath=fastmath)(fn)
