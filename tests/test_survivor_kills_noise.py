"""Tests written from the survivors of ``make mutate``'s noise module (``dpcore/privacy/noise.py``).

``defended_noise`` and ``NoiseDefence.delivered`` are mutated since ``tools/mutate.py`` applies
``@contextmanager`` and ``@property`` by assignment. Each test names the mutants it kills.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from dpcore.privacy import noise
from dpcore.privacy.guarantees import PureDP, compose


@pytest.mark.parametrize("a", [0.5, 2.0, 0.1, 1.7, 1e-3, 37.1, 1.0])
def test_discrete_laplace_scale_is_the_smallest_double_at_least_one_over_a(a):
    """``_discrete_laplace_scale``:3/5/7/8: the exact scale s of the defended discrete Laplace
    is the smallest double with 1/s ≤ a, so its parameter never exceeds a (ε-DP at a = ε/Δ)
    and the noise is no wider than needed. A scale of a instead of 1/a, a check on s instead
    of 1/s, or a nudge at exact equality (a = 0.5, 2) breaks one of the two."""
    s = noise._discrete_laplace_scale(a)
    assert 1 / s <= Fraction(a)  # privacy: the parameter a' = 1/s is at most a
    below = Fraction(math.nextafter(float(s), 0.0))
    assert 1 / below > Fraction(a)  # the smallest such double: no extra noise


@pytest.mark.parametrize(("eta", "ok"), [(2.0**-10, True), (1e-6, True), (0.0, False),
                                         (2.0**-9, False), (-1e-6, False)])
def test_defended_noise_accepts_eta_in_the_half_open_interval(eta, ok):
    """``defended_noise``:5/6/8/9/10: η ∈ (0, 2⁻¹⁰]. η = 0 would remove the slack that pays for
    the grid's rounding (an under-charge); the upper end 2⁻¹⁰ itself is valid."""
    if ok:
        with noise.defended_noise(PureDP(1.0), eta=eta) as defence:
            assert defence.eta == eta
    else:
        with pytest.raises(ValueError, match=r"^eta must be in \(0, 2\^-10\]"):
            with noise.defended_noise(PureDP(1.0), eta=eta):
                pass


def test_a_defence_delivers_the_nominal_guarantee_with_its_slack():
    """``NoiseDefence.delivered``:4: what a defended release delivers is compose(nominal,
    slack), strictly more than the nominal guarantee (dropping the slack under-states it)."""
    with noise.defended_noise(PureDP(1.0)) as defence:
        assert defence.delivered == compose(PureDP(1.0), defence.slack)
        assert defence.delivered.epsilon > 1.0


def test_discrete_laplace_accepts_integers_up_to_two_to_the_62():
    """``add_discrete_laplace``:24: the documented range |value| ≤ 2^62 includes its end."""
    import numpy as np

    for inside in (False, True):
        if inside:
            with noise.defended_noise(PureDP(1.0)):
                out = noise.add_discrete_laplace(np.array([2.0**62, -(2.0**62)]), 1.0, rng=0)
        else:
            out = noise.add_discrete_laplace(np.array([2.0**62, -(2.0**62)]), 1.0, rng=0)
        assert np.all(np.isfinite(out))
    with pytest.raises(ValueError, match=r"\|value\| ≤ 2\^62"):
        noise.add_discrete_laplace(np.array([2.0**63]), 1.0, rng=0)
