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
