"""The lasting ledger's file: SQLite, its hash-chained event log and the chain head beside it.

See :mod:`dpcore.privacy.ledger` (the ledger itself) for what the chain protects against. This
module opens the file (never creating an empty one where a ledger was), verifies the chain, the
head file and the tables on every read and write, and appends events. The chain itself, checked
incrementally (only rows this process has not verified are hashed), and what the log says are
:mod:`dpcore.privacy.ledger_chain`.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from dpcore.core.errors import LedgerError, LedgerIntegrityError
from dpcore.privacy.guarantees import Guarantee, Part
from dpcore.privacy.ledger_chain import (
    COLS,
    description_text,
    entry_of,
    genesis,
    key_state,
    log_tables,
    row_hash,
    verified,
)

__all__ = ["LEDGER_DIR_ENV", "Head", "Store", "adopt", "description_text", "entry_of",
           "key_state", "public_reason", "token_hash"]

LEDGER_DIR_ENV = "DPCORE_LEDGER_DIR"
_FILE = "ledger.sqlite3"
_HEAD = _FILE + ".head"
_NAMED = "dataset:"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS budgets (
    key TEXT PRIMARY KEY, name TEXT NOT NULL, budget TEXT NOT NULL, created REAL NOT NULL,
    description TEXT, accountant TEXT);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, label TEXT NOT NULL,
    mechanism TEXT, params TEXT NOT NULL, guarantee TEXT NOT NULL, time REAL NOT NULL,
    kind TEXT NOT NULL DEFAULT 'release', parts TEXT, analyst TEXT, prev TEXT, hash TEXT);
CREATE TABLE IF NOT EXISTS released (
    key TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, name));
CREATE TABLE IF NOT EXISTS analysts (
    key TEXT NOT NULL, name TEXT NOT NULL, token TEXT NOT NULL, allocation TEXT NOT NULL,
    created REAL NOT NULL, PRIMARY KEY (key, name));
"""
# Columns a version-1 file lacks (it is adopted: see _migrate).
_ADDED = {"budgets": ("description TEXT", "accountant TEXT"),
          "entries": ("kind TEXT NOT NULL DEFAULT 'release'", "parts TEXT", "analyst TEXT",
                      "prev TEXT", "hash TEXT")}


# ---- the file, its chain and its head ------------------------------------------------------------


#: What an analyst may be told about a ledger that cannot be used (no path, nothing about the
#: data): the kind of failure, by :func:`public_reason`.
_REASONS = {"readonly": "its file is read-only", "full": "the disk holding it is full",
            "corrupt": "its file is not a ledger or is damaged",
            "directory": "a folder is where its file should be",
            "integrity": "its file was moved, replaced or edited outside dpcore",
            "locked": "another process holds it locked", "other": "its file cannot be used"}


def _failure(cls: type[LedgerError], text: str, reason: str) -> LedgerError:
    """A ledger error for the curator (``text``, with paths) carrying its public ``reason``."""
    exc = cls(text)
    exc.reason = reason  # type: ignore[attr-defined]
    return exc


def public_reason(exc: BaseException) -> str:
    """The kind of a ledger failure in words an analyst may see (no path, no count)."""
    reason = getattr(exc, "reason", None)
    if reason is None:
        reason = "integrity" if isinstance(exc, LedgerIntegrityError) else "other"
    return _REASONS.get(reason, _REASONS["other"])


def _sqlite_error(path: Path, exc: sqlite3.Error) -> LedgerError:
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return _failure(LedgerError, f"the ledger {path} is read-only ({text}): releases cannot "
                        "be recorded, so none are made; make it writable, or give another "
                        f"--ledger-dir / ${LEDGER_DIR_ENV}", "readonly")
    if "full" in text:  # SQLITE_FULL: SQLite rolled the transaction back itself
        return _failure(LedgerError, f"the disk holding the ledger {path} is full ({text}): "
                        "nothing was recorded; free some space", "full")
    if "not a database" in text or "malformed" in text or "no such table" in text:
        return _failure(LedgerError, f"{path} is not a dpcore ledger or is corrupt ({text}); "
                        "restore it from a backup with its .head file", "corrupt")
    if path.is_dir():
        return _directory_error(path)
    if "unable to open" in text:
        return LedgerError(f"the ledger {path} cannot be opened ({text}): check that the "
                           "folder exists and is writable")
    return LedgerError(f"the ledger {path} cannot be used ({type(exc).__name__}: {text})")


def _os_reason(exc: OSError) -> str:
    return {errno.ENOSPC: "full", errno.EDQUOT: "full", errno.EROFS: "readonly",
            errno.EACCES: "readonly", errno.EPERM: "readonly",
            errno.EISDIR: "directory"}.get(exc.errno or 0, "other")


def _directory_error(path: Path) -> LedgerError:
    return _failure(LedgerError, f"the ledger {path} is a folder, not a ledger file: move it "
                    "away (or give another --ledger-dir)", "directory")


@dataclass
class Head:
    ledger_id: str
    count: int
    head: str
    prev_count: int
    prev_head: str


class Store:
    """The SQLite file and its head file: opening, verifying, appending."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.path = directory / _FILE
        self.head_path = directory / _HEAD

    # ---- opening ---------------------------------------------------------------------------

    def exists(self) -> bool:
        return self.path.exists()

    def _moved(self) -> LedgerIntegrityError:
        return LedgerIntegrityError(
            f"the ledger {self.path} is missing but its chain head {self.head_path} is there: "
            "the file was moved, renamed or deleted. Put it back; a new, empty ledger would "
            "give every data set a fresh budget (to start one on purpose, remove the .head "
            "file too)")

    def connect(self, *, write: bool, create: bool = False) -> sqlite3.Connection:
        if not self.path.exists():
            if self.head_path.exists():
                raise self._moved()
            if not create:
                raise LedgerError(f"no ledger in {self.directory} (no {_FILE})")
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise LedgerError(f"the ledger folder {self.directory} cannot be created "
                                  f"({exc})") from None
        if self.path.is_dir() or self.head_path.is_dir():
            raise _directory_error(self.path if self.path.is_dir() else self.head_path)
        mode = ("rwc" if create else "rw") if write else "ro"
        # quoted: in a URI, '#', '?' and '%xx' of a folder's name would be a fragment, a query
        # and an escape (a folder "x#1" had its ledger in a file "x" beside it)
        address = f"file:{quote(str(self.path))}?mode={mode}"
        try:
            con = sqlite3.connect(address, uri=True, timeout=60.0,
                                  isolation_level=None)
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise _sqlite_error(self.path, exc) from None
        return con

    def read_head(self) -> Head | None:
        try:
            d = json.loads(self.head_path.read_text())
            return Head(str(d["ledger_id"]), int(d["count"]), str(d["head"]),
                         int(d["prev_count"]), str(d["prev_head"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LedgerIntegrityError(f"the chain head {self.head_path} cannot be read "
                                       f"({exc}): it was edited or damaged") from None

    def write_head(self, head: Head) -> None:
        tmp = self.head_path.with_name(self.head_path.name + f".{os.getpid()}.tmp")
        doc = {"ledger_id": head.ledger_id, "count": head.count, "head": head.head,
               "prev_count": head.prev_count, "prev_head": head.prev_head}
        try:
            with open(tmp, "w") as f:
                f.write(json.dumps(doc, indent=1) + "\n")
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.head_path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise _failure(LedgerError, f"the chain head {self.head_path} cannot be written "
                           f"({exc}): nothing was recorded", _os_reason(exc)) from None

    # ---- the schema and adopting a version-1 file -------------------------------------------

    def init_schema(self, con: sqlite3.Connection) -> str:
        """Create or upgrade the tables (inside the caller's write transaction); the id."""
        for stmt in _SCHEMA.strip().split(";"):
            if stmt.strip():
                con.execute(stmt)
        for table, cols in _ADDED.items():
            have = {r[1] for r in con.execute(f"PRAGMA table_info({table})")}
            for col in cols:
                if col.split()[0] not in have:
                    con.execute(f"ALTER TABLE {table} ADD COLUMN {col}")
        row = con.execute("SELECT v FROM meta WHERE k = 'ledger_id'").fetchone()
        if row is not None:
            return str(row[0])
        ledger_id = uuid.uuid4().hex
        con.execute("INSERT INTO meta VALUES ('ledger_id', ?)", (ledger_id,))
        con.execute("INSERT INTO meta VALUES ('version', '2')")
        self._adopt(con, ledger_id)
        return ledger_id

    def _adopt(self, con: sqlite3.Connection, ledger_id: str) -> None:
        """Seal the rows of a version-1 file (no chain yet) into a chain, as they are, and
        record each data set's budget as an event (trust on first use: noted in meta)."""
        rows = con.execute(f"SELECT {COLS} FROM entries ORDER BY id").fetchall()
        budgets = con.execute("SELECT key, name, budget FROM budgets ORDER BY created").fetchall()
        if not rows and not budgets:
            return
        con.execute("INSERT INTO meta VALUES ('adopted', ?)", (repr(time.time()),))
        prev = genesis(ledger_id)
        for r in rows:
            sealed = (*r[:10], prev)
            h = row_hash(ledger_id, sealed)
            con.execute("UPDATE entries SET kind = COALESCE(kind, 'release'), prev = ?, "
                        "hash = ? WHERE id = ?", (prev, h, r[0]))
            prev = h
        for key, name, budget in budgets:
            self.append(con, ledger_id, key, "budget", "budget (adopted)",
                        {"budget": json.loads(budget), "name": name})

    # ---- the log ----------------------------------------------------------------------------

    def last(self, con: sqlite3.Connection, ledger_id: str) -> tuple[int, str]:
        row = con.execute("SELECT id, hash FROM entries ORDER BY id DESC LIMIT 1").fetchone()
        return (0, genesis(ledger_id)) if row is None else (int(row[0]), str(row[1]))

    def append(self, con: sqlite3.Connection, ledger_id: str, key: str, kind: str, label: str,
               params: Mapping[str, Any], *, mechanism: str | None = None,
               guarantee: Guarantee | None = None, parts: Sequence[Part] | None = None,
               analyst: str | None = None, t: float | None = None) -> str:
        _, prev = self.last(con, ledger_id)
        t = time.time() if t is None else float(t)
        cur = con.execute(
            "INSERT INTO entries (key, kind, label, mechanism, params, guarantee, parts, "
            "analyst, time, prev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, kind, label, mechanism, json.dumps(dict(params), default=str, sort_keys=True),
             json.dumps(guarantee.as_dict() if guarantee is not None else None),
             None if not parts else json.dumps([p.as_dict() for p in parts]), analyst, t, prev))
        row = con.execute(f"SELECT {COLS} FROM entries WHERE id = ?",
                          (cur.lastrowid,)).fetchone()
        h = row_hash(ledger_id, row)
        con.execute("UPDATE entries SET hash = ? WHERE id = ?", (h, cur.lastrowid))
        return h

    def verify(self, con: sqlite3.Connection, head: Head | None, *, write: bool,
               full: bool = False) -> tuple[str, list[tuple]]:
        """Check the chain (:func:`~dpcore.privacy.ledger_chain.verified`; ``full``: re-hash
        every row), the head file and the tables; the ledger id and every log row."""
        row = con.execute("SELECT v FROM meta WHERE k = 'ledger_id'").fetchone()
        if row is None:
            raise LedgerIntegrityError(f"{self.path} has no ledger id: it is not a dpcore "
                                       "ledger of this version (or was edited)")
        ledger_id = str(row[0])
        rows = verified(con, ledger_id, self.path, full=full)
        if head is None:
            raise LedgerIntegrityError(
                f"the chain head {self.head_path} is missing: the ledger file was copied or "
                "moved without it, or it was deleted. The ledger refuses to start; as curator, "
                "`dpcore ledger verify --adopt` accepts the file as it is")
        if head.ledger_id != ledger_id:
            raise LedgerIntegrityError(
                f"the ledger {self.path} was replaced by another ledger (its id is not the one "
                f"in {self.head_path}). Put the right file back")

        def at(count: int) -> str:
            return genesis(ledger_id) if count == 0 else (
                rows[count - 1][11] if count <= len(rows) else "")

        n = len(rows)
        ok = (n >= head.prev_count and at(head.prev_count) == head.prev_head
              and (n < head.count or at(head.count) == head.head))
        if write:  # the writer holds the lock: the file is exactly at the head (or just before)
            ok = ok and n in (head.count, head.prev_count)
        if not ok:
            raise LedgerIntegrityError(
                f"the ledger {self.path} does not continue the chain recorded in "
                f"{self.head_path} ({n} log rows, the head says {head.count}): it was replaced "
                "by an older copy or edited. The ledger refuses to start")
        self._check_tables(con, rows)
        return ledger_id, rows

    def _check_tables(self, con: sqlite3.Connection, rows: list[tuple]) -> None:
        """budgets, released and analysts must say what the log says."""
        log = log_tables(rows)
        table_budget = {k: json.dumps(json.loads(b), sort_keys=True) for k, b in
                        con.execute("SELECT key, budget FROM budgets")}
        table_desc = {k: description_text(d) for k, d in
                      con.execute("SELECT key, description FROM budgets") if d is not None}
        table_stored = {(k, n): json.dumps(json.loads(v), sort_keys=True) for k, n, v in
                        con.execute("SELECT key, name, value FROM released")}
        table_grants = {(k, n): (t, json.dumps(json.loads(a), sort_keys=True)) for k, n, t, a in
                        con.execute("SELECT key, name, token, allocation FROM analysts")}
        for what, table in (("budgets", table_budget), ("descriptions", table_desc),
                            ("stored outputs", table_stored), ("analysts", table_grants)):
            if log[what] != table:
                raise LedgerIntegrityError(
                    f"the ledger {self.path} was edited outside dpcore: its {what} do not match "
                    "its log. Restore the file from a backup")

    @contextlib.contextmanager
    def transaction(self, *, create: bool = False) -> Iterator[tuple[sqlite3.Connection, str,
                                                                      list[tuple]]]:
        """One ``BEGIN IMMEDIATE`` transaction on a verified ledger; the head file is moved on
        before the commit. Yields (connection, ledger id, log rows)."""
        new_file = create and not self.path.exists() and not self.head_path.exists()
        con = self.connect(write=True, create=create)
        lock, committed, made_here = None, False, False
        try:
            lock = self._lock()  # writers in turn, until the head file is final
            try:
                con.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc) from None
            try:
                head = self.read_head()
                v1 = (con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'meta'")
                      .fetchone()[0] == 0)
                # decided under the lock: another process may have made the file meanwhile
                empty = v1 and con.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0
                if v1:
                    if head is not None and not empty:
                        raise LedgerIntegrityError(
                            f"{self.path} is an old-format ledger but {self.head_path} exists: "
                            "the file was replaced")
                    if head is not None:
                        raise self._moved()
                    made_here = new_file and empty
                    ledger_id = self.init_schema(con)
                    _, last = self.last(con, ledger_id)
                    n = con.execute("SELECT count(*) FROM entries").fetchone()[0]
                    head = Head(ledger_id, n, last, n, last)
                    self.write_head(head)
                ledger_id, rows = self.verify(con, head, write=True)
                yield con, ledger_id, rows
                n = con.execute("SELECT count(*) FROM entries").fetchone()[0]
                _, last = self.last(con, ledger_id)
                old_n, old_last = len(rows), (rows[-1][11] if rows else genesis(ledger_id))
                after: Head | None = None
                if n != old_n:  # pending until the commit: a crash leaves it one ahead
                    self.write_head(Head(ledger_id, n, last, old_n, old_last))
                    after = Head(ledger_id, n, last, n, last)
                elif (head.count, head.prev_count) != (old_n, old_n):  # a crash last time
                    after = Head(ledger_id, old_n, old_last, old_n, old_last)
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
                raise
            try:
                con.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc) from None
            committed = True
            if after is not None:  # committed: the head is no longer pending (a pending head
                # that stays, e.g. on a full disk, is accepted by every reader: nothing to undo)
                with contextlib.suppress(LedgerError):
                    self.write_head(after)
        except sqlite3.Error as exc:
            raise _sqlite_error(self.path, exc) from None
        finally:
            con.close()
            if made_here and not committed:  # never leave a half-made ledger (an empty file
                self._unmake()                # and a head) that the next start calls "replaced"
            if lock is not None:
                lock.close()  # releases the flock

    def _unmake(self) -> None:
        """Remove a new ledger whose first transaction did not commit."""
        for path in (self.path, self.path.with_name(_FILE + "-journal"), self.head_path):
            with contextlib.suppress(OSError):
                path.unlink()

    def _lock(self, timeout: float = 60.0):
        """An exclusive lock on ``ledger.sqlite3.lock`` for one writer's whole transaction
        (SQLite's lock ends at the commit; the head file is written after it)."""
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: SQLite's lock only
            return None
        try:
            f = open(self.directory / (_FILE + ".lock"), "a+")  # held open
        except OSError as exc:
            raise _failure(LedgerError, f"the ledger folder {self.directory} is read-only or "
                           f"missing ({exc}): releases cannot be recorded, so none are made",
                           _os_reason(exc)) from None
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                return f
            except BlockingIOError:
                if time.monotonic() > deadline:
                    f.close()
                    raise _failure(LedgerError, f"the ledger {self.path} stayed locked for "
                                   f"{timeout:.0f} s by another process", "locked") from None
                time.sleep(0.005)

    @contextlib.contextmanager
    def reading(self, *, full: bool = False
                ) -> Iterator[tuple[sqlite3.Connection, str, list[tuple]]]:
        """A verified read (the head file read first: concurrent writers move it ahead);
        ``full``: re-hash every row.

        A head that no longer matches is reported only if the head file did not change during
        the check: a writer committing meanwhile past a crashed transaction's pending head
        makes the head read first name a row that never was (read again, a few times).
        """
        for attempt in range(5):
            head = self.read_head()
            con = self.connect(write=False)
            try:
                try:
                    con.execute("BEGIN")
                    if con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'meta'"
                                   ).fetchone()[0] == 0:
                        raise LedgerIntegrityError(
                            f"{self.path} is an old-format ledger: open it once for writing "
                            "(any `dpcore ledger` command) to adopt it")
                    try:
                        ledger_id, rows = self.verify(con, head, write=False, full=full)
                    except LedgerIntegrityError:
                        if attempt < 4 and self.read_head() != head:
                            continue
                        raise
                    yield con, ledger_id, rows
                    return
                finally:
                    with contextlib.suppress(sqlite3.Error):
                        con.execute("ROLLBACK")
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc) from None
            finally:
                con.close()


def token_hash(token: str) -> str:
    return hashlib.sha256(str(token).encode()).hexdigest()


def adopt(directory: str | Path) -> dict[str, Any]:
    """Accept the ledger file as it is now (a curator action after a restore): verify its
    chain, and write a new head file. Returns what was found."""
    store = Store(Path(directory).expanduser())
    con = store.connect(write=True)
    lock = store._lock()
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            ledger_id = store.init_schema(con)
            rows = con.execute(f"SELECT {COLS} FROM entries ORDER BY id").fetchall()
            n = len(rows)
            last = rows[-1][11] if rows else genesis(ledger_id)
            head = Head(ledger_id, n, last, n, last)
            store.verify(con, head, write=True, full=True)
            store.append(con, ledger_id, "", "adopt", "file adopted by the curator",
                         {"rows": n})
            _, new_last = store.last(con, ledger_id)
            store.write_head(Head(ledger_id, n + 1, new_last, n, last))
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
        store.write_head(Head(ledger_id, n + 1, new_last, n + 1, new_last))
    except sqlite3.Error as exc:
        raise _sqlite_error(store.path, exc) from None
    finally:
        con.close()
        if lock is not None:
            lock.close()
    return {"ledger_id": ledger_id, "rows": n}

