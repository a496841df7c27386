"""Reproduction of FriendlyCore's claims (spec friendlycore.md §6) at small sizes.

The full report (`python -m dpcore.reproduce.friendlycore`) runs the paper's grids; these tests
check the same claims on reduced grids so CI catches a regression.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.reproduce import friendlycore as rep
from dpcore.reproduce._verdicts import compare, trim10


def test_fig5_radius_fc_beats_coinpress_only_for_huge_r():
    """Claim 5(1), judged by the report's rule (bootstrap interval of the trimmed-mean ratio over
    10 repetitions): FC_Avg below CoinPress t=20 at R = 1e9, CoinPress t=4 below FC_Avg at
    R = 100. Bug caught: CoinPress given the true mean's norm instead of R (its error would not
    grow with R, so FC would not win at 1e9)."""
    df = rep.figure5_vs_radius([1e2, 1e9], iters=(4, 20), reps=10, rng=0)

    def err(m, R):
        return df[(df.method == m) & (df.R == R)].error.to_numpy()

    assert compare("FC/CP20", err("FC_Avg", 1e9), err("CoinPress t=20", 1e9), trim10).outcome \
        == "holds"
    assert compare("CP4/FC", err("CoinPress t=4", 1e2), err("FC_Avg", 1e2), trim10).outcome \
        == "holds"


def _fig5_3(monkeypatch=None, rho_factor: float = 1.0):
    if rho_factor != 1.0:
        real = rep.friendly_mean
        monkeypatch.setattr(rep, "friendly_mean",
                            lambda X, **kw: real(X, **{**kw, "rho": kw["rho"] * rho_factor,
                                                             "check_size": False}))
    df = rep.figure5_vs_n([1000], reps=30, rng=2)

    def err(m):
        return df[df.method == m].error.to_numpy()

    return (compare("CP/FC", err("CoinPress t=2"), err("FC_Avg"), trim10),
            compare("FC/KV18", err("FC_Avg"), err("KV18"), trim10))


def test_fig5_3_coinpress_slightly_better_and_kv18_behind(monkeypatch):
    """Claim 5(3) at n = 1000, 30 repetitions: CoinPress/FC_Avg has a bootstrap interval below 1
    and a ratio above 0.8 ('slightly'); KV18 is behind FC_Avg. Mutation: FriendlyAvg's noise
    calibrated to ρ/4 (σ twice too large, e.g. a sensitivity 2× too large) — the ratio drops below
    0.8 and the test would fail."""
    cp_fc, fc_kv = _fig5_3()
    assert cp_fc.outcome == "holds" and cp_fc.ratio > 0.8, cp_fc
    assert fc_kv.outcome == "holds", fc_kv
    bad, _ = _fig5_3(monkeypatch, rho_factor=0.25)
    assert bad.ratio < 0.8, bad  # the mutated mechanism fails the 'slightly' part


@pytest.mark.slow
def test_fig6_sd_reading_fc_accurate_and_printed_reading_fails():
    # Claim 5 under the sd reading: FC succeeds and beats DP-Lloyd at ε = 2 (documented finding:
    # under the printed covariance FC fails and its backup is what gets measured).
    sd = rep.figure6([40_000], reps=1, reading="sd", rng=3, fallback=FB)
    fc = sd[sd.method == "FC_Clustering"].iloc[0]
    assert fc.fc_success and fc.loss < 0.02
    assert fc.loss < sd[sd.method == "DPLloyd ε=2"].loss.iloc[0]
    lsh = rep.figure6_lsh([40_000], reps=1, reading="sd", rng=3)
    assert fc.loss < lsh.loss.iloc[0]  # the paper's claim: LSH_Clustering stays behind
    pr = rep.figure6([20_000], reps=1, reading="printed", rng=4, fallback=FB)
    assert not pr[pr.method == "FC_Clustering"].fc_success.iloc[0]


def test_fig6_and_fig7_data():
    X, c = rep.fig6_data(800, reading="printed", rng=0)
    assert X.shape == (800, 2) and np.linalg.norm(X, axis=1).max() <= 1 + 1e-12
    assert np.linalg.norm(c, axis=1).max() <= 1
    Y, y = rep.fig7_data(1000, 16, rng=0)
    assert Y.shape == (1000, 16) and set(np.unique(y)) <= set(range(5))
    assert rep.labelling_failure(np.array([0, 0, 1, 2]), np.array([2, 2, 0, 1]), 3) == 0.0
    assert rep.labelling_failure(np.array([0, 1]), np.array([0, 0]), 2) == 0.5
    assert rep.fc_radius(1000, 800) == pytest.approx(49.47, abs=0.01)  # spec §5.1


@pytest.mark.slow
def test_fig7_left_pca_oracle_separates_high_dim():
    # Claim 7: with the PCA oracle FC labels perfectly at large d (d = 512 at n = 2.5e5 needs
    # the paper's n; at d ≤ 128 the tuples do not match, see the report).
    df = rep.figure7_left([512], n=250_000, reps=1, rng=5, fallback=FB)
    fc = df[df.method.str.startswith("FC")].iloc[0]
    assert fc.fc_success and fc.failure < 0.01


def test_claims_table_from_small_runs_uses_the_stated_rule():
    """claims() reads per-repetition frames and every verdict is one of the rule's words; a
    table with CoinPress far better than FC at d = 50 turns 5(3) into 'not reproduced' (the old
    test fed hand-made numbers to hard-coded 'held' strings)."""
    import pandas as pd

    g = np.random.default_rng(0)

    def frame(key, values, methods, scale):
        return pd.DataFrame([{key: v, "method": m, "rep": r, "error": s * (1 + 0.05 * g.normal())}
                             for v in values for m, s in zip(methods, scale, strict=True)
                             for r in range(10)])

    raw = {"f5r": frame("R", [1e2, 1e9], ["FC_Avg", "CoinPress t=4"], [3.0, 1.0]),
           "f5d": frame("d", [10, 5000], ["FC_Avg", "CoinPress t=2"], [1.0, 2.0]),
           "f5n": frame("n", [1000], ["FC_Avg", "CoinPress t=2"], [1.0, 0.9]),
           "f6": pd.DataFrame({"n": [10, 100] * 10, "reading": "sd", "rep": range(20),
                               "method": "FC_Clustering", "loss": 0.1, "fc_success": True}),
           "f7": pd.DataFrame({"d": 64, "rep": range(10), "method": "FC_Clustering (PCA oracle)",
                               "failure": 0.0, "fc_success": True})}
    words = {"reproduced", "partly", "not reproduced", "inconclusive", "not checked"}
    cl = rep.claims(raw)
    assert set(cl.verdict) <= words
    assert cl.verdict.iloc[2] == "reproduced"  # 5(3): ratio 0.9 in (0.8, 1)
    raw["f5n"] = frame("n", [1000], ["FC_Avg", "CoinPress t=2"], [1.0, 1.5])
    assert rep.claims(raw).verdict.iloc[2] == "not reproduced"


def test_claim4_preprocessing_independent_of_dimension_and_norm():
    # Claim 4: FriendlyCore's pre-processing depends on neither d nor the norm of the points:
    # same n̂ / threshold draws for the same seed, and the whole N(μ, I_d) sample is kept.
    from dpcore.mechanisms.friendlycore import friendly_core

    # Bug caught: a filter whose radius or threshold depends on d or on the norm of the points
    # (e.g. r without the √d term, or computed from un-centred norms) drops points here; the
    # mutated radius (d = 10's radius on d = 1000 data) shows the check has power.
    n = 800
    for d, shift in [(10, 0.0), (1000, 0.0), (3000, 1e6)]:
        X = np.random.default_rng(d).standard_normal((n, d)) + shift
        res = friendly_core(X, rep.fc_radius(d, n), rho=0.1, delta=5e-9, rng=7)
        assert res.size == n
    X = np.random.default_rng(1).standard_normal((n, 1000))
    assert friendly_core(X, rep.fc_radius(10, n), rho=0.1, delta=5e-9, rng=7).size < n // 2


def _fallback() -> str:
    """The paper's LSH backup once FriendlyCoreKMeans has it, the DPLloyd stand-in before."""
    from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans

    try:
        FriendlyCoreKMeans._parameter_constraints["fallback"].validate("fallback", "lsh")
    except ValueError:
        return "dplloyd"
    return "lsh"


FB = _fallback()


def test_fig6_right_centres_on_the_clusters():
    df = rep.figure6_right(40_000, reading="sd", rng=1, fallback=FB)
    fc = df[df.who.str.startswith("FC_Clustering")]
    assert len(fc) == 8 and fc.who.iloc[0] == "FC_Clustering"
    assert fc.nearest_true.max() < 0.02


def test_top_up_adds_missing_fig6_repetitions(tmp_path):
    """top_up fills every (n, reading) setting of Fig. 6 to the target, numbers the new runs
    after the stored ones and is reproducible.

    Catches: new repetitions numbered from 0 again (duplicate reps that the report would count
    as one setting twice), stored rows overwritten or dropped, a setting that already has
    enough repetitions run again, and top-up streams that depend on anything but the stored
    runs and the seed.
    """
    import pandas as pd

    from dpcore.reproduce._friendlycore_store import stamp_runs

    stored = pd.concat([rep.figure6([800], reps=2, reading="sd", rng=1, fallback=FB),
                        rep.figure6_lsh([800], reps=3, reading="sd", rng=2)], ignore_index=True)
    stored = stamp_runs({"f6": stored}, FB)["f6"]  # this checkout's version: top-up may add
    raw = {"f6": stored}
    out = rep.top_up(raw, 3, seed=5, save=tmp_path)["f6"]
    counts = out.groupby("method")["rep"].agg(["size", "nunique", "max"])
    assert (counts["size"] == 3).all() and (counts["nunique"] == 3).all()
    assert (counts["max"] == 2).all()
    pd.testing.assert_frame_equal(out.iloc[: len(stored)], stored)
    again = rep.top_up({"f6": stored}, 3, seed=5)["f6"]
    pd.testing.assert_frame_equal(again, out)
    assert len(pd.read_csv(tmp_path / "friendlycore_f6.csv.gz")) == len(out)
    assert raw["f6"] is stored  # the caller's dict is not modified


def test_fig7_right_runs_at_the_papers_t_with_the_papers_noise():
    """Fig. 7 right runs FC_Clustering at the paper's t = 200 (the paper's noise, its true charge
    reported, as Figs. 6 and 7 left): under the add/remove charge t = 200 is refused (need ≥ 282),
    and a full re-run died there after an hour of other figures."""
    X, _ = rep.fig7_data(1_600, 16, 2, rng=0)
    df = rep.figure7_right(X, [2], reps=1, rng=1, fallback=FB)
    assert set(df["method"]) == {"FC_Clustering", "LSH_Clustering ε=2", "DPLloyd ε=2"}


def test_each_panel_is_saved_when_it_is_done(tmp_path, monkeypatch):
    """A failure in a later panel loses only that panel: the ones before it are on disk,
    stamped with the run's code version (the bug: results kept in memory until the end)."""
    def boom() -> pd.DataFrame:
        raise RuntimeError("a later panel fails")

    monkeypatch.setattr(rep, "panel_jobs", lambda *a, **k: {
        "f5r": [("first", lambda: pd.DataFrame({"R": [1.0], "error": [0.5]}))],
        "f5d": [("second", boom)]})
    with pytest.raises(RuntimeError):
        rep.run_all(True, save=tmp_path, fallback=FB)
    saved = pd.read_csv(tmp_path / "friendlycore_f5r.csv.gz")
    assert saved["code_version"].nunique() == 1
    assert not (tmp_path / "friendlycore_f5d.csv.gz").exists()
    with pytest.raises(ValueError, match="unknown panels"):
        rep.run_all(True, panels=["f9"], fallback=FB)
