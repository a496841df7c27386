"""Tests of dpcore.mechanisms.importance.sampling: Theorem 6, Algorithm 1, sampling distributions,
calibration.

Claims C1–C3 and C6 of spec §7 are tested here; C4/C5 (Fig. 2) and C10 (timings) are in
tests/test_repro_importance.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import special, stats

from dpcore.mechanisms.importance import (
    FunctionProfile,
    LinearProfile,
    amplified_epsilon,
    calibrate_lloyd,
    coreset_max_sample_size,
    coreset_probabilities,
    laplace_sum_profile,
    lloyd_profile,
    logexpm1,
    poisson_sample,
    privacy_constrained_weights,
    sampled_lloyd_epsilon,
    solve_privacy_constrained,
    uniform_probabilities,
    variance_optimal_probabilities,
)
from dpcore.mechanisms.importance.sampling import _neg_lambertw_m1_from_log

# ---- Theorem 6 (C1, C2) -----------------------------------------------------------------------


def test_logexpm1_is_exact_on_both_sides_of_the_switch():
    a = np.array([1e-300, 1e-8, 0.5, math.log(2), 0.7, 30.0, 700.0, 1e5])
    ref = np.array([math.log(math.expm1(x)) if x < 700 else x + math.log1p(-math.exp(-x))
                    for x in a])
    np.testing.assert_allclose(logexpm1(a), ref, rtol=1e-14)
    assert logexpm1(0.0) == -np.inf


def test_c1_constant_profile_and_rate_is_classical_subsampling():
    eps, q = np.array([0.1, 1.0, 5.0]), 0.03
    np.testing.assert_allclose(amplified_epsilon(q, eps), np.log1p(q * np.expm1(eps)), rtol=1e-13)


@settings(max_examples=50, deadline=None)
@given(eps=st.floats(0, 1000))
def test_c1_rate_one_gives_the_unsampled_loss_and_rate_zero_gives_zero(eps):
    assert amplified_epsilon(1.0, eps) == pytest.approx(eps, rel=1e-14, abs=1e-300)
    assert amplified_epsilon(0.0, eps) == 0.0


def test_amplified_epsilon_is_finite_and_exact_in_the_extremes():
    q = np.array([1e-12, 1e-12, 0.5])
    eps = np.array([1000.0, 1e-9, 1000.0])
    psi = amplified_epsilon(q, eps)
    # log(1 + q(e^ε − 1)) = ε + log q + log1p(e^{−ε}(1 − q)/q) for the large ones.
    expected = [1000 + math.log(1e-12), math.log1p(1e-12 * math.expm1(1e-9)), 1000 + math.log(0.5)]
    np.testing.assert_allclose(psi, expected, rtol=1e-14)
    assert np.all(np.isfinite(psi))


def test_amplified_epsilon_rejects_non_probabilities():
    with pytest.raises(ValueError, match="probabilities"):
        amplified_epsilon(1.5, 1.0)
    with pytest.raises(ValueError, match="≥ 0"):
        amplified_epsilon(0.5, -1.0)


@settings(max_examples=60, deadline=None)
@given(k=st.floats(1e-6, 50), q1=st.floats(1e-6, 1), q2=st.floats(1e-6, 1))
def test_c2_linear_profiles_never_gain_and_loss_decreases_with_q(k, q1, q2):
    lo, hi = sorted((q1, q2))
    psi_lo = float(amplified_epsilon(lo, k / lo))
    psi_hi = float(amplified_epsilon(hi, k / hi))
    assert psi_lo >= k * (1 - 1e-12)  # Prop. 17: ψ ≥ ε(1, x)
    assert psi_lo >= psi_hi * (1 - 1e-12)  # non-increasing in q


# ---- Algorithm 1 and the closed form (C3) -----------------------------------------------------


def test_lambertw_in_log_space_matches_scipy_away_from_the_branch_point():
    L = -1 - np.geomspace(1e-3, 600, 400)
    ref = -special.lambertw(-np.exp(L), -1).real
    np.testing.assert_allclose(_neg_lambertw_m1_from_log(L), ref, rtol=1e-12)
    # Beyond z's float range it still solves v − log v = −L.
    v = _neg_lambertw_m1_from_log(np.array([-1e4, -1e8]))
    np.testing.assert_allclose(v - np.log(v), [1e4, 1e8], rtol=1e-15)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), target=st.floats(0.05, 200))
def test_c3_closed_form_and_algorithm_1_agree_and_meet_the_constraint(seed, target):
    rng = np.random.default_rng(seed)
    k = target * rng.uniform(0.001, 1.0, 50)
    w_closed = privacy_constrained_weights(k, target)
    w_bisect = solve_privacy_constrained(LinearProfile(k), target)
    np.testing.assert_allclose(w_closed, w_bisect, rtol=1e-9)
    for w in (w_closed, w_bisect):
        assert np.all(w >= 1)
        psi = amplified_epsilon(1 / w, k * w)
        assert np.all(psi <= target * (1 + 1e-14))
        # The constraint is active wherever w > 1 (Thm 10: losses are equalised).
        np.testing.assert_allclose(psi[w > 1 + 1e-9], target, rtol=1e-9)


def test_c3_large_targets_are_exact():
    k = np.array([1.0, 10.0, 500.0, 999.0, 1000.0])
    w = privacy_constrained_weights(k, 1000.0)
    np.testing.assert_allclose(w, solve_privacy_constrained(LinearProfile(k), 1000.0), rtol=1e-10)
    # Within the 1e-12 relative safety shrink of the weights (ψ ≤ ε* in floating point).
    np.testing.assert_allclose(amplified_epsilon(1 / w, k * w), 1000.0, rtol=1e-11)
    assert np.all(amplified_epsilon(1 / w, k * w) <= 1000.0)
    assert w[-1] == 1.0  # ε(1, x) = ε*: "sampling for free" keeps the point


def test_c3_weights_depend_on_the_point_only_and_q_grows_with_the_norm():
    rng = np.random.default_rng(0)
    norms = rng.uniform(0, 5, 300)
    prof = lloyd_profile(norms, beta_sum=20.0, beta_count=40.0, n_iter=10)
    w_all = privacy_constrained_weights(prof.slopes, 4.0)
    w_sub = privacy_constrained_weights(prof.slopes[:100], 4.0)
    np.testing.assert_array_equal(w_all[:100], w_sub)
    order = np.argsort(norms)
    assert np.all(np.diff(1 / w_all[order]) >= 0)
    X = rng.normal(size=(300, 4))
    w_lws = privacy_constrained_weights(laplace_sum_profile(X, scale=10.0).slopes, 1.0)
    l1 = np.abs(X).sum(axis=1)
    assert np.all(np.diff(1 / w_lws[np.argsort(l1)]) >= 0)


def test_zero_loss_points_are_never_needed():
    w = privacy_constrained_weights(np.array([0.0, 0.5]), 1.0)
    assert w[0] == np.inf and np.isfinite(w[1])
    w2 = solve_privacy_constrained(LinearProfile(np.array([0.0, 0.5])), 1.0)
    assert w2[0] == np.inf
    np.testing.assert_allclose(w2[1], w[1], rtol=1e-9)


def test_infeasible_target_states_the_smallest_feasible_epsilon():
    with pytest.raises(ValueError, match=r"smallest feasible target_epsilon is 2\.5"):
        privacy_constrained_weights(np.array([0.5, 2.5, 1.0]), 2.0)
    with pytest.raises(ValueError, match=r"smallest feasible target_epsilon is 2\.5"):
        solve_privacy_constrained(LinearProfile(np.array([0.5, 2.5])), 2.0)


def _printed_and_corrected_brackets(k, target):
    mu = k * k * np.exp(k)  # the correct μ (spec §9.3)
    vbar = np.minimum(np.exp(k) + mu / 2, k * np.exp(k) + 1)
    base = 2 * (math.exp(target) - vbar) / mu
    return base + 1, base + 2


def test_erratum_printed_bracket_misses_the_root_but_the_corrected_one_does_not():
    # Spec §2.2 (a): line 6 of Algorithm 1 prints +1; the proof of Prop. 12 gives +2.
    misses = 0
    for target in (0.5, 1.0, 2.0, 5.0):
        k = target * np.array([0.2, 0.5, 0.9, 0.99, 0.999, 1.0])
        w = privacy_constrained_weights(k, target)
        printed, corrected = _printed_and_corrected_brackets(k, target)
        assert np.all(corrected >= w * (1 - 1e-9))
        misses += int(np.sum(printed < w * (1 - 1e-9)))
    assert misses > 0


def _quadratic_profile(a, b, target):
    """ε(w) = ε* + log(1 + a(w−1) + b(w−1)²): e^ε strongly convex (μ = 2b e^{ε*}), ε(1) = ε*.

    Eq. 10 becomes e^{ε*}(a u + b u²) = u E with u = w − 1, so besides w = 1 the root is
    w = 1 + (1 − e^{−ε*} − a)/b when a < 1 − e^{−ε*} (Case 1 of Prop. 12).
    """
    a, b = np.asarray(a, float), np.asarray(b, float)

    def value(w, i):
        u = w - 1
        return target + np.log1p(a[i] * u + b[i] * u * u)

    def deriv(w, i):
        u = w - 1
        return (a[i] + 2 * b[i] * u) / (1 + a[i] * u + b[i] * u * u)

    return FunctionProfile(value, deriv, a.size, lambda i: 2 * b[i] * math.exp(target))


def test_erratum_case_1_condition_finds_the_non_trivial_root():
    # Spec §2.2 (b): the printed test ε'(1) < 0 would keep w = 1 for 0 < a < 1 − e^{−ε*}.
    target = 1.0
    a = np.array([0.1, 0.3, 0.6, 0.7, 2.0])
    b = np.array([0.5, 2.0, 1.0, 1.0, 1.0])
    w = solve_privacy_constrained(_quadratic_profile(a, b, target), target)
    expected = np.where(a < 1 - math.exp(-target), 1 + (1 - math.exp(-target) - a) / b, 1.0)
    np.testing.assert_allclose(w, expected, rtol=1e-10)
    assert np.sum(w > 1) == 3


# ---- sampling distributions -------------------------------------------------------------------


def test_uniform_and_coreset_probabilities_sum_to_m():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1000, 3))
    X -= X.mean(axis=0)
    np.testing.assert_allclose(uniform_probabilities(1000, 50), 0.05)
    q = coreset_probabilities(X, 50, lam=0.5)
    assert q.sum() == pytest.approx(50)
    np.testing.assert_allclose(coreset_probabilities(X, 50, lam=1.0), 0.05)
    sq = (X**2).sum(axis=1)
    assert stats.spearmanr(q, sq).statistic == pytest.approx(1.0)


def test_coreset_error_states_the_largest_feasible_m():
    X = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, 0.1], [0.0, -0.1]])
    n, xt = 4, float((X**2).sum(axis=1).mean())
    m_max = coreset_max_sample_size(n, xt, 1.0, lam=0.5)
    # the message names public inputs only (issue 12, defect 4: no n, x̃ or bound read off data)
    with pytest.raises(ValueError, match=r"exceed 1 on the data \(lam=0.5\); reduce") as err:
        coreset_probabilities(X, 3.9, lam=0.5)
    assert f"{xt:.6g}" not in str(err.value) and str(math.floor(m_max)) not in str(err.value)
    q = coreset_probabilities(X, m_max * 0.999, lam=0.5)
    assert q.max() <= 1.0


def test_variance_optimal_probabilities_are_proportional_to_the_norm_with_capping():
    X = np.array([[100.0, 0], [1.0, 0], [2.0, 0], [3.0, 0]])
    q = variance_optimal_probabilities(X, 2.0)
    np.testing.assert_allclose(q, [1.0, 1 / 6, 2 / 6, 3 / 6])


def test_poisson_sample_inclusion_frequencies_and_unbiased_weighted_sum():
    # 2000 repetitions: each point's inclusion count is Binomial(2000, q); a 5-sd band.
    rng = np.random.default_rng(42)
    q = np.linspace(0.0, 1.0, 21)
    x = np.arange(21.0)
    counts = np.zeros(21)
    totals = []
    for _ in range(2000):
        idx, w = poisson_sample(q, rng=rng)
        np.testing.assert_allclose(w, 1 / q[idx])
        counts[idx] += 1
        totals.append(np.sum(w * x[idx]))
    sd = np.sqrt(2000 * q * (1 - q))
    assert np.all(np.abs(counts - 2000 * q) <= 5 * sd + 1e-9)
    assert counts[0] == 0 and counts[-1] == 2000
    # E Σ w x = Σ_{q>0} x; sd of the mean of 2000 totals is tiny relative to 5 % of 210.
    assert np.mean(totals) == pytest.approx(x[1:].sum(), rel=0.05)


# ---- DP-Lloyd calibration (spec §6.4 sanity table, from Table 1 numbers) -----------------------

COVERTYPE = {"n": 566486, "dim": 54, "radius": 4489.17, "mean_sq_norm": 3839798.28}


@pytest.mark.parametrize(
    "eps,sampler,beta_sum,beta_count",
    [
        (3, None, 1.497e4, 3.322e4),
        (3, "uniform", 6.624e5, 1.47e6),
        (3, "coreset", 2.921e5, 6.482e5),
        (100, None, 449, 996.5),
        (100, "uniform", 4.857e4, 1.078e5),
        (100, "coreset", 2.12e4, 4.706e4),
    ],
)
def test_calibration_reproduces_the_spec_noise_scales_for_covertype(
    eps, sampler, beta_sum, beta_count
):
    cal = calibrate_lloyd(sampler, epsilon=eps, sample_size=5000, n_iter=10, **COVERTYPE)
    assert cal.beta_sum == pytest.approx(beta_sum, rel=2e-3)
    assert cal.beta_count == pytest.approx(beta_count, rel=2e-3)
    assert cal.epsilon == pytest.approx(eps, rel=1e-8) and cal.epsilon <= eps * (1 + 1e-12)


def test_coreset_epsilon_is_the_maximum_of_eq_5():
    kw = dict(beta_sum=2.921e5, beta_count=6.482e5, n_iter=10, radius=4489.17, n=566486,
              sample_size=5000, mean_sq_norm=3839798.28)
    eps = sampled_lloyd_epsilon(sampler="coreset", **kw)
    z = np.linspace(0, 4489.17, 1_000_001)
    a, t = 10 / kw["beta_count"], 10 / kw["beta_sum"]
    b, s = 0.5 * 5000 / 566486, 0.5 * 5000 / 566486 / 3839798.28
    q = b + s * z * z
    dense = amplified_epsilon(q, (a + t * z) / q).max()
    assert dense <= eps + 1e-9
    assert eps - dense < 1e-6


def test_privacy_calibration_hits_m_and_reports_the_largest_feasible_m():
    rng = np.random.default_rng(3)
    norms = np.abs(rng.normal(0, 1, 20_000))
    r = float(norms.max())
    cal = calibrate_lloyd("privacy", epsilon=1.0, n=20_000, dim=5, radius=r, sample_size=2000,
                          norms=norms)
    slopes = lloyd_profile(norms, beta_sum=cal.beta_sum, beta_count=cal.beta_count,
                           n_iter=10).slopes
    assert np.sum(1 / privacy_constrained_weights(slopes, 1.0)) == pytest.approx(2000, rel=1e-8)
    free = calibrate_lloyd("privacy", epsilon=1.0, n=20_000, dim=5, radius=r, norms=norms)
    msg = f"largest feasible sample_size is {int(free.sample_size)}"
    with pytest.raises(ValueError, match=msg):
        calibrate_lloyd("privacy", epsilon=1.0, n=20_000, dim=5, radius=r,
                        sample_size=free.sample_size * 1.01, norms=norms)


# ---- C6: privacy-constrained and coreset probabilities are both monotone in ‖x‖ -------------


def test_c6_privacy_and_coreset_probabilities_are_rank_identical():
    rng = np.random.default_rng(5)
    X = rng.standard_t(5, size=(20_000, 6))
    X -= X.mean(axis=0)
    norms = np.linalg.norm(X, axis=1)
    r = float(norms.max())
    cal = calibrate_lloyd("privacy", epsilon=3.0, n=20_000, dim=6, radius=r, sample_size=400,
                          norms=norms)
    slopes = lloyd_profile(norms, beta_sum=cal.beta_sum, beta_count=cal.beta_count,
                           n_iter=10).slopes
    q_priv = 1 / privacy_constrained_weights(slopes, 3.0)
    q_core = coreset_probabilities(X, 400, radius=r)
    assert stats.spearmanr(q_priv, q_core).statistic > 0.999999
    assert stats.pearsonr(q_priv, q_core).statistic > 0.9


def test_sampled_epsilon_for_full_and_uniform_and_bad_inputs():
    kw = dict(beta_sum=50.0, beta_count=80.0, n_iter=10, radius=3.0)
    full = sampled_lloyd_epsilon(sampler=None, **kw)
    assert full == pytest.approx(10 * (3 / 50 + 1 / 80))
    unif = sampled_lloyd_epsilon(sampler="uniform", n=1000, sample_size=100, **kw)
    assert unif == pytest.approx(math.log1p(0.1 * math.expm1(full / 0.1)))
    assert unif > full  # Prop. 17: weights 1/q undo the amplification
    with pytest.raises(ValueError, match="sampler must be"):
        sampled_lloyd_epsilon(sampler="magic", n=10, sample_size=1, **kw)
    with pytest.raises(ValueError, match="Assumption 8"):
        sampled_lloyd_epsilon(sampler="privacy", target_epsilon=full / 2, **kw)
    with pytest.raises(ValueError, match="largest feasible sample_size"):
        calibrate_lloyd("coreset", epsilon=1.0, n=1000, dim=3, radius=10.0, sample_size=900,
                        mean_sq_norm=1.0)


def test_uniform_calibration_inverts_prop_3_exactly():
    for eps in (0.1, 3.0, 1000.0):
        cal = calibrate_lloyd("uniform", epsilon=eps, sample_size=5000, n_iter=10, **COVERTYPE)
        assert cal.epsilon == pytest.approx(eps, rel=1e-12)


def test_count_share_gives_the_counts_that_share_of_epsilon():
    from dpcore.mechanisms.importance import dp_lloyd_epsilon, dp_lloyd_noise_scales

    bs, bc = dp_lloyd_noise_scales(3.0, 4489.17, 10, 54, count_share=0.1)
    assert dp_lloyd_epsilon(4489.17, bs, bc, 10) == pytest.approx(3.0)
    assert 10 / bc == pytest.approx(0.3)  # the counts' part of ε
    _, su_bc = dp_lloyd_noise_scales(3.0, 4489.17, 10, 54)
    assert 10 / su_bc < 1e-3  # the paper's split: ≈ 1e-4 of ε on the counts
    for sampler in ("uniform", "coreset"):
        cal = calibrate_lloyd(sampler, epsilon=3.0, sample_size=5000, count_share=0.1,
                              **COVERTYPE)
        assert cal.epsilon == pytest.approx(3.0, rel=1e-8)
        assert cal.beta_count / cal.beta_sum == pytest.approx(0.9 / (0.1 * 4489.17))
    with pytest.raises(ValueError, match="count_share"):
        dp_lloyd_noise_scales(3.0, 1.0, 10, 2, count_share=1.5)
