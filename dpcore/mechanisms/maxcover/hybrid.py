"""Exact exponential-mechanism sampler of one level in near-linear time (the default sampler).

Target (Claim 4.2): P(g) ∝ exp(a·c_g) over the whole grid G_i = {−M..M}^{d'} (lattice units),
a = ε_E/2, c_g = #uncovered points strictly within ρ of g. Write exp(a c) = 1 + e(c),
e(c) = expm1(a c), which is 0 on the (astronomically many) empty grid points. Each level picks
one of two exact implementations of the same law, by a public-looking but data-dependent cost
estimate (only the running time depends on the choice, never the output distribution):

* **sparse** (the fine levels, where |G| dwarfs every cover): rejection from the mixture of the
  uniform law on G (mass |G|, accepted as is: it is the "1" of every weight) and the envelope
  u(g) = h(c_max)·N(g) ≥ e(c_g), h(c) = e(c)/c increasing, N(g) = #{p : ‖⌊p⌋ − g‖_∞ ≤ w},
  w = ⌈ρ⌉ ≥ c_g, c_max ≥ max_g c_g (2^{d'} × the fullest cell of side 2ρ). Its mass is
  U = h(c_max)·n·(2w+1)^{d'}; a proposal is drawn as a uniform point p and a uniform g of its
  cube, and accepted with e(c_g)/u(g) (Gilks-free plain rejection: every accepted draw is exact).
  Used when k'·U ≤ budget·|G|, so the O(n) evaluations of rare envelope proposals stay cheap.
  The uncovered points are indexed by hashed cells of side 2ρ, so a pick's cover costs O(2^{d'}).
* **dense** (the last few levels): the exact incidence structure of the level, every
  (point, grid point) pair with ‖p − g‖ < ρ enumerated without waste and grouped by grid point
  in O(pairs) (:class:`dpcore.mechanisms.maxcover.kernels.BallIncidences`: a compiled walk and a
  radix sort; the pairs of :func:`~dpcore.mechanisms.maxcover.ballpoints.ball_lattice_points`),
  counts updated on removal,
  the non-uniform branch drawn from P' ∝ e(c_g) over populated grid points with mass S analytically
  against |G| (Claim 4.2).

Both need the grid's ball to hold few lattice points (ρ of order 1, i.e. a ``grid_stride``
s ≈ ρ_paper; the paper's own grid has ~7·10⁴ per ball in 5-d and uses the ``lazy`` sampler).
After all points are covered, every c_g = 0 and the law is uniform on G (the greedy keeps
picking: Algorithm 3 always makes its k' picks).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

from dpcore.mechanisms.maxcover.grid import _within
from dpcore.mechanisms.maxcover.kernels import BallIncidences, sort_rows
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
    ``max_bucket`` bounds the largest cell population (collisions only over-count). The keys
    are grouped by the compiled radix sort (:func:`~dpcore.mechanisms.maxcover.kernels.sort_rows`,
    O(n) a level).
    """

    def __init__(self, Y: np.ndarray, idx: np.ndarray, rho: float):
        self.side = 2.0 * rho
        self.d = Y.shape[1]
        keys = _hash_rows(np.floor(Y[idx] / self.side).astype(np.int64))
        order, sk = sort_rows(keys[:, None], [64])
        self.keys = sk[:, 0].view(np.uint64)
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
        # one hashing pass over the incidences (kernels.BallIncidences), grid points numbered
        # in lexicographic order, the order of the sort-based build (the exponential
        # mechanism's Gumbel draws follow it: same seeds, same picks)
        inc = self._inc = BallIncidences(self.Y[self.idx], self.rho, self.M)
        self.work += inc.p_cells.size
        self._n_cells = n_cells = inc.n_cells
        self.counts = np.bincount(inc.p_cells, minlength=n_cells).astype(np.int64)
        self._law = None
        # point -> cells and cell -> points (points increasing within a cell)
        self._p_ptr, self._p_cells = inc.p_ptr, inc.p_cells
        self._c_ptr, self._c_pts = inc.c_ptr, self.idx[inc.c_pts]

    def _cell_of(self, b: np.ndarray) -> int | None:
        return self._inc.cell_of(b)

    def _decode(self, j: int) -> np.ndarray:
        return self._inc.decode(j)

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
