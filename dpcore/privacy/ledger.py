"""The lasting privacy ledger: one budget per data set, in SQLite, safe under concurrent spends.

A data set is identified by :func:`dataset_key`, a hash of the table's bytes and its public
description (:class:`dpcore.release.schema.PublicDescription`): the same file with the same
description shares one budget across browser reloads, tabs, server restarts and the command line.

Every spend is one ``BEGIN IMMEDIATE`` transaction that re-reads the recorded entries, composes
them with the new ones by :class:`dpcore.privacy.guarantees.PrivacyLedger`'s rules, and inserts them
all or none; two processes spending at the same moment are serialised by SQLite's write lock, so the
total can never exceed the budget.

An entry holds its label, the mechanism, the release's public parameters, its guarantee and the
time; never a seed or any number computed from the data. The key (a hash of the data) is never
shown to an analyst: only the curator's ``dpcore ledger`` commands print it.

The directory is ``$DPCORE_LEDGER_DIR``, the ``--ledger-dir`` flag of the CLI, or by default
``$XDG_DATA_HOME/dpcore/ledger`` (``~/.local/share/dpcore/ledger``).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.privacy.guarantees import (
    BudgetExceededError,
    Guarantee,
    LedgerEntry,
    PrivacyLedger,
    guarantee_from_dict,
)

__all__ = ["LEDGER_DIR_ENV", "LastingLedger", "dataset_key", "default_ledger_dir",
           "list_ledgers", "parse_budget"]

LEDGER_DIR_ENV = "DPCORE_LEDGER_DIR"
_FILE = "ledger.sqlite3"
_SCHEMA = """
CREATE TABLE IF NOT EXISTS budgets (
    key TEXT PRIMARY KEY, name TEXT NOT NULL, budget TEXT NOT NULL, created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL, label TEXT NOT NULL,
    mechanism TEXT, params TEXT NOT NULL, guarantee TEXT NOT NULL, time REAL NOT NULL);
CREATE TABLE IF NOT EXISTS released (
    key TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (key, name));
"""


def default_ledger_dir() -> Path:
    """``$DPCORE_LEDGER_DIR``, else ``$XDG_DATA_HOME/dpcore/ledger`` (``~/.local/share/...``)."""
    env = os.environ.get(LEDGER_DIR_ENV)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "dpcore" / "ledger"


def dataset_key(table: Any, description: Any) -> str:
    """Fingerprint of a table (file bytes, DataFrame or array) and its public description."""
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
    desc = description.to_json(indent=None) if hasattr(description, "to_json") else json.dumps(
        description, sort_keys=True, default=str)
    h.update(b"\0" + desc.encode())
    return h.hexdigest()


def parse_budget(text: str) -> Guarantee:
    """``"2"`` → ε-DP, ``"2,1e-6"`` → (ε, δ)-DP, ``"2,1e-6,0.05"`` → (ε, δ, γ)-random DP."""
    from dpcore.privacy.guarantees import ApproxDP, PureDP, RandomDP

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


def _connect(directory: Path) -> sqlite3.Connection:
    directory.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(directory / _FILE, timeout=60.0, isolation_level=None)
    con.executescript(_SCHEMA)
    return con


@contextlib.contextmanager
def _transaction(directory: Path) -> Iterator[sqlite3.Connection]:
    """One ``BEGIN IMMEDIATE`` transaction: the write lock is taken before anything is read."""
    con = _connect(directory)
    try:
        con.execute("BEGIN IMMEDIATE")
        try:
            yield con
        except BaseException:
            con.execute("ROLLBACK")
            raise
        con.execute("COMMIT")
    finally:
        con.close()


def _entry(row: Sequence[Any]) -> LedgerEntry:
    label, mechanism, params, guarantee, t = row
    p = json.loads(params)
    if mechanism is not None:
        p = {"mechanism": mechanism} | p
    return LedgerEntry(label, guarantee_from_dict(json.loads(guarantee)), p, t)


class LastingLedger:
    """The budget of one data set, kept in SQLite; the :class:`PrivacyLedger` API, read afresh.

    Parameters
    ----------
    key : str
        :func:`dataset_key` of the data set (never shown to analysts).
    budget : Guarantee, optional
        Total budget. Stored on first use; later opens must give the same one (or None, to use
        the stored one). Changing it needs a reset (a curator action).
    directory : path, optional
        Ledger directory (default :func:`default_ledger_dir`).
    name : str
        A public name of the data set for the curator's listing (e.g. the file name).
    """

    def __init__(self, key: str, budget: Guarantee | None = None, *,
                 directory: str | Path | None = None, name: str = "") -> None:
        self.key = str(key)
        self.directory = Path(directory).expanduser() if directory else default_ledger_dir()
        with _transaction(self.directory) as con:
            row = con.execute("SELECT budget FROM budgets WHERE key = ?", (self.key,)).fetchone()
            if row is None:
                if budget is None:
                    raise ValueError("this data set has no ledger yet: give its total budget")
                con.execute("INSERT INTO budgets VALUES (?, ?, ?, ?)",
                            (self.key, name, json.dumps(budget.as_dict()), time.time()))
                stored = budget
            else:
                stored = guarantee_from_dict(json.loads(row[0]))
                if budget is not None and budget != stored:
                    n = con.execute("SELECT COUNT(*) FROM entries WHERE key = ?",
                                    (self.key,)).fetchone()[0]
                    if n:
                        raise ValueError(f"this data set's ledger has the budget {stored}, not "
                                         f"{budget}; only a curator reset can change it")
                    con.execute("UPDATE budgets SET budget = ? WHERE key = ?",
                                (json.dumps(budget.as_dict()), self.key))
                    stored = budget
        self.budget: Guarantee = stored

    # ---- reading -----------------------------------------------------------------------------

    def _rows(self, con: sqlite3.Connection) -> list[LedgerEntry]:
        rows = con.execute("SELECT label, mechanism, params, guarantee, time FROM entries "
                           "WHERE key = ? ORDER BY id", (self.key,)).fetchall()
        return [_entry(r) for r in rows]

    def snapshot(self) -> PrivacyLedger:
        """The recorded releases as a :class:`PrivacyLedger` (a copy; spending on it is local)."""
        con = _connect(self.directory)
        try:
            return PrivacyLedger.from_entries(self.budget, self._rows(con))
        finally:
            con.close()

    @property
    def entries(self) -> list[LedgerEntry]:
        return self.snapshot().entries

    def __len__(self) -> int:
        return len(self.snapshot())

    def total(self) -> Guarantee:
        return self.snapshot().total()

    def remaining(self) -> Guarantee:
        return self.snapshot().remaining()

    def can_spend(self, guarantee: Guarantee) -> bool:
        return self.snapshot().can_spend(guarantee)

    def to_frame(self):
        return self.snapshot().to_frame()

    def to_json(self, indent: int | None = 2) -> str:
        return self.snapshot().to_json(indent)

    # ---- spending ----------------------------------------------------------------------------

    def spend(self, label: str, guarantee: Guarantee, **params: Any) -> LedgerEntry:
        """Record one release or refuse it (:meth:`spend_many` with one part)."""
        return self.spend_many([(label, guarantee, params)])[0]

    def spend_many(self, parts: Sequence[tuple[str, Guarantee, Mapping[str, Any]]]
                   ) -> list[LedgerEntry]:
        """Record several releases as a whole, or none of them.

        Raises
        ------
        BudgetExceededError
            The composed total (recorded entries and all parts) would exceed the budget.
        TypeError
            A part's kind cannot be composed into the budget's type.
        """
        for _, _, params in parts:
            if "seed" in params or "rng" in params:
                raise ValueError("a ledger entry must not hold the release's seed")
        with _transaction(self.directory) as con:
            led = PrivacyLedger.from_entries(self.budget, self._rows(con))
            before = len(led)
            try:
                for label, guarantee, params in parts:
                    led.spend(label, guarantee, **dict(params))
            except BudgetExceededError:
                if len(parts) == 1:
                    raise
                raise BudgetExceededError(
                    f"refused all {len(parts)} parts: together they need more than the "
                    f"{led.remaining()} left of {self.budget}") from None
            new = led.entries[before:]
            now = time.time()
            for e in new:
                p = dict(e.params)
                mechanism = p.pop("mechanism", None)
                con.execute("INSERT INTO entries (key, label, mechanism, params, guarantee, time)"
                            " VALUES (?, ?, ?, ?, ?, ?)",
                            (self.key, e.label, mechanism, json.dumps(p, default=str),
                             json.dumps(e.guarantee.as_dict()), now))
        return new

    # ---- DP outputs that later sessions reuse (e.g. a privately estimated n) -------------------

    def released_value(self, name: str) -> Any:
        con = _connect(self.directory)
        try:
            row = con.execute("SELECT value FROM released WHERE key = ? AND name = ?",
                              (self.key, name)).fetchone()
        finally:
            con.close()
        return None if row is None else json.loads(row[0])

    def spend_and_store(self, label: str, guarantee: Guarantee, name: str, compute,
                        **params: Any) -> Any:
        """Charge ``guarantee`` and store ``compute()`` (a DP output) under ``name``, once.

        In one transaction: if another session already stored ``name``, its value is returned
        and nothing is charged; otherwise the charge is recorded before ``compute`` runs.
        """
        with _transaction(self.directory) as con:
            row = con.execute("SELECT value FROM released WHERE key = ? AND name = ?",
                              (self.key, name)).fetchone()
            if row is not None:
                return json.loads(row[0])
            led = PrivacyLedger.from_entries(self.budget, self._rows(con))
            e = led.spend(label, guarantee, **params)
            con.execute("INSERT INTO entries (key, label, mechanism, params, guarantee, time) "
                        "VALUES (?, ?, ?, ?, ?, ?)",
                        (self.key, e.label, params.get("mechanism"),
                         json.dumps({k: v for k, v in params.items() if k != "mechanism"}),
                         json.dumps(guarantee.as_dict()), time.time()))
            value = compute()
            con.execute("INSERT INTO released VALUES (?, ?, ?)",
                        (self.key, name, json.dumps(value)))
        return value

    # ---- curator actions ---------------------------------------------------------------------

    def reset(self) -> int:
        """Forget every entry of this data set (a curator action); returns how many."""
        with _transaction(self.directory) as con:
            n = con.execute("DELETE FROM entries WHERE key = ?", (self.key,)).rowcount
            con.execute("DELETE FROM released WHERE key = ?", (self.key,))
        return int(n)


def list_ledgers(directory: str | Path | None = None) -> list[dict[str, Any]]:
    """Every data set of a ledger directory: key, name, budget, entries, total, remaining."""
    d = Path(directory).expanduser() if directory else default_ledger_dir()
    if not (d / _FILE).exists():
        return []
    con = _connect(d)
    try:
        rows = con.execute("SELECT key, name FROM budgets ORDER BY created").fetchall()
    finally:
        con.close()
    out = []
    for key, name in rows:
        led = LastingLedger(key, directory=d)
        snap = led.snapshot()
        out.append({"key": key, "name": name, "budget": str(snap.budget), "entries": len(snap),
                    "total": str(snap.total()), "remaining": str(snap.remaining())})
    return out
