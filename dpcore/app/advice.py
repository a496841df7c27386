"""Settings that work: feasible defaults from public inputs, and plain-words verdicts.

The dashboard asks these functions what an algorithm needs *before* running it, so that a page at
its defaults produces a result, and so that where the data cannot support an algorithm at the
chosen budget it can say so in plain words and offer the nearest settings that work.

Everything here is computed from **public inputs only** (ε, δ, the declared or public row count
n, k, d, the declared radius): the advice is the same for two neighbouring data sets with the
same declared n, so showing it (or applying it) leaks nothing. The one exception is
:func:`noise_verdict`, an explore-mode check that reads the data (its docstring says so).

FriendlyCore's size requirements come from its public API
(:func:`dpcore.mechanisms.friendlycore.required_size` and the budget split of
:class:`~dpcore.mechanisms.friendlycore.FriendlyCoreKMeans`); ``tests/test_advice.py`` checks that
the advised settings are accepted by the mechanisms themselves, so a change there is caught.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpcore.mechanisms.friendlycore.planning import KMeansPlan as FriendlyKMeansPlan
from dpcore.release.registry import variants

__all__ = [
    "FriendlyKMeansPlan",
    "FriendlyMeanPlan",
    "Plain",
    "estimate_fit_seconds",
    "friendly_kmeans_plan",
    "friendly_mean_min_rows",
    "friendly_mean_plan",
    "kmeans_t_needed",
    "noise_verdict",
    "plain_error",
    "plain_warning",
]

#: ε values the dashboard offers (the sidebar's grid); advice picks the nearest one that works.
EPSILON_GRID: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0,
                                   10.0, 20.0)
#: Exact friend counting is quadratic in n: above this many rows the page uses a sample.
MAX_EXACT_ROWS = 40_000


def _rho(epsilon: float, delta: float) -> float:
    from dpcore.mechanisms.friendlycore.averaging import rho_for_epsilon

    # friendly_mean / FriendlyCoreKMeans spend δ/2 on the zCDP → (ε, δ) conversion
    return rho_for_epsilon(epsilon, delta / 2.0)


def friendly_mean_min_rows(epsilon: float, delta: float) -> int:
    """Fewest rows for which FC_Avg's zCDP filter can keep a core (FriendlyCore gets 0.1 ρ and
    a quarter of δ, :func:`dpcore.mechanisms.friendlycore.friendly_mean` with a known radius)."""
    from dpcore.mechanisms.friendlycore import required_size

    return int(required_size(0.1 * _rho(epsilon, delta), delta / 4.0))


def _smallest_eps(ok, grid: Sequence[float]) -> float | None:
    return next((float(e) for e in sorted(grid) if ok(float(e))), None)


@dataclass(frozen=True)
class FriendlyMeanPlan:
    """Feasible FriendlyCore-mean settings.

    Attributes
    ----------
    feasible : bool
        The zCDP filter can keep a core with ``rows`` rows at ε.
    rows : int
        Rows to use (all, up to :data:`MAX_EXACT_ROWS`).
    friend_radius : float
        Public friend radius r: the diameter 2·radius of the declared ball, so every pair of rows
        inside it are friends and the core can only drop rows the filter's noise removes (a
        smaller r shows outliers being dropped but needs a friendly data set).
    rows_needed : int
        Fewest rows the filter needs at this ε, δ.
    epsilon_needed : float or None
        Smallest ε of the grid at which ``rows`` suffice (None: none does).
    message : str
        Plain-words summary for the page ("" when feasible).
    """

    feasible: bool
    rows: int
    friend_radius: float
    rows_needed: int
    epsilon_needed: float | None
    message: str


def friendly_mean_plan(n: int, *, epsilon: float, delta: float, radius: float,
                       grid: Sequence[float] = EPSILON_GRID) -> FriendlyMeanPlan:
    """What FriendlyCore's private mean needs with ``n`` public rows at (ε, δ)."""
    rows = int(min(n, MAX_EXACT_ROWS))
    need = friendly_mean_min_rows(epsilon, delta)
    feasible = rows >= need
    eps_needed = _smallest_eps(lambda e: friendly_mean_min_rows(e, delta) <= rows, grid)
    msg = ""
    if not feasible:
        msg = (f"At ε = {epsilon:g}, FriendlyCore needs at least {need:,} rows to keep any core "
               f"(its noisy threshold grows as ε shrinks); {rows:,} are available. ")
        msg += (f"With {rows:,} rows it works from ε = {eps_needed:g}."
                if eps_needed is not None else
                "No privacy level offered here makes it work with so few rows: use a larger "
                "data set.")
    return FriendlyMeanPlan(feasible, rows, 2.0 * float(radius), need, eps_needed, msg)


def kmeans_t_needed(k: int, epsilon: float, delta: float, *, fallback_share: float = 0.01) -> int:
    """Fewest parts t for which FriendlyCore k-means' tuple filter can keep tuples (the
    estimator's own rule, :func:`dpcore.mechanisms.friendlycore.planning.parts_needed`)."""
    from dpcore.mechanisms.friendlycore.planning import fc_budgets, parts_needed

    return parts_needed(fc_budgets(epsilon=epsilon, delta=delta, fallback_share=fallback_share))


def friendly_kmeans_plan(n: int, k: int, *, epsilon: float, delta: float,
                         grid: Sequence[float] = EPSILON_GRID) -> FriendlyKMeansPlan:
    """What FriendlyCore k-means needs with ``n`` public rows, k clusters, at (ε, δ): the
    estimator's own part size and refusal rule
    (:func:`dpcore.mechanisms.friendlycore.planning.kmeans_plan`)."""
    from dpcore.mechanisms.friendlycore.planning import kmeans_plan

    return kmeans_plan(n, k, epsilon=epsilon, delta=delta, grid=grid)


# ------------------------------------------------------------------------------------------------
# Plain words
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plain:
    """A message for the page (plain words) and the technical original (for a details box)."""

    text: str
    details: str


_RULES: list[tuple[str, str]] = [
    (r"too small|too few|lose most points",
     "There are too few rows for this algorithm at this privacy level: its noise would remove "
     "every point. Use more rows, a larger ε, or a smaller k."),
    (r"tuple core is empty|do not match across parts",
     "The parts of the data disagreed about where the clusters are, so nothing could be "
     "released privately. It works on well-separated clusters with many rows per part."),
    (r"returned ⊥|aborted|noisy size",
     "Too few rows survived the privacy filter to release an estimate."),
    (r"sample_size.*(exceed|feasible)|largest feasible sample",
     "The expected sample is too large for this small table (some rows would need a sampling "
     "probability above 1): choose a smaller sample size."),
    (r"n_clusters .* larger than|need n >= t \* k",
     "k is too large for this many rows: use a smaller k or fewer parts."),
    (r"radius",
     "The declared radius (public bound on the rows) does not suit this algorithm."),
    (r"epsilon|ε", "This privacy level is outside what the algorithm supports."),
]


def plain_error(message: str) -> Plain:
    """Translate a mechanism's error into plain words; the original goes to ``details``.

    Never names a Python argument, a spec section or a theorem: those stay in ``details``.
    """
    text = str(message)
    for pattern, plain in _RULES:
        if re.search(pattern, text, flags=re.IGNORECASE):
            return Plain(plain, text)
    return Plain("The algorithm could not run with these settings.", text)


_WARNING_RULES: list[tuple[str, str]] = [
    (r"off the data|from the data|read off|not private|public; ",
     "Uses numbers read off the data (such as the row count) that the method treats as public: "
     "fine for exploring; a real release should declare them instead."),
    (r"clipped|outside the (ball|radius)|beyond the radius",
     "Some rows lay outside the declared radius and were pulled onto it (this keeps the "
     "guarantee but biases the result towards the centre)."),
    (r"did not converge|converge", "The non-private step did not fully converge."),
]


def plain_warning(message: str) -> Plain:
    """A warning in plain words (the original goes to ``details``), like :func:`plain_error`."""
    text = str(message)
    for pattern, plain in _WARNING_RULES:
        if re.search(pattern, text, flags=re.IGNORECASE):
            return Plain(plain, text)
    return Plain("The algorithm raised a technical note (see the details).", text)


# ------------------------------------------------------------------------------------------------
# Noise-dominated results (explore mode: reads the data)
# ------------------------------------------------------------------------------------------------


def noise_verdict(X: np.ndarray, centers: np.ndarray | None, *,
                  init: np.ndarray | None = None, tol: float = 1e-9) -> str | None:
    """Flag, in words, a clustering result dominated by noise; None when it looks useful.

    Two checks: the centres never moved from their (random) initial positions, and the k-means
    cost is no better than one centre at the data's mean. Reads the data: explore mode only.

    Parameters
    ----------
    X : (n, d) array
    centers : (k, d) array or None
    init : (k, d) array, optional
        The algorithm's initial centres (e.g. ``DPLloyd.history_[0]``).
    """
    if centers is None:
        return None
    X = np.asarray(X, dtype=float)
    C = np.atleast_2d(np.asarray(centers, dtype=float))
    if init is not None:
        I0 = np.atleast_2d(np.asarray(init, dtype=float))
        if I0.shape == C.shape:
            scale = max(float(np.abs(X).max()) if X.size else 1.0, 1e-12)
            if float(np.abs(C - I0).max()) <= tol * scale:
                return ("The centres never moved from their random starting points: the noise "
                        "drowned every update. Use a larger ε, a smaller k or more rows.")
    from dpcore.app.evaluate import normalized_kmeans_cost

    cost = normalized_kmeans_cost(X, C)
    one = normalized_kmeans_cost(X, X.mean(axis=0, keepdims=True))
    if math.isfinite(cost) and cost >= one * (1 - 1e-9):
        return ("These centres fit the data no better than a single centre at the mean: the "
                "result is dominated by noise. Use a larger ε, a smaller k or more rows.")
    return None


# ------------------------------------------------------------------------------------------------
# Cost estimates (decide whether a page runs at once or behind a Run button)
# ------------------------------------------------------------------------------------------------

def estimate_fit_seconds(algorithm: str, n: int, d: int, k: int) -> float:
    """Rough wall time of one fit of ``algorithm`` (a registry variant's label) on n rows, d
    columns, k clusters: the row's cost model (:class:`dpcore.release.registry.Variant`)."""
    for _, v in variants():
        if v.label == algorithm:
            return v.seconds(n, d, k)
    return 0.02 + 1e-5 * float(n) * max(int(k), 1) * max(int(d), 1)  # not a registry variant
