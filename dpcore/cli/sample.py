"""The commands on data larger than memory (Dask): ``dpcore sample`` (an importance sample written
to a file) and ``dpcore run dplloyd ... --dask`` (DP-Lloyd over the partitions), both through
:mod:`dpcore.scale.dask_kmeans`.
"""

from __future__ import annotations

import argparse
import time

from dpcore.cli.common import _check_out, _dask_client, _heartbeat, _progress
from dpcore.core.errors import CLIError


def _run_dask(args: argparse.Namespace, cfg: dict):
    """``dpcore run dplloyd DATA --dask``: out-of-core DP-Lloyd
    (:mod:`dpcore.scale.dask_kmeans`)."""
    from dpcore.release.runconfig import RunResult
    from dpcore.scale import dask_kmeans as scale

    if cfg["mechanism"] != "dplloyd":
        raise CLIError(f"--dask runs dplloyd only, not {cfg['mechanism']!r}")
    params, data = dict(cfg["params"]), cfg["data"]
    radius = params.pop("radius", None) or data["radius"]
    if radius is None:
        raise CLIError("--dask needs the declared --radius")
    if params.pop("init", "random_ball") != "random_ball" or params.pop("min_count", 1.0) != 1.0:
        raise CLIError("--dask supports the default init and min_count only")
    sampler = params.pop("sampler", None)
    common = {"radius": radius, "columns": data["columns"], "center": data["center"],
              "missing": data.get("missing"),  # the run configuration's data.missing
              "rng": cfg["seed"], "progress": lambda msg: _progress(args, msg)}
    t0 = time.perf_counter()
    with _dask_client(args.dask) as client:
        if sampler is None:
            if params.pop("sample_size", None) is not None:
                raise CLIError("sample_size needs a sampler (uniform or coreset)")
            params.pop("lam", None)
            res = scale.dp_lloyd_on_partitions(data["source"], params.pop("n_clusters"),
                                               **params, **common, client=client)
        else:
            res = scale.kmeans(data["source"], params.pop("n_clusters"), sampler=sampler,
                               **params, **common, n=args.n_rows,
                               mean_sq_norm=args.mean_sq_norm, stat_epsilon=args.stat_epsilon,
                               client=client, gather=not args.sample_on_cluster)
    return RunResult("dplloyd", {"centers": res.cluster_centers_}, res.privacy_,
                     time.perf_counter() - t0, cfg, columns=data["columns"])


def cmd_sample(args: argparse.Namespace) -> int:
    from dpcore.data import limits
    from dpcore.scale import dask_kmeans as scale
    _check_out(args.out, (".parquet", ".csv", ".npz"))
    if args.radius is None:
        raise CLIError("dpcore sample needs the declared --radius")
    limits.check_params(radius=args.radius, sample_size=args.sample_size, epsilon=args.epsilon,
                        stat_epsilon=args.stat_epsilon, n_iter=args.n_iter, lam=args.lam)
    if args.center is not None:
        limits.check_center(args.center, name="--center")
    with _dask_client(args.scheduler) as client, _heartbeat(args, "sampling"):
        _progress(args, f"importance sampling {args.data} ({args.sampler})")
        sample = scale.importance_sample(
            args.data, args.sample_size, radius=args.radius, sampler=args.sampler,
            columns=args.columns, center=args.center, lam=args.lam, n=args.n_rows,
            mean_sq_norm=args.mean_sq_norm, stat_epsilon=args.stat_epsilon, rng=args.seed,
            epsilon=args.epsilon, n_iter=args.n_iter,
            client=client, progress=lambda msg: _progress(args, msg),
        )
    scale.write_sample(sample, args.out)
    _progress(args, f"wrote {args.out}")
    print(sample.summary())
    return 0


