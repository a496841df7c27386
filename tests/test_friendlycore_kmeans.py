"""FriendlyCoreKMeans (FC_Clustering, spec friendlycore.md §3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.evaluate import kmeans_cost
from dpcore.friendlycore import FriendlyCoreKMeans
from dpcore.friendlycore.clustering import BUDGET_SPLITS, _reorder
from dpcore.friendlycore.oracles import batched_kmeans, pca_oracle_batched
from dpcore.privacy import ZCDP, ApproxDP


def blobs(n, k=4, d=2, sd=0.02, seed=0):
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(k) / k
    c = 0.6 * np.c_[np.cos(angles), np.sin(angles), np.zeros((k, d - 2))]
    X = np.repeat(c, n // k, axis=0) + rng.normal(scale=sd, size=(n // k * k, d))
    return X, c


def test_fit_recovers_separated_centres_and_dashboard_attributes():
    X, c = blobs(8000)
    km = FriendlyCoreKMeans(4, rho=1.0, delta=1e-8, radius=1.0, t=200, rng=0).fit(X)
    assert not km.failed_ and km.failure_reason_ == ""
    assert km.tuples_.shape == (200, 4, 2)
    assert km.tuple_core_mask_.dtype == bool and km.tuple_core_mask_.sum() > 190
    assert km.ordered_tuples_.shape[0] == km.tuple_core_mask_.sum()
    assert km.center_averages_.shape == (4, 2) and km.tuple_radii_.shape == (4,)
    # every true centre has a private centre within 0.02 (cluster sd 0.02, 2000 points each)
    dist = np.linalg.norm(km.cluster_centers_[:, None] - c[None], axis=2)
    assert dist.min(axis=0).max() < 0.02
    assert kmeans_cost(X, km.cluster_centers_) < 1.05 * kmeans_cost(X, c)
    assert km.privacy_ == ZCDP(1.0, 1e-8)
    assert km.total_budget_.rho == pytest.approx(1.0)
    assert km.total_budget_.delta == pytest.approx(1e-8)
    labels = km.predict(X)
    assert len(np.unique(labels)) == 4


def test_ordered_tuples_are_consistently_labelled():
    rng = np.random.default_rng(1)
    base = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    T = np.array([rng.permutation(base + rng.normal(scale=0.01, size=(3, 2))) for _ in range(30)])
    O = _reorder(T, rng)
    # after reordering, position j holds the same true centre in every tuple
    for j in range(3):
        assert np.ptp(O[:, j], axis=0).max() < 0.1


def test_failure_is_reported_and_fallback_spends_declared_share():
    # Uniform noise: k-means on parts gives unrelated tuples, the tuple core is empty.
    X = np.random.default_rng(2).uniform(-1, 1, size=(4000, 2))
    km = FriendlyCoreKMeans(6, rho=1.0, delta=1e-8, radius=1.5, t=200, rng=3).fit(X)
    assert km.failed_ and "tuple core" in km.failure_reason_
    assert km.cluster_centers_ is None
    with pytest.raises(ValueError, match="failed, no centres"):
        km.predict(X)
    fb = FriendlyCoreKMeans(
        6, rho=1.0, delta=1e-8, radius=1.5, t=200, fallback="dplloyd", fallback_share=0.01, rng=3
    ).fit(X)
    assert fb.failed_ and fb.used_fallback_
    assert fb.cluster_centers_.shape == (6, 2)
    labels = dict(fb.budget_)
    assert labels["fallback DPLloyd (reserved)"].rho == pytest.approx(0.01)
    assert fb.total_budget_.rho == pytest.approx(1.0)


def test_epsilon_target_and_paper_split():
    X, _ = blobs(8000)
    km = FriendlyCoreKMeans(4, epsilon=8.0, delta=1e-8, radius=1.0, t=200, rng=4).fit(X)
    assert km.privacy_ == ApproxDP(8.0, 1e-8)
    assert not km.failed_
    assert sum(BUDGET_SPLITS["paper"].values()) == pytest.approx(1.0)
    # The formal split starves the second FriendlyCore at t = 200 (documented in the module).
    p = FriendlyCoreKMeans(4, rho=1.0, delta=1e-8, radius=1.0, t=200, budget_split="paper", rng=4)
    assert p.fit(X).failed_ and "FriendlyOrdTupAvg" in p.failure_reason_


def test_batched_oracles_find_the_clusters():
    rng = np.random.default_rng(5)
    X, c = blobs(600 * 10, k=3, d=2, sd=0.01)
    P = rng.permutation(X).reshape(10, 600, 2)
    C = batched_kmeans(P, 3, rng)
    for i in range(10):
        assert np.linalg.norm(C[i][:, None] - c[None], axis=2).min(axis=0).max() < 0.01
    rng = np.random.default_rng(6)
    centers = rng.integers(1, 3, size=(3, 30)).astype(float)
    Y = np.repeat(centers, 400, axis=0) + rng.normal(size=(1200, 30)) * 0.3
    Cp = pca_oracle_batched(rng.permutation(Y)[None], 3, rng)[0]
    assert np.linalg.norm(Cp[:, None] - centers[None], axis=2).min(axis=0).max() < 0.2


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"radius": 0.0}, "radius must be finite and > 0"),
        ({"n_clusters": 0}, "n_clusters must be an integer >= 1"),
        ({"n_clusters": 30}, r"larger than the parts allow.*need n >= t \* k = 6000"),
        ({"t": 20}, r"t = 20 tuples are too few .* need t >= \d+"),
        ({"rho": None}, "exactly one of rho"),
        ({"oracle": "nope"}, "oracle must be one of"),
        ({"budget_split": {"lloyd": 1.0}}, "needs positive shares"),
        ({"fallback": "lsh"}, "fallback must be None"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"n_clusters": 4, "rho": 1.0, "delta": 1e-8, "radius": 1.0, "t": 200, **kwargs}
    k = args.pop("n_clusters")
    with pytest.raises(ValueError, match=match):
        FriendlyCoreKMeans(k, **args).fit(np.zeros((4000, 2)) + 0.1)


def test_nonfinite_data_rejected():
    X = np.zeros((4000, 2))
    X[5, 0] = math.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        FriendlyCoreKMeans(4, rho=1.0, delta=1e-8, radius=1.0).fit(X)
