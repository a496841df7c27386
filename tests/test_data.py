"""Each kind of bad input gets its own clear message; good inputs of every format load."""

import gzip
import io
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.data.tables import (
    DataError,
    center,
    clip_rows,
    data_radius,
    drop_outside,
    load_matrix,
    load_table,
    numeric_columns,
    to_matrix,
)
from dpcore.privacy.guarantees import PrivacyLeakWarning

GOOD_CSV = b"x,y,name\n1.5,2,a\n3,4.25,b\n-1,0,c\n"


@pytest.mark.parametrize(
    ("content", "kwargs", "message"),
    [
        (b"", {}, "the file is empty"),
        (b"   \n\n", {}, "the file is empty"),
        (b"x,y\n", {}, "header but no data rows"),
        (b"name,city\nann,paris\nbob,rome\n", {}, "no numeric column"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", {}, "binary data"),
        (b"x,y\n1,2\n\xff\xfe,3\n", {}, "not valid UTF-8"),
        (b"x y z\n1 2 3\n4 5 6\n", {}, "only one column was found"),
        (b"x,x,y\n1,2,3\n4,5,6\n", {}, "duplicate column names: 'x'"),
        (b"x,y\n1,2\n", {}, "1 data row; at least 2"),
        (b"a,b,c,d\n1,2,3,4\n5,6,7,8\n", {"max_columns": 3}, "4 columns, more than the limit of 3"),
        (GOOD_CSV * 100, {"max_bytes": 1000}, "over the limit"),
        (b"PAR1garbage", {}, "Parquet file cannot be read"),
        (b"\x1f\x8bnot really gzip", {}, "cannot be decompressed"),
    ],
)
def test_bad_inputs_have_specific_messages(content, kwargs, message):
    with pytest.raises(DataError, match=message):
        load_matrix(content, **kwargs)


def test_non_numeric_value_in_chosen_column_names_row_and_value():
    df = load_table(b"x,y\n1,2\n3,oops\n5,6\n")
    with pytest.raises(
        DataError, match=r"column 'y' has non-numeric values, e.g. 'oops' in data row 2"
    ):
        to_matrix(df, ["x", "y"])


@pytest.mark.parametrize("cell", ["nan", "", "inf", "-inf"])
def test_nan_and_inf_refused(cell):
    df = load_table(f"x,y\n1,2\n3,{cell}\n5,6\n".encode())
    with pytest.raises(DataError, match="missing, NaN or infinite"):
        to_matrix(df, ["x", "y"])


def test_unknown_and_boolean_columns():
    df = pd.DataFrame({"x": [1.0, 2.0], "flag": [True, False]})
    with pytest.raises(DataError, match="unknown column"):
        to_matrix(df, ["z"])
    with pytest.raises(DataError, match="boolean"):
        to_matrix(df, ["flag"])
    assert numeric_columns(df) == ["x"]


def test_duplicate_columns_in_dataframe():
    df = pd.DataFrame([[1, 2], [3, 4]], columns=["a", "a"])
    with pytest.raises(DataError, match="duplicate"):
        load_table(df)


def test_file_not_found_and_wrong_type(tmp_path):
    with pytest.raises(DataError, match="file not found"):
        load_table(tmp_path / "missing.csv")
    with pytest.raises(DataError, match="cannot read a table from a int"):
        load_table(3)  # type: ignore[arg-type]


def test_good_formats_load_identically(tmp_path):
    expected = np.array([[1.5, 2.0], [3.0, 4.25], [-1.0, 0.0]])
    df = pd.DataFrame(expected, columns=["x", "y"])
    df_pq = io.BytesIO()
    df.to_parquet(df_pq)
    path = tmp_path / "t.csv"
    path.write_bytes(GOOD_CSV)
    sources = {
        "bytes": (GOOD_CSV, {}),
        "tsv": (GOOD_CSV.replace(b",", b"\t"), {"filename": "t.tsv"}),
        "semicolon": (GOOD_CSV.replace(b",", b";"), {}),
        "gzip": (gzip.compress(GOOD_CSV), {"filename": "t.csv.gz"}),
        "parquet": (df_pq.getvalue(), {"filename": "t.parquet"}),
        "stream": (io.BytesIO(GOOD_CSV), {}),
        "path": (path, {}),
        "dataframe": (df, {}),
        "bom": (b"\xef\xbb\xbf" + GOOD_CSV, {}),
    }
    for name, (src, kw) in sources.items():
        X = load_matrix(src, ["x", "y"], **kw)
        assert X.dtype == np.float64, name
        assert np.array_equal(X, expected), name


def test_namibia_is_not_missing():
    df = load_table(b"code,x\nNA,1\nFR,2\n")
    assert list(df["code"]) == ["NA", "FR"]


def test_loading_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    load_matrix(gzip.compress(GOOD_CSV), ["x", "y"])
    assert list(tmp_path.iterdir()) == []


def test_center_warns_only_when_read_off_the_data():
    X = np.array([[1.0, 2.0], [3.0, 6.0]])
    with pytest.warns(PrivacyLeakWarning, match="centring on the data mean"):
        Xc, c = center(X)
    assert np.allclose(c, [2.0, 4.0]) and np.allclose(Xc.mean(0), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Xc, c = center(X, [0.0, 1.0])
    assert np.allclose(Xc, X - [0.0, 1.0])
    with pytest.raises(DataError, match="2 coordinates"):
        center(X, [1.0])


def test_clip_and_drop():
    X = np.array([[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]])
    Y, n = clip_rows(X, 1.0)
    assert n == 1 and np.allclose(Y[0], [0.6, 0.8]) and np.array_equal(Y[1:], X[1:])
    kept, mask = drop_outside(X, 1.0)
    assert mask.tolist() == [False, True, True] and kept.shape == (2, 2)
    with pytest.raises(DataError, match="radius"):
        drop_outside(X, 0.0)


def test_data_radius_warns():
    X = np.array([[3.0, 4.0], [0.0, 1.0]])
    with pytest.warns(PrivacyLeakWarning, match="radius computed from the data"):
        assert data_radius(X) == 5.0
