"""One loader contract (issue 26): the Dask path accepts and refuses what the in-memory loader does.

For each small hostile file, :func:`dpcore.data.tables.load_table` + :func:`to_matrix` and the
Dask path (:func:`dpcore.scale.dask_kmeans.importance_sample`, every row kept: uniform q = 1)
give the same decision, and when both accept, the same matrix.
"""

from __future__ import annotations

import gzip

import dask
import numpy as np
import pytest

from dpcore.core.errors import DataError
from dpcore.data.tables import load_table, to_matrix
from dpcore.scale import dask_kmeans as scale

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.privacy.guarantees.PrivacyLeakWarning")

BIG = "123456789012345678901234567890"
# name: (file text, chosen columns, missing-cells rule, the refusal's words or None)
CASES = {
    # bug: Dask read "NA"/"-" as NaN and refused with its own words, or dropped the column
    "na_cells_refused": ("a,b\n1,2\nNA,3\n4,-\n5,6\n", None, None, "choose what to do"),
    # bug: Dask had no missing-cells rule (drop / fill)
    "na_cells_dropped": ("a,b\n1,2\nNA,3\n4,-\n5,6\n", ["a", "b"],
                         {"a": "drop", "b": "drop"}, None),
    "na_cells_filled": ("a,b\n1,2\nN/A,3\n4,-\n5,6\n", ["a", "b"],
                        {"a": {"fill": 0.5}, "b": {"fill": -1}}, None),
    "na_one_column_dropped_other_filled": ("a,b\n1,?\nNA,3\n4,5\n5,6\n", ["a", "b"],
                                           {"a": "drop", "b": {"fill": 0}}, None),
    # bug: Dask treated 30-digit integers as text (left out without a word, or refused)
    "thirty_digit_integers": (f"a,b\n{BIG},1\n2,3\n-{BIG},4\n", None, None, None),
    "thirty_digit_integers_chosen": (f"a,b\n{BIG},1\n2,3\n-{BIG},4\n", ["a", "b"], None, None),
    "thirty_digit_with_na": (f"a,b\n{BIG},1\nNA,3\n7,4\n", ["a", "b"], {"a": "drop"}, None),
    # bug: a boolean column used as 0/1 by one loader
    "booleans": ("a,flag\n1,true\n2,false\n3,true\n", ["a", "flag"], None, "boolean"),
    # bug: a text column of country codes ("NA" is Namibia) read as numbers with missing cells
    "text_with_na_code": ("a,country\n1,NA\n2,DE\n3,FR\n", ["a", "country"], None, "'country'"),
}


def _in_memory(path, columns, missing):
    try:
        return to_matrix(load_table(path), columns, missing=missing), None
    except (DataError, ValueError) as exc:
        return None, str(exc)


def _dask(path, columns, missing, n_rows):
    """Every row through the Dask path: uniform sampling with q = m/n = 1, a radius that clips
    nothing. ``n_rows``: the in-memory loader's count (declared, so a differing count fails)."""
    try:
        with dask.config.set(scheduler="synchronous"):
            rule = {"missing": missing} if missing else {}  # main had no such argument
            S = scale.importance_sample(str(path), n_rows or 1, radius=1e40, sampler="uniform",
                                        columns=columns, rng=0, n=n_rows or None, **rule)
        return S.X, None
    except (DataError, ValueError) as exc:
        return None, str(exc)


@pytest.mark.parametrize("gz", [False, True], ids=["csv", "csv.gz"])
@pytest.mark.parametrize("case", list(CASES))
def test_dask_and_in_memory_loaders_agree(tmp_path, case, gz):
    text, columns, missing, refusal = CASES[case]
    path = tmp_path / ("t.csv.gz" if gz else "t.csv")
    path.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    ref, ref_err = _in_memory(path, columns, missing)
    got, err = _dask(path, columns, missing, None if ref is None else len(ref))
    if refusal is None:
        assert ref_err is None and err is None, (ref_err, err)
        np.testing.assert_array_equal(got, ref)  # same rows, same order, same values
    else:
        assert ref is None and got is None, "one loader accepted what the other refused"
        assert refusal in ref_err and refusal in err, (ref_err, err)


def test_missing_refusal_has_the_in_memory_words(tmp_path):
    """Bug caught: the Dask path refusing a missing cell with different advice (the user is told
    to 'rescale' instead of choosing a missing-cells rule)."""
    path = tmp_path / "na.csv"
    path.write_text("a,b\n1,2\n3,NA\n")
    _, ref_err = _in_memory(path, None, None)
    _, err = _dask(path, None, None, None)
    tail = ref_err.split("a missing cell)")[1]
    assert tail and err.endswith(tail), (ref_err, err)


def test_gzip_bomb_partition_refused_by_both_without_inflating_it(tmp_path, monkeypatch):
    """Bug caught: the Dask path decompressing a whole ``.csv.gz`` partition (a few KB that
    inflate to 16 MiB of text, 4 M rows = 64 MiB as numbers, over a 16 MiB budget) before any
    bound; the in-memory loader refuses it from its line count."""
    monkeypatch.setenv("DPCORE_SESSION_MEMORY_MB", "16")
    path = tmp_path / "bomb.csv.gz"
    path.write_bytes(gzip.compress(b"a,b\n" + b"1,2\n" * (4 << 20), compresslevel=9))
    assert path.stat().st_size < 1 << 20
    inflated = []
    read = gzip.GzipFile.read

    def counting_read(self, size=-1):
        out = read(self, size)
        inflated.append(len(out))
        return out

    monkeypatch.setattr(gzip.GzipFile, "read", counting_read)
    _, ref_err = _in_memory(path, None, None)
    assert ref_err is not None and "budget" in ref_err
    inflated.clear()
    got, err = _dask(path, None, None, None)
    assert got is None and err is not None and "bomb.csv.gz" in err
    # stopped once 4 MiB of text (1 M rows × 2 × 8 B = 16 MiB as numbers) were seen
    assert sum(inflated) <= 6 << 20, f"{sum(inflated)} bytes inflated: not stopped early"


def test_missing_rule_reaches_kmeans_and_lloyd(tmp_path):
    """Bug caught: ``missing`` accepted by the sampler but not passed on by the pipelines."""
    path = tmp_path / "na.csv"
    rng = np.random.default_rng(0)
    rows = [f"{x:.3f},{y:.3f}" for x, y in rng.normal(size=(60, 2))]
    rows[5] = "NA,1.0"
    path.write_text("a,b\n" + "\n".join(rows) + "\n")
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match="choose what to do"):
            scale.dp_lloyd_on_partitions(str(path), 2, epsilon=1.0, radius=5.0, rng=0)
        res = scale.dp_lloyd_on_partitions(str(path), 2, epsilon=1.0, radius=5.0, rng=0,
                                           missing={"a": "drop"})
        assert res.cluster_centers_.shape == (2, 2)
        res = scale.kmeans(str(path), 2, epsilon=1.0, radius=5.0, sample_size=30, rng=0,
                           sampler="uniform", missing={"a": {"fill": 0}}, n=60)
        assert res.cluster_centers_.shape == (2, 2)


def test_bad_missing_rule_is_refused(tmp_path):
    """Bug caught: a rule naming a column that is not chosen silently ignored on Dask."""
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,2\n3,4\n")
    with pytest.raises(ValueError, match="not one of the chosen columns"):
        _partitions_only(path, ["a"], {"b": "drop"})


def _partitions_only(path, columns, missing):
    from dpcore.scale.partitions import _partitions

    return _partitions(str(path), columns, missing)


def test_run_configuration_missing_rule_reaches_the_dask_run(tmp_path, capsys):
    """Bug caught: ``dpcore run --dask`` dropping the configuration's ``data.missing`` (the
    rule validated, then ignored: the run refused the missing cell the rule handles)."""
    import json

    from dpcore import cli

    path = tmp_path / "na.csv"
    rng = np.random.default_rng(0)
    rows = [f"{x:.3f},{y:.3f}" for x, y in rng.normal(size=(60, 2))]
    rows[5] = "NA,1.0"
    path.write_text("a,b\n" + "\n".join(rows) + "\n")
    cfg, out = tmp_path / "cfg.json", tmp_path / "r.json"
    argv = ["-q", "run", "dplloyd", str(path), "--columns", "a", "b", "--radius", "4",
            "--epsilon", "2", "-k", "2", "--dask", "--seed", "1", "--out", str(out)]
    with dask.config.set(scheduler="synchronous"):
        assert cli.main(argv) != 0  # no rule: refused
        assert "choose what to do" in capsys.readouterr().err
        assert cli.main([*argv, "--save-config", str(cfg)]) != 0
        capsys.readouterr()
        doc = json.loads(cfg.read_text())
        doc["data"]["missing"] = {"a": "drop"}
        cfg.write_text(json.dumps(doc))
        code = cli.main(["-q", "run", "--config", str(cfg), "--dask", "--out", str(out)])
        assert code == 0, capsys.readouterr().err
    assert np.shape(json.loads(out.read_text())["released"]["centers"]) == (2, 2)


@pytest.mark.parametrize("second", ["5,NA\n7,8\n", f"5,{BIG}\n7,8\n"], ids=["na", "30_digits"])
def test_a_later_file_with_na_or_huge_integers_is_read_like_the_whole_table(tmp_path, second):
    """Bug caught: Dask fixing a column's type from the first file (int64) and failing with a
    raw "Mismatched dtypes" error on the file that holds ``NA`` or a 30-digit integer, where
    the in-memory loader reads the same rows as one table."""
    (tmp_path / "p1.csv").write_text("a,b\n1,2\n3,4\n")
    (tmp_path / "p2.csv").write_text("a,b\n" + second)
    (tmp_path / "all.csv").write_text("a,b\n1,2\n3,4\n" + second)
    rule = {"b": "drop"}
    ref, ref_err = _in_memory(tmp_path / "all.csv", ["a", "b"], rule)
    assert ref_err is None, ref_err
    got, err = _dask(tmp_path / "p*.csv", ["a", "b"], rule, len(ref))
    assert err is None, err
    np.testing.assert_array_equal(got, ref)
