"""dpcore.core.cancel: checkpoints stop a controlled run, report progress, and isolate threads."""

from __future__ import annotations

import threading

import pytest

from dpcore.core.cancel import Cancelled, RunControl, checkpoint, controlled, substep


def test_checkpoint_outside_a_control_is_a_no_op():
    checkpoint(0.5, "anything")  # must neither raise nor need a callback


def test_cancel_raises_at_the_next_checkpoint_and_progress_is_forwarded():
    seen = []
    with controlled(RunControl(on_progress=lambda f, m: seen.append((f, m)))) as ctl:
        checkpoint(0.25, "a")
        checkpoint(2.0, "clipped")
        ctl.cancel()
        with pytest.raises(Cancelled):
            checkpoint(0.9, "b")
    assert seen == [(0.25, "a"), (1.0, "clipped")]
    checkpoint()  # the control is gone after the block


def test_a_cancel_in_one_thread_does_not_stop_another_threads_run():
    other_done = threading.Event()
    errors = []

    def other() -> None:
        with controlled():
            try:
                for _ in range(1000):
                    checkpoint()
            except Cancelled as exc:  # pragma: no cover - the failure this test catches
                errors.append(exc)
        other_done.set()

    with controlled() as ctl:
        ctl.cancel()
        t = threading.Thread(target=other)
        t.start()
        t.join(5)
        with pytest.raises(Cancelled):
            checkpoint()
    assert other_done.is_set() and not errors


def test_substep_maps_progress_and_shares_the_cancel_flag():
    """A nested step reports into [lo, hi] of the outer run and stops when the outer run is
    cancelled. Catches: nested fractions restarting at 0, or a fresh (never cancelled) flag."""
    seen: list[tuple[float, str]] = []
    ctl = RunControl(on_progress=lambda f, m: seen.append((f, m)))
    with controlled(ctl):
        with substep(0.5, 0.9):
            checkpoint(0.0, "a")
            checkpoint(0.5, "b")
            checkpoint(1.0, "c")
        checkpoint(1.0, "done")
        assert seen == [(0.5, "a"), (0.7, "b"), (0.9, "c"), (1.0, "done")]
        ctl.cancel()
        with substep(0.0, 1.0), pytest.raises(Cancelled):
            checkpoint(0.1, "nested")
    with substep(0.2, 0.4):  # outside a controlled block: nothing happens
        checkpoint(0.5, "free")
