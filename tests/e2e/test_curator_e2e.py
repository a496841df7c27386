"""The curator deployment in a real browser: ``dpcore app --private … --schema … --budget …``.

Releases, a reload, a second tab and a server restart all see one shrinking budget; an overspend
is refused before anything is computed; no widget or URL (``?mode=explore``, page paths) reaches
explore mode, raw data, an upload or a reset.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from e2e_helpers import _free_port, assert_no_errors, wait_ready

# The same xdist group as the other browser tests (``--dist loadgroup``): one worker runs them
# all, two servers and two Chromiums on a 2-core machine starve each other into timeouts.
pytestmark = [pytest.mark.e2e, pytest.mark.xdist_group("e2e")]
ROOT = Path(__file__).resolve().parents[2]


class Curator:
    """``dpcore app --private`` as the curator runs it (in its own process group: the clean-up
    stops whatever it started, even if it is broken)."""

    def __init__(self, tmp: Path) -> None:
        rng = np.random.default_rng(8)
        self.data = tmp / "private.csv"
        pd.DataFrame(rng.normal(0, 2, (500, 2)), columns=["a", "b"]).to_csv(self.data,
                                                                          index=False)
        self.schema = tmp / "schema.json"
        self.schema.write_text(json.dumps({"columns": ["a", "b"], "lower": [-8, -8],
                                           "upper": [8, 8], "n": 500}))
        self.ledger = tmp / "ledger"
        self.proc: subprocess.Popen | None = None
        self.url = ""
        self.token = ""

    def grant(self, name: str, epsilon: str, delta: str) -> str:
        """``dpcore ledger grant``: the analyst's token (printed once)."""
        out = subprocess.run([sys.executable, "-m", "dpcore.cli", "-q", "ledger", "grant", name,
                              "--dataset", "private", "--epsilon", epsilon, "--delta", delta,
                              "--ledger-dir", str(self.ledger)], cwd=ROOT, check=True,
                             capture_output=True, text=True)
        return out.stdout.strip()

    def start(self) -> str:
        port = _free_port()
        cmd = [sys.executable, "-m", "dpcore.cli", "-q", "app", "--port", str(port),
               "--private", str(self.data), "--schema", str(self.schema), "--budget", "3,1e-5",
               "--ledger-dir", str(self.ledger)]
        env = {k: v for k, v in os.environ.items() if not k.startswith("DPCORE_PRIVATE")}
        self.proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, start_new_session=True,
                                     env=env | {"PYTHONUNBUFFERED": "1"})
        self.url = f"http://127.0.0.1:{port}"  # where `dpcore app` listens by default
        deadline = time.monotonic() + 90
        while True:
            if self.proc.poll() is not None:
                pytest.fail(f"dpcore app exited: {self.proc.stdout.read().decode()[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        if not self.token:  # the curator grants an analyst the whole budget
                            self.token = self.grant("ann", "3", "1e-5")
                        return self.url
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("the curator deployment did not become healthy within 90 s")
            time.sleep(0.3)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = None


@pytest.fixture
def curator(tmp_path):
    c = Curator(tmp_path)
    yield c
    c.stop()


def history(page):
    """The ledger page's history table (its "account" column): the kept outputs below it are a
    second table whose rows also start with the release's label."""
    return page.locator("table", has_text="account")


def kept_outputs(page):
    """The ledger page's table of kept outputs (one row per released point)."""
    return page.locator("table").filter(has_not_text="account")


def remaining(pg) -> str:
    metric = pg.get_by_test_id("stSidebar").locator("[data-testid='stMetric']",
                                                    has_text="Budget remaining")
    return metric.locator("[data-testid='stMetricValue']").inner_text().strip()


def login(pg, name: str, token: str) -> None:
    """The login form of a curator deployment (a new session: every tab, reload, goto)."""
    dialog = pg.get_by_role("dialog")  # e.g. Streamlit's "Page not found" for /data
    if dialog.count():
        pg.keyboard.press("Escape")
        dialog.wait_for(state="hidden")
    pg.get_by_label("Analyst name").fill(name)
    pg.get_by_label("Token").fill(token)
    pg.get_by_role("button", name="Log in").click()
    wait_ready(pg)


def open_page(ctx, url: str, token: str = ""):
    pg = ctx.new_page()
    pg.set_default_timeout(60_000)
    pg.goto(url)
    wait_ready(pg)
    if token:
        login(pg, "ann", token)
    return pg


def test_curator_deployment_one_lasting_budget_and_no_way_out(curator, browser):
    url = curator.start()
    ctx = browser.new_context(viewport={"width": 1400, "height": 1800})
    try:
        pg = open_page(ctx, url + "/importance", curator.token)
        assert remaining(pg) == "ε 3"
        pg.get_by_role("button", name="Release DP-Lloyd centres").click()
        wait_ready(pg)
        pg.locator("[data-testid='stAlertContentSuccess']", has_text="released under").wait_for()
        assert_no_errors(pg, "release")
        assert remaining(pg) == "ε 2"
        pg.reload()
        wait_ready(pg)
        login(pg, "ann", curator.token)
        assert remaining(pg) == "ε 2"  # a reload
        tab = open_page(ctx, url + "/ledger", curator.token)  # a second tab
        assert remaining(tab) == "ε 2"
        history(tab).locator("[data-testid='glide-cell-1-0']",
                             has_text="DP-Lloyd centres").wait_for(state="attached")
        assert tab.get_by_role("button", name="Reset ledger").count() == 0

        # No widget or URL reaches explore mode, raw data, an upload or a reset.
        for path in ("/?mode=explore", "/data?mode=explore&data=cities", "/clustering?mode=explore",
                     "/ledger?mode=explore", "/utility?mode=explore&seed=3"):
            tab.goto(url + path)
            wait_ready(tab)
            login(tab, "ann", curator.token)
            sidebar = tab.get_by_test_id("stSidebar")
            assert sidebar.get_by_text("explore", exact=True).count() == 0, path
            assert sidebar.get_by_text("Seed").count() == 0, path
            assert tab.locator("[data-testid='stFileUploader']").count() == 0, path
            assert tab.get_by_text("explore mode: these views show the data").count() == 0, path
            assert tab.get_by_role("button", name="Reset ledger").count() == 0, path
            assert remaining(tab) == "ε 2", path

        # An overspend (ε = 5 > 2 left) is refused before anything is computed.
        pg.goto(url + "/importance?eps=5.0")
        wait_ready(pg)
        login(pg, "ann", curator.token)
        pg.get_by_role("button", name="Release DP-Lloyd centres").click()
        wait_ready(pg)
        pg.locator("[data-testid='stAlertContentError']", has_text="Release refused").wait_for()
        assert remaining(pg) == "ε 2"
    finally:
        ctx.close()

    curator.stop()  # a server restart: the ledger file stays
    url = curator.start()
    ctx = browser.new_context(viewport={"width": 1400, "height": 1800})
    try:
        pg = open_page(ctx, url + "/ledger", curator.token)
        assert remaining(pg) == "ε 2"
        history(pg).locator("[data-testid='glide-cell-1-0']",
                            has_text="DP-Lloyd centres").wait_for(
            state="attached")
    finally:
        ctx.close()
