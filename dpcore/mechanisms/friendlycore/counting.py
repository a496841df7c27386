"""Friend counting: how many points (or tuples) each element is "friends" with.

FriendlyCore's filters (Tsfadia et al. 2022, Sec. 4) only need, for every element ``x_i`` of the
data, the number of ``j`` with ``f(x_i, x_j) = 1`` (self included). This module computes those
counts for the predicates the paper uses:

* :func:`friend_counts` / :func:`count_within` — ``dist_r(x, y) = 1{‖x − y‖ ≤ r}`` (Sec. 3, 5.1),
  exact, in row blocks of BLAS distance products (never an n × n matrix in memory). Pairs whose
  BLAS distance is within rounding of ``r`` are re-checked with the direct difference, so the counts
  equal a brute-force ``sum((x − y)**2) <= r**2`` bit for bit.
* :func:`match_counts` — ``match_γ`` on unordered k-tuples (Sec. 5.2.1, formal definition).
* :func:`ordered_tuple_counts` — ``dist_{r_1..r_k}`` on ordered k-tuples (Sec. 5.2.3).

The two tuple counts run in compiled pair loops (:func:`dpcore.core.compiled.nogil_jit`) that stop
at the first failed condition, so a non-matching pair costs O(k d) instead of O(k² d) (issue 23.5:
the numpy version spent ≈ 1 µs per pair, 1,077 s at t = 10⁴). Both take an optional *reference
set* of tuple indices: the count is then over the reference tuples only (the sampled counting of
App. B in the proof-valid form of :func:`dpcore.mechanisms.friendlycore.filters.friendly_core`),
which bounds the work by O(t · m) instead of O(t²).
* :func:`match_permutation` — the permutation of ``match_1`` used by ``ord_X(Y)`` (Sec. 5.2.2).
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.core.compiled import nogil_jit
from dpcore.core.threads import N_THREADS, map_row_chunks
from dpcore.data.geometry import row_norms, squared_distances

__all__ = [
    "count_within",
    "friend_counts",
    "match_counts",
    "match_permutation",
    "ordered_tuple_counts",
    "reference_fraction",
    "total_friends",
]

# About this many bytes of distances per block.
_BLOCK_BYTES = 32 * 2**20


def _block_rows(n_cols: int, per_cell: int = 8) -> int:
    return max(1, _BLOCK_BYTES // (per_cell * max(n_cols, 1)))


def _shifted(*arrays: np.ndarray) -> list[np.ndarray]:
    """The arrays translated by the first one's mean: distances are unchanged, but the BLAS
    expansion ‖x‖² − 2x·y + ‖y‖² no longer cancels catastrophically for data far from 0."""
    shift = arrays[0].reshape(-1, arrays[0].shape[-1]).mean(axis=0) if arrays[0].size else 0.0
    return [a - shift for a in arrays]


def _augment(Xs: np.ndarray, x_sq: np.ndarray, left: bool) -> np.ndarray:
    """float32 rows ``[x, ‖x‖², 1]`` (left) or ``[−2y, 1, ‖y‖²]`` (right): one BLAS product of
    the two gives the whole matrix of ‖x − y‖² with no extra pass over it."""
    one = np.ones((Xs.shape[0], 1))
    parts = [Xs, x_sq[:, None], one] if left else [-2.0 * Xs, one, x_sq[:, None]]
    return np.hstack(parts).astype(np.float32)


def _inside_block(
    X: np.ndarray, Y: np.ndarray, XA: np.ndarray, YA: np.ndarray, tol: float, r2: float
) -> np.ndarray:
    """Exact ``‖x − y‖² ≤ r²`` for a block: float32 BLAS, then a float64 re-check of the pairs
    whose float32 value is within ``tol`` of ``r²``."""
    D = XA @ YA.T
    inside = D <= np.float32(r2 - tol)
    near = (D <= np.float32(r2 + tol)) & ~inside
    if near.any():
        ii, jj = np.nonzero(near)
        inside[ii, jj] = ((X[ii] - Y[jj]) ** 2).sum(axis=1) <= r2
    return inside


def _tolerance(d: int, x_sq: np.ndarray, y_sq: np.ndarray, r2: float) -> float:
    """Worst-case error of the float32 value of ‖x − y‖² from the augmented product, plus the
    rounding of the threshold: inputs rounded to float32 and a (d + 2)-term dot product whose
    absolute terms sum to ≤ 2(‖x‖² + ‖y‖²), so ≤ (4d + 32) u (max‖x‖² + max‖y‖²) with
    u = 2⁻²⁴ (generous)."""
    u = 2.0**-24
    return (4 * d + 32) * u * (float(x_sq.max()) + float(y_sq.max()) + r2)


def count_within(
    X: np.ndarray, Y: np.ndarray, radius: float, *, block_rows: int | None = None
) -> np.ndarray:
    """For each row of ``X``, the number of rows of ``Y`` within l2 distance ``radius``.

    Exact: distances come from one float32 BLAS product per row block (augmented rows, see
    :func:`_augment`), and every pair whose float32 value lies within the worst-case rounding
    bound of ``radius²`` is recomputed as ``sum((x − y)**2)`` in float64, so the result equals
    the brute-force count.

    Parameters
    ----------
    X : (n, d) array
    Y : (m, d) array
    radius : float
        ``r ≥ 0``; the predicate is ``‖x − y‖ ≤ r`` (closed ball).
    block_rows : int, optional
        Rows of ``X`` per block (default: about 32 MiB of distances per block).

    Returns
    -------
    (n,) int64 array
    """
    X = np.asarray(X, dtype=float)
    Y = np.asarray(Y, dtype=float)
    n, m = X.shape[0], Y.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    if n == 0 or m == 0:
        return counts
    r2 = float(radius) ** 2
    Xs, Ys = _shifted(X, Y)
    x_sq, y_sq = row_norms(Xs, squared=True), row_norms(Ys, squared=True)
    XA, YA = _augment(Xs, x_sq, True), _augment(Ys, y_sq, False)
    tol = _tolerance(X.shape[1], x_sq, y_sq, r2)
    step = block_rows or _block_rows(m, per_cell=6)
    for a in range(0, n, step):
        b = min(a + step, n)
        counts[a:b] = _inside_block(X[a:b], Y, XA[a:b], YA, tol, r2).sum(axis=1)
    return counts


def friend_counts(X: np.ndarray, radius: float, *, block_rows: int | None = None) -> np.ndarray:
    """Friend counts ``w_i = #{j : ‖x_i − x_j‖ ≤ r}`` (self included) of the ``dist_r`` predicate.

    Exact like :func:`count_within`, using the symmetry of the predicate: each row block is
    compared only with itself and the rows after it, and the counts of the later rows are
    updated from the block's column sums (half the work of ``count_within(X, X, r)``).
    O(n² d / 2) time, O(n · block) memory.
    """
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    if n == 0:
        return counts
    r2 = float(radius) ** 2
    (Xs,) = _shifted(X)
    x_sq = row_norms(Xs, squared=True)
    XA, YA = _augment(Xs, x_sq, True), _augment(Xs, x_sq, False)
    tol = _tolerance(X.shape[1], x_sq, x_sq, r2)
    step = block_rows or _block_rows(n, per_cell=6)
    for a in range(0, n, step):
        b = min(a + step, n)
        inside = _inside_block(X[a:b], X[a:], XA[a:b], YA[a:], tol, r2)
        counts[a:b] += inside.sum(axis=1)
        counts[b:] += inside[:, b - a :].sum(axis=0)
    return counts


@nogil_jit
def _match_kernel(T, R, gamma2, out, start, stop):  # pragma: no cover - compiled
    """``out[a] = #{c : match_γ(T[a], R[c])}`` for a in [start, stop) (see :func:`match_counts`)."""
    k, d = T.shape[1], T.shape[2]
    D = np.empty((k, k))
    pi = np.empty(k, dtype=np.int64)
    seen = np.empty(k, dtype=np.bool_)
    for a in range(start, stop):
        count = 0
        for c in range(R.shape[0]):
            ok = True
            for i in range(k):  # row i of D, its nearest y and the runner-up
                best, second, arg = np.inf, np.inf, -1
                for l_ in range(k):
                    s = 0.0
                    for q in range(d):
                        diff = T[a, i, q] - R[c, l_, q]
                        s += diff * diff
                    D[i, l_] = s
                    if s < best:
                        second, best, arg = best, s, l_
                    elif s < second:
                        second = s
                pi[i] = arg
                # ‖x_i − y_π(i)‖ < γ ‖x_i − y_π(j)‖ for all j ≠ i: with π a bijection the y_π(j)
                # are all the other y, so this is "< γ × the runner-up" (checked early: cheap).
                if not best < gamma2 * second:
                    ok = False
                    break
            if not ok:
                continue
            seen[:] = False
            for i in range(k):
                if seen[pi[i]]:
                    ok = False
                    break
                seen[pi[i]] = True
            if not ok:
                continue
            for i in range(k):  # ‖x_i − y_π(i)‖ < γ ‖x_j − y_π(i)‖ for all j ≠ i
                own = D[i, pi[i]]
                for j in range(k):
                    if j != i and not own < gamma2 * D[j, pi[i]]:
                        ok = False
                        break
                if not ok:
                    break
            if ok:
                count += 1
        out[a] = count


@nogil_jit
def _ordered_kernel(T, R, r2, out, start, stop):  # pragma: no cover - compiled
    """``out[a] = #{c : ‖T[a, j] − R[c, j]‖² ≤ r_j² for every j}``."""
    k, d = T.shape[1], T.shape[2]
    for a in range(start, stop):
        count = 0
        for c in range(R.shape[0]):
            ok = True
            for j in range(k):
                s = 0.0
                for q in range(d):
                    diff = T[a, j, q] - R[c, j, q]
                    s += diff * diff
                if not s <= r2[j]:
                    ok = False
                    break
            if ok:
                count += 1
        out[a] = count


def _tuple_counts(kernel, T: np.ndarray, reference: np.ndarray | None, param) -> np.ndarray:
    """Run a pair kernel over all tuples against the reference tuples, in row-chunk threads."""
    T = np.ascontiguousarray(T, dtype=float)
    R = T if reference is None else np.ascontiguousarray(T[_reference_index(reference, len(T))])
    out = np.zeros(T.shape[0], dtype=np.int64)
    if T.shape[0] and R.shape[0]:
        map_row_chunks(lambda sl: kernel(T, R, param, out, sl.start, sl.stop), T.shape[0],
                       min_rows=64)
    return out


def _reference_index(reference: np.ndarray, t: int) -> np.ndarray:
    ref = np.asarray(reference)
    if ref.dtype == bool:
        if ref.shape != (t,):
            raise ValueError(f"a reference mask must have shape ({t},), got {ref.shape}")
        return np.flatnonzero(ref)
    return ref.astype(np.int64)


def match_counts(
    T: np.ndarray, gamma: float = 1 / 7, *, reference: np.ndarray | None = None,
    block_rows: int | None = None,
) -> np.ndarray:
    """Friend counts of the ``match_γ`` predicate on unordered k-tuples (Sec. 5.2.1).

    ``match_γ(X, Y) = 1`` iff for some permutation π and every i:
    ``‖x_i − y_π(i)‖ < γ · min_{j≠i} min(‖x_i − y_π(j)‖, ‖x_j − y_π(i)‖)`` (the formal definition,
    not the intro's one-sided version). For γ ≤ 1 the only candidate π maps each ``x_i`` to its
    nearest ``y``, so the test is exact and O(k² d) per pair (O(k d) for most non-matching pairs:
    the compiled loop stops at the first failed condition).

    Parameters
    ----------
    T : (t, k, d) array
        t unordered k-tuples.
    gamma : float
        In (0, 1]; the paper uses 1/7.
    reference : (t,) bool mask or index array, optional
        Count friends among these tuples only (default: all t, self included).
    block_rows : int, optional
        Ignored (kept for callers of the former blocked numpy version).

    Returns
    -------
    (t,) int64 array
        ``#{c ∈ reference : match_γ(T[a], T[c]) = 1}``; a tuple of k distinct points is its own
        friend.
    """
    T = np.asarray(T, dtype=float)
    if T.ndim != 3:
        raise ValueError(f"tuples must have shape (t, k, d), got {T.shape}")
    if not 0 < gamma <= 1:
        raise ValueError(f"gamma must be in (0, 1], got {gamma!r}")
    return _tuple_counts(_match_kernel, T, reference, float(gamma) ** 2)


def match_permutation(X: np.ndarray, Y: np.ndarray) -> np.ndarray | None:
    """π with ``π[i] = argmin_l ‖x_i − y_l‖`` if it is a bijection, else ``None`` (Sec. 5.2.2).

    ``ord_X(Y) = Y[π]`` orders the tuple ``Y`` like ``X``.
    """
    D = squared_distances(np.asarray(X, dtype=float), np.asarray(Y, dtype=float))
    pi = np.argmin(D, axis=1)
    if np.unique(pi).size != pi.size:
        return None
    return pi


def ordered_tuple_counts(
    T: np.ndarray, radii: np.ndarray, *, reference: np.ndarray | None = None,
    block_rows: int | None = None,
) -> np.ndarray:
    """Friend counts of ``dist_{r_1..r_k}(X, Y) = Π_j 1{‖x_j − y_j‖ ≤ r_j}`` (Sec. 5.2.3).

    Parameters
    ----------
    T : (t, k, d) array of ordered tuples
    radii : (k,) array of r_j ≥ 0
    reference : (t,) bool mask or index array, optional
        Count friends among these tuples only (default: all t).
    block_rows : int, optional
        Ignored (kept for callers of the former blocked numpy version).
    """
    T = np.asarray(T, dtype=float)
    radii = np.asarray(radii, dtype=float)
    if T.ndim != 3:
        raise ValueError(f"tuples must have shape (t, k, d), got {T.shape}")
    k = T.shape[1]
    if radii.shape != (k,):
        raise ValueError(f"need one radius per tuple position ({k}), got shape {radii.shape}")
    return _tuple_counts(_ordered_kernel, T, reference, radii**2)


def reference_fraction(target_size: float, n_hat: float) -> float:
    """Bernoulli rate ``q = min(1, m / n̂)`` for a reference set of about ``m`` points.

    Depends on the data only through the released ``n̂``, so it is post-processing.
    """
    if not math.isfinite(n_hat) or n_hat <= 0:
        return 1.0
    return min(1.0, float(target_size) / float(n_hat))


@nogil_jit
def _radius_hist_kernel(X, r2, hist, start, stop):  # pragma: no cover - compiled
    """hist[b] += #{(i, j) : i ∈ [start, stop), j > i, r2[b-1] < ‖x_i − x_j‖² ≤ r2[b]}."""
    n, d = X.shape
    for i in range(start, stop):
        for j in range(i + 1, n):
            s = 0.0
            for q in range(d):
                diff = X[i, q] - X[j, q]
                s += diff * diff
            hist[np.searchsorted(r2, s)] += 1  # side="left": the first b with s ≤ r2[b]


def total_friends(X: np.ndarray, radii: np.ndarray, *, block_rows: int | None = None) -> np.ndarray:
    """``Σ_i #{j : ‖x_i − x_j‖ ≤ r}`` for every r in ``radii``, in one pass over the pairs.

    CheckDiam (Sec. 5.1.2) needs only this total; FindDiam probes several radii, so computing the
    whole profile once costs one distance pass instead of one per probe. Each unordered pair is
    visited once in a compiled loop (it counts twice; every i is its own friend at distance 0).
    ``block_rows`` is ignored (kept for callers of the former blocked numpy version).
    """
    X = np.ascontiguousarray(X, dtype=float)
    radii = np.asarray(radii, dtype=float)
    order = np.argsort(radii)
    r2 = np.ascontiguousarray(radii[order] ** 2)
    n = X.shape[0]
    # Row i has n − i − 1 pairs: cut the triangle into N_THREADS pieces of equal area.
    parts = max(1, min(N_THREADS, n // 256))
    cuts = [round(n * (1.0 - math.sqrt(1.0 - p / parts))) for p in range(parts + 1)]
    hists = [np.zeros(r2.size + 1, dtype=np.int64) for _ in range(parts)]
    map_row_chunks(lambda sl: [_radius_hist_kernel(X, r2, hists[p], cuts[p], cuts[p + 1])
                               for p in range(sl.start, sl.stop)], parts, min_rows=1)
    hist = 2 * sum(hists)
    hist[0] += n  # the diagonal: distance 0 ≤ every r ≥ 0
    totals = np.empty(r2.size, dtype=np.int64)
    totals[order] = np.cumsum(hist[:-1])
    return totals
