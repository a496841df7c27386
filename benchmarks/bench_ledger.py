"""Benchmark: the lasting ledger's cost per spend and per read against its length.

A server process opens a ledger of n recorded releases (n in ``--sizes``, made in one
transaction), reads it once (as a page does), then makes ``--spends`` spends of one release each,
each followed by a read (``remaining()``). The table gives, per n, the median milliseconds of a
spend and of a read. With ``--before DIR`` (a checkout of an earlier dpcore, e.g. ``main``) the
same runs use that code too, interleaved with this checkout's in every round (each run its own
subprocess, ``PYTHONPATH`` set to the code it measures), so the load other processes put on the
machine falls on both alike; the ratio column is before / after.

What a spend still pays for in proportion to n after the incremental chain check
(:mod:`dpcore.privacy.ledger_chain`): reading the rows back from SQLite (compared with the
verified copies, in C) and composing every entry (:class:`dpcore.privacy.guarantees.PrivacyLedger`).

Run: ``.venv/bin/python benchmarks/bench_ledger.py [--before ../main] [--sizes 100,1000,10000]
[--rounds 3] [--spends 5]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_WORKER = r"""
import json, statistics, sys, tempfile, time
from dpcore.privacy.guarantees import PureDP
from dpcore.privacy.ledger import LastingLedger

n, spends = int(sys.argv[1]), int(sys.argv[2])
with tempfile.TemporaryDirectory() as d:
    led = LastingLedger("bench", PureDP(1e9), directory=d)
    with led._store.transaction() as (con, ledger_id, _):
        for i in range(n):
            led._store.append(con, ledger_id, led.key, "release", f"r{i}", {"epsilon": 0.01},
                              mechanism="dplloyd", guarantee=PureDP(0.01))
    led = LastingLedger("bench", directory=d)  # a server opening it
    led.remaining()
    spend, read = [], []
    for i in range(spends):
        t0 = time.perf_counter()
        led.spend(f"new{i}", PureDP(0.01), mechanism="dplloyd", epsilon=0.01)
        t1 = time.perf_counter()
        led.remaining()
        t2 = time.perf_counter()
        spend.append(t1 - t0)
        read.append(t2 - t1)
    assert len(led) == n + spends
print(json.dumps({"spend": statistics.median(spend), "read": statistics.median(read)}))
"""


def run(code: Path, n: int, spends: int) -> dict[str, float]:
    """One server's medians (seconds) with the dpcore of ``code``."""
    env = dict(os.environ, PYTHONPATH=str(code))
    out = subprocess.run([sys.executable, "-c", _WORKER, str(n), str(spends)], env=env,
                         cwd=code, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the dpcore to compare with")
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--spends", type=int, default=5)
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    codes = {"after": ROOT} | ({"before": args.before.resolve()} if args.before else {})
    got: dict[tuple[str, int], list[dict[str, float]]] = {}
    for r in range(args.rounds):
        for n in sizes:
            for name, code in codes.items():
                got.setdefault((name, n), []).append(run(code, n, args.spends))
        print(f"round {r + 1}/{args.rounds} done", file=sys.stderr)
    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores); "
          f"median of {args.rounds} interleaved rounds, each the median of {args.spends}")
    head = "| entries | " + " | ".join(f"{w} {k} ms" for k in codes for w in ("spend", "read"))
    print(head + (" | spend before/after |" if args.before else " |"))
    print("|" + "---|" * (head.count("|") + (1 if args.before else 0)))
    for n in sizes:
        med = {(k, w): 1e3 * statistics.median(g[w] for g in got[(k, n)])
               for k in codes for w in ("spend", "read")}
        cells = " | ".join(f"{med[(k, w)]:.1f}" for k in codes for w in ("spend", "read"))
        ratio = f" | {med[('before', 'spend')] / med[('after', 'spend')]:.1f}×" if (
            args.before) else ""
        print(f"| {n} | {cells}{ratio} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
