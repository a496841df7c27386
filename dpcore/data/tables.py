"""From a user's table to a float matrix, with one clear message per kind of bad input.

Reading (:func:`load_table`) accepts a path, raw bytes, a file-like object (e.g. a Streamlit
upload) or a DataFrame; CSV, TSV (any of ``, ; tab |``, sniffed), optionally gzip-compressed, and
Parquet. Everything happens in memory; nothing is written to disk. Every member of a
multi-member gzip file is read (``cat a.gz b.gz`` is one valid gzip file); UTF-8 with or without
a byte-order mark and UTF-16/32 with a BOM (or UTF-16 without one, recognised by its NUL pattern)
are decoded. One size limit, :data:`MAX_UPLOAD_MIB` mebibytes (2²⁰ bytes), is the dashboard's
upload limit and the loader's default, and every message states it in MiB.

Selecting (:func:`to_matrix`) turns chosen numeric columns into a float64 matrix and refuses
non-numeric or non-finite values with the column and row that are wrong.

Preparing: :func:`center`, :func:`clip_rows`, :func:`drop_outside`, :func:`data_radius`. A centre,
radius or bound that the privacy proof assumes public but that is read off the data raises a
:class:`~dpcore.privacy.guarantees.PrivacyLeakWarning`.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from typing import IO, Any

import numpy as np
import pandas as pd

from dpcore.core.errors import DataError, PrivacyLeakWarning
from dpcore.data.geometry import clip_to_ball, row_norms
from dpcore.data.limits import ParameterError, check_center, check_data_range, check_radius
from dpcore.data.missing import apply_missing, refused_missing
from dpcore.data.readers import (
    _GZIP_MAGIC,
    _decode,
    _float_or_nan,
    _gunzip,
    _parse_text,
    _read_source,
    _sniff_encoding,
    read_parquet,
)

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_COLUMNS",
    "MAX_UPLOAD_MIB",
    "DataError",
    "center",
    "clip_rows",
    "column_report",
    "column_problem",
    "data_radius",
    "drop_outside",
    "load_matrix",
    "load_table",
    "numeric_columns",
    "to_matrix",
]

#: The upload limit in MiB. Streamlit's ``server.maxUploadSize`` / ``max_upload_size`` is
#: multiplied by 1024 × 1024 on the server, so passing this number there gives the same limit.
MAX_UPLOAD_MIB = 200
DEFAULT_MAX_BYTES = MAX_UPLOAD_MIB * 2**20
DEFAULT_MAX_COLUMNS = 2000  # MNIST (784) fits; a wider table is almost surely a mistake

Source = str | os.PathLike | bytes | bytearray | IO[bytes] | IO[str] | pd.DataFrame


def load_table(
    source: Source,
    *,
    filename: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_columns: int = DEFAULT_MAX_COLUMNS,
) -> pd.DataFrame:
    """Read a table from a path, bytes, a file-like object or a DataFrame.

    Parameters
    ----------
    source : path, bytes, file-like or DataFrame
    filename : str, optional
        Name used to detect the format (``.csv``, ``.tsv``, ``.parquet``, optionally ``.gz``)
        when ``source`` is bytes or a stream; the content is sniffed as well.
    max_bytes : int
        Refuse larger inputs (also after gzip decompression).
    max_columns : int
        Refuse tables with more columns.

    Raises
    ------
    DataError
        With one specific message for each kind of bad input: empty file, header only, binary or
        undecodable bytes, a delimiter that yields one column, duplicate column names, too many
        columns, too large a file, unreadable Parquet.
    """
    if isinstance(source, pd.DataFrame):
        df = source
        dupes = sorted({str(c) for c in df.columns[df.columns.duplicated()]})
        if dupes:
            raise DataError(f"duplicate column names: {', '.join(map(repr, dupes))}; rename them")
    else:
        raw, name = _read_source(source, filename, max_bytes)
        name = name.lower()
        if raw[:2] == _GZIP_MAGIC:
            raw = _gunzip(raw, max_bytes)
            name = name.removesuffix(".gz")
        if raw[:4] == b"PAR1" or name.endswith((".parquet", ".pq")):
            df = read_parquet(bytes(raw), filename or name)
        else:
            text = _decode(raw)
            utf8 = _sniff_encoding(raw) in (None, "utf-8-sig")
            raw = bytes(raw)  # no copy when it is bytes already
            df = _parse_text(text, name, (raw[3:] if raw[:3] == b"\xef\xbb\xbf" else raw)
                             if utf8 else None)
    if df.shape[1] > max_columns:
        raise DataError(
            f"the table has {df.shape[1]} columns, more than the limit of {max_columns}; "
            "select the columns you need first"
        )
    if df.shape[1] == 0:
        raise DataError("the table has no columns")
    if df.shape[0] == 0:
        raise DataError("the table has a header but no data rows")
    return df


def column_problem(col: pd.Series | Any) -> str | None:
    """Why a column (a Series, or a dtype) cannot be used as numbers, or None when it can.

    The one column rule of every loader (issue 26): the in-memory path (:func:`to_matrix`,
    :func:`numeric_columns`) and the Dask path (:mod:`dpcore.scale.partitions`) both call it,
    so a boolean column is refused by both, never read as 0/1 by one of them.
    """
    dtype = getattr(col, "dtype", col)
    if pd.api.types.is_bool_dtype(dtype):
        return "boolean (true/false), not numeric: recode it as numbers if that is meant"
    if pd.api.types.is_numeric_dtype(dtype):
        return None
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return "dates or times, not numbers"
    if not isinstance(col, pd.Series):
        return "text, not numbers"
    from dpcore.data.missing import marker_columns

    markers = marker_columns(col.to_frame("c")).get("c")
    if markers:
        shown = ", ".join(repr(m) for m in markers[:4])
        return (f"numbers with missing-value markers ({shown}): choose what to do with "
                "missing cells (drop the rows or fill with a constant) to use it")
    values = col.dropna()
    if values.empty:
        return "empty: every cell is missing"
    bad = pd.to_numeric(values.astype(object), errors="coerce").isna()
    example = values[bad].iloc[0] if bad.any() else values.iloc[0]
    return f"text, not numbers (e.g. {str(example)[:40]!r}; {int(bad.sum())} such cell(s))"


def column_report(df: pd.DataFrame) -> dict[str, str]:
    """Every column left out of :func:`numeric_columns`, with why (shown on the Data page: no
    column is dropped without a word)."""
    return {str(c): why for c in df.columns if (why := column_problem(df[c])) is not None}


def numeric_columns(df: pd.DataFrame) -> list[str]:
    """Names of the columns with a numeric (non-boolean) dtype (:func:`column_problem`)."""
    return [str(c) for c in df.columns if column_problem(df[c].dtype) is None]


def to_matrix(df: pd.DataFrame, columns: Sequence[str] | None = None, *,
              missing: Mapping[str, Any] | None = None) -> np.ndarray:
    """The chosen numeric columns as a float64 matrix of shape (n, len(columns)).

    Parameters
    ----------
    df : DataFrame
    columns : sequence of str, optional
        Default: every numeric column.
    missing : mapping, optional
        The missing-cells rule per column (:mod:`dpcore.data.missing`: ``"drop"`` the rows or
        ``{"fill": c}`` with a public constant). A missing cell in a column without a rule is
        refused.

    Raises
    ------
    DataError
        No numeric column; an unknown column; a non-numeric value in a chosen column (naming the
        column, the row and the value); missing, NaN or infinite values; fewer than two rows.
    """
    if columns is None:
        columns = numeric_columns(df)
        if not columns:
            raise DataError(
                "no numeric column found: every column holds text; check the delimiter and "
                "the decimal separator (use '.' for decimals)"
            )
    columns = [str(c) for c in columns]
    if not columns:
        raise DataError("choose at least one column")
    names = {str(c): c for c in df.columns}
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise DataError(f"unknown column(s): {', '.join(map(repr, unknown))}")
    try:
        df, _ = apply_missing(df, columns, missing)
    except ParameterError as exc:
        raise DataError(str(exc)) from None
    if [str(c) for c in df.columns] != columns:
        df = df[[names.get(c, c) for c in columns]]
        df.columns = columns
    for c in columns:
        if pd.api.types.is_bool_dtype(df[c].dtype):
            raise DataError(f"column {c!r} is {column_problem(df[c].dtype)}")
    text = [j for j, c in enumerate(columns) if not pd.api.types.is_numeric_dtype(df[c].dtype)]
    # numeric columns in one block conversion, no per-cell parsing (issue 23.7); text columns
    # parsed one by one, so that a bad cell is named
    # numeric columns: one contiguous cast each, written into the C-ordered matrix (faster
    # than casting the transposed block at once); no per-cell parsing (issue 23.7)
    out = np.empty((df.shape[0], len(columns)), dtype=float)
    for j, c in enumerate(columns):
        if j not in text:
            out[:, j] = df[c].to_numpy(dtype=float, na_value=np.nan)
    for j in text:
        c = columns[j]
        col = df[c]
        try:
            values = pd.to_numeric(col, errors="coerce")
        except OverflowError:  # integers beyond the float range (10**400)
            values = col.map(_float_or_nan).astype(float)
        bad = values.isna() & col.notna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise DataError(
                f"column {c!r} has non-numeric values, e.g. {col.iloc[i]!r} in data row {i + 1} "
                f"({int(bad.sum())} such values)"
            )
        out[:, j] = values.to_numpy(dtype=float, na_value=np.nan)
    finite = np.isfinite(out).all(axis=0)  # one vectorised pass; messages only on failure
    for j in np.flatnonzero(~finite):
        c, arr = columns[j], out[:, j]
        n_bad = int((~np.isfinite(arr)).sum())
        i = int(np.flatnonzero(~np.isfinite(arr))[0])
        if np.isnan(arr[i]):
            raise DataError(refused_missing(c, n_bad, f"data row {i + 1}"))
        shown = str(df[c].iloc[i])
        shown = shown if len(shown) <= 24 else f"a number of {len(shown)} characters"
        raise DataError(
            f"column {c!r} has {n_bad} missing, NaN or infinite value(s) (first in data row "
            f"{i + 1}: {shown}, infinite or beyond the float range; |value| ≤ 1e100 is "
            "supported)"
        )
    # ±inf and |x| > 1e100: outside the supported range (dpcore.data.limits), named by column and
    # row
    check_data_range(out, columns)
    if out.shape[0] < 2:
        raise DataError(f"the table has {out.shape[0]} data row; at least 2 are needed")
    return out


def load_matrix(
    source: Source, columns: Sequence[str] | None = None, **kwargs: Any
) -> np.ndarray:
    """:func:`load_table` followed by :func:`to_matrix`."""
    return to_matrix(load_table(source, **kwargs), columns)


def center(X: np.ndarray, center: np.ndarray | Sequence[float] | None = None):
    """Subtract a centre from every row.

    Parameters
    ----------
    X : (n, d) array
    center : (d,) array, optional
        A public centre. If omitted, the data mean is used and a
        :class:`~dpcore.privacy.guarantees.PrivacyLeakWarning` is raised: the mean of private data
        is not public.

    Returns
    -------
    X_centered : (n, d) array
    center : (d,) array
    """
    X = np.asarray(X, dtype=float)
    if center is None:
        warnings.warn(
            "centring on the data mean reads a statistic off the private data; declare a public "
            "centre (or estimate it privately) for an end-to-end DP guarantee",
            PrivacyLeakWarning,
            stacklevel=2,
        )
        c = X.mean(axis=0)
    else:
        try:
            c = check_center(center, X.shape[1], name="centre")
        except ParameterError as exc:
            raise DataError(str(exc)) from None
    return X - c, c


def clip_rows(X: np.ndarray, radius: float) -> tuple[np.ndarray, int]:
    """Scale rows with ‖x‖₂ > radius down onto the ball of that radius.

    Returns the clipped copy and how many rows were changed. Clipping to a *declared* radius keeps
    the sensitivity analysis valid for every row.
    """
    return clip_to_ball(X, radius, return_count=True)


def drop_outside(X: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Keep only rows with ‖x‖₂ ≤ radius (the alternative to clipping).

    Returns the kept rows and the boolean mask. Note: dropping changes n, which DP releases that
    treat n as public must account for.
    """
    try:
        radius = check_radius(radius)
    except ParameterError as exc:
        raise DataError(str(exc)) from None
    mask = row_norms(X) <= radius
    return np.asarray(X, dtype=float)[mask], mask


def data_radius(X: np.ndarray, quantile: float = 1.0) -> float:
    """The ``quantile`` of the row norms (1.0: the largest), read off the data, with a warning.

    A radius derived from the private data is itself a non-private release; use it only to
    suggest a value the user then declares, or on public data.
    """
    if not 0 < quantile <= 1:
        raise DataError(f"quantile must be in (0, 1], got {quantile!r}")
    warnings.warn(
        "a radius computed from the data reveals information about it; declare a public radius "
        "for an end-to-end DP guarantee",
        PrivacyLeakWarning,
        stacklevel=2,
    )
    return float(np.quantile(row_norms(X), quantile))

