"""Reproduction of FriendlyCore's claims (spec friendlycore.md §6) at small sizes.

The full report (`python -m dpcore.reproduce.friendlycore`) runs the paper's grids; these tests
check the same claims on reduced grids so CI catches a regression.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.reproduce import friendlycore as rep


def test_fig5_radius_fc_wins_only_for_huge_r():
    # Claim 1: FC_Avg is constant in R and beats CoinPress (4/20/40 iterations) for R > 1e7.
    df = rep.figure5_vs_radius([1e2, 1e9], reps=3, rng=0)
    fc = df[df.method == "FC_Avg"].error
    assert fc.nunique() == 1 and 2.5 < fc.iloc[0] < 4.5
    for t in (4, 20, 40):
        cp = df[df.method == f"CoinPress t={t}"].set_index("R").error
        assert cp[1e9] > fc.iloc[0]  # FC wins at R = 1e9
    # ... while at R = 100 CoinPress with 4 iterations is better (it is near-optimal there).
    assert df[(df.method == "CoinPress t=4") & (df.R == 1e2)].error.iloc[0] < fc.iloc[0]


@pytest.mark.slow
def test_fig5_dim_and_n_claims():
    # Claim 2: CoinPress's error relative to FC grows with d; FC better at large d. (Measured
    # finding: at d = 1000 CoinPress with 4 or 8 iterations is still better; FC wins from a few
    # thousand dimensions on, see the report.)
    df = rep.figure5_vs_dim([10, 5000], reps=2, rng=1)
    for t in (2, 4, 8):
        ratio = {
            d: df[(df.d == d) & (df.method == f"CoinPress t={t}")].error.iloc[0]
            / df[(df.d == d) & (df.method == "FC_Avg")].error.iloc[0]
            for d in (10, 5000)
        }
        assert ratio[5000] > ratio[10] and ratio[5000] > 1, (t, ratio)
    # Claim 3: at d = 50, R = 10√d CoinPress is slightly better than FC.
    dn = rep.figure5_vs_n([2000], reps=5, rng=2)
    cp = dn[dn.method == "CoinPress t=2"].error.iloc[0]
    fc = dn[dn.method == "FC_Avg"].error.iloc[0]
    assert 0.5 * fc < cp < fc


@pytest.mark.slow
def test_fig6_sd_reading_fc_accurate_and_printed_reading_fails():
    # Claim 5 under the sd reading: FC succeeds and beats DP-Lloyd at ε = 2 (documented finding:
    # under the printed covariance FC fails and its backup is what gets measured).
    sd = rep.figure6([40_000], reps=1, reading="sd", rng=3)
    fc = sd[sd.method == "FC_Clustering"].iloc[0]
    assert fc.fc_success and fc.loss < 0.02
    assert fc.loss < sd[sd.method == "DPLloyd ε=2"].loss.iloc[0]
    pr = rep.figure6([20_000], reps=1, reading="printed", rng=4)
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
    df = rep.figure7_left([512], n=250_000, reps=1, rng=5)
    fc = df[df.method.str.startswith("FC")].iloc[0]
    assert fc.fc_success and fc.failure < 0.01


def test_claims_table_verdicts():
    import pandas as pd

    f5r = pd.DataFrame({"R": [1.0, 1.0, 1e9, 1e9], "method": ["FC_Avg", "CoinPress t=4"] * 2,
                        "error": [3.0, 1.0, 3.0, 100.0]})
    f5d = pd.DataFrame({"d": [10, 10, 1000, 1000], "method": ["FC_Avg", "CoinPress t=2"] * 2,
                        "error": [1.0, 0.9, 3.0, 6.0]})
    f5n = pd.DataFrame({"n": [1000, 1000], "method": ["FC_Avg", "CoinPress t=2"],
                        "error": [1.0, 0.9]})
    f6 = pd.DataFrame({"n": [10, 10, 100, 100], "reading": "sd",
                       "method": ["FC_Clustering", "DPLloyd ε=2"] * 2, "loss": [0.5, 0.1, 0.0, 0.1],
                       "fc_success": [False, True, True, True]})
    fc7 = "FC_Clustering (PCA oracle)"
    f7 = pd.DataFrame({"d": [8, 8, 64, 64], "method": [fc7, "DPLloyd ε=2"] * 2,
                       "failure": [0.3, 0.2, 0.0, 0.4], "fc_success": True})
    cl = rep.claims(f5r, f5d, f5n, f6, f7)
    assert list(cl.verdict) == ["held"] * 5
    f5n.loc[1, "error"] = 2.0  # CoinPress worse at d = 50 → claim 3 not held
    assert rep.claims(f5r, f5d, f5n, f6, f7).verdict.iloc[2] == "NOT held"


def test_claim4_preprocessing_independent_of_dimension_and_norm():
    # Claim 4: FriendlyCore's pre-processing depends on neither d nor the norm of the points:
    # same n̂ / threshold draws for the same seed, and the whole N(μ, I_d) sample is kept.
    from dpcore.friendlycore import friendly_core

    n = 800
    results = []
    for d, shift in [(10, 0.0), (1000, 0.0), (3000, 1e6)]:
        X = np.random.default_rng(d).standard_normal((n, d)) + shift
        res = friendly_core(X, rep.fc_radius(d, n), rho=0.1, delta=5e-9, rng=7)
        assert res.size == n
        results.append((res.n_hat, res.threshold, res.noise_sd))
    assert results[0] == results[1] == results[2]


def test_fig6_right_centres_on_the_clusters():
    df = rep.figure6_right(40_000, reading="sd", rng=1)
    fc = df[df.who.str.startswith("FC_Clustering")]
    assert len(fc) == 8 and fc.who.iloc[0] == "FC_Clustering"
    assert fc.nearest_true.max() < 0.02
