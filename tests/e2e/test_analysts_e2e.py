"""Named analysts of a curator deployment in a real browser (issue 22 item 5, issue 27 item 3).

``dpcore app --private …`` started as the curator does, two analysts granted with ``dpcore
ledger grant``: anonymous access sees nothing of the data set; a wrong token is refused with one
message whether or not the name exists; one analyst exhausts their share and is refused while the
other is unaffected; a release survives a reload (on its page and on the ledger page); the token
never reaches the URL or the server's log.
"""

from __future__ import annotations

import pytest
from e2e_helpers import assert_no_errors, wait_ready
from test_curator_e2e import Curator, history, kept_outputs, login, remaining

from dpcore.privacy.ledger_analysts import LOGIN_REFUSED

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


@pytest.fixture
def deployment(tmp_path):
    c = Curator(tmp_path)
    c.token = "unused"  # no whole-budget analyst here: the two below share it
    yield c
    c.stop()


def _page(ctx, url: str):
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    pg.goto(url)
    wait_ready(pg)
    return pg


def _release(pg) -> None:
    pg.get_by_role("button", name="Release DP-Lloyd centres").click()
    wait_ready(pg)


def test_two_named_analysts_anonymous_refused_and_a_release_survives_a_reload(deployment,
                                                                              browser):
    url = deployment.start()
    ann = deployment.grant("ann", "1.2", "3e-6")
    bob = deployment.grant("bob", "1.5", "3e-6")
    ctx = browser.new_context(viewport={"width": 1400, "height": 1800})
    try:
        # Anonymous: the login form only; no page, budget, column name or n.
        pg = _page(ctx, url + "/ledger?mode=explore")
        assert pg.get_by_label("Token").get_attribute("type") == "password"
        assert pg.get_by_test_id("stSidebar").locator("[data-testid='stMetric']").count() == 0
        assert pg.locator("[data-testid='stDataFrame'], [data-testid='stPlotlyChart']"
                          ).count() == 0
        assert pg.get_by_role("button", name="Release DP-Lloyd centres").count() == 0
        text = pg.get_by_test_id("stMain").inner_text()
        assert "500" not in text and "Budget" not in text

        # A wrong token, an unknown name: the same message, nothing about the name.
        answers = set()
        for name, token in (("ann", "dpa_wrong"), ("nobody", ann)):
            login(pg, name, token)
            answers.add(pg.locator("[data-testid='stAlertContentError']").inner_text().strip())
            assert pg.get_by_test_id("stSidebar").locator("[data-testid='stMetric']"
                                                          ).count() == 0
        assert len(answers) == 1 and LOGIN_REFUSED.split(".")[0] in answers.pop()
        assert ann not in pg.url

        # ann spends her share, then is refused.
        pg.goto(url + "/importance")
        wait_ready(pg)
        login(pg, "ann", ann)
        assert remaining(pg) == "ε 1.2" and ann not in pg.url
        _release(pg)
        pg.locator("[data-testid='stAlertContentSuccess']", has_text="released under").wait_for()
        assert_no_errors(pg, "ann's release")
        assert remaining(pg) == "ε 0.2"
        _release(pg)
        refusal = pg.locator("[data-testid='stAlertContentError']", has_text="Release refused")
        refusal.wait_for()
        assert "analyst 'ann'" in refusal.inner_text()
        assert remaining(pg) == "ε 0.2"

        # A reload: a new session, logged in again; the kept release is shown again.
        pg.reload()
        wait_ready(pg)
        assert pg.get_by_label("Token").count() == 1  # a reload asks again
        login(pg, "ann", ann)
        pg.locator("[data-testid='stAlertContentSuccess']", has_text="released under").wait_for()
        pg.goto(url + "/ledger")
        wait_ready(pg)
        login(pg, "ann", ann)
        cell = "[data-testid='glide-cell-1-0']"
        history(pg).locator(cell, has_text="DP-Lloyd centres").wait_for(state="attached")
        kept_outputs(pg).locator(cell, has_text="DP-Lloyd centres").wait_for(
            state="attached")  # the kept output, in its own table
        assert_no_errors(pg, "ann's ledger page")

        # bob, in another browser profile, is unaffected.
        other = browser.new_context(viewport={"width": 1400, "height": 1800})
        try:
            pb = _page(other, url + "/importance")
            login(pb, "bob", bob)
            assert remaining(pb) == "ε 1.5"
            _release(pb)
            pb.locator("[data-testid='stAlertContentSuccess']", has_text="released under"
                       ).wait_for()
            assert_no_errors(pb, "bob's release")
            assert remaining(pb) == "ε 0.5"
            pb.goto(url + "/ledger")
            wait_ready(pb)
            login(pb, "bob", bob)
            history(pb).locator("[data-testid='glide-cell-1-0']", has_text="DP-Lloyd centres"
                       ).wait_for(state="attached")
            assert history(pb).locator("[data-testid='glide-cell-1-1']").count() == 0  # his only
        finally:
            other.close()
    finally:
        ctx.close()
    proc = deployment.proc
    deployment.stop()
    log = proc.stdout.read().decode(errors="replace") if proc and proc.stdout else ""
    assert ann not in log and bob not in log  # never logged
