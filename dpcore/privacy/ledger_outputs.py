"""Released DP outputs kept with their ledger entries (issue 27 item 3), a mixin of
:class:`dpcore.privacy.ledger.LastingLedger`.

A release's DP output is public once released: :meth:`ReleasedOutputs.keep_outputs` appends it
to the ledger's hash-chained log as an ``output`` event that names its release entry (by the
entry's hash), so an output edited or deleted by hand breaks the chain like any other row. The
door calls it after computing; a page reloaded (or a CLI ``dpcore ledger export``) reads it back.
Outputs are kept exactly as the door released them (the mechanism's centred coordinates; a
curator's export adds the description's centre to point outputs); a ⊥ is kept as ``null``.
Named analysts see only their own outputs (:meth:`ReleasedOutputs.records`).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from dpcore.core.errors import LedgerError
from dpcore.privacy.guarantees import guarantee_from_dict
from dpcore.privacy.ledger_file import entry_of, key_state

__all__ = ["ANY", "ReleasedOutputs", "Spent"]

_log = logging.getLogger("dpcore.ledger")

#: ``analyst=ANY``: every analyst's records (the curator's view).
ANY = "*"


class Spent(list):
    """The entries one ``spend_many`` recorded, with the hashes of their log rows (what an
    ``output`` event names)."""

    def __init__(self, entries: Sequence[Any] = (), hashes: Sequence[str] = ()) -> None:
        super().__init__(entries)
        self.hashes = list(hashes)


def _jsonable(value: Any) -> Any:
    """A DP output as JSON (arrays as nested lists; NaN and ±inf as strings JSON lacks)."""
    if value is None:
        return None
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    a = np.asarray(value)
    if a.dtype.kind in "fc":
        a = a.astype(float)
        flat = [v if np.isfinite(v) else str(v) for v in a.ravel().tolist()]
        return np.asarray(flat, dtype=object).reshape(a.shape).tolist() if a.ndim else flat[0]
    return a.tolist()


def output_arrays(doc: dict[str, Any] | None) -> dict[str, np.ndarray | None] | None:
    """A kept output back as the door's ``Release.output`` (name -> float array, or None)."""
    if doc is None:
        return None
    return {k: None if v is None else np.asarray(v, dtype=float) for k, v in doc.items()}


class ReleasedOutputs:
    """Keeping and reading released outputs (a mixin of ``LastingLedger``)."""

    analyst: str | None
    key: str

    def keep_outputs(self, spent: Sequence[Any], releases: Sequence[Any], *,
                     origin: str = "") -> bool:
        """Append each release's DP output (or ⊥) to the log, next to its entry.

        ``spent``: what :meth:`spend_many` returned (its ``hashes`` name the entries);
        ``releases``: the door's :class:`~dpcore.release.door.Release` objects, in the same
        order; ``origin``: where they were made (the app's page, ``"cli"``). Returns whether
        they were kept. Never raises a ledger error: the release is made and charged already,
        so a ledger that fails now (a full disk) loses only the copy, and the reason goes to
        the ``dpcore.ledger`` log.
        """
        hashes = list(getattr(spent, "hashes", []))
        if not hashes or len(hashes) != len(releases):
            return False
        try:
            with self._store.transaction() as (con, ledger_id, _):
                now = time.time()
                for h, rel in zip(hashes, releases, strict=True):
                    params = {"release": h, "group": hashes[0], "origin": str(origin),
                              "label": rel.label, "guarantee": rel.guarantee.as_dict(),
                              "output": _jsonable(rel.output)}
                    self._store.append(con, ledger_id, self.key, "output",
                                       f"output of {rel.label}", params, analyst=self.analyst,
                                       t=now)
        except LedgerError as exc:
            _log.error("a released output could not be kept in the ledger: %s", exc)
            return False
        return True

    def records(self, analyst: str | None = ANY, *, origin: str | None = None
                ) -> list[dict[str, Any]]:
        """Every release since the last reset, oldest first, with its kept output.

        ``analyst``: :data:`ANY` (the curator: everyone's), a name (that analyst's only) or
        None (releases of no named analyst). ``origin``: only releases made there. Each record:
        label, mechanism, params, guarantee (charged), released_guarantee, account, analyst,
        time, origin, group, kept (whether an output was kept) and output (None for ⊥).
        """
        with self._store.reading() as (_, _, rows):
            st = key_state(rows, self.key)
        out = []
        for r in st["releases"]:
            if analyst != ANY and r[8] != analyst:
                continue
            e = entry_of(r)
            kept = st["outputs"].get(r[11])
            if origin is not None and (kept is None or kept["origin"] != origin):
                continue
            params = dict(e.params)
            out.append({
                "label": e.label, "mechanism": params.pop("mechanism", None), "params": params,
                "guarantee": str(e.guarantee), "account": e.account, "analyst": e.analyst,
                "time": e.timestamp, "kept": kept is not None,
                "released_guarantee": None if kept is None else str(
                    guarantee_from_dict(kept["guarantee"])),
                "origin": None if kept is None else kept["origin"],
                "group": None if kept is None else kept["group"],
                "output": None if kept is None else kept["output"],
                "_guarantee": None if kept is None else kept["guarantee"]})
        return out

    def last_group(self, origin: str, analyst: str | None) -> list[dict[str, Any]]:
        """The records of the last release made at ``origin`` by ``analyst`` (one click of a
        page's release button), or []."""
        recs = self.records(analyst, origin=origin)
        if not recs:
            return []
        group = recs[-1]["group"]
        return [r for r in recs if r["group"] == group]


def record_json(record: dict[str, Any]) -> str:
    """A record's output as compact JSON text (for a table cell or a CSV column)."""
    return json.dumps(record["output"], separators=(",", ":"))
