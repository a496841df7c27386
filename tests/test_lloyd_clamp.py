"""A box with rows outside is clamped where the rows are read, never by copying X (issue 23.6).

Every path must give exactly the numbers of clamping first (``np.clip(X, lo, hi)``, what
``LoadDomain.clip`` did), and a fit's peak memory must stay far below a copy of X.
"""

from __future__ import annotations

import tracemalloc
import warnings

import numpy as np
import pytest

import dpcore.mechanisms.lloyd.algorithm as algorithm
from dpcore.core.kernels import accumulate_prepared, prepare_centers
from dpcore.estimators.dpkmeans import DPKMeans
from dpcore.mechanisms.lloyd.domain import box_domain
from dpcore.mechanisms.lloyd.estimator import DPLloyd

LO = np.array([-1.0, 0.0, -2.0, 5.0])
HI = np.array([1.0, 3.0, 2.0, 6.0])


def _data(n: int, seed: int = 0) -> np.ndarray:
    """Rows in the box, then a few far outside it on several sides (the case of issue 23)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(LO, HI, size=(n, LO.size))
    out = rng.choice(n, size=7, replace=False)
    X[out] += rng.choice([-1.0, 1.0], size=(7, LO.size)) * rng.uniform(0.5, 40.0, (7, LO.size))
    return X


@pytest.mark.parametrize("compiled", [False, True])
def test_kernel_clamp_is_np_clip_bit_for_bit(compiled):
    """The compiled step (and numpy's) with ``clamp=`` equals the step on ``np.clip(X)``.
    Catches a kernel that clamps the distances but sums raw rows (or the reverse)."""
    X = _data(3000)
    C = np.random.default_rng(1).uniform(LO, HI, size=(5, LO.size))
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=X.shape[0])
    prep = prepare_centers(C)
    for wts in (None, w):
        outside = box_domain((LO, HI), LO.size).rows_outside(X)
        assert outside.size == 7
        got = accumulate_prepared(X, prep, wts, compiled, clamp=(LO, HI, outside))
        want = accumulate_prepared(np.clip(X, LO, HI), prep, wts, compiled)
        np.testing.assert_array_equal(got[0], want[0])
        np.testing.assert_array_equal(got[1], want[1])
        assert got[2] == want[2]
    raw = accumulate_prepared(X, prep, w, compiled)  # the test's rows outside do matter
    assert not np.array_equal(raw[0], got[0])


@pytest.mark.parametrize("compiled", [False, True])
@pytest.mark.parametrize("kw", [{}, {"sum_noise": "laplace"}, {"sampler": "coreset",
                                                               "sample_size": 1500},
                                {"sampler": "privacy", "q_grid": "exact"},
                                {"init": "sample"}])
def test_dplloyd_clamped_inside_equals_clamped_first(monkeypatch, compiled, kw):
    """Same seed, same centres (and per-point ε) as fitting ``np.clip(X, lo, hi)``, on the
    numpy and the compiled step and on every sampler. Catches a path that reads the raw rows
    (the sensitivity norms, the coreset's q, the sample, init='sample') or clamps twice."""
    monkeypatch.setattr(algorithm, "use_compiled", lambda rows, per_row: compiled)
    X = _data(6000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = DPLloyd(5, epsilon=2.0, bounds=(LO, HI), n_iter=4, rng=7, **kw).fit(X)
        b = DPLloyd(5, epsilon=2.0, bounds=(LO, HI), n_iter=4, rng=7, **kw).fit(
            np.clip(X, LO, HI))
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)
    if "sampler" not in kw:
        np.testing.assert_array_equal(a.individual_epsilon_, b.individual_epsilon_)


def test_dplloyd_rows_outside_still_warn_with_their_count():
    """The warning (how many rows were clamped) is kept: catches a count that went missing
    when the copy did."""
    X = _data(2000)
    with pytest.warns(UserWarning, match="7 of 2000 points lie outside bounds"):
        DPLloyd(3, epsilon=1.0, bounds=(LO, HI), n_iter=2, rng=0).fit(X)


def test_dpkmeans_clamped_inside_equals_clamped_first():
    """The recommended estimator (its start and stage) with rows outside the box."""
    X = _data(5000, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = DPKMeans(4, epsilon=1.0, bounds=(LO, HI), n=5000, rng=5).fit(X)
        b = DPKMeans(4, epsilon=1.0, bounds=(LO, HI), n=5000, rng=5).fit(np.clip(X, LO, HI))
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


def test_dp_lloyd_first_assign_sees_clamped_rows():
    """A public first assignment (max-cover's partition map) gets the clamped rows."""
    X = _data(4000)
    dom = box_domain((LO, HI), LO.size)
    C = np.random.default_rng(4).uniform(LO, HI, size=(3, LO.size))

    def assign(rows):
        return (rows[:, 0] > 0).astype(np.int64) + (rows[:, 1] > 1.5)

    kw = dict(n_iter=3, beta_sum=0.5, beta_count=0.5, domain=dom, first_assign=assign)
    a = algorithm.dp_lloyd(X, C, rng=1, outside=dom.rows_outside(X), **kw)
    b = algorithm.dp_lloyd(np.clip(X, LO, HI), C, rng=1, **kw)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x, y)


def test_box_clamp_does_not_copy_x():
    """Peak traced memory of a fit with 7 rows outside the box stays far below X's size (the
    old ``np.clip`` copy alone was 100 % of X). Catches any full-size copy or n × d temporary
    (a boolean mask of X is 12.5 %, a copy 100 %)."""
    X = _data(150_000, seed=9)
    X = np.hstack([X] * 5)  # 150k × 20: 24 MB
    lo, hi = np.tile(LO, 5), np.tile(HI, 5)
    est = DPLloyd(5, epsilon=2.0, bounds=(lo, hi), n_iter=3, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X[:5000])  # load the kernels (numba's import is not the fit's memory)
        tracemalloc.start()
        try:
            est.fit(X)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 0.3 * X.nbytes, (peak, X.nbytes)
