"""Numerical helpers shared by the grid samplers: log(e^x − 1), an exact categorical draw and the
samplers' other random draws (each a grid point or a bit: selection, in the sense of
:mod:`dpcore.privacy.noise`)."""

from __future__ import annotations

import math

import numpy as np

from dpcore.privacy.noise import exponential_mechanism, selection_sampler


def _log_expm1(x: np.ndarray | float):
    """log(e^x − 1) for x > 0, stable for huge x (x + log1p(−e^{−x}) above 30)."""
    x = np.asarray(x, dtype=float)
    big = x > 30.0
    with np.errstate(divide="ignore"):
        small = np.log(np.expm1(np.where(big, 30.0, x)))
    return np.where(big, x + np.log1p(-np.exp(-np.where(big, x, 30.0))), small)


def _categorical(logits: np.ndarray, gen: np.random.Generator) -> int:
    """Index drawn with P ∝ exp(logits), by the package's one Gumbel-max sampler.

    ``exponential_mechanism`` with ε = 2 and sensitivity 1 has probabilities ∝ exp(score).
    """
    return int(exponential_mechanism(logits, 2.0, 1.0, rng=gen))


@selection_sampler("the grid samplers' uniform branch: a point of the grid {−M..M}^d")
def uniform_grid_point(M: int, d: int, gen: np.random.Generator) -> np.ndarray:
    """A uniform point of {−M, …, M}^d."""
    return gen.integers(-M, M + 1, size=d)


@selection_sampler("the grid samplers' proposal: a grid point of the cube of half-side w around "
                   "a uniform candidate point")
def cube_proposal(F: np.ndarray, n: int, w: int, d: int, gen: np.random.Generator) -> np.ndarray:
    """``F[p] + U{−w..w}^d`` for a uniform p < n."""
    p = int(gen.integers(n))
    return F[p] + gen.integers(-w, w + 1, size=d)


@selection_sampler("a uniform grid point of the box [lo, hi] (integer corners)")
def box_point(lo: np.ndarray, hi: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    return lo + gen.integers(0, hi - lo + 1)


@selection_sampler("the rejection step of the exact grid samplers: a bit, 1 with probability "
                   "exp(log_p)")
def accept(log_p: float, gen: np.random.Generator) -> bool:
    return math.log(gen.random()) < log_p


@selection_sampler("the two-stage samplers' branch: a bit, 1 with probability p")
def coin(p: float, gen: np.random.Generator) -> bool:
    return gen.random() < p


_HASH = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)


def _hash_rows(rows: np.ndarray) -> np.ndarray:
    """One uint64 per integer row (wrapping multiply-add; collisions only merge buckets)."""
    mult = _HASH[np.arange(rows.shape[1]) % 3] + 2 * np.arange(rows.shape[1], dtype=np.uint64)
    with np.errstate(over="ignore"):
        return (rows.astype(np.uint64) * mult).sum(axis=1, dtype=np.uint64)
