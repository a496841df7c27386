"""Max-cover's hashed, compiled level build (issue 23) changes the running time only.

The reference is the sort-based implementation as it was (``tests/maxcover_reference.py``, a copy
of the old ``hybrid.py`` and ``noisy_candidate_counts``), run at test time on the same inputs:
every test fails if the rewrite enumerates a different incidence, numbers the grid points in a
different order (the exponential mechanism's Gumbel draws would then pick other grid points),
merges or splits a sparse cell, or labels a row with another candidate.
"""

from __future__ import annotations

import warnings

import maxcover_reference as ref
import numpy as np
import pytest

import dpcore.mechanisms.maxcover.cover as cover_mod
import dpcore.mechanisms.maxcover.estimator as est_mod
from dpcore.mechanisms.maxcover import MaxCoverKMeans
from dpcore.mechanisms.maxcover.ballpoints import ball_lattice_points
from dpcore.mechanisms.maxcover.hybrid import _HybridCover
from dpcore.mechanisms.maxcover.kernels import BallIncidences, sort_rows
from dpcore.mechanisms.maxcover.proxy import nearest_candidate


def _kdd_like(n: int, d: int, seed: int, dup: float = 0.0) -> np.ndarray:
    """Heavy-tailed unbalanced mixture; ``dup`` of the rows copies of 20 rows (KDD's repeats)."""
    gen = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, 9) ** 2.2
    lab = gen.choice(8, n, p=w / w.sum())
    means = gen.normal(0, 3, (8, d)) * (gen.random((8, d)) < 0.4)
    X = means[lab] + np.exp(gen.normal(-1, 1, (8, d)))[lab] * gen.standard_t(2.0, (n, d))
    rep = gen.random(n) < dup
    X[rep] = X[gen.integers(0, 20, int(rep.sum()))]
    return X


def _fit(X, seed, **kw):
    n = X.shape[0]
    r = float(np.percentile(np.linalg.norm(X, axis=1), 97.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MaxCoverKMeans(5, epsilon=1.0, delta=n**-1.5, radius=r, n_public=n, rng=seed,
                              **kw).fit(X)


@pytest.mark.parametrize("dup,seed", [(0.0, 0), (0.0, 1), (0.6, 2), (0.6, 3)])
def test_fit_equals_the_sort_based_implementation(monkeypatch, dup, seed):
    """Same seed, same candidates, proxy counts, centres and cost as the old code; the data
    cover both sampler modes (``dup``: repeated rows make every level dense, as on KDD Cup 99)."""
    X = _kdd_like(3000, 12, seed, dup)
    new = _fit(X, seed)
    with monkeypatch.context() as m:
        m.setattr(cover_mod, "_HybridCover", ref._HybridCover)
        m.setattr(est_mod, "noisy_candidate_counts", ref.noisy_candidate_counts)
        old = _fit(X, seed)
    assert new.stats_["modes"] == old.stats_["modes"]
    assert {"sparse", "dense"} <= set(old.stats_["modes"]) or dup > 0
    np.testing.assert_array_equal(new.candidates_, old.candidates_)
    np.testing.assert_array_equal(new.proxy_weights_, old.proxy_weights_)
    np.testing.assert_array_equal(new.cluster_centers_, old.cluster_centers_)


@pytest.mark.parametrize("d,rho,M", [(1, 2.5, 4), (2, 1.6, 10), (4, 1.3, 3), (5, 2.2, 10**6)])
def test_ball_incidences_are_ball_lattice_points(d, rho, M):
    """Every (point, lattice point) pair of the reference enumeration, none more (points on the
    lattice and half-way between it put pairs on the boundary: the band decided by _within)."""
    gen = np.random.default_rng(d)
    Y = np.vstack([gen.uniform(-M - 2, M + 2, (200, d)).clip(-1e3, 1e3),
                   np.round(gen.uniform(-3, 3, (50, d)) * 2) / 2])
    inc = BallIncidences(Y, rho, M)
    pt_ref, B_ref = ball_lattice_points(Y, rho, M)
    pt = np.repeat(np.arange(Y.shape[0]), np.diff(inc.p_ptr))
    B = np.array([inc.decode(j) for j in inc.p_cells]).reshape(-1, d)
    assert all(inc.cell_of(b) == j for j, b in zip(inc.p_cells, B, strict=True))
    got = sorted(map(tuple, np.column_stack([pt, B]).tolist()))
    want = sorted(map(tuple, np.column_stack([pt_ref, B_ref]).tolist()))
    assert got == want


def test_sort_rows_is_a_stable_lexicographic_sort():
    """Multi-word keys (a huge grid), uint64 hashes (all 64 bits) and repeats: the order is
    numpy's stable lexsort (a wrong pass order, a dropped top digit or an unstable scatter
    would differ)."""
    gen = np.random.default_rng(0)
    keys = gen.integers(0, 40, (5000, 3)) * np.array([1, 2**40, 3])
    order, sk = sort_rows(keys)
    np.testing.assert_array_equal(order, np.lexsort(keys.T[::-1]))
    np.testing.assert_array_equal(sk, keys[order])
    h = gen.integers(0, 2**63, 3000, dtype=np.uint64) * np.uint64(2) + np.uint64(1)
    h[::3] = h[0]
    order, _ = sort_rows(h[:, None], [64])
    np.testing.assert_array_equal(order, np.argsort(h, kind="stable"))


def test_nearest_candidate_is_nearest_center_including_ties():
    """Labels equal ``nearest_center``'s, also for rows exactly between two candidates (the
    first index wins there, as with ``np.argmin``)."""
    from dpcore.data.geometry import nearest_center

    gen = np.random.default_rng(1)
    C = gen.uniform(-1, 1, (300, 5))
    Y = np.vstack([gen.uniform(-1, 1, (4000, 5)), (C[:50] + C[50:100]) / 2, C[:20]])
    np.testing.assert_array_equal(nearest_candidate(Y, C), nearest_center(Y, C)[0])


def test_dense_level_counts_match_brute_force_on_a_huge_grid():
    """A dense level on a grid whose mixed-radix key overflows int64 (the np.unique path that
    dominated KDD fits): every count is the brute-force cover."""
    gen = np.random.default_rng(3)
    Y = np.vstack([np.tile(gen.uniform(-5e5, 5e5, (3, 6)), (40, 1)),
                   gen.uniform(-5e5, 5e5, (100, 6))])
    cov = _HybridCover(Y, np.ones(Y.shape[0], bool), 1.3, 10**6, 0.5, 10, mode="dense")
    for j in range(cov._n_cells):
        b = cov._decode(j)
        assert cov._cell_of(b) == j
        assert cov.counts[j] == int((np.sum((Y - b) ** 2, axis=1) < 1.3**2).sum())
