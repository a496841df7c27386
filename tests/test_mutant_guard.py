"""The catch rate of the known privacy-critical mutants, as a test (issue 24).

``tools/mutant_guard.py`` applies each bug of the review (``tools/mutants/*.patch``) to a temporary
copy of the package and runs the test written to kill it: every test must pass on the code and
fail on its mutant. A refactor that moves the patched lines makes a patch stale, which fails
here too (re-make the patch with ``git diff`` after applying the bug by hand). About 2-4 minutes
on two shared cores (one pytest start per mutant), hence ``slow``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_every_known_mutant_is_killed_by_its_test():
    spec = importlib.util.spec_from_file_location("mutant_guard",
                                                  ROOT / "tools" / "mutant_guard.py")
    guard = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = guard  # its dataclass looks its module up there
    spec.loader.exec_module(guard)
    rows = guard.run(verbose=False)
    assert len(rows) == len(guard.MUTANTS) >= 18
    bad = [f"{r['mutant']}: on code {r['on_code']}, on mutant {r['on_mutant']}"
           for r in rows if not r["ok"]]
    assert not bad, "\n".join(bad)
