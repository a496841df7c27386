"""The lasting ledger (dpcore.privacy.ledger): survives a new process, never overspends under
concurrent spends, composes every budget kind, stores no seed, and the curator CLI works on it."""

from __future__ import annotations

import json
import multiprocessing as mp
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dpcore.privacy.guarantees import (
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    PrivacyLedger,
    PureDP,
    RandomDP,
    guarantee_from_dict,
)
from dpcore.privacy.ledger import LastingLedger, dataset_key, list_ledgers, parse_budget
from dpcore.release.schema import PublicDescription

DESC = PublicDescription(["a", "b"], lower=[0, 0], upper=[1, 1], n=100)


def _table(seed: int = 0) -> pd.DataFrame:
    return pd.DataFrame(np.random.default_rng(seed).uniform(0, 1, (100, 2)), columns=["a", "b"])


def test_key_depends_on_table_and_description():
    t = _table()
    k = dataset_key(t, DESC)
    assert k == dataset_key(t.copy(), DESC)
    assert k != dataset_key(t.iloc[:-1], DESC)  # a neighbour is another data set
    assert k != dataset_key(t, PublicDescription(["a", "b"], lower=[0, 0], upper=[1, 2], n=100))


def test_entries_survive_a_new_process(tmp_path):
    led = LastingLedger("k1", ApproxDP(1.0, 1e-6), directory=tmp_path)
    led.spend("first", PureDP(0.25), mechanism="dplloyd", epsilon=0.25)
    code = ("from dpcore.privacy.ledger import LastingLedger; import sys; "
            f"led = LastingLedger('k1', directory={str(tmp_path)!r}); "
            "led.spend('second', __import__('dpcore.privacy.guarantees').privacy.PureDP(0.5)); "
            "print(len(led), led.remaining().epsilon)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["2", "0.25"]
    again = LastingLedger("k1", ApproxDP(1.0, 1e-6), directory=tmp_path)  # "reload"
    assert [e.label for e in again.entries] == ["first", "second"]
    assert again.remaining().epsilon == pytest.approx(0.25)
    with pytest.raises(BudgetExceededError):
        again.spend("third", PureDP(0.3))
    assert len(again) == 2


def _hammer(directory: str, worker: int, out, spends: int = 15, read: bool = False) -> None:
    """One process's spends of ε = 0.05 on the shared ledger (``read``: a read after each, so
    reads race writes too); puts how many were admitted."""
    led = LastingLedger("shared", directory=directory)
    ok = 0
    for i in range(spends):
        try:
            led.spend(f"w{worker}-{i}", PureDP(0.05))
            ok += 1
        except BudgetExceededError:
            pass
        if read:
            led.remaining()
    out.put(ok)


def test_concurrent_spends_from_four_processes_never_overspend(tmp_path):
    LastingLedger("shared", PureDP(1.0), directory=tmp_path)
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=_hammer, args=(str(tmp_path), w, q)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    accepted = sum(q.get(timeout=5) for _ in procs)
    led = LastingLedger("shared", directory=tmp_path)
    # 60 attempts of 0.05 against ε = 1: exactly 20 fit, whatever the interleaving.
    assert accepted == len(led) == 20
    assert led.total().epsilon <= 1.0 + 1e-9


def test_multi_part_spend_is_all_or_nothing(tmp_path):
    led = LastingLedger("k", PureDP(1.0), directory=tmp_path)
    with pytest.raises(BudgetExceededError, match="all 3 parts"):
        led.spend_many([(f"p{i}", PureDP(0.4), {}) for i in range(3)])
    assert len(led) == 0
    led.spend_many([(f"p{i}", PureDP(0.4), {}) for i in range(2)])
    assert len(led) == 2


@pytest.mark.parametrize("budget, spends, ok", [
    (ZCDP(0.5), [PureDP(0.5), ZCDP(0.3)], [True, True]),   # 0.125 + 0.3 ≤ 0.5
    (ZCDP(0.5), [ZCDP(0.4), ZCDP(0.2)], [True, False]),
    (ApproxDP(2.0, 1e-6), [ZCDP(0.05), PureDP(0.2), PureDP(0.2)], [True, True, False]),
    (RandomDP(1.0, 1e-6, 0.1), [RandomDP(0.5, 0, 0.05), RandomDP(0.4, 0, 0.06)], [True, False]),
    (ApproxDP(1.0, 1e-6), [RandomDP(0.5, 0, 0.05)], [False]),  # kind refused
])
def test_budget_kinds_compose_as_the_session_ledger_does(tmp_path, budget, spends, ok):
    led, ref = LastingLedger("k", budget, directory=tmp_path), PrivacyLedger(budget)
    for g, expect in zip(spends, ok, strict=True):
        for target in (led, ref):
            try:
                target.spend("x", g)
                got = True
            except (BudgetExceededError, TypeError):
                got = False
            assert got == expect
    assert led.total() == ref.total()
    assert type(LastingLedger("k", directory=tmp_path).budget) is type(budget)


def test_no_seed_in_entries_and_budget_change_needs_reset(tmp_path):
    led = LastingLedger("k", PureDP(1.0), directory=tmp_path)
    with pytest.raises(ValueError, match="seed"):
        led.spend("x", PureDP(0.1), seed=7)
    led.spend("x", PureDP(0.1), epsilon=0.1)
    with pytest.raises(ValueError, match="curator reset"):
        LastingLedger("k", PureDP(5.0), directory=tmp_path)
    assert led.reset() == 1
    assert LastingLedger("k", PureDP(5.0), directory=tmp_path).budget == PureDP(5.0)


def test_guarantee_round_trip_and_budget_parsing():
    for g in (PureDP(1), ApproxDP(1, 1e-6), ZCDP(0.2, 1e-7), RandomDP(1, 1e-6, 0.05)):
        assert guarantee_from_dict(json.loads(json.dumps(g.as_dict()))) == g
    assert parse_budget("2,1e-6") == ApproxDP(2, 1e-6)
    assert parse_budget("2") == PureDP(2)
    assert parse_budget("1,0,0.1") == RandomDP(1, 0, 0.1)
    with pytest.raises(ValueError, match="--budget"):
        parse_budget("two")


def test_ledger_cli_show_export_reset(tmp_path, capsys):
    from dpcore.cli import main

    led = LastingLedger("abc", PureDP(1.0), directory=tmp_path, name="data.csv")
    led.spend("r1", PureDP(0.2), mechanism="dplloyd", epsilon=0.2)
    assert main(["ledger", "show", "--ledger-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "data.csv" in out and "ε = 0.8" in out
    assert main(["ledger", "export", "--ledger-dir", str(tmp_path), "--key", "abc"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["entries"][0]["label"] == "r1" and "seed" not in json.dumps(doc)
    assert main(["ledger", "reset", "--ledger-dir", str(tmp_path), "--key", "abc", "--yes"]) == 0
    assert len(LastingLedger("abc", directory=tmp_path)) == 0
    assert list_ledgers(tmp_path)[0]["entries"] == 0
