"""Plotly figure builders for the dashboard: arrays and result objects in, ``go.Figure`` out.

No Streamlit here, so every figure can be built (and tested) from Python. Conventions
(``../shared/spec/streamlit_notes.md`` §5): data points as WebGL (``Scattergl``, float32) and, above
:data:`dpcore.ui_state.MAX_SCATTER_POINTS` points, a seeded subsample whose size the title states
("showing n of N"); released centres and means as SVG markers on top; bands with ``go.Scatter``
``fill="toself"`` (fills on WebGL traces do not render); a log ε axis for privacy–utility curves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.ui_state import MAX_SCATTER_POINTS, subsample_indices

__all__ = [
    "add_ball",
    "add_points",
    "budget_bar",
    "centers_figure",
    "ecdf_figure",
    "histogram",
    "points_figure",
    "utility_curve_figure",
]

#: Marker symbols for the released outputs of different algorithms (distinct in greyscale too).
SYMBOLS = ("x", "star", "diamond", "cross", "triangle-up", "square", "circle-open", "hexagon")
COLORS = ("#d62728", "#1f6feb", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")


def _f32(a) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(a, dtype=np.float32))


def _title(title: str, n_shown: int, n_total: int, note: str | None) -> str:
    parts = [title]
    if n_shown < n_total:
        parts.append(f"showing {n_shown:,} of {n_total:,} points (seeded random subsample)")
    if note:
        parts.append(note)
    if len(parts) == 1:
        return title
    return f"{parts[0]}<br><sup>{' · '.join(parts[1:])}</sup>"


def points_figure(
    P: np.ndarray,
    *,
    title: str = "",
    axis_titles: Sequence[str] = ("x", "y"),
    color: np.ndarray | None = None,
    color_title: str | None = None,
    size: np.ndarray | None = None,
    size_max: float = 14.0,
    categories: np.ndarray | None = None,
    category_names: Mapping | None = None,
    note: str | None = None,
    max_points: int = MAX_SCATTER_POINTS,
    seed: int = 0,
    name: str = "data",
    opacity: float = 0.6,
    equal_axes: bool = True,
) -> go.Figure:
    """Scatter of 2-D points (first two columns of ``P``), optionally coloured and sized.

    Parameters
    ----------
    P : (n, >=2) array
        Points already projected to the plane.
    color : (n,) array, optional
        Continuous colour (e.g. individual privacy loss, friend count), with a colour bar.
    size : (n,) array of non-negative values, optional
        Marker area ∝ value (e.g. importance weight, the paper's Figure 1).
    categories : (n,) array, optional
        Discrete groups (e.g. kept / removed); one trace per group, named via ``category_names``.
    note : str, optional
        Subtitle (e.g. "explore mode: not a private release").
    max_points, seed
        Above ``max_points`` rows a seeded subsample is drawn and the subtitle says so.
    """
    P = np.asarray(P, dtype=float)
    if P.ndim != 2 or P.shape[1] < 2:
        raise ValueError(f"points must have shape (n, 2), got {P.shape}")
    n = P.shape[0]
    idx = subsample_indices(n, max_points, rng=seed)
    sel = slice(None) if idx is None else idx
    Ps = P[sel]
    fig = go.Figure()
    if categories is not None:
        cats = np.asarray(categories)[sel]
        names = dict(category_names or {})
        for i, c in enumerate(pd.unique(cats)):
            m = cats == c
            fig.add_trace(go.Scattergl(
                x=_f32(Ps[m, 0]), y=_f32(Ps[m, 1]), mode="markers", name=str(names.get(c, c)),
                marker={"size": 5, "opacity": opacity, "color": COLORS[(i + 1) % len(COLORS)]},
            ))
    else:
        marker: dict = {"size": 5, "opacity": opacity, "color": "#7f7f7f"}
        if color is not None:
            marker.update(color=_f32(np.asarray(color)[sel]), colorscale="Viridis",
                          showscale=True, colorbar={"title": {"text": color_title or ""}})
        if size is not None:
            s = np.asarray(size, dtype=float)[sel]
            if np.any(s < 0) or not np.all(np.isfinite(s)):
                raise ValueError("marker sizes must be finite and non-negative")
            smax = float(s.max()) if s.size else 1.0
            marker.update(size=_f32(s), sizemode="area", sizemin=1.5,
                          sizeref=2.0 * max(smax, 1e-12) / size_max**2)
        fig.add_trace(go.Scattergl(x=_f32(Ps[:, 0]), y=_f32(Ps[:, 1]), mode="markers",
                                   name=name, marker=marker))
    if equal_axes:
        fig.update_yaxes(scaleanchor="x", scaleratio=1)
    fig.update_layout(
        title={"text": _title(title, Ps.shape[0], n, note)},
        xaxis_title=axis_titles[0], yaxis_title=axis_titles[1],
        legend={"orientation": "h", "y": -0.15}, margin={"t": 70, "l": 10, "r": 10, "b": 10},
        meta={"n_total": int(n), "n_shown": int(Ps.shape[0])},
    )
    return fig


def add_points(
    fig: go.Figure, C: np.ndarray, *, name: str, index: int = 0, size: float = 15.0,
    hover: Sequence[str] | None = None,
) -> go.Figure:
    """Overlay released points (centres, means) as large SVG markers; ``index`` picks the style."""
    C = np.atleast_2d(np.asarray(C, dtype=float))
    fig.add_trace(go.Scatter(
        x=C[:, 0], y=C[:, 1], mode="markers", name=name,
        marker={"symbol": SYMBOLS[index % len(SYMBOLS)], "size": size,
                "color": COLORS[index % len(COLORS)], "line": {"width": 2, "color": "white"}},
        hovertext=list(hover) if hover is not None else None,
    ))
    return fig


def add_ball(
    fig: go.Figure, center: Sequence[float], radius: float, *, name: str = "declared radius"
) -> go.Figure:
    """Outline of the declared ball (a circle in the plane of the first two coordinates)."""
    t = np.linspace(0.0, 2.0 * np.pi, 121)
    fig.add_trace(go.Scatter(
        x=center[0] + radius * np.cos(t), y=center[1] + radius * np.sin(t), mode="lines",
        name=name, line={"color": "#444", "dash": "dot", "width": 1}, hoverinfo="skip",
    ))
    return fig


def centers_figure(
    P: np.ndarray | None,
    centers: Mapping[str, np.ndarray],
    *,
    title: str = "",
    axis_titles: Sequence[str] = ("x", "y"),
    note: str | None = None,
    ball: tuple[Sequence[float], float] | None = None,
    seed: int = 0,
) -> go.Figure:
    """Data (faint, may be ``None`` in release mode) with each algorithm's centres on top."""
    if P is None:
        fig = go.Figure()
        fig.update_layout(title={"text": title + (f"<br><sup>{note}</sup>" if note else "")},
                          xaxis_title=axis_titles[0], yaxis_title=axis_titles[1],
                          legend={"orientation": "h", "y": -0.15})
    else:
        fig = points_figure(P, title=title, axis_titles=axis_titles, note=note, seed=seed,
                            opacity=0.25)
    if ball is not None:
        add_ball(fig, ball[0], ball[1])
    for i, (name, C) in enumerate(centers.items()):
        if C is not None and np.size(C):
            add_points(fig, C, name=name, index=i)
    return fig


def histogram(values: np.ndarray, *, title: str, x_title: str, nbins: int = 50,
              log_y: bool = False) -> go.Figure:
    """Histogram of a 1-D array (e.g. importance weights)."""
    v = _f32(np.ravel(values))
    fig = go.Figure(go.Histogram(x=v, nbinsx=nbins, marker={"color": COLORS[1]}))
    fig.update_layout(title={"text": title}, xaxis_title=x_title, yaxis_title="count",
                      yaxis_type="log" if log_y else None, bargap=0.02,
                      margin={"t": 50, "l": 10, "r": 10, "b": 10})
    return fig


def budget_bar(spent: float, budget: float, *, label: str = "ε") -> go.Figure:
    """One horizontal bar: spent vs remaining of a budget component."""
    spent = float(min(spent, budget))
    fig = go.Figure([
        go.Bar(x=[spent], y=[label], orientation="h", name="spent", marker={"color": COLORS[0]}),
        go.Bar(x=[max(budget - spent, 0.0)], y=[label], orientation="h", name="remaining",
               marker={"color": "#cfe3ff"}),
    ])
    fig.update_layout(barmode="stack", height=160, xaxis_title=f"{label} (budget {budget:g})",
                      margin={"t": 10, "l": 10, "r": 10, "b": 10},
                      legend={"orientation": "h", "y": -0.6})
    return fig


def utility_curve_figure(
    summary: pd.DataFrame,
    *,
    metric_title: str,
    target: float | None = None,
    log_y: bool = False,
) -> go.Figure:
    """Privacy–utility curves: median line with an interquartile band per algorithm.

    Parameters
    ----------
    summary : DataFrame
        Columns ``algorithm, epsilon, median, q25, q75`` (see :func:`dpcore.sweeps.summarize`).
    target : float, optional
        A horizontal line at the error the user asked about.
    """
    fig = go.Figure()
    for i, (alg, g) in enumerate(summary.groupby("algorithm", sort=False)):
        g = g.sort_values("epsilon")
        e = g["epsilon"].to_numpy(float)
        color = COLORS[i % len(COLORS)]
        rgb = tuple(int(color[j:j + 2], 16) for j in (1, 3, 5))
        fig.add_trace(go.Scatter(
            x=np.r_[e, e[::-1]], y=np.r_[g["q75"].to_numpy(float), g["q25"].to_numpy(float)[::-1]],
            fill="toself", fillcolor=f"rgba({rgb[0]},{rgb[1]},{rgb[2]},0.18)",
            line={"color": "rgba(0,0,0,0)"}, hoverinfo="skip", showlegend=False,
            name=f"{alg} quartiles",
        ))
        fig.add_trace(go.Scatter(x=e, y=g["median"].to_numpy(float), mode="lines+markers",
                                 name=str(alg), line={"color": color}))
    if target is not None:
        fig.add_hline(y=target, line_dash="dash", line_color="#444",
                      annotation_text=f"target {target:g}")
    fig.update_layout(xaxis_type="log", xaxis_title="ε (log scale)", yaxis_title=metric_title,
                      yaxis_type="log" if log_y else None,
                      legend={"orientation": "h", "y": -0.2},
                      title={"text": "median and interquartile band over repetitions"},
                      margin={"t": 50, "l": 10, "r": 10, "b": 10})
    return fig


def ecdf_figure(
    samples: np.ndarray,
    *,
    chosen: float,
    chosen_label: str,
    global_bound: float | None = None,
    x_title: str = "sampled sensitivity G",
) -> go.Figure:
    """ECDF of sampled sensitivities with the chosen order statistic (paper 004, Figure 1)."""
    s = np.sort(np.ravel(np.asarray(samples, dtype=float)))
    m = s.size
    fig = go.Figure(go.Scatter(x=s, y=np.arange(1, m + 1) / m, mode="lines",
                               line={"shape": "hv", "color": COLORS[1]},
                               name=f"ECDF of {m} samples"))
    fig.add_vline(x=chosen, line_color=COLORS[0], annotation_text=chosen_label)
    if global_bound is not None:
        fig.add_vline(x=global_bound, line_color="#444", line_dash="dash",
                      annotation_text=f"global sensitivity {global_bound:.4g}",
                      annotation_position="bottom right")
    fig.update_layout(xaxis_title=x_title, yaxis_title="fraction ≤ x", yaxis_range=[0, 1.02],
                      margin={"t": 30, "l": 10, "r": 10, "b": 10}, showlegend=False)
    return fig
