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
:func:`dp_lloyd_on_partitions`
    Weighted DP-Lloyd (Algorithm 2) over partitions: per iteration, noise-free partial sums and
    counts per partition (:func:`dpcore.mechanisms.lloyd.estimator.lloyd_statistics`), added on the
    driver, noise added once there (:func:`dpcore.mechanisms.lloyd.estimator.noisy_lloyd_update`).
:func:`kmeans`
    The pipeline: sample, calibrate the noise for the target (m, ε) exactly as the in-memory
    :class:`dpcore.mechanisms.lloyd.estimator.DPLloyd` does
    (:func:`dpcore.mechanisms.importance.calibrate_lloyd`), cluster.

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

Where the code is
-----------------
:mod:`dpcore.scale.partitions` (reading partitions, seeds), :mod:`dpcore.scale.sampling`
(:func:`importance_sample`, :func:`write_sample`) and :mod:`dpcore.scale.lloyd`
(:func:`dp_lloyd_on_partitions`, :func:`kmeans`); this module re-exports them, so ``from
dpcore.scale import dask_kmeans as scale`` and ``scale.kmeans(...)`` keep working.
"""

from __future__ import annotations

from dpcore.scale.errors import ScaleError
from dpcore.scale.lloyd import ScaleKMeans, dp_lloyd_on_partitions, kmeans
from dpcore.scale.partitions import partition_seeds
from dpcore.scale.sampling import ScaleSample, importance_sample, write_sample
from dpcore.scale.sampling import _private_mean_sq_norm as _private_mean_sq_norm  # tests use it

__all__ = [
    "ScaleError",
    "ScaleKMeans",
    "ScaleSample",
    "dp_lloyd_on_partitions",
    "importance_sample",
    "kmeans",
    "partition_seeds",
    "write_sample",
]
