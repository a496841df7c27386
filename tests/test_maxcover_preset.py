"""MaxCoverKMeans presets: the recommended DP-Lloyd stage after Algorithm 2, and the paper's.

``preset="recommended"`` (the default unless the paper's ``final_lloyd``/``lloyd_rounds`` is
given) runs Algorithm 2 on ``seed_share``·ε and δ, then DPKMeans's budget-aware DP-Lloyd from
its centres; ``preset="paper"`` is Algorithm 2 plus the paper's NoisyAVG round(s).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.datasets import gaussian_mixture
from dpcore.evaluate import kmeans_cost
from dpcore.maxcover import MaxCoverKMeans
from dpcore.maxcover.estimator import DEFAULT_SEED_SHARE
from dpcore.privacy import ApproxDP
from dpcore.recommended import DPKMeans
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
    """privacy_ = Algorithm 2's (ε₁, δ) + DP-Lloyd's ε₂ with ε₁ = seed_share·ε. Catches: charging
    only one stage, or splitting δ with a (pure) DP-Lloyd stage that uses none."""
    for share in (None, 0.3):
        est = MaxCoverKMeans(3, rng=1, seed_share=share, **KW).fit(_X())
        s = DEFAULT_SEED_SHARE if share is None else share
        seed, lloyd = est.budget_.guarantee, est.lloyd_.privacy_
        assert seed.epsilon == pytest.approx(s * 1.0, rel=1e-12)
        assert seed.delta == pytest.approx(1e-6, rel=1e-12)
        assert lloyd.epsilon == pytest.approx((1 - s) * 1.0, rel=1e-12)
        assert est.privacy_ == ApproxDP(seed.epsilon + lloyd.epsilon, seed.delta)
        assert est.privacy_.epsilon == pytest.approx(1.0, rel=1e-12)


def test_a_clamped_noisy_avg_share_goes_to_dp_lloyd():
    """At ε = 4 Algorithm 2's NoisyAVG share (0.33·0.7·4) exceeds 1/3 and is clamped; the unspent
    part goes to DP-Lloyd, so the total is still ε = 4 and each part is charged what it used.
    Catches: charging Algorithm 2 its nominal share (over-stating ε) or wasting the remainder."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # no "smaller than requested" warning
        est = MaxCoverKMeans(2, rng=0, **{**KW, "epsilon": 4.0}).fit(_X())
    assert est.budget_.eps_G == pytest.approx(1 / 3)
    seed = est.budget_.guarantee.epsilon
    assert seed < DEFAULT_SEED_SHARE * 4.0
    assert est.lloyd_.privacy_.epsilon == pytest.approx(4.0 - seed, rel=1e-12)
    assert est.privacy_.epsilon == pytest.approx(4.0, rel=1e-12)


def test_one_code_path_with_dpkmeans_maxcover_seeding():
    """MaxCoverKMeans(defaults) is DPKMeans(seeding="maxcover") on the same ball: same draws,
    same centres. Catches: the two paths drifting apart (a duplicated, diverging copy)."""
    X = _X(seed=3)
    a = MaxCoverKMeans(3, rng=7, **KW).fit(X)
    b = DPKMeans(3, epsilon=1.0, radius=3.0, n=600, seeding="maxcover", delta=1e-6,
                 rng=7).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    np.testing.assert_array_equal(a.seed_centers_, b.seeding_.cluster_centers_)
    assert a.privacy_ == b.privacy_
    assert a.lloyd_.n_iter_ == b.n_iter_ >= 2


def test_lloyd_stage_starts_from_the_seeds_and_improves_them():
    """The DP-Lloyd stage starts at Algorithm 2's centres (history_[0]) and, on well separated
    clusters with n = 20 000, lowers their cost. Catches: the stage ignoring the seeds (random
    start) or not running."""
    X = gaussian_mixture(20_000, 4, 5, sigma=0.3, center_radius=3.0, rng=2)[0]
    kw = {**KW, "radius": 5.0, "n_public": 20_000}
    for seed in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            est = MaxCoverKMeans(5, rng=seed, **kw).fit(X)
        np.testing.assert_allclose(est.lloyd_.history_[0], est.seed_centers_)
        assert kmeans_cost(X, est.cluster_centers_) < kmeans_cost(X, est.seed_centers_)


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
