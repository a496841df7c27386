"""`dpcore reproduce <paper> --quick` never touches the committed reports (issue 13 item 8).

Before, `dpcore reproduce sensitivity --quick` overwrote docs/reproduction/sensitivity_sampler.md
and eight figures. Now every module's main() sends a quick run to a scratch folder unless --out
is given, and the CLI passes a scratch --out explicitly.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
from pathlib import Path

import pytest

from dpcore import cli
from dpcore.reproduce._report import COMMITTED_DIR, report_dir, scratch_dir

PAPERS = ("friendlycore", "importance", "maxcover", "sensitivity")


def test_report_dir_sends_quick_runs_to_scratch():
    assert report_dir(None, quick=True) == scratch_dir()
    assert COMMITTED_DIR not in scratch_dir().parents and scratch_dir() != COMMITTED_DIR
    assert report_dir(None, quick=False) == COMMITTED_DIR
    assert report_dir(Path("x"), quick=True) == Path("x")


@pytest.mark.parametrize("paper", PAPERS)
def test_every_module_main_resolves_its_folder_through_report_dir(paper):
    """A module that built its default from docs/reproduction directly (the old bug) fails."""
    src = inspect.getsource(importlib.import_module(f"dpcore.reproduce.{paper}").main)
    assert "report_dir(" in src


@pytest.mark.parametrize("paper", PAPERS)
def test_cli_quick_passes_a_scratch_out_and_leaves_committed_reports_alone(monkeypatch, paper):
    seen = {}

    def fake_main(argv):
        seen["argv"] = list(argv)
        return 0

    module = importlib.import_module(f"dpcore.reproduce.{paper}")
    monkeypatch.setattr(module, "main", fake_main)
    before = {p: p.stat().st_mtime_ns for p in COMMITTED_DIR.rglob("*") if p.is_file()}
    args = argparse.Namespace(paper=paper, quick=True, out=None, quiet=True)
    assert cli.cmd_reproduce(args) == 0
    argv = seen["argv"]
    assert "--quick" in argv and "--out" in argv
    out = Path(argv[argv.index("--out") + 1]).resolve()
    assert COMMITTED_DIR.resolve() not in (out, *out.parents)
    after = {p: p.stat().st_mtime_ns for p in COMMITTED_DIR.rglob("*") if p.is_file()}
    assert before == after


def test_cli_full_run_keeps_the_module_default(monkeypatch):
    seen = {}
    module = importlib.import_module("dpcore.reproduce.sensitivity")
    monkeypatch.setattr(module, "main", lambda argv: seen.setdefault("argv", list(argv)) and 0)
    args = argparse.Namespace(paper="sensitivity", quick=False, out=None, quiet=True)
    cli.cmd_reproduce(args)
    assert seen["argv"] == []
