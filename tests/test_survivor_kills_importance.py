"""Tests written from the survivors of ``make mutate``'s importance module (tools/mutate.py).

Each test names the mutants it kills (mutmut's names, ``<function>__mutmut_<n>``) and the plausible
bug it stands for; survivors argued equivalent are in tools/survivors.py and docs/testing.md.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpcore.mechanisms.importance import weights as weights_module
from dpcore.mechanisms.importance.amplification import (
    FunctionProfile,
    LinearProfile,
    laplace_sum_profile,
)
from dpcore.mechanisms.importance.sampling import variance_optimal_probabilities
from dpcore.mechanisms.importance.weights import (
    privacy_constrained_weights,
    solve_privacy_constrained,
)


def _linear_without_mu(slopes: np.ndarray) -> FunctionProfile:
    """ε(w, x_i) = w·slopes[i] as callables without μ: Algorithm 1 must bracket by doubling."""
    return FunctionProfile(lambda w, i: w * slopes[i],
                           lambda w, i: np.broadcast_to(slopes[i], np.shape(w)) + 0.0,
                           slopes.size)


# === Algorithm 1 (weights.py): the general-profile solver =======================================

def test_doubling_bracket_gives_the_closed_form_and_never_exceeds_the_target():
    """Kills _bracket_and_bisect:113 (doubling takes h ≤ 1 as feasible: lo jumps past the root,
    w too large, ψ(x_i) > ε*: a privacy bug) and any doubling bug that LinearProfile hides (its μ
    bracket is always verified, so only a profile without μ reaches the doubling).
    """
    slopes = np.array([0.05, 0.2, 0.5, 0.9, 0.999])
    target = 1.0
    w = solve_privacy_constrained(_linear_without_mu(slopes), target)
    np.testing.assert_allclose(w, privacy_constrained_weights(slopes, target), rtol=1e-10)
    q = 1.0 / w
    assert np.all(np.log1p(q * np.expm1(slopes * w)) <= target * (1 + 1e-12))


def test_one_active_point_is_solved_not_left_at_weight_one():
    """Kills solve_privacy_constrained:51 (``active.size == 1`` returns w = 1: a lone point below
    the target would be sampled with q = 1, losing the amplification the release plans on).
    """
    slopes = np.array([0.5])
    w = solve_privacy_constrained(LinearProfile(slopes), 1.0)
    assert w[0] > 1.0
    np.testing.assert_allclose(w, privacy_constrained_weights(slopes, 1.0), rtol=1e-10)


def test_more_points_than_one_chunk_are_each_solved_once(monkeypatch):
    """Kills solve_privacy_constrained:57 (``range(0, size, )``: one chunk per point, each solving
    up to _CHUNK points: quadratic time, stopped as a timeout) and pins the chunk boundaries.
    """
    monkeypatch.setattr(weights_module, "_CHUNK", 1024)
    slopes = np.linspace(0.01, 0.99, 1024 * 8 + 7)
    w = solve_privacy_constrained(LinearProfile(slopes), 1.0)
    np.testing.assert_allclose(w, privacy_constrained_weights(slopes, 1.0), rtol=1e-10)


def test_zero_tolerance_stops_at_float_resolution_on_the_feasible_side():
    """Kills _bracket_and_bisect:141 (``stuck`` needs mid == lo *and* mid == hi, never true: with
    rtol = 0 the bisection never ends, a hung release) and checks the returned end is feasible.
    """
    slopes = np.array([0.3, 0.7])
    w = solve_privacy_constrained(LinearProfile(slopes), 1.0, rtol=0.0)
    np.testing.assert_allclose(w, privacy_constrained_weights(slopes, 1.0), rtol=1e-10)
    assert np.all(np.log1p(np.expm1(slopes * w) / w) <= 1.0)


@pytest.mark.parametrize("slopes, target", [([0.0, 0.5], 1.0), ([800.0, 1.0], 1000.0)])
def test_bracket_arithmetic_raises_no_floating_point_warning(slopes, target):
    """Kills _bracket_and_bisect:16/18/19/21 and LinearProfileǁstrong_convexity:3 (an errstate
    argument dropped: μ = 0 divides by zero for a zero-loss point, e^800 overflows; the release
    path runs with warnings as errors in the tests and a stray RuntimeWarning reaches the user).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = solve_privacy_constrained(LinearProfile(np.array(slopes)), target)
    assert np.isfinite(w[1]) and w[1] >= 1.0


def test_a_loss_that_does_not_grow_gets_weight_inf_without_warnings():
    """Kills _bracket_and_bisect:17/20 (errstate's ``invalid`` dropped: μ = 0 and ε'(1) = 0 with
    e^{ε(1)} overflowing make 0·∞ in the bracket) and checks the documented outcome of a profile
    that never reaches ε*: w = ∞, i.e. q = 0 (the point is never needed).
    """
    flat = FunctionProfile(lambda w, i: np.full(np.shape(w), 710.0),
                           lambda w, i: np.zeros(np.shape(w)), 1, lambda i: np.zeros(np.shape(i)))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        w = solve_privacy_constrained(flat, 800.0)
    assert w[0] == np.inf


# === the profiles (amplification.py) ============================================================

def test_linear_profile_methods_follow_the_corrected_formulas():
    """Kills LinearProfileǁstrong_convexity:6/7 (μ = K²e^K, spec §9.3's erratum of Eq. 4, as
    K²/e^K or e^K), LinearProfileǁderivative:2/3/9 (the derivative of all points instead of the
    indexed ones, or not broadcast to a scalar w) and ǁ__post_init__:26/27 (slopes not stored
    as an array).
    """
    p = LinearProfile([0.5, 2.0, 3.0])
    assert isinstance(p.slopes, np.ndarray) and p.n_points == 3
    k = np.array([0.5, 2.0, 3.0])
    np.testing.assert_allclose(p.strong_convexity(), k * k * np.exp(k), rtol=1e-15)
    np.testing.assert_allclose(p.strong_convexity(np.array([2])), [9.0 * math.exp(3.0)])
    np.testing.assert_array_equal(p.derivative(2.0), k)
    np.testing.assert_array_equal(p.derivative(np.array([1.0, 4.0]), np.array([2, 0])),
                                  [3.0, 0.5])
    np.testing.assert_array_equal(p.value(np.array([1.0, 4.0]), np.array([2, 0])), [3.0, 2.0])


@pytest.mark.parametrize("slopes", [[0.5, -0.1], [0.5, np.nan], [0.5, np.inf], [[0.5, 1.0]]])
def test_linear_profile_refuses_negative_non_finite_or_2d_slopes(slopes):
    """Kills LinearProfileǁ__post_init__:6/7/10/13 (a check dropped or and/or swapped: a
    negative or infinite slope would make Algorithm 1 return w < 1 or nonsense silently).
    """
    with pytest.raises(ValueError, match="slopes"):
        LinearProfile(np.array(slopes, dtype=float))


def test_function_profile_passes_the_index_and_its_strong_convexity():
    """Kills FunctionProfileǁderivative:2 (derivative of every point, not the indexed ones) and
    FunctionProfileǁstrong_convexity:1/2 (μ dropped or the test inverted: a given μ ignored, a
    missing one called).
    """
    k = np.array([0.5, 2.0, 3.0])
    p = FunctionProfile(lambda w, i: w * k[i], lambda w, i: k[i] + 0 * w, 3,
                        lambda i: k[i] ** 2 * np.exp(k[i]))
    np.testing.assert_array_equal(p.derivative(np.array([1.0]), np.array([1])), [2.0])
    np.testing.assert_allclose(p.strong_convexity(np.array([0, 2])),
                               k[[0, 2]] ** 2 * np.exp(k[[0, 2]]))
    assert _linear_without_mu(k).strong_convexity() is None


def test_laplace_sum_profile_default_scale_is_the_standard_laplace():
    """Kills laplace_sum_profile:1 (default b = 2: every loss halved, the sampler over-promises)
    and :11/15/16 (the error no longer names ``scale``).
    """
    X = np.array([[1.0, -2.0], [0.5, 0.0]])
    np.testing.assert_array_equal(laplace_sum_profile(X).slopes, [3.0, 0.5])
    with pytest.raises(ValueError, match=r"^scale must be"):
        laplace_sum_profile(X, scale=0.0)


# === the variance-optimal reference (sampling.py) ===============================================

def test_variance_optimal_water_filling_cascades_and_sums_to_m():
    """Kills variance_optimal_probabilities:31 (n − 1 rounds: a second cap is never applied)
    and :55 (``capped = over`` forgets the points capped in an earlier round).
    """
    X = np.array([[100.0], [10.0], [1.0], [1.0]])
    q = variance_optimal_probabilities(X, 2.5)
    np.testing.assert_allclose(q, [1.0, 1.0, 0.25, 0.25])
    q2 = variance_optimal_probabilities(np.array([[10.0], [1.0]]), 1.5)
    np.testing.assert_allclose(q2, [1.0, 0.5])


def test_variance_optimal_small_and_zero_norms():
    """Kills variance_optimal_probabilities:38/39 (a total norm of 0 divides 0/0, or a total
    ≤ 1 taken for zero: small data get uniform q) and :40–45 (the zero-norm rest gets None, 0,
    1 or mass·count, or the function returns None).
    """
    small = np.array([[0.1], [0.2], [0.1]])
    np.testing.assert_allclose(variance_optimal_probabilities(small, 1.0), [0.25, 0.5, 0.25])
    rest = np.array([[5.0], [0.0], [0.0], [0.0]])
    np.testing.assert_allclose(variance_optimal_probabilities(rest, 2.0), [1.0] + [1 / 3] * 3)
    np.testing.assert_allclose(variance_optimal_probabilities(np.zeros((4, 2)), 2.0), [0.5] * 4)

