"""FC_Covariance (FriendlyCore paper, App. A): accuracy, privacy calibration, validation.

Each test names the plausible bug it is there to catch.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpcore.core.errors import ParameterError
from dpcore.data.tables import DataError
from dpcore.mechanisms.friendlycore import fc_covariance
from dpcore.mechanisms.friendlycore.covariance import (
    b_eta,
    fc_covariance_guarantee,
    friendly_covariance,
    gamma_cov,
    matrix_dist,
    pairwise_matrix_dist,
    part_matrices,
)
from dpcore.privacy.guarantees import ApproxDP, PrivacyLeakWarning
from dpcore.privacy.noise import defended_noise


def _sigma(d: int, seed: int = 0, top: float = 1e6) -> np.ndarray:
    R = np.linalg.qr(np.random.default_rng(seed).standard_normal((d, d)))[0]
    return R @ np.diag(np.geomspace(top, 1.0, d)) @ R.T


def _rows(Sig: np.ndarray, n: int, seed: int = 1) -> np.ndarray:
    g = np.random.default_rng(seed)
    return g.standard_normal((n, Sig.shape[0])) @ np.linalg.cholesky(Sig).T


# --- the distance and γ --------------------------------------------------------------------------


def test_matrix_dist_is_two_sided_scale_invariant_and_infinite_off_the_cone():
    """Bugs: only one of the two terms (2I vs I would give 0.5 instead of 1); a distance that
    scales with the matrices; a singular matrix compared as if it were definite."""
    I2 = np.eye(2)
    assert matrix_dist(2 * I2, I2) == pytest.approx(1.0)
    assert matrix_dist(I2, 2 * I2) == pytest.approx(1.0)
    S1, S2 = _sigma(3, 1, 1e3), _sigma(3, 2, 1e3)
    assert matrix_dist(1e7 * S1, 1e7 * S2) == pytest.approx(matrix_dist(S1, S2), rel=1e-6)
    assert matrix_dist(np.diag([1.0, 0.0]), I2) == math.inf
    D = pairwise_matrix_dist(np.stack([S1, S2, 2 * S1]))
    assert D[0, 2] == pytest.approx(1.0) and np.allclose(D, D.T) and np.allclose(np.diag(D), 0)


def test_gamma_is_the_minimum_of_lemma_9_1s_four_terms():
    """Bug: a term dropped or mistyped (γ too large: B_η would not be (ε, δ)-DP)."""
    eta, eps, delta, d = 0.1, 0.9, 1e-6, 2
    terms = [math.sqrt(eps / (2 * d * (d + 1 / eta**2))),
             eps / (8 * d * math.sqrt(math.log(1 / delta))), eps / (8 * math.log(2 / delta)),
             eps * eta / (12 * math.sqrt(d * math.log(2 / delta)))]
    assert gamma_cov(eta, eps, delta, d) == pytest.approx(min(terms))


# --- accuracy ----------------------------------------------------------------------------------


def test_fc_covariance_learns_an_unbounded_ill_conditioned_covariance():
    """Theorem A.2 at a small scale (c1 = 0.02 so that 300 parts pass the abort threshold):
    ‖Σ‖ = 10⁶, condition number 10⁶. Bugs: S^{1/2} applied on one side only, parts divided by
    n instead of m, the mean of all parts instead of the core's."""
    Sig = _sigma(2)
    t, m = 300, 2000
    res = fc_covariance(_rows(Sig, t * m), epsilon=1.0, delta=1e-6, t=t, eta=0.02, c1=0.02,
                        n_public=t * m, rng=3)
    assert res.estimate is not None
    assert matrix_dist(res.estimate, Sig) < 0.15


def test_corrupted_parts_are_left_out_of_the_core():
    """Bug: FriendlyCovariance averaging every part (the filter's mask ignored). Fifteen of the 300
    parts (5 %) are rows ×100: their matrices are 10⁴ times too large and have no friends."""
    Sig = _sigma(2, top=10.0)
    t, m = 300, 3000
    X = _rows(Sig, t * m, seed=4)
    X[: 15 * m] *= 100.0
    res = fc_covariance(X, epsilon=1.0, delta=1e-6, t=t, eta=0.02, c1=0.02, n_public=t * m,
                        rng=5)
    assert res.estimate is not None and matrix_dist(res.estimate, Sig) < 0.15


def test_too_few_parts_give_bottom():
    """Bug: n̂ without its −ln(1/δ)/ε₁ shift (50 parts would then often pass a threshold of
    ≈ 36): with the shift n̂ ≈ 50 − 138 and the answer is ⊥."""
    Sig = _sigma(2)
    outs = [fc_covariance(_rows(Sig, 50 * 500, seed=s), epsilon=1.0, delta=1e-6, t=50, eta=0.1,
                          c1=0.05, n_public=25_000, rng=s).estimate for s in range(5)]
    assert all(o is None for o in outs)


# --- privacy -----------------------------------------------------------------------------------


def test_guarantee_is_theorem_a1_and_group_privacy_for_a_changed_row():
    """Bugs: Theorem A.1 misprinted (ε instead of 2(e^ε − 1)); the replace-one default charged
    as one part added/removed."""
    eps, delta = 0.5, 1e-6
    paper = fc_covariance_guarantee(eps, delta, "paper")
    e1 = 2 * math.expm1(eps)
    assert paper.epsilon == pytest.approx(e1)
    assert paper.delta == pytest.approx(2 * delta * math.exp(eps + e1))
    rep = fc_covariance_guarantee(eps, delta)
    assert rep.epsilon == pytest.approx(2 * e1)
    assert rep.delta == pytest.approx((1 + math.exp(e1)) * paper.delta)


def test_n_hat_noise_is_laplace_with_scale_ten_over_epsilon():
    """Statistical calibration of n̂ = n − ln(1/δ)/ε₁ + Lap(1/ε₁), ε₁ = ε/10. Bugs: the scale
    1/ε (10× too little noise) or 1/(2ε₁); KS against the exact Laplace at 2000 draws sees a
    factor 1.5 in scale with power ≈ 1."""
    eps, delta = 0.5, 1e-6
    Ss = np.repeat(np.eye(2)[None], 40, 0)
    g = np.random.default_rng(7)
    shift = 40 - math.log(1 / delta) / (0.1 * eps)
    z = np.array([friendly_covariance(Ss, epsilon=eps, delta=delta, eta=0.1, rng=g)[1]
                  for _ in range(2000)]) - shift
    assert stats.kstest(z, stats.laplace(scale=1 / (0.1 * eps)).cdf).pvalue > 1e-3
    assert stats.kstest(z, stats.laplace(scale=1.5 / (0.1 * eps)).cdf).pvalue < 1e-6


def test_b_eta_has_mean_one_plus_eta_squared_d_times_sigma():
    """B_η(S) = S^{1/2}(I + ηG)(I + ηG)ᵀS^{1/2} has mean (1 + η²d)·S. Bugs: η² for η in the noise
    (mean (1 + η⁴d)S), noise added to S instead of multiplied, S instead of S^{1/2}."""
    S, eta, d = np.array([[4.0, 1.0], [1.0, 2.0]]), 0.3, 2
    g = np.random.default_rng(8)
    draws = np.stack([b_eta(S, eta, rng=g) for _ in range(4000)])
    mean, se = draws.mean(0), draws.std(0) / math.sqrt(len(draws))
    assert np.all(np.abs(mean - (1 + eta**2 * d) * S) < 4 * se + 1e-12)


def test_every_draw_goes_through_the_defended_adders():
    """Bug: a raw Generator draw (rng.normal for G, rng.laplace for n̂): inside
    defended_noise() the bare samplers refuse, so the run would raise."""
    Sig = _sigma(2)
    with defended_noise(ApproxDP(1.0, 1e-6)):
        res = fc_covariance(_rows(Sig, 300 * 2000), epsilon=1.0, delta=1e-6, t=300, eta=0.02,
                            c1=0.02, n_public=600_000, rng=9)
    assert res.estimate is not None and matrix_dist(res.estimate, Sig) < 0.2


@pytest.mark.slow
def test_friendly_covariance_audit_passes_and_flags_too_little_noise():
    """Privacy audit at the lemma's edge (means γ apart): no ε above the claim; the variant with
    B_η at η/1000 must be flagged (the audit has power)."""
    from dpcore.reproduce._friendlycore_covariance import covariance_audit

    audit = covariance_audit(4000, rng=0)
    assert bool(audit.passes.iloc[0]) and not bool(audit.passes.iloc[1])


# --- validation --------------------------------------------------------------------------------


@pytest.mark.parametrize(("kw", "param"), [({"epsilon": 2.0}, "epsilon"),
                                           ({"epsilon": 0.0}, "epsilon"),
                                           ({"delta": 0.0}, "delta"), ({"t": 1}, "t"),
                                           ({"eta": -1.0}, "eta"), ({"c1": 0.0}, "c1"),
                                           ({"accounting": "add_remove"}, "accounting"),
                                           ({"t": 5000}, "t")])
def test_bad_parameters_get_a_clear_message(kw, param):
    """Bad input: a ParameterError naming the parameter (no traceback from deep inside)."""
    X = np.random.default_rng(0).standard_normal((1000, 2))
    with pytest.raises(ParameterError) as err:
        fc_covariance(X, **{"n_public": 1000, **kw})
    assert err.value.parameter == param and param in str(err.value)


def test_bad_data_is_refused_and_private_n_warns():
    X = np.random.default_rng(0).standard_normal((100, 2))
    X[3, 1] = np.nan
    with pytest.raises(DataError, match="NaN"):
        fc_covariance(X, t=10, n_public=100)
    with pytest.warns(PrivacyLeakWarning, match="n read off the data"):
        fc_covariance(np.ones((100, 2)), t=10)


def test_parts_depend_on_the_public_n_only():
    """A changed row changes exactly one part (the replace-one accounting's premise); with
    n_public larger than the rows, the missing rows count as zeros (no data-dependent m)."""
    X = np.random.default_rng(0).standard_normal((100, 2))
    Y = X.copy()
    Y[57] = [5.0, -3.0]
    diff = np.any(part_matrices(X, 10, 100) != part_matrices(Y, 10, 100), axis=(1, 2))
    assert diff.sum() == 1 and diff[5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert part_matrices(X[:90], 10, 100).shape == (10, 2, 2)
