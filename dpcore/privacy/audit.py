"""Privacy auditing: a statistical lower bound on ε from samples of a mechanism.

For neighbouring inputs D₀, D₁, an (ε, δ)-DP mechanism M satisfies, for every event E,
``P[M(D₀) ∈ E] ≤ e^ε P[M(D₁) ∈ E] + δ``. Any event whose two probabilities violate this proves the
claimed ε wrong. :func:`audit_epsilon` draws outputs on both inputs, reduces each to a scalar
statistic, chooses the most revealing threshold event ``{s > t}`` or ``{s ≤ t}`` (in either
direction D₀/D₁) on one half of the draws, and on the *other* half turns Clopper–Pearson
intervals into a one-sided lower bound

    ε_lower = ln((p̂₀,lower − δ) / p̂₁,upper),

valid with probability ≥ 1 − α. Choosing the event on held-out draws keeps the bound honest
(selection on the same draws would bias it upwards). A mechanism passes an audit at a claimed ε
when ``ε_lower ≤ ε``; a wrong sampler (too little noise, a wrong density) gives ``ε_lower > ε``.

This is the lower-bound style of Jagielski et al. (2020) and Ding et al. (2018); it can prove a
mechanism broken, never prove it private.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from dpcore.core.rng import RNGLike, as_generator

__all__ = ["AuditResult", "audit_epsilon", "clopper_pearson", "repeat"]

SampleFn = Callable[[Any, int, np.random.Generator], Any]


@dataclass(frozen=True)
class AuditResult:
    """Outcome of :func:`audit_epsilon`.

    Attributes
    ----------
    epsilon_lower : float
        Lower confidence bound on the mechanism's true ε (0 if nothing was found).
    event : str
        The event that gave the bound, e.g. ``"s <= 0.031 (D0 vs D1)"``.
    p_first, p_second : float
        Empirical probabilities of the event on the held-out draws (numerator, denominator).
    n_samples : int
        Draws per input (half of them choose the event, half evaluate it).
    alpha, delta : float
    """

    epsilon_lower: float
    event: str
    p_first: float
    p_second: float
    n_samples: int
    alpha: float
    delta: float

    def consistent_with(self, epsilon: float) -> bool:
        """True when the samples do not contradict a claim of ε (ε_lower ≤ ε)."""
        return self.epsilon_lower <= epsilon

    def __str__(self) -> str:
        return (
            f"ε ≥ {self.epsilon_lower:.3f} with confidence {1 - self.alpha:.0%} "
            f"(event {self.event}; p = {self.p_first:.4g} vs {self.p_second:.4g}, "
            f"{self.n_samples} draws per input)"
        )


def clopper_pearson(k: np.ndarray, n: int, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided exact binomial interval (Clopper & Pearson 1934) for k successes in n trials."""
    k = np.asarray(k, dtype=float)
    lower = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
    upper = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
    return lower, upper


def _statistic(outputs: Any, statistic: Callable[[np.ndarray], np.ndarray] | None) -> np.ndarray:
    arr = np.asarray(outputs, dtype=float)
    if statistic is not None:
        s = np.asarray(statistic(arr), dtype=float)
    elif arr.ndim == 1:
        s = arr
    else:
        s = arr.reshape(arr.shape[0], -1)[:, 0]
    if s.ndim != 1 or s.shape[0] != arr.shape[0]:
        raise ValueError("the statistic must map the draws to one scalar per draw")
    return s


def _event_counts(s: np.ndarray, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Counts of {s ≤ t} and {s > t} for every threshold t (one sort, vectorised)."""
    s_sorted = np.sort(s)
    le = np.searchsorted(s_sorted, thresholds, side="right")
    return le, s.size - le


def _log_ratio(num_lower: np.ndarray, den_upper: np.ndarray, delta: float) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(np.maximum(num_lower - delta, 0.0)) - np.log(den_upper)
    return np.where(np.isfinite(out), out, -np.inf)


def audit_epsilon(
    sample: SampleFn,
    d0: Any,
    d1: Any,
    *,
    n_samples: int = 100_000,
    statistic: Callable[[np.ndarray], np.ndarray] | None = None,
    delta: float = 0.0,
    alpha: float = 0.05,
    n_thresholds: int = 200,
    rng: RNGLike = None,
) -> AuditResult:
    """Lower-bound the ε of a mechanism from its outputs on two neighbouring inputs.

    Parameters
    ----------
    sample : callable ``(data, size, rng) -> array``
        Returns ``size`` independent outputs of the mechanism on ``data`` (first axis = draws).
        Wrap a one-draw mechanism with :func:`repeat`.
    d0, d1 : any
        Neighbouring inputs.
    n_samples : int
        Draws per input; half select the event, half evaluate it.
    statistic : callable, optional
        Maps the array of draws to one scalar per draw. Default: the output if 1-D, else its
        first coordinate.
    delta : float
        The mechanism's claimed δ (subtracted as the guarantee allows).
    alpha : float
        1 − confidence of the bound.
    n_thresholds : int
        Candidate thresholds (quantiles of the pooled selection draws).
    rng : None, int or Generator

    Returns
    -------
    AuditResult
    """
    if n_samples < 100:
        raise ValueError(f"n_samples must be at least 100, got {n_samples}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    gen = as_generator(rng)
    s0 = _statistic(sample(d0, n_samples, gen), statistic)
    s1 = _statistic(sample(d1, n_samples, gen), statistic)
    half = n_samples // 2
    sel0, ev0 = s0[:half], s0[half:]
    sel1, ev1 = s1[:half], s1[half:]

    thresholds = np.unique(
        np.quantile(np.concatenate([sel0, sel1]), np.linspace(0.0, 1.0, n_thresholds + 2)[1:-1])
    )
    # Candidate events: (kind, threshold index), evaluated for both directions D0/D1 and D1/D0.
    le0, gt0 = _event_counts(sel0, thresholds)
    le1, gt1 = _event_counts(sel1, thresholds)
    counts_sel = {"<=": (le0, le1), ">": (gt0, gt1)}
    best = (-np.inf, "<=", 0, 0)
    for kind, (c0, c1) in counts_sel.items():
        for direction, (a, b) in enumerate(((c0, c1), (c1, c0))):
            lo_a, _ = clopper_pearson(a, sel0.size, alpha)
            _, up_b = clopper_pearson(b, sel0.size, alpha)
            score = _log_ratio(lo_a, up_b, delta)
            i = int(np.argmax(score))
            if score[i] > best[0]:
                best = (float(score[i]), kind, i, direction)

    _, kind, i, direction = best
    t = thresholds[i]
    first, second = (ev0, ev1) if direction == 0 else (ev1, ev0)
    hit = (lambda s: s <= t) if kind == "<=" else (lambda s: s > t)
    k_first, k_second = int(hit(first).sum()), int(hit(second).sum())
    lo_first, _ = clopper_pearson(np.array([k_first]), first.size, alpha)
    _, up_second = clopper_pearson(np.array([k_second]), second.size, alpha)
    eps_lower = float(_log_ratio(lo_first, up_second, delta)[0])
    names = ("D0", "D1") if direction == 0 else ("D1", "D0")
    return AuditResult(
        epsilon_lower=max(eps_lower, 0.0) if math.isfinite(eps_lower) else 0.0,
        event=f"s {kind} {t:.4g} ({names[0]} vs {names[1]})",
        p_first=k_first / first.size,
        p_second=k_second / second.size,
        n_samples=n_samples,
        alpha=alpha,
        delta=delta,
    )


def repeat(mechanism: Callable[[Any, np.random.Generator], Any]) -> SampleFn:
    """Turn a one-draw ``mechanism(data, rng)`` into a ``sample(data, size, rng)`` function."""

    def sample(data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.asarray([mechanism(data, rng) for _ in range(size)])

    return sample
