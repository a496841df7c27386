"""The ledger's two accounts (dpcore.privacy.guarantees.PrivacyLedger): random DP never moves the
DP total; the DP account refuses against its tight total (a Rényi filter over each release's
parts) only when every entry can be accounted that way, and reports the basic total beside it."""

from __future__ import annotations

import math

import pytest

from dpcore.privacy.guarantees import (
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    Gaussian,
    Laplace,
    LedgerEntry,
    PrivacyLedger,
    PureDP,
    RandomDP,
    part_from_dict,
    parts_consistent,
)

ROUNDS = [PureDP(0.02)] * 50  # a release of ε = 1 made of 50 parts (DP-Lloyd-like)


def test_random_dp_never_moves_the_dp_total():
    led = PrivacyLedger(RandomDP(2.0, 1e-6, 0.1))
    led.spend("lloyd", PureDP(1.0), parts=ROUNDS)
    before = led.accounts()
    led.spend("sampler", RandomDP(0.8, 0.0, 0.05))
    after = led.accounts()
    assert after.dp_basic == before.dp_basic == ApproxDP(1.0, 0.0)
    assert after.dp_spent == before.dp_spent and after.dp_tight == before.dp_tight
    assert after.random == RandomDP(1.8, 0.0, 0.05) and after.random_entries == 1
    assert led.total() == RandomDP(1.8, 0.0, 0.05)  # the random-DP account (all releases)
    # the random account still caps the whole session: γ 0.05 + 0.06 > 0.1
    with pytest.raises(BudgetExceededError, match="random-DP"):
        led.spend("sampler 2", RandomDP(0.1, 0.0, 0.06))


def test_a_ledger_without_gamma_has_no_random_account():
    led = PrivacyLedger(ApproxDP(2.0, 1e-6))
    with pytest.raises(TypeError, match="γ"):
        led.spend("sampler", RandomDP(0.1, 0.0, 0.01))
    assert led.accounts().random is None and len(led) == 0


def test_tight_total_lets_many_small_parts_fit_where_basic_refuses():
    tight, basic = PrivacyLedger(ApproxDP(2.0, 1e-6)), PrivacyLedger(ApproxDP(2.0, 1e-6),
                                                                     accountant="basic")
    for led in (tight, basic):
        led.spend("r1", PureDP(1.0), parts=ROUNDS)
        led.spend("r2", PureDP(1.0), parts=ROUNDS)
    tight.spend("r3", PureDP(1.0), parts=ROUNDS)  # 150 parts of 0.02: ε ≈ 1.9 by the filter
    with pytest.raises(BudgetExceededError):
        basic.spend("r3", PureDP(1.0), parts=ROUNDS)
    acc = tight.accounts()
    assert acc.refuses_by.startswith("tight") and acc.dp_basic.epsilon == pytest.approx(3.0)
    assert acc.dp_tight.epsilon < 2.0 and acc.dp_tight.delta <= 1e-6
    assert tight.remaining().epsilon == pytest.approx(2.0 - acc.dp_tight.epsilon)
    # the same release without its parts is one ε = 1 part: no gain (and refused now)
    with pytest.raises(BudgetExceededError, match="tight"):
        tight.spend("coarse", PureDP(1.0))


def test_tight_is_never_worse_than_basic_and_basic_is_reported():
    led = PrivacyLedger(ApproxDP(1.0, 1e-6))
    led.spend("one big release", PureDP(1.0))  # one part: the pure filter, exactly basic
    acc = led.accounts()
    assert acc.dp_basic == ApproxDP(1.0, 0.0) and acc.dp_spent.epsilon == pytest.approx(1.0)
    assert acc.filter_member == "pure"


def test_filter_alone_is_stricter_than_basic_at_the_edge():
    """accountant="filter" keeps 10 % of δ for the conversion: a release using all of δ is
    refused, which basic composition (and the default "tight") allow."""
    strict, default = (PrivacyLedger(ApproxDP(1.0, 1e-6), accountant=a)
                       for a in ("filter", "tight"))
    default.spend("all of delta", ApproxDP(0.5, 1e-6))
    with pytest.raises(BudgetExceededError):
        strict.spend("all of delta", ApproxDP(0.5, 1e-6))


def test_tight_is_used_only_when_every_entry_can_be_accounted():
    class Unknown:  # a part a newer version might have written
        kind = "Unknown"

    odd = LedgerEntry("odd", PureDP(0.5), parts=(Unknown(),))  # type: ignore[arg-type]
    led = PrivacyLedger.from_entries(ApproxDP(2.0, 1e-6), [odd])
    acc = led.accounts()
    assert acc.dp_tight is None and acc.refuses_by == "basic"
    led.spend("r1", PureDP(1.0), parts=ROUNDS)
    with pytest.raises(BudgetExceededError, match="basic"):
        led.spend("r2", PureDP(0.6), parts=[PureDP(0.02)] * 30)  # basic: 2.1 > 2


def test_parts_must_compose_to_the_guarantee():
    led = PrivacyLedger(ApproxDP(2.0, 1e-6))
    with pytest.raises(ValueError, match="do not compose"):
        led.spend("lloyd", PureDP(1.0), parts=[PureDP(0.02)] * 49)  # one round forgotten
    assert len(led) == 0
    assert parts_consistent([Laplace(0.5), PureDP(0.5)], PureDP(1.0))
    assert not parts_consistent([ZCDP(0.01, 5e-7)], ApproxDP(1.0, 1e-6))  # converts below ε
    assert parts_consistent([Gaussian(10.0)], ZCDP(0.005))
    assert not parts_consistent([PureDP(1.0)], RandomDP(1.0, 0, 0.1))


def test_zcdp_parts_of_an_approx_release_follow_friendlycore():
    from dpcore.privacy.guarantees import zcdp_to_epsilon

    rho, delta = 0.0166, 1e-6
    eps = zcdp_to_epsilon(rho, delta / 2)
    assert parts_consistent([ZCDP(0.1 * rho, delta / 4), ZCDP(0.9 * rho, delta / 4)],
                            ApproxDP(eps, delta))


def test_parts_round_trip_and_export():
    for p in (PureDP(0.1), ApproxDP(0.1, 1e-7), ZCDP(0.2, 1e-8), Laplace(0.3), Gaussian(2.0)):
        assert part_from_dict(p.as_dict()) == p
    with pytest.raises(ValueError):
        part_from_dict(RandomDP(1, 0, 0.1).as_dict())
    led = PrivacyLedger(RandomDP(2.0, 1e-6, 0.1))
    led.spend("a", PureDP(0.5), parts=[Laplace(0.25), Laplace(0.25)])
    led.spend("b", RandomDP(0.5, 0, 0.05))
    import json

    doc = json.loads(led.to_json())
    assert doc["entries"][0]["parts"][0] == {"type": "Laplace", "epsilon": 0.25}
    assert doc["entries"][1]["account"] == "random"
    assert doc["accounts"]["dp"]["basic"]["epsilon"] == 0.5
    assert "γ-fraction" in doc["accounts"]["random"]["caveat"]
    assert list(led.to_frame()["account"]) == ["DP", "random DP"]


def test_zcdp_budget_and_pure_budget_compose_as_before():
    z = PrivacyLedger(ZCDP(0.5))
    z.spend("g", ZCDP(0.3), parts=[Gaussian(math.sqrt(1 / 0.6))])
    assert z.accounts().dp_tight is None and z.spent() == ZCDP(0.3)
    p = PrivacyLedger(PureDP(1.0))
    p.spend("a", PureDP(0.6), parts=[PureDP(0.3), PureDP(0.3)])
    assert p.remaining().epsilon == pytest.approx(0.4) and p.accounts().dp_tight is None
