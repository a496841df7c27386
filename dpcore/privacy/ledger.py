"""The lasting privacy ledger: one budget per data set, in SQLite, safe under concurrent spends.

**Which data set.** A curator deployment *names* its data set (``--dataset NAME``): the budget
belongs to that name (:func:`named_key`), whatever the file's bytes: re-encoded, re-ordered,
with rows appended, or described anew, it is the same people's data and the same budget. The
public description is stored with the name; changing it is a curator action
(:meth:`LastingLedger.describe`), recorded in the ledger. Without a name (the dashboard's own
release mode, where the analyst is their own curator), a data set is :func:`dataset_key`, a
hash of the table and its description.

**Spending.** Every spend is one ``BEGIN IMMEDIATE`` transaction that re-reads the recorded
entries, composes them with the new ones by :class:`dpcore.privacy.guarantees.PrivacyLedger`'s
rules (two accounts: DP, with its tight total, and random DP), and inserts them all or none; two
processes spending at the same moment are serialised by SQLite's write lock, so the total can
never exceed the budget. Named analysts (:meth:`LastingLedger.grant`) spend from their own
allocation with a token the curator gave them.

**Integrity.** The ``entries`` table is an append-only log of events (a budget set, a
description, a release, a stored DP output, a reset, a grant): each row holds the SHA-256 of
the previous row and of its own content, so a row edited or deleted by hand breaks the chain.
The chain's head (and the ledger's random id) is also kept outside the SQLite file, in
``ledger.sqlite3.head``: a file moved away (SQLite would silently start an empty one), replaced
by another ledger or by an older copy of itself is noticed. The other tables (budgets,
descriptions, stored outputs, analysts) must agree with what the log says. Any mismatch raises
:class:`~dpcore.core.errors.LedgerIntegrityError` and nothing is read or spent. The head file is
written before each commit, so a crash can leave it one transaction ahead; the last transaction
is then accepted as not having happened (an older copy one transaction behind would pass the
same way). It protects against edits, moves and replacements, not against someone who rewrites
both files consistently (that needs a key kept away from the files).

An entry holds its label, the mechanism, the release's public parameters, its guarantee, its
parts and the time; never a seed or any number computed from the data. The key (a hash of the
data for unnamed data sets) is never shown to an analyst: only the curator's ``dpcore ledger``
commands print it.

The directory is ``$DPCORE_LEDGER_DIR``, the ``--ledger-dir`` flag of the CLI, or by default
``$XDG_DATA_HOME/dpcore/ledger`` (``~/.local/share/dpcore/ledger``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import secrets
import sqlite3
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.core.errors import LedgerError, LedgerIntegrityError
from dpcore.privacy.accountant import FilterPlan
from dpcore.privacy.guarantees import (
    ApproxDP,
    BudgetExceededError,
    Guarantee,
    LedgerEntry,
    Part,
    PrivacyLedger,
    PureDP,
    guarantee_from_dict,
    part_from_dict,
)

__all__ = ["LEDGER_DIR_ENV", "LastingLedger", "LedgerError", "LedgerIntegrityError",
           "dataset_key", "default_ledger_dir", "list_ledgers", "named_key", "parse_budget"]

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
_COLS = "id, key, kind, label, mechanism, params, guarantee, parts, analyst, time, prev, hash"


def default_ledger_dir() -> Path:
    """``$DPCORE_LEDGER_DIR``, else ``$XDG_DATA_HOME/dpcore/ledger`` (``~/.local/share/...``)."""
    env = os.environ.get(LEDGER_DIR_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "dpcore" / "ledger"


def named_key(name: str) -> str:
    """The ledger key of a named data set (its budget belongs to the name, not to bytes)."""
    name = str(name).strip()
    if not name or len(name) > 200 or any(ord(c) < 32 for c in name):
        raise ValueError(f"a data set name must be 1-200 printable characters, got {name!r}")
    return _NAMED + name


def dataset_key(table: Any, description: Any) -> str:
    """Fingerprint of a table (file bytes, DataFrame or array) and its public description.

    The key of an *unnamed* data set: any change of bytes is another data set. A curator
    deployment names its data set instead (:func:`named_key`).
    """
    h = hashlib.blake2b(digest_size=16)
    if isinstance(table, str | Path):
        with open(table, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    elif hasattr(table, "columns"):
        import pandas as pd

        h.update(json.dumps([str(c) for c in table.columns]).encode())
        h.update(pd.util.hash_pandas_object(table, index=False).to_numpy().tobytes())
    else:
        a = np.ascontiguousarray(table)
        h.update(f"{a.shape}{a.dtype.str}".encode())
        h.update(a.tobytes())
    h.update(b"\0" + _description_text(description).encode())
    return h.hexdigest()


def _description_text(description: Any) -> str:
    """Canonical JSON of a public description (a PublicDescription, a dict or JSON text)."""
    if description is None:
        return "null"
    if hasattr(description, "to_json"):
        description = json.loads(description.to_json(indent=None))
    elif isinstance(description, str):
        description = json.loads(description)
    return json.dumps(description, sort_keys=True, default=str)


def parse_budget(text: str) -> Guarantee:
    """``"2"`` → ε-DP, ``"2,1e-6"`` → (ε, δ)-DP, ``"2,1e-6,0.05"`` → (ε, δ, γ)-random DP."""
    from dpcore.privacy.guarantees import RandomDP

    try:
        parts = [float(p) for p in str(text).split(",")]
    except ValueError:
        raise ValueError(f"--budget must be EPS[,DELTA[,GAMMA]], got {text!r}") from None
    if not 1 <= len(parts) <= 3 or not all(math.isfinite(p) for p in parts) or parts[0] <= 0:
        raise ValueError(f"--budget must be EPS[,DELTA[,GAMMA]] with finite EPS > 0, got {text!r}")
    if len(parts) == 1:
        return PureDP(parts[0])
    if len(parts) == 2:
        return ApproxDP(*parts)
    return RandomDP(*parts)


# ---- the file, its chain and its head ------------------------------------------------------------


def _sqlite_error(path: Path, exc: sqlite3.Error) -> LedgerError:
    text = str(exc)
    if "readonly" in text or "read-only" in text:
        return LedgerError(f"the ledger {path} is read-only ({text}): releases cannot be "
                           "recorded, so none are made; make it writable, or give another "
                           f"--ledger-dir / ${LEDGER_DIR_ENV}")
    if "not a database" in text or "malformed" in text or "no such table" in text:
        return LedgerError(f"{path} is not a dpcore ledger or is corrupt ({text}); restore it "
                           "from a backup with its .head file")
    if "unable to open" in text:
        return LedgerError(f"the ledger {path} cannot be opened ({text}): check that the "
                           "folder exists and is writable")
    return LedgerError(f"the ledger {path} cannot be used ({type(exc).__name__}: {text})")


def _row_hash(ledger_id: str, row: Sequence[Any]) -> str:
    """SHA-256 of one log row (every column but the hash itself) and the ledger's id."""
    rid, key, kind, label, mechanism, params, guarantee, parts, analyst, t, prev = row[:11]
    doc = [ledger_id, int(rid), key, kind, label, mechanism, params, guarantee, parts, analyst,
           repr(float(t)), prev]
    return hashlib.sha256(json.dumps(doc, separators=(",", ":")).encode()).hexdigest()


def _genesis(ledger_id: str) -> str:
    return "genesis:" + ledger_id


@dataclass
class _Head:
    ledger_id: str
    count: int
    head: str
    prev_count: int
    prev_head: str


class _Store:
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
        mode = ("rwc" if create else "rw") if write else "ro"
        try:
            con = sqlite3.connect(f"file:{self.path}?mode={mode}", uri=True, timeout=60.0,
                                  isolation_level=None)
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.Error as exc:
            raise _sqlite_error(self.path, exc) from None
        return con

    def read_head(self) -> _Head | None:
        try:
            d = json.loads(self.head_path.read_text())
            return _Head(str(d["ledger_id"]), int(d["count"]), str(d["head"]),
                         int(d["prev_count"]), str(d["prev_head"]))
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise LedgerIntegrityError(f"the chain head {self.head_path} cannot be read "
                                       f"({exc}): it was edited or damaged") from None

    def write_head(self, head: _Head) -> None:
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
            raise LedgerError(f"the chain head {self.head_path} cannot be written ({exc}): "
                              "nothing was recorded") from None

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
        rows = con.execute(f"SELECT {_COLS} FROM entries ORDER BY id").fetchall()
        budgets = con.execute("SELECT key, name, budget FROM budgets ORDER BY created").fetchall()
        if not rows and not budgets:
            return
        con.execute("INSERT INTO meta VALUES ('adopted', ?)", (repr(time.time()),))
        prev = _genesis(ledger_id)
        for r in rows:
            sealed = (*r[:10], prev)
            h = _row_hash(ledger_id, sealed)
            con.execute("UPDATE entries SET kind = COALESCE(kind, 'release'), prev = ?, "
                        "hash = ? WHERE id = ?", (prev, h, r[0]))
            prev = h
        for key, name, budget in budgets:
            self.append(con, ledger_id, key, "budget", "budget (adopted)",
                        {"budget": json.loads(budget), "name": name})

    # ---- the log ----------------------------------------------------------------------------

    def last(self, con: sqlite3.Connection, ledger_id: str) -> tuple[int, str]:
        row = con.execute("SELECT id, hash FROM entries ORDER BY id DESC LIMIT 1").fetchone()
        return (0, _genesis(ledger_id)) if row is None else (int(row[0]), str(row[1]))

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
        row = con.execute(f"SELECT {_COLS} FROM entries WHERE id = ?",
                          (cur.lastrowid,)).fetchone()
        h = _row_hash(ledger_id, row)
        con.execute("UPDATE entries SET hash = ? WHERE id = ?", (h, cur.lastrowid))
        return h

    def verify(self, con: sqlite3.Connection, head: _Head | None, *, write: bool
               ) -> tuple[str, list[tuple]]:
        """Check the chain, the head file and the tables; the ledger id and every log row."""
        row = con.execute("SELECT v FROM meta WHERE k = 'ledger_id'").fetchone()
        if row is None:
            raise LedgerIntegrityError(f"{self.path} has no ledger id: it is not a dpcore "
                                       "ledger of this version (or was edited)")
        ledger_id = str(row[0])
        rows = con.execute(f"SELECT {_COLS} FROM entries ORDER BY id").fetchall()
        prev = _genesis(ledger_id)
        hashes = []
        for i, r in enumerate(rows):
            if r[10] != prev or r[11] != _row_hash(ledger_id, r):
                raise LedgerIntegrityError(
                    f"the ledger {self.path} was edited outside dpcore: log row {i + 1} "
                    f"(id {r[0]}, '{r[3]}') does not match its hash chain. Restore the file from "
                    "a backup; the recorded spend cannot be trusted")
            prev = r[11]
            hashes.append(prev)
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
            return _genesis(ledger_id) if count == 0 else (
                hashes[count - 1] if count <= len(hashes) else "")

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
        budget, desc, stored, grants = {}, {}, {}, {}
        for r in rows:
            key, kind, params = r[1], r[2], json.loads(r[5])
            if kind == "budget":
                budget[key] = json.dumps(params["budget"], sort_keys=True)
            elif kind == "describe":
                desc[key] = _description_text(params["description"])
            elif kind == "store":
                stored[(key, params["name"])] = json.dumps(params["value"])
            elif kind == "reset":
                stored = {k: v for k, v in stored.items() if k[0] != key}
            elif kind == "grant":
                grants[(key, params["name"])] = (params["token"],
                                                 json.dumps(params["allocation"], sort_keys=True))
            elif kind == "revoke":
                grants.pop((key, params["name"]), None)
        table_budget = {k: json.dumps(json.loads(b), sort_keys=True) for k, b in
                        con.execute("SELECT key, budget FROM budgets")}
        table_desc = {k: _description_text(d) for k, d in
                      con.execute("SELECT key, description FROM budgets") if d is not None}
        table_stored = {(k, n): json.dumps(json.loads(v)) for k, n, v in
                        con.execute("SELECT key, name, value FROM released")}
        table_grants = {(k, n): (t, json.dumps(json.loads(a), sort_keys=True)) for k, n, t, a in
                        con.execute("SELECT key, name, token, allocation FROM analysts")}
        for what, log, table in (("budgets", budget, table_budget),
                                 ("descriptions", desc, table_desc),
                                 ("stored outputs", stored, table_stored),
                                 ("analysts", grants, table_grants)):
            if log != table:
                raise LedgerIntegrityError(
                    f"the ledger {self.path} was edited outside dpcore: its {what} do not match "
                    "its log. Restore the file from a backup")

    @contextlib.contextmanager
    def transaction(self, *, create: bool = False) -> Iterator[tuple[sqlite3.Connection, str,
                                                                      list[tuple]]]:
        """One ``BEGIN IMMEDIATE`` transaction on a verified ledger; the head file is moved on
        before the commit. Yields (connection, ledger id, log rows)."""
        new_file = create and not self.path.exists()
        con = self.connect(write=True, create=create)
        try:
            try:
                con.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc) from None
            try:
                head = self.read_head()
                v1 = (con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'meta'")
                      .fetchone()[0] == 0)
                if new_file or v1:
                    if head is not None and not new_file:
                        raise LedgerIntegrityError(
                            f"{self.path} is an old-format ledger but {self.head_path} exists: "
                            "the file was replaced")
                    if new_file and head is not None:
                        raise self._moved()
                    ledger_id = self.init_schema(con)
                    _, last = self.last(con, ledger_id)
                    n = con.execute("SELECT count(*) FROM entries").fetchone()[0]
                    head = _Head(ledger_id, n, last, n, last)
                    self.write_head(head)
                ledger_id, rows = self.verify(con, head, write=True)
                yield con, ledger_id, rows
                n = con.execute("SELECT count(*) FROM entries").fetchone()[0]
                _, last = self.last(con, ledger_id)
                old_n, old_last = len(rows), (rows[-1][11] if rows else _genesis(ledger_id))
                if n != old_n:  # moved on before the commit (a crash leaves it one ahead)
                    self.write_head(_Head(ledger_id, n, last, old_n, old_last))
                elif old_n != head.count:  # the last transaction did not commit: repair
                    self.write_head(_Head(ledger_id, old_n, old_last, old_n, old_last))
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
                raise
            try:
                con.execute("COMMIT")
            except sqlite3.Error as exc:
                raise _sqlite_error(self.path, exc) from None
        except sqlite3.Error as exc:
            raise _sqlite_error(self.path, exc) from None
        finally:
            con.close()

    @contextlib.contextmanager
    def reading(self) -> Iterator[tuple[sqlite3.Connection, str, list[tuple]]]:
        """A verified read (the head file read first: concurrent writers move it ahead)."""
        head = self.read_head()
        con = self.connect(write=False)
        try:
            try:
                con.execute("BEGIN")
                if con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'meta'"
                               ).fetchone()[0] == 0:
                    raise LedgerIntegrityError(
                        f"{self.path} is an old-format ledger: open it once for writing (any "
                        "`dpcore ledger` command) to adopt it")
                ledger_id, rows = self.verify(con, head, write=False)
                yield con, ledger_id, rows
            finally:
                with contextlib.suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
        except sqlite3.Error as exc:
            raise _sqlite_error(self.path, exc) from None
        finally:
            con.close()


# ---- reading the log into entries ---------------------------------------------------------------


def _entry(r: Sequence[Any]) -> LedgerEntry:
    _, _, _, label, mechanism, params, guarantee, parts, analyst, t = r[:10]
    p = json.loads(params)
    if mechanism is not None:
        p = {"mechanism": mechanism} | p
    try:
        ps = tuple(part_from_dict(d) for d in json.loads(parts)) if parts else None
    except (ValueError, TypeError):
        ps = (_UnknownPart(parts),)  # written by a newer version: basic composition only
    return LedgerEntry(label, guarantee_from_dict(json.loads(guarantee)), p, t, ps, analyst)


@dataclass(frozen=True)
class _UnknownPart:
    """A part written by a newer version: the entry is then accounted by basic composition."""

    text: str
    kind = "unknown"

    def as_dict(self) -> dict[str, Any]:
        return {"type": "unknown", "text": self.text}


def _key_state(rows: list[tuple], key: str) -> dict[str, Any]:
    """What the log says about one data set: releases since the last reset, budget, etc."""
    state: dict[str, Any] = {"releases": [], "budget": None, "accountant": None,
                             "description": None, "name": None, "grants": {}}
    for r in rows:
        if r[1] != key:
            continue
        kind, params = r[2], json.loads(r[5])
        if kind == "release":
            state["releases"].append(r)
        elif kind == "reset":
            state["releases"] = []
        elif kind == "budget":
            state["budget"] = params["budget"]
            state["accountant"] = {"accountant": params.get("accountant", "tight"),
                                   "plan": params.get("plan")}
            state["name"] = params.get("name", state["name"])
        elif kind == "describe":
            state["description"] = params["description"]
        elif kind == "grant":
            state["grants"][params["name"]] = params
        elif kind == "revoke":
            state["grants"].pop(params["name"], None)
    return state


def _token_hash(token: str) -> str:
    return hashlib.sha256(str(token).encode()).hexdigest()


class LastingLedger:
    """The budget of one data set, kept in SQLite; the :class:`PrivacyLedger` API, read afresh.

    Parameters
    ----------
    key : str
        :func:`named_key` of a named data set, or :func:`dataset_key` (never shown to analysts).
    budget : Guarantee, optional
        Total budget. Stored on first use; later opens must give the same one (or None, to use
        the stored one). Changing it needs a reset (a curator action).
    directory : path, optional
        Ledger directory (default :func:`default_ledger_dir`).
    name : str
        The data set's name for the curator's listing (the ``--dataset`` name or the file name).
    description : PublicDescription or dict, optional
        The public description. Stored on first use; a different one later is refused
        (:meth:`describe` records a change, a curator action).
    accountant : {"tight", "filter", "basic"}
        How the DP account refuses (:class:`PrivacyLedger`); fixed when the budget is set.
    analyst_token : str, optional
        A token from :meth:`grant`: spends are recorded under that analyst's name and capped by
        their allocation.
    accept_description : bool
        Record a ``description`` that differs from the stored one (the curator starting a
        deployment with a new schema) instead of refusing; ``description_changed`` then says so.
    """

    def __init__(self, key: str, budget: Guarantee | None = None, *,
                 directory: str | Path | None = None, name: str = "",
                 description: Any = None, accountant: str = "tight",
                 analyst_token: str | None = None, accept_description: bool = False) -> None:
        self.key = str(key)
        self.description_changed = False
        self._accept_description = bool(accept_description)
        self.directory = Path(directory).expanduser() if directory else default_ledger_dir()
        self._store = _Store(self.directory)
        create = budget is not None
        if not create and not self._store.exists():
            if self._store.head_path.exists():
                raise self._store._moved()
            raise ValueError("this data set has no ledger yet: give its total budget")
        self.analyst = None
        st = self._read_state() if self._store.exists() else None
        if st is None or self._needs_write(st, budget, description):
            with self._store.transaction(create=create) as (con, ledger_id, rows):
                st = _key_state(rows, self.key)
                self._open(con, ledger_id, st, budget, description, accountant, name)
        stored = guarantee_from_dict(st["budget"])
        if analyst_token is not None:
            th = _token_hash(analyst_token)
            match = [n for n, g in st["grants"].items() if g["token"] == th]
            if not match:
                raise LedgerError("this analyst token is not valid for this data set (ask "
                                  "the curator for one: `dpcore ledger grant`)")
            self.analyst = match[0]
        self.budget: Guarantee = stored
        doc = st["accountant"] or {"accountant": "tight"}
        self.accountant = doc.get("accountant", "tight")
        self.plan = FilterPlan.from_dict(doc["plan"]) if doc.get("plan") else None

    def _read_state(self) -> dict[str, Any] | None:
        """This data set's state from a verified read; None when the file needs a writer
        (an old-format file to adopt)."""
        try:
            with self._store.reading() as (_, _, rows):
                return _key_state(rows, self.key)
        except LedgerIntegrityError as exc:
            if "old-format" in str(exc):
                return None
            raise

    @staticmethod
    def _needs_write(st: dict, budget: Guarantee | None, description: Any) -> bool:
        if st["budget"] is None:
            return True
        if budget is not None and budget != guarantee_from_dict(st["budget"]):
            return True
        return description is not None and (
            st["description"] is None
            or _description_text(st["description"]) != _description_text(description))

    def _open(self, con, ledger_id: str, st: dict, budget: Guarantee | None, description: Any,
              accountant: str, name: str) -> None:
        """Set the budget and description on first use; refuse a changed one (under the lock;
        ``st`` is updated in place)."""
        stored = None if st["budget"] is None else guarantee_from_dict(st["budget"])
        if stored is None:
            if budget is None:
                raise ValueError("this data set has no ledger yet: give its total budget")
            self._set_budget(con, ledger_id, budget, accountant, name, new=True)
            st["budget"], st["accountant"] = budget.as_dict(), self._accountant_doc(
                budget, accountant)
        elif budget is not None and budget != stored:
            if st["releases"]:
                raise ValueError(f"this data set's ledger has the budget {stored}, not "
                                 f"{budget}; only a curator reset can change it")
            self._set_budget(con, ledger_id, budget, accountant, name, new=False)
            st["budget"], st["accountant"] = budget.as_dict(), self._accountant_doc(
                budget, accountant)
        if description is not None:
            text = _description_text(description)
            if st["description"] is None:
                self._record_description(con, ledger_id, text, "description set")
                st["description"] = json.loads(text)
            elif _description_text(st["description"]) != text and self._accept_description:
                self._record_description(con, ledger_id, text, "description changed")
                st["description"] = json.loads(text)
                self.description_changed = True
            elif _description_text(st["description"]) != text:
                raise LedgerError(
                    f"the public description of data set '{self.display_name(st)}' differs "
                    "from the one recorded in its ledger. Changing it is a curator action: "
                    f"`dpcore ledger describe {self.display_name(st)} --schema FILE` "
                    "records the new one (the budget stays)")

    @staticmethod
    def _accountant_doc(budget: Guarantee, accountant: str) -> dict[str, Any]:
        plan = PrivacyLedger(budget, accountant=accountant).plan
        return {"accountant": accountant, "plan": None if plan is None else plan.as_dict()}

    def _set_budget(self, con, ledger_id, budget, accountant, name, *, new: bool) -> None:
        doc = self._accountant_doc(budget, accountant)
        self._store.append(con, ledger_id, self.key, "budget", "budget set",
                           {"budget": budget.as_dict(), "name": name} | doc)
        if new:
            con.execute("INSERT INTO budgets (key, name, budget, created, accountant) "
                        "VALUES (?, ?, ?, ?, ?)",
                        (self.key, name, json.dumps(budget.as_dict()), time.time(),
                         json.dumps(doc)))
        else:
            con.execute("UPDATE budgets SET budget = ?, accountant = ? WHERE key = ?",
                        (json.dumps(budget.as_dict()), json.dumps(doc), self.key))

    def _record_description(self, con, ledger_id, text: str, label: str) -> None:
        self._store.append(con, ledger_id, self.key, "describe", label,
                           {"description": json.loads(text)})
        con.execute("UPDATE budgets SET description = ? WHERE key = ?", (text, self.key))

    def display_name(self, state: dict | None = None) -> str:
        if self.key.startswith(_NAMED):
            return self.key[len(_NAMED):]
        return (state or {}).get("name") or "(unnamed)"

    # ---- reading -----------------------------------------------------------------------------

    def _ledger(self, rows: list[tuple], analyst: str | None = "*") -> PrivacyLedger:
        st = _key_state(rows, self.key)
        entries = [_entry(r) for r in st["releases"]]
        return PrivacyLedger.from_entries(self.budget, entries, accountant=self.accountant,
                                          plan=self.plan)

    def verify(self) -> None:
        """Check the file, its chain and its head; raise LedgerError / LedgerIntegrityError."""
        with self._store.reading():
            pass

    def snapshot(self) -> PrivacyLedger:
        """The recorded releases as a :class:`PrivacyLedger` (a copy; spending on it is local)."""
        with self._store.reading() as (_, _, rows):
            return self._ledger(rows)

    def description(self) -> dict | None:
        """The public description recorded for this data set (or None)."""
        with self._store.reading() as (_, _, rows):
            return _key_state(rows, self.key)["description"]

    def history(self) -> list[dict[str, Any]]:
        """Every event of this data set, oldest first (budget, description, releases, resets,
        grants): the curator's audit trail. Tokens appear only as hashes."""
        with self._store.reading() as (_, _, rows):
            return [{"id": r[0], "kind": r[2], "label": r[3], "params": json.loads(r[5]),
                     "analyst": r[8], "time": r[9]} for r in rows if r[1] == self.key]

    @property
    def entries(self) -> list[LedgerEntry]:
        return self.snapshot().entries

    def __len__(self) -> int:
        return len(self.snapshot())

    def total(self) -> Guarantee:
        return self.snapshot().total()

    def spent(self) -> Guarantee:
        return self.snapshot().spent()

    def accounts(self):
        return self.snapshot().accounts()

    def remaining(self) -> Guarantee:
        """What is left: of the analyst's allocation for a named analyst, else of the budget."""
        snap = self.snapshot()
        if self.analyst is None:
            return snap.remaining()
        grant = self._grants().get(self.analyst)
        if grant is None:
            return type(snap.budget)(**{k: 0.0 for k in snap.budget.as_dict() if k != "type"})
        return self._analyst_ledger(snap.entries, grant).remaining()

    def can_spend(self, guarantee: Guarantee) -> bool:
        return self.snapshot().can_spend(guarantee)

    def to_frame(self):
        return self.snapshot().to_frame()

    def to_json(self, indent: int | None = 2) -> str:
        return self.snapshot().to_json(indent)

    def copy(self) -> PrivacyLedger:
        return self.snapshot()

    # ---- spending ----------------------------------------------------------------------------

    def spend(self, label: str, guarantee: Guarantee, *, parts: Sequence[Part] | None = None,
              **params: Any) -> LedgerEntry:
        """Record one release or refuse it (:meth:`spend_many` with one part)."""
        return self.spend_many([(label, guarantee, params, parts)])[0]

    def spend_many(self, parts: Sequence[tuple]) -> list[LedgerEntry]:
        """Record several releases as a whole, or none of them.

        ``parts``: ``(label, guarantee, params)`` or ``(label, guarantee, params, parts)``
        tuples (the last: what the release is made of, for the tight total).

        Raises
        ------
        BudgetExceededError
            An account (or the analyst's allocation) would be exceeded.
        TypeError
            A part's kind cannot be composed into the budget's type.
        """
        items = [(p[0], p[1], dict(p[2]), p[3] if len(p) > 3 else None) for p in parts]
        for _, _, params, _ in items:
            if "seed" in params or "rng" in params:
                raise ValueError("a ledger entry must not hold the release's seed")
        with self._store.transaction() as (con, ledger_id, rows):
            led = self._ledger(rows)
            before = len(led)
            try:
                for label, guarantee, params, ps in items:
                    led.spend(label, guarantee, parts=ps, **params)
            except BudgetExceededError:
                if len(items) == 1:
                    raise
                raise BudgetExceededError(
                    f"refused all {len(items)} parts: together they need more than the "
                    f"{led.remaining()} left of {self.budget}") from None
            new = led.entries[before:]
            self._check_share(led.entries[:before], new, _key_state(rows, self.key)["grants"])
            now = time.time()
            out = []
            for e in new:
                p = dict(e.params)
                mechanism = p.pop("mechanism", None)
                self._store.append(con, ledger_id, self.key, "release", e.label, p,
                                   mechanism=mechanism, guarantee=e.guarantee, parts=e.parts,
                                   analyst=self.analyst, t=now)
                out.append(LedgerEntry(e.label, e.guarantee, e.params, now, e.parts,
                                       self.analyst))
        return out

    # ---- named analysts ---------------------------------------------------------------------

    def _grants(self) -> dict[str, dict]:
        with self._store.reading() as (_, _, rows):
            return _key_state(rows, self.key)["grants"]

    def _analyst_ledger(self, entries: list[LedgerEntry], grant: dict | None) -> PrivacyLedger:
        """An analyst's share as a ledger: their allocation and their own releases (grant None:
        the unallocated rest of the budget and the releases of no named analyst)."""
        who = None if grant is None else grant["name"]
        mine = [e for e in entries if e.analyst == who and e.account == "dp"]
        if grant is not None:
            allocation = guarantee_from_dict(grant["allocation"])
        else:
            allocation = self._unallocated()
        return PrivacyLedger.from_entries(allocation, mine, accountant=self.accountant)

    def _unallocated(self, grants: dict | None = None) -> Guarantee:
        grants = self._grants() if grants is None else grants
        dp = PrivacyLedger(self.budget).dp_budget
        allocs = [guarantee_from_dict(g["allocation"]) for g in grants.values()]
        return _subtract(dp, allocs)

    def _check_share(self, old: list[LedgerEntry], new: list[LedgerEntry],
                     grants: dict[str, dict]) -> None:
        """With named analysts: each spends from their allocation; everyone else from what is
        not allocated (one analyst cannot spend another's share)."""
        if not grants or not any(e.account == "dp" for e in new):
            return
        grant = grants.get(self.analyst) if self.analyst is not None else None
        if self.analyst is not None and grant is None:
            raise LedgerError(f"analyst '{self.analyst}' no longer has an allocation")
        allocation = (guarantee_from_dict(grant["allocation"]) if grant is not None
                      else self._unallocated(grants))
        share = PrivacyLedger.from_entries(
            allocation, [e for e in old if e.analyst == self.analyst and e.account == "dp"],
            accountant=self.accountant)
        who = f"analyst '{self.analyst}'" if self.analyst else "the unallocated budget"
        for e in new:
            if e.account != "dp":
                continue
            try:
                share.spend(e.label, e.guarantee, parts=e.parts, **e.params)
            except BudgetExceededError:
                raise BudgetExceededError(
                    f"refused '{e.label}': it needs {e.guarantee}, more than the "
                    f"{share.remaining()} left of {who}'s share {allocation}") from None

    def grant(self, name: str, allocation: Guarantee) -> str:
        """Give analyst ``name`` a share of the budget; returns their token (shown once: only
        its hash is kept). A curator action, recorded in the ledger."""
        name = str(name).strip()
        if not name or len(name) > 100 or any(ord(c) < 32 for c in name):
            raise ValueError(f"an analyst name must be 1-100 printable characters, got {name!r}")
        token = "dpa_" + secrets.token_urlsafe(24)
        with self._store.transaction() as (con, ledger_id, rows):
            grants = _key_state(rows, self.key)["grants"]
            if name in grants:
                raise ValueError(f"analyst '{name}' already has a share (revoke it first)")
            dp = PrivacyLedger(self.budget).dp_budget
            if type(allocation) is not type(dp) and not (
                    isinstance(dp, ApproxDP) and isinstance(allocation, PureDP)):
                raise TypeError(f"an allocation of this ledger must be {dp.kind}, got {allocation}")
            if isinstance(dp, ApproxDP) and isinstance(allocation, PureDP):
                allocation = ApproxDP(allocation.epsilon, 0.0)
            _subtract(dp, [guarantee_from_dict(g["allocation"]) for g in grants.values()]
                      + [allocation], strict=True)
            params = {"name": name, "allocation": allocation.as_dict(), "token": _token_hash(token)}
            self._store.append(con, ledger_id, self.key, "grant", f"grant to {name}", params)
            con.execute("INSERT INTO analysts VALUES (?, ?, ?, ?, ?)",
                        (self.key, name, params["token"],
                         json.dumps(allocation.as_dict(), sort_keys=True), time.time()))
        return token

    def revoke(self, name: str) -> None:
        """Withdraw an analyst's token (their releases stay recorded and spent)."""
        with self._store.transaction() as (con, ledger_id, rows):
            if name not in _key_state(rows, self.key)["grants"]:
                raise ValueError(f"no analyst '{name}' on this data set")
            self._store.append(con, ledger_id, self.key, "revoke", f"revoke {name}",
                               {"name": name})
            con.execute("DELETE FROM analysts WHERE key = ? AND name = ?", (self.key, name))

    def analysts(self) -> list[dict[str, Any]]:
        """Each named analyst: allocation, spent and remaining (and the unallocated rest)."""
        snap = self.snapshot()
        grants = self._grants()
        out = []
        for name, g in grants.items():
            led = self._analyst_ledger(snap.entries, g)
            out.append({"analyst": name, "allocation": str(led.budget),
                        "releases": len(led), "spent": str(led.spent()),
                        "remaining": str(led.remaining())})
        if grants:
            led = self._analyst_ledger(snap.entries, None)
            out.append({"analyst": "(unallocated)", "allocation": str(led.budget),
                        "releases": len(led), "spent": str(led.spent()),
                        "remaining": str(led.remaining())})
        return out

    # ---- DP outputs that later sessions reuse (e.g. a privately estimated n) -------------------

    def released_value(self, name: str) -> Any:
        with self._store.reading() as (con, _, _):
            row = con.execute("SELECT value FROM released WHERE key = ? AND name = ?",
                              (self.key, name)).fetchone()
        return None if row is None else json.loads(row[0])

    def spend_and_store(self, label: str, guarantee: Guarantee, name: str, compute,
                        **params: Any) -> Any:
        """Charge ``guarantee`` and store ``compute()`` (a DP output) under ``name``, once.

        In one transaction: if another session already stored ``name``, its value is returned
        and nothing is charged; otherwise the charge is recorded before ``compute`` runs.
        """
        with self._store.transaction() as (con, ledger_id, rows):
            row = con.execute("SELECT value FROM released WHERE key = ? AND name = ?",
                              (self.key, name)).fetchone()
            if row is not None:
                return json.loads(row[0])
            led = self._ledger(rows)
            e = led.spend(label, guarantee, **params)
            self._check_share(led.entries[:-1], [e], _key_state(rows, self.key)["grants"])
            p = dict(params)
            mechanism = p.pop("mechanism", None)
            self._store.append(con, ledger_id, self.key, "release", e.label, p,
                               mechanism=mechanism, guarantee=guarantee, analyst=self.analyst)
            value = compute()
            self._store.append(con, ledger_id, self.key, "store", f"stored {name}",
                               {"name": name, "value": value})
            con.execute("INSERT INTO released VALUES (?, ?, ?)",
                        (self.key, name, json.dumps(value)))
        return value

    # ---- curator actions ---------------------------------------------------------------------

    def describe(self, description: Any) -> bool:
        """Record a new public description (a curator action); False if it is unchanged."""
        text = _description_text(description)
        with self._store.transaction() as (con, ledger_id, rows):
            old = _key_state(rows, self.key)["description"]
            if old is not None and _description_text(old) == text:
                return False
            self._record_description(con, ledger_id, text,
                                     "description set" if old is None else "description changed")
        return True

    def reset(self) -> int:
        """Forget every entry of this data set (a curator action, itself recorded); returns how
        many."""
        with self._store.transaction() as (con, ledger_id, rows):
            n = len(_key_state(rows, self.key)["releases"])
            self._store.append(con, ledger_id, self.key, "reset", "reset by the curator",
                               {"forgotten": n})
            con.execute("DELETE FROM released WHERE key = ?", (self.key,))
        return int(n)


def _subtract(budget: Guarantee, allocations: list[Guarantee], *, strict: bool = False
              ) -> Guarantee:
    """``budget`` minus the allocations, component by component (basic arithmetic: shares of a
    budget add); ``strict``: raise when they do not fit."""
    b = {k: v for k, v in budget.as_dict().items() if k != "type"}
    for a in allocations:
        for k, v in a.as_dict().items():
            if k in b:
                b[k] -= v
    if strict and any(v < -1e-12 * max(1.0, abs(v)) for v in b.values()):
        raise BudgetExceededError(f"the analysts' shares would exceed the budget {budget}")
    return type(budget)(**{k: max(v, 0.0) for k, v in b.items()})


def list_ledgers(directory: str | Path | None = None) -> list[dict[str, Any]]:
    """Every data set of a ledger directory: key, name, budget, entries, totals, remaining."""
    d = Path(directory).expanduser() if directory else default_ledger_dir()
    store = _Store(d)
    if not store.exists():
        if store.head_path.exists():
            raise store._moved()
        return []
    with store.reading() as (con, _, _):
        rows = con.execute("SELECT key, name FROM budgets ORDER BY created").fetchall()
    out = []
    for key, name in rows:
        led = LastingLedger(key, directory=d)
        snap = led.snapshot()
        acc = snap.accounts()
        out.append({"key": key, "name": led.display_name({"name": name}) if key.startswith(
                        _NAMED) else name, "named": key.startswith(_NAMED),
                    "budget": str(snap.budget), "entries": len(snap),
                    "total": str(snap.total()), "basic": str(acc.dp_basic),
                    "tight": None if acc.dp_tight is None else str(acc.dp_tight),
                    "spent": str(acc.dp_spent), "refuses_by": acc.refuses_by,
                    "random": None if acc.random is None else str(acc.random),
                    "remaining": str(snap.remaining())})
    return out


def adopt(directory: str | Path | None = None) -> dict[str, Any]:
    """Accept the ledger file as it is now (a curator action after a restore): verify its
    chain, and write a new head file. Returns what was found."""
    d = Path(directory).expanduser() if directory else default_ledger_dir()
    store = _Store(d)
    con = store.connect(write=True)
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            ledger_id = store.init_schema(con)
            rows = con.execute(f"SELECT {_COLS} FROM entries ORDER BY id").fetchall()
            n = len(rows)
            last = rows[-1][11] if rows else _genesis(ledger_id)
            head = _Head(ledger_id, n, last, n, last)
            store.verify(con, head, write=True)
            store.append(con, ledger_id, "", "adopt", "file adopted by the curator",
                         {"rows": n})
            _, new_last = store.last(con, ledger_id)
            store.write_head(_Head(ledger_id, n + 1, new_last, n, last))
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    except sqlite3.Error as exc:
        raise _sqlite_error(store.path, exc) from None
    finally:
        con.close()
    return {"ledger_id": ledger_id, "rows": n}
