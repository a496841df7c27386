"""The lasting ledger's hash chain, verified incrementally, and what its log says.

Every read and every write of :class:`dpcore.privacy.ledger_file.Store` checks **every** row of
the log against the chain, as before; what changed is the cost. A process remembers the rows it
last verified (per file, :func:`verified`): the rows it reads next are compared with them (one
list comparison, in C) and only rows it has not seen are hashed. A row edited, deleted or
inserted anywhere, by SQL or by a hex editor, differs from its verified copy, so the whole chain
is re-hashed and the edit refused at that same read or spend, exactly where the full check
refused it; nothing is ever decided on bytes that were not checked (the threat model: see
:mod:`dpcore.privacy.ledger`). A spend now hashes only its own new rows, whatever the ledger's
length; reading the rows back and comparing them stays linear, several times cheaper than
hashing them (``benchmarks/bench_ledger.py``).

What the log says (one data set's state, its entries, the tables it implies) is folded row by
row and memoised by the hash of the last row folded (:func:`folded`): in a verified chain that
hash names the whole prefix, so the memo is used only for the very rows it was made from.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, TypeVar

from dpcore.core.errors import LedgerIntegrityError
from dpcore.privacy.guarantees import LedgerEntry, guarantee_from_dict, part_from_dict

__all__ = ["COLS", "LogRows", "description_text", "entries_of", "entry_of", "forget", "genesis",
           "hash_count", "key_state", "log_tables", "row_hash", "verified"]

COLS = "id, key, kind, label, mechanism, params, guarantee, parts, analyst, time, prev, hash"
T = TypeVar("T")


def genesis(ledger_id: str) -> str:
    """The ``prev`` of a ledger's first row."""
    return "genesis:" + ledger_id


_hashed = [0]  # row hashes computed by this process (tests: spend cost vs. ledger length)


def hash_count() -> int:
    """How many row hashes this process has computed (a spend's cost, independent of load)."""
    return _hashed[0]


def row_hash(ledger_id: str, row: Sequence[Any]) -> str:
    """SHA-256 of one log row (every column but the hash itself) and the ledger's id."""
    _hashed[0] += 1
    rid, key, kind, label, mechanism, params, guarantee, parts, analyst, t, prev = row[:11]
    doc = [ledger_id, int(rid), key, kind, label, mechanism, params, guarantee, parts, analyst,
           repr(float(t)), prev]
    return hashlib.sha256(json.dumps(doc, separators=(",", ":")).encode()).hexdigest()


class LogRows(list):
    """Log rows (``COLS`` tuples, in id order) whose chain was verified for ``ledger_id``."""

    def __init__(self, rows: Sequence[tuple], ledger_id: str) -> None:
        super().__init__(rows)
        self.ledger_id = ledger_id


# The rows each ledger file was last verified with in this process (replaced, never mutated:
# threads of a server share it). A stale or foreign entry only costs re-hashing.
_verified: dict[str, LogRows] = {}
_lock = threading.Lock()


def forget(path: str | Path | None = None) -> None:
    """Drop the remembered rows (of one file, or all): the next read re-hashes every row."""
    with _lock:
        if path is None:
            _verified.clear()
        else:
            _verified.pop(str(path), None)


def verified(con, ledger_id: str, path: str | Path, *, full: bool = False) -> LogRows:
    """Every log row of the open transaction ``con``, its chain checked.

    Rows equal (every column, the stored hash included) to the ones this process verified last
    time for this file are not hashed again; any other row is. ``full``: hash every row (the
    curator's ``dpcore ledger verify``).

    Raises
    ------
    LedgerIntegrityError
        A row's ``prev`` is not its predecessor's hash, or its hash is not its content's.
    """
    rows = con.execute(f"SELECT {COLS} FROM entries ORDER BY id").fetchall()
    known = None if full else _verified.get(str(path))
    start, prev = 0, genesis(ledger_id)
    if (known is not None and known.ledger_id == ledger_id and 0 < len(known) <= len(rows)
            and rows[len(known) - 1] == known[-1] and rows[:len(known)] == known):
        start, prev = len(known), known[-1][11]
        rows = known + rows[start:]  # the verified tuples, shared with the memos below
    for i in range(start, len(rows)):
        r = rows[i]
        if r[10] != prev or r[11] != row_hash(ledger_id, r):
            raise LedgerIntegrityError(
                f"the ledger {path} was edited outside dpcore: log row {i + 1} (id {r[0]}, "
                f"'{r[3]}') does not match its hash chain. Restore the file from a backup; the "
                "recorded spend cannot be trusted")
        prev = r[11]
    out = LogRows(rows, ledger_id)
    with _lock:
        _verified[str(path)] = out
    return out


def description_text(description: Any) -> str:
    """Canonical JSON of a public description (a PublicDescription, a dict or JSON text)."""
    if description is None:
        return "null"
    if hasattr(description, "to_json"):
        description = json.loads(description.to_json(indent=None))
    elif isinstance(description, str):
        description = json.loads(description)
    return json.dumps(description, sort_keys=True, default=str)


# ---- what the log says, folded row by row ---------------------------------------------------

# (ledger id, what) -> (rows folded, hash of the last one, state)
_folds: dict[tuple, tuple[int, str, Any]] = {}


def folded(rows: Sequence[tuple], what: tuple, start: Callable[[], T],
           step: Callable[[T, tuple], None], copy: Callable[[T], T]) -> T:
    """``start()`` with ``step`` applied to every row, resumed from a memo of the same chain.

    A memo is used only when ``rows`` is a verified chain (:class:`LogRows`) whose row at the
    memo's length has the memo's hash: the chain makes that hash name every row before it.
    The state returned is the caller's to change.
    """
    ledger_id = getattr(rows, "ledger_id", None)
    memo = _folds.get((ledger_id, what)) if ledger_id is not None else None
    n, state = 0, start()
    if memo is not None and 0 < memo[0] <= len(rows) and rows[memo[0] - 1][11] == memo[1]:
        n, state = memo[0], copy(memo[2])
    for r in islice(rows, n, None):
        step(state, r)
    if ledger_id is not None and len(rows) > n:
        _folds[(ledger_id, what)] = (len(rows), rows[-1][11], copy(state))
    return state


def _new_state() -> dict[str, Any]:
    return {"releases": [], "budget": None, "accountant": None, "description": None,
            "name": None, "grants": {}, "outputs": {}}


def _copy(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v.copy() if isinstance(v, list | dict) else v for k, v in state.items()}


def key_state(rows: Sequence[tuple], key: str) -> dict[str, Any]:
    """What the log says about one data set: releases since the last reset, budget, etc."""

    def step(state: dict[str, Any], r: tuple) -> None:
        if r[1] != key:
            return
        kind, params = r[2], json.loads(r[5])
        if kind == "release":
            state["releases"].append(r)
        elif kind == "reset":
            state["releases"], state["outputs"] = [], {}
        elif kind == "output":  # a release's kept DP output, by its entry's hash
            state["outputs"][params["release"]] = params
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

    return folded(rows, ("key", key), _new_state, step, _copy)


def entries_of(rows: Sequence[tuple], key: str) -> list[LedgerEntry]:
    """One data set's releases since its last reset, as ledger entries (:func:`entry_of`)."""

    def step(entries: list[LedgerEntry], r: tuple) -> None:
        if r[1] == key and r[2] == "release":
            entries.append(entry_of(r))
        elif r[1] == key and r[2] == "reset":
            entries.clear()

    return folded(rows, ("entries", key), list, step, list.copy)


def log_tables(rows: Sequence[tuple]) -> dict[str, dict]:
    """What the budgets, descriptions, stored outputs and analysts tables must hold, by the log
    (compared by ``Store``; keys and values in the comparison's canonical text)."""
    def step(t: dict[str, dict], r: tuple) -> None:
        key, kind = r[1], r[2]
        if kind not in ("budget", "describe", "store", "reset", "grant", "revoke"):
            return
        params = json.loads(r[5])
        if kind == "budget":
            t["budgets"][key] = json.dumps(params["budget"], sort_keys=True)
        elif kind == "describe":
            t["descriptions"][key] = description_text(params["description"])
        elif kind == "store":
            t["stored outputs"][(key, params["name"])] = json.dumps(params["value"], sort_keys=True)
        elif kind == "reset":
            t["stored outputs"] = {k: v for k, v in t["stored outputs"].items() if k[0] != key}
        elif kind == "grant":
            t["analysts"][(key, params["name"])] = (
                params["token"], json.dumps(params["allocation"], sort_keys=True))
        else:
            t["analysts"].pop((key, params["name"]), None)

    return folded(rows, ("tables",),
                  lambda: {"budgets": {}, "descriptions": {}, "stored outputs": {},
                           "analysts": {}},
                  step, lambda t: {k: v.copy() for k, v in t.items()})


# ---- reading the log into entries -------------------------------------------------------------


def entry_of(r: Sequence[Any]) -> LedgerEntry:
    """A release row as a :class:`LedgerEntry`."""
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
