"""Distance kernels shared by every clustering algorithm: norms, nearest centres, ball clipping.

Squared distances use ‖x‖² − 2x·c + ‖c‖² so the heavy part is one BLAS matrix product; nearest
centres are found in row blocks so memory stays bounded (never an n × k matrix for huge n).

Overflow: a plain ``Σ x²`` overflows for entries above ~1.3e154, and a norm of ``inf`` silently
clips a row to zero (r / inf = 0). :func:`row_norms` is exact for every finite row (rows whose
squared sum over- or underflows are recomputed scaled by their largest entry); squared norms and
squared distances that are not representable raise a :class:`~dpcore.data.limits.ParameterError`
instead of returning ``inf``/``nan`` garbage. :mod:`dpcore.data.limits` keeps inputs far below these
limits (``|x| ≤ 1e100``); these kernels stay correct even when called directly.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpcore.core.errors import ParameterError

__all__ = ["DeclaredGeometry", "box_geometry", "clip_to_ball", "nearest_center", "overflow_error",
           "row_norms", "squared_distances"]

# Blocks of at most 4096 rows and 4 MiB of distances: cache-sized blocks measured 2.5x faster
# than 32 MiB ones on Covertype (566k x 54, k = 25).
_BLOCK_ROWS = 4096
_BLOCK_BYTES = 4 * 2**20


def overflow_error(what: str) -> ParameterError:
    """The error for squared norms or distances beyond the float64 range (data too large)."""
    return ParameterError(
        "data", f"{what} exceed the float64 range (values above about 1e154); rescale the data "
        "(e.g. divide by a power of ten) — dpcore supports |value| ≤ 1e100")


def row_norms(X: np.ndarray, squared: bool = False) -> np.ndarray:
    """Euclidean norm of each row (``squared=True``: the squared norm, without a sqrt).

    Exact for every finite row: rows whose ``Σ x²`` overflows (entries ≳ 1.3e154) or underflows
    to 0 (entries ≲ 1e-154) are recomputed as ``s·‖x/s‖`` with ``s = max |x|``. Rows holding NaN
    or ±inf give NaN / inf as usual.

    Raises
    ------
    ParameterError
        ``squared=True`` and a finite row's squared norm is beyond the float64 range.
    """
    X = np.asarray(X, dtype=float)
    sq = np.einsum("ij,ij->i", X, X)
    # Cheap test on the (n,) result: only rows that over- or underflowed are redone.
    suspect = ~(sq < 1e300) | (sq < 1e-290)
    if not suspect.any():
        return sq if squared else np.sqrt(sq)
    idx = np.flatnonzero(suspect)
    rows = X[idx]
    scale = np.max(np.abs(rows), axis=1)
    fine = np.isfinite(scale) & (scale > 0)
    safe = np.where(fine, scale, 1.0)
    scaled = rows / safe[:, None]
    norms = np.where(fine, safe * np.sqrt(np.einsum("ij,ij->i", scaled, scaled)), np.sqrt(sq[idx]))
    if squared:
        with np.errstate(over="ignore"):
            redo = norms * norms
        if np.isinf(redo[fine]).any():
            raise overflow_error("squared row norms")
        sq = sq.copy()
        sq[idx] = redo
        return sq
    out = np.sqrt(sq)
    out[idx] = norms
    return out


def squared_distances(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Matrix of squared Euclidean distances ‖x_i − c_j‖², shape (n, k), clipped at 0.

    Raises :class:`~dpcore.data.limits.ParameterError` when finite inputs give distances beyond the
    float64 range (never ``inf``/``nan`` entries from finite data).
    """
    X = np.asarray(X, dtype=float)
    C = np.asarray(C, dtype=float)
    x_sq, c_sq = row_norms(X, squared=True), row_norms(C, squared=True)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected below
        D = X @ C.T
        D *= -2.0
        D += x_sq[:, None]
        D += c_sq[None, :]
    np.maximum(D, 0.0, out=D)
    if not np.isfinite(D).all() and np.isfinite(X).all() and np.isfinite(C).all():
        raise overflow_error("squared distances")
    return D


def nearest_center(
    X: np.ndarray,
    C: np.ndarray,
    *,
    x_sq: np.ndarray | None = None,
    block_rows: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Index of the nearest centre for each row, and the squared distance to it.

    Parameters
    ----------
    X : (n, d) array
    C : (k, d) array
    x_sq : (n,) array, optional
        Precomputed ``row_norms(X, squared=True)`` (saves a pass when called every iteration).
    block_rows : int, optional
        Rows per block; by default 4096, fewer when k is so large that a block would exceed
        4 MiB of distances.

    Returns
    -------
    labels : (n,) int64
    sq_dist : (n,) float64, ≥ 0
    """
    X = np.asarray(X, dtype=float)
    C = np.asarray(C, dtype=float)
    if X.ndim != 2 or C.ndim != 2 or X.shape[1] != C.shape[1]:
        raise ValueError(f"X (n, d) and C (k, d) must agree in d, got {X.shape} and {C.shape}")
    n, k = X.shape[0], C.shape[0]
    if k == 0:
        raise ValueError("need at least one centre")
    if x_sq is None:
        x_sq = row_norms(X, squared=True)
    c_sq = row_norms(C, squared=True)
    if block_rows is None:
        block_rows = max(256, min(_BLOCK_ROWS, _BLOCK_BYTES // (8 * k)))
    labels = np.empty(n, dtype=np.int64)
    sq_dist = np.empty(n, dtype=float)
    neg2_ct = -2.0 * C.T
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is detected below
        for start in range(0, n, block_rows):
            stop = min(start + block_rows, n)
            D = X[start:stop] @ neg2_ct
            D += c_sq
            lab = np.argmin(D, axis=1)
            labels[start:stop] = lab
            sq_dist[start:stop] = D[np.arange(stop - start), lab] + x_sq[start:stop]
    np.maximum(sq_dist, 0.0, out=sq_dist)
    if not np.isfinite(sq_dist).all() and np.isfinite(c_sq).all() and np.isfinite(x_sq).all():
        raise overflow_error("squared distances")
    return labels, sq_dist


def clip_to_ball(X: np.ndarray, radius: float, *, return_count: bool = False):
    """Scale every row with ‖x‖₂ > radius down onto the sphere of that radius.

    This is the one norm-clipping routine of dpcore: data clipping to a declared radius and
    post-processing of noisy centres both use it. Norms are exact for every finite row
    (:func:`row_norms`), so a huge row is scaled onto the sphere, never to zero.

    Returns
    -------
    X_clipped : ndarray
        A new array when some row was clipped; **the input itself** (as a float64 array, no
        copy) when none was: a 506 MiB saving on MNIST. Do not modify it in place.
    n_clipped : int
        Only with ``return_count=True``: how many rows were scaled.
    """
    radius = float(radius)
    if not math.isfinite(radius) or radius <= 0:
        raise ValueError(f"radius must be finite and > 0, got {radius!r}")
    X = np.asarray(X, dtype=float)
    one_d = X.ndim == 1
    M = X[None, :] if one_d else X
    norms = row_norms(M)
    over = norms > radius
    n_over = int(np.count_nonzero(over))
    if n_over:
        M = M.copy()
        # radius / norm in (0, 1): finite for every finite row since the norm is exact
        M[over] *= (radius / norms[over])[:, None]
    out = M[0] if one_d else M
    return (out, n_over) if return_count else out


@dataclass(frozen=True)
class DeclaredGeometry:
    """Public centre and radius of the data, as the privacy proofs assume them."""

    center: tuple[float, ...]
    radius: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.radius) and self.radius > 0):
            raise ValueError(f"radius must be finite and > 0, got {self.radius!r}")
        if not all(math.isfinite(c) for c in self.center):
            raise ValueError(f"centre must be finite, got {self.center!r}")


def box_geometry(bounds: Sequence[tuple[float, float]]) -> DeclaredGeometry:
    """Centre and radius of the smallest ball around a box of public per-column bounds.

    E.g. longitude ∈ [-180, 180], latitude ∈ [-90, 90] give centre (0, 0) and radius
    √(180² + 90²) ≈ 201.2: public knowledge, so no privacy is spent on it.
    """
    lo = np.array([b[0] for b in bounds], dtype=float)
    hi = np.array([b[1] for b in bounds], dtype=float)
    if np.any(hi <= lo):
        raise ValueError(f"every bound needs lower < upper, got {list(bounds)!r}")
    return DeclaredGeometry(tuple((lo + hi) / 2), float(np.linalg.norm((hi - lo) / 2)))
