"""The shape of the code (issue 21, docs/architecture.md), checked so that it cannot drift.

- the layers contracts of pyproject.toml hold (``lint-imports``): imports only point down;
- no import cycle among dpcore's modules, counting imports inside functions too (so no import is
  kept inside a function to dodge a cycle: moved to the top it would still be acyclic);
- dpcore never imports Streamlit;
- no module of dpcore, pages/ or app.py is over 600 lines;
- the public façade and the old flat paths (deprecated aliases) import.
"""

from __future__ import annotations

import importlib
import subprocess
import sys
import warnings
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_LINES = 600


@pytest.fixture(scope="module")
def graph():
    return grimp.build_graph("dpcore", include_external_packages=True, cache_dir=None)


def test_layers_contracts_hold():
    lint = Path(sys.executable).with_name("lint-imports")
    out = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert "BROKEN" not in out.stdout and "KEPT" in out.stdout


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of size > 1 of dpcore's module graph (Tarjan)."""
    mods = sorted(m for m in graph.modules if m.startswith("dpcore"))
    adj = {m: [i for i in graph.find_modules_directly_imported_by(m) if i.startswith("dpcore")]
           for m in mods}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]
    sys.setrecursionlimit(max(10_000, sys.getrecursionlimit()))

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for m in mods:
        if m not in index:
            visit(m)
    return out


def test_no_import_cycles_even_through_imports_inside_functions(graph):
    # grimp counts imports inside functions as edges, so 0 cycles here means that no import
    # is kept inside a function to dodge a cycle
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    class Fake:
        modules = ("dpcore.a", "dpcore.b", "dpcore.c")

        @staticmethod
        def find_modules_directly_imported_by(m):
            return {"dpcore.a": {"dpcore.b"}, "dpcore.b": {"dpcore.a"}, "dpcore.c": set()}[m]

    assert _cycles(Fake()) == [["dpcore.a", "dpcore.b"]]


def test_dpcore_never_imports_streamlit(graph):
    assert "streamlit" not in graph.modules or not {
        m for m in graph.find_modules_that_directly_import("streamlit") if m.startswith("dpcore")}


def test_no_module_is_over_600_lines():
    files = [*ROOT.joinpath("dpcore").rglob("*.py"), *ROOT.joinpath("pages").glob("*.py"),
             ROOT / "app.py"]
    long = {str(p.relative_to(ROOT)): n for p in files
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"split these modules (over {MAX_LINES} lines): {long}"


def test_the_public_facade_imports():
    import dpcore

    for name in dpcore.__all__:
        assert getattr(dpcore, name) is not None, name
    from dpcore import DPKMeans, DPLloyd, MaxCoverKMeans, PrivacyLedger  # noqa: F401


@pytest.mark.parametrize("old, new", [
    ("dpcore.lloyd", "dpcore.mechanisms.lloyd"),
    ("dpcore.importance", "dpcore.mechanisms.importance"),
    ("dpcore.noise", "dpcore.privacy.noise"),
    ("dpcore.maxcover.grid", "dpcore.mechanisms.maxcover.grid"),
])
def test_public_contract_paths_stay_without_a_warning(old, new):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert importlib.import_module(old) is importlib.import_module(new)


def test_old_flat_paths_are_deprecated_aliases():
    sys.modules.pop("dpcore.runconfig", None)
    with pytest.warns(DeprecationWarning, match="dpcore.release.runconfig"):
        old = importlib.import_module("dpcore.runconfig")
    assert old is importlib.import_module("dpcore.release.runconfig")
    # an exported script of 0.1 still runs
    from dpcore.runconfig import run_config  # noqa: F401
