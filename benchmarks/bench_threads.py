"""Benchmark: thread scaling of DP k-means against scikit-learn's Lloyd (issue 23, item 8).

For each thread limit t in {1, 2, 4, all cores} (those the process may use), everything runs
under ``threadpoolctl.threadpool_limits(t)`` (BLAS and OpenMP: scikit-learn's threads) and
dpcore's :func:`dpcore.core.threads.thread_limit` (``n_jobs=t``; DPKMeans through the same
context). Rows of the table, k = 25, T = 10, ε = 3, the same initial centres for the Lloyd
runs:

* scikit-learn ``KMeans(algorithm="lloyd", n_init=1, max_iter=10, tol=0)`` (the reference);
* the arithmetic floor: one GEMM X Cᵀ per iteration (BLAS at t threads), nothing else;
* ``DPLloyd`` (defaults), and two ways of meeting BLAS: one row thread with BLAS at t threads,
  and t row threads with BLAS at t threads each (oversubscribed); dpcore's choice is t row
  threads with single-threaded BLAS (the ``DPLloyd`` row);
* ``DPKMeans`` (the recommended estimator, declared radius, its defaults);
* the sampled pipeline ``DPLloyd(sampler="privacy", sample_size=20000)`` (m = 3.5 % of n on a
  subsample): the default (norm grid, diagnostics when read) and the exact per-point q
  (``q_grid=None``).

Each cell is the median over interleaved rounds (every method at every limit once per round,
so the load other processes put on the machine falls on all alike), printed as the ratio to
scikit-learn at the same limit and the time. Then the sampled pipeline as a share of the full
fit (wall clock and the process's CPU time), and the acceptance line: DPLloyd's ratio at all
cores ≤ its ratio at 1 thread. The same tables follow for the fastest round of each cell (on
a shared, loaded machine the median carries the other processes' noise; the fastest round is
the least disturbed one).

Which ``dpcore`` runs: the one Python imports, i.e. the installed one unless ``PYTHONPATH``
names a checkout (``PYTHONPATH=. python benchmarks/...`` for this working tree's).

Data: preprocessed Covertype (566,486 × 54, ``dpcore.reproduce.importance.load_covertype``, as
``bench_kmeans.py``) when ``../shared/data`` (or ``DPCORE_DATA_DIR``) has it, otherwise a
synthetic Gaussian mixture of the same shape, so it runs unchanged on any machine.

Run: ``.venv/bin/python benchmarks/bench_threads.py [--rounds 5] [--n 566486] [--no-exact]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import time
import warnings
from collections.abc import Callable

import numpy as np
from sklearn.cluster import KMeans
from threadpoolctl import threadpool_limits

from dpcore.core import kernels, threads
from dpcore.estimators.dpkmeans import DPKMeans
from dpcore.mechanisms.lloyd import algorithm
from dpcore.mechanisms.lloyd.estimator import DPLloyd
from dpcore.privacy.guarantees import PrivacyLeakWarning

K, T, EPS, M = 25, 10, 3.0, 20_000
#: Covertype's m / n, kept when the rows are subsampled (m = 20000 is infeasible on few rows).
M_SHARE = M / 566_486


def load(n: int | None) -> tuple[np.ndarray, float, str]:
    """Covertype as the benchmarks preprocess it, or a synthetic stand-in of the same shape."""
    try:
        from dpcore.reproduce.importance import load_covertype

        P = load_covertype()
        X, r, name = P.X, float(P.radius), "Covertype (preprocessed)"
    except (FileNotFoundError, OSError):
        gen = np.random.default_rng(0)
        size = n or 566_486
        centres = gen.normal(0, 3, (K, 54))
        X = centres[gen.integers(0, K, size)] + gen.normal(0, 1, (size, 54))
        r, name = float(np.percentile(np.linalg.norm(X, axis=1), 99.5)), "synthetic mixture"
    if n is not None and n < X.shape[0]:
        X = X[np.random.default_rng(1).choice(X.shape[0], n, replace=False)]
    X = np.ascontiguousarray(X, dtype=np.float64)
    # clip to the ball once, so that no run pays (or warns about) clipping
    norms = np.linalg.norm(X, axis=1)
    X *= np.minimum(1.0, r / np.maximum(norms, 1e-300))[:, None]
    return X, r, name


def limits() -> list[int]:
    cores = threads.available_cores()
    return sorted({t for t in (1, 2, 4) if t <= cores} | {cores})


def methods(X: np.ndarray, r: float, exact: bool) -> dict[str, Callable[[int], object]]:
    m = float(min(M, round(M_SHARE * X.shape[0])))
    init = X[np.random.default_rng(2).choice(X.shape[0], K, replace=False)].copy()

    def sklearn(t: int):
        return KMeans(K, init=init, n_init=1, max_iter=T, tol=0, algorithm="lloyd").fit(X)

    def gemm(t: int):
        for _ in range(T):
            X @ init.T

    def dplloyd(t: int, **kw):
        return DPLloyd(K, epsilon=EPS, radius=r, n_iter=T, init=init, rng=0, **kw).fit(X)

    def blas_way(row_threads: Callable[[int], int]):
        def run(t: int):
            # dpcore's own loop limits BLAS to one thread; here BLAS keeps the t of the limit
            with _patched(algorithm, "single_threaded_blas", contextlib.nullcontext), \
                    threads.thread_limit(row_threads(t)):
                return dplloyd(t)
        return run

    out = {
        "scikit-learn Lloyd": sklearn,
        "one GEMM per iteration (floor)": gemm,
        "DPLloyd (t row threads, BLAS 1)": dplloyd,
        "DPLloyd, 1 row thread × BLAS t": blas_way(lambda t: 1),
        "DPLloyd, t row threads × BLAS t": blas_way(lambda t: t),
        "DPKMeans (recommended, radius)": lambda t: DPKMeans(K, epsilon=EPS, radius=r,
                                                             rng=0).fit(X),
        "sampled pipeline, default (grid)": lambda t: dplloyd(t, sampler="privacy",
                                                                sample_size=m),
    }
    if exact:
        out["sampled pipeline, exact q"] = lambda t: dplloyd(t, sampler="privacy",
                                                             sample_size=m, q_grid=None)
    return out


@contextlib.contextmanager
def _patched(obj, name: str, value):
    old = getattr(obj, name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        setattr(obj, name, old)


def run(rounds: int, n: int | None, exact: bool) -> None:
    X, r, name = load(n)
    kernels.warm_up()
    lims = limits()
    table = methods(X, r, exact)
    times: dict[tuple[str, int], list[float]] = {(m, t): [] for m in table for t in lims}
    cpu: dict[tuple[str, int], list[float]] = {key: [] for key in times}
    warnings.simplefilter("ignore", PrivacyLeakWarning)
    for _ in range(rounds + 1):  # the first round warms caches and is dropped
        for t in lims:
            for label, fn in table.items():
                with threadpool_limits(limits=t), threads.thread_limit(t):
                    c0, t0 = time.process_time(), time.perf_counter()
                    fn(t)
                    times[(label, t)].append(time.perf_counter() - t0)
                    cpu[(label, t)].append(time.process_time() - c0)
    load_avg = os.getloadavg() if hasattr(os, "getloadavg") else (float("nan"),) * 3
    print(f"Data: {name}, {X.shape[0]:,} × {X.shape[1]}, k = {K}, T = {T}, ε = {EPS}; "
          f"cores allowed: {threads.available_cores()}; {rounds} interleaved rounds; load "
          f"average after the run: {load_avg[0]:.2f} / {load_avg[1]:.2f} / {load_avg[2]:.2f}")
    for stat in (statistics.median, min):
        report({key: stat(v[1:]) for key, v in times.items()}, list(table), lims,
               "medians" if stat is statistics.median else "fastest round (less load noise)",
               {key: stat(v[1:]) for key, v in cpu.items()})


def report(med: dict, labels: list[str], lims: list[int], what: str, cpu: dict) -> None:
    """The ratio table, the sampled shares (wall clock and CPU time: the process's CPU
    seconds, all threads, which waiting for a loaded machine's cores does not inflate) and
    the acceptance line for one statistic."""
    print(f"\n### {what}\n")
    print("| method | " + " | ".join(f"{t} thread{'s' * (t > 1)}" for t in lims) + " |")
    print("|---|" + "---|" * len(lims))
    for label in labels:
        cells = []
        for t in lims:
            ratio = med[(label, t)] / med[("scikit-learn Lloyd", t)]
            cells.append(f"{ratio:.2f} ({med[(label, t)] * 1e3:.0f} ms)")
        print(f"| {label} | " + " | ".join(cells) + " |")
    full = "DPLloyd (t row threads, BLAS 1)"
    print("\n| sampled pipeline ÷ full DPLloyd fit | " + " | ".join(
        f"{t} thr." for t in lims) + " |")
    print("|---|" + "---|" * len(lims))
    for label in labels:
        if label.startswith("sampled"):
            print(f"| {label} | " + " | ".join(
                f"{100 * med[(label, t)] / med[(full, t)]:.1f} %" for t in lims) + " |")
            print(f"| {label}, CPU time | " + " | ".join(
                f"{100 * cpu[(label, t)] / cpu[(full, t)]:.1f} %" for t in lims) + " |")
    one, many = (med[(full, lims[0])] / med[("scikit-learn Lloyd", lims[0])],
                 med[(full, lims[-1])] / med[("scikit-learn Lloyd", lims[-1])])
    verdict = "pass" if many <= one else "FAIL"
    print(f"\nAcceptance: DPLloyd ÷ scikit-learn at {lims[-1]} threads = {many:.2f} ≤ at 1 "
          f"thread = {one:.2f}: {verdict}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--n", type=int, default=None, help="subsample to n rows")
    parser.add_argument("--no-exact", action="store_true",
                        help="skip the exact-q sampled pipeline (≈ 1.5 s a fit)")
    args = parser.parse_args(argv)
    run(args.rounds, args.n, not args.no_exact)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
