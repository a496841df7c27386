"""DPKMeans(seeding="private-ball"): a ball released inside the public box (issue 23.6).

Each test names the bug it catches. The radius is
:func:`dpcore.mechanisms.bounds.private_norm_quantile` (audited in the audit suite); the new
release here is the centre (a noisy box sum over the public n), audited below.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.estimators.dpkmeans import DPKMeans
from dpcore.estimators.dpkmeans_ball import (
    BALL_QUANTILE,
    BALL_SHARE,
    ball_budget,
    ball_parts,
    private_ball,
    private_centre,
)
from dpcore.privacy.audit import audit_epsilon, repeat
from dpcore.privacy.guarantees import PureDP
from dpcore.privacy.kinds import compose
from dpcore.release.release_parts import dpkmeans_parts


def _heavy(seed: int, n: int = 6000, d: int = 6) -> np.ndarray:
    """Heavy-tailed clusters (Student t, 2 dof) whose per-column range is far wider than the
    bulk: the KDD-like case the private ball is for."""
    gen = np.random.default_rng(seed)
    means = gen.normal(0.0, 3.0, (4, d))
    return means[gen.integers(0, 4, n)] + gen.standard_t(2.0, (n, d))


def test_ball_centre_and_radius_estimate_the_data():
    """At a large ε the ball is the data's mean and its 97.5 % norm quantile around it (a
    wrong sign of the box shift, a division by the wrong n, a swapped quantile or the radius
    measured around the box's centre would be far off)."""
    X = _heavy(0)
    box = (X.min(axis=0), X.max(axis=0))
    ball, Z = private_ball(X, box, X.shape[0], 200.0, rng=1)
    mean = X.mean(axis=0)
    assert np.linalg.norm(ball.center - mean) < 0.05 * np.linalg.norm(box[1] - box[0])
    q = np.quantile(np.linalg.norm(X - ball.center, axis=1), BALL_QUANTILE)
    assert q / 1.15 <= ball.radius <= q * 1.15  # candidates are 12 % apart
    # the rows DP-Lloyd reads: (x − center)/radius, inside the unit ball (no clipping left)
    inside = np.linalg.norm(X - ball.center, axis=1) < ball.radius
    assert Z.shape == X.shape and np.linalg.norm(Z, axis=1).max() <= 1 + 1e-12
    np.testing.assert_allclose(Z[inside], (X[inside] - ball.center) / ball.radius)


def test_budget_and_parts_add_up_to_epsilon_exactly():
    """The ball and DP-Lloyd share ε with no float residue, and the fit's parts (what the
    ledger's tight accountant charges) are the ball's two then the rounds, composing to
    ``privacy_`` (a ball left out of the parts would under-charge the tight total)."""
    for eps in (0.3, 1.0, 2.7, 30.0):
        b, rest = ball_budget(eps, BALL_SHARE)
        assert b + rest == eps and compose(*ball_parts(b)).epsilon == b
    X = _heavy(1, n=1500)
    box = (X.min(axis=0), X.max(axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # also: no warning (a count of clipped rows is a leak)
        km = DPKMeans(3, epsilon=0.3, bounds=box, n=1500, seeding="private-ball", rng=2).fit(X)
    assert km.privacy_ == PureDP(0.3)
    parts = dpkmeans_parts(km)
    assert parts[:2] == list(km.ball_.parts)
    assert compose(*parts).epsilon == pytest.approx(0.3, rel=1e-12)
    assert km.lloyd_.privacy_.epsilon == pytest.approx((1 - BALL_SHARE) * 0.3, rel=1e-12)


def test_centres_and_predict_are_in_the_data_coordinates():
    """The centres are shifted back by the ball's centre and clamped to the box, and predict
    is the nearest released centre (predicting in the ball's shifted coordinates, or
    forgetting the shift, would disagree)."""
    X = _heavy(3, n=3000)
    box = (X.min(axis=0), X.max(axis=0))
    km = DPKMeans(4, epsilon=5.0, bounds=box, n=3000, seeding="private-ball", rng=0).fit(X)
    C = km.cluster_centers_
    assert np.all(C >= box[0]) and np.all(C <= box[1])
    np.testing.assert_allclose(
        C, np.clip(km.lloyd_.cluster_centers_ * km.ball_.radius + km.ball_.center, *box))
    d2 = ((X[:200, None, :] - C[None]) ** 2).sum(axis=2)
    np.testing.assert_array_equal(km.predict(X[:200]), d2.argmin(axis=1))


def test_runs_on_an_empty_table_warns_outside_the_box_and_refuses_without_one():
    """The release door checks parameters by fitting on zero rows (a ⊥ there refused every
    default DPKMeans release); rows outside the declared box are said, as on the box path (a
    silent clamp hides a wrong declaration); a ball needs a box to live in (a clear error, no
    traceback from deep inside)."""
    km = DPKMeans(2, epsilon=1.0, bounds=(-1.0, 1.0), n=100, seeding="private-ball", rng=0)
    km.fit(np.zeros((0, 3)))
    assert km.ball_ is not None and km.privacy_ == PureDP(1.0)
    X = np.zeros((20, 3))
    X[0, 1] = 5.0  # outside the declared box: said (as on the box path), then clamped
    with pytest.warns(UserWarning, match="outside bounds"):
        DPKMeans(2, epsilon=1.0, bounds=(-1.0, 1.0), n=20, seeding="private-ball", rng=0).fit(X)
    with pytest.raises(ValueError, match="needs bounds"):
        DPKMeans(2, epsilon=1.0, radius=1.0, n=100, seeding="private-ball").fit(np.zeros((5, 3)))


def test_private_ball_beats_the_box_on_heavy_tails():
    """What the ball is for: on heavy-tailed data with the box = the per-column range, the
    private ball's cost is below the box start's at the same ε (median of 5 seeds); centres
    left in the ball's coordinates, or a radius read around the box's centre, lose this."""
    from dpcore.app.evaluate import kmeans_cost

    X = _heavy(4, n=20_000, d=8)
    box = (X.min(axis=0), X.max(axis=0))
    cost = {s: [] for s in ("box", "private-ball")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(5):
            for s in cost:
                km = DPKMeans(4, epsilon=1.0, bounds=box, n=20_000, seeding=s, rng=seed).fit(X)
                cost[s].append(kmeans_cost(X, km.cluster_centers_))
    assert np.median(cost["private-ball"]) < 0.9 * np.median(cost["box"])


def _centre(epsilon: float):
    """The released centre on the box [−1, 1]² with public n = 50 (first coordinate audited)."""
    return repeat(lambda X, rng: private_centre(X, (-1.0, 1.0), 50, epsilon, rng=rng)[0])


@pytest.mark.slow
def test_centre_release_stays_under_its_epsilon_and_a_broken_twin_is_flagged():
    """Audit of the new release (the centre, ``BALL_CENTRE_SPLIT`` of the ball's ε, the same
    code path as :func:`private_ball`'s): D₀ = 50 rows at 0, D₁ = D₀ plus a row at the box's
    corner (the worst case). The real centre stays under its claim; one calibrated to 10× the
    ε (a sensitivity from the ball instead of the box, the ball's ε spent twice) is flagged."""
    d0 = np.zeros((50, 2))
    d1 = np.vstack([d0, [[1.0, 1.0]]])
    claim = ball_parts(1.0)[0].epsilon
    real = audit_epsilon(_centre(claim), d0, d1, n_samples=20_000, rng=0)
    assert real.epsilon_lower <= claim, real
    broken = audit_epsilon(_centre(10 * claim), d0, d1, n_samples=20_000, rng=0)
    assert broken.epsilon_lower > claim, broken


def test_start_is_clamped_to_the_box_in_the_ball():
    """The private ball's start is in the box (in the data's coordinates) and in the ball: on a
    box with one wide column and narrow others (Covertype's binary columns next to ranges of
    thousands) an unclamped isotropic start put centres far outside the narrow columns, where
    they never win a row."""
    gen = np.random.default_rng(5)
    X = np.column_stack([gen.uniform(0, 30, 4000), gen.integers(0, 2, (4000, 6))])
    box = (np.r_[0.0, np.zeros(6)], np.r_[1000.0, np.ones(6)])  # the bulk fills 3 %
    km = DPKMeans(8, epsilon=5.0, bounds=box, n=4000, seeding="private-ball", rng=1).fit(X)
    assert km.ball_used_
    start = km.lloyd_.history_[0] * km.ball_.radius + km.ball_.center
    assert np.all(start >= box[0] - 1e-9) and np.all(start <= box[1] + 1e-9)
    assert np.linalg.norm(km.lloyd_.history_[0], axis=1).max() <= 0.5 + 1e-12


def test_a_box_the_data_fill_keeps_the_box_at_the_same_rounds():
    """Where the released ball is noisier than the box (the data fill a box with one wide
    column: the box's per-column Laplace noise spares the narrow ones), DP-Lloyd runs on the
    box, with the T and count share it would have had on the ball, so the parts (what the
    ledger charges) are the ball's two then the same rounds; a fit that kept the ball there
    cost 2× the box on Covertype, and one with the box's own T would mis-charge the ledger."""
    from dpcore.estimators.dpkmeans_ball import stage_budget

    gen = np.random.default_rng(6)
    X = np.column_stack([gen.uniform(0, 1000, 4000), gen.integers(0, 2, (4000, 6))])
    box = (np.r_[0.0, np.zeros(6)], np.r_[1000.0, np.ones(6)])
    km = DPKMeans(8, epsilon=1.0, bounds=box, n=4000, seeding="private-ball", rng=1).fit(X)
    assert not km.ball_used_ and km.lloyd_.domain_.is_box
    t, f = stage_budget(1.0, 4000, 8, box, 7, "auto")
    assert (km.n_iter_, km.count_share_) == (t, pytest.approx(f, rel=1e-12))
    assert km.privacy_ == PureDP(1.0)
    assert np.all(km.cluster_centers_ >= box[0]) and np.all(km.cluster_centers_ <= box[1])
    np.testing.assert_array_equal(km.predict(X[:50]), km.lloyd_.predict(X[:50]))
