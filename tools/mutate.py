"""Mutation score of the privacy-critical modules (``make mutate``; issue 24).

For each module below, mutmut (3.x) mutates that one file and runs only the module's covering
test files (so a run stays tractable on two shared cores): in ``.mutate/<name>/`` it gets a copy
of ``dpcore/``, ``tests/`` and a ``pyproject.toml`` whose ``[tool.mutmut]`` names the file and the
tests; ``mutmut run --max-children 1`` then forks one warm pytest per mutant and runs the tests
that reach the mutated function (mutmut's own coverage map). Tests marked slow, data, e2e or
acceptance are left out. mutmut skips decorated functions, so the copy applies the decorators
of :data:`UNWRAPPED` by assignment instead; what stays decorated is printed as not mutated.

Printed per module: mutants, detected (killed, or made a test time out), survived, no tests (the
selected tests never call the function), the score detected / (detected + survived), the score
without survivors that only change a string literal's text (error messages, mostly: see
``docs/testing.md``), and every survivor with its diff line. ``.mutate/report.json`` keeps it all;
``mutmut show <name>`` inside ``.mutate/<name>/`` shows a survivor in full.

    python tools/mutate.py                 # every module
    python tools/mutate.py guarantees door # some of them
    python tools/mutate.py --list          # the modules and their tests
    python tools/mutate.py ledger --only='*Storeǁtransaction*,*x_key_state*'
                                           # only these mutants (mutmut's fnmatch on the
                                           # mutant's dotted name); the rest: "not checked"
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORK = ROOT / ".mutate"
MUTMUT = Path(sys.executable).with_name("mutmut")

#: tests written from the survivors of earlier runs (every module's list ends with it)
SURVIVORS = "tests/test_survivor_kills.py"
#: tests written from the survivors of the split modules (importance, sensitivity sampler)
KILLS_IMPORTANCE = "tests/test_survivor_kills_importance.py"
KILLS_SENSITIVITY = "tests/test_survivor_kills_sensitivity.py"
#: the last untriaged survivors: an empty statistic, FriendlyCore's need = n boundary
KILLS_EMPTY = "tests/test_survivor_kills_empty_output.py"
KILLS_RESPONSE = "tests/test_survivor_kills_response.py"
KILLS_FRIENDLYCORE = "tests/test_survivor_kills_friendlycore.py"
KILLS_DOOR = "tests/test_survivor_kills_door.py"
KILLS_NOISE = "tests/test_survivor_kills_noise.py"
KILLS_LEDGER = "tests/test_survivor_kills_ledger.py"
KILLS_GUARANTEES = "tests/test_survivor_kills_guarantees.py"
KILLS_CALIBRATION = "tests/test_survivor_kills_calibration.py"
#: name -> (file(s) to mutate, covering test files); a module split into several files keeps
#: its name and mutates all of them (mutmut's only_mutate takes a list)
MODULES: dict[str, tuple[str | tuple[str, ...], tuple[str, ...]]] = {
    "guarantees": ("dpcore/privacy/guarantees.py",
                   ("tests/test_privacy.py", "tests/test_accountant.py",
                    "tests/test_ledger_accounts.py", "tests/test_ledger_errors.py",
                    "tests/test_mutant_kills.py", SURVIVORS, KILLS_DOOR, KILLS_GUARANTEES)),
    "noise": ("dpcore/privacy/noise.py",
              ("tests/test_noise.py", "tests/test_noise_defended.py", "tests/test_noise_power.py",
               "tests/test_mutant_kills.py", SURVIVORS, KILLS_NOISE)),
    "discrete_noise": ("dpcore/privacy/discrete_noise.py",
                       ("tests/test_noise_defended.py", "tests/test_noise_power.py",
                        SURVIVORS)),
    # every ledger*.py file (the hash chain was split out of ledger_file.py)
    "ledger": (("dpcore/privacy/ledger.py", "dpcore/privacy/ledger_analysts.py",
                "dpcore/privacy/ledger_chain.py", "dpcore/privacy/ledger_file.py",
                "dpcore/privacy/ledger_outputs.py"),
               ("tests/test_ledger_lasting.py", "tests/test_ledger_accounts.py",
                "tests/test_ledger_chain.py", "tests/test_ledger_integrity.py",
                "tests/test_ledger_errors.py", "tests/test_ledger_outputs.py",
                "tests/test_mutant_kills.py", SURVIVORS, KILLS_LEDGER,
                # the functions only the app and the CLI call; the core run's survivors
                "tests/test_ledger_direct.py", "tests/test_ledger_core_kills.py",
                # the last survivors: two reads in one process, an existing file SQLite
                # cannot open; the 90 mutants last run (describe, analysts, ...)
                "tests/test_ledger_last_kills.py")),
    "door": ("dpcore/release/door.py",
             ("tests/test_release_door.py", "tests/test_ledger_outputs.py",
              "tests/test_mutant_kills.py", SURVIVORS, KILLS_DOOR)),
    "lloyd_calibration": ("dpcore/mechanisms/importance/calibration.py",
                          ("tests/test_lloyd.py", "tests/test_importance.py", SURVIVORS,
                           KILLS_CALIBRATION)),
    "importance_weights": (("dpcore/mechanisms/importance/sampling.py",
                            "dpcore/mechanisms/importance/weights.py",
                            "dpcore/mechanisms/importance/amplification.py"),
                           ("tests/test_importance.py", "tests/test_lloyd.py", SURVIVORS,
                            KILLS_IMPORTANCE)),
    "friendlycore_filters": ("dpcore/mechanisms/friendlycore/filters.py",
                             ("tests/test_friendlycore_core.py",
                              "tests/test_friendlycore_mean.py",
                              "tests/test_friendlycore_counting.py", SURVIVORS,
                              KILLS_FRIENDLYCORE)),
    "maxcover_accounting": ("dpcore/mechanisms/maxcover/accounting.py",
                            ("tests/test_maxcover.py", "tests/test_maxcover_preset.py",
                             SURVIVORS)),
    "sensitivity_sampler": (("dpcore/mechanisms/sensitivity/sampler.py",
                             "dpcore/mechanisms/sensitivity/config.py",
                             "dpcore/mechanisms/sensitivity/estimation.py",
                             "dpcore/mechanisms/sensitivity/response.py",
                             "dpcore/mechanisms/sensitivity/validation.py"),
                            ("tests/test_sensitivity.py", "tests/test_sensitivity_config.py",
                             "tests/test_noise_power.py", SURVIVORS, KILLS_SENSITIVITY,
                             KILLS_EMPTY, KILLS_RESPONSE)),
}

#: module -> tests left out of its run: the first two need the source checkout's app (app.py,
#: pages/), which mutmut's copy lacks (the rest of their file runs: describe, adopt, the analysts'
#: table); the third starts a new Python that imports dpcore (8 of the 25 s a surviving ledger
#: mutant costs), and the 89 other tests reach every function it reaches (a second open of the
#: same file in this process re-reads everything; test_ledger_lasting's four-process test and
#: test_ledger_chain's restore in another process stay)
DESELECT: dict[str, tuple[str, ...]] = {
    "ledger": ("tests/test_ledger_integrity.py::"
               "test_app_and_run_pass_the_dataset_and_random_dp_flags",
               "tests/test_ledger_integrity.py::"
               "test_app_shows_an_error_box_not_a_traceback_when_the_ledger_was_edited",
               "tests/test_ledger_lasting.py::test_entries_survive_a_new_process"),
}

PYTEST_ARGS = ["-p", "no:xdist", "-p", "no:cacheprovider", "-p", "no:randomly", "-q",
               "-m", "not slow and not data and not e2e and not acceptance"]
#: a run of one module is stopped after this long (the machine is shared)
MODULE_TIMEOUT_S = int(os.environ.get("DPCORE_MUTATE_TIMEOUT", "2400"))

_STATUS = {1: "killed", 3: "killed", 0: "survived", 5: "no tests", 33: "no tests",
           34: "skipped", 35: "suspicious", 36: "timeout", 24: "timeout", -24: "timeout",
           152: "timeout", 255: "timeout", 37: "caught by type check", None: "not checked"}
_STRING = re.compile(r"""(?:[rbuf]*)("([^"\\]|\\.)*"|'([^'\\]|\\.)*')""", re.IGNORECASE)


def _toml_list(items) -> str:
    return "[" + ", ".join(json.dumps(str(x)) for x in items) + "]"


def _files(target: str | tuple[str, ...]) -> tuple[str, ...]:
    return (target,) if isinstance(target, str) else tuple(target)


def _deselect(name: str) -> list[str]:
    return [a for t in DESELECT.get(name, ()) for a in ("--deselect", t)]


def _mutant_file(key: str) -> str:
    """The source file of a mutant: its key is ``<dotted module>.<x_function>__mutmut_<n>``."""
    return key.rsplit(".", 1)[0].replace(".", "/") + ".py"


#: decorators that return the function itself or wrap it without reading its code object:
#: mutmut 3 skips every decorated function (its trampoline cannot sit under a decorator), so in
#: the copy ``@d def f`` becomes ``def f`` then ``f = d(f)``. Not unwrapped: the draw-site
#: markers (``selection_sampler``, ``public_randomness``) register ``f.__code__``, which the
#: trampoline would replace; those functions stay unmutated and are listed as such.
UNWRAPPED = frozenset({"declare", "contextmanager", "property"})


def _decorator_name(node: ast.expr) -> str:
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def _decorated(tree: ast.Module):
    """Top-level functions and methods with decorators other than staticmethod/classmethod."""
    for node in tree.body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        for fn in inner:
            if isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef) and fn.decorator_list and \
                    {_decorator_name(d) for d in fn.decorator_list} - {"staticmethod",
                                                                        "classmethod"}:
                yield (node.name + "." if node is not fn else "") + fn.name, fn


def _unwrap_decorators(path: Path) -> list[str]:
    """Rewrite ``path`` (a copy) so that mutmut mutates functions decorated only by
    :data:`UNWRAPPED`; returns the decorated functions it still cannot mutate."""
    src = path.read_text()
    lines = src.splitlines(keepends=True)
    left, edits = [], []
    for qualname, fn in _decorated(ast.parse(src)):
        if not {_decorator_name(d) for d in fn.decorator_list} <= UNWRAPPED:
            left.append(qualname)
            continue
        expr = fn.name
        for dec in reversed(fn.decorator_list):
            expr = f"{ast.unparse(dec)}({expr})"
        edits.append((fn.decorator_list[0].lineno - 1, fn.lineno - 1, fn.end_lineno,
                      " " * fn.col_offset + f"{fn.name} = {expr}\n"))
    for first, def_line, end, assign in sorted(edits, reverse=True):
        lines[end:end] = [assign]
        del lines[first:def_line]
    path.write_text("".join(lines))
    return left


def _prepare(name: str, target: str | tuple[str, ...], tests: tuple[str, ...]) -> Path:
    work = WORK / name
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache")
    for d in ("dpcore", "tests"):
        shutil.copytree(ROOT / d, work / d, ignore=ignore)
    conf = (ROOT / "pyproject.toml").read_text()
    conf += (
        "\n[tool.mutmut]\n"
        'source_paths = ["dpcore"]\n'
        f"only_mutate = {_toml_list(_files(target))}\n"
        'also_copy = ["tests", "pyproject.toml"]\n'
        f"pytest_add_cli_args = {_toml_list(PYTEST_ARGS + _deselect(name))}\n"
        f"pytest_add_cli_args_test_selection = {_toml_list(tests)}\n"
        # a mutant that loops (e.g. in a rejection sampler) is stopped after 4x the CPU time of
        # its tests (mutmut's default 15x made one such mutant cost minutes)
        "timeout_multiplier = 4.0\n"
        "timeout_constant = 2.0\n"
    )
    (work / "pyproject.toml").write_text(conf)
    (work / "not_mutated.json").write_text(json.dumps(
        {f: _unwrap_decorators(work / f) for f in _files(target)}))
    return work


def _diff_lines(work: Path, mutants: list[str]) -> dict[str, tuple[str, str]]:
    """(removed line, added line) of each mutant, from mutmut's own diff, in one process."""
    if not mutants:
        return {}
    proc = subprocess.run([sys.executable, __file__, "--diffs", *mutants], cwd=work,
                          capture_output=True, text=True)
    try:
        return {k: tuple(v) for k, v in json.loads(proc.stdout).items()}
    except json.JSONDecodeError:
        return {k: ("?", proc.stderr[-200:]) for k in mutants}


def _print_diffs(mutants: list[str]) -> None:
    """(run inside a module's work directory) print {mutant: [old, new]} as JSON."""
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    out = {}
    for k in mutants:
        text = get_diff_for_mutant(k, path=_mutant_file(k))
        minus = [ln[1:].strip() for ln in text.splitlines()
                 if ln.startswith("-") and not ln.startswith("---")]
        plus = [ln[1:].strip() for ln in text.splitlines()
                if ln.startswith("+") and not ln.startswith("+++")]
        out[k] = [" / ".join(minus), " / ".join(plus)]
    print(json.dumps(out))


def _only_a_string(old: str, new: str) -> bool:
    """The mutant changes only the text inside string literals (e.g. an error message)."""
    if old == new or not old:
        return False
    return _STRING.sub('""', old) == _STRING.sub('""', new)


def run_module(name: str, only: list[str] | None = None) -> dict:
    """Mutate module ``name`` and run its tests; ``only``: fnmatch patterns on the mutants'
    names (mutmut's own filter), to check part of a module when a whole run does not fit."""
    target, tests = MODULES[name]
    work = _prepare(name, target, tests)
    t0 = time.monotonic()
    log = work / "mutmut-run.log"
    with open(log, "w") as f:
        try:
            proc = subprocess.run(["nice", "-n", "10", str(MUTMUT), "run", "--max-children", "1",
                                   *(only or [])],
                                  cwd=work, stdout=f, stderr=subprocess.STDOUT,
                                  timeout=MODULE_TIMEOUT_S)
            rc = proc.returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    seconds = time.monotonic() - t0
    metas = [work / "mutants" / (f + ".meta") for f in _files(target)]
    shown = ", ".join(_files(target))
    if not all(m.exists() for m in metas):
        return {"module": name, "file": shown, "tests": tests, "error": f"mutmut rc={rc}, no "
                f"results (see {log.relative_to(ROOT)})", "seconds": seconds}
    codes = {k: v for m in metas for k, v in json.loads(m.read_text())["exit_code_by_key"].items()}
    status = {k: _STATUS.get(v, "suspicious") for k, v in codes.items()}
    count = {s: sum(v == s for v in status.values()) for s in set(status.values())}
    survivors = []
    left = sorted(k for k, s in status.items() if s in ("survived", "not checked", "no tests"))
    diffs = _diff_lines(work, left)
    for k in left:
        old, new = diffs.get(k, ("?", "?"))
        survivors.append({"mutant": k, "status": status[k], "old": old, "new": new,
                          "string_only": _only_a_string(old, new)})
    # a timeout (the mutant made a test loop) and a crash count as detected, as in mutmut
    detected = sum(count.get(s, 0) for s in ("killed", "timeout", "segfault"))
    tested = detected + sum(count.get(s, 0) for s in ("survived", "suspicious"))
    strings = sum(s["string_only"] for s in survivors if s["status"] == "survived")
    not_mutated = [f"{Path(f).stem}.{q}" for f, qs in
                   json.loads((work / "not_mutated.json").read_text()).items() for q in qs]
    return {"module": name, "file": shown, "tests": tests, "rc": rc, "seconds": seconds,
            "not_mutated": not_mutated, "only": only or [],
            "counts": count, "total": len(status), "killed": detected, "tested": tested,
            "score": detected / tested if tested else float("nan"),
            "score_without_strings": detected / (tested - strings) if tested > strings else
            float("nan"),
            "string_survivors": strings, "survivors": survivors}


def _print(r: dict) -> None:
    if "error" in r:
        print(f"{r['module']:22s} ERROR: {r['error']}")
        return
    c = r["counts"]
    print(f"{r['module']:22s} {r['total']:4d} mutants: {r['killed']:4d} detected, "
          f"{c.get('survived', 0):3d} survived ({r['string_survivors']} only a string's text), "
          f"{c.get('no tests', 0):3d} no tests, {c.get('not checked', 0)} not checked; "
          f"score {r['score']:.1%} "
          f"({r['score_without_strings']:.1%} without string-only; {c.get('timeout', 0)} "
          "of the detected are timeouts); "
          f"{r['seconds']:.0f} s", flush=True)
    if r.get("not_mutated"):
        print(f"{'':22s} not mutated (decorated): {', '.join(r['not_mutated'])}", flush=True)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--diffs"]:
        _print_diffs(argv[1:])
        return 0
    if "--list" in argv:
        for name, (target, tests) in MODULES.items():
            print(f"{name:22s} {' '.join(_files(target))}  <-  {' '.join(tests)}")
        return 0
    only = [p for a in argv if a.startswith("--only=") for p in a[7:].split(",") if p]
    names = [a for a in argv if not a.startswith("-")] or list(MODULES)
    unknown = [n for n in names if n not in MODULES]
    if unknown:
        print(f"unknown module(s) {unknown}; choose from {list(MODULES)}")
        return 2
    WORK.mkdir(exist_ok=True)
    t0 = time.monotonic()
    results = []
    report = WORK / "report.json"
    for name in names:
        r = run_module(name, only)
        results.append(r)
        _print(r)
        old = json.loads(report.read_text()) if report.exists() else {}
        old[name] = r  # written after every module: a stopped run keeps what it measured
        report.write_text(json.dumps(old, indent=1, ensure_ascii=False, default=str))
    total = time.monotonic() - t0
    print(f"\nmake mutate: {len(names)} module(s) in {total / 60:.1f} min\n")
    for r in results:
        for s in r.get("survivors", []):
            tag = "string" if s["string_only"] else s["status"]
            print(f"  [{r['module']}] {s['mutant'].split('.')[-1]} ({tag}): "
                  f"{s['old'][:90]}  →  {s['new'][:90]}")
    print(f"\nreport: {report.relative_to(ROOT)}")
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
