"""FriendlyCore averaging: FriendlyAvg, CheckDiam/FindDiam, friendly_mean (spec §2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.mechanisms.friendlycore import check_diam, find_diam, friendly_avg, friendly_mean
from dpcore.mechanisms.friendlycore.averaging import FAILED_MESSAGE, footnote_rho1, rho_for_epsilon
from dpcore.privacy.guarantees import ZCDP, ApproxDP


def paper_radius(d, n):
    return math.sqrt(2) * (math.sqrt(d) + math.sqrt(math.log(100 * n)))


def test_friendly_avg_noise_is_the_stated_gaussian():
    # Fixed data, many runs: (estimate - mean) / sigma must be N(0, 1) per coordinate, and sigma
    # must equal (2r/n_hat)/sqrt(2 rho2). KS on 2000 x 3 values detects a sd off by 5 % (p << 0.01).
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 3))
    zs = []
    for s in range(2000):
        res = friendly_avg(X, rho=1.0, delta=1e-6, radius=2.0, rng=s)
        assert res.noise_sd == pytest.approx((4.0 / res.n_hat) / math.sqrt(2 * 0.9))
        zs.append((res.estimate - X.mean(0)) / res.noise_sd)
    assert stats.kstest(np.ravel(zs), "norm").pvalue > 0.01
    # n_hat = n - sqrt(ln(1/δ)/ρ1') - 1 + N(0, 1/(2ρ1')) with ρ1' = 0.1(1-δ)ρ
    rho1 = 0.1 * (1 - 1e-6)
    n_hats = [friendly_avg(X, rho=1.0, delta=1e-6, radius=2.0, rng=s).n_hat for s in range(500)]
    assert np.mean(n_hats) == pytest.approx(200 - math.sqrt(math.log(1e6) / rho1) - 1, abs=0.5)
    assert np.std(n_hats) == pytest.approx(math.sqrt(1 / (2 * rho1)), rel=0.1)


def test_friendly_avg_aborts_on_tiny_input():
    res = friendly_avg(np.zeros((3, 2)), rho=1.0, delta=1e-8, radius=1.0, rng=0)
    assert res.estimate is None and res.n_hat <= 0


def test_footnote_split_is_the_maximiser():
    rho, delta, n = 0.9, 5e-9, 800
    x = footnote_rho1(rho, delta, n)
    assert x == pytest.approx(0.0289, abs=2e-4)  # spec §5.1 COMPUTED

    def f(x):
        return (n - math.sqrt(math.log(1 / delta) / x)) * math.sqrt(rho - x)

    # (n - sqrt(L/x)) sqrt(rho - x) ~ maximal at x (up to the constant the footnote drops)
    assert f(x) > f(x / 3) and f(x) > f(min(3 * x, rho / 2))


def test_friendly_mean_known_diameter_matches_paper_scale():
    # Fig 5 configuration (d = 1000, n = 800): noise norm ≈ 3.07, sampling error ≈ 1.12 (spec §5.1).
    rng = np.random.default_rng(1)
    d, n = 1000, 800
    X = rng.normal(size=(n, d)) + 1e6  # far from the origin: FC_Avg does not care
    res = friendly_mean(X, radius=paper_radius(d, n), rho=1.0, delta=1e-8, rng=2)
    assert res.core_size == n and not res.failed
    assert res.guarantee == ZCDP(1.0, 1e-8)
    assert res.noise_sd * math.sqrt(d) == pytest.approx(3.07, rel=0.05)
    err = np.linalg.norm(res.estimate - 1e6)
    assert 2.5 < err < 4.5  # sqrt(3.07² + 1.12²) ≈ 3.27
    rhos = sum(g.rho for _, g in res.budget)
    deltas = sum(g.delta for _, g in res.budget)
    assert rhos == pytest.approx(1.0) and deltas == pytest.approx(1e-8)


def test_friendly_mean_ignores_outliers():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(900, 5)), rng.normal(size=(60, 5)) + 1e4])
    res = friendly_mean(X, radius=8.0, rho=1.0, delta=1e-8, rng=4)
    assert not res.core_mask[900:].any()
    assert np.linalg.norm(res.estimate - X[:900].mean(0)) < 0.2
    assert np.linalg.norm(X.mean(0)) > 500  # the plain mean is ruined by them


def test_friendly_mean_unknown_diameter():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(2000, 10)) * 3.0
    res = friendly_mean(X, rho=1.0, delta=1e-8, r_min=1e-3, r_max=1e4, rng=6)
    assert res.radius_was_searched
    # pairwise distances of N(0, 9 I_10) concentrate at 3*sqrt(20) ≈ 13.4: the search lands near
    # the smallest grid radius that makes the set almost complete.
    assert 10 < res.radius < 40
    assert res.core_size > 1900
    assert np.linalg.norm(res.estimate) < 1.0
    labels = [s for s, _ in res.budget]
    assert labels == ["FindDiam", "FriendlyCore", "FriendlyAvg"]
    assert sum(g.rho for _, g in res.budget) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="r_min and r_max"):
        friendly_mean(X, rho=1.0, delta=1e-8)


def test_find_diam_and_check_diam():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(500, 2)) * 0.01  # diameter ≈ 0.1
    assert check_diam(X, rho=1.0, beta=1e-3, radius=1.0, rng=0)
    assert not check_diam(X, rho=1.0, beta=1e-3, radius=1e-4, rng=0)
    r = find_diam(X, rho=1.0, beta=1e-3, r_min=1e-4, r_max=1e3, rng=1)
    assert 0.03 < r < 0.3
    assert find_diam(X, rho=1.0, beta=0.01, r_min=5.0, r_max=5.0, rng=0) == 5.0


def test_friendly_mean_epsilon_path():
    rho = rho_for_epsilon(4.0, 0.5e-8)
    assert ZCDP(rho).to_approx_dp(0.5e-8).epsilon == pytest.approx(4.0)
    rng = np.random.default_rng(8)
    X = rng.normal(size=(5000, 3))
    res = friendly_mean(X, radius=6.0, epsilon=4.0, delta=1e-8, rng=9)
    assert res.guarantee == ApproxDP(4.0, 1e-8)
    assert np.linalg.norm(res.estimate) < 0.2


def test_friendly_mean_sampled_counts():
    rng = np.random.default_rng(10)
    X = np.vstack([rng.normal(size=(6000, 4)), rng.normal(size=(200, 4)) + 100])
    res = friendly_mean(X, radius=7.0, rho=1.0, delta=1e-8, sample_size=3000, rng=11)
    assert res.core.reference_size < 4000
    assert res.core_mask[:6000].mean() > 0.99 and not res.core_mask[6000:].any()
    assert np.linalg.norm(res.estimate) < 0.2


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"radius": 0.0, "rho": 1.0}, "radius must be finite and > 0"),
        ({"radius": 1.0}, "exactly one of rho"),
        ({"radius": 1.0, "rho": 1.0, "epsilon": 1.0}, "exactly one of rho"),
        ({"radius": 1.0, "rho": -1.0}, "rho must be finite and > 0"),
        ({"radius": 1.0, "rho": 1.0, "split": "x"}, "split must be"),
    ],
)
def test_friendly_mean_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        friendly_mean(np.zeros((3000, 2)), delta=1e-8, **kwargs)


def test_friendly_mean_reports_failure_and_small_n():
    with pytest.raises(ValueError, match=r"declared n = 50 .* Need n >= \d+"):
        friendly_mean(np.zeros((50, 2)), radius=1.0, rho=1.0, delta=1e-8, n_public=50)
    small = friendly_mean(np.zeros((50, 2)), radius=1.0, rho=1.0, delta=1e-8, rng=0)
    assert small.failed and small.reason == FAILED_MESSAGE  # runs, returns ⊥, no refusal on n
    X = np.random.default_rng(0).normal(size=(3000, 2)) * 100
    # Far too small a radius: nobody has friends, the core is empty and FriendlyAvg returns ⊥.
    res = friendly_mean(X, radius=1e-6, rho=1.0, delta=1e-8, rng=0)
    assert res.failed and res.estimate is None and res.reason == FAILED_MESSAGE
    inf = np.zeros((3000, 2))
    inf[0, 0] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        friendly_mean(inf, radius=1.0, rho=1.0, delta=1e-8)
