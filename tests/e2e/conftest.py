"""Fixtures of the real-browser tests (Debian chromium driven by pip playwright)."""

from __future__ import annotations

import pytest

try:
    import playwright  # noqa: F401
except ImportError:  # keep the rest of the suite collectable without playwright
    collect_ignore_glob = ["test_*.py"]

from e2e_helpers import LAUNCH_ARGS, serve


@pytest.fixture(scope="session")
def server():
    yield from serve()


@pytest.fixture(scope="session")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path, headless=True, args=LAUNCH_ARGS)
        yield b
        b.close()
