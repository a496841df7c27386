"""Weighted DP-Lloyd as functions (Algorithm 2 of Fay, Mair & Sjölund 2024): the per-cluster
statistics, one noisy update, the whole loop, and the data-independent start.

:func:`lloyd_statistics` maps over row chunks (or Dask partitions) and the results add up;
:func:`noisy_lloyd_update` adds the calibrated noise once and divides (counts below
``min_count`` keep their centre); :func:`dp_lloyd` runs T rounds. The estimator around them is
:class:`dpcore.mechanisms.lloyd.estimator.DPLloyd`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
from scipy import sparse

from dpcore.core.cancel import checkpoint
from dpcore.core.kernels import (
    accumulate_prepared,
    assign_accumulate,
    prepare_centers,
    use_compiled,
)
from dpcore.core.rng import RNGLike, as_generator
from dpcore.core.threads import map_row_blocks, n_threads, row_blocks, single_threaded_blas
from dpcore.data.geometry import clip_to_ball, overflow_error
from dpcore.mechanisms.lloyd.domain import LloydDomain, ball_domain
from dpcore.privacy.noise import add_l2_exponential, add_laplace, public_randomness

__all__ = ["BLOCK_ROWS", "cluster_sums", "dp_lloyd", "lloyd_statistics", "noisy_lloyd_update",
           "random_ball_centers"]

# Rows per distance block: a block of X (≈ 4096 × d doubles) and its distances stay in cache;
# measured ≈ 5× faster than one n × k product on Covertype (566k × 54, k = 25).
BLOCK_ROWS = 4096


def cluster_sums(
    X: np.ndarray, labels: np.ndarray, k: int, weights: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster Σ w x and Σ w for given labels: one sparse (k × n)·(n × d) product, no loop."""
    n = X.shape[0]
    w = np.ones(n) if weights is None else weights
    counts = np.bincount(labels, weights=w, minlength=k).astype(float)
    if n == 0:
        return np.zeros((k, X.shape[1])), counts
    onehot = sparse.csr_matrix((w, labels, np.arange(n + 1)), shape=(n, k))
    sums = np.asarray(onehot.T @ X)
    return sums, counts


def lloyd_statistics(
    X,
    centers,
    weights=None,
    compiled: bool | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Noise-free statistics of one Lloyd step: per-cluster weighted sums and counts.

    Parameters
    ----------
    X : (n, d) array
    centers : (k, d) array
        Current centres; each point goes to its nearest one (squared Euclidean, Algorithm 2;
        the first on ties).
    weights : (n,) array, optional
        Importance weights w_i (default 1).
    compiled : bool, optional
        Compiled kernel or numpy (default: by the size of X; see
        :func:`dpcore.core.kernels.use_compiled`).

    Returns
    -------
    sums : (k, d) array, Σ_{i ∈ C_j} w_i x_i
    counts : (k,) array, Σ_{i ∈ C_j} w_i

    One compiled pass (:func:`dpcore.core.kernels.assign_accumulate`). Sums and counts of
    disjoint partitions add up, so a distributed caller can map this over partitions, sum, and
    call :func:`noisy_lloyd_update` once.
    """
    X = np.asarray(X, dtype=float)
    C = np.asarray(centers, dtype=float)
    if X.ndim != 2 or C.ndim != 2 or X.shape[1] != C.shape[1] or C.shape[0] == 0:
        raise ValueError(f"X (n, d) and centers (k ≥ 1, d) must agree, got {X.shape}, {C.shape}")
    if weights is not None:
        weights = np.asarray(weights, dtype=float)
        if weights.shape != (X.shape[0],):
            raise ValueError(f"weights must have shape ({X.shape[0]},), got {weights.shape}")
    sums, counts, finite = assign_accumulate(X, C, weights, compiled)
    if not finite and np.isfinite(C).all() and np.isfinite(X).all():  # NaN rows: caller's
        raise overflow_error("squared distances")
    return sums, counts


def noisy_lloyd_update(
    sums,
    counts,
    centers,
    *,
    beta_sum: float,
    beta_count: float,
    radius: float,
    rng: RNGLike = None,
    min_count: float = 1.0,
    sum_noise_weights: np.ndarray | None = None,
    box: np.ndarray | None = None,
) -> np.ndarray:
    """One noisy centre update of weighted DP-Lloyd (Algorithm 2, inner loop).

    Adds ξ_j ~ Laplace(0, β_count) to each count and ζ_j with density ∝ exp(−‖ζ‖₂/β_sum) to each
    sum (:func:`dpcore.privacy.noise.sample_l2_exponential`), then sets c_j = noisy sum / noisy
    count. Post-processing (privacy-neutral, see the module docstring): a cluster whose noisy count
    is below ``min_count`` keeps its previous centre; every centre is clipped to the ball of radius
    ``radius``.

    This release is (ε_count + ε_sum)-DP per iteration with ε_count = 1/β_count and
    ε_sum = r/β_sum for points of norm ≤ r (unit weights; weight w multiplies both, Prop. 13).

    Parameters
    ----------
    sums : (k, d) array, counts : (k,) array
        From :func:`lloyd_statistics`.
    centers : (k, d) array
        The previous centres (public: outputs of the previous iteration or the public init).
    beta_sum, beta_count : float ≥ 0
        Noise scales; 0 means no noise (the non-private ε = ∞ reference).
    radius : float
        r, the ball the data were clipped to.
    rng : None, int or Generator
    min_count : float
        Threshold on the noisy count below which the previous centre is kept.
    sum_noise_weights : (d,) array, optional
        Per-coordinate Laplace sum noise of scale β_sum·u_i instead of the L2-exponential one
        (a box domain, :mod:`dpcore.mechanisms.lloyd.domain`); ε_sum = Σ|x_i|/(β_sum u_i) per point.
    box : (d,) array, optional
        Half-ranges h: centres are clamped to [−h, h] (the box, in shifted coordinates)
        instead of the ball.

    Returns
    -------
    (k, d) array of new centres.
    """
    sums = np.asarray(sums, dtype=float)
    counts = np.asarray(counts, dtype=float)
    prev = np.asarray(centers, dtype=float)
    k, d = sums.shape
    if counts.shape != (k,) or prev.shape != (k, d):
        raise ValueError(
            f"sums (k, d), counts (k,) and centers (k, d) disagree: {sums.shape}, {counts.shape}, "
            f"{prev.shape}"
        )
    if not (beta_sum >= 0 and beta_count >= 0):
        raise ValueError(f"noise scales must be ≥ 0, got {beta_sum!r}, {beta_count!r}")
    gen = as_generator(rng)
    noisy_counts = add_laplace(counts, beta_count, sensitivity=1.0, rng=gen)
    if sum_noise_weights is None:
        noisy_sums = (add_l2_exponential(sums, beta_sum, sensitivity=radius, rng=gen)
                      if beta_sum > 0 else sums)
    else:
        # Lap(β·u_i) per coordinate = u_i·(sums_i/u_i + Lap(β)): the ℓ1 sensitivity of sums/u is
        # Σ h_i/u_i on the box (radius/max u on a ball), what the defended grid needs.
        u = np.asarray(sum_noise_weights, dtype=float)
        sens = float(np.sum(box / u)) if box is not None else radius / float(np.max(u))
        noisy_sums = add_laplace(sums / u, beta_sum, sensitivity=sens, rng=gen) * u
    keep = ~(noisy_counts >= min_count)
    safe = np.where(keep, 1.0, noisy_counts)
    new = np.where(keep[:, None], prev, noisy_sums / safe[:, None])
    return clip_to_ball(new, radius) if box is None else np.clip(new, -box, box)


def dp_lloyd(
    X,
    init_centers,
    *,
    n_iter: int,
    beta_sum: float,
    beta_count: float,
    radius: float | None = None,
    weights=None,
    rng: RNGLike = None,
    min_count: float = 1.0,
    domain: LloydDomain | None = None,
    first_assign=None,
    outside: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Weighted DP-Lloyd (Algorithm 2): T noisy Lloyd steps from ``init_centers``.

    ``X`` must already lie in the ball of radius ``radius`` (see :class:`DPLloyd`, which clips),
    or in ``domain`` (:mod:`dpcore.mechanisms.lloyd.domain`; then ``radius`` is not needed). With a
    box the noisy release is of the shifted sums Σ w (x − c) = Σ w x − c Σ w (no copy of X), and
    the centres are clamped to the box.
    ``first_assign`` (optional): a callable mapping a block of rows (m, d) to their cluster
    labels (m,) in [0, k), used by the first iteration instead of the nearest initial centre.
    It must be a fixed public function of each row alone (e.g. the nearest released max-cover
    proxy centre after the public JL projection); the iteration's ε is then unchanged. A
    cluster it leaves (noisily) empty keeps its initial centre, as in any iteration.
    ``outside`` (a box ``domain`` only): the sorted indices of X's rows outside the box
    (:meth:`~dpcore.mechanisms.lloyd.domain.LloydDomain.rows_outside`); every step sees them
    clamped to it, with exactly the numbers of ``np.clip(X, lo, hi)`` but without a copy of X
    (the compiled step clamps only the cache blocks that hold one; issue 23.6).

    Returns
    -------
    list of T + 1 arrays (k, d): the initial centres and the centres after each iteration.
    """
    X = np.ascontiguousarray(X, dtype=float)  # once, not per block and iteration
    gen = as_generator(rng)
    if domain is None:
        if radius is None:
            raise ValueError("dp_lloyd needs radius (a ball) or domain")
        domain = ball_domain(radius, X.shape[1])
    shift = domain.center if np.any(domain.center != 0) else None
    if outside is not None and outside.size and not domain.is_box:
        raise ValueError("dp_lloyd(outside=) needs a box domain")
    box = None if outside is None or not outside.size else (domain.lo, domain.hi)
    w = None if weights is None else np.ascontiguousarray(weights, dtype=float)
    centers = np.asarray(init_centers, dtype=float)
    history = [centers]
    # Row blocks that depend on n, k and d only, their partial statistics added in block order:
    # the same numbers on 1 or 64 threads. BLAS limited to one thread inside the row threads
    # (OpenBLAS's own threads on small blocks are slow, catastrophically so on a shared machine).
    if X.ndim != 2 or centers.ndim != 2 or X.shape[1] != centers.shape[1] or not len(centers):
        raise ValueError(f"X (n, d) and init_centers (k ≥ 1, d) must agree, got {X.shape}, "
                         f"{centers.shape}")
    k, d = centers.shape
    blocks = row_blocks(X.shape[0], k * d + k)
    threads = min(n_threads(), len(blocks))
    # numpy for small fits: the compiled kernel's load costs more than it saves (docs/dp_kmeans.md)
    compiled = use_compiled(X.shape[0] * max(int(n_iter), 1), k * d)

    def stats(c, sl: slice, assign=None) -> tuple[np.ndarray, np.ndarray]:
        rows, wts = X[sl], None if w is None else w[sl]
        if assign is None:  # c: prepare_centers' output, shared by the iteration's blocks
            sums, counts, finite = accumulate_prepared(
                rows, c, wts, compiled, clamp=None if box is None else (*box, _rows_in(sl)))
            if not finite and np.isfinite(c[0]).all() and np.isfinite(rows).all():
                raise overflow_error("squared distances")
            return sums, counts
        if box is not None and _rows_in(sl).size:  # one row block, not X
            rows = np.clip(rows, *box)
        labels = np.asarray(assign(rows), dtype=np.int64)
        if labels.shape != (rows.shape[0],) or (
                labels.size and (labels.min() < 0 or labels.max() >= c.shape[0])):
            raise ValueError(f"first_assign must return one label in [0, {c.shape[0]}) per row")
        return cluster_sums(rows, labels, c.shape[0], wts)

    def _rows_in(sl: slice) -> np.ndarray:  # the block's rows outside, relative to its start
        a, b = np.searchsorted(outside, [sl.start, sl.stop])
        return outside[a:b] - sl.start

    # the calling thread takes the first run of blocks itself: one thread wake-up fewer
    pool = ThreadPoolExecutor(threads - 1) if threads > 1 else None
    try:
        with single_threaded_blas():
            for it in range(int(n_iter)):
                checkpoint(it / int(n_iter), f"DP-Lloyd iteration {it + 1} of {int(n_iter)}")
                assign = first_assign if it == 0 else None
                c = centers if assign is not None else prepare_centers(centers)
                parts = map_row_blocks(lambda sl, c=c, a=assign: stats(c, sl, a), blocks,
                                       pool=pool, threads=threads)
                sums, counts = parts[0]
                for ps, pc in parts[1:]:  # in block order: fixed rounding
                    sums, counts = sums + ps, counts + pc
                prev = centers
                if shift is not None:  # release Σ w (x − c); Σ w x − c Σ w is the same number
                    sums, prev = sums - counts[:, None] * shift, centers - shift
                centers = noisy_lloyd_update(sums, counts, prev, beta_sum=beta_sum,
                                             beta_count=beta_count, radius=domain.l2_radius,
                                             rng=gen, min_count=min_count,
                                             sum_noise_weights=domain.weights,
                                             box=domain.half_ranges)
                if shift is not None:
                    centers = centers + shift
                history.append(centers)
    finally:
        if pool is not None:
            pool.shutdown()
    return history


@public_randomness("initial centres uniform in the public ball: independent of the data")
def random_ball_centers(
    n_clusters: int, dim: int, radius: float, *, rng: RNGLike = None, scale: float = 0.5
) -> np.ndarray:
    """Data-independent initial centres: uniform in the ball of radius ``scale · radius``.

    Uses only the public r, so it costs no privacy. In high dimension almost all of a ball's
    volume is near its surface, so the whole ball would start every centre at ‖c‖ ≈ r, far from
    typical points; half the radius is a cheap, data-free compromise.
    """
    gen = as_generator(rng)
    g = gen.standard_normal((int(n_clusters), int(dim)))
    g /= np.maximum(np.linalg.norm(g, axis=1, keepdims=True), 1e-300)
    rad = scale * float(radius) * gen.random((int(n_clusters), 1)) ** (1.0 / int(dim))
    return g * rad
