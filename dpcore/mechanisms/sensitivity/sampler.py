"""Random differential privacy for black-box statistics: the sensitivity sampler.

Rubinstein & Aldà, "Pain-Free Random Differential Privacy with Sensitivity Sampling", ICML 2017
(``../shared/seeds/004_*``; spec ``../shared/spec/sensitivity_sampler.md``).

* :func:`sampler_config` chooses the sample size ``m``, the order-statistic index ``k`` and the
  confidence ``gamma`` (Theorem 15, Table 1, Corollaries 20-22; closed forms on the Lambert-W
  branch ``-1``).
* :func:`sample_sensitivity` is Algorithm 1 (SensitivitySampler): it estimates the sensitivity
  ``Δ̂ = G_(k)`` of any function of a data set from ``m`` neighbouring pairs drawn from a public
  distribution ``P`` (the *oracle*).
* :func:`sample_then_respond` is Algorithm 2: the estimate calibrates a sensitivity-induced
  mechanism (Laplace, Gaussian, exponential, Bernstein; paper §4), and the release carries an
  ``(ε, δ, γ)``-random-DP guarantee (Definition 4).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np
from scipy.special import lambertw

from dpcore.core.errors import SamplerError
from dpcore.core.rng import RNGLike, as_generator
from dpcore.mechanisms.sensitivity.bernstein import (  # re-exported: these were defined here first
    BernsteinRelease,
    bernstein_basis,
    bernstein_design,
    bernstein_lattice,
    bernstein_mechanism,
)
from dpcore.mechanisms.sensitivity.bernstein import bernstein_target as _bernstein_target
from dpcore.privacy.guarantees import privacy_alias
from dpcore.privacy.noise import public_randomness, selection_sampler

__all__ = [
    "BernsteinRelease",
    "Release",
    "SamplerConfig",
    "SamplerError",
    "SensitivityResult",
    "bernstein_basis",
    "bernstein_design",
    "bernstein_lattice",
    "bernstein_mechanism",
    "empirical_oracle",
    "gamma_min",
    "rdp_gamma_under_shift",
    "respond",
    "rho_for_gamma",
    "rho_for_m",
    "sample_sensitivity",
    "sample_then_respond",
    "sampler_config",
    "theorem15_holds",
]

# Products such as m * (1 - gamma + gamma_min(m)) equal an integer in exact arithmetic for the
# optimal operating points (rows 2/3 of Table 1); rounding must not push ceil() one step up.
_CEIL_TOL = 1e-9
# Δ̂ below this fraction of |f(D)| is round-off (e.g. a solver returning the same fit twice).
_ZERO_SENSITIVITY = 1e-10


# ----------------------------------------------------------------------------------------------
# Table 1: parameter selection
# ----------------------------------------------------------------------------------------------


def _lambertw_m1(z: float) -> float:
    """Real value of the secondary branch ``W_{-1}(z)`` for ``z`` in ``[-1/e, 0)``."""
    w = lambertw(z, k=-1)
    if not (np.isfinite(w.real) and abs(w.imag) < 1e-12):  # pragma: no cover - guarded by callers
        raise ArithmeticError(f"W_-1({z!r}) is not real: {w!r}")
    return float(w.real)


def _check_gamma(gamma: float) -> float:
    try:
        g = float(gamma)
    except (TypeError, ValueError):
        raise ValueError(f"gamma must be a number in (0, 1), got {gamma!r}") from None
    if not 0.0 < g < 1.0:
        raise ValueError(
            f"gamma must lie strictly between 0 and 1 (it is the probability that the privacy "
            f"guarantee fails on a random pair of data sets), got gamma={gamma!r}"
        )
    return g


def _check_count(value: Any, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


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


# ----------------------------------------------------------------------------------------------
# Algorithm 1: SensitivitySampler
# ----------------------------------------------------------------------------------------------

Oracle = Callable[[int, np.random.Generator], Any]
NormLike = int | float | str | Callable[[np.ndarray, np.ndarray], float]

_NORMS: dict[Any, float] = {1: 1.0, 2: 2.0, "l1": 1.0, "l2": 2.0, "linf": np.inf, "inf": np.inf}
_NORM_NAMES = {1.0: "l1", 2.0: "l2", np.inf: "linf"}
# Elements of one chunk of stacked data sets (bounds memory to ~64 MB of float64).
_CHUNK_ELEMENTS = 1 << 23


def _norm_order(norm: NormLike) -> float | Callable:
    if callable(norm):
        return norm
    key = norm.lower() if isinstance(norm, str) else norm
    if isinstance(key, float) and np.isinf(key):
        return np.inf
    if key in _NORMS:
        return _NORMS[key]
    raise ValueError(f"norm must be 1, 2, np.inf ('l1', 'l2', 'linf') or a callable, got {norm!r}")


def _norm_name(order: float | Callable) -> str:
    return _NORM_NAMES.get(order, "custom") if not callable(order) else "custom"


def empirical_oracle(table: Any) -> Oracle:
    """An oracle drawing records i.i.d. (with replacement) from a public or proxy table.

    The table must be privacy-insensitive (paper §3, Remark 7): a public sample, a synthetic
    proxy or an earlier release, never the private data set itself.
    """
    records = table.to_numpy() if hasattr(table, "to_numpy") else np.asarray(table)
    if records.ndim == 0 or records.shape[0] == 0:
        raise ValueError("the oracle table is empty: it needs at least one record (row)")

    @public_randomness("records drawn from a public or proxy table (the sampler's oracle)")
    def draw(size: int, rng: np.random.Generator) -> np.ndarray:
        return records[rng.integers(0, records.shape[0], size=size)]

    draw.records = records  # type: ignore[attr-defined]
    return draw


def _as_oracle(oracle: Any) -> Oracle:
    if callable(oracle):
        return oracle
    return empirical_oracle(oracle)


def _draw_records(oracle: Oracle, size: int, rng: np.random.Generator) -> np.ndarray:
    records = oracle(size, rng)
    records = records.to_numpy() if hasattr(records, "to_numpy") else np.asarray(records)
    if records.ndim == 0 or records.shape[0] != size:
        got = "a scalar" if records.ndim == 0 else f"{records.shape[0]} records"
        raise ValueError(
            f"the oracle must return {size} records along axis 0 when asked for {size}, got {got}"
        )
    return records


@dataclass(frozen=True, eq=False)
class SensitivityResult:
    """Output of Algorithm 1.

    Attributes
    ----------
    delta_hat : float
        The estimate ``Δ̂ = G_(k)``.
    sensitivities : ndarray
        All ``m`` sampled ``G_i``, sorted ascending (its ECDF with ``G_(k)`` marked is Figure 1).
    config : SamplerConfig
        The ``(m, k, γ, ρ)`` operating point.
    n : int
        Data-set size the estimate is valid for.
    norm : str
        ``"l1"``, ``"l2"``, ``"linf"`` or ``"custom"``.
    path : str
        How pairs were evaluated: ``"record_map"``, ``"batch"`` or ``"loop"``.
    """

    delta_hat: float
    sensitivities: np.ndarray = field(repr=False)
    config: SamplerConfig
    n: int
    norm: str
    path: str = "loop"

    def ecdf(self):
        """The empirical CDF of the sampled sensitivities as a DataFrame (``G``, ``ecdf``)."""
        import pandas as pd

        g = self.sensitivities
        return pd.DataFrame({"G": g, "ecdf": np.arange(1, g.size + 1) / g.size})

    def as_dict(self) -> dict[str, Any]:
        return {
            "delta_hat": self.delta_hat,
            "n": self.n,
            "norm": self.norm,
            "path": self.path,
            **{f"config_{k}": v for k, v in self.config.as_dict().items()},
        }


def _gap(a: Any, b: Any, order: float | Callable) -> float:
    """``‖a − b‖`` for two outputs of f, NaN when they are non-finite or mismatched."""
    if callable(order):
        g = float(order(a, b))
        return g if math.isfinite(g) and g >= 0 else math.nan
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"f returned outputs of different shapes {a.shape} and {b.shape}")
    diff = (a - b).ravel()
    if not np.all(np.isfinite(diff)):
        return math.nan
    return float(np.linalg.norm(diff, ord=order)) if diff.size else 0.0


def _neighbours(records: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Split draws ``(B, n+1, ...)`` into ``D = X[:, 1..n]`` and ``D' = X[:, (1..n-1, n+1)]``."""
    idx = np.r_[0 : n - 1, n]
    return records[:, :n], records[:, idx]


def _loop_gaps(f: Callable, records: np.ndarray, n: int, order) -> tuple[np.ndarray, list[str]]:
    """Algorithm 1 line 3 for each stacked draw, one pair at a time; failures become NaN.

    ``f`` is called pair by pair; the norms are then taken in one vectorised step when all
    outputs share a shape (the common case), else pair by pair.
    """
    b = records.shape[0]
    errors: list[str] = []
    outs: list[Any] = [None] * b
    for i in range(b):
        x = records[i]
        try:
            # D' built per pair: a small allocation beats copying the whole chunk at once
            outs[i] = (f(x[:n]), f(np.concatenate((x[: n - 1], x[n:]))))
        except Exception as exc:  # a black box may fail in any way; report, never release
            errors.append(f"{type(exc).__name__}: {exc}")
    ok = [i for i in range(b) if outs[i] is not None]
    gaps = np.full(b, np.nan)
    if not callable(order) and ok:
        try:  # one conversion per side; ragged outputs raise and take the pairwise path
            first = np.asarray([outs[i][0] for i in ok], dtype=float)
            second = np.asarray([outs[i][1] for i in ok], dtype=float)
        except (TypeError, ValueError):
            first = second = None
        if first is not None and first.shape == second.shape:
            first, second = first.reshape(len(ok), -1), second.reshape(len(ok), -1)
            gaps[ok] = _rowwise_gaps(first, second, order)
            return gaps, errors
    for i in ok:
        try:
            gaps[i] = _gap(outs[i][0], outs[i][1], order)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    return gaps, errors


def _batch_gaps(batch: Callable, records: np.ndarray, n: int, order) -> np.ndarray:
    d, d_prime = _neighbours(records, n)  # d is a view; only d' is copied
    b = records.shape[0]
    out = [np.asarray(batch(x), dtype=float) for x in (d, d_prime)]
    if out[0].shape[0] != b or out[0].shape != out[1].shape:
        raise ValueError(f"batched f returned shapes {out[0].shape}, {out[1].shape} for {b} pairs")
    return _rowwise_gaps(out[0].reshape(b, -1), out[1].reshape(b, -1), order)


def _rowwise_gaps(a: np.ndarray, b: np.ndarray, order) -> np.ndarray:
    if callable(order):
        return np.array([_gap(x, y, order) for x, y in zip(a, b, strict=True)])
    diff = a - b
    gaps = np.linalg.norm(diff, ord=order, axis=1) if diff.shape[1] else np.zeros(diff.shape[0])
    gaps[~np.all(np.isfinite(diff), axis=1)] = np.nan
    return gaps


def _record_map_gaps(phi: Callable, oracle: Oracle, m: int, n: int, order, rng) -> np.ndarray:
    # f(D) = mean_i phi(x_i): the n-1 shared records cancel, f(D) - f(D') = (phi(x) - phi(x'))/n.
    records = _draw_records(oracle, 2 * m, rng)
    feats = np.asarray(phi(records), dtype=float).reshape(2 * m, -1)
    return _rowwise_gaps(feats[:m], feats[m:], order) / n


def sample_sensitivity(
    f: Callable[[Any], Any],
    oracle: Oracle | Any,
    n: int,
    *,
    m: int,
    k: int,
    norm: NormLike = 1,
    rng: RNGLike = None,
    n_jobs: int | None = None,
) -> SensitivityResult:
    """Algorithm 1 (SensitivitySampler): estimate the sensitivity of ``f`` at size ``n``.

    For ``i = 1..m`` draw ``n + 1`` records ``X ~ P^{n+1}`` from ``oracle`` and set
    ``G_i = ‖f(X_{1..n}) − f(X_{1..n−1, n+1})‖``; return ``Δ̂ = G_(k)``. With ``(m, k)`` from
    :func:`sampler_config` for a ``γ``, any sensitivity-induced mechanism calibrated with ``Δ̂`` is
    ``γ``-random DP (Theorem 15).

    Parameters
    ----------
    f : callable
        ``f(D)`` for a data set ``D`` (array of ``n`` records along axis 0) returning a scalar or
        an array of fixed shape. Two optional attributes make it fast (the result has the same
        distribution): ``f.batch(Ds)`` maps stacked data sets ``(B, n, ...)`` to ``(B, ...)``
        outputs; ``f.record_map(X)`` declares ``f(D) = mean_i record_map(D)[i]`` (then only the
        two differing records of each pair are drawn).
    oracle : callable or table
        The distribution ``P``: ``oracle(size, rng)`` returning ``size`` i.i.d. records, or a
        public / proxy table (array or DataFrame) resampled with replacement.
    n : int
        Size of the private data set (``>= 2``).
    m, k : int
        Number of pairs and order-statistic index ``1 <= k <= m`` (see :func:`sampler_config`).
    norm : 1, 2, np.inf, str or callable
        Norm on the output space: L1 for Laplace, L2 for Gaussian, L∞ for exponential and
        Bernstein (paper §4); a callable ``dist(f(D), f(D'))`` is also accepted.
    rng : None, int or Generator
    n_jobs : int, optional
        Evaluate pairs of a plain (non-batched) ``f`` in parallel with joblib; the result does not
        depend on ``n_jobs``.

    Returns
    -------
    SensitivityResult

    Raises
    ------
    SamplerError
        If ``f`` raised or returned non-finite values on any sampled data set (the fraction is
        stated): an estimate that skipped them would not be valid.
    """
    n = _check_count(n, "n", minimum=2)
    m = _check_count(m, "m")
    k = _check_count(k, "k")
    if k > m:
        raise ValueError(f"k must satisfy 1 <= k <= m; got k={k}, m={m}")
    order = _norm_order(norm)
    gen = as_generator(rng)
    draw = _as_oracle(oracle)
    errors: list[str] = []
    record_map = getattr(f, "record_map", None)
    batch = getattr(f, "batch", None)
    if callable(record_map):
        path = "record_map"
        gaps = _record_map_gaps(record_map, draw, m, n, order, gen)
    else:
        path = "batch" if callable(batch) else "loop"
        probe = _draw_records(draw, 1, gen)
        per_pair = (n + 1) * max(1, int(np.prod(probe.shape[1:])))
        chunk = max(1, min(m, _CHUNK_ELEMENTS // (2 * per_pair)))
        # Draws depend on the memory chunk only, never on n_jobs, so results are reproducible.
        chunks = [_draw_records(draw, min(chunk, m - s) * (n + 1), gen) for s in range(0, m, chunk)]
        chunks = [c.reshape(-1, n + 1, *c.shape[1:]) for c in chunks]
        gaps_list: list[np.ndarray] = []
        if path == "batch":
            try:
                gaps_list = [_batch_gaps(batch, c, n, order) for c in chunks]
            except Exception:  # fall back to the plain f, which reports failures pair by pair
                path, gaps_list = "loop", []
        if path == "loop":
            if n_jobs in (None, 1):
                results = [_loop_gaps(f, c, n, order) for c in chunks]
            else:
                from joblib import Parallel, delayed

                # split the drawn pairs into a few tasks per worker
                tasks = [t for c in chunks for t in np.array_split(c, -(-c.shape[0] // 16))]
                results = Parallel(n_jobs=n_jobs)(
                    delayed(_loop_gaps)(f, t, n, order) for t in tasks
                )
            gaps_list = [g for g, _ in results]
            errors = [e for _, es in results for e in es]
        gaps = np.concatenate(gaps_list)
    failed = int(np.count_nonzero(~np.isfinite(gaps)))
    if failed:
        detail = errors[0] if errors else "it returned non-finite values (nan or inf)"
        raise SamplerError(
            f"the statistic failed on {failed} of {m} sampled neighbouring pairs "
            f"({failed / m:.1%}); first failure: {detail}. Nothing was released: make the "
            f"statistic defined on every data set the oracle can produce (e.g. guard degenerate "
            f"inputs) or use an oracle that matches its domain."
        )
    gaps.sort()
    try:
        config = sampler_config(m=m, k=k)
    except ValueError:
        # k too small for any gamma < 1: a valid order statistic, but no RDP confidence (gamma=1).
        config = SamplerConfig(m=m, k=k, gamma=1.0, rho=rho_for_m(m), mode="manual")
    return SensitivityResult(
        delta_hat=float(gaps[k - 1]),
        sensitivities=gaps,
        config=config,
        n=n,
        norm=_norm_name(order),
        path=path,
    )


# ----------------------------------------------------------------------------------------------
# Sensitivity-induced mechanisms (paper §4) and Algorithm 2: Sample-Then-Respond
# ----------------------------------------------------------------------------------------------

Mechanism = Literal["laplace", "gaussian", "exponential", "bernstein"]
_MECHANISM_NORM = {"laplace": 1.0, "gaussian": 2.0, "exponential": np.inf, "bernstein": np.inf}


@selection_sampler("the exponential mechanism's limit at sensitivity 0: a uniform index among "
                   "the best candidates")
def _uniform_choice(best: np.ndarray, gen: np.random.Generator) -> int:
    return int(gen.choice(best))


def respond(
    value: Any,
    *,
    sensitivity: float,
    epsilon: float,
    delta: float = 0.0,
    mechanism: Mechanism = "laplace",
    rng: RNGLike = None,
    lattice_k: int = 10,
    dims: int = 1,
    h: int = 1,
    calibration: Literal["analytic", "classic"] = "analytic",
) -> tuple[Any, float]:
    """Run a sensitivity-induced mechanism ``M_Δ`` on ``value = f(D)`` (paper §4).

    Parameters
    ----------
    value : array-like
        Laplace / Gaussian: the statistic. Exponential: the score vector over candidates.
        Bernstein: the values of ``F(D, ·)`` on :func:`bernstein_lattice` (``dims`` axes).
    sensitivity : float
        ``Δ`` in the norm the mechanism needs (L1, L2, L∞, L∞ on the lattice).
    epsilon, delta : float
        ``δ`` only for the Gaussian mechanism.
    calibration : {"analytic", "classic"}
        Gaussian only. ``"analytic"``: the exact analytic Gaussian mechanism (Balle & Wang 2018),
        valid for every ε. ``"classic"``: ``σ = Δ sqrt(2 log(1.25/δ)) / ε`` of Corollary 12, whose
        proof needs ε < 1 (refused otherwise).

    Returns
    -------
    (released, noise_scale)
        ``noise_scale`` is the Laplace scale, the Gaussian σ, or ``2Δ/ε`` (exponential).
    """
    from dpcore.privacy import noise
    if not (isinstance(epsilon, int | float | np.floating) and epsilon > 0):
        raise ValueError(f"epsilon must be a number > 0, got {epsilon!r}")
    sens = float(sensitivity)
    if not (math.isfinite(sens) and sens >= 0):
        raise ValueError(f"sensitivity must be finite and >= 0, got {sensitivity!r}")
    gen = as_generator(rng)
    if mechanism == "laplace":
        v = np.asarray(value, dtype=float)
        scale = noise.laplace_scale(sens, epsilon)
        out = np.asarray(noise.add_laplace(v, scale, sensitivity=sens, rng=gen))
        return (float(out) if out.ndim == 0 else out), scale
    if mechanism == "gaussian":
        if not 0.0 < delta < 1.0:
            raise ValueError(f"the Gaussian mechanism needs delta in (0, 1), got delta={delta!r}")
        v = np.asarray(value, dtype=float)
        if calibration == "analytic":
            sigma = noise.gaussian_sigma_approx_dp(sens, epsilon, delta)
        elif calibration == "classic":
            if epsilon >= 1:
                raise ValueError(
                    f"the classic Gaussian calibration (Corollary 12) is proven only for "
                    f"epsilon < 1, got epsilon={epsilon}; use calibration='analytic'"
                )
            sigma = sens * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
        else:
            raise ValueError(f"calibration must be 'analytic' or 'classic', got {calibration!r}")
        out = np.asarray(noise.add_gaussian(v, sigma, sensitivity=sens, rng=gen))
        return (float(out) if out.ndim == 0 else out), sigma
    if mechanism == "exponential":
        scores = np.asarray(value, dtype=float)
        if sens == 0:
            # ε/(2Δ) → ∞: the mechanism's limit is uniform over the best-scoring candidates.
            best = np.flatnonzero(scores == scores.max())
            return _uniform_choice(best, gen), 0.0
        return noise.exponential_mechanism(scores, epsilon, sens, rng=gen), 2.0 * sens / epsilon
    if mechanism == "bernstein":
        rel = bernstein_mechanism(
            value, sensitivity=sens, epsilon=epsilon, lattice_k=lattice_k, dims=dims, h=h, rng=gen
        )
        return rel, sens * (lattice_k + 1) ** rel.dims / epsilon
    raise ValueError(
        f"mechanism must be 'laplace', 'gaussian', 'exponential' or 'bernstein', got {mechanism!r}"
    )


@dataclass(frozen=True, eq=False)
class Release:
    """What Sample-Then-Respond released, with its guarantee.

    Attributes
    ----------
    value :
        The private response: an array or float (Laplace, Gaussian), a candidate (exponential),
        or a :class:`BernsteinRelease` (Bernstein).
    privacy_ : RandomDP
        ``(ε, δ, γ)``-random DP (Theorem 15); ``guarantee`` is its deprecated name.
    sensitivity : SensitivityResult
        The sampler's estimate ``Δ̂`` with its sample and configuration.
    mechanism : str
    noise_scale : float
    """

    value: Any
    privacy_: Any
    sensitivity: SensitivityResult
    mechanism: str
    noise_scale: float

    guarantee = privacy_alias("guarantee")


def sample_then_respond(
    f: Callable[[Any], Any],
    data: Any,
    oracle: Oracle | Any,
    *,
    epsilon: float,
    gamma: float | None = None,
    m: int | None = None,
    k: int | None = None,
    delta: float = 0.0,
    mechanism: Mechanism = "laplace",
    rng: RNGLike = None,
    candidates: Sequence[Any] | None = None,
    lattice_k: int = 10,
    dims: int = 1,
    h: int = 1,
    calibration: Literal["analytic", "classic"] = "analytic",
    sensitivity: SensitivityResult | None = None,
    n_jobs: int | None = None,
) -> Release:
    """Algorithm 2 (Sample-Then-Respond): release ``M_Δ̂(f(D))`` with ``(ε, δ, γ)``-random DP.

    Parameters
    ----------
    f : callable
        The statistic (see :func:`sample_sensitivity`). Exponential: ``f(D)`` is the score vector
        over ``candidates``. Bernstein: ``f(D)`` is a function on ``[0, 1]^dims`` (vectorised over
        points), or ``f.at_points(points)`` gives a statistic returning its values there.
    data : array-like
        The private data set; only ``f(data)`` and ``n = len(data)`` are used.
    oracle : callable or table
        The public distribution ``P`` (never the private data: that warns).
    epsilon : float
        Privacy level ε > 0.
    gamma, m, k :
        Passed to :func:`sampler_config` (give ``gamma`` or ``m``, or both).
    delta : float
        Gaussian only, in (0, 1).
    mechanism : {"laplace", "gaussian", "exponential", "bernstein"}
        Calibrated as paper §4: L1 / L2 / L∞ / L∞-on-the-lattice sensitivity.
    candidates : sequence, optional
        Exponential: the response set; the released value is ``candidates[index]``.
    lattice_k, dims, h : int
        Bernstein lattice size ``k``, dimension ``ℓ`` and iterated-Bernstein order (``h > 1``
        with ``ℓ > 1`` uses the tensor product of the 1-D iterated operators [INFERRED]).
    calibration : {"analytic", "classic"}
        Gaussian calibration, see :func:`respond`.
    sensitivity : SensitivityResult, optional
        A previous estimate to reuse (offline amortisation, paper §5.1); it must match ``n`` and
        the mechanism's norm. No new sampling is done.
    rng : None, int or Generator
    n_jobs : int, optional
        Parallel evaluation of the sampled pairs (see :func:`sample_sensitivity`).

    Returns
    -------
    Release
        The value, its :class:`~dpcore.privacy.guarantees.RandomDP` guarantee and the sampler's
        output.

    Notes
    -----
    ``Δ̂ = 0`` (a statistic that did not change on the sampled pairs) releases ``f(D)`` without
    noise, which is what the mechanism prescribes: with probability ``>= 1 - γ`` a fresh pair
    has identical outputs, so ``ε``-DP holds on it for any ``ε``. A warning says so.
    """
    from dpcore.privacy.guarantees import PrivacyLeakWarning, RandomDP

    if mechanism not in _MECHANISM_NORM:
        raise ValueError(
            "mechanism must be 'laplace', 'gaussian', 'exponential' or 'bernstein', "
            f"got {mechanism!r}"
        )
    if not (
        isinstance(epsilon, int | float | np.floating) and math.isfinite(epsilon) and epsilon > 0
    ):
        raise ValueError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if mechanism == "gaussian" and not 0.0 < delta < 1.0:
        raise ValueError(f"the Gaussian mechanism needs delta in (0, 1), got delta={delta!r}")
    if mechanism != "gaussian" and delta != 0.0:
        raise ValueError(f"delta is only used by the Gaussian mechanism; {mechanism} is pure (δ=0)")
    try:
        n = len(data)
    except TypeError:
        raise ValueError(
            "data must be a sized collection of records (array, DataFrame, list)"
        ) from None
    if n < 2:
        raise ValueError(f"the data set needs at least n=2 records, got n={n}")
    if oracle is data or (
        isinstance(oracle, np.ndarray)
        and isinstance(data, np.ndarray)
        and np.shares_memory(oracle, data)
    ):
        warnings.warn(
            "the oracle resamples the private data set itself; the sensitivity sample must be "
            "privacy-insensitive (a public or proxy distribution, paper Remark 7), so this "
            "release is not random-DP",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    target = f
    if mechanism == "bernstein":
        target = _bernstein_target(f, bernstein_lattice(lattice_k, dims))
    order = _MECHANISM_NORM[mechanism]
    gen = as_generator(rng)
    if sensitivity is None:
        config = sampler_config(m=m, gamma=gamma, k=k)
        est = sample_sensitivity(
            target, oracle, n, m=config.m, k=config.k, norm=order, rng=gen, n_jobs=n_jobs
        )
        est = SensitivityResult(
            delta_hat=est.delta_hat,
            sensitivities=est.sensitivities,
            config=config,
            n=n,
            norm=est.norm,
            path=est.path,
        )
    else:
        est = sensitivity
        if est.n != n or est.norm != _norm_name(order):
            raise ValueError(
                f"the given sensitivity estimate is for n={est.n} in the {est.norm} norm; this "
                f"release needs n={n} in the {_norm_name(order)} norm ({mechanism} mechanism)"
            )
        config = est.config
    if config.gamma >= 1.0:
        raise ValueError(f"{config} gives no random-DP confidence (gamma >= 1); raise k or m")
    try:
        value = target(data)
    except Exception as exc:
        raise ValueError(
            f"the statistic failed on the data set ({type(exc).__name__}: {exc}); nothing released"
        ) from exc
    if not np.all(np.isfinite(np.asarray(value, dtype=float))):
        raise ValueError("the statistic returned non-finite values on the data; nothing released")
    scale_of_value = float(np.max(np.abs(np.asarray(value, dtype=float)), initial=1.0))
    if est.delta_hat <= _ZERO_SENSITIVITY * scale_of_value:
        warnings.warn(
            f"the sampled sensitivity Δ̂ = {est.delta_hat:.3g} is numerically 0: f did not "
            "change on the sampled pairs, so f(D) is released essentially without noise "
            "(random DP holds because f is insensitive on 1 - gamma of pairs; nothing is "
            "promised on the others; check that the oracle covers the data's domain)",
            UserWarning,
            stacklevel=2,
        )
    released, scale = respond(
        value,
        sensitivity=est.delta_hat,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        rng=gen,
        lattice_k=lattice_k,
        dims=dims,
        h=h,
        calibration=calibration,
    )
    if mechanism == "exponential" and candidates is not None:
        released = candidates[released]
    return Release(
        value=released,
        privacy_=RandomDP(epsilon=float(epsilon), delta=float(delta), gamma=config.gamma),
        sensitivity=est,
        mechanism=mechanism,
        noise_scale=scale,
    )
