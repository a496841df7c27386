"""The lasting ledger's chain verified incrementally (dpcore.privacy.ledger_chain): a process
hashes only rows it has not verified, yet an edit anywhere in the file (an old row, the head, a
row slipped in) is refused at the very next read or spend of a process that had verified the
file before; a spend's cost does not grow with the ledger's length; concurrent processes and a
process killed inside a spend leave a ledger every process still reads right."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import signal
import sqlite3

import pytest
from test_ledger_lasting import _hammer

from dpcore.core.errors import LedgerIntegrityError
from dpcore.privacy import ledger_chain as lc
from dpcore.privacy import ledger_file as lf
from dpcore.privacy.guarantees import ApproxDP, PureDP
from dpcore.privacy.ledger import LastingLedger, adopt


def _ledger(d, spends: int = 4) -> LastingLedger:
    led = LastingLedger("k", ApproxDP(2.0, 1e-6), directory=d)
    for i in range(spends):
        led.spend(f"r{i}", PureDP(0.25), mechanism="dplloyd", epsilon=0.25)
    return led


def _fill(led: LastingLedger, n: int) -> None:
    """n more release rows in one transaction (a long ledger without n composed spends)."""
    with led._store.transaction() as (con, ledger_id, _):
        for i in range(n):
            led._store.append(con, ledger_id, led.key, "release", f"old{i}", {"epsilon": 1e-4},
                              mechanism="dplloyd", guarantee=PureDP(1e-4))


def _sql(d, statement, args=()):
    con = sqlite3.connect(d / "ledger.sqlite3")
    con.execute(statement, args)
    con.commit()
    con.close()


def _bytes_edit(path, old: bytes, new: bytes) -> None:
    """Edit the file's bytes in place, as a hex editor would (no SQLite, no journal)."""
    assert len(old) == len(new)
    data = path.read_bytes()
    assert data.count(old) >= 1
    path.write_bytes(data.replace(old, new, 1))


LOWERED = json.dumps(PureDP(0.0).as_dict())


@pytest.mark.parametrize("how", ["sql", "bytes"])
def test_an_old_row_edited_after_this_process_verified_it_is_refused_at_the_next_spend(
        tmp_path, how):
    """Bug caught: an incremental check that hashes only the rows appended since the
    remembered head (or trusts a file whose SQLite change counter did not move: a byte edit
    moves no counter) and so spends on a lowered old release."""
    led = _ledger(tmp_path)
    assert led.spent().epsilon == pytest.approx(1.0)  # verified and remembered
    if how == "sql":
        _sql(tmp_path, "UPDATE entries SET guarantee = ? WHERE label = 'r0'", (LOWERED,))
    else:  # r0's label, same length: the first release row
        _bytes_edit(tmp_path / "ledger.sqlite3", b"r0", b"q0")
    with pytest.raises(LedgerIntegrityError, match="edited outside dpcore"):
        led.spend("more", PureDP(0.25))
    with pytest.raises(LedgerIntegrityError, match="edited outside dpcore"):
        led.remaining()
    with pytest.raises(LedgerIntegrityError, match="edited outside dpcore"):
        LastingLedger("k", directory=tmp_path)


@pytest.mark.parametrize("statement, match", [
    ("UPDATE entries SET guarantee = ? WHERE id = (SELECT max(id) FROM entries)", "edited"),
    ("UPDATE entries SET params = '{}' WHERE id = (SELECT max(id) FROM entries)", "edited"),
    ("DELETE FROM entries WHERE id = (SELECT max(id) FROM entries)", "older copy or edited"),
    ("INSERT INTO entries (key, kind, label, params, guarantee, time, prev, hash) "
     "SELECT key, kind, 'slipped in', params, ?, time, hash, hash FROM entries "
     "WHERE id = (SELECT max(id) FROM entries)", "edited"),
])
def test_the_head_row_edited_removed_or_followed_by_a_forged_row_is_refused(
        tmp_path, statement, match):
    """Bug caught: the remembered head trusted by its id (its content not compared), a row
    after it trusted because its ``prev`` names the head (its own hash not checked), or a
    shorter log accepted because every remaining row is known."""
    led = _ledger(tmp_path)
    led.remaining()
    _sql(tmp_path, statement, (LOWERED,) if "?" in statement else ())
    with pytest.raises(LedgerIntegrityError, match=match):
        led.spend("more", PureDP(0.25))


def _hashes_per_spend(d, length: int, spends: int = 5) -> int:
    lc.forget()
    led = LastingLedger("k", PureDP(1e6), directory=d)
    _fill(led, length)
    led.remaining()  # this process verifies the file once (every row hashed)
    before = lc.hash_count()
    for i in range(spends):
        led.spend(f"new{i}", PureDP(0.5))
        led.remaining()  # a page's reads between spends
    return lc.hash_count() - before


def test_a_spend_hashes_only_its_own_rows_whatever_the_ledger_length(tmp_path, monkeypatch):
    """Bug caught: every spend re-hashing (or re-parsing) the whole log, so that a server with
    10^4 spends pays for all of them on each one. Counted, not timed: robust under load."""
    short = _hashes_per_spend(tmp_path / "short", 200)
    long = _hashes_per_spend(tmp_path / "long", 2000)
    assert 0 < long == short <= 2 * 5  # its row, once when written and once when read back
    parsed = []
    real = lc.entry_of
    monkeypatch.setattr(lc, "entry_of", lambda r: parsed.append(r[0]) or real(r))
    led = LastingLedger("k", directory=tmp_path / "long")
    led.spend("one more", PureDP(0.5))
    assert len(led) == 2000 + 6
    assert len(parsed) <= 1  # only the new release row is parsed into an entry


def test_a_full_verify_still_hashes_every_row(tmp_path):
    """Bug caught: the curator's ``verify`` answering from this process's memory of the file."""
    led = _ledger(tmp_path, spends=3)
    led.remaining()
    before = lc.hash_count()
    led.verify()
    assert lc.hash_count() - before == len(led.history())


def _other_process_restores_and_spends(d: str, backup: str) -> None:
    shutil.copy(backup, os.path.join(d, "ledger.sqlite3"))
    adopt(d)  # the curator accepts the restored file
    led = LastingLedger("k", directory=d)
    for i in range(8):
        led.spend(f"after restore {i}", PureDP(0.01))


def test_a_memo_is_never_used_for_another_chain_of_the_same_ledger(tmp_path):
    """Bug caught: what the log says memoised by row count alone: after a backup is restored
    and grown past the old length by another process, this process counted the rows of the
    chain it remembered (releases that are no longer in the file)."""
    led = _ledger(tmp_path, spends=1)
    shutil.copy(tmp_path / "ledger.sqlite3", tmp_path / "backup.sqlite3")
    for i in range(1, 6):
        led.spend(f"r{i}", PureDP(0.25))
    assert led.spent().epsilon == pytest.approx(1.5)  # 6 releases remembered
    proc = mp.get_context("fork").Process(target=_other_process_restores_and_spends,
                                          args=(str(tmp_path), str(tmp_path / "backup.sqlite3")))
    proc.start()
    proc.join(60)
    assert proc.exitcode == 0
    assert [e.label for e in led.entries] == ["r0"] + [f"after restore {i}" for i in range(8)]
    assert led.spent().epsilon == pytest.approx(0.25 + 8 * 0.01)




def _killed_inside_a_spend(d: str) -> None:
    """Dies by SIGKILL after its rows are inserted and the pending head written, before the
    commit."""
    real = lf.Store.write_head

    def write_head(self, head):
        real(self, head)
        if head.count != head.prev_count:
            os.kill(os.getpid(), signal.SIGKILL)

    lf.Store.write_head = write_head
    LastingLedger("shared", directory=d).spend("killed", PureDP(0.05))


@pytest.mark.slow
def test_six_processes_and_one_killed_inside_a_spend_leave_a_ledger_every_process_reads(
        tmp_path):
    """Bug caught: a process's remembered rows or memo going stale under other writers (an
    overspend, or a killed spend's uncommitted rows counted)."""
    led = LastingLedger("shared", PureDP(1.0), directory=tmp_path)
    led.remaining()  # the forked workers inherit this process's memory of the file
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    killed = ctx.Process(target=_killed_inside_a_spend, args=(str(tmp_path),))
    killed.start()  # first, while the budget has room: it must die inside its spend
    killed.join(60)
    assert killed.exitcode == -signal.SIGKILL
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), w, q, 10, True)) for w in range(6)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    accepted = sum(q.get(timeout=5) for _ in procs)
    # 60 attempts of 0.05 against ε = 1: exactly 20 fit, whatever the interleaving
    assert accepted == len(led) == 20
    assert "killed" not in [e.label for e in led.entries]
    assert led.spent().epsilon == pytest.approx(1.0)
    led.verify()  # the whole chain, re-hashed
    lc.forget()
    assert len(LastingLedger("shared", directory=tmp_path)) == 20


def test_a_reader_racing_a_writer_past_a_crashed_transactions_head_is_not_an_alarm(
        tmp_path, monkeypatch):
    """Bug caught (found by the test above, in the code before this change too): a reader reads
    the head file a crashed transaction left pending, a writer then commits a different row at
    that count, and the reader called the file 'replaced by an older copy or edited'."""
    led = _ledger(tmp_path, spends=2)
    head_path = tmp_path / "ledger.sqlite3.head"
    head = json.loads(head_path.read_text())
    head_path.write_text(json.dumps(head | {"prev_count": head["count"],
                                            "prev_head": head["head"],
                                            "count": head["count"] + 1, "head": "f" * 64}))
    writer = LastingLedger("k", directory=tmp_path)
    real = lf.Store.connect
    raced = []

    def connect(self, *, write, create=False):
        if not write and not raced:  # between the reader's head read and its read
            raced.append(True)
            writer.spend("meanwhile", PureDP(0.25))
        return real(self, write=write, create=create)

    monkeypatch.setattr(lf.Store, "connect", connect)
    assert led.spent().epsilon == pytest.approx(0.75)
    assert raced
