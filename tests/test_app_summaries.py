"""Text summaries under the charts (issue 27.6) state what the figure draws, in numbers, and in
release mode only DP outputs and public inputs.

Each test reads the numbers back out of the caption and compares them with the plotly figure's
own data (``figure_specs``), so a summary computed on other rows than the ones drawn, or left
stale after a widget change, fails here.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from apptest_helpers import errors, figure_specs, new_app, trace_array

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings(
    "ignore::dpcore.privacy.guarantees.PrivacyLeakWarning", "ignore::UserWarning")]


def _num(text: str) -> float:
    return float(text.replace(",", ""))


def _point(text: str) -> np.ndarray:
    return np.array([_num(v) for v in text.split(", ") if v != "…"])


def _charts(at) -> list[str]:
    return [c.value for c in at.caption if c.value.startswith("Chart:")]


def test_friendlycore_summaries_match_the_figures():
    """Kept/removed counts equal the figure's "kept"/"removed" traces; each mean's coordinates
    are the drawn marker's; the friend-count median is the drawn colours' median (catches a
    summary of all rows under a figure of the Poisson sample, or of the previous draw)."""
    at = new_app({"data": "cities"})
    at.switch_page("pages/friendlycore.py").run()
    at.text_input(key="fc_n_32847").set_value("3000").run()  # all drawn: no display subsample
    assert not at.exception and not errors(at)
    counts_fig, core_fig = figure_specs(at)[:2]
    traces = {t["name"]: t for t in core_fig["data"]}
    text = " ".join(_charts(at))

    kept, total, removed = re.search(
        r"([\d,]+) of ([\d,]+) points kept \([\d.]+ %\), ([\d,]+) removed", text).groups()
    assert _num(kept) == len(trace_array(traces["kept"], "x"))
    assert _num(removed) == len(trace_array(traces.get("removed", {"x": []}), "x"))
    assert _num(total) == _num(kept) + _num(removed)

    for name in ("FriendlyCore private mean", "KV18 private mean"):
        said = _point(re.search(re.escape(name) + r" at \(([^)]*)\)", text).group(1))
        drawn = [trace_array(traces[name], "x")[0], trace_array(traces[name], "y")[0]]
        np.testing.assert_allclose(said, drawn, rtol=1e-3)

    colours = trace_array(counts_fig["data"][0]["marker"], "color")
    median = _num(re.search(r"median ([\d,.]+)", text).group(1))
    assert median == pytest.approx(np.median(colours), abs=0.5)
    r_field = next(w for w in at.text_input if w.key.startswith("fc_r3_"))
    assert f"within r = {float(r_field.value):g}:" in text  # the r shown is the r drawn


def test_release_summary_states_the_released_centres_and_never_n():
    """Release mode: the summary lists the released centres exactly as drawn, and no private
    count (catches n, or a count of rows per cluster, leaking through the text alternative)."""
    at = new_app({"data": "cities", "mode": "release"})
    at.switch_page("pages/clustering.py").run()
    at.button(key="clustering_release").click().run()
    assert not at.exception and not errors(at)
    spec = next(s for s in figure_specs(at) if any(t["name"] == "DP-Lloyd" for t in s["data"]))
    tr = next(t for t in spec["data"] if t["name"] == "DP-Lloyd")
    drawn = np.c_[trace_array(tr, "x"), trace_array(tr, "y")]
    text = next(c for c in _charts(at) if "DP-Lloyd" in c)
    k, pts = re.search(r"DP-Lloyd: (\d+) centre\(s\) at (.*)\.$", text).groups()
    assert int(k) == len(drawn)
    said = np.array([_point(p.strip("()")) for p in pts.split("; ") if p != "…"])
    np.testing.assert_allclose(said, drawn[: len(said)], rtol=5e-3, atol=5e-3)
    n = 32_847  # the private row count must appear in no caption, in any spelling
    for c in _charts(at):
        assert f"{n:,}" not in c and str(n) not in c and "points" not in c, c
