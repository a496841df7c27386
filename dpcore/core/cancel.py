"""Cooperative cancellation and progress for long computations.

A long fit (DP-Lloyd iterations, max-cover levels, FriendlyCore batches, sweep cells) calls
:func:`checkpoint` between its steps. Outside a :func:`controlled` block that call costs one
context-variable read and does nothing; inside one it raises :class:`Cancelled` as soon as the
block's :class:`RunControl` was cancelled (from another thread, e.g. a dashboard Stop button or a
superseded rerun) and forwards progress to the block's callback.

The control travels in a :class:`contextvars.ContextVar`, so concurrent runs (several dashboard
sessions, each fit in its own thread) never see each other's control, and nothing is global.
Worker threads a mechanism starts for one step do not inherit it: call :func:`checkpoint` from
the thread that drives the loop.

Privacy note: cancellation happens *after* a release door charged the budget, so a cancelled
release still costs its budget (stopping cannot be used to undo a charge); progress messages
must not carry data-dependent numbers in release mode (the door passes no callback there).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Cancelled", "RunControl", "checkpoint", "controlled", "substep"]

ProgressFn = Callable[[float, str], None]


class Cancelled(Exception):
    """The run was cancelled by its :class:`RunControl` (not an error of the inputs)."""


@dataclass
class RunControl:
    """Cancellation flag and progress callback of one run.

    Parameters
    ----------
    on_progress : callable, optional
        ``(fraction in [0, 1], message) -> None``, called from :func:`checkpoint` with the
        fraction the running step reports. Exceptions it raises propagate (a callback may
        cancel by raising).
    """

    on_progress: ProgressFn | None = None
    _event: threading.Event = field(default_factory=threading.Event, repr=False)

    def cancel(self) -> None:
        """Ask the run to stop at its next checkpoint (thread-safe, idempotent)."""
        self._event.set()

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()


_CURRENT: contextvars.ContextVar[RunControl | None] = contextvars.ContextVar(
    "dpcore_run_control", default=None
)


def checkpoint(fraction: float | None = None, message: str = "") -> None:
    """Raise :class:`Cancelled` if the current run was cancelled; report progress.

    Parameters
    ----------
    fraction : float, optional
        Share of the run done so far (clipped to [0, 1]); None reports nothing.
    message : str
        Short public description of the step ("iteration 3 of 10"); never data-derived.
    """
    ctl = _CURRENT.get()
    if ctl is None:
        return
    if ctl.cancelled:
        raise Cancelled("the run was cancelled")
    if fraction is not None and ctl.on_progress is not None:
        ctl.on_progress(min(max(float(fraction), 0.0), 1.0), message)


@contextmanager
def controlled(control: RunControl | None = None) -> Iterator[RunControl]:
    """Run the block under ``control`` (a new one if None); yields the control."""
    ctl = control if control is not None else RunControl()
    token = _CURRENT.set(ctl)
    try:
        yield ctl
    finally:
        _CURRENT.reset(token)


@contextmanager
def substep(lo: float, hi: float) -> Iterator[None]:
    """Report a nested step's checkpoints as the share [lo, hi] of the current run's progress.

    A composite fit (max-cover seeding, then DP-Lloyd) runs each part under its own share so
    the fractions the caller sees keep increasing; cancellation is the outer run's (same flag).
    Outside a :func:`controlled` block it does nothing.
    """
    outer = _CURRENT.get()
    if outer is None:
        yield
        return
    cb = outer.on_progress

    def forward(fraction: float, message: str) -> None:
        if cb is not None:
            cb(lo + (hi - lo) * fraction, message)

    token = _CURRENT.set(RunControl(on_progress=forward, _event=outer._event))
    try:
        yield
    finally:
        _CURRENT.reset(token)
