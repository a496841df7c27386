"""Errors of the out-of-core path (:mod:`dpcore.scale.dask_kmeans`) and the one place Dask tasks are
computed.

Data problems inside a partition are raised on the worker as :class:`PartitionError` (picklable,
so it crosses a distributed cluster) and renamed on the driver after the *file* the partition was
read from, with the column (issue 14: "partition 2" told the user nothing). Cluster failures
become :class:`ScaleError` with advice that matches the cause; no partial result is returned.
"""

from __future__ import annotations

import glob
import os
import time
from pathlib import Path
from typing import Any

from dpcore.core.cancel import Cancelled
from dpcore.core.errors import PartitionError, ScaleError

__all__ = ["PartitionError", "Parts", "ScaleError", "compute", "files_of", "gather"]

#: Environment variable: seconds one Dask call may take before it is cancelled (default 3600).
TIMEOUT_ENV = "DPCORE_DASK_TIMEOUT_S"
#: How long a cluster may have no worker before the call gives up (a lost worker whose restart
#: failed left the driver in ``Client.gather`` for 20 minutes, issue 26).
NO_WORKER_GRACE_S = 30.0
_POLL_S = 1.0


def _timeout() -> float:
    raw = os.environ.get(TIMEOUT_ENV, "").strip()
    try:
        value = float(raw) if raw else 3600.0
    except ValueError:
        raise ScaleError(f"{TIMEOUT_ENV} must be a number of seconds, got {raw!r}") from None
    if not 0 < value < float("inf"):
        raise ScaleError(f"{TIMEOUT_ENV} must be a positive number of seconds, got {raw!r}")
    return value


def gather(client: Any, tasks: list, what: str, *, timeout: float | None = None,
           grace: float = NO_WORKER_GRACE_S) -> list:
    """``client.compute(tasks)`` gathered, with a deadline and a check that workers exist.

    Polls every second: past ``timeout`` seconds (default ``$DPCORE_DASK_TIMEOUT_S`` or one
    hour), or after ``grace`` seconds without a single worker, the futures are cancelled and a
    :class:`ScaleError` says which; a Stop of the dashboard (:func:`dpcore.core.cancel.checkpoint`)
    cancels them too.
    """
    from distributed import wait

    from dpcore.core.cancel import checkpoint

    limit = _timeout() if timeout is None else float(timeout)
    futures = client.compute(tasks)
    start = time.monotonic()
    alone_since: float | None = None
    try:
        while True:
            try:
                wait(futures, timeout=_POLL_S)
                break
            except TimeoutError:
                pass
            now = time.monotonic()
            if now - start > limit:
                raise ScaleError(f"{what} did not finish within {limit:g} s ({TIMEOUT_ENV}); "
                                 "it was cancelled on the cluster, no partial result is returned")
            workers = client.scheduler_info().get("workers", {})
            if workers:
                alone_since = None
            else:
                alone_since = now if alone_since is None else alone_since
                if now - alone_since > grace:
                    raise ScaleError(f"{what}: the cluster has had no worker for {grace:g} s "
                                     "(a worker was lost and not replaced); start workers, "
                                     "then run again. No partial result is returned")
            checkpoint(None, f"{what}: waiting for the cluster")
        return client.gather(futures)
    except BaseException:
        client.cancel(futures)
        raise


class Parts(list):
    """The delayed partitions, with the file each one was read from when that is known."""

    origins: list[str] | None = None


def files_of(source: str | list[str]) -> list[str]:
    """The files a path, directory or glob (or a list of them) names, in Dask's order."""
    from dask.utils import natural_sort_key

    files: list[str] = []
    for path in [source] if isinstance(source, str) else source:
        if any(ch in path for ch in "*?["):
            files += sorted(glob.glob(path), key=natural_sort_key)
        elif Path(path).is_dir():
            files += sorted((str(p) for p in Path(path).rglob("*") if p.is_file()
                             and not p.name.startswith(("_", "."))), key=natural_sort_key)
        else:
            files.append(path)
    return files


def compute(tasks: list, client: Any, what: str, origins: list[str] | None = None) -> list:
    """Compute delayed tasks (on ``client`` or the default scheduler); all results or an error.

    Errors of the data name the file (``origins[i]`` for partition i, when known) and the
    column, with no advice about the cluster; cluster failures get advice that fits the cause.
    """
    import dask

    try:
        if client is not None:
            return gather(client, tasks, what)
        return list(dask.compute(*tasks))
    except (ScaleError, Cancelled):
        raise
    except PartitionError as exc:
        where = (f"file {origins[exc.index]!r}" if origins and 0 <= exc.index < len(origins)
                 else f"partition {exc.index}")
        raise ValueError(f"{where}: {exc.message}") from None
    except KeyError as exc:  # a column missing from some file (its schema differs)
        raise ValueError(f"{what}: column {exc.args[0] if exc.args else exc!s} is missing "
                         "from some of the files; give files with the same columns") from None
    except (ValueError, TypeError, FileNotFoundError, PermissionError):
        raise  # bad or missing data inside a partition: the original, clear message
    except MemoryError:
        raise ScaleError(f"{what} ran out of memory; use smaller partitions or more workers, "
                         "or a smaller sample_size") from None
    except Exception as exc:  # KilledWorker, CancelledError, lost connections, ...
        name = type(exc).__name__
        if name == "KilledWorker":
            advice = ("a worker died repeatedly on the same partition (often out of memory); "
                      "give the workers more memory or use smaller partitions")
        elif name in ("CancelledError", "FutureCancelledError"):
            advice = "the computation was cancelled on the cluster"
        else:
            advice = ("the connection to the cluster failed; check that the scheduler and "
                      "workers are running, then run again")
        raise ScaleError(f"{what} failed on the cluster ({name}: {exc}); no partial result is "
                         f"returned. {advice}") from exc
