"""The privacy game (issue 25.3): students play the adversary against a DP row count.

The app holds two neighbouring tables, D (the data set, n rows) and D′ (D plus one student's
row, n + 1 rows), flips a fair coin, releases the project's ε-DP row count
(:func:`dpcore.mechanisms.bounds.private_row_count`: ``round(n + Lap(1/ε))``, the count the
release door spends to estimate n) of the chosen table, and the students guess which one it was.

What the game teaches is the hypothesis-testing reading of ε-DP (Kairouz, Oh & Viswanath 2015,
Thm 2.1; Wasserman & Zhou 2010): with a fair coin, **no** guesser — however clever — is right
with probability above ``e^ε / (1 + e^ε)``. For this mechanism the best guesser (the
likelihood-ratio test, :func:`optimal_guess`) reaches ``1 − e^{−ε/2}/2`` (:func:`optimal_rate`),
just under the bound; the page also shows the empirical ε that the project's audit
(:func:`dpcore.privacy.audit.audit_epsilon`) proves from draws of the same mechanism.

Explore mode only: the true n of D is shown (the game is about what one release reveals).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.mechanisms.bounds import private_row_count
from dpcore.privacy.audit import AuditResult, audit_epsilon, repeat

__all__ = ["Round", "audit_count", "bound", "bound_band", "optimal_guess", "optimal_rate",
           "play_round", "running_rate"]

#: Two-sided 95 % normal quantile of the band around the bound.
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Round:
    """One round: which table was used (0: D without the student, 1: D′ with), the release."""

    secret: int
    released: int


def play_round(n: int, epsilon: float, rng: RNGLike = None) -> Round:
    """Flip a fair coin for D (n rows) or D′ (n + 1 rows) and release its ε-DP row count."""
    gen = as_generator(rng)
    secret = int(gen.integers(2))
    released = private_row_count(int(n) + secret, epsilon=float(epsilon), rng=gen).value
    return Round(secret, int(released))


def optimal_guess(released: float, n: int) -> int:
    """The likelihood-ratio (Neyman–Pearson) test: D′ (1) iff the release is likelier under
    D′ than under D. The Laplace density ratio p(v | n+1)/p(v | n) is ≥ 1 exactly for v ≥ n + ½,
    i.e. for a rounded release ≥ n + 1 (ties at the midpoint cannot occur after rounding)."""
    return int(released >= int(n) + 1)


def bound(epsilon: float) -> float:
    """``e^ε / (1 + e^ε)``: the most any guesser can be right against an ε-DP release with a
    fair coin (Kairouz et al. 2015, Thm 2.1 with δ = 0)."""
    return 1.0 / (1.0 + math.exp(-float(epsilon)))


def optimal_rate(epsilon: float) -> float:
    """Success rate of :func:`optimal_guess` on the Laplace count: ``P(Lap(1/ε) ≤ ½)``
    = ``1 − e^{−ε/2}/2`` (rounding to integers does not change it)."""
    return 1.0 - 0.5 * math.exp(-0.5 * float(epsilon))


def bound_band(epsilon: float, rounds: int, z: float = Z95) -> tuple[float, float]:
    """95 % band of a guess rate over ``rounds`` rounds whose true rate is the bound (normal
    approximation to the binomial, clipped to [0, 1]): a rate above it is evidence against the
    guarantee; below it, a guesser weaker than the best possible."""
    b = bound(epsilon)
    half = z * math.sqrt(b * (1.0 - b) / max(int(rounds), 1))
    return max(b - half, 0.0), min(b + half, 1.0)


def running_rate(correct: np.ndarray) -> np.ndarray:
    """Share of correct guesses after each round (1-based cumulative mean)."""
    c = np.asarray(correct, dtype=float)
    return np.cumsum(c) / np.arange(1, c.size + 1)


def audit_count(n: int, epsilon: float, *, n_samples: int = 20_000,
                rng: RNGLike = None) -> AuditResult:
    """Empirical ε of the game's mechanism: :func:`dpcore.privacy.audit.audit_epsilon` on draws
    of the row count on D and D′ (a lower bound at 95 % confidence; never above the true ε
    except with probability 5 %)."""
    def once(count: int, gen: np.random.Generator) -> float:
        return float(private_row_count(count, epsilon=float(epsilon), rng=gen).value)

    return audit_epsilon(repeat(once), int(n), int(n) + 1, n_samples=int(n_samples),
                         rng=as_generator(rng))
