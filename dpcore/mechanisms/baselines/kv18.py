"""KV18: Karwa & Vadhan (ITCS 2018), "Finite sample differentially private confidence intervals".

The known-variance Gaussian mean estimator, the [KV18] baseline of FriendlyCore's Fig. 5(3)
(Tsfadia et al. 2022, Sec. 6.1: "applied coordinate-wise after a random rotation").

One coordinate (KV18 Alg. 1 + the clipped-mean step of their Sec. 4), data x_i ~ N(μ, σ²) with
σ known and |μ| ≤ R public, n public (KV18's neighbours: replace one record):

1. **Private range.** Bins of width σ centred at jσ, j = −⌈R/σ⌉ … ⌈R/σ⌉; release the histogram
   with Laplace(2/ε₁) noise on each count (one replaced record moves two counts by one) and take
   the centre ĉ = ĵσ of the largest noisy bin.
2. **Clip** every point to [ĉ − w, ĉ + w], w = 4σ√(ln(n/β)) (with probability ≥ 1 − β every
   point of a Gaussian sample lies within w of μ, KV18 Thm 3.1), and release the clipped mean
   plus Laplace(2w/(ε₂ n)) noise (replace-one sensitivity 2w/n).

:func:`kv18_mean_1d` is this, ε = ε₁ + ε₂ pure DP. :func:`kv18_mean` is the d-dimensional
estimator FriendlyCore compares with, in its privacy model (ρ-zCDP): a data-independent random
rotation, then the same two steps on every coordinate with **Gaussian** instead of Laplace noise,
calibrated to the joint ℓ2 sensitivity of all d coordinates (√(2d) for the d histograms, 2w√d/n
for the clipped mean). KV18 is stated for one coordinate and pure DP; FriendlyCore does not say
how it accounted the d coordinates, so this adaptation is ours (Gaussian noise composes in zCDP
with √d instead of d growth; with Laplace per coordinate at ε_c = √(2ρ/d) the error would be
larger still).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.stats import special_ortho_group

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data import limits
from dpcore.data.params import N_PUBLIC_INT, RHO, SHARE, Param, declare, validate_params
from dpcore.privacy.guarantees import ZCDP, PrivacyLeakWarning, PureDP, privacy_alias
from dpcore.privacy.noise import (
    add_gaussian,
    add_laplace,
    gaussian_sigma_zcdp,
    public_randomness,
)

__all__ = ["KV18Result", "kv18_clip_width", "kv18_mean", "kv18_mean_1d"]


@dataclass(frozen=True)
class KV18Result:
    """A KV18 release: the estimate and its guarantee ``privacy_`` (``privacy`` is its deprecated
    name); ``centre`` is the private range centre."""

    estimate: np.ndarray
    centre: np.ndarray
    privacy_: PureDP | ZCDP

    privacy = privacy_alias("privacy")


def kv18_clip_width(n: int, sigma: float, beta: float) -> float:
    """Half-width w = 4σ√(ln(n/β)) of the clipping interval (KV18 Thm 3.1)."""
    return 4.0 * sigma * math.sqrt(math.log(n / beta))


def _check(x: np.ndarray, sigma: float, radius: float, beta: float, ndim: int,
           budget: tuple[str, float], range_share: float, min_rows: int = 1) -> np.ndarray:
    name, value = budget
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    if not 0 < range_share < 1:
        raise ValueError(f"range_share must be in (0, 1), got {range_share!r}")
    x = np.asarray(x, dtype=float)
    if x.ndim != ndim or x.shape[0] < min_rows:
        what = "a non-empty" if min_rows else "a"
        raise ValueError(f"data must be {what} {ndim}-D array, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("data contain NaN or infinite values")
    if not (math.isfinite(sigma) and sigma > 0):
        raise ValueError(f"sigma must be a finite number > 0, got {sigma!r}")
    if not (math.isfinite(radius) and radius > 0):
        raise ValueError(f"radius must be a finite number > 0, got {radius!r}")
    if not 0 < beta < 1:
        raise ValueError(f"beta must be in (0, 1), got {beta!r}")
    return x


def _bin_counts(x: np.ndarray, sigma: float, half_bins: int) -> np.ndarray:
    """Counts of the bins ((j − ½)σ, (j + ½)σ], j = −half_bins … half_bins, per column of x."""
    j = np.ceil(x / sigma - 0.5).astype(np.int64)  # bin index of each value
    inside = np.abs(j) <= half_bins
    cols = np.broadcast_to(np.arange(x.shape[1]), x.shape)
    counts = np.zeros((x.shape[1], 2 * half_bins + 1))
    np.add.at(counts, (cols[inside], j[inside] + half_bins), 1.0)
    return counts


def kv18_mean_1d(
    x, *, epsilon: float, sigma: float, radius: float, beta: float = 0.05,
    range_share: float = 0.5, rng: RNGLike = None,
) -> KV18Result:
    """KV18 mean of one coordinate, ε-DP (replace-one neighbours, n public).

    Parameters
    ----------
    x : (n,) array
    epsilon : float
        Total ε; ``range_share`` of it for the histogram, the rest for the clipped mean.
    sigma : float
        Known standard deviation.
    radius : float
        Public bound R on |μ|.
    beta : float
        Failure probability of the clipping range.
    """
    x = _check(x, sigma, radius, beta, 1, ("epsilon", epsilon), range_share)
    gen = as_generator(rng)
    n = x.size
    half = math.ceil(radius / sigma)
    counts = _bin_counts(x[:, None], sigma, half)[0]
    noisy = add_laplace(counts, 2.0 / (range_share * epsilon), sensitivity=2.0, rng=gen)
    centre = (int(np.argmax(noisy)) - half) * sigma
    w = kv18_clip_width(n, sigma, beta)
    clipped = np.clip(x, centre - w, centre + w)
    est = add_laplace(clipped.mean(), 2.0 * w / ((1.0 - range_share) * epsilon * n),
                      sensitivity=2.0 * w / n, rng=gen)
    return KV18Result(np.array([est]), np.array([centre]), PureDP(epsilon))


@public_randomness("KV18's random rotation (Haar on SO(d)): independent of the data")
def _random_rotation(d: int, gen: np.random.Generator) -> np.ndarray:
    return special_ortho_group.rvs(d, random_state=gen)


@declare(
    rho=RHO,
    sigma=Param("float", limits.MIN_RADIUS, limits.MAX_RADIUS,
                doc="known standard deviation σ of every coordinate"),
    radius=Param("float", limits.MIN_RADIUS, limits.MAX_RADIUS,
                 check=lambda v, name: limits.check_radius(v, name),
                 doc="public bound R on ‖μ‖₂ (not the rows' norm)"),
    beta=Param("float", limits.MIN_PROBABILITY, 1.0,
               check=lambda v, name: limits.check_probability(v, name),
               doc="failure probability of the clipping range"),
    range_share=SHARE,
    rotate=Param("bool", doc="random rotation first"),
    n_public=N_PUBLIC_INT,
)
def kv18_mean(
    X, *, rho: float, sigma: float = 1.0, radius: float, beta: float = 0.05,
    range_share: float = 0.5, rotate: bool = True, n_public: int | None = None,
    rng: RNGLike = None,
) -> KV18Result:
    """KV18 coordinate-wise after a random rotation, ρ-zCDP with Gaussian noise (module doc).

    Parameters
    ----------
    X : (n, d) array
        Rows ~ N(μ, σ² I_d) with ‖μ‖₂ ≤ ``radius`` (so every |μ_j| ≤ radius after any rotation).
    rho : float
        Total zCDP budget; ``range_share`` of it for the d histograms.
    rotate : bool
        Apply a uniformly random rotation first (data-independent; undone on the estimate).
    n_public : int, optional
        The public n (clip width and divisor). The released statistic is
        ĉ + Σ(clip(y) − ĉ)/n_public, which a replaced row moves by ≤ 2w per coordinate and an
        added or removed row by ≤ w, so the ρ holds for both neighbour notions (the histograms'
        √(2d) also covers add/remove's √d); it equals the clipped mean when n_public = n. Default:
        the data's own n (KV18's replace-one model, where n is public), with a
        PrivacyLeakWarning saying so.
    """
    validate_params(kv18_mean._parameter_constraints,
                    {"rho": rho, "sigma": sigma, "radius": radius, "beta": beta,
                     "range_share": range_share, "rotate": rotate, "n_public": n_public})
    # With a public n every step is defined on an empty table (the histograms are noise, the
    # clipped sum is 0, the estimate noise around the noisy range centre): an empty table is
    # released like any other, so ⊥ cannot tell n = 0 from n = 1.
    X = _check(X, sigma, radius, beta, 2, ("rho", rho), range_share,
               min_rows=int(n_public is None))
    gen = as_generator(rng)
    n, d = X.shape
    if n_public is None:
        warnings.warn(f"n_public not given: KV18 uses the data's size n={n} as public (its "
                      "replace-one model); pass n_public", PrivacyLeakWarning, stacklevel=2)
    n_pub = n if n_public is None else int(n_public)
    Q = _random_rotation(d, gen) if rotate and d > 1 else np.eye(d)
    Y = X @ Q
    half = math.ceil(radius / sigma)
    counts = _bin_counts(Y, sigma, half)
    # A replaced row moves two counts in each of the d histograms: joint ℓ2 sensitivity √(2d).
    s_hist = gaussian_sigma_zcdp(math.sqrt(2.0 * d), range_share * rho)
    noisy = add_gaussian(counts, s_hist, sensitivity=math.sqrt(2.0 * d), rng=gen)
    centre = (np.argmax(noisy, axis=1) - half) * sigma
    w = kv18_clip_width(n_pub, sigma, beta)
    clipped = np.clip(Y, centre - w, centre + w)
    sens = 2.0 * w * math.sqrt(d) / n_pub
    s_mean = gaussian_sigma_zcdp(sens, (1.0 - range_share) * rho)
    est = add_gaussian(centre + (clipped - centre).sum(axis=0) / n_pub, s_mean, sensitivity=sens,
                       rng=gen)
    return KV18Result(est @ Q.T, centre @ Q.T, ZCDP(rho))
