"""Data page: choose, upload and declare the data; preview it (explore) or a proxy (release)."""

from __future__ import annotations

import html
import warnings

import numpy as np
import streamlit as st

from dpcore.app import plots
from dpcore.app.describe import radius_estimate_band
from dpcore.app.suggest import check_radius_value, suggest_radius
from dpcore.app.summaries import points_summary
from dpcore.app.ui_state import fresh_seed, pca_projection
from dpcore.core.text import md_text
from dpcore.data.limits import check_count, check_number, check_radius, resource_limits
from dpcore.data.missing import marker_columns
from dpcore.data.tables import MAX_UPLOAD_MIB, numeric_columns
from pages._common import (
    EXPLORE_NOTE,
    SYNTHETIC,
    UPLOAD,
    checked_number,
    current_dataset,
    forget_spec,
    init_state,
    is_release_mode,
    mixture_params,
    number_field,
    number_text,
    raw_frame,
    show,
    spec,
    upload_file,
)
from pages._describe import describe_step
from pages._missing import missing_section, release_missing_caption
from pages._release import data_release_view

init_state()
ss = st.session_state
st.title("Data")
st.caption("Pick a bundled sample or the synthetic mixture in the sidebar, or upload a table. "
           "Then declare which columns to use and the public centre and radius the privacy "
           "guarantees rely on.")
if is_release_mode():  # the public description and a proxy only (pages/_release.py)
    release_missing_caption()
    data_release_view()
    st.stop()

GUIDE = [
    ("pages/tour.py", "six short steps from ε to private clustering, for a first look or a class"),
    ("pages/game.py", "play the adversary: guess whether one student is in the data"),
    ("pages/importance.py", "see which points importance sampling protects most (paper Fig. 1)"),
    ("pages/clustering.py", "compare DP k-means algorithms at the same ε"),
    ("pages/utility.py", "find the ε that gives the accuracy you need"),
    ("pages/friendlycore.py", "watch FriendlyCore drop outliers before averaging"),
    ("pages/sensitivity.py", "release a statistic nobody bounded, with random DP"),
    ("pages/ledger.py", "switch to release mode and watch the budget being spent"),
]
with st.expander("New here? Start with the cities sample, then…", expanded=False):
    for path, what in GUIDE:
        if path in ss.get("nav_pages", {}):
            title, icon = ss["nav_pages"][path]
            st.page_link(path, label=f"{title}: {what}", icon=icon)

st.file_uploader(
    f"Upload a table (CSV, TSV, Parquet, optionally .gz; at most {MAX_UPLOAD_MIB} MiB); it is "
    "held in memory only",
    type=["csv", "tsv", "txt", "parquet", "gz"], key="upload", max_upload_size=MAX_UPLOAD_MIB,
    on_change=lambda: upload_file(ss.get("upload")),
)
if ss.get("upload_error"):
    st.error(f"This file cannot be used. {md_text(ss['upload_error'])}")

key = ss["data"]
df, source, title = raw_frame(key)
if df is None:
    st.info("No file uploaded yet: upload one above, or pick a sample data set in the sidebar.")
    st.stop()
sp = spec(key, df)
st.subheader(md_text(title))
if key == SYNTHETIC:
    def _set_mixture() -> None:
        d = int(ss["mix_d"])
        n_max = mixture_max_rows(d)
        if int(ss["mix_n"]) > n_max:  # n × d within the session memory budget (finding 4)
            ss["mix_msg"] = (f"n lowered to {n_max:,}: with d = {d} a larger mixture exceeds "
                             "this session's memory budget (DPCORE_SESSION_MEMORY_MB)")
            ss["mix_n"] = ss["_prev_mix_n"] = number_text(n_max)  # said above, shown as used
        ss["mixture"] = {"n": int(ss["mix_n"]), "d": d, "k": int(ss["mix_k"]),
                         "sigma": float(ss["mix_sigma"]), "center_radius": 10.0}
        forget_spec(SYNTHETIC)

    def mixture_max_rows(d: int) -> int:
        return max(100, min(1_000_000, resource_limits(d).max_rows(d)))

    mix = mixture_params()
    g1, g2, g3, g4 = st.columns(4)
    n_top = mixture_max_rows(mix["d"])
    for where, label, fkey, lo, hi, count in ((g1, "n", "mix_n", 100, n_top, True),
                                              (g2, "d", "mix_d", 1, 100, True),
                                              (g3, "components", "mix_k", 1, 50, True),
                                              (g4, "σ", "mix_sigma", 0.01, 100.0, False)):
        number_field(where, label, fkey,
                     lambda v, n=label, lo=lo, hi=hi, c=count: (check_count if c else
                                                                check_number)(n, v, lo, hi),
                     mix[{"mix_n": "n", "mix_d": "d", "mix_k": "k"}.get(fkey, "sigma")],
                     on_valid=lambda _v: _set_mixture(),
                     help=f"From {lo:,g} to {hi:,g}"
                          + (" (what fits this session's memory budget for this d)."
                             if fkey == "mix_n" else "."))
    if ss.get("mix_msg"):
        st.info(ss.pop("mix_msg"))
    df, source, title = raw_frame(key)


def _init(wkey: str, value) -> None:
    if wkey not in ss:
        ss[wkey] = value


# ---- columns, centre, radius: written to the data spec by callbacks, so the sidebar and the
# ---- other pages see the declaration in the same rerun.
def _set_columns() -> None:
    cols = ss[f"cols_{key}"]
    if cols != sp["columns"]:
        sp["columns"] = list(cols)
        if sp["center"] is not None and len(sp["center"]) != len(cols):
            sp["center"] = [0.0] * len(cols)
            ss[f"center_{key}"] = ", ".join("0" for _ in cols)


def _set_center() -> None:
    text = ss[f"center_{key}"].strip()
    if not text:
        sp["center"] = None
        ss["center_error"] = None
        return
    try:
        c = [float(t) for t in text.replace(";", ",").split(",")]
    except ValueError:
        ss["center_error"] = f"the centre must be numbers separated by commas, got {text!r}"
        return
    if len(c) != len(sp["columns"]) or not np.all(np.isfinite(c)):
        ss["center_error"] = (f"the centre needs {len(sp['columns'])} finite coordinate(s), one "
                              f"per chosen column; got {text!r}")
        return
    sp["center"], ss["center_error"] = c, None


def _set_radius(r: float | None) -> None:
    sp["radius"] = r
    sp["radius_from"] = "declared by you" if r is not None else "not declared yet"
    sp["radius_source"] = "declared" if r is not None else "none"


if key == UPLOAD:
    describe_step()
    df, source, title = raw_frame(key)
    sp = spec(key, df)
else:
    # numbers, and numbers with missing-value markers ('NA', 'N/A', '-'): usable with a rule
    numeric = numeric_columns(df) + list(marker_columns(df))
    _init(f"cols_{key}", [c for c in sp["columns"] if c in numeric])
    _init(f"center_{key}",
          "" if sp["center"] is None else ", ".join(f"{c:g}" for c in sp["center"]))
    _init(f"radius_{key}", number_text(sp["radius"]))

    c1, c2, c3 = st.columns([2, 1, 1])
    c1.multiselect("Columns (numeric)", numeric, key=f"cols_{key}", on_change=_set_columns)
    c2.text_input("Public centre (comma-separated; empty = 0)", key=f"center_{key}",
                  on_change=_set_center,
                  help="Rows are centred on this point before clipping. It must not be read off "
                       "private data (e.g. the midpoint of known bounds).")
    checked_number(c3, "Public radius", f"radius_{key}", check_radius, on_valid=_set_radius,
                   help="Rows are clipped (scaled down) to this L2 norm after centring; the "
                        "sensitivity of every mechanism depends on it. From 1e-100 to 1e100; "
                        "a value outside is refused, never clamped.")
    if ss.get("center_error"):
        st.error(md_text(ss["center_error"]))
    st.caption(f"Radius source: {sp['radius_from']}.")

if not sp["columns"]:
    st.warning("Choose at least one numeric column.")
    st.stop()
missing_section(df, sp, key)


def _suggest_radius() -> None:
    # Validated before it is stored: ±1e308 rows give no radius and a message, never a NaN
    # that would wedge every page of the session (issue 14, finding 2).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the page shows its own, more visible warning
        got = suggest_radius(df, columns=sp["columns"], center=sp["center"])
    if not got.ok:
        ss["radius_msg"] = ("error", got.message)
        return
    ss[f"radius_{key}"] = ss[f"_prev_radius_{key}"] = number_text(got.value)
    sp["radius"] = got.value
    sp["radius_from"] = "suggested from the data's 99th percentile norm: NOT private"
    sp["radius_source"] = "data"


if key != UPLOAD and (sp["radius"] is None or "NOT private" in sp["radius_from"]):
    st.button("Suggest a radius from the data (not private)", key="suggest_radius",
              on_click=_suggest_radius)


def _private_radius() -> None:
    from dpcore.mechanisms.bounds import private_norm_quantile
    from dpcore.release.runconfig import prepare_matrix

    q, eps_r = float(ss["pr_q"]), float(ss["pr_eps"])
    lo, hi = float(ss["pr_lo"]), float(ss["pr_hi"])
    if not 0 < lo < hi:
        ss["radius_msg"] = ("error", f"the candidate range needs 0 < lower < upper, got {lo:g}, "
                                     f"{hi:g}")
        return
    est = private_norm_quantile(prepare_matrix(df, columns=sp["columns"], center=sp["center"]),
                                q, epsilon=eps_r, lower=lo, upper=hi, rng=fresh_seed())
    got = check_radius_value(float(f"{est.radius:.4g}"))
    if not got.ok:
        ss["radius_msg"] = ("error", got.message)
        return
    r = got.value
    ss[f"radius_{key}"] = ss[f"_prev_radius_{key}"] = number_text(r)
    sp["radius"] = r
    sp["radius_from"] = (f"estimated privately: {q:.0%} quantile of the norms under "
                         f"{est.privacy_}" + ("" if is_release_mode() else
                                              " (explore mode: not recorded in the ledger)"))
    sp["radius_source"] = "private_uncharged"  # this page records no charge for it
    ss["radius_msg"] = ("success", f"Private radius estimate: {r:g} ({est.privacy_}).")


with st.expander("Estimate the radius privately (explore: no charge recorded)"):
    st.caption("An ε-DP quantile of the row norms (exponential mechanism over a public "
               "log-spaced grid, dpcore.mechanisms.bounds). Explore mode records no charge, so "
               "release mode "
               "does not accept this estimate: declare a radius (or bounds) instead.")
    bound = (sp.get("public_description") or {}).get("radius") or sp["radius"]
    e1, e2, e3, e4 = st.columns(4)
    number_field(e1, "quantile", "pr_q", lambda v: check_number("quantile", v, 0.5, 1.0), 0.99)
    number_field(e2, "ε for it", "pr_eps", lambda v: check_number("ε", v, 0.001, 10.0), 0.5)
    number_field(e3, "smallest candidate", f"pr_lo_{bound}", check_radius,
                 float(f"{bound / 1000:.3g}") if bound else 1e-3)
    number_field(e4, "largest candidate", f"pr_hi_{bound}", check_radius,
                 float(f"{bound:.4g}") if bound else 1e6,
                 help="Public: starts at the radius of the declared bounds (no row can be "
                         "farther from the centre), so the estimate can only tighten it.")
    ss["pr_lo"], ss["pr_hi"] = ss[f"pr_lo_{bound}"], ss[f"pr_hi_{bound}"]
    band = radius_estimate_band(len(df), float(ss["pr_q"]), float(ss["pr_eps"]))
    if band == (0.0, 1.0):
        st.warning(f"With {len(df):,} rows at ε = {float(ss['pr_eps']):g} the estimate is "
                   "uninformative: it can land anywhere between the smallest and the largest "
                   "candidate. Use a larger ε for it, or keep the radius of the declared bounds.")
    else:
        st.caption(f"Uncertainty: with 95 % probability the estimate lies between the "
                   f"{band[0]:.1%} and {band[1]:.1%} quantiles of the row norms. Cost: "
                   f"ε = {float(ss['pr_eps']):g} (pure DP), on top of each release.")
    st.button("Estimate radius privately", key="private_radius", on_click=_private_radius)
msg = ss.pop("radius_msg", None)
if msg is not None:
    (st.error if msg[0] == "error" else st.success)(md_text(msg[1]))
if "NOT private" in sp["radius_from"]:
    st.warning("The radius was read off the data: a real release with it leaks information about "
               "the data. Replace it by a bound you know independently of the data before "
               "releasing.")

ds = current_dataset()
if ds is None:
    st.stop()
m1, m2, m3 = st.columns(3)
m1.metric("Rows", f"{ds.n:,}")
m2.metric("Columns used", ds.d)
if ds.radius is not None and not is_release_mode():  # a count of the data: explore only
    from dpcore.data.geometry import row_norms

    # ds.X is already clipped: rows that were outside now sit on the sphere.
    clipped = int(np.sum(row_norms(ds.X) >= ds.radius * (1 - 1e-9)))
    m3.metric("Rows on the radius (clipped)", f"{clipped:,}")
    if clipped > 0.01 * ds.n:
        st.caption(f":orange[{clipped / ds.n:.0%} of the rows were scaled down onto the radius: "
                   "clipping keeps the guarantee but biases means and centres towards the centre; "
                   "a larger radius adds noise instead. The privacy–utility page shows the "
                   "trade-off.]")

if key == SYNTHETIC:
    st.caption("Synthetic data are public by construction: generated with a fixed seed from a "
               "mixture of spherical Gaussians (the importance-sampling paper's set-up), means "
               "uniform in a ball of radius 10; declared radius 10 + 4σ√d.")

st.caption(f":orange[{EXPLORE_NOTE}]")
st.dataframe(df.head(1000), height=240)
centre = np.zeros(ds.d) if ds.center is None else np.asarray(ds.center)
P = ds.X + centre  # back to the table's units for display
proj = pca_projection(P, ds.columns)
fig = plots.points_figure(proj(P),
                          title=f"{html.escape(ds.title)}: rows after centring and clipping",
                          axis_titles=proj.axis_titles, note=EXPLORE_NOTE,
                          seed=int(ss["seed"]))
if ds.d == 2 and ds.radius is not None:
    plots.add_ball(fig, centre, ds.radius)
show(fig, "data_scatter")
st.caption(points_summary(proj(P), proj.axis_titles, "rows after centring and clipping")
           + (f" The circle is the declared ball of radius {ds.radius:.4g}."
              if ds.d == 2 and ds.radius is not None else ""))
