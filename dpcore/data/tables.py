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

import csv
import io
import math
import os
import re
import warnings
import zlib
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

import numpy as np
import pandas as pd

from dpcore.core.errors import DataError, PrivacyLeakWarning
from dpcore.data.geometry import clip_to_ball, row_norms
from dpcore.data.limits import ParameterError, check_center, check_data_range, check_radius

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_COLUMNS",
    "MAX_UPLOAD_MIB",
    "DataError",
    "center",
    "clip_rows",
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
_DELIMITERS = ",\t;|"
_LINE_END = re.compile(r"\r\n|\r|\n")
# Only these cells are missing: not pandas' default list, which turns Namibia's code "NA" into NaN.
_NA_TOKENS = ["", "nan", "NaN", "NAN", "-nan", "null", "NULL"]


Source = str | os.PathLike | bytes | bytearray | IO[bytes] | IO[str] | pd.DataFrame


def _read_source(source: Any, filename: str | None, max_bytes: int) -> tuple[bytes, str]:
    """Return the raw bytes and a name for format detection."""
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        if not path.is_file():
            raise DataError(f"file not found: {path}")
        size = path.stat().st_size
        if size > max_bytes:
            raise DataError(_too_big(size, max_bytes))
        return path.read_bytes(), filename or path.name
    if isinstance(source, bytes | bytearray | memoryview):
        raw = bytes(source)
    elif hasattr(source, "read"):
        raw = source.read(max_bytes + 1)
        if isinstance(raw, str):
            raw = raw.encode("utf-8")
        filename = filename or getattr(source, "name", None)
    else:
        raise DataError(
            f"cannot read a table from a {type(source).__name__}: pass a path, bytes, "
            "a file-like object or a pandas DataFrame"
        )
    if len(raw) > max_bytes:
        raise DataError(_too_big(len(raw), max_bytes))
    return raw, str(filename or "")


def _mib(n_bytes: float) -> str:
    return f"{n_bytes / 2**20:.1f}".removesuffix(".0") + " MiB"


def _too_big(size: int, max_bytes: int, after: str = "") -> str:
    what = f"more than {_mib(max_bytes)}" if size > max_bytes else _mib(size)
    return (
        f"the file is {what}{after}, over the limit of {_mib(max_bytes)}; "
        "use a sample of it, or the command line / Dask path for large data"
    )


_GZIP_MAGIC = b"\x1f\x8b"


def _gunzip(raw: bytes, max_bytes: int) -> bytearray:
    """Decompress every member of a gzip file (RFC 1952 allows several), at most ``max_bytes``.

    The input is fed in 64 KiB chunks: zlib copies the input left after a member into
    ``unused_data``, so feeding everything at once would copy the rest of the file once per
    member (quadratic on a BGZF file of 64 KiB members).
    """
    out = bytearray()
    view = memoryview(raw)
    pos, chunk = 0, 1 << 16
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    pending: bytes | memoryview = b""
    fed = False
    while True:
        if not pending:
            if pos >= len(raw):
                break
            pending, pos = view[pos:pos + chunk], pos + chunk
        try:
            # max_length ≥ 1 here (0 would mean "unlimited")
            out += d.decompress(pending, max_bytes + 1 - len(out))
        except zlib.error as exc:
            raise DataError(
                f"the file looks gzip-compressed but cannot be decompressed ({exc})"
            ) from None
        fed = True
        if len(out) > max_bytes or d.unconsumed_tail:
            raise DataError(_too_big(len(out), max_bytes, " after decompression"))
        pending = d.unused_data if d.eof else b""
        if d.eof:
            head = bytes(pending[:2]) + bytes(view[pos:pos + max(0, 2 - len(pending))])
            if head and head != _GZIP_MAGIC:
                rest = bytes(pending) + bytes(view[pos:])
                if rest.strip(b"\x00"):  # gzip(1) ignores trailing zero padding, nothing else
                    raise DataError("the gzip file has unexpected bytes after its last member")
                return out
            d, fed = zlib.decompressobj(16 + zlib.MAX_WBITS), False
    if fed and not d.eof:
        raise DataError("the gzip file is truncated (its end is missing); download or "
                        "compress it again")
    return out


# Byte-order marks, longest first (UTF-32 LE starts like UTF-16 LE).
_BOMS = [
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
]


def _sniff_encoding(raw: bytes) -> str | None:
    """The encoding a BOM names, UTF-16 recognised by NULs in every other byte, or None."""
    for bom, enc in _BOMS:
        if raw.startswith(bom):
            return enc
    head = raw[:4096]
    if len(head) >= 4 and b"\x00" in head:
        even, odd = head[0::2], head[1::2]
        if odd.count(0) > 0.9 * len(odd) and even.count(0) < 0.1 * len(even):
            return "utf-16-le"
        if even.count(0) > 0.9 * len(even) and odd.count(0) < 0.1 * len(odd):
            return "utf-16-be"
    return None


def _decode(raw: bytes) -> str:
    enc = _sniff_encoding(raw)
    if enc is not None and enc != "utf-8-sig":
        name = enc.upper().replace("-LE", " LE").replace("-BE", " BE")
        try:
            text = raw.decode(enc)
        except UnicodeDecodeError as exc:
            raise DataError(
                f"the file looks like {name} text but byte {exc.start} cannot be decoded; "
                "save it as UTF-8 CSV"
            ) from None
        if "\x00" in text:
            raise DataError(f"the file decodes as {name} text but contains NUL characters; "
                            "save it as UTF-8 CSV")
        return text
    if b"\x00" in raw[:65536]:
        raise DataError(
            "the file contains binary data (NUL bytes), not text: upload a CSV/TSV text file "
            "(UTF-8 or UTF-16) or a Parquet file"
        )
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataError(
            f"the file is not valid UTF-8 text (undecodable byte at position {exc.start}); "
            "save it as UTF-8 CSV"
        ) from None


def _float_or_nan(value: Any) -> float:
    try:
        return float(value)
    except OverflowError:  # a Python int beyond the float range
        return -math.inf if value < 0 else math.inf
    except (TypeError, ValueError):
        return math.nan


def _numbers_beyond_int64(df: pd.DataFrame) -> pd.DataFrame:
    """Text columns that hold only numbers too long for int64 (10⁴⁰⁰) as float64 (±inf beyond
    the float range): they are numeric, and :func:`to_matrix` then names their row."""
    for c in df.columns[[dt is np.dtype(object) for dt in df.dtypes]]:
        col = df[c]
        try:
            pd.to_numeric(col)
            continue  # numeric after all, or ...
        except OverflowError:
            pass
        except (ValueError, TypeError):
            continue  # ... text: left as it is
        as_float = col.map(_float_or_nan)
        if not (as_float.isna() & col.notna()).any():
            df[c] = as_float.astype(float)
    return df


def _head_lines(text: str, k: int, *, skip_blank: bool = True) -> list[str]:
    """The first ``k`` (non-blank) lines, without splitting the whole text (200 MiB uploads)."""
    out: list[str] = []
    start = 0
    for m in _LINE_END.finditer(text):  # lazy: stops after k lines
        line, start = text[start:m.start()], m.end()
        if line.strip() or not skip_blank:
            out.append(line)
            if len(out) >= k:
                return out
    if text[start:].strip() or (not skip_blank and start < len(text)):
        out.append(text[start:])
    return out[:k]


def _sniff_delimiter(text: str, name: str) -> str:
    if name.endswith((".tsv", ".tab")):
        return "\t"
    head = "\n".join(_head_lines(text, 50, skip_blank=False))
    try:
        return csv.Sniffer().sniff(head, delimiters=_DELIMITERS).delimiter
    except csv.Error:
        return ","


def _parse_text(text: str, name: str) -> pd.DataFrame:
    if not text.strip():
        raise DataError("the file is empty")
    delim = _sniff_delimiter(text, name)
    header_line = _head_lines(text, 1)[0]
    header = next(csv.reader([header_line], delimiter=delim))
    dupes = sorted(c for c, m in Counter(h.strip() for h in header).items() if m > 1)
    if dupes:
        raise DataError(f"duplicate column names: {', '.join(map(repr, dupes))}; rename them")
    try:
        with warnings.catch_warnings():
            # index_col=False: a header one field shorter than the rows must not make the first
            # field an index and shift every column (issue 26); pandas warns, we refuse
            warnings.simplefilter("error", pd.errors.ParserWarning)
            df = pd.read_csv(
                io.StringIO(text), sep=delim, keep_default_na=False, na_values=_NA_TOKENS,
                skipinitialspace=True, index_col=False,
            )
    except pd.errors.ParserWarning:
        raise DataError(f"the header names {len(header)} column(s) but the rows have more "
                        "fields: add the missing column name(s) to the first line") from None
    except pd.errors.ParserError as exc:
        raise DataError(f"the file is not a well-formed table: {exc}") from None
    df = _numbers_beyond_int64(df)
    if df.shape[1] == 1:
        # Only a character that splits the header *and* the first data line into the same
        # number of fields is a missed delimiter ("Sepal Length" over "5.1" is one column).
        lines = [line.strip() for line in _head_lines(text, 2)]
        first = lines[1] if len(lines) > 1 else ""
        others = [d for d in _DELIMITERS + " " if d != delim and d in lines[0]
                  and len(lines[0].split(d)) == len(first.split(d)) > 1]
        if others:
            shown = ", ".join({"\t": "tab", " ": "spaces"}.get(d, repr(d)) for d in others)
            raise DataError(
                f"only one column was found, but the header contains {shown}: the delimiter "
                "was probably not recognised; use comma, tab, semicolon or | consistently"
            )
    return df


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
            try:
                df = pd.read_parquet(io.BytesIO(raw))
            except Exception as exc:  # pyarrow raises many types; all mean "not readable"
                raise DataError(
                    f"the Parquet file cannot be read ({type(exc).__name__}: {exc})"
                ) from None
        else:
            df = _parse_text(_decode(raw), name)
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


def numeric_columns(df: pd.DataFrame) -> list[str]:
    """Names of the columns with a numeric (non-boolean) dtype."""
    return [
        str(c)
        for c in df.columns
        if pd.api.types.is_numeric_dtype(df[c]) and not pd.api.types.is_bool_dtype(df[c])
    ]


def to_matrix(df: pd.DataFrame, columns: Sequence[str] | None = None) -> np.ndarray:
    """The chosen numeric columns as a float64 matrix of shape (n, len(columns)).

    Parameters
    ----------
    df : DataFrame
    columns : sequence of str, optional
        Default: every numeric column.

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
    missing = [c for c in columns if c not in names]
    if missing:
        raise DataError(f"unknown column(s): {', '.join(map(repr, missing))}")
    out = np.empty((df.shape[0], len(columns)), dtype=float)
    for j, c in enumerate(columns):
        col = df[names[c]]
        if pd.api.types.is_bool_dtype(col):
            raise DataError(f"column {c!r} is boolean, not numeric")
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
        arr = values.to_numpy(dtype=float, na_value=np.nan)
        n_bad = int((~np.isfinite(arr)).sum())
        if n_bad:
            i = int(np.flatnonzero(~np.isfinite(arr))[0])
            shown = str(col.iloc[i])
            shown = shown if len(shown) <= 24 else f"a number of {len(shown)} characters"
            hint = ("" if np.isnan(arr[i]) else f": {shown}, infinite or beyond the float range; "
                    "|value| ≤ 1e100 is supported")
            raise DataError(
                f"column {c!r} has {n_bad} missing, NaN or infinite value(s) (first in data row "
                f"{i + 1}{hint}); drop or fill them first"
            )
        out[:, j] = arr
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

