"""Tests written from the survivors of the lasting ledger's core (``make mutate MUTATE=ledger
--only=...`` of 2026-11-26 18:12: ``Store.transaction``, ``LastingLedger.__init__`` / ``_open``
/ ``spend_many``, the hash chain's ``verified`` / ``Store.verify`` / ``_check_tables`` and the
log's ``key_state`` / ``log_tables`` / ``folded``, ``append``, ``write_head``, ``_lock``,
``reading``, ``_check_share``), one per plausible bug a survivor stood for. Each docstring
names the function and what the mutation changes; each was checked against its mutant with
mutmut's MUTANT_UNDER_TEST in the run's ``.mutate/ledger/mutants`` copy."""

from __future__ import annotations

import pytest

from dpcore.privacy.guarantees import ApproxDP, PureDP
from dpcore.privacy.ledger import LastingLedger

KEY = "dataset:t"
ROUNDS = [PureDP(0.04)] * 40  # e.g. DP-Lloyd's rounds: the tight total is below the basic 1.6


def _two_chains(tmp_path):
    """main and other: the same ledger (one id), the same length, a different last release
    (main spent 0.5, other 0.01)."""
    import shutil

    main, other = tmp_path / "main", tmp_path / "other"
    LastingLedger(KEY, PureDP(1.0), directory=main, name="t").spend("r1", PureDP(0.25))
    shutil.copytree(main, other)
    LastingLedger(KEY, directory=main).spend("r2", PureDP(0.5))
    LastingLedger(KEY, directory=other).spend("cheap", PureDP(0.01))
    return main, other

def _leave_head_pending(directory) -> dict:
    """The head file as a crash between moving it on and committing leaves it (one
    transaction ahead, naming a commit that never was); returns the head as it was."""
    import json

    head_path = directory / "ledger.sqlite3.head"
    head = json.loads(head_path.read_text())
    head_path.write_text(json.dumps(head | {"prev_count": head["count"],
                                            "prev_head": head["head"],
                                            "count": head["count"] + 1, "head": "f" * 64}))
    return head

def _fail_statement(monkeypatch, statement: str, text: str) -> None:
    """Every ledger connection raises SQLite's ``text`` when it runs ``statement`` (a lock
    held by another program, a disk error)."""
    import sqlite3

    from dpcore.privacy import ledger_file as lf

    real = lf.Store.connect

    class Failing:
        def __init__(self, con):
            self._con = con

        def execute(self, sql, *args):
            if sql == statement:
                raise sqlite3.OperationalError(text)
            return self._con.execute(sql, *args)

        def close(self):
            self._con.close()

    monkeypatch.setattr(lf.Store, "connect", lambda self, **kw: Failing(real(self, **kw)))


def test_spend_many_records_each_releases_parts(tmp_path):
    """``LastingLedger.spend_many``: a release's parts (4-tuples) are checked and recorded
    with it. Mutants: ``len(p) > 3`` → ``> 4`` or ``and False`` (the parts of every tuple
    ignored), ``parts=ps`` → ``parts=None`` or dropped in the check. Bug: the charge recorded
    without its parts, so the tight account overstates what was spent and refuses releases
    the budget allows, and the audit trail loses what the release was made of."""
    led = LastingLedger(KEY, ApproxDP(2.0, 1e-6), directory=tmp_path, name="t")
    led.spend_many([("lloyd", PureDP(1.6), {}, ROUNDS), ("mean", PureDP(0.1), {})])
    again = LastingLedger(KEY, directory=tmp_path)
    assert [len(e.parts or ()) for e in again.entries] == [40, 0]
    acc = again.accounts()
    assert acc.dp_tight is not None and acc.dp_tight.epsilon < acc.dp_basic.epsilon - 0.1
    again.spend("fits only by the tight total", PureDP(0.35))  # basic: 2.05 > 2


def test_spend_many_returns_the_entries_it_recorded(tmp_path):
    """``LastingLedger.spend_many`` returns the entries as recorded (what ``spend`` returns to
    its caller): label, guarantee, params, one time, parts and analyst, one per release.
    Mutants: an entry replaced by None, a field set to None or shifted into the next
    (``LedgerEntry(e.guarantee, e.params, ...)``), the analyst dropped, ``now`` set to None or
    the rows stamped with another time than the entries returned. Bug: the caller is told of
    a charge other than the one recorded (another guarantee, no analyst, no parts)."""
    led = LastingLedger(KEY, ApproxDP(4.0, 1e-6), directory=tmp_path, name="t")
    led.grant("ann", ApproxDP(3.0, 1e-6))
    ann = led.as_analyst("ann")
    spent = ann.spend_many([("lloyd", PureDP(1.6), {"mechanism": "dplloyd", "k": 3}, ROUNDS),
                            ("mean", PureDP(0.25), {"bound": 2.0})])
    recorded = LastingLedger(KEY, directory=tmp_path).entries
    assert list(spent) == recorded and len(spent) == 2
    assert [e.analyst for e in spent] == ["ann", "ann"]
    assert spent[0].timestamp == spent[1].timestamp is not None
    assert ann.spend("one more", PureDP(0.1)) == LastingLedger(KEY, directory=tmp_path).entries[-1]


def test_an_analysts_share_check_does_not_stop_at_a_random_dp_release(tmp_path):
    """``AnalystShares._check_share`` skips random-DP entries and checks every DP one (mutant:
    ``continue`` → ``break``, so the DP releases after a random-DP one in the same spend are
    never checked against the share). Bug: an analyst overspends their share by putting a
    random-DP release first."""
    from dpcore.privacy.guarantees import BudgetExceededError, RandomDP

    led = LastingLedger(KEY, RandomDP(4.0, 1e-6, 0.1), directory=tmp_path, name="t")
    led.grant("ann", ApproxDP(1.0, 1e-7))
    ann = led.as_analyst("ann")
    with pytest.raises(BudgetExceededError, match="analyst 'ann'"):
        ann.spend_many([("rnd", RandomDP(0.1, 1e-8, 0.01), {}), ("big", PureDP(1.5), {})])
    assert len(led) == 0
    ann.spend_many([("rnd", RandomDP(0.1, 1e-8, 0.01), {}), ("fits", PureDP(0.9), {})])
    assert len(led) == 2


def test_an_analysts_release_is_checked_with_its_parts(tmp_path):
    """``_check_share`` checks a release against the analyst's share with its parts (mutant:
    ``parts=e.parts`` → None or dropped: the share sees one atom of ε = 1.6). Forty rounds of
    ε = 0.04 fit a (1.5, 1e-6) share by the tight total (about 1.4), as they fit the same
    budget without analysts. Bug: an analyst is refused releases their share allows."""
    led = LastingLedger(KEY, ApproxDP(4.0, 1e-6), directory=tmp_path, name="t")
    led.grant("ann", ApproxDP(1.5, 1e-6))
    led.as_analyst("ann").spend("lloyd", PureDP(1.6), parts=ROUNDS)
    assert [e.analyst for e in led.entries] == ["ann"]


@pytest.mark.parametrize("change", [False, True])
def test_the_opening_instance_spends_by_the_accountant_it_set(tmp_path, change):
    """``LastingLedger._open`` hands the accountant it records to the instance that set the
    budget (mutants: ``st["accountant"]`` written under another key, on a new ledger or on a
    budget change before any release, so that instance falls back to 'tight'). 'filter' keeps
    10 % of δ for the conversion and refuses a release using all of δ. Bug: the session that
    creates (or re-budgets) a 'filter' ledger admits what its own accountant refuses, an
    overspend by the ledger's declared accounting until the next open."""
    from dpcore.privacy.guarantees import BudgetExceededError

    if change:
        LastingLedger(KEY, ApproxDP(3.0, 1e-6), directory=tmp_path, name="t",
                      accountant="basic")
    led = LastingLedger(KEY, ApproxDP(1.0, 1e-6), directory=tmp_path, name="t",
                        accountant="filter")
    assert led.accountant == "filter" and led.plan is not None
    with pytest.raises(BudgetExceededError):
        led.spend("all of delta", ApproxDP(0.5, 1e-6))
    assert len(led) == 0


def test_a_budget_change_keeps_the_data_sets_name_in_the_log(tmp_path):
    """``_open`` records a budget changed before any release with the data set's name
    (mutant: the name written as None). Bug: the audit trail's budget event drops the name,
    and the log's state then calls the data set '(unnamed)' in the curator's messages
    (``display_name`` of the state ``key_state`` folds from these events)."""
    LastingLedger("0123abcd", ApproxDP(1.0, 1e-6), directory=tmp_path, name="survey.csv")
    led = LastingLedger("0123abcd", ApproxDP(2.0, 1e-6), directory=tmp_path,
                        name="survey.csv")
    budgets = [e for e in led.history() if e["kind"] == "budget"]
    assert [e["params"]["name"] for e in budgets] == ["survey.csv", "survey.csv"]


def test_an_sqlite_failure_while_reading_is_a_ledger_error_naming_the_file(tmp_path,
                                                                          monkeypatch):
    """``Store.reading`` turns an SQLite failure during a read into a LedgerError about its
    file (mutant: ``_sqlite_error(None, exc)``: ``None.is_dir()`` raises AttributeError).
    Bug: a disk error while reading the ledger shows a traceback instead of a clear message
    (and the door's public refusal)."""
    import sqlite3

    from dpcore.core.errors import LedgerError
    from dpcore.privacy import ledger_file as lf

    led = LastingLedger(KEY, ApproxDP(1.0, 1e-6), directory=tmp_path, name="t")

    def broken(self, *a, **kw):
        raise sqlite3.OperationalError("disk I/O error")

    monkeypatch.setattr(lf.Store, "verify", broken)
    with pytest.raises(LedgerError, match=r"ledger\.sqlite3 cannot be used"):
        led.remaining()


@pytest.mark.parametrize("accept", [False, True])
def test_a_budget_change_with_the_same_description_records_no_description_change(tmp_path,
                                                                                  accept):
    """``LastingLedger._open`` when the write path is taken for a budget change (before any
    release) with the description already recorded: nothing about the description is recorded
    or refused (mutants: the stored description read as None in either comparison, so the
    same description is recorded as changed, or refused as different); with
    ``accept_description`` a different one is recorded and ``description_changed`` says so
    (mutants: the flag set to None or False). Bugs: a curator's budget change refused as a
    description change, a spurious 'description changed' event in the audit trail, the
    curator not told the schema the analysts see changed."""
    desc = {"columns": ["a"], "lower": [-1], "upper": [1]}
    LastingLedger(KEY, ApproxDP(1.0, 1e-6), directory=tmp_path, name="t", description=desc)
    led = LastingLedger(KEY, ApproxDP(2.0, 1e-6), directory=tmp_path, name="t",
                        description=desc, accept_description=accept)
    assert led.budget == ApproxDP(2.0, 1e-6) and led.description_changed is False
    assert [e["label"] for e in led.history() if e["kind"] == "describe"] == [
        "description set"]
    if accept:
        new = desc | {"upper": [2]}
        led = LastingLedger(KEY, directory=tmp_path, description=new, accept_description=True)
        assert led.description_changed is True and led.description() == new


@pytest.mark.parametrize("others", [True, False])
@pytest.mark.parametrize("kind", ["dp", "random"])
def test_a_revoked_analyst_is_refused_with_a_message_saying_so(tmp_path, others, kind):
    """``_check_share`` refuses a spend by an analyst revoked since their ledger was opened,
    saying so (mutant: ``LedgerError(None)``, the text 'None'). Bugs: the analyst sees an
    unexplained error; the refusal skipped when the revoked analyst held the last grant (found
    by this campaign: the spend was charged to the whole budget), or for a random-DP release
    (it skipped the share check)."""
    from dpcore.core.errors import LedgerError
    from dpcore.privacy.guarantees import RandomDP

    led = LastingLedger(KEY, RandomDP(4.0, 1e-6, 0.2), directory=tmp_path, name="t")
    led.grant("ann", ApproxDP(1.0, 1e-7))
    if others:
        led.grant("bob", ApproxDP(1.0, 1e-7))
    ann = led.as_analyst("ann")
    led.revoke("ann")
    late = PureDP(0.1) if kind == "dp" else RandomDP(0.1, 0.0, 0.05)
    with pytest.raises(LedgerError, match="analyst 'ann' no longer has an allocation"):
        ann.spend("late", late)
    assert len(led) == 0


def test_a_chain_head_that_cannot_be_written_is_a_clear_ledger_error(tmp_path):
    """``Store.write_head`` when its temporary file cannot be made (a folder in its place):
    a LedgerError saying so, with its public reason, and nothing charged. Mutants: the class
    or the text passed as None or shifted (a TypeError traceback, the text 'None'), the
    reason None or dropped (the analyst told 'cannot be used'), the cleanup's
    ``suppress(OSError)`` → ``suppress(None)`` (the failed unlink escapes as a raw OSError).
    The other tests replace write_head whole, so its own failure path was never run."""
    import os

    from dpcore.core.errors import LedgerError
    from dpcore.privacy.ledger_file import public_reason

    led = LastingLedger(KEY, ApproxDP(1.0, 1e-6), directory=tmp_path, name="t")
    (tmp_path / f"ledger.sqlite3.head.{os.getpid()}.tmp").mkdir()
    with pytest.raises(LedgerError, match=r"chain head .* cannot be written") as exc:
        led.spend("r", PureDP(0.1))
    assert public_reason(exc.value) == "a folder is where its file should be"
    assert len(LastingLedger(KEY, directory=tmp_path)) == 0


def test_a_stored_output_with_unsorted_keys_reads_back(tmp_path):
    """``spend_and_store`` of a DP output that is a dict whose keys are not in sorted order:
    the ledger must open again and read it back. Found from the survivors of ``Store.append``
    that drop ``sort_keys=True``: the log kept the keys sorted, the released table in their own
    order, and the table check compared the two texts, calling the file edited (fixed: both
    compared in one canonical form; the door stores only an int, so no shipped path hit it)."""
    led = LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t")
    assert led.spend_and_store("est", PureDP(0.1), "out", lambda: {"b": 1, "a": 2}) == {
        "b": 1, "a": 2}
    assert LastingLedger(KEY, directory=tmp_path).released_value("out") == {"b": 1, "a": 2}


def test_a_file_without_its_ledger_id_is_refused_saying_so(tmp_path):
    """``Store.verify`` refuses a file whose ledger id was deleted, saying so (mutant:
    ``LedgerIntegrityError(None)``, the text 'None'). Bug: the curator of an edited file is
    told nothing of what is wrong."""
    import sqlite3

    from dpcore.core.errors import LedgerIntegrityError

    LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t")
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as con:
        con.execute("DELETE FROM meta WHERE k = 'ledger_id'")
    with pytest.raises(LedgerIntegrityError, match="has no ledger id"):
        LastingLedger(KEY, directory=tmp_path)


def test_another_chain_in_place_of_a_pending_head_is_refused(tmp_path):
    """``Store.verify`` with a head left pending by a crash (count one transaction ahead of
    the file): the file must still end in the head's ``prev_head``. Mutant: ``n >=
    prev_count and at(prev_count) == prev_head`` → ``or`` (any file long enough passes).
    Attack: after such a crash, the file is swapped for a copy of the same ledger whose last
    release is another, cheaper one (0.5 spent becomes 0.01): the rolled-back ledger would be
    accepted and its budget read back too high."""
    import shutil

    from dpcore.core.errors import LedgerIntegrityError

    main, other = _two_chains(tmp_path)
    _leave_head_pending(main)
    shutil.copy(other / "ledger.sqlite3", main / "ledger.sqlite3")
    with pytest.raises(LedgerIntegrityError, match="does not continue the chain"):
        LastingLedger(KEY, directory=main)


def test_a_writer_refuses_another_chain_of_the_same_length(tmp_path):
    """``Store.verify`` for a writer: the chain check and the length check both hold (mutant:
    ``ok = ok and n in (...)`` → ``or``, so any file of the head's length passes). Attack: a
    session open on the ledger spends after the file was swapped for a copy whose last
    release is cheaper; the spend must be refused, not appended to the rolled-back file."""
    import shutil

    from dpcore.core.errors import LedgerIntegrityError

    main, other = _two_chains(tmp_path)
    led = LastingLedger(KEY, directory=main)
    shutil.copy(other / "ledger.sqlite3", main / "ledger.sqlite3")
    with pytest.raises(LedgerIntegrityError, match="does not continue the chain"):
        led.spend("r3", PureDP(0.1))


def test_a_commit_other_than_the_pending_heads_is_refused(tmp_path):
    """``Store.verify``: a file one transaction past a pending head must end in the head's
    own hash (mutant: ``n < head.count`` → ``<=``, so a file of the head's length is never
    compared with it). A crash left the head naming a commit that never was; a file holding
    some other commit there was not written by this ledger's writers."""
    import shutil

    from dpcore.core.errors import LedgerIntegrityError

    main, other = tmp_path / "main", tmp_path / "other"
    LastingLedger(KEY, PureDP(1.0), directory=main, name="t").spend("r1", PureDP(0.25))
    shutil.copytree(main, other)
    LastingLedger(KEY, directory=other).spend("elsewhere", PureDP(0.01))
    _leave_head_pending(main)
    shutil.copy(other / "ledger.sqlite3", main / "ledger.sqlite3")
    with pytest.raises(LedgerIntegrityError, match="does not continue the chain"):
        LastingLedger(KEY, directory=main)


def test_a_spend_after_the_file_was_deleted_is_refused_not_a_new_ledger(tmp_path):
    """``Store.transaction`` creates a file only when asked (mutant: ``create`` defaults to
    True). Attack or accident: the ledger file and its head are deleted while a session is
    open; its next spend must fail, not start a fresh ledger with the whole budget left."""
    from dpcore.core.errors import LedgerError

    led = LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t")
    led.spend("r1", PureDP(0.9))
    (tmp_path / "ledger.sqlite3").unlink()
    (tmp_path / "ledger.sqlite3.head").unlink()
    with pytest.raises(LedgerError):
        led.spend("r2", PureDP(0.9))
    assert not (tmp_path / "ledger.sqlite3").exists()


@pytest.mark.parametrize("statement", ["BEGIN IMMEDIATE", "COMMIT"])
def test_a_failed_begin_is_a_ledger_error_naming_the_file(tmp_path, monkeypatch, statement):
    """``Store.transaction`` when ``BEGIN IMMEDIATE`` or ``COMMIT`` fails (another program
    holding SQLite's lock past the busy timeout): a LedgerError with the file and SQLite's
    words, and nothing charged (mutants: the path or the error passed as None or dropped: an
    AttributeError or TypeError traceback, or the text 'None')."""
    from dpcore.core.errors import LedgerError

    led = LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t")
    _fail_statement(monkeypatch, statement, "database is locked")
    with pytest.raises(LedgerError, match=r"ledger\.sqlite3 cannot be used .*database is locked"):
        led.spend("r", PureDP(0.1))
    monkeypatch.undo()
    assert len(led) == 0


def test_a_write_that_appends_nothing_repairs_a_pending_head(tmp_path):
    """``Store.transaction``: a write transaction that records nothing (a describe with the
    same description) after a crash left the head pending writes the head back to the file's
    own end (mutants: the repair skipped or its condition inverted, or a field of the new
    head None or shifted: a head the next start cannot read, so the ledger refuses to
    start)."""
    import json

    desc = {"columns": ["a"], "lower": [-1], "upper": [1]}
    led = LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t", description=desc)
    head = _leave_head_pending(tmp_path)
    assert led.describe(desc) is False
    assert json.loads((tmp_path / "ledger.sqlite3.head").read_text()) == head
    assert LastingLedger(KEY, directory=tmp_path).description() == desc


def test_a_writer_refuses_a_file_past_its_head(tmp_path):
    """``Store.transaction`` checks the file as a writer (mutants: ``verify(...,
    write=True)`` → None or False, the reader's check, which lets a file run past the head
    because a writer may be committing). Under the writers' lock a file with rows its head
    never named was written by something else: refused."""
    import shutil

    from dpcore.core.errors import LedgerIntegrityError

    main, other = tmp_path / "main", tmp_path / "other"
    LastingLedger(KEY, PureDP(1.0), directory=main, name="t").spend("r1", PureDP(0.25))
    shutil.copytree(main, other)
    LastingLedger(KEY, directory=other).spend("unknown to main's head", PureDP(0.01))
    led = LastingLedger(KEY, directory=main)
    shutil.copy(other / "ledger.sqlite3", main / "ledger.sqlite3")
    with pytest.raises(LedgerIntegrityError, match="does not continue the chain"):
        led.spend("r2", PureDP(0.1))


def test_a_lock_file_that_cannot_be_opened_is_a_clear_ledger_error(tmp_path):
    """``Store._lock`` when its lock file cannot be opened (a folder in its place): a
    LedgerError that says releases cannot be recorded, with its public reason, and nothing
    charged (mutants: the class or text passed as None or shifted, a TypeError traceback; the
    reason None or dropped, the analyst told 'cannot be used')."""
    from dpcore.core.errors import LedgerError
    from dpcore.privacy.ledger_file import public_reason

    led = LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t")
    (tmp_path / "ledger.sqlite3.lock").unlink(missing_ok=True)
    (tmp_path / "ledger.sqlite3.lock").mkdir()
    with pytest.raises(LedgerError, match="releases cannot be recorded") as exc:
        led.spend("r", PureDP(0.1))
    assert public_reason(exc.value) == "a folder is where its file should be"
    assert len(led) == 0


def test_a_lock_held_past_the_timeout_is_a_clear_ledger_error(tmp_path):
    """``Store._lock`` when another writer holds the lock past the timeout: a LedgerError
    'stayed locked', public reason 'locked', and the lock file closed (mutants on that
    path: the class, text or reason passed as None or shifted, a TypeError traceback or the
    wrong public reason)."""
    from dpcore.core.errors import LedgerError
    from dpcore.privacy.ledger_file import Store, public_reason

    LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t")
    store = Store(tmp_path)
    held = store._lock()
    try:
        with pytest.raises(LedgerError, match="stayed locked for 0 s by another process") as exc:
            store._lock(timeout=0.05)
        assert public_reason(exc.value) == "another process holds it locked"
    finally:
        held.close()
    store._lock().close()  # free again once the holder closed it


def test_a_reset_with_stored_values_leaves_a_ledger_that_opens(tmp_path):
    """``log_tables`` on a reset: the log forgets that data set's stored values, and only
    its own, as the released table does (mutants: 'reset' not among the kinds it reads, the
    filtered dict assigned under another key, the filter on the name or inverted). Bug: after
    a curator's reset of a data set with a stored estimate of n, the log and the table
    disagree and the ledger refuses to start as 'edited outside dpcore'."""
    a = LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t")
    b = LastingLedger("dataset:other", PureDP(1.0), directory=tmp_path, name="other")
    a.spend_and_store("estimate of n", PureDP(0.1), "n", lambda: 300)
    b.spend_and_store("estimate of n", PureDP(0.1), "n", lambda: 500)
    assert a.reset() == 1
    assert LastingLedger(KEY, directory=tmp_path).released_value("n") is None
    assert LastingLedger("dataset:other", directory=tmp_path).released_value("n") == 500


@pytest.mark.parametrize("entries", [0, 2])
def test_an_old_format_file_is_sealed_row_by_row(tmp_path, entries):
    """``Store._adopt`` seals a version-1 file's rows into one chain, each row's ``prev`` the
    hash before it, and records each data set's budget, also for a file with budgets and no
    releases (mutants: ``prev = h`` → None, which breaks the chain at the second row; the
    early return for an empty file taken when only the entries or only the budgets are
    missing). Bug: an old ledger refuses to start after its upgrade, or loses its budget."""
    import sqlite3

    from test_ledger_integrity import V1_SCHEMA

    con = sqlite3.connect(tmp_path / "ledger.sqlite3")
    con.executescript(V1_SCHEMA)
    for i in range(entries):
        con.execute("INSERT INTO entries (key, label, mechanism, params, guarantee, time) "
                    "VALUES ('k', ?, 'dplloyd', '{}', '{\"type\": \"PureDP\", \"epsilon\": 0.3}',"
                    " 2.0)", (f"old {i}",))
    con.commit()
    con.close()
    led = LastingLedger("k", directory=tmp_path)
    assert led.budget == PureDP(1.0) and len(led) == entries
    led.verify()
    assert LastingLedger("k", directory=tmp_path).remaining() == PureDP(1.0 - 0.3 * entries)


def test_a_release_time_edited_by_hand_is_refused(tmp_path):
    """``row_hash`` covers every column of a row, its time too (mutant: the time hashed as
    ``repr(None)``). Bug: the audit trail's times can be rewritten without breaking the
    chain."""
    import sqlite3

    from dpcore.core.errors import LedgerIntegrityError
    from dpcore.privacy.ledger_chain import forget

    LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t").spend("r1", PureDP(0.5))
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as con:
        con.execute("UPDATE entries SET time = time - 86400 WHERE kind = 'release'")
    forget()
    with pytest.raises(LedgerIntegrityError, match="does not match its hash chain"):
        LastingLedger(KEY, directory=tmp_path)


def test_adopt_takes_the_writers_lock_and_reports_sqlite_failures(tmp_path, monkeypatch):
    """``adopt`` (the curator's ``verify --adopt``) writes under the writers' lock, and an
    SQLite failure is a LedgerError naming the file (mutants: ``lock = None``, so adopt
    rewrites the head while a writer is committing; the path or the error passed as None or
    dropped: an AttributeError or TypeError traceback)."""

    from dpcore.core.errors import LedgerError
    from dpcore.privacy import ledger_file as lf

    LastingLedger(KEY, PureDP(1.0), directory=tmp_path, name="t")
    real_lock = lf.Store._lock
    monkeypatch.setattr(lf.Store, "_lock", lambda self, timeout=60.0: real_lock(self, 0.05))
    held = lf.Store(tmp_path)._lock()
    try:
        with pytest.raises(LedgerError, match="stayed locked"):
            lf.adopt(tmp_path)
    finally:
        held.close()

    _fail_statement(monkeypatch, "BEGIN IMMEDIATE", "disk I/O error")
    with pytest.raises(LedgerError, match=r"ledger\.sqlite3 cannot be used .*disk I/O error"):
        lf.adopt(tmp_path)


def test_adopt_in_a_folder_without_a_ledger_creates_nothing(tmp_path):
    """``Store.connect`` creates a file only when asked: the curator's adopt in a folder with
    no ledger is refused and writes nothing (mutant: ``create`` defaulting to True, which made
    a new, empty ledger there and 'adopted' it)."""
    from dpcore.core.errors import LedgerError
    from dpcore.privacy import ledger_file as lf

    with pytest.raises(LedgerError, match="no ledger"):
        lf.adopt(tmp_path)
    assert list(tmp_path.iterdir()) == []
