"""Algorithm 2, lines 13–18: the proxy data set D'' (nearest candidate, Laplace counts, pruning)."""

from __future__ import annotations

import math

import numpy as np
from scipy.spatial import cKDTree

from dpcore.core.rng import RNGLike
from dpcore.data.geometry import nearest_center
from dpcore.privacy.noise import add_laplace

#: Rows whose two nearest candidates' squared distances differ by at most this (the unit ball's
#: scale) are decided by :func:`dpcore.data.geometry.nearest_center`'s own arithmetic: the
#: tree's distances and that formula's differ by ~1e-15, so elsewhere both pick the same one.
TIE_MARGIN = 1e-9


def nearest_candidate(Y: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Index of the nearest row of C for every row of Y: ``nearest_center(Y, C)[0]`` in
    O(n log |C|) instead of O(n·|C|).

    |C| = m·k' grows with log n (≈ 1,600 candidates at n = 5·10⁵), so the dense product of
    :func:`~dpcore.data.geometry.nearest_center` was a third of a fit. A k-d tree on C (d' ≤ ~7
    dimensions) finds the two nearest; near-ties (gap ≤ :data:`TIE_MARGIN`) are recomputed with
    ``nearest_center`` so the labels are its labels (first index on exact ties).
    """
    Y = np.asarray(Y, dtype=float)
    C = np.asarray(C, dtype=float)
    if C.shape[0] < 2 or Y.shape[0] == 0:
        return nearest_center(Y, C)[0] if Y.shape[0] else np.empty(0, np.int64)
    dist, lab = cKDTree(C).query(Y, k=2)
    tie = dist[:, 1] ** 2 - dist[:, 0] ** 2 <= TIE_MARGIN
    lab = lab[:, 0].astype(np.int64)
    if np.any(tie):
        lab[tie] = nearest_center(Y[tie], C)[0]
    return lab


def noisy_candidate_counts(
    Y: np.ndarray, C: np.ndarray, eps_L: float, *, rng: RNGLike = None
) -> np.ndarray:
    """Algorithm 2, lines 13–17: n'_c = n_c + Lap(1/ε_L), n_c = #points of the full D' nearest c.

    The count vector has ℓ1 sensitivity 1 under add/remove (proof of Theorem 6.1), so this is
    ε_L-DP. Noise is added to every candidate, including those with n_c = 0.
    """
    n_c = np.bincount(nearest_candidate(Y, C), minlength=C.shape[0])
    return add_laplace(n_c, 1.0 / eps_L, sensitivity=1.0, rng=rng)


def prune_proxy_weights(w: np.ndarray, k: int, eps_L: float) -> np.ndarray:
    """Zero the noisy counts n'_c ≤ τ = ln|C|/ε_L (post-processing of line 17; no privacy cost).

    Most candidates are uniform draws far from the data (the EM's uniform branch) with n_c = 0;
    their Lap(1/ε_L) counts put ≈ |C|/(2ε_L) spurious mass into D'', uniformly spread, which
    pulls Lloyd's centres (line 19) away from the data. An empty candidate exceeds τ with
    probability e^{−ε_L τ}/2 = 1/(2|C|), so ≤ 1/2 of them survive in expectation. If fewer
    than k candidates pass, the k largest noisy counts are kept.
    """
    if w.size == 0:
        return w
    tau = math.log(max(w.size, 2)) / eps_L
    keep = w > tau
    if keep.sum() < k:
        keep = np.zeros(w.size, dtype=bool)
        keep[np.argsort(-w, kind="stable")[:k]] = True
        keep &= w > 0
    return np.where(keep, w, 0.0)
