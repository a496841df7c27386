"""Missing cells: one per-column rule for every path (issue 27.2).

A column's missing cells (empty, ``nan``, ``null``, and the usual markers ``NA``, ``N/A``, ``-``,
``?``, ``#N/A`` in an otherwise numeric column) are either

* ``"drop"``: the rows holding one are dropped, or
* ``{"fill": c}``: replaced by ``c``, a public constant the user declares (never read off the
  data).

Without a rule a column with missing cells is refused in explore mode (with the count, which is
fine there), while a release (the door, the curator deployment) replaces the cell by the centre's
coordinate, as the release view states beforehand: a release may never say whether a cell was
missing. Both operations act on each row alone, so neighbouring tables stay neighbouring;
dropping changes n (a declared public n is then an upper bound, not the count).

The rule is JSON: ``{"col": "drop", "other": {"fill": 0}}``; the dashboard's Data page, the run
configuration's ``data.missing``, the CLI and the curator's ``schema.json`` (``"missing"``) all
read it with :func:`check_missing_rule` and apply it with :func:`apply_missing`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpcore.core.errors import ParameterError
from dpcore.data.limits import MAX_ABS_VALUE

__all__ = ["MISSING_MARKERS", "MissingRule", "apply_missing", "check_missing_rule",
           "describe_rule", "marker_columns", "missing_mask", "refused_missing"]

#: Text that marks a missing cell in an otherwise numeric column (issue 26: a column holding
#: ``NA``/``N/A``/``-`` was left out without a word).
MISSING_MARKERS = ("NA", "N/A", "n/a", "na", "-", "?", "#N/A", "None", "none", "NULL", "null",
                   "NaN", "nan", "")

MissingRule = Mapping[str, Any]


def check_missing_rule(rule: Any, columns: Sequence[str] | None = None,
                       name: str = "missing") -> dict[str, Any]:
    """The rule as ``{column: "drop" | {"fill": float}}``, or a :class:`ParameterError`.

    ``columns``: when given, every rule must name one of them.
    """
    if rule is None:
        return {}
    if not isinstance(rule, Mapping):
        raise ParameterError(name, f"{name} must map column names to \"drop\" or "
                                   f"{{\"fill\": number}}, got {rule!r}"[:300])
    out: dict[str, Any] = {}
    for col, what in rule.items():
        where = f"{name}[{col!r}]"
        if columns is not None and str(col) not in set(map(str, columns)):
            raise ParameterError(name, f"{where}: {col!r} is not one of the chosen columns")
        if what == "drop":
            out[str(col)] = "drop"
            continue
        if not (isinstance(what, Mapping) and set(what) == {"fill"}):
            raise ParameterError(name, f"{where} must be \"drop\" or {{\"fill\": number}}, "
                                       f"got {what!r}"[:300])
        v = what["fill"]
        if isinstance(v, bool) or not isinstance(v, int | float) or not (
                math.isfinite(float(v)) and abs(float(v)) <= MAX_ABS_VALUE):
            raise ParameterError(name, f"{where}: the fill value must be a finite number with "
                                       f"|value| ≤ 1e100, got {v!r}"[:300])
        out[str(col)] = {"fill": float(v)}
    return out


def _as_numbers(col: pd.Series) -> pd.Series | None:
    """A text column's values as floats with markers as NaN, or None when other text remains."""
    if pd.api.types.is_bool_dtype(col.dtype):
        return None
    if pd.api.types.is_numeric_dtype(col.dtype):
        return col.astype(float)
    text = col.astype(object)
    marked = text.isna() | text.map(lambda v: isinstance(v, str) and v.strip() in MISSING_MARKERS)
    values = pd.to_numeric(text.where(~marked), errors="coerce")
    if (values.isna() & ~marked).any():
        return None
    return values.astype(float)


def marker_columns(df: pd.DataFrame) -> dict[str, list[str]]:
    """Text columns that are numbers apart from missing-value markers: name -> markers found."""
    out = {}
    for c in df.columns:
        col = df[c]
        if pd.api.types.is_numeric_dtype(col.dtype) or pd.api.types.is_bool_dtype(col.dtype):
            continue
        if _as_numbers(col) is None:
            continue
        found = sorted({str(v).strip() for v in col.dropna().unique()
                        if isinstance(v, str) and v.strip() in MISSING_MARKERS})
        if found:
            out[str(c)] = found
    return out


def missing_mask(df: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """Boolean frame: which cells of ``columns`` are missing (NaN, None or a marker)."""
    names = {str(c): c for c in df.columns}
    out = {}
    for c in columns:
        col = df[names[c]]
        nums = _as_numbers(col)
        out[c] = (nums.isna() if nums is not None else col.isna()).to_numpy()
    return pd.DataFrame(out, index=df.index)


def apply_missing(df: pd.DataFrame, columns: Sequence[str], rule: MissingRule | None
                  ) -> tuple[pd.DataFrame, int]:
    """``df[columns]`` with the rule applied, and how many rows it changed or dropped.

    Columns with a rule become float64 (markers read as missing); columns without one are
    returned as they are (their missing cells are the caller's to refuse or replace). The count
    is a statistic of the data: show it only where the table is not private (explore mode).
    """
    rule = check_missing_rule(rule, columns)
    if not rule:  # nothing to do: no copy of a large table (callers select the columns)
        return df, 0
    names = {str(c): c for c in df.columns}
    out = df[[names[c] for c in columns]]  # a new frame; columns are replaced, never edited
    out.columns = list(columns)
    affected = np.zeros(len(out), dtype=bool)
    drop = np.zeros(len(out), dtype=bool)
    for c, what in rule.items():
        nums = _as_numbers(out[c])
        if nums is None:  # other text: left for to_matrix to name
            continue
        miss = nums.isna().to_numpy()
        affected |= miss
        if what == "drop":
            drop |= miss
            out[c] = nums
        else:
            out[c] = nums.fillna(what["fill"])
    if drop.any():
        out = out.loc[~drop].reset_index(drop=True)
    return out, int(affected.sum())


def refused_missing(column: str, count: int, where: str) -> str:
    """The refusal of missing cells in a column without a rule, the same text on every path
    (in memory: ``where`` names the data row; on Dask: the partition's first row)."""
    return (f"column {column!r} has {count} missing, NaN or infinite value(s) (first in {where}: "
            "a missing cell); choose what to do with its missing cells: drop those rows or fill "
            "them with a public constant (Data page, or data.missing in a configuration)")


def describe_rule(rule: MissingRule | None, columns: Sequence[str] | None = None, *,
                  release: bool) -> str:
    """One sentence saying what happens to missing cells (no count: safe in release mode)."""
    rule = check_missing_rule(rule)
    parts = [f"{c!r}: " + ("rows dropped" if r == "drop" else f"filled with {r['fill']:g}")
             for c, r in rule.items()]
    rest = [c for c in (columns or []) if c not in rule]
    if release:  # ``columns``: every column (whether one has missing cells is private)
        tail = ("other columns: replaced by the centre's coordinate (a release never says "
                "whether a cell was missing)") if rest or not rule else ""
    else:  # ``columns``: the columns with missing cells and no rule yet
        tail = (f"{', '.join(map(repr, rest[:6]))}: refused until you choose") if rest else ""
    return "Missing cells — " + "; ".join([*parts, *([tail] if tail else [])]) + "."
