"""Memory going back after a dashboard session ends: :mod:`dpcore.core.memory` and
``pages/_lifecycle.py`` (the end-to-end number is ``tests/e2e/test_hostile_e2e.py``; the
session-end hook and the expiry of stored sessions, ``pages/_streamlit_compat.py``, are
``tests/test_streamlit_compat.py``)."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="glibc allocator and /proc are Linux's")

# Allocates 96 MiB in 4 MiB numpy blocks from a worker thread (its own malloc arena, as a fit
# thread's), after one 16 MiB block was freed (which raises glibc's dynamic mmap threshold, so
# the 4 MiB blocks land on the heap), keeps every 8th block so the freed ones sit between live
# ones (the heap top cannot shrink), frees the rest and prints the resident MiB before and
# after the call under test.
_CHILD = """
import sys, threading, numpy as np
from dpcore.core import memory
if sys.argv[1] == "tuned":
    assert memory.tune_allocator()
big = np.ones(16 << 17); del big
kept = []
def work():
    blocks = [np.ones(1 << 19) for _ in range(24)]
    kept.extend(blocks[::8]); blocks.clear()
t = threading.Thread(target=work); t.start(); t.join()
before = memory.resident_bytes()
freed = memory.release_memory() if sys.argv[2] == "release" else 0
print(before / 2**20, memory.resident_bytes() / 2**20, freed / 2**20)
"""


def _child(tuned: str, release: str) -> tuple[float, float, float]:
    out = subprocess.run([sys.executable, "-c", _CHILD, tuned, release], capture_output=True,
                         text=True, timeout=120, check=True)
    before, after, freed = map(float, out.stdout.split())
    return before, after, freed


def test_release_memory_gives_freed_heap_back():
    """A worker thread's freed 4 MiB blocks stay resident under glibc's defaults and go back
    with :func:`release_memory`. Catches a release that does not reach ``malloc_trim`` (wrong
    library, no-op off the main arena) or that only collects garbage."""
    before, after, _ = _child("default", "keep")
    assert after > before - 10  # the premise: freeing alone gives back little
    before, after, freed = _child("default", "release")
    assert before - after > 50 and freed > 50, (before, after, freed)


def test_tuned_allocator_returns_large_blocks_without_a_trim():
    """After :func:`tune_allocator` a 4 MiB block is its own mapping, unmapped on free, so RSS
    falls without any trim. Catches wrong ``mallopt`` parameter numbers or values (mallopt
    then returns 0, or the threshold stays dynamic)."""
    after = _child("tuned", "keep")[1]
    baseline_after = _child("default", "keep")[1]
    assert after < baseline_after - 50, (after, baseline_after)
