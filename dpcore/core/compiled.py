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


def warm_up() -> None:
    """Load (or compile) every kernel now, on tiny inputs of the types real calls use.

    A long-running server calls this once at start: the first fit then does not pay the
    ≈ 0.1 s cache load (≈ 1 s compile on a fresh machine), and the ≈ 40 MiB that LLVM and the
    machine code take are part of the server's baseline, not of the first session.
    """
    import numpy as np

    from dpcore.core.kernels import assign_accumulate
    from dpcore.mechanisms.importance.grid import grid_histogram

    X = np.zeros((4, 2))
    assign_accumulate(X, np.zeros((2, 2)))
    assign_accumulate(X, np.zeros((2, 2)), np.ones(4))
    grid_histogram(X, 1.0, 4)
    grid_histogram(X, 1.0, 4, center=np.ones(2))
