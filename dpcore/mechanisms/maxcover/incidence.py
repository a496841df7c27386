"""The explicit (point, grid point) incidence structure of one level (spec §5.3, Claim 4.2)."""

from __future__ import annotations

import math

import numpy as np
from scipy import sparse, special

from dpcore.mechanisms.maxcover.grid import _within
from dpcore.mechanisms.maxcover.sampling import _categorical, coin, uniform_grid_point


class _IncidenceCover:
    """Explicit cover structure of one level (spec §5.3): every (point, grid point) incidence.

    Built with the offsets of Claim 4.1; after a pick the counts of every grid point incident to
    a removed point are decremented (equivalent to recomputing cover, lines 3–17).
    """

    def __init__(self, Y: np.ndarray, rho: float, M: int, V_signed: np.ndarray, max_inc: int):
        n, d = Y.shape
        self.d, self.M = d, M
        if n * V_signed.shape[0] > max_inc:
            raise ValueError(
                f"sampler='incidence' would check {n * V_signed.shape[0]:.3g} (point, grid point) "
                f"pairs at this level (limit {max_inc:.3g}); use sampler='lazy' (same output "
                "distribution) or a larger grid_stride"
            )
        F = np.floor(Y).astype(np.int64)
        B = F[:, None, :] + V_signed[None, :, :]  # candidates f + s + (2s−1)v
        ok = _within(Y[:, None, :], B, rho) & np.all(np.abs(B) <= M, axis=2)
        pt, which = np.nonzero(ok)
        # distinct grid points by row (a mixed-radix int64 key would overflow for (2M+1)^{d'})
        self.cells, cell = np.unique(B[pt, which], axis=0, return_inverse=True)
        self.cell = cell.ravel()
        self._index = {tuple(r): j for j, r in enumerate(self.cells.tolist())}
        # cell -> points (CSR over cells) and point -> cells (CSR over points)
        self.c2p = sparse.csr_matrix(
            (np.ones(pt.size, dtype=np.int32), (self.cell, pt)), shape=(len(self.cells), n)
        )
        self.p2c = self.c2p.T.tocsr()
        self.counts = np.asarray(self.c2p.sum(axis=1)).ravel().astype(np.int64)

    def cover_of(self, b: np.ndarray, active: np.ndarray) -> np.ndarray:
        j = self._index.get(tuple(int(x) for x in b))
        if j is None:
            return np.empty(0, dtype=np.int64)
        row = self.c2p.indices[self.c2p.indptr[j] : self.c2p.indptr[j + 1]]
        return row[active[row]]

    def decode(self, j: int) -> np.ndarray:
        return self.cells[j].copy()

    def remove(self, points: np.ndarray) -> None:
        if points.size:
            cells = self.p2c[points].indices
            self.counts -= np.bincount(cells, minlength=len(self.cells))

    def draw(self, a: float, log_n_grid: float, gen: np.random.Generator) -> np.ndarray:
        """One draw of Claim 4.2's two-stage sampler (exact P(g) ∝ exp(a·c_g) over G_i)."""
        pos = self.counts > 0
        p_samp = 0.0
        if np.any(pos):
            c = self.counts[pos]
            logits = a * c + np.log1p(-np.exp(-a * c))  # log(exp(a c) − 1)
            log_s = float(special.logsumexp(logits))
            p_samp = math.exp(log_s - np.logaddexp(log_s, log_n_grid))  # 1 − |G|/totalCover
        if coin(p_samp, gen):  # P' ∝ exp(a c_g) − 1 on populated cells
            return self.decode(int(np.flatnonzero(pos)[_categorical(logits, gen)]))
        # uniform over all of G_i (may hit a populated cell; line 31 then removes its cover)
        return uniform_grid_point(self.M, self.d, gen)
