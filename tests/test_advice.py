"""dpcore.app.advice: feasible settings from public inputs, plain words, noise verdicts."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.app.advice import (
    friendly_kmeans_plan,
    friendly_mean_min_rows,
    friendly_mean_plan,
    kmeans_t_needed,
    noise_verdict,
    plain_error,
)
from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans, friendly_mean


def _blob(n: int, d: int = 2, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 0.3, size=(n, d))


def test_mean_plan_is_feasible_exactly_from_the_size_the_mechanism_accepts():
    need = friendly_mean_min_rows(5.0, 1e-6)
    X = _blob(need)
    plan = friendly_mean_plan(need, epsilon=5.0, delta=1e-6, radius=3.0)
    assert plan.feasible and plan.message == ""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = friendly_mean(X, radius=plan.friend_radius, epsilon=5.0, delta=1e-6, rng=0)
    assert res.estimate is not None  # every row is a friend at r = 2·radius: a result
    # one row fewer: refused by the mechanism itself when n is declared (a public refusal) ...
    with pytest.raises(ValueError):
        friendly_mean(X[:-1], radius=plan.friend_radius, epsilon=5.0, delta=1e-6, rng=0,
                      n_public=need - 1)
    # ... and without a declared n it runs (a result or ⊥), never a data-dependent refusal
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = friendly_mean(X[:-1], radius=plan.friend_radius, epsilon=5.0, delta=1e-6, rng=0)
    assert out.failed == (out.estimate is None)
    small = friendly_mean_plan(need - 1, epsilon=5.0, delta=1e-6, radius=3.0)
    assert not small.feasible and small.epsilon_needed is not None and small.epsilon_needed > 5
    assert "rows" in small.message and "check_size" not in small.message


def test_mean_plan_suggests_the_smallest_epsilon_that_works():
    plan = friendly_mean_plan(10_000, epsilon=1.0, delta=1e-6, radius=1.0)
    assert not plan.feasible
    assert friendly_mean_min_rows(plan.epsilon_needed, 1e-6) <= 10_000
    assert friendly_mean_min_rows(1.0, 1e-6) > 10_000


def test_kmeans_plan_t_is_accepted_by_the_estimator():
    k, eps = 2, 10.0
    plan = friendly_kmeans_plan(2000, k, epsilon=eps, delta=1e-6)
    assert plan.feasible and plan.t >= kmeans_t_needed(k, eps, 1e-6)
    X = np.r_[_blob(1000, seed=1) - 3, _blob(1000, seed=2) + 3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        km = FriendlyCoreKMeans(k, epsilon=eps, delta=1e-6, radius=6.0, t=plan.t, rng=0,
                                fallback="dplloyd").fit(X)  # no ValueError: t is enough
    assert km.cluster_centers_ is not None
    with pytest.raises(ValueError):
        FriendlyCoreKMeans(k, epsilon=eps, delta=1e-6, radius=6.0, t=plan.t_needed - 1,
                           fallback="dplloyd").fit(X)


def test_kmeans_plan_infeasible_offers_epsilon_or_smaller_k():
    plan = friendly_kmeans_plan(3000, 5, epsilon=1.0, delta=1e-6)
    assert not plan.feasible
    assert plan.epsilon_needed is not None and plan.epsilon_needed > 1.0
    assert kmeans_t_needed(5, plan.epsilon_needed, 1e-6) * 10 <= 3000
    assert "ε ≥" in plan.message


@pytest.mark.parametrize("msg", [
    "n = 3000 is too small for the zCDP filter ... pass check_size=False (spec §9.12)",
    "t = 300 tuples are too few for the tuple FriendlyCore at this budget",
    "the tuple core is empty: the oracle's tuples do not match across parts (0 of 600 kept)",
    "beyond NoisyAVG's proven range (Theorem 2.6)",
    "something nobody anticipated: pass n_public",
])
def test_plain_error_never_names_arguments_sections_or_theorems(msg):
    p = plain_error(msg)
    for token in ("check_size", "§", "Theorem", "n_public", "=", "NoisyAVG"):
        assert token not in p.text
    assert p.details == msg


def test_noise_verdict_flags_unmoved_centres_and_mean_level_cost():
    X = np.r_[_blob(200, seed=3) - 5, _blob(200, seed=4) + 5]
    good = np.array([[-5.0, -5.0], [5.0, 5.0]])
    assert noise_verdict(X, good) is None
    init = np.array([[40.0, 0.0], [0.0, 40.0]])
    assert "never moved" in noise_verdict(X, init.copy(), init=init)
    far = np.array([[0.0, 0.0], [100.0, 100.0]])  # one useful centre at the mean, one wasted
    assert "single centre" in noise_verdict(X, far)
    assert noise_verdict(X, None) is None


def test_plain_error_for_an_infeasible_sample_size_names_the_fix_not_the_argument():
    p = plain_error("sample_size=150 makes some coreset probability exceed 1 on ‖x‖ ≤ radius=4 "
                    "(n=150, lam=0.5, ...); the largest feasible sample_size is 66")
    assert "smaller sample size" in p.text and "sample_size" not in p.text
