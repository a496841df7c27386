"""Balcan et al. (ICML 2017) private k-means (dpcore.mechanisms.baselines.balcan17), paper 003's
baseline.

Each step is unit-tested against a brute-force reference; the two data-reading private steps
before the (separately audited) NoisyAVG are audited at their claimed ε on worst-case neighbours
with :func:`dpcore.privacy.audit.audit_epsilon`, and a broken twin of each must be flagged.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import dpcore.mechanisms.baselines.balcan17 as bmod
from dpcore.data.geometry import squared_distances
from dpcore.mechanisms.baselines.balcan17 import (
    DEFAULT_SPLIT,
    Balcan17KMeans,
    balcan_budget,
    partition_levels,
    private_local_search,
    private_partition,
    projected_radius,
)
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import ApproxDP, PrivacyLeakWarning


def _brute_cells(Y: np.ndarray, half: float, threshold: float, levels: int) -> list[np.ndarray]:
    """Exact-count reference: active cells (centres) per level by explicit recursion."""
    out = [np.zeros((1, Y.shape[1]))]
    cells = [(np.zeros(Y.shape[1]), np.arange(len(Y)))]
    h = half
    for _ in range(levels):
        h /= 2
        nxt = []
        for c, idx in cells:
            sgn = np.where(Y[idx] >= c, 1.0, -1.0)
            keys, inv = np.unique(sgn, axis=0, return_inverse=True)
            for j, key in enumerate(keys):
                members = idx[inv.ravel() == j]
                if members.size > threshold:
                    nxt.append((c + h * key, members))
        cells = nxt
        out.append(np.array([c for c, _ in cells]).reshape(-1, Y.shape[1]))
    return out


def test_budget_parts_sum_to_the_claim_and_clamp_noisy_avg():
    """The four parts add up to (ε, δ) exactly (catches a step charged twice or forgotten),
    NoisyAVG shares above 1/3 are clamped with a warning (catches an unproven NoisyAVG call),
    and the Laplace recovery is pure DP."""
    b = balcan_budget(1.0, 1e-6)
    assert b.guarantee.epsilon == pytest.approx(1.0, abs=1e-12)
    assert b.guarantee.delta == pytest.approx(1e-6)
    assert b.eps_candidates / b.eps_local_search == pytest.approx(8.0)
    assert sum(DEFAULT_SPLIT.values()) == pytest.approx(1.0)
    with pytest.warns(UserWarning, match="1/3"):
        big = balcan_budget(4.0, 1e-6)
    assert big.eps_recovery == pytest.approx(1 / 3) and big.guarantee.epsilon < 4.0
    assert balcan_budget(1.0, 1e-6, recovery="laplace").guarantee.delta == 0.0
    with pytest.raises(ValueError, match="budget_split"):
        balcan_budget(1.0, 1e-6, {"candidates": 0.5, "local_search": 0.5})


def test_partition_with_negligible_noise_matches_brute_force():
    """With noise ~1e-9 the active cells are exactly those with count > γ, at the right centres
    (catches a wrong child index, offset or halving of the side)."""
    gen = np.random.default_rng(0)
    Y = np.vstack([gen.normal(0.5, 0.05, (300, 2)), gen.normal(-0.4, 0.1, (150, 2)),
                   gen.uniform(-1, 1, (50, 2))])
    got = private_partition(Y, half_side=1.0, levels=4, eps_level=1e9, threshold=40.5, rng=1)
    want = np.vstack(_brute_cells(Y, 1.0, 40.5, 4))
    assert got.shape == want.shape and got.shape[0] > 4
    np.testing.assert_allclose(np.unique(got, axis=0), np.unique(want, axis=0))


def test_partition_tests_empty_children_at_the_laplace_rate():
    """Every child of an active cell is tested, empty or not: with γ = 0.5 and ε_ℓ = 1 an empty
    child is active with probability ½e^{-0.5}. Catches the MATLAB code's shortcut of testing
    only non-empty children (rate 0), which is not ε-DP."""
    Y = np.full((50, 2), 0.5)  # all points in one child of the root
    gen = np.random.default_rng(2)
    empty_active = [private_partition(Y, half_side=1.0, levels=1, eps_level=1.0, threshold=0.5,
                                      rng=gen).shape[0] - 2 for _ in range(3000)]
    rate = np.mean(empty_active) / 3  # 3 empty children per run
    p = 0.5 * math.exp(-0.5)
    assert abs(rate - p) < 4 * math.sqrt(p * (1 - p) / 9000)


def test_swap_costs_match_brute_force():
    """The O(m·n) swap-cost formula (nearest/second-nearest) equals recomputing every swapped
    set's cost (catches a wrong second-nearest or a cluster slice off by one)."""
    gen = np.random.default_rng(3)
    Y, C = gen.normal(size=(200, 3)), gen.normal(size=(12, 3))
    D = squared_distances(Y, C).T
    ids = np.array([0, 4, 4, 7])  # a repeated centre too
    got = bmod._swap_costs(D, ids)
    for i in range(ids.size):
        for j in range(C.shape[0]):
            s = ids.copy()
            s[i] = j
            assert got[i, j] == pytest.approx(D[s].min(axis=0).sum())


def test_local_search_at_large_epsilon_finds_the_best_centres():
    """ε = 1e6: every swap is the best one, so 3 separated blobs get the 3 candidates at their
    centres among 20 decoys (catches a sign error in the score: it would pick the worst)."""
    gen = np.random.default_rng(4)
    mu = np.array([[0.5, 0.0], [-0.5, 0.0], [0.0, 0.5]])
    Y = mu[gen.integers(3, size=600)] + gen.normal(scale=0.02, size=(600, 2))
    C = np.vstack([gen.uniform(-1, 1, (20, 2)), mu])
    ids, T = private_local_search(Y, C, 3, epsilon=1e6, lam=2.0, n_swaps=6, rng=5)
    assert T == 6 and sorted(ids.tolist()) == [20, 21, 22]


def _partition_sampler(exact: bool):
    def sample(data, size, gen):
        out = np.empty(size)
        for i in range(size):
            with pytest.MonkeyPatch.context() as mp:
                if exact:  # the bug: exact counts compared with the threshold
                    mp.setattr(bmod, "add_laplace", lambda v, b, *, sensitivity, rng: v)
                out[i] = private_partition(data, half_side=1.0, levels=1, eps_level=1.0,
                                           threshold=20.5, rng=gen).shape[0]
        return out
    return sample


def test_partition_passes_audit_and_exact_counts_are_flagged():
    """Add/remove pair: 20 points in one cell vs 21 (threshold 20.5, ε_ℓ = 1 per level). The
    statistic (number of candidates) is the released output. Exact counts (no noise): flagged."""
    d0 = np.full((20, 2), 0.5)
    d1 = np.vstack([d0, [[0.5, 0.5]]])
    ok = audit_epsilon(_partition_sampler(False), d0, d1, n_samples=4000, rng=0)
    assert ok.epsilon_lower <= 1.0
    bad = audit_epsilon(_partition_sampler(True), d0, d1, n_samples=4000, rng=0)
    assert bad.epsilon_lower > 1.0


def _ls_sampler(lam: float):
    C = np.array([[-10.0], [10.0]])

    def sample(data, size, gen):
        return np.array([private_local_search(data, C, 1, epsilon=1.0, lam=lam, n_swaps=1,
                                              rng=gen)[0][0] for _ in range(size)], float)
    return sample


def test_local_search_passes_audit_and_unsquared_sensitivity_is_flagged():
    """Points in B_10(0), candidates ±10 (Λ = 20): D₁ adds a point at +10, which moves the
    cost of candidate −10 by Λ² = 400. Claim ε = 1. Bug: sensitivity Λ instead of Λ² (the
    exponential mechanism 20× too sharp) must be flagged."""
    d0 = np.zeros((10, 1))
    d1 = np.vstack([d0, [[10.0]]])
    ok = audit_epsilon(_ls_sampler(20.0), d0, d1, n_samples=20_000, rng=1)
    assert ok.epsilon_lower <= 1.0
    bad = audit_epsilon(_ls_sampler(math.sqrt(20.0)), d0, d1, n_samples=20_000, rng=1)
    assert bad.epsilon_lower > 1.0


def test_finds_well_separated_clusters_at_large_epsilon():
    """Four far-apart 2-D clusters, ε = 40 (NoisyAVG shares clamped at 1/3): every true centre
    has a released centre within 0.05. Catches a recovery that averages the wrong partition
    or a local search that ignores the cost."""
    gen = np.random.default_rng(5)
    mu = np.array([[0.6, 0.0], [-0.6, 0.0], [0.0, 0.6], [0.0, -0.6]])
    X = mu[gen.integers(4, size=40_000)] + gen.normal(scale=0.02, size=(40_000, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        m = Balcan17KMeans(4, epsilon=40.0, delta=1e-8, radius=1.0, n_public=40_000,
                           rng=6).fit(X)
    dist = np.linalg.norm(mu[:, None] - m.cluster_centers_[None], axis=2).min(axis=1)
    assert dist.max() < 0.05
    assert isinstance(m.privacy_, ApproxDP) and m.privacy_ == m.budget_.guarantee
    assert m.predict(X).shape == (40_000,)


def test_high_dimensional_fit_projects_and_states_its_guarantee():
    """d = 50 > p: a JL projection to p = ⌊½ ln n⌋ = 3 and r_p > radius; k centres in R^d even
    when there are fewer candidates than k; the Laplace recovery claims (ε, 0)."""
    gen = np.random.default_rng(7)
    X = gen.normal(scale=0.1, size=(1000, 50))
    m = Balcan17KMeans(6, epsilon=1.0, delta=1e-6, radius=2.0, n_public=1000, rng=8).fit(X)
    assert m.proj_dim_ == 3 and m.projection_.shape == (3, 50)
    assert m.cluster_centers_.shape == (6, 50)
    assert projected_radius(2.0, 50, 3) > 2.0 and projected_radius(2.0, 2, 3) == 2.0
    assert m.levels_ == partition_levels(1000) == 6
    assert m.privacy_.epsilon == pytest.approx(1.0) and m.privacy_.delta == pytest.approx(1e-6)
    lap = Balcan17KMeans(2, epsilon=1.0, delta=1e-6, radius=2.0, n_public=1000,
                         recovery="laplace", rng=8).fit(X)
    assert lap.privacy_.delta == 0.0 and np.all(np.linalg.norm(lap.cluster_centers_, axis=1)
                                                 <= 2.0 + 1e-9)


def test_n_from_data_warns_privacy_leak():
    """Without n_public the data's own n is used, and that is said (PrivacyLeakWarning)."""
    with pytest.warns(PrivacyLeakWarning, match="n_public"):
        Balcan17KMeans(2, epsilon=1.0, delta=1e-6, radius=1.0, rng=0).fit(np.zeros((50, 2)))


@pytest.mark.parametrize("bad", [dict(epsilon=0.0), dict(delta=1.0), dict(radius=-1.0),
                                 dict(n_clusters=0), dict(n_public=0), dict(proj_dim=0),
                                 dict(n_shifts=-1), dict(lloyd_rounds=-1),
                                 dict(recovery="exact")])
def test_rejects_bad_parameters_naming_them(bad):
    kw = dict(n_clusters=2, epsilon=1.0, delta=1e-6, radius=1.0, n_public=50) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        Balcan17KMeans(**kw).fit(np.zeros((50, 2)))


def test_rejects_bad_data():
    est = Balcan17KMeans(2, epsilon=1.0, delta=1e-6, radius=1.0, n_public=5)
    with pytest.raises(ValueError, match="NaN"):
        est.fit(np.array([[np.nan, 0.0]] * 5))
    with pytest.raises(ValueError, match="2-D"):
        est.fit(np.zeros(5))
    with pytest.raises(ValueError, match="not fitted"):
        est.predict(np.zeros((2, 2)))


def test_dashboard_fit_is_the_run_configuration_and_the_door_charges_the_claim():
    """The Clustering page's entry (dpcore.app.sweeps) is exactly the run-config mechanism
    ``balcan17_kmeans``: same params and seed, same centres (catches a dashboard entry whose
    parameters differ from what a downloaded configuration re-runs). The release door fills the
    declared n (never the data's) and charges (ε, δ) with the defence's slack only; the released
    centres are ⊥-free (catches a release that reads n off the data or a guarantee that depends
    on the private rows)."""
    import pandas as pd

    from dpcore.app.sweeps import clustering_algorithms, fit_algorithm
    from dpcore.privacy.guarantees import PrivacyLedger
    from dpcore.privacy.noise import DEFAULT_ETA
    from dpcore.release.door import ReleaseDoor
    from dpcore.release.runconfig import make_config, run_config
    from dpcore.release.schema import PublicDescription

    alg = clustering_algorithms()["Balcan et al. 2017 (paper 003's baseline)"]
    assert alg.mechanism == "balcan17_kmeans" and alg.private
    X = np.random.default_rng(9).uniform(-1, 1, (600, 2))
    out = fit_algorithm(alg, X, k=3, epsilon=1.0, delta=1e-6, radius=1.5, seed=4)
    assert out.error is None and out.centers.shape == (3, 2)
    assert out.guarantee == ApproxDP(1.0, 1e-6) and out.params["n_public"] == 600
    cfg = make_config("balcan17_kmeans", out.params, {"source": "inline", "radius": 1.5}, 4)
    again = run_config(cfg, X)
    np.testing.assert_allclose(np.asarray(again.released["centers"]), out.centers)

    desc = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=300)
    table = pd.DataFrame(X[:300], columns=["a", "b"])
    door = ReleaseDoor(table, desc, PrivacyLedger(ApproxDP(5.0, 1e-5)))
    rel = door.release("balcan17_kmeans", {"n_clusters": 2, "epsilon": 1.0, "delta": 1e-6})
    assert door.ledger.entries[0].params["n_public"] == 300
    assert rel.guarantee == ApproxDP(1.0 * (1.0 + DEFAULT_ETA) ** 2, 1e-6)
    assert not rel.failed and rel.output["centers"].shape == (2, 2)


def test_blocked_local_search_equals_the_whole_matrix():
    """Memory bound (issue 14): distances in blocks must give the same swaps as the whole
    (m, n) matrix. Catches a block that drops or double-counts points (a wrong ``step`` or a
    sum of d1/d2 taken per block from the wrong columns)."""
    gen = np.random.default_rng(3)
    Y = gen.normal(size=(1001, 2))
    C = gen.normal(size=(37, 2))
    whole = private_local_search(Y, C, 4, epsilon=50.0, lam=8.0, n_swaps=5, rng=11)
    blocked = private_local_search(Y, C, 4, epsilon=50.0, lam=8.0, n_swaps=5, rng=11,
                                   max_cells=37 * 100 + 5)  # 11 blocks, the last one short
    np.testing.assert_array_equal(whole[0], blocked[0])


def test_candidate_cap_keeps_the_largest_noisy_counts_and_bounds_work():
    """The cap is post-processing of released counts (never of the data) and follows the work
    rule. Catches keeping the smallest counts, losing the root, or a cap that grows with n."""
    from dpcore.mechanisms.baselines.balcan17 import auto_max_candidates, keep_candidates

    C = np.arange(12, dtype=float).reshape(6, 2)
    counts = np.array([np.inf, 5.0, 50.0, 1.0, 30.0, 7.0])
    np.testing.assert_array_equal(keep_candidates(C, counts, 3), C[[0, 2, 4]])
    assert keep_candidates(C, counts, None) is C
    assert auto_max_candidates(10**7, 5) == 20  # 4k floor
    assert auto_max_candidates(32_847, 5) > 570  # the cities sample at ε = 10 is not capped
    assert auto_max_candidates(200_000, 5) * 6 * 200_000 <= 1.5e8
    X = np.random.default_rng(0).normal(size=(20_000, 2)) * 0.3
    m = Balcan17KMeans(5, epsilon=10.0, delta=1e-6, radius=2.0, n_public=20_000,
                       max_candidates=30, rng=0).fit(X)
    assert m.candidates_.shape[0] <= 30
    with pytest.raises(ValueError, match="max_candidates"):
        Balcan17KMeans(5, epsilon=1.0, delta=1e-6, radius=2.0, n_public=10,
                       max_candidates=0).fit(X[:10])
