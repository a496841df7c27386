"""Clustering page: several DP k-means algorithms on the same data and budget, side by side."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.app import plots
from dpcore.app.advice import (
    estimate_fit_seconds,
    friendly_kmeans_plan,
    noise_verdict,
    plain_error,
)
from dpcore.app.plots import clip_to_box
from dpcore.app.summaries import centres_summary
from dpcore.app.sweeps import (
    clustering_algorithms,
    comparison_table,
    fit_algorithm,
    reference_algorithm,
    unavailable_algorithms,
)
from dpcore.core.cancel import checkpoint, substep
from dpcore.core.text import md_text
from dpcore.estimators.lloyd_kmeans import nearest_centre
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
from pages._describe import declared_box, mechanism_box
from pages._export import export_buttons
from pages._plain import show_plain_error, show_plain_warnings
from pages._release import clustering_release_view
from pages._run import run_panel

init_state()
ss = st.session_state
st.title("Clustering: algorithms side by side")
st.caption("The same data, k and ε for every algorithm; centres drawn over the data, with the "
           "normalised k-means cost (cost / n), the privacy spent and the time of each.")
if is_release_mode():  # through the release door only (pages/_release.py)
    clustering_release_view()
    st.stop()
ds = require_dataset()
k, eps = int(ss["k"]), float(ss["eps"])
algorithms = clustering_algorithms()
names = list(algorithms)
RECOMMENDED, BASELINE = "DP k-means (recommended)", reference_algorithm().name
# The recommended DP k-means beside the non-private yardstick (issue 25.2); the paper variants
# and the other algorithms are one click away (the button below the selection).
default = [n for n in (RECOMMENDED, BASELINE) if n in names]
# Release mode draws its own selection (clu_rel_algs, private algorithms only), so this one,
# with the non-private k-means baseline, survives a trip to release mode.
c1, c2 = st.columns([3, 1])
chosen = c1.multiselect("Algorithms", names, default=default, **keep("clu_algs"),
                        bind="query-params")
delta = number_field(c2, "δ (for (ε, δ) algorithms)", "clu_delta", check_delta_field, 1e-6,
                     persist_state="session")
missing = unavailable_algorithms()
if missing:
    with st.expander(f"{len(missing)} algorithm(s) not available here"):
        for name, reason in missing.items():
            extra = (" diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.8; install a "
                     "compatible version as an optional extra to compare against it."
                     if "diffprivlib" in name else "")
            st.write(f"**{name}**: {reason}.{extra}")
others = [n for n in names if n not in chosen]


def _add_all() -> None:
    ss["clu_algs"] = list(names)


if others:
    st.button(f"Compare with the {len(others)} other algorithm(s)", key="clu_add_all",
              on_click=_add_all, icon=":material/add:",
              help="Adds " + ", ".join(others) + " (each with its estimated time below).")
st.caption(f"**{RECOMMENDED}** is DP-Lloyd with its rounds and noise split chosen from ε, n, d "
           f"and k (docs/dp_kmeans.md). **{BASELINE}** is the yardstick: one k-means++ "
           "seeding on a sample of at most 20,000 rows, then Lloyd's iterations on every row "
           "(affordable on 500k rows, and Stop interrupts it).")
if not chosen:
    st.info("Choose at least one algorithm.")
    st.stop()


def config_of(out, seed: int):
    alg = algorithms[out.algorithm]
    return config_for(alg.mechanism, out.params, ds, seed) if alg.private else None


proj = projection(ds)

# ---------------------------------------------------------------- explore mode
seed = view_seed("clustering")
settings = (k, eps, float(delta), float(ds.radius), seed)
memo: dict = ss.setdefault("_clu_memo", {})
if memo.get("data") != ds.fp:  # fits of another data set are never reused
    memo.clear()
    memo["data"] = ds.fp
X = ds.X
box = mechanism_box(ds)  # read here: the worker thread has no session state


def compute_fits() -> list:
    """Fit every chosen algorithm (reusing fits of unchanged settings); progress per algorithm."""
    outs = []
    for i, name in enumerate(chosen):
        checkpoint(i / len(chosen), f"fitting {name} ({i + 1} of {len(chosen)})")
        mk = (name, *settings)
        if mk not in memo:
            with substep(i / len(chosen), (i + 1) / len(chosen)):  # the bar keeps rising
                memo[mk] = fit_algorithm(algorithms[name], X, k=k, epsilon=eps, delta=float(delta),
                                         radius=float(ds.radius), seed=seed,
                                         bounds=box)
        outs.append(memo[mk])
    checkpoint(1.0, "done")
    return outs


todo = [n for n in chosen if (n, *settings) not in memo]
fc_feasible = friendly_kmeans_plan(ds.n, k, epsilon=eps, delta=float(delta),
                                   grid=EPSILON_GRID).feasible
cost = sum(estimate_fit_seconds(n, ds.n, ds.d, k) for n in todo
           if n != "FriendlyCore k-means" or fc_feasible)  # infeasible: refused at once
job = run_panel("clustering", key=(ds.fp, tuple(chosen), settings), fn=compute_fits,
                seconds=cost, label=f"Run {len(chosen)} algorithm(s)", button_key="clu_run")
if job is None:
    st.info("Press **Run** to fit the chosen algorithms.")
    st.stop()
if job.error is not None:
    show_plain_error(str(job.error))
    st.stop()
outs = job.result
st.caption(f":orange[{EXPLORE_NOTE}]")
table = comparison_table(outs, ds.X, lambda e: plain_error(e).text)
shown = table if table["note"].astype(bool).any() else table.drop(columns="note")
st.dataframe(shown, hide_index=True, column_config={
    # names and guarantees at their own width (a fixed one clipped them); the name pinned:
    # with every algorithm chosen the table is wider than 1024 px and scrolls sideways
    "algorithm": st.column_config.TextColumn(pinned=True),
    "privacy spent": st.column_config.TextColumn("privacy"),
    "normalised cost": st.column_config.NumberColumn("cost / n", format="%.4g", width="small"),
    "× non-private": st.column_config.NumberColumn("× k-means", format="%.3f", width="small"),
    "seconds": st.column_config.NumberColumn("s", format="%.2f", width="small"),
    "note": st.column_config.TextColumn(width="large")})
def _apply(values: dict) -> None:
    for key_, value in values.items():
        ss[key_] = value


for o in outs:
    if o.error:
        if o.algorithm == "FriendlyCore k-means":  # settings that work, from public inputs
            plan = friendly_kmeans_plan(ds.n, k, epsilon=eps, delta=float(delta),
                                        grid=EPSILON_GRID)
            if not plan.feasible:
                st.warning(f"{o.algorithm}: {md_text(plan.message)}")
                if plan.epsilon_needed is not None:
                    st.button(f"Use ε = {plan.epsilon_needed:g}", key="clu_fc_eps",
                              on_click=_apply, args=({"eps": plan.epsilon_needed},))
        with st.expander(f"{o.algorithm}: why nothing was released"):
            st.text(plain_error(o.error).text)
            st.code(o.error)
    elif algorithms[o.algorithm].private:
        verdict = noise_verdict(ds.X, o.centers)
        if verdict:
            st.warning(f"{o.algorithm}: {verdict}")
    show_plain_warnings(o.warnings, prefix=f"{o.algorithm}: ")
# One rule for the figure and the CSV (issue 27.8): centres in table units, moved into the
# declared box when one is declared (post-processing of a DP output with public bounds).
full_box = declared_box(ds)
col_box = None if full_box is None else full_box[: ds.d]  # the drawing plane pads d = 1
shown_centres = {o.algorithm: clip_to_box(to_table_units(ds, o.centers), col_box)
                 for o in outs if o.centers is not None}
P = proj(to_table_units(ds, ds.X))
# points coloured by their nearest centre of the first clustering shown (explore mode: reads X)
colour_by = next(iter(shown_centres), None)
labels = (nearest_centre(to_table_units(ds, ds.X), shown_centres[colour_by])
          if colour_by is not None else None)
fig = plots.centers_figure(
    P, {name: proj(C) for name, C in shown_centres.items()},
    title=f"Centres over the data (k = {k}, ε = {eps:g})", axis_titles=proj.axis_titles,
    note=EXPLORE_NOTE, seed=seed, labels=labels)
show(fig, "clu_fig")
st.caption(centres_summary(shown_centres, labels, colour_by, clamped=full_box is not None))
new_draw_button("clustering")
# the CLI's layout (dpcore run --out x.csv): table units and columns, the variant's label (two
# variants of one mechanism stay apart), the guarantee; the same centres as the figure
centres = [release_frame({"centers": shown_centres[o.algorithm]}, ds.columns, o.algorithm,
                         o.guarantee)
           for o in outs if o.centers is not None]
with st.container(horizontal=True):
    if centres:
        download_csv(pd.concat(centres, ignore_index=True), "centers.csv", "clu_centers_csv",
                     label="Centres (CSV)")
    download_csv(table, "clustering_comparison.csv", "clu_table_csv", label="Table (CSV)")
with st.expander("Run configurations (JSON), Python scripts and notebooks, one per DP algorithm"):
    for i, o in enumerate(outs):
        cfg = config_of(o, seed)
        if cfg is not None and o.centers is not None:
            st.caption(o.algorithm)
            export_buttons(cfg, f"clu_cfg_{i}")
