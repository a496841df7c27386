"""The public description of a private table: what a release may assume without looking at it.

The privacy proofs of every mechanism assume some facts about the data are *public*: which
columns are used, a bound on each row (per-column bounds, or a centre and a radius), and for some
mechanisms the number of rows n. A :class:`PublicDescription` holds exactly those facts, as a
data curator declares them (the ``schema.json`` of ``dpcore app --private``)::

    {"columns": ["longitude", "latitude"],
     "lower": [-180, -90], "upper": [180, 90],
     "n": null}

or, without per-column bounds, ``"center": [0, 0], "radius": 201.3``; optionally
``"missing": {"latitude": "drop", "longitude": {"fill": 0}}``, the missing-cells rule per column
(:mod:`dpcore.data.missing`, the same rule as the Data page's and the run configuration's).
Per-column bounds are
clamping bounds, the way OpenDP and SmartNoise declare them: each value is clamped to its
interval; the centre is then the box's midpoint and the radius half its diagonal, so the clamped
rows lie in the ball the mechanisms assume (:func:`dpcore.app.ui_state.box_geometry`).

:meth:`PublicDescription.prepare` maps a table to the matrix the mechanisms see with per-row
operations only (select, coerce, clamp, centre, clip), so neighbouring tables (one row added or
removed) stay neighbouring, and it never raises on a value of the table: a missing cell (or any
cell that is not a finite number) follows the column's declared rule — its row dropped, or the
declared constant — and without a rule is replaced by the centre's coordinate, as the release
view says beforehand (an error message naming the cell would leak it).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.core.errors import SchemaError
from dpcore.data.missing import check_missing_rule

__all__ = ["RADIUS_SOURCES", "PublicDescription", "SchemaError", "release_description"]


def _floats(name: str, values: Any, d: int) -> tuple[float, ...]:
    if not isinstance(values, Sequence) or isinstance(values, str) or len(values) != d:
        raise SchemaError(f"{name} must be a list of {d} numbers (one per column), got {values!r}")
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise SchemaError(f"{name} must hold finite numbers, got {values!r}")
        out.append(float(v))
    return tuple(out)


@dataclass(frozen=True)
class PublicDescription:
    """Columns, row bounds and (optionally) n of a private table, all declared, none read off it.

    Parameters
    ----------
    columns : sequence of str
        Columns the mechanisms use, in order.
    lower, upper : sequence of float, optional
        Per-column clamping bounds (both or neither). When given, ``center`` and ``radius`` are
        derived: the box's midpoint and half its diagonal.
    center : sequence of float, optional
        Public centre (without bounds; default the origin).
    radius : float, optional
        Public bound on the L2 norm of a centred row (without bounds). Required by every
        mechanism; a description without it can still be stored but not released from.
    n : int, optional
        Declared public number of rows (None: the release door estimates it privately).
    missing : mapping, optional
        The missing-cells rule per column: ``"drop"`` (the row is dropped) or ``{"fill": c}``
        (a public constant); columns without a rule get the centre's coordinate.
    """

    columns: tuple[str, ...]
    lower: tuple[float, ...] | None = None
    upper: tuple[float, ...] | None = None
    center: tuple[float, ...] | None = None
    radius: float | None = None
    n: int | None = None
    missing: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        cols = self.columns
        if isinstance(cols, str) or not isinstance(cols, Sequence) or not cols:
            raise SchemaError(f"columns must be a non-empty list of names, got {cols!r}")
        if not all(isinstance(c, str) and c for c in cols) or len(set(cols)) != len(cols):
            raise SchemaError(f"columns must be distinct non-empty names, got {list(cols)!r}")
        object.__setattr__(self, "columns", tuple(cols))
        d = len(cols)
        if (self.lower is None) != (self.upper is None):
            raise SchemaError("give both lower and upper bounds, or neither")
        if self.lower is not None:
            from dpcore.data.geometry import box_geometry

            lo, hi = _floats("lower", self.lower, d), _floats("upper", self.upper, d)
            if any(h <= l for l, h in zip(lo, hi, strict=True)):
                raise SchemaError(f"every bound needs lower < upper, got lower={list(lo)}, "
                                  f"upper={list(hi)}")
            geo = box_geometry(list(zip(lo, hi, strict=True)))
            for name, given, derived in (("center", self.center, geo.center),
                                         ("radius", self.radius, geo.radius)):
                if given is not None and not np.allclose(given, derived):
                    raise SchemaError(f"{name} is derived from the bounds ({derived!r}); "
                                      f"do not declare a different one ({given!r})")
            object.__setattr__(self, "lower", lo)
            object.__setattr__(self, "upper", hi)
            object.__setattr__(self, "center", tuple(float(c) for c in geo.center))
            object.__setattr__(self, "radius", float(geo.radius))
        else:
            if self.center is not None:
                object.__setattr__(self, "center", _floats("center", self.center, d))
            if self.radius is not None:
                r = self.radius
                if isinstance(r, bool) or not isinstance(r, int | float) or not (
                        math.isfinite(r) and r > 0):
                    raise SchemaError(f"radius must be a finite number > 0, got {r!r}")
                object.__setattr__(self, "radius", float(r))
        try:
            rule = check_missing_rule(self.missing, cols)
        except ValueError as exc:
            raise SchemaError(str(exc)) from None
        object.__setattr__(self, "missing", rule or None)
        if self.n is not None:
            n = self.n
            if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
                raise SchemaError(f"n must be null or an integer ≥ 1, got {n!r}")
            object.__setattr__(self, "n", int(n))

    # ---- derived -----------------------------------------------------------------------------

    @property
    def d(self) -> int:
        return len(self.columns)

    def box(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The clamping box ``(lo, hi)`` in centred coordinates, or None without bounds."""
        if self.lower is None or self.upper is None:
            return None
        c = np.asarray(self.center, dtype=float)
        return np.asarray(self.lower, dtype=float) - c, np.asarray(self.upper, dtype=float) - c

    def center_array(self) -> np.ndarray:
        return np.zeros(self.d) if self.center is None else np.asarray(self.center, dtype=float)

    # ---- preparing a table --------------------------------------------------------------------

    def prepare(self, table: Any) -> np.ndarray:
        """The matrix the mechanisms see: select, coerce, clamp to the box, centre, clip.

        ``table`` is a DataFrame (columns by name) or an (n, d) array (columns in order). Every
        step acts on each row alone; a cell that is not a finite number becomes the centre's
        coordinate. Raises :class:`SchemaError` only for a missing column (public: the column
        names are part of this description), never naming a value.
        """
        from dpcore.release.runconfig import prepare_matrix

        if hasattr(table, "columns"):
            missing = [c for c in self.columns if c not in set(map(str, table.columns))]
            if missing:
                raise SchemaError(f"the table has no column(s) {missing} of the description")
            import pandas as pd

            frame = table.rename(columns=str)[list(self.columns)]
            M = np.column_stack([pd.to_numeric(frame[c], errors="coerce").to_numpy(float)
                                 for c in self.columns]) if len(frame) else np.empty((0, self.d))
        else:
            M = np.array(table, dtype=float, copy=True)
            if M.ndim != 2 or M.shape[1] != self.d:
                raise SchemaError(f"the table must have {self.d} columns")
        c = self.center_array()
        M = self.apply_missing(M)
        bad = ~np.isfinite(M)
        if bad.any():
            M[bad] = np.broadcast_to(c, M.shape)[bad]
        if self.lower is not None:
            M = np.clip(M, np.asarray(self.lower), np.asarray(self.upper))
        return prepare_matrix(M, center=c, radius=self.radius)

    def apply_missing(self, M: np.ndarray) -> np.ndarray:
        """The declared rule on the coerced matrix (non-numbers are NaN): a ``"drop"`` column's
        missing cell drops its row, a ``{"fill": c}`` column's becomes c. Per row only."""
        if not self.missing:
            return M
        keep = np.ones(M.shape[0], dtype=bool)
        for j, col in enumerate(self.columns):
            what = self.missing.get(col)
            if what is None:
                continue
            miss = ~np.isfinite(M[:, j])
            if what == "drop":
                keep &= ~miss
            else:
                M[miss, j] = what["fill"]
        return M if keep.all() else M[keep]

    # ---- JSON (schema.json) -------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"columns": list(self.columns)}
        if self.lower is not None:
            out |= {"lower": list(self.lower), "upper": list(self.upper)}
        else:
            out |= {"center": None if self.center is None else list(self.center),
                    "radius": self.radius}
        out["n"] = self.n
        if self.missing:
            out["missing"] = dict(self.missing)
        return out

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent)

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any]) -> PublicDescription:
        if not isinstance(doc, Mapping):
            raise SchemaError(f"a public description is a JSON object, got {doc!r}")
        unknown = set(doc) - {"columns", "lower", "upper", "center", "radius", "n", "missing"}
        if unknown:
            raise SchemaError(f"unknown key(s) {sorted(unknown)} in the public description; "
                              "expected columns, lower/upper or center/radius, n, missing")
        if "columns" not in doc:
            raise SchemaError("the public description needs 'columns'")
        return cls(columns=doc["columns"], lower=doc.get("lower"), upper=doc.get("upper"),
                   center=doc.get("center"), radius=doc.get("radius"), n=doc.get("n"),
                   missing=doc.get("missing"))

    @classmethod
    def from_json(cls, text: str) -> PublicDescription:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SchemaError(f"the public description is not valid JSON ({exc})") from None
        return cls.from_dict(doc)


# ---- which declared geometry a release may use -----------------------------------------------

#: Where a radius came from, and whether a release may rely on it: declared by the analyst,
#: derived from public per-column bounds, a synthetic data set's generator parameters, or a
#: private estimate charged to this data set's ledger may; a radius read off the data, or a
#: private estimate whose charge was not recorded (explore mode), may not.
RADIUS_SOURCES: dict[str, bool] = {
    "declared": True,
    "public_bounds": True,
    "generator": True,
    "private_charged": True,
    "private_uncharged": False,
    "data": False,
    "none": False,
}


def release_description(
    columns: Sequence[str],
    *,
    radius: float | None,
    radius_source: str,
    center: Sequence[float] | None = None,
    box: Mapping[str, Any] | None = None,
    bounds_from_data: Sequence[str] = (),
    n_rows: int | None = None,
    table_is_public: bool = False,
    missing: Mapping[str, Any] | None = None,
) -> PublicDescription | None:
    """The public description a release may use, or None when the declared geometry is not
    public (the one place that decides it; the dashboard's pages only report what the analyst
    did).

    Parameters
    ----------
    columns : the columns in use.
    radius, center : the declared radius and centre.
    radius_source : a key of :data:`RADIUS_SOURCES`.
    box : mapping, optional
        A per-column description (``columns``, ``lower``, ``upper``, ``scaled``): the release
        then uses the box (clamping bounds), whose half-diagonal is the radius.
    bounds_from_data : the columns whose bounds were read off the data (never public).
    n_rows : the table's row count, used only when ``table_is_public`` (a bundled sample or
        a synthetic mixture: their n is public too); a private table's n is never described.
    missing : the missing-cells rule per column (the Data page's choice).
    """
    if radius is None or not RADIUS_SOURCES.get(radius_source, False):
        return None
    n = int(n_rows) if table_is_public and n_rows is not None else None
    if box is not None:
        if bounds_from_data or list(box["columns"]) != list(columns):
            return None
        d = len(box["columns"])
        lower, upper = (([-1.0] * d, [1.0] * d) if box.get("scaled")  # the table is scaled
                        else (box["lower"], box["upper"]))
        return PublicDescription(columns=list(box["columns"]), lower=lower, upper=upper, n=n,
                                 missing=missing)
    return PublicDescription(columns=list(columns), center=center, radius=radius, n=n,
                             missing=missing)
