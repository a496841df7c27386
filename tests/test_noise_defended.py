"""Floating-point defence of release noise (Mironov, CCS 2012): the attack, the exact samplers."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpcore.privacy import discrete_noise, noise
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import ZCDP, ApproxDP, PureDP, compose

EPS = 1.0


def _not_on_2_53_grid(y: np.ndarray) -> np.ndarray:
    """Mironov's test: 1 + e (any double e) is always a multiple of 2⁻⁵³, e alone rarely is."""
    y = np.asarray(y, dtype=float)
    return (np.ldexp(y, 53) != np.rint(np.ldexp(y, 53))).astype(float)


def _release(defended: bool):
    def sample(f_value: float, size: int, rng: np.random.Generator) -> np.ndarray:
        if not defended:
            return noise.add_laplace(np.full(size, f_value), 1.0 / EPS, sensitivity=1.0, rng=rng)
        # One release per draw (the grid is chosen per call from its s = 1 coordinate).
        with noise.defended_noise(PureDP(EPS)):
            return np.array([noise.add_laplace(f_value, 1.0 / EPS, sensitivity=1.0, rng=rng)
                             for _ in range(size)])

    return sample


def test_mironov_attack_distinguishes_naive_laplace_from_one_output():
    # f(D) = 0, f(D') = 1, sensitivity 1, ε = 1: the low-order bits of a single output reveal
    # which input produced it (output not on the 2⁻⁵³ grid ⇒ it was f(D) = 0).
    res = audit_epsilon(_release(False), 0.0, 1.0, n_samples=20_000, statistic=_not_on_2_53_grid,
                        rng=0)
    assert res.epsilon_lower > 3 * EPS
    assert res.p_second == 0.0  # the event never happens under f(D') = 1: ε = ∞ in truth


def test_mironov_attack_fails_on_the_defended_sampler():
    sample = _release(True)
    slack = (1 + noise.DEFAULT_ETA) ** 2
    bits = audit_epsilon(sample, 0.0, 1.0, n_samples=6_000, statistic=_not_on_2_53_grid, rng=1)
    value = audit_epsilon(sample, 0.0, 1.0, n_samples=6_000, rng=2)
    assert bits.epsilon_lower == 0.0  # every output is a multiple of λ: the bits say nothing
    assert value.epsilon_lower <= EPS * slack


def test_defended_outputs_are_on_the_power_of_two_grid_and_unbiased():
    with noise.defended_noise(PureDP(EPS)):
        out = noise.add_laplace(np.full(4000, 0.3), 2.0, sensitivity=1.0, rng=5)
    lam = 2.0 ** math.floor(math.log2(noise.DEFAULT_ETA / 4000))
    assert np.all(out / lam == np.rint(out / lam))
    assert abs(out.mean() - 0.3) < 4 * 2.0 * math.sqrt(2) / math.sqrt(4000)
    assert abs(out.std() - 2 * math.sqrt(2)) < 0.15


def _chi2_pvalue(draws: np.ndarray, pmf: np.ndarray, support: np.ndarray) -> float:
    inside = np.isin(draws, support)
    observed = np.array([np.sum(draws == v) for v in support] + [np.sum(~inside)])
    expected = np.append(pmf, max(1.0 - pmf.sum(), 0.0)) * draws.size
    keep = expected > 5
    obs, exp = observed[keep], expected[keep]
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


def _discrete_laplace_pmf(scale: float, support: np.ndarray) -> np.ndarray:
    a = math.exp(-1.0 / scale)
    return (1 - a) / (1 + a) * a ** np.abs(support)


def _discrete_gaussian_pmf(sigma2: float, support: np.ndarray) -> np.ndarray:
    wide = np.arange(-200, 201)
    norm = np.exp(-(wide**2) / (2 * sigma2)).sum()
    return np.exp(-(support**2) / (2 * sigma2)) / norm


@pytest.mark.parametrize("scale", [0.7, 3.0])
def test_discrete_laplace_matches_its_density(scale):
    src = discrete_noise.integer_source(11)
    draws = discrete_noise.discrete_laplace(scale, 20_000, src)
    support = np.arange(-25, 26)
    assert _chi2_pvalue(draws, _discrete_laplace_pmf(scale, support), support) > 1e-3
    # power: the same draws reject a 15 % wrong scale
    assert _chi2_pvalue(draws, _discrete_laplace_pmf(1.15 * scale, support), support) < 1e-3


@pytest.mark.parametrize("sigma2", [0.5, 6.25])
def test_discrete_gaussian_matches_its_density(sigma2):
    src = discrete_noise.integer_source(12)
    draws = discrete_noise.discrete_gaussian(Fraction(sigma2), 20_000, src)
    support = np.arange(-20, 21)
    assert _chi2_pvalue(draws, _discrete_gaussian_pmf(sigma2, support), support) > 1e-3
    assert _chi2_pvalue(draws, _discrete_gaussian_pmf(1.3 * sigma2, support), support) < 1e-3


def test_bernoulli_exp_is_exact_in_law():
    src = discrete_noise.integer_source(3)
    for gamma in (Fraction(1, 3), Fraction(5, 2)):
        hits = sum(discrete_noise.bernoulli_exp(gamma, src) for _ in range(20_000))
        assert stats.binomtest(hits, 20_000, math.exp(-float(gamma))).pvalue > 1e-3


def test_explore_mode_keeps_the_fast_sampler_stream():
    a = noise.add_laplace(np.zeros(5), 1.0, sensitivity=1.0, rng=7)
    b = noise.laplace(1.0, 5, rng=7)
    assert np.array_equal(a, b)
    g = noise.add_gaussian(np.ones((2, 3)), np.array([[1.0], [2.0]]), sensitivity=1.0, rng=8)
    ref = 1 + noise.gaussian(1.0, (2, 3), rng=8) * np.array([[1.0], [2.0]])
    assert np.allclose(g, ref)


def test_bare_samplers_refuse_inside_the_defence():
    with noise.defended_noise(PureDP(1.0)), pytest.raises(RuntimeError, match="add_laplace"):
        noise.laplace(1.0, 3, rng=0)
    with noise.defended_noise(PureDP(1.0)), pytest.raises(RuntimeError):
        noise.gaussian(1.0, 3, rng=0)
    assert not noise.defence_active()


@pytest.mark.parametrize(
    ("nominal", "kind"),
    [(PureDP(2.0), PureDP), (ApproxDP(1.0, 1e-6), ApproxDP), (ZCDP(0.5, 1e-7), ZCDP)],
)
def test_slack_is_fixed_before_the_run_and_tiny(nominal, kind):
    with noise.defended_noise(nominal) as d:
        assert isinstance(d.slack, kind)
        delivered = compose(nominal, d.slack)
    grow = (1 + noise.DEFAULT_ETA) ** 2 - 1
    if kind is ZCDP:
        assert d.slack.rho == pytest.approx(grow * nominal.rho)
        assert delivered.delta == nominal.delta
    else:
        assert d.slack.epsilon == pytest.approx(grow * nominal.epsilon)
        assert d.slack.epsilon < 1e-5


def test_defended_gaussian_has_the_stated_spread_per_block():
    sig = np.array([[0.5], [4.0]])
    with noise.defended_noise(ZCDP(1.0)):
        out = noise.add_gaussian(np.zeros((2, 3000)), sig, sensitivity=0.1, rng=4)
    assert abs(out[0].std() - 0.5) < 0.03 and abs(out[1].std() - 4.0) < 0.2


def test_defended_l2_exponential_output_on_grid():
    with noise.defended_noise(PureDP(1.0)):
        out = noise.add_l2_exponential(np.full((3, 2), 0.123456789), 1.0, sensitivity=1.0, rng=1)
    lam = 2.0 ** math.floor(math.log2(noise.DEFAULT_ETA / math.sqrt(6)))
    assert np.all(out / lam == np.rint(out / lam))


def test_every_release_mechanism_runs_with_defended_noise():
    # No release path may still call a bare float sampler (they refuse inside the context).
    import warnings

    from dpcore.mechanisms.baselines.coinpress import coinpress_mean
    from dpcore.mechanisms.bounds import private_norm_quantile, private_row_count
    from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans, friendly_mean
    from dpcore.mechanisms.lloyd.estimator import DPLloyd
    from dpcore.mechanisms.maxcover import noisy_average
    from dpcore.mechanisms.sensitivity.sampler import respond

    rng = np.random.default_rng(0)
    X = np.clip(rng.normal(size=(600, 2)), -3, 3) * 0.2
    with warnings.catch_warnings(), noise.defended_noise(ApproxDP(1.0, 1e-6)):
        warnings.simplefilter("ignore")
        assert DPLloyd(2, epsilon=1.0, radius=1, n_iter=2, rng=1).fit(X).cluster_centers_.shape \
            == (2, 2)
        assert DPLloyd(2, epsilon=1.0, radius=1, n_iter=2, sampler="uniform", sample_size=300,
                       rng=1).fit(X).cluster_centers_.shape == (2, 2)
        assert noisy_average(X, radius=1, epsilon=0.3, delta=1e-6, rng=1).center.shape == (2,)
        assert friendly_mean(X, radius=1, epsilon=8, delta=1e-6, rng=1).guarantee is not None
        assert FriendlyCoreKMeans(1, rho=4.0, delta=1e-6, radius=1, t=250, rng=1).fit(X) \
            .privacy_ is not None
        assert coinpress_mean(X, rho=0.5, radius=1, rng=1).estimate.shape == (2,)
        assert private_row_count(600, epsilon=1, rng=1).value > 0
        assert private_norm_quantile(X, epsilon=1, lower=0.01, upper=10, rng=1).radius > 0
        for mech in ("laplace", "gaussian"):
            out, _ = respond(np.ones(3), mechanism=mech, sensitivity=0.1, epsilon=1.0,
                             delta=1e-6, rng=1)
            lam = 2.0 ** math.floor(math.log2(noise.DEFAULT_ETA * 0.1 / (3 if mech == "laplace"
                                                                      else math.sqrt(3))))
            assert np.all(np.asarray(out) / lam == np.rint(np.asarray(out) / lam))


def test_slack_needs_the_nominal_guarantee():
    with noise.defended_noise() as d:
        with pytest.raises(ValueError, match="nominal"):
            _ = d.slack
        assert d.slack_for(PureDP(1.0)).epsilon == pytest.approx((1 + d.eta) ** 2 - 1)
    with pytest.raises(TypeError), noise.defended_noise("eps=1"):  # type: ignore[arg-type]
        pass


# ------------------------------------------------------------------ the defended adders' laws
# Each adder is checked against the density it states, with a fixed seed, and the same draws must
# reject the density at 1.5× (and 1/1.5×) the scale: the test has the power to see a scale error.


@pytest.mark.parametrize("a", [0.05, 0.7])
@pytest.mark.parametrize("defended", [True, False])
def test_add_discrete_laplace_has_the_stated_law(a, defended):
    """P(z) ∝ exp(−a|z|) on ℤ; a = 0.05 is the LSH baseline's count noise (a = 1/(20α))."""
    size = 20_000
    if defended:
        with noise.defended_noise(PureDP(a)):
            draws = noise.add_discrete_laplace(np.zeros(size), a, rng=21)
    else:
        draws = noise.add_discrete_laplace(np.zeros(size), a, rng=21)
    assert draws.dtype == float and np.all(draws == np.rint(draws))
    z = draws.astype(np.int64)
    support = np.arange(-int(12 / a), int(12 / a) + 1)
    assert _chi2_pvalue(z, _discrete_laplace_pmf(1 / a, support), support) > 1e-3
    for wrong in (1.5, 1 / 1.5):  # power: a 1.5× scale error is rejected by the same draws
        assert _chi2_pvalue(z, _discrete_laplace_pmf(wrong / a, support), support) < 1e-6


def test_add_discrete_laplace_is_exact_on_integers_and_refuses_fractions():
    with noise.defended_noise(PureDP(1.0)):
        out = noise.add_discrete_laplace(np.array([[3.0, 7.0], [0.0, 1e6]]), 0.5, rng=1)
        one = noise.add_discrete_laplace(12, 0.5, rng=1)
        with pytest.raises(ValueError, match="integer"):
            noise.add_discrete_laplace(0.5, 1.0, rng=1)
    assert out.shape == (2, 2) and np.all(out == np.rint(out)) and isinstance(one, float)
    with pytest.raises(ValueError, match="a must"):
        noise.add_discrete_laplace(1.0, 0.0)
    # the exact parameter is never above a: 1/scale ≤ a (a little more noise, never less)
    for a in (0.05, 0.1, 0.7, 1 / 3, 2.0 / 3.0, 1e-7):
        scale = noise._discrete_laplace_scale(a)
        assert 1 / scale <= Fraction(a) and float(1 / scale) == pytest.approx(a, rel=1e-15)


def test_explore_mode_discrete_laplace_keeps_the_geometric_stream():
    gen = np.random.default_rng(9)
    p = -math.expm1(-0.3)
    ref = 5.0 + (gen.geometric(p, size=4) - gen.geometric(p, size=4))
    assert np.array_equal(noise.add_discrete_laplace(np.full(4, 5.0), 0.3, rng=9), ref)


@pytest.mark.parametrize("sigma", [0.3, 4.0])
def test_defended_gaussian_adder_has_the_stated_law(sigma):
    """add_gaussian inside the defence (the LSH leaf sums' noise): N(0, σ²) discretised on a grid
    λ ≤ 2⁻²⁰·Δ/√s, indistinguishable from N(0, σ²) by a KS test on 20 000 draws, which rejects
    1.5σ and σ/1.5."""
    size = 20_000
    with noise.defended_noise(ZCDP(1.0)):
        out = noise.add_gaussian(np.zeros(size), sigma, sensitivity=1.0, rng=22)
    lam = 2.0 ** math.floor(math.log2(noise.DEFAULT_ETA / math.sqrt(size)))
    assert np.all(out / lam == np.rint(out / lam))
    assert stats.kstest(out, stats.norm(scale=sigma).cdf).pvalue > 1e-3
    for wrong in (1.5, 1 / 1.5):
        assert stats.kstest(out, stats.norm(scale=wrong * sigma).cdf).pvalue < 1e-6
