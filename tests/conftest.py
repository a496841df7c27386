"""Shared fixtures: where the large data sets live and how a missing tool is treated.

On a user's fresh clone a missing data set or browser skips the tests that need it, with the
reason. With ``DPCORE_STRICT=1`` (set by ``.ci/run``) or ``CI=true`` the same condition fails the
test instead, so CI can never go green by skipping a required part.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from strictness import require

from dpcore.data.datasets import data_dir

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The folder holding Covertype, MNIST, ... (setting ``DPCORE_DATA_DIR``)."""
    path = data_dir()
    require(
        (path / "covertype.csv.gz").exists(),
        f"large data sets not found in {path} (set DPCORE_DATA_DIR)",
    )
    return path


@pytest.fixture(scope="session")
def chromium_path() -> str:
    """Path of the system Chromium used by the real-browser tests."""
    path = shutil.which("chromium")
    if path is None and Path("/usr/bin/chromium").exists():
        path = "/usr/bin/chromium"
    require(path is not None, "Debian chromium is not installed (apt-get install chromium)")
    try:
        import playwright  # noqa: F401
    except ImportError:
        require(False, "pip package playwright is not installed")
    return str(path)


@pytest.fixture(autouse=True)
def _isolated_lasting_ledger(tmp_path_factory, monkeypatch):
    """Every test gets its own lasting-ledger directory (never the user's ~/.local/share)."""
    monkeypatch.setenv("DPCORE_LEDGER_DIR", str(tmp_path_factory.mktemp("ledger")))


def pytest_collection_modifyitems(config, items) -> None:
    """Leave out ``acceptance`` sweeps (tens of CPU-minutes, e.g. 1,000 max-cover fits per data
    set) unless ``DPCORE_ACCEPTANCE=1`` (``make acceptance``): deselected, never skipped, so the
    suite's count says what ran."""
    if os.environ.get("DPCORE_ACCEPTANCE") == "1":
        return
    keep = [it for it in items if it.get_closest_marker("acceptance") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[it for it in items if it not in keep])
        items[:] = keep
