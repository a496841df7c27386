"""The catch rate of the known privacy-critical mutants, as a test (issue 24).

``tools/mutant_guard.py`` applies each bug of the review (``tools/mutants/*.patch``) to a temporary
copy of the package and runs the test written to kill it: every test must pass on the code and
fail on its mutant. A refactor that moves the patched lines makes a patch stale, which fails
here too (re-make the patch with ``git diff`` after applying the bug by hand). The guard runs as
its own process (its forked test runs must import the copy's dpcore, not this worker's): about
20-90 s on two shared cores, hence ``slow``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run_tool(script: str, *args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run ``tools/<script>`` in a fresh interpreter (forking from this worker, which has
    imported dpcore, would test this checkout instead of the patched copy)."""
    return subprocess.run([sys.executable, str(ROOT / "tools" / script), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
def test_every_known_mutant_is_killed_by_its_test():
    """Fails if any review mutant survives its test, a killing test fails on the code, or a
    patch no longer applies."""
    proc = run_tool("mutant_guard.py")
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    killed, total = map(int, re.search(r"(\d+)/(\d+) mutants killed", proc.stdout).groups())
    assert killed == total >= 18, proc.stdout[-2000:]


# --- the mutation-score floor: a sample of mutmut's own mutants per module -------------------

FLOOR = ROOT / "tools" / "mutation_floor"


def _floor_modules() -> list[str]:
    spec = importlib.util.spec_from_file_location("mutate", ROOT / "tools" / "mutate.py")
    mutate = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mutate)
    return list(mutate.MODULES)


@pytest.mark.slow
def test_the_floor_samples_of_every_module_are_still_killed():
    """Fails when a change weakens the tests that kill a sampled mutant of a privacy-critical
    module, when a sampled patch no longer applies (the code moved: re-generate), or when a
    module of ``tools/mutate.py`` has no sample (a new module was never sampled)."""
    modules = _floor_modules()
    sampled = {m: len(json.loads((FLOOR / f"{m}.json").read_text())["mutants"])
               for m in modules if (FLOOR / f"{m}.json").exists()}
    assert set(sampled) == set(modules), "no sample: python tools/mutation_floor.py --generate"
    assert min(sampled.values()) >= 3, sampled  # an emptied sample would check nothing
    proc = run_tool("mutation_floor.py")
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]
    killed, total = map(int, re.search(r"(\d+)/(\d+) sampled mutants killed",
                                       proc.stdout).groups())
    assert killed == total == sum(sampled.values()), proc.stdout[-3000:]
    for m in modules:  # the table names every module with its sample
        assert re.search(rf"^\| {m} \| {sampled[m]} \| {sampled[m]} \|", proc.stdout, re.M), m


#: run in a fresh interpreter: check one module's floor on a copy in which the killing test of
#: its first sampled mutant returns before checking anything, and the line that its next
#: mutant (with another killing test) changes was edited, so that its patch no longer applies
_SABOTAGE = """
import ast, json, sys
from pathlib import Path
sys.path.insert(0, {tools!r})
import mutant_guard as guard, mutation_floor as floor

weak, moved = {weak!r}, {moved!r}
copy_tree = guard._copy_tree

def sabotaged(dest):
    copy_tree(dest)
    path, *_, name = weak["tests"][0].split("::")
    src = (dest / path).read_text()
    fn = next(n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef)
              and n.name == name.split("[")[0])
    first = fn.body[1] if ast.get_docstring(fn) and len(fn.body) > 1 else fn.body[0]
    lines = src.splitlines(keepends=True)
    lines.insert(first.lineno - 1, " " * first.col_offset + "return  # weakened\\n")
    (dest / path).write_text("".join(lines))
    patch = (floor.DATA / {module!r} / (moved["id"] + ".patch")).read_text().splitlines()
    old = next(ln[1:] for ln in patch[3:] if ln.startswith("-"))
    target = dest / moved["file"]
    target.write_text(target.read_text().replace(old, old + "  # edited", 1))

guard._copy_tree = sabotaged
rows, _ = floor.check([{module!r}], verbose=False)
print(json.dumps({{r["mutant"]: r["on_mutant"] for r in rows}}))
"""


@pytest.mark.slow
def test_a_weakened_test_or_a_moved_line_fails_the_floor():
    """The floor must fail on a deliberately weakened test (its first sampled mutant of
    max-cover's accounting then survives) and on a stale patch, with the re-generate hint.
    Fails if the check counted a run with no failure as a kill, or ignored a patch that does
    not apply."""
    def function(m: dict) -> str:
        return m["tests"][0].split("[")[0]

    # max-cover's sample is the quickest to check; any module whose sample has two killing
    # test functions will do
    for module in ["maxcover_accounting", *_floor_modules()]:
        mutants = json.loads((FLOOR / f"{module}.json").read_text())["mutants"]
        weak = mutants[0]
        moved = next((m for m in mutants[1:] if function(m) != function(weak)), None)
        if moved is not None:
            break
    assert moved is not None, "every sample is killed by a single test function"
    code = _SABOTAGE.format(tools=str(ROOT / "tools"), weak=weak, moved=moved, module=module)
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout.strip().splitlines()[-1])
    assert rows[f"{module}/{weak['id']}"] == "pass (SURVIVED)", rows
    assert rows[f"{module}/{moved['id']}"].startswith("STALE PATCH (re-generate: python "
                                                     f"tools/mutation_floor.py --generate "
                                                     f"{module})"), rows
