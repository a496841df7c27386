"""Release mode draws and downloads the same centres, inside the declared box (issue 27.8).

A released centre may lie outside the public box (a mechanism's noise; a centre clipped to the
box's circumscribed ball only): the release page clamps it into the box with the
explore pages' rule (:func:`dpcore.app.plots.clip_to_box`, post-processing), in the figure and in
the CSV alike.
"""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import APP, capture_downloads, clear_caches, figure_specs, trace_array
from streamlit.testing.v1 import AppTest

import dpcore.release.door as release_mod

pytestmark = [pytest.mark.filterwarnings("ignore"), pytest.mark.slow]
LO, HI = [-1.0, -2.0], [1.0, 2.0]


@pytest.fixture
def corner(tmp_path, monkeypatch):
    """A curator deployment on a small public box (rows in one corner)."""
    clear_caches()
    rng = np.random.default_rng(3)
    data = tmp_path / "private.csv"
    pd.DataFrame(0.9 * np.array(HI) + rng.normal(0, 0.05, (60, 2)),
                 columns=["a", "b"]).to_csv(data, index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"columns": ["a", "b"], "lower": LO, "upper": HI, "n": 60}))
    monkeypatch.setenv("DPCORE_PRIVATE_DATA", str(data))
    monkeypatch.setenv("DPCORE_PRIVATE_SCHEMA", str(schema))
    monkeypatch.setenv("DPCORE_PRIVATE_BUDGET", "3,1e-5")
    monkeypatch.setattr(release_mod, "_entropy", lambda: np.random.default_rng(11))
    from dpcore.privacy.guarantees import ApproxDP
    from dpcore.release.curator import open_door

    token = open_door(data, schema, "3,1e-5").ledger.grant("ann", ApproxDP(3, 1e-5))
    yield token
    clear_caches()


def test_a_release_figure_and_its_csv_hold_the_same_centres_inside_the_box(corner,
                                                                           monkeypatch):
    """Bugs caught: the release figure drawing a raw centre outside the box (longitude ≈ −188 on
    a map), the CSV keeping the raw centres while the figure clamps (or the other way round),
    a copy of the rule that clamps one coordinate only."""
    from dpcore.mechanisms.lloyd.estimator import DPLloyd

    real_fit = DPLloyd.fit

    def fit(self, X, y=None):  # a released centre outside the box, as noise can make one
        out = real_fit(self, X, y)
        self.cluster_centers_ = self.cluster_centers_ + np.array([-5.0, 0.0])
        return out

    monkeypatch.setattr(DPLloyd, "fit", fit)
    downloads = capture_downloads(monkeypatch)
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.text_input(key="login_name").input("ann")
    at.text_input(key="login_token").input(corner)
    at.button(key="login_submit").click().run()
    at.switch_page("pages/importance.py").run()
    at.button(key="importance_release").click().run()
    assert not at.exception
    raw = np.vstack([np.atleast_2d(r.output["centers"])
                     for r in at.session_state["releases"]["importance"] if not r.failed])
    lo, hi = np.array(LO), np.array(HI)
    # power: the raw release (centred coordinates + the box's centre) leaves the box
    assert np.any((raw + (lo + hi) / 2 < lo) | (raw + (lo + hi) / 2 > hi))
    fig = figure_specs(at)[0]
    drawn = np.vstack([np.c_[trace_array(t, "x"), trace_array(t, "y")] for t in fig["data"]
                       if t.get("name") == "DP-Lloyd centres"])
    csv = pd.read_csv(io.StringIO(downloads["dpout_importance_csv"]))
    in_csv = csv[["a", "b"]].to_numpy(float)
    assert drawn.shape == in_csv.shape == raw.shape
    np.testing.assert_allclose(np.sort(drawn, axis=0), np.sort(in_csv, axis=0), rtol=1e-6)
    assert np.all((drawn >= lo - 1e-9) & (drawn <= hi + 1e-9))
    assert any("moved to their edge" in c.value for c in at.caption)
