"""MaxCoverKMeans never crashes and always returns k centres (issue 12 defect 1), public-only
refusals (defect 4), the Lemma 6.2 bound for every ε_E (defect 5), no copy of X (issue 15).

The 1,000-fit sweep per data set is ``slow``; the default suite runs a seeded subset.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpcore.data.datasets import gaussian_mixture, load_sample
from dpcore.mechanisms.maxcover import MaxCoverKMeans, privacy_cost, split_budget
from dpcore.mechanisms.maxcover.accounting import em_epsilon_for, em_privacy_loss
from dpcore.mechanisms.maxcover.averaging import _clip_with_warning
from dpcore.mechanisms.maxcover.lazy import _LazyCover

#: the dashboard's public box [-180, 180] × [-90, 90]: centre (0, 0), radius √(180² + 90²)
GEO_RADIUS = math.hypot(180.0, 90.0)


def _geo(name: str) -> tuple[np.ndarray, float]:
    df = load_sample(name)
    return df[["longitude", "latitude"]].to_numpy(float), GEO_RADIUS


def _data(name: str) -> tuple[np.ndarray, float]:
    """The acceptance data sets with a public radius (bounds from the generators' parameters)."""
    if name in ("cities", "earthquakes"):
        return _geo(name)
    if name == "mixture":
        return gaussian_mixture(3000, 2, 3, rng=0)[0], 10 + math.sqrt(2) + 5
    if name == "iris-like":
        return gaussian_mixture(150, 4, 3, sigma=0.5, center_radius=3.0, rng=0)[0], 6.5
    if name == "letter-like":
        return gaussian_mixture(20_000, 16, 26, rng=0)[0], 10 + 4 + 5
    raise ValueError(name)


def _fit(X, radius, seed, **kw):
    """One fit with settings drawn from the seed: ε ∈ [0.1, 5], k ∈ [2, 10], ± final round."""
    g = np.random.default_rng(seed)
    params = dict(
        epsilon=float(g.choice([0.1, 0.5, 1.0, 2.0, 5.0])),
        delta=1e-6,
        radius=radius,
        n_public=X.shape[0],
        final_lloyd=bool(g.integers(2)),
        rng=seed,
    )
    params.update(kw)
    k = int(g.choice([2, 3, 5, 8, 10]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # clipped rows, ε_G clamped to 1/3
        return MaxCoverKMeans(k, **params).fit(X), k


def _sweep(name: str, seeds, **kw) -> None:
    X, radius = _data(name)
    for seed in seeds:
        est, k = _fit(X, radius, seed, **kw)
        C = est.cluster_centers_
        assert C.shape == (k, X.shape[1]) and np.all(np.isfinite(C)), (name, seed)


# ---------------------------------------------------------------- defect 1: the crash
def test_issue_12_reproduction_returns_k_centres():
    # Crashed with "zero-size array to reduction operation minimum" (stale global node after
    # every point was covered, then root_box() on an empty active set).
    X, _ = _geo("cities")
    for stride in ("paper", "auto"):
        est = MaxCoverKMeans(
            5,
            epsilon=0.1,
            delta=1e-6,
            radius=201.246,
            final_lloyd=True,
            n_public=X.shape[0],
            grid_stride=stride,
            rng=3509597660,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            assert est.fit(X).cluster_centers_.shape == (5, 2)


def test_lazy_sampler_keeps_drawing_after_every_point_is_covered():
    # The unit-level cause: a proposal from the (stale) global node is rejected once all points
    # are covered; the envelope must then fall back to the uniform law, not crash.
    rng = np.random.default_rng(0)
    Y = rng.normal(0, 0.5, (50, 2))
    active = np.ones(50, bool)
    lazy = _LazyCover(Y, active, 3.0, 3, 2.0)  # tiny grid, huge a: the global node dominates
    active[:] = False
    lazy.remove(np.arange(50))
    gen = np.random.default_rng(1)
    draws = np.array([lazy.draw(2 * math.log(7), gen, 10**4) for _ in range(200)])
    assert np.all(np.abs(draws) <= 3)
    assert len({tuple(b) for b in draws}) > 20  # uniform over the 49 grid points


@pytest.mark.parametrize(
    "name,n_fits",
    [("cities", 3), ("earthquakes", 3), ("mixture", 15), ("iris-like", 30), ("letter-like", 2)],
)
def test_seeded_fits_return_k_centres(name, n_fits):
    _sweep(name, range(n_fits))


def test_paper_grid_small_sweep():
    _sweep("iris-like", range(10), grid_stride="paper")
    _sweep("mixture", range(3), grid_stride="paper")


@pytest.mark.slow
@pytest.mark.acceptance
@pytest.mark.parametrize("name", ["cities", "earthquakes", "mixture", "iris-like", "letter-like"])
def test_acceptance_1000_seeded_fits(name):
    """Issue 12 acceptance: 1,000 seeded fits per data set, zero exceptions, k centres each."""
    _sweep(name, range(1000))


# ---------------------------------------------------------------- defect 4: public refusals
def test_fewer_rows_than_k_runs_when_n_is_declared():
    # Refusing k > n(data) flips between neighbours (n = k − 1 vs k): an ε = ∞ event. With a
    # declared n the fit runs and still returns k centres.
    X = np.random.default_rng(1).uniform(-1, 1, (4, 2))
    for rows in (X[:3], X, X[:0]):
        est = MaxCoverKMeans(4, epsilon=1.0, delta=1e-6, radius=2.0, n_public=10, rng=0,
                             preset="paper")
        assert est.fit(rows).cluster_centers_.shape == (4, 2)
    for rows in (X[:0], X[:1], X[:3]):  # the default DP-Lloyd stage too, down to no row
        est = MaxCoverKMeans(4, epsilon=1.0, delta=1e-6, radius=2.0, n_public=10, rng=0)
        assert est.fit(rows).cluster_centers_.shape == (4, 2)
    with pytest.raises(ValueError, match="n_public=3"):  # public inputs only
        MaxCoverKMeans(4, epsilon=1.0, delta=1e-6, radius=2.0, n_public=3).fit(X)


# ---------------------------------------------------------------- defect 5: ε_E > 2
def test_lemma_6_2_bound_holds_for_large_eps_E():
    # Lemma 6.2's proof needs E[exp(x·1)] = 1 + (eˣ − 1)p; the paper replaces eˣ − 1 by e·x,
    # which under-states it for x = ε_E/2 > 1. At ε_E = 4, δ_E = 1e-6 the true bound is
    # (e² − 1)·ln(1e6) ≈ 88.3 against the paper's 2e·ln(1e6) ≈ 75.1.
    delta = 1e-6
    true = math.expm1(2.0) * math.log(1 / delta)
    assert privacy_cost(4.0, 0.1, 0.1, delta, delta).epsilon >= true + 0.2 - 1e-9
    with pytest.raises(ValueError, match="ε_E ≤ 2"):
        privacy_cost(4.0, 0.1, 0.1, delta, delta, em_bound="paper")
    # for ε_E ≤ 2 the exact bound is never above the paper's
    for e in (0.01, 0.5, 1.0, 2.0):
        assert em_privacy_loss(e, delta) <= em_privacy_loss(e, delta, "paper")


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 50.0, 500.0])
def test_split_budget_spends_the_total_under_the_exact_bound(epsilon):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ε_G clamped to 1/3 at large ε
        b = split_budget(epsilon, 1e-6, final_lloyd=True, lloyd_rounds=3)
    em = b.guarantee.epsilon - b.eps_L - b.eps_G - b.eps_lloyd
    assert em == pytest.approx(0.4 * epsilon, rel=1e-9)
    assert em_epsilon_for(em_privacy_loss(b.eps_E, b.delta_E), b.delta_E) == pytest.approx(
        b.eps_E, rel=1e-9
    )
    if epsilon >= 500:  # the paper's split would need ε_E > 2 here: refused, not under-charged
        with pytest.raises(ValueError, match="ε_E ≤ 2"), warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            split_budget(epsilon, 1e-6, em_bound="paper")


# ---------------------------------------------------------------- issue 15: no copy
def test_data_inside_the_ball_is_not_copied():
    X = np.random.default_rng(2).uniform(-1, 1, (100, 3))
    assert _clip_with_warning(X, 2.0) is X
    with pytest.warns(UserWarning, match="1 of 100 rows"):
        X2 = _clip_with_warning(np.vstack([X[:99], [[5.0, 0, 0]]]), 2.0)
    assert np.linalg.norm(X2, axis=1).max() <= 2.0 + 1e-12


# ---------------------------------------------------------------- D'' pruning (post-processing)
def test_prune_proxy_drops_empty_candidates_and_keeps_k():
    from dpcore.mechanisms.maxcover.estimator import prune_proxy_weights

    rng = np.random.default_rng(3)
    eps_L, n_empty = 0.1, 2000
    noise = rng.laplace(0, 1 / eps_L, n_empty + 3)
    w = np.maximum(0, np.round(np.r_[np.zeros(n_empty), [400, 300, 200]] + noise))
    kept = prune_proxy_weights(w, 2, eps_L)
    assert np.all(kept[-3:] == w[-3:])  # the populated candidates survive unchanged
    # empty ones pass τ = ln|C|/ε_L with probability 1/(2|C|); without pruning ~half would
    assert np.count_nonzero(kept[:n_empty]) <= 3 < np.count_nonzero(w[:n_empty])
    # fewer than k above τ: the k largest noisy counts are kept
    small = np.array([0.0, 5.0, 9.0, 2.0])
    np.testing.assert_array_equal(prune_proxy_weights(small, 2, eps_L), [0, 5, 9, 0])


def test_fit_reports_progress_per_level_and_can_be_cancelled():
    from dpcore.core.cancel import Cancelled, RunControl, controlled

    X = np.random.default_rng(4).uniform(-1, 1, (300, 3))
    seen: list[tuple[float, str]] = []
    est = MaxCoverKMeans(3, epsilon=1.0, delta=1e-6, radius=2.0, n_public=300, rng=0)
    with controlled(RunControl(on_progress=lambda f, m: seen.append((f, m)))):
        est.fit(X)
    # the default preset: one report per level, then the DP-Lloyd stage's rounds in the last
    # share, one rising fraction (a nested stage restarting at 0 is the bug caught)
    levels = [f for f, m in seen if m.startswith("max-cover")]
    lloyd = [f for f, m in seen if m.startswith("DP-Lloyd")]
    assert len(levels) >= est.schedule_.m and len(lloyd) == est.lloyd_.n_iter_
    assert len(levels) + len(lloyd) == len(seen) and min(lloyd) >= max(levels)
    assert [f for f, _ in seen] == sorted(f for f, _ in seen)
    ctl = RunControl(on_progress=lambda f, m: ctl.cancel() if f > 0.3 else None)
    with pytest.raises(Cancelled), controlled(ctl):
        MaxCoverKMeans(3, epsilon=1.0, delta=1e-6, radius=2.0, n_public=300, rng=0).fit(X)
