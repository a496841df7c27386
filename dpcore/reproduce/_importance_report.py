"""Importance-sampling report: theory checks, claims by rule, figures, markdown.

Input: the per-repetition runs of :func:`dpcore.reproduce.importance.covertype_runs` for each data
set (Covertype, and MNIST / gas where run), Fig. 2 tables, Table 2 timings, the DP-Lloyd variant
and noise-split tables. Output: ``importance_sampling.md`` and its figures.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from dpcore.mechanisms.importance import (
    amplified_epsilon,
    calibrate_lloyd,
    coreset_probabilities,
    lloyd_profile,
    privacy_constrained_weights,
    solve_privacy_constrained,
)
from dpcore.reproduce._figures import Panel, Series, save_figure
from dpcore.reproduce._report import markdown_table
from dpcore.reproduce._verdicts import RULE, compare, verdict_word

SAMPLERS = ("unif", "core", "opt")
DATA_NAMES = {"covertype": "Covertype", "mnist": "MNIST", "gas": "gas drift (partial)"}
PAPER_C10_PCT = 4.30  # Table 2: Covertype, opt, m = 20000, total time as % of full DP-Lloyd
C10_FACTOR = 1.5      # rule: reproduced if ours is within this factor of the paper's


def theory_checks(P, *, epsilon: float = 3.0, m: float = 20_000, n_iter: int = 10) -> dict:
    """C1–C3 and C6 recomputed on the data set P (numbers, not references to unit tests)."""
    norms = np.sqrt(np.einsum("ij,ij->i", P.X, P.X))
    cal = calibrate_lloyd("privacy", epsilon=epsilon, n=P.n, dim=P.dim, radius=P.radius,
                          sample_size=m, norms=norms)
    prof = lloyd_profile(norms, beta_sum=cal.beta_sum, beta_count=cal.beta_count, n_iter=n_iter)
    w = privacy_constrained_weights(prof.slopes, epsilon)
    w_bis = solve_privacy_constrained(prof, epsilon)
    psi = amplified_epsilon(1.0 / w, w * prof.slopes)
    q_core = coreset_probabilities(P.X, m, radius=P.radius)
    active = w > 1 + 1e-9
    return {
        "epsilon": epsilon, "m": m,
        "min_weight": float(w.min()),
        "max_psi_over_target": float(psi.max() / epsilon),
        "active_gap": float(np.max(np.abs(psi[active] / epsilon - 1))) if active.any() else 0.0,
        "closed_vs_bisection": float(np.max(np.abs(w / w_bis - 1))),
        "spearman_w_norm": float(stats.spearmanr(w, norms).statistic),
        "spearman_qpriv_qcore": float(stats.spearmanr(1 / w, q_core).statistic),
        "pearson_qpriv_qcore": float(stats.pearsonr(1 / w, q_core).statistic),
    }


def _costs(runs: pd.DataFrame, sampler: str, m, eps) -> np.ndarray:
    sel = (runs["sampler"] == sampler) & (runs["epsilon"] == eps) & (runs["rep"] >= 0)
    if m is not None:
        sel &= np.isclose(runs["m"], m)
    return runs.loc[sel, "cost"].to_numpy(float)


def _cells(runs: pd.DataFrame) -> list[tuple[float, float]]:
    ok = runs[(runs["rep"] >= 0) & (runs["sampler"] == "unif")]
    return sorted({(float(m), float(e)) for m, e in zip(ok["m"], ok["epsilon"], strict=True)
                   if math.isfinite(e)})


def sampler_comparisons(runs: pd.DataFrame, sampler: str) -> list:
    """``sampler`` below unif at every (m, ε) cell: bootstrap comparisons of the medians."""
    out = []
    for m, e in _cells(runs):
        a, b = _costs(runs, sampler, m, e), _costs(runs, "unif", m, e)
        if a.size and b.size:
            out.append(compare(f"{sampler}/unif m={m:g} ε={e:g}", a, b))
    return out


def _count(comps) -> str:
    n = len(comps)
    h = sum(c.outcome == "holds" for c in comps)
    x = sum(c.outcome == "contradicted" for c in comps)
    return f"{h}/{n} hold, {n - h - x} inconclusive, {x} contradicted"


#: "On par": opt's median within 5 % of core's (or below) — C7's "on par or slightly better";
#: also how close the largest ε must come to the ε = ∞ cost ("converges").
PAR = 1.05


def _scaled(label: str, a, b, factor: float):
    """Claim median(a) < factor · median(b) by the bootstrap rule (``compare`` on b·factor)."""
    return compare(label, a, np.asarray(b, dtype=float) * factor)


def c7_parts(r: pd.DataFrame, x_tilde: float) -> list[tuple[str, list]]:
    """C7 (spec §7) in all its parts, each a list of bootstrap comparisons: unif worst (core and
    opt below unif at every (m, ε)); opt on par with or below core (opt < 1.05·core); the cost
    at the largest ε within 5 % of the ε = ∞ cost (core and unif, which have ε = ∞ runs); at the
    smallest ε still below x̃ (the cost of every centre at 0)."""
    cells = _cells(r)
    eps = sorted({e for _, e in cells})
    par = [_scaled(f"opt/({PAR:g}·core) m={m:g} ε={e:g}", _costs(r, "opt", m, e),
                   _costs(r, "core", m, e), PAR) for m, e in cells]
    conv = [_scaled(f"{s} ε={eps[-1]:g}/({PAR:g}·ε=∞) m={m:g}", _costs(r, s, m, eps[-1]),
                    _costs(r, s, m, math.inf), PAR)
            for s in ("core", "unif") for m in sorted({m for m, _ in cells})
            if _costs(r, s, m, math.inf).size]
    below = [compare(f"{s} ε={eps[0]:g}/x̃ m={m:g}", _costs(r, s, m, eps[0]), [x_tilde])
             for s in SAMPLERS for m in sorted({m for m, _ in cells})]
    return [("core, opt below unif", sampler_comparisons(r, "core")
             + sampler_comparisons(r, "opt")),
            ("opt on par with core or below", par), ("largest ε near ε = ∞", conv),
            ("smallest ε below x̃", below)]


def c8_parts(r: pd.DataFrame) -> list[tuple[str, list]]:
    """C8 (spec §7) at ε ∈ {3, 100}: cost falls from the smallest to the largest m (each
    sampler); core and opt below unif at every m; full (DP-Lloyd on all rows) below every sampler
    at the largest m (the samplers approach it from above)."""
    dec, low, full = [], [], []
    for e in (3.0, 100.0):
        ms = sorted(r.loc[(r.sampler == "unif") & (r.epsilon == e) & (r.rep >= 0), "m"].unique())
        if len(ms) < 2:
            continue
        for s in SAMPLERS:
            dec.append(compare(f"{s} ε={e:g}: m={ms[-1]:g}/m={ms[0]:g}",
                               _costs(r, s, ms[-1], e), _costs(r, s, ms[0], e)))
            f = _costs(r, "full", None, e)
            if f.size:
                full.append(compare(f"full/{s} ε={e:g} m={ms[-1]:g}", f, _costs(r, s, ms[-1], e)))
        low += [compare(f"{s}/unif m={m:g} ε={e:g}", _costs(r, s, m, e), _costs(r, "unif", m, e))
                for s in ("core", "opt") for m in ms]
    return [("cost falls with m", dec), ("core, opt below unif", low),
            ("full below the samplers at the largest m", full)]


def _judge(parts: list[tuple[str, list]]) -> tuple[str, str]:
    """(measured text with a count per part, verdict over every comparison of every part)."""
    text = "; ".join(f"{name}: {_count(c)}" for name, c in parts if c)
    return text, verdict_word([x.outcome for _, c in parts for x in c])


def effect_sizes(r: pd.DataFrame, x_tilde: float) -> str:
    """C11's effect sizes beside its counts: the gain of core and opt over unif (1 − ratio of
    medians) in the cells where the comparison holds, and how far the best proposed-sampler cell
    gets from the one-centre cost x̃ (centred data) towards the non-private cost (the lowest
    ε = ∞ median)."""
    holds = {c.label for s in ("core", "opt") for c in sampler_comparisons(r, s)
             if c.outcome == "holds"}
    nonpriv = min((float(np.median(_costs(r, s, m, math.inf))) for s in SAMPLERS
                   for m in r.m.unique() if _costs(r, s, m, math.inf).size), default=math.nan)
    gains, way = [], []
    for m, e in _cells(r):
        u = float(np.median(_costs(r, "unif", m, e)))
        for s in ("core", "opt"):
            v = _costs(r, s, m, e)
            if not v.size:
                continue
            way.append((x_tilde - float(np.median(v))) / (x_tilde - nonpriv))
            if f"{s}/unif m={m:g} ε={e:g}" in holds:
                gains.append(1 - float(np.median(v)) / u)
    g = (f"gain over unif where it holds: median {np.median(gains):.1%}, max {max(gains):.1%}"
         if gains else "no cell holds")
    return f"{g}; best cell {max(way, default=math.nan):.1%} of the way from x̃ to the " \
           "non-private cost"


def claims_table(runs: dict[str, pd.DataFrame], fig2: dict, timing: pd.DataFrame | None,
                 checks: dict, x_tilde: float | dict[str, float]) -> pd.DataFrame:
    """C1–C11 of spec §7: paper statement, measured numbers, verdict by a stated rule.

    ``x_tilde``: the cost of every centre at 0 (x̃, Table 1) per data set (a float: Covertype's,
    and the others' effect sizes are left out)."""
    xt = x_tilde if isinstance(x_tilde, dict) else {"covertype": x_tilde}
    rows = []
    c = checks
    ok13 = (c["min_weight"] >= 1 and c["max_psi_over_target"] <= 1 + 1e-9
            and c["active_gap"] < 1e-6 and c["closed_vs_bisection"] < 1e-8
            and c["spearman_w_norm"] < -0.999)
    rows.append((
        "C1–C3", "Algorithm 1 weights ≥ 1, ψ ≤ ε*, constraint active where w > 1, monotone in ‖x‖, "
        "closed form = bisection",
        f"Covertype, ε* = {c['epsilon']:g}, m = {c['m']:g}: min w = {c['min_weight']:.4g}, "
        f"max ψ/ε* = {c['max_psi_over_target']:.12f}, max abs(ψ/ε* − 1) on active points = "
        f"{c['active_gap']:.1e}, max abs(w_closed/w_bisect − 1) = {c['closed_vs_bisection']:.1e}, "
        f"Spearman(w, ‖x‖) = {c['spearman_w_norm']:.4f}",
        "reproduced" if ok13 else "not reproduced",
        "all five conditions (tolerances 1e-9, 1e-6, 1e-8, −0.999)"))
    rows.append((
        "C4", "Fig. 2 left: privacy-constrained ≈ variance-optimal weights, decreasing in norm",
        f"corr(w_priv, w_var) = {fig2['corr']:.3f}, Spearman(w_priv, ‖x‖₁) = "
        f"{fig2['spearman_norm']:.3f}",
        "reproduced" if fig2["corr"] > 0.9 and fig2["spearman_norm"] < -0.99
        else "not reproduced", "corr > 0.9 and Spearman < −0.99"))
    rows.append((
        "C5", "Fig. 2 right: privacy-constrained dominates uniform in (max loss, MSE)",
        f"max loss priv ≤ unif at every b: {fig2['loss_ok']}; at equal max loss the uniform MSE "
        f"is {fig2['min_dominance']:.2f}–{fig2['max_dominance']:.2f}× the privacy-constrained",
        "reproduced" if fig2["loss_ok"] and fig2["mse_ok"] else "not reproduced",
        "exact MSEs: dominance > 1 at every b"))
    rows.append((
        "C6", "q_priv and q_core highly correlated, both increasing in ‖x‖",
        f"Covertype: Spearman = {c['spearman_qpriv_qcore']:.6f}, Pearson = "
        f"{c['pearson_qpriv_qcore']:.3f}",
        "reproduced" if c["spearman_qpriv_qcore"] > 0.999 and c["pearson_qpriv_qcore"] > 0.9
        else "not reproduced", "Spearman > 0.999 and Pearson > 0.9"))
    cov = runs["covertype"]
    text, word = _judge(c7_parts(cov, xt["covertype"]))
    rows.append((
        "C7", "Fig. 3: unif always worst, core beats unif, opt on par with or slightly better "
        "than core; costs converge to ε = ∞ as ε grows and stay below x̃ as ε → 0",
        f"Covertype: {text}", word,
        RULE_SHORT + f"; on par / converges: below {PAR:g}× the other median"))
    text, word = _judge(c8_parts(cov))
    rows.append(("C8", "Fig. 4 (ε ∈ {3, 100}): cost decreases with m, unif worst at every m, all "
                 "approach full from above", f"Covertype: {text}", word, RULE_SHORT))
    rows.append(("C9", "App. B: Ijcnn1, Pose, MiniBooNE, FMA",
                 "those data sets are not in ../shared/data", "not checked", "—"))
    if timing is not None and len(timing):
        sel = timing[(timing["sampler"] == "opt") & np.isclose(timing["m"], 20000)]
        ours = float(sel["rel_total_pct"].iloc[0]) if len(sel) else math.nan
        share_w = float((timing["t_weights"] / timing["t_total"]).max())
        ok = (ours <= C10_FACTOR * PAPER_C10_PCT and ours >= PAPER_C10_PCT / C10_FACTOR)
        rows.append((
            "C10", f"Table 2: total time ≈ m/n of full DP-Lloyd; Covertype opt m = 20000: "
            f"{PAPER_C10_PCT} %",
            f"opt m = 20000: {ours:.2f} % of full (m/n = 3.53 %), the calibration of B "
            f"({float(sel['t_calibration'].iloc[0]) if len(sel) else math.nan:.1f} s) "
            "included; "
            f"weights ≤ {share_w:.0%} of a run's total", "reproduced" if ok else "not reproduced",
            f"ours within ×{C10_FACTOR} of {PAPER_C10_PCT} %"))
    per_ds, outcomes = [], []
    for name, r in runs.items():
        comps = sampler_comparisons(r, "core") + sampler_comparisons(r, "opt")
        outcomes += [x.outcome for x in comps]
        effect = f" ({effect_sizes(r, xt[name])})" if name in xt else ""
        per_ds.append(f"{DATA_NAMES.get(name, name)}: {_count(comps)}{effect}")
    word = verdict_word(outcomes)
    rows.append((
        "C11", "Headline: at equal m and ε, core and opt below unif on all data sets",
        "; ".join(per_ds) + ". The paper's other main data sets (KDD-Protein, RNA, Song) are "
        "not available, so 'all data sets' cannot be checked",
        f"{word} on {len(runs)} available data set(s); not checked on the paper's other three",
        RULE_SHORT))
    return pd.DataFrame(rows, columns=["claim", "paper", "measured", "verdict", "rule"])


RULE_SHORT = "bootstrap CI of the median ratio per cell (rule above)"


def _series(runs: pd.DataFrame, sampler: str, x: str, fixed: str, value: float) -> Series | None:
    sel = runs[(runs["sampler"] == sampler) & (runs["rep"] >= 0)]
    sel = sel[np.isclose(sel[fixed], value)] if fixed == "m" else sel[sel[fixed] == value]
    sel = sel[np.isfinite(sel["epsilon"])]
    if sel.empty:
        return None
    g = sel.groupby(x)["cost"]
    return Series(sampler, g.median().index.to_numpy(float), g.median().to_numpy(),
                  g.quantile(0.25).to_numpy(), g.quantile(0.75).to_numpy())


def figures(runs: dict[str, pd.DataFrame], prepared: dict, folder: Path) -> dict[str, str]:
    out = {}
    for name, r in runs.items():
        label = DATA_NAMES.get(name, name)
        ms = sorted(r.loc[(r.sampler == "unif") & (r.rep >= 0), "m"].unique())
        m3 = [m for m in ms if r[(r.sampler == "unif") & np.isclose(r.m, m)].epsilon.nunique() > 3]
        panels = []
        for m in m3:
            ser = [s for s in (_series(r, smp, "epsilon", "m", m) for smp in SAMPLERS) if s]
            eps = np.array(sorted(e for e in r.epsilon.unique() if math.isfinite(e)))
            inf = _costs(r, "core", m, math.inf)
            if inf.size:
                ser.append(Series("non-private Lloyd on the core sample (ε = ∞)", eps,
                                  np.full(eps.size, np.median(inf)), reference=True,
                                  color="#000000"))
            inf_u = _costs(r, "unif", m, math.inf)  # the paper's Fig. 3 draws this one too
            if inf_u.size:
                ser.append(Series("non-private Lloyd on the uniform sample (ε = ∞)", eps,
                                  np.full(eps.size, np.median(inf_u)), reference=True,
                                  color="#56B4E9"))
            ser.append(Series("x̃ (all centres at the mean)", eps,
                              np.full(eps.size, prepared[name].mean_sq_norm), reference=True,
                              color="#777777"))
            panels.append(Panel(f"m = {m:g}", "ε", "cost / n (median, 25–75 % band)", ser,
                                log_x=True, log_y=True))
        if panels:
            out[f"fig3_{name}"] = save_figure(folder, f"importance_fig3_{name}",
                                              f"Fig. 3, {label}", panels)
        panels = []
        for e in (3.0, 100.0):
            ser = [s for s in (_series(r, smp, "m", "epsilon", e) for smp in SAMPLERS) if s]
            full = _costs(r, "full", None, e)
            if ser and full.size:
                xs = np.array(sorted({v for s in ser for v in s.x}))
                ser.append(Series("full data (median)", xs, np.full(xs.size, np.median(full)),
                                  reference=True, color="#555555"))
            if ser:
                panels.append(Panel(f"ε = {e:g}", "m (expected sample size)",
                                    "cost / n (median, 25–75 % band)", ser, log_x=True,
                                    log_y=True))
        if panels:
            out[f"fig4_{name}"] = save_figure(folder, f"importance_fig4_{name}",
                                              f"Fig. 4, {label}", panels)
    return out


def fig2_figure(weights: pd.DataFrame, curves: pd.DataFrame, folder: Path) -> str:
    left = Panel("left: weights at m = 19 (points by ℓ1 norm)", "point (by ℓ1 norm)",
                 "importance weight w",
                 [Series(n, weights["rank"], weights[c], markers_only=True)
                  for n, c in (("unif", "uniform"), ("opt", "privacy"),
                               ("variance-optimal", "variance"))], log_y=True)
    right = Panel("right: max PDP loss vs MSE, b ∈ [3, 3000]", "max PDP loss", "MSE (exact)",
                  [Series(n, g.sort_values("b")["max_loss"], g.sort_values("b")["mse_exact"])
                   for n, g in ((lab, curves[curves.strategy == s]) for lab, s in
                                (("unif", "uniform"), ("opt", "privacy"),
                                 ("variance-optimal", "variance")))],
                  log_x=True, log_y=True)
    return save_figure(folder, "importance_fig2", "Fig. 2: Laplace weighted sum", [left, right])


def deviations(meta: dict) -> pd.DataFrame:
    reps = meta["reps_by_data"]
    paper = meta.get("paper_reps", 50)
    short = [DATA_NAMES.get(k, k) for k, v in reps.items() if v != str(paper)]
    rows = [
        ("repetitions (Figs. 3/4)", f"{paper} per cell, median with 25/75 % band",
         "; ".join(f"{DATA_NAMES.get(k, k)}: {v}" for k, v in reps.items()),
         "—" if not short else f"{', '.join(short)}: wall time on the shared 2-core machine "
         "(see the run line); `--from-runs docs/reproduction/figures --top-up` adds the "
         f"missing repetitions to the saved ones, `make reproduce` runs all {paper}"),
        ("data sets (Figs. 3/4)", "KDD-Protein, RNA, Song, Covertype (main); Ijcnn1, Pose, "
         "MiniBooNE, FMA (App. B)", "Covertype; plus MNIST (70,000 × 784) and the gas drift "
         "data (6,697 × 128, batches 1–6, 8, 9) with our m grids",
         "only Covertype of the paper's eight is in ../shared/data; MNIST and gas are the other "
         "public numeric sets here that fit the setting (k-means, n ≫ m)"),
        ("m grids for MNIST / gas", "—", "MNIST Fig. 3 {3000, 5000, 10000}, Fig. 4 "
         "{3000 … 15000}; gas Fig. 3 {100, 200, 400}, Fig. 4 {100 … 600}",
         "scaled to n x̃ / r² (38,390 and 784) as the paper's grids are"),
        ("ε grid", "{0.5, 1, 3, 10, 30, 100, 300, 1000} (code: 50 for 30)", "the paper's",
         "—"),
        ("sum-noise density", "code: Exponential(β_sum) radius (not ε-DP)", "exact Gamma(d, "
         "β_sum) radius", "the code's noise is ≈ d× too small (variants section)"),
        ("edge cases of DP-Lloyd", "literal ratio", "noisy count < 1 keeps the centre; centres "
         "clipped to the ball", "post-processing; the literal ratio throws centres away "
         "(variants section)"),
        ("coreset ε", "100-point grid", "exact maximum of Eq. 5", "—"),
        ("Table 2 timings", "128-core Epyc, Rust weights, one run", f"median of "
         f"{meta.get('timing_reps', 3)} runs on the shared 2-core VM (load in the run line); "
         "t_calibration reported apart", "hardware; Python weights"),
        ("DP-Lloyd variants, noise splits", "—", f"{meta.get('variant_reps', 12)} repetitions "
         "per cell", "diagnostics, not in the paper"),
        ("initial centres", "k random sample points", "same (not covered by the DP analysis, "
         "like the pre-processing)", "—"),
    ]
    return pd.DataFrame(rows, columns=["item", "paper setting", "our setting", "why different"])


def write_report(out: Path, *, fig2w, fig2c, runs: dict[str, pd.DataFrame], prepared: dict,
                 timing, variants, splits, checks: dict, fig2: dict, meta: dict,
                 variant_keys: dict[str, str]) -> Path:
    folder = out.parent / "figures"
    claims = claims_table(runs, fig2, timing, checks,
                          {n: prepared[n].mean_sq_norm for n in runs if n in prepared})
    f2 = fig2_figure(fig2w, fig2c, folder)
    figs = figures(runs, prepared, folder)
    P = prepared["covertype"]
    lines = [
        "# Reproduction: Personalized Privacy Amplification via Importance Sampling",
        "",
        "Fay, Mair & Sjölund, TMLR 12/2024 (`../shared/seeds/000_*`, `001_*`); spec "
        "`../shared/spec/importance_sampling.md`. Regenerate with `make reproduce` or "
        f"`{meta['command']}`.",
        "",
        f"Run: {meta['run']}.",
        "",
        "## Differences from the paper",
        "",
        markdown_table(deviations(meta)),
        "",
        f"Covertype pre-processed as in the paper (§6.2): n = {P.n}, d = {P.dim}, r = "
        f"{P.radius:.2f}, x̃ = {P.mean_sq_norm:.2f} (Table 1: 566486, 54, 4489.17, 3839798.28). "
        "k = 25, T = 10, ρ = 0.225, B calibrated per (sampler, m, ε) so that the whole sampled "
        "mechanism is ε-DP.",
        "",
        "## Claims (spec §7)",
        "",
        RULE,
        "",
        markdown_table(claims),
        "",
        "## Figure 2: Laplace weighted sum (n = 1000, d = 10)",
        "",
        f2,
        "",
        markdown_table(fig2c.assign(b=fig2c["b"].map(lambda b: f"{b:.3g}"))),
        "",
    ]
    for name, r in runs.items():
        label = DATA_NAMES.get(name, name)
        ok = r[r["rep"] >= 0]
        g = ok.groupby(["sampler", "m", "epsilon"], sort=False)["cost"]
        tab = pd.DataFrame({"median": g.median(), "q25": g.quantile(0.25),
                            "q75": g.quantile(0.75), "runs": g.size()}).reset_index()
        tab["epsilon"] = tab["epsilon"].map(lambda e: "∞" if not math.isfinite(e) else f"{e:g}")
        tab["m"] = tab["m"].map(lambda m: f"{m:.0f}")
        lines += [f"## Figures 3/4: {label}, cost/n (median [q25, q75])", ""]
        for key in (f"fig3_{name}", f"fig4_{name}"):
            if key in figs:
                lines += [figs[key], ""]
        lines += ["<details><summary>table</summary>", "", markdown_table(tab), "",
                  "</details>", ""]
        bad = r[r["rep"] < 0] if "infeasible" in r else r.iloc[:0]
        if len(bad):
            lines += ["Cells that cannot exist (no noise level meets the target):", ""]
            lines += [f"* {b.sampler} m = {b.m:g}, ε = {b.epsilon:g}: {b.infeasible}"
                      for b in bad.itertuples()] + [""]
    if timing is not None and len(timing):
        tt = timing.copy()
        tt["m"] = tt["m"].map(lambda m: f"{m:.0f}")
        lines += ["## Table 2: timings on Covertype, ε = 3 (seconds, medians)", "",
                  "Paper (128-core Epyc, Rust weights): Covertype opt m = 20000 takes 4.30 % of "
                  "full DP-Lloyd.", "", markdown_table(tt, ".4g"), ""]
    if variants is not None and len(variants):
        vt = variants.copy()
        vt["cell"] = [f"{r.sampler} m={r.m:.0f} ε={r.epsilon:g}" for r in vt.itertuples()]
        piv = vt.pivot(index="cell", columns="variant", values="median").reset_index()
        lines += ["## DP-Lloyd variants: where the gap to the paper's figures comes from", "",
                  "; ".join(f"**{k}**: {v}" for k, v in variant_keys.items()) + ".", "",
                  markdown_table(piv), ""]
    if splits is not None and len(splits):
        st = splits.copy()
        st["m"] = st["m"].map(lambda m: f"{m:.0f}")
        lines += ["## Noise split: the paper's Su et al. ratio leaves the counts almost no "
                  "budget", "",
                  "β_count = (4dρ²)^{1/3} β_sum (Su et al. 2016, for data in [−1, 1]^d) gives "
                  "the counts ≈ 1e-4 of ε(1, x) at ‖x‖ = r on Covertype; a fixed 10 % share "
                  "(same total ε) lowers the cost a lot:", "",
                  markdown_table(st[["sampler", "m", "epsilon", "count_share", "beta_count",
                                     "beta_sum", "median", "q25", "q75"]]), ""]
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out
