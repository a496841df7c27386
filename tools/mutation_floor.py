"""A mutation-score floor that CI enforces (issue 24): a fixed sample of mutmut's mutants must die.

``make mutate`` (``tools/mutate.py``) measures each privacy-critical module's mutation score, but
takes an hour or more and never runs in CI. This script keeps, for every module of its
:data:`mutate.MODULES` table, a committed sample of a few of mutmut's own mutants that the
module's covering tests kill today, each with the test that kills it. CI re-applies each one to a
temporary copy and checks that its test still fails on it (and passes on the code), with
``tools/mutant_guard.py``'s forked runs, so a change that weakens the tests of, say, the
sensitivity sampler or the max-cover accounting fails the suite.

Generation (``--generate``), per module, deterministic for a given code, seed and set of tests
under :data:`FAST_S`:

1. every mutant mutmut would make of the module's files (its mutation operators, run in-process;
   functions decorated only by :data:`mutate.UNWRAPPED` are mutated, as the campaign does), named
   as mutmut names them; mutants that only change a string literal's text are left out (error
   wording, see ``docs/testing.md``). If the last campaign's results are still in
   ``.mutate/<module>/mutants/``, only the mutants it detected are candidates;
2. the covering tests run once on the unpatched copy (marks and deselections as in
   ``tools/mutate.py``) to time each test; tests over :data:`FAST_S` seconds are left out, so
   the floor stays cheap;
3. the candidates are shuffled with :data:`SEED` and taken greedily, at most one per function,
   until :data:`PER_MODULE` are found that the fast covering tests kill: each candidate runs them
   with ``-x``, the first failure is its killing test, and that test alone must
   fail on it too (so the kill does not depend on an earlier test). A candidate none of them
   kills within :data:`SEARCH_S` seconds is skipped. The fast tests run in a seeded random
   order, so the killing tests spread over the covering files.

Each sampled mutant is written as ``tools/mutation_floor/<module>/<id>.patch`` (a unified diff
against the current code) and listed in ``tools/mutation_floor/<module>.json`` with its tests and
the score of the last full campaign (copied from ``.mutate/report.json`` when it has the module,
else kept from the previous file).

    python tools/mutation_floor.py                      # the CI check (all modules)
    python tools/mutation_floor.py noise door           # some modules
    python tools/mutation_floor.py --generate [MODULE ...]
"""

from __future__ import annotations

import difflib
import json
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import chdir
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import mutant_guard as guard  # a sibling script, not a package
import mutate

ROOT = guard.ROOT
DATA = ROOT / "tools" / "mutation_floor"
#: the fixed seed of the sample (change it to draw a new sample)
SEED = "dpcore-mutation-floor-1"
#: sampled mutants per module (each from a different function)
PER_MODULE = 5
#: a killing test must take at most this long on the code (seconds, measured at generation)
FAST_S = 2.0
#: a candidate not killed after this long is skipped (seconds)
SEARCH_S = 60.0
#: the campaign's marks (no slow, data, e2e or acceptance tests)
MARKS = mutate.PYTEST_ARGS[mutate.PYTEST_ARGS.index("-m") + 1]
#: mutmut's exit codes of a detected mutant (killed by a failing test)
_DETECTED = {1, 3}


@dataclass(frozen=True)
class Candidate:
    """One of mutmut's mutants of a module's file, before it is applied."""

    key: str  # mutmut's name: <dotted module>.<x_function or xǁClassǁmethod>__mutmut_<n>
    file: str
    function: str  # <file stem>.<qualified name>, the stratum

    @property
    def ident(self) -> str:
        return f"{self.function}.{self.key.rsplit('_', 1)[1]}"


def _mutations(path: str):
    """mutmut's mutations of ``path`` (relative to the cwd, a copy with a ``[tool.mutmut]``)."""
    import libcst as cst
    from libcst.metadata import MetadataWrapper
    from mutmut.mutation import file_mutation as fm
    from mutmut.mutation.mutators import mutation_operators
    from mutmut.mutation.pragma_handling import get_ignored_lines

    plain = mutate.UNWRAPPED | {"staticmethod", "classmethod"}

    def decorator_name(d: cst.Decorator) -> str:
        node = d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator
        return node.attr.value if isinstance(node, cst.Attribute) else getattr(node, "value", "")

    class Visitor(fm.MutationVisitor):
        # the campaign unwraps these decorators in its copy (tools/mutate.py), so mutmut mutates
        # those functions; applied as a patch, the decorator can stay
        def _skip_node_and_children(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.FunctionDef) and node.decorators and \
                    {decorator_name(d) for d in node.decorators} <= plain:
                return node.name.value in fm.NEVER_MUTATE_FUNCTION_NAMES
            return super()._skip_node_and_children(node)

    code = Path(path).read_text()
    wrapper = MetadataWrapper(cst.parse_module(code))
    visitor = Visitor(mutation_operators, get_ignored_lines(path, code, wrapper, None), None)
    module = wrapper.visit(visitor)
    return code, module, visitor.mutations


def _owners(module) -> dict:
    """FunctionDef node -> (class name or None, function name), for top-level code only."""
    import libcst as cst

    out = {}
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            out[stmt] = (None, stmt.name.value)
        elif isinstance(stmt, cst.ClassDef) and isinstance(stmt.body, cst.IndentedBlock):
            out.update({f: (stmt.name.value, f.name.value) for f in stmt.body.body
                        if isinstance(f, cst.FunctionDef)})
    return out


def _candidates(files: tuple[str, ...]) -> Iterator[tuple[Candidate, str, Callable[[], str]]]:
    """Every mutant of ``files`` as (candidate, original source, a function that makes the
    mutated source: rendering all of them would take minutes)."""
    from mutmut.mutation import file_mutation as fm
    from mutmut.mutation.trampoline_templates import mangle_function_name
    from mutmut.utils.format_utils import get_mutant_name

    for path in files:
        code, module, mutations = _mutations(path)
        owners = _owners(module)
        count: dict[object, int] = {}
        for m in mutations:
            owner = owners.get(m.contained_by_top_level_function)
            if owner is None:  # mutmut only runs mutants inside functions
                continue
            count[owner] = count.get(owner, 0) + 1
            cls, name = owner
            key = get_mutant_name(Path(path), mangle_function_name(name=name, class_name=cls)
                                  + f"__mutmut_{count[owner]}")
            qual = f"{Path(path).stem}.{cls + '.' if cls else ''}{name}"
            yield (Candidate(key, path, qual), code,
                   lambda module=module, m=m: fm.deep_replace(module, m.original_node,
                                                              m.mutated_node).code)


def _patch(path: str, old: str, new: str) -> str:
    diff = difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                f"a/{path}", f"b/{path}")
    return f"diff --git a/{path} b/{path}\n" + "".join(diff)


def _change(patch: str) -> tuple[str, str]:
    """(removed lines, added lines) of a patch, stripped, as in ``tools/mutate.py``."""
    lines = patch.splitlines()[3:]
    minus = [ln[1:].strip() for ln in lines if ln.startswith("-")]
    plus = [ln[1:].strip() for ln in lines if ln.startswith("+")]
    return " / ".join(minus), " / ".join(plus)


def _detected_last_time(name: str) -> set[str] | None:
    """The keys the last campaign detected, if its results are still in ``.mutate/<name>``."""
    metas = [mutate.WORK / name / "mutants" / (f + ".meta")
             for f in mutate._files(mutate.MODULES[name][0])]
    if not all(m.exists() for m in metas):
        return None
    return {k for m in metas for k, v in json.loads(m.read_text())["exit_code_by_key"].items()
            if v in _DETECTED}


class _FastShuffled:
    """pytest plugin: keep only the tests timed at generation under :data:`FAST_S`, in a seeded
    random order, so that ``-x`` stops at a random one of the tests that kill the mutant and the
    sample's killing tests spread over the covering files (in file order the first file would
    kill nearly all; fastest first, the one-line unit tests would)."""

    def __init__(self, durations: dict[str, float], seed: str) -> None:
        # shuffled before the timing filter: a test's place does not depend on which others
        # the load of the day put over FAST_S
        order = sorted(durations)
        random.Random(seed).shuffle(order)
        self.rank = {n: i for i, n in enumerate(order) if durations[n] <= FAST_S}

    def pytest_collection_modifyitems(self, config, items) -> None:
        items[:] = sorted((it for it in items if it.nodeid in self.rank),
                          key=lambda it: self.rank[it.nodeid])


def _campaign(name: str, old: dict) -> dict:
    report = mutate.WORK / "report.json"
    r = json.loads(report.read_text()).get(name) if report.exists() else None
    if not r or "score" not in r:
        return old.get("campaign", {"score": None, "note": "no campaign recorded"})
    return {"score": round(r["score"], 6), "detected": r["killed"], "tested": r["tested"],
            "mutants": r["total"], "date": datetime.fromtimestamp(report.stat().st_mtime, UTC)
            .strftime("%Y-%m-%d")}


def generate(name: str) -> dict:
    """Draw and write the sample of module ``name`` (see the module docstring)."""
    files, tests = mutate._files(mutate.MODULES[name][0]), mutate.MODULES[name][1]
    detected = _detected_last_time(name)
    out_json = DATA / f"{name}.json"
    old = json.loads(out_json.read_text()) if out_json.exists() else {}
    t0 = time.monotonic()
    with guard.working_copy(prefix="dpcore-mutation-floor-") as work, chdir(work):
        with open(work / "pyproject.toml", "a") as f:  # mutmut's config reader needs one
            f.write('\n[tool.mutmut]\nsource_paths = ["dpcore"]\n')
        from mutmut.configuration import reset_config
        reset_config()
        args = [*tests, "-m", MARKS, *mutate._deselect(name)]
        code = guard.run_tests(work, args, timeout=1800)
        durations = {n: d for n, d in code.durations.items() if n in code.passed}
        print(f"[{name}] on the code: {code.summary} in {code.seconds:.0f} s; "
              f"{sum(d <= FAST_S for d in durations.values())} tests under {FAST_S} s", flush=True)
        fast = _FastShuffled(durations, f"{SEED}:{name}:tests")
        every = list(_candidates(files))
        rng = random.Random(f"{SEED}:{name}")
        order = sorted(range(len(every)), key=lambda i: every[i][0].key)
        rng.shuffle(order)
        chosen, used, tried = [], set(), 0
        for i in order:
            cand, original, make = every[i]
            if len(chosen) == PER_MODULE:
                break
            if cand.function in used or (detected is not None and cand.key not in detected):
                continue
            mutated = make()
            patch = _patch(cand.file, original, mutated)
            old_line, new_line = _change(patch)
            if mutate._only_a_string(old_line, new_line):
                continue
            tried += 1
            target = work / cand.file
            try:
                target.write_text(mutated)
                found = guard.run_tests(work, ["-x", *args], timeout=SEARCH_S, plugins=[fast])
                killer = found.failed[:1] if found.rc == 1 else []
                alone = guard.run_tests(work, ["-x", *killer]) if killer else None
            finally:
                target.write_text(original)
            ok = alone is not None and alone.rc == 1
            print(f"[{name}] {cand.key}: {old_line[:60]} -> {new_line[:60]}: "
                  + (f"killed by {killer[0]}" if ok else f"skipped ({found.summary})"), flush=True)
            if ok:
                used.add(cand.function)
                chosen.append({"id": cand.ident, "key": cand.key, "file": cand.file,
                               "change": f"{old_line} → {new_line}", "tests": killer,
                               "patch": patch})
    folder = DATA / name
    if folder.exists():
        for p in folder.glob("*.patch"):
            p.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    for c in chosen:
        (folder / f"{c['id']}.patch").write_text(c.pop("patch"))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                            capture_output=True, text=True).stdout.strip()
    record = {"module": name, "files": list(files), "seed": SEED, "commit": commit,
              "generated": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "from_campaign": detected is not None, "candidates": len(every),
              "tried": tried, "campaign": _campaign(name, old), "mutants": chosen}
    out_json.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(f"[{name}] {len(chosen)} sampled of {tried} tried ({len(every)} mutants) in "
          f"{time.monotonic() - t0:.0f} s -> {out_json.relative_to(ROOT)}", flush=True)
    return record


def _hint(m: guard.Mutant) -> str:
    return f"re-generate: python tools/mutation_floor.py --generate {m.patch.split('/')[0]}"


def check(names: list[str], *, verbose: bool = True) -> tuple[list[dict], list[str]]:
    """Apply every sampled mutant of ``names``; (the guard's rows, modules with no sample)."""
    mutants, missing = [], []
    for name in names:
        path = DATA / f"{name}.json"
        if not path.exists():
            missing.append(name)
            continue
        rec = json.loads(path.read_text())
        mutants += [guard.Mutant(f"{name}/{m['id']}", m["change"], tuple(m["tests"]))
                    for m in rec["mutants"]]
    return guard.check(mutants, DATA, verbose=verbose, stale_hint=_hint), missing


def table(rows: list[dict], names: list[str]) -> str:
    out = ["| module | sampled | killed | last campaign's score |", "|---|---|---|---|"]
    for name in names:
        mine = [r for r in rows if r["mutant"].split("/")[0] == name]
        path = DATA / f"{name}.json"
        camp = json.loads(path.read_text())["campaign"] if path.exists() else {}
        score = f"{camp['score']:.1%}" if camp.get("score") is not None else "not recorded"
        when = "".join(f"; {camp[k]}" for k in ("date", "note") if camp.get(k))
        when = f" ({when[2:]})" if when else ""
        killed = sum(r["ok"] for r in mine)
        out.append(f"| {name} | {len(mine) if path.exists() else 'NO SAMPLE'} | {killed} | "
                   f"{score}{when} |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    gen = "--generate" in argv
    names = [a for a in argv if not a.startswith("-")] or list(mutate.MODULES)
    unknown = [n for n in names if n not in mutate.MODULES]
    if unknown:
        print(f"unknown module(s) {unknown}; choose from {list(mutate.MODULES)}")
        return 2
    # a stopped run still removes its temporary copy (and stops its forked test run)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if gen:
        for name in names:
            generate(name)
        return 0
    t0 = time.monotonic()
    rows, missing = check(names)
    print("\n" + table(rows, names))
    bad = [r["mutant"] for r in rows if not r["ok"]]
    print(f"\n{len(rows) - len(bad)}/{len(rows)} sampled mutants killed by their tests "
          f"({time.monotonic() - t0:.0f} s)" + (f"; NOT OK: {', '.join(bad)}" if bad else "")
          + (f"; no sample for {', '.join(missing)} (python tools/mutation_floor.py --generate "
             f"{' '.join(missing)})" if missing else ""))
    return 1 if bad or missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
