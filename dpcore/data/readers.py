"""Bytes to a DataFrame: the readers behind :func:`dpcore.data.tables.load_table`.

One contract for every format (issue 26): the *decoded* size, rows × columns × 8 bytes, is
checked against the session memory budget (:func:`dpcore.data.limits.check_decoded_size`)
before a table is materialised — from the Parquet footer's metadata, or from a CSV's line
count — and every error is a :class:`~dpcore.core.errors.DataError` with one clear message
(a truncated Parquet file is named, never a raw ``ArrowInvalid``).

CSV is parsed by pyarrow's multi-threaded reader (issue 23.7: pandas' parser took 44 s on a
500 k × 54 upload); anything pyarrow refuses (ragged rows) is parsed again by pandas with the
strict options, so the messages (a header shorter than the rows, …) stay as specific as before.
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
from pathlib import Path
from typing import Any

import pandas as pd

from dpcore.core.errors import DataError
from dpcore.data.limits import check_decoded_size
from dpcore.data.missing import MISSING_MARKERS, marker_columns

_DELIMITERS = ",\t;|"
_LINE_END = re.compile(r"\r\n|\r|\n")
# Only these cells are missing: not pandas' default list, which turns Namibia's code "NA" into NaN.
_NA_TOKENS = ["", "nan", "NaN", "NAN", "-nan", "null", "NULL"]


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


def _header_fields(text: str, delim: str) -> list[str]:
    header_line = _head_lines(text, 1)[0]
    header = next(csv.reader([header_line], delimiter=delim))
    dupes = sorted(c for c, m in Counter(h.strip() for h in header).items() if m > 1)
    if dupes:
        raise DataError(f"duplicate column names: {', '.join(map(repr, dupes))}; rename them")
    return header


def _first_long_row(text: str, delim: str, width: int) -> int | None:
    """The 1-based line number of the first row with more fields than the header."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    try:
        for row in reader:
            if len(row) > width:
                return reader.line_num
    except csv.Error:  # a stray quote or NUL: the generic message names the problem
        return None
    return None


def _parse_with_pandas(text: str, delim: str, header: list[str]) -> pd.DataFrame:
    """The strict pandas parse (the fallback for what pyarrow refuses: ragged rows)."""
    try:
        with warnings.catch_warnings():
            # index_col=False: a header one field shorter than the rows must not make the first
            # field an index and shift every column (issue 26); pandas warns, we refuse
            warnings.simplefilter("error", pd.errors.ParserWarning)
            return pd.read_csv(
                io.StringIO(text), sep=delim, keep_default_na=False, na_values=_NA_TOKENS,
                skipinitialspace=True, index_col=False,
            )
    except (pd.errors.ParserWarning, pd.errors.ParserError) as exc:
        line = _first_long_row(text, delim, len(header))
        if line is None:
            raise DataError("the file is not a well-formed table: "
                            f"{' '.join(str(exc).split())}") from None
        raise DataError(f"the header names {len(header)} column(s) but a row has more "
                        f"fields (first on line {line}): add the missing column name(s) to the "
                        "first line, or remove the extra fields") from None


def _parse_with_arrow(data: bytes, delim: str) -> pd.DataFrame | None:
    """pyarrow's CSV reader with pandas' strictness; None when it refuses the file."""
    import pyarrow as pa
    from pyarrow import csv as pacsv

    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),  # no copy of the bytes
            read_options=pacsv.ReadOptions(block_size=1 << 24),
            # a line break inside a quoted cell needs the slower serial chunking; without any
            # quote character there is none
            parse_options=pacsv.ParseOptions(delimiter=delim,
                                             newlines_in_values=b'"' in data),
            convert_options=pacsv.ConvertOptions(
                null_values=_NA_TOKENS, strings_can_be_null=True,
                quoted_strings_can_be_null=True,
                # what pandas reads as text stays text: no dates, no timestamps
                timestamp_parsers=[], column_types=None),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    names = table.column_names
    # what pandas infers differently: dates stay text (pandas has no date inference here),
    # whitespace before a header name is dropped (pandas' skipinitialspace)
    cols = []
    for c in table.columns:
        if pa.types.is_date(c.type) or pa.types.is_timestamp(c.type) or pa.types.is_time(c.type):
            c = c.cast(pa.string())
        cols.append(c)
    table = pa.table(cols, names=[str(n).lstrip(" ") for n in names])
    return table.to_pandas()


def _parse_text(text: str, name: str, raw_utf8: bytes | None = None) -> pd.DataFrame:
    """A delimited text table; ``raw_utf8``: the same text as UTF-8 bytes, when at hand."""
    if not text or text.isspace():  # no stripped copy of a 200 MiB text
        raise DataError("the file is empty")
    delim = _sniff_delimiter(text, name)
    header = _header_fields(text, delim)
    # bounded before parsing: at most one row per line break
    n_lines = text.count("\n") or text.count("\r")
    check_decoded_size(n_lines + 1, len(header), "the file")
    data = raw_utf8 if raw_utf8 is not None else text.encode("utf-8")
    df = _parse_with_arrow(data, delim) if "\ufeff" not in text[:1] else None
    if df is None or any(n == "" or n is None for n in df.columns):
        df = _parse_with_pandas(text, delim, header)
    df = parse_numbers(df)
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


def parse_numbers(df: pd.DataFrame) -> pd.DataFrame:
    """The text columns that are numbers read as float64: 30-digit integers, and numbers with
    missing-value markers (``NA``, ``N/A``, ``-``) as missing cells. The one numeric parsing of
    every CSV loader (issue 26): the in-memory reader and each Dask partition
    (:mod:`dpcore.scale.partitions`) call it. Edits ``df`` in place and returns it."""
    return _markers_as_missing(_numbers_beyond_int64(df))


def _numbers_beyond_int64(df: pd.DataFrame) -> pd.DataFrame:
    """Text columns that hold only numbers too long for int64 (30 digits, 10⁴⁰⁰) as float64
    (±inf beyond the float range): they are numbers, used as floats (issue 26: a column of
    30-digit integers was left out without a word); :func:`to_matrix` names a ±inf row."""
    for c in df.columns[[not (pd.api.types.is_numeric_dtype(dt)
                              or pd.api.types.is_bool_dtype(dt)) for dt in df.dtypes]]:
        col = df[c]
        text = col.dropna()
        if text.empty or not text.map(lambda v: isinstance(v, str | int)
                                      and not isinstance(v, bool)).all():
            continue
        as_float = col.map(_float_or_nan)
        digits = text.map(lambda v: isinstance(v, int) or _INTEGER.fullmatch(v) is not None)
        if digits.all() and not (as_float.isna() & col.notna()).any():
            df[c] = as_float.astype(float)
    return df


def _markers_as_missing(df: pd.DataFrame) -> pd.DataFrame:
    """A column of numbers apart from missing-value markers (``NA``, ``N/A``, ``-``, …) becomes
    float64 with those cells missing (issue 26: it was left out without a word); the Data
    page's missing-cells rule then decides (:mod:`dpcore.data.missing`). A column with any
    other text (country codes such as Namibia's "NA") stays text."""
    for c, _markers in marker_columns(df).items():
        df[c] = pd.to_numeric(df[c].astype(object).where(
            ~df[c].astype(object).map(lambda v: isinstance(v, str)
                                      and v.strip() in MISSING_MARKERS)), errors="coerce")
    return df


_INTEGER = re.compile(r"\s*[+-]?\d+\s*")


def _float_or_nan(value: Any) -> float:
    if isinstance(value, str) and _INTEGER.fullmatch(value):
        value = int(value)
    try:
        return float(value)
    except OverflowError:  # a Python int beyond the float range
        return -math.inf if value < 0 else math.inf
    except (TypeError, ValueError):
        return math.nan


def read_parquet(raw: bytes, name: str) -> pd.DataFrame:
    """A Parquet file, refused from its footer's metadata when its decoded size exceeds the
    session memory budget (the 1.4 MB dictionary/zstd bomb of 40 M rows never decodes)."""
    import pyarrow.parquet as pq

    shown = f"the Parquet file {name!r}" if name else "the Parquet file"
    try:
        pf = pq.ParquetFile(io.BytesIO(raw))
        meta = pf.metadata
    except Exception as exc:  # pyarrow raises many types; all mean "not readable"
        raise DataError(f"{shown} cannot be read: it is truncated or not Parquet "
                        f"({type(exc).__name__}: {str(exc)[:200]})") from None
    check_decoded_size(meta.num_rows, meta.num_columns, shown)
    try:
        return pf.read().to_pandas()
    except Exception as exc:
        raise DataError(f"{shown} cannot be read: it is damaged "
                        f"({type(exc).__name__}: {str(exc)[:200]})") from None
