"""Privacy–utility page: error against ε for several algorithms, and the ε a target error needs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import plots
from dpcore.evaluate import normalized_kmeans_cost
from dpcore.sweeps import (
    clustering_algorithms,
    epsilon_for_target,
    fit_algorithm,
    log_grid,
    reference_algorithm,
    summarize,
    utility_sweep,
)
from pages._common import (
    EPSILON_GRID,
    EXPLORE_NOTE,
    download_csv,
    init_state,
    is_release_mode,
    keep,
    require_dataset,
    show,
    view_seed,
)
from pages._release import proxy_dataset

init_state()
ss = st.session_state
st.title("Privacy–utility")
st.caption("How much accuracy each ε buys: every algorithm is run several times at each ε of a "
           "log-spaced grid; the curves show the median and the interquartile band. Then ask "
           "which ε reaches the error you can accept.")
release = is_release_mode()
# Release mode: a public proxy of fixed size with the declared radius; the table is never read.
ds = proxy_dataset() if release else require_dataset()
algorithms = {n: a for n, a in clustering_algorithms().items() if a.private}

c1, c2 = st.columns([3, 2])
chosen = c1.multiselect("Algorithms", list(algorithms),
                        default=[n for n in ("DP-Lloyd", "DP-Lloyd + coreset sampling")
                                 if n in algorithms], **keep("pu_algs"), bind="query-params")
lo, hi = c2.select_slider("ε range", EPSILON_GRID, value=(0.1, 10.0), **keep("pu_range"))
c3, c4, c5 = st.columns(3)
n_eps = c3.slider("Grid points", 2, 12, 5, **keep("pu_points"))
reps = c4.slider("Repetitions", 1, 20, 3, **keep("pu_reps"))
metric_name = c5.radio("Metric", ["cost / n", "cost ÷ non-private cost"], **keep("pu_metric"),
                       help="cost / n: the papers' normalised k-means cost. The ratio divides "
                            "by the cost of non-private k-means on the same data (1 = no loss).")
delta = 1e-6
if release:
    X = ds.X
    st.info("Release mode: the curves are computed on a synthetic proxy with the data's shape and "
            "declared radius, so they spend no privacy budget and reveal nothing about the data.")
else:
    X = ds.X
    st.caption(f":orange[{EXPLORE_NOTE}]")
if lo >= hi:
    st.warning("Choose an ε range with two different ends.")
    st.stop()
grid = log_grid(lo, hi, n_eps)
total = len(chosen) * len(grid) * reps
st.caption(f"{total} fits on {X.shape[0]:,} points; ε grid: {', '.join(f'{e:g}' for e in grid)}.")

if st.button("Run sweep", key="pu_run", type="primary", disabled=not chosen,
             icon=":material/play_arrow:"):
    st.button("Stop", key="pu_stop", help="Stops after the current fit; finished runs are kept.")
    rows: list[dict] = []
    ss["pu_rows"] = rows  # partial results survive a stop
    ss["pu_done"] = False
    ss["pu_setup"] = {"data": ds.fp, "release": release, "metric": metric_name,
                      "k": int(ss["k"])}
    bar = st.progress(0.0, text="starting")
    if metric_name.startswith("cost ÷"):
        ref = fit_algorithm(reference_algorithm(), X, k=int(ss["k"]), epsilon=np.inf, delta=delta,
                            radius=float(ds.radius), seed=0)
        ref_cost = normalized_kmeans_cost(X, ref.centers)

        def metric(data, centers):
            return normalized_kmeans_cost(data, centers) / ref_cost
    else:
        metric = normalized_kmeans_cost

    def progress(done: int, total: int, row: dict) -> None:
        rows.append(row)
        bar.progress(done / total, text=f"{done}/{total}: {row['algorithm']} at ε = "
                                        f"{row['epsilon']:g}")

    with st.spinner("Running…"):
        utility_sweep(X, [algorithms[n] for n in chosen], grid, k=int(ss["k"]), delta=delta,
                      radius=float(ds.radius), repetitions=reps, seed=view_seed("utility"),
                      metric=metric, progress=progress)
    ss["pu_done"] = True
    st.rerun()

rows = ss.get("pu_rows")
if not rows:
    st.info("Press **Run sweep** to compute the curves.")
    st.stop()
setup = ss.get("pu_setup", {})
if setup.get("data") != ds.fp or setup.get("release") != release:
    st.info("The data or the mode changed since the last sweep: run it again.")
    st.stop()
table = pd.DataFrame(rows)
if release:  # no timings and no seeds in release mode
    table = table.drop(columns=["seconds", "seed"], errors="ignore")
st.caption(f"Sweep computed for k = {setup.get('k')} on {X.shape[0]:,} points.")
if not ss.get("pu_done"):
    st.warning(f"Sweep stopped after {len(table)} fits; the curves use the finished ones.")
failed = table["error"].notna()
if failed.any():
    st.caption(f":orange[{int(failed.sum())} fit(s) released nothing: "
               f"{table.loc[failed, 'error'].iloc[0]}]")
summary = summarize(table)
if summary.empty:
    st.warning("No fit finished successfully.")
    st.stop()
metric_title = setup.get("metric", metric_name)
default_target = float(f"{summary['median'].median():.3g}")
target = st.number_input(f"Which ε gives me {metric_title} ≤ …", value=default_target,
                         format="%.4g", key=f"pu_target_{metric_title}")
show(plots.utility_curve_figure(summary, metric_title=metric_title, target=target,
                                log_y=metric_title == "cost / n"), "pu_fig")
answers = []
for alg in summary["algorithm"].unique():
    for stat in ("median", "q75"):
        answers.append(epsilon_for_target(summary, alg, target, stat))
st.markdown("\n".join(f"- {a.sentence()}" for a in answers))
st.caption("“3 runs out of 4” reads the upper quartile: at that ε, 75 % of the repetitions had an "
           "error at or below the target. Interpolated in log ε between grid points.")
st.dataframe(summary, hide_index=True)
c1, c2 = st.columns(2)
with c1:
    download_csv(table, "privacy_utility_runs.csv", "pu_runs_csv", label="All runs (CSV)")
with c2:
    download_csv(summary, "privacy_utility_summary.csv", "pu_summary_csv",
                 label="Summary (CSV)")
