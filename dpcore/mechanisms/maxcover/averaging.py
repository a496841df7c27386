"""Algorithm 1 (NoisyAVG; Nissim, Stemmer & Vadhan, Alg. 5): private cluster means."""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from dpcore.core.errors import ParameterError
from dpcore.core.rng import RNGLike, as_generator
from dpcore.data import limits
from dpcore.data.geometry import clip_to_ball, row_norms
from dpcore.data.params import DELTA_POSITIVE, RADIUS_REQUIRED, Param, declare, validate_params
from dpcore.mechanisms.lloyd.estimator import cluster_sums
from dpcore.mechanisms.maxcover.accounting import NOISY_AVG_MAX_EPSILON, _check_privacy
from dpcore.privacy.guarantees import ApproxDP, privacy_alias
from dpcore.privacy.noise import add_gaussian, add_laplace, public_randomness


@dataclass(frozen=True)
class NoisyAverage:
    """Output of :func:`noisy_average`: the private mean ``center`` and the guarantee it cost,
    ``privacy_`` (``privacy`` is its deprecated name)."""

    center: np.ndarray
    privacy_: ApproxDP

    privacy = privacy_alias("privacy")


@public_randomness("stand-in centres uniform in the public ball: independent of the data")
def _uniform_in_ball(size: int, dim: int, radius: float, gen: np.random.Generator) -> np.ndarray:
    """Uniform points of the ball B_radius(0) ⊂ R^dim (Gaussian direction × radius·U^{1/dim})."""
    z = gen.standard_normal((size, dim))
    norms = np.linalg.norm(z, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return z / norms * (radius * gen.random((size, 1)) ** (1.0 / dim))


def _noisy_avg_sigma(m_hat: np.ndarray, diameter: float, epsilon: float, delta: float):
    """σ of Algorithm 1, line 2: 5Δ/(4 ε m̂)·sqrt(2 ln(3.5/δ)) (uses the *noisy* count m̂)."""
    with np.errstate(divide="ignore"):
        return 5.0 * diameter / (4.0 * epsilon * m_hat) * math.sqrt(2.0 * math.log(3.5 / delta))


def noisy_cluster_averages(
    X: np.ndarray,
    labels: np.ndarray,
    n_clusters: int,
    *,
    radius: float,
    epsilon: float,
    delta: float,
    rng: RNGLike = None,
) -> np.ndarray:
    """NoisyAVG (Algorithm 1) of every cluster of a partition, vectorised.

    The clusters are disjoint, so the ``n_clusters`` calls together are (ε, δ)-DP by parallel
    composition (Theorem 2.5) when the partition itself is public (here: a function of already
    released values). Data must lie in B_radius(0) (Δ = 2·radius); callers clip.

    Returns
    -------
    (n_clusters, d) array; a cluster with m̂ ≤ 0 (or, with probability ≈ δ/4, m̂ > 0 but no
    points) gets a uniform point of B_radius(0) (spec §1.6, edge cases).
    """
    X = np.asarray(X, dtype=float)
    labels = np.asarray(labels, dtype=np.int64)
    sums, counts = cluster_sums(X, labels, n_clusters, None)
    return _noisy_averages_from_statistics(
        sums, counts, radius=radius, epsilon=epsilon, delta=delta, rng=rng
    )


def _noisy_averages_from_statistics(
    sums: np.ndarray,
    counts: np.ndarray,
    *,
    radius: float,
    epsilon: float,
    delta: float,
    rng: RNGLike = None,
) -> np.ndarray:
    """Algorithm 1 from per-cluster noise-free sums and counts (k calls, vectorised)."""
    epsilon, delta = _check_privacy(epsilon, delta)
    if epsilon > NOISY_AVG_MAX_EPSILON + 1e-12:
        raise ValueError(
            f"NoisyAVG is only proven (ε, δ)-DP for ε ≤ 1/3 (Theorem 2.6), got epsilon={epsilon!r}"
        )
    gen = as_generator(rng)
    d = sums.shape[1]
    b = 5.0 / epsilon  # Laplace scale of line 1
    # Line 1: m̂ = m + Lap(5/ε) − (5/ε) ln(2/δ); noise is drawn for every cluster regardless.
    m_hat = add_laplace(counts, b, sensitivity=1.0, rng=gen) - b * math.log(2.0 / delta)
    fallback = (m_hat <= 0) | (counts == 0)
    m_safe = np.where(fallback, 1.0, m_hat)
    sigma = np.where(fallback, 0.0, _noisy_avg_sigma(m_safe, 2 * radius, epsilon, delta))
    sens_lo = 2**-10 * epsilon * float(np.min(sigma, where=sigma > 0, initial=np.inf))
    centers = add_gaussian(sums / np.maximum(counts, 1)[:, None], sigma[:, None],
                           sensitivity=sens_lo, rng=gen)
    if np.any(fallback):
        centers[fallback] = _uniform_in_ball(int(fallback.sum()), d, radius, gen)
    return centers


def _check_noisy_avg_epsilon(value, name: str) -> float:
    eps = limits.check_epsilon(value, name)
    if eps > NOISY_AVG_MAX_EPSILON + 1e-12:
        raise ParameterError(name, f"NoisyAVG is only proven (ε, δ)-DP for ε ≤ 1/3 (Theorem 2.6), "
                                   f"got {name}={value!r}")
    return eps


@declare(
    radius=RADIUS_REQUIRED,
    epsilon=Param("float", limits.MIN_EPSILON, NOISY_AVG_MAX_EPSILON,
                  check=_check_noisy_avg_epsilon, doc="privacy loss ε (NoisyAVG: ≤ 1/3)"),
    delta=DELTA_POSITIVE,
)
def noisy_average(
    X: np.ndarray,
    *,
    radius: float,
    epsilon: float,
    delta: float,
    rng: RNGLike = None,
) -> NoisyAverage:
    """Private mean of the rows of ``X`` (Algorithm 1, NoisyAVG; Nissim, Stemmer & Vadhan, Alg. 5).

    m̂ = m + Lap(5/ε) − (5/ε)·ln(2/δ); if m̂ ≤ 0 return a uniform point of B_radius(0); else
    return mean(X) + N(0, σ² I) with σ = 5Δ·sqrt(2 ln(3.5/δ)) / (4 ε m̂), Δ = 2·radius.

    Parameters
    ----------
    X : (m, d) array
        The points (may be empty: then the fallback is returned). Rows outside the public ball
        of radius ``radius`` are clipped onto it, with a warning saying how many.
    radius : float
        Public radius of the data domain B_radius(0); Δ = 2·radius bounds the diameter.
    epsilon, delta : float
        Privacy parameters; Theorem 2.6 proves (ε, δ)-DP for ε ≤ 1/3, larger ε raise.
    rng : None, int or Generator

    Returns
    -------
    NoisyAverage
        ``center`` (d,) and ``privacy_`` = ApproxDP(ε, δ).
    """
    validate_params(noisy_average._parameter_constraints,
                    {"radius": radius, "epsilon": epsilon, "delta": delta})
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (m points × d), got shape {X.shape}")
    radius = _check_radius(radius)
    X = _clip_with_warning(X, radius)
    center = noisy_cluster_averages(
        X,
        np.zeros(X.shape[0], dtype=np.int64),
        1,
        radius=radius,
        epsilon=epsilon,
        delta=delta,
        rng=rng,
    )[0]
    return NoisyAverage(center=center, privacy_=ApproxDP(float(epsilon), float(delta)))


def _check_radius(radius: float) -> float:
    try:
        r = float(radius)
    except (TypeError, ValueError):
        raise ValueError(f"radius must be a positive number, got {radius!r}") from None
    if not (math.isfinite(r) and r > 0):
        raise ValueError(f"radius must be finite and > 0 (a public bound), got {radius!r}")
    return r


def _clip_with_warning(X: np.ndarray, radius: float) -> np.ndarray:
    """Clip rows to the public ball; say how many were clipped (never silently).

    Returns ``X`` itself (no copy) when no row is outside the ball: the norms are checked first,
    and ``clip_to_ball`` (which always copies) only runs when something must be clipped.
    """
    if X.shape[0] == 0:
        return X
    if float(row_norms(X, squared=True).max()) <= float(radius) ** 2:
        return X
    Xc, n_clipped = clip_to_ball(X, radius, return_count=True)
    if n_clipped:
        warnings.warn(
            f"{n_clipped} of {X.shape[0]} rows have norm > radius={radius:g} and were clipped "
            "onto the ball (the privacy proof assumes data in B_radius(0))",
            UserWarning,
            stacklevel=3,
        )
    return Xc
