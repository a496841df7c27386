"""DPKMeans(seeding="auto"): the start is a function of public inputs only, and privacy_ is exact.

Issue 23, item 6. Each test names the bug it catches.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpcore.estimators.dpkmeans import (
    BALL_START_BELOW,
    DPKMeans,
    auto_seeding,
)
from dpcore.privacy.guarantees import ApproxDP, PureDP


def _data(seed: int, n: int = 1200, d: int = 3) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (n, d))


@pytest.mark.parametrize("eps", [0.05, 1.0, 50.0])
def test_auto_choice_ignores_the_data(eps):
    """Two unrelated tables of the same declared shape get the same start and the same
    guarantee (a rule reading X, e.g. its spread or how many rows fall outside, would differ
    between neighbours: an unaccounted leak)."""
    kinds, privs = set(), set()
    for seed, scale in ((0, 1.0), (1, 0.01)):
        X = _data(seed) * scale
        km = DPKMeans(4, epsilon=eps, bounds=(-1.0, 1.0), n=1200, rng=0).fit(X)
        kinds.add(km.seeding_kind_)
        privs.add(str(km.privacy_))
    assert len(kinds) == 1 and len(privs) == 1


def test_auto_rule_follows_the_public_inputs():
    """On a box, the private ball below the threshold of ε·n/(k·d) and the box start above it
    (and at ε = ∞, where no noise needs a smaller domain); on a ball, the ball's own start;
    never max-cover (a pure-DP default must never turn into an (ε, δ) release behind the
    user's back). A swapped comparison or a forgotten domain kind fails here."""
    n, k, d = 20_000.0, 10, 16
    low = 0.5 * BALL_START_BELOW * k * d / n
    high = 2.0 * BALL_START_BELOW * k * d / n
    assert auto_seeding(n, d, k, low, box=True) == "private-ball"
    assert auto_seeding(n, d, k, high, box=True) == "box"
    assert auto_seeding(n, d, k, math.inf, box=True) == "box"
    assert auto_seeding(n, d, k, low, box=False) == "ball"
    assert auto_seeding(n, d, k, low, box=True, sampled=True) == "ball"  # sampled: unmeasured
    for eps in (0.1, 1.0, 10.0, 1e4):
        assert auto_seeding(1e9, d, k, eps, box=True) != "maxcover"
        km = DPKMeans(3, epsilon=eps, bounds=(-1.0, 1.0), n=1e9, delta=1e-6, rng=0)
        assert km.fit(_data(5)).seeding_kind_ in ("box", "private-ball") and km.seeding_ is None


def test_auto_rule_never_reads_the_rows(monkeypatch):
    """The choice is made before any row is read: with every row-reading step of the fit
    replaced by a trap, ``resolved_seeding`` (what the privacy map plans with) and the fit's
    ``seeding_kind_`` agree on every public input. A rule that looked at X (its spread, rows
    outside the box, n read off X despite a declared n) would raise or disagree."""
    import dpcore.estimators.dpkmeans as mod

    class Trap(np.ndarray):
        def __array_function__(self, *a, **kw):
            raise AssertionError("the seeding rule read the rows")

        def __getitem__(self, *a):
            raise AssertionError("the seeding rule read the rows")

    trap = np.zeros((7, 4)).view(Trap)
    for eps, n in ((0.2, 1e3), (1.0, 1e5), (50.0, 1e3), (math.inf, 1e3)):
        for bounds, radius in (((-2.0, 2.0), None), (None, 3.0)):
            km = DPKMeans(5, epsilon=eps, bounds=bounds, radius=radius, n=n, rng=0)
            kind = km._seeding_kind(trap, eps, 5)  # only X.shape may be used
            assert kind == km.resolved_seeding(123, 4)  # the map's view: n declared wins
            assert kind == mod.auto_seeding(n, 4, 5, eps, box=bounds is not None)


@pytest.mark.parametrize("eps", [0.3, 30.0])
def test_privacy_is_exact_whatever_the_choice(eps):
    """Pure ε exactly when δ = 0 (the start is free: public randomness); the seeding's (ε₁, δ)
    plus DP-Lloyd's ε₂ summing to ε when max-cover runs (a double-charged or forgotten
    seeding share would change the total)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        km = DPKMeans(3, epsilon=eps, bounds=(-1.0, 1.0), n=1200, rng=1).fit(_data(2))
        assert km.privacy_ == PureDP(eps)
        mc = DPKMeans(3, epsilon=eps, bounds=(-1.0, 1.0), n=1200, seeding="maxcover",
                      delta=1e-6, rng=1).fit(_data(2))
    assert isinstance(mc.privacy_, ApproxDP)
    assert mc.privacy_.epsilon == pytest.approx(eps, rel=1e-12) and mc.privacy_.delta == 1e-6


def test_explicit_starts_keep_their_meaning():
    """seeding=None is the old default (box: uniform in its middle half) = seeding="box"; on a
    ball "ball" is None (same draws); on a box "ball" starts in the ball of half the
    half-diagonal, clamped to the box (a swapped branch or an unclamped start would differ)."""
    X = _data(3)
    box = (np.array([-1.0, -2.0, -1.0]), np.array([1.0, 2.0, 3.0]))
    a = DPKMeans(3, epsilon=1.0, bounds=box, n=1200, seeding=None, rng=4).fit(X)
    b = DPKMeans(3, epsilon=1.0, bounds=box, n=1200, seeding="box", rng=4).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    c = DPKMeans(3, epsilon=1.0, radius=2.0, n=1200, seeding=None, rng=4).fit(X)
    e = DPKMeans(3, epsilon=1.0, radius=2.0, n=1200, seeding="ball", rng=4).fit(X)
    np.testing.assert_array_equal(c.cluster_centers_, e.cluster_centers_)
    km = DPKMeans(3, epsilon=1.0, bounds=box, n=1200, seeding="ball", rng=4)
    start = km._ball_start(3, 50, np.random.default_rng(0))
    assert np.all(start >= box[0]) and np.all(start <= box[1])
    centre, half = (box[0] + box[1]) / 2, (box[1] - box[0]) / 2
    assert np.linalg.norm(start - centre, axis=1).max() <= 0.5 * np.linalg.norm(half) + 1e-12
    assert km.fit(X).seeding_kind_ == "ball"
