"""The recommended DP k-means gets the declared box everywhere (issue 23.6, part left).

The dashboard's variants are built from :class:`dpcore.release.registry.PublicInputs`; its
``bounds`` (the declared box, centred, when every column is bounded) must reach ``DPKMeans`` so
that it clamps, calibrates and starts on the box, and a radius-only description must still run.
"""

from __future__ import annotations

import numpy as np
import pytest
from apptest_helpers import APP, clear_caches, errors, new_app

from dpcore.app.sweeps import centred_box, clustering_algorithms, fit_algorithm
from dpcore.data.datasets import SAMPLE_DATASETS
from dpcore.estimators.dpkmeans import DPKMeans
from dpcore.release.registry import PublicInputs, entry

pytestmark = pytest.mark.filterwarnings(
    "ignore::dpcore.privacy.guarantees.PrivacyLeakWarning", "ignore::UserWarning"
)
REC = "DP k-means (recommended)"


def test_centred_box_needs_every_column_and_shifts_by_the_centre():
    """Catches a box built from some columns only (the others would be unbounded) and a box left
    in table units while X is centred."""
    b = {"a": (0.0, 10.0), "b": (-4.0, 2.0)}
    assert centred_box(["a", "b"], b, [5.0, -1.0]) == ([-5.0, -3.0], [5.0, 3.0])
    assert centred_box(["a", "b"], b, None) == ([0.0, -4.0], [10.0, 2.0])
    assert centred_box(["a", "c"], b, None) is None
    assert centred_box([], b, None) is None


def test_recommended_variant_passes_the_box_only_when_declared():
    """Catches the variant dropping ``bounds`` (the ball's noise on a bounded table) and a
    radius-only description getting a made-up box."""
    row = entry("dpkmeans")
    box = ([-1.0, -2.0], [1.0, 2.0])
    with_box = row.defaults(PublicInputs(3, 1.0, 1e-6, 3.0, 500, box))
    assert with_box["bounds"] == [[-1.0, -2.0], [1.0, 2.0]]
    without = row.defaults(PublicInputs(3, 1.0, 1e-6, 3.0, 500))
    assert "bounds" not in without and without["radius"] == 3.0


def test_fit_algorithm_recommended_uses_the_box_and_radius_only_still_runs():
    """The dashboard's fit path: with a box the fit clamps to it and runs in a private ball
    inside it (``seeding_kind_``, ``ball_``); without one, on the declared ball. Catches
    ``fit_algorithm`` not forwarding ``bounds``."""
    rng = np.random.default_rng(1)
    X = rng.uniform(-1.0, 1.0, size=(2000, 2)) * [1.0, 2.0]
    alg = clustering_algorithms()[REC]
    box = ([-1.0, -2.0], [1.0, 2.0])
    out = fit_algorithm(alg, X, k=3, epsilon=1.0, delta=1e-6, radius=float(np.hypot(1, 2)),
                        seed=4, bounds=box)
    assert out.error is None and out.centers is not None
    assert out.params["bounds"] == [[-1.0, -2.0], [1.0, 2.0]]
    est = DPKMeans(**out.params, rng=4).fit(X)
    # on a box at this ε·n/(k·d) the recommended fit runs in a private ball inside the box
    assert est.seeding_kind_ == "private-ball" and est.ball_ is not None
    assert np.all(est.ball_.center >= box[0]) and np.all(est.ball_.center <= box[1])
    np.testing.assert_array_equal(est.cluster_centers_, out.centers)  # the same fit
    ball = fit_algorithm(alg, X, k=3, epsilon=1.0, delta=1e-6, radius=float(np.hypot(1, 2)),
                         seed=4)
    assert ball.error is None and "bounds" not in ball.params
    assert not DPKMeans(**ball.params, rng=4).fit(X).lloyd_.domain_.is_box


@pytest.mark.slow
def test_dashboard_recommended_fit_on_a_bounded_sample_uses_the_box():
    """The Clustering page on a bundled sample (every column has public bounds): the
    recommended fit's parameters carry the sample's box, centred on the declared centre.
    Catches the page passing only the radius (issue 23: "passes only a radius even when every
    column has bounds")."""
    clear_caches()
    at = new_app()
    at.switch_page("pages/clustering.py").run()
    at.multiselect(key="clu_algs").set_value([REC]).run()
    assert not at.exception and not errors(at)
    key = at.session_state["data"]
    sample = SAMPLE_DATASETS[key]
    lo = np.array([b[0] for b in sample.bounds])
    hi = np.array([b[1] for b in sample.bounds])
    fits = [v for k, v in at.session_state["_clu_memo"].items() if k != "data" and k[0] == REC]
    assert fits and fits[0].error is None
    got = np.asarray(fits[0].params["bounds"])
    np.testing.assert_allclose(got[1] - got[0], hi - lo)  # the box's widths, not the ball's
    np.testing.assert_allclose(got[0] + got[1], 0.0, atol=1e-9)  # centred on the box's centre


@pytest.mark.parametrize("seeding", ["auto", "moments"])
def test_dpkmeans_n_jobs_is_honoured_and_changes_nothing(monkeypatch, seeding):
    """``n_jobs`` reaches DP-Lloyd's row loop (the spy sees 1 thread with ``n_jobs=1``) and the
    centres are bit-for-bit those of any other thread count (blocks fixed by the shapes).
    Catches an ignored ``n_jobs`` and blocks (so rounding) that follow the thread count."""
    import dpcore.mechanisms.lloyd.algorithm as alg

    seen: list[int] = []
    real = alg.n_threads

    def spy(n_jobs=None):
        seen.append(real(n_jobs))
        return seen[-1]

    monkeypatch.setattr(alg, "n_threads", spy)
    X = np.random.default_rng(2).uniform(-3.0, 3.0, size=(20_000, 4))
    fits = {}
    for jobs in (1, 2, -1, None):
        seen.clear()
        km = DPKMeans(4, epsilon=2.0, bounds=(-3.0, 3.0), n=20_000, seeding=seeding,
                      n_jobs=jobs, rng=11).fit(X)
        fits[jobs] = km.cluster_centers_
        if jobs == 1:
            assert seen and set(seen) == {1}
        if jobs == 2:
            assert seen and set(seen) == {2}
    for jobs in (2, -1, None):
        np.testing.assert_array_equal(fits[jobs], fits[1])


def test_dpkmeans_n_jobs_is_validated():
    """A bad ``n_jobs`` is a clear ParameterError (ValueError), never a traceback from the
    thread pool."""
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match="n_jobs"):
        DPKMeans(2, epsilon=1.0, bounds=(-1.0, 1.0), n=10, n_jobs=0).fit(X)


def _upload_fit(spec: dict) -> dict:
    """The Clustering page's recommended fit on an uploaded table with the given description."""
    import pandas as pd
    from streamlit.testing.v1 import AppTest

    clear_caches()
    table = pd.DataFrame(np.random.default_rng(0).uniform(0.0, 10.0, size=(400, 2)),
                         columns=["a", "b"])
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["data"] = "upload"
    at.session_state["uploaded"] = {"name": "t.csv", "df": table, "size": 1000}
    at.session_state["data_specs"] = {"upload": spec}
    at.run()
    at.switch_page("pages/clustering.py").run()
    at.multiselect(key="clu_algs").set_value([REC]).run()
    assert not at.exception and not errors(at)
    fits = [v for k, v in at.session_state["_clu_memo"].items() if k != "data" and k[0] == REC]
    assert fits and fits[0].error is None and fits[0].centers is not None
    return fits[0].params


BASE_SPEC = {"columns": ["a", "b"], "center": [5.0, 5.0], "radius": float(np.hypot(5, 5)),
             "radius_from": "declared by you", "radius_source": "declared"}


@pytest.mark.slow
def test_dashboard_upload_radius_only_runs_and_a_declared_box_is_used():
    """A radius-only upload still fits (no box invented); an upload whose description declares
    every column's bounds gets that box, centred; bounds read off the data are never used.
    Catches a page that builds a box from the data's own min/max (a leak) or none at all."""
    assert "bounds" not in _upload_fit(dict(BASE_SPEC))
    desc = {"columns": ["a", "b"], "lower": [0.0, 0.0], "upper": [10.0, 10.0]}
    params = _upload_fit({**BASE_SPEC, "public_description": desc})
    assert params["bounds"] == [[-5.0, -5.0], [5.0, 5.0]]
    from_data = _upload_fit({**BASE_SPEC, "public_description": desc,
                             "bounds_from_data": ["b"]})
    assert "bounds" not in from_data
