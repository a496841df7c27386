"""The ``dpcore`` command line (dpcore.cli), run in-process except for one real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import cli
from dpcore.cli import dashboard, reproduce
from dpcore.privacy.guarantees import PureDP
from dpcore.release import runconfig as rc


def standin_mean(X, *, epsilon: float, radius: float, rng=None):
    """Laplace mean in the ball of ``radius``: a stand-in so these tests need no other module."""
    noise = rng.laplace(0.0, 2 * radius / (len(X) * epsilon), size=X.shape[1])
    return X.mean(axis=0) + noise, PureDP(epsilon)


@pytest.fixture(autouse=True)
def standin():
    mech = rc.register(rc.Mechanism("cli_standin", standin_mean,
                                    rc.function_runner({"mean": "mean"})(standin_mean)),
                       replace=True)
    yield mech
    rc.MECHANISMS.pop(mech.name, None)


@pytest.fixture
def table(tmp_path) -> Path:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(rng.normal(size=(50, 3)), columns=["a", "b", "c"])
    df["label"] = "x"
    path = tmp_path / "table.csv"
    df.to_csv(path, index=False)
    return path


def run(argv, capsys):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_run_writes_json_and_summary(table, tmp_path, capsys):
    out = tmp_path / "r.json"
    code, stdout, stderr = run(["run", "cli_standin", table, "--columns", "a", "b",
                                "--radius", 4, "--epsilon", 2, "--seed", 5, "--out", out], capsys)
    assert code == 0, stderr
    res = json.loads(out.read_text())
    assert res["guarantee"] == {"type": "PureDP", "epsilon": 2.0}
    assert len(res["released"]["mean"]) == 2
    assert res["config"]["data"] == {"source": str(table), "columns": ["a", "b"],
                                     "radius": 4.0, "center": None}
    assert res["config"]["seed"] == 5
    assert "cli_standin: released under" in stdout
    assert "loading" in stderr and "finished" in stderr  # progress goes to stderr


def test_config_round_trip_reproduces_the_release(table, tmp_path, capsys):
    cfg, out1, out2 = tmp_path / "cfg.json", tmp_path / "1.json", tmp_path / "2.csv"
    code, _, _ = run(["-q", "run", "cli_standin", table, "--radius", 4, "--epsilon", 1,
                      "--save-config", cfg, "--out", out1], capsys)
    assert code == 0
    code, _, err = run(["-q", "run", "--config", cfg, "--out", out2], capsys)
    assert code == 0 and err == ""
    first = json.loads(out1.read_text())["released"]["mean"]
    frame = pd.read_csv(out2)  # the dashboard's wide table: the mean in the table's columns
    assert frame.columns.tolist() == ["a", "b", "c", "algorithm", "guarantee"]
    np.testing.assert_allclose(frame[["a", "b", "c"]].to_numpy()[0], first)
    assert frame.algorithm.tolist() == ["cli_standin"] and frame.guarantee[0] == "ε = 1 (pure DP)"
    # flags override the configuration: another seed gives another release
    code, stdout, _ = run(["-q", "run", "--config", cfg, "--seed", 99, "--out", "-"], capsys)
    assert code == 0 and json.loads(stdout)["released"]["mean"] != first


def test_param_flags_are_parsed_as_json(table, capsys):
    code, stdout, err = run(["-q", "run", "cli_standin", table, "-p", "epsilon=Infinity",
                             "-p", "radius=100", "--out", "-"], capsys)
    assert code == 0, err
    res = json.loads(stdout)
    assert res["config"]["params"] == {"epsilon": float("inf"), "radius": 100}
    expected = pd.read_csv(table)[["a", "b", "c"]].to_numpy().mean(axis=0)
    np.testing.assert_allclose(res["released"]["mean"], expected, atol=1e-6)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "cli_standin", "missing.csv", "--radius", 1, "--epsilon", 1],
         "neither an existing file"),
        (["run", "cli_standin", "{table}", "--columns", "zz", "--radius", 1, "--epsilon", 1],
         "unknown column(s): 'zz'"),
        (["run", "cli_standin", "{table}", "--columns", "label", "--radius", 1, "--epsilon", 1],
         "column 'label' has non-numeric values"),
        (["run", "cli_standin", "{table}", "--epsilon", 1], "needs parameter(s) ['radius']"),
        (["run", "cli_standin", "{table}", "--radius", 1, "--epsilon", 1, "--out", "r.txt"],
         "must end in .json or .csv"),
        (["run", "cli_standin", "{table}", "-p", "epsilon"], "-p expects NAME=VALUE"),
        (["run", "nope", "{table}"], "unknown mechanism 'nope'"),
        (["run", "--config", "{bad}"], "is not valid JSON"),
        (["run", "--config", "missing.json"], "no such file"),
        (["run"], "name a mechanism"),
        (["run", "cli_standin", "{table}", "--radius", -1, "--epsilon", 1],
         "data.radius must be finite and > 0, got -1.0"),
        (["reproduce", "no_such_paper"], "unknown paper 'no_such_paper'"),
    ],
)
def test_bad_input_gives_one_line_and_status_2(argv, message, table, tmp_path, capsys,
                                               monkeypatch):
    monkeypatch.chdir(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text("{oops")
    argv = [str(a).format(table=table, bad=bad) for a in argv]
    code, _stdout, stderr = run(argv, capsys)
    assert code == 2
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("dpcore: error: ") and message in last, stderr
    assert "Traceback" not in stderr
    assert not (tmp_path / "r.txt").exists()  # nothing written on bad input


def test_module_entry_point_exits_cleanly_on_bad_input(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "dpcore", "run", "nope", "x.csv"],
                          capture_output=True, text=True, cwd=Path(cli.__file__).parents[2],
                          timeout=60)
    assert proc.returncode == 2
    assert proc.stderr.startswith("dpcore: error: unknown mechanism 'nope'")
    assert "Traceback" not in proc.stderr


def test_reproduce_calls_the_papers_main(monkeypatch, capsys):
    calls = []
    for name in ("alpha", "beta"):
        mod = types.ModuleType(f"dpcore.reproduce.{name}")
        mod.main = lambda argv=None, name=name: calls.append((name, argv))
        monkeypatch.setitem(sys.modules, mod.__name__, mod)
    monkeypatch.setattr(reproduce, "_reproduce_modules", lambda: ["alpha", "beta"])
    assert run(["reproduce", "beta", "--quick"], capsys)[0] == 0
    from dpcore.reproduce._report import scratch_dir

    assert calls == [("beta", ["--quick", "--out", str(scratch_dir())])]  # never the reports
    assert run(["reproduce", "all"], capsys)[0] == 0
    assert calls[1:] == [("alpha", []), ("beta", [])]

    def broken(argv=None):
        raise FileNotFoundError("covertype.csv.gz not found")

    monkeypatch.setattr(sys.modules["dpcore.reproduce.alpha"], "main", broken)
    code, _, err = run(["reproduce", "all"], capsys)
    assert code == 1 and calls[-1] == ("beta", [])  # the others still run
    assert "alpha: FileNotFoundError: covertype.csv.gz not found" in err
    assert "reproduction failed for ['alpha']" in err


def test_app_locates_the_dashboard(monkeypatch, tmp_path, capsys):
    app = tmp_path / "app.py"
    monkeypatch.setattr(dashboard, "app_path", lambda: app)
    code, _, err = run(["app", "--dry-run"], capsys)
    assert code == 2 and "app.py not found" in err
    app.write_text("")
    code, out, err = run(["app", "--port", "8600", "--dry-run"], capsys)
    assert code == 0 and "http://localhost:8600" in err
    assert out.split()[1:5] == ["-m", "streamlit", "run", str(app)]
    assert "--server.port 8600" in out


def test_app_serves_this_machine_only_by_default(monkeypatch, tmp_path, capsys):
    """127.0.0.1 unless --host says otherwise, which is then said out loud (issue 27.1)."""
    app = tmp_path / "app.py"
    app.write_text("")
    monkeypatch.setattr(dashboard, "app_path", lambda: app)
    code, out, err = run(["app", "--dry-run"], capsys)
    assert code == 0 and " --server.address 127.0.0.1 " in f" {out.strip()} "
    assert "warning" not in err
    code, out, err = run(["app", "--host", "0.0.0.0", "--port", "8600", "--dry-run"], capsys)
    assert code == 0 and " --server.address 0.0.0.0 " in f" {out.strip()} "
    assert "http://localhost:8600" in err and "other machines on the network" in err


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX exec (Windows waits for a child)")
def test_app_replaces_itself_with_the_server(monkeypatch, tmp_path, capsys):
    """On POSIX `dpcore app` execs Streamlit (a signal to it reaches the server), in app.py's
    folder (its .streamlit/config.toml) with the curator environment."""
    app = tmp_path / "app.py"
    app.write_text("")
    monkeypatch.setattr(dashboard, "app_path", lambda: app)
    calls = []
    monkeypatch.setattr(dashboard.os, "chdir", lambda path: calls.append(("chdir", path)))

    def execve(path, argv, env):
        calls.append(("execve", path, argv, env))
        raise OSError("exec stopped by the test")

    monkeypatch.setattr(dashboard.os, "execve", execve)
    code, _, err = run(["app", "--port", "8600"], capsys)
    assert code == 2 and "exec stopped by the test" in err
    (_, cwd), (_, path, argv, env) = calls
    assert cwd == tmp_path and path == sys.executable and argv[0] == sys.executable
    assert argv[1:5] == ["-m", "streamlit", "run", str(app)] and "PATH" in env


def test_app_path_prefers_the_checkout_then_the_installed_bundle(monkeypatch, tmp_path):
    from dpcore.data import datasets

    assert cli.app_path() == datasets.REPO_ROOT / "app.py"  # run from the checkout
    monkeypatch.setattr(datasets, "REPO_ROOT", tmp_path)  # installed: site-packages, no app.py
    assert cli.app_path() == datasets.BUNDLE_DIR / "app.py"


def test_list_shows_available_and_unavailable(monkeypatch, capsys):
    monkeypatch.setitem(rc.UNAVAILABLE, "ghost", "dpcore.ghost cannot be imported (boom)")
    code, out, _ = run(["list"], capsys)
    assert code == 0
    assert "cli_standin" in out and "params: epsilon, radius" in out
    assert "ghost" in out and "unavailable: dpcore.ghost cannot be imported" in out


def test_long_runs_report_progress(capsys):
    import argparse
    import time

    with cli._heartbeat(argparse.Namespace(quiet=False), "slowpoke", every=0.05):
        time.sleep(0.3)
    assert "slowpoke still running" in capsys.readouterr().err
    with cli._heartbeat(argparse.Namespace(quiet=True), "slowpoke", every=0.05):
        time.sleep(0.12)
    assert capsys.readouterr().err == ""


@pytest.fixture
def parquet_dir(tmp_path) -> Path:
    rng = np.random.default_rng(1)
    folder = tmp_path / "parts"
    folder.mkdir()
    for i in range(3):
        pd.DataFrame(rng.normal(size=(1000, 2)), columns=["a", "b"]).to_parquet(
            folder / f"p{i}.parquet")
    return folder


def test_run_dplloyd_out_of_core_with_dask(parquet_dir, tmp_path, capsys):
    import dask

    out = tmp_path / "r.json"
    with dask.config.set(scheduler="synchronous"):
        code, _, err = run(["run", "dplloyd", parquet_dir, "--radius", 4, "--epsilon", 5,
                            "-k", 2, "--sampler", "coreset", "--sample-size", 600,
                            "--n-rows", 3000, "--stat-epsilon", 0.5, "--dask",
                            "--seed", 3, "--out", out], capsys)
        assert code == 0, err
        res = json.loads(out.read_text())
        assert np.shape(res["released"]["centers"]) == (2, 2)
        assert res["guarantee"]["type"] == "PureDP" and res["guarantee"]["epsilon"] <= 5.0
        assert "pass 2/2" in err and "PrivacyLeakWarning" not in err  # n and x̃ were declared
        code, _, err = run(["run", "dplloyd", parquet_dir, "--radius", 4, "--epsilon", 5,
                            "-k", 2, "--dask", "-q"], capsys)  # full-data DP-Lloyd
        assert code == 0 and err == ""
        code, _, err = run(["run", "dplloyd", parquet_dir, "--radius", 4, "--epsilon", 5,
                            "-k", 2, "--sampler", "uniform", "--sample-size", 600,
                            "--n-rows", 3000, "--dask", "--sample-on-cluster"], capsys)
        assert code == 0 and "DP-Lloyd on the" in err and "on the cluster" in err


def test_sample_command_writes_the_weighted_sample(parquet_dir, tmp_path, capsys):
    import dask

    out = tmp_path / "s.parquet"
    with dask.config.set(scheduler="synchronous"):
        code, stdout, err = run(["sample", parquet_dir, "--radius", 4, "--sample-size", 300,
                                 "--sampler", "uniform", "--n-rows", 3000, "--seed", 0,
                                 "--out", out], capsys)
    assert code == 0, err
    df = pd.read_parquet(out)
    assert list(df.columns) == ["x0", "x1", "weight"]
    np.testing.assert_allclose(df.weight, 10.0)  # q = m/n = 0.1
    assert abs(len(df) - 300) < 4 * np.sqrt(300 * 0.9)
    assert "uniform sample:" in stdout
    with dask.config.set(scheduler="synchronous"):
        code, stdout, err = run(["-q", "sample", parquet_dir, "--radius", 4, "--sampler",
                                 "privacy", "--epsilon", 1, "--out", out], capsys)
    assert code == 0 and err == "" and "privacy sample:" in stdout  # no n, no x̃, no warning
    assert (pd.read_parquet(out).weight >= 1).all()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "noisy_average", "{dir}", "--radius", 1, "--epsilon", 0.1, "--delta", 1e-6,
          "--dask"], "--dask runs dplloyd only"),
        (["sample", "{dir}", "--sample-size", 10, "--out", "s.parquet"], "needs the declared"),
        (["sample", "{dir}", "--radius", 1, "--sample-size", 10, "--out", "s.txt"],
         "must end in .parquet"),
        (["sample", "{dir}/nothing*.parquet", "--radius", 1, "--sample-size", 10, "--out",
          "s.parquet"], "cannot read"),
    ],
)
def test_dask_bad_input(argv, message, parquet_dir, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = run([str(a).format(dir=parquet_dir) for a in argv], capsys)
    assert code == 2 and message in err.strip().splitlines()[-1], err


@pytest.mark.slow
def test_app_command_serves_locally_and_stops_on_sigterm(tmp_path):
    """`dpcore app` really starts Streamlit on the port (health endpoint answers), on 127.0.0.1
    only, and `kill PID` (SIGTERM to the dpcore process alone) stops the server: the port stops
    answering and no process it started remains (issues 27.1 and 27.4)."""
    import os

    from server_helpers import (
        answers,
        free_port,
        gone,
        kill_group,
        listening_addresses,
        process_tree,
        sigterm_and_wait,
        wait_healthy,
    )

    port = free_port()
    env = dict(os.environ, PYTHONPATH=str(Path(cli.__file__).resolve().parents[2]))  # this dpcore
    proc = subprocess.Popen([sys.executable, "-m", "dpcore", "app", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            cwd=tmp_path, env=env, start_new_session=True)
    try:
        body = wait_healthy(proc, port, timeout=60)
        assert body == b"ok", f"no dashboard on port {port} (exit code {proc.poll()})"
        assert listening_addresses(proc.pid, port) == {"127.0.0.1"}
        tree = process_tree(proc.pid)
        sigterm_and_wait(proc, tree)
        assert not answers(port)
        assert [p.pid for p in tree if not gone(p)] == []
    finally:
        kill_group(proc)
