"""Tests for dpcore.reproduce.maxcover (Figure 1 of the max-cover paper)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from strictness import require

from dpcore.reproduce import maxcover as rep


def test_synthetic_loader_matches_the_documented_construction():
    X, radius = rep.load_synthetic(n=3000)
    assert X.shape == (3000, 100)
    # per-point variance ≈ 130² + 100·3² (means near the sphere of radius 130 in R^100)
    total = ((X - X.mean(0)) ** 2).sum(1).mean()
    assert 1.4e4 < total < 2.0e4
    assert np.linalg.norm(X, axis=1).max() <= radius


def _raw(mc_scale: float, balcan: float | None = None) -> pd.DataFrame:
    g = np.random.default_rng(0)
    rows = []
    for k, (ll, mc, dl) in zip((2, 6, 10), [(10, 12, 20), (8, 11.5, 19), (6, 11, 18)], strict=True):
        for r in range(5):
            methods = [("lloyd", ll), ("maxcover", mc * mc_scale), ("dplloyd", dl)]
            methods += [("balcan", balcan)] if balcan is not None else []
            for m, v in methods:
                rows.append(("synthetic", m, k, r, v * 1e8 * (1 + 0.02 * g.normal()), 0.1))
    return pd.DataFrame(rows, columns=["dataset", "method", "k", "run", "cost", "seconds"])


def test_claim_checks_follow_the_bootstrap_rule():
    """Per-run costs → verdicts by the stated rule. A max-cover 2× worse (the bug: the final DP
    Lloyd round averaging noise instead of points) flips 'maxcover below dplloyd' to
    'not reproduced'; without Balcan et al.'s runs its claim is reported as not checked."""
    claims = rep.check_claims(_raw(1.0)).set_index("claim")["verdict"]
    assert claims["non-private Lloyd cost decreases in k"] == "reproduced"
    assert claims["maxcover: plateaus in k (cost(k_max)/cost(k_min) within Lloyd's change, "
                  "either way)"] == "reproduced"
    assert claims["maxcover below dplloyd at every k"] == "reproduced"
    assert claims["maxcover within the paper's axis range [7e+08, 1e+09]"] == "not reproduced"
    assert any(c.startswith("Ours (max-cover) below Balcan") and v == "not checked"
               for c, v in claims.items())
    bad = rep.check_claims(_raw(2.0)).set_index("claim")["verdict"]
    assert bad["maxcover below dplloyd at every k"] == "not reproduced"


def test_ours_below_balcan_is_judged_by_the_rule_when_balcan_ran():
    """With Balcan et al.'s runs present the paper's only comparison gets a computed verdict:
    reproduced when Balcan costs 15.0e8 against max-cover's ~11.5e8, not reproduced when it
    costs 9e8 (catches a hard-coded verdict string, or Balcan's runs read as max-cover's)."""
    def verdict(raw):
        claims = rep.check_claims(raw).set_index("claim")["verdict"]
        return next(v for c, v in claims.items() if c.startswith("Ours (max-cover) below Balcan"))

    assert verdict(_raw(1.0, balcan=15.0)) == "reproduced"
    assert verdict(_raw(1.0, balcan=9.0)) == "not reproduced"


@pytest.mark.slow
def test_small_panel_and_report(tmp_path):
    df, notes = rep.run_figure1(
        "synthetic", ks=(2, 6), runs=1, n=1500, methods=("maxcover", "dplloyd", "lloyd")
    )
    assert len(df) == 6 and np.all(np.isfinite(df.cost))
    summary = rep.summarize(df)
    lloyd = summary[summary.method == "lloyd"].set_index("k")["mean"]
    assert lloyd[6] < lloyd[2]
    path = rep.write_report(
        df,
        rep.check_claims(df),
        None,
        notes,
        quick=True,
        runs=1,
        elapsed=1.0,
        out=tmp_path,
    )
    text = path.read_text()
    assert "## synthetic" in text and "Balcan" in text
    html = (tmp_path / "figures" / "maxcover_fig1.html").read_text()
    assert "cdn.plot.ly" not in html and 'src="plotly.min.js"' in html
    assert "![" in text and (tmp_path / "figures" / "maxcover_fig1.png").exists()
    # the report can be rebuilt from the saved raw results without new runs
    df.to_csv(tmp_path / "maxcover_raw.csv", index=False)
    pd.DataFrame({"n": [1000], "mean": [2.0], "std": [0.1]}).to_csv(
        tmp_path / "maxcover_claim11.csv", index=False
    )
    out = tmp_path / "again"
    out.mkdir()
    assert rep.main(["--from-csv", str(tmp_path / "maxcover_raw.csv"), "--out", str(out)]) == 0
    assert "| 1000 | 2 | 0.1 |" in (out / "maxcover.md").read_text()


@pytest.mark.data
def test_mnist_loader(shared_data):
    X, radius = rep.load_mnist(shared_data / "mnist.npz")
    assert X.shape == (70_000, 784)
    assert radius == pytest.approx(127.5 * 28)
    assert np.abs(X).max() <= 127.5
    assert np.linalg.norm(X, axis=1).max() <= radius


def test_missing_diffprivlib_env_is_a_clear_skip(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_DIFFPRIVLIB_PYTHON", str(tmp_path / "nope" / "python"))
    assert rep.diffprivlib_python() is None
    assert rep.run_diffprivlib(np.zeros((10, 2)), 2, 1.0, 1.0, [0]) is None
    assert "build.sh" in rep.DIFFPRIVLIB_MISSING


@pytest.mark.slow
def test_diffprivlib_runner_round_trip():
    require(rep.diffprivlib_python() is not None, rep.DIFFPRIVLIB_MISSING)
    X = np.random.default_rng(0).uniform(-1, 1, (500, 3))
    res = rep.run_diffprivlib(X, 2, 1.0, 1.0, [0, 1])
    assert res["versions"]["diffprivlib"] == "0.6.6"
    assert len(res["runs"]) == 2
    C = np.asarray(res["runs"][0]["centers"])
    assert C.shape == (2, 3) and np.all(np.abs(C) <= 1 + 1e-9)
    assert math.isfinite(res["peak_rss_mib"])
