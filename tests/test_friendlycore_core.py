"""FriendlyCore: friend counting, filters, paradigms (spec friendlycore.md §1)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.mechanisms.friendlycore import (
    BasicFilter,
    count_within,
    dp_paradigm_guarantee,
    friend_counts,
    friendly_core,
    friendly_mean,
    match_counts,
    ordered_tuple_counts,
    required_size,
    zcdp_paradigm_guarantee,
    zCDPFilter,
)
from dpcore.mechanisms.friendlycore.averaging import FAILED_MESSAGE
from dpcore.mechanisms.friendlycore.counting import match_permutation, total_friends
from dpcore.privacy.guarantees import ZCDP, ApproxDP, PureDP


def brute_counts(X, Y, r):
    return (((X[:, None, :] - Y[None, :, :]) ** 2).sum(-1) <= r * r).sum(1)


# ---------------------------------------------------------------- counting


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(1, 25),
    m=st.integers(1, 25),
    d=st.integers(1, 4),
    r=st.integers(0, 6),
    block=st.integers(1, 9),
    seed=st.integers(0, 2**31),
)
def test_count_within_equals_brute_force_on_lattice(n, m, d, r, block, seed):
    # Integer points put many pairs exactly at distance r: the BLAS expansion alone would
    # misclassify some of them (rounding), the re-check must make the counts exact.
    rng = np.random.default_rng(seed)
    X = rng.integers(-4, 5, (n, d)).astype(float) * 1e3 / 7  # non-representable coordinates
    Y = rng.integers(-4, 5, (m, d)).astype(float) * 1e3 / 7
    radius = r * 1e3 / 7
    got = count_within(X, Y, radius, block_rows=block)
    np.testing.assert_array_equal(got, brute_counts(X, Y, radius))
    # the symmetric (upper-triangle) version on the same boundary-heavy points
    np.testing.assert_array_equal(
        friend_counts(X, radius, block_rows=block), brute_counts(X, X, radius)
    )


def test_friend_counts_blocks_and_self():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(301, 7))
    full = brute_counts(X, X, 3.5)
    for block in (1, 13, 300, 1000):
        np.testing.assert_array_equal(friend_counts(X, 3.5, block_rows=block), full)
    assert (friend_counts(X, 1e-12) == 1).all()  # reflexive: every point is its own friend


def test_total_friends_profile():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 3))
    radii = np.array([2.0, 0.5, 1.0, 10.0])
    want = [brute_counts(X, X, r).sum() for r in radii]
    np.testing.assert_array_equal(total_friends(X, radii, block_rows=17), want)


def brute_match(X, Y, gamma):
    k = len(X)
    for pi in itertools.permutations(range(k)):
        ok = True
        for i in range(k):
            lhs = np.linalg.norm(X[i] - Y[pi[i]])
            others = [
                min(np.linalg.norm(X[i] - Y[pi[j]]), np.linalg.norm(X[j] - Y[pi[i]]))
                for j in range(k)
                if j != i
            ]
            if not lhs < gamma * min(others, default=np.inf):
                ok = False
                break
        if ok:
            return True
    return False


@pytest.mark.parametrize("gamma", [1 / 7, 1 / 3, 1.0])
def test_match_counts_equal_definition(gamma):
    # Tuples = a shuffled copy of 3 centres plus noise of varying size: some pairs match, some not.
    rng = np.random.default_rng(3)
    base = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    T = []
    for scale in np.linspace(0.0, 0.4, 24):
        T.append(rng.permutation(base + rng.normal(scale=scale, size=base.shape)))
    T = np.array(T)
    want = [sum(brute_match(T[a], T[c], gamma) for c in range(len(T))) for a in range(len(T))]
    got = match_counts(T, gamma, block_rows=5)
    np.testing.assert_array_equal(got, want)
    assert 1 <= got.min() < got.max() < len(T) + 1  # the test set has both outcomes


def test_match_permutation_orders_like_reference():
    X = np.array([[0.0, 0.0], [5.0, 0.0], [0.0, 5.0]])
    Y = X[[2, 0, 1]] + 0.01
    pi = match_permutation(X, Y)
    np.testing.assert_allclose(Y[pi], X + 0.01)
    assert match_permutation(X, np.array([[0.0, 0.0], [0.1, 0.0], [0.2, 0.0]])) is None


def test_ordered_tuple_counts_brute():
    rng = np.random.default_rng(4)
    T = rng.normal(size=(40, 3, 2))
    radii = np.array([1.0, 1.5, 2.5])
    want = np.zeros(40, int)
    for a in range(40):
        for c in range(40):
            want[a] += all(np.linalg.norm(T[a, j] - T[c, j]) <= radii[j] for j in range(3))
    np.testing.assert_array_equal(ordered_tuple_counts(T, radii, block_rows=7), want)


# ---------------------------------------------------------------- filters


def test_basic_filter_probabilities_and_sampling():
    counts = np.array([0, 5, 6, 7, 8, 9, 10, 10, 10, 10])
    p = BasicFilter(alpha=0.0).probabilities(counts)
    np.testing.assert_allclose(p, np.clip((counts - 5) / 5, 0, 1))
    p_alpha = BasicFilter(alpha=0.25).probabilities(counts)
    np.testing.assert_allclose(p_alpha, np.clip((counts - 5) / 2.5, 0, 1))
    # Sampling frequency: 20000 draws; sd of a frequency ≤ 0.0036, so 0.015 is > 4 sd.
    rng = np.random.default_rng(5)
    freq = np.mean([BasicFilter().apply(counts, rng=rng).mask for _ in range(20000)], axis=0)
    np.testing.assert_allclose(freq, p, atol=0.015)
    with pytest.raises(ValueError, match="alpha"):
        BasicFilter(alpha=0.5)


def test_zcdp_filter_constants_match_spec():
    # Spec §5.1 COMPUTED: n = 800, FriendlyCore(rho=0.1, delta=5e-9): n_hat mean ≈ 844.5
    # (sd 7.07), score-noise sd ≈ 34.2, threshold ≈ 250.0.
    f = zCDPFilter(0.1, 5e-9)
    counts = np.full(800, 800)
    n_hats = np.array([f.apply(counts, rng=s).n_hat for s in range(400)])
    assert abs(n_hats.mean() - 844.5) < 4 * 7.07 / math.sqrt(400)
    assert abs(n_hats.std() - 7.07) < 0.6
    res = f.apply(counts, n_hat=844.5, rng=0)
    assert res.threshold == pytest.approx(250.0, abs=0.5)
    assert res.noise_sd == pytest.approx(34.2, abs=0.1)
    assert res.mask.all()  # score 400 is 4.4 sd above the threshold


def test_zcdp_filter_inclusion_probability_is_calibrated():
    # Pr[v_i = 1 | n_hat] = Phi((z_i - tau)/sigma): check empirically on scores near tau.
    f = zCDPFilter(1.0, 0.1)
    n = 60
    res0 = f.apply(np.full(n, n), n_hat=70.0, rng=0)
    tau, sig = res0.threshold, res0.noise_sd
    counts = np.round(n / 2 + tau + sig * np.linspace(-2, 2, n)).astype(int)
    draws = np.array([f.apply(counts, n_hat=70.0, rng=s).mask for s in range(4000)])
    p = f.apply(counts, n_hat=70.0, rng=0).probabilities
    # 4000 draws: frequency sd ≤ 0.008; tolerance 0.035 > 4 sd.
    np.testing.assert_allclose(draws.mean(0), p, atol=0.035)


def test_zcdp_filter_bad_points_pass_with_at_most_delta_over_2n():
    # A point with z_i ≤ 1/2 must pass w.p. ≤ δ/(2 n̂) (Lemma 4.2's event E).
    for rho, delta in [(0.1, 1e-6), (1.0, 0.3), (5.0, 1e-9)]:
        f = zCDPFilter(rho, delta)
        n_hat = 200.0
        p = f.apply(np.array([100, 100]), reference_size=199, n_hat=n_hat, rng=0).probabilities
        assert p.max() <= delta / (2 * n_hat)


def test_zcdp_filter_empty_inputs_are_empty():
    f = zCDPFilter(1.0, 1e-6)
    assert f.apply(np.zeros(0, int), rng=0).mask.size == 0
    res = f.apply(np.full(5, 5), n_hat=-3.0, rng=0)
    assert not res.mask.any()


def test_required_size_is_the_boundary():
    need = required_size(0.1, 5e-9)
    f = zCDPFilter(0.1, 5e-9)
    shift = math.sqrt(math.log(2 / 5e-9) / 0.01)
    for n, ok in [(need, True), (need - 1, False)]:
        r = f.apply(np.full(n, n), n_hat=n + shift, rng=0)
        assert bool(r.scores[0] >= r.threshold) == ok


# ---------------------------------------------------------------- friendly_core


def two_clusters(rng, n_main=400, n_out=40, d=5):
    main = rng.normal(size=(n_main, d)) * 0.1
    out = rng.normal(size=(n_out, d)) * 0.1 + 50.0
    return np.vstack([main, out])


def test_friendly_core_keeps_complete_set_and_drops_outliers():
    rng = np.random.default_rng(6)
    X = two_clusters(rng)
    res = friendly_core(X, 2.0, rho=1.0, delta=1e-8, rng=7)
    assert res.mask[:400].all() and not res.mask[400:].any()
    assert res.guarantee == ZCDP(1.0, 1e-8)
    np.testing.assert_array_equal(res.counts[:400], 400)


def test_friendly_core_dp_paradigm_never_keeps_minority_points():
    rng = np.random.default_rng(8)
    X = np.vstack([rng.normal(size=(30, 2)) * 0.1, rng.normal(size=(25, 2)) * 0.1 + 9])
    for s in range(50):
        res = friendly_core(X, 1.0, paradigm="dp", alpha=0.1, rng=s)
        assert not res.mask[30:].any()  # 25 friends ≤ n/2 = 27.5 → p = 0
    assert res.guarantee is None
    assert res.end_to_end(ApproxDP(0.5, 1e-9)) == dp_paradigm_guarantee(
        ApproxDP(0.5, 1e-9), alpha=0.1
    )


def test_friendly_core_sampled():
    rng = np.random.default_rng(9)
    X = np.vstack([rng.normal(size=(4000, 3)) * 0.1, rng.normal(size=(300, 3)) * 0.1 + 9])
    res = friendly_core(X, 2.0, rho=1.0, delta=1e-8, sample_size=1500, rng=3)
    ref = res.extra["reference_mask"]
    np.testing.assert_array_equal(res.counts, brute_counts(X, X[ref], 2.0))
    assert res.reference_size == ref.sum()
    assert 1000 < res.reference_size < 2000
    assert res.mask[:4000].all() and not res.mask[4000:].any()
    assert res.guarantee == ZCDP(1.0, 1e-8)  # total δ includes App. B's extra δ/2
    with pytest.raises(ValueError, match="only supported with paradigm='zcdp'"):
        friendly_core(X, 2.0, paradigm="dp", sample_size=100)
    with pytest.raises(ValueError, match="sample_size = 10 is too small"):
        friendly_core(X, 2.0, rho=1.0, delta=1e-8, sample_size=10, n_public=X.shape[0])


def test_paradigm_guarantees():
    both = zcdp_paradigm_guarantee(ZCDP(0.1, 1e-9), ZCDP(0.9, 2e-9))
    assert both.rho == pytest.approx(1.0) and both.delta == pytest.approx(3e-9)
    assert zcdp_paradigm_guarantee(ZCDP(0.1), PureDP(1.0)).rho == pytest.approx(0.6)
    eps, delta = 0.3, 1e-6
    g = dp_paradigm_guarantee(ApproxDP(eps, delta))  # alpha = 0: g = 2
    assert g.epsilon == pytest.approx(2 * math.expm1(eps))
    assert g.delta == pytest.approx(2 * delta * math.exp(eps + 2 * math.expm1(eps)))
    g3 = dp_paradigm_guarantee(ApproxDP(eps, delta), alpha=0.25)  # g = 1/(1-0.5) + 1 = 3
    assert g3.epsilon == pytest.approx(3 * math.expm1(eps))


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"radius": 0.0}, "radius must be finite and > 0"),
        ({"radius": -1.0}, "radius must be finite and > 0"),
        ({"radius": 1.0, "rho": None}, "needs rho and delta"),
        ({"radius": 1.0, "delta": 1.5}, "delta must be in"),
        ({"radius": 1.0, "paradigm": "x"}, "paradigm must be"),
    ],
)
def test_friendly_core_bad_input(kwargs, match):
    X = np.zeros((5000, 2))
    args = {"rho": 1.0, "delta": 1e-6, **kwargs}
    radius = args.pop("radius")
    with pytest.raises(ValueError, match=match):
        friendly_core(X, radius, **args)


def test_friendly_core_refuses_nonfinite_and_small_n():
    X = np.zeros((50, 2))
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN or infinite"):
        friendly_core(X, 1.0, rho=1.0, delta=1e-6)
    with pytest.raises(ValueError, match=r"declared n = 20 is too small .* Need n >= \d+"):
        friendly_core(np.zeros((20, 2)), 1.0, rho=0.1, delta=1e-8, n_public=20)


@pytest.mark.parametrize("n", [17429, 17430])
def test_size_refusal_reads_only_the_declared_n(n):
    # Defect 4: the refusal used to flip between n = 17429 and 17430 (FC_Avg at ε = 1,
    # δ = 1e-6: core ρ = 0.1·ρ(ε), δ/4); a refusal on the true n is an ε = ∞ event.
    X = np.zeros((n, 1))
    counts = np.full(n, n)  # every point is everybody's friend
    res = friendly_mean(X, radius=1.0, epsilon=1.0, delta=1e-6, counts=counts, rng=0)  # both run
    assert res.failed in (True, False)
    assert res.reason in ("", FAILED_MESSAGE)
    with pytest.raises(ValueError, match="declared n = 17429"):
        friendly_mean(X, radius=1.0, epsilon=1.0, delta=1e-6, n_public=17429, counts=counts)
