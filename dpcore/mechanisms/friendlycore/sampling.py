"""Poisson subsampling in front of FC_Avg, with its amplification accounted (issue 12, defect 3).

The FriendlyCore page used to run FC_Avg on a fixed number of rows drawn without replacement.
Under add/remove neighbours that sample differs by a *substitution* whenever the extra row is
drawn, which FC_Avg's proof (add/remove) does not cover (ε = 1 became ≈ 1.12 near n). Poisson
sampling — every row kept independently with a public probability q — turns an add/remove
neighbour of the data into an add/remove neighbour of the sample (or the same sample), and
amplifies: if M is (ε, δ)-DP then M ∘ Poisson_q is (ln(1 + q(e^ε − 1)), q δ)-DP (Balle, Barthe &
Gaboardi, NeurIPS 2018, Thm 8; Li, Qardaji & Su 2012). :func:`inner_budget` inverts that map so a
release asked at (ε, δ) runs FC_Avg at the larger (ε_in, δ_in) and still delivers exactly (ε, δ).
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.core.rng import RNGLike
from dpcore.mechanisms.importance import poisson_sample
from dpcore.privacy.guarantees import ApproxDP

__all__ = ["amplified", "inner_budget", "poisson_rate", "poisson_rows"]


def poisson_rate(expected_size: float, n_public: int) -> float:
    """q = min(1, expected_size / n_public): a public rate (``n_public`` must be declared)."""
    if not (expected_size > 0 and n_public >= 1):
        raise ValueError(f"need expected_size > 0 and n_public ≥ 1, got {expected_size!r}, "
                         f"{n_public!r}")
    return min(1.0, float(expected_size) / float(n_public))


def poisson_rows(n_rows: int, rate: float, *, rng: RNGLike = None) -> np.ndarray:
    """Sorted indices of the rows kept, each independently with probability ``rate``."""
    return poisson_sample(np.full(int(n_rows), float(rate)), rng=rng)[0]


def amplified(epsilon: float, delta: float, rate: float) -> ApproxDP:
    """(ln(1 + q(e^ε − 1)), qδ): the guarantee of an (ε, δ)-DP mechanism on a Poisson(q) sample."""
    if not 0 < rate <= 1:
        raise ValueError(f"rate must be in (0, 1], got {rate!r}")
    return ApproxDP(math.log1p(rate * math.expm1(epsilon)), rate * delta)


def inner_budget(epsilon: float, delta: float, rate: float) -> tuple[float, float]:
    """(ε_in, δ_in) whose amplification at ``rate`` is (ε, δ): ε_in = ln(1 + (e^ε − 1)/q), δ/q."""
    if not 0 < rate <= 1:
        raise ValueError(f"rate must be in (0, 1], got {rate!r}")
    eps_in = math.log1p(math.expm1(epsilon) / rate)
    delta_in = delta / rate
    if not delta_in < 1:
        raise ValueError(f"delta / rate = {delta_in:g} must be < 1: raise the sample rate or "
                         "lower delta")
    return eps_in, delta_in
