"""`dpcore run` on a private table goes through the release door; `dpcore app --private` checks
its inputs and passes them to the app in environment variables."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpcore.cli import main
from dpcore.privacy.noise import DEFAULT_ETA


@pytest.fixture
def private(tmp_path):
    rng = np.random.default_rng(3)
    data = tmp_path / "private.csv"
    pd.DataFrame(rng.uniform(-1, 1, (300, 2)), columns=["a", "b"]).to_csv(data, index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"columns": ["a", "b"], "lower": [-1, -1], "upper": [1, 1],
                                  "n": 300}))
    return data, schema, tmp_path / "ledger"


def test_run_on_a_private_table_is_a_charged_release_without_seed(private, tmp_path, capsys):
    data, schema, ledger = private
    args = ["run", "dplloyd", str(data), "--schema", str(schema), "--budget", "1",
            "--ledger-dir", str(ledger), "-k", "2", "--epsilon", "0.4", "-q"]
    out = tmp_path / "r.json"
    assert main([*args, "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert np.shape(doc["released"]["centers"]) == (2, 2)
    # ε = 0.4 plus the floating-point defence's slack (dpcore.privacy.noise.defended_noise)
    assert doc["guarantee"] == {"type": "PureDP", "epsilon": 0.4 * (1 + DEFAULT_ETA) ** 2}
    assert "seed" not in out.read_text() and "seconds" not in out.read_text()
    assert main(args) == 0  # the same data set: the budget given again is the stored one
    capsys.readouterr()
    assert main(args) == 2  # 0.4 + 0.4 + 0.4 > 1: refused before computing
    assert "refused" in capsys.readouterr().err
    assert main(["ledger", "show", "--ledger-dir", str(ledger)]) == 0
    assert "2 release(s)" in capsys.readouterr().out


def test_run_on_a_private_table_refuses_a_seed_and_data_read_parameters(private, capsys):
    data, schema, ledger = private
    base = ["run", "dplloyd", str(data), "--schema", str(schema), "--budget", "1",
            "--ledger-dir", str(ledger), "-k", "2", "--epsilon", "0.4", "-q"]
    assert main([*base, "--seed", "3"]) == 2
    assert "no seed" in capsys.readouterr().err
    assert main([*base, "--sampler", "coreset", "--sample-size", "100"]) == 2
    assert "reads a parameter off the data" in capsys.readouterr().err
    assert main(["ledger", "show", "--ledger-dir", str(ledger)]) == 0
    assert "0 release(s)" in capsys.readouterr().out


def test_app_private_checks_inputs_and_passes_them_in_the_environment(private, capsys,
                                                                      monkeypatch):
    data, schema, ledger = private
    assert main(["app", "--private", str(data), "--schema", str(schema), "--budget", "2,1e-6",
                 "--ledger-dir", str(ledger), "--dry-run", "-q"]) == 0
    assert "streamlit run" in capsys.readouterr().out
    assert main(["app", "--private", str(data), "--budget", "2", "--dry-run", "-q"]) == 2
    assert "--schema" in capsys.readouterr().err
    schema.write_text(json.dumps({"columns": ["a", "zz"], "center": [0, 0], "radius": 1}))
    assert main(["app", "--private", str(data), "--schema", str(schema), "--budget", "2",
                 "--dry-run", "-q"]) == 2
    assert "zz" in capsys.readouterr().err  # the curator's terminal may name it
    from dpcore.release.curator import curator_env, deployment_from_env

    schema.write_text(json.dumps({"columns": ["a", "b"], "center": [0, 0], "radius": 1.5}))
    env = curator_env(str(data), str(schema), "2,1e-6", str(ledger))
    dep = deployment_from_env(env)
    assert dep.data == data.resolve() and str(dep.budget) == "(ε = 2, δ = 1e-06)-DP"
    assert deployment_from_env({}) is None
