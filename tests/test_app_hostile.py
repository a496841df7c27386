"""Hostile input against the dashboard (AppTest, fast): uploads, URLs, sessions that must not wedge.

Issue 14, findings 2, 5, 7, 9, 10. What each test catches:

* ``test_upload_fuzz``: a page that writes a column name, file name, cell value or an error
  message quoting one through Markdown unescaped (an ``![t](http://127.0.0.1:9/x.png)`` column
  makes the browser fetch the URL), or any upload that ends in a traceback;
* ``test_bad_url_is_reported_and_page_renders``: a bad URL value dropped without a word, or
  one that crashes the page (``?k=`` with 5,000 digits reached ``number_input``'s parser);
* ``test_huge_values_upload_leaves_the_session_usable``: ±1e308 rows that wedge the session
  (a NaN radius stored, an infinite bound width), or the same error shown twice;
* ``test_csv_download_neutralises_formula_headers``: a download that writes ``=HYPERLINK(…)``
  as a header a spreadsheet runs.
"""

from __future__ import annotations

import gzip
import re

import pytest
from apptest_helpers import capture_downloads, errors, new_app
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.filterwarnings("ignore::dpcore.privacy.guarantees.PrivacyLeakWarning")

HOSTILE_NAMES = [
    "![t](http://127.0.0.1:9/x.png)",
    "[web](http://127.0.0.1:9/)",
    '=HYPERLINK("http://127.0.0.1:9","x")',
    "=cmd|' /C calc'!A0",
    ":red[alarm] **bold** $x^2$",
    "<img src=http://127.0.0.1:9/y.png>",
    "www.example.com",
]
NUMBERS = ["1", "-2.5", "1e308", "-1e308", "nan", "", "1" + "0" * 400, "0x1p3", "inf", "abc"]


def _strip_escapes(text: str) -> str:
    """``text`` with every backslash-escaped character replaced by ``_`` (what is left would be
    read as Markdown syntax)."""
    return re.sub(r"\\.", "_", text, flags=re.S)


def _markdown_strings(at) -> list[str]:
    """Every string the page renders as Markdown: bodies, alerts, labels of widgets, expanders
    and metrics (dataframes, code and plain text are not Markdown)."""
    out = []
    for kind in ("markdown", "caption", "warning", "error", "info", "success", "title",
                 "header", "subheader"):
        out += [str(e.value) for e in getattr(at, kind)]
    for kind in ("expander", "metric", "button", "selectbox", "multiselect", "number_input",
                 "text_input", "radio", "checkbox", "toggle", "slider", "select_slider"):
        out += [str(getattr(e, "label", "") or "") for e in getattr(at, kind)]
    out += [str(o) for r in at.radio for o in r.options]  # radio options are Markdown
    return out


def assert_no_live_markdown(at) -> None:
    for text in _markdown_strings(at):
        live = _strip_escapes(text)
        assert "127.0.0.1:9" not in live, text
        assert "](" not in live, text  # a link or an image
        assert "<img" not in live.lower() and "<a " not in live.lower(), text
        assert "www.example.com" not in live, text  # a GFM autolink


def _csv_bytes(names: list[str], rows: list[list[str]]) -> bytes:
    def cell(x: str) -> str:
        return '"' + x.replace('"', '""') + '"'

    lines = [",".join(cell(n) for n in names)] + [",".join(r) for r in rows]
    return ("\n".join(lines) + "\n").encode()


@st.composite
def uploads(draw):
    """(file name, bytes): hostile headers and values, random bytes, gzip (one or several
    members), UTF-8 with BOM, UTF-16."""
    kind = draw(st.sampled_from(["csv", "csv", "csv", "bytes"]))
    stem = draw(st.sampled_from([*HOSTILE_NAMES, "data"]))
    if kind == "bytes":
        return stem + ".csv", draw(st.binary(max_size=400))
    d = draw(st.integers(1, 3))
    names = draw(st.lists(st.sampled_from([*HOSTILE_NAMES, "a", "b"]), min_size=d, max_size=d))
    n = draw(st.integers(1, 12))
    rows = [[draw(st.sampled_from(NUMBERS)) for _ in range(d)] for _ in range(n)]
    raw = _csv_bytes(names, rows)
    enc = draw(st.sampled_from(["utf-8", "utf-8-sig", "utf-16", "gzip", "gzip2"]))
    if enc in ("utf-8-sig", "utf-16"):
        return stem + ".csv", raw.decode().encode(enc)
    if enc == "gzip":
        return stem + ".csv.gz", gzip.compress(raw)
    if enc == "gzip2":  # two members: both must be read (finding 7)
        half = raw.index(b"\n") + 1 + (len(raw) - raw.index(b"\n") - 1) // 2
        cut = raw.rfind(b"\n", 0, half) + 1
        return stem + ".csv.gz", gzip.compress(raw[:cut]) + gzip.compress(raw[cut:])
    return stem + ".csv", raw


@pytest.fixture(scope="module")
def app():
    return new_app({"data": "mixture"})


@settings(max_examples=30, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(upload=uploads())
def test_upload_fuzz(app, upload):
    """One session, many uploads: never a traceback, never live Markdown from the file."""
    name, data = upload
    app.file_uploader(key="upload").set_value((name, data, "text/csv")).run()
    assert not app.exception, (name, data[:80], app.exception)
    assert_no_live_markdown(app)
    # an error is shown once, not in the sidebar and on the page
    msgs = [e.value for e in errors(app)]
    assert len(msgs) == len(set(msgs))


def test_hostile_column_names_on_every_page():
    """A good upload with hostile names, then every page of the navigation."""
    at = new_app({"data": "mixture"})
    data = _csv_bytes(HOSTILE_NAMES[:3], [[f"{i % 7}", f"{i % 5}", f"{i % 3}"]
                                          for i in range(60)])
    at.file_uploader(key="upload").set_value((HOSTILE_NAMES[0] + ".csv", data,
                                              "text/csv")).run()
    assert not at.exception and at.session_state["data"] == "upload"
    assert_no_live_markdown(at)
    for page in ("pages/importance.py", "pages/friendlycore.py", "pages/clustering.py",
                 "pages/sensitivity.py", "pages/ledger.py"):
        at.switch_page(page).run()
        assert not at.exception, (page, at.exception)
        assert_no_live_markdown(at)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("k", "9" * 5000),
        ("k", "abc"),
        ("k", "0"),
        ("eps", "0"),
        ("eps", "nan"),
        ("mode", "hack"),
        ("data", "../../etc/passwd"),
        ("seed", "-1"),
        ("clu_algs", "rm -rf"),
        ("sampler", "![t](http://127.0.0.1:9/x.png)"),
    ],
)
def test_bad_url_is_reported_and_page_renders(key, value):
    at = new_app({key: value})
    assert not at.exception
    assert at.title and at.title[0].value == "Data"  # the page rendered
    said = [_strip_escapes(w.value).replace("_", "") for w in at.warning]
    plain = [w.value.replace("\\", "") for w in at.warning]
    assert any(p.startswith(f"ignored {key}=") for p in plain), plain
    assert not any("127.0.0.1:9" in s for s in said)
    assert key not in at.query_params  # the bad value left the URL: the widget has its default


def test_good_url_values_still_apply():
    at = new_app({"k": "7", "eps": "2.0"})
    assert not at.exception and not at.warning
    assert at.sidebar.text_input(key="k").value == "7"
    assert at.sidebar.select_slider(key="eps").value == 2.0


def test_huge_values_upload_leaves_the_session_usable():
    at = new_app({"data": "mixture"})
    data = b"a,b\n1e308,-1e308\n-1e308,1e308\n1,2\n3,4\n"
    at.file_uploader(key="upload").set_value(("huge.csv", data, "text/csv")).run()
    assert not at.exception
    msgs = [e.value.replace("\\", "") for e in errors(at)]
    assert len(msgs) == 1 and "supported range" in msgs[0]  # once, naming the limit
    sp = at.session_state["data_specs"].get("upload", {})
    assert sp.get("radius") is None  # nothing NaN / inf was stored
    # the other pages say what is missing; none shows a traceback
    at.switch_page("pages/clustering.py").run()
    assert not at.exception
    # a sample still works in the same session, and the radius suggestion on it is valid
    at.switch_page("pages/data.py").run()
    at.sidebar.selectbox(key="data").select("mixture").run()
    assert not at.exception and not errors(at)
    at.text_input(key="radius_mixture").input("1e300").run()  # beyond the range
    assert not at.exception
    assert any("radius" in e.value for e in errors(at))
    assert at.session_state["data_specs"]["mixture"]["radius"] <= 1e100


@pytest.mark.parametrize("typed", ["1e309", "1e-300", "-3", "abc", "inf"])
def test_radius_out_of_range_is_refused_and_the_shown_value_is_the_used_one(typed):
    """Bug caught (issue 26): ``1e309`` typed as the public radius became the widget's minimum
    1e-9 (Clustering then ran on data collapsed to a point), and ``1e-300`` stayed on screen
    while 201.2 was used. Now: a message, the previous value shown again and still used."""
    at = new_app({"data": "cities"})
    field = at.text_input(key="radius_cities")
    before = at.session_state["data_specs"]["cities"]["radius"]
    assert float(field.value) == before  # shown = used
    field.input(typed).run()
    assert not at.exception
    msgs = [e.value.replace("\\", "") for e in errors(at)]
    assert any("was not used" in m and "previous value" in m for m in msgs), msgs
    used = at.session_state["data_specs"]["cities"]["radius"]
    assert used == before
    assert float(at.text_input(key="radius_cities").value) == used  # shown = used
    at.text_input(key="radius_cities").input("150").run()  # a valid value is taken as typed
    assert at.session_state["data_specs"]["cities"]["radius"] == 150.0
    assert at.text_input(key="radius_cities").value == "150" and not errors(at)


def test_csv_download_neutralises_formula_headers(monkeypatch):
    got = capture_downloads(monkeypatch)
    at = new_app({"data": "mixture"})
    data = _csv_bytes(['=HYPERLINK("http://127.0.0.1:9","x")', "+b"],
                      [[f"{i % 7}", f"{i % 5}"] for i in range(60)])
    at.file_uploader(key="upload").set_value(("f.csv", data, "text/csv")).run()
    at.switch_page("pages/importance.py").run()
    assert not at.exception
    csvs = [v for v in got.values() if isinstance(v, str) and "HYPERLINK" in v]
    assert csvs, list(got)
    for text in csvs:
        header = text.splitlines()[0]
        assert not re.search(r'(^|,)"?[=+\-@]', header), header


@pytest.mark.slow
def test_one_feature_upload_works_on_every_page():
    """Bug caught (issue 26): a one-column upload broke Clustering and Importance with
    ``the box has 1 dimension(s), the points 2`` (the plots assume d ≥ 2)."""
    import numpy as np

    at = new_app({"data": "mixture"})
    data = ("x\n" + "\n".join(f"{v:.4f}" for v in np.random.default_rng(0).normal(size=200))
            ).encode()
    at.file_uploader(key="upload").set_value(("one.csv", data, "text/csv")).run()
    assert not at.exception
    for page in ("clustering", "importance", "friendlycore", "utility", "sensitivity"):
        at.switch_page(f"pages/{page}.py").run(timeout=180)
        assert not at.exception, (page, [e.message for e in at.exception])


def _missing_upload() -> bytes:
    import numpy as np

    rng = np.random.default_rng(0)
    rows = ["a,b"] + [f"{a:.3f}," + ("" if i % 10 == 3 else "N/A" if i % 10 == 7 else
                                     f"{b:.3f}") for i, (a, b) in enumerate(
        rng.normal(size=(100, 2)))]
    return "\n".join(rows).encode()


@pytest.mark.slow
@pytest.mark.parametrize("choice", ["drop those rows", "fill with a constant"])
def test_missing_cells_one_choice_on_the_data_page_same_in_both_modes(choice):
    """Bug caught (issue 27.2): explore mode said "drop or fill them first" with no control to
    do it, while release replaced such cells with the centre (the modes disagreed). Now one
    choice on the Data page makes the table usable, the release door prepares exactly the same
    matrix, and the count of affected rows is shown in explore mode only."""
    import numpy as np

    at = new_app({"data": "mixture"})
    at.file_uploader(key="upload").set_value(("m.csv", _missing_upload(), "text/csv")).run()
    assert not at.exception
    # column b holds empty cells and 'N/A': offered as a column with missing cells
    at.session_state["data_specs"]["upload"]  # the upload's spec exists
    how = at.selectbox(key="miss_how_upload_b")
    how.select(choice).run()
    assert not at.exception and not errors(at), [e.value for e in errors(at)]
    ds = at.session_state["_prepared"][1]
    assert ds.n == (80 if choice.startswith("drop") else 100)
    assert any("Rows affected: 20" in c.value for c in at.caption)  # explore: the count
    X_explore = ds.X.copy()
    # the same bounds typed as public ones (the description's editor), then release mode
    sp = at.session_state["data_specs"]["upload"]
    sp["bounds_from_data"], sp["radius_source"] = [], "public_bounds"
    at.sidebar.radio(key="mode").set_value("release").run()
    assert not at.exception
    door = at.session_state["_door"][1]
    expected = "drop" if choice.startswith("drop") else {"fill": 0.0}
    assert dict(door.description.missing) == {"b": expected}
    np.testing.assert_array_equal(door.description.prepare(at.session_state["uploaded"]["df"]),
                                  X_explore)
    texts = [c.value for c in at.caption] + [m.value for m in at.markdown]
    assert not any("Rows affected" in t or "missing cell(s)" in t for t in texts)  # no count
    assert any("rows dropped" in t or "filled with 0" in t for t in texts)
