"""Algorithm 2, lines 1–8: JL projection, public scaling, level schedule, Claim 4.1's offsets."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.geometry import clip_to_ball
from dpcore.mechanisms.maxcover.accounting import _check_approx
from dpcore.privacy.noise import public_randomness


@public_randomness("Johnson–Lindenstrauss matrix: independent of the data")
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
