"""Run buttons, progress, Stop and stale marking for explore-mode computations.

A page describes a computation by a *key* (everything its result depends on: data fingerprint,
parameters, seed) and a function. :func:`run_panel` then

* runs it at once, inline, when its cost estimate is under :data:`AUTO_SECONDS` (a cheap result
  appears at the page's defaults without a click);
* otherwise shows a **Run** button; a click starts the function in a worker thread under
  :func:`dpcore.core.cancel.controlled`, and a small fragment polls it, showing a progress bar and a
  **Stop** button (Stop → ``RunControl.cancel()``, honoured at the next ``checkpoint``);
* keeps the last finished result; when the settings change it is shown as **stale** (with the
  Run button) instead of recomputing everything on every sidebar change.

One run per page and session: a new Run cancels the one still running (superseded), and a run
whose browser session has ended is cancelled at its next progress report.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from dpcore.core.cancel import Cancelled, RunControl, controlled
from pages._lifecycle import session_life

#: Name prefix of the fit threads (pages/_lifecycle.py counts them to trim memory when one ends).
RUN_THREAD_PREFIX = "dpcore-run-"
#: Computations estimated below this many seconds run without a click.
AUTO_SECONDS = 2.0


@dataclass
class Job:
    """One run of a page's computation (state shared with its worker thread)."""

    key: Any
    ctl: RunControl
    thread: threading.Thread | None = None
    fraction: float = 0.0
    message: str = "starting"
    result: Any = None
    error: BaseException | None = None
    cancelled: bool = False
    done: bool = False
    started: float = field(default_factory=time.monotonic)
    seconds: float = 0.0
    previous: Job | None = None  # last finished run, drawn (stale) while this one runs


def _slot(page: str) -> str:
    return f"_job_{page}"


def current(page: str) -> Job | None:
    return st.session_state.get(_slot(page))


def _execute(job: Job, fn: Callable[[], Any]) -> None:
    try:
        with controlled(job.ctl):
            job.result = fn()
    except Cancelled:
        job.cancelled = True
    except Exception as exc:  # shown on the page in plain words
        job.error = exc
    finally:
        job.seconds = time.monotonic() - job.started
        job.done = True


def start(page: str, key: Any, fn: Callable[[], Any], *, background: bool = True) -> Job:
    """Start ``fn`` for ``page`` (cancelling a run still going there) and remember it."""
    old = current(page)
    if old is not None and not old.done:
        old.ctl.cancel()  # superseded
    life = session_life()  # ends when the browser session disconnects (pages/_lifecycle.py)
    job = Job(key, RunControl())
    if old is not None:
        job.previous = old if old.done and not old.cancelled else old.previous

    def progress(fraction: float, message: str) -> None:
        job.fraction, job.message = fraction, message
        if background and life is not None and life.ended.is_set():
            raise Cancelled("the browser session ended")

    job.ctl.on_progress = progress
    st.session_state[_slot(page)] = job
    if background:
        job.thread = threading.Thread(target=_execute, args=(job, fn), daemon=True,
                                      name=f"{RUN_THREAD_PREFIX}{page}")
        job.thread.start()
    else:
        with st.spinner("Computing…"):
            _execute(job, fn)
    return job


def stop(page: str) -> None:
    job = current(page)
    if job is not None and not job.done:
        job.ctl.cancel()


@st.fragment(run_every=0.5)
def _poll(page: str, label: str) -> None:
    job = current(page)
    if job is None:
        return
    if job.done:
        st.rerun()  # the whole page, which now draws the finished result
    c1, c2 = st.columns([4, 1])
    c1.progress(min(max(job.fraction, 0.0), 1.0),
                text=f"{label}: {job.message} ({time.monotonic() - job.started:.0f} s)")
    c2.button("Stop", key=f"{page}_stop", on_click=stop, args=(page,), icon=":material/stop:",
              help="Stops the run at its next step and frees the processor; finished parts are "
                   "kept.")


def run_panel(page: str, *, key: Any, fn: Callable[[], Any], seconds: float,
              label: str = "Run", button_key: str | None = None,
              auto: bool = True) -> Job | None:
    """Run button, progress and Stop for one page; returns the job whose result to draw.

    Parameters
    ----------
    key : hashable
        Identity of the settings (data fingerprint, parameters, seed).
    fn : callable
        ``() -> result``; call :func:`dpcore.core.cancel.checkpoint` between its steps.
    seconds : float
        Cost estimate; below :data:`AUTO_SECONDS` (and ``auto``) the run starts without a click.

    Returns
    -------
    The latest finished job (its ``key`` may differ from ``key``: :func:`is_stale`), or None.
    """
    job = current(page)
    running = job is not None and not job.done
    fresh = job is not None and job.done and job.key == key and not job.cancelled
    if auto and seconds < AUTO_SECONDS and not running and not fresh:
        job = start(page, key, fn, background=False)
        return job
    row = st.container(horizontal=True, vertical_alignment="center")  # wraps: never cut
    clicked = row.button(f"{label} · {expected_time(seconds)}", key=button_key or f"{page}_run",
                        type="primary", icon=":material/play_arrow:",
                        disabled=running and job.key == key,
                        help="Expected time from the registry's cost model (measured on a "
                             "2-core machine; a busy machine is slower).")
    if seconds >= AUTO_SECONDS:
        row.caption(f"Estimated time: {expected_time(seconds)} on this machine; runs in the "
                   "background with a progress bar and a Stop button.")
    if clicked:
        job = start(page, key, fn, background=seconds >= AUTO_SECONDS)
        running = not job.done
    if running:
        _poll(page, label)
        return job.previous
    if job is not None and job.done and job.key != key:
        st.caption(":orange[The settings changed since this result was computed (shown "
                   f"below, stale). Press **{label}** to update it.]")
    return job


def expected_time(seconds: float) -> str:
    """A cost estimate in words for a button: "< 1 s", "~4 s", "~2 min"."""
    if seconds < 1.0:
        return "< 1 s"
    if seconds < 90.0:
        return f"~{seconds:.0f} s"
    return f"~{seconds / 60.0:.0f} min"


def is_stale(job: Job | None, key: Any) -> bool:
    return job is not None and job.key != key
