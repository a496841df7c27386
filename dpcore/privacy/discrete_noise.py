"""Exact integer noise samplers (Canonne, Kamath & Steinke, NeurIPS 2020, "The Discrete Gaussian
for Differential Privacy", Algorithms 1–3).

Every sampler here uses only exact integer and rational arithmetic (``fractions.Fraction``) on
uniform random integers, so the law of its output is *exactly* the stated discrete density — no
floating-point rounding anywhere, which is what makes the floating-point attack of Mironov
(CCS 2012) impossible: see :func:`dpcore.privacy.noise.defended_noise`.

* :func:`bernoulli_exp` — Bernoulli(exp(−γ)) for a rational γ ≥ 0 (CKS Alg. 1).
* :func:`discrete_laplace` — P(x) ∝ exp(−|x|/scale) on the integers (CKS Alg. 2).
* :func:`discrete_gaussian` — P(x) ∝ exp(−x²/(2σ²)) on the integers (CKS Alg. 3).

The uniform integers come from a :class:`random.Random` seeded from the caller's numpy
``Generator`` (one 63-bit draw per call), so the stream is reproducible under a seeded ``rng`` and
OS-random under ``rng=None``; ``Random.randrange`` is exact for arbitrarily large bounds.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np

from dpcore.core.rng import RNGLike, as_generator

__all__ = ["bernoulli_exp", "discrete_gaussian", "discrete_laplace", "integer_source"]


def integer_source(rng: RNGLike = None) -> random.Random:
    """An exact uniform-integer source seeded by one draw of ``rng``."""
    return random.Random(int(as_generator(rng).integers(0, 2**63 - 1)))


def _bern_exp(num: int, den: int, src: random.Random) -> bool:
    """Bernoulli(exp(−num/den)) on integers (no Fraction normalisation: the hot path)."""
    while num > den:  # exp(−γ) = exp(−1)^⌊γ⌋ · exp(−frac)
        if not _bern_exp(1, 1, src):
            return False
        num -= den
    k = 1  # CKS Alg. 1 for γ ∈ [0, 1]: K = first k with Bern(γ/k) = 0; output 1{K odd}
    while src.randrange(den * k) < num:
        k += 1
    return k % 2 == 1


def bernoulli_exp(gamma: Fraction, src: random.Random) -> bool:
    """Exactly Bernoulli(exp(−γ)) for rational γ ≥ 0 (CKS 2020, Algorithm 1)."""
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"gamma must be ≥ 0, got {gamma}")
    return _bern_exp(gamma.numerator, gamma.denominator, src)


def _one_laplace(s: int, t: int, src: random.Random) -> int:
    # CKS Alg. 2: X = U + tV is Geometric(1 − e^{−1/t}); Y = ⌊X/s⌋ is Geometric(1 − e^{−s/t}).
    while True:
        u = src.randrange(t)
        if not _bern_exp(u, t, src):
            continue
        v = 0
        while _bern_exp(1, 1, src):
            v += 1
        y = (u + t * v) // s
        negative = src.randrange(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def discrete_laplace(scale: Fraction | float, size: int, src: random.Random) -> np.ndarray:
    """``size`` i.i.d. draws with P(x) ∝ exp(−|x|/scale), x ∈ ℤ (exact; int64 array)."""
    scale = Fraction(scale)
    if scale <= 0:
        raise ValueError(f"scale must be > 0, got {scale}")
    t, s = scale.numerator, scale.denominator  # scale = t/s
    return np.fromiter((_one_laplace(s, t, src) for _ in range(int(size))), np.int64, int(size))


def _one_gaussian(sigma2: Fraction, t: int, src: random.Random) -> int:
    # CKS Alg. 3: propose discrete Laplace(t), accept w.p. exp(−(|y| − σ²/t)²/(2σ²)); with
    # σ² = p/q that exponent is (|y|·q·t − p)² / (2·p·q·t²), all integers.
    p, q = sigma2.numerator, sigma2.denominator
    den = 2 * p * q * t * t
    while True:
        y = _one_laplace(1, t, src)
        if _bern_exp((abs(y) * q * t - p) ** 2, den, src):
            return y


def discrete_gaussian(sigma2: Fraction | float, size: int, src: random.Random) -> np.ndarray:
    """``size`` i.i.d. draws with P(x) ∝ exp(−x²/(2σ²)), x ∈ ℤ, for σ² = ``sigma2`` (exact)."""
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma2 must be > 0, got {sigma2}")
    t = math.isqrt(sigma2.numerator // sigma2.denominator) + 1  # ⌊σ⌋ + 1
    return np.fromiter((_one_gaussian(sigma2, t, src) for _ in range(int(size))), np.int64,
                       int(size))
