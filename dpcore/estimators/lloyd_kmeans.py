"""Non-private k-means that a dashboard Stop button can interrupt: the reference baseline.

scikit-learn's ``KMeans`` runs its Lloyd loop in compiled code with no hook, so a Stop pressed
during a fit on 500k rows was honoured only ~110 s later (issue 25). :class:`LloydKMeans` is
the same algorithm — k-means++ seeding (Arthur & Vassilvitskii 2007) and Lloyd's iterations
(Lloyd 1982) — written as a numpy loop that calls :func:`dpcore.core.cancel.checkpoint` between
row chunks, so a cancelled run stops within one chunk (a few milliseconds).

Affordable on large tables: one initialisation (``n_init=1``), and the k-means++ seeding runs on
a seeded uniform sample of at most ``init_sample`` rows (the Lloyd iterations then use every
row). It is **not private**: it reads the data exactly and is never released (registry row
``kmeans``, guarantee "none"); it is the yardstick the DP algorithms' costs are divided by.
"""

from __future__ import annotations

import numpy as np

from dpcore.core.cancel import checkpoint
from dpcore.core.rng import RNGLike, as_generator

__all__ = ["LloydKMeans", "kmeans_pp", "nearest_centre"]

#: Rows per assignment step between two cancellation checkpoints (~2 MB of distances at k = 5).
CHUNK_ROWS = 65_536


def _sq_dists(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances ``‖x − c‖²`` (rows × centres), clipped at 0 (rounding)."""
    d = (X * X).sum(1)[:, None] - 2.0 * X @ C.T + (C * C).sum(1)[None, :]
    return np.maximum(d, 0.0)


def nearest_centre(X: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Index of the nearest row of ``C`` for each row of ``X`` (chunked: bounded memory, and a
    Stop is honoured between chunks)."""
    return _assign(np.asarray(X, dtype=float), np.atleast_2d(np.asarray(C, dtype=float)))[0]


def _assign(X: np.ndarray, C: np.ndarray) -> tuple[np.ndarray, float]:
    """Nearest-centre labels and the inertia (sum of squared distances to them)."""
    labels = np.empty(X.shape[0], dtype=np.intp)
    inertia = 0.0
    for s in range(0, X.shape[0], CHUNK_ROWS):
        checkpoint()  # Stop is honoured between chunks
        d = _sq_dists(X[s:s + CHUNK_ROWS], C)
        lab = d.argmin(1)
        labels[s:s + CHUNK_ROWS] = lab
        inertia += float(d[np.arange(lab.size), lab].sum())
    return labels, inertia


def kmeans_pp(X: np.ndarray, k: int, gen: np.random.Generator) -> np.ndarray:
    """Greedy k-means++ seeding (Arthur & Vassilvitskii 2007, Sec. 6; scikit-learn's default):
    each next centre is the best, by the resulting potential, of ``2 + ln k`` rows drawn with
    probability ∝ their squared distance to the nearest centre so far."""
    n = X.shape[0]
    trials = 2 + int(np.log(k))
    centres = [X[int(gen.integers(n))]]
    closest = _sq_dists(X, centres[0][None, :])[:, 0]
    for _ in range(1, k):
        total = closest.sum()
        if total <= 0:  # fewer distinct rows than k: any row
            cand = gen.integers(n, size=trials)
        else:
            cand = gen.choice(n, size=trials, p=closest / total)
        new = np.minimum(closest[None, :], _sq_dists(X, X[cand]).T)  # trials × n
        best = int(new.sum(1).argmin())
        centres.append(X[cand[best]])
        closest = new[best]
    return np.array(centres, dtype=float)


class LloydKMeans:
    """Non-private k-means (k-means++ on a sample, then Lloyd on all rows), stoppable.

    Parameters
    ----------
    n_clusters : int
    n_init : int
        Independent seedings; the one with the least inertia is kept (1: affordable at 500k).
    max_iter : int
        Most Lloyd iterations per seeding.
    tol : float
        Stop when no centre moved more than ``tol`` × the data's mean per-column variance (as
        scikit-learn's ``tol``).
    init_sample : int
        The k-means++ seeding runs on a seeded sample of at most this many rows.
    random_state : None, int or Generator
        Seeds the sample and the seeding.

    Attributes
    ----------
    cluster_centers_ : (k, d) array
    labels_ : (n,) int array
    inertia_ : float
        Sum of squared distances to the nearest centre.
    n_iter_ : int
    """

    def __init__(self, n_clusters: int = 8, *, n_init: int = 1, max_iter: int = 100,
                 tol: float = 1e-4, init_sample: int = 20_000,
                 random_state: RNGLike = None) -> None:
        self.n_clusters = n_clusters
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.init_sample = init_sample
        self.random_state = random_state

    def _lloyd(self, X: np.ndarray, C: np.ndarray, tol: float, run: int) -> tuple:
        k = C.shape[0]
        it = 0
        for it in range(1, int(self.max_iter) + 1):
            checkpoint(min((run + it / self.max_iter) / self.n_init, 1.0),
                       f"k-means iteration {it}")
            labels, _ = _assign(X, C)
            counts = np.bincount(labels, minlength=k).astype(float)
            sums = np.stack([np.bincount(labels, weights=X[:, j], minlength=k)
                             for j in range(X.shape[1])], axis=1)
            new = np.where(counts[:, None] > 0, sums / np.maximum(counts, 1.0)[:, None], C)
            shift = float(((new - C) ** 2).sum(1).max())
            C = new
            if shift <= tol:
                break
        labels, inertia = _assign(X, C)
        return C, labels, inertia, it

    def fit(self, X, y=None) -> LloydKMeans:
        """Seed on a sample, iterate Lloyd on every row; keep the best of ``n_init`` seedings."""
        del y
        X = np.ascontiguousarray(np.asarray(X, dtype=float))
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D array, got shape {X.shape}")
        k = int(self.n_clusters)
        if not 1 <= k <= X.shape[0]:
            raise ValueError(f"n_clusters must be between 1 and the number of rows "
                             f"({X.shape[0]}), got {self.n_clusters}")
        gen = as_generator(self.random_state)
        tol = float(self.tol) * float(X.var(0).mean())
        best = None
        for run in range(max(int(self.n_init), 1)):
            m = min(X.shape[0], int(self.init_sample))
            S = X if m == X.shape[0] else X[gen.choice(X.shape[0], m, replace=False)]
            out = self._lloyd(X, kmeans_pp(S, k, gen), tol, run)
            if best is None or out[2] < best[2]:
                best = out
        self.cluster_centers_, self.labels_, self.inertia_, self.n_iter_ = best
        return self

    def predict(self, X) -> np.ndarray:
        """Index of the nearest centre of each row."""
        return nearest_centre(X, self.cluster_centers_)
