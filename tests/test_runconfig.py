"""Run configurations (dpcore.release.runconfig): the JSON contract shared with the dashboard and
CLI."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpcore
from dpcore.privacy.guarantees import PrivacyLeakWarning, PureDP
from dpcore.release import runconfig as rc


def standin_mean(X, *, epsilon: float, radius: float, rng=None, scale: float = 1.0):
    """Laplace mean of rows in the ball of ``radius`` (a stand-in for a package mechanism)."""
    noise = rng.laplace(0.0, 2 * radius / (len(X) * epsilon), size=X.shape[1])
    return {"mean": scale * X.mean(axis=0) + noise, "privacy": PureDP(epsilon),
            "kept": np.arange(len(X))}


class StandinKMeans:
    def __init__(self, n_clusters, *, epsilon, radius=None, rng=None):
        self.n_clusters, self.epsilon, self.radius, self.rng = n_clusters, epsilon, radius, rng

    def fit(self, X):
        warnings.warn("read off the data", PrivacyLeakWarning, stacklevel=2)
        self.cluster_centers_ = X[: self.n_clusters] + self.rng.normal(size=(self.n_clusters,
                                                                                X.shape[1]))
        self.sample_indices_ = np.arange(len(X))  # a non-private diagnostic: must not leak
        self.privacy_ = PureDP(self.epsilon)
        return self


@pytest.fixture
def standins():
    added = [
        rc.register(rc.Mechanism("standin_mean", standin_mean,
                                 rc.function_runner({"mean": "mean"})(standin_mean), "test")),
        rc.register(rc.Mechanism(
            "standin_kmeans", StandinKMeans,
            rc.estimator_runner({"centers": "cluster_centers_"})(StandinKMeans))),
    ]
    yield added
    for m in added:
        rc.MECHANISMS.pop(m.name, None)


def test_builtins_are_available_or_explained():
    for name in ["dplloyd", "friendlycore_kmeans", "friendly_mean", "maxcover_kmeans",
                 "noisy_average", "sensitivity"]:
        assert (name in rc.MECHANISMS) != (name in rc.UNAVAILABLE), name
        if name in rc.UNAVAILABLE:
            assert "cannot be imported" in rc.UNAVAILABLE[name]


def test_make_config_round_trips_through_json(standins):
    cfg = rc.make_config("standin_mean", {"epsilon": np.float64(0.5)},
                         {"source": "cities", "columns": ["a", "b"], "radius": 2,
                          "center": np.array([0.0, 1.0])}, seed=3)
    assert cfg == {
        "dpcore_version": dpcore.__version__,
        "mechanism": "standin_mean",
        "params": {"epsilon": 0.5},
        "data": {"source": "cities", "columns": ["a", "b"], "radius": 2.0, "center": [0.0, 1.0]},
        "seed": 3,
    }
    assert rc.validate_config(json.dumps(cfg)) == cfg


def test_make_config_records_a_fresh_seed(standins):
    a = rc.make_config("standin_mean", {"epsilon": 1.0}, "x.csv")
    b = rc.make_config("standin_mean", {"epsilon": 1.0}, "x.csv")
    assert isinstance(a["seed"], int) and a["seed"] != b["seed"]


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"mechanism": "nope"}, "unknown mechanism 'nope'"),
        ({"seed": -1}, "seed must be a non-negative integer"),
        ({"seed": 1.5}, "seed must be a non-negative integer"),
        ({"extra": 1}, "unknown key 'extra' in run configuration; expected one of"),
        ({"Seed": 1}, "unknown key 'Seed' in run configuration; did you mean 'seed'?"),
        ({"params": {"epsilon": 1.0, "epsilom": 2}},
         "unknown key 'epsilom' in the parameters of standin_mean; did you mean 'epsilon'?"),
        ({"params": {"rng": 3}}, "must not contain 'rng'"),
        ({"params": {"epsilon": {1, 2}}}, "not JSON-serialisable"),
        ({"data": {"source": "x.csv", "raduis": 3}},
         "unknown key 'raduis' in data; did you mean 'radius'?"),
        ({"data": {"source": "x.csv", "radius": -3}},
         "data.radius must be finite and > 0, got -3"),
        ({"data": {"source": "x.csv", "radius": "3"}}, "data.radius must be a number, got '3'"),
        ({"data": {"source": ""}}, "data.source must be"),
        ({"data": {"source": "x", "columns": ["a"], "center": [0, 1]}}, "center has 2 coordinates"),
        ({"data": {"source": "x", "columns": []}}, "data.columns must be null or a non-empty"),
    ],
)
def test_validate_config_names_the_problem(standins, patch, message):
    cfg = rc.make_config("standin_mean", {"epsilon": 1.0}, "x.csv", seed=0) | patch
    with pytest.raises(ValueError) as info:
        rc.validate_config(cfg)
    assert message in str(info.value)


def test_validate_config_rejects_bad_json():
    with pytest.raises(ValueError, match="not valid JSON"):
        rc.validate_config("{not json")
    with pytest.raises(ValueError, match="must be a JSON object"):
        rc.validate_config("[1, 2]")
    with pytest.raises(ValueError, match="lacks"):
        rc.validate_config({"mechanism": "dplloyd"})


def test_unavailable_mechanism_is_explained(standins, monkeypatch):
    monkeypatch.setitem(rc.UNAVAILABLE, "ghost", "dpcore.ghost cannot be imported (boom)")
    cfg = rc.make_config("ghost", {}, "x.csv", seed=0)  # writable, just not runnable
    with pytest.raises(ValueError, match=r"not available here: dpcore\.ghost cannot be imported"):
        rc.run_config(cfg, np.zeros((3, 2)))


def test_run_config_is_reproducible_and_uses_the_declared_geometry(standins):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 2)) + np.array([10.0, -5.0])
    X[0] = [1e6, 1e6]  # an outlier: clipping to the declared radius bounds its influence
    data = {"source": "inline", "radius": 3.0, "center": [10.0, -5.0]}
    cfg = rc.make_config("standin_mean", {"epsilon": 100.0}, data, seed=11)
    a, b = rc.run_config(cfg, X), rc.run_config(cfg, X)
    np.testing.assert_array_equal(a.released["mean"], b.released["mean"])
    c = rc.run_config(cfg | {"seed": 12}, X)
    assert not np.array_equal(a.released["mean"], c.released["mean"])
    # radius taken from data.radius; rows centred then clipped, nothing estimated from the data
    Xc = X - [10.0, -5.0]
    norms = np.linalg.norm(Xc, axis=1, keepdims=True)
    expected = (Xc * np.minimum(1.0, 3.0 / norms)).mean(axis=0)
    np.testing.assert_allclose(a.released["mean"], expected, atol=5e-3)  # noise scale 3e-4
    assert a.guarantee == PureDP(100.0)
    assert set(a.released) == {"mean"}  # the non-private "kept" indices are not released


def test_run_config_rejects_conflicting_or_missing_radius(standins):
    X = np.zeros((5, 2))
    cfg = rc.make_config("standin_mean", {"epsilon": 1.0, "radius": 2.0},
                         {"source": "inline", "radius": 3.0}, seed=0)
    with pytest.raises(ValueError, match=r"differs from data\.radius"):
        rc.run_config(cfg, X)
    cfg = rc.make_config("standin_mean", {"epsilon": 1.0}, "inline", seed=0)
    with pytest.raises(ValueError, match=r"needs parameter\(s\) \['radius'\].*declare data.radius"):
        rc.run_config(cfg, X)


def test_estimator_release_excludes_diagnostics_and_keeps_warnings(standins):
    X = np.arange(20.0).reshape(10, 2)
    cfg = rc.make_config("standin_kmeans", {"n_clusters": 2, "epsilon": 1.0}, "inline", seed=1)
    with pytest.warns(PrivacyLeakWarning, match="read off the data"):
        res = rc.run_config(cfg, X)
    assert set(res.released) == {"centers"} and res.released["centers"].shape == (2, 2)
    assert res.warnings == ["PrivacyLeakWarning: read off the data"]
    d = json.loads(res.to_json())
    assert d["guarantee"] == {"type": "PureDP", "epsilon": 1.0}
    assert np.allclose(d["released"]["centers"], res.released["centers"])
    assert d["config"] == cfg and d["seconds"] >= 0
    frame = res.to_frame()  # the dashboard's wide centre table: one row per centre
    assert frame.columns.tolist() == ["x1", "x2", "algorithm", "guarantee"]
    np.testing.assert_array_equal(frame[["x1", "x2"]], res.released["centers"])
    assert set(frame.algorithm) == {"standin_kmeans"}
    assert set(frame.guarantee) == {"ε = 1 (pure DP)"}
    assert "standin_kmeans: released under" in res.summary()


def test_run_config_reads_dataframe_columns_and_files(standins, tmp_path):
    df = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [0.0, 0.0, 3.0], "name": ["x", "y", "z"]})
    cfg = rc.make_config("standin_mean", {"epsilon": math.inf},
                         {"source": "inline", "columns": ["b"], "radius": 100.0}, seed=0)
    np.testing.assert_allclose(rc.run_config(cfg, df).released["mean"], [1.0], atol=1e-6)
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    cfg["data"]["source"] = str(path)
    np.testing.assert_allclose(rc.run_config(cfg).released["mean"], [1.0], atol=1e-6)
    pq = tmp_path / "parts"
    pq.mkdir()
    df.iloc[:2].to_parquet(pq / "0.parquet")
    df.iloc[2:].to_parquet(pq / "1.parquet")
    cfg["data"]["source"] = str(pq)
    np.testing.assert_allclose(rc.run_config(cfg).released["mean"], [1.0], atol=1e-6)
    cfg["data"]["source"] = str(tmp_path / "missing.csv")
    with pytest.raises(ValueError, match="neither an existing file"):
        rc.run_config(cfg)


def _builtin(name: str) -> rc.Mechanism:
    if name not in rc.MECHANISMS:
        pytest.skip(f"{name}: {rc.UNAVAILABLE.get(name)}")
    return rc.MECHANISMS[name]


@pytest.mark.parametrize(
    ("name", "params", "released", "guarantee"),
    [
        ("dplloyd", {"n_clusters": 3, "epsilon": 2.0, "n_iter": 3}, {"centers": (3, 2)},
         "PureDP"),
        ("noisy_average", {"epsilon": 0.3, "delta": 1e-6}, {"mean": (2,)}, "ApproxDP"),
        ("sensitivity", {"statistic": "mean", "epsilon": 1.0, "gamma": 0.1,
                         "bounds": [-3.0, 3.0]}, {"value": (2,)}, "RandomDP"),
    ],
)
def test_builtin_mechanisms_run_from_a_config(name, params, released, guarantee):
    _builtin(name)
    X = np.random.default_rng(5).uniform(-1, 1, size=(3000, 2))
    cfg = rc.make_config(name, params, {"source": "inline", "radius": 3.0}, seed=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = rc.run_config(cfg, X)
        again = rc.run_config(json.loads(json.dumps(cfg)), X)
    assert {k: np.shape(v) for k, v in res.released.items()} == released
    assert type(res.guarantee).__name__ == guarantee
    for key in released:
        np.testing.assert_array_equal(res.released[key], again.released[key])
    json.loads(res.to_json())  # serialisable


def test_sensitivity_oracle_table_must_match_the_data(tmp_path):
    _builtin("sensitivity")
    table = tmp_path / "public.csv"
    pd.DataFrame({"a": [0.1, 0.5, 0.9]}).to_csv(table, index=False)
    X = np.random.default_rng(0).uniform(size=(500, 2))
    cfg = rc.make_config("sensitivity", {"statistic": "mean", "epsilon": 1.0, "gamma": 0.1,
                                         "oracle": str(table)}, "inline", seed=0)
    with pytest.raises(ValueError, match="has 1 numeric columns, the data 2"):
        rc.run_config(cfg, X)
    res = rc.run_config(cfg, X[:, :1])
    assert res.released["value"].shape == (1,)


def test_friendly_mean_radius_is_not_the_data_radius():
    mech = _builtin("friendly_mean")
    assert not mech.fill_radius
    assert rc._resolve_params(mech, {"epsilon": 1.0, "delta": 1e-6}, {"radius": 3.0}) == {
        "epsilon": 1.0, "delta": 1e-6}


def test_synthetic_mixture_source_regenerates_the_dashboard_data(standins):
    source = rc.mixture_source(500, 3, 4, 0.5, 6.0)
    df, default_columns = rc.read_table(source)
    assert df.shape == (500, 4) and default_columns is None
    pd.testing.assert_frame_equal(df, rc.mixture_frame(500, 3, 4, 0.5, 6.0))  # rng=0: stable
    cfg = rc.make_config("standin_mean", {"epsilon": math.inf},
                         {"source": source, "columns": ["x1", "x2", "x3"], "radius": 100.0},
                         seed=0)
    np.testing.assert_allclose(rc.run_config(cfg).released["mean"],
                               df[["x1", "x2", "x3"]].mean().to_numpy(), atol=1e-6)
    with pytest.raises(ValueError, match="must look like 'mixture:n=1000,d=2"):
        rc.read_table("mixture:n=5")


def test_run_config_spends_from_a_ledger_or_releases_nothing(standins):
    from dpcore.privacy.guarantees import BudgetExceededError, PrivacyLedger

    ledger = PrivacyLedger(PureDP(1.5))
    X = np.zeros((10, 2))
    cfg = rc.make_config("standin_mean", {"epsilon": 1.0, "radius": 1.0}, "inline", seed=4)
    rc.run_config(cfg, X, ledger=ledger)
    assert [(e.label, e.guarantee) for e in ledger.entries] == [("standin_mean", PureDP(1.0))]
    assert ledger.entries[0].params == {"epsilon": 1.0, "radius": 1.0}  # never the seed
    with pytest.raises(BudgetExceededError):
        rc.run_config(cfg, X, ledger=ledger)
    assert len(ledger) == 1


def test_uniform_oracle_draws_both_classes_for_a_label_statistic():
    # linear_svm reads the sign of the last column; a [0, 1] box would give one class only and
    # every sampled data set would fail. The uniform oracle draws that label from {-1, +1}.
    from dpcore.release.runconfig import sensitivity_release

    gen = np.random.default_rng(0)
    X = gen.uniform(0, 1, (200, 3))
    X[:, -1] = np.where(X[:, 0] + X[:, 1] > 1, 1.0, -1.0)
    rel = sensitivity_release(
        X, statistic="linear_svm", epsilon=1.0, gamma=0.5, rng=1
    )
    assert rel.value.shape == (3,) and np.all(np.isfinite(rel.value))
    assert rel.sensitivity.delta_hat > 0
