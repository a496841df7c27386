"""Private estimates of the public quantities the mechanisms need (a radius, n), spending budget.

Every mechanism in dpcore assumes a public bound ``r`` on ‖x‖₂ (after centring on a public
centre). When nobody knows one, reading it off the data leaks (``dpcore.data.tables.data_radius``
warns); :func:`private_norm_quantile` instead *estimates* a quantile of the row norms with the
exponential mechanism over a public log-spaced grid of candidate radii, and returns the
guarantee it spent, so the dashboard can record it in the ledger like any release.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.geometry import row_norms
from dpcore.data.limits import check_params
from dpcore.privacy.guarantees import PureDP
from dpcore.privacy.noise import add_laplace, exponential_mechanism

__all__ = ["PrivateCount", "PrivateRadius", "private_norm_quantile", "private_row_count"]


@dataclass(frozen=True)
class PrivateRadius:
    """A privately chosen radius, its candidate grid and the guarantee spent."""

    radius: float
    quantile: float
    candidates: np.ndarray
    privacy_: PureDP


def private_norm_quantile(
    X: np.ndarray,
    quantile: float = 0.99,
    *,
    epsilon: float,
    lower: float,
    upper: float,
    n_candidates: int = 200,
    rng: RNGLike = None,
) -> PrivateRadius:
    """ε-DP estimate of the ``quantile`` of the row norms ‖x_i‖₂ (exponential mechanism).

    Candidates are ``n_candidates`` radii log-spaced in ``[lower, upper]`` (public: chosen
    without looking at the data). Candidate ``r`` scores ``−|#{i: ‖x_i‖ ≤ r} − q·n|``; replacing,
    adding or removing one row changes every score by at most 1, so the exponential mechanism
    with sensitivity 1 is ``epsilon``-DP (McSherry & Talwar 2007). ``n`` itself is treated as
    public, as in the papers.

    Returns
    -------
    PrivateRadius
        ``radius`` is a candidate (``upper`` when most norms exceed the grid: widen it).

    Raises
    ------
    ValueError
        Non-positive ε, a quantile outside (0, 1], or ``0 < lower < upper`` violated.
    """
    check_params(quantile=quantile, epsilon=epsilon, lower=lower, upper=upper, required=True)
    if not (0 < quantile <= 1):
        raise ValueError(f"quantile must be in (0, 1], got {quantile!r}")
    if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if not (0 < lower < upper and math.isfinite(upper)):
        raise ValueError(f"need 0 < lower < upper (public bounds), got {lower!r}, {upper!r}")
    if int(n_candidates) < 2:
        raise ValueError(f"n_candidates must be ≥ 2, got {n_candidates!r}")
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty (n, d) array, got shape {X.shape}")
    candidates = np.geomspace(lower, upper, int(n_candidates))
    norms = np.sort(row_norms(X))
    counts = np.searchsorted(norms, candidates, side="right")
    scores = -np.abs(counts - quantile * norms.size)
    j = int(exponential_mechanism(scores, epsilon, 1.0, rng=as_generator(rng)))
    return PrivateRadius(float(candidates[j]), float(quantile), candidates, PureDP(epsilon))


@dataclass(frozen=True)
class PrivateCount:
    """A privately estimated row count, a public ±``half_width`` interval, and its cost."""

    value: int
    half_width: float
    confidence: float
    privacy_: PureDP


def private_row_count(
    n_rows: int, *, epsilon: float, confidence: float = 0.95, rng: RNGLike = None
) -> PrivateCount:
    """ε-DP estimate of the number of rows (Laplace mechanism, sensitivity 1).

    Under add/remove neighbours the count changes by exactly 1, so ``n + Lap(1/ε)`` is ε-DP
    (Dwork et al. 2006); rounding and clamping at 0 are post-processing. ``half_width`` is the
    public ``confidence`` quantile of |Lap(1/ε)|, ``log(1/(1 − confidence))/ε``, so the true n lies
    within ``value ± half_width`` with that probability (before clamping).

    Parameters
    ----------
    n_rows : int
        The true count (private; only its noisy version leaves).
    epsilon : float
        Budget of this estimate (finite, > 0).
    confidence : float
        Coverage of the reported interval, in (0, 1).
    rng : None, int or numpy.random.Generator
        Noise source.
    """
    check_params(epsilon=epsilon, confidence=confidence, required=True)
    if not (isinstance(epsilon, int | float) and math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if not (0 < confidence < 1):
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if int(n_rows) < 0:
        raise ValueError(f"n_rows must be ≥ 0, got {n_rows!r}")
    noisy = float(add_laplace(float(n_rows), 1.0 / epsilon, sensitivity=1.0, rng=as_generator(rng)))
    half = math.log(1.0 / (1.0 - confidence)) / epsilon
    return PrivateCount(max(round(noisy), 0), half, float(confidence), PureDP(epsilon))
