"""Tests of weighted DP-Lloyd (Algorithm 2) and the DPLloyd estimator."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans

from dpcore.app.evaluate import normalized_kmeans_cost
from dpcore.core.errors import ParameterError
from dpcore.mechanisms.importance import dp_lloyd_epsilon
from dpcore.mechanisms.lloyd.estimator import (
    DPLloyd,
    dp_lloyd,
    dp_lloyd_noise_scales,
    lloyd_statistics,
    noisy_lloyd_update,
    random_ball_centers,
)
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import PrivacyLeakWarning, PureDP


def blobs(n=3000, d=4, k=3, seed=0, spread=0.3):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, d)) * 2.0
    X = centers[rng.integers(0, k, n)] + spread * rng.normal(size=(n, d))
    mean = X.mean(axis=0)
    return X - mean, centers - mean


# ---- lloyd_statistics ---------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(0, 60),
    d=st.integers(1, 4),
    k=st.integers(1, 5),
    seed=st.integers(0, 10_000),
    weighted=st.booleans(),
)
def test_lloyd_statistics_matches_a_naive_loop(n, d, k, seed, weighted):
    rng = np.random.default_rng(seed)
    X, C = rng.normal(size=(n, d)), rng.normal(size=(k, d))
    w = rng.uniform(1, 5, n) if weighted else None
    sums, counts = lloyd_statistics(X, C, w)
    ref_s, ref_c = np.zeros((k, d)), np.zeros(k)
    for i in range(n):
        j = int(np.argmin(((X[i] - C) ** 2).sum(axis=1)))
        wi = 1.0 if w is None else w[i]
        ref_s[j] += wi * X[i]
        ref_c[j] += wi
    np.testing.assert_allclose(sums, ref_s, atol=1e-12)
    np.testing.assert_allclose(counts, ref_c, atol=1e-12)


def test_lloyd_statistics_add_up_over_partitions():
    X, _ = blobs(1000)
    C = X[:3]
    w = np.random.default_rng(1).uniform(1, 3, 1000)
    s, c = lloyd_statistics(X, C, w)
    s1, c1 = lloyd_statistics(X[:400], C, w[:400])
    s2, c2 = lloyd_statistics(X[400:], C, w[400:])
    np.testing.assert_allclose(s1 + s2, s)
    np.testing.assert_allclose(c1 + c2, c)


def test_lloyd_statistics_rejects_bad_weights():
    with pytest.raises(ValueError, match="weights must have shape"):
        lloyd_statistics(np.zeros((3, 2)), np.zeros((1, 2)), np.ones(2))


# ---- noisy_lloyd_update -----------------------------------------------------------------------


def test_update_without_noise_is_the_weighted_mean_and_keeps_empty_clusters():
    sums = np.array([[2.0, 4.0], [0.0, 0.0]])
    counts = np.array([2.0, 0.0])
    prev = np.array([[9.0, 9.0], [0.5, -0.5]])
    new = noisy_lloyd_update(sums, counts, prev, beta_sum=0, beta_count=0, radius=100, rng=0)
    np.testing.assert_allclose(new, [[1.0, 2.0], [0.5, -0.5]])


def test_update_clips_centres_to_the_ball():
    new = noisy_lloyd_update(np.array([[30.0, 40.0]]), np.array([1.0]), np.zeros((1, 2)),
                             beta_sum=0, beta_count=0, radius=5.0, rng=0)
    np.testing.assert_allclose(new, [[3.0, 4.0]])


def test_update_keeps_previous_centre_when_noisy_count_is_below_one():
    # β_count huge: about half the noisy counts are negative; those clusters must not move.
    k = 2000
    prev = np.tile([0.25, 0.0], (k, 1))
    new = noisy_lloyd_update(np.zeros((k, 2)), np.zeros(k), prev, beta_sum=1.0,
                             beta_count=1e6, radius=1.0, rng=3)
    stayed = np.all(new == prev, axis=1)
    assert 0.4 < stayed.mean() < 0.6  # P(Laplace(0, 1e6) < 1) ≈ 0.5
    assert np.all(np.linalg.norm(new, axis=1) <= 1.0 + 1e-12)


def test_update_sum_noise_has_the_gamma_radius_of_the_stated_density():
    # Counts N = 1e6 with tiny count noise: the centre is ζ/N, so N‖c‖ ~ Gamma(d, β) with mean
    # dβ. 4000 draws: sd of the mean/(dβ) is 1/sqrt(4000 d) ≈ 0.4 %, so a 3 % band has no false
    # alarms while the authors' Exponential radius (mean β, a factor d = 20 smaller) fails.
    k, d, beta, N = 4000, 20, 2.0, 1e6
    new = noisy_lloyd_update(np.zeros((k, d)), np.full(k, N), np.zeros((k, d)),
                             beta_sum=beta, beta_count=1e-6, radius=1e9, rng=7)
    ratio = np.linalg.norm(new, axis=1).mean() * N / (d * beta)
    assert abs(ratio - 1) < 0.03


# ---- calibration --------------------------------------------------------------------------


@pytest.mark.parametrize("eps,r,t,d", [(0.5, 1.0, 10, 2), (3.0, 4489.17, 10, 54), (1000, 2, 1, 5)])
def test_noise_scales_meet_epsilon_exactly(eps, r, t, d):
    bs, bc = dp_lloyd_noise_scales(eps, r, t, d)
    assert dp_lloyd_epsilon(r, bs, bc, t) == pytest.approx(eps, rel=1e-12)
    assert bc / bs == pytest.approx((4 * d * 0.225**2) ** (1 / 3))


# ---- the estimator ------------------------------------------------------------------------


def test_non_private_run_equals_scikit_learn_lloyd_from_the_same_init():
    X, _ = blobs(4000, d=5, k=4, seed=2)
    init = X[[0, 1000, 2000, 3000]]
    ours = DPLloyd(4, epsilon=math.inf, radius=50.0, n_iter=7, init=init, rng=0).fit(X)
    ref = KMeans(4, init=init, n_init=1, max_iter=7, tol=0, algorithm="lloyd").fit(X)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-9, atol=1e-9)
    assert len(ours.history_) == 8
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.parametrize("sampler,q_grid", [(None, 4096), ("uniform", 4096), ("coreset", 4096),
                                            ("privacy", None), ("privacy", 4096)])
def test_every_sampler_delivers_its_epsilon(sampler, q_grid):
    # ("privacy", 4096) is the default path (the norm grid); None the paper's exact q
    X, _ = blobs(6000, d=3, k=3)
    r = float(np.linalg.norm(X, axis=1).max())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        km = DPLloyd(3, epsilon=2.0, radius=r, sampler=sampler, q_grid=q_grid,
                     sample_size=None if sampler is None else 600, rng=1).fit(X)
    assert isinstance(km.privacy_, PureDP)
    assert km.privacy_.epsilon == pytest.approx(2.0, rel=1e-8)
    assert km.privacy_.epsilon <= 2.0 * (1 + 1e-9)
    assert km.cluster_centers_.shape == (3, 3)
    assert np.all(np.linalg.norm(km.cluster_centers_, axis=1) <= r * (1 + 1e-12))
    assert km.individual_epsilon_.shape == (6000,)
    assert np.all(km.individual_epsilon_ <= 2.0 * (1 + 1e-9))
    if sampler is None:
        assert not hasattr(km, "sample_indices_")
        return
    assert np.all(km.sample_weights_ == 1 / km.probabilities_[km.sample_indices_])
    assert km.probabilities_.sum() == pytest.approx(600, rel=1e-6)
    # 600 expected, Poisson-binomial sd < 25: a 5-sd band.
    assert abs(km.sample_indices_.size - 600) < 125
    if sampler == "privacy":  # losses are equalised at ε* (Thm 10)
        # exact: equalised at ε*; the grid's envelope rounds q up, so ψ a little below ε*
        tol = 1e-6 if q_grid is None else 1e-2
        assert np.median(km.individual_epsilon_) == pytest.approx(2.0, rel=tol)


def test_sampler_needing_n_or_norms_warns_privacy_leak():
    X, _ = blobs(2000)
    r = float(np.linalg.norm(X, axis=1).max())
    for sampler, m in [("uniform", 200), ("coreset", 200), ("privacy", 200)]:
        with pytest.warns(PrivacyLeakWarning):
            DPLloyd(3, epsilon=1.0, radius=r, sampler=sampler, sample_size=m, rng=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        # "sampling for free" uses only public quantities: no warning.
        km = DPLloyd(3, epsilon=1.0, radius=20.0, sampler="privacy", rng=0).fit(X)
    assert km.calibration_.sample_size < 2000


def test_init_sample_warns_and_out_of_ball_points_are_clipped_with_a_warning():
    X, _ = blobs(500)
    with pytest.warns(PrivacyLeakWarning, match="init='sample'"):
        DPLloyd(3, epsilon=1.0, radius=50.0, init="sample", rng=0).fit(X)
    with pytest.warns(UserWarning, match="clipped"):
        km = DPLloyd(3, epsilon=1.0, radius=0.5, rng=0).fit(X)
    assert np.all(np.linalg.norm(km.cluster_centers_, axis=1) <= 0.5 + 1e-12)


def test_same_seed_same_result_and_fit_is_not_fooled_by_generator_reuse():
    X, _ = blobs(1000)
    a = DPLloyd(3, epsilon=1.0, radius=20.0, rng=5).fit(X).cluster_centers_
    b = DPLloyd(3, epsilon=1.0, radius=20.0, rng=5).fit(X).cluster_centers_
    np.testing.assert_array_equal(a, b)
    gen = np.random.default_rng(5)
    km = DPLloyd(3, epsilon=1.0, radius=20.0, rng=gen)
    assert not np.array_equal(km.fit(X).cluster_centers_, km.fit(X).cluster_centers_)


def test_dp_lloyd_utility_improves_with_epsilon():
    # Median over 5 runs from the true centres: the ε = 100 cost must beat ε = 0.1 (noise
    # 1000× smaller) and be near the non-private optimum (spread² d = 0.18).
    X, init = blobs(20_000, d=2, k=3, seed=4)
    r = float(np.linalg.norm(X, axis=1).max())

    def cost(eps):
        return np.median([normalized_kmeans_cost(X, DPLloyd(
            3, epsilon=eps, radius=r, init=init, rng=s).fit(X).cluster_centers_) for s in range(5)])

    high = cost(100.0)
    assert high < cost(0.1)
    assert high < 0.2


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"n_clusters": 0}, "n_clusters"),
        ({"epsilon": -1}, "epsilon"),
        ({"radius": 0}, "radius"),
        ({"n_iter": 0}, "n_iter"),
        ({"sampler": "magic"}, "sampler"),
        ({"sampler": "uniform"}, "sample_size"),
        ({"sampler": "coreset", "sample_size": 1e9}, "sample_size"),
        ({"init": "k-means++"}, "init"),
        ({"init": np.zeros((2, 2))}, "init array"),
        ({"lam": 2.0}, "lam"),
    ],
)
def test_bad_parameters_raise_clear_errors(kwargs, match):
    params = {"n_clusters": 3, "epsilon": 1.0, "radius": 10.0, "rng": 0} | kwargs
    X, _ = blobs(300)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.raises(ValueError, match=match):
            DPLloyd(**params).fit(X)


def test_bad_data_and_unfitted_predict_raise():
    km = DPLloyd(2, epsilon=1.0, radius=1.0)
    with pytest.raises(ValueError, match="not fitted"):
        km.predict(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="NaN"):
        km.fit(np.array([[0.0, np.nan]]))
    with pytest.raises(ValueError, match="2-D"):
        km.fit(np.zeros(5))
    km.fit(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="features"):
        km.predict(np.zeros((2, 3)))


def test_random_ball_centers_are_data_independent_and_inside():
    C = random_ball_centers(500, 7, 3.0, rng=0)
    assert C.shape == (500, 7)
    assert np.all(np.linalg.norm(C, axis=1) <= 1.5 + 1e-12)


def test_dp_lloyd_history_has_t_plus_one_entries():
    X, _ = blobs(300)
    hist = dp_lloyd(X, X[:3], n_iter=4, beta_sum=1.0, beta_count=1.0, radius=20.0, rng=0)
    assert len(hist) == 5 and all(h.shape == (3, 4) for h in hist)


# ---- privacy audit ------------------------------------------------------------------------


def _one_iteration_sampler(beta_sum, beta_count, radius):
    """`size` independent releases of one DP-Lloyd iteration (k = 1), via the real update.

    The noise of noisy_lloyd_update is independent per cluster, so `size` copies of the same
    cluster in one call are `size` independent runs of the mechanism.
    """

    def sample(data, size, rng):
        sums, counts = lloyd_statistics(data, np.zeros((1, data.shape[1])))
        new = noisy_lloyd_update(np.repeat(sums, size, 0), np.repeat(counts, size),
                                 np.zeros((size, data.shape[1])), beta_sum=beta_sum,
                                 beta_count=beta_count, radius=radius, rng=rng)
        return new[:, 0] * (counts[0] + 1)  # first coordinate, rescaled (monotone)

    return sample


def test_one_iteration_passes_the_audit_at_its_claimed_epsilon_and_a_weaker_noise_fails():
    # D1 adds one point of norm r to 40 points at the origin. Sum noise dominates the claim:
    # ε = r/β_sum + 1/β_count = 2 + 0.01. The audit of the real update must not contradict it;
    # the same audit with a third of the sum noise (true ε ≈ 6) must: its tail events give
    # ε_lower ≈ 3, so the test has power against a sampler with too little noise.
    r, beta_sum, beta_count = 1.0, 0.5, 100.0
    claimed = dp_lloyd_epsilon(r, beta_sum, beta_count, 1)
    d0 = np.zeros((40, 2))
    d1 = np.vstack([d0, [[r, 0.0]]])
    ok = audit_epsilon(_one_iteration_sampler(beta_sum, beta_count, 50.0), d0, d1,
                       n_samples=100_000, rng=11)
    assert ok.consistent_with(claimed), str(ok)
    weak = audit_epsilon(_one_iteration_sampler(beta_sum / 3, beta_count, 50.0), d0, d1,
                         n_samples=100_000, rng=11)
    assert not weak.consistent_with(claimed), str(weak)


def test_thread_count_does_not_change_the_run_bit_for_bit(monkeypatch):
    """Row blocks depend on n, k, d only and partials add in block order: 1, 2, 3 or 5
    threads give identical histories (a per-thread split or a completion-order sum would
    differ in the last bits, and that is caught here, not tolerated)."""
    from dpcore.core import threads
    X, init = blobs(3000, d=3, k=3, seed=9)
    w = np.random.default_rng(0).uniform(1, 2, 3000)
    kw = dict(n_iter=5, beta_sum=0.5, beta_count=0.5, radius=20.0, weights=w)
    monkeypatch.setattr(threads, "MIN_ROWS_PER_THREAD", 100)
    assert len(threads.row_blocks(3000)) > 5
    runs = []
    for jobs in (1, 2, 3, 5):
        with threads.thread_limit(jobs):
            runs.append(dp_lloyd(X, init, rng=3, **kw))
    for other in runs[1:]:
        for a, b in zip(runs[0], other, strict=True):
            assert np.array_equal(a, b)


@pytest.mark.parametrize("sampler", [None, "privacy"])
def test_dplloyd_n_jobs_is_a_declared_param_and_changes_nothing(sampler, monkeypatch):
    """n_jobs is validated like any parameter (0 refused) and the fitted centres are the same
    for every n_jobs, on the full and on the sampled (grid) path."""
    from dpcore.core import threads
    monkeypatch.setattr(threads, "MIN_ROWS_PER_THREAD", 64)
    X, _ = blobs(4000, d=4, k=3, seed=2)
    kw = dict(epsilon=2.0, radius=30.0, sampler=sampler, rng=5)
    fits = [DPLloyd(3, n_jobs=j, **kw).fit(X).cluster_centers_ for j in (1, 2, -1, 4)]
    for c in fits[1:]:
        assert np.array_equal(c, fits[0])
    assert DPLloyd(3, n_jobs=2, **kw).get_params()["n_jobs"] == 2
    with pytest.raises(ParameterError, match="n_jobs"):
        DPLloyd(3, n_jobs=0, **kw).fit(X)


def test_sampled_iteration_passes_the_audit_at_its_amplified_epsilon_not_the_unweighted_one():
    # One DP-Lloyd iteration on a uniform Poisson sample (rate p, weights 1/p). D1 adds a point
    # of norm r to 40 points at the origin. Theorem 6 with the weighted profile gives
    # ψ = log(1 + p(e^{K/p} − 1)) ≈ 0.48 for K = 1/β_count + r/β_sum = 0.2, p = 0.1; the classic
    # mistake of amplifying the unweighted loss K gives log(1 + p(e^K − 1)) ≈ 0.022, which the
    # audit must contradict. (The base sample count is Binomial(40, p): the same law as Poisson
    # sampling of 40 identical points, drawn in one call for speed.)
    from dpcore.mechanisms.importance import sampled_lloyd_epsilon

    p, r, beta_sum, beta_count = 0.1, 1.0, 10.0, 10.0
    kw = dict(beta_sum=beta_sum, beta_count=beta_count, n_iter=1, radius=r, n=41,
              sample_size=p * 41)
    claimed = sampled_lloyd_epsilon(sampler="uniform", **kw)
    assert claimed == pytest.approx(math.log1p(p * math.expm1(0.2 / p)))

    def sample(has_extra, size, rng):
        counts = rng.binomial(40, p, size) / p
        sums = np.zeros((size, 2))
        if has_extra:
            kept = rng.random(size) < p
            counts = counts + kept / p
            sums[:, 0] = kept * r / p
        new = noisy_lloyd_update(sums, counts, np.zeros((size, 2)), beta_sum=beta_sum,
                                 beta_count=beta_count, radius=1e6, rng=rng)
        return new[:, 0]

    res = audit_epsilon(sample, False, True, n_samples=100_000, rng=5)
    assert res.consistent_with(claimed), str(res)
    unweighted = math.log1p(p * math.expm1(0.2))
    assert not res.consistent_with(unweighted), str(res)


@pytest.mark.parametrize("sampler", [None, "privacy"])
def test_count_share_keeps_the_guarantee(sampler):
    X, _ = blobs(3000)
    r = float(np.linalg.norm(X, axis=1).max())
    km = DPLloyd(3, epsilon=1.0, radius=r, sampler=sampler, count_share=0.2, rng=0).fit(X)
    assert km.privacy_.epsilon == pytest.approx(1.0, rel=1e-8)
    assert 10 / km.beta_count_ == pytest.approx(0.2)


def test_an_empty_table_gets_a_noise_release_not_a_refusal():
    # A refusal only on ∅ tells ∅ from one row with certainty (no noise covers it): every
    # k-means path releases noisy centres from the public start instead, as for any n.
    from dpcore.estimators.dpkmeans import DPKMeans

    empty, one = np.empty((0, 3)), np.ones((1, 3))
    for fit in (lambda X: DPLloyd(2, epsilon=1.0, radius=3.0, rng=0).fit(X),
                lambda X: DPLloyd(2, epsilon=1.0, bounds=(-2, 2), preset="auto", n=100,
                                  rng=0).fit(X),
                lambda X: DPLloyd(2, epsilon=1.0, radius=3.0, sampler="privacy", q_grid=64,
                                  rng=0).fit(X),
                lambda X: DPKMeans(2, epsilon=1.0, radius=3.0, n=100, rng=0).fit(X)):
        for X in (empty, one):
            C = fit(X).cluster_centers_
            assert C.shape == (2, 3) and np.all(np.isfinite(C))
    with pytest.warns(PrivacyLeakWarning):  # n read off an empty table: still runs
        DPLloyd(2, epsilon=1.0, radius=3.0, preset="auto", rng=0).fit(empty)


def test_sample_size_is_validated_even_where_it_is_unused():
    # fuzz: epsilon=inf, no sampler, sample_size=[1] reached float([1]) (a TypeError traceback)
    X = np.zeros((10, 2))
    for bad in ([1], "x", 0):
        with pytest.raises(ValueError, match="sample_size must be"):
            DPLloyd(2, epsilon=math.inf, radius=3.0, sample_size=bad, rng=0).fit(X)
