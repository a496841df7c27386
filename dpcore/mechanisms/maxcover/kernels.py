"""Compiled kernels of max-cover's samplers: exact ball incidences, grouped by a radix sort.

Algorithm 3 needs, at a level, the cover count c_g of every grid point g near the data (Claim
4.2's populated cells) and the incidence lists point ↔ grid point. The old build materialised
every incidence's grid point (n·vol(ρ) rows of d' integers), then grouped them with one
comparison ``argsort`` (or ``np.unique(axis=0)`` when the grid's mixed-radix key overflowed
int64, which on heavy-tailed data with repeated rows, KDD Cup 99, was 59 % of a fit and grew
like n^1.8). Here (:class:`BallIncidences`) a compiled walk enumerates each point's lattice
points and writes each one's key packed into as few 62-bit words as the level's spans need
(one below ~2^62 grid points), and a compiled LSD radix sort (:func:`sort_rows`) groups the
keys: O(incidences), with the same numbering of grid points (lexicographic) and the same
point order within each grid point as before, so every draw is unchanged.

Exactness: the lattice points enumerated per point are those of
:func:`dpcore.mechanisms.maxcover.ballpoints.ball_lattice_points` (the same coordinate ranges
and the same remaining-radius arithmetic), and the few pairs within 1e-9 of the boundary are
decided by the one cover formula, :func:`dpcore.mechanisms.maxcover.grid._within`. No randomness
here (every draw stays in :mod:`dpcore.mechanisms.maxcover.sampling`).
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.core.compiled import nogil_jit
from dpcore.mechanisms.maxcover.ballpoints import _SLACK
from dpcore.mechanisms.maxcover.grid import _within

__all__ = ["BallIncidences", "sort_rows"]

_ONE_SLACK = 1.0 + _SLACK


#: Bits per radix pass: 2048 buckets, whose counters and write heads stay in L1.
RADIX_BITS = 11


@nogil_jit
def _radix_order(keys, bits):  # pragma: no cover - compiled
    """Stable order of the rows of ``keys`` (non-negative int64 words, lexicographic).

    LSD radix sort: word by word from the last, ``RADIX_BITS`` bits a pass over the ``bits[w]``
    bits word w uses; a pass whose digit is constant is skipped. O(N·Σ⌈bits/11⌉), no
    comparisons. Returns (order, the sorted keys).
    """
    n, n_words = keys.shape
    order = np.arange(n)
    cur = keys.copy()
    o2 = np.empty(n, dtype=np.int64)
    k2 = np.empty_like(cur)
    size = 1 << RADIX_BITS
    head = np.empty(size + 1, dtype=np.int64)
    for w in range(n_words - 1, -1, -1):
        for shift in range(0, bits[w], RADIX_BITS):
            head[:] = 0
            for i in range(n):
                head[((cur[i, w] >> shift) & (size - 1)) + 1] += 1
            if head.max() == n:  # one digit value: the pass would not move anything
                continue
            for q in range(size):
                head[q + 1] += head[q]
            for i in range(n):
                dgt = (cur[i, w] >> shift) & (size - 1)
                t = head[dgt]
                head[dgt] = t + 1
                o2[t] = order[i]
                for v in range(n_words):
                    k2[t, v] = cur[i, v]
            order, o2 = o2, order
            cur, k2 = k2, cur
    return order, cur


def sort_rows(keys: np.ndarray, bits=None) -> tuple[np.ndarray, np.ndarray]:
    """(order, keys[order]): a stable lexicographic sort of the rows of a (N, W) array of
    non-negative int64 words (uint64 words are sorted as their two's-complement bit patterns:
    pass ``bits`` = 64 for them), by :func:`_radix_order`."""
    keys = np.ascontiguousarray(keys).view(np.int64)
    if bits is None:
        top = keys.max(axis=0) if keys.shape[0] else np.zeros(keys.shape[1], np.int64)
        bits = np.array([int(v).bit_length() for v in top.tolist()], dtype=np.int64)
    return _radix_order(keys, np.asarray(bits, dtype=np.int64))


@nogil_jit
def _range(y, rem, M):  # pragma: no cover - compiled
    """``ballpoints._ranges`` for one coordinate: integer b with (b − y)² < rem (with slack)."""
    half = math.sqrt(max(rem, 0.0)) * _ONE_SLACK + _SLACK
    return max(math.ceil(y - half), -M), min(math.floor(y + half), M)


@nogil_jit
def _walk(Y, rho2, M, tol, word, lo, span, keys, flags, cnt):  # pragma: no cover - compiled
    """Every lattice point b with ‖Y[p] − b‖ < ρ, |b|_∞ ≤ M, point by point, b lexicographic.

    With ``keys`` empty it only counts each point's pairs (``cnt``); else it writes each pair's
    packed key (coordinate j adds b_j − lo_j in mixed radix ``span`` to word ``word[j]``, so
    the rows of ``keys`` order like the b's) and flags the pairs within ``tol`` of the boundary.
    The remaining squared radius is carried coordinate by coordinate with
    ``ballpoints._expand``'s arithmetic, so the pairs are exactly its pairs.
    """
    n, d = Y.shape
    b = np.empty(d, dtype=np.int64)
    hi = np.empty(d, dtype=np.int64)
    rem = np.empty(d + 1)
    fill = keys.shape[0] > 0
    e = 0
    for p in range(n):
        lo0, hi0 = _range(Y[p, 0], rho2, M)
        if lo0 > hi0:
            continue
        rem[0] = rho2
        j = 0
        b[0], hi[0] = lo0, hi0
        while True:
            diff = b[j] - Y[p, j]
            rem[j + 1] = rem[j] - diff * diff
            down = False
            if j == d - 1:
                r = rem[d]
                near = abs(r) <= tol
                if near or r > 0:
                    if fill:
                        for w in range(keys.shape[1]):
                            keys[e, w] = 0
                        for t in range(d):
                            keys[e, word[t]] = keys[e, word[t]] * span[t] + (b[t] - lo[t])
                        flags[e] = near
                    else:
                        cnt[p] += 1
                    e += 1
            else:
                lo1, hi1 = _range(Y[p, j + 1], rem[j + 1], M)
                if lo1 <= hi1:
                    j += 1
                    b[j], hi[j] = lo1, hi1
                    down = True
            if not down:
                b[j] += 1
                while b[j] > hi[j] and j > 0:
                    j -= 1
                    b[j] += 1
                if b[j] > hi[j]:
                    break


def _packing(Y: np.ndarray, rho: float, M: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per coordinate: the lowest lattice value a ball reaches, the span, and the key word.

    Coordinates are packed in order into 62-bit words (a new word when the product of spans
    would overflow), so a row of words orders like the lattice point: lexicographically.
    """
    lo = np.maximum(np.floor(Y.min(axis=0) - rho) - 1, -M).astype(np.int64)
    hi = np.minimum(np.ceil(Y.max(axis=0) + rho) + 1, M).astype(np.int64)
    span = np.maximum(hi - lo + 1, 1)
    word = np.empty(Y.shape[1], dtype=np.int64)
    w, bits = 0, 0.0
    for j, sp in enumerate(span.tolist()):
        if bits + math.log2(sp) >= 62 and bits > 0:
            w, bits = w + 1, 0.0
        word[j], bits = w, bits + math.log2(sp)
    return lo, span, word


def _unpack(keys: np.ndarray, lo: np.ndarray, span: np.ndarray, word: np.ndarray) -> np.ndarray:
    """The lattice points (K, d') of packed keys (the inverse of ``_walk``'s packing)."""
    B = np.empty((keys.shape[0], lo.size), dtype=np.int64)
    k = keys.copy()
    for j in range(lo.size - 1, -1, -1):
        k[:, word[j]], B[:, j] = np.divmod(k[:, word[j]], span[j])
    return B + lo


class BallIncidences:
    """Every (point, grid point) pair with ‖Y[p] − b‖ < ρ and ‖b‖_∞ ≤ M, grouped by grid point.

    The pairs of :func:`dpcore.mechanisms.maxcover.ballpoints.ball_lattice_points` (Claim 4.1's
    lattice points of each ball), enumerated by a compiled walk that packs each grid point into
    as few 62-bit words as its level's spans need (one, unless the grid is huge), then grouped
    by a radix sort of those keys: O(pairs), no comparison sort, no n·vol(ρ)·d' array of rows.
    Grid points are numbered in lexicographic order (the order the exponential mechanism's
    draws follow) and each one's points stay in increasing order.

    Attributes
    ----------
    p_ptr : (n + 1,) int64, point p's pairs are ``p_cells[p_ptr[p]:p_ptr[p + 1]]``
    p_cells : (N,) int64 grid-point ids, 0..U−1
    c_ptr, c_pts : (U + 1,), (N,) int64, grid point j's points are ``c_pts[c_ptr[j]:c_ptr[j+1]]``
    n_cells : int, U
    """

    def __init__(self, Y: np.ndarray, rho: float, M: int):
        Y = np.ascontiguousarray(Y, dtype=float)
        n = Y.shape[0]
        rho2 = rho * rho
        tol = 1e-9 * (rho2 + 1.0)  # ballpoints._expand's boundary band
        self._lo, self._span, self._word = _packing(Y, rho, M)
        packing = (self._word, self._lo, self._span)
        n_words = int(self._word[-1]) + 1
        cnt = np.zeros(n, dtype=np.int64)
        _walk(Y, rho2, int(M), tol, *packing, np.empty((0, 1), np.int64),
              np.empty(0, np.bool_), cnt)
        keys = np.empty((int(cnt.sum()), n_words), dtype=np.int64)
        flags = np.empty(keys.shape[0], dtype=np.bool_)
        _walk(Y, rho2, int(M), tol, *packing, keys, flags, cnt)
        pt = np.repeat(np.arange(n), cnt)
        if flags.any():  # the boundary band, decided by the one cover formula
            near = np.flatnonzero(flags)
            drop = near[~_within(Y[pt[near]], self._unpack(keys[near]), rho)]
            keys, pt = np.delete(keys, drop, axis=0), np.delete(pt, drop)
            cnt = np.bincount(pt, minlength=n)
        self.p_ptr = np.concatenate([[0], np.cumsum(cnt)]).astype(np.int64)
        bits = np.zeros(n_words, dtype=np.int64)
        for w in range(n_words):
            bits[w] = math.ceil(float(np.sum(np.log2(self._span[self._word == w]))) + 1e-9)
        order, sk = sort_rows(keys, bits)
        new = np.ones(order.size, dtype=bool)
        if order.size:
            np.any(sk[1:] != sk[:-1], axis=1, out=new[1:])
        ids = np.cumsum(new) - 1
        self._uniq = sk[new]
        self.n_cells = int(self._uniq.shape[0])
        self.p_cells = np.empty(order.size, dtype=np.int64)
        self.p_cells[order] = ids
        self.c_ptr = np.append(np.flatnonzero(new), order.size).astype(np.int64)
        self.c_pts = pt[order]

    def _unpack(self, keys: np.ndarray) -> np.ndarray:
        return _unpack(keys, self._lo, self._span, self._word)

    def cell_of(self, b: np.ndarray) -> int | None:
        """The id of grid point b (int vector), or None if no ball holds it."""
        off = np.asarray(b, dtype=np.int64) - self._lo
        if self.n_cells == 0 or np.any(off < 0) or np.any(off >= self._span):
            return None
        key = [0] * self._uniq.shape[1]
        for j, w in enumerate(self._word.tolist()):
            key[w] = key[w] * int(self._span[j]) + int(off[j])
        lo, hi = 0, self.n_cells  # binary search over the sorted distinct keys
        for w, v in enumerate(key):
            col = self._uniq[lo:hi, w]
            lo, hi = lo + int(np.searchsorted(col, v, "left")), lo + int(
                np.searchsorted(col, v, "right"))
        return lo if hi > lo else None

    def decode(self, j: int) -> np.ndarray:
        """Grid point number j."""
        return self._unpack(self._uniq[j : j + 1])[0]
