"""Personalized privacy amplification by importance sampling (Fay, Mair & Sjölund, TMLR 2024).

Seed paper ``../shared/seeds/000_*`` / ``001_*``; spec ``../shared/spec/importance_sampling.md``.

What is here (all vectorised over points, all randomness through ``rng``):

* :func:`amplified_epsilon`: Theorem 6 (Eq. 1), ψ = log(1 + q (e^{ε(1/q, x)} − 1)) in log space.
* PDP profiles ε(w, x) with value and derivative in w (:class:`PDPProfile`): the linear profiles
  of weighted DP-Lloyd (Prop. 13, :func:`lloyd_profile`) and of the Laplace weighted sum (Sec. 3.3,
  :func:`laplace_sum_profile`), or your own (:class:`FunctionProfile`).
* Privacy-constrained weights (Problem 7, Theorem 10): :func:`solve_privacy_constrained` is
  Algorithm 1 for any profile, with the corrected bracket (``+2``) and Case-1 condition of the
  proof of Prop. 12 (spec §2.2, errata §9.1–9.3); :func:`privacy_constrained_weights` is the exact
  closed form for linear profiles through the lower branch W₋₁ of the Lambert W function
  (spec §2.3 item 7), evaluated in log space so that it holds for any ε* (also 1000).
* Sampling distributions: :func:`uniform_probabilities`, :func:`coreset_probabilities`
  (the λ-mixture of Sec. 4 / spec §5.2), :func:`variance_optimal_probabilities` (the non-private
  benchmark of Fig. 2) and :func:`poisson_sample` (Definition 5).
* DP-Lloyd accounting: the Su et al. noise split (:func:`su_noise_scales`), the ε of full-data
  DP-Lloyd (:func:`dp_lloyd_epsilon`) and of a sampled run (:func:`sampled_lloyd_epsilon`, Eq. 5
  maximised exactly over ‖x‖ ∈ [0, r]), and the calibration of the noise constant B for a target
  (m, ε*) for every sampler (:func:`calibrate_lloyd`, spec §6.4).

Example
-------
>>> import numpy as np
>>> from dpcore.mechanisms.importance.sampling import lloyd_profile, privacy_constrained_weights,
poisson_sample
>>> norms = np.linspace(0.0, 1.0, 5)
>>> prof = lloyd_profile(norms, beta_sum=50.0, beta_count=100.0, n_iter=10)
>>> w = privacy_constrained_weights(prof.slopes, target_epsilon=1.0)
>>> bool(np.all(w >= 1))
True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.privacy.noise import public_randomness

__all__ = [
    "SAMPLERS",
    "FunctionProfile",
    "LinearProfile",
    "PDPProfile",
    "amplified_epsilon",
    "coreset_max_sample_size",
    "coreset_probabilities", "coreset_q",
    "laplace_sum_profile",
    "lloyd_profile",
    "logexpm1",
    "poisson_sample",
    "privacy_constrained_weights",
    "solve_privacy_constrained",
    "uniform_probabilities",
    "variance_optimal_probabilities",
]

#: Su et al. (2016) split of the budget between count and sum noise, used by the paper (Sec. 5).
SU_RHO = 0.225

#: Sampler names accepted by :func:`calibrate_lloyd` and
# :class:`dpcore.mechanisms.lloyd.estimator.DPLloyd`.
SAMPLERS = ("uniform", "coreset", "privacy")


# --------------------------------------------------------------------------------------------
# Theorem 6
# --------------------------------------------------------------------------------------------


def logexpm1(a) -> np.ndarray:
    """log(e^a − 1) for a ≥ 0 without overflow (−inf at a = 0).

    For a > ln 2 it is ``a + log1p(−e^{−a})`` (exact for a up to the float limit); below, the
    direct ``log(expm1(a))`` keeps full relative precision for tiny a.
    """
    a = np.asarray(a, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        big = a > math.log(2.0)
        return np.where(
            big,
            a + np.log1p(-np.exp(-np.where(big, a, 1.0))),
            np.log(np.expm1(np.where(big, 0.0, a))),
        )


def amplified_epsilon(q, eps_at_weight) -> np.ndarray:
    """Per-point privacy loss after Poisson importance sampling (Theorem 6, Eq. 1).

    ψ(x) = log(1 + q(x) (e^{ε(w, x)} − 1)) with w = 1/q(x), computed as
    ``logaddexp(0, log q + logexpm1(ε))`` so that it is exact and finite for ε up to the float
    limit and q down to the smallest positive float.

    Parameters
    ----------
    q : array_like in [0, 1]
        Sampling probabilities q(x). ``q = 0`` (never sampled) gives ψ = 0.
    eps_at_weight : array_like ≥ 0
        The profile evaluated at the importance weight, ε(1/q(x), x) (broadcast against ``q``).

    Returns
    -------
    ndarray
        ψ(x), elementwise. With q = 1 it equals ε(1, x); with ε constant in w and q constant it is
        the classical amplification by subsampling, log(1 + q (e^ε − 1)) (Prop. 3).
    """
    q = np.asarray(q, dtype=float)
    eps = np.asarray(eps_at_weight, dtype=float)
    if np.any(~np.isfinite(q)) or np.any((q < 0) | (q > 1)):
        raise ValueError("q must be probabilities in [0, 1]")
    if np.any(np.isnan(eps)) or np.any(eps < 0):
        raise ValueError("eps_at_weight must be ≥ 0 (a privacy loss)")
    q, eps = np.broadcast_arrays(q, eps)
    big = eps > 500.0  # e^500 ≈ 1e217: below it the direct form is finite and most accurate
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        direct = np.log1p(q * np.expm1(np.where(big, 0.0, eps)))
        logspace = np.logaddexp(0.0, np.log(q) + logexpm1(np.where(big, eps, 1.0)))
    psi = np.where(big, logspace, direct)
    # A point that is never sampled contributes nothing, whatever ε(∞, x) would be.
    return np.where(q == 0, 0.0, psi)


# --------------------------------------------------------------------------------------------
# PDP profiles
# --------------------------------------------------------------------------------------------


class PDPProfile:
    """A weighted personalised-DP profile ε(w, x_i) for the points of one data set (Def. 4).

    Subclasses implement :meth:`value` and :meth:`derivative`, both vectorised over the points
    ``index`` (all points when ``None``) at weights ``w`` (same length, or a scalar);
    :meth:`strong_convexity` returns μ_i, a strong-convexity constant of w ↦ e^{ε(w, x_i)} on
    w ≥ 1 (Assumption 11), or ``None`` when unknown (Algorithm 1 then brackets by doubling).
    """

    n_points: int

    def value(self, w, index: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def derivative(self, w, index: np.ndarray | None = None) -> np.ndarray:
        raise NotImplementedError

    def strong_convexity(self, index: np.ndarray | None = None) -> np.ndarray | None:
        return None


@dataclass(frozen=True, eq=False)
class LinearProfile(PDPProfile):
    """A profile linear in the weight, ε(w, x_i) = w · slopes[i] (slopes ≥ 0).

    Every mechanism in the paper is of this kind (Prop. 17), so sampling can never lower a
    point's loss below ε(1, x_i) = slopes[i]. The strong-convexity constant of w ↦ e^{K w} on
    w ≥ 1 is μ = K² e^{K} (the paper's Eq. 4 prints K·T·e^{K}; erratum, spec §9.3).
    """

    slopes: np.ndarray

    def __post_init__(self) -> None:
        s = np.asarray(self.slopes, dtype=float)
        if s.ndim != 1 or np.any(~np.isfinite(s)) or np.any(s < 0):
            raise ValueError("slopes must be a 1-D array of finite numbers ≥ 0")
        object.__setattr__(self, "slopes", s)

    @property
    def n_points(self) -> int:  # type: ignore[override]
        return self.slopes.shape[0]

    def _k(self, index):
        return self.slopes if index is None else self.slopes[index]

    def value(self, w, index=None):
        return self._k(index) * np.asarray(w, dtype=float)

    def derivative(self, w, index=None):
        k = self._k(index)
        return np.broadcast_to(k, np.broadcast_shapes(k.shape, np.shape(w))).copy()

    def strong_convexity(self, index=None):
        k = self._k(index)
        with np.errstate(over="ignore"):
            return k * k * np.exp(k)


@dataclass(frozen=True, eq=False)
class FunctionProfile(PDPProfile):
    """A user-supplied profile from vectorised callables.

    Parameters
    ----------
    value, derivative : callable ``(w, index) -> ndarray``
        ε(w, x_i) and ∂ε/∂w for the points ``index`` (an int array, never ``None`` here) at
        weights ``w`` (same length). The profile must meet Assumptions 8 and 11 of the paper:
        e^{ε(w, x)} strongly convex in w (so that Eq. 10 has at most two roots).
    n_points : int
    strong_convexity : callable ``(index) -> ndarray``, optional
        μ_i; without it Algorithm 1 brackets by doubling, which is always correct.
    """

    value_fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
    derivative_fn: Callable[[np.ndarray, np.ndarray], np.ndarray]
    n_points: int
    strong_convexity_fn: Callable[[np.ndarray], np.ndarray] | None = None

    def _idx(self, index):
        return np.arange(self.n_points) if index is None else np.asarray(index)

    def value(self, w, index=None):
        idx = self._idx(index)
        return np.asarray(self.value_fn(np.broadcast_to(w, idx.shape), idx), dtype=float)

    def derivative(self, w, index=None):
        idx = self._idx(index)
        return np.asarray(self.derivative_fn(np.broadcast_to(w, idx.shape), idx), dtype=float)

    def strong_convexity(self, index=None):
        if self.strong_convexity_fn is None:
            return None
        return np.asarray(self.strong_convexity_fn(self._idx(index)), dtype=float)


def _positive(name: str, value: float) -> float:
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def lloyd_profile(norms, *, beta_sum: float, beta_count: float, n_iter: int) -> LinearProfile:
    """PDP profile of T iterations of weighted DP-Lloyd (Prop. 13, Eq. 3).

    ε(w, x) = T · w · (1/β_count + ‖x‖/β_sum): each iteration releases one weighted count
    (Laplace, scale β_count) and one weighted sum (density ∝ exp(−‖ζ‖/β_sum)) per cluster, and
    adding the point (w, x) moves only its own cluster's count by w and sum by w·x.
    """
    norms = np.asarray(norms, dtype=float)
    if norms.ndim != 1 or np.any(~np.isfinite(norms)) or np.any(norms < 0):
        raise ValueError("norms must be a 1-D array of finite numbers ≥ 0")
    t = int(n_iter)
    if t < 1:
        raise ValueError(f"n_iter must be ≥ 1, got {n_iter!r}")
    bs, bc = _positive("beta_sum", beta_sum), _positive("beta_count", beta_count)
    return LinearProfile(t * (1.0 / bc + norms / bs))


def laplace_sum_profile(X, *, scale: float = 1.0) -> LinearProfile:
    """PDP profile ε(w, x) = w ‖x‖₁ / b of the Laplace weighted sum ζ + Σ w_i x_i (Sec. 3.3).

    ``scale`` is the Laplace scale b of each coordinate of ζ (the paper's "standard" Laplace is
    b = 1; Fig. 2 right varies b).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}")
    b = _positive("scale", scale)
    return LinearProfile(np.abs(X).sum(axis=1) / b)


# --------------------------------------------------------------------------------------------
# Problem 7: privacy-constrained weights
# --------------------------------------------------------------------------------------------

# Relative tolerance within which ε(1, x) = ε* counts as "on the target" (Case 1 of Prop. 12).
_ON_TARGET_RTOL = 1e-12
# Elements per chunk of elementwise work: temporaries stay in cache instead of being allocated
# (and page-faulted) at full size for every operation.
_CHUNK = 8192


def _check_target(target_epsilon: float) -> float:
    t = float(target_epsilon)
    if not (t > 0 and math.isfinite(t)):
        raise ValueError(f"target_epsilon must be a finite number > 0, got {target_epsilon!r}")
    return t


def _infeasible(eps_at_one: np.ndarray, target: float) -> ValueError:
    worst = int(np.argmax(eps_at_one))
    return ValueError(
        f"target_epsilon={target:g} is below the loss of point {worst} without sampling, "
        f"ε(1, x) = {eps_at_one[worst]:.6g} (Assumption 8): sampling cannot lower a loss under "
        f"a linear profile (Prop. 17). The smallest feasible target_epsilon is "
        f"{eps_at_one.max():.10g}; or add noise (larger β) so that ε(1, x) ≤ target_epsilon."
    )


def _neg_lambertw_m1_from_log(log_negz: np.ndarray) -> np.ndarray:
    """v = −W₋₁(z) for z = −e^{L} ∈ [−1/e, 0), from L = log(−z) ≤ −1, in log space.

    Solves v − log v = −L on v ≥ 1 (the defining equation of the lower branch, (−v)e^{−v} = z)
    by three Halley steps from the branch-point series (L > −1.6, p = sqrt(2(1 + e z))) or the
    asymptotic series v ≈ −L + log(−L) + ... (further out); the start is within 2 % and three
    steps already reach rounding level (conditioning 1/(1 − 1/v) near the branch point). Working
    with L instead of z keeps it exact when z underflows (ε* ≳ 700 in the closed form below).
    Agrees with ``scipy.special.lambertw(z, -1)`` to 1e-12 (tests). Runs on cache-sized
    chunks: on 566k points that is ≈ 3× faster than whole-array temporaries.
    """
    neg_l = np.maximum(-np.asarray(log_negz, dtype=float), 1.0)
    out = np.empty_like(neg_l)
    flat_in, flat_out = neg_l.reshape(-1), out.reshape(-1)
    for start in range(0, flat_in.size, _CHUNK):
        nl = flat_in[start:start + _CHUNK]
        p = np.sqrt(np.maximum(-2.0 * np.expm1(1.0 - nl), 0.0))
        near = 1.0 + p * (1.0 + p * (1 / 3 + p * (11 / 72 + p * (43 / 540 + p * (769 / 17280)))))
        log_nl = np.log(nl)
        inv = 1.0 / nl
        far = nl + log_nl + log_nl * inv * (1.0 - 0.5 * (log_nl - 2.0) * inv)
        v = np.where(nl < 1.6, near, far)
        for _ in range(3):
            g = v - np.log(v) - nl
            inv_v = 1.0 / v
            g1 = 1.0 - inv_v
            v = np.maximum(v - 2.0 * g * g1 / (2.0 * g1 * g1 + g * inv_v * inv_v), 1.0)
        flat_out[start:start + _CHUNK] = v
    return out


def privacy_constrained_weights(slopes, target_epsilon: float) -> np.ndarray:
    """Optimal importance weights for linear profiles ε(w, x_i) = slopes[i]·w (Thm 10, closed form).

    Solves Problem 7 exactly: w_i is the largest w ≥ 1 with ψ = log(1 + (e^{K w} − 1)/w) ≤ ε*,
    i.e. the largest root of e^{K w} = w E + 1 (Eq. 10) with K = slopes[i], E = e^{ε*} − 1:

        w* = −W₋₁(−(K/E) e^{−K/E}) / K − 1/E          (spec §2.3 item 7)

    evaluated in log space (see :func:`_neg_lambertw_m1_from_log`), so it is exact for any ε*.
    The general :func:`solve_privacy_constrained` (Algorithm 1) agrees to ≈1e-12 relative.

    Parameters
    ----------
    slopes : (n,) array ≥ 0
        K_i = ε(1, x_i); e.g. ``lloyd_profile(...).slopes`` (Prop. 13) or ‖x‖₁/b (Sec. 3.3).
    target_epsilon : float > 0
        ε*, the loss every point may have after sampling.

    Returns
    -------
    (n,) ndarray of weights w_i ≥ 1; q_i = 1/w_i is the Poisson sampling probability. A point
    with K = 0 gets w = inf (q = 0: it costs nothing and is never needed), a point with K = ε*
    gets w = 1 ("sampling for free"). The result is shrunk by 1e-12 relative so that
    ψ ≤ ε* holds in floating point too.

    Raises
    ------
    ValueError
        If some K_i > ε* (Assumption 8); the message states the smallest feasible ε*.
    """
    target = _check_target(target_epsilon)
    k = np.asarray(slopes, dtype=float)
    if k.ndim != 1 or np.any(~np.isfinite(k)) or np.any(k < 0):
        raise ValueError("slopes must be a 1-D array of finite numbers ≥ 0")
    if k.size and k.max() > target * (1 + _ON_TARGET_RTOL):
        raise _infeasible(k, target)
    log_e = float(logexpm1(target))
    w = np.full(k.shape, np.inf)
    pos = k > 0
    kp = k[pos]
    inv_e = math.exp(-log_e)
    wp = np.empty_like(kp)
    for start in range(0, kp.size, _CHUNK):
        kc = kp[start:start + _CHUNK]
        log_ratio = np.log(kc) - log_e  # log(K/E) < 0
        v = _neg_lambertw_m1_from_log(log_ratio - np.exp(log_ratio))
        # 1e-12 relative safety margin so that ψ ≤ ε* also holds in floating point.
        wp[start:start + _CHUNK] = np.maximum((v / kc - inv_e) * (1.0 - 1e-12), 1.0)
    w[pos] = wp
    return w


def _h(profile: PDPProfile, w: np.ndarray, index: np.ndarray, log_e: float) -> np.ndarray:
    """Sign of g_i (Algorithm 1, line 4) in log space: log(e^{ε}−1) − log w − log(e^{ε*}−1)."""
    return logexpm1(profile.value(w, index)) - np.log(w) - log_e


def solve_privacy_constrained(
    profile: PDPProfile,
    target_epsilon: float,
    *,
    rtol: float = 1e-13,
    max_doublings: int = 1000,
) -> np.ndarray:
    """Algorithm 1 (privacy-constrained importance weights by bisection), vectorised.

    With the corrections of spec §2.2–2.3 (the printed algorithm and the authors' code differ):

    1. log-domain objective h_i(w) = log(e^{ε(w,x_i)} − 1) − log w − log(e^{ε*} − 1) (same sign
       as g_i; no overflow for ε* up to 1000 and beyond);
    2. h_i(1) > 0 raises (Assumption 8) with the smallest feasible ε*; a point with
       ε(1, x_i) = ε* keeps w = 1 unless the Case-1 condition ε'(1, x_i) < 1 − e^{−ε(1, x_i)}
       holds (printed: ε' < 0, erratum §9.2), in which case the non-trivial root is searched;
    3. upper bracket v_i = 2(e^{ε*} − v̄_i)/μ_i + 2 (printed: +1, which can lie below the root,
       erratum §9.1), used only when finite and verified h_i(v_i) > 0; otherwise doubling
       [1, 2], [2, 4], ... as the authors' Rust code does;
    4. bisection keeping h(lo) ≤ 0 < h(hi) until (hi − lo) ≤ rtol·lo, returning ``lo`` (the
       feasible end, so ψ(x_i) ≤ ε* holds exactly).

    All points are processed together (no Python loop over points); only the points not yet
    converged are evaluated in each step.

    Parameters
    ----------
    profile : PDPProfile
    target_epsilon : float > 0
    rtol : float
        Relative width of the final bracket.
    max_doublings : int
        Points still feasible at w = 2**max_doublings (a profile that does not grow, e.g.
        ε ≡ 0) get w = inf, i.e. q = 0. At most 1000 (2**1000 is near the float limit).

    Returns
    -------
    (n,) ndarray of weights ≥ 1.
    """
    target = _check_target(target_epsilon)
    n = int(profile.n_points)
    log_e = float(logexpm1(target))
    ones = np.ones(n)
    e1 = np.asarray(profile.value(ones), dtype=float)
    d1 = np.asarray(profile.derivative(ones), dtype=float)
    if n and e1.max() > target * (1 + _ON_TARGET_RTOL):
        raise _infeasible(e1, target)
    w = np.ones(n)
    on_target = e1 >= target * (1 - _ON_TARGET_RTOL)
    case1 = on_target & (d1 < -np.expm1(-e1))
    active = np.flatnonzero(~on_target | case1)
    if active.size == 0:
        return w

    # Chunks of points keep the temporaries in cache (≈ 3× faster on 10⁵–10⁶ points).
    for start in range(0, active.size, _CHUNK):
        idx = active[start:start + _CHUNK]
        w[idx] = _bracket_and_bisect(profile, idx, e1[idx], d1[idx], target, log_e, rtol,
                                     max_doublings)
    return w


def _bracket_and_bisect(profile: PDPProfile, active: np.ndarray, e1: np.ndarray,
                        d1: np.ndarray, target: float, log_e: float, rtol: float,
                        max_doublings: int) -> np.ndarray:
    """Steps 3–4 of :func:`solve_privacy_constrained` for the points ``active``."""
    # Upper bracket from the proof of Prop. 12 (corrected), verified; doubling otherwise.
    lo = np.ones(active.size)
    hi = np.full(active.size, np.nan)
    mu = profile.strong_convexity(active)
    if mu is not None:
        mu = np.asarray(mu, dtype=float)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            ea = np.exp(e1)
            vbar = np.minimum(ea + mu / 2.0, d1 * ea + 1.0)
            v = 2.0 * (math.exp(target) - vbar) / mu + 2.0 if target < 700 else np.inf
            v = np.where(np.isfinite(v) & (v > 1.0), v, np.nan)
        ok = np.isfinite(v)
        if np.any(ok):
            good = np.zeros(active.size, dtype=bool)
            good[ok] = _h(profile, v[ok], active[ok], log_e) > 0
            hi[good] = v[good]
    todo = np.flatnonzero(np.isnan(hi))
    ub = np.full(todo.size, 2.0)
    for _ in range(min(int(max_doublings), 1000)):
        if todo.size == 0:
            break
        feasible = _h(profile, ub, active[todo], log_e) <= 0
        hi[todo[~feasible]] = ub[~feasible]
        lo[todo[feasible]] = ub[feasible]
        todo, ub = todo[feasible], 2.0 * ub[feasible]
    unbounded = np.zeros(active.size, dtype=bool)
    unbounded[todo] = True  # never infeasible: ε does not grow with w
    hi[unbounded] = lo[unbounded]

    # Bisection on the points not yet converged.
    live = np.flatnonzero(~unbounded & (hi - lo > rtol * lo))
    while live.size:
        mid = 0.5 * (lo[live] + hi[live])
        stuck = (mid == lo[live]) | (mid == hi[live])  # float resolution reached
        feasible = _h(profile, mid, active[live], log_e) <= 0
        lo[live[feasible]] = mid[feasible]
        hi[live[~feasible]] = mid[~feasible]
        width_ok = hi[live] - lo[live] <= rtol * lo[live]
        live = live[~(width_ok | stuck)]
    lo[unbounded] = np.inf
    return lo


# --------------------------------------------------------------------------------------------
# Sampling distributions and Poisson sampling
# --------------------------------------------------------------------------------------------


def _check_sample_size(sample_size: float, n: int) -> float:
    m = float(sample_size)
    if not (math.isfinite(m) and 0 < m <= n):
        raise ValueError(f"sample_size must be in (0, n={n}], got {sample_size!r}")
    return m


def uniform_probabilities(n: int, sample_size: float) -> np.ndarray:
    """q_unif(x) = m/n for all n points (expected sample size m; Sec. 5)."""
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n!r}")
    m = _check_sample_size(sample_size, n)
    return np.full(n, m / n)


def coreset_max_sample_size(
    n: int, mean_sq_norm: float, max_sq_norm: float, *, lam: float = 0.5
) -> float:
    """Largest m with q_core ≤ 1 for every point of squared norm ≤ ``max_sq_norm`` (spec §5.2).

    q_core(x) = λ m/n + (1 − λ) m ‖x‖²/(n x̃) ≤ 1 ⇔ m ≤ 1 / (λ/n + (1 − λ) ‖x‖²_max/(n x̃)).
    (The paper's m ≤ n x̃ / r² is sufficient for every λ; this is the exact bound.)
    """
    denom = lam / n + (1.0 - lam) * max_sq_norm / (n * mean_sq_norm)
    return float("inf") if denom == 0 else 1.0 / denom


def coreset_probabilities(
    X, sample_size: float, *, lam: float = 0.5, radius: float | None = None
) -> np.ndarray:
    """Poisson coreset distribution q_core (Sec. 4, after Bachem et al. 2018; spec §5.2).

    q_core(x) = λ m/n + (1 − λ) m ‖x‖²₂ / (n x̃),  x̃ = mean ‖x_i‖²₂, Σ_i q_core(x_i) = m.

    The data must be centred (the paper's prerequisite: ‖x‖² stands for the distance to the
    mean). n and x̃ are read off the data; the paper treats them as public (spec §9.12).

    Parameters
    ----------
    X : (n, d) array, centred
    sample_size : float
        Expected sample size m.
    lam : float in [0, 1]
        Mixing weight λ of the uniform part (λ = 1: uniform sampling; the paper uses 1/2).
    radius : float, optional
        The domain bound r. When given, q ≤ 1 is required on the whole ball ‖x‖ ≤ r (what the
        ε of Eq. 5 needs); otherwise only on the data points.

    Raises
    ------
    ValueError
        If some probability would exceed 1; the message states the largest feasible m.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array (n, d), got shape {X.shape}")
    if not 0.0 <= float(lam) <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    n = X.shape[0]
    m = _check_sample_size(sample_size, n)
    sq = np.einsum("ij,ij->i", X, X)
    x_tilde = float(sq.mean())
    if x_tilde == 0 and lam < 1:
        raise ValueError("all points are 0: the coreset part is undefined; use lam=1 (uniform)")
    max_sq = float(radius) ** 2 if radius is not None else float(sq.max())
    m_max = coreset_max_sample_size(n, x_tilde if x_tilde > 0 else 1.0, max_sq, lam=lam)
    if m > m_max * (1 + 1e-12):
        where = f"‖x‖ ≤ radius={float(radius):g}" if radius is not None else "the data"
        raise ValueError(
            f"sample_size={m:g} makes some coreset probability exceed 1 on {where} "
            f"(lam={lam:g}); reduce sample_size or raise lam"  # no n, x̃ or bound: data-derived
        )
    return coreset_q(sq, sample_size=m, n=n, mean_sq_norm=x_tilde, lam=lam)


def coreset_q(
    sq_norms: np.ndarray, *, sample_size: float, n: int, mean_sq_norm: float, lam: float
) -> np.ndarray:
    """The formula of q_core (spec §5.2) for given squared norms and *given* n and x̃.

    :func:`coreset_probabilities` computes n and x̃ from its array; the distributed path
    (:mod:`dpcore.scale.dask_kmeans`) passes the global values to each partition. Capped at 1.
    """
    sq_norms = np.asarray(sq_norms, dtype=float)
    uniform = lam * sample_size / n
    if lam == 1:
        return np.full(sq_norms.shape, uniform)
    return np.minimum(uniform + (1.0 - lam) * sample_size * sq_norms / (n * mean_sq_norm), 1.0)


def variance_optimal_probabilities(X, sample_size: float) -> np.ndarray:
    """The non-private variance-optimal benchmark of Fig. 2 (Sec. 3.3; spec §3.2).

    Minimises Σ_i (1/q_i − 1)‖x_i‖²₂ subject to Σ q_i = m, 0 < q_i ≤ 1: q_i ∝ ‖x_i‖₂ with the
    points whose share would exceed 1 capped at 1 and the rest rescaled (water-filling).
    Not DP: it needs the whole data set (the paper's "oracle").
    """
    X = np.asarray(X, dtype=float)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    n = norms.shape[0]
    m = _check_sample_size(sample_size, n)
    q = np.zeros(n)
    capped = np.zeros(n, dtype=bool)
    for _ in range(n + 1):
        free = ~capped
        mass = m - capped.sum()
        total = norms[free].sum()
        if total <= 0:
            q[free] = mass / free.sum() if free.any() else 0.0
            break
        q[free] = mass * norms[free] / total
        over = free & (q > 1)
        if not over.any():
            break
        capped |= over
        q[capped] = 1.0
    return q


@public_randomness("Poisson subsampling: chooses which rows enter (amplification), adds no "
                   "noise term")
def poisson_sample(q, *, rng: RNGLike = None) -> tuple[np.ndarray, np.ndarray]:
    """Poisson importance sampling (Definition 5).

    Each point i is kept independently with probability q_i and gets weight 1/q_i, so that any
    weighted sum over the sample is unbiased for the full-data sum.

    Returns
    -------
    indices : (m',) int64, sorted
    weights : (m',) float, 1/q at those indices
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 1 or np.any(~np.isfinite(q)) or np.any((q < 0) | (q > 1)):
        raise ValueError("q must be a 1-D array of probabilities in [0, 1]")
    gen = as_generator(rng)
    # random() is uniform on [0, 1): P(u < q) = q exactly, q = 0 never and q = 1 always kept.
    idx = np.flatnonzero(gen.random(q.shape[0]) < q)
    return idx, 1.0 / q[idx]
