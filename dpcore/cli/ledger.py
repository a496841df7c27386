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


