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
    yield tmp_path
    clear_caches()


def session(page: str = "pages/data.py", query: dict | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for k, v in (query or {}).items():
        at.query_params[k] = v
    at.run()
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
        at.sidebar.number_input(key="seed")


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
