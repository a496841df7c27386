"""Privacy accounting of max-cover k-means: Theorem 6.1, Lemma 6.2 and the budget split."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from dpcore.privacy import ApproxDP, Guarantee, compose

#: NoisyAVG (Theorem 2.6) is only proven (ε, δ)-DP for ε ≤ 1/3.
NOISY_AVG_MAX_EPSILON = 1.0 / 3.0

#: Default split of the total privacy ε_p (the paper gives none; spec §2.5, prior_art §6).
#: ``em`` is the share of ε_p that the whole candidate construction costs after Lemma 6.2's
#: factor e·ln(1/δ_E)/2; ``average`` is NoisyAVG's ε_G; ``lloyd`` the optional final round.
#: Chosen so that ε_G and the final round stay ≤ 1/3 at ε_p = 1 (Theorem 2.6's range) while the
#: exponential mechanism, whose effective ε_E is divided by e·ln(1/δ_E)/2 ≈ 23, keeps the largest
#: share. The public re-implementation's 0.2/0.2/0.6 violates ε_G ≤ 1/3 at ε_p = 1.
DEFAULT_BUDGET_SPLIT: dict[str, float] = {"em": 0.5, "counts": 0.17, "average": 0.33}
#: Default split when ``final_lloyd=True`` (Sec. 7's extra DP Lloyd round).
DEFAULT_BUDGET_SPLIT_WITH_LLOYD: dict[str, float] = {
    "em": 0.4,
    "counts": 0.1,
    "average": 0.25,
    "lloyd": 0.25,
}


def privacy_cost(
    eps_E: float, eps_L: float, eps_G: float, delta_E: float, delta_G: float
) -> ApproxDP:
    """Guarantee of Algorithm 2 (Theorem 6.1).

    (e·ε_E·ln(1/δ_E)/2 + ε_L + ε_G, δ_E + δ_G)-DP, independent of k, k', m and n: the m·k'
    adaptive exponential-mechanism picks cost (e ε_E ln(1/δ_E)/2, δ_E) together (Lemma 6.2, the
    Gupta et al. technique), the Laplace counts ε_L, and the k NoisyAVG calls on a partition
    (ε_G, δ_G) by parallel composition.
    """
    for name, v in (("eps_E", eps_E), ("eps_L", eps_L), ("eps_G", eps_G)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be finite and > 0, got {v!r}")
    for name, v in (("delta_E", delta_E), ("delta_G", delta_G)):
        if not 0 < v < 1:
            raise ValueError(f"{name} must be in (0, 1), got {v!r}")
    eps = math.e * eps_E * math.log(1.0 / delta_E) / 2.0 + eps_L + eps_G
    return ApproxDP(eps, delta_E + delta_G)


@dataclass(frozen=True)
class BudgetSplit:
    """Per-step privacy parameters of Algorithm 2 (+ the optional final DP Lloyd round).

    ``eps_E`` is the exponential mechanism's own ε (weight exp(ε_E·cover/2)), not its share of
    the total: the candidate construction costs e·ε_E·ln(1/δ_E)/2 (Lemma 6.2).
    """

    eps_E: float
    delta_E: float
    eps_L: float
    eps_G: float
    delta_G: float
    eps_lloyd: float = 0.0
    delta_lloyd: float = 0.0

    @property
    def guarantee(self) -> ApproxDP:
        """Total guarantee: Theorem 6.1 composed with the final round (basic composition)."""
        g: Guarantee = privacy_cost(self.eps_E, self.eps_L, self.eps_G, self.delta_E, self.delta_G)
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
        Reserve a share for one DP Lloyd round after Algorithm 2 (Sec. 7).

    Notes
    -----
    δ_p is split equally between the steps that use it (the exponential mechanism, NoisyAVG and
    the final round). ε_E = 2·f_E·ε_p / (e·ln(1/δ_E)) so that Lemma 6.2 charges exactly f_E·ε_p.
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
    eps_E = 2.0 * fractions["em"] * epsilon / (math.e * math.log(1.0 / d_each))
    eps_G = _clamp_noisy_avg(fractions["average"] * epsilon, "average (ε_G)")
    eps_ll = _clamp_noisy_avg(fractions["lloyd"] * epsilon, "lloyd") if final_lloyd else 0.0
    return BudgetSplit(
        eps_E=eps_E,
        delta_E=d_each,
        eps_L=fractions["counts"] * epsilon,
        eps_G=eps_G,
        delta_G=d_each,
        eps_lloyd=eps_ll,
        delta_lloyd=d_each if final_lloyd else 0.0,
    )


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
