"""Tests written from the survivors of Sample-Then-Respond (``response.sample_then_respond``).

mutmut skipped the function while it carried ``@declare(...)``; ``tools/mutate.py`` now applies
the decorator by assignment, so it is mutated again, and these are what its tests let through.
Each test names the mutants it kills (``<function>:<n>`` of the run in docs/testing.md).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.mechanisms.sensitivity.config import sampler_config
from dpcore.mechanisms.sensitivity.response import sample_then_respond

X = np.random.default_rng(0).uniform(size=(50, 1))


def _oracle(size, rng):
    return rng.uniform(size=(size, 1))


class _Counting:
    """A statistic that counts its calls (the private data set included)."""

    def __init__(self):
        self.calls = 0

    def __call__(self, d):
        self.calls += 1
        return float(np.mean(d))


@pytest.mark.parametrize("delta", [0.0, 1.0, 1.5])
def test_a_gaussian_release_with_a_bad_delta_is_refused_before_anything_runs(delta):
    """sample_then_respond:31/32/33: the Gaussian δ ∈ (0, 1) is checked up front; with the
    bound weakened, δ = 0 or 1 went on to sample m pairs and to evaluate f on the private data
    before ``respond`` refused it (a refusal after touching the data)."""
    f = _Counting()
    with pytest.raises(ValueError, match=r"needs delta in \(0, 1\)"):
        sample_then_respond(f, X, _oracle, epsilon=1.0, gamma=0.1, mechanism="gaussian",
                            delta=delta, rng=0)
    assert f.calls == 0


@pytest.mark.parametrize(("params", "message"), [
    ({"gamma": 1e-300}, r"^gamma must be at least 1e-100"),
    ({"m": 10**9}, r"^m must be an integer from 1 to"),
])
def test_the_constraints_table_checks_gamma_and_m_by_name(params, message):
    """sample_then_respond:19/21/22: a misspelt key in the table lookup skips the check of γ or
    m (γ = 1e-300 then fails later with another message, a huge m reaches the sampler's work
    check instead of the table's range)."""
    with pytest.raises(ValueError, match=message):
        sample_then_respond(_Counting(), X, _oracle, epsilon=1.0, rng=0, **params)


def test_the_table_checks_k_by_name():
    """sample_then_respond:24 (``"K"``): k is range-checked like m."""
    with pytest.raises(ValueError, match=r"^k must be an integer from 1 to"):
        sample_then_respond(_Counting(), X, _oracle, epsilon=1.0, m=10, k=10**9, rng=0)


def test_the_work_limit_names_the_parameter_the_user_gave():
    """sample_then_respond:105/108-111: when m is derived from γ the work-limit refusal names γ
    (what the user can change); when m is given it names m, even with γ given too."""
    with pytest.raises(ValueError, match=r"^gamma=1e-12 needs m = "):
        sample_then_respond(_Counting(), X, _oracle, epsilon=1.0, gamma=1e-12, rng=0)
    with pytest.raises(ValueError, match=r"^m must be at most "):
        sample_then_respond(_Counting(), np.zeros((10**6, 1)), _oracle, epsilon=1.0,
                            gamma=0.05, m=1_000_000, rng=0)


def test_quantile_level_is_theorem_15s():
    """``SamplerConfig.quantile_level``:1/2 (a property, mutated since the unwrapping): the
    order-statistic level 1 − γ + ρ + √(log(1/ρ)/(2m)) of Theorem 15 (eq. 7), which the
    reproduction report draws."""
    cfg = sampler_config(gamma=0.1)
    expected = 1.0 - cfg.gamma + cfg.rho + math.sqrt(math.log(1.0 / cfg.rho) / (2.0 * cfg.m))
    assert cfg.quantile_level == pytest.approx(expected, rel=1e-12)
