"""Tests written from the survivors of ``make mutate``'s door module (``dpcore/release/door.py``).

The door grew since the first campaign (562 mutants now, 328 then) and some of its accounting
was tested only in files outside the module's covering set, or not at all. Each test names the
mutants it kills (``<function>:<n>``, mutmut's numbering on the run recorded in
docs/testing.md) and the plausible bug it stands for.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore.privacy.guarantees import ZCDP, ApproxDP, PrivacyLedger, PureDP, RandomDP
from dpcore.release.door import FAILED, ReleaseDoor, _covered
from dpcore.release.schema import PublicDescription

DESC = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=300)


def _door(budget=None) -> ReleaseDoor:
    table = pd.DataFrame(np.random.default_rng(0).uniform(-1, 1, (300, 2)), columns=["a", "b"])
    return ReleaseDoor(table, DESC, PrivacyLedger(budget or ApproxDP(20.0, 1e-3)))


@pytest.mark.parametrize(("delivered", "charged"), [
    (ApproxDP(1.0, 2e-6), ApproxDP(1.0, 1e-6)),      # δ above the charge
    (ZCDP(0.6), ZCDP(0.5)),                          # ρ above the charge
    (RandomDP(1.0, 0.0, 0.2), RandomDP(1.0, 0.0, 0.1)),  # γ above the charge
    (ApproxDP(2.0, 0.0), ApproxDP(1.0, 0.0)),        # ε above the charge
    (ZCDP(0.1), PureDP(5.0)),                        # another kind, however small
])
def test_a_delivered_guarantee_above_the_charge_is_not_covered(delivered, charged):
    """``_covered``:4 (another kind passes) and :17-22 (δ, ρ or γ left out of the comparison
    by a misspelt field name): the door would hand out a release whose guarantee exceeds what
    was charged. Equal guarantees are covered."""
    assert not _covered(delivered, charged)
    assert _covered(charged, charged)


def test_friendly_mean_is_charged_as_the_zcdp_of_its_parts():
    """``_charge``:14-20: a release whose parts are all zCDP (FriendlyCore's mean reports
    (ε, δ)) is recorded as ZCDP(Σρ, Σδ) so that it composes in ρ; a wrong or missing sum would
    record another guarantee (or fail to record one)."""
    door = _door()
    rel = door.release("friendly_mean", {"epsilon": 1.0, "delta": 1e-6, "radius": 1.0,
                                           "check_size": False})
    entry = door.ledger.entries[-1]
    assert entry.parts and all(isinstance(p, ZCDP) for p in entry.parts)
    assert isinstance(entry.guarantee, ZCDP)
    assert entry.guarantee.rho == pytest.approx(sum(p.rho for p in entry.parts), rel=1e-12)
    assert entry.guarantee.delta == pytest.approx(sum(p.delta for p in entry.parts), rel=1e-12)
    assert entry.guarantee.delta > 0
    assert rel.message.startswith("Released under") or rel.failed


def test_the_ledger_records_a_releases_parts_for_the_tight_accountant():
    """``_spend_all``:29/32: the in-memory ledger's spend without ``parts`` records DP-Lloyd
    as one opaque guarantee, so the tight accountant composes a different (looser or wrong)
    total; the entry must keep the planned rounds."""
    door = _door()
    door.release("dplloyd", {"n_clusters": 2, "epsilon": 1.0})
    entry = door.ledger.entries[-1]
    assert entry.parts is not None and len(entry.parts) >= 2


def test_a_released_result_says_its_guarantee_and_a_declared_n_says_so():
    """``Release.message``:2 (every release reads as ⊥) and ``n_source``:2/3 (the label of a
    declared n)."""
    door = _door()
    rel = door.release("dplloyd", {"n_clusters": 2, "epsilon": 1.0})
    assert not rel.failed
    assert rel.message != FAILED and rel.message.startswith("Released under ")
    assert door.n_source == "declared"


def test_a_warning_other_than_a_leak_does_not_stop_the_planning():
    """``_dry_guarantee``:5/7: planning turns *only* PrivacyLeakWarning into an error; turning
    every warning into one made an ordinary warning of a runtime-registered mechanism's dry run
    (on the public proxy) escape the door as a traceback instead of a plan."""
    import warnings

    from dpcore.release.runconfig import MECHANISMS, Mechanism, register

    def target(X, *, epsilon: float, radius: float, rng=None):  # signature only
        raise NotImplementedError

    def run(X, rng, *, epsilon, radius):
        warnings.warn("an ordinary, public warning", UserWarning, stacklevel=1)
        return {"value": np.zeros(X.shape[1])}, PureDP(0.5)

    register(Mechanism("warn_test", target, run, "test only"), replace=True)
    try:
        door = _door()
        assert not door.release("warn_test", {"epsilon": 0.5}).failed
        assert len(door.ledger.entries) == 1
    finally:
        MECHANISMS.pop("warn_test", None)


def test_several_parts_are_checked_with_the_ledgers_own_accountant():
    """``_spend_all``:1,2,7,8,9,12,13: the trial that checks a whole ``release_many`` must be a
    copy of the ledger (its accountant and plan); one rebuilt from the entries takes the default
    tight accountant, accepts two DP-Lloyd runs that the basic accountant refuses, and the real
    spends then record the first part and refuse the second: not all or nothing."""
    from dpcore.privacy.guarantees import BudgetExceededError

    table = pd.DataFrame(np.random.default_rng(0).uniform(-1, 1, (300, 2)), columns=["a", "b"])
    ledger = PrivacyLedger(ApproxDP(1.6, 1e-5), accountant="basic")
    door = ReleaseDoor(table, DESC, ledger)
    with pytest.raises(BudgetExceededError):
        door.release_many([("dplloyd", {"n_clusters": 2, "epsilon": 1.0})] * 2)
    assert ledger.entries == []  # the tight accountant would accept both (ε ≈ 1.5)
