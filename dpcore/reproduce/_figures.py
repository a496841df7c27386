"""Figures of the reproduction reports: one description, two renderings.

A figure is a list of :class:`Panel` s, each a list of :class:`Series` (a line, optionally with a
band such as the 0.1/0.9 quantiles, or a dashed reference line). :func:`save_figure` renders it
twice:

* a static PNG (matplotlib, Agg backend) that the markdown report embeds, so it reads on any code
  host;
* an interactive HTML file (plotly) that loads ``plotly.min.js`` from the same folder
  (``include_plotlyjs="directory"``): one shared copy of the library from the installed plotly
  package, no CDN, so the figures work offline.

Every panel has its own legend; every method has one fixed colour across panels and reports
(:data:`METHOD_COLORS`, looked up by :func:`method_color`). This table is the one source of
method colours in dpcore: the dashboard (:data:`dpcore.app.plots.STYLES`) takes its algorithms'
colours from it, so add a new method here (one line) and both use it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from dpcore.app.style import _PALETTE, METHOD_COLORS, method_color

__all__ = ["METHOD_COLORS", "Panel", "Series", "markdown_figure", "method_color", "save_figure"]

@dataclass
class Series:
    """One line of a panel; ``lo``/``hi`` draw a band; ``reference=True`` a dashed line."""

    name: str
    x: Sequence[float]
    y: Sequence[float]
    lo: Sequence[float] | None = None
    hi: Sequence[float] | None = None
    reference: bool = False
    color: str | None = None
    markers_only: bool = False
    hollow: bool = False  # large open markers: points drawn on top of them stay visible

    def colour(self) -> str:
        return self.color or method_color(self.name)


@dataclass
class Panel:
    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    log_x: bool = False
    log_y: bool = False
    ylim: tuple[float, float] | None = None


def _finite(v) -> np.ndarray:
    return np.asarray(v, dtype=float)


def distinct_colours(panels: list[Panel]) -> list[Panel]:
    """The panels with every series name in one colour and no two names sharing one: names not
    in :data:`METHOD_COLORS` hash into a 12-colour palette, so 'sampled d=8' and 'sampled d=16'
    can collide; a later name that collides gets the first palette colour still free (the same
    for that name in every panel)."""
    from dataclasses import replace

    chosen: dict[str, str] = {}
    used: set[str] = set()
    for p in panels:
        for s in p.series:
            if s.name in chosen:
                continue
            c = s.colour()
            if c in used:
                c = next((q for q in (*_PALETTE, *METHOD_COLORS.values()) if q not in used), c)
            chosen[s.name] = c
            used.add(c)
    return [replace(p, series=[replace(s, color=chosen[s.name]) for s in p.series])
            for p in panels]


def _log_ticks(axis, values: list[np.ndarray]) -> None:
    """Readable log-axis labels: plain numbers at 1, 2, 5 × 10^k over narrow ranges (under two
    decades), 10^k otherwise; never matplotlib's minor labels, which overlap when an axis spans
    less than a decade and a half."""
    from matplotlib.ticker import (
        FuncFormatter,
        LogFormatterSciNotation,
        LogLocator,
        NullFormatter,
    )

    v = np.concatenate([x[np.isfinite(x) & (x > 0)] for x in values]) if values else np.array([])
    narrow = v.size > 0 and math.log10(v.max() / v.min()) < 2
    axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0) if narrow else (1.0,),
                                      numticks=8))
    axis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:g}") if narrow
                             else LogFormatterSciNotation())
    axis.set_minor_formatter(NullFormatter())


def _png(path: Path, title: str, panels: list[Panel], ncols: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.6 * ncols, 3.6 * nrows), squeeze=False)
    for ax, p in zip(axes.flat, panels, strict=False):
        for s in p.series:
            x, y, c = _finite(s.x), _finite(s.y), s.colour()
            if s.lo is not None and s.hi is not None:
                ax.fill_between(x, _finite(s.lo), _finite(s.hi), color=c, alpha=0.18, lw=0)
            style = dict(color=c, label=s.name, lw=1.6)
            if s.hollow:
                ax.plot(x, y, ls="none", marker="o", ms=11, mfc="none", mew=1.6, **style)
            elif s.reference:
                ax.plot(x, y, ls="--", **style)
            elif s.markers_only:
                ax.plot(x, y, ls="none", marker="o", ms=5, **style)
            else:
                ax.plot(x, y, marker="o", ms=3, **style)
        if not (len(panels) == 1 and p.title == title):  # one panel: the figure title says it
            ax.set_title(p.title, fontsize=9)
        ax.set_xlabel(p.xlabel, fontsize=8)
        ax.set_ylabel(p.ylabel, fontsize=8)
        if p.log_x:
            ax.set_xscale("log")
            _log_ticks(ax.xaxis, [_finite(s.x) for s in p.series])
        if p.log_y:
            ax.set_yscale("log")
            _log_ticks(ax.yaxis, [_finite(s.y) for s in p.series])
        if p.ylim is not None:
            ax.set_ylim(*p.ylim)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=6.5, loc="best", framealpha=0.8)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _html(path: Path, title: str, panels: list[Panel], ncols: int) -> None:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    nrows = math.ceil(len(panels) / ncols)
    fig = make_subplots(rows=nrows, cols=ncols,
                        subplot_titles=[("" if len(panels) == 1 and p.title == title else p.title)
                                        for p in panels],
                        horizontal_spacing=0.08, vertical_spacing=0.14)
    for i, p in enumerate(panels):
        row, col = i // ncols + 1, i % ncols + 1
        legend = "legend" if i == 0 else f"legend{i + 1}"
        for s in p.series:
            x, y, c = _finite(s.x), _finite(s.y), s.colour()
            if s.lo is not None and s.hi is not None:
                fig.add_trace(go.Scatter(
                    x=np.concatenate([x, x[::-1]]),
                    y=np.concatenate([_finite(s.hi), _finite(s.lo)[::-1]]),
                    fill="toself", fillcolor=c, opacity=0.18, line=dict(width=0),
                    hoverinfo="skip", showlegend=False, legend=legend), row=row, col=col)
            mode = "markers" if s.markers_only or s.hollow else "lines" if s.reference \
                else "lines+markers"
            marker = dict(color=c, symbol="circle-open", size=14, line=dict(width=2)) \
                if s.hollow else dict(color=c)
            fig.add_trace(go.Scatter(
                x=x, y=y, name=s.name, mode=mode, legend=legend,
                line=dict(color=c, dash="dash" if s.reference else "solid"),
                marker=marker), row=row, col=col)
        xa = "xaxis" if i == 0 else f"xaxis{i + 1}"
        ya = "yaxis" if i == 0 else f"yaxis{i + 1}"
        fig.layout[xa].update(title_text=p.xlabel, type="log" if p.log_x else "linear")
        fig.layout[ya].update(title_text=p.ylabel, type="log" if p.log_y else "linear")
        if p.ylim is not None:
            lo, hi = p.ylim
            fig.layout[ya].update(range=[math.log10(lo), math.log10(hi)] if p.log_y else [lo, hi])
        xd, yd = fig.layout[xa].domain, fig.layout[ya].domain
        fig.layout[legend] = dict(x=xd[1], y=yd[1], xanchor="right", yanchor="top",
                                  bgcolor="rgba(255,255,255,0.7)", font=dict(size=9))
    fig.update_layout(title=title, template="plotly_white", height=380 * nrows,
                      width=520 * ncols, margin=dict(t=80))
    fig.write_html(path, include_plotlyjs="directory", full_html=True)


def save_figure(folder: Path, name: str, title: str, panels: list[Panel], *,
                ncols: int | None = None) -> str:
    """Write ``folder/name.png`` and ``folder/name.html``; return the markdown that shows the
    PNG and links the interactive version (paths relative to the report, ``figures/...``)."""
    folder.mkdir(parents=True, exist_ok=True)
    ncols = ncols or min(3, len(panels))
    panels = distinct_colours(panels)
    _png(folder / f"{name}.png", title, panels, ncols)
    _html(folder / f"{name}.html", title, panels, ncols)
    return markdown_figure(folder.name, name, title)


def markdown_figure(folder: str, name: str, caption: str) -> str:
    """``![caption](folder/name.png)`` plus a link to the interactive HTML."""
    return (f"![{caption}]({folder}/{name}.png)\n\n"
            f"Interactive version (works offline): [{name}.html]({folder}/{name}.html)")
