"""Public description of an uploaded table: which columns to use and their public bounds.

The privacy guarantees need public bounds (OpenDP and SmartNoise declare them per column, with
clamping). This module suggests them from what is public about a table — **the column names and
their types**, never the values — and applies a description to the data:

* :func:`excluded_columns` — label / target / ID columns that should not be clustering features
  (by name and type), with the reason;
* :func:`suggest_bounds` — per-column lower / upper bounds suggested by the column name (latitude,
  longitude, percentages, ages, image pixels, …), or None when the user must type them;
* :func:`describe` — the description as a plain dict ``columns, lower, upper, center, radius, n``
  (the dashboard stores it in its per-data-set spec; ``dpcore.release.schema.PublicDescription`` can
  be built from it);
* :func:`apply_description` — clamp each column to its bounds and optionally scale it to
  [−1, 1] (row-wise, public transformations: they keep every DP guarantee).

Centre and radius follow from the bounds (:func:`dpcore.app.ui_state.box_geometry`): the box's
midpoint and half its diagonal, so no vector is typed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from dpcore.data.geometry import box_geometry

__all__ = ["apply_description", "describe", "excluded_columns", "radius_estimate_band",
           "suggest_bounds"]

_LABEL = re.compile(r"^(target|label|labels|class|classes|y|outcome|response|species|"
                    r"diagnosis|category|cluster|group|digit|letter|lettr)$", re.IGNORECASE)
_ID = re.compile(r"(^|[_\s.-])(id|idx|index|key|uuid|row|rowid|record)$"
                 r"|^unnamed(: ?\d+)?$|^id[_\s]", re.IGNORECASE)

# (name pattern, lower, upper): bounds a column's *name* makes public knowledge.
_NAMED_BOUNDS: list[tuple[str, float, float]] = [
    (r"^(lat|latitude)$", -90.0, 90.0),
    (r"^(lon|lng|long|longitude)$", -180.0, 180.0),
    (r"(percent|pct|percentage)", 0.0, 100.0),
    (r"(proportion|fraction|ratio_0_1|probability|prob)$", 0.0, 1.0),
    (r"^age$", 0.0, 120.0),
    (r"^(pixel|px)[_\s]?\d+([_\s]\d+)?$", 0.0, 255.0),
    (r"^(hour)$", 0.0, 24.0),
    (r"^(month)$", 1.0, 12.0),
]


def excluded_columns(df: pd.DataFrame) -> dict[str, str]:
    """Columns to leave out of the features by default: name -> reason (names and types only).

    A label or target (``target``, ``label``, ``class``, ``species``, …) or an identifier
    (``id``, ``row_id``, ``Unnamed: 0``, …) is no feature to cluster on; a non-numeric or
    boolean column cannot be one.
    """
    out: dict[str, str] = {}
    for c in df.columns:
        name = str(c).strip()
        dtype = df[c].dtype
        if _LABEL.match(name):
            out[str(c)] = "looks like a label / target column"
        elif _ID.search(name):
            out[str(c)] = "looks like an identifier"
        elif pd.api.types.is_bool_dtype(dtype):
            out[str(c)] = "true / false column"
        elif not pd.api.types.is_numeric_dtype(dtype):
            out[str(c)] = "not numeric"
    return out


def suggest_bounds(name: str, dtype: Any = None, *, digits_hint: bool = False
                   ) -> tuple[float, float] | None:
    """Public (lower, upper) bounds suggested by a column's name (and type), or None.

    ``digits_hint``: the table looks like scikit-learn's 8×8 digits (``pixel_r_c`` columns with
    values 0–16), a public fact about that data set's format.
    """
    n = str(name).strip().lower()
    if dtype is not None and pd.api.types.is_bool_dtype(dtype):
        return (0.0, 1.0)
    for pattern, lo, hi in _NAMED_BOUNDS:
        if re.search(pattern, n):
            if hi == 255.0 and digits_hint:
                return (0.0, 16.0)
            return (lo, hi)
    return None


def describe(columns: Sequence[str], lower: Sequence[float], upper: Sequence[float], *,
             n: int | None = None, scaled: bool = False) -> dict[str, Any]:
    """The public description as a plain dict (keys ``columns, lower, upper, center, radius, n,
    scaled``). With ``scaled`` the features are mapped to [−1, 1], so the declared box is
    [−1, 1]^d (centre 0, radius √d) while ``lower`` / ``upper`` keep the original units."""
    lo = np.asarray(lower, dtype=float)
    hi = np.asarray(upper, dtype=float)
    if lo.shape != hi.shape or lo.size != len(columns):
        raise ValueError(f"bounds: need one lower and one upper bound per column "
                         f"({len(columns)}), got {lo.size} and {hi.size}")
    bad = [c for c, a, b in zip(columns, lo, hi, strict=True)
           if not (np.isfinite(a) and np.isfinite(b) and a < b)]
    if bad:
        raise ValueError(f"bounds: each column needs finite lower < upper; check {bad[:5]}")
    box = [(-1.0, 1.0)] * lo.size if scaled else list(zip(lo.tolist(), hi.tolist(), strict=True))
    geo = box_geometry(box)
    return {"columns": [str(c) for c in columns], "lower": lo.tolist(), "upper": hi.tolist(),
            "center": [float(v) for v in geo.center], "radius": float(geo.radius),
            "n": None if n is None else int(n), "scaled": bool(scaled)}


def apply_description(df: pd.DataFrame, description: dict[str, Any]) -> pd.DataFrame:
    """The declared columns, each clamped to [lower, upper] (and scaled to [−1, 1] if asked)."""
    cols = description["columns"]
    lo = np.asarray(description["lower"], dtype=float)
    hi = np.asarray(description["upper"], dtype=float)
    X = df[cols].to_numpy(dtype=float)
    X = np.clip(X, lo, hi)  # clamping (a NaN stays NaN and is reported by prepare_matrix)
    if description.get("scaled"):
        X = (X - (lo + hi) / 2.0) / ((hi - lo) / 2.0)
    return pd.DataFrame(X, columns=cols, index=df.index)


def radius_estimate_band(n: int, quantile: float, epsilon: float, *, n_candidates: int = 200,
                         beta: float = 0.05) -> tuple[float, float]:
    """Range of norm quantiles that :func:`dpcore.mechanisms.bounds.private_norm_quantile`'s
    estimate hits with probability ≥ 1 − β (public: from n, ε and the grid size only).

    The exponential mechanism picks, with probability ≥ 1 − β, a candidate whose score is within
    ``2 ln(|R| / β) / ε`` of the best (McSherry & Talwar 2007); a score is minus the distance, in
    rows, between the candidate's count and ``q·n``. Divided by n that is a band of quantiles.
    """
    slack = 2.0 * np.log(n_candidates / beta) / (epsilon * max(int(n), 1))
    return float(max(0.0, quantile - slack)), float(min(1.0, quantile + slack))
