"""Issue 27 item 3 and issue 22 item 5 in the library and CLI: each release's DP output is kept
with its ledger entry (in the integrity chain) and exported; named analysts log in with one
answer for every wrong pair, and see and export only their own releases."""

from __future__ import annotations

import csv
import io
import json
import sqlite3

import numpy as np
import pandas as pd
import pytest

from dpcore.cli import main
from dpcore.core.errors import LedgerIntegrityError
from dpcore.privacy.guarantees import ApproxDP, BudgetExceededError
from dpcore.privacy.ledger import LastingLedger, named_key
from dpcore.privacy.ledger_analysts import LOGIN_REFUSED, LoginRefused
from dpcore.privacy.ledger_outputs import ANY
from dpcore.release.curator import open_door, release_ledger, table_units

pytestmark = pytest.mark.filterwarnings("ignore")
N = 300
SCHEMA = {"columns": ["a", "b"], "lower": [9, -1], "upper": [11, 1], "n": N}  # centre (10, 0)


@pytest.fixture
def deployment(tmp_path):
    rng = np.random.default_rng(4)
    table = pd.DataFrame(np.c_[rng.uniform(9, 11, N), rng.uniform(-1, 1, N)],
                         columns=["a", "b"])
    table.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "s.json").write_text(json.dumps(SCHEMA))
    door = open_door(tmp_path / "d.csv", tmp_path / "s.json", "3,1e-5", tmp_path / "ledger",
                     dataset="survey")
    return tmp_path, door


def _as(door, name):
    import copy

    mine = copy.copy(door)
    mine.ledger = door.ledger.as_analyst(name)
    return mine


def test_outputs_are_kept_with_their_entries_and_read_back(deployment):
    """Bug caught: outputs stored apart from (or not at all with) their entries, so a reload
    shows nothing or another release's values."""
    _, door = deployment
    out = door.release_many([("dplloyd", {"n_clusters": 2, "epsilon": 0.3}),
                             ("noisy_average", {"epsilon": 0.2, "delta": 1e-7})],
                            labels=["centres", "mean"], origin="clustering")
    door.release("noisy_average", {"epsilon": 0.1, "delta": 1e-7}, label="later")
    recs = door.ledger.records()
    assert [r["label"] for r in recs] == ["centres", "mean", "later"]
    np.testing.assert_allclose(recs[0]["output"]["centers"], out[0].output["centers"])
    np.testing.assert_allclose(recs[1]["output"]["mean"], out[1].output["mean"])
    assert recs[0]["origin"] == "clustering" and recs[2]["origin"] == ""
    group = door.ledger.last_group("clustering", None)
    assert [r["label"] for r in group] == ["centres", "mean"]  # one click, both parts
    assert door.ledger.last_group("importance", None) == []


def test_a_failed_release_is_kept_as_bottom(deployment, monkeypatch):
    """Bug caught: ⊥ not kept, so a reload shows the previous release as if it were this one."""
    import dpcore.release.door as door_mod

    _, door = deployment
    monkeypatch.setattr(door_mod.ReleaseDoor, "_compute", lambda self, plan: None)
    rel = door.release("noisy_average", {"epsilon": 0.2, "delta": 1e-7}, label="failed")
    assert rel.failed
    [rec] = door.ledger.records()
    assert rec["kept"] and rec["output"] is None


def test_kept_outputs_are_in_the_integrity_chain(deployment):
    """Bug caught: an output row editable by hand (a forged release) without the chain
    noticing."""
    tmp, door = deployment
    door.release("noisy_average", {"epsilon": 0.2, "delta": 1e-7})
    con = sqlite3.connect(tmp / "ledger" / "ledger.sqlite3")
    params = json.loads(con.execute("SELECT params FROM entries WHERE kind = 'output'")
                        .fetchone()[0])
    params["output"]["mean"] = [0.0, 0.0]
    con.execute("UPDATE entries SET params = ? WHERE kind = 'output'", (json.dumps(params),))
    con.commit()
    con.close()
    with pytest.raises(LedgerIntegrityError, match="edited outside dpcore"):
        door.ledger.records()


def test_a_reset_forgets_the_outputs_too(deployment):
    """Bug caught: a reset ledger still showing the forgotten releases' outputs."""
    _, door = deployment
    door.release("noisy_average", {"epsilon": 0.2, "delta": 1e-7}, label="x")
    door.ledger.reset()
    assert door.ledger.records() == [] and door.ledger.last_group("", None) == []


def test_table_units_adds_the_centre_to_points_only():
    """Bug caught: exported centres in the mechanisms' centred coordinates (off by the centre),
    or a scalar statistic shifted as if it were a point."""
    out = table_units({"centers": [[0.5, 0.0], [-0.5, 0.0]], "mean": [0.0, 1.0],
                       "value": [2.0], "none": None}, SCHEMA)
    assert out["centers"] == [[10.5, 0.0], [9.5, 0.0]] and out["mean"] == [10.0, 1.0]
    assert out["value"] == [2.0] and out["none"] is None


def test_login_gives_one_answer_to_every_wrong_pair(deployment):
    """Bug caught: 'no such analyst' vs 'wrong token' (a name oracle), or a token accepted for
    another analyst's name."""
    _, door = deployment
    led = door.ledger
    ann = led.grant("ann", ApproxDP(1.0, 3e-6))
    bob = led.grant("bob", ApproxDP(1.0, 3e-6))
    assert led.login("ann", ann) == "ann" and led.login(" bob ", f" {bob} ") == "bob"
    answers = set()
    for name, token in (("ann", bob), ("bob", ann), ("carol", ann), ("ann", ""), ("", "")):
        with pytest.raises(LoginRefused) as exc:
            led.login(name, token)
        answers.add(str(exc.value))
    assert answers == {LOGIN_REFUSED}
    led.revoke("bob")
    with pytest.raises(LoginRefused):
        led.as_analyst("bob")  # a revoked analyst's session cannot spend


def test_one_analyst_cannot_spend_anothers_share(deployment):
    """Bug caught: shares checked against the data set's total only, so ann's spending eats
    bob's allocation."""
    _, door = deployment
    door.ledger.grant("ann", ApproxDP(0.45, 2e-6))
    door.ledger.grant("bob", ApproxDP(0.45, 2e-6))
    ann, bob = _as(door, "ann"), _as(door, "bob")
    release = ("noisy_average", {"epsilon": 0.3, "delta": 1e-7})
    ann.release(*release)
    with pytest.raises(BudgetExceededError, match="analyst 'ann'"):
        ann.release(*release)
    bob.release(*release)  # unaffected
    assert [r["analyst"] for r in door.ledger.records()] == ["ann", "bob"]
    assert [r["analyst"] for r in door.ledger.records("bob")] == ["bob"]
    share = door.ledger.share_accounts("ann")
    assert share["basic"] and share["tight"] and share["releases"] == 1


def test_export_json_csv_and_an_analysts_own(deployment, capsys):
    """Bug caught: export without outputs, a CSV cell that runs as a formula, or an analyst's
    export listing another analyst's releases."""
    tmp, door = deployment
    ann_token = door.ledger.grant("ann", ApproxDP(1.0, 3e-6))
    door.ledger.grant("bob", ApproxDP(1.0, 3e-6))
    ann, bob = _as(door, "ann"), _as(door, "bob")
    ann.release("noisy_average", {"epsilon": 0.2, "delta": 1e-7}, label="=ann's mean")
    rel = bob.release("noisy_average", {"epsilon": 0.2, "delta": 1e-7}, label="bob's mean")
    base = ["ledger", "export", "--ledger-dir", str(tmp / "ledger"), "--dataset", "survey"]
    assert main(base) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [e["analyst"] for e in doc["entries"]] == ["ann", "bob"]
    np.testing.assert_allclose(doc["entries"][1]["output"]["mean"],
                               door.to_table_units(rel.output["mean"])[0])
    out = tmp / "mine.csv"
    assert main([*base, "--token", ann_token, "--out", str(out), "-q"]) == 0
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [r["analyst"] for r in rows] == ["ann"] and rows[0]["label"].startswith("'=")
    assert json.loads(rows[0]["output"])["mean"]
    assert main([*base, "--token", "dpa_wrong", "-q"]) == 2
    assert main(["ledger", "export", "--ledger-dir", str(tmp / "ledger"), "--token",
                 ann_token, "-q"]) == 2  # a token belongs to one data set


def test_the_dashboards_own_ledger_belongs_to_the_name(tmp_path):
    """Issue 22 item 4 in the dashboard's own release mode: the budget belongs to the data
    set's name, not the table's bytes (a re-ordered or re-described table keeps it)."""
    d = tmp_path / "l"
    a = release_ledger("cities", SCHEMA, ApproxDP(2.0, 1e-6), d, keep_stored_budget=True)
    a.spend("x", ApproxDP(0.5, 0.0))
    other = dict(SCHEMA, upper=[12, 1])
    b = release_ledger("cities.csv", other, ApproxDP(5.0, 1e-6), d, keep_stored_budget=True)
    assert b.key == a.key == named_key("cities") and len(b) == 1
    assert b.budget == ApproxDP(2.0, 1e-6)  # the stored budget stands
    assert LastingLedger(named_key("cities"), directory=d).description()["upper"] == [12, 1]
    with pytest.raises(ValueError, match="only a curator reset"):
        release_ledger("cities", SCHEMA, ApproxDP(5.0, 1e-6), d)  # a curator: refused
    assert ANY == "*"
