"""What every ``dpcore`` command uses: progress on stderr, the heartbeat of long runs, checks of
output file names, the Dask client, and the exit status of bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import threading
import time
from pathlib import Path

from dpcore.core.errors import CLIError

EXIT_BAD_INPUT = 2


def _progress(args: argparse.Namespace, message: str) -> None:
    if not getattr(args, "quiet", False):
        print(f"[dpcore {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _heartbeat(args: argparse.Namespace, what: str, every: float = 10.0):
    """Print "still running" to stderr every ``every`` seconds while the block runs."""
    done = threading.Event()
    t0 = time.perf_counter()

    def beat() -> None:
        while not done.wait(every):
            _progress(args, f"{what} still running ({time.perf_counter() - t0:.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


@contextlib.contextmanager
def _dask_client(address: str | None):
    """A distributed Client for ``address``; nothing (Dask's default scheduler) for "local"."""
    if address in (None, "local"):
        yield None
        return
    from distributed import Client

    try:
        client = Client(address, timeout="10s")
    except OSError as exc:
        raise CLIError(f"cannot reach the Dask scheduler at {address!r} ({exc})") from None
    try:
        yield client
    finally:
        client.close()


def _check_out(out: str, suffixes: tuple[str, ...]) -> None:
    path = Path(out)
    if path.suffix.lower() not in suffixes:
        raise CLIError(f"{out!r}: the file name must end in {' or '.join(suffixes)}")
    if not path.parent.exists():
        raise CLIError(f"{out!r}: folder {str(path.parent)!r} does not exist")

