"""tools/survivors.py on the ledger's survivors: a mutant no test ran against is never given a
class by a rule, and the ledger's At keys name what they argue (issue 24)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _survivors():
    spec = importlib.util.spec_from_file_location("survivors", ROOT / "tools" / "survivors.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _mutant(short: str, old: str, new: str, status: str) -> dict:
    return {"mutant": f"dpcore.privacy.ledger_file.{short}", "old": old, "new": new,
            "status": status}


def test_a_mutant_the_run_never_checked_is_not_argued_by_a_rule():
    """Bug caught (the stopped run of 16:22): unchecked mutants of ``Store.transaction`` were
    counted as 'sql' (equivalent) because their diff only changed an SQL keyword's case; a
    mutant no test ran against is 'not checked', whatever its diff."""
    sv = _survivors()
    sql = ('con.execute("SELECT id FROM entries WHERE key = ?")',
           'con.execute("select id FROM entries WHERE key = ?")')
    assert sv.classify("ledger", _mutant("xǁStoreǁtransaction__mutmut_27", *sql,
                                         "not checked"))[0] == "not checked"
    assert sv.classify("ledger", _mutant("xǁStoreǁtransaction__mutmut_27", *sql,
                                         "survived"))[0] == "sql"


def test_ledger_arguments_follow_the_diff_not_the_mutant_number():
    """Bug caught: an argument keyed by mutmut's number applied to whatever mutant gets that
    number after the code changes. The At keys match the function and the change: the same
    diff under another number is argued alike, another change of that function is not."""
    sv = _survivors()
    journal = ('for path in (self.path, self.path.with_name(_FILE + "-journal"), '
               'self.head_path):')
    cls, why = sv.classify("ledger", _mutant(
        "xǁStoreǁ_unmake__mutmut_99", journal, journal.replace("-journal", "-JOURNAL"),
        "survived"))
    assert cls == "reviewed" and "journal" in why
    cls, _ = sv.classify("ledger", _mutant(
        "xǁStoreǁ_unmake__mutmut_3", journal, journal.replace("self.head_path", "None"),
        "survived"))
    assert cls == "not triaged"
