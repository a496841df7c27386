"""``dpcore run`` (a mechanism on a table, or a release through the door with ``--schema``) and
``dpcore list`` (the mechanisms and their parameters).

The run configuration is the ``--config`` file merged with the flags, validated by
:mod:`dpcore.release.runconfig`; ``--dask`` hands over to :func:`dpcore.cli.sample._run_dask`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.cli.common import _check_out, _heartbeat, _progress
from dpcore.cli.ledger_curator import deployment_options
from dpcore.cli.sample import _run_dask
from dpcore.core.errors import CLIError


def _parse_value(text: str) -> Any:
    """A ``-p`` value: JSON if it parses (numbers, lists, true/null), else the string itself."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _parse_params(items: Sequence[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise CLIError(f"-p expects NAME=VALUE, got {item!r}")
        params[name.strip().replace("-", "_")] = _parse_value(value)
    return params


# Convenience flags -> mechanism keyword (only passed when given).
_FLAG_PARAMS = {
    "epsilon": "epsilon",
    "delta": "delta",
    "rho": "rho",
    "k": "n_clusters",
    "n_iter": "n_iter",
    "sampler": "sampler",
    "sample_size": "sample_size",
}


def _read_config_file(name: str) -> dict:
    """The ``--config`` file: size- and depth-limited JSON holding an object with known keys."""
    from dpcore.release import runconfig
    path = Path(name)
    if not path.is_file():
        raise CLIError(f"--config {name!r}: no such file")
    if path.stat().st_size > runconfig.MAX_CONFIG_BYTES:
        raise CLIError(f"--config {name!r} is larger than "
                       f"{runconfig.MAX_CONFIG_BYTES // 2**10} KiB; a run configuration is a "
                       "few lines")
    try:
        base = runconfig.read_config(path.read_bytes(), f"--config {name!r}")
    except ValueError as exc:
        raise CLIError(str(exc)) from None
    if not isinstance(base, dict):
        raise CLIError(f"--config {name!r} must hold a JSON object")
    return base


def _positionals(args: argparse.Namespace, base: dict) -> tuple[str | None, str | None]:
    """(mechanism, data) from the positionals. With --config, one positional that is not a
    mechanism name is the data: the README's ``dpcore run --config run.json data.csv``."""
    from dpcore.release.registry import mechanism_names

    mechanism, data = args.mechanism, args.data
    known = mechanism_names()  # imports no mechanism module (issue 23.7)
    if args.config and mechanism is not None and data is None and mechanism not in known:
        mechanism, data = None, mechanism
    return mechanism or base.get("mechanism"), data


def _build_config(args: argparse.Namespace) -> dict:
    """Merge the --config file and the flags (flags win); validated by the same
    :func:`dpcore.release.runconfig.validate_config` that
    :func:`~dpcore.release.runconfig.run_config` uses."""
    from dpcore.release import runconfig
    base = _read_config_file(args.config) if args.config else {}
    runconfig.check_config_keys(base)  # unknown keys ("Seed") refused, with a suggestion
    mechanism, source = _positionals(args, base)
    if not mechanism:
        raise CLIError("name a mechanism (dpcore run MECHANISM DATA) or give --config")
    raw_data = base.get("data")
    if isinstance(raw_data, str):
        raw_data = {"source": raw_data}
    if raw_data is not None and not isinstance(raw_data, dict):
        raise CLIError(f"data must be an object or a source name, got {raw_data!r}"[:200])
    data = dict(raw_data or {})
    if source:
        data["source"] = source
    if not data.get("source"):
        raise CLIError("name the data (a CSV/Parquet file, a directory of Parquet files or a "
                       "sample name) or give --config with data.source")
    for key in ("columns", "radius", "center"):
        value = getattr(args, key)
        if value is not None:
            data[key] = value
    params = base.get("params") or {}
    if not isinstance(params, dict):
        raise CLIError(f"params must be an object of keyword arguments, got {params!r}"[:200])
    params = dict(params)
    for flag, name in _FLAG_PARAMS.items():
        value = getattr(args, flag)
        if value is not None:
            params[name] = value
    params |= _parse_params(args.param)
    seed = args.seed if args.seed is not None else base.get("seed")
    cfg = runconfig.make_config(mechanism, params, data, seed)
    if "dpcore_version" in base:
        cfg["dpcore_version"] = runconfig.validate_config(
            cfg | {"dpcore_version": base["dpcore_version"]})["dpcore_version"]
    return cfg


def _write_result(result: Any, out: str) -> None:
    if out == "-":
        sys.stdout.write(result.to_json() + "\n")
        return
    path = Path(out)
    suffix = path.suffix.lower()
    if suffix not in (".json", ".csv"):
        raise CLIError(f"--out {out!r}: use a .json or .csv file name (or - for JSON on stdout)")
    if not path.parent.exists():
        raise CLIError(f"--out {out!r}: folder {str(path.parent)!r} does not exist")
    if suffix == ".json":
        path.write_text(result.to_json() + "\n")
    else:
        result.to_csv(path)  # the dashboard's wide table, formula prefixes neutralised


def _run_private(args: argparse.Namespace) -> int:
    """``dpcore run MECH DATA --schema S --budget B``: a release through the door (release mode).

    The output holds the DP output and its guarantee only: no seed (there is none: OS entropy),
    no timing, no warning text; a failure is ⊥ with the door's fixed message, and its charge
    stays in the lasting ledger.
    """
    from dpcore.release.curator import open_door

    if args.dask or args.config or args.save_config:
        raise CLIError("--schema (a private table) runs through the release door: --dask, "
                       "--config and --save-config are for public data")
    if args.seed is not None:
        raise CLIError("--seed: a release on a private table draws OS randomness; it has no seed")
    for flag in ("columns", "radius", "center"):
        if getattr(args, flag) is not None:
            raise CLIError(f"--{flag}: a private table's columns and bounds come from --schema")
    if not args.mechanism or not args.data:
        raise CLIError("name a mechanism and the private table: dpcore run MECHANISM DATA "
                       "--schema SCHEMA.json --budget EPS[,DELTA[,GAMMA]]")
    if args.out and args.out != "-":
        _check_out(args.out, (".json", ".csv"))
    params = {name: getattr(args, flag) for flag, name in _FLAG_PARAMS.items()
              if getattr(args, flag) is not None} | _parse_params(args.param)
    door = open_door(args.data, args.schema, args.budget, args.ledger_dir,
                     **deployment_options(args))
    if door.n is None:
        if args.n_epsilon is None:
            raise CLIError("the schema declares no n: give --n-epsilon to estimate it privately "
                           "(charged once to the ledger)")
        door.estimate_n(args.n_epsilon)
    rel = door.release(args.mechanism, params)
    doc = {"mechanism": args.mechanism, "label": rel.label, "failed": rel.failed,
           "message": rel.message, "guarantee": rel.guarantee.as_dict(),
           "guarantee_text": str(rel.guarantee),
           "released": None if rel.failed else {
               k: None if v is None else np.asarray(v, dtype=float).tolist()
               for k, v in rel.output.items()},
           "remaining": str(door.ledger.remaining())}
    text = json.dumps(doc, indent=2)
    if args.out == "-":
        print(text)
    elif args.out:
        path = Path(args.out)
        if path.suffix.lower() == ".json":
            path.write_text(text + "\n")
        else:
            import pandas as pd

            rows = [{"output": k, "row": i, "column": j, "value": float(v)}
                    for k, arr in (doc["released"] or {}).items() if arr is not None
                    for (i, j), v in np.ndenumerate(np.atleast_2d(arr))]
            pd.DataFrame(rows, columns=["output", "row", "column", "value"]).to_csv(path,
                                                                                   index=False)
    if args.out != "-":
        print(f"{args.mechanism}: {rel.message}")
        print(f"  remaining budget of this data set: {doc['remaining']}")
        for k, v in (doc["released"] or {}).items():
            print(f"  {k}: {np.round(np.asarray(v, dtype=float), 6).tolist()}")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from dpcore.release import runconfig
    if args.schema or args.budget:
        return _run_private(args)
    if args.out and args.out != "-":  # fail before the work, not after it
        _check_out(args.out, (".json", ".csv"))
    cfg = _build_config(args)
    if args.save_config:
        _check_out(args.save_config, (".json",))
        Path(args.save_config).write_text(json.dumps(cfg, indent=2) + "\n")
    mech = runconfig.get_mechanism(cfg["mechanism"])
    if args.dask:
        with _heartbeat(args, "dplloyd on Dask"):
            result = _run_dask(args, cfg)
        if args.out:
            _write_result(result, args.out)
        if args.out != "-":
            print(result.summary())
        return 0
    _progress(args, f"loading {cfg['data']['source']}")
    t0 = time.perf_counter()
    X, columns = runconfig.load_prepared(cfg["data"])
    _progress(args, f"loaded {X.shape[0]} rows x {X.shape[1]} columns in "
                    f"{time.perf_counter() - t0:.2f} s; running {mech.name}")
    with _heartbeat(args, mech.name):
        result = runconfig.run_config(cfg, X, prepared=True)
    result.columns = columns  # the table's column names for the wide CSV
    _progress(args, f"{mech.name} finished in {result.seconds:.2f} s")
    if args.out:
        _write_result(result, args.out)
        if args.out != "-":
            _progress(args, f"wrote {args.out}")
    if args.out != "-":
        print(result.summary())
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    from dpcore.release import runconfig
    for name, mech in sorted(runconfig.MECHANISMS.items()):
        params = ", ".join(
            n if p.default is p.empty else f"{n}={p.default!r}"
            for n, p in mech.parameters().items()
        )
        print(f"{name:22s} {mech.description}\n{'':22s} params: {params}")
    for name, reason in sorted(runconfig.UNAVAILABLE.items()):
        print(f"{name:22s} unavailable: {reason}")
    return 0


