import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.privacy.guarantees import (
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    PrivacyLedger,
    PureDP,
    RandomDP,
    compose,
    zcdp_to_epsilon,
)

eps_st = st.floats(min_value=0.0, max_value=10.0)
delta_st = st.floats(min_value=0.0, max_value=1e-3)
gamma_st = st.floats(min_value=0.0, max_value=0.05)


def guarantee_st():
    return st.one_of(
        st.builds(PureDP, eps_st),
        st.builds(ApproxDP, eps_st, delta_st),
        st.builds(RandomDP, eps_st, delta_st, gamma_st),
    )


# --- value types -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("factory", "match"),
    [
        (lambda: PureDP(-1), "epsilon"),
        (lambda: PureDP(float("nan")), "epsilon"),
        (lambda: PureDP("a"), "epsilon"),
        (lambda: ApproxDP(1, 1.0), "delta"),
        (lambda: ApproxDP(1, -0.1), "delta"),
        (lambda: ZCDP(-0.5), "rho"),
        (lambda: RandomDP(1, 0, 1.2), "gamma"),
    ],
)
def test_validation(factory, match):
    with pytest.raises((ValueError, TypeError), match=match):
        factory()


def test_frozen_and_readable():
    g = ApproxDP(1.0, 1e-6)
    with pytest.raises(AttributeError):
        g.epsilon = 2  # type: ignore[misc]
    assert str(g) == "(ε = 1, δ = 1e-06)-DP"
    assert str(PureDP(0.5)) == "ε = 0.5 (pure DP)"
    assert str(ZCDP(0.25)) == "ρ = 0.25 zCDP"
    assert "γ = 0.1" in str(RandomDP(1, 0, 0.1))
    assert json.loads(json.dumps(RandomDP(1, 0, 0.1).as_dict()))["gamma"] == 0.1


def test_conversions_match_formulas():
    assert PureDP(2.0).to_zcdp() == ZCDP(2.0)
    rho, delta = 0.5, 1e-6
    expected = rho + 2 * math.sqrt(rho * math.log(1 / delta))
    assert ZCDP(rho).to_approx_dp(delta).epsilon == pytest.approx(expected, rel=1e-15)
    assert ZCDP(rho, 1e-7).to_approx_dp(delta).delta == pytest.approx(1e-7 + delta)
    assert zcdp_to_epsilon(0.0, 1e-9) == 0.0
    with pytest.raises(ValueError, match="delta_conv"):
        ZCDP(0.1).to_approx_dp()
    with pytest.raises(TypeError, match="γ"):
        RandomDP(1, 0, 0.1).to_approx_dp()


def test_compose_kinds():
    assert compose() == PureDP(0.0)
    assert compose(PureDP(1), PureDP(2)) == PureDP(3)
    assert compose(PureDP(1), ApproxDP(1, 1e-6)) == ApproxDP(2, 1e-6)
    assert compose(PureDP(2), ZCDP(1)) == ZCDP(3)
    r = compose(ApproxDP(1, 1e-6), RandomDP(1, 0, 0.05), RandomDP(1, 0, 0.05))
    assert isinstance(r, RandomDP)
    assert (r.epsilon, r.delta, r.gamma) == (3, 1e-6, pytest.approx(0.1))
    assert PureDP(1) + PureDP(1) == PureDP(2)
    with pytest.raises(TypeError, match="δ'"):
        compose(ZCDP(1), ApproxDP(1, 1e-6))
    with pytest.raises(TypeError, match="not a privacy guarantee"):
        compose(PureDP(1), 3)  # type: ignore[arg-type]


@settings(deadline=None)  # timing is not the property: the 200 ms default fails under load
@given(st.lists(guarantee_st(), min_size=1, max_size=8), st.randoms())
def test_composition_is_order_independent_and_additive(gs, random):
    shuffled = list(gs)
    random.shuffle(shuffled)
    a, b = compose(*gs), compose(*shuffled)
    assert type(a) is type(b)
    for k, v in a.as_dict().items():
        if k != "type":
            assert v == pytest.approx(b.as_dict()[k], rel=1e-12, abs=1e-15)
    assert a.epsilon == pytest.approx(math.fsum(g.epsilon for g in gs))


@settings(deadline=None)  # timing is not the property: the 200 ms default fails under load
@given(st.lists(st.floats(0, 2), min_size=1, max_size=6), st.floats(1e-10, 1e-2))
def test_zcdp_composes_tighter_than_converted_sum(rhos, delta):
    # ρ adds; converting once is never worse than converting each term and adding ε's
    # (√ is subadditive), with the δ's of the separate conversions summed.
    once = ZCDP(sum(rhos)).to_approx_dp(delta).epsilon
    each = sum(ZCDP(r).to_approx_dp(delta / len(rhos)).epsilon for r in rhos)
    assert once <= each + 1e-9


# --- ledger ------------------------------------------------------------------------------------


def test_ledger_refuses_without_recording():
    ledger = PrivacyLedger(PureDP(1.0))
    ledger.spend("a", PureDP(0.6), k=3)
    with pytest.raises(BudgetExceededError, match="refused 'b'"):
        ledger.spend("b", PureDP(0.5))
    assert len(ledger) == 1
    assert ledger.total() == PureDP(0.6)
    assert ledger.remaining().epsilon == pytest.approx(0.4)
    assert ledger.can_spend(PureDP(0.4)) and not ledger.can_spend(PureDP(0.41))
    ledger.spend("c", PureDP(0.4))  # exactly the rest is allowed
    assert ledger.remaining().epsilon == pytest.approx(0.0)


def test_ledger_type_mismatch_refused():
    ledger = PrivacyLedger(PureDP(1.0))
    with pytest.raises(TypeError, match="cannot be composed"):
        ledger.spend("x", ApproxDP(0.1, 1e-9))
    assert not ledger.can_spend(ApproxDP(0.1, 1e-9))
    with pytest.raises(TypeError):
        PrivacyLedger(ApproxDP(1, 1e-6)).spend("r", RandomDP(0.1, 0, 0.01))


def test_ledger_zcdp_entries_converted_once_with_remaining_delta():
    ledger = PrivacyLedger(ApproxDP(3.0, 1e-6))
    ledger.spend("pure", PureDP(0.5))
    ledger.spend("z1", ZCDP(0.01))
    ledger.spend("z2", ZCDP(0.02))
    total = ledger.total()
    assert total.epsilon == pytest.approx(0.5 + zcdp_to_epsilon(0.03, 1e-6))
    assert total.delta == pytest.approx(1e-6)


def test_ledger_zcdp_budget_takes_pure_as_rho():
    ledger = PrivacyLedger(ZCDP(1.0))
    ledger.spend("p", PureDP(1.0))
    assert ledger.total() == ZCDP(0.5)
    with pytest.raises(BudgetExceededError):
        ledger.spend("p2", PureDP(1.1))


def test_ledger_random_dp_budget():
    ledger = PrivacyLedger(RandomDP(2.0, 1e-6, 0.1))
    ledger.spend("s", RandomDP(1.0, 0.0, 0.05))
    ledger.spend("p", PureDP(0.5))
    assert ledger.total() == RandomDP(1.5, 0.0, 0.05)
    with pytest.raises(BudgetExceededError):
        ledger.spend("s2", RandomDP(0.1, 0.0, 0.06))


def test_ledger_exports():
    ledger = PrivacyLedger(ApproxDP(2.0, 1e-5))
    ledger.spend("mean", PureDP(0.5), columns=["a", "b"])
    ledger.spend("fc", ZCDP(0.01, 1e-8))
    df = ledger.to_frame()
    assert list(df["label"]) == ["mean", "fc"]
    assert df.loc[0, "epsilon"] == 0.5 and df.loc[1, "rho"] == 0.01
    doc = json.loads(ledger.to_json())
    assert doc["budget"] == {"type": "ApproxDP", "epsilon": 2.0, "delta": 1e-5}
    assert doc["entries"][0]["params"] == {"columns": ["a", "b"]}
    assert doc["total"]["epsilon"] == pytest.approx(ledger.total().epsilon)
    ledger.reset()
    assert len(ledger) == 0 and ledger.total() == ApproxDP(0, 0)


@settings(max_examples=60, deadline=None)  # timing is not the property
@given(
    st.floats(0.1, 10),
    st.lists(st.tuples(st.booleans(), st.floats(0.0, 3.0)), min_size=1, max_size=15),
)
def test_ledger_never_exceeds_budget(budget_eps, requests):
    """The total a ledger judges refusals by (:meth:`PrivacyLedger.spent`) never exceeds its
    budget; with the basic accountant that is the basic total itself. (The default "tight"
    accountant admits a release when either total fits, so the basic total alone may exceed
    the budget while the Rényi filter's stays within: hypothesis found ε 3.04 basic at a budget
    of 3, which the old assertion on ``total()`` called an overspend.)"""
    tight = PrivacyLedger(ApproxDP(budget_eps, 1e-6))
    basic = PrivacyLedger(ApproxDP(budget_eps, 1e-6), accountant="basic")
    for is_zcdp, x in requests:
        g = ZCDP(x / 10) if is_zcdp else PureDP(x)
        for ledger in (tight, basic):
            try:
                ledger.spend("r", g)
            except BudgetExceededError:
                pass
        for total in (tight.spent(), basic.spent(), basic.total()):
            assert total.epsilon <= budget_eps * (1 + 1e-9)
            assert total.delta <= 1e-6 * (1 + 1e-9)


@settings(deadline=None)  # timing is not the property: the 200 ms default fails under load
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=10), st.randoms())
def test_ledger_total_is_order_independent(epss, random):
    a = PrivacyLedger(PureDP(100.0))
    b = PrivacyLedger(PureDP(100.0))
    shuffled = list(epss)
    random.shuffle(shuffled)
    for e in epss:
        a.spend("x", PureDP(e))
    for e in shuffled:
        b.spend("x", PureDP(e))
    assert a.total().epsilon == pytest.approx(b.total().epsilon, rel=1e-12, abs=1e-15)
