"""Tests written from the survivors of ``make mutate`` (tools/mutate.py; review in docs/testing.md).

Each test names the mutants it kills (mutmut's names, ``<function>__mutmut_<n>``). Survivors
argued equivalent, or left on purpose (the wording of an error message), are listed in
docs/testing.md, not here.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from dpcore.privacy.guarantees import (
    ZCDP,
    ApproxDP,
    BudgetExceededError,
    LedgerEntry,
    PrivacyLedger,
    PureDP,
    RandomDP,
    compose,
    guarantee_from_dict,
    zcdp_to_epsilon,
)

# === dpcore/privacy/guarantees.py ==============================================================


def test_zcdp_to_epsilon_at_rho_one_and_infinity():
    """``zcdp_to_epsilon__mutmut_12`` (``rho == 1`` returns 0: a free ρ = 1) and ``_7/_10/_4``
    (ρ = ∞ refused); ``ZCDP.to_approx_dp__mutmut_2`` (the same at ρ = 1) and ``_7`` (ρ = 0 gives
    ε = 1)."""
    assert zcdp_to_epsilon(1.0, 1e-6) == pytest.approx(1 + 2 * math.sqrt(math.log(1e6)))
    assert ZCDP(1.0).to_approx_dp(1e-6).epsilon == pytest.approx(1 + 2 * math.sqrt(math.log(1e6)))
    assert zcdp_to_epsilon(math.inf, 1e-6) == math.inf
    assert ZCDP(0.0, 1e-7).to_approx_dp() == ApproxDP(0.0, 1e-7)


@pytest.mark.parametrize("delta", [0.0, 1.0, 1.5, -0.1])
def test_zcdp_to_epsilon_needs_delta_strictly_inside_zero_one(delta):
    """``zcdp_to_epsilon__mutmut_16/17/18/19``: δ = 0 (ln 1/0), δ = 1 (ε = ρ, free δ) and δ > 1
    must be refused with the message naming the interval."""
    with pytest.raises(ValueError, match=r"δ in \(0, 1\)"):
        zcdp_to_epsilon(0.5, delta)


@pytest.mark.parametrize("make", [lambda x: PureDP(x), lambda x: ApproxDP(x, 0.0),
                                  lambda x: RandomDP(x, 0.0, 0.0), lambda x: ZCDP(x)])
def test_infinite_epsilon_or_rho_is_a_guarantee_and_fields_are_floats(make):
    """``PureDP/RandomDP/ZCDP.__post_init__`` mutants 7/8/11/14/17/24/25/38/39 (the normalised
    field written under another name, or ε = ∞ refused): ε = ∞ is the non-private reference, and
    every field is stored as a float (a string or numpy number would reach the ledger)."""
    g = make(math.inf)
    assert math.inf in g.as_dict().values()
    h = make(np.float32(0.5))
    for k, v in h.as_dict().items():
        if k != "type":
            assert type(v) is float, (k, v)
    assert make("0.5") == make(0.5)


@pytest.mark.parametrize(("factory", "name"), [
    (lambda: ApproxDP(-1, 0), "epsilon"), (lambda: RandomDP(-1, 0, 0), "epsilon"),
    (lambda: RandomDP(1, 2, 0), "delta"), (lambda: ZCDP(0.1, 1.5), "delta"),
    (lambda: ZCDP(-0.1), "rho"), (lambda: PureDP(math.nan), "epsilon"),
])
def test_validation_names_the_parameter(factory, name):
    """``__post_init__`` mutants 9/26 (the checked parameter's name lost from the message)."""
    with pytest.raises(ValueError, match=name):
        factory()


def test_random_dp_with_zero_gamma_is_approx_dp():
    """``RandomDP.to_approx_dp__mutmut_2..6``."""
    assert RandomDP(1.5, 1e-6, 0.0).to_approx_dp() == ApproxDP(1.5, 1e-6)
    with pytest.raises(TypeError, match="γ"):
        RandomDP(1.5, 1e-6, 0.01).to_approx_dp()


def test_operators_and_conversions_reached_by_no_earlier_covering_test():
    """The 'no tests' mutants: ``__add__`` of each kind, ``PureDP.to_approx_dp``,
    ``guarantee_from_dict``, ``PrivacyLedger.from_entries``."""
    assert ApproxDP(1, 1e-6) + PureDP(1) == ApproxDP(2, 1e-6)
    assert ZCDP(0.5, 1e-7) + ZCDP(0.25) == ZCDP(0.75, 1e-7)
    assert RandomDP(1, 0, 0.1) + PureDP(1) == RandomDP(2, 0, 0.1)
    assert PureDP(0.7).to_approx_dp() == ApproxDP(0.7, 0.0)
    assert PureDP(0.7).to_approx_dp(1e-6) == ApproxDP(0.7, 0.0)
    for g in (PureDP(1), ApproxDP(1, 1e-6), ZCDP(0.2, 1e-7), RandomDP(1, 1e-6, 0.05)):
        assert guarantee_from_dict(g.as_dict()) == g
    for bad in ({"type": "Nope"}, {"epsilon": 1}, None):
        with pytest.raises(ValueError, match="not a stored privacy guarantee"):
            guarantee_from_dict(bad)
    e = LedgerEntry("a", PureDP(0.3))
    led = PrivacyLedger.from_entries(PureDP(1.0), [e])
    assert led.entries == [e] and led.total() == PureDP(0.3)
    with pytest.raises(BudgetExceededError):
        led.spend("b", PureDP(0.71))


def test_ledger_tolerance_is_relative_inclusive_and_zero_budgets_stay_zero():
    """``_leq__mutmut_1`` (the 10⁻⁹ relative tolerance made exclusive) and ``_leq__mutmut_9``
    (its floor 10⁻¹² made 1: a δ of 5·10⁻¹⁰ would fit a δ = 0 budget)."""
    led = PrivacyLedger(PureDP(1.0))
    assert led.can_spend(PureDP(1.0 + 1e-9)) and not led.can_spend(PureDP(1.0 + 3e-9))
    pure_budget = PrivacyLedger(ApproxDP(1.0, 0.0))
    assert not pure_budget.can_spend(ApproxDP(0.1, 5e-10))
    with pytest.raises(BudgetExceededError):
        pure_budget.spend("δ > 0 on a pure budget", ApproxDP(0.1, 5e-10))


def test_zero_rho_zcdp_entries_cost_nothing():
    """``PrivacyLedger._compose__mutmut_19`` (``rho >= 0``: a ρ = 0 entry converted, charging the
    whole δ left, and refused once δ is spent)."""
    led = PrivacyLedger(ApproxDP(1.0, 1e-6))
    led.spend("free", ZCDP(0.0))
    assert led.total() == ApproxDP(0.0, 0.0)
    led.spend("all δ", ApproxDP(0.5, 1e-6))
    led.spend("free again", ZCDP(0.0))
    assert led.total() == ApproxDP(0.5, 1e-6)


def test_budget_must_be_a_guarantee():
    """``PrivacyLedger.__init____mutmut_2`` (message lost)."""
    with pytest.raises(TypeError, match="budget must be a privacy guarantee"):
        PrivacyLedger(1.0)  # type: ignore[arg-type]


def test_infinity_prints_as_infinity():
    """``_fmt__mutmut_1/3``."""
    assert str(PureDP(math.inf)) == "ε = ∞ (pure DP)"
    assert str(PureDP(0.123456)) == "ε = 0.1235 (pure DP)"


def test_ledger_exports_every_column_and_field():
    """``LedgerEntry.as_dict`` and ``PrivacyLedger.to_frame`` / ``to_json`` survivors: every column
    of the frame with its values, params as sorted JSON (numpy values via ``str``), the time in
    UTC, and the JSON document's keys and indentation."""
    led = PrivacyLedger(RandomDP(5.0, 1e-5, 0.1))
    led.spend("mean", PureDP(0.5), z=1, a=np.float32(2.5))
    led.spend("s", RandomDP(1.0, 1e-6, 0.05))
    df = led.to_frame()
    assert list(df.columns) == ["label", "guarantee", "type", "epsilon", "delta", "rho", "gamma",
                                "params", "time"]
    assert df.loc[0, "guarantee"] == "ε = 0.5 (pure DP)" and df.loc[0, "type"] == "PureDP"
    assert df.loc[1, "gamma"] == 0.05 and df.loc[1, "delta"] == 1e-6
    assert df.loc[0, "params"] == '{"a": "2.5", "z": 1}'
    t = df.loc[0, "time"]
    assert isinstance(t, pd.Timestamp) and str(t.tz) == "UTC"
    assert abs(t.timestamp() - led.entries[0].timestamp) < 1e-3
    e = led.entries[1].as_dict()
    assert e["label"] == "s" and e["guarantee"] == RandomDP(1.0, 1e-6, 0.05).as_dict()
    assert e["guarantee_text"] == str(RandomDP(1.0, 1e-6, 0.05)) and e["params"] == {}
    assert e["timestamp"] == led.entries[1].timestamp
    text = led.to_json()
    assert text.startswith('{\n  "budget": {\n    "type"')
    doc = json.loads(text)
    assert list(doc) == ["budget", "entries", "total", "remaining"]
    assert doc["entries"][0]["params"] == {"z": 1, "a": "2.5"}
    assert doc["remaining"] == led.remaining().as_dict()
    assert "\n" not in led.to_json(indent=None)


def test_compose_zcdp_with_approx_names_the_conversion():
    """The refusal to mix zCDP with (ε, δ)-DP asks for the conversion (its message)."""
    with pytest.raises(TypeError, match="to_approx_dp"):
        compose(ZCDP(1), ApproxDP(1, 1e-6))


# === dpcore/privacy/noise.py ===================================================================

from dpcore.privacy import noise  # noqa: E402


@pytest.mark.parametrize("mode", ["explore", "defended"])
def test_zero_scale_laplace_returns_the_value_in_both_modes(mode):
    """A bug ``make mutate`` led to: inside ``defended_noise`` a zero Laplace scale called the bare
    float sampler, which refuses there, so a sensitivity-sampler release with Δ̂ = 0 (documented
    to release f(D) without noise) was ⊥ through the door. Zero noise is the value itself."""
    v = np.array([0.3, -1.7])
    ctx = noise.defended_noise(PureDP(1.0)) if mode == "defended" else _null()
    with ctx:
        out = noise.add_laplace(v, 0.0, sensitivity=1.0, rng=0)
        s = noise.add_laplace(0.3, 0.0, sensitivity=1.0, rng=0)
        g = noise.add_gaussian(0.3, 0.0, sensitivity=1.0, rng=0)
    assert np.array_equal(out, v) and s == 0.3 and g == 0.3
    assert isinstance(s, float) and isinstance(g, float)


def _null():
    import contextlib

    return contextlib.nullcontext()


def test_sensitivity_release_with_zero_sampled_sensitivity_goes_through_the_door(tmp_path):
    """The door-level consequence of the bug above: a constant public oracle gives Δ̂ = 0 and
    the release must be f(D) (random DP allows it), not ⊥."""
    from dpcore.release.door import ReleaseDoor
    from dpcore.release.schema import PublicDescription

    oracle = tmp_path / "oracle.csv"
    pd.DataFrame({"a": [0.5] * 300, "b": [0.5] * 300}).to_csv(oracle, index=False)
    table = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (100, 2)), columns=["a", "b"])
    desc = PublicDescription(["a", "b"], lower=[0, 0], upper=[1, 1], n=100)
    door = ReleaseDoor(table, desc, PrivacyLedger(RandomDP(5.0, 1e-6, 0.5)))
    rel = door.release("sensitivity", {"statistic": "mean", "epsilon": 1.0, "gamma": 0.1,
                                       "oracle": str(oracle)})
    assert not rel.failed and np.all(np.isfinite(rel.output["value"]))


@pytest.mark.parametrize("sens", [0.0, -1.0, math.inf, math.nan])
def test_defended_adders_refuse_a_bad_sensitivity_by_name(sens):
    """``_check_sensitivity__mutmut_4/6/8``: the check before the grid (the grid's own check
    would catch it later with another message)."""
    with noise.defended_noise(PureDP(1.0)):
        for call in (lambda: noise.add_laplace(np.zeros(2), 1.0, sensitivity=sens, rng=0),
                     lambda: noise.add_gaussian(np.zeros(2), 1.0, sensitivity=sens, rng=0),
                     lambda: noise.add_l2_exponential(np.zeros((1, 2)), 1.0, sensitivity=sens,
                                                      rng=0)):
            with pytest.raises(ValueError, match=r"sensitivity must be finite and > 0, got"):
                call()


def test_defended_grid_stays_a_normal_power_of_two():
    """``_grid__mutmut_5/7/8/9/11/12``: λ = 2^⌊log₂(ηΔ/s)⌋ must stay above 2⁻¹⁰⁰⁰ (value/λ exact);
    a target of exactly 2⁻¹⁰⁰⁰ or just below is refused, just above is accepted."""
    eta = noise.DEFAULT_ETA
    with noise.defended_noise(PureDP(1.0)):
        for sens in (2.0**-1000 / eta, 2.0**-1000.5 / eta, 1e-310):
            with pytest.raises(ValueError, match=r"\(defended noise\)"):
                noise.add_laplace(0.0, 1.0, sensitivity=sens, rng=0)
        out = noise.add_laplace(0.0, 2.0**-990, sensitivity=2.0**-999.5 / eta, rng=0)
    assert math.isfinite(out)


@pytest.mark.parametrize("bad", [-1.0, math.inf, math.nan])
def test_samplers_refuse_bad_scales_by_name(bad):
    """``_scale__mutmut_3`` and the ``_scale(None, …)`` / name-case mutants of ``laplace``,
    ``gaussian``, ``add_laplace``, ``laplace_scale``, ``gaussian_sigma_zcdp`` and
    ``gaussian_sigma_approx_dp``: the message names the parameter."""
    cases = [(lambda: noise.laplace(bad, 2, rng=0), "scale"),
             (lambda: noise.gaussian(bad, 2, rng=0), "sigma"),
             (lambda: noise.add_laplace(np.zeros(2), bad, sensitivity=1.0, rng=0), "scale"),
             (lambda: noise.laplace_scale(bad, 1.0), "sensitivity"),
             (lambda: noise.gaussian_sigma_zcdp(bad, 1.0), "l2_sensitivity"),
             (lambda: noise.gaussian_sigma_approx_dp(bad, 1.0, 1e-6), "l2_sensitivity")]
    for call, name in cases:
        with pytest.raises(ValueError, match=rf"^{name} must be finite and ≥ 0"):
            call()


@pytest.mark.parametrize(("call", "match"), [
    (lambda: noise.laplace_scale(1.0, 0.0), "^epsilon must be > 0"),
    (lambda: noise.gaussian_sigma_zcdp(1.0, 0.0), "^rho must be > 0"),
    (lambda: noise.gaussian_sigma_approx_dp(1.0, 0.0, 1e-6), "^epsilon must be > 0"),
    (lambda: noise.gaussian_sigma_approx_dp(1.0, 1.0, 1.0), "^delta must be in"),
    (lambda: noise.gaussian_sigma_approx_dp(1.0, 1.0, 1.5), "^delta must be in"),
    (lambda: noise.exponential_mechanism([0.0, 1.0], 0.0, 1.0, rng=0), "^epsilon must be > 0"),
    (lambda: noise.exponential_mechanism([0.0, 1.0], 1.0, 0.0, rng=0),
     "^sensitivity must be > 0"),
    (lambda: noise.add_gaussian(np.zeros(2), -1.0, sensitivity=1.0, rng=0),
     "^sigma must be finite and ≥ 0"),
    (lambda: noise.add_gaussian(np.zeros(2), math.inf, sensitivity=1.0, rng=0),
     "^sigma must be finite and ≥ 0"),
    (lambda: noise.add_l2_exponential(np.zeros(3), 1.0, sensitivity=1.0, rng=0), r"\(k, d\)"),
    (lambda: noise.exponential_mechanism([[0.0]], 1.0, 1.0, rng=0), "^scores must be a non-em"),
    (lambda: noise.exponential_mechanism([0.0, math.nan], 1.0, 1.0, rng=0),
     "^scores must be finite"),
])
def test_calibrations_and_adders_refuse_with_their_message(call, match):
    """The ``>= 0`` boundary mutants (ε, ρ or Δ = 0 must be refused, not divided by), δ ≤ 1, and
    the messages lost (``ValueError(None)``) or re-cased."""
    with pytest.raises(ValueError, match=match):
        call()


def test_analytic_gaussian_sigma_is_exact_for_large_epsilon_and_zero_sensitivity():
    """``gaussian_sigma_approx_dp__mutmut_20`` (σ = 1 at Δ = 0) and ``_30`` (lower bracket
    log Δ + 10: the root lies below Δ when ε is large): δ(σ) = δ at ε up to 50."""
    from scipy import stats

    assert noise.gaussian_sigma_approx_dp(0.0, 1.0, 1e-6) == 0.0
    for eps, delta in ((0.1, 1e-6), (3.0, 1e-8), (10.0, 1e-5), (50.0, 1e-10)):
        sigma = noise.gaussian_sigma_approx_dp(2.0, eps, delta)
        a, b = 2.0 / (2 * sigma), eps * sigma / 2.0
        achieved = stats.norm.cdf(a - b) - math.exp(eps) * stats.norm.cdf(-a - b)
        assert achieved == pytest.approx(delta, rel=1e-6), (eps, delta)


def test_bare_samplers_name_themselves_when_refused():
    """``_refuse_bare`` called with a lost or re-cased name (laplace, gaussian,
    sample_l2_exponential: mutants 1/2/3 of each)."""
    for name, call in (("laplace", lambda: noise.laplace(1.0, 2, rng=0)),
                       ("gaussian", lambda: noise.gaussian(1.0, 2, rng=0)),
                       ("sample_l2_exponential",
                        lambda: noise.sample_l2_exponential(1.0, 2, 2, rng=0))):
        with noise.defended_noise(PureDP(1.0)), pytest.raises(
                RuntimeError, match=rf"^noise\.{name} was called inside defended_noise"):
            call()


def test_zero_scale_samplers_return_zeros_of_the_asked_shape():
    """``laplace__mutmut_15/16/18/19``, ``gaussian__mutmut_15/17``."""
    for f in (noise.laplace, noise.gaussian):
        assert f(0.0, rng=0) == 0.0 and isinstance(f(0.0, rng=0), float)
        z = f(0.0, (2, 3), rng=0)
        assert isinstance(z, np.ndarray) and z.shape == (2, 3) and not z.any()
        assert f(0.0, 4, rng=0).shape == (4,)


def test_explore_mode_adders_are_value_plus_the_seeded_sampler():
    """``add_gaussian__mutmut_38/43/46/49`` and ``add_l2_exponential__mutmut_12/16/20``: outside the
    defence, ``add_*`` is exactly value + the sampler's seeded stream (scalar σ too), a scalar
    value gives a float, and a 1-D σ per coordinate works."""
    np.testing.assert_array_equal(noise.add_gaussian(np.zeros(5), 2.0, sensitivity=1.0, rng=8),
                                  noise.gaussian(2.0, 5, rng=8))
    s = noise.add_gaussian(0.5, 2.0, sensitivity=1.0, rng=9)
    assert isinstance(s, float) and s == 0.5 + noise.gaussian(2.0, rng=9)
    sig = np.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(noise.add_gaussian(np.zeros(3), sig, sensitivity=1.0, rng=10),
                               noise.gaussian(1.0, 3, rng=10) * sig)
    np.testing.assert_array_equal(
        noise.add_l2_exponential(np.ones((4, 3)), 0.7, sensitivity=1.0, rng=11),
        1.0 + noise.sample_l2_exponential(0.7, 3, 4, rng=11))


def test_defended_streams_are_reproducible_under_a_seed():
    """``add_laplace__mutmut_45``, ``add_gaussian__mutmut_77``, ``add_l2_exponential__mutmut_40/
    44``, ``sample_l2_exponential__mutmut_22``, ``exponential_mechanism__mutmut_12``: a seeded
    ``rng`` gives the same draws (an unseeded source would not)."""
    def draws():
        with noise.defended_noise(PureDP(1.0)):
            return (noise.add_laplace(np.zeros(3), 1.0, sensitivity=1.0, rng=5),
                    noise.add_gaussian(np.zeros(3), 1.0, sensitivity=1.0, rng=5),
                    noise.add_l2_exponential(np.zeros((2, 3)), 1.0, sensitivity=1.0, rng=5))

    for a, b in zip(draws(), draws(), strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(noise.sample_l2_exponential(1.0, 3, 4, rng=6),
                                  noise.sample_l2_exponential(1.0, 3, 4, rng=6))
    picks = [noise.exponential_mechanism(np.zeros(50), 1.0, 1.0, rng=7) for _ in range(3)]
    assert len(set(picks)) == 1


@pytest.mark.parametrize("adder", ["laplace", "gaussian", "l2"])
def test_defended_scalar_grid_is_eta_delta_for_one_coordinate(adder):
    """``add_laplace__mutmut_43``, ``add_gaussian__mutmut_75``, ``add_l2_exponential__mutmut_34``
    (s counted as at least 2): one coordinate has the grid λ = 2^⌊log₂ ηΔ⌋, here exactly ηΔ."""
    eta = noise.DEFAULT_ETA
    sens = 2.0**-5 / eta  # ηΔ = 2⁻⁵ exactly
    lam = 2.0**-5
    out = []
    with noise.defended_noise(PureDP(1.0)):
        for i in range(64):
            if adder == "laplace":
                out.append(noise.add_laplace(0.0, 1.0, sensitivity=sens, rng=i))
            elif adder == "gaussian":
                out.append(noise.add_gaussian(0.0, 1.0, sensitivity=sens, rng=i))
            else:
                out.append(float(noise.add_l2_exponential(np.zeros((1, 1)), 1.0,
                                                          sensitivity=sens, rng=i)[0, 0]))
    units = np.array(out) / lam
    assert np.all(units == np.rint(units)) and np.any(units % 2 == 1)


def test_defended_gaussian_with_a_zero_block_adds_nothing_there():
    """``add_gaussian__mutmut_26/29/31..34/86``: σ = 0 blocks (or all σ = 0) inside the defence
    return the value exactly, not rounded to the grid, and do not draw a σ = 0 discrete
    Gaussian."""
    v = np.array([[0.3, 0.1, -0.7], [0.3, 0.1, -0.7]])
    with noise.defended_noise(ZCDP(1.0)):
        out = noise.add_gaussian(v, np.array([[0.0], [1.0]]), sensitivity=1.0, rng=0)
        same = noise.add_gaussian(v, 0.0, sensitivity=1.0, rng=0)
    lam = 2.0 ** math.floor(math.log2(noise.DEFAULT_ETA / math.sqrt(6)))
    np.testing.assert_array_equal(out[0], np.rint(v[0] / lam) * lam)
    assert not np.allclose(out[1], v[1], atol=1e-3)
    np.testing.assert_array_equal(same, v)


def test_defended_values_are_clamped_into_int64():
    """``_to_units__mutmut_2/7/8``: values beyond ±2⁶² λ are clamped (1-Lipschitz, free) so the
    integer arithmetic cannot overflow."""
    lam = 2.0 ** math.floor(math.log2(noise.DEFAULT_ETA))
    with noise.defended_noise(PureDP(1.0)):
        hi = noise.add_laplace(1e300, 1.0, sensitivity=1.0, rng=0)
        lo = noise.add_laplace(-1e300, 1.0, sensitivity=1.0, rng=1)
    assert hi == pytest.approx(2.0**62 * lam, abs=100.0)
    assert lo == pytest.approx(-(2.0**62) * lam, abs=100.0)


def test_slack_of_approximate_and_random_dp():
    """``_slack__mutmut_5..13/18/20``: the slack is ((1 + η)² − 1)·ε with δ and γ unchanged (0),
    checked at ε = 2 (at ε = 1, growth·ε = growth/ε)."""
    g = (1 + noise.DEFAULT_ETA) ** 2 - 1
    with noise.defended_noise(RandomDP(2.0, 1e-6, 0.1)) as d:
        assert d.slack == RandomDP(2.0 * g, 0.0, 0.0)
    assert d.slack_for(ApproxDP(2.0, 1e-6)) == ApproxDP(2.0 * g, 0.0)
    with pytest.raises(TypeError, match=r"^nominal must be a dpcore"):
        d.slack_for(1.0)  # type: ignore[arg-type]


def test_exponential_mechanism_single_draw_has_the_stated_law():
    """``exponential_mechanism__mutmut_15/16/17`` (the ``size=None`` path: argmax of nothing,
    logits − Gumbel, one Gumbel for all): 6000 single draws against the exact probabilities
    (χ², p > 10⁻³; the mutants put every draw on one index or skew the law)."""
    from scipy import stats

    scores = np.array([0.0, 1.0, 2.0, 0.5])
    p = noise.exponential_mechanism_probabilities(scores, 2.0, 1.0)
    gen = np.random.default_rng(12)
    picks = np.array([noise.exponential_mechanism(scores, 2.0, 1.0, rng=gen)
                      for _ in range(6000)])
    counts = np.bincount(picks, minlength=4)
    assert stats.chisquare(counts, p * picks.size).pvalue > 1e-3


def test_exponential_mechanism_is_stable_when_eps_times_score_overflows():
    """``_em_logits__mutmut_34/42``: logits are shifted by the maximum (≤ 0) so an overflow only
    sends the others to −∞, silently: ε·score ≈ 5·10³⁰⁹ picks the best score."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        picks = noise.exponential_mechanism([0.0, 1e10], 1e300, 1.0, rng=0, size=20)
        p = noise.exponential_mechanism_probabilities([0.0, 1e10], 1e300, 1.0)
    assert np.all(picks == 1) and p.tolist() == [0.0, 1.0]
    assert noise.exponential_mechanism([False, True], 50.0, 1.0, rng=0) == 1


def test_l2_sampler_accepts_zero_rows():
    """``sample_l2_exponential__mutmut_18/19``: size = 0 is a valid request (no rows)."""
    assert noise.sample_l2_exponential(1.0, 3, 0, rng=0).shape == (0, 3)
    with pytest.raises(ValueError, match="dim"):
        noise.sample_l2_exponential(1.0, 3, -1, rng=0)
