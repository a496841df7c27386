"""The curator's ledger actions of issue 22, kept apart from the rest of the CLI: named data sets
(``--dataset``), random DP (``--random-dp``), analysts' tokens (``--token``), and ``dpcore ledger
describe|grant|revoke|analysts|history|verify``."""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path
from typing import Any

from dpcore.cli.common import _progress
from dpcore.core.errors import CLIError

__all__ = ["LEDGER_CURATOR_ACTIONS", "add_deployment_flags", "add_ledger_flags",
           "deployment_options", "ledger_curator_action"]


LEDGER_CURATOR_ACTIONS = ("describe", "grant", "revoke", "analysts", "history", "verify")


def deployment_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--dataset``, ``--random-dp`` and the analyst token of ``dpcore run``/``dpcore app``."""
    return {"dataset": getattr(args, "dataset", None),
            "allow_random_dp": bool(getattr(args, "random_dp", False)),
            "analyst_token": getattr(args, "token", None) or os.environ.get(
                "DPCORE_ANALYST_TOKEN") or None}


def add_deployment_flags(group, *, token: bool) -> None:
    group.add_argument("--dataset", metavar="NAME",
                       help="the data set's name: its budget belongs to the name, not to the "
                            "file's bytes (default: the file name without extension)")
    group.add_argument("--random-dp", action="store_true",
                       help="allow random-DP releases (the sensitivity sampler; needs a budget "
                            "with γ). Random DP bounds nothing in the worst case")
    if token:
        group.add_argument("--token", help="a named analyst's token (`dpcore ledger grant`; "
                                           "or $DPCORE_ANALYST_TOKEN)")


def add_ledger_flags(led) -> None:
    led.add_argument("name", nargs="?", help="describe: the data set; grant/revoke: the analyst")
    led.add_argument("--dataset", metavar="NAME", help="a named data set (instead of --key)")
    led.add_argument("--schema", metavar="SCHEMA.json", help="describe: the new description")
    led.add_argument("--epsilon", type=float, help="grant: the analyst's ε")
    led.add_argument("--delta", type=float,
                     help="grant: the analyst's δ (default: the budget's δ in proportion)")
    led.add_argument("--rho", type=float, help="grant: the analyst's ρ (zCDP budgets)")
    led.add_argument("--adopt", action="store_true",
                     help="verify: accept the ledger file as it is now (after a restore)")
    led.add_argument("--token", help="export: a named analyst's token (or "
                                     "$DPCORE_ANALYST_TOKEN): only their own entries")
    led.add_argument("--format", choices=["json", "csv"],
                     help="export: JSON (default) or CSV (default: from --out's suffix)")


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
            who = None if r["analyst"] == "(unallocated)" else r["analyst"]
            acc = led.share_accounts(who)
            tight = "" if acc["tight"] is None else f"; tight {acc['tight']}"
            rnd = "" if acc["random"] is None else f"; random DP {acc['random']}"
            print(f"{r['analyst']}: share {r['allocation']}; {r['releases']} release(s); "
                  f"spent {r['spent']} (basic {acc['basic']}{tight}{rnd}); remaining "
                  f"{r['remaining']}")
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
