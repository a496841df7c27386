"""Benchmark FriendlyCore: exact and sampled friendly_mean, FriendlyCoreKMeans.

Run: ``python benchmarks/bench_friendlycore.py [--quick]``. Prints a markdown table of wall time
and peak traced memory (tracemalloc; numpy allocations included) against the targets of issue 4
and against references measured in the same run:

* exact friend counting vs a brute-force count through a full n × n distance matrix
  (``scipy.spatial.distance.cdist``), the memory the blocked version avoids;
* sampled friendly_mean at n = 1e5 vs the exact count's time extrapolated as n²;
* FriendlyCoreKMeans vs scikit-learn ``KMeans(n_init=10)`` (non-private) on the same data;
* FriendlyCoreKMeans at the planned t (:func:`dpcore.mechanisms.friendlycore.planning.kmeans_plan`)
  on a 10-d, k = 5 mixture at ε = 3 for growing n (issue 23.5: 10⁵ rows took 1,077 s; target
  ≤ 20 s): seconds per n, the time exponent (log-log slope), and its k-means cost and time as
  ratios to scikit-learn's, medians of interleaved repetitions.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from dpcore.data.datasets import gaussian_mixture
from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans, friend_counts, friendly_mean
from dpcore.mechanisms.friendlycore.planning import kmeans_plan


def measure(fn: Callable[[], object]) -> tuple[float, float, object]:
    """(seconds, peak MiB traced, result) of one call."""
    tracemalloc.start()
    t = time.perf_counter()
    out = fn()
    sec = time.perf_counter() - t
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return sec, peak / 2**20, out


def radius(d: int, n: int) -> float:
    return math.sqrt(2) * (math.sqrt(d) + math.sqrt(math.log(100 * n)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    parser.add_argument("--reps", type=int, default=3, help="interleaved repetitions (scaling)")
    parser.add_argument("--scaling-only", action="store_true",
                        help="only the FriendlyCoreKMeans scaling table")
    args = parser.parse_args(argv)
    q = args.quick
    if args.scaling_only:
        kmeans_scaling(q, reps=args.reps)
        return 0
    rng = np.random.default_rng(0)
    rows: list[tuple[str, str, float, float, str, str]] = []

    n, d = (2_000, 100) if q else (10_000, 100)
    X = rng.standard_normal((n, d))
    r = radius(d, n)
    sec, mem, res = measure(lambda: friendly_mean(X, radius=r, rho=1.0, delta=1e-8, rng=1))
    err = np.linalg.norm(res.estimate)
    rows.append(("friendly_mean exact", f"n={n}, d={d}", sec, mem, "≤ 3 s",
                 f"core {res.core_size}/{n}, error {err:.3f}"))
    exact_sec, exact_mem, _ = measure(lambda: friend_counts(X, r))
    rows.append(("  friend counting (blocked BLAS)", f"n={n}, d={d}", exact_sec, exact_mem, "",
                 "part of the row above"))
    nb = min(n, 10_000)

    def brute():
        from scipy.spatial.distance import cdist

        return (cdist(X[:nb], X[:nb]) <= r).sum(axis=1)

    sec_b, mem_b, cnt_b = measure(brute)
    same = np.array_equal(cnt_b, friend_counts(X[:nb], r))
    rows.append(("  reference: cdist n×n count", f"n={nb}, d={d}", sec_b, mem_b, "",
                 f"identical counts: {same}"))

    n2 = 20_000 if q else 100_000
    X2 = rng.standard_normal((n2, d))
    m = 9_000 if not q else 6_000  # |S|/2 − τ ≈ 4σ: each point of a complete set kept w.p. ≈ 1
    sec, mem, res = measure(lambda: friendly_mean(
        X2, radius=radius(d, n2), rho=1.0, delta=1e-8, sample_size=m, rng=2))
    extrap = exact_sec * (n2 / n) ** 2
    rows.append(("friendly_mean sampled (App. B)", f"n={n2}, d={d}, m≈{m}", sec, mem, "≤ 10 s",
                 f"core {res.core_size}/{n2}, |S|={res.core.reference_size}, error "
                 f"{np.linalg.norm(res.estimate):.3f}; exact ≈ {extrap:.0f} s (n² extrapolation)"))

    n3 = 50_000 if q else 200_000
    g = rng.standard_normal((8, 2))
    c = g / np.linalg.norm(g, axis=1, keepdims=True) * np.sqrt(rng.random((8, 1)))
    X3 = np.repeat(c, n3 // 8, axis=0) + rng.normal(scale=0.0221, size=(n3 // 8 * 8, 2))
    X3 /= np.maximum(np.linalg.norm(X3, axis=1, keepdims=True), 1.0)
    sec, mem, km = measure(lambda: FriendlyCoreKMeans(
        8, rho=1.0, delta=1e-8, radius=1.0, t=200, r_min=1e-3, rng=3).fit(X3))
    status = "failed: " + km.failure_reason_ if km.failed_ else (
        f"tuple core {int(km.tuple_core_mask_.sum())}/200")
    rows.append(("FriendlyCoreKMeans", f"n={n3}, d=2, k=8, t=200", sec, mem, "≤ 30 s", status))

    def sk():
        from sklearn.cluster import KMeans

        return KMeans(8, n_init=10, random_state=0).fit(X3)

    sec_k, mem_k, _ = measure(sk)
    rows.append(("  reference: sklearn KMeans(n_init=10)", f"n={n3}, d=2", sec_k, mem_k, "",
                 "non-private"))

    load = os.getloadavg()[0]
    print(f"machine load average during the run: {load:.1f} on {os.cpu_count()} cores\n")
    print("| task | size | seconds | peak MiB | target | notes |")
    print("|---|---|---:|---:|---|---|")
    for task, size, s, mb, target, note in rows:
        print(f"| {task} | {size} | {s:.2f} | {mb:.0f} | {target} | {note} |")
    print()
    kmeans_scaling(q, reps=args.reps)
    return 0


def _cost(X: np.ndarray, C: np.ndarray) -> float:
    from dpcore.data.geometry import nearest_center

    return float(nearest_center(X, C)[1].sum())


def kmeans_scaling(quick: bool, *, reps: int = 3, eps: float = 3.0, delta: float = 1e-6,
                   d: int = 10, k: int = 5) -> None:
    """FriendlyCoreKMeans (t from kmeans_plan, LSH backup) vs scikit-learn KMeans(n_init=10) on
    the same n × d mixture, repetitions interleaved (n by n, the two methods alternating)."""
    from sklearn.cluster import KMeans

    sizes = (25_000, 50_000) if quick else (25_000, 50_000, 100_000, 200_000)
    data = {}
    for n in sizes:
        X, _, _ = gaussian_mixture(n, d, k, sigma=0.5, center_radius=10.0, rng=n)
        data[n] = (X, float(np.linalg.norm(X, axis=1).max()))  # Λ: public for this generator
    fc_t: dict[int, list[float]] = {n: [] for n in sizes}
    sk_t: dict[int, list[float]] = {n: [] for n in sizes}
    ratio: dict[int, list[float]] = {n: [] for n in sizes}
    fails: dict[int, int] = dict.fromkeys(sizes, 0)
    FriendlyCoreKMeans(k, epsilon=eps, delta=delta, radius=1.0, t=kmeans_plan(
        25_000, k, epsilon=eps, delta=delta).t, rng=0).fit(data[sizes[0]][0] / 1e3)  # compile
    for rep in range(reps):
        for n in sizes:
            X, lam = data[n]
            t = kmeans_plan(n, k, epsilon=eps, delta=delta).t
            start = time.perf_counter()
            fc = FriendlyCoreKMeans(k, epsilon=eps, delta=delta, radius=lam, t=t,
                                    fallback="lsh", rng=rep).fit(X)
            fc_t[n].append(time.perf_counter() - start)
            start = time.perf_counter()
            sk = KMeans(k, n_init=10, random_state=rep).fit(X)
            sk_t[n].append(time.perf_counter() - start)
            fails[n] += int(fc.failed_)
            ratio[n].append(_cost(X, fc.cluster_centers_) / _cost(X, sk.cluster_centers_))
    med = {n: float(np.median(fc_t[n])) for n in sizes}
    slope = np.polyfit(np.log(sizes), np.log([med[n] for n in sizes]), 1)[0]
    print(f"FriendlyCoreKMeans, d = {d}, k = {k}, ε = {eps:g}, δ = {delta:g}, fallback='lsh', "
          f"t from kmeans_plan; medians of {reps} interleaved repetitions; load "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    print("| n | t | FC seconds | sklearn KMeans(n_init=10) s | time ratio | cost ratio "
          "(FC / sklearn) | FC failures (LSH backup) |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        t = kmeans_plan(n, k, epsilon=eps, delta=delta).t
        sk_med = float(np.median(sk_t[n]))
        print(f"| {n:,} | {t:,} | {med[n]:.2f} | {sk_med:.2f} | {med[n] / sk_med:.2f} | "
              f"{float(np.median(ratio[n])):.3f} | {fails[n]}/{reps} |")
    print(f"\ntime exponent (log-log slope of FC seconds over n): {slope:.2f}; target at "
          f"n = 10⁵: ≤ 20 s")


if __name__ == "__main__":
    raise SystemExit(main())
