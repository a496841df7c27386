"""Direct tests of the lasting ledger's functions that only the app and the CLI call (issue 24:
the ledger's "no tests" mutants): ``allowance``, ``analysts``, ``_unallocated``, ``describe``,
both ``adopt``s, ``output_arrays``, ``record_json`` and ``_UnknownPart``. Each test names the
plausible bug it fails on; with it in the ledger's covering list (``tools/mutate.py``), ``make
mutate MUTATE=ledger`` reaches these functions."""

from __future__ import annotations

import json
import math
import sqlite3

import numpy as np
import pytest

from dpcore.core.errors import LedgerError, LedgerIntegrityError
from dpcore.privacy.guarantees import (
    ApproxDP,
    BudgetExceededError,
    PrivacyLedger,
    PureDP,
)
from dpcore.privacy.ledger import LastingLedger
from dpcore.privacy.ledger_chain import entry_of
from dpcore.privacy.ledger_outputs import output_arrays, record_json

KEY = "dataset:t"
BUDGET = ApproxDP(4.0, 1e-6)


def _ledger(d, budget=BUDGET, **kw) -> LastingLedger:
    # basic composition: the spent totals below are plain sums, written out by hand
    return LastingLedger(KEY, budget, directory=d, name="t", accountant="basic", **kw)


def _shares(d) -> LastingLedger:
    """Budget (4, 1e-6); ann 1 (pure, stored as (1, 0)), bob (1.5, 2e-7); ann spends 0.25
    twice, the curator 0.5."""
    led = _ledger(d)
    led.grant("ann", PureDP(1.0))
    led.grant("bob", ApproxDP(1.5, 2e-7))
    ann = led.as_analyst("ann")
    ann.spend("a1", PureDP(0.25))
    ann.spend("a2", PureDP(0.25))
    led.spend("c1", PureDP(0.5))
    return led


def _eps_delta(g) -> tuple[float, float]:
    return g.epsilon, getattr(g, "delta", 0.0)


# ---- allowance: what the app shows as "ε of your share" --------------------------------------


def test_allowance_is_the_analysts_allocation_and_zero_once_revoked(tmp_path):
    """``AnalystShares.allowance``: the curator's is the whole budget, an analyst's their own
    allocation (not another's, not the budget), a revoked analyst's zero in every component.
    Bugs: ``analyst is None`` inverted, the grant looked up under the wrong name, the revoked
    branch returning the budget or a non-zero component (the app would show a share that
    cannot be spent, or compute "spent" from the wrong total)."""
    led = _shares(tmp_path)
    assert led.allowance() == ApproxDP(4.0, 1e-6)
    assert led.as_analyst("ann").allowance() == ApproxDP(1.0, 0.0)
    assert led.as_analyst("bob").allowance() == ApproxDP(1.5, 2e-7)
    ann = led.as_analyst("ann")
    led.revoke("ann")
    zero = ann.allowance()
    assert type(zero) is ApproxDP and _eps_delta(zero) == (0.0, 0.0)
    # the app's "spent" is allowance − remaining: zero for a revoked analyst, never negative
    assert zero.epsilon - ann.remaining().epsilon == 0.0


def test_allowance_of_a_pure_dp_ledger_keeps_its_type(tmp_path):
    """``allowance`` for a revoked analyst on a pure-DP budget: a ``PureDP(0)`` built from the
    budget's own fields. Bug: the ``type`` key not skipped (a TypeError on the ledger page) or
    a δ forced into a pure budget."""
    led = _ledger(tmp_path, PureDP(2.0))
    led.grant("ann", PureDP(0.5))
    ann = led.as_analyst("ann")
    assert ann.allowance() == PureDP(0.5)
    led.revoke("ann")
    assert ann.allowance() == PureDP(0.0)


# ---- analysts and the unallocated rest: the curator's table (CLI `dpcore ledger analysts`) ------


def test_analysts_table_counts_each_share_and_the_unallocated_rest(tmp_path):
    """``AnalystShares.analysts`` and ``_unallocated``: one row per grant and one for the rest;
    allocation, releases, spent and remaining from that analyst's own DP releases. Bugs: a row
    using another analyst's releases or allocation, the unallocated rest not subtracting every
    grant (the curator could spend an analyst's share), a field dropped or renamed."""
    led = _shares(tmp_path)
    rows = led.analysts()
    assert [r["analyst"] for r in rows] == ["ann", "bob", "(unallocated)"]
    assert all(set(r) == {"analyst", "allocation", "releases", "spent", "remaining"}
               for r in rows)
    by = {r["analyst"]: r for r in rows}
    assert by["ann"] == {"analyst": "ann", "allocation": str(ApproxDP(1.0, 0.0)),
                        "releases": 2, "spent": str(ApproxDP(0.5, 0.0)),
                        "remaining": str(ApproxDP(0.5, 0.0))}
    assert by["bob"]["releases"] == 0 and by["bob"]["spent"] == str(ApproxDP(0.0, 0.0))
    assert by["bob"]["remaining"] == by["bob"]["allocation"] == str(ApproxDP(1.5, 2e-7))
    rest = by["(unallocated)"]
    assert rest["allocation"] == str(led._unallocated())
    assert rest["releases"] == 1 and rest["spent"] == str(ApproxDP(0.5, 0.0))
    eps, delta = _eps_delta(led._unallocated())
    assert eps == pytest.approx(4.0 - 1.0 - 1.5) and delta == pytest.approx(1e-6 - 2e-7)


def test_no_grants_no_rows_and_the_whole_dp_budget_unallocated(tmp_path):
    """``analysts`` without grants is empty (the CLI then says every release spends from the
    whole budget; the dashboard keys its analyst mode on it) and ``_unallocated`` is the whole
    DP budget. Bugs: an "(unallocated)" row shown without grants; _unallocated reading the
    grants of another data set or subtracting nothing from the wrong budget."""
    led = _ledger(tmp_path)
    other = LastingLedger("dataset:other", PureDP(9.0), directory=tmp_path, name="o")
    other.grant("zed", PureDP(3.0))  # another data set's grant must not count here
    assert led.analysts() == []
    assert led._unallocated() == ApproxDP(4.0, 1e-6)
    assert led._unallocated({"x": {"allocation": PureDP(1.0).as_dict()}}) == ApproxDP(3.0, 1e-6)


def test_the_curator_spends_only_what_no_analyst_was_given(tmp_path):
    """``_unallocated`` as the curator's cap: with 2.5 of 4 granted, a token-less spend of 1.6
    is refused though the budget has room, and 1.5 is admitted. Bug: the unallocated share
    computed without some grant (an overspend of an analyst's share admitted)."""
    led = _ledger(tmp_path)
    led.grant("ann", PureDP(1.0))
    led.grant("bob", ApproxDP(1.5, 2e-7))
    with pytest.raises(BudgetExceededError, match="unallocated"):
        led.spend("too much", PureDP(1.6))
    assert len(led) == 0
    led.spend("fits", PureDP(1.5))
    assert led.as_analyst("bob").remaining() == ApproxDP(1.5, 2e-7)  # bob's share untouched


# ---- describe: a curator's new public description --------------------------------------------


def test_describe_records_a_change_once_and_the_ledger_then_holds_it(tmp_path):
    """``LastingLedger.describe``: True and a ``describe`` event when the text changes, False
    and nothing recorded when it is the same (in another key order), and a later open with the
    old description is refused. Bugs: the comparison inverted (every describe recorded, or a
    change ignored, so the analysts' bounds stay the old ones), the event's label swapped, the
    description stored for another key."""
    old = {"columns": ["a"], "lower": [-1], "upper": [1]}
    new = {"columns": ["a"], "lower": [-2], "upper": [2]}
    led = _ledger(tmp_path)
    other = LastingLedger("dataset:o", PureDP(1.0), directory=tmp_path, name="o")
    assert led.describe(old) is True
    assert led.describe(dict(reversed(list(old.items())))) is False
    assert led.describe(new) is True
    assert led.description() == new and other.description() is None
    events = [(e["kind"], e["label"]) for e in led.history() if e["kind"] == "describe"]
    assert events == [("describe", "description set"), ("describe", "description changed")]
    assert [e for e in led.history() if e["kind"] == "describe"][-1]["params"] == {
        "description": new}
    with pytest.raises(LedgerError, match="differs"):
        LastingLedger(KEY, directory=tmp_path, description=old)
    assert LastingLedger(KEY, directory=tmp_path, description=new).description() == new


# ---- adopt: the curator accepts the file after a restore ---------------------------------------


def _drop_head(d):
    (d / "ledger.sqlite3.head").unlink()


@pytest.mark.parametrize("which", ["ledger", "ledger_file"])
def test_adopt_verifies_the_chain_writes_a_head_and_records_itself(tmp_path, which):
    """Both ``adopt``s: the rows found are counted, an ``adopt`` event appended and a head
    written so the ledger opens again with its releases and budget. Bugs: the row count off,
    no head (the ledger stays refused), the adopt event missing from the audit trail, the
    default directory used instead of the one given."""
    from dpcore.privacy import ledger as lg
    from dpcore.privacy import ledger_file as lf

    led = _ledger(tmp_path)
    led.spend("r1", PureDP(0.5))
    led.spend("r2", PureDP(0.25))
    n = len(led.history())
    _drop_head(tmp_path)
    with pytest.raises(LedgerIntegrityError, match="head"):
        LastingLedger(KEY, directory=tmp_path)
    found = (lg.adopt if which == "ledger" else lf.adopt)(tmp_path)
    assert found["rows"] == n and isinstance(found["ledger_id"], str) and found["ledger_id"]
    head = json.loads((tmp_path / "ledger.sqlite3.head").read_text())
    assert head["count"] == n + 1 and head["prev_count"] == n + 1
    again = LastingLedger(KEY, directory=tmp_path)
    again.verify()
    assert [e.label for e in again.entries] == ["r1", "r2"]
    assert again.remaining() == ApproxDP(4.0 - 0.75, 1e-6)
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as con:
        kinds = [r[0] for r in con.execute("SELECT kind FROM entries ORDER BY id")]
    assert kinds[-1] == "adopt" and len(kinds) == n + 1


def test_adopt_uses_the_default_directory_when_given_none(tmp_path, monkeypatch):
    """``ledger.adopt(None)``: the default ledger directory ($DPCORE_LEDGER_DIR). Bug: None
    passed on to Path() (a TypeError) or another directory adopted."""
    from dpcore.privacy import ledger as lg

    monkeypatch.setenv(lg.LEDGER_DIR_ENV, str(tmp_path))
    _ledger(tmp_path).spend("r1", PureDP(0.5))
    _drop_head(tmp_path)
    assert lg.adopt(None)["rows"] == 2
    assert len(LastingLedger(KEY)) == 1


def test_adopt_refuses_an_edited_file_and_writes_no_head(tmp_path):
    """``adopt`` verifies every row before accepting: a charge edited by hand (0.5 → 0.01) is
    refused and no head file is written. Bug: adopt skipping or weakening the full
    verification (a tampered, under-charged ledger accepted by the curator's routine command)."""
    from dpcore.privacy import ledger as lg

    led = _ledger(tmp_path)
    led.spend("r1", PureDP(0.5))
    _drop_head(tmp_path)
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as con:
        con.execute("UPDATE entries SET guarantee = ? WHERE kind = 'release'",
                    (json.dumps(PureDP(0.01).as_dict()),))
    with pytest.raises(LedgerIntegrityError):
        lg.adopt(tmp_path)
    assert not (tmp_path / "ledger.sqlite3.head").exists()
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as con:
        assert "adopt" not in [r[0] for r in con.execute("SELECT kind FROM entries")]


# ---- outputs read back: the page reloaded, the CSV export ---------------------------------------


def test_kept_outputs_read_back_as_the_arrays_released(tmp_path):
    """``output_arrays`` on what ``records`` read back: each named output as a float array of
    its shape (NaN and ±inf, kept as JSON strings, back as floats), a ⊥ output (None) and a ⊥
    release (no dict) as None, the right release's output. Bugs: the arrays not converted
    (strings or lists shown), a None turned into nan, outputs of another entry."""
    from types import SimpleNamespace

    led = _ledger(tmp_path)
    centres = np.array([[0.5, -1.25], [np.nan, np.inf]])
    outs = [{"centers": centres, "count": None}, None, {"mean": np.array(-np.inf)}]
    spent = led.spend_many([(f"r{i}", PureDP(0.1), {}) for i in range(3)])
    rels = [SimpleNamespace(label=f"r{i}", guarantee=PureDP(0.1), output=o)
            for i, o in enumerate(outs)]
    assert led.keep_outputs(spent, rels, origin="page")
    back = [output_arrays(r["output"]) for r in led.records()]
    assert back[1] is None
    assert set(back[0]) == {"centers", "count"} and back[0]["count"] is None
    assert back[0]["centers"].dtype == float and back[0]["centers"].shape == (2, 2)
    np.testing.assert_array_equal(back[0]["centers"], centres)
    assert back[2]["mean"].shape == () and back[2]["mean"] == -np.inf
    assert output_arrays(None) is None


def test_record_json_is_the_records_output_as_compact_json(tmp_path):
    """``record_json``: the record's ``output`` (not its label or guarantee), compact (no
    spaces), ⊥ as ``null``. Bugs: another field serialised, the default separators (the CSV
    cell grows), the non-finite strings lost."""
    rec = {"label": "r", "guarantee": "(ε = 1)-DP", "output": {"m": [1.5, "nan"], "c": None}}
    text = record_json(rec)
    assert json.loads(text) == rec["output"] and " " not in text
    assert record_json({"label": "r", "output": None}) == "null"


# ---- a part written by a newer version -----------------------------------------------------------


def test_an_unknown_part_is_kept_verbatim_in_the_export():
    """``_UnknownPart.as_dict``, via ``entry_of`` on a release row whose parts a newer version
    wrote: the entry's export names the part ``unknown`` and keeps its text verbatim, and the
    entry is accounted by basic composition. Bugs: the text dropped or replaced (the curator's
    JSON export loses what was charged), a wrong type tag read back as a known part."""
    parts = json.dumps([{"type": "FutureMechanism", "rho": 0.1}])
    row = (1, KEY, "release", "future", "fm", "{}", json.dumps(PureDP(0.5).as_dict()), parts,
           None, 3.0, "prev", "hash")
    e = entry_of(row)
    assert e.as_dict()["parts"] == [{"type": "unknown", "text": parts}]
    assert e.parts[0].kind == "unknown"
    led = PrivacyLedger.from_entries(ApproxDP(1.0, 1e-6), [e])
    assert led.accounts().refuses_by == "basic"
    assert math.isclose(led.remaining().epsilon, 0.5)
    assert json.loads(led.to_json())["entries"][0]["parts"][0]["text"] == parts


# ---- survivors of the 16:22 run, killed --------------------------------------------------------


def test_reopening_a_ledger_as_it_is_takes_no_write_transaction(tmp_path, monkeypatch):
    """Opening an existing ledger with its own budget and description, or with neither, is a
    read: no write transaction (and so no writers' lock). Kills ``_read_state`` reading the
    state of key None and the ``_needs_write`` mutants (``and`` → ``or`` on the budget or the
    description test, ``is None`` → ``is not None``, a description compared with None) that
    send every open through the write path. Bug: every page load and CLI call queues behind
    the writers' lock (a release in progress stalls every reader); a changed budget or
    description, which needs the write path, still takes it."""
    from dpcore.privacy import ledger_file as lf

    desc = {"columns": ["a"], "lower": [-1], "upper": [1]}
    _ledger(tmp_path, description=desc).spend("r1", PureDP(0.5))
    writes = []
    real = lf.Store.transaction
    monkeypatch.setattr(lf.Store, "transaction",
                        lambda self, **kw: writes.append(kw) or real(self, **kw))
    for kw in ({}, {"description": desc}):
        led = LastingLedger(KEY, BUDGET, directory=tmp_path, name="t", **kw)
        assert led.remaining() == ApproxDP(3.5, 1e-6)
    assert LastingLedger(KEY, directory=tmp_path).description() == desc
    assert writes == []
    with pytest.raises(LedgerError, match="differs"):
        LastingLedger(KEY, directory=tmp_path, description=desc | {"upper": [2]})
    assert len(writes) == 1


def test_an_analysts_share_is_shown_by_the_ledgers_own_accountant(tmp_path):
    """``_analyst_ledger`` and ``_check_share`` compose an analyst's share with the ledger's
    accountant (mutants: the ``accountant=`` argument dropped, so the default 'tight' one). On
    a 'basic' ledger a release of 40 parts of ε = 0.04 spends 1.6 of a (2, 1e-6) share (the
    tight total would be about 1.4). Bugs: the analyst is shown more remaining share than the
    refusals will let them spend (a budget read back wrong); the share check admits 0.5 more
    (an overspend of the share by the ledger's own accounting)."""
    led = _ledger(tmp_path)
    led.grant("ann", ApproxDP(2.0, 1e-6))
    ann = led.as_analyst("ann")
    ann.spend("lloyd", PureDP(1.6), parts=[PureDP(0.04)] * 40)
    assert ann.remaining().epsilon == pytest.approx(0.4)
    row = {r["analyst"]: r for r in led.analysts()}["ann"]
    assert row["remaining"] == str(ann.remaining())
    assert led.share_accounts("ann")["spent"] == str(ApproxDP(1.6, 0.0))
    with pytest.raises(BudgetExceededError, match="analyst 'ann'"):
        ann.spend("more", PureDP(0.5))
