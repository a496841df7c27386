"""CoinPress private mean estimation (Biswas, Dong, Kamath, Ullman, NeurIPS 2020) and the plain
Gaussian-mechanism mean: the averaging baselines of the FriendlyCore paper (Fig. 5).

Spec: ``../shared/spec/coinpress.md``. Implemented as the authors' repository does it (§2, the
version the FriendlyCore paper ran): γ = tail(d, 0.01) with a hard-coded β = 0.01, clipping radius
``C = min(√(r² + 6r + γ²), r + γ)``, noise ``σ = 2C/(n √(2ρ_i))``, new radius ``γ √(1/n + σ²)``,
budget split ``ρ/(4(t−1))`` for the t−1 shrinking steps and ``3ρ/4`` for the last one, and
cumulative projection (each step projects the already projected data; ``projection="fresh"``
projects the original data instead, as in the paper's algorithm box).

Privacy model of both estimators: **replace-one neighbours with public n** (sensitivity ``2C/n`` of
the mean of points in a ball of radius C), as in [BDKU20]. The result is ρ-zCDP (no δ); FriendlyCore
uses add/remove neighbours, so the two guarantees are comparable but not identical.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.geometry import clip_to_ball
from dpcore.data.limits import check_params
from dpcore.privacy.guarantees import ZCDP, privacy_alias
from dpcore.privacy.noise import add_gaussian, gaussian_sigma_zcdp

__all__ = [
    "CoinPressResult",
    "coinpress_mean",
    "coinpress_schedule",
    "coinpress_split",
    "gaussian_mean",
    "gaussian_norm_tail",
]


def gaussian_norm_tail(d: int, beta: float) -> float:
    """``√(d + 2√(d ln(1/β)) + 2 ln(1/β))``: ‖g‖ for g ~ N(0, I_d) exceeds it w.p. ≤ β
    (Laurent–Massart)."""
    L = math.log(1.0 / beta)
    return math.sqrt(d + 2.0 * math.sqrt(d * L) + 2.0 * L)


def coinpress_split(rho: float, n_iter: int) -> np.ndarray:
    """The repository's budget split: ``ρ/(4(t−1))`` × (t−1), then ``3ρ/4`` (``ρ`` if t = 1)."""
    if n_iter < 1:
        raise ValueError(f"n_iter must be >= 1, got {n_iter!r}")
    if n_iter == 1:
        return np.array([float(rho)])
    return np.array([rho / (4.0 * (n_iter - 1))] * (n_iter - 1) + [0.75 * rho])


def coinpress_schedule(
    n: int, d: int, radius: float, rhos: np.ndarray, *, beta: float = 0.01
) -> list[tuple[float, float, float]]:
    """The data-independent schedule: per step ``(C_i, σ_i, r_i)`` (clip radius, noise sd,
    radius after the step), spec §2.4."""
    gamma = gaussian_norm_tail(d, beta)
    r = float(radius)
    out = []
    for rho_i in rhos:
        C = min(math.sqrt(r * r + 6.0 * r + gamma * gamma), r + gamma)
        sigma = gaussian_sigma_zcdp(2.0 * C / n, rho_i)
        r = gamma * math.sqrt(1.0 / n + sigma * sigma)
        out.append((C, sigma, r))
    return out


@dataclass(frozen=True)
class CoinPressResult:
    """``estimate`` (d,), the delivered guarantee ``privacy_`` (ρ-zCDP, replace-one; ``guarantee``
    is its deprecated name), the centres and radii of every step."""

    estimate: np.ndarray
    privacy_: ZCDP
    centers: np.ndarray
    radii: np.ndarray
    sigmas: np.ndarray

    guarantee = privacy_alias("guarantee")


def _check(X: np.ndarray, rho: float, radius: float) -> np.ndarray:
    X = np.asarray(X, dtype=float)
    if X.ndim == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty (n, d) array, got shape {X.shape}")
    if not np.isfinite(X).all():
        raise ValueError("X has NaN or infinite values; drop or impute them first")
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"rho must be finite and > 0, got {rho!r}")
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be finite and > 0, got {radius!r}")
    return X


def _ball_mean(Z: np.ndarray, c: np.ndarray, C: float) -> tuple[np.ndarray, np.ndarray]:
    """Rows of Z projected onto B(c, C), and their mean."""
    P = clip_to_ball(Z - c, C) + c
    return P, P.mean(axis=0)


def coinpress_mean(
    X: np.ndarray,
    *,
    rho: float,
    radius: float,
    center: np.ndarray | None = None,
    n_iter: int = 2,
    rhos: np.ndarray | None = None,
    projection: str = "cumulative",
    rng: RNGLike = None,
) -> CoinPressResult:
    """CoinPress mean ("MVM" with the "MVMRec" step of the authors' code), ρ-zCDP.

    Parameters
    ----------
    X : (n, d) array
        Data assumed ~ N(μ, I_d) for accuracy (privacy does not depend on it).
    rho : float
        Total zCDP budget.
    radius : float
        R: public bound on ‖μ − center‖.
    center : (d,) array, optional
        Centre of the initial ball (default 0).
    n_iter : int
        t, number of steps.
    rhos : array, optional
        Per-step budgets (sum = ρ); default :func:`coinpress_split`.
    projection : {"cumulative", "fresh"}
        Repository behaviour (default) or projecting the original data at every step.
    """
    check_params(rho=rho, radius=radius, n_iter=n_iter, required=True)
    X = _check(X, rho, radius)
    gen = as_generator(rng)
    n, d = X.shape
    rhos = coinpress_split(rho, n_iter) if rhos is None else np.asarray(rhos, dtype=float)
    if not math.isclose(float(rhos.sum()), float(rho), rel_tol=1e-9):
        raise ValueError(f"per-step budgets must sum to rho = {rho}, got {rhos.sum()}")
    if projection not in ("cumulative", "fresh"):
        raise ValueError(f"projection must be 'cumulative' or 'fresh', got {projection!r}")
    c = np.zeros(d) if center is None else np.asarray(center, dtype=float).reshape(d)
    schedule = coinpress_schedule(n, d, radius, rhos)
    Z = X
    centers, radii = [], []
    for C, sigma, r_next in schedule:
        P, mean = _ball_mean(Z, c, C)
        if projection == "cumulative":
            Z = P
        c = add_gaussian(mean, sigma, sensitivity=2.0 * C / n, rng=gen)
        centers.append(c)
        radii.append(r_next)
    return CoinPressResult(
        c, ZCDP(float(rho)), np.array(centers), np.array(radii), np.array([s[1] for s in schedule])
    )


def gaussian_mean(
    X: np.ndarray,
    *,
    rho: float,
    radius: float,
    center: np.ndarray | None = None,
    rng: RNGLike = None,
) -> CoinPressResult:
    """Plain Gaussian mechanism over a declared ball: clip to ``B(center, radius)``, release the
    mean + ``N(0, σ² I)``, ``σ = (2R/n)/√(2ρ)`` (replace-one, public n). ρ-zCDP."""
    X = _check(X, rho, radius)
    n, d = X.shape
    c = np.zeros(d) if center is None else np.asarray(center, dtype=float).reshape(d)
    _, mean = _ball_mean(X, c, radius)
    sigma = gaussian_sigma_zcdp(2.0 * radius / n, rho)
    est = add_gaussian(mean, sigma, sensitivity=2.0 * radius / n, rng=as_generator(rng))
    return CoinPressResult(
        est, ZCDP(float(rho)), est[None, :], np.array([np.nan]), np.array([sigma])
    )
