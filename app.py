"""The dpcore dashboard: the frame (navigation and sidebar) shared by every page.

Run with ``streamlit run app.py`` (or ``make app``). A page appears in the navigation only when
the dpcore module it is built on imports (issue 7: never a stub page).

Started by ``dpcore app --private DATA --schema SCHEMA --budget B`` (environment variables of
:mod:`dpcore.release.curator`), the frame is locked in release mode: no data choice, no mode switch,
no seed, no budget edit; every page then shows only its release view (``pages/_release.py``).
"""

from __future__ import annotations

import importlib
from pathlib import Path

import streamlit as st

from dpcore.app.url_state import app_query_spec, clean_query_params
from dpcore.core.text import md_text
from dpcore.data.datasets import SAMPLE_DATASETS
from dpcore.data.limits import check_count, check_number
from dpcore.privacy.guarantees import PrivacyLedger
from dpcore.release.registry import page_available
from pages._common import (
    DATA_KEYS,
    EPSILON_GRID,
    SYNTHETIC,
    UPLOAD,
    budget_from_state,
    checked_number,
    curator,
    current_dataset,
    favicon,
    init_state,
    is_release_mode,
    ledger,
)
from pages._lifecycle import start_reaper
from pages._login import login_gate

ROOT = Path(__file__).resolve().parent

# (file, title, icon); a page that shows mechanisms appears when one of its registry rows
# imports here (dpcore.release.registry.page_available: a module still being written, or a
# missing optional library, hides the page instead of breaking the app)
PAGES: list[tuple[str, str, str]] = [
    ("pages/data.py", "Data", ":material/table:"),
    ("pages/importance.py", "Importance sampling", ":material/scatter_plot:"),
    ("pages/friendlycore.py", "FriendlyCore", ":material/hub:"),
    ("pages/clustering.py", "Clustering", ":material/bubble_chart:"),
    ("pages/utility.py", "Privacy–utility", ":material/show_chart:"),
    ("pages/sensitivity.py", "Sensitivity sampler", ":material/functions:"),
    ("pages/ledger.py", "Privacy ledger", ":material/account_balance:"),
    ("pages/tour.py", "Guided tour", ":material/school:"),
    ("pages/game.py", "Privacy game", ":material/casino:"),
]
#: Pages that show raw explore-mode views only: never in a curator deployment's navigation.
EXPLORE_ONLY = {"pages/game.py"}


@st.cache_resource(show_spinner=False)
def available(page: str) -> bool:
    """Whether the page ``pages/<page>.py`` can run here (see :data:`PAGES`)."""
    try:
        return page_available(page)
    except Exception:  # an algorithm still being written must not break the app
        return False


def navigation_pages() -> list:
    pages, shown = [], {}
    locked = curator() is not None
    for path, title, icon in PAGES:
        if locked and path in EXPLORE_ONLY:
            continue
        if (ROOT / path).exists() and available(Path(path).stem):
            pages.append(st.Page(path, title=title, icon=icon, default=path == "pages/data.py"))
            shown[path] = (title, icon)
    # The pages can link to each other only when they are in the navigation.
    st.session_state["nav_pages"] = shown
    return pages


def _data_label(key: str) -> str:
    if key in SAMPLE_DATASETS:
        return SAMPLE_DATASETS[key].title
    if key == SYNTHETIC:
        return "Synthetic Gaussian mixture (public by construction)"
    up = st.session_state.get("uploaded")
    return f"Uploaded file {md_text(up['name'], max_chars=80)}" if up else "No file uploaded yet"


def budget_fields(locked: bool) -> None:
    """The total budget's three fields: checked text, never clamped (issue 26)."""
    for label, key, lo, hi, why in (
            ("ε", "budget_eps", 0.01, 1000.0, ""),
            ("δ", "budget_delta", 0.0, 0.1, ""),
            ("γ (random DP)", "budget_gamma", 0.0, 0.5, "Only the sensitivity sampler spends γ. ")):
        checked_number(st, label, key,
                       lambda v, n=label, lo=lo, hi=hi: check_number(n, v, lo, hi),
                       optional=False, disabled=locked,
                       help=f"{why}From {lo:g} to {hi:g}; a value outside is refused, never "
                            "clamped.")


def budget_sidebar() -> None:
    """Remaining budget: the lasting ledger of the data set in release mode."""
    ss = st.session_state
    led = ledger()
    locked = curator() is not None or len(led) > 0
    if curator() is None:
        with st.expander("Total budget", expanded=False):
            budget_fields(locked)
            if locked:
                st.caption("This data set's ledger holds releases: its budget is fixed (reset "
                           "the ledger to change it).")
        if not is_release_mode() and budget_from_state() != led.budget:
            ss["ledger"] = led = PrivacyLedger(budget_from_state())
    remaining = led.remaining()
    total = led.allowance() if hasattr(led, "allowance") else led.budget  # an analyst's share
    spent_eps = total.epsilon - remaining.epsilon
    n = len(led)
    st.metric("Budget remaining", f"ε {remaining.epsilon:.3g}",
              delta=f"-{spent_eps:.3g} spent in {n} release(s)" if n else None,
              delta_color="off")
    st.progress(min(max(spent_eps / total.epsilon, 0.0), 1.0) if total.epsilon else 0.0)


def data_caption() -> None:
    """The data set in use, in the sidebar. Written after the page ran, so an upload or a
    declared radius made on this run shows at once (issue 27.8: right after an upload it said
    "radius not declared" while the page showed one)."""
    ss = st.session_state
    slot = ss.pop("_data_slot", None)
    if slot is None:
        return
    with slot.container():
        st.caption(_data_label(ss.get("data") or DATA_KEYS[0]))
        if not is_release_mode():  # release mode shows only the public description
            ds = current_dataset(show_error=False)
            if ds is not None:
                radius = "not declared" if ds.radius is None else f"{ds.radius:.4g}"
                st.caption(f"{ds.n:,} rows × {ds.d} columns "
                           f"({md_text(', '.join(map(str, ds.columns[:4])), max_chars=120)}"
                           f"{'…' if ds.d > 4 else ''}); radius {radius}")
            elif ss.get("data") == UPLOAD:
                st.caption("Upload a file on the Data page.")


def sidebar(page_title: str = "") -> None:
    ss = st.session_state
    dep = curator()
    if dep is not None:  # locked: no data choice, no explore mode, no seed, no reset
        st.caption("Private data set (curator deployment): release mode only. Every release is "
                   "charged to its lasting ledger.")
    else:
        # No format_func: with bind="query-params" the URL holds the formatted label.
        st.selectbox("Data set", DATA_KEYS, key="data", bind="query-params",
                     help="cities / earthquakes: bundled samples; mixture: the papers' synthetic "
                          "Gaussian mixture; upload: your own table (Data page).")
        st.radio("Mode", ["explore", "release"], key="mode", horizontal=True,
                 bind="query-params",
                 help="explore: the data are treated as public or demo data and raw views are "
                      "shown (labelled as not private). release: only DP outputs are shown, "
                      "previews use a synthetic proxy, and every release is recorded in the "
                      "lasting ledger.")
        ss["_data_slot"] = st.empty()  # filled after the page ran (data_caption)

    if page_title == "Guided tour":  # one set of controls: the tour's own sliders (issue 27.7)
        st.caption("The tour has its own sliders (ε, k, radius) next to each picture; the "
                   "sidebar's ε, k and seed apply to the other pages.")
        budget_sidebar()
        return
    st.select_slider("ε per release", EPSILON_GRID, value=1.0, key="eps", bind="query-params",
                     persist_state="session",
                     help="ε ≤ 1: strong privacy; 1–5: moderate; above 5: weak. The "
                          "Privacy–utility page shows what accuracy each ε buys on your data.")
    if ss.get("eps", 1.0) >= 5:
        st.caption(":orange[ε ≥ 5 gives little protection; prefer a smaller ε if the error "
                   "allows.]")
    c1, c2 = st.columns(2)
    checked_number(c1, "k (clusters)", "k", lambda v: check_count("k", v, 1, 50),
                   optional=False, value="5", bind="query-params", persist_state="session",
                   help="From 1 to 50; a value outside is refused, never clamped.")
    if not is_release_mode():  # releases draw OS randomness: no seed exists for them
        checked_number(c2, "Seed", "seed", lambda v: check_count("seed", v, 0, 2**31 - 1),
                       optional=False, value="0", bind="query-params", persist_state="session",
                       help="Seeds explore-mode noise, so a shared URL shows the same draw. "
                            "Releases draw fresh randomness and have no seed. From 0 to "
                            "2³¹ − 1.")
    budget_sidebar()


_URL_MESSAGES = "_url_messages"  # the URL's "ignored …" lines, kept for the run after the fix


def _url_spec() -> dict:
    """The URL parameters' spec; a module that does not import (its page is hidden) leaves its
    parameter's list empty instead of breaking the frame."""
    lists = {}
    for name, module, attr in (("algorithms", "dpcore.app.sweeps", "clustering_algorithms"),
                               ("statistics", "dpcore.mechanisms.sensitivity.statistics",
                                "STATISTICS")):
        try:
            obj = getattr(importlib.import_module(module), attr)
            lists[name] = list(obj() if callable(obj) else obj)
        except Exception:
            lists[name] = []
    return app_query_spec(data_keys=DATA_KEYS, epsilon_grid=EPSILON_GRID, **lists)


def clean_url() -> list[str]:
    """Check the URL before the widgets bound to it exist (issue 14, finding 9).

    A rejected value is replaced by the last valid value given for its key, or dropped (the
    widget then shows its default); the returned "ignored k=abc: …" lines are shown once, on
    the run after the one that saw the bad URL. Never raises, whatever the URL holds.

    A ``bind="query-params"`` widget seeds from the URL its run started with, so editing
    ``st.query_params`` alone would leave e.g. a 5,000-digit ``k`` there (OverflowError in
    ``number_input``): after a fix the run restarts (``st.rerun``) from the cleaned URL, and
    the messages wait in the session state for it.
    """
    ss = st.session_state
    pending = ss.pop(_URL_MESSAGES, None)
    qp = st.query_params
    raw = {k: qp.get_all(k) for k in qp}
    check = clean_query_params(raw, _url_spec())
    for key in dict.fromkeys(check.rejected):
        good = check.values.get(key)
        if good is None or good == []:
            del qp[key]
        else:
            qp[key] = good if isinstance(good, list) else str(good)
    if check.rejected and pending is None:  # once: never a rerun loop
        ss[_URL_MESSAGES] = check.messages
        st.rerun()
    return [*(pending or []), *check.messages]


# the icon is drawn locally and served by this server: no request leaves it (issue 26)
st.set_page_config(page_title="dpcore: private clustering explorer", page_icon=favicon(),
                   layout="wide")
url_messages = clean_url()
init_state()
start_reaper()  # once per server: closed sessions' memory goes back (pages/_lifecycle.py)
for _msg in url_messages:
    st.warning(md_text(_msg), icon=":material/link_off:")
logged_in = login_gate()  # a curator deployment: named analysts only (pages/_login.py)
nav = st.navigation(navigation_pages(), position="sidebar" if logged_in else "hidden")
if not logged_in:
    st.stop()
with st.sidebar:
    sidebar(nav.title)
try:
    nav.run()
finally:  # also after a page's st.stop()
    data_caption()
