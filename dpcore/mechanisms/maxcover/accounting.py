"""Privacy accounting of max-cover k-means: Theorem 6.1, Lemma 6.2 and the budget split."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dpcore.privacy.guarantees import ApproxDP, Guarantee, compose

#: NoisyAVG (Theorem 2.6) is only proven (ε, δ)-DP for ε ≤ 1/3.
NOISY_AVG_MAX_EPSILON = 1.0 / 3.0

#: Default split of the total privacy ε_p (the paper gives none; spec §2.5, prior_art §6).
#: ``em`` is the share of ε_p that the whole candidate construction costs under Lemma 6.2
#: (:func:`em_privacy_loss`); ``average`` is NoisyAVG's ε_G; ``lloyd`` the optional final rounds.
#: Chosen so that ε_G and the final round stay ≤ 1/3 at ε_p = 1 (Theorem 2.6's range) while the
#: exponential mechanism, whose ε_E/2 is divided by ≈ ln(1/δ_E) ≈ 16 (by e·ln(1/δ_E) ≈ 43 under
#: the paper's bound), keeps the largest share. The public re-implementation's 0.2/0.2/0.6
#: violates ε_G ≤ 1/3 at ε_p = 1.
DEFAULT_BUDGET_SPLIT: dict[str, float] = {"em": 0.5, "counts": 0.17, "average": 0.33}
#: Default split when ``final_lloyd=True`` (Sec. 7's extra DP Lloyd round).
DEFAULT_BUDGET_SPLIT_WITH_LLOYD: dict[str, float] = {
    "em": 0.4,
    "counts": 0.1,
    "average": 0.25,
    "lloyd": 0.25,
}


EM_BOUNDS = ("exact", "paper")


def em_privacy_loss(eps_E: float, delta_E: float, bound: str = "exact") -> float:
    """ε charged for all m·k' exponential-mechanism picks together (Lemma 6.2), at δ_E.

    The proof (after Gupta et al., SODA 2010) bounds the ratio of normalisers by
    Π_i E_g[exp(x·1{I ∈ cover[g]})] with x = ε_E/2, then uses Lemma 2.9 to show that the
    summed cover probabilities Σ_i p_i exceed ln(1/δ_E) with probability at most δ_E.

    * ``"exact"`` (default; valid for every ε_E): since the indicator is 0 or 1,
      E[exp(x·1)] = 1 + (eˣ − 1)·p ≤ exp((eˣ − 1)·p) exactly, so the ratio is at most
      exp((eˣ − 1)·ln(1/δ_E)); the other direction (the removed point in a pick's cover) costs
      at most x. Loss: max(x, (e^{ε_E/2} − 1)·ln(1/δ_E)). For x ≤ 1 this is ≤ (e − 1)·x·ln(1/δ_E),
      below the paper's e·x·ln(1/δ_E).
    * ``"paper"``: the printed e·ε_E·ln(1/δ_E)/2, which replaces eˣ − 1 by e·x (true only for
      x ≤ 1). Refuses ε_E > 2, where it would under-state the loss.
    """
    if bound not in EM_BOUNDS:
        raise ValueError(f"em_bound must be one of {EM_BOUNDS}, got {bound!r}")
    log_inv = math.log(1.0 / delta_E)
    if bound == "paper":
        if eps_E > 2.0:
            raise ValueError(
                f"eps_E={eps_E:.4g} > 2: the paper's Lemma 6.2 bound (eˣ ≤ 1 + e·x) needs "
                "ε_E ≤ 2; use em_bound='exact', which holds for every ε_E"
            )
        return math.e * eps_E * log_inv / 2.0
    x = eps_E / 2.0
    return max(x, math.expm1(x) * log_inv)


def em_epsilon_for(loss: float, delta_E: float, bound: str = "exact") -> float:
    """The ε_E whose :func:`em_privacy_loss` is ``loss`` (inverse, used by the budget split)."""
    log_inv = math.log(1.0 / delta_E)
    if bound == "paper":
        return 2.0 * loss / (math.e * log_inv)
    if bound not in EM_BOUNDS:
        raise ValueError(f"em_bound must be one of {EM_BOUNDS}, got {bound!r}")
    return 2.0 * min(loss, math.log1p(loss / log_inv))


def privacy_cost(
    eps_E: float,
    eps_L: float,
    eps_G: float,
    delta_E: float,
    delta_G: float,
    *,
    em_bound: str = "exact",
) -> ApproxDP:
    """Guarantee of Algorithm 2 (Theorem 6.1).

    (L_E + ε_L + ε_G, δ_E + δ_G)-DP, independent of k, k', m and n: the m·k' adaptive
    exponential-mechanism picks cost (L_E, δ_E) together (Lemma 6.2, :func:`em_privacy_loss`;
    the paper's L_E = e·ε_E·ln(1/δ_E)/2 with ``em_bound="paper"``), the Laplace counts ε_L,
    and the k NoisyAVG calls on a partition (ε_G, δ_G) by parallel composition.
    """
    for name, v in (("eps_E", eps_E), ("eps_L", eps_L), ("eps_G", eps_G)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    for name, v in (("delta_E", delta_E), ("delta_G", delta_G)):
        if not 0 < v < 1:
            raise ValueError(f"{name} must be in (0, 1), got {v!r}")
    eps = em_privacy_loss(eps_E, delta_E, em_bound) + eps_L + eps_G
    return ApproxDP(eps, delta_E + delta_G)


@dataclass(frozen=True)
class BudgetSplit:
    """Per-step privacy parameters of Algorithm 2 (+ the optional final DP Lloyd round).

    ``eps_E`` is the exponential mechanism's own ε (weight exp(ε_E·cover/2)), not its share of
    the total: the candidate construction costs :func:`em_privacy_loss` (Lemma 6.2).
    ``eps_lloyd``/``delta_lloyd`` are the totals of the ``lloyd_rounds`` final DP Lloyd rounds
    (each round gets an equal part, basic composition).
    """

    eps_E: float
    delta_E: float
    eps_L: float
    eps_G: float
    delta_G: float
    eps_lloyd: float = 0.0
    delta_lloyd: float = 0.0
    lloyd_rounds: int = 1
    em_bound: str = "exact"

    @property
    def guarantee(self) -> ApproxDP:
        """Total guarantee: Theorem 6.1 composed with the final round (basic composition).

        ``eps_G == 0`` is the seeding split (:func:`split_seeding_budget`): lines 1–19 only, so
        the exponential mechanism's (L_E, δ_E) plus the Laplace counts' ε_L.
        """
        if self.eps_G == 0:
            loss = em_privacy_loss(self.eps_E, self.delta_E, self.em_bound)
            return ApproxDP(loss + self.eps_L, self.delta_E)
        g: Guarantee = privacy_cost(
            self.eps_E, self.eps_L, self.eps_G, self.delta_E, self.delta_G, em_bound=self.em_bound
        )
        if self.eps_lloyd > 0:
            g = compose(g, ApproxDP(self.eps_lloyd, self.delta_lloyd))
        return g.to_approx_dp()

    def as_dict(self) -> dict[str, float]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def split_budget(
    epsilon: float,
    delta: float,
    fractions: Mapping[str, float] | None = None,
    *,
    final_lloyd: bool = False,
    lloyd_rounds: int = 1,
    em_bound: str = "exact",
) -> BudgetSplit:
    """Split a total (ε_p, δ_p) into the per-step parameters (spec §2.5, INFERRED helper).

    Parameters
    ----------
    epsilon, delta : float
        Total budget, ε_p > 0 and 0 < δ_p < 1.
    fractions : mapping, optional
        Shares of ε_p for ``"em"``, ``"counts"``, ``"average"`` (and ``"lloyd"`` when
        ``final_lloyd``), summing to 1. Default :data:`DEFAULT_BUDGET_SPLIT` (or
        :data:`DEFAULT_BUDGET_SPLIT_WITH_LLOYD`).
    final_lloyd : bool
        Reserve a share for DP Lloyd rounds after Algorithm 2 (Sec. 7).
    lloyd_rounds : int
        Number of those rounds (the share is divided equally; each round's ε ≤ 1/3).
    em_bound : {"exact", "paper"}
        Lemma 6.2's charge, see :func:`em_privacy_loss`.

    Notes
    -----
    δ_p is split equally between the steps that use it (the exponential mechanism, NoisyAVG and
    the final rounds). ε_E is chosen so that Lemma 6.2 charges exactly f_E·ε_p
    (:func:`em_epsilon_for`; the paper's bound gives ε_E = 2·f_E·ε_p / (e·ln(1/δ_E))).
    ε_G (and the final round's ε) above 1/3 are clamped to 1/3 with a warning: NoisyAVG is only
    proven private up to 1/3 (Theorem 2.6); the delivered guarantee is then smaller than asked.
    """
    epsilon, delta = _check_privacy(epsilon, delta)
    keys = ("em", "counts", "average") + (("lloyd",) if final_lloyd else ())
    if fractions is None:
        fractions = DEFAULT_BUDGET_SPLIT_WITH_LLOYD if final_lloyd else DEFAULT_BUDGET_SPLIT
    fractions = dict(fractions)
    if set(fractions) != set(keys):
        raise ValueError(
            f"budget_split must have exactly the keys {sorted(keys)}, got {sorted(fractions)}"
        )
    vals = np.array([float(fractions[k]) for k in keys])
    if not np.all(np.isfinite(vals)) or np.any(vals <= 0) or abs(vals.sum() - 1.0) > 1e-9:
        raise ValueError(f"budget_split fractions must be > 0 and sum to 1, got {fractions}")
    n_delta = 2 + int(final_lloyd)
    d_each = delta / n_delta
    eps_E = em_epsilon_for(fractions["em"] * epsilon, d_each, em_bound)
    if em_bound == "paper":
        em_privacy_loss(eps_E, d_each, "paper")  # refuses ε_E > 2 (a public-input check)
    rounds = int(lloyd_rounds)
    if rounds < 1:
        raise ValueError(f"lloyd_rounds must be ≥ 1 when final_lloyd, got {lloyd_rounds!r}")
    eps_G = _clamp_noisy_avg(fractions["average"] * epsilon, "average (ε_G)")
    eps_ll = (
        rounds * _clamp_noisy_avg(fractions["lloyd"] * epsilon / rounds, "lloyd")
        if final_lloyd
        else 0.0
    )
    return BudgetSplit(
        eps_E=eps_E,
        delta_E=d_each,
        eps_L=fractions["counts"] * epsilon,
        eps_G=eps_G,
        delta_G=d_each,
        eps_lloyd=eps_ll,
        delta_lloyd=d_each if final_lloyd else 0.0,
        lloyd_rounds=rounds,
        em_bound=em_bound,
    )


#: Shares of the seeding's ε (:func:`split_seeding_budget`): the em/counts ratio of
#: :data:`DEFAULT_BUDGET_SPLIT` (0.5 : 0.17), renormalised without NoisyAVG's share.
SEEDING_BUDGET_SPLIT: dict[str, float] = {
    key: DEFAULT_BUDGET_SPLIT[key] / (DEFAULT_BUDGET_SPLIT["em"] + DEFAULT_BUDGET_SPLIT["counts"])
    for key in ("em", "counts")
}


def split_seeding_budget(
    epsilon: float,
    delta: float,
    fractions: Mapping[str, float] | None = None,
    *,
    em_bound: str = "exact",
) -> BudgetSplit:
    """Budget of Algorithm 2's lines 1–19 alone (candidates, proxy counts, S''), as a seeding.

    Under ``MaxCoverKMeans(preset="recommended")`` / ``DPKMeans(seeding="maxcover")`` NoisyAVG
    (lines 20–22) is not run: DP-Lloyd's first round averages the same partition with its own
    pure-ε noise. So the exponential mechanism gets the ``"em"`` share of ε and **all** of δ
    (δ_E = δ: nothing else uses δ), the Laplace counts the ``"counts"`` share. The guarantee
    is (L_E + ε_L, δ) = (ε, δ) exactly (Theorem 6.1 without the ε_G term).

    Parameters
    ----------
    epsilon, delta : float
        The seeding's budget, ε > 0 and 0 < δ < 1.
    fractions : mapping, optional
        Shares of ε for ``"em"`` and ``"counts"``, summing to 1; default
        :data:`SEEDING_BUDGET_SPLIT`.
    em_bound : {"exact", "paper"}
        Lemma 6.2's charge, see :func:`em_privacy_loss`.

    Returns
    -------
    BudgetSplit
        With ``eps_G = delta_G = 0`` (no averaging step) and no final rounds.
    """
    epsilon, delta = _check_privacy(epsilon, delta)
    fractions = dict(SEEDING_BUDGET_SPLIT if fractions is None else fractions)
    if set(fractions) != {"em", "counts"}:
        raise ValueError(
            "budget_split of the max-cover seeding (no NoisyAVG: DP-Lloyd averages the "
            f"partition) must have exactly the keys ['counts', 'em'], got {sorted(fractions)}"
        )
    vals = np.array([float(fractions["em"]), float(fractions["counts"])])
    if not np.all(np.isfinite(vals)) or np.any(vals <= 0) or abs(vals.sum() - 1.0) > 1e-9:
        raise ValueError(f"budget_split fractions must be > 0 and sum to 1, got {fractions}")
    eps_E = em_epsilon_for(vals[0] * epsilon, delta, em_bound)
    if em_bound == "paper":
        em_privacy_loss(eps_E, delta, "paper")  # refuses ε_E > 2 (a public-input check)
    return BudgetSplit(eps_E=eps_E, delta_E=delta, eps_L=vals[1] * epsilon, eps_G=0.0,
                       delta_G=0.0, em_bound=em_bound)


def _clamp_noisy_avg(eps: float, what: str) -> float:
    if eps > NOISY_AVG_MAX_EPSILON:
        warnings.warn(
            f"the {what} share gives ε = {eps:.4g} > 1/3, beyond NoisyAVG's proven range "
            "(Theorem 2.6); using ε = 1/3 instead, so the delivered guarantee is smaller than "
            "the requested total (see privacy_)",
            UserWarning,
            stacklevel=3,
        )
        return NOISY_AVG_MAX_EPSILON
    return eps


def _check_privacy(epsilon: float, delta: float) -> tuple[float, float]:
    try:
        epsilon, delta = float(epsilon), float(delta)
    except (TypeError, ValueError):
        raise ValueError(f"epsilon and delta must be numbers, got {epsilon!r}, {delta!r}") from None
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ValueError(f"epsilon must be finite and > 0, got {epsilon!r}")
    if not 0 < delta < 1:
        raise ValueError(
            f"delta must be in (0, 1) (e.g. n**-1.5 as in the paper's experiments), got {delta!r}"
        )
    return epsilon, delta


def _check_approx(approx: float) -> float:
    approx = float(approx)
    if not 0 < approx < 1:
        raise ValueError(
            f"approx (the approximation constant ε of the paper, not the privacy ε) must be in "
            f"(0, 1), preferably ≤ 0.5; got {approx!r}"
        )
    return approx
