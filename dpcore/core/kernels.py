"""Compiled kernels (numba, no GIL): DP-Lloyd's assignment-and-accumulation step and the norm grid.

* :func:`assign_accumulate`: one (DP-)Lloyd step in one pass (below);
* :func:`grid_histogram`: every row's bin on the public norm grid of the privacy-constrained
  sampler (:mod:`dpcore.mechanisms.importance.grid`), in one pass;
* :func:`warm_up`: load them all at server start.

Small jobs (:func:`use_compiled`, :data:`COMPILED_MIN_WORK`) take a numpy formulation of the same
pass instead, so that a command-line fit of a small table never imports numba nor loads LLVM
(≈ 0.75 s idle, seconds under load: more than the whole fit). The choice depends on the shapes
only (never on whether numba happens to be loaded), so a run is reproducible everywhere.

One Lloyd step needs, per cluster j, the weighted count Σ_{i∈C_j} w_i and sum Σ_{i∈C_j} w_i x_i
for the nearest-centre partition (Algorithm 2 of Fay, Mair & Sjölund 2024, inner loop). Written
with numpy this is a distance product, an ``argmin`` over short rows (≈ 23 ns a row), a sparse
one-hot product and a ``bincount``: three passes, several temporaries, and parts that hold the GIL,
so DP-Lloyd's two row-chunk threads ran only 1.1× faster than one (measured on Covertype rows,
k = 25), and 1.5–2.3× slower than scikit-learn's fused Cython loop at n = 10⁴.

:func:`assign_accumulate` fuses the three: for each block of :data:`BLOCK_ROWS` rows it forms
−2 C X_bᵀ with one BLAS call (a block that stays in L2), takes every row's nearest centre
(argmin of ‖c‖² − 2 x·c, the first on ties like ``numpy.argmin``) and adds w·x to that centre's
sum in row order. The additions happen in the same order as the sparse product and
``bincount`` did, so results are bit-for-bit those of the numpy formulation (tested), and it
compiles with ``nogil=True``: the Lloyd loop's threads run truly in parallel.

numba (PyPI) compiles it on first use and caches the machine code next to this file
(:func:`dpcore.core.compiled.nogil_jit`; ≈ 1 s the very first time on a machine; then, per
process, numba's import ≈ 0.25 s and the cache load ≈ 0.3–0.5 s idle, which is why small jobs
stay on numpy and the import is deferred to the first compiled call).

Measured (``benchmarks/bench_kmeans.py``, idle 2-core machine, Covertype rows, d = 54, k = 25,
T = 10): DPLloyd 0.72–0.82× scikit-learn's Lloyd time at n = 10⁴ (before: 1.5–2.3×) and 0.61× at
5·10⁵ (before: 1.07×).
"""

from __future__ import annotations

import numpy as np
from scipy import sparse

from dpcore.core.compiled import nogil_jit
from dpcore.core.threads import MIN_ROWS_PER_THREAD, map_row_blocks, n_threads, row_blocks

__all__ = ["BLOCK_ROWS", "COMPILED_MIN_WORK", "ROW_OVERHEAD", "accumulate_prepared",
           "assign_accumulate", "grid_histogram", "prepare_centers", "use_compiled", "warm_up"]

#: Work (rows × (multiply-adds per row + :data:`ROW_OVERHEAD`)) from which a job takes the
#: compiled kernels. numpy's formulation costs ≈ 0.17 ns more per multiply-add and ≈ 60 ns more
#: per row (argmin, sparse product; measured on the 2-core machine), the kernels' first load
#: ≈ 0.75 s (numba import included; seconds under load): at this threshold numpy's extra time
#: is ≈ 0.02 s, so only jobs far smaller than the load cost stay on numpy (a CLI fit of a
#: small table), and every job the benchmarks time is compiled.
COMPILED_MIN_WORK = 10**8
#: numpy's per-row overhead in multiply-add units (≈ 60 ns / 0.17 ns).
ROW_OVERHEAD = 350


def use_compiled(rows: float, per_row: float) -> bool:
    """Whether a job of ``rows`` rows (× passes) of ``per_row`` multiply-adds is compiled: a
    function of public shapes only, so a run gives the same result wherever it runs."""
    return rows * (per_row + ROW_OVERHEAD) >= COMPILED_MIN_WORK

#: Rows per distance block: k × BLOCK_ROWS doubles (50 KiB at k = 25) stay in L2 between the
#: product and the argmin (scikit-learn's Lloyd uses the same 256; 512 and 1024 measured the
#: same on Covertype rows). Fewer rows when k is large, so a block stays ≤ 256 KiB.
BLOCK_ROWS = 256
_EMPTY = np.empty(0)
_NO_ROWS = np.empty(0, dtype=np.int64)


@nogil_jit
def _kernel(X, neg2_c, c_sq, w, use_w, sums, counts, block, lo, hi, outside
            ):  # pragma: no cover - compiled
    n, d = X.shape
    k = neg2_c.shape[0]
    Dt = np.empty((k, block))
    best = np.empty(block)
    lab = np.empty(block, dtype=np.int64)
    # outside (sorted row indices): a block holding one is clamped to [lo, hi] into this
    # buffer (np.clip's min(max(x, lo), hi)), so a box with rows outside costs block × d
    # doubles, not a copy of X, and the other blocks are read as they are (issue 23.6)
    buf = np.empty((block if outside.size else 0, d))
    p = 0
    finite = True
    for start in range(0, n, block):
        stop = min(start + block, n)
        m = stop - start
        while p < outside.size and outside[p] < start:
            p += 1
        if p < outside.size and outside[p] < stop:
            for r in range(m):
                for f in range(d):
                    v = X[start + r, f]
                    if v < lo[f]:
                        v = lo[f]
                    elif v > hi[f]:
                        v = hi[f]
                    buf[r, f] = v
            Xb = buf[:m]
        else:
            Xb = X[start:stop]
        # (k × m) = −2 C X_bᵀ: measured ≈ 13 % faster than X_b (−2Cᵀ) for k ≪ m
        if m == block:
            np.dot(neg2_c, Xb.T, Dt)
            Db = Dt
        else:
            Db = np.dot(neg2_c, Xb.T)
        # running argmin over centres, row-vectorised; strict < keeps the first on ties
        for r in range(m):
            best[r] = Db[0, r] + c_sq[0]
            lab[r] = 0
        for j in range(1, k):
            cj = c_sq[j]
            for r in range(m):
                v = Db[j, r] + cj
                if v < best[r]:
                    best[r] = v
                    lab[r] = j
        for r in range(m):
            if not np.isfinite(best[r]):
                finite = False
            i = start + r
            wi = w[i] if use_w else 1.0
            j = lab[r]
            counts[j] += wi
            srow = sums[j]
            xrow = Xb[r]
            for f in range(d):
                srow[f] += wi * xrow[f]
    return finite


def _assign_accumulate_numpy(X, neg2_c, c_sq, w):
    """The same step with numpy: BLAS distances, argmin (first on ties), a sparse one-hot
    product for the sums."""
    n, k = X.shape[0], neg2_c.shape[0]
    with np.errstate(over="ignore", invalid="ignore"):  # reported through ``finite``
        D = X @ neg2_c.T
        D += c_sq
    lab = np.argmin(D, axis=1)
    finite = bool(np.all(np.isfinite(D[np.arange(n), lab])))
    wts = np.ones(n) if w is None else w
    counts = np.bincount(lab, weights=wts, minlength=k).astype(float)
    onehot = sparse.csr_matrix((wts, lab, np.arange(n + 1)), shape=(n, k))
    return np.asarray(onehot.T @ X), counts, finite


def assign_accumulate(
    X: np.ndarray, centers: np.ndarray, weights: np.ndarray | None = None,
    compiled: bool | None = None,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Per-cluster Σ w x and Σ w of the nearest-centre partition of X, in one compiled pass.

    Parameters
    ----------
    X : (n, d) float64 array, C-contiguous (copied otherwise)
    centers : (k, d) float64 array
    weights : (n,) float64 array, optional (default: every w_i = 1)
    compiled : bool, optional
        Use the compiled kernel (True) or numpy (False); default: by the size of this call
        (:func:`use_compiled`). A loop decides once for all its calls.

    Returns
    -------
    sums : (k, d) array
    counts : (k,) array
    finite : bool
        False when some point's smallest ‖c‖² − 2 x·c overflowed (not finite); the caller
        reports it, as :func:`dpcore.data.geometry.nearest_center` does.
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    w = None if weights is None else np.ascontiguousarray(weights, dtype=np.float64)
    return accumulate_prepared(X, prepare_centers(centers), w, compiled)


def prepare_centers(centers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """−2C and ‖c‖² of each centre: what every block of one Lloyd step shares."""
    C = np.asarray(centers, dtype=np.float64)
    return np.ascontiguousarray(-2.0 * C), np.einsum("ij,ij->i", C, C)


def accumulate_prepared(X: np.ndarray, prepared: tuple[np.ndarray, np.ndarray],
                        w: np.ndarray | None, compiled: bool | None = None,
                        clamp: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
                        ) -> tuple[np.ndarray, np.ndarray, bool]:
    """:func:`assign_accumulate` on a C-contiguous float64 X (and w) with
    :func:`prepare_centers`' output: no per-call conversions (a loop over row blocks).

    ``clamp=(lo, hi, outside)`` (length-d float64 bounds, the sorted indices of X's rows
    outside them): the step of ``np.clip(X, lo, hi)``, bit for bit, without copying X (the
    compiled kernel clamps only the distance blocks that hold such a row, into a buffer; numpy
    clamps this call's rows, which the callers keep to one row block)."""
    neg2_c, c_sq = prepared
    k, d = neg2_c.shape
    sums = np.zeros((k, d))
    counts = np.zeros(k)
    if X.shape[0] == 0:
        return sums, counts, True
    dirty = clamp is not None and clamp[2].size > 0
    if not (use_compiled(X.shape[0], k * d) if compiled is None else compiled):
        return _assign_accumulate_numpy(np.clip(X, clamp[0], clamp[1]) if dirty else X, neg2_c,
                                        c_sq, w)
    block = max(16, min(BLOCK_ROWS, 32768 // k))
    lo, hi, outside = (_EMPTY, _EMPTY, _NO_ROWS) if not dirty else (
        np.ascontiguousarray(clamp[0], dtype=np.float64),
        np.ascontiguousarray(clamp[1], dtype=np.float64),
        np.ascontiguousarray(clamp[2], dtype=np.int64))
    finite = _kernel(X, neg2_c, c_sq, np.empty(0) if w is None else w, w is not None, sums,
                     counts, block, lo, hi, outside)
    return sums, counts, bool(finite)


@nogil_jit(fastmath={"reassoc"})  # sums may vectorise: 9.6 → 7.1 ms serial, last-bit changes
def _grid_pass(X, center, scale, grid, bins, counts, norms):  # pragma: no cover - compiled
    # s = ‖x − c‖ as DPLloyd's sensitivity norms compute it (‖x‖² − 2x·c + ‖c‖², floored at 0),
    # then grid_bins' ⌈s·G/r⌉ clipped to [0, G]; False when some ‖x‖² is not finite. s itself
    # goes to ``norms`` when it has a slot per row (the lazy per-point diagnostics read it).
    n, d = X.shape
    shifted = center.shape[0] > 0
    keep = norms.shape[0] == n
    cc = 0.0
    for f in range(center.shape[0]):
        cc += center[f] * center[f]
    finite = True
    for i in range(n):
        sq = 0.0
        for f in range(d):
            sq += X[i, f] * X[i, f]
        if not np.isfinite(sq):
            finite = False
            bins[i] = 0
            continue
        if shifted:
            dot = 0.0
            for f in range(d):
                dot += X[i, f] * center[f]
            sq = max(sq - 2.0 * dot + cc, 0.0)
        s = np.sqrt(sq)
        if keep:
            norms[i] = s
        b = min(max(np.ceil(s * scale), 0.0), grid)
        bins[i] = int(b)
        counts[int(b)] += 1
    return finite


def _grid_numpy(X, center, scale, grid, bins, counts, norms):
    """:func:`_grid_pass` with numpy (small inputs): the same formula, numpy's sums."""
    sq = np.einsum("ij,ij->i", X, X)
    finite = bool(np.all(np.isfinite(sq)))
    if center.shape[0] > 0:
        sq = np.maximum(sq - 2.0 * (X @ center) + float(center @ center), 0.0)
    s = np.sqrt(sq)
    if norms.shape[0] == X.shape[0]:
        norms[:] = s
    b = np.ceil(s * scale)
    np.clip(b, 0.0, grid, out=b)
    b[~np.isfinite(b)] = 0
    bins[:] = b.astype(np.intp)
    counts += np.bincount(bins, minlength=grid + 1)
    return finite


def grid_histogram(
    X: np.ndarray, radius: float, grid: int, center: np.ndarray | None = None,
    compiled: bool | None = None, norms: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, bool]:
    """Every row's bin of ``s = ‖x − center‖`` on the norm grid, and the histogram: one pass.

    The same bins as ``grid_bins(sensitivity_norms(X), radius, grid)`` (up to the last bit of
    ‖x‖², summed here in row order), without the n-sized temporaries: one compiled read of X
    on :func:`dpcore.core.threads.n_threads` threads (≈ 6 ms for Covertype's 566k × 54 on two
    threads where the numpy passes took ≈ 11 ms). Small inputs (``compiled`` None: by
    :func:`use_compiled` of n·d) take numpy. ``norms`` (optional, (n,) float64): filled with
    every row's s on the way (no second pass for diagnostics).

    Returns
    -------
    bins : (n,) uint16 array (intp when grid ≥ 2¹⁶), counts : (grid + 1,) int64 array
        (2 bytes a row, not 8: the pass writes, and the sampler reads, a quarter of the bytes)
    finite : bool
        False when some row's squared norm is not finite (NaN, ±inf or overflow): the caller
        reports it; those rows' bins are meaningless.
    """
    n = X.shape[0]
    g = int(grid)
    c = np.empty(0) if center is None else np.ascontiguousarray(center, dtype=float)
    scale = g / float(radius)
    bins = np.empty(n, dtype=np.uint16 if g < 1 << 16 else np.intp)
    fast = use_compiled(n, X.shape[1]) if compiled is None else compiled
    one_pass = _grid_pass if fast else _grid_numpy
    out = np.empty(0) if norms is None else norms

    def part(sl: slice) -> tuple[np.ndarray, bool]:
        counts = np.zeros(g + 1, dtype=np.int64)
        finite = one_pass(X[sl], c, scale, g, bins[sl], counts,
                          out if norms is None else out[sl])
        return counts, bool(finite)

    # integer counts and per-row bins: any split gives the same result, so one block a thread
    workers = n_threads()
    parts = map_row_blocks(part, row_blocks(n, g + 1, min_rows=max(MIN_ROWS_PER_THREAD,
                                                                   -(-n // workers))),
                           threads=workers)
    return bins, np.sum([p[0] for p in parts], axis=0), all(p[1] for p in parts)


def warm_up() -> None:
    """Load (or compile) every kernel now, on tiny inputs of the types real calls use.

    A long-running server calls this once at start: the first fit then does not pay the
    ≈ 0.1 s cache load (≈ 1 s compile on a fresh machine), and the ≈ 40 MiB that LLVM and the
    machine code take are part of the server's baseline, not of the first session.
    """
    X = np.zeros((4, 2))
    assign_accumulate(X, np.zeros((2, 2)), compiled=True)
    assign_accumulate(X, np.zeros((2, 2)), np.ones(4), compiled=True)
    grid_histogram(X, 1.0, 4, compiled=True)
    grid_histogram(X, 1.0, 4, center=np.ones(2), compiled=True)
