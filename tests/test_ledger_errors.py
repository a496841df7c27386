"""Issue 26's ledger items: a ledger file that cannot be used is one clear message (the CLI: one
line, exit 2; the library: a :class:`LedgerError` with a public reason), never a partial charge.

Cases: not a database, malformed, read-only, a folder in its place, a full disk (SQLite's
SQLITE_FULL and ENOSPC on the chain head), moved away or edited while in use. Each test says the
bug it catches. The app side of the same cases is in tests/test_release_app.py.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3

import pytest

from dpcore.cli import main
from dpcore.core.errors import LedgerError, LedgerIntegrityError
from dpcore.privacy import ledger_file as lf
from dpcore.privacy.guarantees import ApproxDP, PureDP
from dpcore.privacy.ledger import LastingLedger, named_key
from dpcore.privacy.ledger_file import public_reason

KEY = named_key("survey")


def _ledger(d, spends: int = 1) -> LastingLedger:
    led = LastingLedger(KEY, ApproxDP(3.0, 1e-5), directory=d, name="survey")
    for i in range(spends):
        led.spend(f"r{i}", PureDP(0.1))
    return led


def _cli_one_line(d, capsys, *args: str) -> str:
    """Run `dpcore ledger ...` and return its only stderr line (exit 2, no traceback)."""
    capsys.readouterr()
    assert main(["ledger", *args, "--ledger-dir", str(d)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("dpcore: error: ") and "Traceback" not in err
    return err


def _spent_in_file(d) -> int:
    con = sqlite3.connect(d / "ledger.sqlite3")
    try:
        return con.execute("SELECT count(*) FROM entries WHERE kind = 'release'").fetchone()[0]
    finally:
        con.close()


def test_not_a_database(tmp_path, capsys):
    """Bug caught: an arbitrary file in the ledger's place read as 'no ledger yet' (a fresh
    budget) or a raw sqlite3.DatabaseError traceback."""
    _ledger(tmp_path)
    (tmp_path / "ledger.sqlite3").write_bytes(b"name,value\n" * 500)
    with pytest.raises(LedgerError) as exc:
        LastingLedger(KEY, directory=tmp_path).spend("x", PureDP(0.1))
    assert public_reason(exc.value) == "its file is not a ledger or is damaged"
    assert "not a dpcore ledger" in _cli_one_line(tmp_path, capsys, "show")


def test_malformed_pages(tmp_path, capsys):
    """Bug caught: a damaged file (pages overwritten) surfacing as 'database disk image is
    malformed' tracebacks, or its log partly read as a smaller spend."""
    _ledger(tmp_path, spends=20)
    path = tmp_path / "ledger.sqlite3"
    raw = bytearray(path.read_bytes())
    page = 4096
    for p in range(1, len(raw) // page):  # every page after the first: headers garbled
        raw[p * page:p * page + 64] = b"\xff" * 64
    path.write_bytes(bytes(raw))
    with pytest.raises(LedgerError) as exc:
        LastingLedger(KEY, directory=tmp_path).spent()
    assert public_reason(exc.value) in ("its file is not a ledger or is damaged",
                                        "its file was moved, replaced or edited outside dpcore")
    _cli_one_line(tmp_path, capsys, "show")


def test_read_only_file(tmp_path, monkeypatch, capsys):
    """Bug caught: a read-only ledger either spending nothing silently or failing with
    'attempt to write a readonly database' as a traceback; reads must keep working. (Root
    ignores file modes, so the file is opened read-only the way SQLite would.)"""
    led = _ledger(tmp_path)
    real = lf.Store.connect
    monkeypatch.setattr(lf.Store, "connect",
                        lambda self, *, write, create=False: real(self, write=False))
    with pytest.raises(LedgerError) as exc:
        led.spend_many([("a", PureDP(0.1), {}), ("b", PureDP(0.1), {})])
    assert public_reason(exc.value) == "its file is read-only"
    assert len(led) == 1  # reading works; nothing was charged
    err = _cli_one_line(tmp_path, capsys, "grant", "ann", "--dataset", "survey",
                        "--epsilon", "1")
    assert "read-only" in err


def test_a_folder_in_its_place(tmp_path, capsys):
    """Bug caught: a directory named ledger.sqlite3 gave 'disk I/O error' (SQLite's words),
    which sends the curator to look at the disk."""
    (tmp_path / "ledger.sqlite3").mkdir()
    with pytest.raises(LedgerError, match="is a folder") as exc:
        LastingLedger(KEY, ApproxDP(1.0, 1e-6), directory=tmp_path)
    assert public_reason(exc.value) == "a folder is where its file should be"
    assert "is a folder" in _cli_one_line(tmp_path, capsys, "show")
    assert not (tmp_path / "ledger.sqlite3.head").exists()  # nothing half-made beside it


def _full_disk(monkeypatch) -> None:
    """SQLite's own 'database or disk is full' (SQLITE_FULL): the file may not grow."""
    real = lf.Store.connect

    def connect(self, *, write, create=False):
        con = real(self, write=write, create=create)
        pages = con.execute("PRAGMA page_count").fetchone()[0]
        con.execute(f"PRAGMA max_page_count = {max(pages, 1)}")
        return con

    monkeypatch.setattr(lf.Store, "connect", connect)


def test_disk_full_inside_sqlite_charges_nothing(tmp_path, monkeypatch, capsys):
    """Bug caught: SQLITE_FULL rolls the transaction back by itself, and the explicit ROLLBACK
    then failed with 'cannot rollback - no transaction is active', masking the reason; a
    multi-part spend must leave no part recorded."""
    led = _ledger(tmp_path)
    before = _spent_in_file(tmp_path)
    _full_disk(monkeypatch)
    parts = [(f"p{i}", PureDP(0.01), {"note": "x" * 3000}) for i in range(8)]
    with pytest.raises(LedgerError) as exc:
        led.spend_many(parts)
    assert public_reason(exc.value) == "the disk holding it is full"
    assert "cannot rollback" not in str(exc.value)
    monkeypatch.undo()
    assert _spent_in_file(tmp_path) == before  # all or nothing
    led.spend("after", PureDP(0.1))  # the ledger is intact and usable once there is room
    assert len(led) == before + 1


def test_disk_full_for_the_chain_head_charges_nothing(tmp_path, monkeypatch, capsys):
    """Bug caught: the head file written before the commit failing on ENOSPC after the rows
    were inserted, leaving them committed (a charge reported as 'nothing was recorded')."""
    led = _ledger(tmp_path)
    real = lf.Store.write_head

    def write_head(self, head):
        if head.count != head.prev_count:  # the pending head, before the commit
            raise lf._failure(LedgerError, "cannot write the head: [Errno 28] No space left "
                              "on device", lf._os_reason(OSError(errno.ENOSPC, "full")))
        return real(self, head)

    monkeypatch.setattr(lf.Store, "write_head", write_head)
    with pytest.raises(LedgerError) as exc:
        led.spend("x", PureDP(0.5))
    assert public_reason(exc.value) == "the disk holding it is full"
    monkeypatch.undo()
    assert len(led) == 1
    led.spend("after", PureDP(0.1))


def test_a_head_that_cannot_be_finalised_after_the_commit_is_not_an_error(tmp_path,
                                                                         monkeypatch):
    """Bug caught: a full disk just after the commit raised 'nothing was recorded' for a
    release that was recorded (the door would then report a refusal for a charged release)."""
    led = _ledger(tmp_path)
    real = lf.Store.write_head

    def write_head(self, head):
        if head.count == head.prev_count and head.count > 1:  # the final head, after commit
            raise lf._failure(LedgerError, "[Errno 28]", "full")
        return real(self, head)

    monkeypatch.setattr(lf.Store, "write_head", write_head)
    led.spend("x", PureDP(0.5))
    monkeypatch.undo()
    assert len(led) == 2  # recorded, and the pending head is accepted by every reader
    led.verify()


def test_a_new_ledger_whose_first_commit_fails_leaves_nothing_behind(tmp_path, monkeypatch):
    """Bug caught: a full disk at creation left an empty file and a head; every later start
    then refused with 'the file was replaced'."""
    d = tmp_path / "new"
    real = lf.Store.connect

    def connect(self, *, write, create=False):
        con = real(self, write=write, create=create)
        con.execute("PRAGMA max_page_count = 1")
        return con

    monkeypatch.setattr(lf.Store, "connect", connect)
    with pytest.raises(LedgerError, match="full"):
        LastingLedger(KEY, ApproxDP(1.0, 1e-6), directory=d)
    monkeypatch.undo()
    assert not (d / "ledger.sqlite3").exists() and not (d / "ledger.sqlite3.head").exists()
    assert LastingLedger(KEY, ApproxDP(1.0, 1e-6), directory=d).budget == ApproxDP(1.0, 1e-6)


def test_moved_away_while_in_use(tmp_path, capsys):
    """Bug caught: a ledger object that outlives its file (a running server) starting a new,
    empty ledger in its place: a fresh budget."""
    led = _ledger(tmp_path)
    shutil.move(tmp_path / "ledger.sqlite3", tmp_path / "elsewhere.sqlite3")
    with pytest.raises(LedgerIntegrityError) as exc:
        led.spend("x", PureDP(0.1))
    assert public_reason(exc.value) == "its file was moved, replaced or edited outside dpcore"
    assert not (tmp_path / "ledger.sqlite3").exists()  # no empty ledger made in its place
    assert "moved" in _cli_one_line(tmp_path, capsys, "show")


def test_edited_while_in_use(tmp_path, capsys):
    """Bug caught: a spend lowered by hand being read as it now says."""
    led = _ledger(tmp_path, spends=3)
    con = sqlite3.connect(tmp_path / "ledger.sqlite3")
    con.execute("UPDATE entries SET guarantee = ? WHERE label = 'r1'",
                (json.dumps(PureDP(0.0).as_dict()),))
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="edited outside dpcore"):
        led.spend("x", PureDP(0.1))
    assert "edited outside dpcore" in _cli_one_line(tmp_path, capsys, "export", "--dataset",
                                                    "survey")


@pytest.mark.skipif(os.name != "posix", reason="POSIX errno")
def test_os_errors_are_named_by_kind():
    """Bug caught: an unwritable folder reported as 'cannot be used' without the reason."""
    assert lf._os_reason(OSError(errno.EROFS, "ro")) == "readonly"
    assert lf._os_reason(OSError(errno.ENOSPC, "full")) == "full"
    assert lf._os_reason(OSError(errno.EIO, "io")) == "other"
