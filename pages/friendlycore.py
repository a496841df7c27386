"""FriendlyCore page (Tsfadia et al., ICML 2022; paper 002): the friendly core, the private mean
and FriendlyCore clustering, step by step (the paper's Figures 2 and 3 story)."""

from __future__ import annotations

import warnings

import numpy as np
import streamlit as st

from dpcore import plots
from dpcore.friendlycore import (
    FriendlyCoreKMeans,
    dp_paradigm_guarantee,
    friendly_core,
    friendly_mean,
)
from dpcore.friendlycore.averaging import rho_for_epsilon
from dpcore.friendlycore.filters import required_size
from dpcore.friendlycore.sampling import poisson_rate, poisson_rows
from dpcore.privacy import PureDP
from pages._common import (
    EPSILON_GRID,
    EXPLORE_NOTE,
    config_for,
    download_config,
    download_csv,
    init_state,
    is_release_mode,
    keep,
    matrix_frame,
    new_draw_button,
    projection,
    require_dataset,
    show,
    show_warnings,
    to_table_units,
    view_seed,
)
from pages._release import friendlycore_release_view

init_state()
ss = st.session_state
st.title("FriendlyCore")
st.caption(
    "FriendlyCore keeps the points that have many *friends* (points within distance r) and drops "
    "the rest with a noisy threshold. On the core, a simple noisy average is private with far "
    "less noise than on the raw data, because the core cannot contain far-away outliers.")
if is_release_mode():  # through the release door only (pages/_release.py)
    friendlycore_release_view()
    st.stop()
ds = require_dataset()
eps = float(ss["eps"])
release = False

c1, c2, c3, c4 = st.columns(4)
n_used = c1.number_input("Points used (seeded subsample)", 100, ds.n, value=min(ds.n, 3000),
                         step=500, **keep(f"fc_n_{ds.n}"),
                         help="Exact friend counting is quadratic in n; a random subset keeps the "
                              "page fast (and running a DP mechanism on a random subset is "
                              "still DP for the full data).")
r = c2.number_input("Friend radius r (public)", 1e-9, value=float(f"{ds.radius / 2:.3g}"),
                    format="%.4g", **keep(f"fc_r_{ds.key}_{ds.radius:g}"),
                    help="dist_r predicate: x and y are friends when ‖x − y‖ ≤ r.")
paradigm = c3.radio("Paradigm", ["zcdp", "dp"], horizontal=True, **keep("fc_paradigm"),
                    help="zcdp: zCDPFilter, the core itself is (ρ, δ)-zCDP (Thm 4.1), the "
                         "practical choice. dp: BasicFilter, private only together with a DP "
                         "algorithm run on the core (Thm 4.2).")
delta = c4.number_input("δ", 1e-12, 0.1, value=1e-6, format="%.1e", **keep("fc_delta"))
alpha = st.slider("BasicFilter α", 0.0, 0.45, 0.1, 0.05, **keep("fc_alpha")) if paradigm == "dp" \
    else 0.0


def min_points(eps: float, delta: float) -> int:
    """Smallest n for which FC_Avg's core can be non-empty (its core gets 0.1 ρ and δ/4)."""
    return required_size(0.1 * rho_for_epsilon(eps, delta / 2), delta / 4)


def rows_used(seed: int) -> np.ndarray:
    return ds.X[poisson_rows(ds.n, poisson_rate(int(n_used), ds.n), rng=seed)]  # Poisson: amplified


def mean_once(fp: str, n_used: int, r: float, eps: float, delta: float, seed: int, _X) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res = friendly_mean(_X, radius=r, epsilon=eps, delta=delta, rng=seed,
                                sample_rate=poisson_rate(n_used, ds.n), n_public=n_used)
        except ValueError as exc:
            return {"error": str(exc)}
    return {"estimate": res.estimate, "mask": res.core_mask, "counts": res.core.counts,
            "guarantee": res.guarantee, "failed": res.failed, "reason": res.reason,
            "n_hat": res.n_hat, "noise_sd": res.noise_sd,
            "warnings": [str(w.message) for w in caught]}


# Explore views are cached on data hash, parameters and seed, per session; releases are not.
run_mean = st.cache_data(max_entries=16, scope="session",
                         show_spinner="Running FriendlyCore…")(mean_once)


@st.cache_data(max_entries=16, scope="session",
               show_spinner="Running FriendlyCore (DP paradigm)…")
def run_core_dp(fp: str, n_used: int, r: float, alpha: float, seed: int, _X) -> dict:
    res = friendly_core(_X, r, paradigm="dp", alpha=alpha, rng=seed)
    return {"mask": res.mask, "counts": res.counts}


def mean_params() -> dict:
    return {"radius": float(r), "epsilon": eps, "delta": float(delta)}


# ---------------------------------------------------------------- explore mode
seed = view_seed("friendlycore")
X = rows_used(seed)
proj = projection(ds)
P = proj(to_table_units(ds, X))
st.caption(f":orange[{EXPLORE_NOTE}]")
st.subheader("1 · The friendly core")
if paradigm == "zcdp":
    out = run_mean(ds.fp, int(n_used), float(r), eps, float(delta), seed, X)
    if "error" in out:
        st.warning(f"FriendlyCore cannot run with these parameters: {out['error']}")
        ok = [e for e in EPSILON_GRID if min_points(e, float(delta)) <= int(n_used)]
        hint = (f"With {int(n_used):,} points, ε ≥ {ok[0]:g} works (set it in the sidebar)"
                if ok else "No ε in the sidebar's range works with so few points")
        st.info(f"FriendlyCore needs enough points for its noisy threshold at this budget. "
                f"{hint}; or use more points, or a larger δ.")
        st.stop()
    show_warnings(out["warnings"])
    mask, counts = out["mask"], out["counts"]
    guarantee = str(out["guarantee"])
else:
    out = run_core_dp(ds.fp, int(n_used), float(r), float(alpha), seed, X)
    mask, counts = out["mask"], out["counts"]
    guarantee = (f"none on its own; with an ε = {eps:g} DP algorithm on the core: "
                 f"{dp_paradigm_guarantee(PureDP(eps), alpha=alpha)} (Theorem 4.2)")
m1, m2, m3 = st.columns(3)
m1.metric("Core size", f"{int(mask.sum()):,} of {X.shape[0]:,}")
m2.metric("Median friends", f"{np.median(counts):,.0f}")
m3.metric("Guarantee", guarantee if len(guarantee) < 40 else "see below")
if len(guarantee) >= 40:
    st.caption(f"Guarantee: {guarantee}")
c1, c2 = st.columns(2)
with c1:
    show(plots.points_figure(P, color=counts, color_title="friends",
                             title=f"Friend counts (r = {r:g})", axis_titles=proj.axis_titles,
                             note=EXPLORE_NOTE, seed=seed), "fc_counts")
with c2:
    fig = plots.points_figure(P, categories=np.where(mask, "kept", "removed"),
                              title="Kept / removed by the filter", axis_titles=proj.axis_titles,
                              note=EXPLORE_NOTE, seed=seed)
    if paradigm == "zcdp":
        true_mean = X.mean(axis=0)
        plots.add_points(fig, proj(to_table_units(ds, true_mean)), name="true mean (not private)",
                         index=4)
        if out["estimate"] is not None:
            plots.add_points(fig, proj(to_table_units(ds, out["estimate"])),
                             name="FriendlyCore private mean", index=0)
    show(fig, "fc_core")

if paradigm == "zcdp":
    st.subheader("2 · The private mean (FC_Avg, Theorem 5.1)")
    if out["estimate"] is None:
        st.warning(f"FriendlyCore returned ⊥: {out['reason']}")
    else:
        err = float(np.linalg.norm(out["estimate"] - X.mean(axis=0)))
        st.write(f"Private mean {np.round(to_table_units(ds, out['estimate'])[0], 4).tolist()} "
                 f"under {out['guarantee']}; distance to the true mean of these points: "
                 f"**{err:.4g}** (the true mean is shown in explore mode only).")
        if out["noise_sd"]:
            from scipy.stats import chi2

            r95 = out["noise_sd"] * float(np.sqrt(chi2.ppf(0.95, ds.d)))
            st.info(f"With probability 95 %, the Gaussian noise moves the core's mean by at most "
                    f"{r95:.4g} (σ = {out['noise_sd']:.3g} per coordinate); the filter's own "
                    "bias (outliers dropped) comes on top.")
        d1, d2 = st.columns(2)
        with d1:
            download_csv(matrix_frame(to_table_units(ds, out["estimate"]), ds.columns),
                         "friendlycore_mean.csv", "fc_mean_csv", label="Private mean (CSV)")
        with d2:
            if int(n_used) >= ds.n:
                download_config(config_for("friendly_mean", mean_params(), ds, seed),
                                "fc_config")
            else:
                st.caption("The run configuration is offered when all rows are used (the "
                           "configuration format has no row subsample).")
new_draw_button("friendlycore")

st.subheader("3 · FriendlyCore clustering, step by step")
st.caption("Split the data into t parts, cluster each part non-privately (k-means++), keep the "
           "tuples of centres that agree with many others (a FriendlyCore over tuples), order "
           "them consistently, average each position privately, finish with a noisy Lloyd step.")
k = int(ss["k"])
t = st.slider("Parts t", 2, max(2, X.shape[0] // k), min(max(2, X.shape[0] // (2 * k)), 400),
              **keep(f"fc_t_{X.shape[0]}_{k}"))


@st.cache_data(max_entries=8, scope="session", show_spinner="Running FriendlyCore clustering…")
def run_kmeans(fp: str, n_used: int, k: int, eps: float, delta: float, radius: float, t: int,
               seed: int, _X) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            km = FriendlyCoreKMeans(k, epsilon=eps, delta=delta, radius=radius, t=t,
                                    rng=seed).fit(_X)
        except ValueError as exc:
            return {"error": str(exc)}
    return {k_: getattr(km, k_, None) for k_ in (
        "cluster_centers_", "tuples_", "tuple_core_mask_", "center_averages_", "failed_",
        "failure_reason_", "privacy_")} | {"warnings": [str(w.message) for w in caught]}


if st.button("Run FriendlyCore clustering", key="fc_km_run"):
    ss["fc_km_key"] = (ds.fp, int(n_used), k, eps, float(delta), float(ds.radius), int(t), seed)
key = ss.get("fc_km_key")
if key is not None and key[0] == ds.fp:
    km = run_kmeans(*key, X)
    if "error" in km:
        st.error(f"FriendlyCore clustering cannot run with these parameters: {km['error']}")
    else:
        show_warnings(km["warnings"])
        if km["failed_"]:
            st.warning(f"FriendlyCore clustering failed: {km['failure_reason_']}. It needs "
                       "well-separated clusters that every part recovers, and many parts: e.g. the "
                       "synthetic mixture with 3 components and σ = 0.3, all 10,000 points, "
                       "k = 3, t = 1000, ε = 5.")
        tuples = km["tuples_"]
        centres = {}
        if tuples is not None:
            flat_kept = tuples[km["tuple_core_mask_"]].reshape(-1, ds.d) \
                if km["tuple_core_mask_"] is not None else np.empty((0, ds.d))
            flat_removed = tuples[~km["tuple_core_mask_"]].reshape(-1, ds.d) \
                if km["tuple_core_mask_"] is not None else tuples.reshape(-1, ds.d)
            fig = plots.centers_figure(P, {}, title="Tuples, tuple core and centres",
                                       axis_titles=proj.axis_titles, note=EXPLORE_NOTE, seed=seed)
            for name, M, i in (("tuple centres removed", flat_removed, 5),
                               ("tuple centres kept (tuple core)", flat_kept, 2),
                               ("private per-position averages", km["center_averages_"], 3),
                               ("final centres", km["cluster_centers_"], 0)):
                if M is not None and np.size(M):
                    plots.add_points(fig, proj(to_table_units(ds, M)), name=name, index=i,
                                     size=15 if i in (0, 3) else 6)
                    centres[name] = M
            show(fig, "fc_km_fig")
        st.caption(f"Guarantee of the whole fit: {km['privacy_']}")
        if km["cluster_centers_"] is not None:
            download_csv(matrix_frame(to_table_units(ds, km["cluster_centers_"]), ds.columns),
                         "friendlycore_centers.csv", "fc_km_csv", label="Centres (CSV)")
        params = {"n_clusters": k, "epsilon": eps, "delta": float(delta),
                  "radius": float(ds.radius), "t": int(t)}
        if int(n_used) >= ds.n:
            download_config(config_for("friendlycore_kmeans", params, ds, seed), "fc_km_config")
        else:
            st.caption("Run configuration offered when all rows are used.")
