"""Verdicts computed from the numbers by stated rules (never hand-written strings).

Every comparison in the reports goes through :func:`compare`: the statistic of method A over
method B (a ratio of medians or trimmed means over the repetitions) with a 95 % percentile
bootstrap interval over the repetitions (2000 resamples, fixed seed). The rule:

* ``"A < B"`` **holds** when the whole interval lies below 1, is **contradicted** when it lies
  above 1, and is **inconclusive** otherwise (at this number of repetitions).

:func:`verdict_word` turns a list of such outcomes into the word in the report: ``reproduced``
(all hold), ``partly`` (some hold, none contradicted or some contradicted), ``not reproduced``
(none hold and at least one contradicted), ``inconclusive``. :data:`RULE` is the sentence the
reports print.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

__all__ = ["RULE", "Comparison", "bootstrap_ratio", "compare", "median", "trim10",
           "verdict_word"]

RULE = ("Verdict rule: for each comparison, the ratio of the two methods' statistic (median, or "
        "the paper's 0.1–0.9 trimmed mean for Fig. 5 of FriendlyCore) over the repetitions, with "
        "a 95 % percentile-bootstrap interval (2000 resamples of the repetitions, seed 0). A "
        "claim 'A below B' holds when the interval lies below 1, is contradicted when it lies "
        "above 1, and is inconclusive otherwise. A claim made of several comparisons is "
        "'reproduced' if all hold, 'not reproduced' if none holds and one is contradicted, "
        "'partly' if some hold and some do not, 'inconclusive' otherwise.")


def median(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.median(x, axis=axis)


def trim10(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return stats.trim_mean(x, 0.1, axis=axis)


def bootstrap_ratio(a: Sequence[float], b: Sequence[float], stat: Callable = median,
                    n_boot: int = 2000, level: float = 0.95, rng: int = 0
                    ) -> tuple[float, float, float]:
    """stat(a)/stat(b) and its percentile-bootstrap interval (a and b resampled independently)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.size == 0 or b.size == 0:
        return float("nan"), float("nan"), float("nan")
    gen = np.random.default_rng(rng)
    ia = gen.integers(a.size, size=(n_boot, a.size))
    ib = gen.integers(b.size, size=(n_boot, b.size))
    with np.errstate(divide="ignore", invalid="ignore"):
        boots = stat(a[ia], axis=1) / stat(b[ib], axis=1)
        point = float(stat(a) / stat(b))
    lo, hi = np.nanquantile(boots, [(1 - level) / 2, (1 + level) / 2])
    return point, float(lo), float(hi)


@dataclass(frozen=True)
class Comparison:
    """``label``: 'A/B at setting'; ``ratio`` with its interval; ``outcome`` holds /
    contradicted / inconclusive for the claim ratio < 1."""

    label: str
    ratio: float
    lo: float
    hi: float
    outcome: str

    def text(self) -> str:
        return f"{self.label} = {self.ratio:.3g} [{self.lo:.3g}, {self.hi:.3g}]"


def compare(label: str, a, b, stat: Callable = median) -> Comparison:
    """Claim stat(a) < stat(b) judged by the bootstrap interval of the ratio (module doc)."""
    r, lo, hi = bootstrap_ratio(a, b, stat)
    outcome = "holds" if hi < 1 else "contradicted" if lo > 1 else "inconclusive"
    return Comparison(label, r, lo, hi, outcome)


def verdict_word(outcomes: Sequence[str]) -> str:
    """Aggregate per-comparison outcomes into the report's verdict (module doc)."""
    outcomes = list(outcomes)
    if not outcomes:
        return "not checked"
    held = sum(o == "holds" for o in outcomes)
    if held == len(outcomes):
        return "reproduced"
    if held == 0:
        return "not reproduced" if "contradicted" in outcomes else "inconclusive"
    return "partly"
