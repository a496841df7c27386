"""Chart text legible on a projector (issue 27.6): contrast ≥ 4.5:1 (WCAG 2.1 §1.4.3)."""

from __future__ import annotations

import pytest
from apptest_helpers import clear_caches, figure_specs, new_app

from dpcore.app.style import TEXT_COLOR, contrast_ratio


def test_contrast_ratio_matches_wcag_reference_values():
    """Black on white is 21:1 and the Streamlit theme's grey ticks fail (the ratio measured in
    the issue): a formula without the sRGB linearisation gets both wrong."""
    assert contrast_ratio("#000000") == pytest.approx(21.0)
    assert contrast_ratio("#ffffff") == pytest.approx(1.0)
    assert contrast_ratio("#808495") < 4.5
    assert contrast_ratio(TEXT_COLOR) >= 4.5


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_every_chart_of_the_clustering_page_has_dark_axis_text():
    """A page that bypasses the shared ``show`` (or a theme that wins over it) fails."""
    clear_caches()
    at = new_app()
    at.switch_page("pages/clustering.py").run()
    specs = figure_specs(at)
    assert specs
    for spec in specs:
        lay = spec["layout"]
        for axis in ("xaxis", "yaxis"):
            assert contrast_ratio(lay[axis]["tickfont"]["color"]) >= 4.5
        assert lay["xaxis"]["tickfont"]["size"] >= 12
