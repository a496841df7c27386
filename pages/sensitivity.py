"""Sensitivity sampler page (Rubinstein & Aldà, ICML 2017; paper 004): random DP for a statistic
whose sensitivity nobody worked out, by sampling it on a public distribution."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.app import plots
from dpcore.app.summaries import histogram_summary
from dpcore.app.ui_state import subsample_indices
from dpcore.core.text import md_text
from dpcore.data.limits import check_count
from dpcore.mechanisms.sensitivity.population import (
    POPULATIONS,
    RDP_PROMISE,
    delivered_gamma,
    population_sampler,
)
from dpcore.mechanisms.sensitivity.sampler import sample_then_respond, sampler_config
from dpcore.mechanisms.sensitivity.statistics import STATISTICS, get_statistic
from dpcore.release.runconfig import sensitivity_release
from pages._common import (
    EXPLORE_NOTE,
    check_delta_field,
    config_for,
    download_config,
    download_csv,
    init_state,
    is_release_mode,
    keep,
    new_draw_button,
    number_field,
    require_dataset,
    show,
    show_warnings,
    view_seed,
)
from pages._release import sensitivity_release_view

init_state()
ss = st.session_state
st.title("Sensitivity sampler")
st.caption(
    "Estimate a statistic's sensitivity by evaluating it on m pairs of neighbouring data sets "
    "drawn from a public distribution (here: uniform in the declared box [-r, r]^d), take the "
    "k-th smallest difference Δ̂, and add noise calibrated to Δ̂. The release is (ε, δ, γ)-random "
    "DP (Theorem 15): (ε, δ)-DP for all but a γ-fraction of neighbouring pairs *drawn from that "
    "public distribution*, not for your data set in particular (see below).")
if is_release_mode():  # through the release door only (pages/_release.py)
    sensitivity_release_view()
    st.stop()
ds = require_dataset()
eps = float(ss["eps"])
MENU = ["mean", "median", "trimmed_mean", "quantile", "kmeans_centres", "least_squares", "ridge"]
menu = [m for m in MENU if m in STATISTICS]

c1, c2, c3 = st.columns(3)
name = c1.selectbox("Statistic", menu, **keep("stat"), bind="query-params",
                    help="least_squares / ridge regress the last chosen column on the others.")
st.caption(f"{name}: {STATISTICS[name].description}")
mechanism = c2.radio("Mechanism", ["laplace", "gaussian"], horizontal=True, **keep("sens_mech"),
                     help="Laplace: L1 sensitivity, ε-random DP; Gaussian: L2, (ε, δ).")
n_used = number_field(c3, "n (rows used, seeded subsample)", f"sens_n_{ds.n}",
                      lambda v: check_count("n", v, min(10, ds.n), ds.n), min(ds.n, 2000),
                      persist_state="session")
c4, c5, c6 = st.columns(3)
by = c4.radio("Choose", ["γ", "m"], horizontal=True, **keep("sens_by"),
              help="γ: the sampler picks the smallest m; m: the smallest γ that m pairs allow.")
if by == "γ":
    gamma = c5.select_slider("γ", [0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5], value=0.1,
                             **keep("sens_gamma"))
    m = None
else:
    m = number_field(c5, "m (pairs)", "sens_m", lambda v: check_count("m", v, 10, 20_000), 300,
                     persist_state="session")
    gamma = None
delta = number_field(c6, "δ (Gaussian)", "sens_delta", check_delta_field, 1e-6,
                     persist_state="session") if mechanism == "gaussian" else 0.0
try:
    cfg = sampler_config(gamma=gamma, m=m)
except ValueError as exc:
    st.error(f"Sampler configuration: {md_text(exc)}")
    st.stop()
st.caption(f"Sampler: m = {cfg.m} pairs, order statistic k = {cfg.k}, γ = {cfg.gamma:.3g} "
           f"(Table 1 of the paper, {cfg.mode}).")

r = float(ds.radius)
stat_params: dict = {}
if "bounds" in STATISTICS[name].params:
    stat_params["bounds"] = [-r, r]
if name == "kmeans_centres":
    stat_params["k"] = int(ss["k"])
params = {"statistic": name, "epsilon": eps, "statistic_params": stat_params,
          "oracle": "uniform", "bounds": [-r, r], "gamma": gamma, "m": m,
          "delta": float(delta), "mechanism": mechanism}


def rows(seed: int) -> np.ndarray:
    idx = subsample_indices(ds.n, int(n_used), rng=seed)
    return ds.X if idx is None else ds.X[idx]


def run_once(fp: str, n_used: int, params_json: str, seed: int, _X: np.ndarray,
             with_truth: bool = True) -> dict:
    """One Sample-Then-Respond; ``with_truth`` adds the non-private value (explore only)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            rel = sensitivity_release(_X, **json.loads(params_json), rng=seed)
        except ValueError as exc:
            return {"error": str(exc)}
    return {"value": np.atleast_1d(np.asarray(rel.value, float)), "guarantee": rel.guarantee,
            "samples": rel.sensitivity.sensitivities, "delta_hat": rel.sensitivity.delta_hat,
            "k": rel.sensitivity.config.k, "m": rel.sensitivity.config.m,
            "noise_scale": rel.noise_scale,
            "true": (np.atleast_1d(np.asarray(_true_value(json.loads(params_json), _X), float))
                     if with_truth else None),
            "warnings": [str(w.message) for w in caught]}


# Explore views: cached on data hash, parameters and seed, per session; releases are not.
run = st.cache_data(max_entries=16, scope="session",
                    show_spinner="Sampling sensitivities…")(run_once)


def _true_value(p: dict, X: np.ndarray) -> np.ndarray:
    from dpcore.mechanisms.sensitivity.statistics import get_statistic

    return get_statistic(p["statistic"], **p["statistic_params"])(X)


def noise_half_width(mechanism: str, scale: float, level: float) -> float:
    """Half-width of the central ``level`` interval of one coordinate's noise."""
    from scipy.stats import laplace, norm

    dist = laplace if mechanism == "laplace" else norm
    return float(dist.ppf(0.5 + level / 2, scale=scale))


def global_bound(p: dict, n: int) -> float | None:
    from dpcore.mechanisms.sensitivity.statistics import get_statistic

    stat = get_statistic(p["statistic"], **p["statistic_params"])
    return stat.global_sensitivity(n, ds.d, 1 if p["mechanism"] == "laplace" else 2)


def config(seed: int) -> dict | None:
    return config_for("sensitivity", params, ds, seed) if int(n_used) >= ds.n else None


# ---------------------------------------------------------------- explore mode
st.info(f"**What random DP promises.** {RDP_PROMISE} Below: choose the sampling distribution P, "
        "see it, and measure the γ actually delivered on the population you believe your data "
        "come from.")
p1, p2 = st.columns(2)
pop_p = p1.selectbox("Sampling distribution P (public)", list(POPULATIONS), **keep("sens_pop_p"),
                     format_func=lambda k: f"{k}: {POPULATIONS[k]}",
                     help="Releases sample from the uniform box; other choices apply here.")
pop_q = p2.selectbox("Your data's population Q (declared)", list(POPULATIONS), index=2,
                     **keep("sens_pop_q"), format_func=lambda k: f"{k}: {POPULATIONS[k]}",
                     help="Where you believe your data come from; the delivered γ is measured "
                          "on fresh neighbouring pairs drawn from it.")
stat_fn = get_statistic(name, **stat_params)
draw_p, draw_q = (population_sampler(k_, (-r, r), ds.d, binary_label=stat_fn.binary_label)
                  for k_ in (pop_p, pop_q))


@st.cache_data(max_entries=16, scope="session", show_spinner="Sampling sensitivities…")
def run_on_population(fp: str, n_used: int, params_json: str, pop: str, seed: int, _X) -> dict:
    if pop == "uniform":  # the release's own configuration
        return run_once(fp, n_used, params_json, seed, _X)
    p = json.loads(params_json)
    try:
        draw = population_sampler(pop, (-r, r), ds.d, binary_label=stat_fn.binary_label)
        rel = sample_then_respond(stat_fn, _X, draw, epsilon=p["epsilon"], gamma=p["gamma"],
                                  m=p["m"], delta=p["delta"], mechanism=p["mechanism"], rng=seed)
    except ValueError as exc:
        return {"error": str(exc)}
    return {"value": np.atleast_1d(np.asarray(rel.value, float)), "guarantee": rel.guarantee,
            "samples": rel.sensitivity.sensitivities, "delta_hat": rel.sensitivity.delta_hat,
            "k": rel.sensitivity.config.k, "m": rel.sensitivity.config.m,
            "noise_scale": rel.noise_scale, "true": np.atleast_1d(np.asarray(stat_fn(_X), float)),
            "warnings": []}


@st.cache_data(max_entries=16, scope="session", show_spinner="Measuring the delivered γ…")
def measured_gamma(name_: str, params_json: str, pop: str, delta_hat: float, n: int, seed: int):
    return delivered_gamma(stat_fn, draw_q, delta_hat, n, n_pairs=1000,
                           norm=1 if mechanism == "laplace" else 2, rng=seed)


seed = view_seed("sensitivity")
out = run_on_population(ds.fp, int(n_used), json.dumps(params), pop_p, seed, rows(seed))
if "error" in out:
    st.error(f"The sampler cannot run with these parameters: {md_text(out['error'])}")
    st.stop()
show_warnings(out["warnings"])
bound = global_bound(params, int(n_used))
m1, m2, m3 = st.columns(3)
m1.metric("Sampled sensitivity Δ̂", f"{out['delta_hat']:.4g}",
          help=f"G_(k), the k = {out['k']}-th smallest of m = {out['m']} sampled differences")
m2.metric("Global sensitivity", "unknown" if bound is None else f"{bound:.4g}",
          help="Worst case over the declared box; Δ̂ ≤ it (Proposition 18)")
g = out["guarantee"]
m3.metric("Guarantee", f"ε = {g.epsilon:g}" if hasattr(g, "epsilon") else str(g),
          help=f"{g} (random DP)")
norm_name = "L1" if mechanism == "laplace" else "L2"
fig = plots.ecdf_figure(out["samples"], chosen=out["delta_hat"],
                        chosen_label=f"Δ̂ = G_({out['k']})", global_bound=bound,
                        x_title=f"sampled sensitivity G ({norm_name})")
show(fig, "sens_ecdf")
_g = np.asarray(out["samples"], dtype=float)
st.caption(f"Chart: cumulative share of the m = {out['m']} sampled sensitivities G, from "
           f"{_g.min():.4g} to {_g.max():.4g}; the chosen Δ̂ = G_({out['k']}) = "
           f"{out['delta_hat']:.4g}" + ("" if bound is None else
                                        f"; the global bound {bound:.4g}") + ".")
err = float(np.linalg.norm(out["value"] - out["true"], ord=1 if mechanism == "laplace" else 2))
st.markdown(f"**Released value** {np.round(out['value'], 5).tolist()} under {out['guarantee']}; "
            f"noise scale {out['noise_scale']:.4g}.  \n"
            f"True value (not private) {np.round(out['true'], 5).tolist()}: error {err:.4g}.")
# The explicit confidence number DP Wizard's users ask for (prior_art.md §5): the per-coordinate
# noise bound that holds with 95 % probability, given the sampled sensitivity.
half_width = noise_half_width(mechanism, out["noise_scale"], 0.95)
st.info(f"With probability 95 %, each released coordinate is within ± {half_width:.4g} of the "
        f"true value (noise alone, given Δ̂; on a 1 − γ = {1 - out['guarantee'].gamma:.0%} share "
        "of data sets the guarantee holds).")
h1, h2 = st.columns(2)
for where, draw, title, fig_key in ((h1, draw_p, f"Sampling distribution P ({pop_p})",
                                     "sens_pop_p_fig"),
                                    (h2, draw_q, f"Declared population Q ({pop_q})",
                                     "sens_pop_q_fig")):
    which = title.split(" (")[0].split()[-1]  # "P" / "Q"
    with where:
        first = draw(4000, np.random.default_rng(seed))[:, 0]
        show(plots.histogram(first, x_title="first column", title=title, nbins=40), fig_key)
        st.caption(histogram_summary(first, f"draws of the first column from {which}"))
dg = measured_gamma(name, json.dumps(params), pop_q, float(out["delta_hat"]), int(n_used), seed)


def _set(key_: str, value) -> None:
    ss[key_] = value


def nearest_holding_p() -> str | None:
    """The sampling distribution P nearest to the user's choice whose sampled Δ̂ keeps the
    promised γ on Q (issue 27.8): Q itself first (P = Q is what the theorem assumes), then the
    others in menu order. Public inputs only: P, Q and the sampler's draws, not the data's
    values beyond what this explore view already uses."""
    for cand in [pop_q, *(k_ for k_ in POPULATIONS if k_ not in (pop_q, pop_p))]:
        o = run_on_population(ds.fp, int(n_used), json.dumps(params), cand, seed, rows(seed))
        if "error" in o:
            continue
        if measured_gamma(name, json.dumps(params), pop_q, float(o["delta_hat"]), int(n_used),
                          seed).honours(o["guarantee"].gamma):
            return cand
    return None
gamma_rel = out["guarantee"].gamma
verdict = (f"On Q the sampled Δ̂ is exceeded by {dg.gamma_hat:.1%} of neighbouring pairs "
           f"(95 % upper bound {dg.gamma_upper:.1%}, {dg.n_pairs} pairs) against the promised "
           f"γ = {gamma_rel:.3g}.")
if dg.honours(gamma_rel):
    st.success(f"**Delivered γ.** {verdict} Consistent with the promise on this population.")
else:
    st.warning(f"**Delivered γ.** {verdict} The promise does not hold for data like Q: choose a "
               "sampling distribution P closer to your data (or a public proxy table).")
    nearest = nearest_holding_p()
    if nearest is not None:
        st.button(f"Use P = {nearest} (the nearest setting where the promise holds on Q)",
                  key="sens_fix_p", on_click=_set, args=("sens_pop_p", nearest),
                  icon=":material/build:")
    else:
        st.caption("No sampling distribution on offer keeps the promise on Q at this γ; a "
                   "larger γ or a public proxy table may.")
st.caption(f":orange[{EXPLORE_NOTE}]")
new_draw_button("sensitivity")
d1, d2 = st.columns(2)
with d1:
    download_csv(pd.DataFrame({"value": out["value"]}), f"{name}_release.csv", "sens_csv",
                 label="Released value (CSV)")
with d2:
    cfg_ = config(seed)
    if cfg_ is not None:
        download_config(cfg_, "sens_config")
    else:
        st.caption("The run configuration is offered when all rows are used.")
