"""Theorem 6 and the PDP profiles it amplifies (Fay, Mair & Sjölund, TMLR 2024).

* :func:`amplified_epsilon`: Theorem 6 (Eq. 1), ψ = log(1 + q (e^{ε(1/q, x)} − 1)) in log space,
  with :func:`logexpm1`.
* PDP profiles ε(w, x) with value and derivative in w (:class:`PDPProfile`): the linear profiles
  of weighted DP-Lloyd (Prop. 13, :func:`lloyd_profile`) and of the Laplace weighted sum (Sec. 3.3,
  :func:`laplace_sum_profile`), or your own (:class:`FunctionProfile`).

Split out of :mod:`dpcore.mechanisms.importance.sampling`, which re-exports every public name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = [
    "FunctionProfile",
    "LinearProfile",
    "PDPProfile",
    "amplified_epsilon",
    "laplace_sum_profile",
    "lloyd_profile",
    "logexpm1",
]

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
