"""FriendlyCore k-means' one rule for parts and refusal (planning.py), the work bound, and the
paper's LSH backup on a reserved, exactly composed share (issues 23.5, 24.2, 25.1)."""

from __future__ import annotations

import re
import time
import warnings

import numpy as np
import pytest

from dpcore.mechanisms.baselines.lsh_clustering import _zcdp_rho, lsh_noise_parameters
from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans
from dpcore.mechanisms.friendlycore.fallback import run_fallback
from dpcore.mechanisms.friendlycore.planning import (
    MAX_PARTS,
    fc_budgets,
    kmeans_plan,
    mean_rows_needed,
    parts_needed,
    suggest,
)
from dpcore.privacy.guarantees import ZCDP, zcdp_to_epsilon


@pytest.mark.parametrize("k, eps", [(10, 3.0), (3, 5.0), (5, 10.0)])
def test_plan_refusal_and_message_are_one_rule(k, eps):
    """The page's rows, the estimator's refusal and its message agree (the Letter bug: the page
    said 18,690 rows, the estimator refused at 20,000 and its message said n ≥ need·k)."""
    delta = 1e-6
    need = parts_needed(fc_budgets(epsilon=eps, delta=delta))
    ok = kmeans_plan(need * 2 * k, k, epsilon=eps, delta=delta)
    short = kmeans_plan(need * 2 * k - 1, k, epsilon=eps, delta=delta)
    assert ok.feasible and ok.t_needed == need and ok.rows_needed == need * 2 * k
    assert not short.feasible and f"{need * 2 * k:,} rows" in short.message
    X = np.zeros((4 * k, 2))
    with pytest.raises(ValueError) as info:
        FriendlyCoreKMeans(k, epsilon=eps, delta=delta, radius=1.0, t=need - 1,
                           fallback="dplloyd").fit(X)
    rows = re.search(r"n ≥ ([\d,]+) rows", str(info.value)).group(1)
    assert rows == f"{ok.rows_needed:,}"
    # the planned t itself is accepted (refused = ValueError before any work; here it runs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        km = FriendlyCoreKMeans(k, epsilon=eps, delta=delta, radius=1.0, t=ok.t,
                                fallback="dplloyd", rng=0).fit(np.zeros((ok.rows_needed, 2)))
    assert km.cluster_centers_ is not None


def test_plan_suggestions_work_and_are_the_smallest():
    n, k, delta = 32_847, 5, 1e-6
    plan = kmeans_plan(n, k, epsilon=1.0, delta=delta)
    assert not plan.feasible and plan.epsilon_needed is not None
    assert kmeans_plan(n, k, epsilon=plan.epsilon_needed, delta=delta).feasible
    below = [e for e in (1.5, 2.0, 3.0, 5.0, 7.0) if e < plan.epsilon_needed]
    assert all(not kmeans_plan(n, k, epsilon=e, delta=delta).feasible for e in below)
    s = suggest(n, k, epsilon=1.0, delta=delta)
    assert s.clustering_ok and s.plan.feasible and s.epsilon >= plan.epsilon_needed
    assert n // s.plan.t >= 10 * k and mean_rows_needed(s.epsilon, delta) <= n
    assert f"ε = {s.epsilon:g}" in s.reason and s.reason.count(". ") == 0  # one sentence
    tiny = suggest(150, 5, epsilon=1.0, delta=delta)  # iris: the mean only, at a larger ε
    assert not tiny.clustering_ok and mean_rows_needed(tiny.epsilon, delta) <= 150
    assert suggest(150, 5, epsilon=1.0, delta=delta, mean_rows=10).epsilon is None
    assert suggest(n, k, epsilon=s.epsilon, delta=delta).epsilon == s.epsilon  # kept when fine


def test_work_is_bounded_before_reading_the_data():
    """t = 10⁷ on 1,000 rows ran > 90 s (issue 23): now a clear refusal from the public t."""
    start = time.perf_counter()
    with pytest.raises(ValueError, match=f"from 1 to {MAX_PARTS:,}: FriendlyCore"):
        FriendlyCoreKMeans(3, epsilon=1.0, radius=1.0, t=10**7).fit(np.zeros((1000, 2)))
    assert time.perf_counter() - start < 1.0
    assert kmeans_plan(10**9, 5, epsilon=20.0, delta=1e-6).t <= MAX_PARTS


def test_lsh_backup_spends_exactly_the_reserved_share():
    """fallback="lsh": LSH's own zCDP ρ(α) equals the reserved ρ (not more: privacy; not much
    less: utility), and the fit's budget composes to the requested total. Catches passing the
    paper's pure ε = √(2ρ) to our (ε, δ)-calibrated LSH (its ρ(α) would then differ)."""
    for rho in (0.01, 0.3):
        centers, spent = run_fallback("lsh", np.random.default_rng(0).normal(size=(500, 2)), 3,
                                      rho, radius=4.0, n_iter=5, rng=np.random.default_rng(1))
        eps_conv = zcdp_to_epsilon(rho, 1e-6)
        alpha, _ = lsh_noise_parameters(eps_conv, 1e-6, 20)
        assert _zcdp_rho(alpha, 21) <= rho <= _zcdp_rho(alpha, 21) * (1 + 1e-6)
        assert spent == ZCDP(rho) and centers.shape[1] == 2
    # a data set whose parts never agree (uniform noise, tiny parts): FriendlyCore fails
    X = np.random.default_rng(2).uniform(-1, 1, size=(3000, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        km = FriendlyCoreKMeans(6, rho=4.0, delta=1e-8, radius=1.5, t=300, fallback="lsh",
                                rng=3).fit(X)
    assert km.failed_ and km.used_fallback_ and km.cluster_centers_ is not None
    budget = dict(km.budget_)
    assert budget["fallback LSH clustering (reserved)"].rho == pytest.approx(0.04)
    assert km.total_budget_.rho == pytest.approx(4.0)
    assert km.privacy_ == ZCDP(4.0, 1e-8)
