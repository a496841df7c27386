"""Helpers for the dashboard's AppTest tests (``tests/test_app*.py``).

Streamlit 1.67's AppTest resets ``PagesManager.uses_pages_directory`` before every run, so with a
folder literally named ``pages/`` (fixed by the product brief) every run after the first one goes
through the legacy ``pages/`` router and skips ``app.py`` (the sidebar and the navigation
vanish). The real server decides this once per process and the first ``st.navigation`` call turns
the legacy router off for good; :func:`new_app` mimics that by patching the flag in AppTest.
The app's own way out of the legacy router (``pages/_common._leave_legacy_router``: public
``st.navigation`` + ``st.rerun``) would otherwise run on every AppTest run, and its rerun drops
the value of a button clicked in that run; ``tests/test_streamlit_compat.py`` tests that way out
with this patch undone. Test-only: the app itself reads no Streamlit internal outside
``pages/_streamlit_compat.py``.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import streamlit as st
import streamlit.testing.v1.app_test as _app_test
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


class _NavigationPagesManager(PagesManager):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False


_app_test.PagesManager = _NavigationPagesManager


def clear_caches() -> None:
    st.cache_data.clear()
    st.cache_resource.clear()


def new_app(query: dict[str, str] | None = None, timeout: float = 60) -> AppTest:
    """A fresh session of the dashboard, run once (on the Data page)."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    return at.run()


def errors(at: AppTest) -> list:
    """Every ``st.error`` element (AppTest's ``at.error``)."""
    return list(at.error)


def figure_specs(at: AppTest) -> list[dict]:
    """The plotly figures of the current page, as dicts (``{"data": [...], "layout": {...}}``)."""
    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def trace_array(trace: dict, field: str) -> np.ndarray:
    """A trace's array field, decoding plotly's base64 typed arrays."""
    v = trace[field]
    if isinstance(v, dict) and "bdata" in v:
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=np.dtype(v["dtype"]))
    return np.asarray(v)


class DownloadCapture(dict):
    """key -> data of every ``st.download_button`` drawn (AppTest exposes no payload)."""


def capture_downloads(monkeypatch) -> DownloadCapture:
    """Record what each download button would deliver (wraps ``st.download_button``)."""
    captured = DownloadCapture()
    original = st.download_button

    def spy(label, data, *args, **kwargs):
        captured[kwargs.get("key", label)] = data() if callable(data) else data
        return original(label, data, *args, **kwargs)

    monkeypatch.setattr(st, "download_button", spy)
    return captured


def run_if_asked(at, key: str):
    """Click the Run button ``key`` when the page shows one (a computation estimated under
    ``pages/_run.py``'s AUTO_SECONDS runs without a click and shows no button), then run."""
    if key in [b.key for b in at.button]:
        at.button(key=key).click()
    return at.run()
