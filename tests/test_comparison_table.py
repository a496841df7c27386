"""dpcore.app.sweeps.comparison_table: the Clustering page's table, computed in dpcore."""

from __future__ import annotations

import numpy as np

from dpcore.app.sweeps import FitOutcome, comparison_table, reference_algorithm
from dpcore.privacy.guarantees import PureDP


def test_ratios_to_the_reference_and_what_each_row_spent():
    X = np.random.default_rng(0).normal(size=(500, 2))
    ref = FitOutcome(reference_algorithm().name, np.array([[0.0, 0.0]]), None, 0.1, {})
    dp = FitOutcome("DP-Lloyd", np.array([[3.0, 3.0]]), PureDP(1.0), 0.2, {})
    failed = FitOutcome("Max-cover k-means", None, None, 0.0, {}, error="too small")
    table = comparison_table([ref, dp, failed], X, explain=lambda e: f"plain: {e}")
    rows = table.set_index("algorithm")
    assert rows.loc[reference_algorithm().name, "× non-private"] == 1.0
    assert rows.loc[reference_algorithm().name, "privacy spent"] == "not private"
    assert rows.loc["DP-Lloyd", "× non-private"] > 1.0  # a centre far from the data costs more
    assert rows.loc["DP-Lloyd", "privacy spent"] == str(PureDP(1.0))
    assert rows.loc["Max-cover k-means", "privacy spent"] == "nothing released"
    assert rows.loc["Max-cover k-means", "note"] == "plain: too small"
    assert np.isnan(rows.loc["Max-cover k-means", "normalised cost"])
