"""Poisson importance sampling of partitioned data on Dask (Definition 5; spec §1.4, §5.2).

:func:`importance_sample` reads the partitions in one or two passes, draws each partition's
sample from its own stream and gathers it (or keeps it on the cluster) as a :class:`ScaleSample`;
:func:`write_sample` writes it to Parquet, CSV or ``.npz``. The probabilities are those of the
in-memory samplers of :mod:`dpcore.mechanisms.importance` (see :func:`_probabilities`). Overview
and privacy notes in :mod:`dpcore.scale.dask_kmeans`.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.core.rng import RNGLike
from dpcore.data.geometry import clip_to_ball
from dpcore.mechanisms.importance import (
    SAMPLERS,
    coreset_max_sample_size,
    coreset_q,
    dp_lloyd_noise_scales,
    poisson_sample,
    privacy_probabilities,
    uniform_probabilities,
)
from dpcore.mechanisms.importance.grid import DEFAULT_GRID, grid_bins, privacy_grid_table
from dpcore.privacy.guarantees import PureDP, privacy_alias
from dpcore.scale.errors import ScaleError
from dpcore.scale.errors import compute as _compute
from dpcore.scale.partitions import (
    Progress,
    _centred,
    _check_columns,
    _leak,
    _partitions,
    _say,
    _stats_part,
    partition_seeds,
)

__all__ = ["ScaleSample", "importance_sample", "write_sample"]


def _probabilities(sq_clipped: np.ndarray, spec: dict) -> np.ndarray:
    """q of each row from its squared clipped norm and the public constants in ``spec``.

    The rules are the in-memory samplers' (:mod:`dpcore.mechanisms.importance`), evaluated per
    partition with the global constants, since each q depends on x and public numbers alone:

    * ``uniform``: :func:`~dpcore.mechanisms.importance.uniform_probabilities` on the
      partition's share of m, ``m n_part / n`` (so q = m/n);
    * ``coreset``: :func:`~dpcore.mechanisms.importance.coreset_q` with the global n and x̃
      (:func:`~dpcore.mechanisms.importance.coreset_probabilities` would read n and x̃ off the
      partition itself);
    * ``privacy``: :func:`~dpcore.mechanisms.importance.privacy_probabilities` (1/w of Theorem
      10 for the DP-Lloyd profile) at the target ε*, with the data-independent noise ("sampling
      for free", Theorem 10): a function of x alone. By default looked up on the public norm
      grid (``q_grid`` bins, :func:`~dpcore.mechanisms.importance.grid.privacy_grid_table`),
      the in-memory default's envelope, so both give the same q; ``q_grid=None`` evaluates
      the exact q_priv of every row.

    Not reused, because the numbers would change: the in-memory ``DPLloyd`` fills q = m/n
    directly, where ``uniform_probabilities`` here computes ``(m n_part / n) / n_part`` (equal
    up to the last bit, which can flip a draw ``u < q``).
    """
    n_part = sq_clipped.shape[0]
    if n_part == 0:
        return np.empty(0)
    if spec["kind"] == "uniform":
        return uniform_probabilities(n_part, spec["m"] * n_part / spec["n"])
    if spec["kind"] == "coreset":
        return coreset_q(sq_clipped, sample_size=spec["m"], n=spec["n"],
                          mean_sq_norm=spec["x_tilde"], lam=spec["lam"])
    if spec.get("table") is not None:  # the norm grid: the in-memory default's table lookup
        return spec["table"][grid_bins(np.sqrt(sq_clipped), spec["radius"], spec["grid"])]
    return privacy_probabilities(np.sqrt(sq_clipped), beta_sum=spec["beta_sum"],
                                 beta_count=spec["beta_count"], n_iter=spec["n_iter"],
                                 target_epsilon=spec["epsilon"])


def _sample_part(part: Any, index: int, seed: np.random.SeedSequence, radius: float,
                 center: np.ndarray | None, spec: dict) -> dict:
    """Pass 2: q of every row, Bernoulli draws from this partition's own stream (Def. 5).

    Returns the sampled rows (clipped), their weights 1/q, their local row numbers, the rows
    read (checked on the driver) and Σ q (the expected size). ``min(q, 1)`` only absorbs
    rounding: the driver has checked q ≤ 1 on the whole ball. ‖clip(x)‖² = min(‖x‖², r²), so
    only the sampled rows need a clipped copy.
    """
    M, sq = _centred(part, index, center)
    q = _probabilities(np.minimum(sq, radius * radius), spec)
    idx, weights = poisson_sample(np.minimum(q, 1.0), rng=seed)
    return {"index": index, "rows": M.shape[0], "X": clip_to_ball(M[idx], radius),
            "weights": weights, "local": idx, "qsum": float(q.sum())}


@dataclass
class ScaleSample:
    """A Poisson importance sample gathered in memory (Definition 5).

    Attributes
    ----------
    X : (m', d) ndarray or None
        Sampled rows, centred on the declared centre and clipped to the radius (None when the
        sample was kept on the cluster, ``gather=False``).
    weights : (m',) ndarray or None
        1/q of each sampled row.
    indices : (m',) int64 or None
        Global row numbers (partition order). A diagnostic: *not* differentially private.
    n : int
        Rows in the data (public, see the module notes).
    partition_rows : ndarray
        Rows per partition, counted in pass 1 and checked in pass 2.
    sample_size : float
        Expected sample size m.
    sampler, lam, radius :
        As requested.
    mean_sq_norm : float or None
        The x̃ the coreset probabilities used.
    mean_sq_norm_source : {"declared", "private", "data", None}
    privacy_ : Guarantee or None
        What releasing x̃ cost (``PureDP(stat_epsilon)``), None when nothing was spent;
        ``guarantee`` is its deprecated name.
    seconds : dict
        Wall time of each pass.
    size, dim : int
        m', the number of sampled rows, and d, their width.
    partitions : list of dask Delayed or None
        With ``gather=False``: the persisted per-partition samples (dicts with "X", "weights").
    """

    X: np.ndarray | None
    weights: np.ndarray | None
    indices: np.ndarray | None
    n: int
    partition_rows: np.ndarray
    sample_size: float
    sampler: str
    lam: float
    radius: float
    mean_sq_norm: float | None
    mean_sq_norm_source: str | None
    privacy_: Any = None
    seconds: dict = field(default_factory=dict)
    size: int = 0
    dim: int = 0
    partitions: list | None = None

    guarantee = privacy_alias("guarantee")

    def summary(self) -> str:
        stat = ""
        if self.mean_sq_norm is not None:
            stat = f"; mean squared norm {self.mean_sq_norm:.6g} ({self.mean_sq_norm_source})"
        spent = f"; spent {self.privacy_}" if self.privacy_ is not None else ""
        secs = sum(self.seconds.values())
        where = "" if self.partitions is None else ", kept on the cluster"
        return (f"{self.sampler} sample{where}: {self.size} of {self.n} rows (expected "
                f"{self.sample_size:g}) from {len(self.partition_rows)} partitions in "
                f"{secs:.3g} s{stat}{spent}")


def _private_mean_sq_norm(sum_sq: float, n: int, *, radius: float, epsilon: float,
                          sample_size: float, lam: float, rng: np.random.Generator) -> float:
    """Laplace release of x̃ = Σ‖x‖²/n (sensitivity r² under add/remove), clamped to feasible.

    The lower end of the clamp is the smallest x̃ keeping q ≤ 1 on the whole ball
    (``coreset_max_sample_size(n, x̃, r², λ) ≥ m``); if it binds, a warning says that the
    expected sample size will be below m (Σ q = λm + (1 − λ) m x̃_true / x̃_used).
    """
    from dpcore.privacy.noise import add_laplace, laplace_scale

    scale = laplace_scale(radius**2, epsilon)
    noisy = add_laplace(sum_sq, scale, sensitivity=radius**2, rng=rng) / n
    lowest = (1.0 - lam) * sample_size * radius**2 / (n - lam * sample_size)
    if noisy < lowest:
        warnings.warn(
            f"the private mean squared norm {noisy:.6g} is below {lowest:.6g}, the smallest "
            f"value that keeps every coreset probability ≤ 1 at sample_size={sample_size:g}; "
            f"{lowest:.6g} is used, so the expected sample size is below {sample_size:g} "
            "(a smaller sample_size avoids this)",
            UserWarning, stacklevel=3)
    return float(min(max(noisy, lowest), radius**2))


def importance_sample(
    data: Any,
    sample_size: float | None,
    *,
    radius: float,
    sampler: str = "coreset",
    lam: float = 0.5,
    missing: Any = None,
    columns: Sequence[str] | Sequence[int] | None = None,
    center: Sequence[float] | np.ndarray | None = None,
    n: int | None = None,
    mean_sq_norm: float | None = None,
    stat_epsilon: float | None = None,
    epsilon: float | None = None,
    n_iter: int = 10,
    rng: RNGLike = None,
    client: Any = None,
    progress: Progress = None,
    gather: bool = True,
    q_grid: int | None = DEFAULT_GRID,
) -> ScaleSample:
    """Poisson importance sample of partitioned data, gathered in memory (spec §1.4, §5.2).

    Parameters
    ----------
    data : str, Path, list of them, dask DataFrame / Array, ndarray or pandas DataFrame
        Parquet or CSV file/directory/glob, or a Dask collection; rows are points.
    sample_size : float or None
        Expected sample size m (None for ``sampler="privacy"``).
    radius : float
        Declared public bound r on ‖x − center‖; rows are clipped to it.
    sampler : {"coreset", "uniform", "privacy"}
        q_core (λ-mixture, spec §5.2), q_unif = m/n, or the privacy-constrained q = 1/w of
        Theorem 10 for DP-Lloyd at target ``epsilon`` with the data-independent "sampling for
        free" noise (full-data noise scales; the expected size is then what it gives). The last
        depends on x alone: one pass, no n, no x̃. (Choosing the noise so that Σ q = m needs
        every point's norm and is offered in memory only, :class:`dpcore.mechanisms.lloyd.DPLloyd`.)
    lam : float
        λ of the coreset mixture.
    columns : list, optional
        Columns to use (default: all numeric).
    missing : mapping, optional
        The missing-cells rule per column, as in memory (:mod:`dpcore.data.missing`: ``"drop"``
        the rows or ``{"fill": c}`` with a public constant), applied per partition; a missing
        cell in a column without a rule is refused.
    center : array, optional
        Declared public centre, subtracted before clipping (the coreset sampler assumes centred
        data).
    n : int, optional
        Declared number of rows; checked against the rows counted.
    mean_sq_norm, stat_epsilon : float, optional
        The treatment of x̃ (module notes): declared, or released with ε₀ = ``stat_epsilon``;
        with neither it is read off the data with a PrivacyLeakWarning.
    epsilon, n_iter :
        ``sampler="privacy"``: target ε* and iterations T of the DP-Lloyd run fed by the sample.
    rng : None, int, SeedSequence or Generator
        Root of the per-partition streams (``SeedSequence(seed).spawn(npartitions)``).
    client : distributed.Client, optional
        Default: the current default scheduler (a running Client if there is one).
    progress : callable, optional
        Called with short status lines.
    gather : bool
        False keeps the sample on the cluster (persisted per partition) for samples too large
        for the driver; :func:`kmeans` then runs DP-Lloyd on it by map-reduce.
    q_grid : int or None
        ``sampler="privacy"``: bins of the public norm grid (default 4096, as in memory); None:
        the exact per-row q_priv (a Lambert W per row).

    Returns
    -------
    ScaleSample
    """
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be 'coreset', 'uniform' or 'privacy', got {sampler!r}")
    r = float(radius) if radius is not None else math.nan
    if not (math.isfinite(r) and r > 0):
        raise ValueError(f"radius must be a declared finite number > 0, got {radius!r}")
    if not 0.0 <= float(lam) <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    if mean_sq_norm is not None and stat_epsilon is not None:
        raise ValueError("give either mean_sq_norm (declared) or stat_epsilon (private estimate)")
    if stat_epsilon is not None and not float(stat_epsilon) > 0:
        raise ValueError(f"stat_epsilon must be > 0, got {stat_epsilon!r}")
    if mean_sq_norm is not None and not (math.isfinite(float(mean_sq_norm))
                                         and float(mean_sq_norm) > 0):
        raise ValueError(f"mean_sq_norm must be > 0, got {mean_sq_norm!r}")
    privacy = sampler == "privacy"
    if privacy:
        if epsilon is None:
            raise ValueError("sampler='privacy' needs epsilon (the target ε* of the DP-Lloyd "
                             "run the sample feeds) and n_iter")
        if sample_size is not None:
            raise ValueError("sampler='privacy' on partitioned data uses the data-independent "
                             "'sampling for free' noise, so the expected size is not chosen: "
                             "pass sample_size=None")
        if mean_sq_norm is not None or stat_epsilon is not None:
            raise ValueError("mean_sq_norm and stat_epsilon belong to the coreset sampler")
        m = math.nan
    else:
        m = math.nan if sample_size is None else float(sample_size)
        if not (math.isfinite(m) and m > 0):
            raise ValueError(f"sample_size must be a number > 0, got {sample_size!r}")
    c = None if center is None else np.asarray(center, dtype=np.float64)

    from dask import delayed

    parts, dim = _partitions(data, columns, missing)
    root, seeds = partition_seeds(rng, len(parts))
    driver_rng = np.random.default_rng(root)  # spawn key () is distinct from the children's
    coreset = sampler == "coreset" and lam < 1
    # The privacy sampler needs nothing global; the others need n, and the coreset sampler x̃:
    # with those declared, nothing needs a first pass.
    two_pass = not privacy and (n is None or (coreset and mean_sq_norm is None))
    npass = 2 if two_pass else 1

    t0 = time.perf_counter()
    rows, total, sum_sq = None, None if n is None else int(n), None
    if two_pass:
        _say(progress, f"pass 1/2: counting rows of {len(parts)} partitions")
        stats = _compute([delayed(_stats_part)(p, i, r, c) for i, p in enumerate(parts)],
                         client, "pass 1 (row counts)", parts.origins)
        rows = np.array([s[0] for s in stats], dtype=np.int64)
        _check_columns({s[1] for s in stats if s[0] > 0})
        if total is not None and total != int(rows.sum()):
            raise ValueError(f"the data's row count differs from the declared n={n}")
        total = int(rows.sum())
        sum_sq = float(sum(s[2] for s in stats))
    if total is not None and total < 1:
        raise ValueError("the data has no rows" if n is None else f"n must be ≥ 1, got {n!r}")
    if n is None and not privacy:
        _leak(f"the sampling rate uses n={total} counted in the data, which the analysis treats "
              "as public; declare n= to make it an input")
    if not privacy and m > total:
        raise ValueError(f"sample_size must be in (0, n={total}], got {sample_size!r}")
    t1 = time.perf_counter()

    guarantee, x_tilde, source = None, None, None
    if coreset:
        if mean_sq_norm is not None:
            x_tilde, source = float(mean_sq_norm), "declared"
        elif stat_epsilon is not None:
            x_tilde, source = _private_mean_sq_norm(
                sum_sq, total, radius=r, epsilon=float(stat_epsilon), sample_size=m, lam=lam,
                rng=driver_rng), "private"
            _say(progress, f"private mean squared norm {x_tilde:.6g} (ε₀ = {stat_epsilon:g})")
            guarantee = PureDP(float(stat_epsilon))
        else:
            x_tilde, source = sum_sq / total, "data"
            _leak("the coreset sampler's mean squared norm was read off the data: the privacy "
                  "guarantee treats it as public; declare mean_sq_norm= or estimate it with "
                  "stat_epsilon=")
            if x_tilde == 0:
                raise ValueError("all points are 0: the coreset part is undefined; use lam=1")
        m_max = coreset_max_sample_size(total, x_tilde, r * r, lam=lam)
        if m > m_max * (1 + 1e-12):
            raise ValueError(
                f"sample_size={m:g} makes some coreset probability exceed 1 on the ball of "
                f"radius {r:g}; reduce sample_size or raise lam")  # n, x̃ may be data-derived

    if privacy:
        beta_sum, beta_count = dp_lloyd_noise_scales(float(epsilon), r, int(n_iter), dim)
        spec = {"kind": "privacy", "beta_sum": beta_sum, "beta_count": beta_count,
                "n_iter": int(n_iter), "epsilon": float(epsilon), "radius": r, "grid": q_grid,
                "table": None if q_grid is None else privacy_grid_table(
                    radius=r, grid=int(q_grid), beta_sum=beta_sum, beta_count=beta_count,
                    n_iter=int(n_iter), epsilon=float(epsilon))}
        _say(progress, f"pass 1/1: privacy-constrained sampling (ε* = {float(epsilon):g})")
    else:
        spec = ({"kind": "coreset", "m": m, "n": total, "x_tilde": x_tilde, "lam": float(lam)}
                if coreset else {"kind": "uniform", "m": m, "n": total})
        _say(progress, f"pass {npass}/{npass}: sampling {total} rows (expected m={m:g})")
    tasks = [delayed(_sample_part)(p, i, seeds[i], r, c, spec) for i, p in enumerate(parts)]
    kept = None
    if gather:
        results = _compute(tasks, client, f"pass {npass} (sampling)", parts.origins)
        meta = [_sample_meta(res) for res in results]
    else:  # persist the samples where they are; bring back only their sizes
        import dask

        kept = list(client.persist(tasks) if client is not None else dask.persist(*tasks))
        meta = _compute([delayed(_sample_meta)(k) for k in kept], client,
                        f"pass {npass} (sampling)", parts.origins)
    t2 = time.perf_counter()

    seen = np.array([mt[0] for mt in meta], dtype=np.int64)
    if len(meta) != len(parts):
        raise ScaleError(f"{len(meta)} of {len(parts)} partitions came back; no sample is "
                         "returned")
    if rows is None:  # one pass: the declared n (if any) is what was assumed
        _check_columns({mt[2] for mt in meta if mt[0] > 0})
        if total is not None and int(seen.sum()) != total:
            raise ValueError(f"the data's row count differs from the declared n={total}; no "
                             "sample is returned")
        rows, total = seen, int(seen.sum())
    elif not np.array_equal(seen, rows):
        bad = np.flatnonzero(seen != rows).tolist()
        raise ScaleError(
            f"row counts differ between the passes (partitions {bad[:10]}): pass 1 saw "
            f"{int(rows.sum())} rows, pass 2 {int(seen.sum())}; the data changed or a "
            "partition was lost; no sample is returned")
    if privacy:
        m = float(sum(mt[3] for mt in meta))  # the expected size the noise level gives
    size = int(sum(mt[1] for mt in meta))
    X = weights = indices = None
    if gather:
        offsets = np.concatenate([[0], np.cumsum(rows)[:-1]])
        X = np.concatenate([res["X"] for res in results])
        weights = np.concatenate([res["weights"] for res in results])
        indices = np.concatenate([offsets[res["index"]] + res["local"] for res in results])
        indices = indices.astype(np.int64)
    _say(progress, f"sampled {size} rows in {t2 - t0:.2f} s "
                   f"({total / max(t2 - t0, 1e-9):,.0f} rows/s)")
    return ScaleSample(
        X=X, weights=weights, indices=indices, n=total,
        partition_rows=rows, sample_size=m, sampler=sampler, lam=float(lam), radius=r,
        mean_sq_norm=x_tilde, mean_sq_norm_source=source, privacy_=guarantee,
        seconds={"pass1": t1 - t0, "pass2": t2 - t1}, size=size,
        dim=dim, partitions=kept,
    )


def _sample_meta(res: dict) -> tuple[int, int, int, float]:
    """(rows read, rows sampled, columns, Σ q) of one partition's sample."""
    return res["rows"], res["X"].shape[0], res["X"].shape[1], res["qsum"]


def write_sample(sample: ScaleSample, path: str | Path) -> None:
    """Write a sample as Parquet / CSV (columns x0..x{d-1}, weight) or ``.npz``."""
    import pandas as pd

    path = Path(path)
    if path.suffix == ".npz":
        np.savez(path, X=sample.X, weights=sample.weights)
        return
    df = pd.DataFrame(sample.X, columns=[f"x{j}" for j in range(sample.X.shape[1])])
    df["weight"] = sample.weights
    if path.suffix == ".csv":
        df.to_csv(path, index=False)
    else:
        df.to_parquet(path, index=False)
