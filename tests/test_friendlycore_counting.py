"""The compiled tuple counts and the sampled (reference-set) counting path of FriendlyCore
(issue 23.5): exactness against brute force, and the privacy properties the filter's proof uses.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import dpcore.mechanisms.friendlycore.filters as filters
from dpcore.mechanisms.friendlycore import zCDPFilter
from dpcore.mechanisms.friendlycore.counting import (
    match_counts,
    ordered_tuple_counts,
    total_friends,
)
from dpcore.mechanisms.friendlycore.filters import filter_with_reference


def _match_brute(X: np.ndarray, Y: np.ndarray, gamma: float) -> bool:
    """match_γ straight from the formal definition (Sec. 5.2.1): some permutation π with
    ‖x_i − y_π(i)‖ < γ min_{j≠i} min(‖x_i − y_π(j)‖, ‖x_j − y_π(i)‖) for every i."""
    k = len(X)
    dist = np.linalg.norm(X[:, None] - Y[None], axis=2)
    for pi in itertools.permutations(range(k)):
        if all(dist[i, pi[i]] < gamma * min(min(dist[i, pi[j]], dist[j, pi[i]])
                                             for j in range(k) if j != i)
               for i in range(k)):
            return True
    return False


def _tuples(t: int, k: int, d: int, spread: float, seed: int) -> np.ndarray:
    """Noisy copies of one k-tuple (relabelled), a third of them random; some exact duplicates
    (ties: a point equidistant to two others)."""
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(k, d)) * 3
    T = base[None] + spread * rng.normal(size=(t, k, d))
    T[::3] = rng.normal(size=T[::3].shape)
    T[1::7, 1] = T[1::7, 0]  # a tuple with two equal points matches nothing (strict <)
    return np.stack([tup[rng.permutation(k)] for tup in T])


@pytest.mark.parametrize("gamma", [1 / 7, 0.5, 1.0])
@pytest.mark.parametrize("k, d, spread", [(2, 1, 0.4), (3, 2, 0.3), (4, 3, 0.05)])
def test_match_counts_equal_the_definition(gamma, k, d, spread):
    # Catches: a one-sided test (the intro's version), ≤ for <, a missing bijection check, or
    # the early exit rejecting pairs the definition accepts.
    T = _tuples(60, k, d, spread, seed=k * 10 + d)
    brute = np.array([sum(_match_brute(a, c, gamma) for c in T) for a in T])
    assert brute.min() < brute.max()  # both matches and non-matches occur
    assert np.array_equal(match_counts(T, gamma), brute)
    ref = np.arange(60) % 4 == 1
    brute_ref = np.array([sum(_match_brute(a, c, gamma) for c in T[ref]) for a in T])
    assert np.array_equal(match_counts(T, gamma, reference=ref), brute_ref)
    assert np.array_equal(match_counts(T, gamma, reference=np.flatnonzero(ref)), brute_ref)


def test_ordered_counts_and_radius_profile_equal_brute_force():
    # Catches: < for ≤ at the radius, one position skipped, pairs counted once instead of
    # twice, the diagonal (every point is its own friend) left out, a wrong bucket.
    T = _tuples(80, 3, 2, 0.3, seed=4)
    radii = np.array([0.5, 1.0, 0.25])
    D = np.linalg.norm(T[:, None] - T[None], axis=3) ** 2  # (t, t, k)
    ok = np.all(D <= radii**2, axis=2)
    assert np.array_equal(ordered_tuple_counts(T, radii), ok.sum(axis=1))
    ref = np.arange(80) % 3 == 0
    assert np.array_equal(ordered_tuple_counts(T, radii, reference=ref), ok[:, ref].sum(axis=1))
    X = np.round(np.random.default_rng(5).normal(size=(700, 2)), 1)  # many exact ties
    probes = np.array([0.0, 0.1, 0.3, 1.0, 0.2, 5.0])
    P = ((X[:, None] - X[None]) ** 2).sum(axis=2)
    assert np.array_equal(total_friends(X, probes), [(P <= r * r).sum() for r in probes])


def test_reference_set_is_public_and_scores_move_by_at_most_one_under_a_replacement():
    """The proof of the sampled path (filters.filter_with_reference): the membership coins do
    not depend on the data, and with them fixed, replacing one tuple moves every other tuple's
    score by ≤ 1 (0 when the replaced tuple is outside the reference set) and leaves |S| alone.
    Catches: a reference rate read off the counts (then the mask would differ between
    neighbours), or scores rescaled by n/|S| (the paper's App. B estimator)."""
    T = _tuples(3000, 2, 2, 0.05, seed=6)
    T2 = T.copy()
    j = 17
    T2[j] = [[40.0, 40.0], [-40.0, 40.0]]  # tuple j replaced by one that matches nothing
    outs = []
    for tuples in (T, T2):
        seen = {}

        def count(ref, tuples=tuples, seen=seen):
            seen["ref"] = ref
            return match_counts(tuples, 1 / 7, reference=ref)

        res, ref = filter_with_reference(count, len(tuples), 1.0, 1e-6, rng=11)
        outs.append((res, ref))
    (r1, ref1), (r2, ref2) = outs
    assert ref1 is not None and 0 < ref1.mean() < 0.5  # the sampled path ran
    assert np.array_equal(ref1, ref2)
    others = np.arange(3000) != j
    moved = np.abs(r1.scores - r2.scores)[others]
    assert moved.max() <= (1.0 if ref1[j] else 0.0)
    assert r1.n_hat == r2.n_hat  # n̂ sees the public size only


def test_exact_path_is_unchanged_when_the_reference_would_be_everything():
    """With t within a few times the filter's need (q = 1) nothing extra is drawn: the same seed
    gives the same core as zCDPFilter.apply on the exact counts (stored runs stay valid)."""
    T = np.random.default_rng(8).normal(size=(2, 2)) * 3 + 0.01 * np.random.default_rng(9).normal(
        size=(400, 2, 2))  # all friends: z = 200 > τ ≈ 151, so the core is not empty
    res, ref = filter_with_reference(lambda r: match_counts(T, reference=r), 400, 0.1, 1e-6,
                                     rng=3)
    assert ref is None  # 4τ(n̂) ≈ 600 > 400 at ρ = 0.1
    exact = zCDPFilter(0.1, 1e-6).apply(match_counts(T), rng=3)
    assert np.array_equal(res.mask, exact.mask) and res.n_hat == exact.n_hat
    assert 0 < res.mask.sum()


def test_reference_rate_is_a_function_of_the_released_size_only(monkeypatch):
    """q = min(1, 4τ(n̂)/n̂): with n̂ forced, the rate is the same whatever the counts are.
    Catches a rate computed from the true size or from the counts."""
    rates = []
    real = filters.reference_fraction
    monkeypatch.setattr(filters, "reference_fraction",
                        lambda target, n_hat: rates.append(real(target, n_hat)) or rates[-1])
    monkeypatch.setattr(filters, "noisy_size_upper", lambda n, rho1, delta, rng=None: 5000.0)
    for n in (3000, 4000):
        filter_with_reference(lambda ref, n=n: np.zeros(n), n, 1.0, 1e-6, rng=0)
    tau, _ = filters._threshold(5000.0, 0.9, 1e-6)
    assert rates == [pytest.approx(4 * tau / 5000.0)] * 2
    assert math.isclose(rates[0], rates[1])


def test_reference_membership_is_bernoulli_at_the_rate():
    """Statistical: over 40 draws of 3,000 elements the reference share stays within 4 standard
    errors of q, and membership is independent of position (first half vs second half).
    Catches a fixed-size subset (then neighbours differ by a substitution) or a biased draw."""
    q = 0.2
    masks = np.array([filters._reference_mask(3000, q, np.random.default_rng(s))
                      for s in range(40)])
    se = math.sqrt(q * (1 - q) / masks.size)
    assert abs(masks.mean() - q) < 4 * se
    assert len({int(m.sum()) for m in masks}) > 5  # the size varies: Poisson, not fixed
    assert abs(masks[:, :1500].mean() - masks[:, 1500:].mean()) < 4 * math.sqrt(2) * se * 2
