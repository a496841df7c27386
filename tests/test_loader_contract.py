"""Issue 26's loader contract, the Dask guards and the download writer (each test fails on main,
commit 1634afc, and names the bug it catches).

* the Parquet bomb (40 M rows × 8 zero columns, dictionary/zstd, ~1.4 MB) refused from its
  metadata in seconds with the process RSS under +300 MB (main decoded it: 9 GB);
* a truncated Parquet file named in a DataError (main: a raw ``ArrowInvalid`` text);
* every column left out said why (30-digit integers, ``NA``/``N/A``/``-``, booleans);
* a row longer than the header named by its line;
* in-memory and Dask loaders refuse the same boolean column (main: Dask used it as 0/1);
* Dask calls have a deadline and give up when the cluster has no worker;
* a CSV download with a column named ``"\\r=3"`` keeps one header line.
"""

from __future__ import annotations

import io
import resource
import time

import numpy as np
import pandas as pd
import pytest

from dpcore.data.tables import DataError, column_report, load_table, numeric_columns, to_matrix


def _rss_mib() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _bomb(path) -> None:
    """40 M rows × 8 zero columns, written row group by row group (never 40 M rows in memory)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    block = pa.table({f"c{j}": pa.array(np.zeros(4_000_000)) for j in range(8)})
    with pq.ParquetWriter(path, block.schema, compression="zstd", use_dictionary=True) as w:
        for _ in range(10):
            w.write_table(block, row_group_size=4_000_000)


@pytest.mark.slow
def test_parquet_bomb_refused_in_seconds_without_decoding(tmp_path):
    """Bug caught: the Parquet branch decoding the whole file before any size check."""
    path = tmp_path / "bomb.parquet"
    _bomb(path)
    raw = path.read_bytes()
    assert len(raw) < 4 * 2**20  # a small upload (~1.4 MB with pyarrow's writer)
    before = _rss_mib()
    t0 = time.perf_counter()
    with pytest.raises(DataError, match=r"40,000,000 rows × 8 columns.*memory budget"):
        load_table(raw, filename="bomb.parquet")
    assert time.perf_counter() - t0 < 5
    assert _rss_mib() - before < 300


def test_truncated_parquet_is_named_not_a_raw_arrow_error():
    """Bug caught: ``ArrowInvalid: Parquet magic bytes not found`` shown as it is, no name."""
    buf = io.BytesIO()
    pd.DataFrame({"a": np.arange(100.0), "b": np.arange(100.0)}).to_parquet(buf)
    raw = buf.getvalue()[:-40]
    with pytest.raises(DataError) as info:
        load_table(raw, filename="part7.parquet")
    text = str(info.value)
    assert "'part7.parquet'" in text and "truncated" in text
    assert not text.startswith("ArrowInvalid")


def test_every_left_out_column_says_why():
    """Bug caught: 30-digit integers and ``NA``/``N/A``/``-`` columns dropped without a word.
    Numbers are used (30 digits as floats; markers as missing cells, which the missing-cells
    rule then handles); what is left out (booleans, text) is reported with why."""
    df = load_table(b"big,na,slash,dash,flag,code\n"
                    b"123456789012345678901234567890,NA,1,-,true,NA\n"
                    b"2,3,N/A,4,false,DE\n5,6,7,8,true,FR\n")
    assert to_matrix(df, ["big"])[0, 0] == pytest.approx(1.2345678901234568e29)
    assert {"big", "na", "slash", "dash"} <= set(numeric_columns(df))
    with pytest.raises(DataError, match=r"'na' has 1 missing.*drop those rows or fill"):
        to_matrix(df, ["na"])
    np.testing.assert_array_equal(to_matrix(df, ["na", "dash"], missing={
        "na": "drop", "dash": {"fill": 0.0}}), [[3, 4], [6, 8]])
    why = column_report(df)
    assert set(why) == {"flag", "code"}
    assert "boolean" in why["flag"] and "'NA'" in why["code"]  # Namibia's code stays text
    assert set(numeric_columns(df)) | set(why) == set(map(str, df.columns))
    # a DataFrame handed over as it is: the markers are named as the reason
    raw = pd.DataFrame({"m": ["1", "N/A", "-", "2"]})
    assert "'-'" in column_report(raw)["m"] and "'N/A'" in column_report(raw)["m"]


def test_a_row_longer_than_the_header_is_named_by_its_line():
    """Bug caught: the parse shifting columns or refusing without saying where."""
    with pytest.raises(DataError, match=r"first on line 3"):
        load_table(b"a,b\n1,2\n3,4,5\n6,7\n")


def test_pyarrow_parse_keeps_pandas_strictness():
    """Bug caught: the fast parser inferring dates/booleans as numbers, or turning the country
    code "NA" into a missing cell, or keeping a header's leading space."""
    df = load_table(b"a, b,when,code\n1, 2,2020-01-01,NA\n3, 4,2021-01-01,DE\n")
    assert list(df.columns) == ["a", "b", "when", "code"]
    assert numeric_columns(df) == ["a", "b"]
    assert list(df["code"]) == ["NA", "DE"]
    np.testing.assert_array_equal(to_matrix(df), [[1, 2], [3, 4]])


def test_csv_size_is_bounded_before_parsing(monkeypatch):
    """Bug caught: a CSV whose rows × columns exceed the memory budget parsed anyway."""
    monkeypatch.setenv("DPCORE_SESSION_MEMORY_MB", "16")
    raw = ("a,b,c,d\n" + "1,2,3,4\n" * 600_000).encode()
    with pytest.raises(DataError, match="memory budget"):
        load_table(raw)


# ------------------------------------------------------------------ the Dask path, same rules


def test_dask_refuses_a_boolean_column_like_the_in_memory_loader(tmp_path):
    """Bug caught: a Dask partition with a boolean column used as 0/1."""
    pytest.importorskip("dask.dataframe")
    import dask

    from dpcore.scale import dask_kmeans as scale

    df = pd.DataFrame({"a": np.linspace(0, 1, 50), "flag": np.arange(50) % 2 == 0})
    df.to_parquet(tmp_path / "p0.parquet")
    with pytest.raises(DataError, match="boolean"):
        to_matrix(df, ["a", "flag"])
    with dask.config.set(scheduler="synchronous"), pytest.raises(ValueError, match="boolean"):
        scale.dp_lloyd_on_partitions(str(tmp_path / "p0.parquet"), 2, epsilon=1.0, radius=5.0,
                                     columns=["a", "flag"], rng=0)


def test_dask_parquet_partition_checked_from_metadata(tmp_path, monkeypatch):
    """Bug caught: the Dask path materialising a partition larger than the memory budget."""
    pytest.importorskip("dask.dataframe")
    from dpcore.scale import dask_kmeans as scale

    pd.DataFrame(np.zeros((300_000, 8)), columns=[f"c{j}" for j in range(8)]).to_parquet(
        tmp_path / "big.parquet")
    monkeypatch.setenv("DPCORE_SESSION_MEMORY_MB", "16")
    with pytest.raises(ValueError, match=r"big\.parquet.*memory budget"):
        scale.dp_lloyd_on_partitions(str(tmp_path / "big.parquet"), 2, epsilon=1.0,
                                     radius=5.0, rng=0)


def _slow(x):
    time.sleep(30)
    return x


@pytest.mark.slow
def test_dask_gather_has_a_deadline_and_needs_workers():
    """Bug caught: ``Client.gather`` waiting for ever (a lost worker whose restart failed left
    the driver there for 20 minutes)."""
    pytest.importorskip("distributed")
    from dask import delayed
    from distributed import Client, LocalCluster

    from dpcore.scale.errors import ScaleError, gather

    with LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                      dashboard_address=":0") as lc, Client(lc) as client:
        t0 = time.perf_counter()
        with pytest.raises(ScaleError, match="did not finish within 2 s"):
            gather(client, [delayed(_slow)(1)], "pass 1", timeout=2)
        assert time.perf_counter() - t0 < 15
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as lc, \
            Client(lc) as client:
        t0 = time.perf_counter()
        with pytest.raises(ScaleError, match="no worker"):
            gather(client, [delayed(_slow)(1)], "pass 1", timeout=60, grace=2)
        assert time.perf_counter() - t0 < 15


# ------------------------------------------------------------------ downloads


def test_csv_download_quotes_a_carriage_return_in_a_header():
    """Bug caught: ``"\\r=3"`` written bare, splitting the header line in two."""
    from dpcore.app.export import csv_text

    df = pd.DataFrame({"\r=3": [1.0, 2.0], "b": ["x\ry", "z"]})
    text = csv_text(df)
    back = pd.read_csv(io.StringIO(text))
    assert back.shape == (2, 2)
    assert list(back.columns)[1] == "b" and back["b"].iloc[0].endswith("y")


def test_dask_truncated_parquet_file_is_named(tmp_path):
    """Bug caught: a truncated file among the partitions reported as a raw ``ArrowInvalid``
    without its name (issue 26, case 5)."""
    pytest.importorskip("dask.dataframe")
    from dpcore.scale import dask_kmeans as scale

    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(2):
        pd.DataFrame(np.random.default_rng(i).normal(size=(50, 2)), columns=["a", "b"]
                     ).to_parquet(folder / f"p{i}.parquet")
    (folder / "p1.parquet").write_bytes((folder / "p1.parquet").read_bytes()[:-30])
    with pytest.raises(ValueError, match=r"p1\.parquet"):
        scale.dp_lloyd_on_partitions(str(folder), 2, epsilon=1.0, radius=5.0, rng=0)
