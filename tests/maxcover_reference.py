"""Reference: max-cover's level sampler and candidate counts as they were (sort-based).

A verbatim copy of ``dpcore/mechanisms/maxcover/hybrid.py`` (``_CellIndex``, ``_HybridCover``)
and of ``noisy_candidate_counts`` at commit 1634afc, kept only so that
``tests/test_maxcover_scaling.py`` can check that the compiled rewrite (issue 23) draws exactly
the same candidates, counts and centres on fixed seeds (it must change the running time only).
Not imported by dpcore.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from dpcore.mechanisms.maxcover.ballpoints import ball_lattice_points, keys_fit
from dpcore.mechanisms.maxcover.grid import _within
from dpcore.mechanisms.maxcover.sampling import (
    _categorical,
    _hash_rows,
    _log_expm1,
    accept,
    coin,
    cube_proposal,
    uniform_grid_point,
)

#: Sparse mode when the expected number of O(n) envelope evaluations per level is below this
#: (one evaluation costs ~1/500 of building the level's incidences).
SPARSE_BUDGET = 256.0


class _CellIndex:
    """Points bucketed by hashed cells of side 2ρ: candidate lookup for a ball of radius ρ.

    A ball of radius ρ meets at most 2^{d'} such cells, so a lookup touches ≤ 2^{d'} buckets.
    ``max_bucket`` bounds the largest cell population (collisions only over-count).
    """

    def __init__(self, Y: np.ndarray, idx: np.ndarray, rho: float):
        self.side = 2.0 * rho
        self.d = Y.shape[1]
        keys = _hash_rows(np.floor(Y[idx] / self.side).astype(np.int64))
        order = np.argsort(keys, kind="stable")
        self.keys = keys[order]
        self.members = idx[order]
        self.max_bucket = 0
        if self.keys.size:
            bounds = np.flatnonzero(np.diff(self.keys)) + 1
            runs = np.diff(np.concatenate([[0], bounds, [self.keys.size]]))
            self.max_bucket = int(runs.max())
        corners = (np.arange(2**self.d)[:, None] >> np.arange(self.d)[None, :]) & 1
        self._corners = corners.astype(np.int64)

    def candidates(self, g: np.ndarray, rho: float) -> np.ndarray:
        lo = np.floor((g - rho) / self.side).astype(np.int64)
        hi = np.floor((g + rho) / self.side).astype(np.int64)
        cells = np.unique(lo + self._corners * (hi - lo), axis=0)
        k = _hash_rows(cells)
        left = np.searchsorted(self.keys, k, side="left")
        right = np.searchsorted(self.keys, k, side="right")
        if cells.shape[0] == 1:
            return self.members[left[0] : right[0]]
        return np.concatenate([self.members[a:b] for a, b in zip(left, right, strict=True)])


class _HybridCover:
    """One level's exact sampler and cover bookkeeping (sparse or dense mode, see module)."""

    def __init__(
        self,
        Y: np.ndarray,
        active: np.ndarray,
        rho: float,
        M: int,
        a: float,
        k_prime: int,
        mode: str = "auto",
    ):
        self.Y, self.active, self.rho, self.M, self.a = Y, active, rho, M, a
        self.d = Y.shape[1]
        self.log_n_grid = self.d * math.log(2 * M + 1)
        self.idx = np.flatnonzero(active)
        self.n_evaluations = 0
        self.n_proposals = 0
        self.work = 0
        if not self.idx.size:
            self.mode = "empty"
            return
        self.w = math.ceil(rho)
        self.cells = _CellIndex(Y, self.idx, rho)
        self.c_max = int(min(self.idx.size, 2**self.d * self.cells.max_bucket))
        self.log_h = float(_log_expm1(a * self.c_max)) - math.log(self.c_max)
        self.log_U = math.log(self.idx.size) + self.d * math.log(2 * self.w + 1) + self.log_h
        if mode == "auto":
            sparse = math.log(k_prime) + self.log_U <= math.log(SPARSE_BUDGET) + self.log_n_grid
            mode = "sparse" if sparse else "dense"
        self.mode = mode
        if mode == "sparse":
            self.F = np.floor(Y[self.idx]).astype(np.int64)  # stale: envelope stays valid
        elif mode == "dense":
            self._build_incidences()
        else:
            raise ValueError(f"mode must be 'auto', 'sparse' or 'dense', got {mode!r}")

    # ---------------------------------------------------------------- dense mode
    def _build_incidences(self) -> None:
        Ya = self.Y[self.idx]
        if keys_fit(self.M, self.d):
            pt, key = ball_lattice_points(Ya, self.rho, self.M, keys=True)
            self._cell_rows = None
        else:  # huge grid: distinct grid points by row (slower, rare in dense mode)
            pt, B = ball_lattice_points(Ya, self.rho, self.M)
            self._cell_rows, key = np.unique(B, axis=0, return_inverse=True)
            key = key.ravel()
        self.work += pt.size
        # one sort: incidences grouped by grid point give cell -> points and the cell ids
        order = np.argsort(key, kind="stable")
        sk = key[order]
        new = np.empty(sk.size, dtype=bool)
        new[:1] = True
        np.not_equal(sk[1:], sk[:-1], out=new[1:])
        ids = np.cumsum(new) - 1
        self._cell_keys = sk[new] if self._cell_rows is None else None
        n_cells = int(ids[-1]) + 1 if ids.size else 0
        cell = np.empty_like(ids)
        cell[order] = ids
        self._n_cells = n_cells
        self.counts = np.bincount(ids, minlength=n_cells).astype(np.int64)
        self._law = None
        # point -> cells (pt is non-decreasing: ball_lattice_points emits points in order)
        self._p_ptr = np.concatenate([[0], np.cumsum(np.bincount(pt, minlength=self.idx.size))])
        self._p_cells = cell
        # cell -> points
        self._c_ptr = np.concatenate([[0], np.cumsum(self.counts)])
        self._c_pts = self.idx[pt[order]]

    def _cell_of(self, b: np.ndarray) -> int | None:
        if np.any(np.abs(b) > self.M) or self._n_cells == 0:
            return None
        if self._cell_keys is not None:
            key = 0
            for j in range(self.d):
                key = key * (2 * self.M + 1) + int(b[j]) + self.M
            j = int(np.searchsorted(self._cell_keys, key))
            ok = j < self._cell_keys.size and self._cell_keys[j] == key
            return j if ok else None
        hit = np.flatnonzero(np.all(self._cell_rows == b, axis=1))
        return int(hit[0]) if hit.size else None

    def _decode(self, j: int) -> np.ndarray:
        if self._cell_keys is None:
            return self._cell_rows[j].copy()
        key, b = int(self._cell_keys[j]), np.empty(self.d, dtype=np.int64)
        for q in range(self.d - 1, -1, -1):
            key, b[q] = divmod(key, 2 * self.M + 1)
        return b - self.M

    # ---------------------------------------------------------------- public
    def cover_of(self, b: np.ndarray) -> np.ndarray:
        """Indices (into Y) of the uncovered points strictly within ρ of grid point b."""
        if self.mode == "empty":
            return np.empty(0, dtype=np.int64)
        if self.mode == "dense":
            j = self._cell_of(b)
            if j is None:
                return np.empty(0, dtype=np.int64)
            pts = self._c_pts[self._c_ptr[j] : self._c_ptr[j + 1]]
            return pts[self.active[pts]]
        cand = self.cells.candidates(b.astype(float), self.rho)
        cand = cand[self.active[cand]]
        return cand[_within(self.Y[cand], b, self.rho)]

    def remove(self, points: np.ndarray) -> None:
        """Account for covered points (the caller already cleared them in ``active``)."""
        if self.mode != "dense" or not points.size:
            return
        local = np.searchsorted(self.idx, points)
        starts, ends = self._p_ptr[local], self._p_ptr[local + 1]
        lens = ends - starts
        offs = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
        self.counts -= np.bincount(self._p_cells[offs], minlength=self._n_cells)
        self._law = None

    def draw(self, gen: np.random.Generator, max_proposals: int = 10**6) -> np.ndarray:
        """One exact draw from P(g) ∝ exp(a·c_g) over the whole grid."""
        if self.mode == "dense":
            return self._draw_dense(gen)
        for _ in range(max_proposals):
            self.n_proposals += 1
            if (
                self.mode == "empty"
                or _categorical(np.array([self.log_n_grid, self.log_U]), gen) == 0
            ):
                return uniform_grid_point(self.M, self.d, gen)
            b = cube_proposal(self.F, self.idx.size, self.w, self.d, gen)
            if np.any(np.abs(b) > self.M):
                continue
            n_cube = int(np.count_nonzero(np.all(np.abs(self.F - b) <= self.w, axis=1)))
            c = self.cover_of(b).size
            self.n_evaluations += 1
            self.work += self.idx.size
            log_u = self.log_h + math.log(n_cube)
            if c > 0 and accept(float(_log_expm1(self.a * c)) - log_u, gen):
                return b
        raise RuntimeError(  # P(reaching this) < (U/(|G|+U))^max_proposals: never in practice
            f"grid sampler exceeded max_proposals={max_proposals}"
        )

    def _draw_dense(self, gen: np.random.Generator) -> np.ndarray:
        self.n_proposals += 1
        if self._law is None:  # P_samp and P' of Claim 4.2, recomputed after each removal
            pos = np.flatnonzero(self.counts > 0)
            logits = _log_expm1(self.a * self.counts[pos])
            log_s = float(special.logsumexp(logits)) if pos.size else -math.inf
            p_samp = math.exp(log_s - np.logaddexp(log_s, self.log_n_grid))
            self._law = (pos, logits, p_samp)
        pos, logits, p_samp = self._law
        if pos.size:
            if coin(p_samp, gen):  # P' ∝ e(c_g) on populated grid points
                return self._decode(int(pos[_categorical(logits, gen)]))
        return uniform_grid_point(self.M, self.d, gen)


def noisy_candidate_counts(Y, C, eps_L, *, rng=None):
    """Algorithm 2, lines 13–17 as before: nearest candidate of every row by a dense product."""
    from dpcore.data.geometry import nearest_center
    from dpcore.privacy.noise import add_laplace

    lab, _ = nearest_center(Y, C)
    n_c = np.bincount(lab, minlength=C.shape[0])
    return add_laplace(n_c, 1.0 / eps_L, sensitivity=1.0, rng=rng)
