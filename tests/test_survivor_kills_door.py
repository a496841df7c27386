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


# ---- the run of 2026-11-26 18:16 (same numbering): the paths the registry's rows never take ----


class _Row:
    """A registry row stand-in for a runtime-registered mechanism (what ``Mechanism.entry``
    reads): its full runner, its parts, and optionally a privacy map."""

    def __init__(self, full, parts, privacy_map=None):
        self._full, self.parts, self.privacy_map = full, parts, privacy_map
        self.requires_radius = False

    def full_runner(self):
        return self._full

    def public_inputs(self) -> dict:
        return {}


def _private(X: np.ndarray) -> bool:
    """The door's private table below has a constant first column; the public proxy does not."""
    return X.shape[0] > 1 and bool(np.all(X[:, 0] == X[0, 0]))


def _constant_door(budget=None) -> ReleaseDoor:
    table = pd.DataFrame({"a": np.full(300, 0.25),
                          "b": np.random.default_rng(0).uniform(-1, 1, 300)})
    return ReleaseDoor(table, DESC, PrivacyLedger(budget or ApproxDP(20.0, 1e-3)))


@pytest.fixture
def registered():
    """Register test mechanisms by name; removed afterwards."""
    from dpcore.release.runconfig import MECHANISMS, Mechanism, register

    names = []

    def add(name, row):
        def target(X, *, epsilon: float, rng=None):  # signature only
            raise NotImplementedError

        def run(X, rng, **params):  # used when the row reports no parts
            return row.full_runner()(X, rng, **params)[:2]

        register(Mechanism(name, target, run, "test only", fill_radius=False, entry=row),
                 replace=True)
        names.append(name)

    yield add
    for name in names:
        MECHANISMS.pop(name, None)


def _halves_on_private(X, rng, *, epsilon):
    """ε as one part on the proxy, as two halves on the private table (the same total): parts
    that depend on the data, which the tight accountant was not charged."""
    return {"value": np.zeros(2)}, PureDP(epsilon), X


def _parts_of(X):
    return [PureDP(0.25), PureDP(0.25)] if _private(X) else [PureDP(0.5)]


def test_a_dry_run_plan_whose_parts_change_on_the_data_is_bottom(registered):
    """``_compute``:26/27 and ``_plan``:75/78/84/90 (the dry-run flag lost or inverted): a
    mechanism planned by a dry run on the public proxy (no privacy map) that reports other parts
    on the private table than on the proxy must be ⊥: the ledger charged the proxy's parts, and
    the tight accountant's total for the private parts may be larger. The same mechanism with
    the same parts on both is released (kills the comparison inverted)."""
    registered("parts_drift", _Row(_halves_on_private, _parts_of))
    registered("parts_same", _Row(_halves_on_private, lambda X: [PureDP(0.5)]))
    door = _constant_door()
    drift = door.release("parts_drift", {"epsilon": 0.5})
    assert drift.failed and drift.message == FAILED and len(door.ledger) == 1
    assert len(door.ledger.entries[0].parts) == 1  # charged: the proxy's one part
    same = door.release("parts_same", {"epsilon": 0.5})
    assert not same.failed and np.array_equal(same.output["value"], np.zeros(2))


def _mapped(record=None, warn=False):
    """A privacy map: ε from the parameters; optionally an ordinary warning."""
    from dpcore.release.privacy_maps import Planned

    def privacy_map(params, facts):
        if warn:
            import warnings

            warnings.warn("an ordinary, public warning of the map", UserWarning, stacklevel=1)
        return Planned(PureDP(params["epsilon"]))

    return privacy_map


def test_the_empty_table_check_runs_on_zero_rows(registered):
    """``_check_on_empty``:8 (`np.empty((0, d))` → `(1, d)`): the check of a mapped mechanism's
    public parameters runs on a table of no rows (public); on one row of uninitialised memory
    it would depend on whatever that memory holds."""
    seen = []

    def full(X, rng, *, epsilon):
        seen.append(X.shape)
        return {"value": np.zeros(2)}, PureDP(epsilon), None

    registered("mapped_shapes", _Row(full, None, _mapped()))
    door = _constant_door()
    assert not door.release("mapped_shapes", {"epsilon": 0.5}).failed
    assert seen[0] == (0, 2) and seen[-1] == (300, 2)


def test_a_fit_only_refusal_of_a_mapped_mechanism_is_a_refusal_before_the_charge(registered):
    """``_planned_guarantee``:33 (`not in CHECKED_BY_MAP` → `in`): a mapped mechanism outside
    CHECKED_BY_MAP is run on the empty table before the charge, so a check that only its fit
    makes (here: a parameter bound) refuses the release with nothing charged; skipping that
    check turns it into a charged ⊥ (the budget lost for a public mistake)."""
    from dpcore.release.door import ReleaseRefused

    def full(X, rng, *, epsilon):
        if epsilon > 1.0:
            raise ValueError("epsilon above 1 is not supported by this fit")
        return {"value": np.zeros(2)}, PureDP(epsilon), None

    registered("fit_refuses", _Row(full, None, _mapped()))
    door = _constant_door()
    with pytest.raises(ReleaseRefused, match=r"^fit_refuses cannot run with these parameters"):
        door.release("fit_refuses", {"epsilon": 1.5})
    assert len(door.ledger) == 0


def test_an_ordinary_warning_of_a_privacy_map_does_not_stop_the_release(registered):
    """``_planned_guarantee``:18 (`simplefilter("error", PrivacyLeakWarning)` → every warning):
    planning turns only a leak warning into a refusal; an ordinary warning of the map would
    otherwise escape the door as an exception (a traceback, not a plan)."""
    def full(X, rng, *, epsilon):
        return {"value": np.zeros(2)}, PureDP(epsilon), None

    registered("map_warns", _Row(full, None, _mapped(warn=True)))
    door = _constant_door()
    assert not door.release("map_warns", {"epsilon": 0.5}).failed and len(door.ledger) == 1


def test_a_public_input_given_by_the_caller_leaves_the_others_filled():
    """``_plan``:41 (`continue` → `break`): when the caller gives one public input (DP-Lloyd's
    radius, equal to the declared one), the door still fills the others from the description
    (the declared box and n), never leaves them to the estimator."""
    door = _door()
    rel = door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.5,
                                   "radius": float(np.sqrt(2.0))})
    assert not rel.failed
    params = door.ledger.entries[0].params
    assert params["n"] == 300 and params["bounds"] == [[-1.0, -1.0], [1.0, 1.0]]


def test_the_public_deadline_is_set_from_public_inputs_and_the_release_computed():
    """``release_many``:65-67, 72, 75, 81, 82 (the deadline path, issue 22): the door asks the
    deadline for the planned (mechanism, params) at the declared n and d only, then computes
    each plan inside the padding. Catches the deadline computed without the releases or at
    n = 0 / None, d = None, and the computation dropped or run on no plan (then every padded
    release is ⊥, charged)."""
    from dpcore.release.timing import Deadline

    asked = []

    class Recording(Deadline):
        def for_releases(self, releases, *, n, d):
            asked.append((list(releases), n, d))
            return 2.0

    table = pd.DataFrame(np.random.default_rng(0).uniform(-1, 1, (300, 2)), columns=["a", "b"])
    door = ReleaseDoor(table, DESC, PrivacyLedger(ApproxDP(20.0, 1e-3)), deadline=Recording())
    rel = door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.5, "n_iter": 2})
    assert not rel.failed and rel.output["centers"].shape == (2, 2)
    ((releases, n, d),) = asked
    assert n == 300 and d == 2
    assert [m for m, _ in releases] == ["dplloyd"] and releases[0][1]["n"] == 300
