"""The papers' missing baselines (dpcore.mechanisms.baselines): KV18 and LSH_Clustering.

Each mechanism is audited at its claimed guarantee with :func:`dpcore.privacy.audit.audit_epsilon`
on a worst-case pair of neighbours, and the same audit is shown to have power: a variant with too
little noise (the bug "noise calibrated to a budget 8–20× the claimed one") fails it.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcore.mechanisms.baselines.lsh_clustering as lshmod
from dpcore.mechanisms.baselines.kv18 import kv18_clip_width, kv18_mean, kv18_mean_1d
from dpcore.mechanisms.baselines.lsh_clustering import (
    LSHClustering,
    lsh_noise_parameters,
)
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import ZCDP, ApproxDP, PrivacyLeakWarning, PureDP, zcdp_to_epsilon
from dpcore.privacy.noise import add_discrete_laplace, defended_noise

# ------------------------------------------------------------------ KV18


def _kv18_pair(n: int = 200):
    # Replace-one neighbours: the changed record moves from far left to far right, so its clipped
    # value moves by the full 2w (the clipped mean's sensitivity); the histogram argmax stays at 0.
    d0 = np.zeros(n)
    d0[0] = -1e3
    d1 = d0.copy()
    d1[0] = 1e3
    return d0, d1


def _kv18_sampler(eps_run: float):
    def sample(data, size, gen):
        return np.array([kv18_mean_1d(data, epsilon=eps_run, sigma=1.0, radius=50.0,
                                      rng=gen).estimate[0] for _ in range(size)])
    return sample


def test_kv18_1d_passes_audit_at_claimed_epsilon_and_broken_variant_fails():
    d0, d1 = _kv18_pair()
    ok = audit_epsilon(_kv18_sampler(1.0), d0, d1, n_samples=6000, rng=0)
    assert ok.epsilon_lower <= 1.0
    # Bug: noise for ε = 16 released under the claim ε = 1 (e.g. sensitivity w/n·(1/8)).
    bad = audit_epsilon(_kv18_sampler(16.0), d0, d1, n_samples=6000, rng=0)
    assert bad.epsilon_lower > 1.0


def test_kv18_zcdp_passes_audit_and_broken_variant_fails():
    n, d = 100, 2
    d0 = np.zeros((n, d))
    d0[0] = -1e3
    d1 = d0.copy()
    d1[0] = 1e3
    claimed = zcdp_to_epsilon(1.0, 1e-3)

    def sampler(rho_run):
        def sample(data, size, gen):
            return np.array([kv18_mean(data, rho=rho_run, radius=20.0, rotate=False, n_public=n,
                                       rng=gen).estimate[0] for _ in range(size)])
        return sample

    ok = audit_epsilon(sampler(1.0), d0, d1, n_samples=6000, delta=1e-3, rng=1)
    assert ok.epsilon_lower <= claimed
    bad = audit_epsilon(sampler(400.0), d0, d1, n_samples=6000, delta=1e-3, rng=1)
    assert bad.epsilon_lower > claimed


def test_kv18_accuracy_matches_its_noise_scale():
    """At n = 20000, d = 1, the release minus the sample mean is the Laplace noise of scale
    2w/(ε₂ n) (clipping at ±w removes nothing here): its rms over 300 runs must be within 20 % of
    b√2 (the rms of 300 Laplace draws is within ±15 % with probability > 0.99). Catches a wrong
    bin centre (clipping cuts the sample: error ≥ 0.1) and a noise scale off by 2× (sensitivity
    w/n instead of 2w/n)."""
    gen = np.random.default_rng(3)
    n, eps = 20_000, 1.0
    x = gen.normal(7.3, 1.0, size=n)
    errs = [kv18_mean_1d(x, epsilon=eps, sigma=1.0, radius=100.0, rng=gen).estimate[0]
            - x.mean() for _ in range(300)]
    b = 2 * kv18_clip_width(n, 1.0, 0.05) / (0.5 * eps * n)
    rms = float(np.sqrt(np.mean(np.square(errs))))
    assert 0.8 * b * math.sqrt(2) < rms < 1.2 * b * math.sqrt(2)


def test_kv18_multivariate_error_near_rotation_invariant_and_guarantee():
    gen = np.random.default_rng(4)
    X = gen.standard_normal((4000, 20)) + 5.0
    res = kv18_mean(X, rho=1.0, radius=30.0, n_public=4000, rng=gen)
    assert isinstance(res.privacy, ZCDP) and res.privacy.rho == 1.0
    assert np.linalg.norm(res.estimate - 5.0) < 1.0
    assert isinstance(kv18_mean_1d(X[:, 0], epsilon=1.0, sigma=1.0, radius=30.0).privacy, PureDP)


def test_kv18_add_remove_pair_passes_audit_with_the_public_n():
    """Add/remove neighbours (the release door's model) with n_public = 100 for both: D₁ adds a
    row at 10³ (clipped to the range). The statistic divides by the public n, so the claim holds;
    without n_public the data's n is read, and that is said (PrivacyLeakWarning)."""
    d0 = np.zeros((100, 2))
    d1 = np.vstack([d0, [[1e3, 1e3]]])
    claimed = zcdp_to_epsilon(1.0, 1e-3)

    def sample(data, size, gen):
        return np.array([kv18_mean(data, rho=1.0, radius=20.0, rotate=False, n_public=100,
                                   rng=gen).estimate[0] for _ in range(size)])

    assert audit_epsilon(sample, d0, d1, n_samples=6000, delta=1e-3, rng=3).epsilon_lower \
        <= claimed
    with pytest.warns(PrivacyLeakWarning, match="n_public"):
        kv18_mean(d0, rho=1.0, radius=20.0)
    with pytest.raises(ValueError, match="n_public"):
        kv18_mean(d0, rho=1.0, radius=20.0, n_public=0)


@pytest.mark.parametrize("bad", [dict(sigma=0.0), dict(radius=-1.0), dict(beta=1.5)])
def test_kv18_rejects_bad_parameters_with_one_line_message(bad):
    kw = dict(epsilon=1.0, sigma=1.0, radius=10.0) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        kv18_mean_1d(np.zeros(10), **kw)


# ------------------------------------------------------------------ LSH_Clustering


def test_discrete_laplace_has_the_stated_law():
    gen = np.random.default_rng(0)
    a = 0.7
    z = add_discrete_laplace(np.zeros(200_000), a, rng=gen)  # the LSH counts' noise
    p0 = (1 - math.exp(-a)) / (1 + math.exp(-a))  # P(Z = 0)
    assert abs(np.mean(z == 0) - p0) < 4 * math.sqrt(p0 * (1 - p0) / z.size)
    assert abs(np.mean(z == 3) / np.mean(z == 2) - math.exp(-a)) < 0.02


def test_lsh_calibration_spends_exactly_the_budget():
    alpha, a = lsh_noise_parameters(2.0, 1e-8, 20)
    rho = 1 / (2 * alpha**2) + 21 * a**2 / 2
    assert zcdp_to_epsilon(rho, 1e-8) == pytest.approx(2.0, rel=1e-6)
    assert zcdp_to_epsilon(rho, 1e-8) <= 2.0
    assert a == pytest.approx(1 / (20 * alpha))


def _lsh_sampler(alpha_factor: float, monkeypatch=None):
    def sample(data, size, gen):
        est = LSHClustering(2, epsilon=2.0, delta=1e-8, radius=1.0, max_depth=3)
        out = np.empty(size)
        for i in range(size):
            c, w = est.private_coreset(data, gen)
            out[i] = float((c[:, 0] * w).sum())  # ≈ Σ leaf sums + Gaussian noise
        return out
    return sample


def test_lsh_coreset_passes_audit_and_broken_variant_fails(monkeypatch):
    """Add/remove neighbours: 40 points at the origin vs the same plus one at distance Λ = 1.
    The statistic Σ w_leaf · centre_leaf is the released leaf sums (sensitivity Λ) plus noise.
    Bug: sum noise 30× too small (σ = αΛ/30, e.g. sensitivity 1 taken for Λ)."""
    d0 = np.zeros((40, 1))
    d1 = np.vstack([d0, [[1.0]]])
    ok = audit_epsilon(_lsh_sampler(1.0), d0, d1, n_samples=3000, delta=1e-8, rng=2)
    assert ok.epsilon_lower <= 2.0
    real = lshmod.lsh_noise_parameters
    monkeypatch.setattr(lshmod, "lsh_noise_parameters",
                        lambda e, dl, depth: (real(e, dl, depth)[0] / 30, real(e, dl, depth)[1]))
    bad = audit_epsilon(_lsh_sampler(1.0), d0, d1, n_samples=3000, delta=1e-8, rng=2)
    assert bad.epsilon_lower > 2.0


def _lsh_defended_sampler():
    """The release door's path: every coreset drawn inside defended_noise (exact discrete
    Laplace counts, discrete Gaussian leaf sums on the defended grid)."""
    inner = _lsh_sampler(1.0)

    def sample(data, size, gen):
        with defended_noise(ApproxDP(2.0, 1e-8)):
            return inner(data, size, gen)

    return sample


def test_lsh_defended_coreset_passes_audit_and_broken_variant_fails(monkeypatch):
    """The same audit on the noise a release draws: within the claimed ε = 2 (the door charges
    ε(1 + η)²), and the 30× too small sum noise still fails it."""
    d0 = np.zeros((40, 1))
    d1 = np.vstack([d0, [[1.0]]])
    ok = audit_epsilon(_lsh_defended_sampler(), d0, d1, n_samples=3000, delta=1e-8, rng=2)
    assert ok.epsilon_lower <= 2.0
    real = lshmod.lsh_noise_parameters
    monkeypatch.setattr(lshmod, "lsh_noise_parameters",
                        lambda e, dl, depth: (real(e, dl, depth)[0] / 30, real(e, dl, depth)[1]))
    bad = audit_epsilon(_lsh_defended_sampler(), d0, d1, n_samples=3000, delta=1e-8, rng=2)
    assert bad.epsilon_lower > 2.0


def test_lsh_clustering_finds_separated_clusters_and_states_guarantee():
    """Four far-apart clusters in 2-D at ε = 20: every true centre has a private centre within
    0.15. Catches a tree that drops the points of childless nodes or averages across leaves."""
    gen = np.random.default_rng(5)
    centres = np.array([[0.6, 0.0], [-0.6, 0.0], [0.0, 0.6], [0.0, -0.6]])
    X = centres[gen.integers(4, size=40_000)] + gen.normal(scale=0.02, size=(40_000, 2))
    m = LSHClustering(4, epsilon=20.0, delta=1e-8, radius=1.0, rng=6).fit(X)
    dist = np.linalg.norm(centres[:, None] - m.cluster_centers_[None], axis=2).min(axis=1)
    assert dist.max() < 0.15
    assert isinstance(m.privacy_, ApproxDP) and m.privacy_.epsilon == 20.0
    assert m.predict(X).shape == (40_000,)


@pytest.mark.parametrize("bad", [dict(epsilon=0.0), dict(delta=1.0), dict(radius=0.0),
                                 dict(max_depth=0), dict(n_clusters=0)])
def test_lsh_rejects_bad_parameters(bad):
    kw = dict(n_clusters=2, epsilon=1.0, delta=1e-6, radius=1.0) | bad
    with pytest.raises(ValueError, match=next(iter(bad))):
        LSHClustering(**kw).fit(np.zeros((10, 2)))
