"""Data larger than one machine: importance sampling and DP-Lloyd on Dask.

The seed paper's practical point (``../shared/spec/importance_sampling.md`` §1.4, Definition 5)
is that Poisson importance sampling decides for each point alone: q(x) depends on x and on a few
public constants only. A huge data set can therefore be subsampled in one streaming pass, the
sample (m ≪ n rows) gathered in memory, and clustered there with the in-memory code::

    import dask.dataframe as dd
    from dpcore.scale import dask_kmeans as scale
    result = scale.kmeans(dd.read_parquet("parts/"), 25, epsilon=3.0, radius=10.0,
                          sample_size=50_000, rng=0)

What is here
------------
:func:`importance_sample`
    Two passes over the partitions of a Dask DataFrame / Array (or Parquet / CSV paths): (1) row
    counts and, for the coreset sampler, the sum of squared clipped norms; (2) per-point
    probabilities and Bernoulli draws, each partition with its own reproducible stream
    ``np.random.SeedSequence(seed).spawn(npartitions)[i]``. Only the sampled rows travel to the
    driver. The row counts of pass 2 are checked against pass 1 partition by partition, so a
    partition that was lost, re-read differently or skipped is an error, never a silently
    partial sample. When n (and, for the coreset sampler, x̃) are declared, pass 1 is skipped
    and the rows seen are checked against the declared n instead. The privacy-constrained
    sampler with the "sampling for free" noise (Theorem 10) needs no global statistic at all:
    one pass. A worker that dies is
    replaced by Dask, which recomputes its partitions; the per-partition streams make the
    recomputed draws identical, so the sample is exactly the one an undisturbed run returns.
:func:`dp_lloyd`
    Weighted DP-Lloyd (Algorithm 2) over partitions: per iteration, noise-free partial sums and
    counts per partition (:func:`dpcore.mechanisms.lloyd.estimator.lloyd_statistics`), added on the
    driver, noise added once there (:func:`dpcore.mechanisms.lloyd.estimator.noisy_lloyd_update`).
:func:`kmeans`
    The pipeline: sample, calibrate the noise for the target (m, ε) exactly as the in-memory
    :class:`dpcore.mechanisms.lloyd.estimator.DPLloyd` does
    (:func:`dpcore.mechanisms.importance.sampling.calibrate_lloyd`), cluster.

Privacy treatment of the public constants (spec §5.2 caveat, §9.12)
-------------------------------------------------------------------
* ``radius`` is declared by the user (never read off the data); rows are centred on the declared
  ``center`` and clipped to the ball, so the guarantees' assumption ‖x‖ ≤ r holds.
* ``n``: the number of rows is treated as public, as in the in-memory path and the paper. Declare
  it with ``n=`` (checked against the rows counted in pass 1); otherwise it is counted and a
  :class:`~dpcore.privacy.guarantees.PrivacyLeakWarning` says so (the in-memory samplers warn
  likewise).
* x̃, the mean squared norm of the coreset sampler, is a statistic of the private data. Three
  treatments: ``mean_sq_norm=`` declares a public value (no cost); ``stat_epsilon=ε₀`` releases
  it with the Laplace mechanism (the sum of clipped squared norms has sensitivity r² under adding
  or removing a row), spending ε₀-DP that is composed into the final guarantee; with neither, x̃
  is computed exactly and a :class:`~dpcore.privacy.PrivacyLeakWarning` says that the guarantee
  then treats a data statistic as public (the in-memory path's and the paper's convention).
  A noisy x̃ is clamped to the interval where every probability on the ball is ≤ 1 (post-processing).
"""

from __future__ import annotations

import glob
import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.core.cancel import checkpoint
from dpcore.core.rng import RNGLike
from dpcore.data.geometry import clip_to_ball, row_norms
from dpcore.data.limits import MAX_ABS_VALUE
from dpcore.mechanisms.importance import (
    LloydCalibration,
    calibrate_lloyd,
    coreset_max_sample_size,
    coreset_q,
    dp_lloyd_noise_scales,
    lloyd_profile,
    poisson_sample,
    privacy_constrained_weights,
    sampled_lloyd_epsilon,
    uniform_probabilities,
)
from dpcore.privacy.guarantees import PrivacyLeakWarning, PureDP, compose, privacy_alias
from dpcore.scale.errors import PartitionError, ScaleError
from dpcore.scale.errors import Parts as _Parts
from dpcore.scale.errors import compute as _compute
from dpcore.scale.errors import files_of as _files_of

__all__ = [
    "ScaleError",
    "ScaleKMeans",
    "ScaleSample",
    "dp_lloyd",
    "importance_sample",
    "kmeans",
    "partition_seeds",
    "write_sample",
]

Progress = Callable[[str], None] | None


# --------------------------------------------------------------------------------------------
# Partitions
# --------------------------------------------------------------------------------------------


def _numeric(dtype: Any) -> bool:
    import pandas as pd

    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _partitions(data: Any, columns: Sequence[str] | Sequence[int] | None) -> tuple[list, int]:
    """The data as a list of Dask delayed objects, one per row partition, and its width d.

    ``data`` is a Parquet file / directory / glob or a CSV file / glob (str or Path, or a list
    of them), a Dask DataFrame, a 2-D Dask Array, or an in-memory array or pandas DataFrame
    (split into blocks of 100 000 rows).
    """
    import dask.array as da
    import dask.dataframe as dd

    paths = [data] if isinstance(data, str | Path) else data
    origins = None
    if isinstance(paths, list | tuple) and paths and all(isinstance(p, str | Path) for p in paths):
        source = [str(p) for p in paths]
        for path in source:
            if not (glob.glob(path) if any(c in path for c in "*?[") else Path(path).exists()):
                raise ValueError(f"cannot read {path!r}: no such file, directory or matching "
                                 "files")
        source = source[0] if len(source) == 1 else source
        first = source if isinstance(source, str) else source[0]
        try:
            # all columns first (lazy: only the schema is read), so that a missing column is
            # named with the ones the files have, not reported as an unreadable file
            if first.endswith((".csv", ".csv.gz")):  # gzip cannot be split: one partition/file
                data = dd.read_csv(source, blocksize=None if first.endswith(".gz") else "64MB")
            else:
                data = dd.read_parquet(source)
        except Exception as exc:  # pyarrow / fsspec raise many types; all mean "not readable"
            raise ValueError(f"cannot read {source!r} as Parquet or CSV "
                             f"({type(exc).__name__}: {exc})") from None
        files = _files_of(source)
        if len(files) == data.npartitions:  # one partition per file: name the file in errors
            origins = files
        if columns:
            missing = [c for c in columns if c not in data.columns]
            if missing:
                raise ValueError(f"column(s) {missing} not found in {source!r}; its columns are "
                                 f"{[str(c) for c in data.columns][:50]}")
    if isinstance(data, np.ndarray):
        data = da.from_array(np.asarray(data, dtype=np.float64), chunks=(100_000, -1))
    if type(data).__module__.startswith("pandas") and hasattr(data, "columns"):
        data = dd.from_pandas(data, chunksize=100_000)
    if isinstance(data, dd.DataFrame):
        if columns:
            missing = [c for c in columns if c not in data.columns]
            if missing:
                raise ValueError(f"unknown column(s) {missing}; the data has {list(data.columns)}")
            data = data[list(columns)]
        else:
            names = [c for c, t in data.dtypes.items() if _numeric(t)]
            if not names:
                raise ValueError("the data has no numeric column")
            data = data[names]
        parts = _Parts(data.to_delayed())
        parts.origins = origins
        return parts, len(data.columns)
    if isinstance(data, da.Array):
        if data.ndim != 2:
            raise ValueError(f"a Dask array must be 2-D (rows, features), got shape {data.shape}")
        if columns:
            bad = [c for c in columns if not isinstance(c, int) or not -data.shape[1] <= c
                   < data.shape[1]]
            if bad:
                raise ValueError(f"columns {bad} are not positions of the array's "
                                 f"{data.shape[1]} columns")
            data = data[:, list(columns)]
        return _Parts(data.rechunk({1: -1}).to_delayed()[:, 0]), int(data.shape[1])
    raise TypeError("data must be Parquet/CSV paths, a Dask DataFrame or Array, a numpy array "
                    f"or a pandas DataFrame; got {type(data).__name__}")


def _centred(part: Any, index: int, center: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """One partition as float64 rows centred on the declared centre, and its squared norms.

    Non-finite values are refused; the check runs on the squared norms (NaN and ±inf propagate
    into them), so no (n, d) temporary is needed on the fast path.
    """
    names = [str(c) for c in part.columns] if hasattr(part, "columns") else None
    try:
        M = part.to_numpy(dtype=np.float64) if hasattr(part, "to_numpy") else np.asarray(
            part, dtype=np.float64)
    except (TypeError, ValueError):
        raise PartitionError("a chosen column holds non-numeric values; choose numeric "
                             "columns", index) from None
    if M.ndim != 2:
        raise PartitionError(f"not 2-D (shape {M.shape})", index)
    if center is not None:
        M = M - center
    # |x| ≤ 1e100 (dpcore.data.limits) keeps every squared norm finite; NaN fails the test too
    ok = np.abs(M) <= MAX_ABS_VALUE
    if not ok.all():
        j = int(np.flatnonzero(~ok.all(axis=0))[0])
        col = f"column {names[j]!r}" if names else f"column {j + 1}"
        bad = int((~ok[:, j]).sum())
        raise PartitionError(f"{col} has {bad} missing, NaN, infinite or out-of-range "
                             "(|value| > 1e100 after centring) value(s); drop, fill or rescale "
                             "them first", index)
    return M, row_norms(M, squared=True)


def _matrix(part: Any, index: int, radius: float, center: np.ndarray | None) -> np.ndarray:
    """One partition centred on the declared centre and clipped to the radius."""
    return clip_to_ball(_centred(part, index, center)[0], radius)


def _stats_part(part: Any, index: int, radius: float, center: np.ndarray | None):
    """Pass 1: rows, columns and Σ ‖clip(x)‖² = Σ min(‖x‖², r²) of one partition."""
    M, sq = _centred(part, index, center)
    return M.shape[0], M.shape[1], float(np.minimum(sq, radius * radius).sum())


def _probabilities(sq_clipped: np.ndarray, spec: dict) -> np.ndarray:
    """q of each row from its squared clipped norm and the public constants in ``spec``.

    * ``uniform``: :func:`~dpcore.mechanisms.importance.uniform_probabilities` on the partition's
    share
      of m (= m/n);
    * ``coreset``: q_core with the global n and x̃
    (:func:`~dpcore.mechanisms.importance.sampling.coreset_q`);
    * ``privacy``: 1/w of :func:`~dpcore.mechanisms.importance.privacy_constrained_weights` for
      the DP-Lloyd profile (:func:`~dpcore.mechanisms.importance.lloyd_profile`) at the target
      ε*, with the data-independent noise ("sampling for free", Theorem 10): a function of x alone.
    """
    n_part = sq_clipped.shape[0]
    if n_part == 0:
        return np.empty(0)
    if spec["kind"] == "uniform":
        return uniform_probabilities(n_part, spec["m"] * n_part / spec["n"])
    if spec["kind"] == "coreset":
        return coreset_q(sq_clipped, sample_size=spec["m"], n=spec["n"],
                          mean_sq_norm=spec["x_tilde"], lam=spec["lam"])
    slopes = lloyd_profile(np.sqrt(sq_clipped), beta_sum=spec["beta_sum"],
                           beta_count=spec["beta_count"], n_iter=spec["n_iter"]).slopes
    return 1.0 / privacy_constrained_weights(slopes, spec["epsilon"])


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


def partition_seeds(rng: RNGLike, npartitions: int) -> tuple[np.random.SeedSequence, list]:
    """Root SeedSequence and one independent child per partition (``root.spawn(npartitions)``).

    An int seed gives the same streams on every run and every cluster layout with the same
    partitioning; a Generator contributes fresh entropy drawn from it.
    """
    if isinstance(rng, np.random.SeedSequence):
        root = rng
    elif isinstance(rng, np.random.Generator):
        root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    else:
        root = np.random.SeedSequence(None if rng is None else int(rng))
    return root, root.spawn(int(npartitions))


def _say(progress: Progress, message: str) -> None:
    if progress is not None:
        progress(message)


def _leak(message: str) -> None:
    warnings.warn(message, PrivacyLeakWarning, stacklevel=3)


# --------------------------------------------------------------------------------------------
# Importance sampling
# --------------------------------------------------------------------------------------------


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

    Returns
    -------
    ScaleSample
    """
    if sampler not in ("coreset", "uniform", "privacy"):
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

    parts, dim = _partitions(data, columns)
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
                "n_iter": int(n_iter), "epsilon": float(epsilon)}
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


def _check_columns(dims: set[int]) -> None:
    if len(dims) > 1:
        raise ValueError(f"partitions have different numbers of columns: {sorted(dims)}")


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


# --------------------------------------------------------------------------------------------
# DP-Lloyd
# --------------------------------------------------------------------------------------------


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


def dp_lloyd(
    data: Any,
    n_clusters: int,
    *,
    epsilon: float,
    radius: float,
    n_iter: int = 10,
    init: Any = None,
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
    parts, _ = _partitions(data, columns)
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
    columns: Sequence[str] | Sequence[int] | None = None,
    center: Sequence[float] | np.ndarray | None = None,
    n: int | None = None,
    mean_sq_norm: float | None = None,
    stat_epsilon: float | None = None,
    rng: RNGLike = None,
    client: Any = None,
    progress: Progress = None,
    gather: bool = True,
) -> ScaleKMeans:
    """Importance-sample partitioned data, then run weighted DP-Lloyd on the sample.

    The noise is calibrated for the target (m, ε) exactly as in memory
    (:func:`dpcore.mechanisms.importance.calibrate_lloyd`: Prop. 3 for uniform, Eq. 5 for
    coreset), so the
    delivered guarantee is the same. With ``stat_epsilon`` the total ``epsilon`` is split:
    ε₀ = ``stat_epsilon`` for x̃ and ε − ε₀ for DP-Lloyd (basic composition).

    ``sampler="privacy"`` (with ``sample_size=None``) samples by Theorem 10 with the full-data
    noise at ε ("sampling for free"): the run is ε-DP and the sample is as small as that noise
    level allows, with no public statistic at all.

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
                          columns=columns, center=center, n=n, mean_sq_norm=mean_sq_norm,
                          stat_epsilon=stat_epsilon, rng=sample_seed, client=client,
                          progress=progress, gather=gather,
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
