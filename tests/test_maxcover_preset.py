"""MaxCoverKMeans presets: the recommended DP-Lloyd stage after Algorithm 2, and the paper's.

``preset="recommended"`` (the default unless the paper's ``final_lloyd``/``lloyd_rounds`` is
given) runs Algorithm 2's lines 1–19 on ``seed_share``·ε and δ, then DPKMeans's budget-aware
DP-Lloyd whose first round averages max-cover's partition; ``preset="paper"`` is Algorithm 2
plus the paper's NoisyAVG round(s).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.app.evaluate import kmeans_cost
from dpcore.data.datasets import gaussian_mixture
from dpcore.data.geometry import nearest_center
from dpcore.estimators.dpkmeans import PARTITION_ROUNDS, DPKMeans
from dpcore.mechanisms.lloyd.domain import auto_count_share, ball_domain, error_budget_n_iter
from dpcore.mechanisms.lloyd.estimator import dp_lloyd
from dpcore.mechanisms.maxcover import (
    MaxCoverKMeans,
    ProxyPartition,
    em_privacy_loss,
    project_to_unit_ball,
)
from dpcore.mechanisms.maxcover.estimator import DEFAULT_SEED_SHARE
from dpcore.privacy.guarantees import ApproxDP
from dpcore.reproduce.maxcover import MAXCOVER_SETTINGS

KW = dict(epsilon=1.0, delta=1e-6, radius=3.0, n_public=600)


def _X(n: int = 600, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, (n, 3))


@pytest.mark.parametrize(
    ("kw", "preset"),
    [
        ({}, "recommended"),
        ({"final_lloyd": True}, "paper"),
        ({"lloyd_rounds": 2}, "paper"),
        ({"lloyd_rounds": 0}, "paper"),
        ({"preset": "paper"}, "paper"),
        ({"preset": "recommended", "final_lloyd": False}, "recommended"),
        (dict(MAXCOVER_SETTINGS), "paper"),
    ],
)
def test_preset_resolution(kw, preset):
    """The paper's knobs select the paper's configuration. Catches: the reproduction (which
    passes ``final_lloyd=True`` and no preset) silently switching to the DP-Lloyd stage."""
    est = MaxCoverKMeans(2, rng=0, **{**KW, **kw}).fit(_X())
    assert est.preset_ == preset
    assert (est.lloyd_ is None) == (preset == "paper")
    if preset == "paper":
        rounds = kw.get("lloyd_rounds", int(bool(kw.get("final_lloyd"))))
        assert (est.budget_.eps_lloyd > 0) == (rounds > 0)
        if rounds == 0:  # Algorithm 2 alone: the released centres are its NoisyAVG averages
            np.testing.assert_array_equal(est.cluster_centers_, est.seed_centers_)


def test_recommended_guarantee_is_the_exact_composition():
    """privacy_ = the seeding's (ε₁, δ) + DP-Lloyd's ε₂ with ε₁ = seed_share·ε, all of δ on the
    exponential mechanism (nothing else uses δ since NoisyAVG is not run). Catches: charging
    only one stage, splitting δ with a step that is not run, or charging NoisyAVG's ε_G."""
    for share in (None, 0.3):
        est = MaxCoverKMeans(3, rng=1, seed_share=share, **KW).fit(_X())
        s = DEFAULT_SEED_SHARE if share is None else share
        seed, lloyd = est.budget_.guarantee, est.lloyd_.privacy_
        assert est.budget_.eps_G == 0 and est.budget_.delta_E == 1e-6
        assert seed.epsilon == pytest.approx(s * 1.0, rel=1e-12)
        assert seed.delta == pytest.approx(1e-6, rel=1e-12)
        loss = em_privacy_loss(est.budget_.eps_E, est.budget_.delta_E)
        assert seed.epsilon == pytest.approx(loss + est.budget_.eps_L, rel=1e-12)
        assert lloyd.epsilon == pytest.approx((1 - s) * 1.0, rel=1e-12)
        assert est.privacy_ == ApproxDP(seed.epsilon + lloyd.epsilon, seed.delta)
        assert est.privacy_.epsilon == pytest.approx(1.0, rel=1e-12)


def test_the_seeding_charges_exactly_its_share_at_large_epsilon():
    """At ε = 4 the old path clamped NoisyAVG to 1/3; the partition seeding has no clamp, so it
    spends exactly seed_share·ε (em : counts = 0.5 : 0.17) and warns about nothing. Catches: a
    clamp or share that leaves ε unspent, or the em/counts ratio drifting from the default."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        est = MaxCoverKMeans(2, rng=0, **{**KW, "epsilon": 4.0}).fit(_X())
    b = est.budget_
    assert b.guarantee.epsilon == pytest.approx(DEFAULT_SEED_SHARE * 4.0, rel=1e-12)
    assert b.eps_L == pytest.approx(DEFAULT_SEED_SHARE * 4.0 * 0.17 / 0.67, rel=1e-12)
    assert est.lloyd_.privacy_.epsilon == pytest.approx((1 - DEFAULT_SEED_SHARE) * 4.0)
    assert est.privacy_.epsilon == pytest.approx(4.0, rel=1e-12)


def test_one_code_path_with_dpkmeans_maxcover_seeding():
    """MaxCoverKMeans(defaults) is DPKMeans(seeding="maxcover") on the same ball: same draws,
    same centres. Catches: the two paths drifting apart (a duplicated, diverging copy)."""
    X = _X(seed=3)
    a = MaxCoverKMeans(3, rng=7, **KW).fit(X)
    b = DPKMeans(3, epsilon=1.0, radius=3.0, n=600, seeding="maxcover", delta=1e-6,
                 rng=7).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.seed_centers_, b.lloyd_.history_[1])
    np.testing.assert_array_equal(a.partition_(X), b.seeding_.partition_(X))
    assert a.privacy_ == b.privacy_
    assert a.lloyd_.n_iter_ == b.n_iter_ >= 3


def _separated(n=20_000, seed=2):
    return gaussian_mixture(n, 4, 5, sigma=0.3, center_radius=3.0, rng=seed)[0]


def test_first_round_averages_the_maxcover_partition():
    """With little noise (ε = 50) the first DP-Lloyd round's centres are the means of
    max-cover's partition (partition_), not of the nearest-initial-centre partition, and a
    cluster the partition leaves empty keeps its data-independent start (‖c‖ ≤ r/2). Catches:
    the partition being ignored (DP-Lloyd from random starts) or used in every round."""
    X = _separated()
    kw = {**KW, "epsilon": 50.0, "radius": 5.0, "n_public": 20_000}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        est = MaxCoverKMeans(5, rng=0, **kw).fit(X)
    h = est.lloyd_.history_
    lab = est.partition_(X)
    counts = np.bincount(lab, minlength=5)
    full = counts > 100
    means = np.stack([X[lab == j].mean(axis=0) if counts[j] else h[0][j] for j in range(5)])
    np.testing.assert_allclose(h[1][full], means[full], atol=0.05)
    near = nearest_center(X, h[0])[0]
    other = np.stack([X[near == j].mean(axis=0) if np.any(near == j) else h[0][j]
                      for j in range(5)])
    assert np.max(np.linalg.norm(other - means, axis=1)) > 0.5  # the test can tell them apart
    np.testing.assert_array_equal(h[1][counts == 0], h[0][counts == 0])
    assert np.all(np.linalg.norm(h[0], axis=1) <= 2.5 + 1e-12)
    # later rounds assign by the nearest centre: round 2 from h[1] is plain (noisy) Lloyd
    lab2 = nearest_center(X, h[1])[0]
    m2 = np.stack([X[lab2 == j].mean(axis=0) if np.any(lab2 == j) else h[1][j]
                   for j in range(5)])
    big = np.bincount(lab2, minlength=5) > 100
    np.testing.assert_allclose(h[2][big], m2[big], atol=0.05)
    assert kmeans_cost(X, est.cluster_centers_) < kmeans_cost(X, h[0])


def test_partition_round_is_added_to_the_error_budget_rule():
    """T = error_budget_n_iter's T + 1 under n_iter="auto" (the partition round); an explicit
    n_iter is the total. Catches: the partition round eating one of DP-Lloyd's own rounds, or
    the +1 also applied to a user's n_iter."""
    X = _X(seed=4)
    est = DPKMeans(3, epsilon=1.0, radius=3.0, n=600, seeding="maxcover", delta=1e-6,
                   rng=0).fit(X)
    dom = ball_domain(3.0, 3)
    rule = error_budget_n_iter(est.lloyd_.privacy_.epsilon, 600, 3, dom, auto_count_share(dom))
    assert est.n_iter_ == rule + PARTITION_ROUNDS == rule + 1
    assert len(est.lloyd_.history_) == est.n_iter_ + 1
    fixed = DPKMeans(3, epsilon=1.0, radius=3.0, n=600, seeding="maxcover", delta=1e-6,
                     n_iter=4, rng=0).fit(X)
    assert fixed.n_iter_ == 4


def test_proxy_partition_is_the_projected_nearest_proxy_centre():
    """ProxyPartition(x) = nearest S'' of clip₁(T(x − c)/((1+ε)r)), computed without copying X.
    Catches: a missing shift (box seeding), a missing radial clip, or a different scale."""
    rng = np.random.default_rng(5)
    T = rng.normal(size=(3, 6))
    S = rng.uniform(-1, 1, (4, 3))
    c = rng.normal(size=6)
    X = c + rng.normal(size=(500, 6)) * 4.0
    part = ProxyPartition(T, S, 2.0, 0.5, shift=c)
    Y = project_to_unit_ball(X - c, T, 2.0, 0.5)
    assert np.any(np.linalg.norm((X - c) @ T.T / 3.0, axis=1) > 1)  # the clip matters here
    np.testing.assert_array_equal(part(X), nearest_center(Y, S)[0])
    unshifted = ProxyPartition(T, S, 2.0, 0.5)
    np.testing.assert_array_equal(unshifted(X - c), part(X))


def test_box_seeding_partitions_around_the_box_centre():
    """DPKMeans(bounds=..., seeding="maxcover") runs max-cover on X − c (ball of the half-
    diagonal) and DP-Lloyd's first assignment shifts rows by the same c. Catches: a partition
    map applied to unshifted rows (all points in one or two cells)."""
    rng = np.random.default_rng(6)
    X = 100.0 + rng.uniform(-1, 1, (3000, 3))
    box = (np.full(3, 99.0), np.full(3, 101.0))
    km = DPKMeans(3, epsilon=2.0, bounds=box, n=3000, seeding="maxcover", delta=1e-6,
                  rng=0).fit(X)
    part = km.lloyd_.init_assign
    np.testing.assert_array_equal(part.shift, np.full(3, 100.0))
    np.testing.assert_array_equal(part(X), km.seeding_.partition_(X - 100.0))
    assert km.privacy_.epsilon == pytest.approx(2.0)


def test_dp_lloyd_first_assign_is_used_once_and_checked():
    """dp_lloyd(first_assign=f): iteration 1 averages f's partition, later ones assign by the
    nearest centre; labels out of range raise. Catches: f ignored, f reused every round, or a
    bad map silently dropping points."""
    rng = np.random.default_rng(7)
    X = rng.normal(size=(3000, 2))
    init = np.array([[5.0, 5.0], [-5.0, -5.0]])

    def f(Z):
        return (Z[:, 0] > 0).astype(int)

    h = dp_lloyd(X, init, n_iter=2, beta_sum=0.0, beta_count=0.0, radius=10.0, first_assign=f)
    lab = f(X)
    np.testing.assert_allclose(h[1], [X[lab == 0].mean(axis=0), X[lab == 1].mean(axis=0)])
    lab2 = nearest_center(X, h[1])[0]
    np.testing.assert_allclose(h[2], [X[lab2 == 0].mean(axis=0), X[lab2 == 1].mean(axis=0)])
    plain = dp_lloyd(X, init, n_iter=1, beta_sum=0.0, beta_count=0.0, radius=10.0)
    assert not np.allclose(plain[1], h[1])
    with pytest.raises(ValueError, match="first_assign"):
        dp_lloyd(X, init, n_iter=1, beta_sum=0.0, beta_count=0.0, radius=10.0,
                 first_assign=lambda Z: np.full(Z.shape[0], 2))


def test_seeding_budget_split_keys():
    """Under the recommended preset Algorithm 2 stops at the partition: budget_split takes
    "em" and "counts" only. Catches: a paper-style split with "average" silently dropping that
    share (ε the user meant to spend, unaccounted for)."""
    with pytest.raises(ValueError, match=r"exactly the keys \['counts', 'em'\]"):
        MaxCoverKMeans(2, budget_split={"em": 0.5, "counts": 0.17, "average": 0.33},
                       **KW).fit(_X(50))
    est = MaxCoverKMeans(2, rng=0, budget_split={"em": 0.6, "counts": 0.4}, **KW).fit(_X())
    assert est.budget_.eps_L == pytest.approx(0.4 * DEFAULT_SEED_SHARE)
    with pytest.raises(ValueError, match="lines 1–19 only"):
        MaxCoverKMeans(2, final_lloyd=True, **KW).fit_partition(_X(50))


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"preset": "best"}, "preset must be one of"),
        ({"seed_share": 1.0}, "seed_share must be in"),
        ({"seed_share": 0}, "seed_share must be in"),
        ({"seed_share": "half"}, "seed_share must be in"),
    ],
)
def test_bad_preset_parameters(kw, match):
    """Clear messages naming the parameter, not a traceback from inside DPKMeans."""
    with pytest.raises(ValueError, match=match):
        MaxCoverKMeans(2, **{**KW, **kw}).fit(_X(50))
