"""Clustering page: several DP k-means algorithms on the same data and budget, side by side."""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import plots
from dpcore.evaluate import normalized_kmeans_cost
from dpcore.sweeps import clustering_algorithms, fit_algorithm, unavailable_algorithms
from pages._common import (
    EXPLORE_NOTE,
    config_for,
    download_config,
    download_csv,
    init_state,
    is_release_mode,
    keep,
    new_draw_button,
    projection,
    require_dataset,
    show,
    show_warnings,
    to_table_units,
    view_seed,
)
from pages._release import clustering_release_view

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
release = False
names = [n for n, a in algorithms.items() if a.private or not release]
default = [n for n in ("DP-Lloyd", "DP-Lloyd + coreset sampling", "k-means (non-private)")
           if n in names]
c1, c2 = st.columns([3, 1])
chosen = c1.multiselect("Algorithms", names, default=default, **keep("clu_algs"),
                        bind="query-params")
delta = c2.number_input("δ (for (ε, δ) algorithms)", 1e-12, 0.1, value=1e-6, format="%.1e",
                        **keep("clu_delta"))
missing = unavailable_algorithms()
if missing:
    with st.expander(f"{len(missing)} algorithm(s) not available here"):
        for name, reason in missing.items():
            extra = (" diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.8; install a "
                     "compatible version as an optional extra to compare against it."
                     if "diffprivlib" in name else "")
            st.write(f"**{name}**: {reason}.{extra}")
if release:
    st.caption("Release mode: non-private k-means is hidden and costs are not shown (they are "
               "computed on the private data). Each algorithm is a separate release.")
if not chosen:
    st.info("Choose at least one algorithm.")
    st.stop()


@st.cache_data(max_entries=64, scope="session", show_spinner="Fitting…")
def fit(name: str, fp: str, k: int, eps: float, delta: float, radius: float, seed: int,
        _X: np.ndarray):
    """Cached on data hash, parameters and explicit seed."""
    return fit_algorithm(algorithms[name], _X, k=k, epsilon=eps, delta=delta, radius=radius,
                         seed=seed)


def config_of(out, seed: int):
    alg = algorithms[out.algorithm]
    return config_for(alg.mechanism, out.params, ds, seed) if alg.private else None


proj = projection(ds)

# ---------------------------------------------------------------- explore mode
seed = view_seed("clustering")
outs = [fit(n, ds.fp, k, eps, float(delta), float(ds.radius), seed, ds.X) for n in chosen]
st.caption(f":orange[{EXPLORE_NOTE}]")
ref = next((o for o in outs if o.algorithm == "k-means (non-private)" and o.centers is not None),
           None)
ref_cost = normalized_kmeans_cost(ds.X, ref.centers) if ref is not None else None
rows = []
for o in outs:
    cost = normalized_kmeans_cost(ds.X, o.centers) if o.centers is not None else np.nan
    rows.append({"algorithm": o.algorithm,
                 "privacy spent": str(o.guarantee) if o.guarantee is not None else "none (not DP)",
                 "normalised cost": cost,
                 "× non-private": cost / ref_cost if ref_cost else np.nan,
                 "seconds": o.seconds, "note": o.error or o.note or ""})
table = pd.DataFrame(rows)
st.dataframe(table, hide_index=True, column_config={
    "normalised cost": st.column_config.NumberColumn(format="%.4g"),
    "× non-private": st.column_config.NumberColumn(format="%.3f"),
    "seconds": st.column_config.NumberColumn(format="%.2f")})
for o in outs:
    show_warnings([f"{o.algorithm}: {w}" for w in o.warnings])
P = proj(to_table_units(ds, ds.X))
fig = plots.centers_figure(
    P, {o.algorithm: proj(to_table_units(ds, o.centers)) for o in outs if o.centers is not None},
    title=f"Centres over the data (k = {k}, ε = {eps:g})", axis_titles=proj.axis_titles,
    note=EXPLORE_NOTE, seed=seed)
show(fig, "clu_fig")
new_draw_button("clustering")
centres = [pd.DataFrame(to_table_units(ds, o.centers), columns=ds.columns).assign(
    algorithm=o.algorithm) for o in outs if o.centers is not None]
d1, d2 = st.columns(2)
with d1:
    if centres:
        download_csv(pd.concat(centres), "centers.csv", "clu_centers_csv", label="Centres (CSV)")
with d2:
    download_csv(table, "clustering_comparison.csv", "clu_table_csv", label="Table (CSV)")
with st.expander("Run configurations (JSON), one per DP algorithm"):
    for i, o in enumerate(outs):
        cfg = config_of(o, seed)
        if cfg is not None and o.centers is not None:
            st.caption(o.algorithm)
            download_config(cfg, f"clu_cfg_{i}")
