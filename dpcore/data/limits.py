"""The representable range of every input, and the per-session resource budget.

One module says which values dpcore computes with correctly, so the API, the command line and
the dashboard refuse the same inputs with the same one-line message naming the parameter
(:class:`ParameterError`), instead of a silently zeroed row, an ``OverflowError`` or a hang.

Value ranges (all inclusive; chosen so that every squared norm, sum of n rows and noise scale
of the mechanisms stays a finite float64 with room to spare):

======================  ==============================================================
data values, centre,    ``|x| ≤ 1e100`` (:data:`MAX_ABS_VALUE`); a squared norm of 2000
bounds                  such values summed over 10⁹ rows is ≈ 1e213, far below 1.8e308
radius                  ``1e-100 ≤ r ≤ 1e100`` (:data:`MIN_RADIUS`, :data:`MAX_RADIUS`)
ε                       ``1e-6 ≤ ε ≤ 1e4`` (:data:`MIN_EPSILON`, :data:`MAX_EPSILON`):
                        below 1e-6 the noise is ≥ 10⁶ radii (no signal); above 10⁴ a
                        guarantee means nothing (the importance-sampling paper's grid ends
                        at 1000) and exp(ε) terms overflow. ``inf`` only where a mechanism
                        documents "no noise".
δ                       ``0 < δ < 1`` and ``δ ≥ 1e-100`` (:data:`MIN_DELTA`); 0 where a
                        mechanism is pure DP
ρ (zCDP)                ``1e-12 ≤ ρ ≤ 1e4``
probabilities (β, …)    ``1e-100 ≤ p < 1`` (:data:`MIN_PROBABILITY`): β is divided by 2k and
                        logged; 5e-324 underflowed to 0 and divided by zero
======================  ==============================================================

Resource limits derive from one setting, the per-session memory budget
``DPCORE_SESSION_MEMORY_MB`` (default :data:`DEFAULT_SESSION_MEMORY_MB`), read at call time:
:func:`resource_limits` gives the largest matrix (rows × columns), number of clusters and sample
size one session may ask for; iteration counts have a fixed ceiling (:data:`MAX_ITER`: time, not
memory). The dashboard's widgets and the API's checks both use these numbers.
"""

from __future__ import annotations

import math
import numbers
import os
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.core.errors import DataError, ParameterError

__all__ = [
    "DEFAULT_SESSION_MEMORY_MB",
    "MAX_ABS_VALUE",
    "MAX_EPSILON",
    "MAX_ITER",
    "MAX_RADIUS",
    "MAX_RHO",
    "MIN_DELTA",
    "MIN_EPSILON",
    "MIN_PROBABILITY",
    "MIN_RADIUS",
    "MIN_RHO",
    "MEMORY_ENV",
    "ParameterError",
    "ResourceLimits",
    "check_approx_range",
    "check_bounds",
    "check_center",
    "check_count",
    "check_data_range",
    "check_decoded_size",
    "check_delta",
    "check_epsilon",
    "check_n_clusters",
    "check_n_iter",
    "check_number",
    "check_params",
    "check_probability",
    "check_radius",
    "check_rho",
    "check_sample_size",
    "check_sampler_work",
    "check_share",
    "resource_limits",
    "session_memory_bytes",
]

MAX_ABS_VALUE = 1e100
MIN_RADIUS, MAX_RADIUS = 1e-100, 1e100
MIN_EPSILON, MAX_EPSILON = 1e-6, 1e4
MIN_DELTA = 1e-100
MIN_PROBABILITY = 1e-100
MIN_RHO, MAX_RHO = 1e-12, 1e4
MAX_ITER = 1000  # the papers use 5–20 Lloyd iterations; 10⁶ ran for hours
#: The sensitivity sampler's work bound, in units of m · (n + 1000): one sampled pair costs
#: ~25 µs of overhead plus ~30 ns per record on this project's 2-core machine, so the bound
#: is about a minute (issue 26: m = 10⁸ ran for more than 90 s; γ = 1e-9 needs m ≈ 10¹⁹).
MAX_SAMPLER_WORK = 2e9

MEMORY_ENV = "DPCORE_SESSION_MEMORY_MB"
DEFAULT_SESSION_MEMORY_MB = 1024
# A prepared matrix lives in about four float64 copies at once (table, centred, clipped, one
# algorithm's working copy): the largest matrix is budget / (8 bytes × 4).
_COPIES = 4


def _fmt(x: float) -> str:
    return f"{x:g}"


def _real(name: str, value: Any) -> float:
    """``value`` as a float, or a ParameterError naming ``name`` (bool, str, None refused)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, f"{name} must be a number, got {value!r}")
    try:
        v = float(value)
    except OverflowError:  # an int beyond the float range (10**400)
        raise ParameterError(name, f"{name} is beyond the float range, got an integer of "
                                   f"{len(str(abs(int(value))))} digits") from None
    if math.isnan(v):
        raise ParameterError(name, f"{name} must be a number, got NaN")
    return v


def check_number(name: str, value: Any, lo: float, hi: float, *, allow_inf: bool = False,
                 why: str = "") -> float:
    """A real number in ``[lo, hi]`` (``+inf`` too when ``allow_inf``); returns it as float."""
    v = _real(name, value)
    if allow_inf and v == math.inf:
        return v
    if lo > 0 and not (math.isfinite(v) and v > 0):  # the usual wording for the usual mistake
        raise ParameterError(name, f"{name} must be finite and > 0, got {value!r}")
    if not lo <= v <= hi:
        raise ParameterError(name, f"{name} must be between {_fmt(lo)} and {_fmt(hi)}"
                                   f"{why}, got {value!r}")
    return v


def check_epsilon(value: Any, name: str = "epsilon", *, allow_inf: bool = False) -> float:
    """ε in ``[1e-6, 1e4]`` (or ``inf`` where a mechanism documents "no noise")."""
    return check_number(name, value, MIN_EPSILON, MAX_EPSILON, allow_inf=allow_inf,
                        why=" (below 1e-6 the noise drowns everything, above 1e4 it protects "
                            "nothing)")


def check_delta(value: Any, name: str = "delta", *, allow_zero: bool = False) -> float:
    """δ in ``[1e-100, 1)`` (or exactly 0 when ``allow_zero``: pure DP)."""
    v = _real(name, value)
    if allow_zero and v == 0.0:
        return v
    if not 0.0 < v < 1.0:
        raise ParameterError(name, f"{name} must be {'0 or ' if allow_zero else ''}in (0, 1), "
                                   f"got {value!r}")
    if v < MIN_DELTA:
        raise ParameterError(name, f"{name} must be at least 1e-100, got {value!r}")
    return v


def check_rho(value: Any, name: str = "rho") -> float:
    """zCDP ρ in ``[1e-12, 1e4]``."""
    return check_number(name, value, MIN_RHO, MAX_RHO)


def check_radius(value: Any, name: str = "radius") -> float:
    """A declared radius in ``[1e-100, 1e100]``."""
    return check_number(name, value, MIN_RADIUS, MAX_RADIUS)


def check_probability(value: Any, name: str) -> float:
    """A probability or confidence level in [1e-100, 1) (β of FindDiam, …)."""
    v = _real(name, value)
    if not 0.0 < v < 1.0:
        raise ParameterError(name, f"{name} must be in (0, 1), got {value!r}")
    if v < MIN_PROBABILITY:
        raise ParameterError(name, f"{name} must be at least {MIN_PROBABILITY:g} (smaller "
                                   f"values underflow), got {value!r}")
    return v


def check_count(name: str, value: Any, lo: int, hi: int, *, why: str = "") -> int:
    """An integer in ``[lo, hi]`` (a float with an integral value is accepted)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ParameterError(name, f"{name} must be an integer, got {value!r}")
    if not isinstance(value, numbers.Integral):
        v = float(value)
        if not (math.isfinite(v) and v.is_integer()):
            raise ParameterError(name, f"{name} must be an integer, got {value!r}")
        value = int(v)
    value = int(value)
    if value < lo:
        raise ParameterError(name, f"{name} must be an integer >= {lo}, got {value}")
    if value > hi:
        shown = value if abs(value) < 10**15 else f"an integer of {len(str(abs(value)))} digits"
        raise ParameterError(name, f"{name} must be an integer from {lo} to {hi:,}{why}, "
                                   f"got {shown}")
    return value


def check_center(value: Any, d: int | None = None, name: str = "center") -> np.ndarray:
    """A declared centre: ``d`` finite coordinates with ``|c| ≤ 1e100``."""
    if isinstance(value, str | bytes):
        raise ParameterError(name, f"{name} must be a list of numbers, got {value!r}")
    try:
        items = list(np.ravel(np.asarray(value, dtype=object)))
    except TypeError:
        raise ParameterError(name, f"{name} must be a list of numbers, got {value!r}") from None
    c = np.array([_real(f"{name}[{i}]", v) for i, v in enumerate(items)], dtype=float)
    if d is not None and c.shape != (d,):
        raise ParameterError(name, f"{name} must have {d} coordinates, got {c.size}")
    bad = np.flatnonzero(~(np.abs(c) <= MAX_ABS_VALUE))
    if bad.size:
        raise ParameterError(name, f"{name}[{bad[0]}] = {items[bad[0]]!r} is outside the "
                                   f"supported range |value| ≤ 1e100")
    return c


def check_bounds(bounds: Any, columns: list[str] | None = None,
                 name: str = "bounds") -> tuple[np.ndarray, np.ndarray]:
    """Per-column public bounds ``[(lo, hi), …]``: finite, ``|·| ≤ 1e100``, ``lo < hi``.

    Returns ``(lower, upper)`` arrays. The message names the column (``columns[j]`` when
    given, else ``bounds[j]``). Use before deriving a centre and radius from bounds
    (:func:`dpcore.app.ui_state.box_geometry`).
    """
    if isinstance(bounds, str | bytes) or not hasattr(bounds, "__len__"):
        raise ParameterError(name, f"{name} must be a list of (lower, upper) pairs, "
                                   f"got {bounds!r}"[:200])
    lo, hi = np.empty(len(bounds)), np.empty(len(bounds))
    for j, pair in enumerate(bounds):
        where = f"bound of column {columns[j]!r}" if columns and j < len(columns) else (
            f"bound {j + 1}")
        if isinstance(pair, str | bytes) or not hasattr(pair, "__len__") or len(pair) != 2:
            raise ParameterError(name, f"{where}: give a (lower, upper) pair, got {pair!r}"[:200])
        lo[j], hi[j] = (check_number(f"{side} {where}", v, -MAX_ABS_VALUE, MAX_ABS_VALUE)
                        for side, v in zip(("lower", "upper"), pair, strict=True))
        if not lo[j] < hi[j]:
            raise ParameterError(name, f"{where}: lower must be < upper, got {list(pair)!r}")
    return lo, hi


def check_data_range(X: np.ndarray, columns: list[str] | None = None) -> None:
    """Refuse (:class:`~dpcore.core.errors.DataError`) values with ``|x| > 1e100`` or non-finite
    ones.

    The message names the column and the data row (1-based) of the first offending value.
    """
    A = np.asarray(X)
    if A.ndim != 2 or A.size == 0:
        return
    lo, hi = A.min(), A.max()  # two passes, no (n, d) temporaries; NaN propagates into both
    if -MAX_ABS_VALUE <= lo and hi <= MAX_ABS_VALUE:
        return
    bad = ~(np.abs(A) <= MAX_ABS_VALUE)  # NaN compares False: caught here too
    if not bad.any():
        return
    i, j = np.argwhere(bad)[0]
    col = repr(columns[j]) if columns is not None and j < len(columns) else f"{j + 1}"
    raise DataError(
        f"column {col} has {int(bad[:, j].sum())} value(s) outside the supported range "
        f"|value| ≤ 1e100 (first in data row {i + 1}: {float(A[i, j]):g}); rescale the column "
        "(e.g. to other units) before using it"
    )


# --------------------------------------------------------------------------------------------
# Resource budget
# --------------------------------------------------------------------------------------------


def session_memory_bytes() -> int:
    """The per-session memory budget in bytes, from ``DPCORE_SESSION_MEMORY_MB`` (MiB)."""
    raw = os.environ.get(MEMORY_ENV, "").strip()
    if not raw:
        return DEFAULT_SESSION_MEMORY_MB * 2**20
    try:
        mb = float(raw)
    except ValueError:
        raise ParameterError(MEMORY_ENV, f"{MEMORY_ENV} must be a number of MiB, "
                                         f"got {raw!r}") from None
    if not 16 <= mb <= 2**24:
        raise ParameterError(MEMORY_ENV, f"{MEMORY_ENV} must be between 16 and 16777216 MiB, "
                                         f"got {raw!r}")
    return int(mb * 2**20)


@dataclass(frozen=True)
class ResourceLimits:
    """What one session may ask for, derived from the memory budget.

    Attributes
    ----------
    memory_bytes : int
        The budget itself.
    max_cells : int
        Largest rows × columns of a prepared matrix (float64, ~4 copies alive at once).
    max_clusters : int
        Largest ``n_clusters`` for ``d`` columns: the (k, d) centres of every iteration (a fit
        keeps its history), their noise and sums stay under 1/4 of the budget; at most 100 000.
    max_sample_size : int
        Largest expected sample size for ``d`` columns (a weighted (m, d) copy).
    max_iter : int
        :data:`MAX_ITER`.
    """

    memory_bytes: int
    d: int

    @property
    def max_cells(self) -> int:
        return self.memory_bytes // (8 * _COPIES)

    def max_rows(self, d: int | None = None) -> int:
        """Largest number of rows of a (rows, d) matrix (generated data, samples)."""
        return max(1, self.max_cells // max(1, int(d if d is not None else self.d)))

    @property
    def max_clusters(self) -> int:
        per_cluster = 8 * (32 * self.d + 64)  # ~20 iterations of history + working copies
        return int(min(100_000, max(1, self.memory_bytes // 4 // per_cluster)))

    @property
    def max_sample_size(self) -> int:
        return self.max_rows(self.d + 1)  # rows plus their weight

    @property
    def max_iter(self) -> int:
        return MAX_ITER


def check_decoded_size(rows: int, columns: int, what: str = "the table") -> None:
    """Refuse (:class:`~dpcore.core.errors.DataError`) a table whose decoded float64 size,
    rows × columns × 8 bytes, exceeds the session memory budget: checked *before* the table is
    materialised (from Parquet metadata, or a CSV's line count), so a 1.4 MB Parquet file that
    decodes to 40 M rows never reaches memory (issue 26, case 1)."""
    size = int(rows) * int(columns) * 8
    budget = session_memory_bytes()
    if size > budget:
        raise DataError(
            f"{what} decodes to {int(rows):,} rows × {int(columns):,} columns "
            f"(≈ {size / 2**20:,.0f} MiB as numbers), over this session's memory budget of "
            f"{budget / 2**20:,.0f} MiB ({MEMORY_ENV}); use a sample of it, or the command line "
            "/ Dask path for large data"
        )


def resource_limits(d: int = 2) -> ResourceLimits:
    """The :class:`ResourceLimits` of the current budget for data with ``d`` columns."""
    return ResourceLimits(session_memory_bytes(), max(1, int(d)))


def check_n_clusters(value: Any, *, d: int = 2, n: int | None = None,
                     name: str = "n_clusters") -> int:
    """k in ``[1, min(n, max_clusters(d))]``; the budget's share is named in the message."""
    lim = resource_limits(d)
    hi = lim.max_clusters if n is None else max(1, min(int(n), lim.max_clusters))
    why = (f" (the data has {n} rows)" if n is not None and hi == n
           else f" for d = {d} within the session memory budget ({MEMORY_ENV})")
    return check_count(name, value, 1, hi, why=why)


def check_approx_range(value: Any, name: str = "approx") -> float:
    """Max-cover's approximation constant in ``[0.01, 0.99]``: the grids grow like
    (1/approx)^d', so 0.001 already runs for minutes on 100 points (issue 14, runaway work)."""
    return check_number(name, value, 0.01, 0.99,
                        why=" (the approximation constant, not the privacy ε; smaller values "
                            "make the grids explode)")


def check_n_iter(value: Any, name: str = "n_iter") -> int:
    """An iteration count in ``[1, 1000]``."""
    return check_count(name, value, 1, MAX_ITER)


def check_share(value: Any, name: str = "share") -> float:
    """A share of a budget, strictly between 0 and 1 (``count_share``, ``seed_share``, …)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0.0 < value < 1.0:
        raise ParameterError(name, f"{name} must be in (0, 1), got {value!r}"[:300])
    if value < MIN_PROBABILITY:  # 5e-324 of a budget underflowed to 0 (kv18's ρ, fuzz)
        raise ParameterError(name, f"{name} must be at least {MIN_PROBABILITY:g} (a smaller "
                                   f"share of the budget underflows to 0), got {value!r}")
    return float(value)


def check_sample_size(value: Any, *, d: int = 2, n: int | None = None,
                      name: str = "sample_size") -> float:
    """An expected sample size m in ``(0, hi]`` (m may be fractional): ``hi`` is n when the
    data are known (a sample of in-memory rows), else the budget's ``max_sample_size(d)``."""
    v = _real(name, value)
    if n is not None:
        if not 0 < v <= n:
            raise ParameterError(name, f"{name} must be > 0 and at most the n = {n} rows, "
                                       f"got {value!r}")
        return v
    lim = resource_limits(d).max_sample_size
    if not 0 < v <= lim:
        raise ParameterError(name, f"{name} must be > 0 and at most {lim:,} for d = {d} within "
                                   f"the session memory budget ({MEMORY_ENV}), got {value!r}")
    return v


def check_sampler_work(m: int, n: int, *, from_gamma: float | None = None) -> int:
    """The sensitivity sampler's m pairs of n records within :data:`MAX_SAMPLER_WORK`.

    ``from_gamma``: the γ that m was derived from (the message then names γ, the parameter the
    user gave)."""
    work = float(m) * (float(n) + 1000.0)
    if work <= MAX_SAMPLER_WORK:
        return int(m)
    most = int(MAX_SAMPLER_WORK // (float(n) + 1000.0))
    if from_gamma is not None:
        raise ParameterError("gamma", f"gamma={from_gamma!r} needs m = {int(m):,} sampled pairs "
                                      f"of {n:,} records, more than the work limit of {most:,} "
                                      "pairs at this n; use a larger gamma, or give m")
    raise ParameterError("m", f"m must be at most {most:,} pairs for n = {n:,} records (about "
                              f"a minute of work), got {int(m):,}")


# Parameters checked by name wherever they appear (run configurations, CLI flags, estimators).
_BY_NAME = {
    "epsilon": lambda v, d: check_epsilon(v, allow_inf=True),
    "stat_epsilon": lambda v, d: check_epsilon(v, "stat_epsilon"),
    "delta": lambda v, d: check_delta(v, allow_zero=True),
    "rho": lambda v, d: check_rho(v),
    "radius": lambda v, d: check_radius(v),
    "lower": lambda v, d: check_number("lower", v, 0.0, MAX_RADIUS),
    "upper": lambda v, d: check_number("upper", v, 0.0, MAX_RADIUS),
    "n_clusters": lambda v, d: check_n_clusters(v, d=d),
    # "auto": the estimators that take n_iter choose T from the budget (DPLloyd, DPKMeans)
    "n_iter": lambda v, d: v if isinstance(v, str) and v == "auto" else check_n_iter(v),
    "sample_size": lambda v, d: check_sample_size(v, d=d),
    "beta": lambda v, d: check_probability(v, "beta"),
    "quantile": lambda v, d: check_number("quantile", v, 0.0, 1.0),
    "confidence": lambda v, d: check_probability(v, "confidence"),
    "lam": lambda v, d: check_number("lam", v, 0.0, 1.0),
    "m": lambda v, d: check_count("m", v, 1, resource_limits(d).max_rows(2 * d)),
    "t": lambda v, d: check_count("t", v, 1, resource_limits(d).max_rows(d)),
}


def check_params(params: dict[str, Any] | None = None, *, d: int = 2, required: bool = False,
                 **kwargs: Any) -> None:
    """Check every parameter whose name this module knows (ε, δ, ρ, radius, k, n_iter, sample
    size, β, t, quantile, confidence, λ, m).

    ``None`` values are skipped (a parameter left at "not given") unless ``required``; unknown
    names are left to the mechanism. Used by :mod:`dpcore.release.runconfig` (hence the CLI) on
    every mechanism's parameters by name; the estimators' ``fit`` and the declared release
    functions check their own declaration instead (``_parameter_constraints``,
    :mod:`dpcore.data.params`), which uses these same functions. ``n_iter`` accepts ``"auto"`` as
    the estimators that take it do.
    """
    for key, value in {**(params or {}), **kwargs}.items():
        check = _BY_NAME.get(key)
        if check is not None and (value is not None or required):
            check(value, d)
