"""Text alternatives of the dashboard's charts: what each shows, in numbers (issue 27.6).

A chart alone excludes a reader who cannot see it (screen reader, projector washed out); each
function here returns the one or two sentences a page prints under its chart. They read only what
the chart draws (released outputs, or explore-mode data the chart already shows), so a summary
never discloses more than its chart.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

__all__ = ["centres_summary", "cluster_sizes", "game_summary", "kept_removed_summary",
           "utility_summary"]


def _point(c: np.ndarray, digits: int = 3) -> str:
    return "(" + ", ".join(f"{v:.{digits}g}" for v in c[:3]) + (", …" if c.size > 3 else "") + ")"


def cluster_sizes(labels: np.ndarray, k: int) -> np.ndarray:
    """Number of points per cluster label 0..k−1."""
    return np.bincount(np.asarray(labels, dtype=np.intp), minlength=int(k))[: int(k)]


def centres_summary(centres: Mapping[str, np.ndarray], labels: np.ndarray | None = None,
                    coloured_by: str | None = None, *, clamped: bool = False) -> str:
    """One line per algorithm: how many centres and where; the cluster sizes of the colouring.

    Parameters
    ----------
    centres : mapping
        Algorithm -> (k, d) centres in the table's units (as drawn and as in the CSV).
    labels : (n,) int array, optional
        Nearest centre of ``coloured_by`` for each drawn point (explore mode).
    clamped : bool
        Whether centres were moved into the declared box (said once).
    """
    if not centres:
        return "Chart: no centres were released."
    lines = []
    for name, C in centres.items():
        C = np.atleast_2d(C)
        pts = "; ".join(_point(c) for c in C[:5]) + ("; …" if len(C) > 5 else "")
        lines.append(f"{name}: {len(C)} centre(s) at {pts}.")
    text = "Chart: the data (faint points) with " + " ".join(lines)
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
