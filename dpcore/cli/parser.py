"""The argument parser of the ``dpcore`` command line: one sub-command per command module."""

from __future__ import annotations

import argparse
from typing import Any

from dpcore.cli.common import EXIT_BAD_INPUT
from dpcore.cli.dashboard import cmd_app
from dpcore.cli.ledger import cmd_ledger
from dpcore.cli.ledger_curator import (
    LEDGER_CURATOR_ACTIONS,
    add_deployment_flags,
    add_ledger_flags,
)
from dpcore.cli.reproduce import cmd_reproduce
from dpcore.cli.run import cmd_list, cmd_run
from dpcore.cli.sample import cmd_sample


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
    add_deployment_flags(priv, token=True)
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
    add_deployment_flags(cur, token=False)
    app.set_defaults(func=cmd_app)

    led = sub.add_parser("ledger", parents=[quiet], help="the lasting privacy ledger (curator)")
    led.add_argument("action", choices=["show", "export", "reset", *LEDGER_CURATOR_ACTIONS])
    led.add_argument("--ledger-dir", help="ledger directory (default $DPCORE_LEDGER_DIR or "
                     "~/.local/share/dpcore/ledger)")
    led.add_argument("--key", help="one data set (its key, from `dpcore ledger show`)")
    led.add_argument("--out", help="export: write JSON to this file")
    led.add_argument("--yes", action="store_true", help="reset: confirm")
    add_ledger_flags(led)
    led.set_defaults(func=cmd_ledger)
    return parser


