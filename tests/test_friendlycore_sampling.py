"""Poisson subsampling in front of FC_Avg (issue 12, defect 3)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.mechanisms.friendlycore import (
    amplified,
    friendly_mean,
    inner_budget,
    poisson_rate,
    poisson_rows,
)
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import ApproxDP
from dpcore.privacy.noise import add_laplace


@pytest.mark.parametrize(("eps", "delta", "q"), [(1.0, 1e-6, 0.2), (0.3, 1e-8, 0.9)])
def test_inner_budget_inverts_the_amplification(eps, delta, q):
    eps_in, delta_in = inner_budget(eps, delta, q)
    assert eps_in > eps and delta_in == pytest.approx(delta / q)
    back = amplified(eps_in, delta_in, q)
    assert back.epsilon == pytest.approx(eps) and back.delta == pytest.approx(delta)


def test_poisson_rows_are_independent_bernoulli_at_the_public_rate():
    q = poisson_rate(3000, 20_000)
    assert q == pytest.approx(0.15)
    sizes = [poisson_rows(20_000, q, rng=s).size for s in range(50)]
    sd = math.sqrt(20_000 * q * (1 - q))
    assert abs(np.mean(sizes) - 3000) < 4 * sd / math.sqrt(50)
    assert np.std(sizes) > 0.5 * sd  # not a fixed-size sample
    assert poisson_rate(5000, 3000) == 1.0


def test_friendly_mean_on_a_poisson_sample_charges_the_requested_epsilon():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20_000, 2)) * 0.1
    q = poisson_rate(8000, X.shape[0])
    sample = X[poisson_rows(X.shape[0], q, rng=1)]
    res = friendly_mean(sample, radius=1.0, epsilon=1.0, delta=1e-6, sample_rate=q, rng=2)
    assert res.guarantee == ApproxDP(1.0, 1e-6)
    steps = dict(res.budget)
    assert any(name.startswith("Poisson subsampling") for name in steps)
    assert not res.failed and np.linalg.norm(res.estimate) < 0.05
    with pytest.raises(ValueError, match="sample_rate needs an epsilon"):
        friendly_mean(sample, radius=1.0, rho=0.1, delta=1e-6, sample_rate=q)
    with pytest.raises(ValueError, match="sample_rate must be in"):
        friendly_mean(sample, radius=1.0, epsilon=1.0, delta=1e-6, sample_rate=1.5)


def _sampled_count(eps_in: float, q: float):
    def sample(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
        kept = rng.binomial(n, q, size=size).astype(float)  # |Poisson sample| of n rows
        return add_laplace(kept, 1.0 / eps_in, sensitivity=1.0, rng=rng)

    return sample


def test_amplification_audit_on_a_counting_query():
    # The accounting the page now relies on: (ε_in)-DP on the sample is ε-DP on the data.
    eps, q = 1.0, 0.2
    eps_in, _ = inner_budget(eps, 1e-9, q)
    res = audit_epsilon(_sampled_count(eps_in, q), 1000, 1001, n_samples=40_000, rng=3)
    assert res.epsilon_lower <= eps
    # ...and the inner ε alone (no amplification credit, q = 1) is caught above ε
    res1 = audit_epsilon(_sampled_count(eps_in, 1.0), 1000, 1001, n_samples=40_000, rng=4)
    assert res1.epsilon_lower > eps
