"""Sized scatters stay legible (issue 27, the Importance page's first map)."""

from __future__ import annotations

import numpy as np

from dpcore.app import plots


def test_sized_markers_have_a_visible_floor_opacity_and_outline():
    """Bug caught: weights spanning decades (the privacy sampler's 1/q) shrinking most markers
    to ~1 px at opacity 0.6, invisible on the page at 1024 px (the map looked empty)."""
    rng = np.random.default_rng(0)
    P = rng.normal(size=(500, 2))
    w = 10.0 ** rng.uniform(0, 4, 500)  # four decades of weights
    marker = plots.points_figure(P, size=w, color=rng.uniform(size=500), size_max=12).data[0].marker
    assert marker.sizemin >= 4 and marker.opacity >= 0.8
    assert marker.line.width > 0  # an outline parts overlapping markers and pale colours
