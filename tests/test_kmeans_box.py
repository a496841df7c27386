"""Per-feature boxes, budget-aware defaults, the histogram-calibrated privacy sampler and the
recommended DPKMeans (issue 15). Each test names the bug it catches."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.cluster import KMeans

from dpcore.app.evaluate import kmeans_cost
from dpcore.core.cancel import Cancelled, RunControl, controlled
from dpcore.estimators.dpkmeans import DPKMeans
from dpcore.mechanisms.importance import calibrate_lloyd, dp_lloyd_noise_scales, lloyd_profile
from dpcore.mechanisms.importance.grid import calibrate_lloyd_histogram, grid_bins
from dpcore.mechanisms.lloyd.domain import (
    auto_count_share,
    auto_n_iter,
    ball_domain,
    box_domain,
    centre_error,
    error_budget_n_iter,
)
from dpcore.mechanisms.lloyd.estimator import DPLloyd, noisy_lloyd_update
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import PrivacyLeakWarning, PureDP


def skewed_box_data(n=4000, seed=0):
    """Three clusters in a box whose ranges differ 100-fold (like Covertype's columns)."""
    rng = np.random.default_rng(seed)
    lo, hi = np.array([0.0, -1.0, 0.0]), np.array([100.0, 1.0, 1.0])
    centres = np.array([[20.0, -0.5, 0.2], [50.0, 0.5, 0.8], [80.0, 0.0, 0.5]])
    X = centres[rng.integers(0, 3, n)] + rng.normal(size=(n, 3)) * [3.0, 0.1, 0.05]
    return np.clip(X, lo, hi), (lo, hi), centres


# ---- the domain: sensitivities, choice of noise ---------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.01, 1e4), min_size=1, max_size=8), st.data())
def test_sensitivity_norm_never_exceeds_the_radius_on_the_box(half, data):
    # Catches a wrong r (e.g. Σh instead of Σh/u for weighted Laplace, or ‖h‖ for the ℓ1 norm):
    # the corners of the box attain the supremum, so s(corner) = r exactly, s(x) ≤ r inside.
    h = np.asarray(half)
    lo, hi = -h + 3.0, h + 3.0
    signs = np.asarray(data.draw(st.lists(st.sampled_from([-1.0, 1.0]), min_size=h.size,
                                          max_size=h.size)))
    frac = np.asarray(data.draw(st.lists(st.floats(0, 1), min_size=h.size, max_size=h.size)))
    for kind in ("l2", "laplace"):
        dom = box_domain((lo, hi), sum_noise=kind)
        corner = (3.0 + signs * h)[None, :]
        inside = (lo + frac * (hi - lo))[None, :]
        assert dom.sensitivity_norms(corner)[0] == pytest.approx(dom.radius, rel=1e-9)
        # ‖x − c‖² is formed as ‖x‖² − 2x·c + ‖c‖²: its rounding error scales with ‖c‖², not
        # with r (hypothesis found h = 0.01 at c = 3: s − r = 2e-14 = 1.05e-12 r)
        assert dom.sensitivity_norms(inside)[0] <= dom.radius * (1 + 1e-12) + 1e-12 * (
            1.0 + float(np.sum((lo + hi) ** 2)) / 4)
    # l2 norm is ‖x − c‖₂ (computed without a copy through ‖x‖² − 2x·c + ‖c‖²)
    dom = box_domain((lo, hi), sum_noise="l2")
    x = (lo + frac * (hi - lo))[None, :]
    assert dom.sensitivity_norms(x)[0] == pytest.approx(np.linalg.norm(x - 3.0), abs=1e-6 * h.max())


def test_auto_noise_picks_laplace_for_skewed_ranges_and_l2_for_equal_ones():
    # Catches an inverted comparison of the expected noise powers.
    skew = box_domain(([0, 0, 0, 0], [1000, 1, 1, 1]))
    assert skew.noise == "laplace"
    eq = box_domain((np.zeros(10), np.ones(10)))
    assert eq.noise == "l2"
    for dom in (skew, eq):
        flip = "l2" if dom.noise == "laplace" else "laplace"
        other = box_domain((dom.lo, dom.hi), sum_noise=flip)
        assert dom.radius**2 * dom.noise_power() <= other.radius**2 * other.noise_power()


def test_box_validation_names_the_parameter():
    with pytest.raises(ValueError, match=r"lo < hi.*feature 1"):
        box_domain(([0, 2], [1, 2]))
    with pytest.raises(ValueError, match=r"length d=3"):
        box_domain(([0, 0], [1, 1]), 3)
    with pytest.raises(ValueError, match="bounds must be a pair"):
        box_domain(5.0, 2)
    with pytest.raises(ValueError, match="sum_noise"):
        box_domain((0, 1), 2, sum_noise="gauss")
    X, _, _ = skewed_box_data(200)
    with pytest.raises(ValueError, match="radius"):
        DPLloyd(3, epsilon=1.0).fit(X)


def test_laplace_sum_noise_has_the_per_coordinate_scales():
    # Catches weights applied inversely (β/u instead of β·u) or one scale for all coordinates:
    # Laplace(b) has variance 2b².
    dom = box_domain(([0, 0], [1000, 1]), sum_noise="laplace")
    k = 20000
    new = noisy_lloyd_update(np.zeros((k, 2)), np.full(k, 10.0), np.zeros((k, 2)), beta_sum=2.0,
                             beta_count=1e-9, radius=dom.l2_radius,
                             sum_noise_weights=dom.weights, box=dom.half_ranges * 1e6, rng=0)
    sd = new.std(axis=0) * 10.0
    np.testing.assert_allclose(sd, math.sqrt(2) * 2.0 * dom.weights, rtol=0.05)


@pytest.mark.parametrize("halve", [False, True])
def test_box_iteration_passes_the_audit_and_halved_noise_does_not(halve):
    # One DP-Lloyd release at the skewed-box configuration (per-coordinate Laplace sums,
    # weighted-ℓ1 sensitivity). D0: 10⁶ points at the box centre; D1 adds the corner, which
    # attains the sensitivity. Claimed ε = 1/β_count + r/β_sum = 1.05. With the sum noise halved
    # (the bug) the sum part alone is 2, which the audit must detect.
    dom = box_domain(([-1.0, -10.0], [1.0, 10.0]), sum_noise="laplace")
    share = 0.05 / 1.05
    bs, bc = dp_lloyd_noise_scales(1.05, dom.radius, 1, 2, count_share=share)
    assert 1 / bc + dom.radius / bs == pytest.approx(1.05)
    corner = dom.half_ranges
    base = 1e6

    def sample(has_extra, size, rng):
        sums = np.tile(corner if has_extra else np.zeros(2), (size, 1))
        counts = np.full(size, base + has_extra)
        new = noisy_lloyd_update(sums, counts, np.zeros((size, 2)),
                                 beta_sum=bs / 2 if halve else bs, beta_count=bc,
                                 radius=dom.l2_radius, sum_noise_weights=dom.weights,
                                 box=dom.half_ranges, rng=rng)
        return new * base

    res = audit_epsilon(sample, False, True, n_samples=200_000,
                        statistic=lambda out: out @ (1.0 / dom.weights), rng=3)
    assert res.consistent_with(1.05) != halve, str(res)


# ---- DPLloyd with bounds -------------------------------------------------------------------


def test_box_run_without_noise_is_scikit_learns_lloyd():
    # Catches a wrong shift of sums/centres around the box centre (Σ(x − c) = Σx − c·count).
    X, box, _ = skewed_box_data()
    init = X[[0, 1000, 2000]]
    ours = DPLloyd(3, epsilon=math.inf, bounds=box, n_iter=6, init=init, rng=0).fit(X)
    ref = KMeans(3, init=init, n_init=1, max_iter=6, tol=0, algorithm="lloyd").fit(X)
    np.testing.assert_allclose(ours.cluster_centers_, ref.cluster_centers_, rtol=1e-9,
                               atol=1e-9)


def test_box_clamps_data_and_centres_and_warns():
    X, (lo, hi), _ = skewed_box_data(2000)
    X = X.copy()
    X[0] = [500.0, 5.0, -3.0]
    with pytest.warns(UserWarning, match="outside bounds"):
        km = DPLloyd(3, epsilon=0.05, bounds=(lo, hi), rng=0).fit(X)
    assert np.all(km.cluster_centers_ >= lo) and np.all(km.cluster_centers_ <= hi)
    assert km.privacy_ == PureDP(0.05)
    # the ε of the release: T (r/β_sum + 1/β_count) with the box's r
    assert km.n_iter_ * (km.domain_.radius / km.beta_sum_ + 1 / km.beta_count_) == (
        pytest.approx(0.05))


def test_box_beats_the_ball_on_skewed_ranges():
    # The point of per-feature bounds: with the same data, the box's Laplace noise is far smaller
    # than the ball's (radius = half-diagonal). Median of 5 seeds, fixed; catches a box path
    # that falls back to ball-sized noise.
    X, box, _ = skewed_box_data(6000)
    R = float(np.linalg.norm((box[1] - box[0]) / 2)) + float(np.linalg.norm((box[1] + box[0]) / 2))

    def cost(**kw):
        out = []
        for s in range(5):
            C = DPLloyd(3, epsilon=0.3, n_iter=5, count_share=0.2, rng=s, **kw).fit(X)
            out.append(kmeans_cost(X, C.cluster_centers_))
        return np.median(out)

    assert cost(bounds=box) < 0.5 * cost(radius=R)


# ---- budget-aware defaults --------------------------------------------------------------------


def test_auto_count_share_is_scale_free_and_paper_split_is_not():
    # Catches a split that depends on the units (the paper's ratio gives counts ~1e-4 of ε at
    # r ≈ 4489): scaling the box by 1000 must not change the auto share.
    lo, hi = np.zeros(54), np.r_[np.full(10, 5000.0), np.ones(44)]
    a = auto_count_share(box_domain((lo, hi)))
    b = auto_count_share(box_domain((lo / 1000, hi / 1000)))
    assert a == pytest.approx(b, rel=1e-12)
    assert 0.01 < a < 0.5
    dom = ball_domain(4489.0, 54)
    paper = calibrate_lloyd(None, epsilon=1.0, n=10**5, dim=54, radius=4489.0, n_iter=10)
    paper_share = (1 / paper.beta_count) / (1 / paper.beta_count + dom.radius / paper.beta_sum)
    assert paper_share < 1e-3 < auto_count_share(dom)


def test_auto_n_iter_is_su_et_al_rule():
    # diffprivlib 0.6.6 _calc_iters: ε_m = sqrt(500 k³/n² (d + (4dρ²)^{1/3})³), T ∈ [2, 7].
    eps_m = math.sqrt(500 * 5**3 / 1000.0**2 * (2 + (4 * 2 * 0.225**2) ** (1 / 3)) ** 3)
    assert auto_n_iter(3.0 * eps_m + 1e-9, 1000, 2, 5) == 3
    assert auto_n_iter(100.0, 1000, 2, 5) == 7 and auto_n_iter(1e-3, 1000, 2, 5) == 2


def test_auto_preset_needs_a_public_n():
    X, box, _ = skewed_box_data(500)
    with pytest.warns(PrivacyLeakWarning, match="n="):
        DPLloyd(3, epsilon=1.0, bounds=box, preset="auto", rng=0).fit(X)
    with pytest.warns(PrivacyLeakWarning, match="n="):
        DPKMeans(3, epsilon=1.0, bounds=box, rng=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        km = DPLloyd(3, epsilon=1.0, bounds=box, preset="auto", n=500, rng=0).fit(X)
        rec = DPKMeans(3, epsilon=1.0, bounds=box, n=500, rng=0).fit(X)
    assert km.count_share_ == pytest.approx(auto_count_share(km.domain_))
    assert rec.privacy_ == PureDP(1.0) and 2 <= rec.n_iter_ <= 10


def test_paper_preset_is_unchanged_by_default():
    # The reproduction's configuration: T = 10 and the Su et al. ratio, exactly.
    X, _, _ = skewed_box_data(500)
    X = X - X.mean(0)
    r = float(np.linalg.norm(X, axis=1).max())
    km = DPLloyd(3, epsilon=1.0, radius=r, rng=0).fit(X)
    ref = calibrate_lloyd(None, epsilon=1.0, n=500, dim=3, radius=r, n_iter=10)
    assert km.n_iter_ == 10 and km.count_share_ is None
    assert (km.beta_sum_, km.beta_count_) == (ref.beta_sum, ref.beta_count)


# ---- histogram-calibrated privacy sampler -----------------------------------------------------


def test_grid_sampler_dominates_exact_q_and_keeps_every_loss_at_most_epsilon():
    # q on the grid is the upper envelope (q ≥ exact q at the same noise) so ψ ≤ ε* for every
    # point; its expected size is exactly Σ counts·q_grid, so B meets m; and B is within a
    # hair of the exact calibration. Catches lower-edge rounding (ψ > ε*) or a wrong histogram.
    rng = np.random.default_rng(0)
    norms = np.abs(rng.standard_t(3, 20000))
    r = float(norms.max())
    bins = grid_bins(norms, r, 512)
    cal, table = calibrate_lloyd_histogram(np.bincount(bins, minlength=513), epsilon=1.0,
                                           dim=5, radius=r, n_iter=10, sample_size=150)
    q = table[bins]
    assert q.sum() == pytest.approx(150, rel=1e-8)
    exact = calibrate_lloyd("privacy", epsilon=1.0, n=20000, dim=5, radius=r, n_iter=10,
                            sample_size=150, norms=norms)
    assert cal.noise_constant == pytest.approx(exact.noise_constant, rel=0.05)
    from dpcore.mechanisms.importance import amplified_epsilon, privacy_constrained_weights

    slopes = lloyd_profile(norms, beta_sum=cal.beta_sum, beta_count=cal.beta_count,
                           n_iter=10).slopes
    assert np.all(q >= 1 / privacy_constrained_weights(slopes, 1.0) * (1 - 1e-12))
    assert np.all(amplified_epsilon(q, slopes / q) <= 1.0 * (1 + 1e-9))


def test_grid_privacy_sampler_in_dplloyd_with_a_box():
    X, box, _ = skewed_box_data(6000)
    km = DPLloyd(3, epsilon=2.0, bounds=box, sampler="privacy", q_grid=256, rng=0).fit(X)
    assert km.privacy_ == PureDP(2.0)
    assert km.domain_.noise == "l2"  # samplers use ‖x − c‖₂ ≤ half-diagonal
    assert np.all(km.individual_epsilon_ <= 2.0 * (1 + 1e-9))
    assert 0 < km.sample_indices_.size < 6000
    lean = DPLloyd(3, epsilon=2.0, bounds=box, sampler="privacy", q_grid=256, diagnostics=False,
                   rng=0).fit(X)
    assert not hasattr(lean, "individual_epsilon_")
    np.testing.assert_array_equal(lean.cluster_centers_, km.cluster_centers_)


# ---- recommended pipeline, progress ---------------------------------------------------------


def test_dpkmeans_recovers_clusters_at_a_generous_budget():
    X, box, centres = skewed_box_data(20000)
    C = DPKMeans(3, epsilon=20.0, bounds=box, n=20000, rng=1).fit(X).cluster_centers_
    scaled = (C[:, None] - centres[None]) / (box[1] - box[0])
    assert np.abs(scaled).max(axis=2).min(axis=0).max() < 0.05, C


def test_each_iteration_checkpoints_and_cancel_stops_the_fit():
    X, box, _ = skewed_box_data(500)
    seen = []
    with controlled(RunControl(on_progress=lambda f, m: seen.append(m))):
        DPLloyd(3, epsilon=1.0, bounds=box, n_iter=4, rng=0).fit(X)
    assert seen == [f"DP-Lloyd iteration {i} of 4" for i in range(1, 5)]
    ctl = RunControl()
    ctl.cancel()
    with controlled(ctl), pytest.raises(Cancelled):
        DPLloyd(3, epsilon=1.0, bounds=box, n_iter=4, rng=0).fit(X)


def test_error_budget_rule_spends_rounds_only_while_the_noise_is_small():
    # Catches an inverted rule (more rounds at a smaller budget) and a T ignoring n.
    dom = box_domain((np.zeros(10), np.ones(10)))
    f = auto_count_share(dom)
    ts = [error_budget_n_iter(e, 10**5, 10, dom, f) for e in (0.01, 0.1, 1.0, 100.0)]
    assert ts == sorted(ts) and ts[0] == 2 and ts[-1] == 10
    assert error_budget_n_iter(1.0, 10**3, 10, dom, f) <= error_budget_n_iter(1.0, 10**6, 10,
                                                                              dom, f)
    t = ts[2]
    if t < 10:
        assert centre_error(1.0, 10**5, 10, t + 1, dom, f) > 0.01
    assert centre_error(1.0, 10**5, 10, t, dom, f) <= 0.01 or t == 2


def test_uniform_sampler_with_a_declared_n_does_not_read_n_off_the_data():
    # Catches q = m/X.shape[0] (a leak) when n is declared: the rate uses the declared n.
    X, box, _ = skewed_box_data(2000)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        km = DPLloyd(3, epsilon=1.0, bounds=box, sampler="uniform", sample_size=200, n=4000,
                     rng=0).fit(X)
    np.testing.assert_allclose(km.probabilities_, 200 / 4000)
    with pytest.warns(PrivacyLeakWarning, match="pass n="):
        DPLloyd(3, epsilon=1.0, bounds=box, sampler="uniform", sample_size=200, rng=0).fit(X)


def test_dpkmeans_bad_inputs_name_the_parameter():
    X, box, _ = skewed_box_data(300)
    with pytest.raises(ValueError, match=r"bounds=.*radius="):
        DPKMeans(3, epsilon=1.0, n=300).fit(X)
    with pytest.raises(ValueError, match="seeding"):
        DPKMeans(3, epsilon=1.0, bounds=box, n=300, seeding="kmeans++").fit(X)
    with pytest.raises(ValueError, match="delta"):
        DPKMeans(3, epsilon=1.0, bounds=box, n=300, seeding="maxcover").fit(X)


def test_moment_seeding_spends_its_share_and_starts_inside_the_box():
    # Catches a seeding whose ε is not counted in privacy_ or centres outside the box.
    X, box, _ = skewed_box_data(3000)
    km = DPKMeans(3, epsilon=1.0, bounds=box, n=3000, seeding="moments", seed_share=0.1,
                  rng=0).fit(X)
    assert km.privacy_.epsilon == pytest.approx(1.0)
    assert km.lloyd_.privacy_.epsilon == pytest.approx(0.9)
    init = km.lloyd_.history_[0]
    assert np.all(init >= box[0]) and np.all(init <= box[1])


def test_box_laplace_sum_noise_runs_under_the_floating_point_defence():
    """Release mode wraps every fit in dpcore.privacy.noise.defended_noise, where a bare float
    sampler refuses: the per-coordinate Laplace sum path must use the value-aware adder (it did not
    when the two branches were merged), and its output stays in the box."""
    from dpcore.estimators.dpkmeans import DPKMeans
    from dpcore.privacy.noise import defended_noise

    X = np.random.default_rng(0).uniform(-1, 1, (2000, 3))
    lo, hi = -np.ones(3), np.ones(3)
    with defended_noise():
        a = DPLloyd(3, epsilon=1.0, bounds=(lo, hi), sum_noise="laplace", n=2000, rng=1).fit(X)
        b = DPKMeans(3, epsilon=1.0, bounds=(lo, hi), n=2000, rng=1).fit(X)
    for m in (a, b):
        assert np.all(np.abs(m.cluster_centers_) <= 1.0)
