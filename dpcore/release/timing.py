"""Time that does not depend on the data (issue 22, item 6): padded releases.

How long a mechanism runs depends on the private table (DP-Lloyd ×1.94, Balcan ×1.86, the trimmed
mean ×1.80 from n = 4000 to 8000 rows): a response time is an output that no DP analysis charges.
In a curator deployment the release door therefore answers after a **public deadline**, computed
from public inputs only: the curator's fixed setting, or the registry's cost model
(:meth:`~dpcore.release.registry.Variant.seconds` at the declared n, d and k) times a safety factor.
The computation runs in a worker thread; the door waits until the deadline, whatever happens:

* finished before it: the output is held back until the deadline;
* not finished at it: the release is ⊥ (its budget was charged before computing, like every ⊥),
  the run is cancelled at its next :func:`~dpcore.core.cancel.checkpoint` and its result, if any
  comes later, is dropped.

So every release answers at the deadline (plus scheduling jitter that does not depend on the
rows), and whether it is ⊥ for being slow depends on the data only through a time the analyst
never sees unless the curator's deadline is too tight (hence the safety factor).
``tests/test_release_door.py`` checks equal latency distributions for n and 2n rows.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from dpcore.core.cancel import RunControl, controlled

__all__ = ["Deadline", "padded"]

#: Cost of a row without dashboard variants (the mean and statistic releases): seconds per
#: n·d at the model's scale, as :class:`~dpcore.release.registry.Variant` states it.
FUNCTION_SECONDS_PER_UNIT = 2e-6


@dataclass(frozen=True)
class Deadline:
    """When a padded release answers: public inputs only.

    Parameters
    ----------
    seconds : float, optional
        A curator setting: every release (or batch of releases) answers after this many seconds.
    safety : float
        Without ``seconds``: the registry's cost estimate times this factor (the model is for an
        idle machine; the factor absorbs load).
    minimum : float
        A floor for the estimate-based deadline (seconds).
    """

    seconds: float | None = None
    safety: float = 10.0
    minimum: float = 1.0

    def __post_init__(self) -> None:
        for name in ("seconds", "safety", "minimum"):
            value = getattr(self, name)
            if value is not None and not (isinstance(value, int | float) and value > 0
                                          and value < 1e6):
                raise ValueError(f"deadline {name} must be a number of seconds in (0, 1e6), "
                                 f"got {value!r}")

    def for_releases(self, releases: Sequence[tuple[str, dict]], *, n: int, d: int) -> float:
        """The deadline (seconds) of ``(mechanism, params)`` releases on a table of the public
        n and d: the curator's setting, else Σ cost model × safety, at least ``minimum``."""
        if self.seconds is not None:
            return float(self.seconds)
        return max(self.minimum, self.safety * sum(estimate_seconds(m, p, n=n, d=d)
                                                   for m, p in releases))


def estimate_seconds(mechanism: str, params: dict, *, n: int, d: int) -> float:
    """The registry's cost model for one release (public: mechanism, parameters, n, d)."""
    from dpcore.release.registry import entry

    try:
        row = entry(mechanism)
    except KeyError:  # a runtime-registered mechanism: no model, the floor applies
        return 0.0
    k = int(params.get("n_clusters") or 1)
    if row.variants:
        return row.variants[0].seconds(n, d, k, params)
    return 0.02 + FUNCTION_SECONDS_PER_UNIT * float(n) * max(int(d), 1)


def padded(compute: Callable[[int], Any], count: int, seconds: float) -> list[Any]:
    """``[compute(0), …, compute(count − 1)]`` run in a worker thread, returned exactly
    ``seconds`` after the call; an item not finished by then is None (⊥) and the worker is
    cancelled. The worker runs in a copy of the caller's context (the defended-noise scope and
    any cancellation control travel with it)."""
    start = time.monotonic()
    results: list[Any] = [None] * count
    finished = [False] * count
    lock = threading.Lock()
    expired = threading.Event()
    done = threading.Event()
    control = RunControl()

    def work() -> None:
        with controlled(control):
            for i in range(count):
                if expired.is_set():
                    break
                out = compute(i)
                with lock:
                    if not expired.is_set():
                        results[i], finished[i] = out, True
        done.set()

    worker = threading.Thread(target=contextvars.copy_context().run, args=(work,),
                              name="dpcore-padded-release", daemon=True)
    worker.start()
    done.wait(timeout=max(0.0, start + seconds - time.monotonic()))
    with lock:
        expired.set()
        out = [r if ok else None for r, ok in zip(results, finished, strict=True)]
    control.cancel()  # a late run stops at its next checkpoint; its result is dropped
    left = start + seconds - time.monotonic()
    if left > 0:
        time.sleep(left)
    return out
