"""Numerical helpers shared by the grid samplers: log(e^x − 1) and an exact categorical draw."""

from __future__ import annotations

import numpy as np

from dpcore.privacy.noise import exponential_mechanism


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


_HASH = np.array([0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9], dtype=np.uint64)


def _hash_rows(rows: np.ndarray) -> np.ndarray:
    """One uint64 per integer row (wrapping multiply-add; collisions only merge buckets)."""
    mult = _HASH[np.arange(rows.shape[1]) % 3] + 2 * np.arange(rows.shape[1], dtype=np.uint64)
    with np.errstate(over="ignore"):
        return (rows.astype(np.uint64) * mult).sum(axis=1, dtype=np.uint64)
