"""Real-browser tests: ``streamlit run app.py`` driven by Debian chromium through playwright.

They visit every page in the navigation, upload a file, move a slider and fail on any Streamlit
exception or error element. Chromium is the system one (``chromium_path`` fixture); playwright's
own browser download is never used. Launch flags: ``../shared/spec/streamlit_notes.md`` §3.
"""

from __future__ import annotations

import os
import re

import pytest
from e2e_helpers import assert_no_errors, serve, wait_ready
from playwright.sync_api import TimeoutError as PlaywrightTimeout

# One xdist worker runs every browser test, in file order (``make test`` uses
# ``--dist loadgroup``): the tests of this module share one app session, and two servers plus two
# Chromiums on a 2-core machine starve each other into timeouts.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]


@pytest.fixture(scope="module")
def page(browser, server):
    """One browser session for the module: the tests run in file order on the same app session
    (slider, every page, sweep, then upload, which changes the data set), saving an app load per
    test."""
    ctx = browser.new_context(viewport={"width": 1400, "height": 1800})
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    yield pg
    ctx.close()


def test_slider_moves_and_url_follows(page, server):
    page.goto(server + "/?k=4")
    wait_ready(page)
    slider = page.locator("[data-testid='stSidebar']").get_by_role("slider").first
    slider.focus()
    slider.press("ArrowRight")
    wait_ready(page)
    page.wait_for_function("() => window.location.search.includes('eps=1.5')")
    assert "k=4" in page.url
    assert_no_errors(page, "after slider")


def ensure_open(page, server) -> None:
    """Reuse the module's app session; open it when this test runs alone."""
    if not page.url.startswith(server):
        page.goto(server + "/")
        wait_ready(page)


def test_every_page_renders_in_chromium(page, server):
    ensure_open(page, server)
    links = page.locator("[data-testid='stSidebarNav'] a")
    hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
    texts = " ".join(links.all_inner_texts())
    assert "Data" in texts and "Privacy ledger" in texts, texts
    for href in hrefs:
        page.locator(f"[data-testid='stSidebarNav'] a[href='{href}']").click()
        wait_ready(page)
        assert_no_errors(page, href)
        if page.locator("[data-testid='stPlotlyChart']").count():
            page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
    assert_no_errors(page, "last page")


def _main_text(page) -> str:
    """What the main block shows, for a failure message."""
    text = page.get_by_test_id("stMain").inner_text()
    return text if len(text) < 3000 else text[:1000] + " … " + text[-2000:]


def test_sweep_can_be_stopped_and_keeps_finished_runs(page, server):
    ensure_open(page, server)
    page.locator("[data-testid='stSidebarNav'] a[href$='/utility']").click()
    wait_ready(page)
    reps = page.get_by_role("slider", name="Repetitions")
    reps.focus()
    reps.press("End")  # 20 repetitions: a sweep long enough to stop halfway
    wait_ready(page)
    points = page.get_by_role("slider", name="Grid points")  # and 12 ε values: 480 fits (the
    points.focus()  # recommended DP k-means is fast enough that 200 fits ended before Stop)
    points.press("End")
    wait_ready(page)
    # and max-cover (≈ 0.3–0.6 s a fit): a sweep of minutes. Without it the 480 fits took ≈ 12 s
    # on an idle machine, and the poll's redraws made Stop miss the end of it (a full run)
    page.locator("[data-testid='stMultiSelect']").first.get_by_role("combobox").click()
    page.get_by_role("option", name="Max-cover k-means").click()
    page.keyboard.press("Escape")
    wait_ready(page)
    page.get_by_text(re.compile(r"^720 fits on ")).wait_for()  # 3 algorithms × 12 ε × 20
    page.get_by_role("button", name="Run sweep").click()
    page.get_by_role("progressbar").first.wait_for()
    # stop once a fit has finished (a fixed 1.5 s wait found none under load: no curve to keep);
    # the progress text can lag behind the fits on a loaded machine (CI once saw none in 120 s),
    # so after 60 s Stop is pressed anyway: what matters is what the stopped sweep kept (below)
    try:
        page.get_by_test_id("stProgress").filter(has_text=re.compile(r"[1-9]\d*/\d+: ")) \
            .first.wait_for(timeout=60_000)
    except PlaywrightTimeout:
        page.wait_for_timeout(5_000)
    stop = page.get_by_test_id("stMainBlockContainer").get_by_role("button", name="Stop")
    try:  # the poll redraws the button twice a second: wait for it, never count it once
        stop.click(timeout=20_000)
    except PlaywrightTimeout:
        pytest.fail(f"no Stop button (did the sweep end first?): {_main_text(page)}")
    wait_ready(page)
    warning = page.locator("[data-testid='stAlertContentWarning']", has_text="Sweep stopped")
    try:
        warning.wait_for()
    except PlaywrightTimeout:
        pytest.fail(f"no 'Sweep stopped' warning after Stop; the page: {_main_text(page)}")
    text = warning.inner_text()
    assert "the curves use the finished ones" in text
    assert int(re.search(r"Sweep stopped after (\d+) fits", text).group(1)) >= 1, text
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
    assert_no_errors(page, "after stopping the sweep")


def test_release_in_browser_is_recorded_in_the_ledger(page, server):
    ensure_open(page, server)
    page.locator("[data-testid='stSidebarNav'] a[href$='/importance']").click()
    wait_ready(page)
    page.get_by_test_id("stSidebar").get_by_text("release", exact=True).click()
    wait_ready(page)
    assert page.locator("[data-testid='stPlotlyChart']").count() == 0  # nothing before a release
    page.get_by_role("button", name="Release DP-Lloyd centres").click()
    wait_ready(page)
    success = page.locator("[data-testid='stAlertContentSuccess']", has_text="released under")
    try:
        success.wait_for()
    except Exception:
        if os.environ.get("DPCORE_SCREENS"):
            page.screenshot(path=os.path.join(os.environ["DPCORE_SCREENS"], "debug_release.png"),
                            full_page=True)
        raise
    eps = re.search(r"released under ε = ([0-9.]+)", success.inner_text()).group(1)
    page.wait_for_selector("[data-testid='stPlotlyChart'] .main-svg")
    assert_no_errors(page, "release")
    page.locator("[data-testid='stSidebarNav'] a[href$='/ledger']").click()
    wait_ready(page)
    spent = page.locator("[data-testid='stMetric']", has_text="ε spent")
    spent.locator("[data-testid='stMetricValue']", has_text=eps).wait_for()
    # .first: the history table; the kept outputs below it repeat the label
    page.locator("[data-testid='glide-cell-1-0']", has_text="DP-Lloyd centres").first.wait_for(
        state="attached")
    page.get_by_test_id("stSidebar").get_by_text("explore", exact=True).click()
    wait_ready(page)
    assert_no_errors(page, "ledger")


def test_upload_a_file_then_a_bad_one(page, server):
    ensure_open(page, server)
    page.locator("[data-testid='stSidebarNav'] a", has_text="Data").first.click()
    wait_ready(page)
    rows = "\n".join(f"{i % 7}.5,{i % 5}.25" for i in range(40))
    uploader = page.locator("[data-testid='stFileUploader'] input[type='file']")
    uploader.set_input_files(files=[{"name": "points.csv", "mimeType": "text/csv",
                                     "buffer": f"a,b\n{rows}\n".encode()}])
    wait_ready(page)
    page.get_by_text("Uploaded file points.csv").first.wait_for()
    assert_no_errors(page, "good upload")
    uploader.set_input_files(files=[{"name": "broken.csv", "mimeType": "text/csv",
                                     "buffer": b"only_a_header\n"}])
    wait_ready(page)
    err = page.locator("[data-testid='stAlertContentError']")
    err.first.wait_for()
    assert "broken.csv" in err.first.inner_text()
    assert page.locator("[data-testid='stException']").count() == 0


def test_first_deep_link_on_a_fresh_server_gets_the_frame(browser):
    """Streamlit routes a fresh server's first session through its legacy ``pages/`` router;
    a deep link must still get the navigation and sidebar (pages/_common._leave_legacy_router)."""
    for url in serve():
        ctx = browser.new_context(viewport={"width": 1400, "height": 1200})
        pg = ctx.new_page()
        pg.set_default_timeout(60_000)
        pg.goto(url + "/ledger")
        wait_ready(pg)
        # The first script run may be the legacy router's bare page, which re-runs itself through
        # app.py at once: wait for that rerun's frame instead of looking at the first paint.
        pg.locator("[data-testid='stSidebar']").get_by_text("Data set").wait_for()
        wait_ready(pg)
        pg.get_by_text("Privacy ledger").first.wait_for()
        assert pg.locator("[data-testid='stSidebar']").get_by_text("Data set").count() == 1
        links = " ".join(pg.locator("[data-testid='stSidebarNav'] a").all_inner_texts())
        assert "common" not in links and "Privacy ledger" in links
        # the deep link resolved to its page on the way out of the legacy router: no
        # "Page not found" dialog over it
        assert pg.get_by_text("Page not found").count() == 0
        assert_no_errors(pg, "fresh deep link")
        ctx.close()
