"""Privacy audits (dpcore.privacy.audit) of the zCDP filter and friendly_mean at their claimed
guarantees.

An audit gives a statistical *lower* bound on ε; it passes when the bound stays below the claimed
guarantee converted to (ε, δ). Each audit is paired with a deliberately broken variant (a plausible
calibration bug) that the same audit must flag, which shows the audit has power.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import dpcore.mechanisms.friendlycore.averaging as averaging
import dpcore.mechanisms.friendlycore.filters as filters
from dpcore.mechanisms.friendlycore import friend_counts, friendly_mean, zCDPFilter
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.guarantees import ZCDP

RHO, DELTA, DELTA_CONV = 1.0, 1e-6, 1e-3
CLAIM = ZCDP(RHO, DELTA).to_approx_dp(DELTA_CONV)  # ε ≈ 6.26, δ ≈ 1e-3


def _near_threshold_counts(n):
    """Counts putting every point at zCDPFilter's threshold for the expected n̂."""
    f = zCDPFilter(RHO, DELTA)
    n_hat = n + math.sqrt(math.log(2 / DELTA) / f.rho1)
    tau, _ = filters._threshold(n_hat, f.rho2, DELTA)
    return np.full(n, round(n / 2 + tau))


def filter_sample(filt_apply):
    def sample(counts, size, rng):
        # counts[-1] < 0 marks D1 = D without a point that was everybody's friend.
        n_shared = counts.size if counts[-1] >= 0 else counts.size - 1
        c = counts[:n_shared]
        return np.array([filt_apply(c, rng).sum() for _ in range(size)])

    return sample


@pytest.mark.slow
def test_zcdp_filter_passes_audit_and_a_broken_filter_fails():
    # Statistic: how many of the shared points are kept. With the right noise their joint
    # privacy loss is ρ₂ (μ ≈ 1.3); the bug makes it ≈ √n times larger.
    n = 1000
    d0 = _near_threshold_counts(n)
    d1 = np.append(d0[:-1] - 1, -1)  # remove x_n, a friend of all: each count drops by 1
    good = filter_sample(lambda c, rng: zCDPFilter(RHO, DELTA).apply(c, rng=rng).mask)
    res = audit_epsilon(good, d0, d1, n_samples=20_000, delta=CLAIM.delta, rng=0)
    assert res.consistent_with(CLAIM.epsilon), res

    def broken(c, rng):  # bug: score noise variance 1/(8ρ₂) instead of n̂/(8ρ₂)
        f = zCDPFilter(RHO, DELTA)
        n_hat = filters.noisy_size_upper(c.size, f.rho1, DELTA, rng=rng)
        tau, _ = filters._threshold(n_hat, f.rho2, DELTA)
        z = c - c.size / 2
        return z + rng.normal(0, math.sqrt(1 / (8 * f.rho2)), c.size) >= tau

    bad = audit_epsilon(filter_sample(broken), d0, d1, n_samples=20_000, delta=CLAIM.delta, rng=0)
    assert not bad.consistent_with(CLAIM.epsilon), bad


def test_zcdp_filter_single_point_inclusion_audit():
    # Per-point view: the inclusion bit of one shared point (score at the threshold in D0,
    # 1/2 lower in D1).
    n = 400
    d0 = _near_threshold_counts(n)
    d1 = d0[:-1] - 1

    def sample(counts, size, rng):
        f = zCDPFilter(RHO, DELTA)
        return np.array([f.apply(counts, rng=rng).mask[0] for _ in range(size)], dtype=float)

    res = audit_epsilon(sample, d0, d1, n_samples=4_000, delta=CLAIM.delta, rng=1)
    assert res.consistent_with(CLAIM.epsilon), res


def _mean_sample(counts_of):
    def sample(X, size, rng):
        cnt = counts_of(X)
        out = np.empty(size)
        for i in range(size):
            est = friendly_mean(X, radius=1.0, rho=RHO, delta=DELTA, counts=cnt, rng=rng).estimate
            out[i] = -1e9 if est is None else est[0]  # ⊥ is an output too
        return out

    return sample


@pytest.mark.slow
def test_friendly_mean_passes_audit_and_broken_noise_fails(monkeypatch):
    # D0: 300 points at 0; D1 = D0 + one point at distance r (friendly, largest mean shift).
    X0 = np.zeros((300, 1))
    X1 = np.vstack([X0, [[1.0]]])
    sample = _mean_sample(lambda X: friend_counts(X, 1.0))
    res = audit_epsilon(sample, X0, X1, n_samples=12_000, delta=CLAIM.delta, rng=2)
    assert res.consistent_with(CLAIM.epsilon), res
    assert res.epsilon_lower > 0.2  # the audit does see the real leakage (μ ≈ 0.6)

    real = averaging.gaussian_sigma_zcdp
    monkeypatch.setattr(averaging, "gaussian_sigma_zcdp", lambda s, r: real(s, r) / 20)
    bad = audit_epsilon(sample, X0, X1, n_samples=12_000, delta=CLAIM.delta, rng=2)
    assert not bad.consistent_with(CLAIM.epsilon), bad
