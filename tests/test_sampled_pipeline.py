"""The sampled pipeline's cheaper steps (issue 23.3) give the numbers of the steps they replace,
bit for bit: the same sample, weights, noise scales and clipped rows for a fixed seed, so the
released distribution and the privacy argument are untouched."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.core import threads
from dpcore.mechanisms.importance.grid import (
    calibrate_lloyd_histogram,
    gather_rows,
    grid_bins,
    grid_histogram,
    privacy_grid_table,
)
from dpcore.mechanisms.lloyd.domain import ball_domain, box_domain


@pytest.mark.parametrize("grid", [65_535, 65_536, 70_001])
def test_two_byte_bins_hold_every_bin_up_to_the_grid(grid):
    """Bins are stored in 2 bytes only while G fits: a threshold one too high would wrap bin
    65536 to 0 (a point beyond the radius sampled with the smallest q, breaking ψ ≤ ε*)."""
    r = 10.0
    X = np.array([[0.0, 0.0], [3.0, 4.0], [6.0, 8.0], [60.0, 80.0], [r * 0.5 / grid, 0.0]])
    for compiled in (False, True):
        bins, counts, finite = grid_histogram(X, r, grid, compiled=compiled)
        assert finite
        assert bins.dtype == (np.uint16 if grid < 1 << 16 else np.intp)
        np.testing.assert_array_equal(bins.astype(np.intp),
                                      grid_bins(np.linalg.norm(X, axis=1), r, grid))
        assert int(bins[3]) == grid and counts[grid] == 2 and counts.sum() == X.shape[0]


@pytest.mark.parametrize("occupied_share", [0.02, 0.5, 1.0])
def test_calibrated_table_is_the_grid_table_bit_for_bit(occupied_share):
    """The table reuses the root's evaluation on the occupied bins: it must equal q_priv at
    every grid norm, exactly (a stale β from the root search, or occupied values written to
    the wrong bins, would change the sampler's q)."""
    gen = np.random.default_rng(7)
    g = 777  # not a multiple of any vector width
    counts = np.where(gen.random(g + 1) < occupied_share, gen.integers(1, 400, g + 1), 0)
    counts[g] = max(counts[g], 1)
    n = int(counts.sum())
    for m in (None, 0.2 * n):
        cal, table = calibrate_lloyd_histogram(counts, epsilon=2.0, dim=5, radius=3.0,
                                               n_iter=6, sample_size=m)
        ref = privacy_grid_table(radius=3.0, grid=g, beta_sum=cal.beta_sum,
                                 beta_count=cal.beta_count, n_iter=6, epsilon=2.0)
        np.testing.assert_array_equal(table, ref)
        if m is not None:
            assert float(counts @ table) == pytest.approx(m, rel=1e-9)


def test_gathered_sample_is_clipped_as_the_whole_sample_was():
    """On a ball only the last bin is measured: the result must be ``dom.clip(X[idx])`` bit
    for bit, with the same count of moved rows (a rule that skipped rows near r, or measured
    the wrong bin, leaves a row outside the ball: the guarantee needs ‖x‖ ≤ r)."""
    gen = np.random.default_rng(3)
    d, r, g = 6, 5.0, 64
    X = gen.normal(size=(4000, d)) * 2.2
    edge = r * np.array([(g - 1) / g, (g - 1) / g + 1e-9, 1.0, 1.0 + 1e-9, 1.5])
    X[:5] *= (edge / np.linalg.norm(X[:5], axis=1))[:, None]  # around both bin edges
    bins = grid_histogram(X, r, g)[0]
    idx = np.sort(gen.choice(X.shape[0], 1500, replace=False))
    idx[:5] = np.arange(5)
    idx.sort()
    ball = ball_domain(r, d)
    ref, ref_out = ball.clip(X[idx])
    S, n_out = ball.clip_gathered(gather_rows(X, idx), bins[idx], g)
    assert n_out == ref_out > 0
    np.testing.assert_array_equal(S, ref)
    # a box: clipped coordinate-wise, as clip does (its norms say nothing about the box)
    box = box_domain((np.full(d, -3.0), np.full(d, 4.0)), d, sum_noise="l2")
    bins = grid_histogram(X, box.radius, g, box.center)[0]
    ref, ref_out = box.clip(X[idx])
    S, n_out = box.clip_gathered(gather_rows(X, idx), bins[idx], g)
    assert n_out == ref_out > 0
    np.testing.assert_array_equal(S, ref)


@pytest.mark.parametrize("jobs", [1, 3])
def test_gather_rows_is_fancy_indexing_on_any_thread_count(jobs):
    """One block a thread: a slip at a block edge would drop or repeat a sampled row."""
    gen = np.random.default_rng(0)
    X = gen.normal(size=(20_000, 9))
    idx = np.sort(gen.choice(X.shape[0], 5000, replace=False))
    with threads.thread_limit(jobs):
        np.testing.assert_array_equal(gather_rows(X, idx), X[idx])


def test_lambertw_start_is_the_same_for_a_chunk_of_one_branch_or_both():
    """A chunk that needs only one series skips the other: each element must still get the
    series of its own side of −L = 1.6 (a chunk routed wholly to one series by a wrong
    all/any test would start some points from the wrong series; at the branch point that
    start is off by far more than three Halley steps repair)."""
    from dpcore.mechanisms.importance.weights import _neg_lambertw_m1_from_log

    near = -np.linspace(1.001, 1.59, 37)  # −L = 1 (v = 1) is not reachable: K < E
    far = -np.linspace(1.61, 40.0, 41)
    mixed = np.concatenate([near, far])
    np.random.default_rng(0).shuffle(mixed)
    one_by_one = np.array([_neg_lambertw_m1_from_log(np.array([v]))[0] for v in mixed])
    np.testing.assert_array_equal(_neg_lambertw_m1_from_log(mixed), one_by_one)
    np.testing.assert_array_equal(_neg_lambertw_m1_from_log(near),
                                  [_neg_lambertw_m1_from_log(np.array([v]))[0] for v in near])
