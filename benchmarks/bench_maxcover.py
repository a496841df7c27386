"""Benchmark: MaxCoverKMeans vs diffprivlib KMeans vs scikit-learn KMeans (k = 10).

Data: the reproduction's synthetic 64-Gaussian mixture (50 000 × 100) and MNIST (70 000 × 784,
centred on 127.5). Every method runs in a fresh child process that loads the data and fits once,
so wall time (fit only) and peak resident memory (whole process, ``ru_maxrss``) are comparable;
the "load only" row is the memory floor (interpreter + data). diffprivlib runs in the separate
environment ``.venv-diffprivlib`` (``sh benchmarks/diffprivlib_env/build.sh``) and is skipped
with a note when that is absent. Target: MaxCoverKMeans on MNIST ≤ 60 s and ≤ 4 GiB.

Usage: ``python benchmarks/bench_maxcover.py [--datasets synthetic,mnist] [--exact]``
(``--exact`` adds the paper's grid, ``grid_stride=1``, with a time limit).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

K = 10


def _load(dataset: str):
    from dpcore.reproduce.maxcover import load_mnist, load_synthetic

    return load_mnist() if dataset == "mnist" else load_synthetic()


def _child(dataset: str, method: str, stride: int) -> None:
    """Run one fit in this (fresh) process; print JSON."""
    from dpcore.evaluate import kmeans_cost

    X, radius = _load(dataset)
    n = X.shape[0]
    t0 = time.perf_counter()
    cost = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "maxcover":
            from dpcore.maxcover import MaxCoverKMeans
            from dpcore.reproduce.maxcover import MAXCOVER_SETTINGS

            settings = {**MAXCOVER_SETTINGS, "grid_stride": stride}
            C = (
                MaxCoverKMeans(
                    K, epsilon=1.0, delta=n**-1.5, radius=radius, n_public=n, rng=0, **settings
                )
                .fit(X)
                .cluster_centers_
            )
        elif method == "sklearn":
            from sklearn.cluster import KMeans

            C = KMeans(K, n_init=1, random_state=0).fit(X).cluster_centers_
        elif method == "load":
            C = None
        else:
            raise ValueError(method)
    secs = time.perf_counter() - t0
    if C is not None:
        cost = kmeans_cost(X, C)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print(json.dumps({"seconds": secs, "peak_rss_mib": peak, "cost": cost}))


def _run_child(dataset: str, method: str, stride: int = 0, timeout: float = 900) -> dict:
    cmd = [sys.executable, __file__, "--child", dataset, method, str(stride)]
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"> {timeout:.0f} s (stopped)"}
    if out.returncode != 0:
        last = out.stderr.strip().splitlines()[-1] if out.stderr else "failed"
        return {"error": f"{last[:90]}… (after {time.perf_counter() - t0:.0f} s incl. loading)"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _diffprivlib(dataset: str) -> dict:
    from dpcore.evaluate import kmeans_cost
    from dpcore.reproduce.maxcover import run_diffprivlib

    X, radius = _load(dataset)
    bound = 127.5 if dataset == "mnist" else radius
    res = run_diffprivlib(X, K, 1.0, bound, [0])
    if res is None:
        return {"error": "environment .venv-diffprivlib not built (skipped)"}
    run = res["runs"][0]
    return {
        "seconds": run["seconds"],
        "peak_rss_mib": res["peak_rss_mib"],
        "cost": kmeans_cost(X, np.asarray(run["centers"])),
    }


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--datasets", default="synthetic,mnist")
    ap.add_argument("--exact", action="store_true", help="also run grid_stride=1 (slow)")
    ap.add_argument("--exact-datasets", default="mnist", help="where --exact applies")
    ap.add_argument("--exact-timeout", type=float, default=600)
    ap.add_argument("--child", nargs=3, metavar=("DATASET", "METHOD", "STRIDE"))
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    from dpcore.reproduce.maxcover import MAXCOVER_STRIDE

    rows = []
    for ds in args.datasets.split(","):
        plan = [
            ("load only", lambda ds=ds: _run_child(ds, "load")),
            (
                f"MaxCoverKMeans (grid_stride={MAXCOVER_STRIDE})",
                lambda ds=ds: _run_child(ds, "maxcover", MAXCOVER_STRIDE),
            ),
        ]
        if args.exact and ds in args.exact_datasets.split(","):
            plan.append(
                (
                    "MaxCoverKMeans (paper grid, stride 1)",
                    lambda ds=ds: _run_child(ds, "maxcover", 1, args.exact_timeout),
                )
            )
        plan += [
            ("diffprivlib KMeans (ε = 1)", lambda ds=ds: _diffprivlib(ds)),
            ("scikit-learn KMeans (n_init=1)", lambda ds=ds: _run_child(ds, "sklearn")),
        ]
        for name, fn in plan:
            r = fn()
            rows.append((ds, name, r))
            print(f"  {ds:9s} {name}: {r}", file=sys.stderr, flush=True)
    print(f"\nk = {K}, ε = 1, δ = n^-1.5; fit wall time; peak RSS of the whole child process\n")
    print("| data | method | seconds | peak RSS (MiB) | k-means cost |")
    print("|---|---|---|---|---|")
    for ds, name, r in rows:
        if "error" in r:
            print(f"| {ds} | {name} | {r['error']} | | |")
            continue
        cost = f"{r['cost']:.4g}" if r.get("cost") is not None else ""
        print(f"| {ds} | {name} | {r['seconds']:.2f} | {r['peak_rss_mib']:.0f} | {cost} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
