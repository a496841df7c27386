"""The guided tour: every step draws its figure and reacts to its slider."""

from __future__ import annotations

import pytest
from apptest_helpers import errors, figure_specs, new_app

STEPS = ["1 · ε", "2 · Neighbours", "3 · Noise on a count", "4 · Sampling", "5 · Friendly core",
         "6 · Clustering"]


def test_every_tour_step_draws_a_figure_and_a_paragraph():
    at = new_app()
    at.switch_page("pages/tour.py").run()
    for step in STEPS:
        at.session_state["tour_step"] = step
        at.run()
        assert not at.exception and not errors(at), step
        assert len(figure_specs(at)) == 1, step
        assert at.markdown, step


def test_tour_figures_follow_their_sliders():
    at = new_app()
    at.switch_page("pages/tour.py").run()
    title = figure_specs(at)[0]["layout"]["title"]["text"]
    at.slider(key="tour_eps").set_value(3.0).run()
    assert figure_specs(at)[0]["layout"]["title"]["text"] != title
    at.session_state["tour_step"] = STEPS[4]
    at.run()
    small = {t["name"] for t in figure_specs(at)[0]["data"]}
    at.slider(key="tour_r").set_value(12.0).run()
    assert "kept" in {t["name"] for t in figure_specs(at)[0]["data"]}
    assert small  # both views drawn


@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_amplification_figure_matches_the_formula(eps):
    import math

    from dpcore.app.plots import amplification_figure

    fig = amplification_figure(eps, 0.1)
    assert fig.data[1].y[0] == pytest.approx(math.log1p(0.1 * math.expm1(eps)))
    assert fig.data[1].y[0] < eps


def _numbers(text: str) -> list[int]:
    import re

    return [int(x) for x in re.findall(r"\d+", text)]


@pytest.mark.parametrize("r", [None, 1.0, 12.0])
def test_step5_text_counts_match_the_picture(r):
    """Issue 27.7: at the default radius step 5 kept the strip between two clusters and marked
    the clusters "removed" while its text described a core. The paragraph's kept/removed counts
    must be the figure's, and at the default r the removed points must be the far-away ones
    (the text says so)."""
    at = new_app()
    at.switch_page("pages/tour.py").run()
    at.session_state["tour_step"] = STEPS[4]
    at.run()
    if r is not None:
        at.slider(key="tour_r").set_value(r).run()
    traces = {t["name"]: t for t in figure_specs(at)[0]["data"]}
    from apptest_helpers import trace_array

    kept = trace_array(traces["kept"], "x").size if "kept" in traces else 0
    removed = trace_array(traces["removed"], "x").size if "removed" in traces else 0
    text = next(m.value for m in at.markdown if "are kept and" in m.value)
    tail = text[text.index("Here "):]
    n_kept, total, n_removed, far_removed, n_far = _numbers(tail)[:5]
    assert (n_kept, n_removed, total) == (kept, removed, kept + removed)
    if r is None:  # the default: the dense group kept, every far-away point removed
        assert far_removed == n_far and n_kept > total / 2
        assert "The dense group is the core" in text
    elif r == 1.0:
        assert n_kept <= total / 2 and "falls apart" in text
    else:
        assert far_removed < n_far and "Move r down" in text


def test_tour_hides_the_sidebar_controls_it_does_not_use():
    """One set of controls: the sidebar's ε, k and seed are absent on the tour, and the value
    set before the visit is still there after it (persisted)."""
    at = new_app({"k": "7"})
    at.switch_page("pages/tour.py").run()
    keys = {w.key for w in [*at.sidebar.select_slider, *at.sidebar.text_input]}
    assert not {"eps", "k", "seed"} & keys
    at.switch_page("pages/data.py").run()
    assert at.sidebar.text_input(key="k").value == "7"
