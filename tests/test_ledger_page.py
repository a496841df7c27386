"""The Privacy ledger page shows the kept outputs of past releases as the release pages show
theirs: table units, points clamped into the declared box, one row per point in the table's
columns, numbers rounded; ⊥ an empty row (AppTest, a curator deployment)."""

from __future__ import annotations

import io
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import capture_downloads
from test_release_app import curator, session  # noqa: F401  (the deployment fixture)

from dpcore.privacy.guarantees import PureDP
from dpcore.release.curator import open_door

pytestmark = pytest.mark.filterwarnings("ignore")
BOX = (-8.0, 8.0)  # the fixture's declared bounds of both columns


def _kept(at) -> pd.DataFrame:
    [frame] = [d.value for d in at.dataframe if "output" in d.value.columns]
    return frame


def test_kept_outputs_are_clamped_rounded_and_one_row_per_point(curator):  # noqa: F811
    """Bug caught: the ledger page showing a kept output raw (a JSON text of every digit, cut
    at 2000 characters, centres outside the declared box) where its page showed the centres
    clamped into the box and rounded."""
    led = open_door(curator / "private.csv", curator / "schema.json",
                    "3,1e-5").ledger.as_analyst("ann")
    centers = np.random.default_rng(0).normal(0, 3, (60, 2)) + 1e-9
    centers[0] = [100.123456789, -55.5]  # outside the box: a DP output may be
    value = np.array([0.123456789123])
    rels = [SimpleNamespace(label="DP-Lloyd", guarantee=PureDP(0.5), output={"centers": centers}),
            SimpleNamespace(label="sampler", guarantee=PureDP(0.1), output={"value": value}),
            SimpleNamespace(label="declined", guarantee=PureDP(0.1), output=None)]
    spent = led.spend_many([(r.label, r.guarantee, {"mechanism": "test"}) for r in rels])
    assert led.keep_outputs(spent, rels, origin="clustering")
    at = session("pages/ledger.py")
    kept = _kept(at)
    pts = kept[kept["label"] == "DP-Lloyd"]
    assert len(pts) == len(centers) and set(pts["output"]) == {"centers"}
    expected = np.clip(centers, *BOX).round(5)  # the box's centre is 0: table units = centred
    np.testing.assert_allclose(pts[["a", "b"]].to_numpy(), expected, atol=1e-12)
    assert list(pts[["a", "b"]].iloc[0]) == [BOX[1], BOX[0]]
    [sampler] = kept[kept["label"] == "sampler"].itertuples()
    assert sampler.value == round(0.123456789123, 5) and sampler.output == "value"
    [declined] = kept[kept["label"] == "declined"].itertuples()
    assert declined.output == "⊥" and np.isnan(declined.a) and np.isnan(declined.b)
    assert set(kept["#"]) == {1, 2, 3}  # the entries' numbers in the table above
    assert all(len(str(v)) < 40 for v in kept.drop(columns="guarantee").to_numpy().ravel())


def test_a_release_shows_the_same_values_on_its_page_and_on_the_ledger_page(curator,  # noqa: F811
                                                                            monkeypatch):
    """Bug caught: the ledger page applying another rule than the release page (no clamp, other
    units, other rounding) to the same kept output, e.g. after a reload."""
    downloads = capture_downloads(monkeypatch)
    at = session("pages/clustering.py")
    at.button(key="clustering_release").click().run()
    page = pd.read_csv(io.StringIO(downloads["dpout_clustering_csv"]))
    at.switch_page("pages/ledger.py").run()
    kept = _kept(at)
    assert list(kept["label"].unique()) == list(page["algorithm"].unique())
    np.testing.assert_allclose(kept[["a", "b"]].to_numpy(),
                               page[["a", "b"]].to_numpy().round(5), atol=1e-9)
    ledger_csv = pd.read_csv(io.StringIO(downloads["dpout_ledger_outputs"]))
    np.testing.assert_allclose(ledger_csv[["a", "b"]].to_numpy(), kept[["a", "b"]].to_numpy())
