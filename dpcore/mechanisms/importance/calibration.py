"""DP-Lloyd accounting of the importance-sampling paper: noise scales, ε of full and sampled runs,
and the calibration of the noise constant B for a target sample size (spec §4.5, §5.3, §6.4).

Imported by the package (``from dpcore.mechanisms.importance import calibrate_lloyd``); it builds
on :mod:`.amplification` (Theorem 6, the DP-Lloyd profile), :mod:`.weights` (Theorem 10) and
:mod:`.sampling` (the sampling distributions).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpcore.mechanisms.importance.amplification import _positive, amplified_epsilon, logexpm1
from dpcore.mechanisms.importance.sampling import (
    SAMPLERS,
    SU_RHO,
    _check_sample_size,
    coreset_max_sample_size,
    privacy_probabilities,
)
from dpcore.mechanisms.importance.weights import _ON_TARGET_RTOL

# --------------------------------------------------------------------------------------------
# DP-Lloyd noise scales, ε of full and sampled runs, calibration of B (spec §4.5, §5.3, §6.4)
# --------------------------------------------------------------------------------------------


def _optimize():
    # scipy.optimize on first use: importing it costs ≈ 0.4–0.8 s, which every ``dpcore run``
    # paid though the default DP-Lloyd never solves anything (issue 23.7)
    from scipy import optimize

    return optimize


def _kappa(dim: int, rho: float) -> float:
    """β_count/β_sum = (4 d ρ²)^{1/3} in the Su et al. split."""
    return (4.0 * dim * rho * rho) ** (1.0 / 3.0)


def _split_kappa(dim: int, radius: float, rho: float, count_share: float | None) -> float:
    """β_count/β_sum: the Su et al. ratio, or the one giving counts ``count_share`` of ε.

    With β_count = κ β_sum the count part of ε(1, x) at ‖x‖ = r is 1/(1 + κ r); a share f
    needs κ = (1 − f)/(f r). The Su et al. ratio (derived for data scaled to [−1, 1]^d) gives
    counts 1/(1 + κ r) ≈ 1e-4 of ε on Covertype (r ≈ 4489), so count noise dominates there.
    """
    if count_share is None:
        return _kappa(dim, rho)
    f = float(count_share)
    if not 0.0 < f < 1.0:
        raise ValueError(f"count_share must be in (0, 1), got {count_share!r}")
    return (1.0 - f) / (f * float(radius))


def su_noise_scales(
    noise_constant: float, *, dim: int, radius: float, n_iter: int, rho: float = SU_RHO
) -> tuple[float, float]:
    """The paper's noise scales for a noise constant B (Sec. 5, after Su et al. 2016).

    β_sum = sqrt(T r / B) · (d / (2ρ))^{1/3},  β_count = (4 d ρ²)^{1/3} · β_sum.
    Larger B means less noise (and larger ε).
    """
    b = _positive("noise_constant", noise_constant)
    bs = math.sqrt(int(n_iter) * float(radius) / b) * (dim / (2.0 * rho)) ** (1.0 / 3.0)
    return bs, _kappa(dim, rho) * bs


def _noise_constant(beta_sum: float, *, dim: int, radius: float, n_iter: int, rho: float) -> float:
    """Inverse of :func:`su_noise_scales`: B = T r (d/(2ρ))^{2/3} / β_sum²."""
    return int(n_iter) * float(radius) * (dim / (2.0 * rho)) ** (2.0 / 3.0) / beta_sum**2


def dp_lloyd_epsilon(radius: float, beta_sum: float, beta_count: float, n_iter: int) -> float:
    """ε of T iterations of DP-Lloyd on data in the ball of radius r: T (r/β_sum + 1/β_count)."""
    return int(n_iter) * (float(radius) / beta_sum + 1.0 / beta_count)


def dp_lloyd_noise_scales(
    epsilon: float,
    radius: float,
    n_iter: int,
    dim: int,
    *,
    rho: float = SU_RHO,
    count_share: float | None = None,
) -> tuple[float, float]:
    """(β_sum, β_count) for ε-DP full-data DP-Lloyd with the Su et al. split (spec §6.4).

    Solves T (r/β_sum + 1/β_count) = ε with β_count = κ β_sum, κ = (4 d ρ²)^{1/3}:
    β_sum = T (r + 1/κ) / ε. With ``count_share`` = f the counts get f·ε and the sums (1 − f)·ε
    instead (κ = (1 − f)/(f r)).
    """
    eps = _positive("epsilon", epsilon)
    r = _positive("radius", radius)
    kappa = _split_kappa(int(dim), r, rho, count_share)
    bs = int(n_iter) * (r + 1.0 / kappa) / eps
    return bs, kappa * bs


def _beta_sum_for_radius_slope(slope_r: float, radius: float, n_iter: int, kappa: float) -> float:
    """β_sum such that ε(1, x) at ‖x‖ = r equals ``slope_r`` (β_count = κ β_sum)."""
    return n_iter * (radius + 1.0 / kappa) / slope_r


def sampled_lloyd_epsilon(
    *,
    sampler: str | None,
    beta_sum: float,
    beta_count: float,
    n_iter: int,
    radius: float,
    n: int | None = None,
    sample_size: float | None = None,
    mean_sq_norm: float | None = None,
    lam: float = 0.5,
    target_epsilon: float | None = None,
    grid: int = 2049,
) -> float:
    """ε-DP guarantee of DP-Lloyd run on a Poisson importance sample (Thm 6 + Prop. 13).

    * ``None`` (full data): T (r/β_sum + 1/β_count).
    * ``"uniform"``: ψ at ‖x‖ = r with q = m/n, log(1 + (m/n)(e^{T(1/β_c + r/β_s) n/m} − 1)).
    * ``"coreset"``: sup over z = ‖x‖ ∈ [0, r] of Eq. 5,
      ψ(z) = log(1 + (e^{(a + t z)/(b + s z²)} − 1)(b + s z²)), a = T/β_count, t = T/β_sum,
      b = λ m/n, s = (1 − λ) m/(n x̃): a ``grid``-point search followed by a bounded Brent
      refinement around the best grid point (so the result is the maximum to ~1e-12, not the
      slight under-estimate of the paper's 100-point grid, spec §9.15).
    * ``"privacy"``: ε* (``target_epsilon``); valid when T(1/β_count + r/β_sum) ≤ ε*
      (Assumption 8 on the whole ball), which is checked.
    """
    t = int(n_iter)
    slope_r = dp_lloyd_epsilon(radius, beta_sum, beta_count, t)
    if sampler is None:
        return slope_r
    if sampler == "privacy":
        if target_epsilon is None:
            raise ValueError("sampler='privacy' needs target_epsilon")
        if slope_r > target_epsilon * (1 + _ON_TARGET_RTOL):
            raise ValueError(
                f"the noise scales give ε(1, x) = {slope_r:.6g} at ‖x‖ = r, above "
                f"target_epsilon={target_epsilon:g} (Assumption 8)"
            )
        return float(target_epsilon)
    if n is None or sample_size is None:
        raise ValueError(f"sampler={sampler!r} needs n and sample_size")
    rate = float(sample_size) / int(n)
    if sampler == "uniform":
        return float(amplified_epsilon(rate, slope_r / rate))
    if sampler != "coreset":
        raise ValueError(f"sampler must be None or one of {SAMPLERS}, got {sampler!r}")
    if mean_sq_norm is None or not mean_sq_norm > 0:
        raise ValueError("sampler='coreset' needs mean_sq_norm > 0 (x̃ of spec §5.2)")
    a, tt = t / beta_count, t / beta_sum
    b, s = lam * rate, (1.0 - lam) * rate / float(mean_sq_norm)
    if b <= 0:
        raise ValueError("lam = 0 makes the coreset ε unbounded (Eq. 5 at ‖x‖ = 0); use lam > 0")
    if b + s * radius**2 > 1 + 1e-12:
        raise ValueError("some coreset probability exceeds 1 on the ball: reduce sample_size")

    def psi(z):
        q = np.minimum(b + s * np.square(z), 1.0)
        return amplified_epsilon(q, (a + tt * np.asarray(z)) / q)

    zs = np.linspace(0.0, float(radius), int(grid))
    vals = psi(zs)
    i = int(np.argmax(vals))
    best = float(vals[i])
    lo_z, hi_z = zs[max(i - 1, 0)], zs[min(i + 1, zs.size - 1)]
    if hi_z > lo_z:
        res = _optimize().minimize_scalar(
            lambda z: -float(psi(z)), bounds=(lo_z, hi_z), method="bounded",
            options={"xatol": 1e-12 * max(float(radius), 1.0)},
        )
        best = max(best, -float(res.fun))
    return best


@dataclass(frozen=True)
class LloydCalibration:
    """Noise scales of a (sampled) DP-Lloyd run that meets a target (m, ε*) (spec §6.4).

    Attributes
    ----------
    sampler : None | "uniform" | "coreset" | "privacy"
    epsilon : float
        The ε-DP guarantee of the whole sampled mechanism (≤ the target up to ~1e-9 relative).
    sample_size : float
        Expected sample size m (n for full data).
    beta_sum, beta_count : float
        Noise scales of Algorithm 2.
    noise_constant : float
        The paper's B.
    """

    sampler: str | None
    epsilon: float
    sample_size: float
    beta_sum: float
    beta_count: float
    noise_constant: float


def _rootfind_log(f: Callable[[float], float], lo: float, grow: float = 2.0,
                  f_lo: float | None = None, guess: float | None = None) -> float:
    """Root of a decreasing f on [lo, ∞) with f(lo) ≥ 0, in log scale (B spans many decades).

    Every point is evaluated once (brentq re-evaluates the bracket's ends; ``f_lo`` is f(lo)
    when the caller has it): f is a pass over the data or a histogram, the cost of a fit.
    ``guess`` (> lo): a likely root; the bracket is then searched from it in steps of 1.25×
    (two to four evaluations fewer than doubling from ``lo``). The root is the same.
    """
    seen: dict[float, float] = {}

    def g(u: float) -> float:
        if u not in seen:
            seen[u] = f(math.exp(u))
        return seen[u]

    u_lo = math.log(lo)
    if f_lo is not None:
        seen[u_lo] = f_lo
    if g(u_lo) <= 0:
        return lo
    step = math.log(grow)
    if guess is not None and guess > lo:
        fine = math.log(1.25)
        u = math.log(guess)
        if g(u) >= 0:
            u_lo, step = u, fine  # search upwards from the guess
        else:  # the root lies below the guess: step down (never below lo, where g ≥ 0)
            u_hi = u
            while u_hi - fine > u_lo and g(u_hi - fine) < 0:
                u_hi -= fine
            if u_hi - fine > u_lo:
                u_lo = u_hi - fine
            return math.exp(_optimize().brentq(g, u_lo, u_hi, xtol=1e-13, rtol=1e-13))
    u_hi = u_lo + step
    for _ in range(400):
        if g(u_hi) < 0:
            break
        u_lo, u_hi = u_hi, u_hi + step
    else:  # pragma: no cover - would need a non-decreasing f
        raise RuntimeError("could not bracket the noise scale")
    return math.exp(_optimize().brentq(g, u_lo, u_hi, xtol=1e-13, rtol=1e-13))


def _privacy_noise_for_size(expected_m: Callable[[float], float], bs_full: float,
                            sample_size: float | None, n: int, eps: float) -> tuple[float, float]:
    """β_sum ≥ β_full with expected sample size ``expected_m(β_sum) = m`` (Σ q grows with β)."""
    m_free = expected_m(bs_full)
    if sample_size is None:
        return bs_full, m_free
    m = _check_sample_size(sample_size, n)
    if m > m_free * (1 + 1e-9):
        raise ValueError(
            f"sample_size={m:g} is not reachable with privacy-constrained sampling at "
            f"epsilon={eps:g}: even the least noise that Assumption 8 allows (ε(1, x) = ε* "
            f"at ‖x‖ = r) gives an expected sample size of {m_free:.6g}; the largest feasible "
            f"sample_size is {math.floor(m_free):d}"
        )
    # Σ q ≈ ∝ 1/β for small q (q ∝ the profile's slopes, which are ∝ 1/β): a close first guess
    return _rootfind_log(lambda b: expected_m(b) - m, bs_full, f_lo=m_free - m,
                         guess=bs_full * m_free / m), m


def calibrate_lloyd(
    sampler: str | None,
    *,
    epsilon: float,
    n: int,
    dim: int,
    radius: float,
    n_iter: int = 10,
    sample_size: float | None = None,
    norms=None,
    mean_sq_norm: float | None = None,
    lam: float = 0.5,
    rho: float = SU_RHO,
    count_share: float | None = None,
) -> LloydCalibration:
    """Noise scales for DP-Lloyd meeting ε* (and the expected sample size m) for a sampler.

    * ``None``: full data, closed form β_sum = T (r + 1/κ)/ε*.
    * ``"uniform"``: closed form; Prop. 3 inverted at ‖x‖ = r: ε(1, r) = p log(1 + (e^{ε*} − 1)/p),
      p = m/n.
    * ``"coreset"``: Brent root of sup_z ψ(z; β) = ε* in log β (Eq. 5), needs ``mean_sq_norm``.
    * ``"privacy"``: ε* is the target of Algorithm 1 and B is chosen so that Σ_i q_priv(x_i) = m
      (the authors' code; the paper's literal text would tie ε* to B, spec §9.6). Needs the
      data ``norms``; m above the maximum Σ q at the least noise allowed by Assumption 8
      (T(1/β_count + r/β_sum) = ε*, "sampling for free") raises with that maximum. With
      ``sample_size=None`` the "sampling for free" noise is used (m is then whatever it gives).

    The ratio β_count/β_sum is the paper's Su et al. one, or, with ``count_share`` = f, the one
    that gives counts the share f of ε(1, x) at ‖x‖ = r (see :func:`dp_lloyd_noise_scales`).

    Returns
    -------
    LloydCalibration
    """
    eps = _positive("epsilon", epsilon)
    r = _positive("radius", radius)
    t, n, dim = int(n_iter), int(n), int(dim)
    kappa = _split_kappa(dim, r, rho, count_share)

    def done(bs: float, m: float, eps_out: float) -> LloydCalibration:
        b_const = _noise_constant(bs, dim=dim, radius=r, n_iter=t, rho=rho)
        return LloydCalibration(sampler, eps_out, m, bs, kappa * bs, b_const)

    bs_full = _beta_sum_for_radius_slope(eps, r, t, kappa)
    if sampler is None:
        return done(bs_full, float(n), eps)
    if sampler == "privacy":
        if norms is None:
            raise ValueError("sampler='privacy' needs the data norms")
        norms = np.asarray(norms, dtype=float)

        def expected_m(bs: float) -> float:
            return float(np.sum(privacy_probabilities(norms, beta_sum=bs, beta_count=kappa * bs,
                                                      n_iter=t, target_epsilon=eps)))

        bs, m = _privacy_noise_for_size(expected_m, bs_full, sample_size, n, eps)
        return done(bs, m, eps)
    if sample_size is None:
        raise ValueError(f"sampler={sampler!r} needs sample_size (expected m)")
    m = _check_sample_size(sample_size, n)
    p = m / n
    if sampler == "uniform":
        slope_r = p * float(np.logaddexp(0.0, logexpm1(eps) - math.log(p)))
        bs = _beta_sum_for_radius_slope(slope_r, r, t, kappa)
        eps_out = sampled_lloyd_epsilon(sampler="uniform", beta_sum=bs, beta_count=kappa * bs,
                                        n_iter=t, radius=r, n=n, sample_size=m)
        return done(bs, m, eps_out)
    if sampler != "coreset":
        raise ValueError(f"sampler must be None or one of {SAMPLERS}, got {sampler!r}")
    if mean_sq_norm is None:
        raise ValueError("sampler='coreset' needs mean_sq_norm (x̃, spec §5.2)")
    m_max = coreset_max_sample_size(n, float(mean_sq_norm), r * r, lam=lam)
    if m > m_max * (1 + 1e-12):
        raise ValueError(
            f"sample_size={m:g} makes the coreset probability exceed 1 at ‖x‖ = r={r:g}; "
            f"the largest feasible sample_size is {math.floor(m_max * (1 - 1e-12)):d}"
        )

    def core_eps(bs: float) -> float:
        return sampled_lloyd_epsilon(sampler="coreset", beta_sum=bs, beta_count=kappa * bs,
                                     n_iter=t, radius=r, n=n, sample_size=m,
                                     mean_sq_norm=mean_sq_norm, lam=lam)

    # Sampling never lowers the loss under a linear profile (Prop. 17), so β_full is a lower
    # bracket: core_eps(bs_full) ≥ ε*. Round up slightly so the delivered ε is ≤ ε*.
    bs = _rootfind_log(lambda b: core_eps(b) - eps, bs_full) * (1 + 1e-10)
    return done(bs, m, core_eps(bs))
