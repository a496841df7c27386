"""Algorithm 1 of the sensitivity sampler (SensitivitySampler; Rubinstein & Aldà 2017).

:func:`sample_sensitivity` estimates the sensitivity ``Δ̂ = G_(k)`` of any function of a data set
from ``m`` neighbouring pairs drawn from a public distribution ``P`` (the *oracle*:
:func:`empirical_oracle` resamples a public table), and returns a :class:`SensitivityResult`.
The pairs are evaluated one by one, in batches (``f.batch``) or through a per-record map
(``f.record_map``).

Split out of :mod:`dpcore.mechanisms.sensitivity.sampler`, which re-exports every public name.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.core.errors import SamplerError
from dpcore.core.rng import RNGLike, as_generator
from dpcore.mechanisms.sensitivity.config import SamplerConfig, rho_for_m, sampler_config
from dpcore.mechanisms.sensitivity.validation import _check_count
from dpcore.privacy.noise import public_randomness

__all__ = ["NormLike", "Oracle", "SensitivityResult", "empirical_oracle", "sample_sensitivity"]

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
