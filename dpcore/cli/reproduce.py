"""``dpcore reproduce PAPER|all [--quick] [--out DIR]``: run the ``main`` of each
:mod:`dpcore.reproduce` module (quick runs go to a scratch folder, never to the committed reports).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys
import time
from pathlib import Path

from dpcore.cli.common import _progress
from dpcore.core.errors import CLIError


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


