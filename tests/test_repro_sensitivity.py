"""Reproduction of Rubinstein & Aldà (2017): the table functions at small sizes, and main()."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore.reproduce import sensitivity as rep


def test_table1_and_wrong_branch_column():
    row1, row3 = rep.table1(gammas=(0.5, 0.1, 0.05), ms=(100, 1000))
    assert row1.m.tolist() == [8, 285, 1305] and (row1.k == row1.m).all()
    assert row1["m (branch +1, Python port)"].tolist() == [8, 292, 1325]
    assert np.round(row3.gamma_min, 5).tolist() == [0.15972, 0.05647]


def test_figures_2_and_3_shapes():
    f2 = rep.figure2([0.5, 0.1, 0.01])
    assert f2.m.tolist() == [8, 285, 41971]
    f3 = rep.figure3(ms=(100,), points=5)
    assert f3["k/m"].iloc[0] == 1.0 and f3["k/m"].is_monotonic_decreasing


def test_example6_matches_exact_expectation():
    # 40 repeats of m = 1000: SD of n·G_(957) is ~0.14, so the mean has SE ~0.023; 4 SE = 0.09.
    e6 = rep.example6(ms=(1000,), gammas=(0.1, 0.5), repeats=40, rng=0)
    row = e6[np.isclose(e6.gamma, 0.1)].iloc[0]
    assert row["n*E[sampled] (exact)"] == pytest.approx(3.1355, abs=1e-4)  # spec claim 5
    assert abs(row["n*sampled (mean)"] - 3.1355) < 0.09
    assert (e6["n*sampled (mean)"] > e6["n*analytic"]).all()
    assert row.k == 957 and row["n*analytic"] == pytest.approx(math.log(10))


def test_delivered_confidence_table():
    conf = rep.delivered_confidence(cases=((100, 0.3),), runs=400, rng=0)
    row = conf.iloc[0]
    assert abs(row["mean Phi(delta_hat)"] - row["k/(m+1)"]) < 4 * row["se"]


def test_appendix_c_gap_is_bounded_by_three_not_striking():
    """The report's App. C finding: with the sharp L1 bound d/n the reduction is at most ≈ 3×
    (n·G = ‖U − U'‖₁ has mean d/3 and concentrates), far from one decade. At d = 20 the ratio is
    in (1.5, 3.5). Bug caught: a global bound that is not sharp (e.g. √d·d/n, or d/n computed
    with the wrong n) would put the ratio above 3.5 and fake the paper's 'striking' gap; a
    sampler inverting the wrong order statistic (k − 1 from the top) would push it below 1.5."""
    appc = rep.appendix_c(ds=(20,), gammas=(0.5, 0.1), rng=0)
    assert ((appc["global/sampled"] > 1.5) & (appc["global/sampled"] < 3.5)).all(), appc


def test_svm_sensitivity_far_below_proposition_19():
    tab = rep.svm_sensitivity(ds=(8,), gammas=(0.5,), m=12, rng=0)
    assert tab.k.tolist() == [sampler_k(12, 0.5)]
    assert tab["global"].iloc[0] == pytest.approx(19.067, abs=1e-3)
    # paper: "hovers around 0.01"; our full run (m = 1500) gives 0.0024 at γ = 0.5: with m = 12
    # a 10× band around 0.005 still fails a sensitivity off by the factor C = 3 or n
    assert 5e-4 < tab.sampled.iloc[0] < 0.02


def sampler_k(m, gamma):
    from dpcore.mechanisms.sensitivity.sampler import sampler_config

    return sampler_config(m=m, gamma=gamma).k


def test_svm_utility_small():
    tab, dh, glob = rep.svm_utility(
        epsilons=(0.01, 10.0, 1e4), m=12, gamma=0.5, repeats=3, test_size=2000, rng=0
    )
    assert dh < glob
    assert tab["non-private"].iloc[0] < 0.1
    assert tab.sampler.iloc[-1] == pytest.approx(tab["non-private"].iloc[0], abs=0.02)
    assert tab["global"].iloc[1] > tab.sampler.iloc[1]  # at ε = 10 only the sampler is useful


def test_kde_utility_small():
    tab, info = rep.kde_utility(epsilons=(0.01, 100.0), gammas=(0.1, 0.5), m=2000, repeats=5, rng=0)
    assert set(info) >= {"global", "median G / global"}
    assert all(v <= info["global"] * (1 + 1e-12) for k, v in info.items() if k.startswith("s"))
    # large ε: the error is the Bernstein approximation error (the plateau)
    assert tab.iloc[-1, 1] == pytest.approx(tab["noiseless Bernstein"].iloc[-1], rel=0.02)
    assert tab.iloc[0, 1] > tab.iloc[-1, 1]


@pytest.mark.slow
def test_main_quick_writes_report_and_figures(tmp_path):
    assert rep.main(["--quick", "--out", str(tmp_path)]) == 0
    text = (tmp_path / "sensitivity_sampler.md").read_text()
    assert "| 0.1 | 0.00974461 | 285 | 285 | 292 |" in text
    assert "## Claims of spec §7" in text and "Findings and errata" in text
    assert "## Differences from the paper" in text
    figures = {p.name for p in (tmp_path / "figures").iterdir()}
    for i in (1, 2, 3, 4, 5, 6, 7, 9):
        assert {f"sensitivity_fig{i}.html", f"sensitivity_fig{i}.png"} <= figures
    assert "plotly.min.js" in figures and "![" in text


def test_figure1_ecdf_and_true_cdf():
    table, cfg, dh = rep.figure1(m=100, gamma=0.3)
    assert len(table) == 100 and dh == table["G"].iloc[cfg.k - 1]
    # DKW: the ECDF is within ρ' = sqrt(log(1/ρ)/(2m)) of the true CDF with prob. >= 1 - ρ
    rho_prime = math.sqrt(math.log(1 / cfg.rho) / (2 * cfg.m))
    assert (table["ecdf"] - table["true CDF"]).max() <= rho_prime


def test_kde_sensitivity_quantiles_increase_to_one():
    tab = rep.kde_sensitivity_quantiles(bandwidths=(0.05,), levels=(0.5, 1.0), m=3000)
    row = tab.iloc[0]
    assert 0 < row["q0.5 / global"] < row["q1 / global"] <= 1.0 + 1e-12
