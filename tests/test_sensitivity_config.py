"""Table 1 of Rubinstein & Aldà (2017): sampler_config against spec §3.7 and §7 claims 1-3, 10."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from scipy.special import lambertw

from dpcore.mechanisms.sensitivity.sampler import (
    gamma_min,
    rdp_gamma_under_shift,
    rho_for_gamma,
    rho_for_m,
    sampler_config,
    theorem15_holds,
)

# spec §3.7, row 1: gamma -> (rho*, m, k)
ROW1 = [
    (0.9, 0.226902, 2, 2),
    (0.75, 0.161345, 3, 3),
    (0.5, 0.0839682, 8, 8),
    (0.4, 0.0605177, 13, 13),
    (0.3, 0.0404589, 24, 24),
    (0.2, 0.023533, 61, 61),
    (0.15, 0.0162308, 116, 116),
    (0.1, 0.00974461, 285, 285),
    (0.075, 0.00683617, 537, 537),
    (0.05, 0.00418287, 1305, 1305),
    (0.025, 0.00183857, 5871, 5871),
    (0.02, 0.00141652, 9498, 9498),
    (0.01, 0.000636123, 41971, 41971),
    (0.005, 0.000289054, 183592, 183592),
    (0.001, 4.78595e-05, 5486187, 5486187),
]
# spec §3.7, rows 2/3: m -> (rho*, gamma_min(m))
ROW3 = [
    (10, 0.0682335, 0.434623),
    (50, 0.0261999, 0.21704),
    (100, 0.0175889, 0.159724),
    (500, 0.00710931, 0.0774396),
    (1000, 0.00484261, 0.0564677),
    (1500, 0.00387368, 0.0468991),
    (5000, 0.00200619, 0.0269291),
    (10000, 0.00137751, 0.0195262),
    (50000, 0.00057913, 0.00921278),
    (100000, 0.000399685, 0.00665462),
    (1000000, 0.000117533, 0.0022446),
]
# spec §3.7, row 2: (m, gamma) -> k
ROW2 = [
    (100, 0.2, 96),
    (100, 0.3, 86),
    (100, 0.5, 66),
    (1000, 0.1, 957),
    (1000, 0.2, 857),
    (1000, 0.5, 557),
    (1500, 0.05, 1496),
    (1500, 0.1, 1421),
    (10000, 0.02, 9996),
    (10000, 0.05, 9696),
    (10000, 0.1, 9196),
    (10000, 0.5, 5196),
    (50000, 0.01, 49961),
    (50000, 0.05, 47961),
]


@pytest.mark.parametrize(("gamma", "rho", "m", "k"), ROW1)
def test_row1_reference_values(gamma, rho, m, k):
    cfg = sampler_config(gamma=gamma)
    assert (cfg.m, cfg.k, cfg.mode) == (m, k, "min_m")
    assert cfg.rho == pytest.approx(rho, rel=1e-5)
    assert cfg.gamma == gamma
    assert theorem15_holds(cfg.m, cfg.k, cfg.gamma, cfg.rho)


@pytest.mark.parametrize(("m", "rho", "gmin"), ROW3)
def test_row3_reference_values(m, rho, gmin):
    cfg = sampler_config(m=m)
    assert (cfg.m, cfg.k, cfg.mode) == (m, m, "min_gamma")
    assert cfg.rho == pytest.approx(rho, rel=1e-5)
    assert cfg.gamma == pytest.approx(gmin, rel=1e-5)
    assert gamma_min(m) == cfg.gamma
    assert theorem15_holds(cfg.m, cfg.k, cfg.gamma, cfg.rho)


@pytest.mark.parametrize(("m", "gamma", "k"), ROW2)
def test_row2_reference_values(m, gamma, k):
    cfg = sampler_config(m=m, gamma=gamma)
    assert (cfg.m, cfg.k, cfg.gamma, cfg.mode) == (m, k, gamma, "min_k")
    assert theorem15_holds(cfg.m, cfg.k, cfg.gamma, cfg.rho)
    # k is the smallest valid index: one less breaks condition (2) of Theorem 15.
    assert not theorem15_holds(m, k - 1, gamma, cfg.rho)


def test_claim1_headline_values():
    # spec §7 claim 1 and the authors' R README ("m=285 gamma=0.1 k=285").
    got = [(sampler_config(gamma=g).m, sampler_config(gamma=g).k) for g in (0.5, 0.2, 0.1, 0.05)]
    assert got == [(8, 8), (61, 61), (285, 285), (1305, 1305)]
    assert sampler_config(gamma=0.33).m == 20
    assert [round(gamma_min(m), 5) for m in (100, 1000, 10_000)] == [0.15972, 0.05647, 0.01953]


@pytest.mark.parametrize("gamma", [0.5, 0.2, 0.1, 0.05, 0.01, 0.001])
def test_row1_rho_is_the_brute_force_minimiser(gamma):
    def m_of(rho):
        return math.log(1 / rho) / (2 * (gamma - rho) ** 2)

    res = minimize_scalar(
        m_of, bounds=(1e-12, gamma * (1 - 1e-9)), method="bounded", options={"xatol": 1e-14}
    )
    assert rho_for_gamma(gamma) == pytest.approx(res.x, rel=1e-7)


@pytest.mark.parametrize("m", [10, 100, 1000, 10**4, 10**6])
def test_row23_rho_is_the_brute_force_minimiser(m):
    def k_tilde(rho):
        return rho + math.sqrt(math.log(1 / rho) / (2 * m))

    res = minimize_scalar(k_tilde, bounds=(1e-12, 0.5), method="bounded", options={"xatol": 1e-14})
    assert rho_for_m(m) == pytest.approx(res.x, rel=1e-7)


def test_wrong_branch_of_public_python_port_differs():
    # Sherpa.ai's port takes lambertw(., 1).real (branch 1); that gives m = 292, not 285, at
    # gamma = 0.1 (spec prior_art §6). Branch 0 gives an infeasible rho > 1/2 (App. B.1).
    gamma = 0.1
    z = -gamma / (2 * math.sqrt(math.e))
    rho_bad = math.exp(lambertw(z, 1).real + 0.5)
    m_bad = math.ceil(math.log(1 / rho_bad) / (2 * (gamma - rho_bad) ** 2))
    assert m_bad == 292
    assert sampler_config(gamma=gamma).m == 285
    assert math.exp(lambertw(z, 0).real + 0.5) > 0.5


@given(st.floats(min_value=1e-3, max_value=0.99))
@settings(max_examples=200, deadline=None)
def test_row1_satisfies_theorem15_and_k_equals_m(gamma):
    cfg = sampler_config(gamma=gamma)
    assert 0 < cfg.rho < min(gamma, 0.5)
    assert theorem15_holds(cfg.m, cfg.k, cfg.gamma, cfg.rho)
    assert cfg.k == cfg.m  # claim 3: row 1 => Δ̂ is the sample maximum
    # minimality: one pair fewer makes gamma unreachable for any rho
    if cfg.m > 1:
        assert gamma_min(cfg.m - 1) > gamma


@given(st.integers(min_value=8, max_value=10**7), st.floats(min_value=0.0, max_value=1.0))
@settings(max_examples=200, deadline=None)
def test_row2_satisfies_theorem15(m, u):
    gmin = gamma_min(m)
    gamma = gmin + u * (0.999 - gmin)
    cfg = sampler_config(m=m, gamma=gamma)
    assert 1 <= cfg.k <= m
    assert theorem15_holds(cfg.m, cfg.k, cfg.gamma, cfg.rho)
    # closed form of spec §3.4: k = ceil(m (1 - gamma + gamma_min(m)))
    assert abs(cfg.k - m * (1 - gamma + gmin)) < 1 + 1e-6


@given(st.integers(min_value=2, max_value=10**7))
@settings(max_examples=200, deadline=None)
def test_row3_satisfies_theorem15(m):
    cfg = sampler_config(m=m)
    assert cfg.k == m
    assert theorem15_holds(cfg.m, cfg.k, cfg.gamma, cfg.rho)


def test_monotonicity_figures_2_and_3():
    gammas = np.geomspace(0.005, 0.9, 60)
    ms = [sampler_config(gamma=g).m for g in gammas]
    assert all(a >= b for a, b in itertools.pairwise(ms))  # Fig 2: m decreasing in gamma
    # m ~ log(1/gamma)/gamma^2 for small gamma: the factor decreases slowly to 1/2 (spec §3.8)
    small = gammas <= 0.1
    ratio = np.array(ms)[small] * gammas[small] ** 2 / np.log(1 / gammas[small])
    assert np.all((ratio > 0.5) & (ratio < 1.3))
    assert np.all(np.diff(ratio) > 0)
    gm = [gamma_min(m) for m in np.unique(np.geomspace(2, 1e6, 60).astype(int))]
    assert all(a > b for a, b in itertools.pairwise(gm))
    for m in (100, 1000, 10_000):  # Fig 3: k/m is a line of slope -1 from (gamma_min, 1)
        g = np.linspace(gamma_min(m), 0.9, 25)
        km = np.array([sampler_config(m=m, gamma=x).k for x in g]) / m
        slope = np.polyfit(g, km, 1)[0]
        assert slope == pytest.approx(-1.0, abs=2.0 / m / (g[-1] - g[0]) + 1e-3)
        assert km[0] == 1.0


@pytest.mark.parametrize("u", [1e-6, 1e-3, 0.1, 1.0, 5.0, 50.0])
def test_footnote2_lambert_bounds(u):
    w = lambertw(-math.exp(-u - 1), -1).real
    assert -1 - math.sqrt(2 * u) - u < w < -1 - math.sqrt(2 * u) - 2 * u / 3


def test_manual_mode_gives_smallest_gamma_for_k():
    cfg = sampler_config(m=1000, k=957)
    assert cfg.mode == "manual"
    assert theorem15_holds(1000, 957, cfg.gamma, cfg.rho)
    assert cfg.gamma == pytest.approx(1 - 0.957 + gamma_min(1000), rel=1e-9)
    assert sampler_config(m=1000, k=1000).gamma == pytest.approx(gamma_min(1000))
    assert sampler_config(m=1000, k=957, gamma=0.1).k == 957
    with pytest.raises(ValueError, match=r"k >= 957"):
        sampler_config(m=1000, k=956, gamma=0.1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"m": 1000, "gamma": 0.01}, r"gamma_min=0\.0564677"),
        ({"m": 1000, "gamma": 0.01}, r"m >= 41971"),
        ({"gamma": 0.0}, r"strictly between 0 and 1"),
        ({"gamma": 1.0}, r"strictly between 0 and 1"),
        ({"gamma": -0.2}, r"gamma=-0\.2"),
        ({"gamma": float("nan")}, r"strictly between"),
        ({"gamma": "x"}, r"number in \(0, 1\)"),
        ({"m": 0}, r"m must be an integer >= 1"),
        ({"m": 2.5}, r"m must be an integer"),
        ({"m": True}, r"m must be an integer"),
        ({"m": 1}, r"too few"),
        ({}, r"give gamma"),
        ({"gamma": 0.1, "k": 5}, r"needs m"),
        ({"m": 10, "k": 11}, r"1 <= k <= m"),
        ({"m": 10, "k": 0}, r"k must be an integer >= 1"),
        ({"m": 100, "k": 5}, r"no valid confidence"),
        ({"m": 1000, "k": 1000, "gamma": 0.05}, r"gamma_min=0\.0564677"),
    ],
)
def test_infeasible_requests_are_explained(kwargs, message):
    with pytest.raises(ValueError, match=message):
        sampler_config(**kwargs)


def test_config_is_serialisable_and_readable():
    cfg = sampler_config(gamma=0.1)
    assert cfg.as_dict() == {"m": 285, "k": 285, "gamma": 0.1, "rho": cfg.rho, "mode": "min_m"}
    assert str(cfg) == "SamplerConfig(m=285, k=285, gamma=0.1, rho=0.00974461, mode='min_m')"
    assert cfg.quantile_level <= 1.0 + 1e-12


def test_distribution_shift_proposition8():
    assert rdp_gamma_under_shift(0.05, 999, 0.0) == 0.05
    assert rdp_gamma_under_shift(0.05, 999, 2e-6) == pytest.approx(0.05 + math.sqrt(1000e-6))
    with pytest.raises(ValueError):
        rdp_gamma_under_shift(0.05, 10, -1.0)


@given(st.integers(min_value=2, max_value=10**6), st.floats(min_value=0.0, max_value=1.0))
@settings(max_examples=200, deadline=None)
def test_manual_mode_returns_the_smallest_valid_gamma(m, u):
    k = max(1, min(m, round(m * (1 - u))))
    try:
        cfg = sampler_config(m=m, k=k)
    except ValueError as exc:  # only when no gamma < 1 works for this k
        assert "no valid confidence" in str(exc)
        assert 1 - k / m + gamma_min(m) >= 1
        return
    assert theorem15_holds(m, k, cfg.gamma, cfg.rho)
    assert not theorem15_holds(m, k, cfg.gamma * (1 - 1e-6), cfg.rho)
    assert cfg.gamma >= gamma_min(m) * (1 - 1e-12)
