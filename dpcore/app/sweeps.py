"""Run several clustering algorithms on the same data and budget, and privacy–utility sweeps.

* :func:`clustering_algorithms` — the algorithms that import here, each a
  :class:`ClusteringAlgorithm` whose keyword parameters are exactly those of the estimator, so a
  run is also a :mod:`dpcore.release.runconfig` configuration (same ``params``, same ``seed``, same
  output).
* :func:`fit_algorithm` — one fit with timing, warnings and failures captured.
* :func:`utility_sweep` — a tidy table ``(algorithm, epsilon, repetition, seed, value, seconds)``
  over a grid of ε and repetitions, reporting progress through a callback (the dashboard's
  progress bar; raising from it cancels).
* :func:`summarize` — median and quartiles per (algorithm, ε).
* :func:`epsilon_for_target` — "which ε gives me error ≤ X?", read off the curve.
"""

from __future__ import annotations

import importlib
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from dpcore.app.evaluate import normalized_kmeans_cost
from dpcore.release.registry import Entry, PublicInputs, Variant, importable, variants

__all__ = [
    "ClusteringAlgorithm",
    "FitOutcome",
    "TargetAnswer",
    "centred_box",
    "clustering_algorithms",
    "comparison_table",
    "epsilon_for_target",
    "fit_algorithm",
    "log_grid",
    "reference_algorithm",
    "summarize",
    "unavailable_algorithms",
    "utility_sweep",
]

Params = dict[str, Any]


@dataclass(frozen=True)
class ClusteringAlgorithm:
    """A clustering algorithm the dashboard can run.

    Attributes
    ----------
    name : str
        Display name.
    mechanism : str or None
        Key of its :mod:`dpcore.release.registry` row (None: not a DP mechanism).
    target : str
        ``"module:Class"`` of the estimator.
    params : callable
        ``(k, epsilon, delta, radius, n, bounds=None) -> keyword parameters`` of the estimator
        (``rng`` aside); ``bounds`` as in :class:`~dpcore.release.registry.PublicInputs`.
        ``n`` must be public: explore mode passes the table's size; release mode (the
        :class:`dpcore.release.door.ReleaseDoor`) the declared or privately estimated n.
    description : str
    """

    name: str
    mechanism: str | None
    target: str
    params: Callable[..., Params]
    description: str = ""

    @property
    def private(self) -> bool:
        return self.mechanism is not None

    def estimator(self) -> type:
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)


def _algorithm(e: Entry, v: Variant) -> ClusteringAlgorithm:
    def params(k, eps, delta, r, n, bounds=None) -> Params:
        # bounds: the declared box (centred) when every column has public bounds, else None
        return v.params(PublicInputs(k, eps, delta, r, n, bounds))

    return ClusteringAlgorithm(v.label, None if e.guarantee == "none" else e.key, e.target,
                               params, v.description)


#: Every clustering variant of the registry (DP ones in table order, then the reference).
_ALGORITHMS: list[ClusteringAlgorithm] = [_algorithm(e, v) for e, v in variants("clustering")]
_ROWS: dict[str, Entry] = {v.label: e for e, v in variants("clustering")}


def _importable(alg: ClusteringAlgorithm) -> str | None:
    return importable(_ROWS[alg.name])


def centred_box(columns: Sequence[str], bounds: Mapping[str, Sequence[float]],
                center: Sequence[float] | None) -> tuple[list[float], list[float]] | None:
    """The declared box of the columns in use, in the centred coordinates the mechanisms see
    (``bounds``: column -> public (lower, upper), e.g. a bundled sample's), or None when some
    column has no public bounds. Never reads the data."""
    if not columns or any(c not in bounds for c in columns):
        return None
    c = [0.0] * len(columns) if center is None else [float(v) for v in center]
    lo = [float(bounds[col][0]) - c[j] for j, col in enumerate(columns)]
    hi = [float(bounds[col][1]) - c[j] for j, col in enumerate(columns)]
    return lo, hi


def clustering_algorithms() -> dict[str, ClusteringAlgorithm]:
    """The algorithms that import here, by display name (order: DP ones, then the reference)."""
    return {a.name: a for a in _ALGORITHMS if _importable(a) is None}


def reference_algorithm() -> ClusteringAlgorithm:
    """The non-private reference (scikit-learn k-means) that cost ratios divide by."""
    return next(a for a in _ALGORITHMS if not a.private)


def unavailable_algorithms() -> dict[str, str]:
    """Display name -> why it cannot run here (e.g. diffprivlib with scikit-learn ≥ 1.8)."""
    out = {}
    for a in _ALGORITHMS:
        reason = _importable(a)
        if reason is not None:
            out[a.name] = reason
    return out


@dataclass
class FitOutcome:
    """One fit: released centres (None on failure), guarantee, wall time, warnings, error."""

    algorithm: str
    centers: np.ndarray | None
    guarantee: Any
    seconds: float
    params: Params
    warnings: list[str] = field(default_factory=list)
    error: str | None = None
    note: str | None = None


def fit_algorithm(
    alg: ClusteringAlgorithm,
    X: np.ndarray,
    *,
    k: int,
    epsilon: float,
    delta: float,
    radius: float,
    seed: int,
    bounds=None,
) -> FitOutcome:
    """Fit ``alg`` on ``X`` with ``rng=seed``; a ValueError becomes ``error`` (nothing released).

    For DP algorithms the call is ``Estimator(**params, rng=seed).fit(X)``, exactly what
    :func:`dpcore.release.runconfig.run_config` does for ``make_config(alg.mechanism, params, ...,
    seed)``. ``bounds``: the declared box ``(lo, hi)`` in X's (centred) coordinates when every
    column has public bounds (:attr:`PublicInputs.bounds`), else None.
    """
    params = alg.params(int(k), float(epsilon), float(delta), float(radius), int(X.shape[0]),
                        bounds)
    cls = alg.estimator()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        try:
            if alg.private:
                est = cls(**params, rng=int(seed)).fit(X)
            else:
                est = cls(**params, random_state=int(seed) % 2**32).fit(X)
        except ValueError as exc:
            return FitOutcome(alg.name, None, None, time.perf_counter() - t0, params,
                              [str(w.message) for w in caught], error=str(exc))
        seconds = time.perf_counter() - t0
    centers = getattr(est, "cluster_centers_", None)
    note = None
    if getattr(est, "failed_", False):
        note = f"FriendlyCore failed ({getattr(est, 'failure_reason_', '')})"
        if getattr(est, "used_fallback_", False):
            note += "; centres from the DP-Lloyd fallback"
    guarantee = getattr(est, "privacy_", None) if alg.private else None
    return FitOutcome(alg.name, None if centers is None else np.asarray(centers, float),
                      guarantee, seconds, params, sorted({str(w.message) for w in caught}),
                      note=note)


def log_grid(lo: float, hi: float, num: int) -> np.ndarray:
    """``num`` log-spaced values from ``lo`` to ``hi`` (rounded to 3 significant digits)."""
    if not (0 < lo < hi) or num < 2:
        raise ValueError(f"need 0 < lo < hi and num ≥ 2, got lo={lo!r}, hi={hi!r}, num={num!r}")
    return np.array([float(f"{v:.3g}") for v in np.geomspace(lo, hi, int(num))])


def comparison_table(outcomes: Sequence[FitOutcome], X: np.ndarray,
                     explain: Callable[[str], str] = str) -> pd.DataFrame:
    """The Clustering page's comparison of fits on the same data: per algorithm the privacy
    spent, the normalised k-means cost, its ratio to the non-private reference, the time and a
    note (``explain`` turns an error into plain words). Reads X: explore mode only.
    """
    ref_name = reference_algorithm().name
    ref = next((o for o in outcomes if o.algorithm == ref_name and o.centers is not None), None)
    ref_cost = normalized_kmeans_cost(X, ref.centers) if ref is not None else None
    private = {a.name: a.private for a in _ALGORITHMS}
    rows = []
    for o in outcomes:
        cost = normalized_kmeans_cost(X, o.centers) if o.centers is not None else np.nan
        if o.guarantee is not None:
            spent = str(o.guarantee)
        elif private.get(o.algorithm, True):
            spent = "nothing released"
        else:
            spent = "not private"
        rows.append({"algorithm": o.algorithm, "privacy spent": spent, "normalised cost": cost,
                     "× non-private": cost / ref_cost if ref_cost else np.nan,
                     "seconds": o.seconds,
                     "note": explain(o.error) if o.error else (o.note or "")})
    return pd.DataFrame(rows)


def utility_sweep(
    X: np.ndarray,
    algorithms: Sequence[ClusteringAlgorithm],
    epsilons: Sequence[float],
    *,
    k: int,
    delta: float,
    radius: float,
    repetitions: int = 5,
    seed: int = 0,
    metric: Callable[[np.ndarray, np.ndarray], float] = normalized_kmeans_cost,
    evaluate_on: np.ndarray | None = None,
    progress: Callable[[int, int, dict], None] | None = None,
    bounds=None,
) -> pd.DataFrame:
    """Privacy–utility table: each algorithm × ε × repetition, one row each.

    Parameters
    ----------
    X : (n, d) array
        Data the algorithms are fitted on (release mode: a public proxy).
    metric : callable
        ``metric(data, centers) -> float``; default the normalised k-means cost (cost / n).
    evaluate_on : array, optional
        Data the metric is computed on (default ``X``).
    progress : callable, optional
        Called after each fit with ``(done, total, row)``. An exception raised in it stops the
        sweep (the rows so far were already reported through it).

    Returns
    -------
    DataFrame with columns ``algorithm, epsilon, repetition, seed, value, seconds, error``.
    Each fit's seed is derived from ``(seed, algorithm index, ε index, repetition)`` with
    :class:`numpy.random.SeedSequence`, so rows are independent and reproducible.
    """
    E = np.asarray(X if evaluate_on is None else evaluate_on, dtype=float)
    total = len(algorithms) * len(epsilons) * int(repetitions)
    rows: list[dict] = []
    done = 0
    for a, alg in enumerate(algorithms):
        for e, eps in enumerate(epsilons):
            for r in range(int(repetitions)):
                s = int(np.random.SeedSequence([int(seed), a, e, r]).generate_state(1)[0])
                out = fit_algorithm(alg, X, k=k, epsilon=eps, delta=delta, radius=radius, seed=s,
                                    bounds=bounds)
                value = (metric(E, out.centers) if out.centers is not None else math.nan)
                row = {"algorithm": alg.name, "epsilon": float(eps), "repetition": r, "seed": s,
                       "value": float(value), "seconds": out.seconds, "error": out.error}
                rows.append(row)
                done += 1
                if progress is not None:
                    progress(done, total, row)
    return pd.DataFrame(rows, columns=["algorithm", "epsilon", "repetition", "seed", "value",
                                       "seconds", "error"])


def summarize(table: pd.DataFrame) -> pd.DataFrame:
    """Median, quartiles and count of ``value`` per (algorithm, ε), failed fits excluded."""
    ok = table.dropna(subset=["value"])
    g = ok.groupby(["algorithm", "epsilon"], sort=False)["value"]
    out = pd.DataFrame({
        "median": g.median(), "q25": g.quantile(0.25), "q75": g.quantile(0.75), "runs": g.size(),
    }).reset_index()
    return out.sort_values(["algorithm", "epsilon"], kind="stable").reset_index(drop=True)


@dataclass(frozen=True)
class TargetAnswer:
    """Answer to "which ε gives error ≤ target?" for one algorithm and one statistic."""

    algorithm: str
    statistic: str
    target: float
    epsilon: float | None
    status: str  # "reached", "at smallest ε", "not reached"

    def sentence(self) -> str:
        what = {"median": "the median run", "q75": "3 runs out of 4"}.get(self.statistic,
                                                                          self.statistic)
        if self.status == "not reached":
            return (f"{self.algorithm}: no ε in the grid brings {what} to ≤ {self.target:.4g}; "
                    "try a larger ε range, more data or a smaller k.")
        if self.status == "at smallest ε":
            return (f"{self.algorithm}: already the smallest ε tried ({self.epsilon:.3g}) gives "
                    f"{what} an error ≤ {self.target:.4g}.")
        return (f"{self.algorithm}: ε ≈ {self.epsilon:.3g} gives {what} an error ≤ "
                f"{self.target:.4g}.")


def epsilon_for_target(
    summary: pd.DataFrame, algorithm: str, target: float, statistic: str = "median"
) -> TargetAnswer:
    """Smallest ε at which ``statistic`` of the error falls to ``target`` (log-ε interpolation).

    Scans the grid from small to large ε for the first point at or below the target and
    interpolates linearly in log ε between it and the previous grid point.
    """
    g = summary[summary["algorithm"] == algorithm].sort_values("epsilon")
    eps = g["epsilon"].to_numpy(float)
    val = g[statistic].to_numpy(float)
    below = np.flatnonzero(val <= target)
    if below.size == 0:
        return TargetAnswer(algorithm, statistic, target, None, "not reached")
    i = int(below[0])
    if i == 0:
        return TargetAnswer(algorithm, statistic, target, float(eps[0]), "at smallest ε")
    e0, e1, v0, v1 = math.log(eps[i - 1]), math.log(eps[i]), val[i - 1], val[i]
    frac = 1.0 if v0 == v1 else (v0 - target) / (v0 - v1)
    return TargetAnswer(algorithm, statistic, target, float(math.exp(e0 + frac * (e1 - e0))),
                        "reached")
