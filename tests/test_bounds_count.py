"""dpcore.mechanisms.bounds.private_row_count: Laplace(1/ε) around n, an honest interval, its
guarantee."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from dpcore.mechanisms.bounds import private_row_count
from dpcore.privacy.audit import audit_epsilon, repeat
from dpcore.privacy.guarantees import PureDP


def test_noise_is_laplace_with_scale_one_over_epsilon():
    gen = np.random.default_rng(1)
    eps = 0.5
    draws = np.array([private_row_count(10_000, epsilon=eps, rng=gen).value for _ in range(4000)])
    # rounding to integers: compare with the rounded Laplace(1/ε) CDF at half-integers
    res = stats.kstest(draws - 10_000 + 0.5 * gen.uniform(-1, 1, draws.size),
                       stats.laplace(scale=1 / eps).cdf)
    assert res.pvalue > 1e-3
    # a 1/(2ε) scale (a plausible "sensitivity 1/2" bug) is rejected by the same test
    wrong = stats.kstest(draws - 10_000 + 0.5 * gen.uniform(-1, 1, draws.size),
                         stats.laplace(scale=1 / (2 * eps)).cdf)
    assert wrong.pvalue < 1e-6


def test_interval_covers_at_its_stated_rate_and_guarantee_is_epsilon():
    gen = np.random.default_rng(2)
    out = [private_row_count(500, epsilon=0.2, confidence=0.9, rng=gen) for _ in range(3000)]
    cover = np.mean([abs(o.value - 500) <= o.half_width + 0.5 for o in out])
    assert 0.88 <= cover <= 0.93
    assert out[0].privacy_ == PureDP(0.2)


def test_audit_stays_under_the_claim():
    sample = repeat(lambda n, g: private_row_count(n, epsilon=1.0, rng=g).value)
    assert audit_epsilon(sample, 100, 101, n_samples=20_000, rng=3).epsilon_lower <= 1.0
    # the same audit flags a copy with half the noise (ε = 2 in truth)
    half = repeat(lambda n, g: private_row_count(n, epsilon=2.0, rng=g).value)
    assert audit_epsilon(half, 100, 101, n_samples=20_000, rng=3).epsilon_lower > 1.0


@pytest.mark.parametrize(
    "kw", [{"epsilon": 0}, {"epsilon": float("inf")}, {"epsilon": 1, "confidence": 1}]
)
def test_bad_parameters_are_refused(kw):
    with pytest.raises(ValueError):
        private_row_count(10, **kw)
