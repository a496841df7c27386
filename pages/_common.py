"""Streamlit helpers shared by the frame (``app.py``) and the pages: state, data in use, releases.

Kept small on purpose: the maths lives in ``dpcore``, the figures in ``dpcore.app.plots``; this
module only glues widgets and session state to them.
"""

from __future__ import annotations

import inspect
import json
import logging
import os
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import streamlit as st

from dpcore.app.bounded_cache import ByteBoundedCache, session_cache
from dpcore.app.export import csv_text
from dpcore.app.ui_state import box_geometry, explore_seed, fingerprint
from dpcore.core.text import md_text
from dpcore.data.datasets import SAMPLE_DATASETS, load_sample
from dpcore.data.tables import DataError, load_table, numeric_columns
from dpcore.privacy.guarantees import ApproxDP, PrivacyLedger, RandomDP
from dpcore.release.runconfig import make_config, mixture_frame, mixture_source, prepare_matrix
from pages._fields import (  # noqa: F401  (the pages import them from here)
    check_delta_field,
    checked_number,
    number_field,
    number_text,
)

SYNTHETIC = "mixture"
UPLOAD = "upload"
DATA_KEYS = [*SAMPLE_DATASETS, SYNTHETIC, UPLOAD]
EPSILON_GRID = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0, 7.0, 10.0, 20.0]
EXPLORE_NOTE = "explore mode: these views show the data itself, not a private release"

# Synthetic mixture (the importance-sampling paper's Gaussian mixtures): public by construction.
MIXTURE = {"n": 10_000, "d": 2, "k": 5, "sigma": 1.0, "center_radius": 10.0}


_ROOT = Path(__file__).resolve().parents[1]
_FRAME = _ROOT / "app.py"
_LEFT_LEGACY_ROUTER = "_left_legacy_router"
_LOG = logging.getLogger(__name__)


def _frames() -> Iterator[types.FrameType]:
    frame = inspect.currentframe()
    while frame is not None:
        yield frame
        frame = frame.f_back


def _running_page() -> tuple[bool, Path | None]:
    """Whether this script run is inside the frame (``app.py``), and the page file running.

    A page runs nested in ``app.py``'s ``nav.run()``, so the frame's code is on the call stack;
    a page that Streamlit's legacy router ran directly has no ``app.py`` below it.
    """
    in_frame, page = False, None
    for frame in _frames():
        path = Path(os.path.realpath(frame.f_code.co_filename))
        if path == _FRAME:
            in_frame = True
        elif path.parent == _ROOT / "pages" and not path.name.startswith("_"):
            page = path
    return in_frame, page


def _leave_legacy_router() -> None:
    """Re-run through ``app.py`` when Streamlit's legacy ``pages/`` router ran a page directly.

    Streamlit decides per process whether ``pages/`` is a legacy multipage folder until the first
    ``st.navigation`` call; the very first session of a fresh server that opens a deep link
    (e.g. ``/ledger``) would otherwise get the bare page without the frame. Streamlit documents
    that once any session calls ``st.navigation`` the ``pages/`` directory is ignored for all
    sessions: this page registers itself (hidden navigation, so the deep link resolves to it)
    and re-runs, and the rerun goes through ``app.py``'s navigation, as every later session does.
    """
    ss = st.session_state
    in_frame, page = _running_page()
    if page is None:  # app.py's own call, or not a page
        return
    if in_frame:
        ss.pop(_LEFT_LEGACY_ROUTER, None)
        return
    if ss.pop(_LEFT_LEGACY_ROUTER, False):  # the rerun did not reach app.py: never loop
        _LOG.warning("dpcore: %s ran without app.py twice in a row; showing it as it is",
                     page.name)
        return
    ss[_LEFT_LEGACY_ROUTER] = True
    # A placeholder takes the default slot: the default page's URL is "/", so the deep link
    # (e.g. "/ledger") would not resolve to this page ("Page not found" dialog).
    st.navigation([st.Page(_placeholder, default=True), st.Page(page)], position="hidden")
    st.rerun()


def _placeholder() -> None:
    """Never runs: the default page of :func:`_leave_legacy_router`'s one-off navigation."""


def init_state() -> None:
    """Session defaults (idempotent; every page calls it, so a page opened directly works)."""
    _leave_legacy_router()
    ss = st.session_state
    # The URL-bound sidebar widgets (data, mode, eps, k, seed) get their defaults in app.py:
    # setting them here first would make Streamlit ignore the URL.
    # text of checked fields (app.py's budget_sidebar): float(ss[...]) is the value shown
    ss.setdefault("budget_eps", "10")
    ss.setdefault("budget_delta", "1e-06")
    ss.setdefault("budget_gamma", "0")
    if "ledger" not in ss:
        ss["ledger"] = PrivacyLedger(budget_from_state())
    ss.setdefault("data_specs", {})
    ss.setdefault("uploaded", None)
    ss.setdefault("upload_error", None)
    ss.setdefault("run_ids", {})
    ss.setdefault("releases", {})


def budget_from_state():
    """The total budget the sidebar asks for: (ε, δ)-DP, or (ε, δ, γ)-random DP when γ > 0."""
    ss = st.session_state
    eps, delta = float(ss["budget_eps"]), float(ss["budget_delta"])
    gamma = float(ss["budget_gamma"])
    return RandomDP(eps, delta, gamma) if gamma > 0 else ApproxDP(eps, delta)


def ledger():
    """Release mode: the lasting ledger of the data set in use (every session, reload and
    restart sees it). Explore mode records nothing: the session's empty ledger."""
    if is_release_mode():
        door = release_door()
        if door is not None:
            return door.ledger
    return st.session_state["ledger"]


def curator():
    """The curator deployment the server was started with (``dpcore app --private``), or None."""
    from dpcore.release.curator import deployment_from_env

    return deployment_from_env()


def is_release_mode() -> bool:
    """A curator deployment is always in release mode; otherwise the sidebar's choice."""
    return curator() is not None or st.session_state.get("mode") == "release"


@st.cache_resource(show_spinner="Opening the private data set…")
def _curator_door(data: str, schema: str, budget: str, ledger_dir: str, dataset: str = "",
                  random_dp: bool = False):
    from dpcore.release.curator import open_door
    from dpcore.release.timing import Deadline

    # every release answers at a public deadline (issue 22, item 6): its time says nothing of n
    return open_door(data, schema, budget, ledger_dir or None, dataset=dataset or None,
                     allow_random_dp=random_dp, deadline=Deadline())


def public_description(key: str, df: pd.DataFrame):
    """The public description of a (non-curator) data key, or None without a public radius:
    :func:`dpcore.release.schema.release_description` decides from what the analyst did."""
    from dpcore.release.schema import release_description

    sp = spec(key, df)
    return release_description(
        sp["columns"], radius=sp["radius"], radius_source=sp.get("radius_source", "none"),
        center=sp["center"], box=sp.get("public_description") if key == UPLOAD else None,
        bounds_from_data=sp.get("bounds_from_data") or (), n_rows=len(df),
        table_is_public=key != UPLOAD, missing=_missing_rule(sp))


def release_door():
    """The :class:`dpcore.release.door.ReleaseDoor` of the data in use (release mode), or None with
    the reason shown. The only object through which a release-mode page reaches the data."""
    dep = curator()
    if dep is not None:  # the logged-in analyst's door (pages/_login.py)
        from pages._login import analyst_door

        return analyst_door(dep)
    from dpcore.release.door import ReleaseDoor
    from pages._release import own_ledger

    key = st.session_state.get("data") or DATA_KEYS[0]
    df, _, title = raw_frame(key)
    if df is None:
        st.info("No data set: pick a sample in the sidebar, or upload a file in explore mode.")
        return None
    try:
        desc = public_description(key, df)
    except ValueError:
        desc = None
    if desc is None and spec(key, df).get("bounds_from_data"):
        st.warning("Release mode needs public bounds for every feature: some bounds of the "
                   "upload's description were read off the data (explore mode prefills them so "
                   "that pages work at once). Type bounds you know independently of the data on "
                   "the Data page in explore mode and apply them.")
        return None
    if desc is None:
        st.warning("Release mode needs a public radius declared by you (or from public bounds): "
                   "declare it on the Data page in explore mode. A radius suggested from the "
                   "data, or estimated there without a charge, cannot be used.")
        return None
    budget = budget_from_state()
    memo_key = (key, id(df) if key == UPLOAD else title, desc.to_json(None), str(budget))
    memo = st.session_state.get("_door")
    if memo is not None and memo[0] == memo_key:
        return memo[1]
    up = st.session_state.get("uploaded") or {}
    led = own_ledger(str(up.get("name") or title) if key == UPLOAD else key, desc, budget)
    if led is None:
        return None
    door = ReleaseDoor(df, desc, led)
    st.session_state["_door"] = (memo_key, door)
    return door


# ------------------------------------------------------------------------------------------------
# Data in use
# ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Dataset:
    """The data set in use, as prepared for the mechanisms (centred on the declared centre and
    clipped to the declared radius, exactly as :func:`dpcore.release.runconfig.prepare_matrix`
    does)."""

    key: str
    source: str
    title: str
    df: pd.DataFrame
    columns: list[str]
    center: list[float] | None
    radius: float | None
    X: np.ndarray
    fp: str
    public: bool
    radius_from: str
    missing: dict[str, Any] | None = None  # the missing-cells rule (dpcore.data.missing)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def d(self) -> int:
        return int(self.X.shape[1])

    def config_data(self) -> dict[str, Any]:
        return {"source": self.source, "columns": self.columns, "radius": self.radius,
                "center": self.center} | ({"missing": self.missing} if self.missing else {})


@st.cache_data(show_spinner="Loading sample data…", max_entries=8)
def _sample_frame(name: str) -> pd.DataFrame:
    return load_sample(name)


def big_cache() -> ByteBoundedCache:
    """This session's cache of large results, bounded in bytes (a quarter of the session memory
    budget, ``DPCORE_SESSION_MEMORY_MB``) and dropped with the session (issue 14, finding 4: a
    global ``cache_data`` of 8 mixtures kept 4.5 GB after the sessions closed)."""
    ss = st.session_state
    if "_big_cache" not in ss:
        ss["_big_cache"] = session_cache()
    return ss["_big_cache"]


def _mixture_frame(n: int, d: int, k: int, sigma: float, center_radius: float) -> pd.DataFrame:
    # dpcore.release.runconfig regenerates the same frame from the configuration's data.source.
    key = ("mixture", n, d, k, sigma, center_radius)
    cache = big_cache()
    df = cache.get(key)
    if df is None:
        with st.spinner("Generating the synthetic mixture…"):
            df = mixture_frame(n, d, k, sigma, center_radius)
        cache.put(key, df)
    return df


def mixture_params() -> dict[str, Any]:
    """Parameters of the synthetic mixture in use (edited on the Data page)."""
    return st.session_state.get("mixture") or dict(MIXTURE)


def default_spec(key: str, df: pd.DataFrame) -> dict[str, Any]:
    """Columns, centre and radius used until the user declares others on the Data page."""
    if key in SAMPLE_DATASETS:
        ds = SAMPLE_DATASETS[key]
        geo = box_geometry(ds.bounds)
        return {"columns": list(ds.columns), "center": list(geo.center), "radius": geo.radius,
                "radius_from": f"public bounds ({ds.bounds_from})",
                "radius_source": "public_bounds"}
    if key == SYNTHETIC:
        mix = mixture_params()
        d = mix["d"]
        radius = mix["center_radius"] + 4 * mix["sigma"] * np.sqrt(d)
        return {"columns": [f"x{j + 1}" for j in range(d)], "center": [0.0] * d,
                "radius": float(radius), "radius_from": "generator parameters (public)",
                "radius_source": "generator"}
    cols = numeric_columns(df)
    return {"columns": cols, "center": None, "radius": None, "radius_from": "not declared yet",
            "radius_source": "none"}


def raw_frame(key: str) -> tuple[pd.DataFrame | None, str, str]:
    """(DataFrame or None, config source, title) of a data key."""
    if key in SAMPLE_DATASETS:
        return _sample_frame(key), key, SAMPLE_DATASETS[key].title
    if key == SYNTHETIC:
        m = mixture_params()
        return (_mixture_frame(m["n"], m["d"], m["k"], m["sigma"], m["center_radius"]),
                mixture_source(**m), f"Synthetic mixture of {m['k']} Gaussians (n = {m['n']:,})")
    up = st.session_state.get("uploaded")
    if up is None:
        return None, "", "no file uploaded yet"
    return up["df"], up["name"], f"Uploaded file {up['name']}"


def spec(key: str, df: pd.DataFrame) -> dict[str, Any]:
    specs = st.session_state["data_specs"]
    if key not in specs:
        specs[key] = default_spec(key, df)
    return specs[key]


def _missing_rule(sp: dict[str, Any]) -> dict[str, Any] | None:
    """The Data page's missing-cells rule restricted to the chosen columns (None: no rule)."""
    rule = {c: r for c, r in (sp.get("missing") or {}).items() if c in sp["columns"]}
    return rule or None


def forget_spec(key: str) -> None:
    """Drop the declared columns/centre/radius of a data key (its data changed)."""
    ss = st.session_state
    ss["data_specs"].pop(key, None)
    for w in ("cols", "center", "radius", "_prev_radius"):
        ss.pop(f"{w}_{key}", None)


def current_dataset(*, show_error: bool = True) -> Dataset | None:
    """The prepared data set in use, or None (with the reason shown) when there is none.

    ``show_error=False`` (the sidebar) leaves the message to the page, so it appears once.
    """
    key = st.session_state.get("data") or DATA_KEYS[0]
    df, source, title = raw_frame(key)
    if df is None:
        return None
    sp = spec(key, df)
    # Samples and the mixture are identified by name and parameters (cache_data hands out a
    # fresh copy of the frame every run); an upload by the frame object held in the session.
    ident = id(df) if key == UPLOAD else json.dumps(mixture_params() if key == SYNTHETIC else key)
    memo_key = (key, source, ident, json.dumps(sp, sort_keys=True, default=str))
    memo = st.session_state.get("_prepared")
    if memo is not None and memo[0] == memo_key:
        return memo[1]
    try:
        X = prepare_matrix(df, columns=sp["columns"], radius=sp["radius"], center=sp["center"],
                           missing=_missing_rule(sp))
    except DataError as exc:
        st.session_state["_prepared"] = None
        # Explore only: in release mode pages never prepare the table (the door does).
        if show_error:
            st.error(f"The chosen columns cannot be used: {md_text(exc)}")
        return None
    ds = Dataset(key=key, source=source, title=title, df=df, columns=list(sp["columns"]),
                 center=sp["center"], radius=sp["radius"], X=X, fp=fingerprint(X),
                 public=key != UPLOAD, radius_from=sp["radius_from"],
                 missing=_missing_rule(sp))
    st.session_state["_prepared"] = (memo_key, ds)
    return ds


def require_dataset(*, need_radius: bool = True) -> Dataset:
    """The data set in use; stops the page with a message when it is missing or incomplete."""
    ds = current_dataset()
    if ds is None:
        st.info("No usable data set: pick a sample in the sidebar or upload a file on the Data "
                "page.")
        st.page_link("pages/data.py", label="Go to the Data page", icon=":material/table:")
        st.stop()
    if need_radius and ds.radius is None:
        st.warning("The mechanisms need a declared radius (a public bound on ‖x‖). Declare it on "
                   "the Data page.")
        st.page_link("pages/data.py", label="Go to the Data page", icon=":material/table:")
        st.stop()
    return ds


def upload_file(uploaded) -> None:
    """Parse an upload into session state (in memory only) or keep its error message."""
    if uploaded is None:
        return
    try:
        df = load_table(uploaded.getvalue(), filename=uploaded.name)
        if not numeric_columns(df):
            raise DataError("no numeric column found: every column holds text; check the "
                            "delimiter and the decimal separator (use '.' for decimals)")
    except DataError as exc:
        st.session_state["upload_error"] = f"{uploaded.name}: {exc}"
        return
    st.session_state["upload_error"] = None
    st.session_state["uploaded"] = {"name": uploaded.name, "df": df, "size": uploaded.size}
    forget_spec(UPLOAD)
    st.session_state["data"] = UPLOAD


# ------------------------------------------------------------------------------------------------
# Seeds, releases, downloads
# ------------------------------------------------------------------------------------------------


def keep(key: str) -> dict[str, str]:
    """Widget keyword arguments: ``key`` plus ``persist_state="session"``, so a page's settings
    survive a visit to another page (Streamlit 1.67; plain widgets reset on navigation)."""
    return {"key": key, "persist_state": "session"}


def view_seed(page: str) -> int:
    """Explore-mode seed of this page's current draw (changes only with "new draw")."""
    base = int(st.session_state.get("seed") or 0)
    return explore_seed(base, st.session_state["run_ids"].get(page, 0))


def new_draw_button(page: str) -> None:
    """A button that moves this page to a fresh noise draw (explore mode)."""
    def _bump() -> None:
        st.session_state["run_ids"][page] = st.session_state["run_ids"].get(page, 0) + 1

    st.button("New noise draw", key=f"{page}_redraw", on_click=_bump,
              help="Explore mode reuses the draw of the current seed on every rerun; this "
                   "draws fresh noise (the seed of the draw is in the run configuration).")


def config_for(mechanism: str, params: dict, ds: Dataset, seed: int) -> dict:
    return make_config(mechanism, params, ds.config_data(), seed)


def download_config(config: dict, key: str) -> None:
    st.download_button(
        "Run configuration (JSON)", json.dumps(config, indent=2),
        file_name=f"{config['mechanism']}_config.json", mime="application/json", key=key,
        on_click="ignore", icon=":material/download:",
        help="Re-run with `dpcore run --config FILE` or "
             "dpcore.release.runconfig.run_config(json.load(f)). "
             "Its outputs are in centred coordinates (the CSVs here add the declared centre "
             "back).",
    )


def download_csv(df: pd.DataFrame, file_name: str, key: str, label: str = "CSV") -> None:
    """CSV download generated on click (large tables cost nothing on a mere rerun)."""
    st.download_button(label, lambda: csv_text(df), file_name=file_name,
                       mime="text/csv", key=key, on_click="ignore", icon=":material/download:")


def matrix_frame(M: np.ndarray, columns: list[str], prefix: str = "") -> pd.DataFrame:
    M = np.atleast_2d(np.asarray(M, dtype=float))
    names = columns if len(columns) == M.shape[1] else [f"x{j + 1}" for j in range(M.shape[1])]
    return pd.DataFrame(M, columns=[f"{prefix}{c}" for c in names])


def show(fig, key: str) -> None:
    from dpcore.app.style import legible  # dark text at projector sizes (issue 27.6)

    st.plotly_chart(legible(fig), key=key, width="stretch")


def to_table_units(ds: Dataset, M: np.ndarray) -> np.ndarray:
    """Centred coordinates (what the mechanisms see) back to the table's units (post-processing)."""
    M = np.atleast_2d(np.asarray(M, dtype=float))
    return M if ds.center is None else M + np.asarray(ds.center, dtype=float)


def projection(ds: Dataset):
    """Plane to draw in: first two principal components in explore mode (read off the data, so
    explore only); the first two columns in release mode."""
    from dpcore.app.ui_state import Projection, pca_projection

    if is_release_mode() or ds.d <= 2:
        comps = np.eye(2, ds.d)
        titles = (ds.columns[0], ds.columns[1] if ds.d > 1 else "(none)")
        return Projection(np.zeros(ds.d), comps, titles)
    memo = st.session_state.get("_projection")
    if memo is not None and memo[0] == ds.fp:
        return memo[1]
    proj = pca_projection(to_table_units(ds, ds.X), ds.columns)
    st.session_state["_projection"] = (ds.fp, proj)
    return proj


def show_warnings(messages: list[str]) -> None:
    """Warnings a run raised (e.g. PrivacyLeakWarning), shown once each, compactly."""
    for msg in dict.fromkeys(messages):
        st.caption(f":orange[⚠ {md_text(msg)}]")


def favicon():
    """The tab icon, a padlock drawn here as a 32×32 RGBA image (issue 26): Streamlit serves it
    from this server, where ``:material/lock:`` made every page load fetch an SVG from a font CDN
    (a request that fails offline and tells a third party who uses the app)."""
    img = np.zeros((32, 32, 4), dtype=np.uint8)
    colour = (31, 111, 235, 255)  # the theme's primaryColor, #1f6feb
    yy, xx = np.mgrid[0:32, 0:32]
    ring = (np.hypot(xx - 15.5, yy - 13) <= 9) & (np.hypot(xx - 15.5, yy - 13) >= 5.5) & (yy <= 14)
    body = (xx >= 5) & (xx <= 26) & (yy >= 14) & (yy <= 29)
    keyhole = (np.hypot(xx - 15.5, yy - 20) <= 2.2) | ((abs(xx - 15.5) <= 1) & (yy >= 20)
                                                      & (yy <= 25))
    img[(ring | body) & ~keyhole] = colour
    from PIL import Image

    return Image.fromarray(img, mode="RGBA")
