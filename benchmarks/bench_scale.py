"""Benchmark of dpcore.scale.dask_kmeans: importance-sample 10⁷ × 50 rows from Parquet and cluster
them.

Generates a Gaussian mixture (k = 25 in 50-d) as Parquet files under ``benchmarks/_data/``
(gitignored; written file by file, so generation never holds more than one file in memory; kept
for later runs), then measures, in the same run:

* ``dask``: :func:`dpcore.scale.dask_kmeans.kmeans` on a ``LocalCluster`` (worker processes): two
streaming
  passes over the files (row counts + private x̃; Poisson coreset sampling), then weighted
  DP-Lloyd on the m ≈ 50 000 sampled rows in memory;
* the same on the largest prefix that the in-memory path handles here (``--in-memory-rows``;
  by default what fits in a quarter of the available memory, the machine being shared);
* ``in-memory``: the files of that prefix read into one array and
  ``DPLloyd(sampler="coreset")`` — the reference the Dask path is compared with.

Reported: wall time, throughput (rows/s over the whole run), and peak resident memory (RSS) of
the driver and of each worker process, sampled every 50 ms with psutil. Target: driver < 2 GiB
whatever n is.

    python benchmarks/bench_scale.py                 # 10⁷ rows (≈ 4 GB of Parquet)
    python benchmarks/bench_scale.py --rows 200000   # quick
"""

from __future__ import annotations

import argparse
import json
import os
import threading
import time
import warnings
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parent
GiB = 2.0**30


class PeakRSS:
    """Peak resident set size of some processes, polled in a background thread."""

    def __init__(self, pids: dict[str, int], interval: float = 0.05) -> None:
        self.procs = {name: psutil.Process(pid) for name, pid in pids.items()}
        self.peak = dict.fromkeys(pids, 0)
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _poll(self) -> None:
        for name, proc in self.procs.items():
            try:
                self.peak[name] = max(self.peak[name], proc.memory_info().rss)
            except psutil.Error:  # a worker that died / restarted
                pass

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._poll()

    def __enter__(self) -> PeakRSS:
        self._poll()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self._poll()


def generate(folder: Path, rows: int, cols: int, rows_per_file: int, k: int, seed: int) -> None:
    """Write the mixture as Parquet files, one file at a time (bounded memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from dpcore.data.datasets import gaussian_mixture

    manifest = folder / "manifest.json"
    spec = {"rows": rows, "cols": cols, "rows_per_file": rows_per_file, "k": k, "seed": seed}
    if manifest.exists() and json.loads(manifest.read_text()) == spec:
        return
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.parquet"):
        old.unlink()
    _, _, means = gaussian_mixture(1, cols, k, center_radius=4.0, rng=seed)  # public truth
    names = [f"f{j:02d}" for j in range(cols)]
    streams = np.random.SeedSequence(seed).spawn((rows + rows_per_file - 1) // rows_per_file)
    t0 = time.perf_counter()
    for i, stream in enumerate(streams):
        gen = np.random.default_rng(stream)
        size = min(rows_per_file, rows - i * rows_per_file)
        X = means[gen.integers(0, k, size)] + 0.5 * gen.standard_normal((size, cols))
        table = pa.table({name: X[:, j] for j, name in enumerate(names)})
        pq.write_table(table, folder / f"part-{i:05d}.parquet", compression="snappy")
    manifest.write_text(json.dumps(spec))
    print(f"generated {rows:,} x {cols} rows in {len(streams)} files in "
          f"{time.perf_counter() - t0:.1f} s", flush=True)


def run_dask(files: list[str], rows: int, args, client, mean_sq_norm=None) -> dict:
    """Two passes (x̃ estimated privately with 10 % of ε) or one (x̃ declared)."""
    from dpcore.scale import dask_kmeans as scale
    pids = {"driver": os.getpid()} | {f"worker{i}": pid for i, pid in
                                      enumerate(client.run(os.getpid).values())}
    stat = {"mean_sq_norm": mean_sq_norm} if mean_sq_norm else {"stat_epsilon": 0.1 * args.epsilon}
    with PeakRSS(pids) as mem:
        t0 = time.perf_counter()
        res = scale.kmeans(files, args.k, epsilon=args.epsilon, radius=args.radius,
                           sample_size=args.sample_size, sampler="coreset", n=rows, rng=0,
                           client=client, **stat)
        wall = time.perf_counter() - t0
    workers = [v for name, v in mem.peak.items() if name.startswith("worker")]
    return {"rows": rows, "wall": wall, "sampling": res.seconds["pass1"] + res.seconds["pass2"],
            "lloyd": res.seconds["lloyd"], "m": len(res.sample.X), "driver": mem.peak["driver"],
            "worker": max(workers), "workers_sum": sum(workers), "eps": res.privacy_.epsilon,
            "x_tilde": res.sample.mean_sq_norm}


def run_in_memory(files: list[str], rows: int, args) -> dict:
    import pandas as pd

    from dpcore.mechanisms.lloyd.estimator import DPLloyd

    with PeakRSS({"driver": os.getpid()}) as mem:
        t0 = time.perf_counter()
        X = np.concatenate([pd.read_parquet(f).to_numpy(dtype=np.float64) for f in files])
        t_load = time.perf_counter() - t0
        with warnings.catch_warnings():  # n and x̃ read off the data: the in-memory convention
            warnings.simplefilter("ignore")
            km = DPLloyd(args.k, epsilon=args.epsilon, radius=args.radius, sampler="coreset",
                         sample_size=args.sample_size, rng=0).fit(X)
        wall = time.perf_counter() - t0
        del X
    return {"rows": rows, "wall": wall, "load": t_load, "m": len(km.sample_indices_),
            "driver": mem.peak["driver"], "eps": km.privacy_.epsilon}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=10_000_000)
    p.add_argument("--cols", type=int, default=50)
    p.add_argument("--rows-per-file", type=int, default=250_000)
    p.add_argument("--in-memory-rows", type=int, default=None,
                   help="rows for the in-memory reference (a prefix of whole files; default: "
                   "the most that fit in a quarter of the available memory, at the measured "
                   "≈ 3× the array size that DPLloyd needs)")
    p.add_argument("--sample-size", type=float, default=50_000)
    p.add_argument("--k", type=int, default=25)
    p.add_argument("--epsilon", type=float, default=3.0)
    p.add_argument("--radius", type=float, default=8.0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--data-dir", type=Path, default=ROOT / "_data")
    args = p.parse_args(argv)
    args.rows_per_file = min(args.rows_per_file, args.rows)
    args.sample_size = min(args.sample_size, args.rows / 4)

    folder = args.data_dir / f"mixture_{args.rows}x{args.cols}"
    generate(folder, args.rows, args.cols, args.rows_per_file, args.k, seed=2024)
    files = sorted(str(f) for f in folder.glob("*.parquet"))
    per_file = args.rows_per_file
    if args.in_memory_rows is None:  # shared machine: use at most a quarter of what is free
        args.in_memory_rows = int(psutil.virtual_memory().available / 4 / (3 * 8 * args.cols))
    n_files_mem = max(1, min(len(files), args.in_memory_rows // per_file))
    rows_mem = min(args.rows, n_files_mem * per_file)

    from distributed import Client, LocalCluster

    results = []
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        client.run(lambda: __import__("dpcore.scale.dask_kmeans"))  # warm the workers' imports
        warm = argparse.Namespace(**vars(args) | {"sample_size": per_file / 10})
        run_dask(files[:1], per_file, warm, client)  # and pyarrow's
        big = run_dask(files, args.rows, args, client)
        results.append(("dask, 2 passes (private x̃)", big))
        # a public x̃ (here: last run's private estimate) makes the counting pass unnecessary
        results.append(("dask, 1 pass (declared n, x̃)",
                        run_dask(files, args.rows, args, client, mean_sq_norm=big["x_tilde"])))
        if rows_mem < args.rows:
            results.append(("dask, 2 passes", run_dask(files[:n_files_mem], rows_mem, args,
                                                       client)))
    results.append(("in-memory", run_in_memory(files[:n_files_mem], rows_mem, args)))

    print(f"\n### dpcore.scale.dask_kmeans: coreset sample m = {args.sample_size:g} of n × "
          f"{args.cols}, "
          f"k = {args.k}, T = 10, ε = {args.epsilon:g} ({args.workers} worker processes, "
          f"{os.cpu_count()} cores)\n")
    print("| path | rows | wall s | sampling s | rows/s | sampled m | ε | driver peak GiB "
          "| worker peak GiB (sum) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, r in results:
        sampling = f"{r['sampling']:.1f}" if "sampling" in r else f"load {r['load']:.1f}"
        worker = (f"{r['worker'] / GiB:.2f} ({r['workers_sum'] / GiB:.2f})" if "worker" in r
                  else "–")
        print(f"| {name} | {r['rows']:,} | {r['wall']:.1f} | {sampling} | "
              f"{r['rows'] / r['wall']:,.0f} | {r['m']:,} | {r['eps']:.3g} | "
              f"{r['driver'] / GiB:.2f} | {worker} |")
    big = results[0][1]
    print(f"\nDriver peak {big['driver'] / GiB:.2f} GiB at n = {big['rows']:,} "
          f"(target < 2 GiB): {'met' if big['driver'] < 2 * GiB else 'MISSED'}.")


if __name__ == "__main__":
    main()
