"""FriendlyCore k-means' budgets, part count and refusal rule: one function of public inputs.

The estimator (:class:`~dpcore.mechanisms.friendlycore.FriendlyCoreKMeans`), its refusal message
and the dashboard's advice all ask this module (issue 23.5): before, the page planned parts of
2k rows from a budget without the add/remove charge while the estimator refused on the charged
budget and told "n ≥ need·k" (Letter, k = 10, ε = 3: told 18,690 rows, refused at 20,000).

Everything here reads **public inputs only** — the declared row count n, k, d, ε or ρ, δ and
the estimator's settings — never the data, so a plan, a refusal and its message are the same for
two neighbouring data sets with the same declared n.

* :func:`fc_budgets` — how a requested ρ or (ε, δ) splits into FriendlyCore's nominal ρ, the
  reserved fallback share and the delivered guarantee (the estimator's accounting, module doc of
  :mod:`.clustering`).
* :func:`parts_needed` — the fewest parts t at which the tuple FriendlyCore (Sec. 5.2.1) can keep
  a tuple of a perfectly friendly set (:func:`.filters.required_size` at the tuple core's budget).
* :func:`kmeans_plan` — parts of at least :func:`rows_per_part` rows, t between the need and
  :data:`MAX_PARTS`, and the smallest change (ε, k, or more rows) when nothing fits.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dpcore.privacy.guarantees import ZCDP, ApproxDP, Guarantee, zcdp_to_epsilon

from .averaging import rho_for_epsilon
from .filters import required_size

__all__ = [
    "BUDGET_SPLITS",
    "DELTA_SHARES",
    "FCBudgets",
    "KMeansPlan",
    "MAX_PARTS",
    "Suggestion",
    "comfortable_rows_per_part",
    "estimated_seconds",
    "fc_budgets",
    "kmeans_plan",
    "mean_rows_needed",
    "parts_needed",
    "replacement_multiplier",
    "rows_per_part",
    "suggest",
    "too_few_parts_message",
]

#: Most parts (tuples) FriendlyCore k-means accepts: the two tuple cores count friends among up
#: to t tuples for each of t tuples (:mod:`.counting`), so the work grows as t·m; above this a
#: fit on a 2-core machine leaves seconds (issue 23: t = 10⁷ on 1,000 rows ran for > 90 s).
MAX_PARTS = 10_000
#: ε values offered when a setting must change (the dashboard's grid).
EPSILON_GRID: tuple[float, ...] = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0,
                                   10.0, 20.0)

# Shares of FC_Clustering's ρ (the δ split is fixed: δ/4, 0, δ/8, δ/8, δ/2).
BUDGET_SPLITS: dict[str, dict[str, float]] = {
    "practical": {
        "tuple_core": 0.35, "find_diam": 0.10, "ordered_core": 0.35, "ordered_avg": 0.10,
        "lloyd": 0.10,
    },
    "paper": {
        "tuple_core": 0.25, "find_diam": 0.0125, "ordered_core": 0.0125, "ordered_avg": 0.225,
        "lloyd": 0.5,
    },
}
DELTA_SHARES = {"tuple_core": 0.25, "ordered_core": 0.125, "ordered_avg": 0.125, "lloyd": 0.5}
# The two filters, whose score sensitivity doubles under a replacement (:mod:`.clustering`);
# their ρ₁ share (the noisy size n̂) keeps its 1× charge.
FILTER_PARTS = ("tuple_core", "ordered_core")
SIZE_SHARE = 0.1


def split_of(budget_split: str | Mapping[str, float]) -> dict[str, float]:
    """The shares of ρ per step for a split name or a dict (checked: positive, sum 1)."""
    if isinstance(budget_split, str):
        if budget_split not in BUDGET_SPLITS:
            raise ValueError(f"budget_split must be one of {sorted(BUDGET_SPLITS)} or a dict")
        return BUDGET_SPLITS[budget_split]
    keys = set(BUDGET_SPLITS["paper"])
    if set(budget_split) != keys or any(not v > 0 for v in budget_split.values()):
        raise ValueError(f"a budget_split dict needs positive shares for {sorted(keys)}")
    if not math.isclose(sum(budget_split.values()), 1.0, rel_tol=1e-9):
        raise ValueError(f"budget_split shares must sum to 1, got {sum(budget_split.values())}")
    return dict(budget_split)


def replacement_multiplier(split: Mapping[str, float]) -> float:
    """Charged ρ ÷ nominal ρ of FC_Clustering under add/remove neighbours (:mod:`.clustering`):
    4× on the two filters' score parts (0.9 of their share), 1× on everything else."""
    filters = sum(split[key] for key in FILTER_PARTS)
    return 4.0 * (1.0 - SIZE_SHARE) * filters + SIZE_SHARE * filters + (1.0 - filters)


@dataclass(frozen=True)
class FCBudgets:
    """FC_Clustering's budget from its public settings.

    Attributes
    ----------
    total : float — the charged ρ of the whole fit (fallback share included).
    fc_rho : float — the charged ρ of FriendlyCore's own steps.
    nominal : float — the ρ the steps' noise is calibrated to (``fc_rho`` ÷ the replacement
        multiplier under ``accounting="add_remove"``).
    z_delta : float — the δ of the zCDP accounting (δ/2 when ε was asked: the other half pays
        the conversion).
    delivered : ZCDP or ApproxDP — the guarantee reported as ``privacy_``.
    """

    total: float
    fc_rho: float
    nominal: float
    z_delta: float
    delivered: Guarantee

    @property
    def fallback_rho(self) -> float:
        """The ρ reserved for the fallback (0 without one)."""
        return self.total - self.fc_rho


def fc_budgets(
    *, rho: float | None = None, epsilon: float | None = None, delta: float,
    fallback_share: float | None = 0.01, budget_split: str | Mapping[str, float] = "practical",
    accounting: str = "add_remove",
) -> FCBudgets:
    """Split a requested ρ or (ε, δ) (exactly one) for FC_Clustering; ``fallback_share=None``:
    no fallback, nothing reserved."""
    if (rho is None) == (epsilon is None):
        raise ValueError("give exactly one of rho (zCDP) or epsilon ((epsilon, delta)-DP)")
    if epsilon is not None:
        z_delta, total = delta / 2.0, rho_for_epsilon(epsilon, delta / 2.0)
        delivered: Guarantee = ApproxDP(float(epsilon), float(delta))
    else:
        z_delta, total = float(delta), float(rho)
        delivered = ZCDP(total, float(delta))
    fc_rho = total * (1.0 - fallback_share) if fallback_share else total
    mult = replacement_multiplier(split_of(budget_split))
    nominal = fc_rho / mult
    if accounting == "paper":  # the paper's noise; the true charge is reported
        nominal = fc_rho
        fc_rho, total = fc_rho * mult, total - fc_rho + fc_rho * mult
        delivered = (ZCDP(total, float(delta)) if epsilon is None else
                     ApproxDP(zcdp_to_epsilon(total, delta / 2.0), float(delta)))
    return FCBudgets(total, fc_rho, nominal, z_delta, delivered)


def parts_needed(budgets: FCBudgets, budget_split: str | Mapping[str, float] = "practical"
                 ) -> int:
    """Fewest parts t at which the tuple FriendlyCore keeps a tuple of a perfectly friendly set
    with probability ≥ 1/2 (:func:`.filters.required_size` at the tuple core's ρ and δ)."""
    return int(required_size(split_of(budget_split)["tuple_core"] * budgets.nominal,
                             budgets.z_delta * DELTA_SHARES["tuple_core"]))


def rows_per_part(k: int) -> int:
    """The fewest rows a part should hold: 2k, so its non-private k-means can see every cluster
    (a part with fewer than k rows gives a junk tuple)."""
    return 2 * int(k)


def too_few_parts_message(t: int, need: int, k: int, budgets: FCBudgets, delta: float) -> str:
    """The estimator's refusal (and the page's reason) for ``t < need``: in parts and in rows."""
    per = rows_per_part(k)
    return (f"t = {t:,} parts are too few for the tuple FriendlyCore at this budget (rho = "
            f"{budgets.total:.4g}, delta = {delta:g}, charged for add/remove neighbours): need "
            f"t ≥ {need:,}; with parts of at least 2k = {per} rows that is n ≥ {need * per:,} "
            "rows")


@dataclass(frozen=True)
class KMeansPlan:
    """FriendlyCore k-means settings for a declared n (:func:`kmeans_plan`).

    Attributes
    ----------
    feasible : bool — ``t_needed ≤ t`` parts of ≥ ``points_per_part`` rows fit in n (and
        ``t_needed ≤ MAX_PARTS``).
    t : int — parts to use (1.5 × the need, within the rows and :data:`MAX_PARTS`).
    t_needed : int — :func:`parts_needed`.
    points_per_part : int — :func:`rows_per_part`.
    rows_needed : int — ``t_needed × points_per_part``.
    epsilon_needed : float or None — smallest grid ε ≥ the asked one that fits n (None: none).
    k_max : int — largest k ≤ the asked one that fits n at this ε (0: none).
    message : str — why it cannot run and what works ("" when feasible).
    reason : str — one sentence on how t and the part size were chosen.
    """

    feasible: bool
    t: int
    t_needed: int
    points_per_part: int
    rows_needed: int
    epsilon_needed: float | None
    k_max: int
    message: str
    reason: str


def _fits(n: int, k: int, epsilon: float, delta: float, fallback_share: float | None) -> bool:
    need = parts_needed(fc_budgets(epsilon=epsilon, delta=delta, fallback_share=fallback_share))
    return need <= MAX_PARTS and need * rows_per_part(k) <= n


def kmeans_plan(
    n: int, k: int, *, epsilon: float, delta: float, d: int | None = None,
    fallback_share: float | None = 0.01, grid: Sequence[float] = EPSILON_GRID,
) -> KMeansPlan:
    """What FriendlyCore k-means needs with ``n`` declared rows, k clusters, at (ε, δ).

    t = min(⌈1.5 · t_needed⌉, n // (2k), :data:`MAX_PARTS`): half again the need puts the tuple
    filter's threshold at ≈ 0.41 t (a core when ≳ 91 % of the parts agree), while fewer parts
    mean more rows per part (a better per-part clustering, which decides whether they agree).
    The part count, not n, sets the counting work, so a larger n only lengthens the per-part
    clustering (linear in n). ``d`` is accepted for callers that
    plan by shape; the rule does not depend on it.
    """
    n, k = int(n), int(k)
    budgets = fc_budgets(epsilon=epsilon, delta=delta, fallback_share=fallback_share)
    need = parts_needed(budgets)
    per = rows_per_part(k)
    t_max = min(n // per, MAX_PARTS)
    feasible = need <= t_max
    t = int(min(math.ceil(1.5 * need), t_max)) if feasible else int(max(2, min(t_max, need)))
    eps_needed = next((float(e) for e in sorted(grid) if e >= epsilon
                       and _fits(n, k, float(e), delta, fallback_share)), None)
    k_max = max((kk for kk in range(1, k + 1) if _fits(n, kk, epsilon, delta, fallback_share)),
                default=0)
    reason = (f"{t:,} parts of about {n // max(t, 1):,} rows: the tuple filter needs at least "
              f"{need:,} parts at ε = {epsilon:g}, and each part needs at least 2k = {per} rows.")
    msg = ""
    if not feasible:
        msg = (f"FriendlyCore clustering puts at least 2k = {per} rows in each part and needs at "
               f"least {need:,} parts at ε = {epsilon:g}, so at least {need * per:,} rows; "
               f"{n:,} are available. ")
        if need > MAX_PARTS:
            msg = (f"FriendlyCore clustering needs {need:,} parts at ε = {epsilon:g}, more than "
                   f"the {MAX_PARTS:,} it accepts. ")
        options = []
        if eps_needed is not None:
            options.append(f"ε ≥ {eps_needed:g}")
        if 1 <= k_max < k:
            options.append(f"k ≤ {k_max}")
        msg += ("It works with " + " or ".join(options) + "." if options else
                "No setting offered here makes it work with so few rows: use a larger data set.")
    return KMeansPlan(feasible, t, need, per, need * per, eps_needed, k_max, msg, reason)


def mean_rows_needed(epsilon: float, delta: float) -> int:
    """Fewest rows at which FC_Avg's zCDP filter keeps a core at (ε, δ)
    (:func:`~dpcore.mechanisms.friendlycore.friendly_mean` with a known radius: its FriendlyCore
    gets 0.1 of ρ(ε, δ/2) and a quarter of δ)."""
    return int(required_size(0.1 * rho_for_epsilon(epsilon, delta / 2.0), delta / 4.0))


def comfortable_rows_per_part(k: int) -> int:
    """Rows per part at which the per-part k-means usually agree across parts on clustered data
    (≈ 10 per cluster): the suggestion aims at this, the refusal only at :func:`rows_per_part`."""
    return 10 * int(k)


@dataclass(frozen=True)
class Suggestion:
    """Settings that work for a declared n (:func:`suggest`).

    Attributes
    ----------
    epsilon : float or None — the smallest grid ε ≥ the asked one at which the mean has a core
        and the clustering gets parts of ≥ :func:`comfortable_rows_per_part` rows; when no ε
        does, the smallest at which the mean alone works (None: not even that).
    clustering_ok : bool — the clustering works at ``epsilon``.
    plan : KMeansPlan — the clustering plan at ``epsilon`` (at the asked ε when None).
    reason : str — one sentence saying why.
    """

    epsilon: float | None
    clustering_ok: bool
    plan: KMeansPlan
    reason: str


def suggest(n: int, k: int, *, epsilon: float, delta: float, mean_rows: int | None = None,
            grid: Sequence[float] = EPSILON_GRID) -> Suggestion:
    """The FriendlyCore ε to run at for ``n`` declared rows and k clusters (public inputs only).

    ``mean_rows`` is the number of rows the private mean uses (default n). Keeps the asked ε
    when it already works.
    """
    rows = int(n if mean_rows is None else mean_rows)
    good = comfortable_rows_per_part(k)

    def mean_ok(e: float) -> bool:
        return mean_rows_needed(e, delta) <= rows

    def clustering_ok(e: float) -> bool:
        t = math.ceil(1.5 * parts_needed(fc_budgets(epsilon=e, delta=delta)))
        return t <= MAX_PARTS and t * good <= n

    options = [float(e) for e in sorted({*grid, float(epsilon)}) if e >= epsilon]
    both = next((e for e in options if mean_ok(e) and clustering_ok(e)), None)
    eps = both if both is not None else next((e for e in options if mean_ok(e)), None)
    plan = kmeans_plan(n, k, epsilon=eps or epsilon, delta=delta, grid=grid)
    if both is None:
        reason = (f"FriendlyCore's clustering needs a larger data set or a smaller k: no ε "
                  f"offered gives it parts of {good} rows (10 per cluster) on {n:,} rows with "
                  f"k = {k}" + (f"; its mean runs at ε = {eps:g}, the smallest at which it keeps "
                                "a core." if eps is not None else "."))
    elif both == float(epsilon):
        reason = (f"ε = {both:g} works here: {plan.t:,} parts of about {n // plan.t:,} rows (at "
                  f"least {plan.t_needed:,} parts are needed at this ε).")
    else:
        reason = (f"FriendlyCore runs at ε = {both:g}, not {epsilon:g}: on {n:,} rows it is the "
                  f"smallest ε at which its clustering gets parts of at least {good} rows "
                  f"(10 per cluster; {plan.t:,} parts, at least {plan.t_needed:,} needed) and "
                  "its mean keeps a core (the paper's own runs use ρ = 1, about ε = 8 at "
                  "δ = 10⁻⁶).")
    return Suggestion(eps, both is not None, plan, reason)


def estimated_seconds(n: int, d: int, k: int, t: int) -> float:
    """Rough wall time of one fit on an idle 2-core machine: the per-part k-means++ (linear in
    n) plus the tuple friend counting (t² pairs of k-tuples at most; measured on
    ``benchmarks/bench_friendlycore.py``'s mixtures)."""
    dd, kk = max(int(d), 2), int(k)
    return 0.2 + 2.5e-7 * int(n) * kk * dd + 2e-9 * float(t) ** 2 * kk * kk * dd
