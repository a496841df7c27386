"""AppTest tests of the dashboard frame, the Data page and the Ledger page.

Plotly figures are asserted from the spec Streamlit sends (``proto.spec``), decoding plotly's
typed arrays (``../shared/spec/streamlit_notes.md`` §2).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from apptest_helpers import (
    clear_caches,
    errors,
    figure_specs,
    new_app,
    trace_array,
)

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.privacy.guarantees.PrivacyLeakWarning")


def test_app_renders_without_exception():
    t0 = time.perf_counter()
    at = new_app()
    elapsed = time.perf_counter() - t0
    assert not at.exception
    assert not errors(at)
    assert at.title[0].value == "Data"
    # the frame: data set, mode, budget remaining in the sidebar
    assert at.sidebar.selectbox(key="data").value == "cities"
    assert at.sidebar.radio(key="mode").value == "explore"
    assert at.sidebar.metric[0].label == "Budget remaining"
    assert elapsed < 20  # generous for a loaded CI machine; the measured time is reported


def test_data_page_scatter_shows_all_sample_points_in_lonlat_units():
    at = new_app()
    spec = figure_specs(at)[0]
    x = trace_array(spec["data"][0], "x")
    y = trace_array(spec["data"][0], "y")
    assert x.shape == (32847,)  # every city (below the 50k subsample threshold)
    assert -180 <= x.min() and x.max() <= 180 and -90 <= y.min() and y.max() <= 90
    assert "not a private release" in spec["layout"]["title"]["text"]
    assert spec["layout"]["meta"]["n_total"] == 32847
    # the declared public ball (longitude/latitude bounds) is drawn
    assert any(tr.get("name") == "declared radius" for tr in spec["data"])


def test_switching_data_set_in_sidebar():
    at = new_app()
    at.sidebar.selectbox(key="data").select("earthquakes").run()
    assert not at.exception
    spec = figure_specs(at)[0]
    assert trace_array(spec["data"][0], "x").shape == (23412,)
    at.sidebar.selectbox(key="data").select("mixture").run()
    assert not at.exception and not errors(at)
    assert trace_array(figure_specs(at)[0]["data"][0], "x").shape == (10000,)


def test_upload_good_file_becomes_the_data_set():
    at = new_app()
    rng = np.random.default_rng(0)
    pts = rng.normal(size=(50, 2))
    rows = "\n".join(f"{a:.3f},{b:.3f},label{i}" for i, (a, b) in enumerate(pts))
    at.file_uploader(key="upload").set_value(("pts.csv", f"u,v,name\n{rows}\n".encode(),
                                              "text/csv")).run()
    assert not at.exception and not errors(at)
    assert at.sidebar.selectbox(key="data").value == "upload"
    assert at.metric[0].value == "50"
    # explore mode: the public description is prefilled (text column left out, bounds read off
    # the data and said so) so the pages work at once; the radius follows from the bounds
    sp = at.session_state["data_specs"]["upload"]
    assert sp["public_description"]["columns"] == ["u", "v"]
    assert sp["radius"] > 0 and "NOT private" in sp["radius_from"]
    assert any("read off the data" in c.value for c in at.caption)


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("empty.csv", b"", "empty"),
        ("text.csv", b"a,b\nx,y\nz,w\n", "numeric"),
        ("bin.csv", bytes(range(256)) * 4, ""),
    ],
)
def test_bad_upload_shows_message_not_traceback(name, content, fragment):
    at = new_app()
    at.file_uploader(key="upload").set_value((name, content, "text/csv")).run()
    assert not at.exception
    msgs = [e.value for e in errors(at)]
    msgs = [m.replace("\\", "") for m in msgs]  # shown escaped (md_text), read as text
    assert msgs and name in msgs[0] and fragment in msgs[0].lower()
    # the previous data set stays in use
    assert at.sidebar.selectbox(key="data").value == "cities"


def test_declared_centre_and_radius_change_the_prepared_data():
    at = new_app()
    at.text_input(key="radius_cities").input("50").run()
    assert not at.exception
    spec = figure_specs(at)[0]
    x, y = trace_array(spec["data"][0], "x"), trace_array(spec["data"][0], "y")
    assert np.hypot(x, y).max() <= 50.0 * (1 + 1e-5)  # clipped to the declared ball
    assert at.metric[2].value != "0"  # rows were clipped
    at.text_input(key="center_cities").set_value("1, 2, 3").run()
    assert any("2 finite coordinate" in e.value for e in errors(at))


def test_release_mode_hides_raw_data_and_shows_proxy():
    at = new_app()
    at.sidebar.radio(key="mode").set_value("release").run()
    assert not at.exception
    spec = figure_specs(at)[0]
    assert "proxy" in spec["layout"]["title"]["text"]
    # the proxy has the data's shape, lies in the declared ball and is not the data
    x, y = trace_array(spec["data"][0], "x"), trace_array(spec["data"][0], "y")
    assert x.shape == (2000,)  # a fixed public size, not the table's n (finding 4)
    assert np.hypot(x, y).max() <= 201.25
    assert len(at.dataframe) == 1 and list(at.dataframe[0].value["column"]) == ["longitude",
                                                                                 "latitude"]
    assert "dtype" not in at.dataframe[0].value.columns  # finding 6


def test_url_state_sets_sidebar_widgets():
    at = new_app(query={"data": "earthquakes", "mode": "release", "eps": "2.0", "k": "7",
                        "seed": "11"})
    assert not at.exception
    assert at.sidebar.selectbox(key="data").value == "earthquakes"
    assert at.sidebar.radio(key="mode").value == "release"
    assert at.sidebar.select_slider(key="eps").value == 2.0
    assert at.sidebar.text_input(key="k").value == "7"
    with pytest.raises(KeyError):  # releases have no seed (finding 1)
        at.sidebar.text_input(key="seed")
    at.sidebar.radio(key="mode").set_value("explore").run()
    assert at.sidebar.text_input(key="seed").value == "11"


def test_ledger_page_empty_then_export_and_budget_edit():
    at = new_app({"mode": "release"})
    at.switch_page("pages/ledger.py").run()
    assert not at.exception
    assert at.title[0].value == "Privacy ledger"
    assert at.download_button(key="ledger_json")
    assert at.metric[0].value == "10"
    at.sidebar.text_input(key="budget_eps").set_value("3").run()
    assert at.metric[0].value == "3"
    assert any("(ε = 3, δ = 1e-06)-DP" in m.value for m in at.markdown)
    spec = figure_specs(at)[0]
    assert spec["data"][1]["x"] == [3.0] or trace_array(spec["data"][1], "x")[0] == 3.0


def test_ledger_refuses_release_over_budget_and_reset_unlocks_budget():
    from dpcore.privacy.guarantees import PureDP

    at = new_app({"mode": "release"})
    at.switch_page("pages/ledger.py").run()
    led = at.session_state["_door"][1].ledger  # the lasting ledger of the data set in use
    led.spend("first", PureDP(6.0))
    at.run()
    assert at.sidebar.text_input(key="budget_eps").disabled
    assert at.metric[1].value == "6" and at.metric[2].value == "4"
    from dpcore.privacy.guarantees import BudgetExceededError

    with pytest.raises(BudgetExceededError):
        led.spend("second", PureDP(5.0))
    assert len(led) == 1
    at.checkbox(key="ledger_reset_confirm").check().run()
    at.button(key="ledger_reset").click().run()
    assert not at.exception
    assert len(led) == 0
    assert not at.sidebar.text_input(key="budget_eps").disabled


@pytest.fixture(autouse=True)
def _clear_streamlit_caches():
    clear_caches()


def test_synthetic_generator_parameters():
    at = new_app({"data": "mixture"})
    assert trace_array(figure_specs(at)[0]["data"][0], "x").shape == (10000,)
    at.text_input(key="mix_n").set_value("2000").run()
    at.text_input(key="mix_d").set_value("5").run()
    assert not at.exception and not errors(at)
    spec = figure_specs(at)[0]
    assert trace_array(spec["data"][0], "x").shape == (2000,)
    assert spec["layout"]["xaxis"]["title"]["text"].startswith("PC1")  # d = 5: principal axes
    assert at.multiselect(key="cols_mixture").value == ["x1", "x2", "x3", "x4", "x5"]


def test_large_upload_is_drawn_as_a_seeded_subsample():
    rng = np.random.default_rng(2)
    pts = rng.normal(size=(60_000, 2))
    body = "x,y\n" + "\n".join(f"{a:.4f},{b:.4f}" for a, b in pts) + "\n"
    at = new_app()
    at.file_uploader(key="upload").set_value(("big.csv", body.encode(), "text/csv")).run()
    assert not at.exception and not errors(at)
    spec = figure_specs(at)[0]
    assert trace_array(spec["data"][0], "x").shape == (50_000,)
    assert "showing 50,000 of 60,000" in spec["layout"]["title"]["text"]


def test_start_here_links_only_to_pages_in_navigation():
    at = new_app()
    links = [el for el in at.get("page_link")]
    assert links  # the guide links the algorithm pages that are available
    nav = at.session_state["nav_pages"]
    assert "pages/data.py" in nav and "pages/ledger.py" in nav


def test_radius_read_off_the_data_or_estimated_uncharged_never_reaches_release_mode():
    """Finding 5: explore mode's "suggest a radius" and its uncharged private estimate."""
    rng = np.random.default_rng(4)
    pts = rng.normal(size=(3000, 2)) * 10
    body = "u,v\n" + "\n".join(f"{a:.4f},{b:.4f}" for a, b in pts) + "\n"
    at = new_app()
    at.file_uploader(key="upload").set_value(("p.csv", body.encode(), "text/csv")).run()
    at.run()
    sp = at.session_state["data_specs"]["upload"]
    assert sp["bounds_from_data"] == ["u", "v"]  # explore mode prefilled them from min / max
    at.sidebar.radio(key="mode").set_value("release").run()
    at.switch_page("pages/clustering.py").run()
    assert not at.exception
    assert any("read off the data" in w.value for w in at.warning)
    with pytest.raises(KeyError):
        at.button(key="clustering_release")
    at.sidebar.radio(key="mode").set_value("explore").run()
    at.switch_page("pages/data.py").run()
    at.text_input(key="pr_eps").set_value("1").run()
    at.button(key="private_radius").click().run()  # explore: uncharged, so not public
    assert "estimated privately" in at.session_state["data_specs"]["upload"]["radius_from"]
    at.sidebar.radio(key="mode").set_value("release").run()
    at.switch_page("pages/clustering.py").run()
    assert any("needs a public radius" in w.value or "read off the data" in w.value
               for w in at.warning)
    with pytest.raises(KeyError):
        at.button(key="clustering_release")
    # Bounds the column names make public (latitude, longitude) are usable as they are.
    at.sidebar.radio(key="mode").set_value("explore").run()
    at.switch_page("pages/data.py").run()
    geo = "latitude,longitude\n" + "\n".join(f"{a / 10:.4f},{b / 10:.4f}" for a, b in pts)
    at.file_uploader(key="upload").set_value(("g.csv", geo.encode(), "text/csv")).run()
    assert not at.session_state["data_specs"]["upload"]["bounds_from_data"]
    at.sidebar.radio(key="mode").set_value("release").run()
    at.switch_page("pages/clustering.py").run()
    assert not any("needs a public radius" in w.value or "read off the data" in w.value
                   for w in at.warning)
    assert at.button(key="clustering_n_estimate")  # an upload's n is private: estimate it first
    desc = at.session_state["_door"][1].description  # side B's description, as the door's
    assert (list(desc.lower), list(desc.upper), desc.n) == ([-90, -180], [90, 180], None)
    at.sidebar.radio(key="mode").set_value("explore").run()
    at.switch_page("pages/data.py").run()
    at.checkbox(key="desc_scaled").check()
    at.button(key="desc_apply").click().run()
    at.sidebar.radio(key="mode").set_value("release").run()
    at.switch_page("pages/clustering.py").run()
    desc = at.session_state["_door"][1].description  # the table is scaled: so are its bounds
    assert (list(desc.lower), list(desc.upper)) == ([-1, -1], [1, 1])


def test_parquet_and_tsv_uploads():
    import io

    import pandas as pd

    df = pd.DataFrame({"a": np.arange(30.0), "b": np.arange(30.0) ** 0.5, "tag": ["x"] * 30})
    buf = io.BytesIO()
    df.to_parquet(buf)
    at = new_app()
    at.file_uploader(key="upload").set_value(("t.parquet", buf.getvalue(),
                                              "application/octet-stream")).run()
    assert not at.exception and not errors(at)
    # numeric columns only
    assert at.session_state["data_specs"]["upload"]["public_description"]["columns"] == ["a", "b"]
    tsv = df.to_csv(sep="\t", index=False).encode()
    at.file_uploader(key="upload").set_value(("t.tsv", tsv, "text/tab-separated-values")).run()
    assert not at.exception and not errors(at)
    assert at.metric[0].value == "30"


def test_release_mode_data_page_reveals_no_data_statistic():
    at = new_app({"mode": "release"})
    assert not [m for m in at.metric if m.label != "Budget remaining"]  # no "Rows" (finding 4)
    assert any("declared in the public description" in c.value for c in at.caption)
    with pytest.raises(KeyError):
        at.file_uploader(key="upload")  # uploads and declarations belong to explore mode
    with pytest.raises(KeyError):
        at.button(key="suggest_radius")
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "rows" not in sidebar


def test_page_whose_algorithm_does_not_import_is_not_in_the_navigation(monkeypatch):
    import sys

    # the registry row of the page's mechanism names this module: importing it now raises
    monkeypatch.setitem(sys.modules, "dpcore.release.sensitivity_release", None)
    at = new_app()
    assert not at.exception
    nav = at.session_state["nav_pages"]
    assert "pages/sensitivity.py" not in nav
    assert {"pages/data.py", "pages/ledger.py", "pages/importance.py"} <= set(nav)
