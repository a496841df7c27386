"""Run panel: cost-decided Run buttons, background runs that a Stop ends within a second."""

from __future__ import annotations

import threading
import time

import pytest
from apptest_helpers import clear_caches, errors, new_app

from dpcore.core.cancel import RunControl, checkpoint
from pages._run import Job, _execute

pytestmark = pytest.mark.filterwarnings(
    "ignore::dpcore.privacy.guarantees.PrivacyLeakWarning", "ignore::UserWarning"
)


def test_a_stopped_background_run_ends_within_a_second_and_keeps_its_progress():
    seen = []

    def slow():
        for i in range(1000):
            checkpoint(i / 1000, f"step {i}")
            seen.append(i)
            time.sleep(0.01)
        return "finished"

    job = Job("k", RunControl())
    job.ctl.on_progress = lambda f, m: setattr(job, "fraction", f)
    worker = threading.Thread(target=_execute, args=(job, slow))
    worker.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    job.ctl.cancel()
    worker.join(timeout=2)
    assert not worker.is_alive() and time.monotonic() - t0 < 1.0
    assert job.done and job.cancelled and job.result is None and job.error is None
    assert 0 < len(seen) < 1000 and 0 < job.fraction < 1


def test_errors_of_a_run_are_kept_for_the_page():
    def bad():
        raise ValueError("t = 3 tuples are too few")

    job = Job("k", RunControl())
    _execute(job, bad)
    assert job.done and isinstance(job.error, ValueError) and not job.cancelled


def test_expensive_choice_waits_for_run_and_cheap_one_runs_at_once():
    clear_caches()
    at = new_app()
    at.switch_page("pages/clustering.py").run()
    assert at.dataframe  # cheap defaults: computed without a click
    # at k = 50 the defaults still run at once, while max-cover k-means is estimated at ~7 s
    # (the registry's cost model: 2e-6 s per row·k·d)
    at.sidebar.text_input(key="k").set_value("50").run()
    assert at.dataframe and not at.exception
    at.multiselect(key="clu_algs").set_value(["Max-cover k-means", "DP-Lloyd"]).run()
    assert not at.exception and not errors(at)
    # estimated > 2 s: nothing is recomputed; the last result stays, marked stale
    assert any("stale" in c.value for c in at.caption)
    assert any("Estimated time" in c.value for c in at.caption)
    assert list(at.dataframe[0].value["algorithm"]) == ["DP k-means (recommended)",
                                                        "k-means (non-private)"]
    assert at.button(key="clu_run")


def test_kmeans_baseline_survives_a_trip_to_release_mode():
    clear_caches()
    at = new_app()
    at.switch_page("pages/clustering.py").run()
    assert "k-means (non-private)" in at.multiselect(key="clu_algs").value
    at.sidebar.radio(key="mode").set_value("release").run()
    # release mode has its own selection (private algorithms only, pages/_release.py)
    assert "k-means (non-private)" not in at.multiselect(key="clu_rel_algs").options
    at.sidebar.radio(key="mode").set_value("explore").run()
    assert not at.exception and not errors(at)
    assert "k-means (non-private)" in at.multiselect(key="clu_algs").value
