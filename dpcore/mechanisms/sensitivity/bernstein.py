"""The Bernstein mechanism of the sensitivity-sampler paper (Rubinstein & Aldà 2017, §4.3; Aldà &
Rubinstein 2017): release a function F(D, ·) on [0, 1]^dims through noisy values on a lattice
and the (iterated) Bernstein polynomial basis. Split out of
:mod:`dpcore.mechanisms.sensitivity.sampler` (which re-exports every name) to keep modules small.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.core.rng import RNGLike
from dpcore.mechanisms.sensitivity.validation import _check_count

__all__ = [
    "BernsteinRelease",
    "bernstein_basis",
    "bernstein_design",
    "bernstein_lattice",
    "bernstein_mechanism",
    "bernstein_target",
]


def bernstein_basis(y: np.ndarray, lattice_k: int) -> np.ndarray:
    """Bernstein basis ``b_{ν,k}(y) = C(k,ν) y^ν (1−y)^{k−ν}`` as an array ``(len(y), k+1)``."""
    from scipy.stats import binom

    y = np.clip(np.asarray(y, dtype=float), 0.0, 1.0)
    return binom.pmf(np.arange(lattice_k + 1)[None, :], lattice_k, y[:, None])


def _iterated_operator(lattice_k: int, h: int) -> np.ndarray:
    """Coefficient map ``A_h = Σ_{i=1}^h C(h,i)(−1)^{i−1} T^{i−1}`` of iterated Bernstein.

    ``I − (I − B_k)^h`` (Micchelli; Aldà & Rubinstein 2017) applied to lattice values ``c`` is
    ``y ↦ b(y)ᵀ A_h c`` with ``T[j, ν] = b_{ν,k}(j/k)``; ``h = 1`` gives ``A_1 = I``.
    """
    t = bernstein_basis(np.arange(lattice_k + 1) / lattice_k, lattice_k)
    a = np.zeros_like(t)
    power = np.eye(lattice_k + 1)
    for i in range(1, h + 1):
        a += math.comb(h, i) * (-1) ** (i - 1) * power
        power = power @ t
    return a


def bernstein_design(y: Any, lattice_k: int, h: int = 1) -> np.ndarray:
    """Matrix ``(len(y), k+1)`` mapping 1-D lattice values to the released polynomial at ``y``.

    ``b(y)ᵀ A_h``: the Bernstein basis times the iterated-Bernstein coefficient map, so a release
    with lattice values ``c`` is ``bernstein_design(y, k, h) @ c``.
    """
    return bernstein_basis(np.ravel(y), lattice_k) @ _iterated_operator(lattice_k, h)


def bernstein_lattice(lattice_k: int, dims: int = 1) -> np.ndarray:
    """Lattice ``{0, 1/k, ..., 1}^ℓ`` in C order: ``(k+1,)`` for ℓ = 1, else ``((k+1)^ℓ, ℓ)``."""
    grid = np.linspace(0.0, 1.0, lattice_k + 1)
    if dims == 1:
        return grid
    mesh = np.meshgrid(*([grid] * dims), indexing="ij")
    return np.stack(mesh, axis=-1).reshape(-1, dims)


@dataclass(frozen=True, eq=False)
class BernsteinRelease:
    """A released (iterated) Bernstein polynomial on ``[0, 1]^ℓ`` (Corollary 14).

    Calling it evaluates the polynomial with the noisy lattice values as coefficients; a
    post-processing of the release, so it costs no further privacy.
    """

    coefficients: np.ndarray  # noisy lattice values, shape (k+1,)*dims
    lattice_k: int
    h: int = 1

    @property
    def dims(self) -> int:
        return self.coefficients.ndim

    def __call__(self, y: Any) -> np.ndarray:
        y = np.asarray(y, dtype=float)
        pts = y.reshape(-1, 1) if self.dims == 1 else y.reshape(-1, self.dims)
        # Tensor product of the 1-D operator along each axis, contracted one axis at a time.
        out = self.coefficients.reshape(1, *self.coefficients.shape)
        out = np.broadcast_to(out, (pts.shape[0], *self.coefficients.shape))
        for j in range(self.dims):
            phi = bernstein_design(pts[:, j], self.lattice_k, self.h)  # (N, k+1)
            out = np.einsum("nv,nv...->n...", phi, out)
        return out.reshape(y.shape[:-1] if self.dims > 1 else y.shape)


def bernstein_mechanism(
    lattice_values: Any,
    *,
    sensitivity: float,
    epsilon: float,
    lattice_k: int,
    dims: int = 1,
    h: int = 1,
    rng: RNGLike = None,
) -> BernsteinRelease:
    """Bernstein mechanism (Aldà & Rubinstein 2017; paper Corollary 14).

    Adds i.i.d. ``Lap(Δ (k+1)^ℓ / ε)`` to each of the ``(k+1)^ℓ`` lattice values of ``F(D, ·)``
    (in the C order of :func:`bernstein_lattice`): ε-DP when their L∞ sensitivity is at most
    ``Δ``. ``h`` (iterated-Bernstein order) only changes the post-processing.
    """
    from dpcore.privacy.noise import add_laplace

    lattice_k = _check_count(lattice_k, "lattice_k")
    dims = _check_count(dims, "dims")
    h = _check_count(h, "h")
    c = np.asarray(lattice_values, dtype=float)
    if c.size != (lattice_k + 1) ** dims:
        raise ValueError(
            f"the Bernstein mechanism needs the {(lattice_k + 1) ** dims} values of F(D, ·) on the "
            f"lattice {{0, 1/k, ..., 1}}^{dims} (k={lattice_k}), got {c.size} values"
        )
    c = c.reshape((lattice_k + 1,) * dims)
    scale = sensitivity * (lattice_k + 1) ** dims / epsilon
    noisy = add_laplace(c, scale, sensitivity=scale * epsilon, rng=rng)
    return BernsteinRelease(coefficients=noisy, lattice_k=lattice_k, h=h)


def bernstein_target(f: Callable, lattice: np.ndarray) -> Callable:
    """``D ↦ F(D, lattice)`` for an ``f`` returning a function on ``[0, 1]^ℓ``."""
    at_points = getattr(f, "at_points", None)
    if callable(at_points):
        return at_points(lattice)

    def on_lattice(d: Any) -> np.ndarray:
        return np.asarray(f(d)(lattice), dtype=float)

    return on_lattice
