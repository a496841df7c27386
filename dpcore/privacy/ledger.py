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

**Released outputs.** After computing, the door appends each release's DP output (public once
released; ⊥ as null) as an ``output`` event naming its release's hash
(:mod:`dpcore.privacy.ledger_outputs`): a reloaded page shows it again and ``dpcore ledger
export`` writes it; a named analyst sees only their own.

**Integrity.** The ``entries`` table is an append-only log of events (a budget set, a
description, a release, a kept output, a stored DP output, a reset, a grant): each row holds
the SHA-256 of the previous row and of its own content, so a row edited or deleted by hand
breaks the chain. Every read and every spend checks every row: a process hashes only the rows
it has not verified before and compares the others, as read back, with its verified copies
(:mod:`dpcore.privacy.ledger_chain`), so an edit anywhere, old row or head, is refused at the
next read or spend of every process, and a spend hashes only its own rows.
The chain's head (and the ledger's random id) is also kept outside the SQLite file, in
``ledger.sqlite3.head``: a file moved away (SQLite would silently start an empty one), replaced
by another ledger or by an older copy of itself is noticed. The other tables (budgets,
descriptions, stored outputs, analysts) must agree with what the log says. Any mismatch raises
:class:`~dpcore.core.errors.LedgerIntegrityError` and nothing is read or spent. The head file is
written before each commit (marked pending) and again after it; only a crash between the two
leaves it pending, and the pending transaction is then accepted as not having happened. It
protects against edits, moves and replacements, not against someone who rewrites both files
consistently (that needs a key kept away from the files).

An entry holds its label, the mechanism, the release's public parameters, its guarantee, its
parts and the time; never a seed or any number computed from the data. The key (a hash of the
data for unnamed data sets) is never shown to an analyst: only the curator's ``dpcore ledger``
commands print it.

The directory is ``$DPCORE_LEDGER_DIR``, the ``--ledger-dir`` flag of the CLI, or by default
``$XDG_DATA_HOME/dpcore/ledger`` (``~/.local/share/dpcore/ledger``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import time
from collections.abc import Sequence
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
)
from dpcore.privacy.ledger_analysts import AnalystShares
from dpcore.privacy.ledger_chain import entries_of
from dpcore.privacy.ledger_file import (
    LEDGER_DIR_ENV,
    Store,
    description_text,
    key_state,
    token_hash,
)
from dpcore.privacy.ledger_file import adopt as _adopt_file
from dpcore.privacy.ledger_outputs import ReleasedOutputs, Spent

__all__ = ["LEDGER_DIR_ENV", "LastingLedger", "LedgerError", "LedgerIntegrityError", "adopt",
           "dataset_key", "default_ledger_dir", "list_ledgers", "named_key", "parse_budget"]

_NAMED = "dataset:"


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
    # the description's text exactly as in 0.1 (PublicDescription.to_json), so every existing
    # ledger keeps its budget (tests/test_survivor_kills.py pins the key)
    desc = description.to_json(indent=None) if hasattr(description, "to_json") else json.dumps(
        description, sort_keys=True, default=str)
    h.update(b"\0" + desc.encode())
    return h.hexdigest()


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



class LastingLedger(AnalystShares, ReleasedOutputs):
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
        self._store = Store(self.directory)
        create = budget is not None
        if not create and not self._store.exists():
            if self._store.head_path.exists():
                raise self._store._moved()
            raise ValueError("this data set has no ledger yet: give its total budget")
        self.analyst = None
        st = self._read_state() if self._store.exists() else None
        if st is None or self._needs_write(st, budget, description):
            with self._store.transaction(create=create) as (con, ledger_id, rows):
                st = key_state(rows, self.key)
                self._open(con, ledger_id, st, budget, description, accountant, name)
        stored = guarantee_from_dict(st["budget"])
        if analyst_token is not None:
            th = token_hash(analyst_token)
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
                return key_state(rows, self.key)
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
            or description_text(st["description"]) != description_text(description))

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
            text = description_text(description)
            if st["description"] is None:
                self._record_description(con, ledger_id, text, "description set")
                st["description"] = json.loads(text)
            elif description_text(st["description"]) != text and self._accept_description:
                self._record_description(con, ledger_id, text, "description changed")
                st["description"] = json.loads(text)
                self.description_changed = True
            elif description_text(st["description"]) != text:
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
        return PrivacyLedger.from_entries(self.budget, entries_of(rows, self.key),
                                          accountant=self.accountant,
                                          plan=self.plan)

    def verify(self) -> None:
        """Check the file, its whole chain (every row re-hashed) and its head; raise LedgerError
        / LedgerIntegrityError."""
        with self._store.reading(full=True):
            pass

    def snapshot(self) -> PrivacyLedger:
        """The recorded releases as a :class:`PrivacyLedger` (a copy; spending on it is local)."""
        with self._store.reading() as (_, _, rows):
            return self._ledger(rows)

    def description(self) -> dict | None:
        """The public description recorded for this data set (or None)."""
        with self._store.reading() as (_, _, rows):
            return key_state(rows, self.key)["description"]

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

    def spend_many(self, parts: Sequence[tuple]) -> Spent:
        """Record several releases as a whole, or none of them (the entries, with the hashes
        of their log rows for :meth:`keep_outputs`).

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
            self._check_share(led.entries[:before], new, key_state(rows, self.key)["grants"])
            now = time.time()
            out = Spent()
            for e in new:
                p = dict(e.params)
                mechanism = p.pop("mechanism", None)
                out.hashes.append(self._store.append(
                    con, ledger_id, self.key, "release", e.label, p, mechanism=mechanism,
                    guarantee=e.guarantee, parts=e.parts, analyst=self.analyst, t=now))
                out.append(LedgerEntry(e.label, e.guarantee, e.params, now, e.parts,
                                       self.analyst))
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
            self._check_share(led.entries[:-1], [e], key_state(rows, self.key)["grants"])
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
        text = description_text(description)
        with self._store.transaction() as (con, ledger_id, rows):
            old = key_state(rows, self.key)["description"]
            if old is not None and description_text(old) == text:
                return False
            self._record_description(con, ledger_id, text,
                                     "description set" if old is None else "description changed")
        return True

    def reset(self) -> int:
        """Forget every entry of this data set (a curator action, itself recorded); returns how
        many."""
        with self._store.transaction() as (con, ledger_id, rows):
            n = len(key_state(rows, self.key)["releases"])
            self._store.append(con, ledger_id, self.key, "reset", "reset by the curator",
                               {"forgotten": n})
            con.execute("DELETE FROM released WHERE key = ?", (self.key,))
        return int(n)




def list_ledgers(directory: str | Path | None = None) -> list[dict[str, Any]]:
    """Every data set of a ledger directory: key, name, budget, entries, totals, remaining."""
    d = Path(directory).expanduser() if directory else default_ledger_dir()
    store = Store(d)
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
    """Accept the ledger file as it is now (a curator action, e.g. after restoring a backup
    without its head file): its chain is verified and a new head file written."""
    return _adopt_file(Path(directory).expanduser() if directory else default_ledger_dir())
