"""Tests written from the survivors of ``make mutate``'s guarantees module
(``dpcore/privacy/guarantees.py``; run of 2026-11-26, see ``docs/testing.md``).

Each test names the function and the mutation it kills (checked against the mutant with mutmut's
``MUTANT_UNDER_TEST`` in the run's ``mutants/`` copy) and the bug it stands for: the in-memory
ledger's accounts as it shows and exports them (a spend under-stated in the audit trail), the
trial copy that must refuse what the ledger refuses, and the refusal's text.
"""

from __future__ import annotations

import json

import pytest

from dpcore.core.errors import BudgetExceededError
from dpcore.mechanisms.friendlycore.filters import FilterResult
from dpcore.privacy.accountant import FilterPlan
from dpcore.privacy.guarantees import (
    ZCDP,
    ApproxDP,
    LedgerEntry,
    PrivacyLedger,
    PureDP,
    RandomDP,
)

ROUNDS = [PureDP(0.02)] * 50  # one ε = 1 release made of 50 parts (DP-Lloyd-like)


def _mixed() -> PrivacyLedger:
    """A random-DP budget with two DP entries (one by an analyst, one with parts) and one
    random-DP entry: every field of the accounts differs from its neighbour's."""
    led = PrivacyLedger(RandomDP(4.0, 1e-6, 0.2))
    led.spend("lloyd", PureDP(1.0), parts=ROUNDS)
    # as the lasting ledger reads an analyst's entry back (ledger_chain builds LedgerEntry)
    led._entries.append(LedgerEntry("mean", ZCDP(0.01), {"k": 2}, analyst="ana"))
    led.spend("sampler", RandomDP(0.5, 0.0, 0.05))
    return led


def test_accounts_export_every_total_under_its_name():
    """Accounts.as_dict (mutants renaming its keys, or returning None for a tight total or a
    random total that exists): the JSON the ledger page and the CLI export must carry the DP
    account's budget, basic, tight and spent totals, which total refuses, and the random-DP
    account's budget, total and entry count. A renamed or dropped key is an audit trail that
    no longer shows what was spent."""
    acc = _mixed().accounts()
    assert acc.dp_tight is not None and acc.random is not None
    d = acc.as_dict()
    assert d["dp"] == {"budget": acc.dp_budget.as_dict(), "basic": acc.dp_basic.as_dict(),
                       "tight": acc.dp_tight.as_dict(), "spent": acc.dp_spent.as_dict(),
                       "refuses_by": acc.refuses_by, "filter_member": acc.filter_member}
    assert d["random"]["budget"] == acc.random_budget.as_dict()
    assert d["random"]["total"] == acc.random.as_dict()
    assert d["random"]["entries"] == 1
    assert set(d["random"]) == {"budget", "total", "entries", "caveat"}


def test_random_entries_counts_the_random_releases():
    """PrivacyLedger.accounts (`e.account == "random"` → `!=`): with two DP entries and one
    random-DP entry the count is 1, not 2. Catches the random account's entry count taken
    from the DP entries."""
    assert _mixed().accounts().random_entries == 1


def test_entry_export_names_its_analyst_only_when_there_is_one():
    """LedgerEntry.as_dict (`analyst is not None` → `is None`, the value or key replaced): an
    analyst's spend must name the analyst in the export (whose share it came from), and an
    entry without one has no analyst key."""
    e_lloyd, e_mean, _ = _mixed().entries
    assert e_mean.as_dict()["analyst"] == "ana"
    assert "analyst" not in e_lloyd.as_dict()


def test_frame_counts_parts_and_names_the_analyst():
    """PrivacyLedger.to_frame (the parts and analyst columns replaced by None, renamed, or the
    single-part count 1 → 2): the table shown on the ledger page counts a release's parts (50
    for DP-Lloyd's rounds, 1 for a release that is its own part) and names its analyst."""
    df = _mixed().to_frame()
    assert list(df["parts"]) == [50, 1, 1]
    assert list(df["analyst"].fillna("-")) == ["-", "ana", "-"]


def test_json_export_holds_the_filter_plan_that_refuses():
    """PrivacyLedger.to_json (the "filter" key renamed, or None although the ledger has a
    plan, or the plan's as_dict called on None): the export records the Rényi filter's plan,
    without which the tight total cannot be re-derived; the basic accountant has none."""
    led = PrivacyLedger(ApproxDP(2.0, 1e-6))
    led.spend("lloyd", PureDP(1.0), parts=ROUNDS)
    doc = json.loads(led.to_json())
    assert doc["filter"] == led.plan.as_dict()
    assert json.loads(PrivacyLedger(ApproxDP(2.0, 1e-6), accountant="basic").to_json())[
        "filter"] is None


def test_tight_total_is_the_filter_total():
    """PrivacyLedger.tight_total (`_tight(None)`, or `[1]`: the filter's member name instead of
    its total): it returns the Rényi filter's (ε, δ), the same as the accounts' tight total,
    below the basic total for many small parts."""
    led = PrivacyLedger(ApproxDP(4.0, 1e-6))
    for i in range(3):
        led.spend(f"r{i}", PureDP(1.0), parts=ROUNDS)
    tight = led.tight_total()
    assert isinstance(tight, ApproxDP) and tight == led.accounts().dp_tight
    assert tight.epsilon < 3.0


def test_remaining_of_a_random_budget_subtracts_the_random_account():
    """PrivacyLedger.remaining (`self.total() if random_budget is not None` → `... and False`:
    the DP account's total instead): under a random-DP budget what remains must subtract every
    release, γ included; the mutant shows the whole γ (and the random releases' ε) as unspent."""
    led = PrivacyLedger(RandomDP(2.0, 1e-6, 0.1))
    led.spend("sampler", RandomDP(0.5, 0.0, 0.04))
    left = led.remaining()
    assert left.gamma == pytest.approx(0.06) and left.epsilon == pytest.approx(1.5)


def test_can_spend_judges_the_release_with_its_parts():
    """PrivacyLedger.can_spend (`parts` → None): after two ε = 1 releases of 50 parts, a third
    fits a (1.5, 10⁻⁶) budget only by the tight total of its parts (ε ≈ 1.35; as one atom ≈
    2.04); can_spend must agree with spend. Catches a pre-check that judges the whole guarantee
    as one atom (it then says no to a release that spend accepts)."""
    led = PrivacyLedger(ApproxDP(1.5, 1e-6))
    led.spend("r1", PureDP(1.0), parts=ROUNDS)
    led.spend("r2", PureDP(1.0), parts=ROUNDS)
    assert not led.can_spend(PureDP(1.0))  # as one atom
    assert led.can_spend(PureDP(1.0), parts=ROUNDS)
    led.spend("r3", PureDP(1.0), parts=ROUNDS)  # and spend agrees


def test_copy_refuses_what_the_ledger_refuses_under_its_own_plan():
    """PrivacyLedger.copy (`plan=None` or the plan dropped): a copy, the trial on which the
    release door checks a multi-part release, must keep the ledger's Rényi filter plan (a
    stored ledger keeps the plan it was created with). Under a plan with the single order 2,
    a third ε = 1 release of 50 parts exceeds a (2.5, 10⁻⁶) budget (ε = 3), while the default
    plan of that budget accepts it (ε ≈ 1.35): a copy with the default plan would pass a
    release the ledger then refuses."""
    plan = FilterPlan.for_budget(2.5, 1e-6, orders=(2.0,))
    led = PrivacyLedger(ApproxDP(2.5, 1e-6), accountant="filter", plan=plan)
    led.spend("r1", PureDP(1.0), parts=ROUNDS)
    led.spend("r2", PureDP(1.0), parts=ROUNDS)
    assert not led.can_spend(PureDP(1.0), parts=ROUNDS)
    assert PrivacyLedger.from_entries(led.budget, led.entries, accountant="filter").can_spend(
        PureDP(1.0), parts=ROUNDS)  # the default plan would accept it
    twin = led.copy()
    assert twin.plan == plan and twin.accountant == "filter"
    assert not twin.can_spend(PureDP(1.0), parts=ROUNDS)


def test_a_refusal_says_what_the_release_needs_and_what_is_spent():
    """PrivacyLedger._refusal_text (the needed guarantee replaced by None or by the several-part
    text "together more" for one release, the budget by None): the refusal the analyst reads
    names the release, what it needs, the spent total, the budget and what remains (all public:
    functions of the budget and the charges)."""
    led = PrivacyLedger(ApproxDP(1.0, 1e-6), accountant="basic")
    led.spend("first", PureDP(0.75))
    with pytest.raises(BudgetExceededError) as err:
        led.spend("second", PureDP(0.5))
    text = str(err.value)
    assert f"refused 'second': it needs {PureDP(0.5)}, but {led.spent()} of the budget " \
           f"{led.dp_budget} is already spent ({led.remaining()} left" in text
    rnd = PrivacyLedger(RandomDP(1.0, 0.0, 0.1))
    rnd.spend("s1", RandomDP(0.5, 0.0, 0.08))
    with pytest.raises(BudgetExceededError) as err:
        rnd.spend("s2", RandomDP(0.1, 0.0, 0.05))
    assert f"it needs {RandomDP(0.1, 0.0, 0.05)}, but {rnd.total()} of the random-DP budget" \
           in str(err.value)


def test_the_deprecated_alias_reads_the_delivered_guarantee():
    """privacy_alias (`property(None)`, the getter's name or docstring replaced): the old name
    (`FilterResult.guarantee`, which the release door and the run configurations still read)
    must return the delivered guarantee, and its help must say it is deprecated."""
    res = FilterResult(mask=None, scores=None, probabilities=None, privacy_=ZCDP(0.1, 1e-6))
    assert res.guarantee is res.privacy_
    prop = FilterResult.__dict__["guarantee"]
    assert prop.fget.__name__ == "guarantee"
    assert prop.__doc__.startswith("Deprecated name of ``privacy_``")


def test_a_random_release_between_dp_releases_leaves_the_tight_total_whole():
    """PrivacyLedger._dp_atoms (`continue` → `break` at a random-DP entry): the tight total must
    take the parts of every DP release, also those recorded after a random-DP one. The mutant
    stops at the first random-DP entry, so the DP releases after it are left out of the tight
    total, which then under-states the DP spend and accepts what the budget cannot pay."""
    with_random = PrivacyLedger(RandomDP(4.0, 1e-6, 0.2))
    without = PrivacyLedger(ApproxDP(4.0, 1e-6))
    for led in (with_random, without):
        led.spend("r1", PureDP(1.0), parts=ROUNDS)
        if led is with_random:
            led.spend("sampler", RandomDP(0.5, 0.0, 0.05))
        led.spend("r2", PureDP(1.0), parts=ROUNDS)
    assert with_random.tight_total() == without.tight_total()
    assert with_random.accounts().dp_tight.epsilon > PrivacyLedger.from_entries(
        without.budget, without.entries[:1]).tight_total().epsilon


def test_the_dp_account_of_a_random_budget_without_delta_is_pure():
    """PrivacyLedger.dp_budget (the `δ > 0` test made `>= 0` or always true, or `PureDP(None)`):
    a random-DP budget (ε, 0, γ) has a pure DP account, which refuses approximate releases by
    kind (a pure budget cannot pay any δ) and has no Rényi filter."""
    led = PrivacyLedger(RandomDP(1.0, 0.0, 0.1))
    assert led.dp_budget == PureDP(1.0) and isinstance(led.dp_budget, PureDP)
    assert led.plan is None and isinstance(led.accounts().dp_basic, PureDP)
    assert PrivacyLedger(RandomDP(1.0, 1e-6, 0.1)).dp_budget == ApproxDP(1.0, 1e-6)


def test_a_budget_without_epsilon_builds_and_refuses_every_charge():
    """PrivacyLedger.__init__ (`ε > 0` → `ε >= 0` in the choice of a Rényi filter plan): an
    (0, δ) budget has no filter (the plan needs ε > 0 and would raise), so the ledger must
    still build and refuse any ε > 0 (a curator may open a ledger with nothing to spend)."""
    led = PrivacyLedger(ApproxDP(0.0, 1e-6))
    assert led.plan is None
    assert not led.can_spend(PureDP(0.1))

