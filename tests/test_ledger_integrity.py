"""Issue 22 (b): the budget belongs to the data set, not its bytes; the ledger refuses to start when
its file was moved, replaced or edited; random DP is off in a curator deployment unless enabled;
named analysts spend their own share."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3

import numpy as np
import pandas as pd
import pytest

from dpcore.cli import main
from dpcore.core.errors import LedgerError, LedgerIntegrityError
from dpcore.privacy.guarantees import ApproxDP, BudgetExceededError, PureDP, RandomDP
from dpcore.privacy.ledger import LastingLedger, dataset_key, list_ledgers, named_key
from dpcore.release.curator import open_door
from dpcore.release.door import LEDGER_UNAVAILABLE, ReleaseRefused

pytestmark = pytest.mark.filterwarnings("ignore")
N = 300
SCHEMA = {"columns": ["a", "b"], "lower": [-1, -1], "upper": [1, 1], "n": N}


@pytest.fixture
def table():
    rng = np.random.default_rng(3)
    return pd.DataFrame(rng.uniform(-1, 1, (N, 2)).round(6), columns=["a", "b"])


def _write(path, df, schema, *, text=None):
    path.with_suffix(".json").write_text(json.dumps(schema))
    if text is None:
        df.to_csv(path, index=False)
    else:
        path.write_bytes(text.encode())
    return path, path.with_suffix(".json")


def test_reencoded_reordered_appended_and_redescribed_variants_keep_one_budget(tmp_path, table):
    base = table.to_csv(index=False)
    bumped = SCHEMA | {"upper": [1 + 1e-6, 1]}
    variants = {
        "original": (table, SCHEMA, None),
        "trailing newline": (table, SCHEMA, base + "\n"),
        "CRLF": (table, SCHEMA, base.replace("\n", "\r\n")),
        "shuffled rows": (table.sample(frac=1.0, random_state=1), SCHEMA, None),
        "one appended row": (pd.concat([table, table.iloc[:1]]), SCHEMA, None),
        "bound changed by 1e-6": (table, bumped, None),
        "reordered columns": (table[["b", "a"]], bumped, None),
        "n switched to null": (table, bumped | {"n": None}, None),
    }
    ledger_dir = tmp_path / "ledger"
    keys, legacy = set(), set()
    for i, (what, (df, schema, text)) in enumerate(variants.items()):
        data, schema_path = _write(tmp_path / f"v{i}.csv", df, schema, text=text)
        door = open_door(data, schema_path, "2,1e-6", ledger_dir, dataset="survey")
        door.ledger.spend(what, PureDP(0.1))
        keys.add(door.ledger.key)
        legacy.add(dataset_key(data, door.description))  # the old key: one budget per bytes
        assert door.ledger.spent().epsilon == pytest.approx(0.1 * (i + 1)), what
    assert keys == {named_key("survey")} and len(legacy) == len(variants)
    led = LastingLedger(named_key("survey"), directory=ledger_dir)
    assert len(led) == len(variants) and led.budget == ApproxDP(2.0, 1e-6)
    kinds = [ev["label"] for ev in led.history() if ev["kind"] == "describe"]
    assert kinds == ["description set", "description changed", "description changed"]
    assert led.description()["n"] is None


def test_a_new_description_outside_a_deployment_is_a_curator_action(tmp_path, capsys):
    key = named_key("survey")
    LastingLedger(key, PureDP(1.0), directory=tmp_path, description=SCHEMA)
    with pytest.raises(LedgerError, match="dpcore ledger describe survey"):
        LastingLedger(key, directory=tmp_path, description=SCHEMA | {"n": 301})
    schema = tmp_path / "new.json"
    schema.write_text(json.dumps(SCHEMA | {"n": 301}))
    assert main(["ledger", "describe", "survey", "--schema", str(schema), "--ledger-dir",
                 str(tmp_path), "-q"]) == 0
    assert "recorded" in capsys.readouterr().out
    assert LastingLedger(key, directory=tmp_path).description()["n"] == 301


# ---- integrity: edited, moved, replaced, read-only, corrupt -------------------------------------


def _ledger(tmp_path, spends=2) -> LastingLedger:
    led = LastingLedger("k", ApproxDP(2.0, 1e-6), directory=tmp_path)
    for i in range(spends):
        led.spend(f"r{i}", PureDP(0.5), mechanism="dplloyd", epsilon=0.5)
    return led


def _sql(tmp_path, statement):
    con = sqlite3.connect(tmp_path / "ledger.sqlite3")
    con.execute(statement)
    con.commit()
    con.close()


@pytest.mark.parametrize("statement", [
    "UPDATE entries SET guarantee = '{\"type\": \"PureDP\", \"epsilon\": 0.01}' "
    "WHERE label = 'r0'",  # lower the recorded spend
    "DELETE FROM entries WHERE label = 'r1'",  # forget a release
    "UPDATE entries SET kind = 'store' WHERE label = 'r1'",
    "UPDATE budgets SET budget = '{\"type\": \"ApproxDP\", \"epsilon\": 20, \"delta\": 1e-6}'",
    "INSERT INTO released VALUES ('k', 'n', '100000')",
])
def test_a_row_edited_by_hand_is_refused(tmp_path, statement):
    led = _ledger(tmp_path)
    _sql(tmp_path, statement)
    with pytest.raises(LedgerIntegrityError, match="edited"):
        LastingLedger("k", directory=tmp_path)
    with pytest.raises(LedgerIntegrityError):
        led.spend("more", PureDP(0.1))
    with pytest.raises(LedgerIntegrityError):
        led.remaining()


def test_a_file_moved_away_under_a_running_server_is_refused(tmp_path):
    led = _ledger(tmp_path)
    shutil.move(tmp_path / "ledger.sqlite3", tmp_path / "elsewhere.sqlite3")
    for attempt in (lambda: led.spend("more", PureDP(0.1)), led.remaining,
                    lambda: LastingLedger("k", ApproxDP(2.0, 1e-6), directory=tmp_path),
                    lambda: list_ledgers(tmp_path)):
        with pytest.raises(LedgerIntegrityError, match="moved"):
            attempt()
    assert not (tmp_path / "ledger.sqlite3").exists()  # no fresh, empty ledger was started
    shutil.move(tmp_path / "elsewhere.sqlite3", tmp_path / "ledger.sqlite3")
    assert led.spent().epsilon == pytest.approx(1.0)  # put back: it works again


def test_another_ledger_or_an_older_copy_put_in_its_place_is_refused(tmp_path):
    led = _ledger(tmp_path, spends=1)
    shutil.copy(tmp_path / "ledger.sqlite3", tmp_path / "backup.sqlite3")
    led.spend("r1", PureDP(0.5))
    led.spend("r2", PureDP(0.5))
    shutil.copy(tmp_path / "backup.sqlite3", tmp_path / "ledger.sqlite3")  # 1 release, not 3
    with pytest.raises(LedgerIntegrityError, match="older copy"):
        LastingLedger("k", directory=tmp_path)
    other = tmp_path / "other"
    _ledger(other, spends=0)
    shutil.copy(other / "ledger.sqlite3", tmp_path / "ledger.sqlite3")
    with pytest.raises(LedgerIntegrityError, match="another ledger"):
        LastingLedger("k", directory=tmp_path)


def test_a_missing_head_file_is_refused_until_the_curator_adopts_the_file(tmp_path, capsys):
    _ledger(tmp_path)
    (tmp_path / "ledger.sqlite3.head").unlink()
    with pytest.raises(LedgerIntegrityError, match="head"):
        LastingLedger("k", directory=tmp_path)
    assert main(["ledger", "verify", "--ledger-dir", str(tmp_path), "-q"]) == 2
    assert "head" in capsys.readouterr().err
    assert main(["ledger", "verify", "--adopt", "--ledger-dir", str(tmp_path), "-q"]) == 0
    assert len(LastingLedger("k", directory=tmp_path)) == 2
    assert main(["ledger", "verify", "--ledger-dir", str(tmp_path), "-q"]) == 0


def test_a_transaction_that_did_not_commit_is_accepted(tmp_path):
    """The head file is moved on before the commit; a crash there leaves it one ahead."""
    led = _ledger(tmp_path)
    head_path = tmp_path / "ledger.sqlite3.head"
    head = json.loads(head_path.read_text())
    head_path.write_text(json.dumps(head | {"prev_count": head["count"],
                                            "prev_head": head["head"],
                                            "count": head["count"] + 1, "head": "f" * 64}))
    assert len(led) == 2
    led.spend("r2", PureDP(0.5))  # the writer repairs the head and goes on
    assert json.loads(head_path.read_text())["count"] == head["count"] + 1


def test_a_read_only_ledger_gives_a_clear_message(tmp_path, monkeypatch):
    from dpcore.privacy import ledger_file as lg

    led = _ledger(tmp_path)
    real = lg.Store.connect

    def read_only(self, *, write, create=False):
        return real(self, write=False, create=create)

    monkeypatch.setattr(lg.Store, "connect", read_only)
    with pytest.raises(LedgerError, match="read-only"):
        led.spend("more", PureDP(0.1))
    assert led.spent().epsilon == pytest.approx(1.0)  # reading still works


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root ignores file modes")
def test_a_read_only_file_gives_a_clear_message(tmp_path):
    led = _ledger(tmp_path)
    os.chmod(tmp_path / "ledger.sqlite3", 0o444)
    try:
        with pytest.raises(LedgerError, match="read-only"):
            led.spend("more", PureDP(0.1))
    finally:
        os.chmod(tmp_path / "ledger.sqlite3", 0o644)


def test_a_corrupt_file_gives_a_clear_message(tmp_path, capsys):
    _ledger(tmp_path)
    (tmp_path / "ledger.sqlite3").write_bytes(b"this is not a database" * 100)
    with pytest.raises(LedgerError, match="not a dpcore ledger or is corrupt"):
        LastingLedger("k", directory=tmp_path)
    assert main(["ledger", "show", "--ledger-dir", str(tmp_path), "-q"]) == 2
    err = capsys.readouterr().err
    assert "corrupt" in err and "Traceback" not in err


#: A version-1 ledger file (before the hash chain): its tables and one data set's budget.
V1_SCHEMA = """
        CREATE TABLE budgets (key TEXT PRIMARY KEY, name TEXT NOT NULL, budget TEXT NOT NULL,
                              created REAL NOT NULL);
        CREATE TABLE entries (id INTEGER PRIMARY KEY AUTOINCREMENT, key TEXT NOT NULL,
                              label TEXT NOT NULL, mechanism TEXT, params TEXT NOT NULL,
                              guarantee TEXT NOT NULL, time REAL NOT NULL);
        CREATE TABLE released (key TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL,
                               PRIMARY KEY (key, name));
        INSERT INTO budgets VALUES ('k', 'old.csv', '{"type": "PureDP", "epsilon": 1.0}', 1.0);
"""


def test_an_old_format_file_is_adopted_as_it_is(tmp_path):
    con = sqlite3.connect(tmp_path / "ledger.sqlite3")
    con.executescript(V1_SCHEMA + """
        INSERT INTO entries (key, label, mechanism, params, guarantee, time)
            VALUES ('k', 'old release', 'dplloyd', '{}', '{"type": "PureDP", "epsilon": 0.3}', 2.0);
    """)
    con.commit()
    con.close()
    led = LastingLedger("k", directory=tmp_path)
    assert [e.label for e in led.entries] == ["old release"] and led.budget == PureDP(1.0)
    led.spend("new", PureDP(0.5))
    with pytest.raises(BudgetExceededError):
        led.spend("too much", PureDP(0.3))


def test_the_door_refuses_with_a_public_message_and_logs_the_reason(tmp_path, table, caplog):
    data, schema = _write(tmp_path / "d.csv", table, SCHEMA)
    door = open_door(data, schema, "2,1e-6", tmp_path / "ledger", dataset="survey")
    door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.2})
    _sql(tmp_path / "ledger", "UPDATE entries SET guarantee = "
         "'{\"type\": \"PureDP\", \"epsilon\": 0.0}' WHERE kind = 'release'")
    with caplog.at_level(logging.ERROR, logger="dpcore.ledger"), pytest.raises(
            ReleaseRefused) as exc:
        door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.2})
    assert str(exc.value) == LEDGER_UNAVAILABLE and "ledger.sqlite3" not in str(exc.value)
    assert "edited outside dpcore" in caplog.text


# ---- random DP in a curator deployment ---------------------------------------------------------


SENSITIVITY = ("sensitivity", {"statistic": "median", "epsilon": 0.5, "bounds": [-1, 1],
                               "gamma": 0.1})


def test_curator_refuses_random_dp_unless_enabled(tmp_path, table):
    data, schema = _write(tmp_path / "d.csv", table, SCHEMA)
    door = open_door(data, schema, "2,1e-6,0.2", tmp_path / "ledger", dataset="survey")
    with pytest.raises(ReleaseRefused, match="γ-fraction") as exc:
        door.release(*SENSITIVITY)
    assert "--random-dp" in str(exc.value) and len(door.ledger) == 0
    with pytest.raises(ValueError, match="budget with γ"):
        open_door(data, schema, "2,1e-6", tmp_path / "other", dataset="x", allow_random_dp=True)
    door = open_door(data, schema, None, tmp_path / "ledger", dataset="survey",
                     allow_random_dp=True)
    assert door.ledger.accountant == "filter"  # a curator deployment refuses by the filter
    door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.3})
    dp_before = door.ledger.accounts()
    rel = door.release(*SENSITIVITY)
    assert isinstance(rel.guarantee, RandomDP)
    acc = door.ledger.accounts()
    assert acc.dp_basic == dp_before.dp_basic and acc.dp_spent == dp_before.dp_spent
    assert acc.random.gamma == pytest.approx(0.1) and acc.random_entries == 1


def test_app_and_run_pass_the_dataset_and_random_dp_flags(tmp_path, table, capsys):
    from dpcore.release.curator import deployment_from_env

    data, schema = _write(tmp_path / "d.csv", table, SCHEMA)
    assert main(["app", "--private", str(data), "--schema", str(schema), "--budget", "2,1e-6",
                 "--ledger-dir", str(tmp_path / "l"), "--dataset", "survey", "--random-dp",
                 "--dry-run", "-q"]) == 2
    assert "budget with γ" in capsys.readouterr().err
    from dpcore.release.curator import curator_env

    env = curator_env(str(data), str(schema), "2,1e-6,0.1", str(tmp_path / "l"),
                      dataset="survey", allow_random_dp=True)
    dep = deployment_from_env(env)
    assert dep.dataset == "survey" and dep.allow_random_dp
    assert not deployment_from_env({k: v for k, v in env.items()
                                    if k != "DPCORE_ALLOW_RANDOM_DP"}).allow_random_dp
    assert main(["run", "dplloyd", str(data), "--schema", str(schema), "--ledger-dir",
                 str(tmp_path / "l"), "--dataset", "survey", "-k", "2", "--epsilon", "0.2",
                 "-q"]) == 0
    capsys.readouterr()
    assert main(["ledger", "show", "--dataset", "survey", "--ledger-dir",
                 str(tmp_path / "l")]) == 0
    out = capsys.readouterr().out
    assert "survey: 1 release(s)" in out and "random DP account" in out


# ---- named analysts ------------------------------------------------------------------------------


def test_named_analysts_spend_their_own_share(tmp_path):
    key = named_key("survey")
    cur = LastingLedger(key, ApproxDP(3.0, 1e-6), directory=tmp_path)
    t_ann = cur.grant("ann", ApproxDP(1.0, 3e-7))
    t_bob = cur.grant("bob", ApproxDP(1.0, 3e-7))
    with pytest.raises(BudgetExceededError, match="shares"):
        cur.grant("eve", ApproxDP(1.5, 0.0))  # 1 + 1 + 1.5 > 3
    ann = LastingLedger(key, directory=tmp_path, analyst_token=t_ann)
    bob = LastingLedger(key, directory=tmp_path, analyst_token=t_bob)
    ann.spend("a1", PureDP(0.6))
    with pytest.raises(BudgetExceededError, match="analyst 'ann'"):
        ann.spend("a2", PureDP(0.6))  # 1.2 > ann's 1.0, though the budget has room
    bob.spend("b1", PureDP(0.9))  # ann's spending did not touch bob's share
    with pytest.raises(BudgetExceededError, match="unallocated"):
        cur.spend("c1", PureDP(1.2))  # no token: only the unallocated 1.0
    cur.spend("c1", PureDP(0.9))
    assert [e.analyst for e in cur.entries] == ["ann", "bob", None]
    assert ann.remaining().epsilon == pytest.approx(0.4)
    rows = {r["analyst"]: r for r in cur.analysts()}
    assert rows["ann"]["releases"] == 1 and rows["(unallocated)"]["releases"] == 1
    with pytest.raises(LedgerError, match="token"):
        LastingLedger(key, directory=tmp_path, analyst_token="dpa_not-a-token")
    cur.revoke("bob")
    with pytest.raises(LedgerError, match="token"):
        LastingLedger(key, directory=tmp_path, analyst_token=t_bob)
    assert t_ann not in (tmp_path / "ledger.sqlite3").read_bytes().decode("latin-1")


def test_grant_prints_a_token_that_dpcore_run_spends_with(tmp_path, table, capsys):
    data, schema = _write(tmp_path / "d.csv", table, SCHEMA)
    ledger_dir = str(tmp_path / "l")
    open_door(data, schema, "2,1e-6", ledger_dir, dataset="survey")
    assert main(["ledger", "grant", "ann", "--dataset", "survey", "--epsilon", "0.5",
                 "--ledger-dir", ledger_dir, "-q"]) == 0
    token = capsys.readouterr().out.strip()
    assert token.startswith("dpa_")
    base = ["run", "dplloyd", str(data), "--schema", str(schema), "--ledger-dir", ledger_dir,
            "--dataset", "survey", "-k", "2", "--token", token, "-q"]
    assert main([*base, "--epsilon", "0.4"]) == 0
    assert main([*base, "--epsilon", "0.4"]) == 2  # 0.8 > ann's 0.5
    assert "analyst 'ann'" in capsys.readouterr().err
    assert main(["ledger", "analysts", "--dataset", "survey", "--ledger-dir", ledger_dir]) == 0
    assert "ann: share" in capsys.readouterr().out


def test_app_shows_an_error_box_not_a_traceback_when_the_ledger_was_edited(tmp_path, table,
                                                                           monkeypatch):
    from apptest_helpers import APP, clear_caches
    from streamlit.testing.v1 import AppTest

    clear_caches()
    data, schema = _write(tmp_path / "d.csv", table, SCHEMA)
    ledger_dir = tmp_path / "ledger"
    for k, v in {"DPCORE_PRIVATE_DATA": str(data), "DPCORE_PRIVATE_SCHEMA": str(schema),
                 "DPCORE_PRIVATE_BUDGET": "3,1e-5", "DPCORE_PRIVATE_DATASET": "survey",
                 "DPCORE_LEDGER_DIR": str(ledger_dir)}.items():
        monkeypatch.setenv(k, v)
    token = open_door(data, schema, "3,1e-5", ledger_dir, dataset="survey").ledger.grant(
        "ann", ApproxDP(2, 5e-6))  # the curator keeps ε = 1 unallocated
    try:
        at = AppTest.from_file(APP, default_timeout=120)
        at.run()
        at.text_input(key="login_name").input("ann")
        at.text_input(key="login_token").input(token)
        at.button(key="login_submit").click().run()
        at.switch_page("pages/ledger.py").run()
        assert not at.exception and not at.error
        text = " ".join(m.value for m in at.markdown)
        assert "**DP account**" in text and "**Random-DP account**" not in text  # no γ
        open_door(data, schema, None, ledger_dir, dataset="survey").ledger.spend("x", PureDP(1))
        _sql(ledger_dir, "UPDATE entries SET guarantee = "
             "'{\"type\": \"PureDP\", \"epsilon\": 0.0}' WHERE kind = 'release'")
        at.run()
        assert not at.exception
        assert any("ledger cannot be used: its file was moved, replaced or edited" in e.value
                   for e in at.error)
    finally:
        clear_caches()
