"""The tight accountant (dpcore.privacy.accountant): every path is compared with a correct bound.

"Correct bound" means an exact privacy profile of a mechanism that meets the claim (k-fold
randomized response for ε-DP parts, the Gaussian mechanism for ρ-zCDP, the Laplace mechanism),
or the PLD accountant with optimistic rounding, which under-estimates the true ε. A sound
accountant never charges less; the tests also check it beats basic composition where it should.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, special, stats

from dpcore.privacy.accountant import (
    ORDERS,
    FilterPlan,
    convert_rdp,
    lower_bound_epsilon,
    pld_epsilon,
    rdp_epsilon,
    rdp_of,
)

pytestmark = pytest.mark.filterwarnings("ignore")


def exact_rr_delta(eps: float, k: int, eps_total: float) -> float:
    """Exact δ(ε_total) of k-fold binary randomized response RR(ε): the privacy loss is
    ε(k − 2j) with j ~ Binomial(k, 1/(1 + e^ε)) flips (Kairouz, Oh & Viswanath 2015)."""
    q = 1.0 / (1.0 + math.exp(eps))
    j = np.arange(k + 1)
    logp = (special.gammaln(k + 1) - special.gammaln(j + 1) - special.gammaln(k - j + 1)
            + j * math.log(q) + (k - j) * math.log1p(-q))
    loss = eps * (k - 2 * j)
    return float(np.sum(np.exp(logp) * np.clip(1.0 - np.exp(eps_total - loss), 0.0, None)))


def exact_rr_epsilon(eps: float, k: int, delta: float) -> float:
    if exact_rr_delta(eps, k, 0.0) <= delta:
        return 0.0
    return optimize.brentq(lambda e: exact_rr_delta(eps, k, e) - delta, 0.0, k * eps + 1e-9)


def gaussian_delta(mu: float, eps: float) -> float:
    """Exact δ(ε) of the Gaussian mechanism with sensitivity/σ = μ (Balle & Wang 2018)."""
    return float(stats.norm.cdf(-eps / mu + mu / 2) - math.exp(eps) * stats.norm.cdf(
        -eps / mu - mu / 2))


def gaussian_epsilon(mu: float, delta: float) -> float:
    return optimize.brentq(lambda e: gaussian_delta(mu, e) - delta, 0.0, 100.0)


# ---- the Rényi curves dp-accounting gives us are the right ones --------------------------------


@pytest.mark.parametrize("eps", [0.01, 0.3, 2.0])
def test_rr_curve_is_binary_randomized_response(eps):
    p = math.exp(eps) / (1 + math.exp(eps))
    for a in (1.5, 4.0, 32.0):
        want = math.log(p**a * (1 - p) ** (1 - a) + (1 - p) ** a * p ** (1 - a)) / (a - 1)
        got, _ = rdp_of([("rr", eps, 0.0)], [a])
        assert got[0] == pytest.approx(want, rel=1e-9)
        assert got[0] <= min(eps, a * eps**2 / 2) + 1e-12  # never above ε or αε²/2


def test_conversion_matches_dp_accounting():
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    for r, a, d in [(0.3, 8.0, 1e-6), (2.0, 3.0, 1e-5), (0.01, 64.0, 1e-9)]:
        eps, _ = rdp.compute_epsilon([a], [r], d)
        assert convert_rdp(r, a, d) == pytest.approx(eps, rel=1e-9)


# ---- each accountant path against a correct bound ------------------------------------------------


@pytest.mark.parametrize("eps, k", [(0.05, 100), (0.2, 30), (1.0, 5)])
def test_filter_on_pure_parts_never_below_exact_composition(eps, k):
    """Pure parts (RR atoms): the filter's ε must hold at the δ of the order that gave it."""
    plan = FilterPlan.for_budget(100.0, 1e-5)
    res = plan.evaluate([("rr", eps, 0.0)] * k)
    share = plan.delta_conv / len(plan.orders)
    assert exact_rr_delta(eps, k, res.epsilon) <= share * (1 + 1e-6)
    assert res.epsilon >= exact_rr_epsilon(eps, k, plan.delta)  # and at the full δ
    assert res.epsilon <= eps * k + 1e-12  # the pure filter: never above basic composition
    if k >= 30:
        assert res.member == "renyi" and res.epsilon < eps * k


@pytest.mark.parametrize("rhos", [[0.5], [0.01] * 50, [0.2, 0.05, 0.3]])
def test_filter_on_zcdp_parts_never_below_the_gaussian(rhos):
    """ρ-zCDP parts: the Gaussian mechanism with μ² = 2ρ is ρ-zCDP, so its exact ε is a floor."""
    plan = FilterPlan.for_budget(100.0, 1e-5)
    res = plan.evaluate([("zcdp", r, 0.0) for r in rhos])
    mu = math.sqrt(2 * sum(rhos))
    assert gaussian_delta(mu, res.epsilon) <= plan.delta_conv / len(plan.orders) * (1 + 1e-6)


@pytest.mark.parametrize("zs", [[1.0], [4.0] * 20, [2.0, 8.0, 0.8]])
def test_filter_on_gaussian_parts_never_below_exact(zs):
    plan = FilterPlan.for_budget(100.0, 1e-6)
    res = plan.evaluate([("gaussian", z) for z in zs])
    mu = math.sqrt(sum(1 / z**2 for z in zs))
    assert gaussian_delta(mu, res.epsilon) <= plan.delta_conv / len(plan.orders) * (1 + 1e-6)
    assert res.epsilon >= gaussian_epsilon(mu, plan.delta)


@pytest.mark.parametrize("eps, k", [(0.1, 40), (1.0, 3)])
def test_filter_on_laplace_parts_never_below_optimistic_pld(eps, k):
    plan = FilterPlan.for_budget(100.0, 1e-6)
    atoms = [("laplace", eps)] * k
    res = plan.evaluate(atoms)
    assert res.epsilon >= lower_bound_epsilon(atoms, plan.delta, interval=1e-4)
    # the exact Laplace curve is tighter than the RR curve of the same ε
    assert res.epsilon <= plan.evaluate([("rr", eps, 0.0)] * k).epsilon + 1e-12


def test_approximate_parts_use_the_delta_share_and_stay_above_the_floor():
    plan = FilterPlan.for_budget(100.0, 1e-5)
    atoms = [("rr", 0.1, 1e-7)] * 50
    res = plan.evaluate(atoms)
    assert res.delta_parts == pytest.approx(5e-6) and res.delta <= plan.delta
    # RR(0.1) without its δ meets the claim: its exact 50-fold ε at δ_B is a floor
    assert res.epsilon >= exact_rr_epsilon(0.1, 50, plan.delta)
    # more δ than the parts' share (90 % of δ_B): the filter refuses whatever ε
    assert math.isinf(plan.evaluate([("rr", 0.1, 1e-6)] * 10).epsilon)


def test_pure_member_keeps_basic_composition_for_coarse_spends():
    plan = FilterPlan.for_budget(1.0, 1e-6)
    res = plan.evaluate([("rr", 1.0, 0.0)])
    assert (res.epsilon, res.delta, res.member) == (1.0, 0.0, "pure")
    assert plan.within([("rr", 1.0, 0.0)]) and not plan.within([("rr", 1.0001, 0.0)])
    # with a zCDP part the pure filter cannot hold: only the Rényi filters do
    assert plan.evaluate([("rr", 0.5, 0.0), ("zcdp", 0.01, 0.0)]).member == "renyi"


def test_plan_is_fixed_by_the_budget_and_round_trips():
    plan = FilterPlan.for_budget(3.0, 1e-6)
    assert plan.orders == ORDERS and plan.delta_conv == pytest.approx(1e-7)
    assert FilterPlan.from_dict(plan.as_dict()) == plan
    with pytest.raises(ValueError):
        FilterPlan.for_budget(3.0, 0.0)


# ---- the reported (non-adaptive) accountants -----------------------------------------------------


def test_reported_accountants_never_below_the_floor_and_beat_basic():
    atoms = [("rr", 0.05, 0.0)] * 60 + [("zcdp", 0.02, 1e-7), ("laplace", 0.1)]
    floor = lower_bound_epsilon(atoms, 1e-5, interval=1e-4)
    basic_like = 0.05 * 60 + 0.1 + 0.02 + 2 * math.sqrt(0.02 * math.log(1 / 9e-6))
    for value in (rdp_epsilon(atoms, 1e-5), pld_epsilon(atoms, 1e-5),
                  FilterPlan.for_budget(10.0, 1e-5).evaluate(atoms).epsilon):
        assert floor <= value < basic_like


def test_rdp_epsilon_matches_exact_rr_closely():
    exact = exact_rr_epsilon(0.05, 200, 1e-6)
    got = rdp_epsilon([("rr", 0.05, 0.0)] * 200, 1e-6)
    assert exact <= got <= 1.3 * exact
