"""The public-description step for uploads (Data page): features, per-column bounds, scaling.

The user declares, per column, whether it is a feature and its public lower / upper bounds (the
way OpenDP and SmartNoise declare them); values outside are clamped. Label and ID columns are
left out by default and bounds are prefilled from what the column *names* suggest
(:mod:`dpcore.app.describe`). The centre and radius the mechanisms need follow from the bounds.

In explore mode, bounds the names do not suggest are prefilled from the data's own min / max so
that every page works at once; they are marked as read off the data (not private) until the user
types public ones. The result is stored as a plain dict in the data set's spec under
``"public_description"`` (keys ``columns, lower, upper, center, radius, n, scaled``), the shape
``dpcore.release.schema.PublicDescription`` is built from.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.app.describe import apply_description, describe, excluded_columns, suggest_bounds
from dpcore.app.sweeps import centred_box
from dpcore.core.text import md_text
from dpcore.data.datasets import SAMPLE_DATASETS
from dpcore.data.limits import MAX_ABS_VALUE
from pages._common import UPLOAD, Dataset, is_release_mode, spec

DATA_NOTE = "from the data (not private)"


def declared_box(ds: Dataset) -> list[tuple[float, float]] | None:
    """Public per-column bounds of the data in use (table units), or None when only a ball is
    declared; in the drawing plane, so a one-feature table's box gets the projection's empty
    second axis (issue 26: its 1-D box broke Clustering and Importance)."""
    if ds.key in SAMPLE_DATASETS:
        return [tuple(b) for b in SAMPLE_DATASETS[ds.key].bounds]
    desc = st.session_state["data_specs"].get(ds.key, {}).get("public_description")
    if not desc or desc["columns"] != ds.columns:
        return None
    if desc.get("scaled"):
        box = [(-1.0, 1.0)] * len(desc["columns"])
    else:
        box = list(zip(desc["lower"], desc["upper"], strict=True))
    return [*box, (-math.inf, math.inf)] if len(box) == 1 else box


def mechanism_box(ds: Dataset) -> tuple[list[float], list[float]] | None:
    """The declared box in the mechanisms' centred coordinates when every column in use has
    public bounds (a sample's, or the upload's description with none read off the data), else
    None: what the recommended DP k-means clamps to (issue 23.6)."""
    if ds.key not in SAMPLE_DATASETS and spec(ds.key, ds.df).get("bounds_from_data"):
        return None
    box = declared_box(ds)
    cols = list(SAMPLE_DATASETS[ds.key].columns) if ds.key in SAMPLE_DATASETS else ds.columns
    return None if box is None else centred_box(ds.columns, dict(zip(cols, box, strict=True)),
                                                    ds.center)


def _nice_outward(lo: float, hi: float) -> tuple[float, float]:
    """Round a data range outwards to 2 significant digits of its width (a bound, not a fit)."""
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    step = 10.0 ** (math.floor(math.log10(width)) - 1)
    return math.floor(lo / step) * step, math.ceil(hi / step) * step + (step if hi == lo else 0)


def _base_table(raw: pd.DataFrame, *, from_data: bool) -> pd.DataFrame:
    excluded = excluded_columns(raw)
    digits = sum(bool(re.match(r"^pixel_\d_\d$", str(c))) for c in raw.columns) >= 32
    rows = []
    for c in raw.columns:
        name = str(c)
        use = name not in excluded
        numeric = pd.api.types.is_numeric_dtype(raw[c].dtype)
        b = suggest_bounds(name, raw[c].dtype, digits_hint=digits) if numeric else None
        source = "suggested by the column name" if b is not None else ""
        if b is None and from_data and numeric and use:
            col = pd.to_numeric(raw[c], errors="coerce")
            lo, hi = float(np.nanmin(col)), float(np.nanmax(col))
            # only data inside the supported range get a suggestion (±1e308 would give an
            # infinite width: issue 14, finding 2); otherwise the user types the bounds
            if max(abs(lo), abs(hi)) <= MAX_ABS_VALUE:
                b, source = _nice_outward(lo, hi), DATA_NOTE
        rows.append({"column": name, "use": use, "lower": None if b is None else b[0],
                     "upper": None if b is None else b[1],
                     "bounds from": source if use or b else excluded.get(name, "")})
    return pd.DataFrame(rows)


def _apply(raw: pd.DataFrame, table: pd.DataFrame, scaled: bool) -> str | None:
    """Store the description and the clamped (scaled) features; an error message or None."""
    used = table[table["use"]]
    if used.empty:
        return "Choose at least one feature column."
    missing = used[used["lower"].isna() | used["upper"].isna()]["column"].tolist()
    if missing:
        return f"Type a lower and an upper bound for: {', '.join(missing[:8])}."
    nonnum = [c for c in used["column"] if not pd.api.types.is_numeric_dtype(raw[c].dtype)]
    if nonnum:
        return f"These columns are not numeric and cannot be features: {', '.join(nonnum[:8])}."
    try:
        desc = describe(used["column"].tolist(), used["lower"].astype(float).tolist(),
                        used["upper"].astype(float).tolist(), n=len(raw), scaled=scaled)
    except ValueError as exc:
        return str(exc).removeprefix("bounds: ").capitalize()
    ss = st.session_state
    up = ss["uploaded"]
    up["df"] = apply_description(raw, desc)
    sp = spec(UPLOAD, up["df"])
    # Bounds still as prefilled from the data's min / max (not retyped): never public.
    base = ss.get("_desc_base")
    base = base.set_index("column") if base is not None else None
    from_data = [c for c, lo, hi, src in zip(used["column"], used["lower"], used["upper"],
                                             used["bounds from"], strict=True)
                 if src == DATA_NOTE and (base is None or c not in base.index
                                          or (base.at[c, "lower"], base.at[c, "upper"])
                                          == (lo, hi))]
    sp.update(columns=desc["columns"], center=desc["center"], radius=desc["radius"],
              public_description=desc, bounds_from_data=from_data,
              radius_from=("half the diagonal of the declared bounds" +
                           (" (some bounds read off the data: NOT private)" if from_data
                            else "")),
              radius_source="data" if from_data else "public_bounds")
    for w in ("cols", "center", "radius"):
        ss.pop(f"{w}_{UPLOAD}", None)
    return None


def describe_step() -> None:
    """The public-description step for the uploaded table (Data page)."""
    ss = st.session_state
    up = ss.get("uploaded")
    if up is None:
        return
    raw = up.setdefault("raw", up["df"])
    explore = not is_release_mode()
    sp = spec(UPLOAD, up["df"])
    base_key = ("desc_base", up["name"], id(raw), explore)
    if ss.get("_desc_base_key") != base_key:
        ss["_desc_base_key"] = base_key
        ss["_desc_base"] = _base_table(raw, from_data=explore)
        ss.pop("desc_editor", None)
        if explore and "public_description" not in sp:  # pages work at once in explore mode
            _apply(raw, ss["_desc_base"], scaled=False)
            sp = spec(UPLOAD, up["df"])
    st.markdown("**Public description** — which columns are features and their public bounds. "
                "Values outside the bounds are clamped; the centre and radius follow from them.")
    table = st.data_editor(
        ss["_desc_base"], key="desc_editor", hide_index=True, width="stretch",
        disabled=["column", "bounds from"], height=min(38 + 35 * len(raw.columns), 320),
        column_config={
            "use": st.column_config.CheckboxColumn("feature", help="Use as a clustering "
                                                   "feature (labels and IDs are off)"),
            "lower": st.column_config.NumberColumn("lower bound", format="%.4g"),
            "upper": st.column_config.NumberColumn("upper bound", format="%.4g"),
        })
    c1, c2 = st.columns([1, 2])
    scaled = c1.checkbox("Scale each feature to [−1, 1]", key="desc_scaled",
                         value=bool((sp.get("public_description") or {}).get("scaled")),
                         help="Gives every feature the same weight (otherwise a column with a "
                              "wide range dominates the distances).")
    if c2.button("Apply description", key="desc_apply", type="primary",
                 icon=":material/check:"):
        err = _apply(raw, table, scaled)
        if err:
            st.error(md_text(err))
        else:
            st.rerun()
    if (table["bounds from"] == DATA_NOTE).any() and explore:
        st.caption(":orange[Some bounds were read off the data (explore mode only): a release "
                   "with them leaks information. Type bounds you know independently of the data "
                   "before releasing.]")
    desc = sp.get("public_description")
    if desc:
        st.caption(f"In use: {len(desc['columns'])} feature(s), centre and radius "
                   f"{desc['radius']:.4g} from the bounds"
                   + (", scaled to [−1, 1]." if desc.get("scaled") else "."))
