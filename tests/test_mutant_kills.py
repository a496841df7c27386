"""Tests that kill the privacy-critical mutants of issue 24 (an independent review applied each bug
alone and every earlier test still passed).

Each test names the mutant it kills; ``tools/mutant_guard.py`` applies every one of them (the
patches in ``tools/mutants/``) to a temporary copy and checks that its test fails there. The
noise-scale mutants (DP-Lloyd's count noise) are killed by the distribution tests of
``tests/test_noise_power.py``; the verdict-rule mutants by ``tests/test_verdict_rules.py``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

import dpcore.release.door as door_mod
from dpcore.mechanisms.lloyd import algorithm as lloyd_est  # the functional core DPLloyd calls
from dpcore.mechanisms.lloyd.domain import box_domain
from dpcore.mechanisms.lloyd.estimator import DPLloyd, noisy_lloyd_update
from dpcore.privacy import noise
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
from dpcore.privacy.ledger import LastingLedger
from dpcore.release.door import ReleaseDoor
from dpcore.release.schema import PublicDescription

# --- composition: δ adds (never the max) -------------------------------------------------------


def test_compose_adds_two_nonzero_deltas():
    """Mutant: compose of (ε, δ) guarantees takes max δ instead of the sum (basic composition
    adds δ: two (1, 10⁻⁶)-DP releases are (2, 2·10⁻⁶)-DP, not (2, 10⁻⁶))."""
    g = compose(ApproxDP(0.5, 1e-6), ApproxDP(0.25, 3e-6))
    assert isinstance(g, ApproxDP)
    assert g.epsilon == pytest.approx(0.75) and g.delta == pytest.approx(4e-6, rel=1e-12)
    assert (ApproxDP(1, 2e-6) + ApproxDP(1, 2e-6)).delta == pytest.approx(4e-6, rel=1e-12)
    mixed = compose(PureDP(1.0), ApproxDP(1.0, 2e-6), ApproxDP(1.0, 5e-7))
    assert mixed.delta == pytest.approx(2.5e-6, rel=1e-12)
    r = compose(RandomDP(1.0, 1e-6, 0.01), RandomDP(1.0, 2e-6, 0.02), ApproxDP(0.5, 4e-6))
    assert (r.delta, r.gamma) == (pytest.approx(7e-6, rel=1e-12), pytest.approx(0.03))


def test_compose_approximate_zcdp_adds_deltas():
    """Mutant: the same max-δ bug for approximate (ρ, δ)-zCDP (FriendlyCore's guarantee)."""
    z = compose(ZCDP(0.1, 1e-7), ZCDP(0.2, 3e-7))
    assert isinstance(z, ZCDP)
    assert z.rho == pytest.approx(0.3) and z.delta == pytest.approx(4e-7, rel=1e-12)
    z2 = compose(PureDP(1.0), ZCDP(0.1, 1e-7), ZCDP(0.1, 1e-7))
    assert z2.rho == pytest.approx(0.7) and z2.delta == pytest.approx(2e-7, rel=1e-12)
    # the same through a ledger with an approximate-zCDP budget: the second δ overspends
    led = PrivacyLedger(ZCDP(1.0, 1e-6))
    led.spend("fc 1", ZCDP(0.1, 6e-7))
    with pytest.raises(BudgetExceededError):
        led.spend("fc 2", ZCDP(0.1, 6e-7))
    assert len(led) == 1


# --- the session ledger converts zCDP with the δ that is left --------------------------------


def test_ledger_converts_zcdp_with_the_delta_that_is_left():
    """Mutant: PrivacyLedger._compose converts the zCDP entries with the budget's whole δ again
    instead of what the (ε, δ) entries left, which under-charges ε."""
    led = PrivacyLedger(ApproxDP(10.0, 1e-5))
    led.spend("a", ApproxDP(1.0, 4e-6))
    led.spend("z", ZCDP(0.05))
    total = led.total()
    assert total.epsilon == pytest.approx(1.0 + zcdp_to_epsilon(0.05, 6e-6), rel=1e-12)
    assert total.epsilon > 1.0 + zcdp_to_epsilon(0.05, 1e-5) * (1 + 1e-6)
    assert total.delta == pytest.approx(1e-5)
    # an approximate zCDP entry's own δ is spent before the conversion too
    led2 = PrivacyLedger(ApproxDP(10.0, 1e-5))
    led2.spend("fc", ZCDP(0.01, 4e-6))
    assert led2.total().epsilon == pytest.approx(zcdp_to_epsilon(0.01, 6e-6), rel=1e-12)


@pytest.mark.parametrize("order", ["approx first", "zcdp first"])
def test_ledger_refuses_zcdp_once_the_delta_is_spent(order, tmp_path):
    """Mutant (same): with the whole δ already spent by an (ε, δ) entry, a zCDP entry has no δ
    left to convert with (ε = ∞); the mutant converted with the full δ and hid the overspend."""
    for led in (PrivacyLedger(ApproxDP(10.0, 1e-5)),
                LastingLedger("k", ApproxDP(10.0, 1e-5), directory=tmp_path)):
        first, second = ("a", ApproxDP(1.0, 1e-5)), ("z", ZCDP(0.01))
        if order == "zcdp first":
            first, second = second, first
        led.spend(*first)
        assert not led.can_spend(second[1])
        with pytest.raises(BudgetExceededError):
            led.spend(*second)
        assert len(led) == 1


# --- the lasting ledger's spend-and-store (the private estimate of n) --------------------------


def test_spend_and_store_counts_the_recorded_entries(tmp_path):
    """Mutant: LastingLedger.spend_and_store checks the budget on an empty ledger (without the
    stored entries): an estimate of n then overspends a nearly used budget."""
    led = LastingLedger("k", PureDP(1.0), directory=tmp_path)
    led.spend("earlier release", PureDP(0.8))
    calls: list[int] = []

    def compute() -> int:
        calls.append(1)
        return 42

    with pytest.raises(BudgetExceededError):
        led.spend_and_store("estimate of n", PureDP(0.5), "n", compute)
    assert calls == [] and led.released_value("n") is None and len(led) == 1
    assert led.spend_and_store("estimate of n", PureDP(0.2), "n", compute) == 42
    assert led.spend_and_store("estimate of n", PureDP(0.2), "n", compute) == 42  # stored once
    assert calls == [1] and len(led) == 2
    assert led.total().epsilon == pytest.approx(1.0)


# --- the release door: nothing computed on the private rows before the charge ------------------

DESC_NO_N = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1])
DESC = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=300)


def _table(n: int = 300) -> pd.DataFrame:
    return pd.DataFrame(np.random.default_rng(0).uniform(-1, 1, (n, 2)), columns=["a", "b"])


def _ledger(kind: str, budget, tmp_path):
    return PrivacyLedger(budget) if kind == "session" else LastingLedger(
        "k", budget, directory=tmp_path)


@pytest.fixture
def private_runs(monkeypatch):
    """Spy on the door's OS randomness, drawn only for a computation on the private rows: each
    call records how many ledger entries existed at that moment."""
    seen: list[int] = []
    holder: dict = {}
    real = door_mod._entropy

    def spy():
        seen.append(len(holder["door"].ledger))
        return real()

    monkeypatch.setattr(door_mod, "_entropy", spy)
    return seen, holder


@pytest.mark.parametrize("kind", ["session", "lasting"])
def test_refused_estimate_of_n_is_never_computed_nor_kept(kind, tmp_path, private_runs):
    """Mutant: the door computes the noisy n before charging it, so a refused estimate still
    becomes ``door.n`` (and the private rows were read for nothing)."""
    seen, holder = private_runs
    door = holder["door"] = ReleaseDoor(_table(), DESC_NO_N, _ledger(kind, PureDP(0.5), tmp_path))
    with pytest.raises(BudgetExceededError):
        door.estimate_n(1.0)
    assert door.n is None and door.n_source == "unknown"
    assert seen == [] and len(door.ledger) == 0
    n_hat = door.estimate_n(0.25)
    assert door.n == n_hat and len(door.ledger) == 1 and len(seen) == 1
    if kind == "session":  # the lasting ledger charges and computes in one transaction, which
        assert seen == [1]  # another connection cannot see before it commits


@pytest.mark.parametrize("kind", ["session", "lasting"])
def test_release_computes_on_the_private_rows_only_after_the_charge(kind, tmp_path,
                                                                    private_runs):
    """Mutant: the door computes on the private rows before charging (the existing test only
    checked that an entry exists afterwards). A refused release must never run the mechanism on
    the private rows, and an accepted one only once its charge is recorded."""
    seen, holder = private_runs
    door = holder["door"] = ReleaseDoor(_table(), DESC, _ledger(kind, PureDP(1.0), tmp_path))
    parts = [("dplloyd", {"n_clusters": 2, "epsilon": 0.4})] * 3
    with pytest.raises(BudgetExceededError):
        door.release_many(parts)
    assert seen == [] and len(door.ledger) == 0
    rels = door.release_many(parts[:2])
    assert not any(r.failed for r in rels)
    assert seen == [2, 2]  # both parts charged (one transaction) before either was computed
    with pytest.raises(BudgetExceededError):
        door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.4})
    assert seen == [2, 2]


# --- DP-Lloyd: min_count, calibrated scales, the box grid's ℓ1 sensitivity ---------------------


def test_min_count_threshold_keeps_the_previous_centre():
    """Mutant: DP-Lloyd ignores ``min_count`` (keeps a centre only for a noisy count ≤ 0) and
    divides by tiny noisy counts, throwing that centre to the domain's edge."""
    sums = np.array([[0.45, 0.0], [5.0, 0.0], [0.3, 0.3]])
    counts = np.array([0.5, 10.0, 3.0])
    prev = np.array([[0.1, 0.1], [0.2, 0.2], [-0.1, 0.0]])
    new = noisy_lloyd_update(sums, counts, prev, beta_sum=0, beta_count=0, radius=1.0, rng=0)
    np.testing.assert_allclose(new, [[0.1, 0.1], [0.5, 0.0], [0.1, 0.1]])
    new5 = noisy_lloyd_update(sums, counts, prev, beta_sum=0, beta_count=0, radius=1.0, rng=0,
                              min_count=5.0)
    np.testing.assert_allclose(new5, [[0.1, 0.1], [0.5, 0.0], [-0.1, 0.0]])
    # with count noise: a cluster of 0.5 points seen through Lap(0.01) is always below 1
    k = 500
    many = noisy_lloyd_update(np.tile([[0.45, 0.0]], (k, 1)), np.full(k, 0.5),
                              np.tile([[0.1, 0.1]], (k, 1)), beta_sum=0, beta_count=0.01,
                              radius=1.0, rng=1)
    assert np.all(many == [0.1, 0.1])


def test_min_count_reaches_the_update_from_the_estimator(monkeypatch):
    """The estimator's ``min_count`` is what every update uses (a dropped argument would fall
    back to 1)."""
    got = []
    real = lloyd_est.noisy_lloyd_update

    def spy(*a, **kw):
        got.append(kw["min_count"])
        return real(*a, **kw)

    monkeypatch.setattr(lloyd_est, "noisy_lloyd_update", spy)
    X = np.random.default_rng(0).uniform(-1, 1, (200, 2))
    DPLloyd(2, epsilon=1.0, radius=2.0, n_iter=3, min_count=7.5, rng=0).fit(X)
    assert got == [7.5, 7.5, 7.5]


@pytest.mark.parametrize("sum_noise", ["l2", "laplace"])
def test_every_lloyd_draw_uses_the_calibrated_scale_and_sensitivity(monkeypatch, sum_noise):
    """Counts get Lap(β_count) with sensitivity 1 and sums β_sum, with the domain's sensitivity:
    r₁ = Σ h_i/u_i for the box's Laplace sums (mutant: max instead of the sum, which sets the
    defended grid from the wrong number), the half-diagonal for the ℓ2 noise; and the
    calibrated scales meet ε exactly: T (r/β_sum + 1/β_count) = ε (mutant: count noise halved).
    """
    calls = []

    def spy(name, real):
        def f(value, scale, *, sensitivity, rng=None):
            calls.append((name, np.shape(value), float(scale), float(sensitivity)))
            return real(value, scale, sensitivity=sensitivity, rng=rng)
        return f

    monkeypatch.setattr(lloyd_est, "add_laplace", spy("laplace", noise.add_laplace))
    monkeypatch.setattr(lloyd_est, "add_l2_exponential",
                        spy("l2", noise.add_l2_exponential))
    bounds = ([-1.0, -2.0, 0.0], [1.0, 2.0, 8.0])
    X = np.random.default_rng(0).uniform(bounds[0], bounds[1], (300, 3))
    eps, t = 2.0, 3
    with noise.defended_noise(PureDP(eps)):
        fit = DPLloyd(2, epsilon=eps, bounds=bounds, sum_noise=sum_noise, n_iter=t,
                      rng=0).fit(X)
    dom = box_domain(bounds, 3, sum_noise=sum_noise)
    assert fit.domain_.noise == sum_noise
    counts = [c for c in calls if c[1] == (2,)]
    sums = [c for c in calls if c[1] == (2, 3)]
    assert len(counts) == len(sums) == t
    assert all(c[0] == "laplace" and c[2] == fit.beta_count_ and c[3] == 1.0 for c in counts)
    assert all(c[0] == sum_noise and c[2] == fit.beta_sum_ for c in sums)
    h, u = dom.half_ranges, dom.weights
    want = float(np.sum(h / u)) if sum_noise == "laplace" else float(np.linalg.norm(h))
    assert all(c[3] == pytest.approx(want, rel=1e-12) for c in sums)
    assert want == pytest.approx(fit.domain_.radius, rel=1e-12)
    assert t * (dom.radius / fit.beta_sum_ + 1.0 / fit.beta_count_) == pytest.approx(eps,
                                                                                     rel=1e-9)


# --- the floating-point defence --------------------------------------------------------------


def test_bare_l2_sampler_refuses_inside_the_defence():
    """Mutant: the bare ℓ2 "exponential" sampler is allowed inside ``defended_noise`` (a draw that
    does not see its value cannot be put on the value's grid). The adder still works there and
    the refusal is restored after its own draw."""
    with noise.defended_noise(PureDP(1.0)):
        with pytest.raises(RuntimeError, match="add_l2_exponential"):
            noise.sample_l2_exponential(1.0, 3, 4, rng=0)
        out = noise.add_l2_exponential(np.zeros((4, 3)), 1.0, sensitivity=1.0, rng=0)
        assert out.shape == (4, 3) and noise.defence_active()
        with pytest.raises(RuntimeError):
            noise.sample_l2_exponential(1.0, 3, 4, rng=0)
    assert noise.sample_l2_exponential(1.0, 3, 4, rng=0).shape == (4, 3)


def _grid(sens: float, per: float) -> float:
    return 2.0 ** math.floor(math.log2(noise.DEFAULT_ETA * sens / per))


@pytest.mark.parametrize("s", [2, 3, 7, 64])
def test_defended_laplace_grid_shrinks_with_the_number_of_coordinates(s):
    """Mutant: the defended Laplace grid ignores the number s of coordinates (λ from η·Δ instead of
    η·Δ/s): rounding s coordinates then moves the value by up to s·λ/2 = s·ηΔ/2 in ℓ1, an
    inflation of 1 + sη that the slack (1 + η)² does not cover. One grid step per coordinate
    with negligible noise comes back exactly; the coarser grid rounds it to 0."""
    lam = _grid(1.0, s)
    with noise.defended_noise(PureDP(1.0)):
        out = noise.add_laplace(np.full(s, lam), 1e-3 * lam, sensitivity=1.0, rng=0)
        assert np.all(out == lam)
        # with real noise the outputs are on λℤ and on no coarser grid
        z = noise.add_laplace(np.zeros(500), 1.0, sensitivity=3.0, rng=1)
    units = z / _grid(3.0, 500)
    assert np.all(units == np.rint(units)) and np.any(units % 2 == 1)


def test_defended_gaussian_and_l2_grids_shrink_with_the_square_root_of_the_size():
    """The ℓ2 adders' grids are 2^⌊log₂(ηΔ/√s)⌋ (s = every coordinate of the release)."""
    with noise.defended_noise(ZCDP(1.0)):
        g = noise.add_gaussian(np.zeros(400), 1.0, sensitivity=2.0, rng=2)
    units = g / _grid(2.0, math.sqrt(400))
    assert np.all(units == np.rint(units)) and np.any(units % 2 == 1)
    with noise.defended_noise(PureDP(1.0)):
        e = noise.add_l2_exponential(np.zeros((50, 8)), 1.0, sensitivity=2.0, rng=3)
    units = e / _grid(2.0, math.sqrt(400))
    assert np.all(units == np.rint(units)) and np.any(units % 2 == 1)
