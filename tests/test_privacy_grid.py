"""The one-pass norm grid (dpcore.mechanisms.importance.grid): bins, histogram and the thinned
Poisson sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore.core import threads
from dpcore.mechanisms.importance.calibration import _rootfind_log
from dpcore.mechanisms.importance.grid import grid_bins, grid_histogram, grid_poisson_sample
from dpcore.mechanisms.lloyd.domain import ball_domain, box_domain


def _reference(X, dom, grid):
    return grid_bins(dom.sensitivity_norms(X), dom.radius, grid)


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("shifted", [False, True])
def test_bins_and_histogram_are_the_numpy_passes(shifted, compiled, monkeypatch):
    # Both thread chunks (forced) must write their own rows and add their histograms; a slip
    # at the chunk edge, a wrong centre shift or a floor instead of a ceiling shows up here.
    gen = np.random.default_rng(0)
    X = gen.normal(size=(5000, 7)) * gen.uniform(0.5, 3, 7) + 2.0
    dom = (box_domain((X.min(0), X.max(0)), 7, sum_noise="l2") if shifted
           else ball_domain(float(np.linalg.norm(X, axis=1).max()), 7))
    monkeypatch.setattr(threads, "MIN_ROWS_PER_THREAD", 100)
    assert len(threads.row_blocks(5000)) > 2
    with threads.thread_limit(3):
        bins, counts, finite = grid_histogram(X, dom.radius, 300,
                                              dom.center if shifted else None, compiled=compiled)
    ref = _reference(X, dom, 300)
    assert finite
    # the compiled sum may differ in its last bit: only a point on a bin edge may move
    assert np.count_nonzero(bins != ref) <= 1 and np.all(np.abs(bins - ref) <= 1)
    np.testing.assert_array_equal(counts, np.bincount(bins, minlength=301))
    assert bins.max() <= 300 and bins.min() >= 0


def test_norms_beyond_the_radius_go_to_the_last_bin_and_nan_is_reported():
    X = np.array([[3.0, 4.0], [0.0, 0.0], [30.0, 40.0]])
    bins, counts, finite = grid_histogram(X, 5.0, 10)
    assert bins.tolist() == [10, 0, 10] and finite and counts.sum() == 3
    X[1, 0] = np.nan
    assert grid_histogram(X, 5.0, 10)[2] is False


def test_dplloyd_reports_nan_rows_on_the_grid_path():
    from dpcore.mechanisms.lloyd.estimator import DPLloyd

    X = np.random.default_rng(1).normal(size=(300, 3))
    X[7, 1] = np.inf
    with pytest.raises(ValueError, match="NaN or infinite"):
        DPLloyd(2, epsilon=1.0, radius=3.0, sampler="privacy", q_grid=64, rng=0).fit(X)


@pytest.mark.parametrize("qmax", [0.08, 0.8])  # thinning, and one uniform per point
def test_thinned_sampler_keeps_each_point_with_its_q_independently(qmax):
    # Per-point frequencies against q (a wrong acceptance ratio q/q̄ or a shifted walk fails),
    # the sample-size variance against Σ q(1 − q) (correlated inclusions fail), and the
    # neighbours' joint inclusion against q_i q_j (a walk reusing gaps fails).
    n, reps = 400, 4000
    table = np.linspace(0.0, qmax, 9)
    bins = np.random.default_rng(2).integers(0, 9, n)
    counts = np.bincount(bins, minlength=9)
    q = table[bins]
    gen = np.random.default_rng(3)
    hits = np.zeros(n)
    sizes = np.empty(reps)
    pairs = 0.0
    for r in range(reps):
        idx, w = grid_poisson_sample(bins, table, counts, rng=gen)
        np.testing.assert_allclose(w, 1.0 / q[idx])
        assert np.all(np.diff(idx) > 0)
        mask = np.zeros(n, bool)
        mask[idx] = True
        hits += mask
        sizes[r] = idx.size
        pairs += np.sum(mask[:-1] & mask[1:])
    z = (hits - reps * q) / np.sqrt(reps * q * (1 - q) + 1e-300)
    assert np.all(hits[q == 0] == 0)
    assert stats.chi2.sf(np.sum(z[q > 0] ** 2), np.count_nonzero(q > 0)) > 1e-3
    var = float(np.sum(q * (1 - q)))
    assert stats.chi2.sf(sizes.var(ddof=1) * (reps - 1) / var, reps - 1) > 1e-4
    assert sizes.var(ddof=1) / var == pytest.approx(1.0, abs=0.12)
    expected_pairs = reps * float(np.sum(q[:-1] * q[1:]))
    assert abs(pairs - expected_pairs) < 5 * math.sqrt(expected_pairs) + 5


def test_empty_table_or_all_zero_q_gives_an_empty_sample():
    bins = np.zeros(50, dtype=np.intp)
    idx, w = grid_poisson_sample(bins, np.zeros(3), np.bincount(bins, minlength=3), rng=0)
    assert idx.size == 0 and w.size == 0


def test_root_finder_evaluates_each_point_once_and_finds_the_root():
    calls = []

    def f(b):
        calls.append(b)
        return 1e4 / b - 3.0  # root at 3333.3…

    root = _rootfind_log(f, 1.0, f_lo=1e4 - 3.0)
    assert root == pytest.approx(1e4 / 3.0, rel=1e-12)
    assert 1.0 not in calls  # f(lo) came from the caller
    assert len(set(calls)) == len(calls)  # brentq's bracket ends were not recomputed


def test_thinned_sample_is_the_same_on_any_number_of_threads():
    """The walk runs in thread-independent blocks with spawned child streams: 1 and 4 threads
    give the same rows (a per-thread split of the rows or of the streams would not)."""
    gen = np.random.default_rng(3)
    bins = gen.integers(0, 64, 40_000)
    table = np.linspace(0.01, 0.2, 65)
    counts = np.bincount(bins, minlength=65)
    out = []
    for jobs in (1, 4):
        with threads.thread_limit(jobs):
            out.append(grid_poisson_sample(bins, table, counts, rng=11))
    assert np.array_equal(out[0][0], out[1][0]) and np.array_equal(out[0][1], out[1][1])
    idx = out[0][0]
    assert np.all(np.diff(idx) > 0)  # sorted, no row twice across block edges
    np.testing.assert_allclose(out[0][1], 1 / table[bins[idx]])


@pytest.mark.parametrize("guess", [None, 1.5, 3.0, 5.0, 50.0])
def test_root_finder_guess_changes_the_work_not_the_root(guess):
    """A guess above, near or below the root (of a decreasing f, here 1/b − 1/3.7) brackets it
    from there: the same root, each point evaluated once (a wrong bracket step would miss it
    or raise inside brentq)."""
    from dpcore.mechanisms.importance.calibration import _rootfind_log

    calls = []

    def f(b):
        calls.append(b)
        return 1.0 / b - 1.0 / 3.7

    root = _rootfind_log(f, 1.0, guess=guess)
    assert root == pytest.approx(3.7, rel=1e-12)
    assert len(calls) == len(set(calls))
