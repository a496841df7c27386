"""The audit harness passes correct mechanisms at their ε and flags broken ones.

Broken variants live only here: Laplace with half the needed scale (true ε is 2× the claim)
and the papers' public-code L2 sampler with an Exponential radius, whose density ratio is
unbounded near the origin for d ≥ 2.
"""

import numpy as np
import pytest

from dpcore.privacy.audit import audit_epsilon, clopper_pearson, repeat
from dpcore.privacy.noise import laplace, sample_l2_exponential

EPS = 1.0


def laplace_count(scale):
    return lambda count, size, rng: count + laplace(scale, size, rng=rng)


def l2_mechanism(dim, *, exponential_radius=False):
    def sample(x, size, rng):
        if exponential_radius:  # what the papers' code does: WRONG for dim >= 2
            u = rng.standard_normal((size, dim))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            return x + u * rng.exponential(1.0 / EPS, (size, 1))
        return x + sample_l2_exponential(1.0 / EPS, dim, size, rng=rng)

    return sample


def norm(y):
    return np.linalg.norm(y, axis=1)


def neighbours(dim):
    x0, x1 = np.zeros(dim), np.zeros(dim)
    x1[0] = 1.0  # ℓ2 sensitivity 1
    return x0, x1


def test_correct_laplace_passes_and_is_nearly_tight():
    result = audit_epsilon(laplace_count(1.0 / EPS), 0.0, 1.0, rng=11)
    assert result.consistent_with(EPS)
    assert result.epsilon_lower > 0.8  # the audit has power: it nearly reaches the true ε


def test_half_scale_laplace_is_flagged():
    result = audit_epsilon(laplace_count(0.5 / EPS), 0.0, 1.0, rng=12)
    assert not result.consistent_with(EPS)
    assert result.epsilon_lower > 1.5


@pytest.mark.parametrize("dim", [2, 10])
def test_correct_l2_exponential_passes(dim):
    x0, x1 = neighbours(dim)
    for stat in (norm, lambda y: y[:, 0]):
        assert audit_epsilon(l2_mechanism(dim), x0, x1, statistic=stat, rng=13).consistent_with(EPS)


@pytest.mark.parametrize("dim", [2, 10, 100])
def test_exponential_radius_variant_is_flagged(dim):
    x0, x1 = neighbours(dim)
    result = audit_epsilon(
        l2_mechanism(dim, exponential_radius=True), x0, x1, statistic=norm, rng=14
    )
    assert not result.consistent_with(EPS)
    assert result.epsilon_lower > 3


def test_repeat_wraps_one_draw_mechanisms():
    sample = repeat(lambda x, rng: x + rng.laplace(0, 1.0))
    out = sample(0.0, 500, np.random.default_rng(0))
    assert out.shape == (500,)
    result = audit_epsilon(sample, 0.0, 1.0, n_samples=2000, rng=1)
    assert result.consistent_with(EPS)
    assert "ε ≥" in str(result)


def test_clopper_pearson_edges_and_coverage():
    lo, up = clopper_pearson(np.array([0, 10]), 10, 0.05)
    assert lo[0] == 0.0 and up[1] == 1.0
    # coverage: the 95% interval contains p in about 95% or more of binomial draws
    rng = np.random.default_rng(2)
    k = rng.binomial(50, 0.3, 4000)
    lo, up = clopper_pearson(k, 50, 0.05)
    assert np.mean((lo <= 0.3) & (0.3 <= up)) >= 0.94


def test_bad_arguments():
    with pytest.raises(ValueError, match="n_samples"):
        audit_epsilon(laplace_count(1.0), 0.0, 1.0, n_samples=10, rng=0)
    with pytest.raises(ValueError, match="one scalar per draw"):
        audit_epsilon(laplace_count(1.0), 0.0, 1.0, n_samples=200, statistic=lambda s: s[:5], rng=0)
