"""The survivor review's own rules (``tools/survivors.py``, issue 24): a generic rule that calls
a mutant equivalent must not swallow mutants it was not argued for, and a reviewed entry must
keep matching its mutant when mutmut renumbers the function's mutants.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def survivors():
    spec = importlib.util.spec_from_file_location("survivors", ROOT / "tools" / "survivors.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _survivor(mutant: str, old: str, new: str) -> dict:
    return {"mutant": mutant, "status": "survived", "old": old, "new": new}


DOOR = "dpcore.release.door.xǁReleaseDoorǁrelease_many__mutmut_15"
ZIP = "plans = [self._plan(m, p, lab) for (m, p), lab in zip(parts, labels, strict=True)]"


@pytest.mark.parametrize("new", [
    ZIP.replace("strict=True", "strict=False"),
    ZIP.replace("strict=True", "strict=None"),
    ZIP.replace(", strict=True", ", "),  # mutmut drops the last argument, its comma stays
    ZIP.replace(", strict=True", ""),
])
def test_a_zip_strict_argument_weakened_is_the_strict_class(survivors, new):
    """The generic rule still covers what it was argued for (the zipped lengths are equal by
    construction). Catches a narrowing that misses one of mutmut's three forms."""
    assert survivors.classify("door", _survivor(DOOR, ZIP, new))[0] == "strict"


@pytest.mark.parametrize("mutant, old, new", [
    # ledger_analysts: `_subtract(..., strict=True)` (a refusal of an over-allocated share) is
    # a keyword of another function: weakening it is no zip's length check
    ("dpcore.privacy.ledger_analysts.xǁAnalystSharesǁgrant__mutmut_40",
     "+ [allocation], strict=True)", "+ [allocation], strict=False)"),
    ("dpcore.privacy.ledger_analysts.xǁAnalystSharesǁgrant__mutmut_41",
     "+ [allocation], strict=True)", "+ [allocation], )"),
    # a zip that lost a sequence, not its strictness
    (DOOR, ZIP, ZIP.replace("zip(parts, labels, ", "zip(labels, ")),
    # a strict=True inside a call nested in the zip's arguments
    (DOOR, "for a, b in zip(xs, check(ys, strict=True)):",
     "for a, b in zip(xs, check(ys, strict=False)):"),
    # two strict=True on the line: which one changed is not decided by the rule
    (DOOR, "zip(a, b, strict=True), zip(c, d, strict=True)",
     "zip(a, b, strict=False), zip(c, d, strict=True)"),
])
def test_the_strict_rule_does_not_swallow_other_strict_mutations(survivors, mutant, old, new):
    """The old rule ("strict=True" in the old line and not in the new) called every one of these
    equivalent, among them a weakened budget refusal of the analysts' shares. Catches a rule
    that matches on the keyword alone."""
    cls, _ = survivors.classify("ledger-none", _survivor(mutant, old, new))
    assert cls != "strict"


def test_a_multi_line_zip_is_found_in_the_mutated_file(survivors, tmp_path, monkeypatch):
    """A zip call over several lines: the diff line holds no `zip(`, the file does. Catches a
    rule that looks only at the diff line (then every continuation line is missed) or that
    accepts any continuation line (then `_subtract(...,\\n strict=True)` is swallowed)."""
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "mod.py").write_text("def f(a, b):\n    return list(zip(a,\n"
                                "                    b, strict=True))\n"
                                "def g(a, b):\n    return sub(a,\n"
                                "               b, strict=True)\n")
    monkeypatch.setattr(survivors, "ROOT", tmp_path)
    assert survivors._zip_strict_weakened("b, strict=True))", "b, strict=False))",
                                          "pkg.mod.x_f__mutmut_1")
    assert not survivors._zip_strict_weakened("b, strict=True)", "b, strict=False)",
                                              "pkg.mod.x_g__mutmut_1")


def test_an_at_key_follows_its_mutant_across_renumbering(survivors, monkeypatch):
    """An `At(function, diff)` entry classifies the same change whatever mutmut's number for it,
    and only in its function. Catches keys by number (a code change shifts them onto other
    mutants) and a function pattern matched as a prefix (`_check` also matching `_check_x`)."""
    key = survivors.At(r"PrivacyLedger\._check", r"→ .*len\(new\) != 1")
    monkeypatch.setitem(survivors.REVIEWED, "test-only", [(key, "argued")])
    old, new = "if len(new) == 1:", "if len(new) != 1:"
    for n in (7, 46, 301):
        s = _survivor(f"dpcore.privacy.guarantees.xǁPrivacyLedgerǁ_check__mutmut_{n}", old, new)
        assert survivors.classify("test-only", s) == ("reviewed", "argued")
    other = _survivor("dpcore.privacy.guarantees.xǁPrivacyLedgerǁ_check_x__mutmut_7", old, new)
    assert survivors.classify("test-only", other)[0] == "not triaged"
    changed = _survivor("dpcore.privacy.guarantees.xǁPrivacyLedgerǁ_check__mutmut_7", old,
                        "if len(new) == 2:")
    assert survivors.classify("test-only", changed)[0] == "not triaged"
    assert survivors.function_of("x__rootfind_log__mutmut_26") == "_rootfind_log"
    assert survivors.function_of("xǁReleaseDoorǁ_plan__mutmut_3") == "ReleaseDoor._plan"
