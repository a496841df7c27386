"""DP-Lloyd on Dask: full-data DP-Lloyd over partitions, and the sample-then-cluster pipeline.

:func:`dp_lloyd_on_partitions` maps the noise-free Lloyd statistics over the partitions and adds the
noise once per iteration on the driver; :func:`kmeans` importance-samples
(:func:`dpcore.scale.sampling.importance_sample`), calibrates the noise as the in-memory
:class:`~dpcore.mechanisms.lloyd.estimator.DPLloyd` does and clusters the sample, in memory or on
the cluster. Both return a :class:`ScaleKMeans`. Overview in :mod:`dpcore.scale.dask_kmeans`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from dpcore.core.cancel import checkpoint
from dpcore.core.rng import RNGLike
from dpcore.data.geometry import clip_to_ball
from dpcore.mechanisms.importance import (
    LloydCalibration,
    calibrate_lloyd,
    dp_lloyd_noise_scales,
    sampled_lloyd_epsilon,
)
from dpcore.mechanisms.importance.grid import DEFAULT_GRID
from dpcore.privacy.guarantees import PureDP, compose
from dpcore.scale.errors import ScaleError
from dpcore.scale.errors import compute as _compute
from dpcore.scale.partitions import (
    Progress,
    _matrix,
    _partitions,
    _say,
    _stats_part,
    partition_seeds,
)
from dpcore.scale.sampling import ScaleSample, importance_sample

__all__ = ["ScaleKMeans", "dp_lloyd_on_partitions", "kmeans"]


def _lloyd_sample_part(res: dict, centers: np.ndarray):
    """Noise-free weighted Lloyd statistics of one persisted partition sample."""
    from dpcore.mechanisms.lloyd.estimator import lloyd_statistics

    return lloyd_statistics(res["X"], centers, res["weights"])


def _lloyd_part(part: Any, index: int, radius: float, center: np.ndarray | None,
                centers: np.ndarray):
    """Rows read and noise-free Lloyd statistics (sums, counts) of one data partition."""
    from dpcore.mechanisms.lloyd.estimator import lloyd_statistics

    M = _matrix(part, index, radius, center)
    sums, counts = lloyd_statistics(M, centers)
    return M.shape[0], np.asarray(sums, dtype=np.float64), np.asarray(counts, dtype=np.float64)


def _lloyd_iterations(stats: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                      centers: np.ndarray, *, n_iter: int, beta_sum: float, beta_count: float,
                      radius: float, rng: np.random.Generator, progress: Progress) -> np.ndarray:
    """Algorithm 2: noise-free statistics from ``stats``, noise once per iteration here."""
    from dpcore.mechanisms.lloyd.estimator import noisy_lloyd_update

    for t in range(int(n_iter)):
        checkpoint(t / n_iter, f"DP-Lloyd iteration {t + 1} of {n_iter}")  # Stop / superseded
        sums, counts = stats(centers)
        centers = noisy_lloyd_update(sums, counts, centers, beta_sum=beta_sum,
                                     beta_count=beta_count, radius=radius, rng=rng)
        _say(progress, f"DP-Lloyd iteration {t + 1}/{n_iter}")
    return np.asarray(centers)


def _initial_centers(init: Any, k: int, d: int, radius: float, rng: np.random.Generator):
    """Public initial centres: given, or data-independent (:func:`lloyd.random_ball_centers`)."""
    if init is not None:
        C = np.asarray(init, dtype=np.float64)
        if C.shape != (k, d) or not np.all(np.isfinite(C)):
            raise ValueError(f"init must be finite with shape ({k}, {d}), got {C.shape}")
        return clip_to_ball(C, radius)
    from dpcore.mechanisms.lloyd.estimator import random_ball_centers

    return random_ball_centers(k, d, radius, rng=rng)


@dataclass
class ScaleKMeans:
    """Private cluster centres computed from partitioned data.

    Attributes
    ----------
    cluster_centers_ : (k, d) ndarray
    privacy_ : Guarantee
        Everything the run spent (x̃ release, if any, composed with DP-Lloyd).
    beta_sum, beta_count : float
        The DP-Lloyd noise scales used.
    n : int
    sample : ScaleSample or None
        The importance sample (None for full-data DP-Lloyd). Not private.
    seconds : dict
    """

    cluster_centers_: np.ndarray
    privacy_: Any
    beta_sum: float
    beta_count: float
    n: int
    sample: ScaleSample | None = None
    seconds: dict = field(default_factory=dict)

    def predict(self, X: np.ndarray) -> np.ndarray:
        from dpcore.data.geometry import nearest_center

        return nearest_center(np.asarray(X, dtype=np.float64), self.cluster_centers_)[0]


def dp_lloyd_on_partitions(
    data: Any,
    n_clusters: int,
    *,
    epsilon: float,
    radius: float,
    n_iter: int = 10,
    init: Any = None,
    missing: Any = None,
    columns: Sequence[str] | Sequence[int] | None = None,
    center: Sequence[float] | np.ndarray | None = None,
    persist: bool = False,
    rng: RNGLike = None,
    client: Any = None,
    progress: Progress = None,
) -> ScaleKMeans:
    """Full-data DP-Lloyd over partitioned data (Algorithm 2 with w ≡ 1; ε-DP).

    Each iteration maps :func:`dpcore.mechanisms.lloyd.lloyd_statistics` over the partitions, adds
    the noise-free sums and counts on the driver and applies
    :func:`dpcore.mechanisms.lloyd.noisy_lloyd_update` once, so the noise (and the guarantee
    T(r/β_sum + 1/β_count) = ε) is that of the in-memory algorithm. ``persist=True`` keeps the
    partitions in cluster memory between iterations (otherwise each iteration re-reads them: slower,
    but any size works). """
    import dask
    from dask import delayed

    r = float(radius)
    c = None if center is None else np.asarray(center, dtype=np.float64)
    parts, _ = _partitions(data, columns, missing)
    origins = parts.origins
    if persist:
        parts = list(client.persist(parts) if client is not None else dask.persist(*parts))
    root, _ = partition_seeds(rng, 0)
    gen = np.random.default_rng(root)
    t0 = time.perf_counter()
    _say(progress, f"counting rows of {len(parts)} partitions")
    stats = _compute([delayed(_stats_part)(p, i, r, c) for i, p in enumerate(parts)], client,
                     "row count", origins)
    rows = np.array([s[0] for s in stats], dtype=np.int64)
    n, d = int(rows.sum()), int(stats[0][1])
    cal = calibrate_lloyd(None, epsilon=epsilon, n=n, dim=d, radius=r, n_iter=n_iter)

    def map_reduce(centers: np.ndarray):
        out = _compute([delayed(_lloyd_part)(p, i, r, c, centers) for i, p in enumerate(parts)],
                       client, "a DP-Lloyd iteration", origins)
        seen = np.array([o[0] for o in out], dtype=np.int64)
        if not np.array_equal(seen, rows):
            raise ScaleError(f"a DP-Lloyd iteration saw {int(seen.sum())} rows, not {n}; "
                             "the data changed or a partition was lost")
        return sum(o[1] for o in out), sum(o[2] for o in out)

    C0 = _initial_centers(init, int(n_clusters), d, r, gen)
    centers = _lloyd_iterations(map_reduce, C0, n_iter=n_iter, beta_sum=cal.beta_sum,
                                beta_count=cal.beta_count, radius=r, rng=gen, progress=progress)
    return ScaleKMeans(centers, PureDP(cal.epsilon), cal.beta_sum, cal.beta_count, n,
                       seconds={"lloyd": time.perf_counter() - t0})


def kmeans(
    data: Any,
    n_clusters: int,
    *,
    epsilon: float,
    radius: float,
    sample_size: float | None = None,
    sampler: str = "coreset",
    lam: float = 0.5,
    n_iter: int = 10,
    init: Any = None,
    missing: Any = None,
    columns: Sequence[str] | Sequence[int] | None = None,
    center: Sequence[float] | np.ndarray | None = None,
    n: int | None = None,
    mean_sq_norm: float | None = None,
    stat_epsilon: float | None = None,
    rng: RNGLike = None,
    client: Any = None,
    progress: Progress = None,
    gather: bool = True,
    q_grid: int | None = DEFAULT_GRID,
) -> ScaleKMeans:
    """Importance-sample partitioned data, then run weighted DP-Lloyd on the sample.

    The noise is calibrated for the target (m, ε) exactly as in memory
    (:func:`dpcore.mechanisms.importance.calibrate_lloyd`: Prop. 3 for uniform, Eq. 5 for
    coreset), so the
    delivered guarantee is the same. With ``stat_epsilon`` the total ``epsilon`` is split:
    ε₀ = ``stat_epsilon`` for x̃ and ε − ε₀ for DP-Lloyd (basic composition).

    ``sampler="privacy"`` (with ``sample_size=None``) samples by Theorem 10 with the full-data
    noise at ε ("sampling for free"): the run is ε-DP and the sample is as small as that noise
    level allows, with no public statistic at all; its q is looked up on the public norm grid
    of ``q_grid`` bins as in memory (None: the exact per-row q).

    ``gather=True`` brings the sample to the driver and runs
    :func:`dpcore.mechanisms.lloyd.estimator.dp_lloyd` there; ``gather=False`` (a sample too large
    for the driver) keeps it on the cluster and maps
    :func:`dpcore.mechanisms.lloyd.estimator.lloyd_statistics` over its partitions each iteration,
    with the noise added once on the driver: the same algorithm and the same noise draws.
    """
    eps_total = float(epsilon)
    eps_lloyd = eps_total - (float(stat_epsilon) if stat_epsilon is not None else 0.0)
    if not eps_lloyd > 0:
        raise ValueError(f"stat_epsilon={stat_epsilon!r} leaves nothing of epsilon={epsilon!r} "
                         "for DP-Lloyd; use a smaller stat_epsilon")
    _, (sample_seed, lloyd_seed) = partition_seeds(rng, 2)
    S = importance_sample(data, sample_size, radius=radius, sampler=sampler, lam=lam,
                          columns=columns, missing=missing, center=center, n=n,
                          mean_sq_norm=mean_sq_norm,
                          stat_epsilon=stat_epsilon, rng=sample_seed, client=client,
                          progress=progress, gather=gather, q_grid=q_grid,
                          epsilon=eps_lloyd if sampler == "privacy" else None, n_iter=n_iter)
    d = S.dim
    if sampler == "privacy":  # the noise the sampler assumed; ε* by Theorem 10 (Assumption 8)
        bs, bc = dp_lloyd_noise_scales(eps_lloyd, S.radius, n_iter, d)
        eps_out = sampled_lloyd_epsilon(sampler="privacy", beta_sum=bs, beta_count=bc,
                                        n_iter=n_iter, radius=S.radius, target_epsilon=eps_lloyd)
        cal = LloydCalibration("privacy", eps_out, S.sample_size, bs, bc, math.nan)
    else:
        cal = calibrate_lloyd(sampler if lam < 1 else "uniform", epsilon=eps_lloyd, n=S.n,
                              dim=d, radius=S.radius, n_iter=n_iter, sample_size=S.sample_size,
                              mean_sq_norm=S.mean_sq_norm, lam=lam)
    from dask import delayed

    from dpcore.mechanisms.lloyd.estimator import dp_lloyd as dp_lloyd_in_memory

    gen = np.random.default_rng(lloyd_seed)
    t0 = time.perf_counter()
    C0 = _initial_centers(init, int(n_clusters), d, S.radius, gen)
    if gather:
        _say(progress, f"DP-Lloyd on the {S.size} sampled rows in memory")
        centers = dp_lloyd_in_memory(S.X, C0, n_iter=n_iter, beta_sum=cal.beta_sum,
                                     beta_count=cal.beta_count, radius=S.radius,
                                     weights=S.weights, rng=gen)[-1]
    else:
        _say(progress, f"DP-Lloyd on the {S.size} sampled rows on the cluster")

        def map_reduce(C: np.ndarray):
            out = _compute([delayed(_lloyd_sample_part)(p, C) for p in S.partitions], client,
                           "a DP-Lloyd iteration")
            return sum(o[0] for o in out), sum(o[1] for o in out)

        centers = _lloyd_iterations(map_reduce, C0, n_iter=n_iter, beta_sum=cal.beta_sum,
                                    beta_count=cal.beta_count, radius=S.radius, rng=gen,
                                    progress=progress)
    lloyd_g = PureDP(cal.epsilon)
    guarantee = lloyd_g if S.privacy_ is None else compose(S.privacy_, lloyd_g)
    return ScaleKMeans(centers, guarantee, cal.beta_sum, cal.beta_count, S.n, sample=S,
                       seconds=dict(S.seconds) | {"lloyd": time.perf_counter() - t0})
