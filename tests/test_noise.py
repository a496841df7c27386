"""Statistical tests of every sampler against its stated density (fixed seeds).

Power: with 10⁵ draws the KS statistic's 1% critical value is ≈ 0.0052, so a radius law that
differs from Gamma(d, β) by more than about half a percent in CDF is rejected. The papers' code
draws an Exponential(β) radius; for d = 2 its CDF differs from Gamma(2, β) by up to 0.37.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.privacy.noise import (
    exponential_mechanism,
    exponential_mechanism_probabilities,
    gaussian,
    gaussian_sigma_approx_dp,
    gaussian_sigma_zcdp,
    laplace,
    laplace_scale,
    sample_l2_exponential,
)

N = 100_000


@pytest.mark.parametrize("dim", [1, 2, 10, 100])
def test_l2_exponential_radius_is_gamma(dim):
    beta = 0.7
    z = sample_l2_exponential(beta, dim, N, rng=dim)
    assert z.shape == (N, dim)
    radius = np.linalg.norm(z, axis=1)
    assert stats.kstest(radius, stats.gamma(a=dim, scale=beta).cdf).pvalue > 0.01
    if dim >= 2:  # the Exponential radius of the papers' code is rejected by the same test
        assert stats.kstest(radius, stats.expon(scale=beta).cdf).pvalue < 1e-6


@pytest.mark.parametrize("dim", [2, 10])
def test_l2_exponential_direction_is_uniform(dim):
    z = sample_l2_exponential(1.0, dim, N, rng=10 + dim)
    u = z / np.linalg.norm(z, axis=1, keepdims=True)
    # For a uniform direction, u_1² ~ Beta(1/2, (d−1)/2) and the sign of u_1 is a fair coin.
    assert stats.kstest(u[:, 0] ** 2, stats.beta(0.5, (dim - 1) / 2).cdf).pvalue > 0.01
    assert stats.binomtest(int((u[:, 0] > 0).sum()), N).pvalue > 0.01
    # Radius and direction are independent: correlation of ‖z‖ with u_1² is ~0 (±4/√N).
    assert abs(np.corrcoef(np.linalg.norm(z, axis=1), u[:, 0] ** 2)[0, 1]) < 4 / math.sqrt(N)


def test_l2_exponential_validation():
    with pytest.raises(ValueError, match="beta"):
        sample_l2_exponential(0.0, 2, 3, rng=0)
    with pytest.raises(ValueError, match="dim"):
        sample_l2_exponential(1.0, 0, 3, rng=0)


def test_laplace_and_gaussian_match_their_laws():
    x = laplace(2.0, N, rng=1)
    assert stats.kstest(x, stats.laplace(scale=2.0).cdf).pvalue > 0.01
    g = gaussian(3.0, N, rng=2)
    assert stats.kstest(g, stats.norm(scale=3.0).cdf).pvalue > 0.01
    assert np.all(laplace(0.0, 5, rng=0) == 0) and gaussian(0.0, rng=0) == 0.0
    with pytest.raises(ValueError, match="scale"):
        laplace(-1.0, rng=0)


def test_same_seed_same_noise_different_seed_different():
    assert np.array_equal(laplace(1.0, 5, rng=3), laplace(1.0, 5, rng=3))
    assert not np.array_equal(laplace(1.0, 5, rng=3), laplace(1.0, 5, rng=4))


def test_calibrations():
    assert laplace_scale(2.0, 0.5) == 4.0
    assert gaussian_sigma_zcdp(1.0, 0.5) == pytest.approx(1.0)
    # Analytic Gaussian: tighter than the classical bound for ε < 1, and exact: δ(σ) = δ.
    eps, delta = 0.5, 1e-5
    sigma = gaussian_sigma_approx_dp(1.0, eps, delta)
    assert sigma < math.sqrt(2 * math.log(1.25 / delta)) / eps
    a, b = 1 / (2 * sigma), eps * sigma
    achieved = stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b)
    assert achieved == pytest.approx(delta, rel=1e-8)
    # scales linearly with the sensitivity, decreases with ε
    assert gaussian_sigma_approx_dp(3.0, eps, delta) == pytest.approx(3 * sigma, rel=1e-9)
    assert gaussian_sigma_approx_dp(1.0, 5.0, delta) < sigma
    with pytest.raises(ValueError, match="delta"):
        gaussian_sigma_approx_dp(1.0, 1.0, 0.0)


def test_exponential_mechanism_matches_its_distribution():
    scores = np.array([0.0, 1.0, 2.5, -3.0, 2.0])
    eps, sens = 1.3, 0.8
    p = exponential_mechanism_probabilities(scores, eps, sens)
    assert p == pytest.approx(
        np.exp(eps * scores / (2 * sens)) / np.exp(eps * scores / (2 * sens)).sum()
    )
    draws = exponential_mechanism(scores, eps, sens, rng=5, size=N)
    counts = np.bincount(draws, minlength=scores.size)
    assert stats.chisquare(counts, N * p).pvalue > 0.01


def test_exponential_mechanism_is_stable_for_huge_scores():
    scores = np.array([1e300, 0.0, -1e300])
    assert exponential_mechanism(scores, 1e6, 1.0, rng=0) == 0
    p = exponential_mechanism_probabilities(scores, 1e6, 1.0)
    assert np.all(np.isfinite(p)) and p[0] == 1.0
    # many near-equal huge scores still sample among the top ones
    draws = exponential_mechanism(np.array([1e9, 1e9, 0.0]), 1.0, 1.0, rng=1, size=2000)
    assert set(np.unique(draws)) == {0, 1}


def test_exponential_mechanism_monotonic_drops_factor_two():
    p2 = exponential_mechanism_probabilities([0.0, 1.0], 1.0, 1.0)
    p1 = exponential_mechanism_probabilities([0.0, 1.0], 1.0, 1.0, monotonic=True)
    assert p2[1] / p2[0] == pytest.approx(math.exp(0.5))
    assert p1[1] / p1[0] == pytest.approx(math.exp(1.0))


@pytest.mark.parametrize("bad", [[], [np.nan, 1.0], [[1.0, 2.0]]])
def test_exponential_mechanism_bad_scores(bad):
    with pytest.raises(ValueError, match="scores"):
        exponential_mechanism(bad, 1.0, 1.0, rng=0)
