"""``dpcore ledger show|export|reset``: the curator's actions on the lasting privacy ledger
(``describe|grant|revoke|analysts|history|verify``: :mod:`dpcore.cli.ledger_curator`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dpcore.cli.common import _check_out, _progress
from dpcore.cli.ledger_curator import LEDGER_CURATOR_ACTIONS, ledger_curator_action
from dpcore.core.errors import CLIError


def cmd_ledger(args: argparse.Namespace) -> int:
    """Curator actions on the lasting ledger: show, export (JSON), reset (and the named data
    set and analyst actions of :func:`~dpcore.cli.ledger_curator.ledger_curator_action`)."""
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
        return _export(args, books)
    # reset
    if not args.key:
        raise CLIError("reset needs --key (see `dpcore ledger show`)")
    if not args.yes:
        raise CLIError("reset forgets the record, not the releases: confirm with --yes")
    n = LastingLedger(args.key, directory=args.ledger_dir).reset()
    _progress(args, f"reset {args.key}: {n} entr{'y' if n == 1 else 'ies'} removed")
    return 0




def _export(args: argparse.Namespace, books: list[dict]) -> int:
    """``dpcore ledger export``: every release with its kept DP output (table units), as JSON
    or CSV; with an analyst's token, only that analyst's releases of one data set."""
    import os

    from dpcore.privacy.ledger import LastingLedger
    from dpcore.privacy.ledger_outputs import ANY
    from dpcore.release.curator import table_units

    fmt = args.format or ("csv" if args.out and args.out.lower().endswith(".csv") else "json")
    if args.out:
        _check_out(args.out, (".csv",) if fmt == "csv" else (".json",))
    token = args.token or os.environ.get("DPCORE_ANALYST_TOKEN") or None
    if token is not None and not args.key:
        raise CLIError("export --token needs --dataset NAME: a token belongs to one data set")
    docs = []
    for b in books:
        led = LastingLedger(b["key"], directory=args.ledger_dir, analyst_token=token)
        desc = led.description()
        recs = led.records(led.analyst if token is not None else ANY)
        for r in recs:
            r.pop("_guarantee", None)
            r["output"] = table_units(r["output"], desc)
        head = {"name": b["name"]} if token is not None else {"key": b["key"], "name": b["name"]}
        snap = led.snapshot()
        docs.append(head | {"budget": str(snap.budget), "accounts": snap.accounts().as_dict(),
                            "analyst": led.analyst,
                            "share": None if token is None else led.share_accounts(led.analyst),
                            "entries": recs})
    if fmt == "csv":
        text = _csv(docs)
    else:
        text = json.dumps(docs[0] if args.key else docs, indent=2, default=str) + "\n"
    if args.out:
        Path(args.out).write_text(text)
        _progress(args, f"exported {sum(len(d['entries']) for d in docs)} release(s) to "
                        f"{args.out}")
    else:
        print(text, end="")
    return 0


def _csv(docs: list[dict]) -> str:
    """One row per release: data set, label, mechanism, guarantees, analyst, UTC time, origin,
    output and parameters (JSON text); cells that could run as spreadsheet formulas defused."""
    import time

    import pandas as pd

    from dpcore.core.text import csv_safe_frame

    cols = ["dataset", "label", "mechanism", "guarantee", "released_guarantee", "account",
            "analyst", "time", "origin", "output", "params"]
    rows = [{"dataset": d["name"], **{c: r.get(c) for c in cols[1:7]},
             "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(r["time"])),
             "origin": r["origin"], "output": "" if not r["kept"] else json.dumps(r["output"]),
             "params": json.dumps(r["params"], sort_keys=True, default=str)}
            for d in docs for r in d["entries"]]
    return csv_safe_frame(pd.DataFrame(rows, columns=cols)).to_csv(index=False)
