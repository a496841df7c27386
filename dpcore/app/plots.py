"""Plotly figure builders for the dashboard: arrays and result objects in, ``go.Figure`` out.

No Streamlit here, so every figure can be built (and tested) from Python. Conventions
(``../shared/spec/streamlit_notes.md`` §5): data points as WebGL (``Scattergl``, float32) and, above
:data:`dpcore.app.ui_state.MAX_SCATTER_POINTS` points, a seeded subsample whose size the title
states ("showing n of N"); bands with ``go.Scatter`` ``fill="toself"`` (fills on WebGL traces do not
render); log axes labelled with full values at decades (:func:`log_axis`).

Layering: a browser draws every WebGL (``Scattergl``) trace of a plot in one canvas *above* the
SVG layer, so SVG centre markers end up under dense WebGL data (issue 13). Released centres and
means are therefore WebGL traces too, added after the data, so they are drawn over it (checked
from a Chromium screenshot in ``tests/e2e/test_visible_centres.py``).

Encodings never depend on selection order or on the run: :func:`algorithm_style` gives each
algorithm (or named output) one colour and marker everywhere, and :data:`KEPT_COLOR` /
:data:`REMOVED_COLOR` colour FriendlyCore's kept / removed points. Method colours come from the
reports' table (:data:`dpcore.reproduce._figures.METHOD_COLORS`, see :data:`DASHBOARD_METHODS`),
so the dashboard and the reproduction reports draw a method in the same colour.
"""

from __future__ import annotations

import hashlib
import html
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from dpcore.app.style import method_color
from dpcore.app.ui_state import MAX_SCATTER_POINTS, subsample_indices
from dpcore.release.registry import variants

__all__ = [
    "KEPT_COLOR",
    "REMOVED_COLOR",
    "Style",
    "add_ball",
    "add_points",
    "algorithm_style",
    "amplification_figure",
    "clip_to_box",
    "log_axis",
    "budget_bar",
    "centers_figure",
    "ecdf_figure",
    "histogram",
    "laplace_pair_figure",
    "points_figure",
    "utility_curve_figure",
]

#: Marker symbols for the released outputs of different algorithms (distinct in greyscale too).
#: Only symbols WebGL (``Scattergl``) draws are used.
SYMBOLS = ("x", "star", "diamond", "cross", "triangle-up", "square", "circle-open", "hexagon")
COLORS = ("#d62728", "#1f6feb", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf")
#: FriendlyCore's kept / removed points: fixed, never swapped between runs.
KEPT_COLOR = "#1f6feb"
REMOVED_COLOR = "#d62728"
DATA_COLOR = "#7f7f7f"
#: Continuous colours (friend counts, individual ε): Viridis without its light yellow end, which
#: all but vanished on white at 1024 px (every point of the privacy sampler is at the top);
#: each stop keeps ≥ 3:1 against white (WCAG's figure for graphics).
CONTINUOUS_SCALE = [[0.0, "#440154"], [0.35, "#31688e"], [0.7, "#1f7f6e"], [1.0, "#b35806"]]
#: Point colours by cluster: Paul Tol's "muted" scheme (colour-blind safe, light enough that the
#: centres' markers, drawn on top with a white outline, stay visible).
CLUSTER_COLORS = ("#88CCEE", "#CC6677", "#DDCC77", "#117733", "#332288", "#AA4499", "#44AA99",
                  "#999933", "#882255", "#661100")


@dataclass(frozen=True)
class Style:
    """Colour and marker symbol of one algorithm or named output."""

    color: str
    symbol: str


#: The dashboard's algorithms (every clustering variant of :mod:`dpcore.release.registry`, whose
#: row names its colour key and marker) and method-specific outputs: (name in the reports,
#: marker). The colour is :data:`dpcore.app.style.METHOD_COLORS`'s entry of that name, the one
#: colour table of dpcore, so a method has the same colour on every page and in every report.
DASHBOARD_METHODS: dict[str, tuple[str, str]] = {
    **{v.label: (v.color_key, v.symbol) for _, v in variants("clustering")},
    "DP-Lloyd centres": ("dplloyd", "x"),
    "FriendlyCore private mean": ("FC_Avg", "x"),
    "true mean (not private)": ("non-private mean", "circle-open"),
    "private per-position averages": ("FC_Clustering", "diamond"),
}
#: Outputs that are not one method's (generic released centres / means, FriendlyCore's tuple
#: core): fixed encodings of the dashboard.
_OUTPUT_STYLES: dict[str, Style] = {
    "DP centres": Style("#d62728", "x"),
    "private mean": Style("#d62728", "x"),
    "final centres": Style("#d62728", "x"),
    "tuple centres kept (tuple core)": Style(KEPT_COLOR, "circle"),
    "tuple centres removed": Style(REMOVED_COLOR, "circle"),
}
#: One fixed style per algorithm / output the dashboard draws; every page reads it from here.
STYLES: dict[str, Style] = {
    **{name: Style(method_color(key), symbol)
       for name, (key, symbol) in DASHBOARD_METHODS.items()},
    **_OUTPUT_STYLES,
}


def algorithm_style(name: str) -> Style:
    """The colour and marker of ``name``: fixed for known names; otherwise the reports' colour
    of that name (:func:`dpcore.app.style.method_color`: its table entry, or a stable
    hash of the name into the shared palette) and a marker derived from the name, so it is the
    same in every run, on every page and in the reports."""
    if name in STYLES:
        return STYLES[name]
    h = int(hashlib.sha256(name.encode()).hexdigest(), 16)
    return Style(method_color(name), SYMBOLS[(h // len(COLORS)) % len(SYMBOLS)])


def clip_to_box(C: np.ndarray, box: Sequence[tuple[float, float]] | None) -> np.ndarray:
    """Clamp each coordinate of the points ``C`` to the declared box (post-processing: a DP
    output moved into the public box stays DP); ``None`` leaves ``C`` as is."""
    C = np.atleast_2d(np.asarray(C, dtype=float))
    if box is None:
        return C
    lo = np.array([b[0] for b in box], dtype=float)
    hi = np.array([b[1] for b in box], dtype=float)
    if lo.size != C.shape[1]:
        raise ValueError(f"the box has {lo.size} dimension(s), the points {C.shape[1]}")
    return np.clip(C, lo, hi)


def _log_ticks(lo: float, hi: float) -> list[float]:
    """Tick values for a log axis over [lo, hi]: every decade, plus 2 and 5 (or every
    integer multiple) when the range spans few decades, so ticks are never only minor digits."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    span = b - a
    mults = (1,) if span > 4 else (1, 2, 5) if span > 1 else (1, 2, 3, 4, 5, 6, 7, 8, 9)
    ticks = [m * 10.0**e for e in range(a, b + 1) for m in mults]
    inside = [t for t in ticks if lo / 1.0001 <= t <= hi * 1.0001]
    return inside if len(inside) >= 2 else ticks


def log_axis(fig: go.Figure, axis: str, values: Sequence[float]) -> go.Figure:
    """Make ``axis`` ("x" or "y") logarithmic with explicit tick labels (full numbers such as
    0.2, 0.5, 1, 2, never a bare "2 3 4" without its decade)."""
    v = np.asarray([x for x in np.ravel(values) if np.isfinite(x) and x > 0], dtype=float)
    upd: dict = {"type": "log"}
    if v.size:
        ticks = _log_ticks(float(v.min()), float(v.max()))
        upd |= {"tickvals": ticks, "ticktext": [f"{t:g}" for t in ticks]}
    (fig.update_xaxes if axis == "x" else fig.update_yaxes)(**upd)
    return fig


def _plain(text: str) -> str:
    """A user string (e.g. a column name) as plain text in a plotly title: plotly renders a
    subset of HTML there, including links (issue 14, finding 5)."""
    return html.escape(str(text), quote=False)


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
    labels: np.ndarray | None = None,
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
    labels : (n,) int array, optional
        Cluster of each point: the points are coloured by it (colour-blind-safe palette
        :data:`CLUSTER_COLORS`), in one trace (the legend lists the algorithms, not clusters).
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
        fixed = {"kept": KEPT_COLOR, "removed": REMOVED_COLOR}
        # sorted, not order of appearance: the legend and colours do not change between runs
        for c in sorted(pd.unique(cats), key=str):
            m = cats == c
            label = str(names.get(c, c))
            color = fixed.get(str(c)) or algorithm_style(label).color
            fig.add_trace(go.Scattergl(
                x=_f32(Ps[m, 0]), y=_f32(Ps[m, 1]), mode="markers", name=label,
                marker={"size": 5, "opacity": opacity, "color": color},
            ))
    else:
        marker: dict = {"size": 5, "opacity": opacity, "color": DATA_COLOR}
        if labels is not None:
            # numbers on a stepwise colour scale, not one colour string per point: plotly
            # validates each string (1.8 s for 33k points; a typed array costs nothing)
            lab = np.asarray(labels, dtype=np.intp)[sel] % len(CLUSTER_COLORS)
            marker.update(color=_f32(lab), colorscale=_discrete_scale(CLUSTER_COLORS),
                          cmin=-0.5, cmax=len(CLUSTER_COLORS) - 0.5, showscale=False)
        if color is not None:
            marker.update(color=_f32(np.asarray(color)[sel]), colorscale=CONTINUOUS_SCALE,
                          showscale=True, colorbar={"title": {"text": color_title or ""}})
        if size is not None:
            s = np.asarray(size, dtype=float)[sel]
            if np.any(s < 0) or not np.all(np.isfinite(s)):
                raise ValueError("marker sizes must be finite and non-negative")
            smax = float(s.max()) if s.size else 1.0
            # legible when sized (issue 27): the privacy sampler's weights span decades, so
            # most markers sit at sizemin; 4 px, nearly opaque, with a thin dark outline
            # that separates overlapping markers and pale colours from the background
            marker.update(size=_f32(s), sizemode="area", sizemin=4.0,
                          sizeref=2.0 * max(smax, 1e-12) / size_max**2,
                          opacity=max(opacity, 0.85),
                          line={"width": 0.5, "color": "rgba(30, 30, 30, 0.6)"})
        fig.add_trace(go.Scattergl(x=_f32(Ps[:, 0]), y=_f32(Ps[:, 1]), mode="markers",
                                   name=name, marker=marker))
    if equal_axes:
        _equal_aspect(fig)
    fig.update_layout(
        title={"text": _title(title, Ps.shape[0], n, note)},
        xaxis_title=_plain(axis_titles[0]), yaxis_title=_plain(axis_titles[1]),
        legend={"orientation": "h", "y": -0.15}, margin={"t": 70, "l": 10, "r": 10, "b": 10},
        meta={"n_total": int(n), "n_shown": int(Ps.shape[0])},
    )
    return fig


def _discrete_scale(colors: Sequence[str]) -> list[list]:
    """A plotly colour scale with one flat step per colour (value i ↦ colors[i] on
    [cmin, cmax] = [−½, len − ½])."""
    k = len(colors)
    scale: list[list] = []
    for i, c in enumerate(colors):
        scale += [[i / k, c], [(i + 1) / k, c]]
    return scale


def _equal_aspect(fig: go.Figure) -> None:
    # one unit on x is one unit on y, so a circle is drawn as a circle
    fig.update_yaxes(scaleanchor="x", scaleratio=1)


def add_points(
    fig: go.Figure, C: np.ndarray, *, name: str, index: int | None = None, size: float = 15.0,
    hover: Sequence[str] | None = None, style: Style | None = None,
) -> go.Figure:
    """Overlay released points (centres, means) as large markers drawn over the data.

    The style comes from :func:`algorithm_style` (``name``) unless ``style`` is given; ``index``
    is accepted for backward compatibility and ignored (order must not change encodings). The
    trace is WebGL like the data, and added after it, so it is drawn on top (module doc).
    """
    del index
    C = np.atleast_2d(np.asarray(C, dtype=float))
    st_ = style or algorithm_style(name)
    fig.add_trace(go.Scattergl(
        x=C[:, 0], y=C[:, 1], mode="markers", name=name,
        marker={"symbol": st_.symbol, "size": size, "color": st_.color,
                "line": {"width": 2, "color": "white" if "open" not in st_.symbol
                         else st_.color}},
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
    _equal_aspect(fig)
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
    box: Sequence[tuple[float, float]] | None = None,
    labels: np.ndarray | None = None,
) -> go.Figure:
    """Data (faint, may be ``None`` in release mode) with each algorithm's centres on top.

    ``labels``: each point's cluster (explore mode), drawn as its colour.

    ``box``: the declared bounds of the two drawn coordinates; centres are clamped into it
    (:func:`clip_to_box`), so no centre is drawn outside the declared domain.
    """
    if P is None:
        fig = go.Figure()
        fig.update_layout(title={"text": title + (f"<br><sup>{note}</sup>" if note else "")},
                          xaxis_title=_plain(axis_titles[0]), yaxis_title=_plain(axis_titles[1]),
                          legend={"orientation": "h", "y": -0.15})
        _equal_aspect(fig)
    else:
        fig = points_figure(P, title=title, axis_titles=axis_titles, note=note, seed=seed,
                            opacity=0.25 if labels is None else 0.35, labels=labels)
    if ball is not None:
        add_ball(fig, ball[0], ball[1])
    for name, C in centers.items():
        if C is not None and np.size(C):
            add_points(fig, clip_to_box(C, box), name=name)
    return fig


def histogram(values: np.ndarray, *, title: str, x_title: str, nbins: int = 50,
              log_y: bool = False) -> go.Figure:
    """Histogram of a 1-D array (e.g. importance weights)."""
    v = _f32(np.ravel(values))
    fig = go.Figure(go.Histogram(x=v, nbinsx=nbins, marker={"color": COLORS[1]}))
    fig.update_layout(title={"text": title}, xaxis_title=x_title, yaxis_title="count",
                      yaxis={"type": "log", "dtick": 1} if log_y else None, bargap=0.02,
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
    log_y: bool | None = None,
    reference: float | None = None,
    reference_label: str = "non-private k-means",
) -> go.Figure:
    """Privacy–utility curves: median line with an interquartile band per algorithm.

    Parameters
    ----------
    summary : DataFrame
        Columns ``algorithm, epsilon, median, q25, q75`` (see :func:`dpcore.app.sweeps.summarize`).
    target : float, optional
        A horizontal line at the error the user asked about.
    log_y : bool, optional
        Log error axis; None decides from the data (values spanning more than a decade).
    reference : float, optional
        The non-private reference error, drawn as a horizontal line.
    """
    fig = go.Figure()
    for alg, g in summary.groupby("algorithm", sort=False):
        g = g.sort_values("epsilon")
        e = g["epsilon"].to_numpy(float)
        color = algorithm_style(str(alg)).color
        rgb = tuple(int(color[j:j + 2], 16) for j in (1, 3, 5))
        fig.add_trace(go.Scatter(
            x=np.r_[e, e[::-1]], y=np.r_[g["q75"].to_numpy(float), g["q25"].to_numpy(float)[::-1]],
            fill="toself", fillcolor=f"rgba({rgb[0]},{rgb[1]},{rgb[2]},0.18)",
            line={"color": "rgba(0,0,0,0)"}, hoverinfo="skip", showlegend=False,
            name=f"{alg} quartiles",
        ))
        fig.add_trace(go.Scatter(x=e, y=g["median"].to_numpy(float), mode="lines+markers",
                                 name=str(alg), line={"color": color},
                                 marker={"symbol": algorithm_style(str(alg)).symbol, "size": 9}))
    ys = np.r_[summary["q25"].to_numpy(float), summary["q75"].to_numpy(float)]
    ys = np.r_[ys, [v for v in (target, reference) if v is not None]]
    pos = ys[np.isfinite(ys) & (ys > 0)]
    if log_y is None:
        log_y = pos.size > 1 and pos.max() / pos.min() > 10
    if target is not None:
        fig.add_hline(y=target, line_dash="dash", line_color="#444",
                      annotation_text=f"target {target:g}", annotation_position="top left")
    if reference is not None and np.isfinite(reference):
        fig.add_hline(y=reference, line_dash="dot", line_color="#111",
                      annotation_text=f"{reference_label} {reference:.3g}",
                      annotation_position="bottom right")
    fig.update_layout(xaxis_title="ε (log scale)", yaxis_title=metric_title + (
                          " (log scale)" if log_y else ""),
                      legend={"orientation": "h", "y": -0.2},
                      title={"text": "median and interquartile band over repetitions"},
                      margin={"t": 50, "l": 10, "r": 10, "b": 10})
    log_axis(fig, "x", summary["epsilon"].to_numpy(float))
    if log_y:
        log_axis(fig, "y", pos)
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


# ------------------------------------------------------------------------------------------------
# Teaching figures (the guided tour)
# ------------------------------------------------------------------------------------------------


def _teaching_layout(fig: go.Figure, title: str, x_title: str, y_title: str) -> go.Figure:
    fig.update_layout(title={"text": title}, xaxis_title=x_title, yaxis_title=y_title,
                      legend={"orientation": "h", "y": -0.25}, height=380,
                      margin={"t": 50, "l": 10, "r": 10, "b": 10})
    return fig


def laplace_pair_figure(epsilon: float, *, count: float = 10.0) -> go.Figure:
    """Densities of a Laplace-noised count on two neighbouring data sets (count and count + 1):
    at every output their ratio is at most e^ε, which is what ε-DP means."""
    b = 1.0 / float(epsilon)
    x = np.linspace(count - 8 * max(b, 0.5), count + 1 + 8 * max(b, 0.5), 400)
    fig = go.Figure()
    for c, name, color in ((count, f"data set D (true count {count:g})", COLORS[1]),
                           (count + 1, f"neighbour D′ (true count {count + 1:g})", COLORS[0])):
        fig.add_trace(go.Scatter(x=x, y=np.exp(-np.abs(x - c) / b) / (2 * b), mode="lines",
                                 name=name, line={"color": color, "width": 3}))
    return _teaching_layout(fig, f"ε = {epsilon:g}: the two curves differ by at most a factor "
                                 f"e^ε = {math.exp(epsilon):.3g} everywhere",
                            "released (noisy) count", "probability density")


def amplification_figure(epsilon: float, rate: float) -> go.Figure:
    """Privacy amplification by Poisson sampling: a mechanism that is ε-DP on the sample is
    ln(1 + q (e^ε − 1))-DP for the full data when each row is kept with probability q."""
    q = np.linspace(0.001, 1.0, 300)
    amp = np.log1p(q * math.expm1(epsilon))
    fig = go.Figure(go.Scatter(x=q, y=amp, mode="lines", name="ε for the full data",
                               line={"color": COLORS[1], "width": 3}))
    here = math.log1p(rate * math.expm1(epsilon))
    fig.add_trace(go.Scatter(x=[rate], y=[here], mode="markers", name=f"q = {rate:g}",
                             marker={"size": 14, "color": COLORS[0], "symbol": "x"}))
    fig.add_hline(y=epsilon, line_dash="dot", line_color="#444",
                  annotation_text=f"ε on the sample = {epsilon:g}")
    return _teaching_layout(fig, f"keeping each row with probability {rate:g} turns ε = "
                                 f"{epsilon:g} into ε ≈ {here:.3g}",
                            "sampling probability q", "ε for the full data")


def game_figure(correct: Sequence[bool], epsilon: float, *, optimal: float | None = None
                ) -> go.Figure:
    """The privacy game: running share of correct guesses after each round, against the bound
    e^ε/(1+e^ε) and its 95 % band at that many rounds (:mod:`dpcore.app.game`)."""
    from dpcore.app.game import bound, bound_band, running_rate

    rounds = np.arange(1, len(correct) + 1)
    b = bound(epsilon)
    t = np.arange(1, max(len(correct), 10) + 1)
    lo, hi = np.array([bound_band(epsilon, int(r)) for r in t]).T
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=np.r_[t, t[::-1]], y=np.r_[hi, lo[::-1]], fill="toself",
                             fillcolor="rgba(0,114,178,0.15)", line={"color": "rgba(0,0,0,0)"},
                             name="95 % band around the bound", hoverinfo="skip"))
    fig.add_trace(go.Scatter(x=t, y=np.full(t.size, b), mode="lines", name=f"bound {b:.3f}",
                             line={"color": "#0072B2", "width": 3}))
    if optimal is not None:
        fig.add_trace(go.Scatter(x=t, y=np.full(t.size, optimal), mode="lines",
                                 name=f"best possible guesser {optimal:.3f}",
                                 line={"color": "#009E73", "dash": "dash", "width": 2}))
    fig.add_trace(go.Scatter(x=rounds, y=running_rate(np.asarray(correct, dtype=float)),
                             mode="lines+markers", name="your guess rate",
                             line={"color": "#D55E00", "width": 3}, marker={"size": 6}))
    fig.add_hline(y=0.5, line_dash="dot", line_color="#444", annotation_text="coin flip 0.5")
    return _teaching_layout(fig, f"Guess rate after each round (ε = {epsilon:g})", "round",
                            "share of correct guesses").update_yaxes(range=[0.0, 1.0])
