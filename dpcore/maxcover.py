"""DP k-means via the exponential mechanism and max cover (Chaturvedi, Nguyen & Xu, AAAI 2021).

Seed paper ``../shared/seeds/003_*``; implementable spec ``../shared/spec/maxcover_kmeans.md``.

Two different epsilons live here and are never mixed:

* ``approx`` is the paper's plain ε, the *approximation constant*: JL distortion, the growth factor
  (1+ε) of the level schedule, the offset set V, and k' = ⌈k/ε⌉ picks per level.
* ``epsilon``/``delta`` are the *privacy* budget (ε_p, δ_p), split into ε_E, δ_E (exponential
  mechanism, Lemma 6.2), ε_L (Laplace counts), ε_G, δ_G (NoisyAVG) and, optionally, a final DP
  Lloyd round (Sec. 7).

Pieces, in the order of Algorithm 2:

* :func:`jl_matrix`, :func:`project_to_unit_ball`: lines 1–5 (data-independent Gaussian JL, public
  scaling 2/((1+ε)Δ) and radial clipping, never the data's own maximum norm).
* :func:`level_schedule`: r_i, t_i, the cover radius R_i = (1+ε) r_i and m = ⌈log_{1+ε} 2n⌉.
* :func:`offset_set`: the level-independent offsets V of Claim 4.1 (Σ v_j² < d'(1/ε+1)²).
* :func:`private_grid_set_cover`: Algorithm 3, the greedy max cover by the exponential mechanism
  over the whole (astronomically large) grid G_i. Both samplers below draw from exactly
  P(g) ∝ exp(ε_E |cover[g]| / 2) over all of G_i while only touching populated cells; the mass of
  the empty cells enters analytically through |G_i| (Claim 4.2):

  - ``"incidence"``: Claim 4.2 literally. Every (point, grid point) incidence is enumerated with
    the offsets V (spec §5.3); P_samp = S/(S+|G|), S = Σ_g expm1(a·c_g), a = ε_E/2; the
    non-uniform branch draws g ∝ expm1(a·c_g). Cost ∝ n·|V|·2^{d'} per level: small problems.
  - ``"lazy"``: the same two-stage mixture, but the non-uniform branch is drawn by exact
    rejection sampling from an adaptive upper envelope (a list of lattice boxes, each with an
    upper bound on the cover of its grid points from a k-d tree count; a rejected box is split,
    Gilks-style adaptive rejection keeps each accepted draw exact). Exact cover counts are only
    computed where the envelope cannot rule a grid point out; memory is O(n + touched cells).
    Fine levels cost one O(n) pass. The cost sits in the few *dense* levels, where the cover
    radius is comparable to the data's spread: there the exact law needs the exact cover of
    every grid point near the densest spots (neighbouring grid points differ by ~75 % in cover
    at the paper's ρ = R/t ≈ 6.7 lattice units in 5-d, so no box bound is tight). Work limits
    raise a clear error; ``MaxCoverKMeans(grid_stride=s)`` (a data-independent sub-lattice,
    privacy unchanged, not the paper's grid) divides the grid points per ball by s^{d'}.

* :func:`noisy_average`: Algorithm 1 (NoisyAVG, Nissim–Stemmer–Vadhan Alg. 5) with the empty /
  tiny-cluster fallback (a uniform point of B_{Δ/2}(0)).
* :class:`MaxCoverKMeans`: Algorithm 2 end to end, ``privacy_`` from Theorem 6.1 (+ the final
  round by basic composition).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse, special
from scipy.spatial import cKDTree

from dpcore.geometry import clip_to_ball, nearest_center
from dpcore.lloyd import cluster_sums, lloyd_statistics
from dpcore.noise import add_gaussian, add_laplace, exponential_mechanism
from dpcore.privacy import ApproxDP, Guarantee, compose
from dpcore.rng import RNGLike, as_generator

__all__ = [
    "DEFAULT_BUDGET_SPLIT",
    "BudgetSplit",
    "LevelSchedule",
    "MaxCoverKMeans",
    "NoisyAverage",
    "jl_matrix",
    "level_schedule",
    "noisy_average",
    "noisy_candidate_counts",
    "noisy_cluster_averages",
    "offset_set",
    "privacy_cost",
    "private_grid_set_cover",
    "project_to_unit_ball",
    "split_budget",
]

#: NoisyAVG (Theorem 2.6) is only proven (ε, δ)-DP for ε ≤ 1/3.
NOISY_AVG_MAX_EPSILON = 1.0 / 3.0

#: Default split of the total privacy ε_p (the paper gives none; spec §2.5, prior_art §6).
#: ``em`` is the share of ε_p that the whole candidate construction costs after Lemma 6.2's
#: factor e·ln(1/δ_E)/2; ``average`` is NoisyAVG's ε_G; ``lloyd`` the optional final round.
#: Chosen so that ε_G and the final round stay ≤ 1/3 at ε_p = 1 (Theorem 2.6's range) while the
#: exponential mechanism, whose effective ε_E is divided by e·ln(1/δ_E)/2 ≈ 23, keeps the largest
#: share. The public re-implementation's 0.2/0.2/0.6 violates ε_G ≤ 1/3 at ε_p = 1.
DEFAULT_BUDGET_SPLIT: dict[str, float] = {"em": 0.5, "counts": 0.17, "average": 0.33}
#: Default split when ``final_lloyd=True`` (Sec. 7's extra DP Lloyd round).
DEFAULT_BUDGET_SPLIT_WITH_LLOYD: dict[str, float] = {
    "em": 0.4,
    "counts": 0.1,
    "average": 0.25,
    "lloyd": 0.25,
}


# --------------------------------------------------------------------------------------------
# Privacy accounting (Theorem 6.1, Lemma 6.2)
# --------------------------------------------------------------------------------------------


def privacy_cost(
    eps_E: float, eps_L: float, eps_G: float, delta_E: float, delta_G: float
) -> ApproxDP:
    """Guarantee of Algorithm 2 (Theorem 6.1).

    (e·ε_E·ln(1/δ_E)/2 + ε_L + ε_G, δ_E + δ_G)-DP, independent of k, k', m and n: the m·k'
    adaptive exponential-mechanism picks cost (e ε_E ln(1/δ_E)/2, δ_E) together (Lemma 6.2, the
    Gupta et al. technique), the Laplace counts ε_L, and the k NoisyAVG calls on a partition
    (ε_G, δ_G) by parallel composition.
    """
    for name, v in (("eps_E", eps_E), ("eps_L", eps_L), ("eps_G", eps_G)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    for name, v in (("delta_E", delta_E), ("delta_G", delta_G)):
        if not 0 < v < 1:
            raise ValueError(f"{name} must be in (0, 1), got {v!r}")
    eps = math.e * eps_E * math.log(1.0 / delta_E) / 2.0 + eps_L + eps_G
    return ApproxDP(eps, delta_E + delta_G)


@dataclass(frozen=True)
class BudgetSplit:
    """Per-step privacy parameters of Algorithm 2 (+ the optional final DP Lloyd round).

    ``eps_E`` is the exponential mechanism's own ε (weight exp(ε_E·cover/2)), not its share of
    the total: the candidate construction costs e·ε_E·ln(1/δ_E)/2 (Lemma 6.2).
    """

    eps_E: float
    delta_E: float
    eps_L: float
    eps_G: float
    delta_G: float
    eps_lloyd: float = 0.0
    delta_lloyd: float = 0.0

    @property
    def guarantee(self) -> ApproxDP:
        """Total guarantee: Theorem 6.1 composed with the final round (basic composition)."""
        g: Guarantee = privacy_cost(self.eps_E, self.eps_L, self.eps_G, self.delta_E, self.delta_G)
        if self.eps_lloyd > 0:
            g = compose(g, ApproxDP(self.eps_lloyd, self.delta_lloyd))
        return g.to_approx_dp()

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def split_budget(
    epsilon: float,
    delta: float,
    fractions: Mapping[str, float] | None = None,
    *,
    final_lloyd: bool = False,
) -> BudgetSplit:
    """Split a total (ε_p, δ_p) into the per-step parameters (spec §2.5, INFERRED helper).

    Parameters
    ----------
    epsilon, delta : float
        Total budget, ε_p > 0 and 0 < δ_p < 1.
    fractions : mapping, optional
        Shares of ε_p for ``"em"``, ``"counts"``, ``"average"`` (and ``"lloyd"`` when
        ``final_lloyd``), summing to 1. Default :data:`DEFAULT_BUDGET_SPLIT` (or
        :data:`DEFAULT_BUDGET_SPLIT_WITH_LLOYD`).
    final_lloyd : bool
        Reserve a share for one DP Lloyd round after Algorithm 2 (Sec. 7).

    Notes
    -----
    δ_p is split equally between the steps that use it (the exponential mechanism, NoisyAVG and
    the final round). ε_E = 2·f_E·ε_p / (e·ln(1/δ_E)) so that Lemma 6.2 charges exactly f_E·ε_p.
    ε_G (and the final round's ε) above 1/3 are clamped to 1/3 with a warning: NoisyAVG is only
    proven private up to 1/3 (Theorem 2.6); the delivered guarantee is then smaller than asked.
    """
    epsilon, delta = _check_privacy(epsilon, delta)
    keys = ("em", "counts", "average") + (("lloyd",) if final_lloyd else ())
    if fractions is None:
        fractions = DEFAULT_BUDGET_SPLIT_WITH_LLOYD if final_lloyd else DEFAULT_BUDGET_SPLIT
    fractions = dict(fractions)
    if set(fractions) != set(keys):
        raise ValueError(
            f"budget_split must have exactly the keys {sorted(keys)}, got {sorted(fractions)}"
        )
    vals = np.array([float(fractions[k]) for k in keys])
    if not np.all(np.isfinite(vals)) or np.any(vals <= 0) or abs(vals.sum() - 1.0) > 1e-9:
        raise ValueError(f"budget_split fractions must be > 0 and sum to 1, got {fractions}")
    n_delta = 2 + int(final_lloyd)
    d_each = delta / n_delta
    eps_E = 2.0 * fractions["em"] * epsilon / (math.e * math.log(1.0 / d_each))
    eps_G = _clamp_noisy_avg(fractions["average"] * epsilon, "average (ε_G)")
    eps_ll = _clamp_noisy_avg(fractions["lloyd"] * epsilon, "lloyd") if final_lloyd else 0.0
    return BudgetSplit(
        eps_E=eps_E,
        delta_E=d_each,
        eps_L=fractions["counts"] * epsilon,
        eps_G=eps_G,
        delta_G=d_each,
        eps_lloyd=eps_ll,
        delta_lloyd=d_each if final_lloyd else 0.0,
    )


def _clamp_noisy_avg(eps: float, what: str) -> float:
    if eps > NOISY_AVG_MAX_EPSILON:
        warnings.warn(
            f"the {what} share gives ε = {eps:.4g} > 1/3, beyond NoisyAVG's proven range "
            "(Theorem 2.6); using ε = 1/3 instead, so the delivered guarantee is smaller than "
            "the requested total (see privacy_)",
            UserWarning,
            stacklevel=3,
        )
        return NOISY_AVG_MAX_EPSILON
    return eps


def _check_privacy(epsilon: float, delta: float) -> tuple[float, float]:
    try:
        epsilon, delta = float(epsilon), float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon and delta must be numbers, got {epsilon!r}, {delta!r}") from None
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if not 0 < delta < 1:
        raise ValueError(
            f"delta must be in (0, 1) (e.g. n**-1.5 as in the paper's experiments), got {delta!r}"
        )
    return epsilon, delta


def _check_approx(approx: float) -> float:
    approx = float(approx)
    if not 0 < approx < 1:
        raise ValueError(
            f"approx (the approximation constant ε of the paper, not the privacy ε) must be in "
            f"(0, 1), preferably ≤ 0.5; got {approx!r}"
        )
    return approx


# --------------------------------------------------------------------------------------------
# Algorithm 1: NoisyAVG
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoisyAverage:
    """Output of :func:`noisy_average`: the private mean and the guarantee it cost."""

    center: np.ndarray
    privacy: ApproxDP


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
        ``center`` (d,) and ``privacy`` = ApproxDP(ε, δ).
    """
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
    return NoisyAverage(center=center, privacy=ApproxDP(float(epsilon), float(delta)))


def _check_radius(radius: float) -> float:
    try:
        r = float(radius)
    except (TypeError, ValueError):
        raise ValueError(f"radius must be a positive number, got {radius!r}") from None
    if not (math.isfinite(r) and r > 0):
        raise ValueError(f"radius must be finite and > 0 (a public bound), got {radius!r}")
    return r


def _clip_with_warning(X: np.ndarray, radius: float) -> np.ndarray:
    """Clip rows to the public ball; say how many were clipped (never silently)."""
    if X.shape[0] == 0:
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


# --------------------------------------------------------------------------------------------
# Algorithm 2, lines 1–8: projection, scaling, schedule, offsets
# --------------------------------------------------------------------------------------------


def jl_matrix(d: int, d_prime: int, rng: RNGLike = None) -> np.ndarray:
    """Dense Gaussian Johnson–Lindenstrauss matrix, shape (d', d), entries N(0, 1/d').

    Data-independent (costs no privacy). Identity when d' ≥ d (no projection needed).
    """
    d, d_prime = int(d), int(d_prime)
    if d < 1 or d_prime < 1:
        raise ValueError(f"need d ≥ 1 and d' ≥ 1, got d={d}, d'={d_prime}")
    if d_prime >= d:
        return np.eye(d)
    return as_generator(rng).standard_normal((d_prime, d)) / math.sqrt(d_prime)


def project_to_unit_ball(X: np.ndarray, T: np.ndarray, radius: float, approx: float) -> np.ndarray:
    """Algorithm 2, lines 2–5: y = T x · 2/((1+ε)Δ), then radial clip y ← y/max(1, ‖y‖).

    Δ = 2·radius is the public diameter; (1+ε) absorbs the JL expansion (Lemma 5.8). The clip is
    per point and data-independent, so it preserves privacy (never divide by the data's max norm).
    """
    Y = np.asarray(X, dtype=float) @ T.T
    Y *= 1.0 / ((1.0 + approx) * radius)
    return clip_to_ball(Y, 1.0)


@dataclass(frozen=True)
class LevelSchedule:
    """Level schedule of Algorithm 2 (lines 6–11), with d' in place of d (spec §2.1).

    Attributes
    ----------
    r : (m,) threshold radii (1+ε)^{i−1}/n
    t : (m,) grid unit lengths ε·r_i/√d'
    cover_radius : (m,) R_i = r_i + t_i√d' = (1+ε) r_i
    M : (m,) grid half-widths ⌊1/t_i⌋; G_i = t_i·{−M_i..M_i}^{d'} (spec §2.1 recommendation)
    rho : cover radius in lattice units, R_i/t_i = (1+ε)√d'/ε (level-independent)
    """

    n: int
    d_prime: int
    approx: float
    r: np.ndarray
    t: np.ndarray
    cover_radius: np.ndarray
    M: np.ndarray
    rho: float = field(default=0.0)

    @property
    def m(self) -> int:
        return int(self.r.size)

    def log_grid_size(self, i: int) -> float:
        """log |G_i| = d'·log(2M_i + 1) (the count used by the sampler's uniform branch)."""
        return self.d_prime * math.log(2 * int(self.M[i]) + 1)


def level_schedule(n: int, d_prime: int, approx: float) -> LevelSchedule:
    """r_1 = 1/n, t_1 = ε/(n√d'), ×(1+ε) per level, m = ⌈log_{1+ε}(2n)⌉ levels.

    m is computed exactly as the least integer with (1+ε)^m ≥ 2n, so r_m ∈ [2/(1+ε), 2).
    """
    approx = _check_approx(approx)
    n, d_prime = int(n), int(d_prime)
    if n < 1 or d_prime < 1:
        raise ValueError(f"need n ≥ 1 and d' ≥ 1, got n={n}, d'={d_prime}")
    m = max(1, math.ceil(math.log(2 * n) / math.log1p(approx)))
    while m > 1 and (1 + approx) ** (m - 1) >= 2 * n:
        m -= 1
    while (1 + approx) ** m < 2 * n:
        m += 1
    r = (1 + approx) ** np.arange(m) / n
    t = approx * r / math.sqrt(d_prime)
    R = r + t * math.sqrt(d_prime)
    M = np.floor(1.0 / t).astype(np.int64)
    rho = (1 + approx) * math.sqrt(d_prime) / approx
    return LevelSchedule(n, d_prime, approx, r, t, R, M, rho)


def offset_set(d_prime: int, approx: float) -> np.ndarray:
    """Offsets V = {v ∈ N^{d'} : Σ v_j² < d'(1/ε + 1)²} of Claim 4.1, shape (|V|, d').

    Level-independent because r_i = t_i√d'/ε. N includes 0.
    """
    approx = _check_approx(approx)
    return _offsets_within(d_prime, d_prime * (1.0 / approx + 1.0) ** 2)


def _offsets_within(d_prime: int, bound: float) -> np.ndarray:
    """{v ∈ N^{d'} : Σ v_j² < bound} by recursive enumeration (bound = ρ² in lattice units)."""
    vmax = math.ceil(math.sqrt(bound))
    rows = np.zeros((1, 0), dtype=np.int64)
    sq = np.zeros(1)
    for _ in range(d_prime):
        vals = np.arange(vmax + 1)
        new_sq = sq[:, None] + vals[None, :] ** 2
        keep = new_sq < bound
        idx, val = np.nonzero(keep)
        rows = np.hstack([rows[idx], val[:, None]])
        sq = new_sq[idx, val]
    return rows


def _signed_offsets(V: np.ndarray) -> np.ndarray:
    """All δ(s, v) = s + (2s − 1)∘v for s ∈ {0,1}^{d'}, v ∈ V (Alg. 3, line 7), (|V|·2^{d'}, d')."""
    d = V.shape[1]
    S = ((np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1).astype(np.int64)
    return (S[:, None, :] + (2 * S[:, None, :] - 1) * V[None, :, :]).reshape(-1, d)


def _within(Y: np.ndarray, b: np.ndarray, rho: float) -> np.ndarray:
    """The cover test of Alg. 3 line 8 in lattice units: ‖y − b‖ < ρ (strict). One formula."""
    diff = Y - b
    return np.einsum("...j,...j->...", diff, diff) < rho * rho


# --------------------------------------------------------------------------------------------
# Algorithm 3: private greedy grid set cover
# --------------------------------------------------------------------------------------------


def _log_expm1(x: np.ndarray | float):
    """log(e^x − 1) for x > 0, stable for huge x (x + log1p(−e^{−x}) above 30)."""
    x = np.asarray(x, dtype=float)
    big = x > 30.0
    with np.errstate(divide="ignore"):
        small = np.log(np.expm1(np.where(big, 30.0, x)))
    return np.where(big, x + np.log1p(-np.exp(-np.where(big, x, 30.0))), small)


def _categorical(logits: np.ndarray, gen: np.random.Generator) -> int:
    """Index drawn with P ∝ exp(logits), by the package's one Gumbel-max sampler.

    ``exponential_mechanism`` with ε = 2 and sensitivity 1 has probabilities ∝ exp(score).
    """
    return int(exponential_mechanism(logits, 2.0, 1.0, rng=gen))


class _IncidenceCover:
    """Explicit cover structure of one level (spec §5.3): every (point, grid point) incidence.

    Built with the offsets of Claim 4.1; after a pick the counts of every grid point incident to
    a removed point are decremented (equivalent to recomputing cover, lines 3–17).
    """

    def __init__(self, Y: np.ndarray, rho: float, M: int, V_signed: np.ndarray, max_inc: int):
        n, d = Y.shape
        self.d, self.M = d, M
        if n * V_signed.shape[0] > max_inc:
            raise ValueError(
                f"sampler='incidence' would check {n * V_signed.shape[0]:.3g} (point, grid point) "
                f"pairs at this level (limit {max_inc:.3g}); use sampler='lazy' (same output "
                "distribution) or a larger grid_stride"
            )
        F = np.floor(Y).astype(np.int64)
        B = F[:, None, :] + V_signed[None, :, :]  # candidates f + s + (2s−1)v
        ok = _within(Y[:, None, :], B, rho) & np.all(np.abs(B) <= M, axis=2)
        pt, which = np.nonzero(ok)
        # distinct grid points by row (a mixed-radix int64 key would overflow for (2M+1)^{d'})
        self.cells, cell = np.unique(B[pt, which], axis=0, return_inverse=True)
        self.cell = cell.ravel()
        self._index = {tuple(r): j for j, r in enumerate(self.cells.tolist())}
        # cell -> points (CSR over cells) and point -> cells (CSR over points)
        self.c2p = sparse.csr_matrix(
            (np.ones(pt.size, dtype=np.int32), (self.cell, pt)), shape=(len(self.cells), n)
        )
        self.p2c = self.c2p.T.tocsr()
        self.counts = np.asarray(self.c2p.sum(axis=1)).ravel().astype(np.int64)

    def cover_of(self, b: np.ndarray, active: np.ndarray) -> np.ndarray:
        j = self._index.get(tuple(int(x) for x in b))
        if j is None:
            return np.empty(0, dtype=np.int64)
        row = self.c2p.indices[self.c2p.indptr[j] : self.c2p.indptr[j + 1]]
        return row[active[row]]

    def decode(self, j: int) -> np.ndarray:
        return self.cells[j].copy()

    def remove(self, points: np.ndarray) -> None:
        if points.size:
            cells = self.p2c[points].indices
            self.counts -= np.bincount(cells, minlength=len(self.cells))

    def draw(self, a: float, log_n_grid: float, gen: np.random.Generator) -> np.ndarray:
        """One draw of Claim 4.2's two-stage sampler (exact P(g) ∝ exp(a·c_g) over G_i)."""
        pos = self.counts > 0
        p_samp = 0.0
        if np.any(pos):
            c = self.counts[pos]
            logits = a * c + np.log1p(-np.exp(-a * c))  # log(exp(a c) − 1)
            log_s = float(special.logsumexp(logits))
            p_samp = math.exp(log_s - np.logaddexp(log_s, log_n_grid))  # 1 − |G|/totalCover
        if gen.random() < p_samp:  # P' ∝ exp(a c_g) − 1 on populated cells
            return self.decode(int(np.flatnonzero(pos)[_categorical(logits, gen)]))
        # uniform over all of G_i (may hit a populated cell; line 31 then removes its cover)
        return gen.integers(-self.M, self.M + 1, size=self.d)


_HASH = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)


def _max_run(rows: np.ndarray) -> int:
    """An upper bound on the largest multiplicity of a row of an integer array.

    Rows are hashed to one uint64 (wrapping multiply-add); a collision can only merge buckets,
    so the largest bucket is ≥ the largest true multiplicity (an upper bound is all we need).
    """
    mult = _HASH[np.arange(rows.shape[1]) % 3] + 2 * np.arange(rows.shape[1], dtype=np.uint64)
    with np.errstate(over="ignore"):
        keys = (rows.astype(np.uint64) * mult).sum(axis=1, dtype=np.uint64)
    return int(np.unique(keys, return_counts=True)[1].max())


class _LazyCover:
    """Exact sampler of the non-uniform branch by adaptive rejection from an upper envelope.

    Target excess weight of grid point g: e(g) = expm1(a·c_g) (zero for empty cells). The
    envelope u(g) ≥ e(g) is a list of nodes, each with a known total mass and a way to draw from
    it; a proposal g from node j is accepted with probability e(g)/u(g), the exact cover c_g being
    computed only for that one g. A rejected node is replaced by tighter ones (Gilks-style
    adaptive rejection: every accepted draw is exact whatever the history). Upper bounds stay
    valid when points are removed (counts only decrease), so the envelope is kept across the k'
    picks of a level. Node kinds:

    * ``global``: u(g) = h(c_max)·#{p : ‖⌊p⌋ − g‖_∞ ≤ w}, h(c) = expm1(a c)/c increasing,
      c_max ≥ max_g c_g (2^{d'} × the fullest cell of side 2ρ), w = ⌈ρ⌉. Drawn by a uniform
      point p and a uniform g in its cube. Mass n·(2w+1)^{d'}·h(c_max): negligible at the
      fine levels, where it makes a level cost one k-d tree.
    * ``box``: lattice box [lo, hi] with B = #points within ρ + half-diagonal of its centre;
      u(g) = expm1(a B). Split in two when rejected, turned into a block when small.
    * ``block``: ≤ ``block_size`` grid points with per-point bounds (k-d tree counts with a
      radius inflated by 1e-9, so they bound the exact strict count).
    """

    block_size = 1024

    def __init__(self, Y: np.ndarray, active: np.ndarray, rho: float, M: int, a: float):
        self.Y, self.active, self.rho, self.M, self.a = Y, active, rho, M, a
        self.d = Y.shape[1]
        self.w = math.ceil(rho)
        self.r_up = rho * (1 + 1e-9) + 1e-9
        self.n_evaluations = 0
        self.work = 0  # points counted by k-d tree queries (what the time is spent on)
        self.n_proposals = 0
        self.nodes: list[tuple | None] = []  # removed nodes become None (indices stay stable)
        self._lm = np.empty(64)  # log masses of the nodes; removed ones are −1e300 (mass 0)
        self._dead = 0
        self._rebuild()
        if self.idx.size:
            # c_max: a ball of radius ρ lies in a box of side 2ρ, which meets at most 2^{d'}
            # cells of the aligned grid of side 2ρ; O(n), unlike exact neighbour counts.
            cells = np.floor(self.Y[self.idx] / (2 * self.rho)).astype(np.int64)
            self.c_max = int(min(self.idx.size, 2**self.d * _max_run(cells)))
            self._push_global()

    def _rebuild(self) -> None:
        # The k-d trees hold the points uncovered at the last rebuild; points covered since are
        # still in them, so tree counts remain upper bounds (exact counts filter by `active`).
        self.idx = np.flatnonzero(self.active)
        self._removed = 0
        self._tree = self._ftree = self._F = None  # built on first use: the fine levels never
        # need them (every pick there comes from the uniform branch)
        if self.idx.size:
            Ya = self.Y[self.idx]
            self._bb = (Ya.min(axis=0), Ya.max(axis=0))

    def _add(self, node: tuple, logmass: float) -> None:
        n = len(self.nodes)
        if n == self._lm.size:
            self._lm = np.concatenate([self._lm, np.empty(n)])
        self.nodes.append(node)
        self._lm[n] = logmass

    def _drop(self, j: int) -> None:
        self.nodes[j] = None
        self._lm[j] = -1e300
        self._dead += 1

    def _compact(self) -> None:
        keep = [j for j, node in enumerate(self.nodes) if node is not None]
        self._lm = np.concatenate([self._lm[keep], np.empty(max(64, len(keep)))])
        self.nodes = [self.nodes[j] for j in keep]
        self._dead = 0

    @property
    def tree(self) -> cKDTree | None:
        """k-d tree of the uncovered points (lattice units)."""
        if self._tree is None and self.idx.size:
            self._tree = cKDTree(self.Y[self.idx])
        return self._tree

    @property
    def F(self) -> np.ndarray:
        """⌊y⌋ of the uncovered points."""
        if self._F is None:
            self._F = np.floor(self.Y[self.idx]).astype(np.int64)
        return self._F

    def _h(self, c: float) -> float:
        return float(_log_expm1(self.a * c)) - math.log(c)  # log h(c)

    def _push_global(self) -> None:
        log_u = math.log(self.idx.size) + self.d * math.log(2 * self.w + 1) + self._h(self.c_max)
        self._add(("global",), log_u)

    def _push_box(self, lo: np.ndarray, hi: np.ndarray) -> None:
        if not self.idx.size:
            return
        size = int(np.prod((hi - lo + 1).astype(float)))
        if size <= self.block_size:
            self._push_block(lo, hi)
            return
        centre = (lo + hi) / 2.0
        r = (self.rho + float(np.linalg.norm((hi - lo) / 2.0))) * (1 + 1e-9) + 1e-9
        far = np.maximum(np.abs(centre - self._bb[0]), np.abs(centre - self._bb[1]))
        if float(np.linalg.norm(far)) < r:  # the ball holds every point: no query needed
            B = int(self.idx.size)
        else:
            B = int(self.tree.query_ball_point(centre, r, return_length=True))
            self.work += B + 1
        self.n_evaluations += 1
        if B:
            self._add(("box", lo, hi, B), math.log(size) + float(_log_expm1(self.a * B)))

    def _push_block(self, lo: np.ndarray, hi: np.ndarray | None = None, G=None) -> None:
        if not self.idx.size:
            return
        if G is None:
            axes = [np.arange(lo[j], hi[j] + 1) for j in range(self.d)]
            G = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, self.d)
        u = self._block_counts(G)
        self.n_evaluations += G.shape[0]
        self.work += int(u.sum()) + G.shape[0]
        keep = u > 0
        if np.any(keep):
            G, logw = G[keep], _log_expm1(self.a * u[keep])
            self._add(("block", G, logw), float(special.logsumexp(logw)))

    def _block_counts(self, G: np.ndarray) -> np.ndarray:
        """Upper bounds on the cover of each grid point of G (k-d tree counts, C speed).

        The radius is inflated by 1e-9 (relative), so each count bounds the exact strict count
        of :func:`_within` despite rounding.
        """
        return self.tree.query_ball_point(G.astype(float), self.r_up, return_length=True)

    def root_box(self) -> None:
        Ya = self.Y[self.idx]
        lo = np.clip(np.floor(Ya.min(axis=0) - self.rho), -self.M, self.M).astype(np.int64)
        hi = np.clip(np.ceil(Ya.max(axis=0) + self.rho), -self.M, self.M).astype(np.int64)
        self._push_box(lo, hi)

    def cover_of(self, b: np.ndarray) -> np.ndarray:
        """Indices (into Y) of the uncovered points strictly within ρ of grid point b."""
        if not self.idx.size:
            return np.empty(0, dtype=np.int64)
        cand = self.idx[np.asarray(self.tree.query_ball_point(b.astype(float), self.r_up), int)]
        cand = cand[self.active[cand]]
        return cand[_within(self.Y[cand], b, self.rho)]

    def remove(self, points: np.ndarray) -> None:
        """Note covered points (the caller already cleared them in ``active``).

        The trees are rebuilt lazily, when a rejection needs tight bounds again (stale trees
        only over-count, so every bound stays valid meanwhile).
        """
        self._removed += points.size

    def _refresh(self) -> None:
        self._rebuild()
        # the global node's mass depends on the tree's n; re-derive it
        for j, node in enumerate(self.nodes):
            if node is not None and node[0] == "global":
                self._drop(j)
                if self.idx.size:
                    self._push_global()
                break

    def _propose(self, node: tuple, gen: np.random.Generator):
        """Draw g from the node; return (g, log u(g)) or (None, None) off the grid."""
        kind = node[0]
        if kind == "global":
            p = gen.integers(self.idx.size)
            b = self.F[p] + gen.integers(-self.w, self.w + 1, size=self.d)
            if np.any(np.abs(b) > self.M):
                return None, None
            if self._ftree is None:
                self._ftree = cKDTree(self.F)
            cnt = self._ftree.query_ball_point(
                b.astype(float), self.w + 0.5, p=np.inf, return_length=True
            )
            return b, math.log(int(cnt)) + self._h(self.c_max)
        if kind == "box":
            _, lo, hi, B = node
            return lo + gen.integers(0, hi - lo + 1), float(_log_expm1(self.a * B))
        _, G, logw = node
        q = _categorical(logw, gen)
        return G[q], float(logw[q])

    def draw(
        self,
        log_n_grid: float,
        gen: np.random.Generator,
        max_proposals: int,
        max_work: float = math.inf,
    ) -> np.ndarray:
        """One exact draw from P(g) ∝ exp(a·c_g) over the whole grid."""
        for _ in range(max_proposals):
            if self.work > max_work:
                raise RuntimeError(
                    f"the exact grid sampler counted more than {max_work:.3g} points "
                    "at one level (dense data on a fine grid: every grid point near the densest "
                    "spots must be counted exactly); use MaxCoverKMeans(grid_stride=...) (a "
                    "data-independent sub-lattice, privacy unchanged) or a smaller proj_dim"
                )
            self.n_proposals += 1
            if self._dead > max(256, len(self.nodes) // 2):
                self._compact()
            logits = np.concatenate([[log_n_grid], self._lm[: len(self.nodes)]])
            j = _categorical(logits, gen)
            if j == 0:  # uniform branch: mass |G| (weight 1 per grid point)
                return gen.integers(-self.M, self.M + 1, size=self.d)
            node = self.nodes[j - 1]
            b, log_u = self._propose(node, gen)
            if b is not None:
                c = self.cover_of(b).size
                self.n_evaluations += 1
                self.work += c + 1
                if c > 0 and math.log(gen.random()) < float(_log_expm1(self.a * c)) - log_u:
                    return b
            # rejected: tighten the envelope where it was loose (with fresh trees)
            self._drop(j - 1)
            if self._removed:
                self._refresh()
            if node[0] == "global":
                self.root_box()
            elif node[0] == "block":
                self._push_block(None, G=node[1])
            else:
                _, lo, hi, _ = node
                ax = int(np.argmax(hi - lo))
                mid = (lo[ax] + hi[ax]) // 2
                hi1, lo2 = hi.copy(), lo.copy()
                hi1[ax], lo2[ax] = mid, mid + 1
                self._push_box(lo, hi1)
                self._push_box(lo2, hi)
        raise RuntimeError(
            f"lazy grid sampler exceeded max_proposals={max_proposals}; use a larger approx or "
            "a smaller proj_dim"
        )


def private_grid_set_cover(
    Y: np.ndarray,
    active: np.ndarray,
    t: float,
    rho: float,
    M: int,
    k_prime: int,
    eps_E: float,
    *,
    rng: RNGLike = None,
    sampler: str = "lazy",
    max_incidences: int = 20_000_000,
    max_proposals: int = 200_000,
    max_work: float = 5e8,
    stats: dict | None = None,
) -> np.ndarray:
    """Algorithm 3 (private grid set cover) at one level; returns C_i as lattice indices.

    Parameters
    ----------
    Y : (n, d') projected data in B_1(0).
    active : (n,) bool, updated in place: points covered by a pick are set False (D' is passed
        by reference in Alg. 2 line 9; covered points stay removed at later levels).
    t, rho, M : grid unit t_i, cover radius in lattice units ρ = R_i/t_i, grid half-width M_i.
    k_prime : number of picks k' (all are made, even once D' is empty: no early stop).
    eps_E : privacy ε of each exponential-mechanism pick (weight exp(ε_E·|cover[g]|/2)).
    sampler : ``"lazy"`` or ``"incidence"`` (identical output distributions).
    max_incidences, max_proposals, max_work : work limits per level (incidences of the
        incidence sampler; proposals and points counted by k-d tree queries of the lazy one);
        exceeding one raises a clear error instead of running (or allocating) without bound.

    Returns
    -------
    (k', d') int64 array of lattice indices b; the grid points are t·b.
    """
    gen = as_generator(rng)
    Yl = np.asarray(Y, dtype=float) / t  # lattice units: grid points are the integer vectors
    d = Yl.shape[1]
    a = eps_E / 2.0
    log_n = d * math.log(2 * M + 1)
    out = np.empty((k_prime, d), dtype=np.int64)
    if sampler == "incidence":
        act_idx = np.flatnonzero(active)
        V_signed = _signed_offsets(_offsets_within(d, rho * rho))
        inc = _IncidenceCover(Yl[act_idx], rho, M, V_signed, max_incidences)
        local_active = np.ones(act_idx.size, dtype=bool)
        for q in range(k_prime):
            b = inc.draw(a, log_n, gen)
            covered = inc.cover_of(b, local_active)
            local_active[covered] = False
            inc.remove(covered)
            active[act_idx[covered]] = False
            out[q] = b
    elif sampler == "lazy":
        lazy = _LazyCover(Yl, active, rho, M, a)
        for q in range(k_prime):
            b = lazy.draw(log_n, gen, max_proposals, max_work)
            covered = lazy.cover_of(b)
            active[covered] = False
            lazy.remove(covered)
            out[q] = b
        if stats is not None:
            stats["proposals"] = stats.get("proposals", 0) + lazy.n_proposals
            stats["evaluations"] = stats.get("evaluations", 0) + lazy.n_evaluations
            stats["work"] = stats.get("work", 0) + lazy.work
    else:
        raise ValueError(f"sampler must be 'lazy' or 'incidence', got {sampler!r}")
    return out


# --------------------------------------------------------------------------------------------
# Algorithm 2: the estimator
# --------------------------------------------------------------------------------------------


def noisy_candidate_counts(
    Y: np.ndarray, C: np.ndarray, eps_L: float, *, rng: RNGLike = None
) -> np.ndarray:
    """Algorithm 2, lines 13–17: n'_c = n_c + Lap(1/ε_L), n_c = #points of the full D' nearest c.

    The count vector has ℓ1 sensitivity 1 under add/remove (proof of Theorem 6.1), so this is
    ε_L-DP. Noise is added to every candidate, including those with n_c = 0.
    """
    lab, _ = nearest_center(Y, C)
    n_c = np.bincount(lab, minlength=C.shape[0])
    return add_laplace(n_c, 1.0 / eps_L, sensitivity=1.0, rng=rng)


def _weighted_kmeans(C: np.ndarray, w: np.ndarray, k: int, gen: np.random.Generator):
    """Line 19: non-private k-means++ + Lloyd on the weighted proxy set D'' (R^{d'})."""
    from sklearn.cluster import KMeans

    pos = w > 0
    Cp, wp = C[pos], w[pos]
    if Cp.shape[0] <= k:  # fewer than k usable candidates: pad with uniform points of B_1(0)
        pad = _uniform_in_ball(k - Cp.shape[0], C.shape[1], 1.0, gen)
        return np.vstack([Cp, pad])
    km = KMeans(n_clusters=k, n_init=3, max_iter=300, random_state=int(gen.integers(2**31 - 1)))
    km.fit(Cp, sample_weight=wp)
    return km.cluster_centers_


class MaxCoverKMeans:
    """DP k-means by exponential-mechanism max cover on grids (Algorithms 2 and 3).

    Parameters
    ----------
    n_clusters : int
        k; ``fit`` always returns exactly k centres.
    epsilon, delta : float
        Total privacy budget (ε_p, δ_p) of Theorem 6.1 (+ final round).
    radius : float
        Public radius: the data are assumed to lie in B_radius(0) (Δ = 2·radius). Rows outside
        are clipped onto the ball with a warning.
    approx : float
        The paper's approximation constant ε ∈ (0, 1) (not a privacy parameter). Default 0.5.
    budget_split : mapping, optional
        Shares of ε_p (see :func:`split_budget`); default :data:`DEFAULT_BUDGET_SPLIT`.
    proj_dim : int, optional
        d'. Default ⌊ln(n)/2⌋ (≥ 1) as in the experiments (Sec. 7).
    n_public : int, optional
        The public n the schedule uses (r_1 = 1/n, m, d'). The paper treats n as public; by
        default the data's own n is used and a PrivacyLeakWarning says so.
    final_lloyd : bool
        Run one DP Lloyd round (NoisyAVG per cluster in R^d, spec §4.3) after Algorithm 2, as the
        paper's experiments do (Sec. 7); it takes the ``"lloyd"`` share of the budget.
    sampler : {"lazy", "incidence"}
        Implementation of the exponential mechanism over G_i (identical output distribution).
    grid_stride : int
        1 (default) is the paper's grid. s > 1 restricts the candidates to the sub-lattice
        (s·t_i)·Z^{d'} with the same cover radius R_i: NOT in the paper, a data-independent
        restriction of the exponential mechanism's range (spec §5.3 item 8), so the privacy
        guarantee is unchanged, but the snapping error grows to s·t_i√d' (Lemma 5.1's utility
        bound no longer applies). It divides the grid points per ball by ≈ s^{d'}, which is
        what makes the dense levels tractable at n ≈ 10⁵ (see the reproduction report).
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k, d) array
    privacy_ : ApproxDP
    budget_ : BudgetSplit
    candidates_ : (|C|, d') array, the released candidate grid points
    proxy_weights_ : (|C|,) array, the noisy counts max(0, round(n_c + Lap(1/ε_L)))
    proxy_centers_ : (k, d') array S''
    schedule_ : LevelSchedule
    stats_ : dict of work counters (not private: diagnostics only)
    """

    def __init__(
        self,
        n_clusters: int,
        *,
        epsilon: float,
        delta: float,
        radius: float,
        approx: float = 0.5,
        budget_split: Mapping[str, float] | None = None,
        proj_dim: int | None = None,
        n_public: int | None = None,
        final_lloyd: bool = False,
        sampler: str = "lazy",
        grid_stride: int = 1,
        rng: RNGLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.approx = approx
        self.budget_split = budget_split
        self.proj_dim = proj_dim
        self.n_public = n_public
        self.final_lloyd = final_lloyd
        self.sampler = sampler
        self.grid_stride = grid_stride
        self.rng = rng

    # -- validation ---------------------------------------------------------------------------
    def _validate(self, X) -> tuple[np.ndarray, int]:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"X must be a non-empty 2-D array (n points × d), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinite values")
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"n_clusters must be a positive integer, got {k!r}")
        if k > X.shape[0]:
            raise ValueError(f"n_clusters={k} exceeds the number of points n={X.shape[0]}")
        if _check_approx(self.approx) > 0.5:
            warnings.warn(
                f"approx={self.approx} > 0.5: the paper's utility analysis assumes ε ≤ 0.5 "
                "(its constants need 1 − ε − ε² > 0); privacy is unaffected",
                UserWarning,
                stacklevel=3,
            )
        _check_privacy(self.epsilon, self.delta)
        radius = _check_radius(self.radius)
        if self.sampler not in ("lazy", "incidence"):
            raise ValueError(f"sampler must be 'lazy' or 'incidence', got {self.sampler!r}")
        if (
            isinstance(self.grid_stride, bool)
            or int(self.grid_stride) != self.grid_stride
            or (self.grid_stride < 1)
        ):
            raise ValueError(f"grid_stride must be a positive integer, got {self.grid_stride!r}")
        if self.proj_dim is not None and (int(self.proj_dim) != self.proj_dim or self.proj_dim < 1):
            raise ValueError(f"proj_dim must be a positive integer or None, got {self.proj_dim!r}")
        return _clip_with_warning(X, radius), int(k)

    def fit(self, X, y=None) -> MaxCoverKMeans:
        """Run Algorithm 2 (and the optional final DP Lloyd round); returns self."""
        X, k = self._validate(X)
        gen = as_generator(self.rng)
        n, d = X.shape
        if self.n_public is None:
            from dpcore.privacy import PrivacyLeakWarning

            warnings.warn(
                f"n_public not given: the schedule uses the data's size n={n}, which the paper "
                "treats as public (pass n_public to make that explicit)",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            n_pub = n
        else:
            n_pub = int(self.n_public)
        approx = float(self.approx)
        radius = float(self.radius)
        budget = split_budget(
            self.epsilon, self.delta, self.budget_split, final_lloyd=self.final_lloyd
        )
        d_prime = int(self.proj_dim) if self.proj_dim else max(1, int(math.log(n_pub) / 2))
        # Lines 1–5: data-independent JL + public scaling + radial clip.
        T = jl_matrix(d, d_prime, gen)  # first draw of rng: identical for neighbouring data
        Y = project_to_unit_ball(X, T, radius, approx)
        d_prime = Y.shape[1]
        sched = level_schedule(n_pub, d_prime, approx)
        k_prime = math.ceil(k / approx - 1e-12)
        # Lines 8–12: Algorithm 3 at every level, finest first; covered points stay covered.
        active = np.ones(n, dtype=bool)
        stats: dict = {}
        cands = []
        stride = int(self.grid_stride)
        for i in range(sched.m):
            b = private_grid_set_cover(
                Y,
                active,
                float(sched.t[i]) * stride,
                sched.rho / stride,
                int(sched.M[i]) // stride,
                k_prime,
                budget.eps_E,
                rng=gen,
                sampler=self.sampler,
                stats=stats,
            )
            cands.append(b * (sched.t[i] * stride))
        # Line 14: C = ∪ C_i (exact duplicates merged: post-processing).
        C = np.unique(np.vstack(cands), axis=0)
        # Lines 13, 15–18: reset D', nearest candidate, Laplace counts (ℓ1 sensitivity 1).
        w = np.maximum(0.0, np.round(noisy_candidate_counts(Y, C, budget.eps_L, rng=gen)))
        # Line 19: Lloyd on D''; lines 20–22: partition D' by S'', NoisyAVG in R^d.
        S2 = _weighted_kmeans(C, w, k, gen)
        lab, _ = nearest_center(Y, S2)
        centers = noisy_cluster_averages(
            X, lab, k, radius=radius, epsilon=budget.eps_G, delta=budget.delta_G, rng=gen
        )
        if self.final_lloyd:  # Sec. 7 / spec §4.3: one DP Lloyd round, NoisyAVG per cluster
            sums, counts = lloyd_statistics(X, centers)
            centers = _noisy_averages_from_statistics(
                sums,
                counts,
                radius=radius,
                epsilon=budget.eps_lloyd,
                delta=budget.delta_lloyd,
                rng=gen,
            )
        self.cluster_centers_ = centers
        self.privacy_ = budget.guarantee
        self.budget_ = budget
        self.candidates_ = C
        self.proxy_weights_ = w
        self.proxy_centers_ = S2
        self.schedule_ = sched
        self.proj_dim_ = d_prime
        self.projection_ = T
        self.n_features_in_ = d
        self.stats_ = {**stats, "levels": sched.m, "k_prime": k_prime, "candidates": C.shape[0]}
        return self

    def predict(self, X) -> np.ndarray:
        """Index of the nearest released centre for each row."""
        if not hasattr(self, "cluster_centers_"):
            raise ValueError("this MaxCoverKMeans is not fitted yet; call fit(X) first")
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_}), got {X.shape}")
        return nearest_center(X, self.cluster_centers_)[0]

    def fit_predict(self, X, y=None) -> np.ndarray:
        return self.fit(X).predict(X)
