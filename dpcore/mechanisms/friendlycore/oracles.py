"""Non-private clustering oracles for FC_Clustering, batched over the t parts.

FC_Clustering runs a non-private k-means on each of t disjoint parts (Sec. 5.2). Calling
scikit-learn t = 200 times costs more in per-call overhead than in arithmetic for the small parts
involved, so the default oracle runs k-means++ (greedy seeding with ``2 + ⌊ln k⌋`` local trials, as
scikit-learn does) and Lloyd iterations on all parts at once as (t, m, d) arrays, keeping the best
of ``n_init`` starts per part (scikit-learn's default until 1.4, the version the paper used, was
``n_init = 10``; a single start is much less stable across parts, which is what FriendlyCore needs).
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.privacy.noise import public_randomness

__all__ = ["batched_kmeans", "pca_oracle_batched", "sklearn_oracle"]


def _sq_dist(P: np.ndarray, C: np.ndarray, p_sq: np.ndarray | None = None) -> np.ndarray:
    """Batched squared distances: P (t, m, d), C (t, k, d) -> (t, m, k), clipped at 0."""
    D = np.matmul(P, C.transpose(0, 2, 1))
    D *= -2.0
    D += (np.einsum("tmd,tmd->tm", P, P) if p_sq is None else p_sq)[:, :, None]
    D += np.einsum("tkd,tkd->tk", C, C)[:, None, :]
    return np.maximum(D, 0.0, out=D)


@public_randomness("k-means++ seeding of the non-private oracle: its tuples reach the release "
                   "only through FriendlyCore's DP filter and averaging")
def _seed(P: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """Greedy k-means++ seeding on every part (Arthur & Vassilvitskii 2007; sklearn's variant)."""
    t, m, d = P.shape
    rows = np.arange(t)
    trials = 2 + int(math.log(k))
    C = np.empty((t, k, d))
    C[:, 0] = P[rows, rng.integers(m, size=t)]
    closest = _sq_dist(P, C[:, :1])[:, :, 0]
    for j in range(1, k):
        cum = np.cumsum(closest, axis=1)
        total = cum[:, -1:]
        u = rng.random((t, trials)) * total
        cand = np.minimum((cum[:, None, :] < u[:, :, None]).sum(-1), m - 1)  # (t, trials)
        cand_pts = P[rows[:, None], cand]  # (t, trials, d)
        dist_c = _sq_dist(P, cand_pts)  # (t, m, trials)
        new_closest = np.minimum(closest[:, :, None], dist_c)
        best = np.argmin(new_closest.sum(axis=1), axis=1)
        C[:, j] = cand_pts[rows, best]
        closest = new_closest[rows, :, best]
    return C


def _means(P: np.ndarray, labels: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-part cluster sums' means and counts via a one-hot BLAS product (np.add.at is slow)."""
    onehot = (labels[:, :, None] == np.arange(k)).astype(float)  # (t, m, k)
    counts = onehot.sum(axis=1)  # (t, k)
    sums = np.matmul(onehot.transpose(0, 2, 1), P)
    return sums / np.maximum(counts, 1.0)[:, :, None], counts


def _lloyd(
    P: np.ndarray, C: np.ndarray, max_iter: int, tol: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    k = C.shape[1]
    p_sq = np.einsum("tmd,tmd->tm", P, P)
    # Each part stops at its own convergence (frozen afterwards), exactly as if run alone: a
    # batch must not couple the parts (FC_Clustering's privacy needs tuple j to depend on part j
    # only).
    active = np.ones(P.shape[0], dtype=bool)
    for _ in range(max_iter):
        means, counts = _means(P, np.argmin(_sq_dist(P, C, p_sq), axis=2), k)
        new = np.where(counts[:, :, None] > 0, means, C)  # an empty cluster keeps its centre
        shift = np.einsum("tkd,tkd->t", new - C, new - C)
        C = np.where(active[:, None, None], new, C)
        active &= shift > tol
        if not active.any():
            break
    inertia = _sq_dist(P, C, p_sq).min(axis=2).sum(axis=1)
    return C, inertia


def batched_kmeans(
    P: np.ndarray,
    k: int,
    rng: np.random.Generator,
    *,
    n_init: int = 10,
    max_iter: int = 100,
    tol: float = 1e-4,
) -> np.ndarray:
    """k-means++ with Lloyd iterations on every part of ``P`` (t, m, d); best of ``n_init``.

    ``tol`` is relative to the mean per-coordinate variance of each part, as in scikit-learn.
    Returns (t, k, d) centres.
    """
    P = np.asarray(P, dtype=float)
    t = P.shape[0]
    tol_t = tol * P.var(axis=1).mean(axis=1)  # (t,)
    best_c, best_in = None, np.full(t, np.inf)
    for _ in range(n_init):
        C, inertia = _lloyd(P, _seed(P, k, rng), max_iter, tol_t)
        better = inertia < best_in
        best_c = C if best_c is None else np.where(better[:, None, None], C, best_c)
        best_in = np.minimum(best_in, inertia)
    return best_c


@public_randomness("random sketch of the non-private PCA oracle (its output reaches the release "
                   "only through FriendlyCore's DP steps)")
def _top_components(
    Pc: np.ndarray, k: int, rng: np.random.Generator, n_power: int = 3
) -> np.ndarray:
    """Top-k right singular vectors of every centred part, (t, k, d): randomized subspace
    iteration (Halko, Martinsson & Tropp 2011, Alg. 4.4) batched over the parts; exact SVD of
    the small projected matrices."""
    t, m, d = Pc.shape
    ell = min(k + 10, m, d)
    Q = np.linalg.qr(np.matmul(Pc, rng.standard_normal((t, d, ell))))[0]
    for _ in range(n_power):
        Z = np.linalg.qr(np.matmul(Pc.transpose(0, 2, 1), Q))[0]
        Q = np.linalg.qr(np.matmul(Pc, Z))[0]
    B = np.matmul(Q.transpose(0, 2, 1), Pc)  # (t, ell, d)
    return np.linalg.svd(B, full_matrices=False)[2][:, :k]


def pca_oracle_batched(P: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """PCA oracle of Fig. 7 left (footnote 5), on every part: project onto the top-k principal
    components, k-means++ there, map the labels back, one Lloyd step in the full space."""
    P = np.asarray(P, dtype=float)
    t, _, d = P.shape
    Pc = P - P.mean(axis=1, keepdims=True)
    V = _top_components(Pc, min(k, d), rng)  # (t, k', d)
    low = np.matmul(Pc, V.transpose(0, 2, 1))
    C_low = batched_kmeans(low, k, rng)
    labels = np.argmin(_sq_dist(low, C_low), axis=2)
    C = np.zeros((t, k, d))
    for _step in range(2):  # centres of the low-dim clustering, then one Lloyd step
        means, counts = _means(P, labels, k)
        C = np.where(counts[:, :, None] > 0, means, C)
        labels = np.argmin(_sq_dist(P, C), axis=2)
    return C


@public_randomness("seed of the non-private scikit-learn oracle (its output reaches the release "
                   "only through FriendlyCore's DP steps)")
def sklearn_oracle(X: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """scikit-learn ``KMeans`` (k-means++, ``n_init=10``) on one part: the paper's oracle."""
    from sklearn.cluster import KMeans

    seed = int(rng.integers(2**31 - 1))
    return KMeans(n_clusters=k, n_init=10, random_state=seed).fit(X).cluster_centers_
