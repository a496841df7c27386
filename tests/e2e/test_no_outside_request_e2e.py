"""No request leaves the server (issue 26, case 6): every page of the dashboard is loaded in
Debian chromium and every request it makes is recorded (``page.on("request")``).

Bug caught: the favicon ``:material/lock:`` made every page load fetch an SVG from a font CDN
(fonts.gstatic.com), which fails offline and tells a third party who uses the app; any other
icon, font or script fetched from a non-local host fails the test the same way.
"""

from __future__ import annotations

from urllib.parse import urlparse

import pytest
from e2e_helpers import assert_no_errors, wait_ready

pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]

LOCAL = {"127.0.0.1", "localhost", "::1", "[::1]"}


def test_every_page_makes_only_local_requests(browser, server):
    ctx = browser.new_context(viewport={"width": 1400, "height": 1000})
    outside: list[str] = []
    seen: list[str] = []

    def _record(request) -> None:
        url = request.url
        seen.append(url)
        host = urlparse(url).hostname
        if url.startswith(("data:", "blob:", "about:")):
            return
        if host not in LOCAL:
            outside.append(url)

    def _refuse(route) -> None:  # never depend on the network: record, then refuse
        route.abort()

    ctx.on("request", _record)
    ctx.route(lambda url: urlparse(url).hostname not in LOCAL
              and not url.startswith(("data:", "blob:", "about:")), _refuse)
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    try:
        pg.goto(server + "/")
        wait_ready(pg)
        links = pg.locator("[data-testid='stSidebarNav'] a")
        hrefs = [links.nth(i).get_attribute("href") for i in range(links.count())]
        assert len(hrefs) >= 5
        for href in hrefs:
            pg.goto(href if href.startswith("http") else server + "/" + href.lstrip("/"))
            wait_ready(pg)
            pg.wait_for_timeout(1500)  # icons and fonts load after the first paint
            assert_no_errors(pg, href)
        assert len(seen) > 10  # the recorder saw the page's own requests
        assert not outside, sorted(set(outside))
    finally:
        ctx.close()
