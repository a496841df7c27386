"""Real-browser check of the FriendlyCore page at its defaults (issue 25.1): the paper's picture —
the friendly core kept and dropped, the private mean, the centres — with no refusal and no
warning that the data are too small, on a bundled data set and on the generated 200k-row mixture
(where FriendlyCore's own tuple core and centres appear, not the backup's)."""

from __future__ import annotations

import pytest
from e2e_helpers import assert_no_errors, wait_ready

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


@pytest.mark.parametrize("data", ["cities", "fc_mixture"])
def test_friendlycore_page_shows_core_mean_and_centres_at_defaults(browser, server, data):
    ctx = browser.new_context(viewport={"width": 1400, "height": 2600})
    pg = ctx.new_page()
    pg.set_default_timeout(120_000)
    try:
        pg.goto(f"{server}/friendlycore?data={data}")
        wait_ready(pg)
        assert_no_errors(pg, f"friendlycore {data}")
        pg.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
        legend = " ".join(pg.locator("[data-testid='stPlotlyChart'] .legendtext")
                          .all_text_contents())
        assert "kept" in legend and "FriendlyCore private mean" in legend, legend
        assert "final centres" in legend, legend
        if data == "fc_mixture":
            assert "tuple centres kept (tuple core)" in legend, legend
        warnings = pg.locator("[data-testid='stAlertContentWarning']").all_inner_texts()
        assert not warnings, warnings
    finally:
        ctx.close()
