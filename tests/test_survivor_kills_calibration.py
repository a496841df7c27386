"""Tests written from the survivors of ``make mutate``'s lloyd_calibration module
(``dpcore/mechanisms/importance/calibration.py``; see ``docs/testing.md``).

``_rootfind_log``'s upward search from a guess below the root was reached by no covering test:
the privacy sampler's calibration of the noise constant β_sum (Algorithm 1 with B chosen so
that Σ q(x_i) = m) starts there whenever the first guess β_full · m_free / m falls short, which
happens when many q are capped at 1 (Σ q then shrinks more slowly than 1/β). A root found wrong
there is a noise scale off its target; one not found is a calibration that fails.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.mechanisms.importance.calibration import _privacy_noise_for_size, _rootfind_log


def _counted(f):
    calls = []

    def g(b):
        calls.append(b)
        return f(b)

    return g, calls


@pytest.mark.parametrize("root, guess", [(10.0, 9.5), (10.0, 2.0), (1e4, 9.99e3)])
def test_rootfind_searches_upwards_from_a_guess_below_the_root(root, guess):
    """_rootfind_log with g(guess) ≥ 0 (guess below the root): the bracket is searched upwards
    from the guess. Kills the upward branch's assignment dropped or made `None` (a TypeError),
    and the test `g(u) >= 0` moved to `g(u) >= 1`: at guess 9.5 of root 10, f(guess) = 0.5, so
    the mutant takes the downward branch with both ends positive and brentq fails. Also kills
    the first upward step taken downwards (`u_lo - step`): the root is the same, but f, a pass
    over the data, is then evaluated below the guess, which the guess is there to avoid."""
    f, calls = _counted(lambda b: root - b)
    got = _rootfind_log(f, 1.0, f_lo=root - 1.0, guess=guess)
    assert got == pytest.approx(root, rel=1e-11)
    assert min(calls) >= guess  # searched from the guess, never below it


@pytest.mark.parametrize("root, guess", [(10.0, 12.0), (10.0, 40.0)])
def test_rootfind_steps_down_from_a_guess_above_the_root(root, guess):
    """_rootfind_log with g(guess) < 0: it steps down from the guess while g stays negative and
    brackets the root with the first point where g ≥ 0. Kills the loop's test `g < 0` moved to
    `g < 1` (in f's units): from 12, the step to 9.6 has f = 0.4, the mutant steps past the
    root and hands brentq a bracket with f > 0 at both ends (it fails)."""
    f, calls = _counted(lambda b: root - b)
    assert _rootfind_log(f, 1.0, f_lo=root - 1.0, guess=guess) == pytest.approx(root, rel=1e-11)
    assert min(calls) > root / 1.25 ** 2  # the bracket closes at the first step past the root


def test_rootfind_from_a_guess_below_a_root_far_above_it():
    """The upward search must keep going until the sign changes (400 fine steps of 1.25× reach
    e^89): a root 10⁶× above the guess is still found, on a decreasing f that is flat near
    the guess (a ratio of expected sample sizes)."""
    f = lambda b: 1.0 / (1.0 + b / 1e6) - 0.5  # noqa: E731 - root at 10⁶
    assert _rootfind_log(f, 0.1, guess=1.0) == pytest.approx(1e6, rel=1e-10)


def test_privacy_noise_for_a_size_whose_first_guess_is_below_the_root():
    """_privacy_noise_for_size with many q capped at 1: Σ q(β) = Σ min(1, s_i/β) falls more
    slowly than 1/β, so the first guess β_full · m_free / m is below the root and the search
    goes upwards. The returned β_sum must give the asked sample size (to 1e-9), else the
    calibration's expected sample size, and with it the privacy amplification the run is
    charged for, is off."""
    s = np.geomspace(0.5, 50.0, 400)

    def expected_m(beta: float) -> float:
        return float(np.minimum(1.0, s / beta).sum())

    bs_full, m = 1.0, 150.0
    m_free = expected_m(bs_full)
    assert bs_full * m_free / m < 30.0  # the first guess
    beta, got_m = _privacy_noise_for_size(expected_m, bs_full, m, n=400, eps=1.0)
    assert got_m == m and beta > bs_full * m_free / m
    assert math.isclose(expected_m(beta), m, rel_tol=1e-9)
