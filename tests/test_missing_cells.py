"""One missing-cells rule for every path (issue 27.2): the Data page's choice, the run
configuration's ``data.missing`` (hence ``dpcore run``), and the public description's
``missing`` (the release door and the curator's ``schema.json``) prepare the same matrix.

Bugs caught: explore refusing a table the release path silently filled with the centre (the two
modes disagreeing); a rule that reaches one path and not another; a fill value read off the data
or out of range accepted; the curator schema refusing the key.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpcore import cli
from dpcore.core.errors import SchemaError
from dpcore.data.missing import apply_missing, check_missing_rule
from dpcore.data.tables import DataError, load_table, to_matrix
from dpcore.release import runconfig as rc
from dpcore.release.schema import PublicDescription


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = ["a,b"] + [f"{x:.3f}," + ("" if i % 10 == 3 else "N/A" if i % 10 == 7 else
                                     f"{y:.3f}") for i, (x, y) in enumerate(
        rng.normal(size=(60, 2)))]
    return load_table("\n".join(rows).encode())


@pytest.mark.parametrize("rule", ["drop", {"fill": 0.5}])
def test_release_description_prepares_what_explore_prepares(rule):
    df = _table()
    center, radius = [0.1, -0.2], 3.0
    explore = rc.prepare_matrix(df, columns=["a", "b"], center=center, radius=radius,
                                missing={"b": rule})
    desc = PublicDescription.from_json(json.dumps(
        {"columns": ["a", "b"], "center": center, "radius": radius, "missing": {"b": rule}}))
    np.testing.assert_array_equal(desc.prepare(df), explore)
    assert explore.shape[0] == (48 if rule == "drop" else 60)
    assert PublicDescription.from_dict(desc.to_dict()) == desc  # round trip of schema.json


def test_without_a_rule_explore_refuses_and_release_uses_the_centre_as_documented():
    df = _table()
    with pytest.raises(DataError, match="choose what to do with its missing cells"):
        to_matrix(df, ["a", "b"])
    desc = PublicDescription(columns=("a", "b"), center=(0.0, 0.0), radius=3.0)
    M = desc.prepare(df)
    assert M.shape == (60, 2) and np.all(M[3] == [M[3, 0], 0.0])


def test_the_rule_in_a_run_configuration_and_through_dpcore_run(tmp_path, capsys):
    df = _table()
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    cfg = rc.make_config("dplloyd", {"n_clusters": 2, "epsilon": 1.0},
                         {"source": str(path), "radius": 3.0, "columns": ["a", "b"],
                          "missing": {"b": "drop"}}, seed=3)
    assert cfg["data"]["missing"] == {"b": "drop"}
    dropped = df[df["b"].notna()].reset_index(drop=True)
    same = rc.run_config({**cfg, "data": {**cfg["data"], "missing": None}}, dropped)
    np.testing.assert_array_equal(rc.run_config(cfg, df).released["centers"],
                                  same.released["centers"])
    (tmp_path / "run.json").write_text(json.dumps(cfg))
    assert cli.main(["-q", "run", "--config", str(tmp_path / "run.json")]) == 0
    no_rule = {**cfg, "data": {k: v for k, v in cfg["data"].items() if k != "missing"}}
    (tmp_path / "bad.json").write_text(json.dumps(no_rule))
    assert cli.main(["-q", "run", "--config", str(tmp_path / "bad.json")]) == 2
    assert "missing cells" in capsys.readouterr().err


@pytest.mark.parametrize(("rule", "message"), [
    ({"zz": "drop"}, "not one of the chosen columns"),
    ({"b": {"fill": float("nan")}}, "finite number"),
    ({"b": {"fill": 1e300}}, "finite number"),
    ({"b": "mean"}, "must be \"drop\""),
    ({"b": {"fill": "0"}}, "finite number"),
    ("drop", "must map column names"),
])
def test_bad_rules_are_named_in_every_reader(rule, message):
    with pytest.raises(ValueError, match=message):
        check_missing_rule(rule, ["a", "b"])
    with pytest.raises(SchemaError, match=message):
        PublicDescription(columns=("a", "b"), radius=1.0, missing=rule)
    with pytest.raises(ValueError, match=message):
        rc.make_config("dplloyd", {"n_clusters": 2, "epsilon": 1.0},
                       {"source": "x.csv", "radius": 1.0, "columns": ["a", "b"],
                        "missing": rule}, seed=1)


def test_apply_missing_counts_rows_once():
    df = pd.DataFrame({"a": [1.0, np.nan, 3.0, np.nan], "b": [np.nan, np.nan, 1.0, 2.0]})
    out, affected = apply_missing(df, ["a", "b"], {"a": "drop", "b": {"fill": 9.0}})
    assert affected == 3 and out.shape == (2, 2)
    np.testing.assert_array_equal(out.to_numpy(), [[1.0, 9.0], [3.0, 1.0]])
