"""Importance sampling + DP-Lloyd (Fay, Mair & Sjölund 2024; paper 000/001).

The paper's Figure 1 view (importance weight as marker size, individual privacy loss as colour),
the weight histogram, the delivered guarantee, then DP-Lloyd's centres over the data.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.app import plots
from dpcore.app.advice import noise_verdict
from dpcore.app.evaluate import normalized_kmeans_cost
from dpcore.app.plots import clip_to_box
from dpcore.app.summaries import centres_summary
from dpcore.data.limits import check_count
from dpcore.estimators.lloyd_kmeans import nearest_centre
from dpcore.mechanisms.lloyd.estimator import DPLloyd
from dpcore.release.runconfig import release_frame
from pages._common import (
    EXPLORE_NOTE,
    config_for,
    download_csv,
    init_state,
    is_release_mode,
    keep,
    new_draw_button,
    number_field,
    projection,
    require_dataset,
    show,
    to_table_units,
    view_seed,
)
from pages._describe import declared_box
from pages._export import export_buttons
from pages._plain import show_plain_error, show_plain_warnings
from pages._release import importance_release_view

init_state()
ss = st.session_state
st.title("Importance sampling + DP-Lloyd")
st.caption(
    "Poisson-sample the data with probabilities q, give each kept point the weight 1/q and run "
    "weighted DP-Lloyd on the sample. Sampling amplifies privacy per point: points "
    "with a small q get most of the protection. *uniform*: q = m/n; *coreset*: q mixes uniform "
    "and distance to the mean; *privacy*: q from Algorithm 1 so that every point's loss meets "
    "the target ε.")
if is_release_mode():  # through the release door only (pages/_release.py)
    importance_release_view()
    st.stop()
ds = require_dataset()
k, eps = int(ss["k"]), float(ss["eps"])



def check_m(value: float) -> int:
    """The expected sample size: from 10 (or n when smaller) to n rows."""
    return check_count("m", value, min(10, ds.n), ds.n)


c1, c2, c3 = st.columns(3)
sampler = c1.selectbox("Sampler", ["privacy", "coreset", "uniform"], **keep("sampler"),
                       bind="query-params")
if sampler == "privacy":
    free = c2.checkbox("Sampling for free", value=True, **keep("imp_free"),
                       help="m set by the noise. Data-independent noise: the full-data noise at "
                            "ε; the expected "
                            "sample size m is then whatever Algorithm 1 gives.")
    m = None if free else number_field(c2, "Expected sample size m", f"imp_m_priv_{ds.n}",
                                       check_m, min(ds.n, 2000), persist_state="session")
else:
    m = number_field(c2, "Expected sample size m", f"imp_m_{ds.n}", check_m, min(ds.n, 2000),
                     persist_state="session")
T = c3.slider("Iterations T", 1, 30, 10, **keep("imp_T"))
params = {"n_clusters": k, "epsilon": eps, "radius": ds.radius, "n_iter": int(T),
          "sampler": sampler, "sample_size": None if m is None else float(m)}


def fit_once(fp: str, params_json: str, seed: int, _X: np.ndarray) -> dict:
    """One DPLloyd fit; releases call it directly, explore views through the cache below."""
    p = json.loads(params_json)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            est = DPLloyd(**p, rng=seed).fit(_X)
        except ValueError as exc:
            return {"error": str(exc), "warnings": [str(w.message) for w in caught]}
    return {"centers": est.cluster_centers_, "q": est.probabilities_,
            "weights": est.sample_weights_, "indices": est.sample_indices_,
            "individual": est.individual_epsilon_, "guarantee": est.privacy_,
            "expected_m": float(est.calibration_.sample_size),
            "init": np.asarray(est.history_[0]) if getattr(est, "history_", None) else None,
            "warnings": [str(w.message) for w in caught]}


# Explore views: cached on the data hash, the parameters and the explicit seed, so a rerun
# never resamples; per session (dropped when it ends).
fit = st.cache_data(max_entries=16, scope="session",
                    show_spinner="Running importance-sampled DP-Lloyd…")(fit_once)


# ---------------------------------------------------------------- explore mode
seed = view_seed("importance")
out = fit(ds.fp, json.dumps(params), seed, ds.X)
if "error" in out:
    show_plain_error(out["error"])
    st.stop()
st.caption(f":orange[{EXPLORE_NOTE}]")
verdict = noise_verdict(ds.X, out["centers"], init=out.get("init"))
if verdict:
    st.warning(verdict)
show_plain_warnings(out["warnings"])
q, w, idx, psi = out["q"], out["weights"], out["indices"], out["individual"]
# one rule for the figure and the CSV: centres moved into the declared box (post-processing)
box = declared_box(ds)
C = clip_to_box(to_table_units(ds, out["centers"]), None if box is None else box[: ds.d])
m1, m2, m3, m4 = st.columns(4)
m1.metric("Guarantee", f"ε = {out['guarantee'].epsilon:g}"
          if hasattr(out["guarantee"], "epsilon") else str(out["guarantee"]),
          help=f"Delivered guarantee: {out['guarantee']}")
m2.metric("Sample size", f"{idx.size:,}", help=f"expected {out['expected_m']:,.0f}")
m3.metric("Max individual ε", f"{psi.max():.3g}",
          help="ψ(x): the privacy loss of each point after amplification by sampling")
m4.metric("Cost / n", f"{normalized_kmeans_cost(ds.X, out['centers']):.4g}")

proj = projection(ds)
P = proj(to_table_units(ds, ds.X))
fig1 = plots.points_figure(
    P, size=1.0 / q, color=psi, color_title="individual ε ψ(x)",
    title="Weight 1/q (marker area) and individual privacy loss (colour)",
    axis_titles=proj.axis_titles, note=EXPLORE_NOTE, seed=seed, size_max=12)
show(fig1, "importance_fig1")
st.caption(f"Chart: all {ds.n:,} points; marker area ∝ weight 1/q, from {1 / q.max():.3g} to "
           f"{1 / q.min():.3g}; colour = individual ε ψ(x), from {psi.min():.3g} to "
           f"{psi.max():.3g} (ε = {eps:g}).")
if sampler == "privacy":
    st.caption("Privacy-constrained sampling chooses q so that every point's loss ψ(x) equals the "
               "target ε: a uniform colour is its design. Points near the centre "
               "(small ‖x‖, little loss per unit of weight) can be sampled rarely and carry a "
               "large weight; far points are kept with q near 1. Try *coreset* or *uniform* to "
               "see the losses vary.")
# stacked, not side by side: at 1024 px two columns drew the map a third of the page wide
show(plots.histogram(w, title=f"Weights 1/q ({idx.size:,} sampled)",
                     x_title="importance weight 1/q", log_y=True), "importance_hist")
st.caption(f"Chart: the {idx.size:,} sampled points' weights 1/q (log count axis); median "
           f"{np.median(w):.3g}, largest {w.max():.3g}.")
sample_labels = nearest_centre(to_table_units(ds, ds.X[idx]), C)
fig2 = plots.centers_figure(P[idx], {"DP-Lloyd centres": proj(C)},
                            title=f"Centres over the sample (k = {k})",
                            axis_titles=proj.axis_titles, seed=seed, labels=sample_labels)
show(fig2, "importance_centers")
st.caption(centres_summary({"DP-Lloyd centres": C}, sample_labels, "DP-Lloyd centres",
                           clamped=box is not None))

new_draw_button("importance")
config = config_for("dplloyd", params, ds, seed)
with st.container(horizontal=True):  # wraps at 1024 px (two columns cut the long label)
    download_csv(release_frame({"centers": C}, ds.columns, "dplloyd", out["guarantee"]),
                 "dplloyd_centers.csv", "imp_centers_csv", label="Centres (CSV)")
    weights = pd.DataFrame({"row": np.arange(ds.n), "q": q, "weight": 1.0 / q,
                            "sampled": np.isin(np.arange(ds.n), idx), "individual_epsilon": psi})
    download_csv(weights, "importance_weights.csv", "imp_weights_csv",
                 label="Weights and individual ε (CSV, not private)")
export_buttons(config, "imp_config")
