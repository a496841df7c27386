"""Benchmark FriendlyCore: exact and sampled friendly_mean, FriendlyCoreKMeans.

Run: ``python benchmarks/bench_friendlycore.py [--quick]``. Prints a markdown table of wall time
and peak traced memory (tracemalloc; numpy allocations included) against the targets of issue 4
and against references measured in the same run:

* exact friend counting vs a brute-force count through a full n × n distance matrix
  (``scipy.spatial.distance.cdist``), the memory the blocked version avoids;
* sampled friendly_mean at n = 1e5 vs the exact count's time extrapolated as n²;
* FriendlyCoreKMeans vs scikit-learn ``KMeans(n_init=10)`` (non-private) on the same data.
"""

from __future__ import annotations

import argparse
import math
import os
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans, friend_counts, friendly_mean


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
    args = parser.parse_args(argv)
    q = args.quick
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
