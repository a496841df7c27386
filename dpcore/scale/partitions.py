"""Reading partitioned data for the Dask path: partitions, centring and clipping, seeds.

:func:`_partitions` turns Parquet / CSV paths, Dask collections or in-memory arrays into one
Dask delayed object per row partition (with the file each came from, for error messages);
:func:`_centred`, :func:`_matrix` and :func:`_stats_part` read one partition on a worker
(centred on the declared centre, checked for non-finite values, clipped to the radius);
:func:`partition_seeds` gives every partition its own reproducible random stream. Used by
:mod:`dpcore.scale.sampling` and :mod:`dpcore.scale.lloyd`; overview in
:mod:`dpcore.scale.dask_kmeans`.
"""

from __future__ import annotations

import glob
import gzip
import warnings
import zlib
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.core.errors import DataError
from dpcore.core.rng import RNGLike
from dpcore.data.geometry import clip_to_ball, row_norms
from dpcore.data.limits import MAX_ABS_VALUE, check_decoded_size, session_memory_bytes
from dpcore.data.missing import MISSING_MARKERS, apply_missing, check_missing_rule, refused_missing
from dpcore.data.readers import _NA_TOKENS, _too_big, parse_numbers
from dpcore.data.tables import column_problem
from dpcore.privacy.guarantees import PrivacyLeakWarning
from dpcore.scale.errors import PartitionError
from dpcore.scale.errors import Parts as _Parts
from dpcore.scale.errors import files_of as _files_of

__all__ = ["Progress", "partition_seeds"]

Progress = Callable[[str], None] | None


# --------------------------------------------------------------------------------------------
# Partitions
# --------------------------------------------------------------------------------------------


def _numeric(dtype: Any) -> bool:
    """The in-memory loader's column rule (:func:`dpcore.data.tables.column_problem`)."""
    return column_problem(dtype) is None


def _refuse_columns(dtypes: Any, where: str = "", *, text_ok: bool = False) -> None:
    """A chosen column the in-memory loader refuses (a boolean, text) is refused here too.

    ``text_ok``: a CSV's text column is judged per partition, after :func:`parse_numbers`
    (30-digit integers, numbers with ``NA`` markers), as the in-memory reader does."""
    for name, dtype in dtypes.items():
        why = column_problem(dtype)
        if why is not None and not (text_ok and why.startswith("text")):
            raise ValueError(f"{where}column {str(name)!r} is {why}")


def _check_parquet_size(files: list[str], npartitions: int, d: int) -> None:
    """A partition's decoded size (rows × chosen columns × 8 bytes) within the session memory
    budget, read from the Parquet footers before any partition is materialised (issue 26: the
    1.4 MB file that decodes to 40 M rows)."""
    import pyarrow.parquet as pq

    for f in files:
        try:
            meta = pq.ParquetFile(f).metadata
        except Exception as exc:  # pyarrow raises many types; all mean "not readable"
            if not f.endswith((".parquet", ".pq", ".parq")):
                continue  # another file in the folder (a result.json): Dask skips it too
            raise ValueError(f"file {f!r} cannot be read as Parquet: it is truncated or "
                             f"damaged ({type(exc).__name__}: {str(exc)[:200]})") from None
        rows = meta.num_rows if npartitions <= len(files) else max(
            (meta.row_group(i).num_rows for i in range(meta.num_row_groups)), default=0)
        try:
            check_decoded_size(rows, d, f"a partition of file {f!r}")
        except DataError as exc:
            raise ValueError(str(exc)) from None


def _check_gzip_size(files: list[str]) -> None:
    """Each ``.csv.gz`` file (one partition: gzip cannot be split) decompressed in a stream, and
    refused as soon as its text exceeds the session memory budget, or its lines × columns × 8
    bytes do (the in-memory reader's bound, :func:`check_decoded_size`): a 1 MB gzip bomb that
    inflates to gigabytes is stopped after budget + 1 MiB of output, never materialised."""
    budget = session_memory_bytes()
    for f in files:
        if not f.endswith(".gz"):
            continue
        size, lines, width = 0, 0, 0
        try:
            with gzip.open(f, "rb") as fh:
                while chunk := fh.read(1 << 20):  # bounded output per call (max_length)
                    if not width:
                        width = chunk.split(b"\n", 1)[0].count(b",") + 1
                    size, lines = size + len(chunk), lines + chunk.count(b"\n")
                    if size > budget:
                        raise ValueError(f"file {f!r}: " + _too_big(size, budget, " after "
                                         "decompression").replace("the file is ", "it is "))
                    check_decoded_size(lines, width, f"a partition of file {f!r}")
        except DataError as exc:
            raise ValueError(str(exc)) from None
        except (OSError, EOFError, zlib.error) as exc:  # BadGzipFile is an OSError
            raise ValueError(f"file {f!r} cannot be decompressed as gzip: it is truncated or "
                             f"damaged ({type(exc).__name__}: {str(exc)[:200]})") from None


def _read_csv(source: Any, blocksize: str | None) -> Any:
    """CSV partitions with the in-memory reader's missing cells.

    Dask fixes each column's type from a sample of the first file. A column that is numeric
    there is read as float64 in every partition with the missing-value markers (``NA``, ``-``,
    …) as missing cells — what :func:`parse_numbers` makes of a number column with markers —
    so a marker or a 30-digit integer in a later file is no "Mismatched dtypes" error; a text
    column stays text, for :func:`parse_numbers` per partition (Namibia's "NA" stays text).
    """
    import dask.dataframe as dd

    sample = dd.read_csv(source, blocksize=blocksize, keep_default_na=False,
                         na_values=_NA_TOKENS)
    numbers = [c for c, t in sample.dtypes.items() if _numeric(t)]
    na = {c: [*_NA_TOKENS, *MISSING_MARKERS] if c in numbers else _NA_TOKENS
          for c in sample.columns}
    dtype = dict.fromkeys(numbers, "float64")
    if blocksize is not None:
        return dd.read_csv(source, blocksize=blocksize, keep_default_na=False, na_values=na,
                           dtype=dtype)
    # gzip: one partition per file, each bounded on its worker before pandas inflates it (no
    # extra pass over every file on the driver)
    from dask import delayed

    meta = sample._meta.astype(dtype)
    return dd.from_delayed([delayed(_read_gz_part)(f, na, dtype) for f in _files_of(source)],
                           meta=meta, verify_meta=False)


def _read_gz_part(path: str, na: dict, dtype: dict) -> Any:
    """One ``.csv.gz`` partition: its decompressed size bounded in a stream, then parsed."""
    import pandas as pd

    _check_gzip_size([path])
    return pd.read_csv(path, compression="gzip", keep_default_na=False, na_values=na,
                       dtype=dtype)


def _prepared(part: Any, names: list[str], rule: dict[str, Any], csv: bool) -> Any:
    """One partition as the in-memory loader reads it: a CSV's text columns parsed by the shared
    :func:`parse_numbers`, then the missing-cells rule applied to its rows (drop / fill act on
    each row alone, so applying them per partition is applying them to the table)."""
    if csv and not all(map(_numeric, part.dtypes)):  # only text needs parsing (no copy)
        part = parse_numbers(part.copy())
    if rule:
        part = apply_missing(part, names, rule)[0]
    return part


def _partitions(data: Any, columns: Sequence[str] | Sequence[int] | None,
                missing: Any = None) -> tuple[list, int]:
    """The data as a list of Dask delayed objects, one per row partition, and its width d.

    ``data`` is a Parquet file / directory / glob or a CSV file / glob (str or Path, or a list
    of them), a Dask DataFrame, a 2-D Dask Array, or an in-memory array or pandas DataFrame
    (split into blocks of 100 000 rows).
    """
    import dask.array as da
    import dask.dataframe as dd
    from dask import delayed

    wanted = missing  # the rule (``missing`` below names absent columns)
    paths = [data] if isinstance(data, str | Path) else data
    origins, csv = None, False
    if isinstance(paths, list | tuple) and paths and all(isinstance(p, str | Path) for p in paths):
        source = [str(p) for p in paths]
        for path in source:
            if not (glob.glob(path) if any(c in path for c in "*?[") else Path(path).exists()):
                raise ValueError(f"cannot read {path!r}: no such file, directory or matching "
                                 "files")
        source = source[0] if len(source) == 1 else source
        first = source if isinstance(source, str) else source[0]
        try:
            # all columns first (lazy: only the schema is read), so that a missing column is
            # named with the ones the files have, not reported as an unreadable file
            if first.endswith((".csv", ".csv.gz")):  # gzip cannot be split: one partition/file
                csv = True
                # the in-memory reader's missing cells ("NA" stays text until parse_numbers
                # sees numbers around it: Namibia's code is not a missing cell)
                data = _read_csv(source, "64MB" if not first.endswith(".gz") else None)
            else:
                data = dd.read_parquet(source)
        except Exception as exc:  # pyarrow / fsspec raise many types; all mean "not readable"
            raise ValueError(f"cannot read {source!r} as Parquet or CSV "
                             f"({type(exc).__name__}: {exc})") from None
        files = _files_of(source)
        if len(files) == data.npartitions:  # one partition per file: name the file in errors
            origins = files
        if columns:
            missing = [c for c in columns if c not in data.columns]
            if missing:
                raise ValueError(f"column(s) {missing} not found in {source!r}; its columns are "
                                 f"{[str(c) for c in data.columns][:50]}")
        if not first.endswith((".csv", ".csv.gz")):
            width = len(columns) if columns else sum(map(_numeric, data.dtypes))
            _check_parquet_size(files, data.npartitions, max(1, width))
    if isinstance(data, np.ndarray):
        data = da.from_array(np.asarray(data, dtype=np.float64), chunks=(100_000, -1))
    if type(data).__module__.startswith("pandas") and hasattr(data, "columns"):
        data = dd.from_pandas(data, chunksize=100_000)
    if isinstance(data, dd.DataFrame):
        if columns:
            missing = [c for c in columns if c not in data.columns]
            if missing:
                raise ValueError(f"unknown column(s) {missing}; the data has {list(data.columns)}")
            data = data[list(columns)]
            _refuse_columns(data.dtypes, text_ok=csv)
        else:
            head = data._meta
            if csv:  # the first 1000 rows, not the whole first partition (dask's head)
                import pandas as pd

                head = parse_numbers(pd.read_csv(files[0], nrows=1000, keep_default_na=False,
                                                 na_values=_NA_TOKENS))
            names = [c for c, t in head.dtypes.items() if _numeric(t)]
            if not names:
                raise ValueError("the data has no numeric column")
            data = data[names]
        rule = check_missing_rule(wanted, [str(c) for c in data.columns])  # a ValueError
        parts = data.to_delayed()
        if csv or rule:
            names = [str(c) for c in data.columns]
            # a partial: Dask would traverse (and rebuild) a dict argument as a task
            prepare = delayed(partial(_prepared, names=names, rule=rule, csv=csv), pure=True)
            parts = [prepare(p) for p in parts]
        parts = _Parts(parts)
        parts.origins = origins
        return parts, len(data.columns)
    if wanted:
        raise ValueError("a missing-cells rule names columns: give a table (CSV, Parquet, a "
                         "DataFrame), not an array")
    if isinstance(data, da.Array):
        if data.ndim != 2:
            raise ValueError(f"a Dask array must be 2-D (rows, features), got shape {data.shape}")
        if columns:
            bad = [c for c in columns if not isinstance(c, int) or not -data.shape[1] <= c
                   < data.shape[1]]
            if bad:
                raise ValueError(f"columns {bad} are not positions of the array's "
                                 f"{data.shape[1]} columns")
            data = data[:, list(columns)]
        return _Parts(data.rechunk({1: -1}).to_delayed()[:, 0]), int(data.shape[1])
    raise TypeError("data must be Parquet/CSV paths, a Dask DataFrame or Array, a numpy array "
                    f"or a pandas DataFrame; got {type(data).__name__}")


def _centred(part: Any, index: int, center: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """One partition as float64 rows centred on the declared centre, and its squared norms.

    Non-finite values are refused; the check runs on the squared norms (NaN and ±inf propagate
    into them), so no (n, d) temporary is needed on the fast path.
    """
    names = [str(c) for c in part.columns] if hasattr(part, "columns") else None
    if hasattr(part, "dtypes") and names is not None:  # a file whose types differ from meta
        for name, dtype in zip(names, part.dtypes, strict=True):
            why = column_problem(dtype)
            if why is not None:
                raise PartitionError(f"column {name!r} is {why}", index)
    try:
        M = part.to_numpy(dtype=np.float64) if hasattr(part, "to_numpy") else np.asarray(
            part, dtype=np.float64)
    except (TypeError, ValueError):
        raise PartitionError("a chosen column holds non-numeric values; choose numeric "
                             "columns", index) from None
    if M.ndim != 2:
        raise PartitionError(f"not 2-D (shape {M.shape})", index)
    if center is not None:
        M = M - center
    # |x| ≤ 1e100 (dpcore.data.limits) keeps every squared norm finite; NaN fails the test too
    ok = np.abs(M) <= MAX_ABS_VALUE
    if not ok.all():
        j = int(np.flatnonzero(~ok.all(axis=0))[0])
        col = f"column {names[j]!r}" if names else f"column {j + 1}"
        bad = int((~ok[:, j]).sum())
        nan = np.isnan(M[:, j])
        if nan.any() and names:  # a table: the in-memory loader's refusal (no rule here)
            raise PartitionError(refused_missing(names[j], int(nan.sum()),
                                                 f"row {int(np.flatnonzero(nan)[0]) + 1} of "
                                                 "this partition"), index)
        raise PartitionError(f"{col} has {bad} missing, NaN, infinite or out-of-range "
                             "(|value| > 1e100 after centring) value(s); drop, fill or rescale "
                             "them first", index)
    return M, row_norms(M, squared=True)


def _matrix(part: Any, index: int, radius: float, center: np.ndarray | None) -> np.ndarray:
    """One partition centred on the declared centre and clipped to the radius."""
    return clip_to_ball(_centred(part, index, center)[0], radius)


def _stats_part(part: Any, index: int, radius: float, center: np.ndarray | None):
    """Pass 1: rows, columns and Σ ‖clip(x)‖² = Σ min(‖x‖², r²) of one partition."""
    M, sq = _centred(part, index, center)
    return M.shape[0], M.shape[1], float(np.minimum(sq, radius * radius).sum())


def partition_seeds(rng: RNGLike, npartitions: int) -> tuple[np.random.SeedSequence, list]:
    """Root SeedSequence and one independent child per partition (``root.spawn(npartitions)``).

    An int seed gives the same streams on every run and every cluster layout with the same
    partitioning; a Generator contributes fresh entropy drawn from it.
    """
    if isinstance(rng, np.random.SeedSequence):
        root = rng
    elif isinstance(rng, np.random.Generator):
        root = np.random.SeedSequence(rng.integers(0, 2**63, size=4).tolist())
    else:
        root = np.random.SeedSequence(None if rng is None else int(rng))
    return root, root.spawn(int(npartitions))


def _say(progress: Progress, message: str) -> None:
    if progress is not None:
        progress(message)


def _leak(message: str) -> None:
    warnings.warn(message, PrivacyLeakWarning, stacklevel=3)


def _check_columns(dims: set[int]) -> None:
    if len(dims) > 1:
        raise ValueError(f"partitions have different numbers of columns: {sorted(dims)}")
