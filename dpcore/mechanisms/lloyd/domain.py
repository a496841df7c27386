"""Public data domains of DP-Lloyd (ball or per-feature box) and the budget rules built on them.

DP-Lloyd (Algorithm 2 of Fay, Mair & Sjölund 2024; Su et al. 2016) releases per cluster a noisy
count and a noisy sum. Its sensitivity comes from a *public* description of where a point can
lie. Two descriptions are supported:

* **ball** ``‖x‖₂ ≤ r`` (the paper's): sum noise ζ with density ∝ exp(−‖ζ‖₂/β) (the
  "L2-exponential" mechanism); adding or removing x changes the log-density by ≤ ‖x‖₂/β ≤ r/β.
* **box** ``lo ≤ x ≤ hi`` per feature (what diffprivlib's ``bounds=`` and the dashboard's
  per-column bounds describe). Work relative to the box centre c = (lo + hi)/2 with half-ranges
  h = (hi − lo)/2, so |x_i − c_i| ≤ h_i. The sum of the *shifted* points Σ (x − c) is released
  (the count is released anyway, so Σ x = Σ (x − c) + c·count is post-processing). Two noises:

  - ``"l2"``: the L2-exponential mechanism with the box's half-diagonal R = ‖h‖₂ as radius
    (‖x − c‖₂ ≤ R): ε_sum = ‖x − c‖₂/β ≤ R/β.
  - ``"laplace"``: independent Laplace noise per coordinate, scale β·u_i. Adding x multiplies
    the density by at most exp(Σ_i |x_i − c_i|/(β u_i)) ≤ exp(Σ_i h_i/u_i / β): a weighted-ℓ1
    sensitivity r₁ = Σ h_i/u_i (Dwork et al. 2006, Laplace mechanism; with u ≡ 1 this is
    diffprivlib's per-dimension Laplace with L1 sensitivity Σ h_i around the box centre).
    The weights u_i ∝ h_i^{1/3} minimise the total noise power 2β²Σu_i² at a fixed ε
    (Lagrange: d/du_i of Σu² + λΣh/u gives u_i³ ∝ h_i).

  Both are written as "ε_sum(x) = s(x)/β with s ≤ r on the domain", where s is the
  *sensitivity norm* (‖x − c‖₂ or Σ|x_i − c_i|/u_i) and r its maximum, so every formula of
  :mod:`dpcore.mechanisms.importance.sampling` (ε = T(r/β_sum + 1/β_count), the profile ε(w, x) =
  Tw(1/β_count + s(x)/β_sum) of Prop. 13, calibration of B) applies unchanged with ‖x‖ replaced by
  s(x). ``"auto"`` picks the noise with the smaller expected power E‖ζ‖² at the same ε_sum —
  d(d+1)R²/ε² (Gamma(d) radius) against 2 r₁² Σu_i²/ε² — a public choice (it only reads the box).

**Budget rules** (:func:`auto_count_share`, :func:`auto_n_iter`), after Su et al. (2016,
"Differentially private k-means clustering", CODASPY; extended VLDB J. 2017), who choose the
count/sum split and T by minimising the mean squared error of a noisy centre; diffprivlib 0.6.6
implements the same (``_split_epsilon``, ``_calc_iters``). Su et al. derived them for data
scaled to [−1, 1]^d; the split here is re-derived for any domain (see :func:`auto_count_share`)
so that it is scale-free (the paper's ratio (4dρ²)^{1/3} applied to raw radii gives counts
~1e-4 of ε on Covertype, r ≈ 4489).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from dpcore.data.geometry import clip_to_ball
from dpcore.privacy.guarantees import PrivacyLeakWarning

__all__ = [
    "SU_RHO",
    "SUM_NOISES",
    "LloydDomain",
    "auto_count_share",
    "auto_n_iter",
    "ball_domain",
    "box_domain",
    "centre_error",
    "declared_n",
    "error_budget_n_iter",
]

SU_RHO = 0.225
SUM_NOISES = ("auto", "l2", "laplace")
# Typical distance of a cluster centre from the domain centre, as a share of the domain's
# half-diagonal (the ρ of Su et al.'s error model); measured in benchmarks/bench_kmeans.py.
CENTER_SHARE = 0.5
_CHUNK = 16384


@dataclass(frozen=True)
class LloydDomain:
    """The public domain of the data and the matching sum noise of DP-Lloyd.

    Attributes
    ----------
    center : (d,) array
        c; the released sums are Σ w (x − c) (0 for a ball).
    half_ranges : (d,) array or None
        h for a box (centres are clamped to the box); None for a ball.
    radius : float
        r = sup of the sensitivity norm s(x) over the domain (the "r" of every formula).
    l2_radius : float
        sup ‖x − c‖₂ over the domain (ball radius or half-diagonal).
    noise : "l2" or "laplace"
    weights : (d,) array or None
        u (per-coordinate Laplace scale multipliers), only for ``noise="laplace"``.
    """

    center: np.ndarray
    half_ranges: np.ndarray | None
    radius: float
    l2_radius: float
    noise: str
    weights: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return int(self.center.shape[0])

    @property
    def is_box(self) -> bool:
        return self.half_ranges is not None

    @property
    def lo(self) -> np.ndarray:
        return self.center - self.half_ranges if self.is_box else self.center - self.l2_radius

    @property
    def hi(self) -> np.ndarray:
        return self.center + self.half_ranges if self.is_box else self.center + self.l2_radius

    def noise_power(self) -> float:
        """E‖ζ‖² / β² of one cluster's sum noise: d(d+1) (Gamma(d, β) radius) or 2Σu²."""
        d = self.dim
        if self.noise == "l2":
            return float(d * (d + 1))
        return float(2.0 * np.sum(np.square(self.weights)))

    def sensitivity_norms(self, X: np.ndarray, x_sq: np.ndarray | None = None, *,
                          clamp: bool = False) -> np.ndarray:
        """s(x) for each row of X (no clipping): ‖x − c‖₂ or Σ|x_i − c_i|/u_i.

        Without copying X: ‖x − c‖² = ‖x‖² − 2 x·c + ‖c‖² (one matrix-vector product).
        ``clamp=True`` (box): s of the rows clamped to the box, a chunk at a time — the same
        numbers as on ``np.clip(X, lo, hi)`` with its ``row_norms``, without that copy.
        """
        X = np.asarray(X, dtype=float)
        if clamp:
            out = np.empty(X.shape[0])
            for a in range(0, X.shape[0], _CHUNK):
                Y = np.clip(X[a:a + _CHUNK], self.lo, self.hi)
                y_sq = np.einsum("ij,ij->i", Y, Y) if self.noise == "l2" else None
                out[a:a + _CHUNK] = self.sensitivity_norms(Y, y_sq)
            return out
        if self.noise == "l2":
            sq = np.einsum("ij,ij->i", X, X) if x_sq is None else np.asarray(x_sq, dtype=float)
            if not np.any(self.center != 0):
                return np.sqrt(sq)
            sq = sq - 2.0 * (X @ self.center)
            sq += float(self.center @ self.center)
            np.maximum(sq, 0.0, out=sq)
            return np.sqrt(sq, out=sq)
        inv_u = 1.0 / self.weights
        out = np.empty(X.shape[0])
        for a in range(0, X.shape[0], _CHUNK):
            out[a:a + _CHUNK] = np.abs(X[a:a + _CHUNK] - self.center) @ inv_u
        return out

    def clip(self, X: np.ndarray, norms: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """Project the rows of X onto the domain; returns (X or a clipped copy, rows moved).

        A copy is made only when some row lies outside (the guarantee needs x in the domain).
        ``norms`` (ball only): precomputed ‖x‖₂, to skip a pass.
        """
        if not self.is_box:
            if norms is None:
                norms = np.sqrt(np.einsum("ij,ij->i", X, X))
            if not norms.max(initial=0.0) > self.l2_radius:
                return X, 0
            n_out = int(np.count_nonzero(norms > self.l2_radius * (1 + 1e-12)))
            return clip_to_ball(X, self.l2_radius), n_out
        lo, hi = self.lo, self.hi
        if X.shape[0] == 0 or (np.all(X.min(axis=0) >= lo) and np.all(X.max(axis=0) <= hi)):
            return X, 0
        out = (X < lo) | (X > hi)
        return np.clip(X, lo, hi), int(np.count_nonzero(out.any(axis=1)))

    def clip_gathered(self, S: np.ndarray, bins: np.ndarray, grid: int
                      ) -> tuple[np.ndarray, int]:
        """:meth:`clip` of rows the norm-grid sampler gathered (S: its own copy, changed in
        place), given their bins ⌈‖x‖ G/r⌉ ∧ G (:func:`dpcore.core.kernels.grid_histogram`).

        On a ball a row of bin j < G has ‖x‖ ≤ r (G − 1)/G, far inside r even after rounding,
        so only the last bin's rows are measured and clipped: the same rows and numbers as
        clipping all of S, without a norm pass over it. A box is clipped as by :meth:`clip`.
        """
        if self.is_box:
            return self.clip(S)
        edge = np.flatnonzero(bins == grid)
        inside, n_out = self.clip(S[edge])
        if n_out:
            S[edge] = inside
        return S, n_out

    def centred_rows(self, X: np.ndarray) -> np.ndarray:
        """Box only: a copy of X clamped to the box and shifted by its centre (one copy)."""
        Y = np.clip(X, self.lo, self.hi)
        Y -= self.center
        return Y

    def rows_outside(self, X: np.ndarray) -> np.ndarray:
        """Box only: the sorted indices of X's rows outside it, a chunk at a time (no n × d
        temporary), for a caller that clamps them where it reads them instead of copying X."""
        lo, hi = self.lo, self.hi
        if X.shape[0] == 0 or (np.all(X.min(axis=0) >= lo) and np.all(X.max(axis=0) <= hi)):
            return np.empty(0, dtype=np.int64)
        return np.concatenate([a + np.flatnonzero(((X[a:a + _CHUNK] < lo)
                                                   | (X[a:a + _CHUNK] > hi)).any(axis=1))
                               for a in range(0, X.shape[0], _CHUNK)]).astype(np.int64)

    def project_shifted(self, C: np.ndarray) -> np.ndarray:
        """Clamp shifted centres (C − c) to the domain: the box [−h, h] or the ball (convex and
        holding all data, so it never moves a centre away from any point: post-processing)."""
        if self.is_box:
            return np.clip(C, -self.half_ranges, self.half_ranges)
        return clip_to_ball(C, self.l2_radius)


def ball_domain(radius: float, dim: int) -> LloydDomain:
    """The paper's domain ‖x‖₂ ≤ r with the L2-exponential sum noise."""
    r = float(radius)
    return LloydDomain(np.zeros(int(dim)), None, r, r, "l2")


def box_domain(bounds, dim: int | None = None, *, sum_noise: str = "auto") -> LloydDomain:
    """Per-feature box ``bounds = (lo, hi)`` (scalars or length-d arrays) and its sum noise.

    ``sum_noise``: "l2" (L2-exponential, radius = half-diagonal), "laplace" (per-coordinate
    Laplace, weights u_i ∝ h_i^{1/3}) or "auto" (the one with less expected noise power at the
    same ε; module docstring).
    """
    if sum_noise not in SUM_NOISES:
        raise ValueError(f"sum_noise must be one of {SUM_NOISES}, got {sum_noise!r}")
    try:
        lo_in, hi_in = bounds
        lo = np.asarray(lo_in, dtype=float)
        hi = np.asarray(hi_in, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("bounds must be a pair (lo, hi) of numbers or length-d arrays, got "
                         f"{type(bounds).__name__}") from None
    if lo.ndim > 1 or hi.ndim > 1:
        raise ValueError("bounds must be a pair (lo, hi) of numbers or 1-D arrays")
    if dim is None:
        dim = max(lo.size, hi.size)
    d = int(dim)
    try:
        lo, hi = np.broadcast_to(lo, (d,)).copy(), np.broadcast_to(hi, (d,)).copy()
    except ValueError:
        raise ValueError(f"bounds must have length d={d} (the number of features), got "
                         f"{lo.shape} and {hi.shape}") from None
    if not (np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))):
        raise ValueError("bounds must be finite numbers")
    if not np.all(hi > lo):
        j = int(np.flatnonzero(~(hi > lo))[0])
        raise ValueError(f"bounds need lo < hi in every feature; feature {j} has lo={lo[j]:g}, "
                         f"hi={hi[j]:g}")
    c = (lo + hi) / 2.0
    h = (hi - lo) / 2.0
    r2 = float(np.linalg.norm(h))
    u = np.cbrt(h / h.max())
    r1 = float(np.sum(h / u))
    l2 = LloydDomain(c, h, r2, r2, "l2")
    lap = LloydDomain(c, h, r1, r2, "laplace", u)
    if sum_noise == "l2":
        return l2
    if sum_noise == "laplace":
        return lap
    # Same ε_sum: noise power ∝ (radius)² · E‖ζ‖²/β².
    return lap if lap.radius**2 * lap.noise_power() < l2.radius**2 * l2.noise_power() else l2


def auto_count_share(domain: LloydDomain, *, center_share: float = CENTER_SHARE) -> float:
    """Share f of each iteration's ε spent on the counts, from Su et al.'s error model.

    A noisy centre is (S + ζ)/(N + ξ) ≈ c + (ζ − c ξ)/N, so its expected squared error is
    (E‖ζ‖² + ‖c‖² E ξ²)/N² = (A β_sum² + 2‖c‖² β_count²)/N² with A = E‖ζ‖²/β² (the domain's
    :meth:`LloydDomain.noise_power`). Minimising it subject to the per-iteration budget
    r/β_sum + 1/β_count = ε/T (Lagrange) gives β_count/β_sum = κ = (A/(2 r ‖c‖²))^{1/3}, and the
    count share is f = 1/(1 + κ r) = 1/(1 + (A r²/(2‖c‖²))^{1/3}), independent of ε, T, n and of
    the data's scale. Su et al. (2016, §4) make the same derivation on [−1, 1]^d with ‖c‖ = ρ√d,
    ρ = 0.225; here ‖c‖ = ``center_share`` × the domain's half-diagonal (public).
    """
    a = domain.noise_power()
    c = float(center_share) * domain.l2_radius
    return 1.0 / (1.0 + (a * domain.radius**2 / (2.0 * c * c)) ** (1.0 / 3.0))


def auto_n_iter(epsilon: float, n: float, dim: int, k: int, *, rho: float = SU_RHO,
                lo: int = 2, hi: int = 7) -> int:
    """T from the budget (Su et al. 2016, §4.3; diffprivlib 0.6.6 ``KMeans._calc_iters``).

    ε_m = sqrt(500 k³/n² · (d + (4dρ²)^{1/3})³) is the ε per iteration at which the noisy
    centres' error matches the non-private error on [−1, 1]^d; T = clamp(⌊ε/ε_m⌋, 2, 7).
    ``n`` must be public (declared or privately estimated, see :func:`declared_n`).
    """
    eps_m = math.sqrt(500.0 * k**3 / float(n) ** 2 * (dim + (4 * dim * rho * rho) ** (1 / 3)) ** 3)
    if not math.isfinite(epsilon):
        return hi
    return int(max(min(epsilon / eps_m, hi), lo))


def centre_error(epsilon: float, n: float, k: int, n_iter: int, domain: LloydDomain,
                 count_share: float, *, center_share: float = CENTER_SHARE) -> float:
    """Predicted RMS error of one noisy centre ÷ the domain's half-diagonal (Su et al.'s model).

    sqrt(A β_sum² + 2‖c‖² β_count²)/N with N = n/k (balanced clusters), β_sum = T r/((1 − f) ε),
    β_count = T/(f ε): the error model of :func:`auto_count_share` at the budget ε/T per round.
    """
    t, f = int(n_iter), float(count_share)
    bs = t * domain.radius / ((1.0 - f) * epsilon)
    bc = t / (f * epsilon)
    c = center_share * domain.l2_radius
    err = math.sqrt(domain.noise_power() * bs * bs + 2.0 * c * c * bc * bc) / (float(n) / k)
    return err / domain.l2_radius


def error_budget_n_iter(epsilon: float, n: float, k: int, domain: LloydDomain,
                        count_share: float, *, tol: float = 0.01, lo: int = 2,
                        hi: int = 10) -> int:
    """The most Lloyd rounds T ∈ [lo, hi] whose noisy centres stay within ``tol`` of the domain.

    More rounds help convergence from a data-independent start but split ε further (error ∝ T).
    T = the largest T with :func:`centre_error` ≤ ``tol`` (1 % of the half-diagonal), at least
    ``lo`` = 2. Su et al. (2016) pick T from the same kind of error model; their ε_m
    (:func:`auto_n_iter`, diffprivlib's rule, T ∈ [2, 7]) gives T = 2 on Covertype, MNIST and
    KDD-like data, where T = 7 was 1.25× better on Covertype. Measured (benchmarks/
    bench_kmeans.py, cost ÷ non-private, 3–5 seeds): Covertype ε = 1, T = 2/3/5/7 →
    1.46/1.32/1.21/1.17 (noise negligible: the rule gives 10); MNIST ε = 0.5, T = 2/3/5 →
    1.32/1.36/1.40 (error ≫ tol: 2); KDD-like ε = 0.5, T = 2/3/5 → 1.60/1.62/1.70 (2).
    τ = 1 % was chosen on these measurements, so the benchmark is not an independent test.
    """
    if not math.isfinite(epsilon):
        return hi
    best = lo
    for t in range(lo, hi + 1):
        if centre_error(epsilon, n, k, t, domain, count_share) <= tol:
            best = t
    return best


def declared_n(n: float | None, X_rows: int, *, why: str, stacklevel: int = 3) -> float:
    """The public n: the declared one, else ``X.shape[0]`` with a :class:`PrivacyLeakWarning`."""
    if n is not None:
        nv = float(n)
        if not (math.isfinite(nv) and nv >= 1):
            raise ValueError(f"n must be a number ≥ 1 (declared or privately estimated), got {n!r}")
        return nv
    warnings.warn(f"{why} reads n off the data; pass n= (declared, or privately estimated with "
                  "dpcore.mechanisms.bounds.private_row_count) to keep it public",
                   PrivacyLeakWarning,
                  stacklevel=stacklevel)
    return float(max(X_rows, 1))  # an empty table still gets a (noise-only) release
