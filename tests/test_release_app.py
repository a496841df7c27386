"""Release mode in the app, one regression test per audit finding, and the curator deployment
locked in release mode (AppTest; the real-browser version is tests/e2e/test_curator_e2e.py)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import APP, capture_downloads, clear_caches, figure_specs
from streamlit.testing.v1 import AppTest

import dpcore.release.door as release_mod
from dpcore.release.door import FAILED

pytestmark = pytest.mark.filterwarnings("ignore")
N = 400


@pytest.fixture
def curator(tmp_path, monkeypatch):
    """A curator deployment on a 400-row private table (what `dpcore app --private` sets)."""
    clear_caches()
    rng = np.random.default_rng(5)
    data = tmp_path / "private.csv"
    pd.DataFrame(rng.normal(0, 2, (N, 2)), columns=["a", "b"]).to_csv(data, index=False)
    schema = tmp_path / "schema.json"
    schema.write_text(json.dumps({"columns": ["a", "b"], "lower": [-8, -8], "upper": [8, 8],
                                  "n": N}))
    monkeypatch.setenv("DPCORE_PRIVATE_DATA", str(data))
    monkeypatch.setenv("DPCORE_PRIVATE_SCHEMA", str(schema))
    monkeypatch.setenv("DPCORE_PRIVATE_BUDGET", "3,1e-5")
    # the curator's grant: ann may spend the whole budget
    from dpcore.privacy.guarantees import ApproxDP
    from dpcore.release.curator import open_door

    TOKENS.clear()
    TOKENS["ann"] = open_door(data, schema, "3,1e-5").ledger.grant("ann", ApproxDP(3, 1e-5))
    yield tmp_path
    clear_caches()


TOKENS: dict[str, str] = {}


def login(at: AppTest, name: str, token: str) -> AppTest:
    """Type a name and token into the login form of a curator deployment, as an analyst does."""
    at.text_input(key="login_name").input(name)
    at.text_input(key="login_token").input(token)
    return at.button(key="login_submit").click().run()


def session(page: str = "pages/data.py", query: dict | None = None, *,
            analyst: str | None = "ann") -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
    if analyst is not None:
        login(at, analyst, TOKENS[analyst])
    if page != "pages/data.py":
        at.switch_page(page).run()
    assert not at.exception
    return at


def remaining(at: AppTest) -> str:
    return at.sidebar.metric[0].value


def everything(at: AppTest) -> str:
    """The text of every rendered element (protos), for "never shown" assertions."""
    out: list[str] = []

    def walk(node) -> None:
        out.append(str(getattr(node, "proto", "")))
        for kid in (getattr(node, "children", None) or {}).values():
            walk(kid)

    walk(at._tree)
    return "\n".join(out)


def test_finding1_no_seed_in_any_view_download_or_ledger(curator, monkeypatch):
    downloads = capture_downloads(monkeypatch)
    at = session("pages/importance.py", {"seed": "7"})
    at.button(key="importance_release").click().run()
    at.switch_page("pages/ledger.py").run()
    payloads = " ".join(str(v) for v in downloads.values())
    assert downloads and "seed" not in payloads.lower()
    assert "seed" not in " ".join(str(e.params) for e in at.session_state["_door"][1].ledger
                                  .entries) if "_door" in at.session_state else True
    with pytest.raises(KeyError):
        at.sidebar.text_input(key="seed")


def test_finding2_failure_is_charged_and_says_nothing(curator, monkeypatch):
    from dpcore.mechanisms.lloyd.estimator import DPLloyd

    real_fit = DPLloyd.fit

    def fit(self, X, y=None):
        raise ValueError(f"mean squared norm {float(np.mean(np.asarray(X) ** 2)):.5f}")

    monkeypatch.setattr(release_mod, "_entropy", lambda: np.random.default_rng(0))
    at = session("pages/importance.py")
    before = remaining(at)
    monkeypatch.setattr(DPLloyd, "fit", fit)
    # the door's check of the public parameters on an empty table fails too: a public refusal
    at.button(key="importance_release").click().run()
    assert any("cannot run" in e.value for e in at.error) and remaining(at) == before

    first = pd.read_csv(curator / "private.csv").to_numpy()[0]

    def fit_private_only(self, X, y=None):  # fails on the private rows only
        if len(X) and np.allclose(np.asarray(X)[0], first):
            raise ValueError(f"mean squared norm {float(np.mean(np.asarray(X) ** 2)):.5f}")
        return real_fit(self, X, y)

    monkeypatch.setattr(DPLloyd, "fit", fit_private_only)
    at.button(key="importance_release").click().run()
    assert any(FAILED in w.value for w in at.warning)
    text = everything(at)
    assert not any(f"norm {d}" in text for d in "0123456789")  # no number of the failure
    assert remaining(at) != before  # the failure kept its charge


def test_finding3_parameters_read_off_the_data_are_refused(curator):
    at = session("pages/importance.py")
    before = remaining(at)
    at.selectbox(key="imp_rel_sampler").select("coreset").run()
    at.button(key="importance_release").click().run()
    assert any("reads a parameter off the data" in e.value for e in at.error)
    assert remaining(at) == before


def test_finding4_no_true_n_anywhere(curator):
    at = session()
    text = everything(at)
    assert f"{N:,} rows (declared" in text  # the declared n, said so
    assert not [m for m in at.metric if m.label != "Budget remaining"]
    x = figure_specs(at)[0]["data"][0]["x"]
    assert "bdata" in x or len(x) == 2000  # the proxy has a fixed public size


def test_finding6_no_timings_or_dtypes(curator):
    at = session("pages/clustering.py")
    at.button(key="clustering_release").click().run()
    text = everything(at)
    assert "seconds" not in text and "float64" not in text and "released under" in text


def test_finding7_one_lasting_budget_for_every_session_and_restart(curator):
    a = session("pages/importance.py")
    a.button(key="importance_release").click().run()
    after_one = remaining(a)
    assert after_one == "ε 2"
    b = session("pages/ledger.py")  # a second tab
    assert remaining(b) == after_one
    clear_caches()  # a server restart: the door is opened again, the ledger file stays
    c = session("pages/clustering.py")
    assert remaining(c) == after_one
    c.multiselect(key="clu_rel_algs").set_value(["DP-Lloyd", "DP-Lloyd + privacy-constrained "
                                                 "sampling", "Max-cover k-means"]).run()
    c.button(key="clustering_release").click().run()  # 3 × ε = 1 > 2 left: all refused
    assert any("Release refused" in e.value for e in c.error)
    assert remaining(c) == after_one


def test_curator_deployment_is_locked_in_release_mode(curator):
    at = session("pages/data.py", {"mode": "explore", "data": "cities"})
    with pytest.raises(KeyError):
        at.sidebar.radio(key="mode")
    with pytest.raises(KeyError):
        at.sidebar.selectbox(key="data")
    for page in ("pages/data.py", "pages/importance.py", "pages/clustering.py",
                 "pages/friendlycore.py", "pages/sensitivity.py", "pages/utility.py",
                 "pages/ledger.py"):
        at.switch_page(page).run()
        assert not at.exception, page
        assert not at.get("file_uploader"), page
        assert "explore mode: these views show the data" not in everything(at), page
        assert not [b for b in at.button if "reset" in (b.key or "")], page
        assert not [n for n in at.number_input if "radius" in (n.key or "")], page


# ---- named analysts, kept outputs, ledger errors (issues 22.5, 27.3, 26) ------------------------


def test_anonymous_access_sees_nothing_of_the_data_set(curator):
    """Bug caught: a page, the sidebar's budget, the schema's column names or n drawn before
    the login (a deep link to a page, or a URL asking for explore mode)."""
    for page in (None, "pages/ledger.py", "pages/clustering.py"):
        at = AppTest.from_file(APP, default_timeout=120)
        at.query_params["mode"] = "explore"
        at.run()
        if page:
            at.switch_page(page).run()
        assert not at.exception
        text = everything(at)
        assert at.text_input(key="login_token").proto.type == 1  # a password field
        assert not at.sidebar.metric and not at.get("dataframe") and not at.get("plotly_chart")
        assert not at.button or {b.key for b in at.button} <= {"login_submit"}
        for secret in ('"a"', "'a'", f"{N}", "Budget remaining", "DP account"):
            assert secret not in text, (page, secret)


def test_a_wrong_login_says_nothing_about_the_name_and_the_token_is_kept_nowhere(curator):
    """Bug caught: 'unknown analyst' vs 'wrong token' (an oracle for names), or the typed token
    left in the widget state, the page or the URL."""
    from dpcore.privacy.ledger_analysts import LOGIN_REFUSED

    answers = []
    for name, token in (("ann", "dpa_wrong"), ("nobody", TOKENS["ann"]), ("nobody", "x")):
        at = AppTest.from_file(APP, default_timeout=120).run()
        login(at, name, token)
        assert not at.exception and not at.sidebar.metric  # still logged out
        answers.append(tuple(e.value for e in at.error))
        assert token not in everything(at)
    assert set(answers) == {(LOGIN_REFUSED,)}
    at = session("pages/ledger.py")  # a good login: the token is gone from every trace
    state = {k: str(at.session_state[k]) for k in at.session_state}
    assert not any(TOKENS["ann"] in v for v in state.values())
    assert TOKENS["ann"] not in everything(at) and not dict(at.query_params)
    assert "ann" in " ".join(c.value for c in at.sidebar.caption)


def test_a_revoked_analyst_is_logged_out_on_the_next_run(curator):
    """Bug caught: a session that logged in before the curator revoked the grant keeps its
    door (and the page keeps showing the data set's views)."""
    from dpcore.release.curator import open_door

    at = session("pages/importance.py")
    assert at.button(key="importance_release")
    open_door(curator / "private.csv", curator / "schema.json", None).ledger.revoke("ann")
    at.run()
    assert not at.exception and not at.sidebar.metric
    assert at.text_input(key="login_token") and not [b for b in at.button
                                                     if b.key == "importance_release"]


def test_two_analysts_each_spend_their_own_share(curator, monkeypatch):
    """Bug caught: an analyst's session spending from the unallocated budget or from another's
    share, or the sidebar showing the data set's budget instead of the analyst's share."""
    from dpcore.privacy.guarantees import ApproxDP
    from dpcore.release.curator import open_door

    monkeypatch.setenv("DPCORE_PRIVATE_DATASET", "shared")
    clear_caches()
    led = open_door(curator / "private.csv", curator / "schema.json", "3,1e-5",
                    dataset="shared").ledger
    TOKENS["cy"] = led.grant("cy", ApproxDP(1.2, 3e-6))
    TOKENS["dee"] = led.grant("dee", ApproxDP(1.5, 3e-6))
    cy = session("pages/importance.py", analyst="cy")
    assert remaining(cy) == "ε 1.2"
    cy.button(key="importance_release").click().run()  # ε = 1 of cy's 1.2
    assert not cy.error and remaining(cy) == "ε 0.2"
    cy.button(key="importance_release").click().run()
    assert any("analyst 'cy'" in e.value.replace("\\", "") for e in cy.error)
    dee = session("pages/importance.py", analyst="dee")
    assert remaining(dee) == "ε 1.5"
    dee.button(key="importance_release").click().run()
    assert not dee.error and remaining(dee) == "ε 0.5"
    assert [r["analyst"] for r in led.records()] == ["cy", "dee"]


def test_a_release_survives_a_reload_on_its_page_and_the_ledger_page(curator):
    """Bug caught: a release shown only in the session that made it (a reload shows nothing),
    or shown on another page, or its values not the ones released."""
    at = session("pages/clustering.py")
    at.button(key="clustering_release").click().run()
    shown = [m.value for m in at.markdown if "centers" in m.value or "released" in m.value]
    fig = figure_specs(at)
    again = session("pages/clustering.py")  # a reload: a new session, logged in again
    assert any("released under" in s.value for s in again.success)
    assert figure_specs(again) == fig
    assert [m.value for m in again.markdown if "centers" in m.value or "released" in m.value
            ] == shown
    other = session("pages/importance.py")
    assert not other.success  # not another page's release
    led = session("pages/ledger.py")
    kept = [d.value for d in led.dataframe if "output" in d.value.columns]
    assert kept and set(kept[0]["label"]) == {"DP-Lloyd"}
    assert set(kept[0]["output"]) == {"centers"} and {"a", "b"} <= set(kept[0].columns)


def test_the_ledger_page_shows_basic_and_tight_per_account_and_the_share(curator):
    """Bug caught: only the refusing total shown (issue 22 item 3 asks for both), or an
    analyst seeing no figure for their own share."""
    at = session("pages/importance.py")
    at.button(key="importance_release").click().run()
    at.switch_page("pages/ledger.py").run()
    [table] = at.table
    frame = table.value
    assert {"basic composition", "tight (Rényi filter)"} <= set(frame.columns)
    assert list(frame.index) == ["DP (data set)", "DP: your share (ann)"]
    assert all(v.startswith("(ε = ") for v in frame["basic composition"])
    assert all(v.startswith("(ε = ") for v in frame["tight (Rényi filter)"])


def _break(kind: str, ledger_dir, monkeypatch) -> None:
    import shutil

    from dpcore.privacy import ledger_file as lf

    path = ledger_dir / "ledger.sqlite3"
    if kind == "not a database":
        path.write_bytes(b"a,b\n1,2\n" * 600)
    elif kind == "folder":
        path.unlink()
        path.mkdir()
    elif kind == "moved":
        shutil.move(path, ledger_dir / "moved.sqlite3")
    elif kind == "read-only":
        real = lf.Store.connect
        monkeypatch.setattr(lf.Store, "connect",
                            lambda self, *, write, create=False: real(self, write=False))
    elif kind == "disk full":
        # SQLite's SQLITE_FULL on the insert (tests/test_ledger_errors.py makes a real one; a
        # release's small row may fit a page's free space)
        import sqlite3

        def append(self, *args, **kwargs):
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(lf.Store, "append", append)


@pytest.mark.parametrize("kind, reason", [
    ("not a database", "its file is not a ledger or is damaged"),
    ("folder", "a folder is where its file should be"),
    ("moved", "its file was moved, replaced or edited outside dpcore"),
    ("read-only", "its file is read-only"),
    ("disk full", "the disk holding it is full"),
])
def test_a_ledger_that_cannot_be_used_is_a_clear_message_in_the_app(curator, monkeypatch,
                                                                    kind, reason):
    """Bug caught: a traceback (or SQLite's words, or a path) on the page when the ledger file
    breaks under a running server, or a release charged although it was refused."""
    import os

    ledger_dir = __import__("pathlib").Path(os.environ["DPCORE_LEDGER_DIR"])
    at = session("pages/importance.py")
    before = remaining(at)
    _break(kind, ledger_dir, monkeypatch)
    at.button(key="importance_release").click().run()
    assert not at.exception
    messages = [e.value.replace("\\", "") for e in at.error]  # markdown escapes
    assert any(reason in m for m in messages), messages
    assert not any(str(ledger_dir) in m or "sqlite" in m.lower() for m in messages)
    if at.sidebar.metric:  # the ledger still reads (read-only, full disk): nothing charged
        assert remaining(at) == before


def test_openid_connect_login_when_the_curator_configured_it(curator):
    """The st.login path (AppTest seeds st.user; no provider is contacted). Bugs caught: the
    token form shown although [auth] is configured, an identity without a grant let in (or
    spending the unallocated budget), releases not recorded under the identity's e-mail."""
    from dpcore.privacy.guarantees import ApproxDP
    from dpcore.release.curator import open_door

    clear_caches()
    open_door(curator / "private.csv", curator / "schema.json", "3,1e-5").ledger.revoke("ann")
    clear_caches()
    open_door(curator / "private.csv", curator / "schema.json", "3,1e-5").ledger.grant(
        "eve@example.org", ApproxDP(2.0, 5e-6))
    auth = {"redirect_uri": "http://localhost:8501/oauth2callback", "cookie_secret": "s" * 32,
            "client_id": "dpcore", "client_secret": "x",
            "server_metadata_url": "http://127.0.0.1:1/.well-known/openid-configuration"}

    def run_as(user: dict) -> AppTest:
        at = AppTest.from_file(APP, default_timeout=120)
        at.secrets["auth"] = auth
        at.user = user
        return at.run()

    anon = run_as({"is_logged_in": False})
    assert not anon.exception and not anon.text_input and not anon.sidebar.metric
    assert [b.proto.label for b in anon.button] == ["Log in"]
    stranger = run_as({"is_logged_in": True, "email": "mallory@example.org"})
    assert any("has no share" in e.value for e in stranger.error)
    assert not stranger.sidebar.metric
    eve = run_as({"is_logged_in": True, "email": "eve@example.org"})
    assert remaining(eve) == "ε 2"
    eve.switch_page("pages/importance.py").run()
    eve.button(key="importance_release").click().run()
    assert not eve.error and remaining(eve) == "ε 1"
    led = open_door(curator / "private.csv", curator / "schema.json", None).ledger
    assert [r["analyst"] for r in led.records()] == ["eve@example.org"]
