"""Privacy–utility page: error against ε for several algorithms, and the ε a target error needs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.app import plots
from dpcore.app.advice import estimate_fit_seconds, plain_error
from dpcore.app.evaluate import normalized_kmeans_cost
from dpcore.app.summaries import utility_summary
from dpcore.app.sweeps import (
    clustering_algorithms,
    epsilon_for_target,
    fit_algorithm,
    log_grid,
    reference_algorithm,
    summarize,
    utility_sweep,
)
from dpcore.core.cancel import checkpoint
from dpcore.core.text import md_text
from dpcore.data.limits import check_number
from pages._common import (
    EPSILON_GRID,
    EXPLORE_NOTE,
    download_csv,
    init_state,
    is_release_mode,
    keep,
    number_field,
    number_text,
    require_dataset,
    show,
    view_seed,
)
from pages._describe import mechanism_box
from pages._plain import show_plain_error
from pages._release import proxy_dataset
from pages._run import run_panel

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
                        default=[n for n in ("DP k-means (recommended)", "DP-Lloyd")
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

k = int(ss["k"])
sweep_seed = view_seed("utility")
key = (ds.fp, release, metric_name, k, tuple(chosen), tuple(grid), reps, sweep_seed)
holder: dict = ss.setdefault("_pu_holder", {})  # a plain dict the worker thread may write
box = None if release else mechanism_box(ds)  # read here: the worker thread has no session state
seconds = reps * len(grid) * sum(estimate_fit_seconds(n, X.shape[0], X.shape[1], k)
                                 for n in chosen)


def run_sweep() -> dict:
    """The sweep (in a worker thread when long): rows are kept as they finish, so a Stop keeps
    the finished part; the progress callback is where a Stop takes effect."""
    rows: list[dict] = []
    out = {"rows": rows, "metric": metric_name, "k": k, "data": ds.fp, "release": release}
    holder["out"] = out
    checkpoint(0.0, "non-private reference")
    ref = fit_algorithm(reference_algorithm(), X, k=k, epsilon=np.inf, delta=delta,
                        radius=float(ds.radius), seed=0)
    ref_cost = normalized_kmeans_cost(X, ref.centers)
    out["reference"] = 1.0 if metric_name.startswith("cost ÷") else ref_cost
    if metric_name.startswith("cost ÷"):
        def metric(data, centers):
            return normalized_kmeans_cost(data, centers) / ref_cost
    else:
        metric = normalized_kmeans_cost

    def progress(done: int, total: int, row: dict) -> None:
        rows.append(row)
        checkpoint(done / total, f"{done}/{total}: {row['algorithm']} at ε = {row['epsilon']:g}")

    utility_sweep(X, [algorithms[n] for n in chosen], grid, k=k, delta=delta,
                  radius=float(ds.radius), repetitions=reps, seed=sweep_seed,
                  metric=metric, progress=progress,
                  bounds=box)
    return out


job = run_panel("utility", key=key, fn=run_sweep, seconds=seconds, label="Run sweep",
                button_key="pu_run")  # cheap at the defaults: drawn without a click
if job is None:
    st.info("Press **Run sweep** to compute the curves.")
    st.stop()
if job.error is not None:
    show_plain_error(str(job.error))
    st.stop()
done = job.result if job.result is not None else holder.get("out")
if not done or done.get("data") != ds.fp or done.get("release") != release:
    st.info("The data or the mode changed since the last sweep: run it again.")
    st.stop()
table = pd.DataFrame(done["rows"], columns=["algorithm", "epsilon", "repetition", "seed",
                                            "value", "seconds", "error"])
if release:  # no timings and no seeds in release mode
    table = table.drop(columns=["seconds", "seed"])
st.caption(f"Sweep computed for k = {done['k']} on {X.shape[0]:,} points.")
if job.cancelled:
    st.warning(f"Sweep stopped after {len(table)} fits; the curves use the finished ones.")
failed = table["error"].notna()
if failed.any():
    st.markdown(f":orange[{int(failed.sum())} of {len(table)} fit(s) released nothing:]")
    for msg, count in table.loc[failed, "error"].value_counts().items():
        st.markdown(f"- :orange[{count} ×] {md_text(plain_error(msg).text)}")
    with st.expander("Details of the failures"):
        st.dataframe(table.loc[failed, ["algorithm", "epsilon", "repetition", "error"]],
                     hide_index=True)
summary = summarize(table)
if summary.empty:
    st.warning("No fit finished successfully.")
    st.stop()
metric_title = done["metric"]
units = "normalised k-means cost (cost / n)" if metric_title == "cost / n" else \
    "cost relative to non-private k-means (1 = no loss)"
if ss.get("_pu_target_for") != (job.key, metric_title):  # a new sweep: a new default target
    ss["_pu_target_for"] = (job.key, metric_title)
    ss["pu_target"] = ss["_prev_pu_target"] = number_text(
        float(f"{summary['median'].median():.3g}"))
target = number_field(st, f"Which ε gives me an error ≤ … (in {units})", "pu_target",
                      lambda v: check_number("the error target", v, 1e-300, 1e300), 1.0)
reference = done.get("reference")
show(plots.utility_curve_figure(summary, metric_title=metric_title, target=target,
                                reference=reference,
                                reference_label="non-private k-means"), "pu_fig")
answers = []
for alg in summary["algorithm"].unique():
    for stat in ("median", "q75"):
        answers.append(epsilon_for_target(summary, alg, target, stat))
st.caption(utility_summary(summary, units))
st.markdown("\n".join(f"- {a.sentence()}" for a in answers))
st.caption(f"Error in {units}; the dotted line is non-private k-means"
           + (f" ({reference:.3g})" if reference is not None else "")
           + ". “3 runs out of 4” reads the upper quartile: at that ε, 75 % of the repetitions had "
           "an error at or below the target. Interpolated in log ε between grid points.")
st.dataframe(summary, hide_index=True)
c1, c2 = st.columns(2)
with c1:
    download_csv(table, "privacy_utility_runs.csv", "pu_runs_csv", label="All runs (CSV)")
with c2:
    download_csv(summary, "privacy_utility_summary.csv", "pu_summary_csv",
                 label="Summary (CSV)")
