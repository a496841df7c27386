"""Issue 14: values near the float limits, injection, URL state, memory bounds, loader and CLI
contract. Each test names the finding it pins (each failed before the fix)."""

from __future__ import annotations

import gzip
import json
import re
import shlex
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import cli
from dpcore.app.bounded_cache import ByteBoundedCache, nbytes_of, session_cache
from dpcore.app.suggest import parse_center_text, suggest_radius
from dpcore.app.url_state import app_query_spec, clean_query_params
from dpcore.core.text import csv_safe_frame, md_text
from dpcore.data import limits
from dpcore.data.geometry import clip_to_ball, nearest_center, row_norms, squared_distances
from dpcore.data.tables import MAX_UPLOAD_MIB, DataError, load_table, to_matrix
from dpcore.release import runconfig as rc

REPO = Path(cli.__file__).resolve().parents[2]  # dpcore/cli/__init__.py

# --------------------------------------------------------------------------- finding 1: numerics


def test_huge_rows_are_clipped_onto_the_sphere_not_to_zero():
    X = np.array([[1e300, 1e300], [2e300, -1e300], [3.0, 4.0]])
    Y, n = clip_to_ball(X, 1e300, return_count=True)
    assert n == 2
    np.testing.assert_allclose(row_norms(Y[:2]), [1e300, 1e300], rtol=1e-12)
    np.testing.assert_allclose(Y[:2] / row_norms(Y[:2])[:, None],
                               X[:2] / row_norms(X[:2])[:, None], rtol=1e-12)  # direction kept
    np.testing.assert_array_equal(Y[2], X[2])


def test_row_norms_exact_at_both_ends_of_the_float_range():
    X = np.array([[3e200, 4e200], [3e-200, 4e-200], [0.0, 0.0], [1.0, 1.0]])
    np.testing.assert_allclose(row_norms(X), [5e200, 5e-200, 0.0, np.sqrt(2)], rtol=1e-14)
    with pytest.raises(limits.ParameterError, match="squared row norms exceed"):
        row_norms(X[:1], squared=True)  # 2.5e401 is not a float: refused, never inf
    far, near = np.array([[1e154, 0.0]]), np.array([[-1e154, 0.0]])  # norms fine, distance not
    with pytest.raises(limits.ParameterError, match="squared distances exceed"):
        squared_distances(far, near)
    with pytest.raises(limits.ParameterError, match="squared distances exceed"):
        nearest_center(far, near)


def test_clip_to_ball_does_not_copy_when_nothing_is_clipped():
    X = np.random.default_rng(0).normal(size=(1000, 5))
    assert clip_to_ball(X, 100.0) is X  # 506 MiB saved on MNIST
    Y = clip_to_ball(X, 0.5)
    assert Y is not X and np.shares_memory(Y, X) is False


def test_prepare_matrix_refuses_values_outside_the_documented_range():
    df = pd.DataFrame({"a": [1e300, 2e300], "b": [1e300, -1e300]})
    with pytest.raises(DataError, match=r"column 'a' has 2 value\(s\) outside the supported "
                                        r"range \|value\| ≤ 1e100 \(first in data row 1"):
        rc.prepare_matrix(df, radius=1e300)
    with pytest.raises(DataError, match=r"radius must be between 1e-100 and 1e\+100"):
        rc.prepare_matrix(pd.DataFrame({"a": [1.0, 2.0]}), radius=1e300)
    with pytest.raises(DataError, match=r"center\[0\] = 1e\+308 is outside"):
        rc.prepare_matrix(pd.DataFrame({"a": [1.0, 2.0]}), center=[1e308])


def test_public_bounds_are_checked_per_column():
    lo, hi = limits.check_bounds([(-180, 180), (-90, 90)], ["lon", "lat"])
    assert lo.tolist() == [-180, -90] and hi.tolist() == [180, 90]
    for bad, message in [([(-1e308, 1e308)], "lower bound of column 'lon' must be between"),
                         ([(1, 0)], "bound of column 'lon': lower must be < upper"),
                         ([(0, float("nan"))], "upper bound of column 'lon' must be a number"),
                         ([(0,)], "give a (lower, upper) pair"), ("x", "must be a list")]:
        with pytest.raises(limits.ParameterError, match=re.escape(message)):
            limits.check_bounds(bad, ["lon"])


def test_integers_beyond_the_float_range_are_named_not_a_traceback():
    df = load_table(("a,b\n" + "1" + "0" * 400 + ",1\n2,3\n").encode())
    assert df["a"].dtype == float  # numeric, so the preview shows it and to_matrix names it
    for cols in (None, ["a"]):
        with pytest.raises(DataError, match=r"column 'a' .* data row 1: inf, infinite or "
                                            "beyond the float range"):
            to_matrix(df, cols)


@pytest.mark.parametrize("eps", [1e-300, 1e300, 0.0, -1.0, float("nan"), "1", None, True])
def test_dplloyd_epsilon_outside_the_range_is_a_clear_error(eps):
    from dpcore.mechanisms.lloyd.estimator import DPLloyd

    X = np.random.default_rng(0).normal(size=(50, 2))
    with pytest.raises(ValueError, match="epsilon"):
        DPLloyd(2, epsilon=eps, radius=3.0, rng=0).fit(X)


def test_friendly_mean_refuses_nan_beta():
    from dpcore.mechanisms.friendlycore import friendly_mean

    X = np.random.default_rng(0).normal(size=(200, 2))
    with pytest.raises(ValueError, match="beta must be a number, got NaN"):
        friendly_mean(X, epsilon=1.0, delta=1e-6, beta=float("nan"), r_min=1e-3, r_max=1e3,
                      rng=0, check_size=False)


# ------------------------------------------------------------------------ finding 2: suggestions


@pytest.mark.filterwarnings("ignore:a radius computed from the data")
def test_suggested_radius_is_never_nan_and_says_why():
    s = suggest_radius(pd.DataFrame({"a": [1e308, -1e308], "b": [1e308, 1.0]}))
    assert s.value is None and "outside the supported range" in s.message
    s = suggest_radius(pd.DataFrame({"a": [0.0, 0.0]}))
    assert s.value is None and "every row equals the centre" in s.message
    X = pd.DataFrame({"a": np.arange(100.0), "b": np.zeros(100)})
    with pytest.warns(Warning, match="radius computed from the data"):
        s = suggest_radius(X)
    assert s.ok and s.value >= np.quantile(np.arange(100.0), 0.99)  # rounded up, holds q99
    assert parse_center_text("1e308, 0", 2).value is None
    assert parse_center_text("nan, 0", 2).message == "centre[0] must be a number, got NaN"
    assert parse_center_text(" 1 ; 2 ", 2).value == [1.0, 2.0]


# --------------------------------------------------------------------- finding 4: memory budget


def test_budget_derives_limits_and_api_bounds(monkeypatch):
    monkeypatch.setenv(limits.MEMORY_ENV, "64")
    lim = limits.resource_limits(100)
    assert lim.max_cells == 64 * 2**20 // 32 and lim.max_rows() == lim.max_cells // 100
    assert limits.resource_limits(1000).max_clusters < lim.max_clusters
    with pytest.raises(limits.ParameterError, match=r"n_clusters must be an integer from 1 "):
        limits.check_n_clusters(10**9, d=100)
    with pytest.raises(limits.ParameterError, match="n_iter must be an integer from 1 to 1,000"):
        limits.check_n_iter(10**6)
    with pytest.raises(limits.ParameterError, match=r"sample_size .* at most"):
        limits.check_sample_size(1e12, d=100)
    monkeypatch.setenv(limits.MEMORY_ENV, "lots")
    with pytest.raises(limits.ParameterError, match="DPCORE_SESSION_MEMORY_MB must be"):
        limits.session_memory_bytes()


def test_session_cache_evicts_by_bytes(monkeypatch):
    block = np.zeros(1000)  # 8000 bytes
    cache = ByteBoundedCache(3 * 8000 + 100)
    for i in range(5):
        assert cache.put(i, block.copy())
    assert list(cache._items) == [2, 3, 4] and cache.evictions == 2
    assert cache.nbytes <= cache.max_bytes
    cache.get(2)  # recently used: survives the next eviction
    cache.put("df", pd.DataFrame({"x": np.zeros(1000)}))
    assert 2 in cache and 3 not in cache
    assert not cache.put("huge", np.zeros(10_000)) and "huge" not in cache
    assert nbytes_of(block[:10]) == 8000  # a view pins its base
    monkeypatch.setenv(limits.MEMORY_ENV, "16")
    assert session_cache(0.5).max_bytes == 8 * 2**20


# ----------------------------------------------------------------------- findings 5–6: escaping

HOSTILE_NAMES = [
    "![t](http://127.0.0.1:9/x.png)",
    "[web](http://example.com)",
    "<img src=x onerror=alert(1)>",
    "www.example.com and a@b.com and http://x.y/z",
    "$x^2$ :red[red] **bold** _it_ # head",
    "back\\slash \\[x\\]",
    "line\nbreak\r<b>",
    "&lt;script&gt; &#x41;",
]


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_md_text_renders_as_literal_text(name):
    markdown_it = pytest.importorskip("markdown_it")
    pytest.importorskip("linkify_it")  # GFM autolinks (www.x, http://…) must stay text too
    md = markdown_it.MarkdownIt("gfm-like")  # CommonMark + tables + strikethrough + linkify
    html = md.render(md_text(name))
    assert "<a" not in html and "<img" not in html and "<b>" not in html and "<em" not in html
    import html as htmllib

    text = htmllib.unescape(re.sub(r"</?p>|\n", "", html)).replace("\u2060", "")
    assert text == re.sub(r"\r\n|\r|\n", " ", name)


def test_md_text_check_can_fail():
    markdown_it = pytest.importorskip("markdown_it")
    assert "<img" in markdown_it.MarkdownIt("gfm-like").render(HOSTILE_NAMES[0])


def test_csv_safe_frame_neutralises_formula_prefixes():
    df = pd.DataFrame({'=HYPERLINK("http://x","y")': [1.0, -2.0],
                       "=cmd|' /C calc'!A0": ["=1+1", "@SUM(A1)"],
                       "ok": ["-3", "\tx"]})
    out = csv_safe_frame(df)
    assert list(out.columns) == ["'=HYPERLINK(\"http://x\",\"y\")", "'=cmd|' /C calc'!A0", "ok"]
    assert out.iloc[:, 0].tolist() == [1.0, -2.0]  # numbers stay numbers
    assert out.iloc[:, 1].tolist() == ["'=1+1", "'@SUM(A1)"]
    assert out["ok"].tolist() == ["'-3", "'\tx"]
    assert next(iter(df.columns)).startswith("=")  # the input is not modified


def test_cli_csv_has_no_formula_in_headers(tmp_path, capsys):
    path = tmp_path / "t.csv"
    pd.DataFrame({"=HYPERLINK(\"http://x\",\"y\")": np.arange(20.0), "b": np.ones(20)}).to_csv(
        path, index=False)
    out = tmp_path / "r.csv"
    code = cli.main(["-q", "run", "dplloyd", str(path), "--radius", "50", "--epsilon", "1",
                     "-k", "2", "--seed", "0", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    header = out.read_text().splitlines()[0]
    assert header.startswith("\"'=HYPERLINK") and header.endswith(",b,algorithm,guarantee")


# ---------------------------------------------------------------------- finding 7: data loading


def test_multi_member_gzip_reads_every_member():
    raw = gzip.compress(b"a,b\n" + b"1,2\n" * 100) + gzip.compress(b"3,4\n" * 100)
    assert load_table(raw, filename="x.csv.gz").shape == (200, 2)
    with pytest.raises(DataError, match="truncated"):
        load_table(raw[:-8])
    with pytest.raises(DataError, match="after decompression, over the limit of 1 MiB"):
        load_table(gzip.compress(b"0" * 3 * 2**20), max_bytes=2**20)


def test_many_gzip_members_are_read_in_linear_time():
    import time

    members = [gzip.compress(b"%d,%d\n" % (i, -i)) for i in range(60_000)]  # BGZF-like
    raw = gzip.compress(b"a,b\n") + b"".join(members)
    t0 = time.perf_counter()
    df = load_table(raw)
    assert df.shape == (60_000, 2) and df["b"].iloc[-1] == -59_999
    # fed in 64 KiB chunks: ~0.5 s loaded; zlib's unused_data copy per member made it quadratic
    assert time.perf_counter() - t0 < 20


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-8-sig",
                                      "utf-32"])
def test_utf16_and_boms_are_decoded(encoding):
    df = load_table("größe,b\n1,2\n3,4\n".encode(encoding))
    assert list(df.columns) == ["größe", "b"] and df.shape == (2, 2)


def test_one_column_with_a_space_in_its_name_is_a_table_not_an_error():
    # found by the fuzz: the delimiter hint fired on any space in a one-column header
    df = load_table(b"Sepal Length\n5.1\n4.9\n")
    assert list(df.columns) == ["Sepal Length"] and df.shape == (2, 1)
    with pytest.raises(DataError, match="only one column was found, but the header contains "
                                        "spaces"):
        load_table(b"x y z\n1 2 3\n4 5 6\n")


def test_size_limit_is_one_number_in_mib():
    assert MAX_UPLOAD_MIB * 2**20 == __import__("dpcore.data.tables").data.DEFAULT_MAX_BYTES
    with pytest.raises(DataError, match=r"over the limit of 1 MiB"):
        load_table(b"a\n" + b"1\n" * 2**20, max_bytes=2**20)
    toml = (REPO / ".streamlit" / "config.toml").read_text()
    assert f"maxUploadSize = {MAX_UPLOAD_MIB}" in toml  # Streamlit's unit: 2^20 bytes


# ------------------------------------------------------------------- finding 8: CLI and config


def run_cli(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def table(tmp_path) -> Path:
    path = tmp_path / "data.csv"
    pd.DataFrame(np.random.default_rng(0).normal(size=(60, 2)) * 3, columns=["x", "y"]).to_csv(
        path, index=False)
    return path


@pytest.mark.parametrize(("config", "message"), [
    ("[" * 50_000 + "]" * 50_000, "nested deeper than 16 levels"),
    ('{"mechanism": "dplloyd", "data": "data.csv", "Seed": 1}', "did you mean 'seed'?"),
    ('{"mechanism": "dplloyd", "data": {"source": "data.csv", "raduis": 1}, "seed": 1}',
     "did you mean 'radius'?"),
    ('{"mechanism": "dplloyd", "params": {"n_clusters": 2, "epsilon": 1e308}, '
     '"data": {"source": "data.csv", "radius": 5}, "seed": 1}', "params.epsilon must be between"),
    ('{"mechanism": "dplloyd", "params": {"n_clusters": 2, "epsilon": 1}, '
     '"data": {"source": "data.csv", "radius": 5, "center": [1e308, 1e308]}, "seed": 1}',
     r"data.center[0] = 1e+308 is outside"),
    ('{"mechanism": "dplloyd", "params": {"n_clusters": 1000000000, "epsilon": 1}, '
     '"data": {"source": "data.csv", "radius": 5}, "seed": 1}', "params.n_clusters must be"),
    ('{"mechanism": "dplloyd", "params": {"n_clusters": 2, "epsilon": 1, "n_iter": 1000000}, '
     '"data": {"source": "data.csv", "radius": 5}, "seed": 1}', "params.n_iter must be"),
    (" " * (2**20 + 1), "larger than 1024 KiB"),
])
def test_bad_configs_exit_2_with_one_line(config, message, table, tmp_path, capsys,
                                          monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run.json").write_text(config)
    code, _, err = run_cli(["run", "--config", "run.json"], capsys)
    assert code == 2 and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dpcore: error: ") and message in lines[0], err
    # the same file through the Python API: the same validator, the same message
    if config.strip().startswith("{"):
        with pytest.raises(ValueError, match=re.escape(message)):
            rc.run_config(config)


def test_readme_cli_examples_run_as_written(table, tmp_path, capsys, monkeypatch):
    """Every `dpcore list` / `dpcore run` line of the README's command-line block runs."""
    monkeypatch.chdir(tmp_path)
    readme = (REPO / "README.md").read_text()
    block = readme.split("## Command line", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in block.splitlines()]
    runnable = [line for line in lines if line.startswith(("dpcore run", "dpcore list"))]
    assert len(runnable) >= 3, block
    (tmp_path / "run.json").write_text(json.dumps(rc.make_config(
        "dplloyd", {"n_clusters": 3, "epsilon": 1.0}, {"source": "ignored.csv", "radius": 10.0},
        seed=4)))
    for line in runnable:
        argv = shlex.split(line)[1:]
        code, _, err = run_cli(["-q", *argv], capsys)
        assert code == 0, f"{line!r}: {err}"
    assert json.loads((tmp_path / "result.json").read_text())["mechanism"] == "dplloyd"


def test_out_csv_is_the_dashboards_wide_table(tmp_path, capsys):
    path = tmp_path / "t.csv"
    df = pd.DataFrame({"lon": np.linspace(-10, 10, 80), "lat": np.linspace(40, 50, 80)})
    df.to_csv(path, index=False)
    out, js = tmp_path / "c.csv", tmp_path / "c.json"
    argv = ["-q", "run", "dplloyd", str(path), "--center", "0", "45", "--radius", "20",
            "--epsilon", "2", "-k", "3", "--seed", "1"]
    assert run_cli([*argv, "--out", out], capsys)[0] == 0
    assert run_cli([*argv, "--out", js], capsys)[0] == 0
    frame = pd.read_csv(out)
    assert frame.columns.tolist() == ["lon", "lat", "algorithm", "guarantee"]
    released = np.asarray(json.loads(js.read_text())["released"]["centers"])
    table_units = released + np.array([0.0, 45.0])
    np.testing.assert_allclose(frame[["lon", "lat"]], table_units)
    assert (frame.algorithm == "dplloyd").all() and frame.guarantee[0] == "ε = 2 (pure DP)"


def test_data_string_form_and_flags_override(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "c.json").write_text('{"mechanism": "dplloyd", "data": "cities", '
                                     '"params": {"n_clusters": 2, "epsilon": 1}, "seed": 3}')
    code, out, err = run_cli(["-q", "run", "--config", "c.json", "--radius", "200", "--out",
                              "-"], capsys)
    assert code == 0, err
    res = json.loads(out)
    assert res["config"]["data"]["source"] == "cities" and res["config"]["seed"] == 3


# ----------------------------------------------------------------------- finding 9: URL state

SPEC = app_query_spec(data_keys=["cities", "earthquakes", "mixture", "upload"],
                      epsilon_grid=[0.05, 0.1, 0.5, 1.0, 2.0, 20.0],
                      algorithms=["DP-Lloyd", "k-means (non-private)"],
                      statistics=["mean", "median"])


@pytest.mark.parametrize(("raw", "message"), [
    ({"k": "abc"}, "ignored k=abc: must be an integer from 1 to 50"),
    ({"k": "9" * 5000}, "ignored k=999999999999999999999999… (5,000 characters)"),
    ({"eps": "0"}, "ignored eps=0: must be one of 0.05, 0.1, 0.5, 1, 2, 20"),
    ({"mode": "hack"}, "ignored mode=hack: must be one of explore, release"),
    ({"data": "../../etc/passwd"}, "ignored data=../../etc/passwd: must be one of cities"),
    ({"seed": "-1"}, "ignored seed=-1: must be an integer from 0 to 2,147,483,647"),
    ({"clu_algs": ["DP-Lloyd", "rm -rf"]}, "ignored clu_algs=rm -rf: must be one of DP-Lloyd"),
    ({"stat": "mean\x00"}, "ignored stat=mean?: must be one of mean, median"),
])
def test_bad_url_values_are_reported_and_dropped(raw, message):
    out = clean_query_params(raw, SPEC)
    assert out.messages and out.messages[0].startswith(message), out.messages
    assert next(iter(raw)) in out.rejected


def test_good_url_values_are_typed():
    out = clean_query_params({"k": "7", "eps": "1.0", "seed": "12", "mode": "release",
                              "clu_algs": ["DP-Lloyd"], "embed": "true"}, SPEC)
    assert out.values == {"k": 7, "eps": 1.0, "seed": 12, "mode": "release",
                          "clu_algs": ["DP-Lloyd"]}
    assert out.messages == [] and out.rejected == [] and out.unknown == ["embed"]


# ---------------------------------------------------------------------- finding 10: Dask errors


def test_dask_errors_name_the_file_and_column(tmp_path):
    pytest.importorskip("dask.dataframe")
    import dask

    from dpcore.scale import dask_kmeans as scale
    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(3):
        df = pd.DataFrame(np.random.default_rng(i).normal(size=(50, 2)), columns=["a", "b"])
        if i == 2:
            df.loc[5, "b"] = np.nan
        df.to_parquet(folder / f"p{i}.parquet")
    with dask.config.set(scheduler="synchronous"):
        with pytest.raises(ValueError, match=r"file '.*p2\.parquet': column 'b' has 1 missing"):
            scale.dp_lloyd_on_partitions(str(folder), 2, epsilon=1.0, radius=5.0, rng=0)
        with pytest.raises(ValueError) as info:
            scale.dp_lloyd_on_partitions(str(folder), 2, epsilon=1.0, radius=5.0,
                                         columns=["a", "zz"], rng=0)
    assert "column(s) ['zz'] not found" in str(info.value) and "'a', 'b'" in str(info.value)
    assert "restart" not in str(info.value)


def test_a_failure_probability_too_small_to_divide_is_refused():
    # β = 5e-324 passed (0, 1); FriendlyCore k-means halved it to 0 and divided by zero (fuzz)
    from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans

    with pytest.raises(limits.ParameterError, match="beta must be at least 1e-100"):
        FriendlyCoreKMeans(2, epsilon=1.0, radius=1.0, beta=5e-324).fit(np.zeros((50, 2)))
    limits.check_params(beta=1e-100)  # the documented edge is accepted


def test_estimator_warnings_do_not_leak_into_other_tests():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        limits.check_params(epsilon=1.0, delta=1e-6, n_clusters=3, n_iter=5, beta=0.1)


def test_dask_dp_lloyd_stops_at_the_next_iteration_when_cancelled():
    pytest.importorskip("dask.array")
    import dask

    from dpcore.core.cancel import Cancelled, RunControl, controlled
    from dpcore.scale import dask_kmeans as scale

    seen = []
    ctl = RunControl(on_progress=lambda f, msg: (seen.append(msg), ctl.cancel()))
    X = np.random.default_rng(0).normal(size=(2000, 2))
    with dask.config.set(scheduler="synchronous"), controlled(ctl):
        with pytest.raises(Cancelled):
            scale.dp_lloyd_on_partitions(X, 2, epsilon=1.0, radius=5.0, n_iter=50, rng=0)
    assert seen == ["DP-Lloyd iteration 1 of 50"]  # stopped at the second checkpoint


@pytest.mark.parametrize(("argv", "message"), [
    (["run", "dplloyd", "x.csv", "--epsilon", "abc"], "argument --epsilon: invalid float"),
    (["run", "dplloyd", "x.csv", "--bogus", "1"], "unrecognized arguments: --bogus 1"),
    (["run", "dplloid", "x.csv"], "did you mean 'dplloyd'?"),
])
def test_usage_errors_are_one_line_and_status_2(argv, message, capsys):
    with pytest.raises(SystemExit) as info:
        code = cli.main(argv)
        raise SystemExit(code)
    err = capsys.readouterr().err
    assert info.value.code == 2 and len(err.strip().splitlines()) == 1 and message in err, err


def test_generated_mixture_is_bounded_by_the_budget(monkeypatch):
    monkeypatch.setenv(limits.MEMORY_ENV, "1024")
    with pytest.raises(ValueError, match=r"mixture: n must be an integer from 2 to 335,544 for "
                                         r"d = 100 within the session memory budget"):
        rc.read_table(rc.mixture_source(10**6, 100, 3, 0.3, 10.0))  # 0.8 GB per copy before
    assert rc.read_table(rc.mixture_source(1000, 2, 3, 0.3, 10.0))[0].shape == (1000, 3)


def test_md_text_shortens_only_on_request():
    assert md_text("a" * 1000) == "a" * 1000
    assert md_text("a" * 1000, max_chars=80) == "a" * 80 + "…"


# ------------------------------------------------ issue 26: the one parameter-constraints table


@pytest.mark.parametrize("bounds", [(-1e-300, 1e-300), (-1e300, 1e300)])
def test_dpkmeans_degenerate_or_huge_bounds_are_named(bounds):
    """Bug caught: bounds ±1e-300 divided by zero (ZeroDivisionError), ±1e300 overflowed."""
    from dpcore.estimators.dpkmeans import DPKMeans

    with pytest.raises(limits.ParameterError, match="bounds"):
        DPKMeans(2, epsilon=1.0, bounds=bounds, n=200, rng=0).fit(np.zeros((200, 2)))


@pytest.mark.parametrize(("params", "message"), [
    ({"bounds": [-1e-300, 1e-300]}, "bounds"),
    ({"bounds": [-1e300, 1e300]}, "bounds"),
    ({"count_share": 0}, "count_share"),
    ({"count_share": 1}, "count_share"),
    ({"epsilon": "1"}, "epsilon must be a number"),
])
def test_dpkmeans_through_dpcore_run_exits_2_with_one_line(params, message, table, tmp_path,
                                                          capsys, monkeypatch):
    """Bug caught: the same parameters reaching ``dpcore run`` as a traceback or accepted."""
    monkeypatch.chdir(tmp_path)
    cfg = {"mechanism": "dpkmeans", "params": {"n_clusters": 2, "epsilon": 1.0, "n": 60,
                                               "bounds": [-10, 10]} | params,
           "data": {"source": str(table), "radius": 20.0}, "seed": 1}
    (tmp_path / "run.json").write_text(json.dumps(cfg))
    code, _, err = run_cli(["-q", "run", "--config", "run.json"], capsys)
    lines = err.strip().splitlines()
    assert code == 2 and "Traceback" not in err and len(lines) == 1 and message in lines[0], err


def _uniform_oracle(size, rng):
    return rng.uniform(size=size)


@pytest.mark.parametrize(("params", "message"), [
    ({"m": 10**8}, "m must be"),
    ({"m": 100, "epsilon": 1e300}, "epsilon must be between"),
    ({"gamma": 1e-9}, "gamma=1e-09 needs m ="),
    ({"m": 100, "epsilon": "1"}, "epsilon must be a number"),
])
def test_sensitivity_sampler_work_and_ranges_are_bounded(params, message):
    """Bugs caught: m = 10⁸ ran > 90 s; ε = 1e300 released 1.7e298; γ = 1e-9 failed inside
    numpy; ε = '1' accepted. Each is refused at once, naming the parameter."""
    import time

    from dpcore.mechanisms.sensitivity.response import sample_then_respond

    X = np.random.default_rng(0).uniform(size=200)
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match=re.escape(message)):
        sample_then_respond(np.mean, X, _uniform_oracle, **({"epsilon": 1.0} | params), rng=0)
    assert time.perf_counter() - t0 < 2


def test_sensitivity_sampler_at_a_valid_size_still_releases():
    """The bound does not refuse the ordinary case (m = 200 pairs of 200 records)."""
    from dpcore.mechanisms.sensitivity.response import sample_then_respond

    X = np.random.default_rng(0).uniform(size=200)
    out = sample_then_respond(np.mean, X, _uniform_oracle, epsilon=1.0, m=200, rng=0)
    assert np.isfinite(out.value)


def test_a_share_that_underflows_is_refused_by_name():
    """Bug caught (registry fuzz): kv18_mean(range_share=5e-324) passed (0, 1), the ρ share
    underflowed to 0 and the error named ρ, not the share."""
    from dpcore.release import registry

    X = np.random.default_rng(0).normal(size=(300, 2))
    with pytest.raises(limits.ParameterError, match="range_share must be at least 1e-100"):
        registry.entry("kv18_mean").runner()(X, np.random.default_rng(0), rho=0.5, sigma=0.3,
                                             radius=3.0, range_share=5e-324)


def test_balcan17_without_lloyd_rounds_runs_with_the_default_split():
    """Bug caught (registry fuzz): ``lloyd_rounds=0`` (documented) refused every call, since the
    default budget split kept its Lloyd share."""
    from dpcore.mechanisms.baselines.balcan17 import Balcan17KMeans

    X = np.random.default_rng(0).normal(size=(100, 2)) * 0.3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        km = Balcan17KMeans(2, epsilon=1.0, delta=1e-6, radius=3.0, n_public=100,
                            lloyd_rounds=0, rng=0).fit(X)
    assert km.privacy_.epsilon == pytest.approx(1.0)
