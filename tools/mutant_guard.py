"""Apply each known privacy-critical mutant to a temporary copy and check that its test kills it.

The mutants are the bugs of issue 24's review (``tools/mutants/*.patch``, one bug each, made with
``git diff``). For every one this script

1. copies ``dpcore/``, ``tests/`` and ``pyproject.toml`` to a temporary directory (once) and checks
   that ``import dpcore`` there loads the copy, not an installed one;
2. runs all the killing tests once on the unpatched copy: they must pass ("on code");
3. applies the patch (``git apply``), runs that mutant's tests: they must fail ("on mutant"); a
   patch that no longer applies is an error too (the code moved: re-make the patch);
4. reverts the patch.

It prints the table and exits 1 if any mutant survives, any test fails on the code, or a patch is
stale. ``tests/test_mutant_guard.py`` (marked ``slow``) runs it; by hand::

    python tools/mutant_guard.py            # all of them
    python tools/mutant_guard.py 07 14      # those whose file name starts with 07 or 14
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
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


def _copy_tree(dest: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", ".pytest_cache")
    for name in ("dpcore", "tests"):
        shutil.copytree(ROOT / name, dest / name, ignore=ignore)
    shutil.copy2(ROOT / "pyproject.toml", dest / "pyproject.toml")


def _pytest(cwd: Path, tests: tuple[str, ...]) -> tuple[int, str]:
    """Run ``tests`` in ``cwd``; (exit code, pytest's summary line). 1 = some test failed."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYTEST_XDIST_WORKER", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-p", "no:xdist",
         "-p", "no:randomly", "--no-header", *tests],
        cwd=cwd, env=env, capture_output=True, text=True)
    last = [ln for ln in proc.stdout.splitlines() if ln.strip()][-1:] or [""]
    return proc.returncode, last[0]


def _git_apply(cwd: Path, patch: Path, *, reverse: bool = False) -> bool:
    args = ["git", "apply", "--unsafe-paths", "--directory", "."]
    args += ["-R"] if reverse else []
    return subprocess.run([*args, str(patch)], cwd=cwd, capture_output=True).returncode == 0


def run(select: list[str] | None = None, *, verbose: bool = True) -> list[dict]:
    """Run the guard; returns one row per mutant (also printed as a table)."""
    mutants = [m for m in MUTANTS if not select or any(m.patch.startswith(s) for s in select)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="dpcore-mutant-guard-") as tmp:
        work = Path(tmp)
        _copy_tree(work)
        where = subprocess.run([sys.executable, "-c", "import dpcore; print(dpcore.__file__)"],
                               cwd=work, capture_output=True, text=True).stdout.strip()
        if not where.startswith(str(work)):
            raise RuntimeError(f"the copy's dpcore is not the one imported ({where})")
        every = tuple(dict.fromkeys(t for m in mutants for t in m.tests))
        t0 = time.monotonic()
        code_rc, code_msg = _pytest(work, every)
        if verbose:
            print(f"on the code: {len(every)} killing tests, {code_msg} "
                  f"({time.monotonic() - t0:.0f} s)", flush=True)
        for m in mutants:
            t0 = time.monotonic()
            patch = PATCHES / f"{m.patch}.patch"
            if not _git_apply(work, patch):
                rows.append({"mutant": m.patch, "what": m.what, "tests": m.tests,
                             "on_code": "pass" if code_rc == 0 else "FAIL",
                             "on_mutant": "STALE PATCH", "ok": False, "s": 0.0})
                continue
            try:
                mut_rc, mut_msg = _pytest(work, m.tests)
            finally:
                if not _git_apply(work, patch, reverse=True):
                    raise RuntimeError(f"could not revert {patch.name}")
            row = {"mutant": m.patch, "what": m.what, "tests": m.tests,
                   "on_code": "pass" if code_rc == 0 else f"FAIL ({code_msg})",
                   "on_mutant": "fail (killed)" if mut_rc == 1 else
                   ("pass (SURVIVED)" if mut_rc == 0 else f"error rc={mut_rc} ({mut_msg})"),
                   "ok": code_rc == 0 and mut_rc == 1, "s": time.monotonic() - t0}
            rows.append(row)
            if verbose:
                print(f"{'ok  ' if row['ok'] else 'BAD '} {m.patch:40s} on code: {row['on_code']};"
                      f" on mutant: {row['on_mutant']} ({row['s']:.0f} s)", flush=True)
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
    rows = run(argv or None)
    bad = [r["mutant"] for r in rows if not r["ok"]]
    print(f"\n{len(rows) - len(bad)}/{len(rows)} mutants killed by their tests"
          + (f"; NOT OK: {', '.join(bad)}" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
