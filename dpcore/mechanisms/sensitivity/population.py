"""What random DP promises, and how much of it a given population actually gets (issue 12, #6).

Random DP (Hall, Rinaldo & Wasserman 2012; Rubinstein & Aldà 2017, Def. 4) is a statement about
**pairs of neighbouring data sets drawn from the sampling distribution P** that the sensitivity
sampler used: with probability ≥ 1 − γ over (D, D′) ~ P^{n+1} the release is (ε, δ)-DP for that
pair. It says nothing about *your* data set unless your data are distributed like P, and nothing
about a worst-case neighbour of it. If the population your data come from (Q) differs from P, the
fraction of its neighbouring pairs on which the sampled Δ̂ is exceeded — the γ actually delivered
— can be far larger than γ (a bimodal population under a uniform P: the median's sensitivity is
exceeded in about a fifth of pairs against γ = 0.1). Proposition 8 of the paper bounds the
degradation by KL(P‖Q), which is rarely known; :func:`delivered_gamma` measures it instead, on a
population the user declares, by drawing fresh pairs from Q and counting ``G > Δ̂``.

* :data:`POPULATIONS` and :func:`population_sampler`: public distributions on the declared box
  (uniform, a centred Gaussian, two clusters), usable both as the sampler's P and as a declared Q.
* :func:`delivered_gamma`: the fraction of Q-pairs exceeding Δ̂, with a Clopper–Pearson bound.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.privacy.audit import clopper_pearson
from dpcore.privacy.noise import public_randomness

__all__ = ["POPULATIONS", "RDP_PROMISE", "DeliveredGamma", "delivered_gamma",
           "population_sampler"]

RDP_PROMISE = (
    "Random DP promises (ε, δ)-DP on all but a γ-fraction of neighbouring data-set pairs drawn "
    "from the sampling distribution P; it promises nothing for a particular data set (yours) "
    "unless your data are distributed like P, and nothing for a worst-case neighbour."
)

POPULATIONS: dict[str, str] = {
    "uniform": "uniform in the declared box [lo, hi]^d",
    "gaussian": "Gaussian centred in the box (sd = width/6), clipped to the box",
    "bimodal": "two equal clusters at 1/4 and 3/4 of the box (sd = width/20), clipped",
}

Oracle = Callable[[int, np.random.Generator], np.ndarray]


def population_sampler(
    kind: str, bounds: tuple[float, float], d: int, *, binary_label: bool = False
) -> Oracle:
    """An oracle ``(size, rng) -> (size, d)`` records for one of :data:`POPULATIONS`.

    Parameters
    ----------
    kind : "uniform", "gaussian" or "bimodal"
    bounds : (lo, hi)
        The declared public box, every coordinate.
    d : int
        Record dimension.
    binary_label : bool
        The last coordinate is a ±1 class label (both classes equally likely).
    """
    if kind not in POPULATIONS:
        raise ValueError(f"population must be one of {sorted(POPULATIONS)}, got {kind!r}")
    lo, hi = float(bounds[0]), float(bounds[1])
    if not lo < hi:
        raise ValueError(f"bounds must be [lo, hi] with lo < hi, got {[lo, hi]!r}")
    width = hi - lo

    @public_randomness("records of a public synthetic population (the sampler's oracle)")
    def draw(size: int, gen: np.random.Generator) -> np.ndarray:
        if kind == "uniform":
            x = gen.uniform(lo, hi, size=(size, d))
        elif kind == "gaussian":
            x = lo + width / 2 + gen.normal(scale=width / 6, size=(size, d))
        else:
            centre = np.where(gen.random((size, 1)) < 0.5, lo + width / 4, hi - width / 4)
            x = centre + gen.normal(scale=width / 20, size=(size, d))
        x = np.clip(x, lo, hi)
        if binary_label:
            x[:, -1] = gen.choice([-1.0, 1.0], size=size)
        return x

    return draw


@dataclass(frozen=True)
class DeliveredGamma:
    """Output of :func:`delivered_gamma`.

    Attributes
    ----------
    gamma_hat : float — fraction of the drawn pairs with ``G > Δ̂`` (failures count as exceeding).
    gamma_upper : float — one-sided Clopper–Pearson upper bound at level 1 − α.
    exceed : int ; n_pairs : int ; alpha : float
    """

    gamma_hat: float
    gamma_upper: float
    exceed: int
    n_pairs: int
    alpha: float

    def honours(self, gamma: float) -> bool:
        """True unless the population provably gets a larger γ than promised (lower bound > γ)."""
        lower, _ = clopper_pearson(np.array([self.exceed]), self.n_pairs, 2 * self.alpha)
        return float(lower[0]) <= gamma


def delivered_gamma(
    statistic: Callable[[Any], Any],
    population: Oracle,
    delta_hat: float,
    n: int,
    *,
    n_pairs: int = 1000,
    norm: Any = 1,
    alpha: float = 0.05,
    rng: RNGLike = None,
) -> DeliveredGamma:
    """The γ a declared population Q actually gets from a sampled sensitivity ``Δ̂``.

    Draws ``n_pairs`` neighbouring pairs ``(D, D′) ~ Q^{n+1}`` (Algorithm 1's construction, via
    :func:`dpcore.mechanisms.sensitivity.sampler.sample_sensitivity`), computes ``G = ‖f(D) −
    f(D′)‖`` and counts ``G > Δ̂``: an unbiased estimate of the RDP confidence γ delivered on Q,
    with an exact upper confidence bound. Compare it with the γ of the release.

    Parameters
    ----------
    statistic : callable
        ``f(D)``, as given to the sampler.
    population : callable
        The declared Q: ``(size, rng) -> records`` (e.g. :func:`population_sampler`).
    delta_hat : float
        The released sampled sensitivity.
    n : int
        Data-set size.
    n_pairs : int
        Pairs drawn (≥ 10).
    norm : 1, 2, inf or callable
        The norm the mechanism used.
    alpha : float
        Confidence of the bound.
    rng : None, int or Generator
    """
    from dpcore.mechanisms.sensitivity.sampler import sample_sensitivity

    n_pairs = int(n_pairs)
    if n_pairs < 10:
        raise ValueError(f"n_pairs must be ≥ 10, got {n_pairs}")
    if not (np.isfinite(delta_hat) and delta_hat >= 0):
        raise ValueError(f"delta_hat must be finite and ≥ 0, got {delta_hat!r}")
    res = sample_sensitivity(statistic, population, int(n), m=n_pairs, k=n_pairs, norm=norm,
                             rng=as_generator(rng))
    g = res.sensitivities
    exceed = int(np.sum(~(g <= delta_hat)))  # NaN (a failed evaluation) counts as exceeding
    _, upper = clopper_pearson(np.array([exceed]), n_pairs, 2 * alpha)
    return DeliveredGamma(exceed / n_pairs, float(upper[0]), exceed, n_pairs, float(alpha))
