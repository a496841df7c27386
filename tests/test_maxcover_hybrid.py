"""The default (hybrid) grid sampler of dpcore.mechanisms.maxcover: exactness, bookkeeping, audit.

Both modes of :class:`_HybridCover` must draw exactly P(g) ∝ exp(ε_E·c_g/2) over the whole grid
(Claim 4.2); the χ² tests have the power to reject the wrong EM scale (see test_maxcover.py).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpcore.mechanisms.maxcover.ballpoints import ball_lattice_points
from dpcore.mechanisms.maxcover.grid import _offsets_within, _signed_offsets, _within
from dpcore.mechanisms.maxcover.hybrid import _HybridCover
from dpcore.privacy.audit import audit_epsilon
from dpcore.privacy.noise import exponential_mechanism_probabilities


def _level(seed=0):
    """n = 40 points in d' = 2 on a 21 × 21 grid, ρ = 1.6: both branches carry mass."""
    rng = np.random.default_rng(seed)
    Yl = np.vstack([rng.normal(3.0, 0.5, (30, 2)), rng.uniform(-10, 10, (10, 2))])
    M, rho, eps_E = 10, 1.6, 0.4
    grid = np.array(list(itertools.product(range(-M, M + 1), repeat=2)))
    counts = np.array([_within(Yl, g, rho).sum() for g in grid])
    return Yl, rho, M, eps_E, grid, counts


def _pvalue(draws, grid, probs):
    M = grid.max()
    idx = (draws[:, 0] + M) * (2 * M + 1) + (draws[:, 1] + M)
    gidx = (grid[:, 0] + M) * (2 * M + 1) + (grid[:, 1] + M)
    obs = np.bincount(idx, minlength=gidx.max() + 1)[gidx]
    exp = probs * draws.shape[0]
    big = exp >= 5
    o, e = obs[big], exp[big]
    if not np.all(big):  # merge the small cells into one bin
        o, e = np.append(o, obs[~big].sum()), np.append(e, exp[~big].sum())
    return float(stats.chisquare(o, e).pvalue)


def _spread_level():
    """60 points spread over the grid: the envelope is tight enough for sparse mode (≈ 5
    proposals per draw) and the non-uniform branch still carries ≈ 21 % of the mass."""
    Yl = np.random.default_rng(0).uniform(-10, 10, (60, 2))
    M, rho, eps_E = 10, 1.6, 0.4
    grid = np.array(list(itertools.product(range(-M, M + 1), repeat=2)))
    counts = np.array([_within(Yl, g, rho).sum() for g in grid])
    return Yl, rho, M, eps_E, grid, counts


@pytest.mark.parametrize("mode", ["sparse", "dense"])
def test_hybrid_sampler_is_the_exponential_mechanism(mode):
    Yl, rho, M, eps_E, grid, counts = _spread_level() if mode == "sparse" else _level()
    probs = exponential_mechanism_probabilities(counts, eps_E, 1.0)
    assert 0.2 < probs[counts > 0].sum() < 0.98  # both branches matter (not vacuous)
    hyb = _HybridCover(Yl, np.ones(len(Yl), bool), rho, M, eps_E / 2, 1, mode=mode)
    assert hyb.mode == mode
    gen = np.random.default_rng(1)
    draws = np.array([hyb.draw(gen) for _ in range(6000)])
    assert _pvalue(draws, grid, probs) > 1e-3
    # power: 6000 draws reject the EM with twice the scale (p ≪ 1e-6)
    wrong = exponential_mechanism_probabilities(counts, 2 * eps_E, 1.0)
    assert _pvalue(draws, grid, wrong) < 1e-6


@pytest.mark.parametrize("mode", ["sparse", "dense"])
def test_hybrid_counts_and_covers_stay_exact_after_removals(mode):
    Yl, rho, M, eps_E, grid, _ = _level(2)
    active = np.ones(len(Yl), bool)
    active[:3] = False  # covered at an earlier level
    hyb = _HybridCover(Yl, active, rho, M, eps_E / 2, 4, mode=mode)
    gen = np.random.default_rng(3)
    for _ in range(4):
        b = grid[gen.integers(len(grid))] if gen.random() < 0.5 else np.round(Yl[5]).astype(int)
        cov = hyb.cover_of(b)
        np.testing.assert_array_equal(np.sort(cov), np.flatnonzero(active & _within(Yl, b, rho)))
        active[cov] = False
        hyb.remove(cov)
        if mode == "dense":  # incremental counts equal a recount on the remaining points
            for j in range(hyb._n_cells):
                g = hyb._decode(j)
                assert hyb.counts[j] == (active & _within(Yl, g, rho)).sum()


def test_everything_covered_draws_uniformly():
    Yl, rho, M, eps_E, grid, _ = _level()
    hyb = _HybridCover(Yl, np.zeros(len(Yl), bool), rho, M, eps_E / 2, 1)
    gen = np.random.default_rng(4)
    draws = np.array([hyb.draw(gen) for _ in range(4000)])
    assert hyb.cover_of(draws[0]).size == 0
    assert _pvalue(draws, grid, np.full(len(grid), 1 / len(grid))) > 1e-3


@pytest.mark.parametrize(
    "d,rho,M", [(1, 2.5, 10), (2, 1.3, 5), (3, 2.2, 4), (5, 1.342, 100), (4, 1.2, 10**6)]
)
def test_ball_lattice_points_are_exactly_claim_4_1s(d, rho, M):
    rng = np.random.default_rng(d)
    Y = rng.uniform(-min(M, 50) - 1, min(M, 50) + 1, (150, d))
    Y[:5] = np.round(Y[:5])  # on the lattice: boundary cases
    Y[5:8] = np.round(Y[5:8]) + 0.5
    pt, B = ball_lattice_points(Y, rho, M)
    got = {(int(p), *map(int, b)) for p, b in zip(pt, B, strict=True)}
    F = np.floor(Y).astype(np.int64)
    C = F[:, None, :] + _signed_offsets(_offsets_within(d, rho * rho))[None]
    ok = _within(Y[:, None, :], C, rho) & np.all(np.abs(C) <= M, axis=2)
    p2, w = np.nonzero(ok)
    assert got == {(int(p), *map(int, b)) for p, b in zip(p2, C[p2, w], strict=True)}
    assert len(got) == pt.size  # no duplicates


@pytest.mark.parametrize("mode", ["sparse", "dense"])
def test_audit_hybrid_pick(mode):
    # One pick is ε_E-DP; d1 adds a point far from d0's (as in test_maxcover's lazy audit).
    eps_E, M, rho = 1.0, 10, 3.0
    d0 = np.array([[-8.2]])
    d1 = np.vstack([d0, [[7.3]]])

    def sample(data, size, rng):
        hyb = _HybridCover(data, np.ones(len(data), bool), rho, M, eps_E / 2, 1, mode=mode)
        return -np.abs(np.array([hyb.draw(rng)[0] for _ in range(size)]) - 7.3)

    res = audit_epsilon(sample, d0, d1, n_samples=30_000, rng=1)
    assert 0.25 <= res.epsilon_lower <= eps_E, res


def test_sparse_mode_is_chosen_on_fine_levels_and_dense_on_coarse():
    rng = np.random.default_rng(5)
    Y = rng.normal(0, 0.2, (2000, 3))
    fine = _HybridCover(Y / 1e-5, np.ones(2000, bool), 1.3, 10**5, 0.05, 10)
    coarse = _HybridCover(Y / 0.1, np.ones(2000, bool), 1.3, 10, 0.05, 10)
    assert (fine.mode, coarse.mode) == ("sparse", "dense")
    assert math.isfinite(fine.log_U)
