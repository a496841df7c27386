"""The sidebar's description of the data in use (issue 27.8): right after an upload it said
"radius not declared" while the page showed one (it was drawn before the page ran)."""

from __future__ import annotations

import io

import pytest
from apptest_helpers import clear_caches, new_app

pytestmark = pytest.mark.filterwarnings(
    "ignore::dpcore.privacy.guarantees.PrivacyLeakWarning", "ignore::UserWarning"
)


def test_sidebar_shows_the_uploads_radius_on_the_upload_run():
    """Fails if the sidebar's caption is written before the Data page declares the upload's
    bounds (the caption then lags one run behind)."""
    from sklearn import datasets

    clear_caches()
    at = new_app()
    buf = io.StringIO()
    datasets.load_wine(as_frame=True).frame.to_csv(buf, index=False)
    at.file_uploader(key="upload").set_value(("wine.csv", buf.getvalue().encode(), "text/csv"))
    at.run()
    assert at.session_state["data"] == "upload"
    captions = [c.value for c in at.sidebar.caption]
    line = next(c for c in captions if "rows ×" in c)
    assert "radius not declared" not in line
    assert "178 rows" in line
    assert any("Uploaded file wine" in c for c in captions)
