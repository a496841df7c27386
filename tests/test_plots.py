"""Pure tests of the dashboard's figure builders (dpcore.app.plots), UI helpers
(dpcore.app.ui_state) and sweeps (dpcore.app.sweeps): no Streamlit involved."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import pytest

from dpcore.app import plots
from dpcore.app.sweeps import (
    TargetAnswer,
    clustering_algorithms,
    epsilon_for_target,
    fit_algorithm,
    log_grid,
    summarize,
    unavailable_algorithms,
    utility_sweep,
)
from dpcore.app.ui_state import (
    MAX_SCATTER_POINTS,
    box_geometry,
    explore_seed,
    fingerprint,
    fresh_seed,
    pca_projection,
    subsample_indices,
    synthetic_proxy,
)


def _xy(fig, i=0):
    return np.asarray(fig.data[i].x), np.asarray(fig.data[i].y)


def test_large_scatter_draws_seeded_subsample_and_says_so():
    n = MAX_SCATTER_POINTS + 10_000
    P = np.random.default_rng(1).normal(size=(n, 2))
    fig = plots.points_figure(P, title="t", seed=3)
    x, _ = _xy(fig)
    assert x.size == MAX_SCATTER_POINTS
    assert f"showing {MAX_SCATTER_POINTS:,} of {n:,}" in fig.layout.title.text
    assert fig.layout.meta == {"n_total": n, "n_shown": MAX_SCATTER_POINTS}
    # seeded: the same seed draws the same points, another seed others
    assert np.array_equal(x, _xy(plots.points_figure(P, seed=3))[0])
    assert not np.array_equal(x, _xy(plots.points_figure(P, seed=4))[0])
    # every drawn point is a data point (no jitter), float32 for a small payload
    assert np.isin(x, P[:, 0].astype(np.float32)).all() and x.dtype == np.float32


def test_small_scatter_draws_everything_without_note():
    P = np.arange(20.0).reshape(10, 2)
    fig = plots.points_figure(P, title="small")
    assert fig.layout.title.text == "small"
    np.testing.assert_array_equal(_xy(fig)[0], P[:, 0])


def test_points_figure_size_colour_and_categories():
    P = np.random.default_rng(0).normal(size=(100, 2))
    w = np.linspace(1, 10, 100)
    fig = plots.points_figure(P, size=w, color=w[::-1], color_title="ψ", size_max=12)
    m = fig.data[0].marker
    assert m.sizemode == "area" and m.sizeref == pytest.approx(2 * 10 / 12**2)
    assert m.colorbar.title.text == "ψ"
    with pytest.raises(ValueError, match="non-negative"):
        plots.points_figure(P, size=-w)
    cats = np.where(np.arange(100) < 30, "kept", "removed")
    fig = plots.points_figure(P, categories=cats)
    assert [t.name for t in fig.data] == ["kept", "removed"]
    assert [t.x.size for t in fig.data] == [30, 70]
    with pytest.raises(ValueError, match="shape"):
        plots.points_figure(np.zeros(5))


def test_centers_figure_overlays_each_algorithm_and_ball():
    P = np.zeros((5, 2))
    fig = plots.centers_figure(P, {"a": np.ones((3, 2)), "b": -np.ones((3, 2)), "c": None},
                               ball=([0, 0], 2.0))
    names = [t.name for t in fig.data]
    assert names == ["data", "declared radius", "a", "b"]
    ring = fig.data[1]
    assert np.allclose(np.hypot(ring.x, ring.y), 2.0)
    assert fig.data[2].marker.symbol != fig.data[3].marker.symbol
    assert plots.centers_figure(None, {"a": np.ones((2, 2))}).data[0].name == "a"


def test_utility_curve_band_is_closed_polygon_on_log_axis():
    summary = pd.DataFrame({"algorithm": ["A"] * 3, "epsilon": [0.1, 1.0, 10.0],
                            "median": [5.0, 2.0, 1.0], "q25": [4.0, 1.5, 0.9],
                            "q75": [6.0, 2.5, 1.1]})
    fig = plots.utility_curve_figure(summary, metric_title="cost", target=2.0)
    band, line = fig.data
    assert band.fill == "toself" and list(band.x) == [0.1, 1.0, 10.0, 10.0, 1.0, 0.1]
    assert list(band.y) == [6.0, 2.5, 1.1, 0.9, 1.5, 4.0]
    assert list(line.y) == [5.0, 2.0, 1.0]
    assert fig.layout.xaxis.type == "log"


def test_ecdf_and_histogram_and_budget_bar():
    g = np.array([3.0, 1.0, 2.0])
    fig = plots.ecdf_figure(g, chosen=3.0, chosen_label="G_(3)", global_bound=5.0)
    assert list(fig.data[0].x) == [1.0, 2.0, 3.0]
    assert list(fig.data[0].y) == pytest.approx([1 / 3, 2 / 3, 1.0])
    assert {s.x0 for s in fig.layout.shapes} == {3.0, 5.0}
    assert plots.histogram(g, title="h", x_title="w").data[0].type == "histogram"
    bar = plots.budget_bar(12.0, 10.0)  # over-spent input is capped at the budget
    assert bar.data[0].x[0] == 10.0 and bar.data[1].x[0] == 0.0


def test_subsample_indices():
    assert subsample_indices(10, 20) is None
    idx = subsample_indices(1000, 100, rng=0)
    assert idx.size == 100 and np.all(np.diff(idx) > 0)
    with pytest.raises(ValueError):
        subsample_indices(10, 0)


def test_explore_seed_and_fresh_seed():
    assert explore_seed(7, 0) == 7
    draws = {explore_seed(7, r) for r in range(1, 200)}
    assert len(draws) == 199 and 7 not in draws
    assert explore_seed(7, 1) == explore_seed(7, 1) != explore_seed(8, 1)
    with pytest.raises(ValueError):
        explore_seed(-1, 0)
    assert fresh_seed() != fresh_seed()  # 63 random bits: a collision has probability 2^-63


def test_fingerprint_sensitive_to_values_and_shape():
    a = np.arange(6.0)
    assert fingerprint(a) == fingerprint(a.copy())
    assert fingerprint(a) != fingerprint(a.reshape(2, 3))
    b = a.copy()
    b[3] += 1e-12
    assert fingerprint(a) != fingerprint(b)


def test_box_geometry_of_lonlat_bounds():
    geo = box_geometry([(-180, 180), (-90, 90)])
    assert geo.center == (0.0, 0.0) and geo.radius == pytest.approx(math.hypot(180, 90))
    with pytest.raises(ValueError):
        box_geometry([(1, 0)])


def test_pca_projection_recovers_dominant_axes():
    rng = np.random.default_rng(0)
    Z = rng.normal(size=(2000, 3)) * [10.0, 3.0, 0.1]
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    proj = pca_projection(Z @ Q.T, ["a", "b", "c"])
    P = proj(Z @ Q.T)
    assert P.shape == (2000, 2)
    assert np.std(P[:, 0]) == pytest.approx(10.0, rel=0.05)
    assert np.std(P[:, 1]) == pytest.approx(3.0, rel=0.05)
    assert proj.axis_titles[0].startswith("PC1")
    two = pca_projection(np.ones((3, 2)), ["x", "y"])
    assert two.axis_titles == ("x", "y") and np.allclose(two(np.eye(2)), np.eye(2))


def test_synthetic_proxy_has_shape_and_stays_in_ball():
    P = synthetic_proxy(5000, 3, 7.0, rng=1)
    assert P.shape == (5000, 3)
    assert np.linalg.norm(P, axis=1).max() <= 7.0 * (1 + 1e-12)
    assert np.array_equal(P, synthetic_proxy(5000, 3, 7.0, rng=1))


def test_epsilon_for_target_interpolates_in_log_epsilon():
    s = pd.DataFrame({"algorithm": ["A"] * 3, "epsilon": [0.1, 1.0, 10.0],
                      "median": [8.0, 4.0, 1.0], "q25": [7.0, 3.0, 0.5],
                      "q75": [9.0, 6.0, 2.0]})
    ans = epsilon_for_target(s, "A", 6.0)
    # halfway from 8 to 4 between ε = 0.1 and 1: the geometric midpoint √0.1
    assert ans.status == "reached" and ans.epsilon == pytest.approx(math.sqrt(0.1))
    assert "ε ≈ 0.316" in ans.sentence() and "median" in ans.sentence()
    assert epsilon_for_target(s, "A", 9.0).status == "at smallest ε"
    assert epsilon_for_target(s, "A", 0.1).status == "not reached"
    q75 = epsilon_for_target(s, "A", 2.0, "q75")
    assert q75.epsilon == pytest.approx(10.0) and "3 runs out of 4" in q75.sentence()
    assert isinstance(q75, TargetAnswer)


def test_log_grid():
    g = log_grid(0.1, 10, 3)
    assert list(g) == [0.1, 1.0, 10.0]
    with pytest.raises(ValueError):
        log_grid(1, 1, 3)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_sweep_and_fits_on_a_mixture():
    from dpcore.data.datasets import gaussian_mixture

    X, _, _ = gaussian_mixture(3000, 2, 3, sigma=0.5, center_radius=5.0, rng=0)
    X /= max(1.0, np.linalg.norm(X, axis=1).max() / 8.0)
    algs = clustering_algorithms()
    assert "DP-Lloyd" in algs and "k-means (non-private)" in algs
    assert all(not a.private for n, a in algs.items() if "non-private" in n)
    out = fit_algorithm(algs["DP-Lloyd"], X, k=3, epsilon=1.0, delta=1e-6, radius=8.0, seed=5)
    assert out.centers.shape == (3, 2) and str(out.guarantee) == "ε = 1 (pure DP)"
    # same seed, same centres: the fit is what run_config re-runs
    again = fit_algorithm(algs["DP-Lloyd"], X, k=3, epsilon=1.0, delta=1e-6, radius=8.0, seed=5)
    np.testing.assert_array_equal(out.centers, again.centers)
    seen = []
    table = utility_sweep(X, [algs["DP-Lloyd"]], [0.05, 50.0], k=3, delta=1e-6, radius=8.0,
                          repetitions=4, seed=1, progress=lambda d, t, r: seen.append((d, t)))
    assert seen[-1] == (8, 8) and len(table) == 8 and table["seed"].nunique() == 8
    summ = summarize(table)
    lo, hi = summ.set_index("epsilon")["median"].loc[[0.05, 50.0]]
    # 1000x less noise at ε = 50 than at ε = 0.05: the cost must drop clearly
    assert hi < 0.5 * lo
    bad = fit_algorithm(algs["DP-Lloyd"], X, k=0, epsilon=1.0, delta=1e-6, radius=8.0, seed=0)
    assert bad.centers is None and "n_clusters" in bad.error
    assert isinstance(unavailable_algorithms(), dict)


# ---- stable encodings, layering, boxes and log axes (issue 13) ---------------------------------


def test_each_algorithm_keeps_its_style_whatever_the_order_and_run():
    from dpcore.app.plots import algorithm_style, centers_figure

    C = np.zeros((2, 2))
    a = centers_figure(None, {"DP-Lloyd": C, "Max-cover k-means": C + 1})
    b = centers_figure(None, {"Max-cover k-means": C + 1, "DP-Lloyd": C})
    style = {t.name: (t.marker.color, t.marker.symbol) for t in a.data}
    assert style == {t.name: (t.marker.color, t.marker.symbol) for t in b.data}
    assert style["DP-Lloyd"] != style["Max-cover k-means"]
    # an unknown name gets a style derived from the name alone (same in every process)
    assert algorithm_style("some new algorithm") == algorithm_style("some new algorithm")


def test_kept_and_removed_colours_never_swap():
    from dpcore.app.plots import KEPT_COLOR, REMOVED_COLOR, points_figure

    P = np.random.default_rng(0).normal(size=(40, 2))
    for first in ("kept", "removed"):
        cats = np.where(np.arange(40) < 20, first, "removed" if first == "kept" else "kept")
        colours = {t.name: t.marker.color for t in points_figure(P, categories=cats).data}
        assert colours == {"kept": KEPT_COLOR, "removed": REMOVED_COLOR}


def test_centres_are_webgl_traces_drawn_after_the_data():
    # browsers draw every WebGL trace above SVG ones: SVG centres would hide under WebGL data
    from dpcore.app.plots import centers_figure

    P = np.random.default_rng(1).normal(size=(500, 2))
    fig = centers_figure(P, {"DP-Lloyd": np.zeros((3, 2))})
    assert [t.type for t in fig.data] == ["scattergl", "scattergl"]
    assert [t.name for t in fig.data] == ["data", "DP-Lloyd"]


def test_centres_are_clamped_into_the_declared_box_and_circles_are_round():
    from dpcore.app.plots import centers_figure, clip_to_box

    box = [(-180.0, 180.0), (-90.0, 90.0)]
    C = np.array([[190.0, -160.0], [10.0, 20.0]])
    np.testing.assert_allclose(clip_to_box(C, box), [[180.0, -90.0], [10.0, 20.0]])
    fig = centers_figure(None, {"DP-Lloyd": C}, box=box, ball=([0.0, 0.0], 201.0))
    t = next(t for t in fig.data if t.name == "DP-Lloyd")
    assert max(t.x) <= 180 and min(t.y) >= -90
    assert fig.layout.yaxis.scaleanchor == "x"  # release view: the radius circle is a circle
    with pytest.raises(ValueError, match="dimension"):
        clip_to_box(C, box[:1])


def test_log_axes_label_every_tick_with_its_full_value():
    from dpcore.app.plots import _log_ticks, log_axis

    ticks = _log_ticks(0.15, 0.9)  # less than a decade: 2 3 4 … must carry their decade
    assert ticks[0] <= 0.2 and all(t <= 1.0 for t in ticks)
    fig = log_axis(go.Figure(), "y", [0.15, 0.9])
    assert fig.layout.yaxis.type == "log"
    assert list(fig.layout.yaxis.ticktext)[:2] == ["0.2", "0.3"]
    wide = _log_ticks(1e-3, 1e4)
    assert wide == [10.0**e for e in range(-3, 5)]


def test_utility_figure_goes_log_when_errors_span_decades_and_draws_the_reference():
    from dpcore.app.plots import utility_curve_figure

    def summary(values):
        return pd.DataFrame({"algorithm": ["A"] * 3, "epsilon": [0.1, 1.0, 10.0],
                             "median": values, "q25": values, "q75": values})

    fig = utility_curve_figure(summary([2000.0, 10.0, 1.0]), metric_title="cost / n",
                               reference=0.9, target=5.0)
    assert fig.layout.yaxis.type == "log" and fig.layout.xaxis.type == "log"
    lines = [s.y0 for s in fig.layout.shapes]
    assert 0.9 in lines and 5.0 in lines
    flat = utility_curve_figure(summary([2.0, 1.5, 1.2]), metric_title="ratio", reference=1.0)
    assert flat.layout.yaxis.type != "log"


def test_axis_titles_from_column_names_are_plain_text():
    """Plotly renders <a href> in titles: a hostile column name must arrive escaped."""
    import numpy as np

    from dpcore.app.plots import points_figure

    fig = points_figure(np.zeros((3, 2)), axis_titles=('<a href="http://127.0.0.1:9/">x</a>', "y"))
    assert "<a" not in fig.layout.xaxis.title.text and "&lt;a" in fig.layout.xaxis.title.text


def test_dashboard_and_reports_share_one_colour_per_method():
    """The dashboard's algorithm colours are the reports' METHOD_COLORS entries, and a name only
    the reports' table knows (a one-line addition there) gets that colour on the dashboard too.

    Catches: a second hard-coded palette in dpcore.app.plots drifting from the reports (the state
    before issue 16), and two algorithms of one dashboard comparison sharing a colour.
    """
    from dpcore.app.plots import DASHBOARD_METHODS, STYLES, algorithm_style
    from dpcore.reproduce import _figures

    for name, (key, _) in DASHBOARD_METHODS.items():
        assert STYLES[name].color == _figures.METHOD_COLORS[key], name
    outputs = ("centres", "mean", "averages")  # released outputs, not algorithms
    algorithms = [n for n in DASHBOARD_METHODS if not set(outputs) & set(n.split())]
    assert "Max-cover k-means" in algorithms and "FriendlyCore k-means" in algorithms
    assert len({STYLES[n].color for n in algorithms}) == len(algorithms)
    name = "a method only the reports' table lists"
    try:
        _figures.METHOD_COLORS[name] = "#123456"
        assert algorithm_style(name).color == "#123456"
    finally:
        del _figures.METHOD_COLORS[name]
    assert algorithm_style(name).color == _figures.method_color(name)
