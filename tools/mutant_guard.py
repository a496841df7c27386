"""Apply each known privacy-critical mutant to a temporary copy and check that its test kills it.

The mutants are the bugs of issue 24's review (``tools/mutants/*.patch``, one bug each, made with
``git diff``); ``tools/mutation_floor.py`` checks a sample of mutmut's own mutants the same way,
with this module's machinery. For every mutant this script

1. copies ``dpcore/``, ``tests/`` and ``pyproject.toml`` to a temporary directory (once),
   precompiles the copy's ``dpcore`` with hash-checked bytecode (so a patched file is never run
   from a stale ``.pyc``) and checks that ``import dpcore`` there loads the copy;
2. runs all the killing tests once on the unpatched copy: they must pass ("on code");
3. applies the patch (``git apply``), runs that mutant's tests: they must fail ("on mutant"); a
   patch that no longer applies is an error too (the code moved: re-make the patch);
4. reverts the patch.

Each pytest run is a ``fork`` of one warm parent that imported numpy, scipy, pandas, pytest and
hypothesis once (never ``dpcore``): the child changes into the copy, imports ``dpcore`` from it
and runs ``pytest.main`` on the mutant's tests. A fresh interpreter per mutant spent most of its
2-3 CPU-seconds importing those libraries.

It prints the table and exits 1 if any mutant survives, any test fails on the code, or a patch is
stale. ``tests/test_mutant_guard.py`` (marked ``slow``) runs it; by hand::

    python tools/mutant_guard.py            # all of them
    python tools/mutant_guard.py 07 14      # those whose file name starts with 07 or 14
"""

from __future__ import annotations

import compileall
import gc
import importlib
import json
import os
import py_compile
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATCHES = ROOT / "tools" / "mutants"

K = "tests/test_mutant_kills.py::"
P = "tests/test_noise_power.py::"
V = "tests/test_verdict_rules.py::"


@dataclass(frozen=True)
class Mutant:
    patch: str
    what: str
    tests: tuple[str, ...]


MUTANTS: tuple[Mutant, ...] = (
    Mutant("01-compose-approx-max-delta", "compose of (ε, δ) guarantees takes max δ, not the sum",
           (K + "test_compose_adds_two_nonzero_deltas",)),
    Mutant("02-compose-zcdp-max-delta", "the same for approximate zCDP",
           (K + "test_compose_approximate_zcdp_adds_deltas",)),
    Mutant("03-ledger-zcdp-whole-delta",
           "PrivacyLedger._compose converts zCDP with the whole budget δ, not what is left",
           (K + "test_ledger_converts_zcdp_with_the_delta_that_is_left",
            K + "test_ledger_refuses_zcdp_once_the_delta_is_spent")),
    Mutant("04-spend-and-store-without-entries",
           "spend_and_store (the private n) checks the budget without the stored entries",
           (K + "test_spend_and_store_counts_the_recorded_entries",)),
    Mutant("05a-door-n-before-charge",
           "the door computes n before charging (session ledger): a refused estimate is door.n",
           (K + "test_refused_estimate_of_n_is_never_computed_nor_kept",)),
    Mutant("05b-door-n-before-charge-lasting",
           "the same through the lasting ledger's spend_and_store",
           (K + "test_refused_estimate_of_n_is_never_computed_nor_kept",)),
    Mutant("06-door-compute-before-charge",
           "the door computes on the private rows before charging",
           (K + "test_release_computes_on_the_private_rows_only_after_the_charge",)),
    Mutant("07-lloyd-count-noise-halved", "DP-Lloyd's count noise halved",
           (P + "test_lloyd_count_noise_scale",
            K + "test_every_lloyd_draw_uses_the_calibrated_scale_and_sensitivity")),
    Mutant("08-bare-l2-sampler-allowed", "the bare ℓ2 sampler allowed inside defended_noise",
           (K + "test_bare_l2_sampler_refuses_inside_the_defence",)),
    Mutant("09a-laplace-grid-ignores-coordinates",
           "the defended Laplace grid ignores the number of coordinates",
           (K + "test_defended_laplace_grid_shrinks_with_the_number_of_coordinates",)),
    Mutant("09b-box-grid-max-not-sum", "box-domain grid sensitivity max instead of sum",
           (K + "test_every_lloyd_draw_uses_the_calibrated_scale_and_sensitivity",)),
    Mutant("10-lloyd-min-count-ignored",
           "min_count ignored in DP-Lloyd (divides by tiny noisy counts)",
           (K + "test_min_count_threshold_keeps_the_previous_centre",)),
    Mutant("11-importance-c7-hard-coded", "importance C7 hard-coded to 'reproduced'",
           (V + "test_importance_c7_follows_the_comparisons",)),
    Mutant("12-importance-c10-hard-coded", "importance C10 hard-coded to 'reproduced'",
           (V + "test_importance_c10_is_within_a_factor_of_the_papers_share",)),
    Mutant("13-sensitivity-appc-threshold-1", "sensitivity App. C threshold set to 1",
           (V + "test_sensitivity_appendix_c_needs_a_decade",)),
    Mutant("14-bootstrap-holds-on-lower-end",
           "bootstrap rule: 'holds' whenever the interval's lower end is below 1",
           (V + "test_compare_holds_only_when_the_whole_interval_is_below_one",
            V + "test_maxcover_mnist_overlapping_with_balcan_is_inconclusive")),
    Mutant("15-maxcover-plateau-always-true", "max-cover plateau rule always true",
           (V + "test_maxcover_plateau_rule_compares_with_lloyds_ratio",)),
    Mutant("16-friendlycore-rises-always-true", "FriendlyCore 'success rises' rule always true",
           (V + "test_friendlycore_success_rises_is_judged_by_clopper_pearson",)),
)



#: libraries every test run imports, loaded once by the parent so that each forked child only
#: imports dpcore and the test files (the parent must never import dpcore: the child's comes
#: from the patched copy)
WARM = ("numpy", "scipy", "scipy.stats", "scipy.special", "scipy.optimize", "scipy.linalg",
        "pandas", "sklearn.base", "pytest", "_pytest.config", "hypothesis", "hypothesis.strategies",
        "sqlite3", "multiprocessing",
        # pytest's plugins found by entry point (anyio's alone took 0.6 s per run)
        "anyio.pytest_plugin", "_hypothesis_pytestplugin", "pytest_timeout",
        "platformdirs.pytest_plugin")
PYTEST_ARGS = ("-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "no:randomly",
               "--no-header")
#: a run longer than this (a mutant that makes a test loop) is stopped and reported as such
RUN_TIMEOUT_S = float(os.environ.get("DPCORE_GUARD_TIMEOUT", "300"))


@dataclass
class Outcome:
    """One pytest run in a forked child: its exit code and what each test did."""

    rc: int | str
    failed: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)
    durations: dict[str, float] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def summary(self) -> str:
        if self.rc == "timeout":
            return f"stopped after {self.seconds:.0f} s"
        text = f"{len(self.passed)} passed, {len(self.failed)} failed"
        return text + (f", errors: {'; '.join(self.errors)[:200]}" if self.errors else "")


class _Recorder:
    """pytest plugin (in the child): records each test's outcome and duration."""

    def __init__(self) -> None:
        self.out = Outcome(rc=-1)

    def pytest_runtest_logreport(self, report) -> None:
        d = self.out.durations
        d[report.nodeid] = d.get(report.nodeid, 0.0) + report.duration
        if report.failed and report.nodeid not in self.out.failed:
            self.out.failed.append(report.nodeid)
        elif report.when == "call" and report.passed:
            self.out.passed.append(report.nodeid)

    def pytest_collectreport(self, report) -> None:
        if report.failed:
            self.out.errors.append(f"collecting {report.nodeid}: {str(report.longrepr)[-300:]}")


def warm_up() -> None:
    """Import the heavy libraries once, in the parent; refuses if dpcore is already loaded."""
    if any(m == "dpcore" or m.startswith("dpcore.") for m in sys.modules):
        raise RuntimeError("dpcore is already imported here: the forked runs would use it, not "
                           "the copy's (run this as its own process)")
    for name in WARM:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    # the children's gc passes (pytest runs two at exit) need not walk the parent's objects
    gc.collect()
    gc.freeze()


def _child(work: Path, args: Sequence[str], result: Path, plugins: Sequence[object]) -> int:
    """In the forked child: run pytest in ``work`` (importing its dpcore) and write the outcome."""
    os.setpgid(0, 0)
    for var in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID",
                "PYTEST_CURRENT_TEST", "PYTEST_ADDOPTS"):
        os.environ.pop(var, None)
    if os.environ.get("DPCORE_DATA_DIR"):  # CI passes ../shared/data: relative to the checkout
        os.environ["DPCORE_DATA_DIR"] = os.path.abspath(os.environ["DPCORE_DATA_DIR"])
    os.chdir(work)
    sys.path.insert(0, str(work))
    log = os.open(str(result.with_suffix(".log")), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(log, 1)
    os.dup2(log, 2)
    import pytest

    rec = _Recorder()
    try:
        rec.out.rc = int(pytest.main([*PYTEST_ARGS, *args], plugins=[rec, *plugins]))
    except BaseException as exc:  # any crash is this run's result
        rec.out.rc = f"crash: {exc!r}"[:200]
    result.write_text(json.dumps(rec.out.__dict__))
    return 0


def _stop(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except (ProcessLookupError, ChildProcessError):
        pass


def run_tests(work: Path, args: Sequence[str], *, timeout: float = RUN_TIMEOUT_S,
              plugins: Sequence[object] = ()) -> Outcome:
    """Run pytest with ``args`` (and ``plugins``) on the copy in ``work`` in a forked child;
    stopped, with all its processes, after ``timeout`` seconds."""
    result = work.parent / f"outcome-{time.monotonic_ns()}.json"
    t0 = time.monotonic()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child never returns into the caller's code
        code = 3
        try:
            code = _child(work, args, result, plugins)
        finally:
            os._exit(code)
    try:
        while not os.waitpid(pid, os.WNOHANG)[0]:
            if time.monotonic() - t0 > timeout:
                _stop(pid)
                return Outcome(rc="timeout", seconds=time.monotonic() - t0)
            time.sleep(0.02)
    except BaseException:  # stopped (SIGTERM, Ctrl-C): take the child's processes down too
        _stop(pid)
        raise
    seconds = time.monotonic() - t0
    if not result.exists():
        log = result.with_suffix(".log")
        tail = log.read_text()[-300:] if log.exists() else ""
        return Outcome(rc=f"no result ({tail})", seconds=seconds)
    out = Outcome(**json.loads(result.read_text()))
    out.seconds = seconds
    result.unlink()
    if out.rc not in (0, 1):  # e.g. 4 with "ERROR: not found: <node id>" (a test was renamed)
        log = result.with_suffix(".log").read_text()
        out.errors += [ln for ln in log.splitlines() if ln.startswith("ERROR")][:5]
    return out


def _copy_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache")
    for name in ("dpcore", "tests"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")
    # hash-checked bytecode: a file patched and reverted within one second with an unchanged
    # size would pass a timestamp check and run the wrong version
    compileall.compile_dir(dest / "dpcore", quiet=2,
                           invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH)


@contextmanager
def working_copy(prefix: str = "dpcore-mutant-guard-") -> Iterator[Path]:
    """A temporary copy of the package and its tests; checks the copy's dpcore is the one a
    forked run imports."""
    warm_up()
    saved = sys.pycache_prefix, sys.dont_write_bytecode
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        # every .pyc (the copy's, pytest's rewritten tests, a library's) goes to the temporary
        # directory, so that the second run on reuses the first's instead of compiling again
        # (even under PYTHONDONTWRITEBYTECODE) and nothing outside it is written
        sys.pycache_prefix, sys.dont_write_bytecode = str(Path(tmp) / "pycache"), False
        work = Path(tmp) / "copy"
        work.mkdir()
        try:
            _copy_tree(work)
            yield _checked(work)
        finally:
            sys.pycache_prefix, sys.dont_write_bytecode = saved


def _checked(work: Path) -> Path:
    """``work``, once a forked run there is seen to import the copy's dpcore."""
    probe = work / "tests" / "test_zz_where_is_dpcore.py"
    probe.write_text("import dpcore\n\ndef test_where():\n"
                     f"    assert dpcore.__file__.startswith({str(work)!r}), dpcore.__file__\n")
    out = run_tests(work, [str(probe.relative_to(work))], timeout=120)
    probe.unlink()
    if out.rc != 0:
        raise RuntimeError(f"the copy's dpcore is not the one imported ({out.summary})")
    return work


def _hits(nodeids: Sequence[str], tests: Sequence[str]) -> list[str]:
    """The node ids that are one of ``tests`` or a parametrised case of one."""
    return [n for n in nodeids if any(n == t or n.startswith(t + "[") for t in tests)]


def git_apply(cwd: Path, patch: Path, *, reverse: bool = False) -> bool:
    args = ["git", "apply", "--unsafe-paths", "--directory", "."]
    args += ["-R"] if reverse else []
    return subprocess.run([*args, str(patch)], cwd=cwd, capture_output=True).returncode == 0


def check(mutants: Sequence[Mutant], patches: Path = PATCHES, *, verbose: bool = True,
          stale_hint: Callable[[Mutant], str] = lambda m: "re-make the patch") -> list[dict]:
    """Each mutant's tests must pass on the code and fail on the mutant; one row per mutant."""
    rows = []
    with working_copy() as work:
        every = tuple(dict.fromkeys(t for m in mutants for t in m.tests))
        code = run_tests(work, ["-x", *every])
        if verbose:
            print(f"on the code: {len(every)} killing tests, {code.summary} "
                  f"({code.seconds:.1f} s)", flush=True)
        for m in mutants:
            patch = patches / f"{m.patch}.patch"
            gone = [t for t in m.tests if any("not found: " in e and e.endswith(t.split("[")[0])
                                              for e in code.errors)]
            bad_code = _hits(code.failed, m.tests) or (
                [f"killing test not found: {', '.join(gone)}; {stale_hint(m)}"] if gone else
                [f"the run on the code stopped at {', '.join(code.failed) or code.rc}"]
                if code.rc else [])
            on_code = "pass" if not bad_code else f"FAIL ({', '.join(bad_code)}; {code.summary})"
            if not git_apply(work, patch):
                rows.append({"mutant": m.patch, "what": m.what, "tests": m.tests,
                             "on_code": on_code, "on_mutant": f"STALE PATCH ({stale_hint(m)})",
                             "ok": False, "s": 0.0})
                if verbose:
                    print(f"BAD  {m.patch:40s} STALE PATCH: {stale_hint(m)}", flush=True)
                continue
            try:
                out = run_tests(work, ["-x", *m.tests])
            finally:
                if not git_apply(work, patch, reverse=True):
                    raise RuntimeError(f"could not revert {patch}")
            killed = out.rc == 1 and bool(_hits(out.failed, m.tests))
            row = {"mutant": m.patch, "what": m.what, "tests": m.tests, "on_code": on_code,
                   "on_mutant": "fail (killed)" if killed else
                   ("pass (SURVIVED)" if out.rc == 0 else f"error rc={out.rc} ({out.summary})"),
                   "ok": on_code == "pass" and killed, "s": out.seconds}
            rows.append(row)
            if verbose:
                print(f"{'ok  ' if row['ok'] else 'BAD '} {m.patch:40s} on code: {row['on_code']};"
                      f" on mutant: {row['on_mutant']} ({row['s']:.1f} s)", flush=True)
    return rows


def run(select: list[str] | None = None, *, verbose: bool = True) -> list[dict]:
    """Run the guard on the review's mutants; one row per mutant (also printed as a table)."""
    mutants = [m for m in MUTANTS if not select or any(m.patch.startswith(s) for s in select)]
    rows = check(mutants, verbose=verbose)
    if verbose:
        print()
        print("| mutant | killing test(s) | on mutant | on code |")
        print("|---|---|---|---|")
        for r in rows:
            names = ", ".join(f"`{t.split('::')[0].removeprefix('tests/')}::"
                              f"{t.split('::')[1]}`" for t in r["tests"])
            print(f"| {r['mutant']}: {r['what']} | {names} | {r['on_mutant']} | {r['on_code']} |")
    return rows


def main(argv: list[str]) -> int:
    # a stopped run still removes its temporary copy (and stops its forked test run)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    t0 = time.monotonic()
    rows = run(argv or None)
    bad = [r["mutant"] for r in rows if not r["ok"]]
    print(f"\n{len(rows) - len(bad)}/{len(rows)} mutants killed by their tests "
          f"({time.monotonic() - t0:.0f} s)"
          + (f"; NOT OK: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
