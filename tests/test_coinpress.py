"""CoinPress and Gaussian-mechanism baselines (spec coinpress.md)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.mechanisms.baselines.coinpress import (
    coinpress_mean,
    coinpress_schedule,
    coinpress_split,
    gaussian_mean,
    gaussian_norm_tail,
)
from dpcore.privacy.guarantees import ZCDP


def test_gamma_and_split_match_spec():
    for d, g in [(1, 3.8082), (50, 9.4636), (1000, 33.8369)]:
        assert gaussian_norm_tail(d, 0.01) == pytest.approx(g, abs=1e-4)
    np.testing.assert_allclose(coinpress_split(1.0, 4), [1 / 12] * 3 + [0.75])
    np.testing.assert_allclose(coinpress_split(1.0, 1), [1.0])
    assert coinpress_split(1.0, 40).sum() == pytest.approx(1.0)


def test_schedule_matches_spec_worked_examples():
    # spec §2.7: d=50, n=1000, R=10√50, ρ=0.5, t=2
    s = coinpress_schedule(1000, 50, 10 * math.sqrt(50), coinpress_split(0.5, 2))
    np.testing.assert_allclose(
        s, [(74.2551, 0.297020, 2.82676), (10.7009, 0.0247127, 0.379808)], rtol=1e-5
    )
    # spec §5.2: d=1000, n=800, ρ=1, R=1e7
    s4 = coinpress_schedule(800, 1000, 1e7, coinpress_split(1.0, 4))
    np.testing.assert_allclose([x[2] for x in s4], [2.072e6, 4.294e5, 8.897e4, 6145], rtol=1e-3)
    s20 = coinpress_schedule(800, 1000, 1e7, coinpress_split(1.0, 20))
    assert s20[-2][2] == pytest.approx(50.15, abs=0.01)
    assert s20[-1][1] == pytest.approx(0.12847, rel=1e-4)


def test_coinpress_error_matches_repository_results():
    # Repository id 1, n = 1000, d = 50, ρ = 0.5, t = 2: trimmed mean 0.2806 over 100 trials.
    # Trial errors have sd ≈ 0.02, so the trimmed mean of 100 has sd ≈ 0.002; 0.012 = 6 sd.
    rng = np.random.default_rng(0)
    errs = [
        np.linalg.norm(coinpress_mean(rng.normal(size=(1000, 50)), rho=0.5,
                                      radius=10 * math.sqrt(50), n_iter=2, rng=rng).estimate)
        for _ in range(100)
    ]
    assert stats.trim_mean(errs, 0.1) == pytest.approx(0.2806, abs=0.012)


def test_coinpress_noise_and_projection():
    # All points inside the first clip ball: the first release is mean + N(0, σ₁²) exactly.
    # KS on 6000 standardised values: a σ off by 5 % (e.g. ρ_i or the 2C/n sensitivity
    # mis-scaled) shifts the CDF by ≈ 0.02 > the 1 % critical value 1.63/√6000 ≈ 0.021 — borderline
    # for 5 %, certain for the factor-2 (sensitivity C/n) and √2 (ρ vs 2ρ) bugs.
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4)) * 0.1 + 3.0
    zs = []
    for s in range(1500):
        res = coinpress_mean(X, rho=0.5, radius=20.0, n_iter=1, rng=s)
        zs.append((res.estimate - X.mean(0)) / res.sigmas[0])
    assert stats.kstest(np.ravel(zs), "norm").pvalue > 0.01
    assert res.guarantee == ZCDP(0.5)
    fresh = coinpress_mean(X, rho=0.5, radius=20.0, n_iter=3, projection="fresh", rng=0)
    assert fresh.centers.shape == (3, 4) and fresh.radii.shape == (3,)


def test_gaussian_mean_clips_and_calibrates():
    X = np.array([[100.0, 0.0], [-100.0, 0.0], [0.0, 0.5]])
    est = [gaussian_mean(X, rho=2.0, radius=1.0, rng=s) for s in range(3000)]
    sig = est[0].sigmas[0]
    assert sig == pytest.approx((2 / 3) / math.sqrt(4.0))
    mean = np.mean([e.estimate for e in est], axis=0)
    np.testing.assert_allclose(mean, [0.0, 0.5 / 3], atol=4 * sig / math.sqrt(3000))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"rho": 0.0, "radius": 1.0}, "rho must be finite and > 0"),
        ({"rho": 1.0, "radius": -2.0}, "radius must be finite and > 0"),
        ({"rho": 1.0, "radius": 1.0, "n_iter": 0}, r"n_iter must be (an integer )?>= 1"),
        ({"rho": 1.0, "radius": 1.0, "projection": "x"}, "projection must be"),
        ({"rho": 1.0, "radius": 1.0, "rhos": [0.1, 0.1]}, "must sum to rho"),
    ],
)
def test_coinpress_bad_input(kwargs, match):
    with pytest.raises(ValueError, match=match):
        coinpress_mean(np.zeros((10, 2)), **kwargs)
    with pytest.raises(ValueError, match="NaN or infinite"):
        gaussian_mean(np.full((3, 2), np.nan), rho=1.0, radius=1.0)
