"""The reports' figures are usable: images in the markdown, offline HTML, non-blank in a browser.

* every report embeds PNG images that exist (so it reads on any code host);
* no HTML figure loads anything from the network (the old ones pulled plotly from a CDN and were
  blank offline); each loads the one shared ``plotly.min.js`` next to it;
* (e2e) headless Debian chromium renders every HTML figure offline into a non-blank screenshot —
  the bug this catches: a figure whose plotly bundle is missing or remote renders as a white page;
* the renderer itself: a figure with a band, a reference line and a log axis produces a PNG and an
  HTML with one legend per panel and the method's fixed colour.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest

from dpcore.reproduce._figures import METHOD_COLORS, Panel, Series, method_color, save_figure

REPORTS = Path(__file__).resolve().parents[1] / "docs" / "reproduction"
MD = sorted(REPORTS.glob("*.md"))
HTML = sorted((REPORTS / "figures").glob("*.html"))


def _non_blank(png: bytes) -> float:
    """Share of pixels that are not (near) white."""
    from PIL import Image

    img = np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=float)
    return float(np.mean(img < 235))


@pytest.mark.parametrize("md", MD, ids=lambda p: p.name)
def test_report_embeds_existing_png_images(md):
    text = md.read_text(encoding="utf-8")
    images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", text)
    assert images, f"{md.name} embeds no static figure"
    for rel in images:
        assert (md.parent / rel).exists(), f"{md.name} embeds missing {rel}"


@pytest.mark.parametrize("html", HTML, ids=lambda p: p.name)
def test_html_figures_are_offline(html):
    text = html.read_text(encoding="utf-8")
    assert "cdn.plot.ly" not in text and "https://cdn" not in text
    scripts = re.findall(r'<script[^>]+src="([^"]+)"', text)
    assert scripts == ["plotly.min.js"], scripts
    assert (html.parent / "plotly.min.js").stat().st_size > 1_000_000
    assert html.stat().st_size < 400_000, "the HTML must not inline its own copy of plotly"


def test_renderer_writes_png_and_html_with_legends_and_fixed_colours(tmp_path):
    x = np.array([1.0, 10.0, 100.0])
    panels = [Panel(f"p{i}", "ε", "cost",
                    [Series("core", x, x + 1, x, x + 2),
                     Series("reference", x, np.full(3, 5.0), reference=True)],
                    log_x=True, log_y=True) for i in range(2)]
    md = save_figure(tmp_path / "figures", "demo", "demo", panels)
    assert "![demo](figures/demo.png)" in md
    png = (tmp_path / "figures" / "demo.png").read_bytes()
    assert _non_blank(png) > 0.02
    html = (tmp_path / "figures" / "demo.html").read_text()
    assert '"legend2"' in html  # one legend per panel
    assert METHOD_COLORS["core"] in html and method_color("core") == METHOD_COLORS["core"]
    assert method_color("some new method") == method_color("some new method")


def _in_fresh_thread(fn):
    """Run ``fn()`` in a new thread and return its result: the e2e tests keep a session-wide sync
    Playwright (an event loop) in the worker's main thread, where a second one refuses to start."""
    import threading

    out: dict = {}

    def target() -> None:
        try:
            out["value"] = fn()
        except BaseException as exc:  # re-raised in the test's thread
            out["error"] = exc

    t = threading.Thread(target=target)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.mark.e2e
def test_every_html_figure_renders_non_blank_offline(chromium_path):
    from playwright.sync_api import sync_playwright

    assert HTML, "no HTML figures in docs/reproduction/figures"
    args = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]

    def shoot() -> list[str]:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path, headless=True, args=args)
            ctx = browser.new_context(viewport={"width": 1200, "height": 800}, offline=True)
            page = ctx.new_page()
            failures = []
            for html in HTML:
                page.goto(html.resolve().as_uri())
                page.wait_for_selector(".main-svg", timeout=30_000)
                shot = page.screenshot()
                if _non_blank(shot) < 0.002:  # a blank page is 0; the sparsest figure ≈ 0.004
                    failures.append(html.name)
            browser.close()
        return failures

    failures = _in_fresh_thread(shoot)
    assert not failures, f"blank figures: {failures}"


@pytest.mark.e2e
def test_blank_detector_flags_a_figure_without_its_plotly_bundle(chromium_path, tmp_path):
    """Mutation check: the same figure pointing at a missing bundle renders blank and fails."""
    from playwright.sync_api import sync_playwright

    panels = [Panel("p", "x", "y", [Series("core", [1, 2], [1, 2])])]
    save_figure(tmp_path / "figures", "demo", "demo", panels)
    (tmp_path / "figures" / "plotly.min.js").unlink()
    def shoot() -> bytes:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=chromium_path, headless=True,
                                        args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1200, "height": 800})
            page.goto((tmp_path / "figures" / "demo.html").as_uri())
            page.wait_for_timeout(1500)
            shot = page.screenshot()
            browser.close()
        return shot

    assert _non_blank(_in_fresh_thread(shoot)) < 0.002
