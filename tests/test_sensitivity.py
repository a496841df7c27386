"""Algorithms 1 and 2 of Rubinstein & Aldà (2017): sample_sensitivity and sample_then_respond."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from dpcore.mechanisms.sensitivity.sampler import (
    BernsteinRelease,
    SamplerError,
    bernstein_lattice,
    bernstein_mechanism,
    empirical_oracle,
    gamma_min,
    respond,
    sample_sensitivity,
    sample_then_respond,
    sampler_config,
)
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import PrivacyLeakWarning, RandomDP


def exp_oracle(size, rng):
    return rng.exponential(1.0, size)


def mean(d):
    return float(np.mean(d))


class BatchedMean:
    """The sample mean declaring a vectorised form (the ``batch`` hook)."""

    def __call__(self, d):
        return float(np.mean(d))

    def batch(self, ds):
        return ds.mean(axis=1)


class MapMean(BatchedMean):
    """The sample mean declaring f(D) = mean of a record map (the ``record_map`` hook)."""

    def record_map(self, x):
        return x


# ---------------------------------------------------------------------------------- Algorithm 1


def test_pairs_share_the_first_n_minus_1_records():
    # A counting oracle makes every record distinct and traceable.
    counter = iter(range(10**6))

    def oracle(size, rng):
        return np.array([next(counter) for _ in range(size)], dtype=float)

    seen = []

    def f(d):
        seen.append(np.array(d))
        return float(d.sum())

    res = sample_sensitivity(f, oracle, 5, m=3, k=3, rng=0)
    pairs = [(seen[2 * i], seen[2 * i + 1]) for i in range(3)]  # f(D_i), then f(D'_i)
    for d, d_prime in pairs:
        assert d.shape == d_prime.shape == (5,)
        np.testing.assert_array_equal(d[:4], d_prime[:4])  # records 1..n-1 shared
        assert d[4] != d_prime[4] and d_prime[4] == d[4] + 1  # record n+1 replaces record n
    # the probe draw uses record 0; each pair then uses 6 fresh records
    assert np.all(res.sensitivities == 1.0)


def test_delta_hat_is_the_kth_order_statistic_and_sorted():
    res = sample_sensitivity(mean, exp_oracle, 20, m=200, k=150, rng=1)
    g = res.sensitivities
    assert g.shape == (200,) and np.all(np.diff(g) >= 0)
    assert res.delta_hat == g[149]
    assert res.config.m == 200 and res.config.k == 150 and res.path == "loop"
    frame = res.ecdf()
    assert list(frame.columns) == ["G", "ecdf"] and frame["ecdf"].iloc[-1] == 1.0


def test_loop_and_batch_paths_agree_exactly():
    a = sample_sensitivity(mean, exp_oracle, 30, m=100, k=90, rng=7)
    b = sample_sensitivity(BatchedMean(), exp_oracle, 30, m=100, k=90, rng=7)
    assert b.path == "batch"
    np.testing.assert_allclose(a.sensitivities, b.sensitivities, rtol=1e-12)


def test_example6_sensitivity_distribution_is_exp_n():
    # Example 6: G = |D_n - D'_n| / n ~ Exp(n) for Exp(1) records. m = 2000 draws per path; KS
    # detects a 25% scale error with p < 1e-6 at this size (a missing 1/n, or a neighbour that
    # replaces two records, whose G is a sum of two such gaps, are far larger errors).
    n = 25
    for f in (mean, BatchedMean(), MapMean()):
        res = sample_sensitivity(f, exp_oracle, n, m=2000, k=2000, rng=11)
        p = stats.kstest(n * res.sensitivities, "expon").pvalue
        assert p > 1e-3, (type(f).__name__, p)
    wrong = stats.kstest(1.25 * n * res.sensitivities, "expon").pvalue
    assert wrong < 1e-6  # the test has power against a 25% error


def test_norms_l1_l2_linf_and_callable():
    def f(d):
        return d.sum(axis=0)

    def oracle(size, rng):
        return rng.normal(size=(size, 3))

    kw = {"m": 50, "k": 50, "rng": 3}
    l1 = sample_sensitivity(f, oracle, 10, norm=1, **kw).sensitivities
    l2 = sample_sensitivity(f, oracle, 10, norm="l2", **kw).sensitivities
    li = sample_sensitivity(f, oracle, 10, norm=np.inf, **kw).sensitivities
    cu = sample_sensitivity(f, oracle, 10, norm=lambda a, b: np.abs(a - b).max(), **kw)
    assert np.all(li <= l2 + 1e-12) and np.all(l2 <= l1 + 1e-12)
    np.testing.assert_allclose(cu.sensitivities, li)
    assert cu.norm == "custom"


def test_empirical_oracle_from_table():
    table = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    res = sample_sensitivity(lambda d: d.sum(), table, 6, m=300, k=300, rng=5)
    assert set(np.unique(res.sensitivities)) <= {0.0, 1.0, 2.0, 3.0}
    assert res.delta_hat == 3.0
    draw = empirical_oracle(np.arange(5))
    assert draw(7, np.random.default_rng(0)).shape == (7,)
    with pytest.raises(ValueError, match="empty"):
        empirical_oracle(np.empty((0, 2)))


@pytest.mark.slow  # joblib worker start-up: 3 s idle, >10 s on a loaded machine
def test_parallel_evaluation_is_reproducible():
    # an oracle making two draws per call: a different chunking would change the stream
    def two_draws(size, rng):
        return rng.exponential(size=size) * rng.integers(1, 3, size=size)

    a = sample_sensitivity(mean, two_draws, 15, m=64, k=60, rng=9)
    b = sample_sensitivity(mean, two_draws, 15, m=64, k=60, rng=9, n_jobs=2)
    np.testing.assert_array_equal(a.sensitivities, b.sensitivities)


def test_claim4_delivered_confidence_is_k_over_m_plus_1():
    # Theorem 15 / spec §2.4: E[Phi(Δ̂)] = k/(m+1). Example 6 gives Phi exactly:
    # Phi(Δ) = 1 - exp(-nΔ). m = 100, gamma = 0.3 -> k = 86, target 86/101 = 0.8515.
    # 600 sampler runs: SD of Beta(86, 15) is 0.0352, so the SE of the mean is 0.0014; the
    # tolerance 0.006 (4.2 SE) rejects the off-by-one k-1 (85/101, 0.0099 lower).
    cfg = sampler_config(m=100, gamma=0.3)
    assert cfg.k == 86
    n, runs = 20, 600
    gen = np.random.default_rng(2024)
    phi = np.empty(runs)
    fresh = np.empty(runs, dtype=bool)
    for r in range(runs):
        est = sample_sensitivity(MapMean(), exp_oracle, n, m=cfg.m, k=cfg.k, rng=gen)
        phi[r] = 1.0 - math.exp(-n * est.delta_hat)
        x, x_new = gen.exponential(size=2)
        fresh[r] = abs(x - x_new) / n <= est.delta_hat  # a fresh pair (D, D') ~ P^{n+1}
    target = cfg.k / (cfg.m + 1)
    assert abs(phi.mean() - target) < 0.006
    assert abs(phi.mean() - (cfg.k - 1) / (cfg.m + 1)) > 0.006
    # fresh pairs: binomial SE sqrt(.85*.15/600) = 0.0146; 3.5 SE, and >= 1 - gamma = 0.7.
    assert abs(fresh.mean() - target) < 0.052
    assert fresh.mean() >= 1 - cfg.gamma


def test_claim4_distribution_free_l2_mean_of_uniform_cube():
    # Same check for a continuous G without a closed form: the mean of U[0,1]^3 in L2.
    # 1500 runs, one fresh pair each: binomial SE sqrt(.8*.2/1500) = 0.0103; tolerance 0.036.
    # A sampler returning G_(k) for k one fifth smaller (k=40 of 50, level 0.78) would still
    # pass; what this catches is a systematic bias such as a wrong neighbour construction.
    cfg = sampler_config(m=50, k=41)  # k/(m+1) = 0.804
    gen = np.random.default_rng(77)

    def unif(size, rng):
        return rng.random((size, 3))

    hits = []
    for _ in range(1500):
        est = sample_sensitivity(MapMean(), unif, 10, m=cfg.m, k=cfg.k, norm=2, rng=gen)
        u = gen.random((2, 3))
        hits.append(np.linalg.norm(u[0] - u[1]) / 10 <= est.delta_hat)
    assert abs(np.mean(hits) - cfg.k / (cfg.m + 1)) < 0.036


# ------------------------------------------------------------------------------ failures, input


def test_statistic_raising_on_some_data_sets_is_reported_and_nothing_released():
    def fragile(d):
        if d.max() > 3.0:  # Exp(1) max of 10 records exceeds 3 with probability ~0.4
            raise RuntimeError("solver diverged")
        return float(d.mean())

    with pytest.raises(SamplerError, match=r"failed on \d+ of 200 .*\(\d+\.\d%\).*solver diverged"):
        sample_sensitivity(fragile, exp_oracle, 10, m=200, k=190, rng=0)
    data = np.full(10, 0.5)
    with pytest.raises(SamplerError, match="Nothing was released"):
        sample_then_respond(fragile, data, exp_oracle, epsilon=1.0, m=200, rng=0)


def test_non_finite_output_is_reported_with_fraction():
    def log_min(d):
        with np.errstate(invalid="ignore"):
            return float(np.log(d.min() - 0.05))  # nan when a record is below 0.05

    with pytest.raises(SamplerError, match=r"non-finite"):
        sample_sensitivity(log_min, exp_oracle, 5, m=100, k=100, rng=0)

    class BadBatch(BatchedMean):
        def batch(self, ds):
            out = ds.mean(axis=1)
            out[::4] = np.nan
            return out

    with pytest.raises(SamplerError, match=r"on 25 of 100 .*\(25\.0%\).*non-finite"):
        sample_sensitivity(BadBatch(), exp_oracle, 5, m=100, k=100, rng=0)


def test_batch_that_raises_falls_back_to_plain_f():
    class Broken(BatchedMean):
        def batch(self, ds):
            raise MemoryError("too big")

    res = sample_sensitivity(Broken(), exp_oracle, 5, m=20, k=20, rng=0)
    assert res.path == "loop" and np.isfinite(res.delta_hat)


def test_shape_mismatch_is_a_failure():
    def ragged(d):
        return np.ones(2 if d[-1] > 1 else 3)  # the last record is the one replaced

    with pytest.raises(SamplerError, match="different shapes"):
        sample_sensitivity(ragged, exp_oracle, 4, m=200, k=200, rng=0)

    def transposed(d):  # same size, different shape: must not be compared element by element
        return np.zeros((2, 3)) if d[-1] > 1 else np.zeros((3, 2))

    with pytest.raises(SamplerError, match="different shapes"):
        sample_sensitivity(transposed, exp_oracle, 4, m=200, k=200, rng=0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 1}, r"n must be an integer >= 2"),
        ({"n": 0}, r"n must be an integer >= 2"),
        ({"k": 11}, r"1 <= k <= m"),
        ({"m": 0}, r"m must be"),
        ({"norm": 3}, r"norm must be"),
        ({"oracle": lambda size, rng: np.zeros(size + 1)}, r"must return \d+ records"),
    ],
)
def test_bad_sampler_input(kwargs, message):
    args = {"f": mean, "oracle": exp_oracle, "n": 10, "m": 10, "k": 10} | kwargs
    with pytest.raises(ValueError, match=message):
        sample_sensitivity(**args)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"gamma": 0.0}, r"strictly between 0 and 1"),
        ({"gamma": 1.5}, r"strictly between 0 and 1"),
        ({"gamma": 0.01, "m": 100}, r"gamma_min=0\.159724"),
        ({"epsilon": 0.0}, r"epsilon must be"),
        ({"epsilon": float("inf")}, r"epsilon must be"),
        ({"mechanism": "gauss"}, r"mechanism must be"),
        ({"mechanism": "gaussian"}, r"needs delta in \(0, 1\)"),
        ({"delta": 1e-5}, r"only used by the Gaussian"),
    ],
)
def test_bad_release_input(kwargs, message):
    args = {"epsilon": 1.0, "gamma": 0.2} | kwargs
    with pytest.raises(ValueError, match=message):
        sample_then_respond(mean, np.ones(10), exp_oracle, rng=0, **args)


def test_statistic_failing_on_the_private_data_is_explained():
    def picky(d):
        if np.all(d == 1.0):
            raise ZeroDivisionError("degenerate")
        return float(d.mean())

    with pytest.raises(ValueError, match=r"failed on the data set \(ZeroDivisionError"):
        sample_then_respond(picky, np.ones(10), exp_oracle, epsilon=1.0, gamma=0.2, rng=0)


def test_release_needs_two_records():
    with pytest.raises(ValueError, match="at least n=2"):
        sample_then_respond(mean, np.ones(1), exp_oracle, epsilon=1.0, gamma=0.2)
    with pytest.raises(ValueError, match="sized collection"):
        sample_then_respond(mean, 3.0, exp_oracle, epsilon=1.0, gamma=0.2)


# ---------------------------------------------------------------------------------- Algorithm 2


def test_release_carries_random_dp_guarantee_and_config():
    data = np.random.default_rng(0).exponential(size=100)
    rel = sample_then_respond(MapMean(), data, exp_oracle, epsilon=0.5, gamma=0.1, rng=1)
    assert rel.guarantee == RandomDP(0.5, 0.0, 0.1) and rel.privacy_ is rel.guarantee
    assert rel.sensitivity.config == sampler_config(gamma=0.1)
    assert rel.sensitivity.delta_hat == rel.sensitivity.sensitivities[-1]  # row 1: k = m
    assert rel.noise_scale == pytest.approx(rel.sensitivity.delta_hat / 0.5)
    assert isinstance(rel.value, float)
    g = sample_then_respond(
        MapMean(),
        data,
        exp_oracle,
        epsilon=2.0,
        m=1000,
        gamma=0.1,
        delta=1e-6,
        mechanism="gaussian",
        rng=1,
    )
    assert g.guarantee == RandomDP(2.0, 1e-6, 0.1) and g.sensitivity.config.k == 957
    assert g.sensitivity.norm == "l2"


def test_same_seed_same_release():
    data = np.linspace(0, 1, 50)
    a = sample_then_respond(mean, data, exp_oracle, epsilon=1.0, gamma=0.2, rng=3)
    b = sample_then_respond(mean, data, exp_oracle, epsilon=1.0, gamma=0.2, rng=3)
    assert a.value == b.value


def test_zero_sensitivity_releases_exact_value_with_warning():
    data = np.arange(10.0)
    with pytest.warns(UserWarning, match="numerically 0"):
        rel = sample_then_respond(lambda d: 42.0, data, exp_oracle, epsilon=0.1, gamma=0.2, rng=0)
    assert rel.value == 42.0 and rel.noise_scale == 0.0
    with pytest.warns(UserWarning, match="numerically 0"):
        rel = sample_then_respond(
            lambda d: np.array([1.0, 3.0, 3.0]),
            data,
            exp_oracle,
            epsilon=0.1,
            gamma=0.2,
            mechanism="exponential",
            candidates=["a", "b", "c"],
            rng=0,
        )
    assert rel.value in ("b", "c")


def test_round_off_sensitivity_also_warns():
    # a solver returning the same fit up to round-off: Δ̂ ~ 1e-16, not exactly 0
    def almost_constant(d):
        return 5.0 + 1e-15 * float(d[-1] > 1.0)

    with pytest.warns(UserWarning, match="numerically 0"):
        rel = sample_then_respond(
            almost_constant, np.ones(5), exp_oracle, epsilon=1.0, gamma=0.2, rng=0
        )
    assert rel.sensitivity.delta_hat > 0 and abs(rel.value - 5.0) < 1e-12


def test_oracle_equal_to_private_data_warns():
    data = np.random.default_rng(0).exponential(size=30)
    with pytest.warns(PrivacyLeakWarning, match="private data set itself"):
        sample_then_respond(mean, data, data, epsilon=1.0, gamma=0.2, rng=0)
    with pytest.warns(PrivacyLeakWarning):
        sample_then_respond(mean, data, data[:20], epsilon=1.0, gamma=0.2, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        sample_then_respond(mean, data, data.copy() + 0.0, epsilon=1.0, gamma=0.2, rng=0)


def test_reused_estimate_is_checked_and_not_resampled():
    data = np.ones(40)
    est = sample_sensitivity(mean, exp_oracle, 40, m=285, k=285, rng=0)
    rel = sample_then_respond(mean, data, exp_oracle, epsilon=1.0, sensitivity=est, rng=1)
    assert rel.sensitivity is est and rel.guarantee.gamma == pytest.approx(gamma_min(285))
    with pytest.raises(ValueError, match="n=40 in the l1 norm"):
        sample_then_respond(mean, np.ones(41), exp_oracle, epsilon=1.0, sensitivity=est)
    with pytest.raises(ValueError, match="l2 norm"):
        sample_then_respond(
            mean,
            data,
            exp_oracle,
            epsilon=1.0,
            sensitivity=est,
            mechanism="gaussian",
            delta=1e-5,
        )


# -------------------------------------------------------------------------------- mechanisms


def test_laplace_noise_has_the_calibrated_law():
    # 20000 draws: KS detects a 5% scale error with p ~ 1e-5; the test also rejects scale*1.1.
    out, scale = respond(np.zeros(20000), sensitivity=0.3, epsilon=1.5, rng=0)
    assert scale == pytest.approx(0.2)
    assert stats.kstest(out, "laplace", args=(0, 0.2)).pvalue > 1e-3
    assert stats.kstest(out, "laplace", args=(0, 0.22)).pvalue < 1e-6


def test_gaussian_calibrations():
    out, sigma = respond(
        np.zeros(20000),
        sensitivity=1.0,
        epsilon=0.5,
        delta=1e-5,
        mechanism="gaussian",
        calibration="classic",
        rng=0,
    )
    assert sigma == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5)
    assert stats.kstest(out / sigma, "norm").pvalue > 1e-3
    _, analytic = respond(0.0, sensitivity=1.0, epsilon=0.5, delta=1e-5, mechanism="gaussian")
    assert analytic < sigma  # analytic Gaussian is tighter
    with pytest.raises(ValueError, match="epsilon < 1"):
        respond(
            0.0,
            sensitivity=1.0,
            epsilon=2.0,
            delta=1e-5,
            mechanism="gaussian",
            calibration="classic",
        )


def test_exponential_mechanism_frequencies():
    scores = np.array([0.0, 1.0, 2.0])
    rel = [
        respond(scores, sensitivity=1.0, epsilon=2.0, mechanism="exponential", rng=s)[0]
        for s in range(3000)
    ]
    p = np.exp(scores) / np.exp(scores).sum()  # exp(eps * s / (2 Δ)) with eps=2, Δ=1
    counts = np.bincount(rel, minlength=3)
    assert stats.chisquare(counts, 3000 * p).pvalue > 1e-3


def test_audit_release_is_dp_on_pairs_within_delta_hat_and_not_beyond():
    # Random DP: ε-DP holds for pairs with |f(D) - f(D')| <= Δ̂ (Definition 9), and fails on the
    # γ-tail beyond it. The audit (100k draws) confirms the first and detects the second.
    est = sample_sensitivity(MapMean(), exp_oracle, 50, m=285, k=285, rng=0)
    dh = est.delta_hat

    def sample(value, size, rng):
        return respond(np.full(size, value), sensitivity=dh, epsilon=1.0, rng=rng)[0]

    ok = audit_epsilon(sample, 0.0, dh, n_samples=100_000, rng=1)
    assert ok.consistent_with(1.0)
    bad = audit_epsilon(sample, 0.0, 3 * dh, n_samples=100_000, rng=1)
    assert not bad.consistent_with(1.0)


# ---------------------------------------------------------------------------------- Bernstein


def test_bernstein_reproduces_linear_functions_and_iteration_helps():
    lattice = bernstein_lattice(10)
    y = np.linspace(0, 1, 101)
    lin = BernsteinRelease(coefficients=2 * lattice + 1, lattice_k=10, h=3)
    np.testing.assert_allclose(lin(y), 2 * y + 1, atol=1e-12)

    def smooth(t):
        return np.sin(3 * t)

    err = [
        np.abs(BernsteinRelease(smooth(lattice), lattice_k=10, h=h)(y) - smooth(y)).max()
        for h in (1, 2, 3)
    ]
    assert err[0] > err[1] > err[2]


def test_bernstein_two_dimensional_tensor_product():
    pts = bernstein_lattice(6, dims=2)
    assert pts.shape == (49, 2)
    rel = BernsteinRelease(coefficients=(pts[:, 0] + 2 * pts[:, 1]).reshape(7, 7), lattice_k=6)
    y = np.random.default_rng(0).random((20, 2))
    np.testing.assert_allclose(rel(y), y[:, 0] + 2 * y[:, 1], atol=1e-12)


def test_bernstein_release_noise_scale():
    def f(d):
        return lambda y: np.mean(
            np.exp(-((np.asarray(y)[:, None] - d[None, :]) ** 2) / 0.02), axis=1
        )

    def oracle(size, rng):
        return rng.random(size)

    data = np.random.default_rng(1).random(200)
    rel = sample_then_respond(
        f, data, oracle, epsilon=1.0, m=200, mechanism="bernstein", lattice_k=10, h=3, rng=2
    )
    assert isinstance(rel.value, BernsteinRelease) and rel.value.h == 3
    assert rel.sensitivity.norm == "linf"
    assert rel.noise_scale == pytest.approx(rel.sensitivity.delta_hat * 11)
    assert rel.value(np.linspace(0, 1, 5)).shape == (5,)


def test_bernstein_mechanism_noise_law_and_validation():
    # (k+1)^ℓ = 121 lattice values in 2-D; 200 releases give 24200 noise draws, enough for KS
    # to reject a scale off by 10% (p < 1e-6), e.g. (k+1) instead of (k+1)^ℓ would be 11x off.
    gen = np.random.default_rng(0)
    values = np.arange(121.0)
    draws = np.concatenate(
        [
            (
                bernstein_mechanism(
                    values, sensitivity=0.01, epsilon=2.0, lattice_k=10, dims=2, rng=gen
                ).coefficients.ravel()
                - values
            )
            for _ in range(200)
        ]
    )
    scale = 0.01 * 121 / 2.0
    assert stats.kstest(draws, "laplace", args=(0, scale)).pvalue > 1e-3
    assert stats.kstest(draws, "laplace", args=(0, 1.1 * scale)).pvalue < 1e-6
    with pytest.raises(ValueError, match=r"needs the 121 values"):
        bernstein_mechanism(np.zeros(11), sensitivity=1.0, epsilon=1.0, lattice_k=10, dims=2)
    with pytest.raises(ValueError, match="h must be"):
        bernstein_mechanism(np.zeros(11), sensitivity=1.0, epsilon=1.0, lattice_k=10, h=0)


def test_bernstein_release_in_two_dimensions():
    def f(d):  # F(D, y) = mean_i exp(-|y - x_i|^2): a 2-D function-valued statistic
        return lambda y: np.exp(-((y[:, None, :] - d[None]) ** 2).sum(-1)).mean(axis=1)

    def oracle(size, rng):
        return rng.random((size, 2))

    data = np.random.default_rng(1).random((50, 2))
    rel = sample_then_respond(
        f, data, oracle, epsilon=1.0, m=60, mechanism="bernstein", lattice_k=4, dims=2, rng=0
    )
    assert rel.value.coefficients.shape == (5, 5)
    assert rel.noise_scale == pytest.approx(rel.sensitivity.delta_hat * 25)
    assert rel.value(np.random.default_rng(2).random((7, 2))).shape == (7,)


def test_release_guarantee_composes_in_the_ledger():
    from dpcore.privacy.guarantees import BudgetExceededError, PrivacyLedger

    ledger = PrivacyLedger(RandomDP(1.0, 0.0, 0.25))
    rel = sample_then_respond(MapMean(), np.ones(20), exp_oracle, epsilon=0.5, gamma=0.1, rng=0)
    ledger.spend("mean", rel.guarantee)
    ledger.spend("mean again", rel.guarantee)
    with pytest.raises(BudgetExceededError):  # ε 1.5 > 1 and γ 0.3 > 0.25 (union bound)
        ledger.spend("third", rel.guarantee)


@pytest.mark.parametrize("seed", range(5))
def test_order_statistic_is_monotone_in_k(seed):
    res = [
        sample_sensitivity(mean, exp_oracle, 10, m=40, k=k, rng=seed).delta_hat for k in (1, 20, 40)
    ]
    assert res[0] <= res[1] <= res[2]
