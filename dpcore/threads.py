"""Thread control for BLAS inside dpcore's own parallel loops."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

from threadpoolctl import ThreadpoolController


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
