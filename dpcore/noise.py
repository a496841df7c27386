"""Noise samplers and their calibration: the only place dpcore draws DP noise.

* :func:`laplace`, :func:`gaussian`: i.i.d. scalar noise.
* :func:`sample_l2_exponential`: vectors with density ∝ exp(−‖z‖₂/β), the sum noise of DP-Lloyd
  (importance-sampling paper, Sec. 4 / App. D; spec ``importance_sampling.md`` §4.3). The radius
  ‖z‖₂ has density ∝ r^{d−1} e^{−r/β}, i.e. Gamma(shape=d, scale=β), and the direction is uniform on
  the sphere. The papers' public code draws an Exponential radius instead, which is a different
  density and is *not* ε-DP for d ≥ 2 (``dpcore.audit`` catches it).
* :func:`exponential_mechanism`: McSherry & Talwar (2007) over a finite candidate set, by the
  Gumbel-max trick, so it stays exact and finite for any ε·score.
* Calibration: :func:`laplace_scale`, :func:`gaussian_sigma_zcdp`,
  :func:`gaussian_sigma_approx_dp` (the analytic Gaussian mechanism of Balle & Wang 2018).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from dpcore.rng import RNGLike, as_generator

__all__ = [
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gaussian",
    "gaussian_sigma_approx_dp",
    "gaussian_sigma_zcdp",
    "laplace",
    "laplace_scale",
    "sample_l2_exponential",
]


def _scale(name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be finite and ≥ 0, got {value!r}")
    return v


def laplace(scale: float, size: int | tuple[int, ...] | None = None, *, rng: RNGLike = None):
    """I.i.d. Laplace(0, ``scale``) noise, density ∝ exp(−|x|/scale). ``scale = 0`` gives zeros."""
    scale = _scale("scale", scale)
    gen = as_generator(rng)
    if scale == 0:
        return np.zeros(size) if size is not None else 0.0
    return gen.laplace(0.0, scale, size)


def gaussian(sigma: float, size: int | tuple[int, ...] | None = None, *, rng: RNGLike = None):
    """I.i.d. N(0, σ²) noise. ``sigma = 0`` gives zeros."""
    sigma = _scale("sigma", sigma)
    gen = as_generator(rng)
    if sigma == 0:
        return np.zeros(size) if size is not None else 0.0
    return gen.normal(0.0, sigma, size)


def sample_l2_exponential(beta: float, dim: int, size: int, *, rng: RNGLike = None) -> np.ndarray:
    """Draw ``size`` vectors in R^dim with density ∝ exp(−‖z‖₂/β).

    Polar decomposition (spec ``importance_sampling.md`` §4.3): the radius R = ‖z‖₂ has density
    ∝ r^{dim−1} e^{−r/β}, i.e. R ~ Gamma(shape=dim, scale=β), independent of the direction, which
    is uniform on the unit sphere (a normalised standard normal vector). Then E‖z‖₂ = dim·β.

    Parameters
    ----------
    beta : float
        Scale β > 0. Releasing f(D) + z is (Δ₂/β)-DP for an ℓ2-sensitivity Δ₂.
    dim : int
        Dimension d ≥ 1.
    size : int
        Number of vectors.
    rng : None, int or Generator

    Returns
    -------
    ndarray of shape (size, dim)
    """
    beta = float(beta)
    if not math.isfinite(beta) or beta <= 0:
        raise ValueError(f"beta must be finite and > 0, got {beta!r}")
    dim, size = int(dim), int(size)
    if dim < 1 or size < 0:
        raise ValueError(f"need dim ≥ 1 and size ≥ 0, got dim={dim}, size={size}")
    gen = as_generator(rng)
    direction = gen.standard_normal((size, dim))
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    # A zero normal vector has probability 0; guard anyway so we never divide by zero.
    norms[norms == 0] = 1.0
    radius = gen.gamma(shape=dim, scale=beta, size=(size, 1))
    return direction * (radius / norms)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale b = Δ₁/ε of the Laplace mechanism for ε-DP (Dwork et al. 2006)."""
    sensitivity = _scale("sensitivity", sensitivity)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    return sensitivity / float(epsilon)


def gaussian_sigma_zcdp(l2_sensitivity: float, rho: float) -> float:
    """σ = Δ₂/√(2ρ) of the Gaussian mechanism for ρ-zCDP (Bun & Steinke 2016, Prop. 1.6)."""
    l2_sensitivity = _scale("l2_sensitivity", l2_sensitivity)
    if not rho > 0:
        raise ValueError(f"rho must be > 0, got {rho!r}")
    return l2_sensitivity / math.sqrt(2.0 * float(rho))


def _analytic_gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    # Balle & Wang (2018), Thm 8: δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ); log-space for
    # the second term so large ε does not overflow.
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    return float(special.ndtr(a - b) - math.exp(epsilon + special.log_ndtr(-a - b)))


def gaussian_sigma_approx_dp(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ for which the Gaussian mechanism is (ε, δ)-DP (analytic Gaussian mechanism).

    Solves Balle & Wang (2018, Thm 8) ``Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) = δ`` for σ; exact
    for every ε > 0 (the classical Δ√(2 ln(1.25/δ))/ε is only valid for ε < 1 and is looser).
    """
    l2_sensitivity = _scale("l2_sensitivity", l2_sensitivity)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if l2_sensitivity == 0:
        return 0.0

    def gap(log_sigma: float) -> float:
        return _analytic_gaussian_delta(math.exp(log_sigma), l2_sensitivity, epsilon) - delta

    lo = math.log(l2_sensitivity) - 10.0
    hi = math.log(l2_sensitivity * (math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon + 1.0))
    while gap(lo) < 0:
        lo -= 10.0
    while gap(hi) > 0:
        hi += 2.0
    return math.exp(optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=1e-12))


def _em_logits(scores, epsilon: float, sensitivity: float, monotonic: bool) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("scores must be a non-empty 1-D array")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be > 0, got {sensitivity!r}")
    factor = 1.0 if monotonic else 2.0
    # Shift by the maximum first: the logits are then ≤ 0, and a huge ε·score can only push the
    # others towards −inf (probability 0), never overflow to +inf.
    with np.errstate(over="ignore"):
        return (float(epsilon) / (factor * float(sensitivity))) * (s - s.max())


def exponential_mechanism(
    scores,
    epsilon: float,
    sensitivity: float,
    *,
    rng: RNGLike = None,
    size: int | None = None,
    monotonic: bool = False,
):
    """Pick index i with probability ∝ exp(ε·score_i / (2Δ)) (McSherry & Talwar 2007).

    Gumbel-max: argmax_i (ε·score_i/(2Δ) + G_i) with G_i i.i.d. standard Gumbel has exactly that
    law and never exponentiates, so it is exact and finite for any ε·score. ε-DP when each
    score has sensitivity ≤ Δ; with ``monotonic=True`` (scores that move in one direction
    between neighbours) the factor 2 is dropped, as the standard analysis allows.

    Returns
    -------
    int, or ndarray of ``size`` ints
    """
    logits = _em_logits(scores, epsilon, sensitivity, monotonic)
    gen = as_generator(rng)
    if size is None:
        return int(np.argmax(logits + gen.gumbel(size=logits.shape)))
    return np.argmax(logits[None, :] + gen.gumbel(size=(int(size), logits.size)), axis=1)


def exponential_mechanism_probabilities(
    scores, epsilon: float, sensitivity: float, *, monotonic: bool = False
) -> np.ndarray:
    """The exact output distribution of :func:`exponential_mechanism` (log-sum-exp, stable)."""
    logits = _em_logits(scores, epsilon, sensitivity, monotonic)
    return np.exp(logits - special.logsumexp(logits))
