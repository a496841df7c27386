"""The ``dpcore`` command line.

::

    dpcore list                                   # mechanisms and their parameters
    dpcore run dplloyd data.csv --radius 10 --epsilon 1 -p n_clusters=5 --out result.json
    dpcore run --config run.json --out result.csv # the JSON the dashboard downloads
    dpcore run dplloyd parts/ --radius 10 --epsilon 3 -k 25 --sampler coreset \
        --sample-size 50000 --n-rows 10000000 --stat-epsilon 0.3 --dask tcp://host:8786
    dpcore sample parts/ --radius 10 --sample-size 50000 --out sample.parquet   # Dask
    dpcore reproduce importance --quick           # or: dpcore reproduce all
    dpcore app --port 8501                        # the Streamlit dashboard (--host 127.0.0.1)
    dpcore app --private data.csv --schema schema.json --budget 2,1e-6 --dataset cities
    dpcore run dplloyd data.csv --schema schema.json --budget 2,1e-6 -k 5 --epsilon 0.5
    dpcore ledger show|export|reset [--ledger-dir D] [--key KEY | --dataset NAME]
    dpcore ledger describe|grant|revoke|analysts|history|verify ...     # curator actions

Results (released values and the guarantee) go to ``--out`` as JSON or CSV, a short summary to
stdout, progress and warnings to stderr. Bad input ends with exit status 2 and a one-line
message (no traceback).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.core.errors import CLIError

__all__ = ["main"]

EXIT_BAD_INPUT = 2


def _progress(args: argparse.Namespace, message: str) -> None:
    if not getattr(args, "quiet", False):
        print(f"[dpcore {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@contextlib.contextmanager
def _heartbeat(args: argparse.Namespace, what: str, every: float = 10.0):
    """Print "still running" to stderr every ``every`` seconds while the block runs."""
    done = threading.Event()
    t0 = time.perf_counter()

    def beat() -> None:
        while not done.wait(every):
            _progress(args, f"{what} still running ({time.perf_counter() - t0:.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


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
    from dpcore.release import runconfig
    mechanism, data = args.mechanism, args.data
    known = set(runconfig.MECHANISMS) | set(runconfig.UNAVAILABLE)
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
                     **_deployment_options(args))
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


@contextlib.contextmanager
def _dask_client(address: str | None):
    """A distributed Client for ``address``; nothing (Dask's default scheduler) for "local"."""
    if address in (None, "local"):
        yield None
        return
    from distributed import Client

    try:
        client = Client(address, timeout="10s")
    except OSError as exc:
        raise CLIError(f"cannot reach the Dask scheduler at {address!r} ({exc})") from None
    try:
        yield client
    finally:
        client.close()


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
              "rng": cfg["seed"], "progress": lambda msg: _progress(args, msg)}
    t0 = time.perf_counter()
    with _dask_client(args.dask) as client:
        if sampler is None:
            if params.pop("sample_size", None) is not None:
                raise CLIError("sample_size needs a sampler (uniform or coreset)")
            params.pop("lam", None)
            res = scale.dp_lloyd(data["source"], params.pop("n_clusters"), **params, **common,
                                 client=client)
        else:
            res = scale.kmeans(data["source"], params.pop("n_clusters"), sampler=sampler,
                               **params, **common, n=args.n_rows,
                               mean_sq_norm=args.mean_sq_norm, stat_epsilon=args.stat_epsilon,
                               client=client, gather=not args.sample_on_cluster)
    return RunResult("dplloyd", {"centers": res.cluster_centers_}, res.privacy_,
                     time.perf_counter() - t0, cfg, columns=data["columns"])


def _check_out(out: str, suffixes: tuple[str, ...]) -> None:
    path = Path(out)
    if path.suffix.lower() not in suffixes:
        raise CLIError(f"{out!r}: the file name must end in {' or '.join(suffixes)}")
    if not path.parent.exists():
        raise CLIError(f"{out!r}: folder {str(path.parent)!r} does not exist")


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


def _reproduce_modules() -> list[str]:
    import dpcore.reproduce as pkg

    return sorted(m.name for m in pkgutil.iter_modules(pkg.__path__) if not m.name.startswith("_"))


def cmd_reproduce(args: argparse.Namespace) -> int:
    from dpcore.reproduce._report import scratch_dir

    available = _reproduce_modules()
    papers = available if args.paper == "all" else [args.paper]
    if not papers:
        raise CLIError("no reproduction module is installed (dpcore/reproduce/*.py)")
    for paper in papers:
        if paper not in available:
            raise CLIError(f"unknown paper {paper!r}; choose one of {[*available, 'all']}")
    failed = []
    for paper in papers:
        _progress(args, f"reproducing {paper}{' (quick)' if args.quick else ''}")
        t0 = time.perf_counter()
        module = importlib.import_module(f"dpcore.reproduce.{paper}")
        if not hasattr(module, "main"):
            raise CLIError(f"dpcore.reproduce.{paper} has no main(argv) function")
        argv = ["--quick"] if args.quick else []
        # A quick run writes to a scratch folder (its own per paper), never to the committed
        # reports in docs/reproduction; --out chooses another folder.
        out = args.out or (scratch_dir() if args.quick else None)
        if out is not None:
            argv += ["--out", str(Path(out) / paper if args.paper == "all" else out)]
        try:
            status = module.main(argv)
        except SystemExit as exc:  # argparse inside main
            status = exc.code
        except Exception as exc:  # one paper failing must not stop "all"
            print(f"dpcore: {paper}: {type(exc).__name__}: {exc}", file=sys.stderr)
            status = 1
        if status not in (None, 0):
            failed.append(paper)
        _progress(args, f"{paper} done in {time.perf_counter() - t0:.1f} s")
    if failed:
        print(f"dpcore: reproduction failed for {failed}", file=sys.stderr)
        return 1
    return 0


def app_path() -> Path:
    """``app.py`` of the checkout dpcore runs from, else the one the installed wheel carries."""
    from dpcore.data.datasets import resource_root

    return resource_root() / "app.py"


#: Addresses that serve this machine only (the dashboard's default: 127.0.0.1).
LOCAL_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def _app_url(host: str, port: int) -> str:
    shown = "localhost" if host in LOCAL_HOSTS or host in ("0.0.0.0", "::", "") else host
    return f"http://{f'[{shown}]' if ':' in shown else shown}:{port}"


def _serve(cmd: list[str], cwd: Path, env: dict[str, str]) -> int:
    """Run the server in place of this process (POSIX ``exec``).

    Then ``kill`` (SIGTERM) or Ctrl-C (SIGINT) on ``dpcore app`` reaches Streamlit itself, which
    shuts down; a child would keep serving the loaded (possibly private) table after its parent
    was gone. Without ``exec`` (Windows) the server runs as a child waited for.
    """
    if os.name == "posix":
        sys.stdout.flush()
        sys.stderr.flush()
        os.chdir(cwd)
        os.execve(cmd[0], cmd, env)  # returns only by raising OSError
    try:
        return subprocess.call(cmd, cwd=cwd, env=env)
    except KeyboardInterrupt:
        return 0


def cmd_app(args: argparse.Namespace) -> int:
    app = app_path()
    if not app.is_file():
        raise CLIError(f"the dashboard is missing: {app} not found (reinstall dpcore, or run it "
                       "from the source checkout)")
    cmd = [sys.executable, "-m", "streamlit", "run", str(app), "--server.port", str(args.port),
           "--server.address", args.host,
           "--server.headless", "true", "--browser.gatherUsageStats", "false"]
    env = dict(os.environ)
    if args.private or args.schema or args.budget:
        from dpcore.release.curator import curator_env

        opts = _deployment_options(args)
        opts.pop("analyst_token", None)
        env |= curator_env(args.private, args.schema, args.budget, args.ledger_dir, **opts)
        _progress(args, "curator deployment: locked in release mode on "
                        f"{Path(args.private).name}, data set "
                        f"'{env['DPCORE_PRIVATE_DATASET']}' (budget {args.budget}"
                        f"{'; random DP enabled' if opts['allow_random_dp'] else ''})")
    print(f"dpcore dashboard: {_app_url(args.host, args.port)}", file=sys.stderr, flush=True)
    if args.host not in LOCAL_HOSTS:
        print(f"dpcore: warning: serving on {args.host}: other machines on the network can "
              "reach the dashboard (the default, 127.0.0.1, serves this machine only)",
              file=sys.stderr, flush=True)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    return _serve(cmd, app.parent, env)


def cmd_ledger(args: argparse.Namespace) -> int:
    """Curator actions on the lasting ledger: show, export (JSON), reset (and the named data
    set and analyst actions of :func:`ledger_curator_action`)."""
    from dpcore.privacy.ledger import LastingLedger, list_ledgers, named_key

    if args.action in LEDGER_CURATOR_ACTIONS:
        return ledger_curator_action(args)
    if args.dataset:
        args.key = named_key(args.dataset)
    books = list_ledgers(args.ledger_dir)
    if args.key:
        books = [b for b in books if b["key"] == args.key]
        if not books:
            raise CLIError(f"--key {args.key!r}: no such data set in the ledger directory")
    if args.action == "show":
        if not books:
            print("no ledger yet")
        for b in books:
            print(f"{b['key']}  {b['name'] or '(unnamed)'}: {b['entries']} release(s); budget "
                  f"{b['budget']}; spent {b['spent']} ({b['refuses_by']}; basic {b['basic']}"
                  f"{'' if b['tight'] is None else '; tight ' + b['tight']}); remaining "
                  f"{b['remaining']}"
                  f"{'' if b['random'] is None else '; random DP account ' + b['random']}")
        return 0
    if args.action == "export":
        docs = []
        for b in books:
            doc = json.loads(LastingLedger(b["key"], directory=args.ledger_dir).to_json())
            docs.append({"key": b["key"], "name": b["name"]} | doc)
        text = json.dumps(docs[0] if args.key else docs, indent=2)
        if args.out:
            _check_out(args.out, (".json",))
            Path(args.out).write_text(text + "\n")
        else:
            print(text)
        return 0
    # reset
    if not args.key:
        raise CLIError("reset needs --key (see `dpcore ledger show`)")
    if not args.yes:
        raise CLIError("reset forgets the record, not the releases: confirm with --yes")
    n = LastingLedger(args.key, directory=args.ledger_dir).reset()
    _progress(args, f"reset {args.key}: {n} entr{'y' if n == 1 else 'ies'} removed")
    return 0


# ---- named data sets, analysts and integrity: the curator's ledger actions (issue 22) ------------

LEDGER_CURATOR_ACTIONS = ("describe", "grant", "revoke", "analysts", "history", "verify")


def _deployment_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--dataset``, ``--random-dp`` and the analyst token of ``dpcore run``/``dpcore app``."""
    return {"dataset": getattr(args, "dataset", None),
            "allow_random_dp": bool(getattr(args, "random_dp", False)),
            "analyst_token": getattr(args, "token", None) or os.environ.get(
                "DPCORE_ANALYST_TOKEN") or None}


def _add_deployment_flags(group, *, token: bool) -> None:
    group.add_argument("--dataset", metavar="NAME",
                       help="the data set's name: its budget belongs to the name, not to the "
                            "file's bytes (default: the file name without extension)")
    group.add_argument("--random-dp", action="store_true",
                       help="allow random-DP releases (the sensitivity sampler; needs a budget "
                            "with γ). Random DP bounds nothing in the worst case")
    if token:
        group.add_argument("--token", help="a named analyst's token (`dpcore ledger grant`; "
                                           "or $DPCORE_ANALYST_TOKEN)")


def _add_ledger_flags(led) -> None:
    led.add_argument("name", nargs="?", help="describe: the data set; grant/revoke: the analyst")
    led.add_argument("--dataset", metavar="NAME", help="a named data set (instead of --key)")
    led.add_argument("--schema", metavar="SCHEMA.json", help="describe: the new description")
    led.add_argument("--epsilon", type=float, help="grant: the analyst's ε")
    led.add_argument("--delta", type=float,
                     help="grant: the analyst's δ (default: the budget's δ in proportion)")
    led.add_argument("--rho", type=float, help="grant: the analyst's ρ (zCDP budgets)")
    led.add_argument("--adopt", action="store_true",
                     help="verify: accept the ledger file as it is now (after a restore)")


def ledger_curator_action(args: argparse.Namespace) -> int:
    """``dpcore ledger describe NAME --schema S``: record a new public description;
    ``grant ANALYST --dataset NAME --epsilon E``: print a token for a share of the budget;
    ``revoke ANALYST --dataset NAME``; ``analysts --dataset NAME``: shares and spends;
    ``history --dataset NAME``: every event; ``verify [--adopt]``: check the file's integrity
    chain (``--adopt``: accept the file as it is, e.g. after restoring a backup)."""
    from dpcore.privacy import ledger as lg
    from dpcore.privacy.guarantees import ZCDP, ApproxDP, PureDP

    if args.action == "verify":
        if args.adopt:
            found = lg.adopt(args.ledger_dir)
            print(f"adopted: {found['rows']} log row(s); a new chain head was written")
            return 0
        books = lg.list_ledgers(args.ledger_dir)  # reads every data set through the chain
        print(f"ledger OK: {len(books)} data set(s), chain and head file agree")
        return 0
    dataset = args.dataset or (args.name if args.action == "describe" else None)
    if not dataset and not args.key:
        raise CLIError(f"ledger {args.action} needs --dataset NAME (or --key KEY)")
    key = lg.named_key(dataset) if dataset else args.key
    led = lg.LastingLedger(key, directory=args.ledger_dir)
    if args.action == "describe":
        if not args.schema:
            raise CLIError("ledger describe needs --schema SCHEMA.json")
        from dpcore.release.schema import PublicDescription

        desc = PublicDescription.from_json(Path(args.schema).expanduser().read_text())
        changed = led.describe(desc)
        print(f"data set '{dataset}': description {'recorded' if changed else 'unchanged'} "
              "(the budget stays)")
        return 0
    if args.action == "history":
        for ev in led.history():
            when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ev["time"]))
            who = f" [{ev['analyst']}]" if ev["analyst"] else ""
            print(f"{ev['id']:>5}  {when}Z  {ev['kind']:<8} {ev['label']}{who}")
        return 0
    if args.action == "analysts":
        rows = led.analysts()
        if not rows:
            print("no named analysts: every release spends from the whole budget")
        for r in rows:
            print(f"{r['analyst']}: share {r['allocation']}; {r['releases']} release(s); "
                  f"spent {r['spent']}; remaining {r['remaining']}")
        return 0
    if not args.name:
        raise CLIError(f"ledger {args.action} needs the analyst's NAME")
    if args.action == "revoke":
        led.revoke(args.name)
        print(f"analyst '{args.name}': token revoked (their releases stay spent)")
        return 0
    # grant
    budget = led.snapshot().dp_budget
    if isinstance(budget, ZCDP):
        if args.rho is None:
            raise CLIError("this data set's budget is zCDP: grant needs --rho")
        allocation = ZCDP(args.rho)
    elif args.epsilon is None:
        raise CLIError("grant needs --epsilon (and --delta for an (ε, δ) budget)")
    elif isinstance(budget, ApproxDP):
        delta = (args.delta if args.delta is not None
                 else budget.delta * min(args.epsilon / budget.epsilon, 1.0))
        allocation = ApproxDP(args.epsilon, delta)
    else:
        allocation = PureDP(args.epsilon)
    token = led.grant(args.name, allocation)
    _progress(args, f"analyst '{args.name}' may spend {allocation} of data set "
                    f"'{led.display_name()}'; give them this token (shown once):")
    print(token)
    return 0


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


def _add_data_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--columns", nargs="+", metavar="COL", help="columns to use (default: all "
                   "numeric ones, or a sample's documented features)")
    p.add_argument("--radius", type=float, help="declared public radius: rows are clipped to it")
    p.add_argument("--center", type=float, nargs="+", metavar="X",
                   help="declared public centre, subtracted before clipping")


def _add_scale_flags(p: Any) -> None:
    p.add_argument("--n-rows", type=int, help="declared public number of rows n")
    p.add_argument("--mean-sq-norm", type=float,
                   help="declared public mean squared norm x̃ (coreset sampler)")
    p.add_argument("--stat-epsilon", type=float,
                   help="estimate x̃ privately with this ε (taken from the total ε)")


class _Parser(argparse.ArgumentParser):
    """argparse with the CLI's contract for usage errors too: one line, exit status 2
    (``dpcore run --epsilon abc`` names the option; ``--help`` shows the usage)."""

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f"dpcore: error: {self.prog}: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="dpcore", description="Differentially private clustering and aggregation.")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress on stderr")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    # -q is accepted after the command too (dpcore run ... -q); SUPPRESS keeps the top-level value
    quiet = argparse.ArgumentParser(add_help=False)
    quiet.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                       help="no progress on stderr")

    run = sub.add_parser("run", parents=[quiet],
                         help="run a mechanism on a table and write its release",
                         description="Run a mechanism on a CSV/Parquet file, a directory of "
                         "Parquet files or a sample data set.")
    run.add_argument("mechanism", nargs="?", help="see `dpcore list`")
    run.add_argument("data", nargs="?", help="file, Parquet directory or sample name")
    _add_data_flags(run)
    run.add_argument("--epsilon", type=float, help="privacy parameter ε (epsilon)")
    run.add_argument("--delta", type=float, help="δ of (ε, δ)-DP mechanisms (delta)")
    run.add_argument("--rho", type=float, help="zCDP ρ (rho), FriendlyCore")
    run.add_argument("-k", "--k", type=int, help="number of clusters (n_clusters)")
    run.add_argument("--n-iter", type=int, help="dplloyd: iterations T (n_iter)")
    run.add_argument("--sampler", help="dplloyd: uniform | coreset | privacy")
    run.add_argument("--sample-size", type=int, help="dplloyd: expected sample size m")
    run.add_argument("-p", "--param", action="append", default=[], metavar="NAME=VALUE",
                     help="any other mechanism parameter (VALUE parsed as JSON)")
    run.add_argument("--config", help="run configuration JSON (flags override it)")
    run.add_argument("--save-config", metavar="FILE.json", help="also write the configuration")
    run.add_argument("--seed", type=int, help="random seed (default: fresh, recorded in --out)")
    run.add_argument("--out", help="results file: .json or .csv (- for JSON on stdout)")
    big = run.add_argument_group("data larger than memory (dplloyd on Parquet/CSV via Dask)")
    big.add_argument("--dask", nargs="?", const="local", metavar="SCHEDULER",
                     help="stream the data with Dask: 'local' (default) or a scheduler address")
    _add_scale_flags(big)
    big.add_argument("--sample-on-cluster", action="store_true",
                     help="keep a large sample on the cluster (DP-Lloyd by map-reduce)")
    priv = run.add_argument_group("a private table: release through the door (release mode)")
    priv.add_argument("--schema", metavar="SCHEMA.json", help="public description of DATA "
                      "(columns, bounds or centre + radius, n); makes the run a release")
    priv.add_argument("--budget", metavar="EPS[,DELTA[,GAMMA]]",
                      help="total budget of DATA's lasting ledger (first use; later optional)")
    priv.add_argument("--ledger-dir", help="lasting ledger directory (default "
                      "$DPCORE_LEDGER_DIR or ~/.local/share/dpcore/ledger)")
    priv.add_argument("--n-epsilon", type=float,
                      help="estimate an undeclared n privately with this ε (charged once)")
    _add_deployment_flags(priv, token=True)
    run.set_defaults(func=cmd_run)

    lst = sub.add_parser("list", parents=[quiet], help="list the mechanisms and their parameters")
    lst.set_defaults(func=cmd_list)

    sample = sub.add_parser("sample", parents=[quiet],
                            help="importance-sample data larger than memory (Dask)")
    sample.add_argument("data", help="Parquet file, directory or glob")
    _add_data_flags(sample)
    sample.add_argument("--sample-size", type=int, help="expected size m (not for privacy)")
    sample.add_argument("--sampler", choices=["coreset", "uniform", "privacy"],
                        default="coreset")
    sample.add_argument("--epsilon", type=float,
                        help="privacy sampler: target ε* of the DP-Lloyd run it feeds")
    sample.add_argument("--n-iter", type=int, default=10,
                        help="privacy sampler: iterations T of that run")
    sample.add_argument("--lam", type=float, default=0.5, help="coreset mixture weight λ")
    _add_scale_flags(sample)
    sample.add_argument("--scheduler", help="dask.distributed scheduler address")
    sample.add_argument("--seed", type=int)
    sample.add_argument("--out", required=True, help=".parquet, .csv or .npz")
    sample.set_defaults(func=cmd_sample)

    rep = sub.add_parser("reproduce", parents=[quiet],
                         help="regenerate a paper's reproduction report")
    rep.add_argument("paper", help="module of dpcore.reproduce, or 'all'")
    rep.add_argument("--quick", action="store_true",
                     help="small, fast version, written to a scratch folder (not the reports)")
    rep.add_argument("--out", help="report folder (default: docs/reproduction; --quick: scratch)")
    rep.set_defaults(func=cmd_reproduce)

    app = sub.add_parser("app", parents=[quiet], help="start the dashboard")
    app.add_argument("--port", type=int, default=8501)
    app.add_argument("--host", default="127.0.0.1",
                     help="address to serve on (default 127.0.0.1: this machine only; "
                          "0.0.0.0: every network interface)")
    app.add_argument("--dry-run", action="store_true", help="print the command only")
    cur = app.add_argument_group("curator deployment (locked in release mode)")
    cur.add_argument("--private", metavar="DATA", help="the private table (CSV, Parquet, …)")
    cur.add_argument("--schema", metavar="SCHEMA.json", help="its public description")
    cur.add_argument("--budget", metavar="EPS[,DELTA[,GAMMA]]", help="its total budget")
    cur.add_argument("--ledger-dir", help="lasting ledger directory (default "
                     "$DPCORE_LEDGER_DIR or ~/.local/share/dpcore/ledger)")
    _add_deployment_flags(cur, token=False)
    app.set_defaults(func=cmd_app)

    led = sub.add_parser("ledger", parents=[quiet], help="the lasting privacy ledger (curator)")
    led.add_argument("action", choices=["show", "export", "reset", *LEDGER_CURATOR_ACTIONS])
    led.add_argument("--ledger-dir", help="ledger directory (default $DPCORE_LEDGER_DIR or "
                     "~/.local/share/dpcore/ledger)")
    led.add_argument("--key", help="one data set (its key, from `dpcore ledger show`)")
    led.add_argument("--out", help="export: write JSON to this file")
    led.add_argument("--yes", action="store_true", help="reset: confirm")
    _add_ledger_flags(led)
    led.set_defaults(func=cmd_ledger)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``dpcore`` console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)

    def show(message, category, filename, lineno, file=None, line=None):
        print(f"dpcore: warning: {category.__name__}: {message}", file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        try:
            return int(args.func(args) or 0)
        except (ValueError, TypeError, OSError, ImportError) as exc:
            # bad input (DataError, BudgetExceededError are ValueErrors): one line, no traceback
            return _fail(exc)
        except RuntimeError as exc:
            from dpcore.scale.dask_kmeans import ScaleError

            if not isinstance(exc, ScaleError):
                raise  # a bug: keep the traceback
            return _fail(exc)  # a failed cluster run


def _fail(exc: BaseException) -> int:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    print(f"dpcore: error: {text}", file=sys.stderr)
    return EXIT_BAD_INPUT


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
