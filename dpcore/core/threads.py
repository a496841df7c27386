"""Thread control for BLAS inside dpcore's own parallel loops."""

from __future__ import annotations

import contextlib
import functools
import itertools
import os
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

T = TypeVar("T")


@functools.cache
def _controller() -> ThreadpoolController:
    # Building a controller scans the loaded libraries (≈ 10 ms): do it once.
    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Limit BLAS to one thread inside the block.

    Many small BLAS calls (DP-Lloyd row chunks on their own threads, FriendlyCore's per-part
    oracles) ran up to 10x slower with OpenBLAS's own threads on a shared 2-core machine.
    """
    with _controller().limit(limits=1, user_api="blas"):
        yield


#: Worker threads of dpcore's own row-chunk loops (numpy, BLAS and the compiled kernels release
#: the GIL) and the fewest rows worth a thread of its own.
N_THREADS = min(2, os.cpu_count() or 1)
MIN_ROWS_PER_THREAD = 2048


def row_chunks(n: int, min_rows: int | None = None) -> list[slice]:
    """Split ``range(n)`` into at most :data:`N_THREADS` contiguous slices of ≥ ``min_rows``
    (default :data:`MIN_ROWS_PER_THREAD`)."""
    least = MIN_ROWS_PER_THREAD if min_rows is None else min_rows
    parts = max(1, min(N_THREADS, n // max(1, least)))
    bounds = np.linspace(0, n, parts + 1).astype(int)
    return [slice(a, b) for a, b in itertools.pairwise(bounds)]


def map_row_chunks(fn: Callable[[slice], T], n: int, min_rows: int | None = None) -> list[T]:
    """``[fn(s) for s in row_chunks(n)]``, the first chunk in the calling thread, the others on
    their own threads (one-shot passes; a loop that runs many times keeps a pool instead)."""
    chunks = row_chunks(n, min_rows)
    if len(chunks) == 1:
        return [fn(chunks[0])]
    with ThreadPoolExecutor(len(chunks) - 1) as pool:
        rest = [pool.submit(fn, sl) for sl in chunks[1:]]
        return [fn(chunks[0])] + [f.result() for f in rest]
