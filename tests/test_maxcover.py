"""Tests for dpcore.mechanisms.maxcover: spec maxcover_kmeans.md §6 claims 1–10, bad input,
audits."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from dpcore.mechanisms.maxcover import (
    MaxCoverKMeans,
    _IncidenceCover,
    _LazyCover,
    _signed_offsets,
    _within,
    jl_matrix,
    level_schedule,
    noisy_average,
    noisy_candidate_counts,
    noisy_cluster_averages,
    offset_set,
    privacy_cost,
    private_grid_set_cover,
    project_to_unit_ball,
    split_budget,
)
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import ApproxDP, PrivacyLeakWarning
from dpcore.privacy.noise import exponential_mechanism_probabilities


# ---------------------------------------------------------------- claim 1: privacy accounting
def test_privacy_cost_is_theorem_6_1():
    g = privacy_cost(0.01, 0.2, 0.3, 1e-7, 2e-7, em_bound="paper")
    assert isinstance(g, ApproxDP)
    assert g.epsilon == pytest.approx(math.e * 0.01 * math.log(1e7) / 2 + 0.2 + 0.3, rel=1e-12)
    assert g.delta == pytest.approx(3e-7)
    # the default bound (valid for every ε_E) is (e^{ε_E/2} − 1)·ln(1/δ_E), below the paper's
    g = privacy_cost(0.01, 0.2, 0.3, 1e-7, 2e-7)
    assert g.epsilon == pytest.approx(math.expm1(0.005) * math.log(1e7) + 0.5, rel=1e-12)


@pytest.mark.parametrize("final_lloyd", [False, True])
def test_split_budget_spends_exactly_the_total(final_lloyd):
    b = split_budget(1.0, 1e-7, final_lloyd=final_lloyd)
    assert b.guarantee.epsilon == pytest.approx(1.0, rel=1e-9)
    assert b.guarantee.delta == pytest.approx(1e-7, rel=1e-9)
    assert b.eps_G <= 1 / 3 and b.eps_lloyd <= 1 / 3


def test_estimator_privacy_does_not_depend_on_k_or_n():
    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, (300, 3))
    gs = set()
    for k, n in [(2, 300), (5, 200)]:
        est = MaxCoverKMeans(k, epsilon=1.0, delta=1e-6, radius=2.0, n_public=n, rng=1)
        gs.add((round(est.fit(X[:n]).privacy_.epsilon, 12), est.privacy_.delta))
    assert gs == {(1.0, 1e-6)}


def test_clamped_average_share_is_reported_honestly():
    with pytest.warns(UserWarning, match="1/3"):
        b = split_budget(2.0, 1e-6)
    assert b.eps_G == pytest.approx(1 / 3)
    assert b.guarantee.epsilon < 2.0


# ---------------------------------------------------------------- claim 2: schedule
@given(
    n=st.integers(1, 10**6),
    approx=st.floats(0.05, 0.95),
    d=st.integers(1, 10),
)
@settings(max_examples=200, deadline=None)
def test_schedule(n, approx, d):
    s = level_schedule(n, d, approx)
    assert s.r[0] == pytest.approx(1 / n)
    assert s.t[0] == pytest.approx(approx / (n * math.sqrt(d)))
    np.testing.assert_allclose(s.r[1:] / s.r[:-1], 1 + approx, rtol=1e-12)
    np.testing.assert_allclose(s.t[1:] / s.t[:-1], 1 + approx, rtol=1e-12)
    np.testing.assert_allclose(s.cover_radius, (1 + approx) * s.r, rtol=1e-12)
    assert s.m == math.ceil(math.log(2 * n) / math.log(1 + approx) - 1e-9) or s.m == math.ceil(
        math.log(2 * n) / math.log(1 + approx) + 1e-9
    )
    assert 2 / (1 + approx) * (1 - 1e-12) <= s.r[-1] < 2
    assert s.cover_radius[-1] >= 2 * (1 - 1e-12)
    assert s.rho == pytest.approx(s.cover_radius[0] / s.t[0])


# ---------------------------------------------------------------- claims 3–4: offsets
@pytest.mark.parametrize("d,approx", [(1, 0.5), (2, 0.5), (3, 0.5), (3, 0.9), (2, 0.25)])
def test_offset_set_definition_and_bound(d, approx):
    V = offset_set(d, approx)
    bound = d * (1 / approx + 1) ** 2
    assert np.all(V >= 0) and np.all((V**2).sum(1) < bound)
    # complete: brute force over the cube
    vmax = math.ceil(math.sqrt(bound))
    brute = {
        v for v in itertools.product(range(vmax + 1), repeat=d) if sum(x * x for x in v) < bound
    }
    assert {tuple(v) for v in V} == brute
    # Claim 4.2's size bound (with the 2^{d'} sign patterns)
    assert V.shape[0] * 2**d <= 2**d * special.comb(bound + d + 1, d + 1)


@pytest.mark.parametrize("d,approx", [(1, 0.5), (2, 0.5), (3, 0.5), (3, 0.9), (2, 0.25)])
def test_claim_4_1_offsets_generate_exactly_the_lattice_points_in_the_ball(d, approx):
    rng = np.random.default_rng(d)
    rho = (1 + approx) * math.sqrt(d) / approx
    D = _signed_offsets(offset_set(d, approx))
    assert len({tuple(x) for x in D}) == D.shape[0]  # (s, v) -> b is injective
    for _ in range(60):
        p = rng.uniform(-50, 50, d)  # a point in lattice units
        B = np.floor(p).astype(int) + D
        gen = {tuple(b) for b in B[_within(p, B, rho)]}
        lo, hi = np.floor(p - rho).astype(int) - 1, np.ceil(p + rho).astype(int) + 1
        cube = np.array(
            list(itertools.product(*[range(a, b + 1) for a, b in zip(lo, hi, strict=True)]))
        )
        exact = {tuple(b) for b in cube[_within(p, cube, rho)]}
        assert gen == exact


# ---------------------------------------------------------------- claim 5: sampler exactness
def _small_level(seed=0):
    """n = 40 points in d' = 2, a 21 × 21 grid: both branches of Claim 4.2 carry mass."""
    rng = np.random.default_rng(seed)
    Y = np.vstack([rng.normal(0.3, 0.05, (30, 2)), rng.uniform(-1, 1, (10, 2))])
    t, approx, M, eps_E = 0.1, 0.5, 10, 0.4
    rho = (1 + approx) * math.sqrt(2) / approx
    grid = np.array(list(itertools.product(range(-M, M + 1), repeat=2)))
    Yl = Y / t
    counts = np.array([_within(Yl, g, rho).sum() for g in grid])
    probs = exponential_mechanism_probabilities(counts, eps_E, 1.0)
    return Yl, t, rho, M, eps_E, grid, probs


def _chi2_pvalue(draws: np.ndarray, grid: np.ndarray, probs: np.ndarray) -> float:
    M = grid.max()
    idx = (draws[:, 0] + M) * (2 * M + 1) + (draws[:, 1] + M)
    gidx = (grid[:, 0] + M) * (2 * M + 1) + (grid[:, 1] + M)
    obs = np.bincount(idx, minlength=gidx.max() + 1)[gidx]
    exp = probs * draws.shape[0]
    big = exp >= 5  # merge small cells into one bin
    o = np.append(obs[big], obs[~big].sum())
    e = np.append(exp[big], exp[~big].sum())
    return float(stats.chisquare(o, e).pvalue)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["incidence", "lazy"])
def test_claim_4_2_sampler_matches_exponential_mechanism(kind):
    Yl, _t, rho, M, eps_E, grid, probs = _small_level()
    a, log_n = eps_E / 2, 2 * math.log(2 * M + 1)
    gen = np.random.default_rng(1)
    if kind == "incidence":
        inc = _IncidenceCover(Yl, rho, M, _signed_offsets(offset_set(2, 0.5)), 10**7)
        draws = np.array([inc.draw(a, log_n, gen) for _ in range(12_000)])
    else:
        lazy = _LazyCover(Yl, np.ones(len(Yl), bool), rho, M, a)
        draws = np.array([lazy.draw(log_n, gen, 10**5) for _ in range(12_000)])
    # Both branches matter here (a sanity check that the test is not vacuous).
    populated = probs > 1 / probs.size
    assert 0.2 < probs[populated].sum() < 0.98
    assert _chi2_pvalue(draws, grid, probs) > 1e-3
    # Power: the same draws are far from a sampler with the wrong EM scale (ε_E instead of
    # ε_E/2) or the paper's weight without the "− 1" (double-counting the uniform mass): with
    # 12 000 draws both alternatives give p-values < 1e-10.
    wrong = exponential_mechanism_probabilities(
        np.array([_within(Yl, g, rho).sum() for g in grid]), 2 * eps_E, 1.0
    )
    assert _chi2_pvalue(draws, grid, wrong) < 1e-6


# ---------------------------------------------------------------- claim 6: coverage semantics
@pytest.mark.parametrize("sampler", ["incidence", "lazy", "hybrid"])
def test_greedy_cover_removes_exactly_the_covered_points(sampler):
    rng = np.random.default_rng(3)
    Y = np.vstack([rng.normal(0.2, 0.03, (60, 2)), rng.uniform(-0.7, 0.7, (40, 2))])
    active = np.ones(100, bool)
    active[:5] = False  # covered at an earlier level: never counted again
    s = level_schedule(100, 2, 0.5)
    i = s.m - 6
    before = active.copy()
    B = private_grid_set_cover(
        Y, active, s.t[i], s.rho, int(s.M[i]), 6, 5.0, rng=4, sampler=sampler
    )
    assert B.shape == (6, 2)
    Yl = Y / s.t[i]
    near_any = np.zeros(100, bool)
    for b in B:
        near_any |= _within(Yl, b, s.rho)
    np.testing.assert_array_equal(active, before & ~near_any)
    assert (before & ~active).sum() > 0  # something was covered (the test is not vacuous)


def test_counts_use_the_full_reset_data():
    rng = np.random.default_rng(5)
    Y = rng.uniform(-0.5, 0.5, (500, 3))
    C = rng.uniform(-0.5, 0.5, (7, 3))
    noisy = noisy_candidate_counts(Y, C, 1e9, rng=0)  # essentially noiseless
    assert np.round(noisy).sum() == 500


# ---------------------------------------------------------------- claim 7: NoisyAVG
def test_noisy_average_sd_matches_sigma_formula():
    eps, delta, radius, m, reps, d = 1 / 3, 1e-6, 1.0, 2000, 500, 2
    rng = np.random.default_rng(6)
    X = np.tile(rng.uniform(-0.5, 0.5, (m, d)), (reps, 1))
    labels = np.repeat(np.arange(reps), m)
    out = noisy_cluster_averages(X, labels, reps, radius=radius, epsilon=eps, delta=delta, rng=7)
    resid = (out - X[:m].mean(0)).ravel()
    m_hat = m - (5 / eps) * math.log(2 / delta)  # ± Lap(15): ±1 % of σ
    sigma = 5 * 2 * radius * math.sqrt(2 * math.log(3.5 / delta)) / (4 * eps * m_hat)
    # 1000 residuals: the sd estimate has ≈ 2.2 % relative error; σ² instead of σ (the public
    # re-implementation's bug) would be off by a factor 1/σ ≈ 20.
    assert np.std(resid) == pytest.approx(sigma, rel=0.08)
    assert abs(np.mean(resid)) < 4 * sigma / math.sqrt(resid.size)


def test_noisy_average_empty_and_tiny_clusters_fall_back_to_uniform_ball():
    radius, d = 3.0, 4
    pts = []
    for seed in range(300):
        for X in (np.empty((0, d)), np.ones((1, d))):  # empty; m = 1 ≪ (5/ε) ln(2/δ)
            r = noisy_average(X, radius=radius, epsilon=0.3, delta=1e-6, rng=seed)
            pts.append(r.center)
            assert r.privacy == ApproxDP(0.3, 1e-6)
    norms = np.linalg.norm(np.array(pts), axis=1)
    assert np.all(norms <= radius)
    # uniform in the ball: (‖x‖/R)^d ~ U(0, 1)
    assert stats.kstest((norms / radius) ** d, "uniform").pvalue > 1e-3


def test_noisy_average_bad_input():
    X = np.zeros((10, 2))
    with pytest.raises(ValueError, match="1/3"):
        noisy_average(X, radius=1, epsilon=0.5, delta=1e-6)
    for delta in (0, 1, -0.1):
        with pytest.raises(ValueError, match="delta"):
            noisy_average(X, radius=1, epsilon=0.3, delta=delta)
    with pytest.raises(ValueError, match="radius"):
        noisy_average(X, radius=0, epsilon=0.3, delta=1e-6)
    with pytest.warns(UserWarning, match="2 of 10 rows"):
        noisy_average(np.vstack([X[:8], [[5, 0], [0, 9]]]), radius=1, epsilon=0.3, delta=1e-6)


# ---------------------------------------------------------------- claim 8: noisy counts
def test_noisy_counts_are_laplace_1_over_eps_L():
    rng = np.random.default_rng(8)
    Y = rng.uniform(-0.5, 0.5, (300, 2))
    C = rng.uniform(-0.5, 0.5, (4000, 2))
    from dpcore.data.geometry import nearest_center

    n_c = np.bincount(nearest_center(Y, C)[0], minlength=4000)
    noise = noisy_candidate_counts(Y, C, 0.25, rng=0) - n_c
    # variance 2/ε_L² = 32 (sample-variance sd ≈ 3.5 % at 4000 draws); a Lap(2/ε_L) (Lemma 5.5's
    # typo) would have variance 128, and the KS test against Lap(0, 4) rejects it at once.
    assert np.var(noise) == pytest.approx(32, rel=0.12)
    assert stats.kstest(noise, stats.laplace(scale=4).cdf).pvalue > 1e-3


# ---------------------------------------------------------------- claims 9–10: shapes, JL
def test_output_shape_domain_and_projection():
    rng = np.random.default_rng(10)
    X = rng.normal(0, 1, (400, 8))
    est = MaxCoverKMeans(5, epsilon=1.0, delta=1e-6, radius=4.0, n_public=400, rng=11)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a few rows exceed the radius
        est.fit(X)
    assert est.cluster_centers_.shape == (5, 8)
    assert est.proj_dim_ == 2  # ⌊ln(400)/2⌋
    # candidates are grid points of [−1, 1]^{d'}; S'' are weighted means of them (or uniform pads
    # in B_1), so both lie within √d' (the unit ball is not an invariant of S'': a lone corner
    # candidate can be its own cluster)
    assert np.all(np.linalg.norm(est.proxy_centers_, axis=1) <= math.sqrt(2) + 1e-9)
    assert np.all(np.linalg.norm(est.candidates_, axis=1) <= math.sqrt(2) * 1.0 + 1e-9)
    assert est.predict(X).shape == (400,)
    Y = project_to_unit_ball(X * 100, est.projection_, 4.0, 0.5)
    assert np.all(np.linalg.norm(Y, axis=1) <= 1 + 1e-12)


def test_projection_is_data_independent():
    rng = np.random.default_rng(12)
    X = rng.normal(0, 1, (200, 6))
    kw = dict(epsilon=1.0, delta=1e-6, radius=10.0, n_public=200, rng=13)
    a = MaxCoverKMeans(3, **kw).fit(X)
    with pytest.warns(UserWarning, match="1 of 200 rows"):  # the neighbour's row is clipped
        b = MaxCoverKMeans(3, **kw).fit(np.vstack([X[:-1], 5 * X[-1:]]))
    np.testing.assert_array_equal(a.projection_, b.projection_)
    T = jl_matrix(50, 5, rng=0)
    assert T.shape == (5, 50)
    assert np.mean(T**2) == pytest.approx(1 / 5, rel=0.15)
    np.testing.assert_array_equal(jl_matrix(3, 5, rng=0), np.eye(3))


def test_always_k_centres_even_when_k_equals_n():
    X = np.random.default_rng(14).uniform(-1, 1, (6, 3))
    est = MaxCoverKMeans(6, epsilon=1.0, delta=1e-3, radius=2.0, n_public=6, rng=0).fit(X)
    assert est.cluster_centers_.shape == (6, 3)


@pytest.mark.slow
def test_samplers_give_same_utility_on_an_easy_instance():
    # Same distribution ⇒ comparable cost; a broken sampler (e.g. always uniform) would give
    # a proxy set without the clusters and a cost near the one-centre cost.
    rng = np.random.default_rng(15)
    means = np.array([[3.0, 0, 0], [-3.0, 0, 0], [0, 3.0, 0]])
    X = means[rng.integers(0, 3, 1000)] + 0.2 * rng.normal(size=(1000, 3))
    from dpcore.app.evaluate import kmeans_cost

    costs = {}
    for sampler in ("incidence", "lazy"):
        est = MaxCoverKMeans(
            3,
            epsilon=8.0,
            delta=1e-3,
            radius=4.0,
            n_public=1000,
            proj_dim=2,
            sampler=sampler,
            budget_split={"em": 0.9, "counts": 0.06, "average": 0.04},
            preset="paper",  # Algorithm 2 alone: its proxy set is what the samplers shape
            rng=16,
        )
        costs[sampler] = kmeans_cost(X, est.fit(X).cluster_centers_)
    one_centre = kmeans_cost(X, X.mean(0, keepdims=True))
    assert all(c < 0.3 * one_centre for c in costs.values()), (costs, one_centre)


# ---------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "kw,match",
    [
        (dict(approx=1.0), "approx"),
        (dict(approx=0.0), "approx"),
        (dict(delta=0.0), "delta"),
        (dict(delta=1.0), "delta"),
        (dict(epsilon=-1.0), "epsilon"),
        (dict(radius=-1.0), "radius"),
        (dict(n_clusters=11), "n_public"),
        # Algorithm 2's split (preset="paper"); the recommended seeding's has em and counts only
        (dict(preset="paper", budget_split={"em": 0.5, "counts": 0.5}), "keys"),
        (dict(preset="paper", budget_split={"em": 0.5, "counts": 0.3, "average": 0.3}),
         "sum to 1"),
        (dict(budget_split={"em": 0.5, "counts": 0.3, "average": 0.2}), "keys"),
        (dict(budget_split={"em": 0.5, "counts": 0.6}), "sum to 1"),
    ],
)
def test_bad_input(kw, match):
    params = dict(n_clusters=2, epsilon=1.0, delta=1e-6, radius=1.0, n_public=10)
    params.update(kw)
    k = params.pop("n_clusters")
    with pytest.raises(ValueError, match=match):
        MaxCoverKMeans(k, **params).fit(np.zeros((10, 2)))


def test_large_approx_warns():
    with pytest.warns(UserWarning, match="approx=0.9"):
        MaxCoverKMeans(2, epsilon=1, delta=1e-6, radius=1, n_public=20, approx=0.9, rng=0).fit(
            np.zeros((20, 2))
        )


def test_clipping_and_n_warnings():
    X = np.zeros((20, 2))
    X[:3] = 10.0
    with pytest.warns(UserWarning, match="3 of 20 rows"):
        MaxCoverKMeans(2, epsilon=1, delta=1e-6, radius=1, n_public=20, rng=0).fit(X)
    with pytest.warns(PrivacyLeakWarning, match="n_public"):
        MaxCoverKMeans(2, epsilon=1, delta=1e-6, radius=1, rng=0).fit(np.zeros((20, 2)))


# ---------------------------------------------------------------- audits
def _avg_sampler(noise_factor: float):
    def sample(data, size, rng):
        X = np.tile(data, (size, 1))
        labels = np.repeat(np.arange(size), data.shape[0])
        out = noisy_cluster_averages(
            X, labels, size, radius=1.0, epsilon=1 / 3, delta=1e-6, rng=rng
        )[:, 0]
        if noise_factor != 1.0:  # a deliberately broken variant: too little Gaussian noise
            mean = data[:, 0].mean()
            out = np.where(np.abs(out - mean) < 0.5, mean + (out - mean) * noise_factor, out)
        return out

    return sample


def test_audit_noisy_average():
    # 250 points at +1 vs the same plus one at −1 (add/remove neighbours): the mean moves by
    # 2/251 ≈ 0.008 while σ ≈ 0.22 (m̂ ≈ 33 after the ln(2/δ) shift), so the honest mechanism
    # leaks very little; with σ/100 the shift is ≈ 3.6σ and the audit bound exceeds 1/3.
    d0 = np.ones((250, 1))
    d1 = np.vstack([d0, [[-1.0]]])
    ok = audit_epsilon(_avg_sampler(1.0), d0, d1, n_samples=40_000, delta=1e-6, rng=0)
    assert ok.consistent_with(1 / 3)
    bad = audit_epsilon(_avg_sampler(0.01), d0, d1, n_samples=40_000, delta=1e-6, rng=0)
    assert not bad.consistent_with(1 / 3)


def test_audit_candidate_selection_step():
    # One pick of Algorithm 3 is ε_E-DP (exponential mechanism, sensitivity 1). d' = 1, a grid of
    # 21 points, ρ = 3; d1 adds one point far from d0's. The event "pick within 3 of the new
    # point" has probability 0.24 under d0 and 0.34 under d1 (ln ratio 0.36), which the audit
    # must see (≥ 0.25 with 15 000 evaluation draws) without exceeding ε_E.
    eps_E, M = 1.0, 10
    rho = (1 + 0.5) * 1 / 0.5
    d0 = np.array([[-8.2]])
    d1 = np.vstack([d0, [[7.3]]])

    def sample(data, size, rng):
        lazy = _LazyCover(data, np.ones(len(data), bool), rho, M, eps_E / 2)
        draws = np.array([lazy.draw(math.log(2 * M + 1), rng, 10**4)[0] for _ in range(size)])
        return -np.abs(draws - 7.3)  # large = near the added point

    res = audit_epsilon(sample, d0, d1, n_samples=30_000, rng=1)
    assert 0.25 <= res.epsilon_lower <= eps_E, res


def test_incidence_structure_is_exact_for_huge_grids():
    # d' = 5 with M = 10^5: (2M+1)^5 ≈ 3e26 overflows any int64 key; cells are kept by row.
    rng = np.random.default_rng(17)
    d, approx, M = 5, 0.9, 10**5
    rho = (1 + approx) * math.sqrt(d) / approx
    Y = rng.uniform(-1000, 1000, (3, d))
    Y[1] = Y[0] + 1.5  # two points sharing grid points
    inc = _IncidenceCover(Y, rho, M, _signed_offsets(offset_set(d, approx)), 10**8)
    active = np.ones(3, bool)
    for j in rng.choice(len(inc.cells), 200, replace=False):
        b = inc.decode(j)
        np.testing.assert_array_equal(
            np.sort(inc.cover_of(b, active)), np.flatnonzero(_within(Y, b, rho))
        )
        assert inc.counts[j] == _within(Y, b, rho).sum()


def test_work_limit_raises_a_clear_error():
    rng = np.random.default_rng(18)
    Y = rng.normal(0, 0.05, (3000, 4))
    s = level_schedule(3000, 4, 0.5)
    with pytest.raises(RuntimeError, match="grid_stride"):
        for i in range(s.m):
            private_grid_set_cover(
                Y,
                np.ones(3000, bool),
                s.t[i],
                s.rho,
                int(s.M[i]),
                8,
                0.5,
                rng=0,
                max_work=1e4,
                sampler="lazy",
            )
