"""Parameter selection of the sensitivity sampler (Rubinstein & Aldà 2017, Theorem 15, Table 1).

* :func:`sampler_config` chooses the sample size ``m``, the order-statistic index ``k`` and the
  confidence ``gamma`` (Theorem 15, Table 1, Corollaries 20-22; closed forms on the Lambert-W
  branch ``-1``), returned as a :class:`SamplerConfig`.
* :func:`rho_for_gamma`, :func:`rho_for_m`, :func:`gamma_min` and :func:`theorem15_holds`: the
  pieces of Table 1; :func:`rdp_gamma_under_shift` is Proposition 8.

Split out of :mod:`dpcore.mechanisms.sensitivity.sampler`, which re-exports every public name.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy.special import lambertw

from dpcore.mechanisms.sensitivity.validation import _check_count, _check_gamma

__all__ = [
    "SamplerConfig",
    "gamma_min",
    "rdp_gamma_under_shift",
    "rho_for_gamma",
    "rho_for_m",
    "sampler_config",
    "theorem15_holds",
]

# Products such as m * (1 - gamma + gamma_min(m)) equal an integer in exact arithmetic for the
# optimal operating points (rows 2/3 of Table 1); rounding must not push ceil() one step up.
_CEIL_TOL = 1e-9


# ----------------------------------------------------------------------------------------------
# Table 1: parameter selection
# ----------------------------------------------------------------------------------------------


def _lambertw_m1(z: float) -> float:
    """Real value of the secondary branch ``W_{-1}(z)`` for ``z`` in ``[-1/e, 0)``."""
    w = lambertw(z, k=-1)
    if not (np.isfinite(w.real) and abs(w.imag) < 1e-12):  # pragma: no cover - guarded by callers
        raise ArithmeticError(f"W_-1({z!r}) is not real: {w!r}")
    return float(w.real)


def rho_for_gamma(gamma: float) -> float:
    """DKW confidence ``ρ*`` minimising ``m`` for a target ``γ`` (Table 1 row 1, Corollary 20).

    ``ρ* = exp(W_{-1}(-γ / (2√e)) + 1/2)``; the principal branch would give ``ρ* > e^{-1/2}``,
    outside the feasible region ``(0, min(γ, 1/2))``.
    """
    g = _check_gamma(gamma)
    return math.exp(_lambertw_m1(-g / (2.0 * math.sqrt(math.e))) + 0.5)


def rho_for_m(m: int) -> float:
    """DKW confidence ``ρ*`` minimising ``k`` or ``γ`` for a budget ``m`` (rows 2/3, Cor. 21-22).

    ``ρ* = exp(W_{-1}(-1/(4m)) / 2)``.
    """
    m = _check_count(m, "m")
    return math.exp(0.5 * _lambertw_m1(-1.0 / (4.0 * m)))


def _dkw_error(rho: float, m: int) -> float:
    """The DKW error ``ρ' = sqrt(log(1/ρ) / (2m))`` of Theorem 15, eq. (7)."""
    return math.sqrt(math.log(1.0 / rho) / (2.0 * m))


def gamma_min(m: int) -> float:
    """Smallest confidence ``γ`` reachable with ``m`` sampled pairs (Table 1 row 3, eq. (9))."""
    rho = rho_for_m(m)
    return rho + _dkw_error(rho, m)


def _ceil(x: float) -> int:
    return math.ceil(x - _CEIL_TOL * max(1.0, abs(x)))


def theorem15_holds(m: int, k: int, gamma: float, rho: float) -> bool:
    """Whether ``(m, k, γ, ρ)`` satisfies every condition of Theorem 15.

    ``0 < ρ < min(γ, 1/2)``, ``1 <= k <= m``, (1) ``m >= log(1/ρ) / (2(γ-ρ)^2)`` and
    (2) ``k >= m (1 - γ + ρ + sqrt(log(1/ρ)/(2m)))`` (both up to a relative 1e-9 rounding slack).
    """
    if not (0.0 < rho < min(gamma, 0.5) and 0.0 < gamma < 1.0 and 1 <= k <= m):
        return False
    cond1 = m >= math.log(1.0 / rho) / (2.0 * (gamma - rho) ** 2) * (1.0 - _CEIL_TOL)
    k_raw = m * (1.0 - gamma + rho + _dkw_error(rho, m))
    cond2 = k >= k_raw - _CEIL_TOL * max(1.0, k_raw)
    return bool(cond1 and cond2)


@dataclass(frozen=True)
class SamplerConfig:
    """Operating point of the sensitivity sampler (Theorem 15).

    Attributes
    ----------
    m : int
        Number of sampled neighbouring pairs.
    k : int
        Order-statistic index, ``1 <= k <= m`` (1-based as in the paper): ``Δ̂ = G_(k)``.
    gamma : float
        Random-DP confidence: the guarantee holds on all but a ``γ`` fraction of pairs.
    rho : float
        DKW failure probability used in the proof (not a user knob once chosen).
    mode : str
        Which row of Table 1 produced it: ``"min_m"`` (γ given), ``"min_k"`` (m and γ given),
        ``"min_gamma"`` (m given), ``"manual"`` (m and k given: the smallest valid γ).
    """

    m: int
    k: int
    gamma: float
    rho: float
    mode: str

    @property
    def quantile_level(self) -> float:
        """The empirical-CDF level inverted by Algorithm 1, ``1 - γ + ρ + ρ'`` (eq. (4))."""
        return 1.0 - self.gamma + self.rho + _dkw_error(self.rho, self.m)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def __str__(self) -> str:
        return (
            f"SamplerConfig(m={self.m}, k={self.k}, gamma={self.gamma:.6g}, "
            f"rho={self.rho:.6g}, mode={self.mode!r})"
        )


def _config_min_m(gamma: float) -> SamplerConfig:
    """Row 1 / Corollary 20: the fewest pairs for a target ``γ`` (then ``k = m``)."""
    rho = rho_for_gamma(gamma)
    m = _ceil(math.log(1.0 / rho) / (2.0 * (gamma - rho) ** 2))
    k = min(max(_ceil(m * (1.0 - gamma + rho + _dkw_error(rho, m))), 1), m)
    return SamplerConfig(m=m, k=k, gamma=gamma, rho=rho, mode="min_m")


def _config_min_k(m: int, gamma: float) -> SamplerConfig:
    """Row 2 / Corollary 21: the smallest ``k`` (least noise) for a budget ``m`` and ``γ``."""
    rho = rho_for_m(m)
    g_min = rho + _dkw_error(rho, m)
    if gamma < g_min:
        raise ValueError(
            f"gamma={gamma:g} is not reachable with m={m} sampled pairs: the smallest confidence "
            f"for m={m} is gamma_min={g_min:.6g} (Table 1 row 3). Raise gamma to at least that, "
            f"or use m >= {_config_min_m(gamma).m} pairs (Table 1 row 1)."
        )
    k = min(max(_ceil(m * (1.0 - gamma + g_min)), 1), m)
    return SamplerConfig(m=m, k=k, gamma=gamma, rho=rho, mode="min_k")


def _config_min_gamma(m: int) -> SamplerConfig:
    """Row 3 / Corollary 22: the smallest ``γ`` for a budget ``m`` (then ``k = m``)."""
    rho = rho_for_m(m)
    g = rho + _dkw_error(rho, m)
    if g >= 1.0:
        raise ValueError(
            f"m={m} sampled pairs are too few for any confidence gamma < 1 "
            f"(gamma_min({m})={g:.4g}); use m >= 2 (m >= 8 for gamma <= 0.5)"
        )
    return SamplerConfig(m=m, k=m, gamma=g, rho=rho, mode="min_gamma")


def sampler_config(
    *, m: int | None = None, gamma: float | None = None, k: int | None = None
) -> SamplerConfig:
    """Choose ``(m, k, γ, ρ)`` for the sensitivity sampler (Theorem 15, Table 1).

    Parameters
    ----------
    m : int, optional
        Budget of sampled neighbouring pairs.
    gamma : float, optional
        Target random-DP confidence in ``(0, 1)``.
    k : int, optional
        Order-statistic index (only together with ``m``).

    Returns
    -------
    SamplerConfig
        * ``gamma`` only: row 1 (Corollary 20), the smallest ``m``; then ``k = m``.
        * ``m`` and ``gamma``: row 2 (Corollary 21), the smallest ``k``.
        * ``m`` only: row 3 (Corollary 22), the smallest ``γ = γ_min(m)``; ``k = m``.
        * ``m`` and ``k``: the smallest ``γ`` for which ``k`` satisfies Theorem 15, i.e.
          ``γ = 1 - k/m + γ_min(m)`` with the row-2 ``ρ``.
        * ``m``, ``k`` and ``gamma``: that triple, checked against Theorem 15.

    Raises
    ------
    ValueError
        Infeasible or malformed requests, e.g. ``γ < γ_min(m)`` (the message states ``γ_min``).

    Examples
    --------
    >>> print(sampler_config(gamma=0.1))
    SamplerConfig(m=285, k=285, gamma=0.1, rho=0.00974461, mode='min_m')
    """
    if m is None and gamma is None:
        raise ValueError("give gamma (target confidence), m (number of pairs), or both")
    if m is not None:
        m = _check_count(m, "m")
    if gamma is not None:
        gamma = _check_gamma(gamma)
    if k is None:
        if m is None:
            return _config_min_m(gamma)
        if gamma is None:
            return _config_min_gamma(m)
        return _config_min_k(m, gamma)
    if m is None:
        raise ValueError(f"k={k!r} needs m (the number of sampled pairs it indexes into)")
    k = _check_count(k, "k")
    if k > m:
        raise ValueError(f"k must satisfy 1 <= k <= m; got k={k}, m={m}")
    rho = rho_for_m(m)
    smallest = 1.0 - k / m + rho + _dkw_error(rho, m)
    if gamma is None:
        if smallest >= 1.0:
            raise ValueError(
                f"k={k} of m={m} gives no valid confidence (it would need gamma={smallest:.4g} "
                f">= 1); use a larger k (k=m gives gamma_min({m})={gamma_min(m):.4g}) or more pairs"
            )
        # Nudge up by the rounding slack so the returned triple passes theorem15_holds exactly.
        gamma = min(smallest * (1.0 + 1e-12), math.nextafter(1.0, 0.0))
        return SamplerConfig(m=m, k=k, gamma=gamma, rho=rho, mode="manual")
    if not theorem15_holds(m, k, gamma, rho):
        k_needed = _config_min_k(m, gamma).k  # raises, stating gamma_min, if gamma is too small
        raise ValueError(
            f"(m={m}, k={k}, gamma={gamma:g}) does not satisfy Theorem 15: with m={m} pairs and "
            f"gamma={gamma:g} the order statistic must be k >= {k_needed}"
        )
    return SamplerConfig(m=m, k=k, gamma=gamma, rho=rho, mode="manual")


def rdp_gamma_under_shift(gamma: float, n: int, kl_bound: float) -> float:
    """Confidence after a distribution shift ``KL(P||Q) <= τ`` (Proposition 8).

    Returns ``γ + sqrt((n+1) τ / 2)``; a value ``>= 1`` means no guarantee is left.
    """
    if kl_bound < 0:
        raise ValueError(f"kl_bound must be >= 0, got {kl_bound!r}")
    return _check_gamma(gamma) + math.sqrt((_check_count(n, "n") + 1) * kl_bound / 2.0)
