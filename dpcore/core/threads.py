"""How many threads dpcore's own row loops use, and how rows are split among them.

The count (:func:`n_threads`) follows the machine and the caller, in this order:

1. an explicit ``n_jobs`` (an estimator's parameter, or :func:`thread_limit` around a block),
   scikit-learn's convention: None = the default below, k ≥ 1 = k threads, −1 = every allowed
   core, −m = allowed cores + 1 − m (at least 1);
2. the environment variable :data:`ENV_VAR` (``DPCORE_NUM_THREADS``) for servers that share a
   machine between processes;
3. the cores this process may run on (``os.sched_getaffinity``: a container's or ``taskset``'s
   share, not the machine's ``cpu_count``);

and 3 never exceeds a ``threadpoolctl`` limit on the BLAS or OpenMP libraries
(``with threadpool_limits(1): ...`` makes dpcore single-threaded, as it does scikit-learn; an
explicit 1 or 2 is not capped, so a server with ``OPENBLAS_NUM_THREADS=1`` can still ask for
row threads).
Inside a Dask worker's task the default is the worker's share of the cores (cores ÷ the
worker's threads): the worker already runs that many tasks at once.

Results never depend on the count: :func:`row_blocks` cuts the rows into blocks that depend on
n (and a memory budget of public shapes) only, each block's partial result is computed alone and
the partials are added in block order (:func:`map_row_blocks`), so 1 thread and 64 threads add
the same numbers in the same order (tested bit for bit).

BLAS inside the row threads is limited to one thread (:func:`single_threaded_blas`): row
threads × BLAS threads would oversubscribe the cores (measured in ``docs/dp_kmeans.md``).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
from threadpoolctl import ThreadpoolController

T = TypeVar("T")

__all__ = ["ENV_VAR", "MIN_ROWS_PER_THREAD", "available_cores", "map_row_blocks",
           "resolve_n_jobs", "row_blocks", "single_threaded_blas", "thread_limit", "n_threads"]

#: Environment variable with the default thread count (a positive integer).
ENV_VAR = "DPCORE_NUM_THREADS"
#: The fewest rows worth a block (and so a thread) of their own.
MIN_ROWS_PER_THREAD = 2048
#: At most this many blocks: enough for 64 threads, few enough that their partial results are
#: a negligible sum.
MAX_BLOCKS = 64
#: Bytes the blocks' partial results (one array each) may take together.
PARTIAL_BYTES = 64 * 2**20

_N_JOBS: contextvars.ContextVar[int | None] = contextvars.ContextVar("dpcore_n_jobs",
                                                                    default=None)
# How many of dpcore's own single-threaded-BLAS blocks are active (then the BLAS limit that
# threadpoolctl reports is ours, not the caller's), and the lock that counts them.
_own_blas_limits = 0
_own_lock = threading.Lock()


@functools.cache
def _controller() -> ThreadpoolController:
    # Building a controller scans the loaded libraries (≈ 10 ms): do it once.
    return ThreadpoolController()


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Limit BLAS to one thread inside the block.

    Many small BLAS calls (DP-Lloyd row blocks on their own threads, FriendlyCore's per-part
    oracles) ran up to 10x slower with OpenBLAS's own threads on a shared 2-core machine.
    """
    global _own_blas_limits
    with _own_lock:
        _own_blas_limits += 1
    try:
        with _controller().limit(limits=1, user_api="blas"):
            yield
    finally:
        with _own_lock:
            _own_blas_limits -= 1


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity; ``os.cpu_count()`` where unknown)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not Linux
        return max(1, os.cpu_count() or 1)


def _library_limit() -> int | None:
    """The smallest thread count threadpoolctl reports for BLAS / OpenMP (None: no library)."""
    libs = [lc for lc in _controller().lib_controllers
            if lc.user_api == "openmp" or (_own_blas_limits == 0 and lc.user_api == "blas")]
    counts = [lc.get_num_threads() for lc in libs]
    counts = [c for c in counts if isinstance(c, int) and c > 0]
    return min(counts) if counts else None


def _env_threads() -> int | None:
    raw = os.environ.get(ENV_VAR, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 1:
        raise ValueError(f"{ENV_VAR} must be a positive integer (threads), got {raw!r}"[:200])
    return value


def _dask_worker_share(cores: int) -> int | None:
    """Inside a task of a Dask worker: the cores per worker thread (None elsewhere)."""
    if "distributed" not in sys.modules:  # never import it just to ask
        return None
    try:
        from distributed import get_worker
        worker = get_worker()
    except (ImportError, ValueError):  # not in a worker
        return None
    slots = getattr(getattr(worker, "state", worker), "nthreads", None) or 1
    return max(1, cores // int(slots))


def resolve_n_jobs(n_jobs: int | None, cores: int | None = None) -> int | None:
    """scikit-learn's ``n_jobs`` as a thread count (None stays None: use the default)."""
    if n_jobs is None:
        return None
    cores = available_cores() if cores is None else cores
    k = int(n_jobs)
    if k == 0:
        raise ValueError("n_jobs must be None, a positive integer or negative (-1: all cores), "
                         "got 0")
    return k if k > 0 else max(1, cores + 1 + k)


def n_threads(n_jobs: int | None = None) -> int:
    """Threads for dpcore's row loops now (see the module docstring for the order of rules)."""
    explicit = resolve_n_jobs(n_jobs)
    if explicit is None:
        explicit = _N_JOBS.get()
    if explicit is not None:
        return explicit
    env = _env_threads()
    if env is not None:
        return env
    cores = available_cores()
    count = _dask_worker_share(cores) or cores
    limit = _library_limit()
    return max(1, min(count, limit) if limit is not None else count)


@contextlib.contextmanager
def thread_limit(n_jobs: int | None) -> Iterator[None]:
    """Use ``n_jobs`` threads (scikit-learn's convention) for dpcore's row loops in this block
    (this thread and contexts copied from it; None: leave the default)."""
    if n_jobs is None:  # an estimator's default: keep what an outer block set
        yield
        return
    token = _N_JOBS.set(resolve_n_jobs(n_jobs))
    try:
        yield
    finally:
        _N_JOBS.reset(token)


def row_blocks(n: int, partial_size: int = 0, min_rows: int | None = None) -> list[slice]:
    """Split ``range(n)`` into contiguous blocks that depend on n and public shapes only.

    At most :data:`MAX_BLOCKS` blocks of ≥ ``min_rows`` rows (default
    :data:`MIN_ROWS_PER_THREAD`), and few enough that one partial result of ``partial_size``
    float64s per block fits :data:`PARTIAL_BYTES`. Never the thread count: the blocks (and so
    the order of every floating-point addition) are the same on every machine.
    """
    least = MIN_ROWS_PER_THREAD if min_rows is None else min_rows
    cap = MAX_BLOCKS
    if partial_size > 0:
        cap = min(cap, max(1, PARTIAL_BYTES // (8 * int(partial_size))))
    parts = max(1, min(cap, n // max(1, least)))
    bounds = np.linspace(0, n, parts + 1).astype(int)
    return [slice(int(a), int(b)) for a, b in itertools.pairwise(bounds)]


def map_row_blocks(fn: Callable[[slice], T], blocks: list[slice], *,
                   pool: ThreadPoolExecutor | None = None,
                   threads: int | None = None) -> list[T]:
    """``[fn(b) for b in blocks]``, computed on up to ``threads`` threads (default
    :func:`n_threads`), the calling thread one of them (one thread wake-up fewer). Each thread
    takes the next block not yet taken, so a thread that the OS deschedules (a loaded, shared
    machine) holds up at most one block, not a fixed share. ``pool`` (≥ threads − 1 workers) is
    reused when given (a loop that runs many times); otherwise a one-shot pool is made.

    The results come back in block order, whatever the number of threads or who computed what.
    """
    workers = min(len(blocks), n_threads() if threads is None else max(1, int(threads)))
    if workers <= 1:
        return [fn(b) for b in blocks]
    out: list = [None] * len(blocks)
    tickets = itertools.count()  # next() on it is atomic under the GIL

    def run() -> None:
        while (i := next(tickets)) < len(blocks):
            out[i] = fn(blocks[i])

    own = pool is None
    ex = ThreadPoolExecutor(workers - 1) if own else pool
    try:
        futures = [ex.submit(contextvars.copy_context().run, run) for _ in range(workers - 1)]
        run()
        for f in futures:
            f.result()
    finally:
        if own:
            ex.shutdown()
    return out
