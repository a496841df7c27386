"""Text alternatives of the dashboard's charts: what each shows, in numbers (issue 27.6).

A chart alone excludes a reader who cannot see it (screen reader, projector washed out); each
function here returns the one or two sentences a page prints under its chart. They read only what
the chart draws (released outputs, or explore-mode data the chart already shows), so a summary
never discloses more than its chart.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["amplification_summary", "centres_summary", "cluster_sizes", "friends_summary",
           "game_summary", "histogram_summary", "kept_removed_summary", "laplace_pair_summary",
           "means_summary", "points_summary", "tuples_summary", "utility_summary"]


def _point(c: np.ndarray, digits: int = 3) -> str:
    return "(" + ", ".join(f"{v:.{digits}g}" for v in c[:3]) + (", …" if c.size > 3 else "") + ")"


def cluster_sizes(labels: np.ndarray, k: int) -> np.ndarray:
    """Number of points per cluster label 0..k−1."""
    return np.bincount(np.asarray(labels, dtype=np.intp), minlength=int(k))[: int(k)]


def centres_summary(centres: Mapping[str, np.ndarray], labels: np.ndarray | None = None,
                    coloured_by: str | None = None, *, clamped: bool = False,
                    over: str = "the data (faint points)") -> str:
    """One line per algorithm: how many centres and where; the cluster sizes of the colouring.

    Parameters
    ----------
    centres : mapping
        Algorithm -> (k, d) centres in the table's units (as drawn and as in the CSV).
    labels : (n,) int array, optional
        Nearest centre of ``coloured_by`` for each drawn point (explore mode).
    clamped : bool
        Whether centres were moved into the declared box (said once).
    over : str
        What the centres are drawn over ("" in release mode: DP outputs only, no data).
    """
    if not centres:
        return "Chart: no centres were released."
    lines = []
    for name, C in centres.items():
        C = np.atleast_2d(C)
        pts = "; ".join(_point(c) for c in C[:5]) + ("; …" if len(C) > 5 else "")
        lines.append(f"{name} at {pts}." if len(C) == 1 and "mean" in name.lower()
                     else f"{name}: {len(C)} centre(s) at {pts}.")
    text = (f"Chart: {over} with " if over else "Chart: ") + " ".join(lines)
    if labels is not None and coloured_by is not None:
        k = len(np.atleast_2d(centres[coloured_by]))
        sizes = cluster_sizes(labels, k)
        text += (f" Points are coloured by their nearest {coloured_by} centre; cluster sizes "
                 + ", ".join(f"{s:,}" for s in sizes) + ".")
    if clamped:
        text += " Centres outside the declared bounds are moved to their edge, here and in the CSV."
    return text


def kept_removed_summary(kept: int, total: int, what: str = "points") -> str:
    """"Chart: 290 of 310 points kept (93.5 %), 20 removed." """
    share = 100.0 * kept / total if total else 0.0
    return f"Chart: {kept:,} of {total:,} {what} kept ({share:.1f} %), {total - kept:,} removed."


def game_summary(rounds: int, correct: int, bound: float, low: float, high: float) -> str:
    """The privacy game's chart in words: running guess rate against the bound and its band."""
    if rounds == 0:
        return "Chart: no round played yet."
    rate = correct / rounds
    where = ("inside" if low <= rate <= high else "above" if rate > high else "below")
    return (f"Chart: after {rounds} round(s), {correct} correct guesses (rate {rate:.3f}); "
            f"the bound e^ε/(1+e^ε) is {bound:.3f}, its 95 % band at this many rounds "
            f"[{low:.3f}, {high:.3f}]; the rate is {where} the band.")


def utility_summary(summary, units: str) -> str:
    """The privacy–utility curves in words: per algorithm, the median error at the smallest and
    the largest ε of the grid (``summary``: :func:`dpcore.app.sweeps.summarize`'s table)."""
    parts = []
    for alg, rows in summary.groupby("algorithm", sort=False):
        rows = rows.sort_values("epsilon")
        lo, hi = rows.iloc[0], rows.iloc[-1]
        parts.append(f"{alg}: median {lo['median']:.3g} at ε = {lo['epsilon']:g}, "
                     f"{hi['median']:.3g} at ε = {hi['epsilon']:g}")
    return f"Chart: error ({units}) against ε, log scale; " + "; ".join(parts) + "."


def _num(x: float) -> str:
    """Whole numbers with thousands separators (no 1.542e+04), others to 4 digits."""
    x = float(x)
    return f"{x:,.0f}" if x.is_integer() and abs(x) < 1e15 else f"{x:.4g}"


def _range(v: np.ndarray) -> str:
    return f"from {_num(np.min(v))} to {_num(np.max(v))}"


def points_summary(P: np.ndarray, axis_titles: tuple[str, str], what: str = "points") -> str:
    """A scatter of ``P`` (n, 2) in words: how many points and the range of each axis."""
    P = np.atleast_2d(np.asarray(P, dtype=float))
    if P.size == 0:
        return f"Chart: no {what}."
    text = f"Chart: {len(P):,} {what}; {axis_titles[0]} {_range(P[:, 0])}"
    if P.shape[1] > 1:
        text += f", {axis_titles[1]} {_range(P[:, 1])}"
    return text + "."


def histogram_summary(values: np.ndarray, what: str) -> str:
    """A histogram in words: count, median and the middle 90 % of ``values``."""
    v = np.asarray(values, dtype=float).ravel()
    if v.size == 0:
        return f"Chart: no {what}."
    lo, med, hi = np.quantile(v, [0.05, 0.5, 0.95])
    return (f"Chart: histogram of {v.size:,} {what}; median {med:.4g}, middle 90 % from "
            f"{lo:.4g} to {hi:.4g}, all {_range(v)}.")


def friends_summary(counts: np.ndarray, r: float) -> str:
    """FriendlyCore's friend counts (points coloured by their number of friends within r)."""
    c = np.asarray(counts, dtype=float).ravel()
    if c.size == 0:
        return "Chart: no points."
    return (f"Chart: {c.size:,} points coloured by their number of friends within r = {r:g}: "
            f"median {np.median(c):,.0f}, {_range(c)}; a point needs more than "
            f"{c.size / 2:,.0f} to be kept.")


def means_summary(means: Mapping[str, np.ndarray | None], reference: str | None = None) -> str:
    """Released means (and, in explore mode, the true mean as ``reference``) with their
    distance to the reference."""
    shown = {k: np.asarray(v, dtype=float).ravel() for k, v in means.items() if v is not None}
    if not shown:
        return ""
    ref = shown.get(reference) if reference is not None else None
    parts = []
    for name, m in shown.items():
        part = f"{name} at {_point(m, 4)}"
        if ref is not None and name != reference:
            part += f", {float(np.linalg.norm(m - ref)):.4g} from the {reference}"
        parts.append(part)
    return "Means drawn: " + "; ".join(parts) + "."


def tuples_summary(layers: Mapping[str, np.ndarray]) -> str:
    """FriendlyCore clustering's picture: how many points each layer draws."""
    parts = [f"{len(np.atleast_2d(M)):,} {name}" for name, M in layers.items()
             if M is not None and np.size(M)]
    return "Chart: the data (faint points) with " + ", ".join(parts) + "." if parts else \
        "Chart: the data only (no tuples were formed)."


def laplace_pair_summary(epsilon: float, count: float = 10.0) -> str:
    """The tour's step 1 figure (:func:`dpcore.app.plots.laplace_pair_figure`) in words."""
    return (f"Chart: two Laplace densities of scale 1/ε = {1 / epsilon:.3g}, centred on the true "
            f"counts {count:g} (data set D) and {count + 1:g} (neighbour D′); at every released "
            f"value their ratio is at most e^ε = {np.exp(epsilon):.3g}.")


def amplification_summary(epsilon: float, rate: float) -> str:
    """The tour's step 4 figure (:func:`dpcore.app.plots.amplification_figure`) in words."""
    here = float(np.log1p(rate * np.expm1(epsilon)))
    return (f"Chart: ε for the full data, ln(1 + q(e^ε − 1)), against the sampling probability "
            f"q from 0 to 1 for ε = {epsilon:g} on the sample; at q = {rate:g} it is "
            f"{here:.3g}.")
