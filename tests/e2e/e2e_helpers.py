"""Helpers shared by the real-browser tests: start ``streamlit run app.py``, wait for a run."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
               "--disable-background-networking", "--disable-component-update",
               "--disable-extensions", "--no-first-run"]
READY = "[data-testid='stApp'][data-test-script-state='notRunning']"
ERRORS = "[data-testid='stException'], [data-testid='stAlertContentError']"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve():
    """Start ``streamlit run app.py`` on a free port; yield its URL once healthy."""
    port = _free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app.py"),
           "--server.port", str(port), "--server.address", "127.0.0.1",
           "--server.headless", "true", "--server.fileWatcherType", "none",
           "--browser.gatherUsageStats", "false"]
    ledger_dir = tempfile.mkdtemp(prefix="dpcore-ledger-")  # never the user's own ledger
    # The server's output goes to a file, never to a pipe nobody reads: a session-long server
    # (dozens of tests) fills a pipe's 64 KiB and then blocks in the first thread that logs.
    log = tempfile.TemporaryFile(prefix="dpcore-streamlit-")
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
                            env=os.environ | {"PYTHONUNBUFFERED": "1",
                                              "DPCORE_LEDGER_DIR": ledger_dir})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    try:
        while True:
            if proc.poll() is not None:
                log.seek(0)
                out = log.read().decode(errors="replace")
                pytest.fail(f"streamlit exited early ({proc.returncode}):\n{out[-2000:]}")
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.read().strip() == b"ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail("streamlit did not become healthy within 60 s")
            time.sleep(0.3)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if os.environ.get("DPCORE_E2E_LOG_SIZES"):  # how much a server wrote (a measurement)
            with open(os.environ["DPCORE_E2E_LOG_SIZES"], "a") as f:
                f.write(f"streamlit on {url} wrote {os.fstat(log.fileno()).st_size} bytes\n")
                log.seek(0)
                f.write(log.read().decode(errors="replace")[-3000:] + "\n")
        log.close()


def wait_ready(pg) -> None:
    """Wait until Streamlit has connected and finished the script run an action triggered."""
    pg.wait_for_timeout(400)  # a rerun starts asynchronously after an interaction
    pg.wait_for_selector("[data-testid='stApp'][data-test-connection-state='CONNECTED']")
    pg.wait_for_selector(READY)
    pg.wait_for_selector("[data-testid='stMain'] h1")


def _error_html(errs) -> list[str]:
    return [e.evaluate("el => (el.closest('[data-testid=stElementContainer]') || el)"
                       ".outerHTML.slice(0, 600)") for e in errs.all()]


def assert_no_errors(pg, where: str) -> None:
    """Fail on an error element that is still there once the page has settled: under load a
    rerun in flight can leave stale, empty error elements for a moment (seen at load ≈ 6 and in
    CI: three with no text on the Importance page). An error element with no text at all is no
    message of the app's (every ``st.error`` and exception has one): the page is reloaded once
    and checked again, and the glitch is printed; a real error persists and keeps its text."""
    errs = pg.locator(ERRORS)
    if errs.count():
        pg.wait_for_timeout(1500)
        wait_ready(pg)
        if errs.count() and not any(t.strip() for t in errs.all_inner_texts()):
            print(f"{where}: {errs.count()} error element(s) without text, reloading once: "
                  f"{_error_html(errs)}")
            pg.reload()
            wait_ready(pg)
            pg.wait_for_timeout(1500)
        if errs.count():
            pytest.fail(f"{where}: Streamlit error element(s): {errs.all_inner_texts()}; "
                        f"HTML: {_error_html(errs)}")
