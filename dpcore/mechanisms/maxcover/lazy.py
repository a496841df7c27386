"""Exact exponential-mechanism sampler over the paper's full grid by adaptive rejection."""

from __future__ import annotations

import math

import numpy as np
from scipy import special
from scipy.spatial import cKDTree

from dpcore.mechanisms.maxcover.grid import _within
from dpcore.mechanisms.maxcover.sampling import (
    _categorical,
    _hash_rows,
    _log_expm1,
    accept,
    box_point,
    cube_proposal,
    uniform_grid_point,
)


def _max_run(rows: np.ndarray) -> int:
    """An upper bound on the largest multiplicity of a row of an integer array.

    Rows are hashed to one uint64 (wrapping multiply-add); a collision can only merge buckets,
    so the largest bucket is ≥ the largest true multiplicity (an upper bound is all we need).
    """
    return int(np.unique(_hash_rows(rows), return_counts=True)[1].max())


class _LazyCover:
    """Exact sampler of the non-uniform branch by adaptive rejection from an upper envelope.

    Target excess weight of grid point g: e(g) = expm1(a·c_g) (zero for empty cells). The
    envelope u(g) ≥ e(g) is a list of nodes, each with a known total mass and a way to draw from
    it; a proposal g from node j is accepted with probability e(g)/u(g), the exact cover c_g being
    computed only for that one g. A rejected node is replaced by tighter ones (Gilks-style
    adaptive rejection: every accepted draw is exact whatever the history). Upper bounds stay
    valid when points are removed (counts only decrease), so the envelope is kept across the k'
    picks of a level. Node kinds:

    * ``global``: u(g) = h(c_max)·#{p : ‖⌊p⌋ − g‖_∞ ≤ w}, h(c) = expm1(a c)/c increasing,
      c_max ≥ max_g c_g (2^{d'} × the fullest cell of side 2ρ), w = ⌈ρ⌉. Drawn by a uniform
      point p and a uniform g in its cube. Mass n·(2w+1)^{d'}·h(c_max): negligible at the
      fine levels, where it makes a level cost one k-d tree.
    * ``box``: lattice box [lo, hi] with B = #points within ρ + half-diagonal of its centre;
      u(g) = expm1(a B). Split in two when rejected, turned into a block when small.
    * ``block``: ≤ ``block_size`` grid points with per-point bounds (k-d tree counts with a
      radius inflated by 1e-9, so they bound the exact strict count).
    """

    block_size = 1024

    def __init__(self, Y: np.ndarray, active: np.ndarray, rho: float, M: int, a: float):
        self.Y, self.active, self.rho, self.M, self.a = Y, active, rho, M, a
        self.d = Y.shape[1]
        self.w = math.ceil(rho)
        self.r_up = rho * (1 + 1e-9) + 1e-9
        self.n_evaluations = 0
        self.work = 0  # points counted by k-d tree queries (what the time is spent on)
        self.n_proposals = 0
        self.nodes: list[tuple | None] = []  # removed nodes become None (indices stay stable)
        self._lm = np.empty(64)  # log masses of the nodes; removed ones are −1e300 (mass 0)
        self._dead = 0
        self._rebuild()
        if self.idx.size:
            # c_max: a ball of radius ρ lies in a box of side 2ρ, which meets at most 2^{d'}
            # cells of the aligned grid of side 2ρ; O(n), unlike exact neighbour counts.
            cells = np.floor(self.Y[self.idx] / (2 * self.rho)).astype(np.int64)
            self.c_max = int(min(self.idx.size, 2**self.d * _max_run(cells)))
            self._push_global()

    def _rebuild(self) -> None:
        # The k-d trees hold the points uncovered at the last rebuild; points covered since are
        # still in them, so tree counts remain upper bounds (exact counts filter by `active`).
        self.idx = np.flatnonzero(self.active)
        self._removed = 0
        self._tree = self._ftree = self._F = None  # built on first use: the fine levels never
        # need them (every pick there comes from the uniform branch)
        if self.idx.size:
            Ya = self.Y[self.idx]
            self._bb = (Ya.min(axis=0), Ya.max(axis=0))

    def _add(self, node: tuple, logmass: float) -> None:
        n = len(self.nodes)
        if n == self._lm.size:
            self._lm = np.concatenate([self._lm, np.empty(n)])
        self.nodes.append(node)
        self._lm[n] = logmass

    def _drop(self, j: int) -> None:
        self.nodes[j] = None
        self._lm[j] = -1e300
        self._dead += 1

    def _compact(self) -> None:
        keep = [j for j, node in enumerate(self.nodes) if node is not None]
        self._lm = np.concatenate([self._lm[keep], np.empty(max(64, len(keep)))])
        self.nodes = [self.nodes[j] for j in keep]
        self._dead = 0

    @property
    def tree(self) -> cKDTree | None:
        """k-d tree of the uncovered points (lattice units)."""
        if self._tree is None and self.idx.size:
            self._tree = cKDTree(self.Y[self.idx])
        return self._tree

    @property
    def F(self) -> np.ndarray:
        """⌊y⌋ of the uncovered points."""
        if self._F is None:
            self._F = np.floor(self.Y[self.idx]).astype(np.int64)
        return self._F

    def _h(self, c: float) -> float:
        return float(_log_expm1(self.a * c)) - math.log(c)  # log h(c)

    def _push_global(self) -> None:
        log_u = math.log(self.idx.size) + self.d * math.log(2 * self.w + 1) + self._h(self.c_max)
        self._add(("global",), log_u)

    def _push_box(self, lo: np.ndarray, hi: np.ndarray) -> None:
        if not self.idx.size:
            return
        size = int(np.prod((hi - lo + 1).astype(float)))
        if size <= self.block_size:
            self._push_block(lo, hi)
            return
        centre = (lo + hi) / 2.0
        r = (self.rho + float(np.linalg.norm((hi - lo) / 2.0))) * (1 + 1e-9) + 1e-9
        far = np.maximum(np.abs(centre - self._bb[0]), np.abs(centre - self._bb[1]))
        if float(np.linalg.norm(far)) < r:  # the ball holds every point: no query needed
            B = int(self.idx.size)
        else:
            B = int(self.tree.query_ball_point(centre, r, return_length=True))
            self.work += B + 1
        self.n_evaluations += 1
        if B:
            self._add(("box", lo, hi, B), math.log(size) + float(_log_expm1(self.a * B)))

    def _push_block(self, lo: np.ndarray, hi: np.ndarray | None = None, G=None) -> None:
        if not self.idx.size:
            return
        if G is None:
            axes = [np.arange(lo[j], hi[j] + 1) for j in range(self.d)]
            G = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, self.d)
        u = self._block_counts(G)
        self.n_evaluations += G.shape[0]
        self.work += int(u.sum()) + G.shape[0]
        keep = u > 0
        if np.any(keep):
            G, logw = G[keep], _log_expm1(self.a * u[keep])
            self._add(("block", G, logw), float(special.logsumexp(logw)))

    def _block_counts(self, G: np.ndarray) -> np.ndarray:
        """Upper bounds on the cover of each grid point of G (k-d tree counts, C speed).

        The radius is inflated by 1e-9 (relative), so each count bounds the exact strict count
        of :func:`_within` despite rounding.
        """
        return self.tree.query_ball_point(G.astype(float), self.r_up, return_length=True)

    def root_box(self) -> None:
        """Replace the global node by a box around the uncovered points (none if all covered).

        Once every point is covered all covers are 0 and the non-uniform branch has no mass:
        the draw is uniform over G_i (the greedy keeps picking, Alg. 3 makes all k' picks).
        """
        if not self.idx.size:
            return
        Ya = self.Y[self.idx]
        lo = np.clip(np.floor(Ya.min(axis=0) - self.rho), -self.M, self.M).astype(np.int64)
        hi = np.clip(np.ceil(Ya.max(axis=0) + self.rho), -self.M, self.M).astype(np.int64)
        self._push_box(lo, hi)

    def cover_of(self, b: np.ndarray) -> np.ndarray:
        """Indices (into Y) of the uncovered points strictly within ρ of grid point b."""
        if not self.idx.size:
            return np.empty(0, dtype=np.int64)
        cand = self.idx[np.asarray(self.tree.query_ball_point(b.astype(float), self.r_up), int)]
        cand = cand[self.active[cand]]
        return cand[_within(self.Y[cand], b, self.rho)]

    def remove(self, points: np.ndarray) -> None:
        """Note covered points (the caller already cleared them in ``active``).

        The trees are rebuilt lazily, when a rejection needs tight bounds again (stale trees
        only over-count, so every bound stays valid meanwhile).
        """
        self._removed += points.size

    def _refresh(self) -> None:
        self._rebuild()
        # the global node's mass depends on the tree's n; re-derive it
        for j, node in enumerate(self.nodes):
            if node is not None and node[0] == "global":
                self._drop(j)
                if self.idx.size:
                    self._push_global()
                break

    def _propose(self, node: tuple, gen: np.random.Generator):
        """Draw g from the node; return (g, log u(g)) or (None, None) off the grid."""
        kind = node[0]
        if kind == "global":
            b = cube_proposal(self.F, self.idx.size, self.w, self.d, gen)
            if np.any(np.abs(b) > self.M):
                return None, None
            if self._ftree is None:
                self._ftree = cKDTree(self.F)
            cnt = self._ftree.query_ball_point(
                b.astype(float), self.w + 0.5, p=np.inf, return_length=True
            )
            return b, math.log(int(cnt)) + self._h(self.c_max)
        if kind == "box":
            _, lo, hi, B = node
            return box_point(lo, hi, gen), float(_log_expm1(self.a * B))
        _, G, logw = node
        q = _categorical(logw, gen)
        return G[q], float(logw[q])

    def draw(
        self,
        log_n_grid: float,
        gen: np.random.Generator,
        max_proposals: int,
        max_work: float = math.inf,
    ) -> np.ndarray:
        """One exact draw from P(g) ∝ exp(a·c_g) over the whole grid."""
        for _ in range(max_proposals):
            if self.work > max_work:
                raise RuntimeError(
                    f"the exact grid sampler counted more than {max_work:.3g} points "
                    "at one level (dense data on a fine grid: every grid point near the densest "
                    "spots must be counted exactly); use MaxCoverKMeans(grid_stride=...) (a "
                    "data-independent sub-lattice, privacy unchanged) or a smaller proj_dim"
                )
            self.n_proposals += 1
            if self._dead > max(256, len(self.nodes) // 2):
                self._compact()
            logits = np.concatenate([[log_n_grid], self._lm[: len(self.nodes)]])
            j = _categorical(logits, gen)
            if j == 0:  # uniform branch: mass |G| (weight 1 per grid point)
                return uniform_grid_point(self.M, self.d, gen)
            node = self.nodes[j - 1]
            b, log_u = self._propose(node, gen)
            if b is not None:
                c = self.cover_of(b).size
                self.n_evaluations += 1
                self.work += c + 1
                if c > 0 and accept(float(_log_expm1(self.a * c)) - log_u, gen):
                    return b
            # rejected: tighten the envelope where it was loose (with fresh trees)
            self._drop(j - 1)
            if self._removed:
                self._refresh()
            if node[0] == "global":
                self.root_box()
            elif node[0] == "block":
                self._push_block(None, G=node[1])
            else:
                _, lo, hi, _ = node
                ax = int(np.argmax(hi - lo))
                mid = (lo[ax] + hi[ax]) // 2
                hi1, lo2 = hi.copy(), lo.copy()
                hi1[ax], lo2[ax] = mid, mid + 1
                self._push_box(lo, hi1)
                self._push_box(lo2, hi)
        raise RuntimeError(
            f"lazy grid sampler exceeded max_proposals={max_proposals}; use a larger approx or "
            "a smaller proj_dim"
        )
