"""FriendlyCore page (Tsfadia et al., ICML 2022; paper 002): the friendly core, the private mean
and FriendlyCore clustering, step by step (the paper's Figures 2 and 3 story)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.app import plots
from dpcore.app.advice import MAX_EXACT_ROWS, friendly_mean_plan
from dpcore.app.summaries import (
    friends_summary,
    kept_removed_summary,
    means_summary,
    tuples_summary,
)
from dpcore.core.text import md_text
from dpcore.data.limits import check_count, check_radius
from dpcore.mechanisms.baselines.kv18 import kv18_mean
from dpcore.mechanisms.friendlycore import (
    FriendlyCoreKMeans,
    dp_paradigm_guarantee,
    friendly_core,
    friendly_mean,
)
from dpcore.mechanisms.friendlycore.averaging import rho_for_epsilon
from dpcore.mechanisms.friendlycore.planning import (
    MAX_PARTS,
    estimated_seconds,
    kmeans_plan,
    suggest,
)
from dpcore.mechanisms.friendlycore.sampling import poisson_rate, poisson_rows
from dpcore.privacy.guarantees import PureDP
from dpcore.release.runconfig import release_frame
from pages._common import (
    EPSILON_GRID,
    EXPLORE_NOTE,
    check_delta_field,
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
from pages._export import export_buttons
from pages._plain import show_plain_error, show_plain_warnings
from pages._release import friendlycore_release_view
from pages._run import run_panel

init_state()
ss = st.session_state


def _apply(values: dict) -> None:
    """Apply suggested settings (a button's callback, so the sidebar widgets accept them)."""
    for key_, value in values.items():
        ss[key_] = value


st.title("FriendlyCore")
st.caption(
    "FriendlyCore keeps the points that have many *friends* (points within distance r) and drops "
    "the rest with a noisy threshold. On the core, a simple noisy average is private with far "
    "less noise than on the raw data, because the core cannot contain far-away outliers.")
if is_release_mode():  # through the release door only (pages/_release.py)
    friendlycore_release_view()
    st.stop()
ds = require_dataset()
k = int(ss["k"])
#: The generated sample in FriendlyCore's regime (dpcore.data.datasets.friendlycore_mixture).
FC_SAMPLE = "fc_mixture"

# This page's ε: the sidebar's, or the smallest ε of the grid at which FriendlyCore works on the
# declared n (public inputs only: n, k, δ; the reason is shown in one sentence).
sugg = suggest(ds.n, k, epsilon=float(ss["eps"]), delta=1e-6, mean_rows=min(ds.n, MAX_EXACT_ROWS),
               grid=EPSILON_GRID)
FC_EPS_KEY = f"fc_eps_{ds.key}_{ds.n}_{k}_{float(ss['eps']):g}"
eps = float(st.select_slider(
    "FriendlyCore ε (this page)", EPSILON_GRID, value=sugg.epsilon or float(ss["eps"]),
    **keep(FC_EPS_KEY),
    help="FriendlyCore needs many rows per unit of privacy (its noisy threshold must stay below "
         "the friend counts), so this page suggests its own ε for the declared number of rows; "
         "the sidebar's ε is the starting point."))
st.caption(sugg.reason)
if not sugg.clustering_ok:
    b1, b2, _ = st.columns([2, 1, 1])
    if ds.key != FC_SAMPLE:
        b1.button("Use the generated 200k-row mixture", key="fc_use_big", on_click=_apply,
                  args=({"data": FC_SAMPLE},), icon=":material/dataset:")
    k_fit = kmeans_plan(ds.n, k, epsilon=max(EPSILON_GRID), delta=1e-6).k_max
    if 1 <= k_fit < k:
        b2.button(f"Use k = {k_fit}", key="fc_use_k", on_click=_apply, args=({"k": k_fit},),
                  icon=":material/tune:")

c1, c2, c3, c4 = st.columns(4)
plan0 = friendly_mean_plan(ds.n, epsilon=eps, delta=1e-6, radius=float(ds.radius),
                           grid=EPSILON_GRID)
n_used = number_field(c1, "Expected points used (Poisson sample)", f"fc_n_{ds.n}",
                      lambda v: check_count("points used", v, min(100, ds.n), ds.n), plan0.rows,
                      persist_state="session",
                      help=f"From {min(100, ds.n):,} to {ds.n:,}. Friend counting compares "
                           f"every pair of points; above {MAX_EXACT_ROWS:,} rows a Poisson "
                           "sample (each row kept independently, its privacy amplification "
                           "accounted) keeps the page fast.")
# Bundled and generated sets (public, clustered around the middle of their box): r = the declared
# radius, so the points far from the bulk have fewer than half the rows as friends and the core
# visibly drops them (the paper's picture). Uploads: the ball's diameter (always a core).
r_default = float(ds.radius) if ds.public else plan0.friend_radius
r = number_field(c2, "Friend radius r (public)", f"fc_r3_{ds.key}_{ds.radius:g}",
                 lambda v: check_radius(v, "friend radius r"), float(f"{r_default:.4g}"),
                 persist_state="session",
                 help="From 1e-100 to 1e100 (refused outside, never clamped). Two points "
                      "are friends when they are at most r apart. The default is "
                         "the declared radius on the bundled data sets (points far from the bulk "
                         "are dropped) and the ball's diameter on an upload (every point is a "
                         "friend of every other, which always leaves a core); a smaller r drops "
                         "more outliers but needs most points to be close together.")
paradigm = c3.radio("Filter", ["zcdp", "dp"], horizontal=True, **keep("fc_paradigm"),
                    format_func={"zcdp": "private core", "dp": "basic"}.get,
                    help="private core: the core itself is private (zCDP filter), the practical "
                         "choice. basic: the core is private only together with a private "
                         "algorithm run on it.")
delta = number_field(c4, "δ", "fc_delta", check_delta_field, 1e-6, persist_state="session")
alpha = st.slider("Basic filter α", 0.0, 0.45, 0.1, 0.05, **keep("fc_alpha")) if paradigm == "dp" \
    else 0.0


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


@st.cache_data(max_entries=16, scope="session", show_spinner="Running KV18…")
def run_kv18(fp: str, eps: float, delta: float, sigma: float, radius: float, n: int, seed: int,
             _X) -> dict:
    """KV18 on all rows at FC_Avg's own ρ (the ρ that converts to (ε, δ/2), as friendly_mean
    runs at for (ε, δ)): both methods spend the same ρ, as in the reproduction's Fig. 5(3)."""
    rho = rho_for_epsilon(eps, delta / 2.0)
    try:
        res = kv18_mean(_X, rho=rho, sigma=sigma, radius=radius, n_public=n, rng=seed)
    except ValueError as exc:
        return {"error": str(exc)}
    return {"estimate": res.estimate, "guarantee": res.privacy, "rho": rho}


def kv18_params() -> dict:
    return {"rho": rho_for_epsilon(eps, float(delta) / 2.0), "sigma": float(kv_sigma),
            "radius": float(ds.radius), "n_public": int(ds.n)}


def mean_params() -> dict:
    return {"radius": float(r), "epsilon": eps, "delta": float(delta)}


# ---------------------------------------------------------------- explore mode
seed = view_seed("friendlycore")
X = rows_used(seed)
proj = projection(ds)
P = proj(to_table_units(ds, X))
st.caption(f":orange[{EXPLORE_NOTE}]")
st.subheader("1 · The friendly core")
plan = friendly_mean_plan(int(n_used), epsilon=eps, delta=float(delta), radius=float(ds.radius),
                          grid=EPSILON_GRID)
if paradigm == "zcdp" and not plan.feasible:
    st.warning(plan.message + " Meanwhile the basic filter's core is shown below.")
    if plan.epsilon_needed is not None:
        st.button(f"Use ε = {plan.epsilon_needed:g}", key="fc_apply_eps", on_click=_apply,
                  args=({FC_EPS_KEY: plan.epsilon_needed},), icon=":material/tune:")
    paradigm = "dp"
if paradigm == "zcdp":
    out = run_mean(ds.fp, int(n_used), float(r), eps, float(delta), seed, X)
    if "error" in out:
        show_plain_error(out["error"])
        st.stop()
    show_plain_warnings(out["warnings"])
    mask, counts = out["mask"], out["counts"]
    guarantee = str(out["guarantee"])
else:
    out = run_core_dp(ds.fp, int(n_used), float(r), float(alpha), seed, X)
    mask, counts = out["mask"], out["counts"]
    guarantee = (f"none on its own; with an ε = {eps:g} private algorithm on the core: "
                 f"{dp_paradigm_guarantee(PureDP(eps), alpha=alpha)}")
kv = None
if paradigm == "zcdp":
    kv_sigma = number_field(
        st, "KV18 σ (public spread of one coordinate)", f"fc_kv_sigma_{ds.key}_{ds.radius:g}",
        lambda v: check_radius(v, "KV18 σ"), float(f"{ds.radius / 4:.4g}"),
        persist_state="session",
        help="KV18 (Karwa & Vadhan 2018, FriendlyCore's Fig. 5(3) baseline) assumes Gaussian "
             "rows with a known spread σ: its private histogram has bins of width σ and it clips "
             "every coordinate to ±4σ√ln(n/0.05) around the winning bin. A public guess; the "
             "default is a quarter of the declared radius.")
    kv = run_kv18(ds.fp, eps, float(delta), float(kv_sigma), float(ds.radius), int(ds.n), seed,
                  ds.X)
m1, m2, m3 = st.columns(3)
m1.metric(f"Core size (of {X.shape[0]:,})", f"{int(mask.sum()):,}")
m2.metric("Median friends", f"{np.median(counts):,.0f}")
m3.metric("Kept", f"{mask.mean():.0%}")
st.caption(f"Guarantee: {guarantee}")
# One map per row, full width: two side by side left each a third of a 1024 px screen (27.6).
show(plots.points_figure(P, color=counts, color_title="friends",
                         title=f"Friend counts (r = {r:g})", axis_titles=proj.axis_titles,
                         seed=seed), "fc_counts")
st.caption(friends_summary(counts, float(r)))
fig = plots.points_figure(P, categories=np.where(mask, "kept", "removed"),
                          title="Kept / removed", axis_titles=proj.axis_titles, seed=seed)
means: dict = {}
if paradigm == "zcdp":
    means["true mean"] = to_table_units(ds, X.mean(axis=0))[0]
    means["FriendlyCore private mean"] = (None if out["estimate"] is None
                                          else to_table_units(ds, out["estimate"])[0])
    if kv is not None and "estimate" in kv:
        means["KV18 private mean"] = to_table_units(ds, kv["estimate"])[0]
    for name, index in (("true mean", 4), ("FriendlyCore private mean", 0),
                        ("KV18 private mean", 2)):
        if means.get(name) is not None:
            plots.add_points(fig, proj(means[name]), index=index,
                             name="true mean (not private)" if name == "true mean" else name)
show(fig, "fc_core")
st.caption(kept_removed_summary(int(mask.sum()), int(mask.size)) + " "
           + means_summary(means, "true mean" if means else None))

if paradigm == "zcdp":
    st.subheader("2 · The private mean of the core")
    if out["estimate"] is None:
        st.warning(f"FriendlyCore returned ⊥: {md_text(out['reason'])}")
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
        download_csv(release_frame({"mean": to_table_units(ds, out["estimate"])}, ds.columns,
                                   "friendly_mean", out["guarantee"]),
                     "friendlycore_mean.csv", "fc_mean_csv", label="Private mean (CSV)")
        if int(n_used) >= ds.n:
            export_buttons(config_for("friendly_mean", mean_params(), ds, seed), "fc_config")
        else:
            st.caption("The run configuration is offered when all rows are used (the "
                       "configuration format has no row subsample).")
    st.markdown("**For comparison: KV18** (Karwa & Vadhan 2018), the averaging baseline of "
                "FriendlyCore's Fig. 5(3): a private σ-bin histogram per coordinate after a "
                "random rotation, clipping around its peak, a Gaussian-noise mean. It runs on "
                "all rows at the same ρ as FC_Avg.")
    if "error" in kv:
        show_plain_error(kv["error"])
    else:
        kv_err = float(np.linalg.norm(kv["estimate"] - ds.X.mean(axis=0)))
        fc_err = (float(np.linalg.norm(out["estimate"] - X.mean(axis=0)))
                  if out["estimate"] is not None else float("nan"))
        # A DOM table (st.table), not the canvas grid: its cells wrap, so the long guarantees
        # stay readable at 1024 px (the grid clipped them at a fixed column width, issue 27.6).
        dist = "distance to the true mean of its rows"
        kv_guarantee = (f"{kv['guarantee']} ⇒ "
                        f"{kv['guarantee'].to_approx_dp(float(delta) / 2.0)}")
        comparison = pd.DataFrame(
            [{"method": "FC_Avg (FriendlyCore)", dist: fc_err, "rows": f"{X.shape[0]:,}",
              "guarantee": str(out["guarantee"])},
             {"method": "KV18", dist: kv_err, "rows": f"{ds.n:,}", "guarantee": kv_guarantee}])
        with st.container(key="fc_kv18_table"):
            # a word joiner (U+2060) after each hyphen: a guarantee wraps at its spaces only,
            # never inside a number ("5e-|07" misreads); CSS white-space does not reach the cells
            st.table(comparison.style.format(
                {dist: "{:.4g}", "guarantee": lambda g: g.replace("-", "-\u2060")}),
                hide_index=True)
        st.caption("KV18 assumes Gaussian rows with the spread σ above; on data that are not "
                   "(most tables) its clipping can cut real points and bias the mean. "
                   "FriendlyCore needs no σ.")
        if int(n_used) >= ds.n:
            export_buttons(config_for("kv18_mean", kv18_params(), ds, seed), "fc_kv18_config")
new_draw_button("friendlycore")

st.subheader("3 · FriendlyCore clustering, step by step")
st.caption("Split the data into t parts, cluster each part non-privately (k-means++), keep the "
           "tuples of centres that agree with many others (a FriendlyCore over tuples), order "
           "them consistently, average each position privately, finish with a noisy Lloyd step. "
           "It runs on all rows; if its cores end empty, the paper's backup (LSH clustering, on "
           "1 % of the budget reserved for it) gives the centres.")
kplan = kmeans_plan(ds.n, k, epsilon=eps, delta=float(delta), grid=EPSILON_GRID)
t_hi = max(2, min(MAX_PARTS, ds.n // k))
t = st.slider("Parts t", 2, t_hi, int(min(max(kplan.t, 2), t_hi)),
              **keep(f"fc_t3_{ds.n}_{k}_{eps:g}_{float(delta):g}"),
              help="More parts make the private agreement between parts easier to detect, "
                   "but each part then has fewer rows to find the clusters in.")
if kplan.feasible:
    st.caption(kplan.reason)
else:  # advice with one-click changes, not an error: the page's other views stand
    st.info(kplan.message)
    b1, b2, b3 = st.columns(3)
    if kplan.epsilon_needed is not None:
        b1.button(f"Use ε = {kplan.epsilon_needed:g}", key="fc_km_apply_eps", on_click=_apply,
                  args=({FC_EPS_KEY: kplan.epsilon_needed},), icon=":material/tune:")
    if 1 <= kplan.k_max < k:
        b2.button(f"Use k = {kplan.k_max}", key="fc_km_apply_k", on_click=_apply,
                  args=({"k": kplan.k_max},), icon=":material/tune:")
    if ds.key != FC_SAMPLE:
        b3.button("Use the generated 200k-row mixture", key="fc_km_big", on_click=_apply,
                  args=({"data": FC_SAMPLE},), icon=":material/dataset:")


def run_kmeans(k: int, eps: float, delta: float, radius: float, t: int, seed: int, X) -> dict:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            km = FriendlyCoreKMeans(k, epsilon=eps, delta=delta, radius=radius, t=t,
                                    fallback="lsh", rng=seed).fit(X)
        except ValueError as exc:
            return {"error": str(exc)}
    return {k_: getattr(km, k_, None) for k_ in (
        "cluster_centers_", "tuples_", "tuple_core_mask_", "center_averages_", "failed_",
        "failure_reason_", "privacy_", "used_fallback_")} | {
        "warnings": [str(w.message) for w in caught]}


km_key = (ds.fp, ds.n, k, eps, float(delta), float(ds.radius), int(t), seed)
if int(t) < kplan.t_needed:  # refused by the estimator's own rule: say what works instead
    st.stop()
job = run_panel("fc_km", key=km_key, seconds=estimated_seconds(ds.n, ds.d, k, int(t)),
                fn=lambda: run_kmeans(*km_key[2:], ds.X), label="Run FriendlyCore clustering",
                button_key="fc_km_run")
if job is not None and job.result is not None and job.key[0] == ds.fp:
    km = job.result
    if "error" in km:
        show_plain_error(km["error"],
                         lead="FriendlyCore clustering cannot run with these settings. ")
    else:
        show_plain_warnings(km["warnings"])
        if km["failed_"]:
            st.info("FriendlyCore clustering found no agreement between the parts, so its own "
                    "centres were not released"
                    + ("; the final centres come from the paper's backup, LSH clustering."
                       if km.get("used_fallback_") else ".")
                    + " It needs well-separated clusters that every part recovers, such as the "
                    "generated 200k-row mixture.")
            if ds.key != FC_SAMPLE:
                st.button("Use the generated 200k-row mixture", key="fc_km_big_after",
                          on_click=_apply, args=({"data": FC_SAMPLE},),
                          icon=":material/dataset:")
            with st.expander("Details"):
                st.code(km["failure_reason_"])
        tuples = km["tuples_"]
        centres = {}
        if tuples is not None:
            flat_kept = tuples[km["tuple_core_mask_"]].reshape(-1, ds.d) \
                if km["tuple_core_mask_"] is not None else np.empty((0, ds.d))
            flat_removed = tuples[~km["tuple_core_mask_"]].reshape(-1, ds.d) \
                if km["tuple_core_mask_"] is not None else tuples.reshape(-1, ds.d)
            fig = plots.centers_figure(P, {}, title="Tuples, tuple core and centres",
                                       axis_titles=proj.axis_titles, note=EXPLORE_NOTE, seed=seed)
            for name, M, size in (("tuple centres removed", flat_removed, 6),
                                  ("tuple centres kept (tuple core)", flat_kept, 6),
                                  ("private per-position averages", km["center_averages_"], 15),
                                  ("final centres", km["cluster_centers_"], 16)):
                if M is not None and np.size(M):
                    plots.add_points(fig, proj(to_table_units(ds, M)), name=name, size=size)
                    centres[name] = M
            show(fig, "fc_km_fig")
            st.caption(tuples_summary({"tuple centres removed": flat_removed,
                                       "tuple centres kept": flat_kept,
                                       "private per-position averages":
                                           km["center_averages_"],
                                       "final centres": km["cluster_centers_"]}))
        st.caption(f"Guarantee of the whole fit: {km['privacy_']}")
        if km["cluster_centers_"] is not None:
            download_csv(release_frame({"centers": to_table_units(ds, km["cluster_centers_"])},
                                       ds.columns, "friendlycore_kmeans", km["privacy_"]),
                         "friendlycore_centers.csv", "fc_km_csv", label="Centres (CSV)")
        params = {"n_clusters": k, "epsilon": eps, "delta": float(delta),
                  "radius": float(ds.radius), "t": int(t), "fallback": "lsh"}
        export_buttons(config_for("friendlycore_kmeans", params, ds, seed), "fc_km_config")
from pages._covariance import covariance_panel; covariance_panel(ds, eps, seed)  # noqa: E402, E702, I001
