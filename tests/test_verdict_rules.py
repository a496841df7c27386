"""The reproduction reports' verdict rules as functions of crafted inputs (issue 24).

Each rule gets inputs on both sides of its threshold, so a verdict hard-coded to "reproduced",
a moved threshold or a rule made always true fails here. The six mutants of the review:
importance C7 and C10 hard-coded; the sensitivity App. C threshold set to 1; the bootstrap rule
saying "holds" whenever the interval's lower end is below 1; the max-cover plateau rule and
FriendlyCore's "success rises" rule made always true.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.reproduce import _importance_report as imp
from dpcore.reproduce import friendlycore as fc_rep
from dpcore.reproduce import maxcover as mc_rep
from dpcore.reproduce import sensitivity as sens_rep
from dpcore.reproduce._verdicts import compare, verdict_word

# --- the bootstrap rule itself ---------------------------------------------------------------


def _noisy(centre: float, n: int = 20, seed: int = 0, sd: float = 0.05) -> np.ndarray:
    return centre * (1 + sd * np.random.default_rng(seed).standard_normal(n))


def test_compare_holds_only_when_the_whole_interval_is_below_one():
    """Mutant: "holds" whenever the interval's lower end is below 1. Equal medians give an
    interval around 1: inconclusive, never holds."""
    below = compare("a/b", _noisy(0.7, seed=1), _noisy(1.0, seed=2))
    assert below.hi < 1 and below.outcome == "holds"
    above = compare("a/b", _noisy(1.4, seed=3), _noisy(1.0, seed=4))
    assert above.lo > 1 and above.outcome == "contradicted"
    same = _noisy(1.0, seed=5)
    tie = compare("a/b", same, same.copy())
    assert tie.ratio == 1 and tie.lo < 1 < tie.hi and tie.outcome == "inconclusive"
    # a point estimate below 1 is not enough: a wide interval reaching above 1 stays inconclusive
    wide = compare("a/b", _noisy(0.95, seed=7, sd=0.3), _noisy(1.0, seed=8, sd=0.3))
    assert wide.ratio < 1 < wide.hi and wide.outcome == "inconclusive"


def test_verdict_word_aggregates_by_the_stated_rule():
    assert verdict_word(["holds", "holds"]) == "reproduced"
    assert verdict_word(["holds", "inconclusive"]) == "partly"
    assert verdict_word(["holds", "contradicted"]) == "partly"
    assert verdict_word(["inconclusive", "contradicted"]) == "not reproduced"
    assert verdict_word(["inconclusive", "inconclusive"]) == "inconclusive"
    assert verdict_word([]) == "not checked"


# --- max-cover (Fig. 1) ----------------------------------------------------------------------


def _mc_raw(dataset: str, costs: dict[str, list[float]], ks=(2, 6, 10), reps: int = 8,
            sd: float = 0.02) -> pd.DataFrame:
    # the noise depends on (k, run) only: equal costs give identical samples (a tie)
    noise = np.random.default_rng(0).standard_normal((len(ks), reps))
    rows = [(dataset, m, k, r, c * (1 + sd * noise[i, r]), 0.1)
            for m, per_k in costs.items() for i, (k, c) in enumerate(zip(ks, per_k, strict=True))
            for r in range(reps)]
    return pd.DataFrame(rows, columns=["dataset", "method", "k", "run", "cost", "seconds"])


def _mc_verdict(raw: pd.DataFrame, start: str) -> str:
    claims = mc_rep.check_claims(raw)
    return next(v for c, v in zip(claims.claim, claims.verdict, strict=True)
                if c.startswith(start))


def test_maxcover_mnist_overlapping_with_balcan_is_inconclusive():
    """Mutant (bootstrap rule): MNIST's max-cover against Balcan et al. overlaps at every k; the
    verdict is "inconclusive", which the lower-end-only rule turned into "reproduced"."""
    same = [1.5e11, 1.45e11, 1.4e11]
    raw = _mc_raw("mnist", {"maxcover": same, "balcan": same}, sd=0.05)
    assert _mc_verdict(raw, "Ours (max-cover) below Balcan") == "inconclusive"
    raw = _mc_raw("mnist", {"maxcover": same, "balcan": [2.0e11] * 3})
    assert _mc_verdict(raw, "Ours (max-cover) below Balcan") == "reproduced"


def test_maxcover_plateau_rule_compares_with_lloyds_ratio():
    """Mutant: the plateau rule made always true. A method whose cost falls with k faster than
    Lloyd's (ratio 0.5 < Lloyd's 0.6) does not plateau."""
    lloyd = [10e8, 8e8, 6e8]
    flat = _mc_raw("synthetic", {"lloyd": lloyd, "maxcover": [12e8, 11.5e8, 11e8]})
    assert _mc_verdict(flat, "maxcover: plateaus") == "reproduced"
    falling = _mc_raw("synthetic", {"lloyd": lloyd, "maxcover": [12e8, 9e8, 6e8]})
    assert _mc_verdict(falling, "maxcover: plateaus") == "not reproduced"
    dpl = _mc_raw("synthetic", {"lloyd": lloyd, "maxcover": [12e8] * 3,
                                "dplloyd": [20e8, 12e8, 9e8]})
    assert _mc_verdict(dpl, "dplloyd: plateaus") == "not reproduced"


# --- FriendlyCore (Fig. 6 left: success rises with n) ----------------------------------------


def _fc_raw(success_lo: list[bool], success_hi: list[bool]) -> dict[str, pd.DataFrame]:
    g = np.random.default_rng(0)

    def frame(key, values, methods, scale):
        return pd.DataFrame([{key: v, "method": m, "rep": r, "error": s * (1 + 0.05 * g.normal())}
                             for v in values for m, s in zip(methods, scale, strict=True)
                             for r in range(10)])

    f6 = pd.DataFrame(
        [{"n": 10, "reading": "sd", "rep": r, "method": "FC_Clustering", "loss": 0.1,
          "fc_success": s} for r, s in enumerate(success_lo)]
        + [{"n": 100, "reading": "sd", "rep": r, "method": "FC_Clustering", "loss": 0.1,
            "fc_success": s} for r, s in enumerate(success_hi)])
    return {"f5r": frame("R", [1e2, 1e9], ["FC_Avg", "CoinPress t=4"], [3.0, 1.0]),
            "f5d": frame("d", [10, 5000], ["FC_Avg", "CoinPress t=2"], [1.0, 2.0]),
            "f5n": frame("n", [1000], ["FC_Avg", "CoinPress t=2"], [1.0, 0.9]),
            "f6": f6,
            "f7": pd.DataFrame({"d": 64, "rep": range(10), "method": "FC_Clustering (PCA oracle)",
                                "failure": 0.0, "fc_success": True})}


def _fc_success_verdict(raw) -> str:
    cl = fc_rep.claims(raw)
    return next(v for c, v in zip(cl.claim, cl.verdict, strict=True)
                if c.startswith("6 left (sd reading): FC success rises"))


def test_friendlycore_success_rises_is_judged_by_clopper_pearson():
    """Mutant: "success rises with n" made always true. 0/20 → 20/20 holds; the same rate at
    both n is inconclusive; a fall is contradicted."""
    assert _fc_success_verdict(_fc_raw([False] * 20, [True] * 20)) == "reproduced"
    assert _fc_success_verdict(_fc_raw([True] * 20, [True] * 20)) == "inconclusive"
    assert _fc_success_verdict(_fc_raw([True] * 10 + [False] * 10,
                                       [True] * 12 + [False] * 8)) == "inconclusive"
    assert _fc_success_verdict(_fc_raw([True] * 20, [False] * 20)) == "not reproduced"


# --- importance sampling (C7, C10) -----------------------------------------------------------

FIG2 = {"corr": 0.95, "spearman_norm": -0.999, "loss_ok": True, "mse_ok": True,
        "min_dominance": 1.1, "max_dominance": 2.0}
CHECKS = {"epsilon": 3.0, "m": 20000, "min_weight": 1.0, "max_psi_over_target": 1.0,
          "active_gap": 0.0, "closed_vs_bisection": 0.0, "spearman_w_norm": -1.0,
          "spearman_qpriv_qcore": 0.9999, "pearson_qpriv_qcore": 0.95}


def _imp_runs(core: float, opt: float, reps: int = 10, sd: float = 0.02) -> pd.DataFrame:
    g = np.random.default_rng(0)
    rows = []
    for m in (5000.0, 20000.0):
        for e in (1.0, 3.0):
            for s, level in (("unif", 1.0), ("core", core), ("opt", opt)):
                for r in range(reps):
                    rows.append({"sampler": s, "epsilon": e, "m": m, "rep": r,
                                 "cost": level * (1 + sd * g.standard_normal())
                                 * (1 + 5000 / m)})
    return pd.DataFrame(rows)


def _timing(pct: float) -> pd.DataFrame:
    return pd.DataFrame({"sampler": ["opt"], "m": [20000.0], "rel_total_pct": [pct],
                         "t_weights": [0.1], "t_calibration": [5.1], "t_total": [1.0]})


def _imp_verdicts(runs: pd.DataFrame, pct: float = 4.3, x_tilde: float = 10.0
                  ) -> dict[str, str]:
    tab = imp.claims_table({"covertype": runs}, FIG2, _timing(pct), CHECKS, x_tilde)
    return dict(zip(tab.claim, tab.verdict, strict=True))


def test_importance_c7_follows_the_comparisons():
    """Mutant: C7 hard-coded to "reproduced". core and opt above unif at every cell: not
    reproduced; below everywhere: reproduced; one below, one equal: partly."""
    assert _imp_verdicts(_imp_runs(0.8, 0.7))["C7"] == "reproduced"
    assert _imp_verdicts(_imp_runs(1.3, 1.5), x_tilde=0.5)["C7"] == "not reproduced"
    assert _imp_verdicts(_imp_runs(0.8, 1.0))["C7"] == "partly"


@pytest.mark.parametrize(("pct", "word"), [(4.3, "reproduced"), (6.4, "reproduced"),
                                           (2.9, "reproduced"), (6.5, "not reproduced"),
                                           (2.8, "not reproduced"), (20.0, "not reproduced")])
def test_importance_c10_is_within_a_factor_of_the_papers_share(pct, word):
    """Mutant: C10 hard-coded to "reproduced". The rule: ours within ×1.5 of the paper's
    4.30 % (2.87 % … 6.45 %)."""
    assert _imp_verdicts(_imp_runs(0.8, 0.7), pct)["C10"] == word


# --- sensitivity sampler (App. C) ------------------------------------------------------------


def _sens_tables(appc_gap: list[float]) -> dict[str, pd.DataFrame]:
    f3 = pd.DataFrame({"m": [100] * 3 + [1000] * 3, "gamma": [0.1, 0.2, 0.3] * 2,
                       "k/m": [0.9, 0.8, 0.7] * 2})
    return dict(
        row1=pd.DataFrame({"k": [5, 6], "m": [5, 6]}),
        f2=pd.DataFrame({"m": [300, 200, 100]}),
        f3=f3,
        e6=pd.DataFrame({"m": [100, 10000], "n*sampled (mean)": [1.5, 1.1],
                         "n*analytic": [1.0, 1.0]}),
        conf=pd.DataFrame({"mean Phi(delta_hat)": [0.95], "k/(m+1)": [0.95], "se": [0.01],
                           "1-gamma": [0.9]}),
        appc=pd.DataFrame({"global/sampled": appc_gap}),
        svm_s=pd.DataFrame({"gamma": [0.01, 0.01], "d": [2, 8], "sampled": [0.01, 0.02],
                            "global/sampled": [200.0, 300.0], "global": [2.0, 6.0]}),
        svm_u=pd.DataFrame({"epsilon": [0.1, 1.0, 10.0], "non-private": [0.1] * 3,
                            "sampler": [0.5, 0.105, 0.1], "global": [0.5, 0.3, 0.1]}),
        kde_t=pd.DataFrame({"epsilon": [0.1, 1.0, 10.0, 100.0],
                            "sampler γ=0.1": [0.5, 0.2, 0.1, 0.1],
                            "global": [0.9, 0.3, 0.1, 0.1], "noiseless": [0.1] * 4}),
    )


@pytest.mark.parametrize(("gaps", "word"), [([1.5, 2.9, 3.0], "not reproduced"),
                                            ([1.2, 9.99], "not reproduced"),
                                            ([2.0, 10.0], "reproduced"),
                                            ([3.0, 40.0], "reproduced")])
def test_sensitivity_appendix_c_needs_a_decade(gaps, word):
    """Mutant: the App. C threshold set to 1. The rule: global/sampled ≥ 10 at some (d, γ);
    our sharp-bound gap of ≈ 3 is not the paper's 'striking' log-scale gap."""
    tab = sens_rep.claims(**_sens_tables(gaps))
    got = dict(zip(tab.claim, tab.verdict, strict=True))
    assert next(v for c, v in got.items() if c.startswith("App. C")) == word
    assert got["3 row 1 gives k = m"] == "reproduced"


def test_maxcover_plateau_rule_is_two_sided():
    """Weak variant: one-sided (any cost(k_max)/cost(k_min) above Lloyd's counts as a plateau).
    DPLloyd's MNIST cost rising ×1.93 while Lloyd's falls ×0.73 is not flat; a rise smaller
    than Lloyd's fall is."""
    lloyd = [10e8, 8.5e8, 7.3e8]
    rising = _mc_raw("mnist", {"lloyd": lloyd, "maxcover": [10e8] * 3,
                               "dplloyd": [10e8, 15e8, 19.3e8]})
    assert _mc_verdict(rising, "dplloyd: plateaus") == "not reproduced"
    mild = _mc_raw("mnist", {"lloyd": lloyd, "maxcover": [10e8] * 3,
                             "dplloyd": [10e8, 11e8, 12e8]})
    assert _mc_verdict(mild, "dplloyd: plateaus") == "reproduced"
    assert mc_rep.plateau_verdict(1.3, 0.73) == "reproduced"
    assert mc_rep.plateau_verdict(1.93, 0.73) == "not reproduced"
    assert mc_rep.plateau_verdict(0.6, 0.73) == "not reproduced"


@pytest.mark.parametrize(("means", "word"), [([30.4, 6.0, 1.065], "reproduced"),
                                             ([30.4, 6.0, 4.0], "not reproduced"),
                                             ([3.0, 6.0, 1.01], "not reproduced"),
                                             ([1.5, 1.5, 1.5], "not reproduced")])
def test_maxcover_claim11_needs_the_ratio_to_approach_one(means, word):
    """Claim 11 had a table and no verdict (a rule that cannot fail). The rule: the excess
    ratio − 1 falls at every larger n and ends below 0.1 of where it started; a ratio that stays
    at 5, rises on the way, or stays flat is not 'approaching the non-private cost'."""
    table = pd.DataFrame({"n": [2000, 8000, 32000], "mean": means, "std": [1.0] * 3})
    assert mc_rep.claim11_verdict(table)[0] == word


def test_friendlycore_fig6_is_judged_on_friendlycores_own_runs():
    """Weak variant: the comparison with LSH_Clustering uses every FC_Clustering row, including
    the runs where FriendlyCore failed and its backup produced the centres (the review's '6 left
    printed: partly' with 0 of 30 successes). With no success FC's accuracy half is
    contradicted, whatever the backup's loss; with successes only they are compared."""
    raw = _fc_raw([False] * 20, [False] * 20)
    f6 = raw["f6"].assign(loss=0.01)  # the backup is good: must not count for FriendlyCore
    lsh = f6.assign(method="LSH_Clustering ε=2", loss=0.5, fc_success=True)
    raw["f6"] = pd.concat([f6, lsh], ignore_index=True)
    cl = fc_rep.claims(raw)
    row = cl[cl.claim.str.startswith("6 left (sd reading)")].iloc[0]
    assert row.verdict == "not reproduced"
    assert "succeeded in 0 of 20" in row["comparisons (ratio [95 % CI]: outcome)"]
    # half the runs succeed with a loss below LSH's, the failures' backup is worse than LSH:
    # judged on the successes, FC is below LSH
    hi = raw["f6"]
    fc_hi = (hi.method == "FC_Clustering") & (hi.n == 100)
    hi.loc[fc_hi, "fc_success"] = np.arange(fc_hi.sum()) % 2 == 0
    hi.loc[fc_hi, "loss"] = np.where(hi.loc[fc_hi, "fc_success"], 0.05, 5.0)
    cl = fc_rep.claims(raw)
    text = cl[cl.claim.str.startswith("6 left (sd reading)")].iloc[0, 2]
    assert "10 of 20 successful runs" in text and "holds" in text.split(";")[0]


def test_importance_c7_judges_the_whole_claim():
    """Weak variant: C7 judged only on 'core and opt below unif'. The claim also says opt is on
    par with core or slightly better, and that costs stay below x̃ as ε → 0: opt 20 % above core
    (still below unif), or every cost above x̃, must not be 'reproduced'."""
    assert _imp_verdicts(_imp_runs(0.8, 0.75))["C7"] == "reproduced"
    assert _imp_verdicts(_imp_runs(0.7, 0.84))["C7"] == "partly"  # opt ×1.2 of core
    assert _imp_verdicts(_imp_runs(0.8, 0.75), x_tilde=0.5)["C7"] == "partly"  # above x̃


def test_importance_c8_judges_the_whole_claim():
    """Weak variant: C8 judged only on 'cost falls with m'. Costs that fall with m while core
    and opt sit above unif contradict 'unif is consistently worst'."""
    assert _imp_verdicts(_imp_runs(0.8, 0.75))["C8"] == "reproduced"
    assert _imp_verdicts(_imp_runs(1.2, 1.3))["C8"] == "partly"


def test_importance_c11_states_the_effect_size():
    """C11's counts alone hid how small the gains are (MNIST: 1.7 % median gain over uniform).
    The effect size is computed from the medians: a 20 % gain reads 20.0 %, a 2 % one 2.0 %."""
    for level, word in ((0.8, "median 20.0%"), (0.983, "median 1.7%")):
        runs = _imp_runs(level, level, sd=0.0)
        tab = imp.claims_table({"covertype": runs}, FIG2, _timing(4.3), CHECKS, 10.0)
        assert word in tab.set_index("claim").loc["C11", "measured"]


# --- FriendlyCore App. A (covariance) ---------------------------------------------------------


def _cov_runs(dists, gap=1e-10) -> pd.DataFrame:
    return pd.DataFrame({"rep": range(len(dists)), "dist": dists, "nonprivate_dist": 0.001,
                         "scale_gap": [gap] + [np.nan] * (len(dists) - 1)})


def _cov_verdicts(runs) -> list[str]:
    from dpcore.reproduce._friendlycore_covariance import covariance_claims

    return list(covariance_claims(runs, None).verdict)


def test_covariance_accuracy_counts_bottom_as_a_failure():
    """Weak variant: ⊥ runs dropped before the median (one answer in ten would then
    'reproduce' Theorem A.2). ⊥ counts as +∞; estimates within 0.1 reproduce it, beyond do not;
    a scale gap above round-off is not scale invariance."""
    assert _cov_verdicts(_cov_runs([0.03, 0.04, 0.05, 0.06])) == ["reproduced", "reproduced"]
    assert _cov_verdicts(_cov_runs([0.05] + [np.nan] * 9))[0] == "not reproduced"
    assert _cov_verdicts(_cov_runs([0.05, np.nan, np.nan]))[0] == "inconclusive"  # 3 runs
    assert _cov_verdicts(_cov_runs([0.2, 0.3, 0.25, 0.4]))[0] == "not reproduced"
    assert _cov_verdicts(_cov_runs([0.03, 0.04], gap=1e-3))[1] == "not reproduced"
