"""Give a long-running server's freed memory back to the operating system (no Streamlit).

A dashboard session's fits allocate large numpy temporaries in worker threads. With glibc's
defaults those land in per-thread arenas (up to 8 per core) and, once the first big block was
freed, on the heap instead of in their own ``mmap`` (the *dynamic* mmap threshold rises to the
largest freed block, up to 32 MiB). Freed, they stay in the process as fragmented free chunks:
measured on the dashboard, 8 closed sessions left the server's malloc heap at 158 MiB of which
91 MiB was free but held, so RSS stayed +16 % above its start even after every session object
was gone and ``malloc_trim`` had run (``tests/e2e/test_hostile_e2e.py``).

:func:`tune_allocator` fixes the thresholds (large blocks are mapped and unmapped on their own,
freed heap tops are trimmed) and caps the number of arenas; :func:`release_memory` trims every
arena (and optionally collects cyclic garbage first). Both are no-ops where the C library is
not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc
import os
import threading

__all__ = ["ALLOCATOR_SETTINGS", "allocator_stats", "release_memory", "resident_bytes",
           "tune_allocator"]

# mallopt parameter numbers (glibc <malloc.h>)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8

#: What :func:`tune_allocator` sets. A block of 256 KiB or more (a 32,768-row float64 column)
#: gets its own mapping, unmapped on free; the heap top is trimmed past 512 KiB free (twice the
#: mmap threshold, glibc's own ratio); at most 2 arenas per process (threads share them; CPython
#: allocates under the GIL anyway). Fixing the thresholds switches off glibc's dynamic raising.
#:
#: Measured on the 8-session load test (``tests/e2e/test_hostile_e2e.py``, 2 cores, load 8-15):
#: with these settings RSS came back to +4.2, +5.9, +6.9, +6.0, +8.0, +7.5 % of its start (the
#: last four with a second load test running); with a 4 MiB threshold (the fits' 1-4 MiB
#: temporaries then stay on the heap) +29.5 and +25.6 %; with glibc's defaults +28.9 %.
#: The price: a fit that allocates many 0.25-4 MiB temporaries pays a fresh zeroed mapping for
#: each; max-cover k-means on the cities sample (k = 20) ran 2.3x slower (1.0-1.5 s -> 2.4-3.5
#: s), DP-Lloyd and k-means were unchanged within noise. Only the dashboard server calls this;
#: the command line and the Python API keep glibc's defaults.
ALLOCATOR_SETTINGS: dict[str, int] = {
    "mmap_threshold": 256 * 1024,
    "trim_threshold": 512 * 1024,
    "arena_max": 2,
}

_lock = threading.Lock()


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    if os.name != "posix":
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        libc.malloc_trim  # noqa: B018 -- glibc only (musl, macOS have none)
        libc.mallopt  # noqa: B018
    except (OSError, AttributeError):
        return None
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    return libc


@functools.cache
def tune_allocator() -> bool:
    """Apply :data:`ALLOCATOR_SETTINGS` once per process; True if glibc accepted all of them.

    Call it early (before the threads that allocate start): an arena already created stays.
    """
    libc = _glibc()
    if libc is None or os.environ.get("DPCORE_MALLOC_TUNING", "1") == "0":
        return False  # DPCORE_MALLOC_TUNING=0: glibc's defaults (or its MALLOC_* variables)
    s = ALLOCATOR_SETTINGS
    return all(libc.mallopt(param, value) == 1 for param, value in (
        (_M_MMAP_THRESHOLD, s["mmap_threshold"]),
        (_M_TRIM_THRESHOLD, s["trim_threshold"]),
        (_M_ARENA_MAX, s["arena_max"]),
    ))


def resident_bytes() -> int:
    """This process's resident set size in bytes (0 where ``/proc`` is missing)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


def allocator_stats() -> dict[str, int]:
    """glibc's view of the heap (``mallinfo2``, all arenas), in bytes: ``in_use`` (allocated
    chunks), ``free_held`` (freed but kept by malloc), ``mmapped`` (blocks in their own
    mapping); empty off glibc ≥ 2.33. With :func:`resident_bytes` it tells memory the program
    still holds from memory only the allocator holds."""
    libc = _glibc()
    fn = getattr(libc, "mallinfo2", None) if libc is not None else None
    if fn is None:
        return {}
    fn.restype = _MallInfo2
    info = fn()
    return {"in_use": info.uordblks, "free_held": info.fordblks, "mmapped": info.hblkhd}


def release_memory(*, collect: bool = False) -> int:
    """Return free malloc pages of every arena to the system (``malloc_trim(0)``).

    Parameters
    ----------
    collect : bool
        Run a full ``gc.collect()`` first. Off by default: on the dashboard it freed almost
        nothing (reference counting had freed the sessions' objects already) and costs a
        fraction of a second of CPU on a loaded server.

    Returns the bytes the resident set shrank by (0 off Linux). Serialised: two callers never
    trim at once. Call it when something large went away (a session ended), not per request.
    """
    with _lock:
        before = resident_bytes()
        if collect:
            gc.collect()
        libc = _glibc()
        if libc is not None:
            libc.malloc_trim(0)
        return max(0, before - resident_bytes())
