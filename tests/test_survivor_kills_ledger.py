"""Tests written from the surviving mutants of the lasting ledger (``make mutate MUTATE=ledger``:
``dpcore/privacy/ledger*.py``), one per plausible bug a survivor stood for. Each docstring names
the mutants (function and what the mutation changes; the run's numbers are in
``docs/testing.md``) and the bug. Checked against the mutants with mutmut's MUTANT_UNDER_TEST in
the run's ``.mutate/ledger/mutants`` copy."""

from __future__ import annotations

import errno

import pytest

from dpcore.privacy import ledger_file as lf


@pytest.mark.parametrize("code, reason", [
    (errno.ENOSPC, "full"), (errno.EDQUOT, "full"), (errno.EROFS, "readonly"),
    (errno.EACCES, "readonly"), (errno.EPERM, "readonly"), (errno.EISDIR, "directory"),
    (None, "other"), (errno.ENOENT, "other")])
def test_every_os_error_has_its_public_reason(code, reason):
    """Mutants of ``_os_reason``: a reason's text changed (``'XXfullXX'``, ``'READONLY'``; the
    public reason then falls back to "its file cannot be used") or ``exc.errno or 0`` → ``or 1``
    (an OSError without errno read as EPERM: "read-only"). Bug: the analyst is told the wrong
    kind of failure (a full quota as an unusable file, a failure of unknown cause as a
    read-only file)."""
    exc = OSError(code, "x") if code is not None else OSError("no errno")
    assert lf._os_reason(exc) == reason
    assert lf.public_reason(lf._failure(lf.LedgerError, "t", lf._os_reason(exc))) == \
        lf._REASONS[reason]


# ---- helpers ------------------------------------------------------------------------------------


def _ledger(d, budget=None):
    from dpcore.privacy.guarantees import ApproxDP
    from dpcore.privacy.ledger import LastingLedger

    return LastingLedger("dataset:t", budget or ApproxDP(4.0, 1e-6), directory=d, name="t")


def _release(label: str, eps: float, output):
    from types import SimpleNamespace

    from dpcore.privacy.guarantees import PureDP

    return SimpleNamespace(label=label, guarantee=PureDP(eps), output=output)


def _spend_and_keep(led, label: str, eps: float, origin: str = "page", **params):
    from dpcore.privacy.guarantees import PureDP

    spent = led.spend_many([(label, PureDP(eps), params)])
    assert led.keep_outputs(spent, [_release(label, eps, [eps])], origin=origin)


# ---- reading back: the curator's audit trail and a reloaded page ---------------------------------


def test_history_reads_back_every_event_column_by_column(tmp_path):
    """Mutants of ``LastingLedger.history``: a key renamed (``'XXidXX'``, ``'KIND'``, ...) or a
    column index shifted (id ← key, kind ← label, label ← mechanism, params ← guarantee,
    analyst ← time, time ← prev hash). Bug: the curator's audit trail shows a release under
    the wrong analyst, with the wrong parameters or time, or an event of the wrong kind."""
    from dpcore.privacy.guarantees import PureDP

    led = _ledger(tmp_path)
    led.grant("alice", PureDP(1.0))
    alice = led.as_analyst("alice")
    alice.spend("kmeans", PureDP(0.5), mechanism="dplloyd", k=3)
    led.spend("mean", PureDP(0.25), mechanism="laplace", bound=2.0)
    h = led.history()
    assert [e["kind"] for e in h] == ["budget", "grant", "release", "release"]
    assert [e["label"] for e in h][-2:] == ["kmeans", "mean"]
    ids = [e["id"] for e in h]
    assert all(isinstance(i, int) for i in ids) and ids == sorted(ids)
    assert h[-2]["params"] == {"k": 3} and h[-1]["params"] == {"bound": 2.0}
    assert h[-2]["analyst"] == "alice" and h[-1]["analyst"] is None
    times = [e["time"] for e in h]
    assert all(isinstance(t, float) for t in times) and times == sorted(times)
    assert set(h[0]) == {"id", "kind", "label", "params", "analyst", "time"}


def test_a_reloaded_page_shows_only_this_analysts_last_release(tmp_path):
    """Mutants of ``ReleasedOutputs.last_group``: ``records(analyst, ...)`` → ``records(None,
    ...)`` or ``records(origin=...)`` (every analyst's records), and ``recs[-1]`` →
    ``recs[+1]`` / ``recs[-2]`` (another click's group). Bug: a named analyst reloading the
    page is shown another analyst's released outputs (each sees only their own), or an older
    release instead of the last one."""
    from dpcore.privacy.guarantees import PureDP

    led = _ledger(tmp_path)
    led.grant("alice", PureDP(1.0))
    led.grant("bob", PureDP(1.0))
    alice, bob = led.as_analyst("alice"), led.as_analyst("bob")
    for i in range(3):
        _spend_and_keep(alice, f"alice {i}", 0.1)
    _spend_and_keep(bob, "bob 0", 0.1)
    _spend_and_keep(led, "curator 0", 0.1)
    assert [r["label"] for r in alice.last_group("page", "alice")] == ["alice 2"]
    assert [r["label"] for r in bob.last_group("page", "bob")] == ["bob 0"]
    assert [r["label"] for r in led.last_group("page", None)] == ["curator 0"]
    assert led.last_group("elsewhere", "alice") == []


def test_display_name_of_an_unnamed_data_set(tmp_path):
    """Mutants of ``LastingLedger.display_name``: ``.get('name') or '(unnamed)'`` → ``and``,
    ``.get(None)``, ``state and {}``, or the fallback's text changed. Bug: the curator's
    listing and the description refusal name an unnamed data set wrongly (its file name lost,
    or every data set called '(unnamed)')."""
    from dpcore.privacy.guarantees import PureDP
    from dpcore.privacy.ledger import LastingLedger

    led = LastingLedger("0123abcd", PureDP(1.0), directory=tmp_path, name="survey.csv")
    assert led.display_name({"name": "survey.csv"}) == "survey.csv"
    assert led.display_name({"name": ""}) == "(unnamed)"
    assert led.display_name() == "(unnamed)"
    assert _ledger(tmp_path / "n").display_name({"name": "other"}) == "t"


# ---- named analysts' shares -------------------------------------------------------------------


def test_each_analysts_remaining_share_counts_only_their_own_dp_releases(tmp_path):
    """Mutants of ``AnalystShares._analyst_ledger``: ``who = None`` whatever the grant (an
    analyst's share charged with the releases of no named analyst), ``e.analyst != who``, ``... or
    e.account == 'dp'`` (everyone's releases), ``e.account != 'dp'`` / ``'XXdpXX'`` (none of
    theirs), ``if grant is None`` (the allocation and the unallocated rest swapped) and
    ``allocation = None``. Bug: an analyst (or the curator, for the unallocated rest) reads
    back the wrong remaining share: more than is left, so they plan releases that the door
    will refuse, or less than is left."""
    from dpcore.privacy.guarantees import PureDP

    led = _ledger(tmp_path)
    led.grant("alice", PureDP(1.0))
    led.grant("bob", PureDP(1.0))
    alice, bob = led.as_analyst("alice"), led.as_analyst("bob")
    alice.spend("a", PureDP(0.5))
    bob.spend("b", PureDP(0.25))
    led.spend("c", PureDP(0.75))
    assert alice.remaining().epsilon == pytest.approx(0.5)
    assert bob.remaining().epsilon == pytest.approx(0.75)
    rows = {r["analyst"]: r for r in led.analysts()}
    assert rows["alice"]["releases"] == 1 and rows["bob"]["releases"] == 1
    assert rows["(unallocated)"]["releases"] == 1
    assert rows["(unallocated)"]["allocation"] == str(led.share_accounts(None)["allocation"])
    unallocated = led.share_accounts(None)
    assert unallocated["releases"] == 1 and unallocated["allocation"].startswith("(ε = 2,")
    assert float(unallocated["remaining"].split("=")[1].split(",")[0]) == pytest.approx(1.25)


def test_share_accounts_of_an_analyst_the_unallocated_rest_and_a_stranger(tmp_path):
    """Mutants of ``AnalystShares.share_accounts`` (the curator's per-analyst table): the
    analyst's ledger built from the unallocated rest (``_analyst_ledger(..., None)``), the
    ``grant or name is None`` test negated or made always true, a field's key renamed or its
    value replaced by ``str(None)``, ``None if ... else`` conditions forced, and the random-DP
    list taken from other analysts (``!=``, ``or``) or from the DP account (``!= 'random'``).
    Bug: the curator reads an analyst's allocation, spend, remaining share or random-DP total
    wrong (another analyst's releases counted, a stranger shown a share)."""
    from dpcore.privacy.guarantees import ApproxDP, PureDP, RandomDP
    from dpcore.privacy.ledger import LastingLedger

    led = LastingLedger("dataset:t", RandomDP(4.0, 1e-6, 0.1), directory=tmp_path)
    led.grant("alice", PureDP(1.0))
    alice = led.as_analyst("alice")
    alice.spend("a", PureDP(0.5))
    alice.spend("a random", RandomDP(0.2, 1e-7, 0.01))
    led.spend("c", PureDP(0.75))
    led.spend("c random", RandomDP(0.3, 1e-7, 0.02))
    keys = {"analyst", "allocation", "releases", "basic", "tight", "spent", "remaining",
            "random"}

    a = led.share_accounts("alice")
    assert set(a) == keys and a["analyst"] == "alice" and a["releases"] == 2
    assert a["allocation"] == str(ApproxDP(1.0, 0.0))
    assert a["basic"] == a["spent"] == str(ApproxDP(0.5, 0.0))
    assert a["tight"] is None  # a share without δ has no tight total
    assert a["remaining"] == str(ApproxDP(0.5, 0.0))
    assert a["random"] == str(RandomDP(0.2, 1e-7, 0.01))

    rest = led.share_accounts(None)
    assert set(rest) == keys and rest["analyst"] is None and rest["releases"] == 2
    assert rest["allocation"] == str(ApproxDP(3.0, 1e-6))
    assert rest["basic"] == rest["tight"] == rest["spent"] == str(ApproxDP(0.75, 0.0))
    assert rest["remaining"] == str(ApproxDP(2.25, 1e-6))
    assert rest["random"] == str(RandomDP(0.3, 1e-7, 0.02))

    stranger = led.share_accounts("nobody")
    assert stranger == {"analyst": "nobody", "releases": 0} | {
        k: None for k in keys - {"analyst", "releases"}}


@pytest.mark.parametrize("name, ok", [("x" * 100, True), ("x" * 101, False), ("  ", False),
                                      ("alice smith", True),
                                      ("a\nb", False), ("tab\there", False)])
def test_an_analyst_name_is_1_to_100_printable_characters(tmp_path, name, ok):
    """Mutants of ``AnalystShares.grant``'s name check: ``or`` → ``and`` (an empty name, or a
    name with a newline, accepted) and ``> 100`` → ``>= 100`` / ``> 101``. Bug: a grant under
    an empty name or one with control characters (which forge lines in the curator's
    listing and log), a name with a space refused, or the 100-character limit off by one."""
    from dpcore.privacy.guarantees import PureDP

    led = _ledger(tmp_path)
    if ok:
        led.grant(name, PureDP(0.5))
        assert name in led._grants()
    else:
        with pytest.raises(ValueError, match="1-100 printable"):
            led.grant(name, PureDP(0.5))
        assert led._grants() == {}


def test_a_name_without_a_grant_gets_the_one_login_answer(tmp_path):
    """Mutant of ``AnalystShares.as_analyst``: ``LoginRefused(LOGIN_REFUSED)`` →
    ``LoginRefused(None)``. Bug: a name without a grant (never granted, or revoked) answered
    differently from a wrong token, telling a caller which names exist."""
    from dpcore.privacy.guarantees import PureDP
    from dpcore.privacy.ledger_analysts import LOGIN_REFUSED, LoginRefused

    led = _ledger(tmp_path)
    token = led.grant("alice", PureDP(0.5))
    with pytest.raises(LoginRefused) as wrong_token:
        led.login("alice", token + "x")
    with pytest.raises(LoginRefused) as no_grant:
        led.as_analyst("bob")
    assert str(no_grant.value) == str(wrong_token.value) == LOGIN_REFUSED


@pytest.mark.parametrize("shares, ok", [((2.0, 2.0), True), ((3.0, 1.5), False),
                                        ((4.0, 1e-9), False)])
def test_analysts_shares_never_exceed_the_budget(tmp_path, shares, ok):
    """Mutants of ``_subtract`` (``b[k] -= v`` → ``=`` / ``+=``; the tolerance
    ``v < -1e-12·max(1, |v|)`` → ``v < +1e-12·...`` or ``v < -1.000000000001·...``) and of
    ``grant`` (the grants read with ``key_state(rows, None)``: none seen). Bug: the curator
    grants shares that add up to more than the budget (each analyst then plans on budget that
    does not exist), or cannot grant the whole budget exactly."""
    from dpcore.privacy.guarantees import ApproxDP, BudgetExceededError, PureDP

    led = _ledger(tmp_path)  # ε = 4
    led.grant("alice", PureDP(shares[0]))
    if ok:
        led.grant("bob", PureDP(shares[1]))
        assert led.share_accounts(None)["allocation"] == str(ApproxDP(0.0, 1e-6))
    else:
        with pytest.raises(BudgetExceededError):
            led.grant("bob", PureDP(shares[1]))
        assert set(led._grants()) == {"alice"}
        assert led.share_accounts(None)["allocation"] == str(ApproxDP(4.0 - shares[0], 1e-6))


def test_an_allocation_of_another_kind_is_refused(tmp_path):
    """Mutants of ``grant``'s kind check: ``and not (...)`` → ``and (...)``, and
    ``isinstance(dp, ApproxDP) and isinstance(allocation, PureDP)`` → ``or``. Bug: a random-DP
    or zCDP allocation on an (ε, δ) ledger accepted (its share then composes by rules the
    budget does not follow), or a plain ε share of an (ε, δ) budget refused."""
    from dpcore.privacy.guarantees import ZCDP, PureDP, RandomDP

    led = _ledger(tmp_path)
    for allocation in (RandomDP(0.5, 1e-7, 0.01), ZCDP(0.1)):
        with pytest.raises(TypeError, match="allocation"):
            led.grant("x", allocation)
    led.grant("x", PureDP(0.5))
    pure = _ledger(tmp_path / "pure", budget=PureDP(2.0))
    with pytest.raises(TypeError, match="allocation"):
        pure.grant("y", _ledger(tmp_path / "z").budget)  # (ε, δ) on an ε-DP ledger


def test_spend_and_store_charges_a_named_analysts_own_share(tmp_path):
    """Mutants of ``LastingLedger.spend_and_store``: ``_check_share`` given ``None`` for the
    old entries, the new ones or the grants, the old entries cut to ``[:+1]`` / ``[:-2]``,
    the grants read for key ``None``, and the release row written with ``analyst=None`` (or
    without it). Bug: an analyst's privately estimated n (the door's stored output) charged
    beyond their allocation, or charged to the unallocated rest instead of to them."""
    from dpcore.privacy.guarantees import BudgetExceededError, PureDP

    led = _ledger(tmp_path)
    led.grant("alice", PureDP(1.0))
    alice = led.as_analyst("alice")
    alice.spend("x", PureDP(0.25))
    alice.spend("y", PureDP(0.25))
    computed = []
    with pytest.raises(BudgetExceededError):
        alice.spend_and_store("n", PureDP(0.75), "n", lambda: computed.append(1) or 7)
    assert computed == [] and alice.released_value("n") is None
    assert alice.spend_and_store("n", PureDP(0.5), "n", lambda: 7) == 7
    assert led.history()[-2]["analyst"] == "alice"  # the release row, then the stored value
    assert alice.remaining().epsilon == pytest.approx(0.0, abs=1e-12)
    assert led.share_accounts(None)["releases"] == 0


def test_records_read_back_every_field_for_the_right_analyst_and_origin(tmp_path):
    """Mutants of ``ReleasedOutputs.records``: a ``continue`` → ``break`` (the records after
    the first one of another analyst or origin dropped), a field's key renamed, the mechanism
    left in ``params`` (``pop(None)``, ``pop('XXmechanismXX')``) or its default dropped, the
    charged or released guarantee replaced (``str(None)``, forced ``None``), and the group
    forced to ``None``. Bug: an analyst's or the curator's export (``dpcore ledger export``, a
    reloaded page) misses releases, or shows the wrong guarantee, mechanism or group."""
    from dpcore.privacy.guarantees import PureDP

    led = _ledger(tmp_path)
    led.grant("alice", PureDP(1.0))
    alice = led.as_analyst("alice")
    _spend_and_keep(led, "curator first", 0.1, origin="cli", mechanism="laplace", bound=1.0)
    _spend_and_keep(alice, "alice a", 0.2, origin="page", mechanism="dplloyd", k=3)
    _spend_and_keep(led, "curator second", 0.1, origin="page", mechanism="laplace", bound=1.0)
    led.spend("never kept", PureDP(0.05), mechanism="laplace")
    assert [r["label"] for r in led.records(None)] == ["curator first", "curator second",
                                                      "never kept"]
    assert [r["label"] for r in led.records(origin="page")] == ["alice a", "curator second"]
    assert [r["label"] for r in led.records("alice")] == ["alice a"]
    a = led.records("alice")[0]
    assert a["mechanism"] == "dplloyd" and a["params"] == {"k": 3}
    assert a["guarantee"] == a["released_guarantee"] == str(PureDP(0.2))
    assert a["account"] == "dp" and a["analyst"] == "alice" and a["kept"]
    assert a["origin"] == "page" and isinstance(a["group"], str) and a["output"] == [0.2]
    assert a["_guarantee"] == PureDP(0.2).as_dict()
    never = led.records()[-1]
    assert never["kept"] is False and never["released_guarantee"] is None
    assert never["group"] is None and never["params"] == {} and never["mechanism"] == "laplace"


@pytest.mark.parametrize("text, reason", [
    ("attempt to write a readonly database", "readonly"),
    ("the database is read-only", "readonly"),
    ("database or disk is full", "full"),
    ("file is not a database", "corrupt"),
    ("no such table: entries", "corrupt"),
    ("unable to open database file", None),
    ("disk I/O error", None)])
def test_each_sqlite_failure_is_classified(tmp_path, text, reason):
    """Mutants of ``_sqlite_error``'s classification (``'read-only'``, ``'no such table'``,
    ``'unable to open'`` changed or negated). Bug: a read-only or corrupt ledger reported to the
    analyst as another failure, or an unknown failure reported as 'cannot be opened'."""
    import sqlite3

    exc = lf._sqlite_error(tmp_path / "ledger.sqlite3", sqlite3.OperationalError(text))
    assert getattr(exc, "reason", None) == reason
    assert ("cannot be opened" in str(exc)) == (text == "unable to open database file")
    assert ("OperationalError" in str(exc)) == (reason is None and "I/O" in text)


def test_a_revoked_analysts_remaining_share_is_zero(tmp_path):
    """Mutants of ``LastingLedger.remaining`` for a named analyst: the grant looked up as
    ``None`` or for ``None``, ``if grant is not None``, and the revoked analyst's zero share
    built with 1.0 (or from no field). Bug: a revoked analyst is told they have budget left
    (every release they try is refused), or a granted analyst is told they have none."""
    from dpcore.privacy.guarantees import ApproxDP, PureDP

    led = _ledger(tmp_path)
    led.grant("alice", PureDP(1.0))
    alice = led.as_analyst("alice")
    alice.spend("a", PureDP(0.25))
    assert alice.remaining() == ApproxDP(0.75, 0.0)
    led.revoke("alice")
    assert alice.remaining() == ApproxDP(0.0, 0.0)


def test_keep_outputs_says_whether_it_kept_them(tmp_path, monkeypatch):
    """Mutants of ``ReleasedOutputs.keep_outputs``: the guard ``not hashes or len(...) !=
    len(...)`` → ``and``, ``getattr(spent, 'hashes', [])`` without its default, its three
    ``return`` values flipped, and ``origin=''`` → ``'XXXX'``. Bug: the door believes an output
    was kept when the ledger failed (a reloaded page then shows nothing, silently), or raises a
    ledger error after the release was made and charged."""
    from dpcore.core.errors import LedgerError

    led = _ledger(tmp_path)
    spent = led.spend_many([("a", _release("a", 0.1, None).guarantee, {})])
    assert led.keep_outputs([], []) is False  # a plain list: no hashes
    assert led.keep_outputs(spent, []) is False
    assert led.keep_outputs(spent, [_release("a", 0.1, 1.0)] * 2) is False
    assert led.records()[0]["kept"] is False

    def fail(*args, **kwargs):
        raise LedgerError("the disk is full")

    with monkeypatch.context() as m:
        m.setattr(led._store, "transaction", fail)
        assert led.keep_outputs(spent, [_release("a", 0.1, 1.0)]) is False
    assert led.keep_outputs(spent, [_release("a", 0.1, 1.0)]) is True
    assert [r["output"] for r in led.records(origin="")] == [1.0]


def test_outputs_are_kept_as_json_with_their_non_finite_values():
    """Mutants of ``_jsonable``: ``dtype.kind in 'fc'`` negated or its text changed, the
    non-finite test forced, ``str(v)`` → ``str(None)``, the object dtype of the mixed array
    dropped (numpy then turns every number into a string), the scalar test forced and
    ``flat[0]`` → ``flat[1]``. Bug: a released output kept wrongly (NaN or ±inf lost or
    written as invalid JSON, numbers turned into text, a scalar kept as a list)."""
    import json

    import numpy as np

    from dpcore.privacy.ledger_outputs import _jsonable

    assert _jsonable(np.float64(2.5)) == 2.5
    assert _jsonable(np.float64(np.nan)) == "nan"
    assert _jsonable(np.array([[1.0, np.inf], [-np.inf, 0.5]])) == [[1.0, "inf"],
                                                                    ["-inf", 0.5]]
    assert _jsonable(np.array([3, 4])) == [3, 4]
    assert _jsonable({"c": np.array([1.5])}) == {"c": [1.5]}
    json.loads(json.dumps(_jsonable(np.array([np.nan, 1.0])), allow_nan=False))


def test_public_reason_of_failures_without_one():
    """Mutants of ``public_reason``: every failure without a reason called an integrity
    failure, the fallback's key changed (``'XXotherXX'``) or its default dropped. Bug: an
    analyst told the ledger was edited when it only failed, or shown ``None``."""
    assert lf.public_reason(ValueError("x")) == lf._REASONS["other"]
    assert lf.public_reason(lf.LedgerIntegrityError("x")) == lf._REASONS["integrity"]
    assert lf.public_reason(lf._failure(lf.LedgerError, "x", "no such kind")) == \
        lf._REASONS["other"]


def test_a_description_with_values_json_lacks_has_a_canonical_text():
    """Mutants of ``description_text``: ``default=str`` dropped or ``None``. Bug: a public
    description holding a path or a date cannot be recorded (TypeError at the ledger's
    first use)."""
    from pathlib import Path

    from dpcore.privacy.ledger_chain import description_text

    assert description_text({"b": Path("x"), "a": 1}) == '{"a": 1, "b": "x"}'


def test_list_ledgers_shows_each_data_sets_accounts(tmp_path):
    """Mutants of ``list_ledgers``: a named data set's name read from ``{'XXnameXX': ...}`` or
    ``None``, the named test forced, the ``named`` key renamed, and the basic, tight, spent
    and random fields replaced by ``str(None)`` or their ``None`` test forced. Bug: the
    curator's listing shows the wrong name or a wrong account of what each data set spent (a
    pure-ε ledger's missing tight total shown as the text 'None')."""
    from dpcore.privacy.guarantees import ApproxDP, PureDP, RandomDP
    from dpcore.privacy.ledger import LastingLedger, list_ledgers

    named = _ledger(tmp_path)
    named.spend("a", PureDP(0.5))
    unnamed = LastingLedger("0123abcd", RandomDP(2.0, 1e-6, 0.1), directory=tmp_path,
                            name="survey.csv")
    unnamed.spend("r", RandomDP(0.2, 1e-7, 0.01))
    rows = {r["key"]: r for r in list_ledgers(tmp_path)}
    n, u = rows["dataset:t"], rows["0123abcd"]
    assert (n["name"], n["named"], u["name"], u["named"]) == ("t", True, "survey.csv", False)
    assert n["basic"] == n["tight"] == n["spent"] == str(ApproxDP(0.5, 0.0))
    assert n["random"] is None
    assert u["random"] == str(RandomDP(0.2, 1e-7, 0.01))
    assert u["basic"] == str(ApproxDP(0.0, 0.0))
    pure = LastingLedger("dataset:pure", PureDP(1.0), directory=tmp_path)
    pure.spend("p", PureDP(0.1))
    assert {r["key"]: r for r in list_ledgers(tmp_path)}["dataset:pure"]["tight"] is None


@pytest.mark.parametrize("name, ok", [("n" * 200, True), ("n" * 201, False), ("  ", False),
                                      ("my data", True), ("a\nb", False)])
def test_a_data_set_name_is_1_to_200_printable_characters(name, ok):
    """Mutants of ``named_key``'s check: ``or`` → ``and`` (an empty name or one with a newline
    accepted), ``> 200`` → ``>= 200`` / ``> 201``, ``ord(c) < 32`` → ``<= 32`` / ``< 33``.
    Bug: a budget kept under an empty name or one with control characters (forged lines in
    the curator's listing), a name with a space refused, or the limit off by one."""
    from dpcore.privacy.ledger import named_key

    if ok:
        assert named_key(name) == "dataset:" + name.strip()
    else:
        with pytest.raises(ValueError, match="1-200 printable"):
            named_key(name)
