"""The compiled Lloyd step (dpcore.core.kernels) against the numpy formulation it replaced."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpcore.core.kernels import BLOCK_ROWS, _kernel, assign_accumulate
from dpcore.data.geometry import nearest_center
from dpcore.data.limits import ParameterError
from dpcore.mechanisms.lloyd.estimator import cluster_sums, lloyd_statistics


def _numpy_reference(X, C, w):
    """Nearest centre by BLAS distances + argmin, sums by a sparse one-hot product."""
    labels, _ = nearest_center(X, C)
    return cluster_sums(X, labels, C.shape[0], w)


@settings(max_examples=25, deadline=None)
@given(
    # around and across the block edges: 0, partial, exactly one block, several + a tail
    n=st.sampled_from([0, 1, BLOCK_ROWS - 1, BLOCK_ROWS, BLOCK_ROWS + 1, 3 * BLOCK_ROWS + 17]),
    d=st.integers(1, 9),
    k=st.one_of(st.integers(1, 30), st.just(300)),  # 300: smaller blocks (≤ 256 KiB)
    seed=st.integers(0, 10_000),
    weighted=st.booleans(),
    compiled=st.booleans(),
)
def test_bit_for_bit_the_numpy_formulation(n, d, k, seed, weighted, compiled):
    # Same additions in the same order: a block-boundary slip, a skipped tail or a different
    # accumulation order shows up as inequality, not as a tolerance question. compiled=False is
    # the path small fits take (no numba load): it must be the same formulation too.
    gen = np.random.default_rng(seed)
    X, C = gen.normal(size=(n, d)) * 3, gen.normal(size=(k, d))
    w = gen.uniform(0.5, 4, n) if weighted else None
    sums, counts, finite = assign_accumulate(X, C, w, compiled=compiled)
    ref_s, ref_c = _numpy_reference(X, C, w)
    assert finite
    assert np.array_equal(sums, ref_s) and np.array_equal(counts, ref_c)


def test_ties_go_to_the_first_centre_like_argmin():
    X = np.random.default_rng(0).normal(size=(2 * BLOCK_ROWS + 5, 3))
    C = np.zeros((4, 3))  # four identical centres: every point ties
    sums, counts, _ = assign_accumulate(X, C, compiled=True)
    assert counts.tolist() == [X.shape[0], 0, 0, 0]
    np.testing.assert_array_equal(sums[0], cluster_sums(X, np.zeros(len(X), int), 1, None)[0][0])


def test_non_contiguous_input_is_handled():
    gen = np.random.default_rng(1)
    big = gen.normal(size=(700, 8))
    X = big[::2, ::2]  # strided view
    C = gen.normal(size=(5, 4))
    sums, counts, _ = assign_accumulate(X, C, compiled=True)
    ref_s, ref_c = _numpy_reference(np.ascontiguousarray(X), C, None)
    assert np.array_equal(sums, ref_s) and np.array_equal(counts, ref_c)
    assert np.array_equal(assign_accumulate(np.asfortranarray(X), C, compiled=True)[0], ref_s)


def test_overflowing_distances_are_reported_not_returned():
    X = np.full((10, 2), 1e200)
    with pytest.raises(ParameterError, match="float64 range"):
        lloyd_statistics(X, np.ones((2, 2)) * 1e200)
    for compiled in (True, False):
        assert assign_accumulate(X, np.ones((2, 2)) * 1e200, compiled=compiled)[2] is False


def test_statistics_validate_shapes():
    with pytest.raises(ValueError, match="must agree"):
        lloyd_statistics(np.zeros((3, 2)), np.zeros((1, 3)))
    with pytest.raises(ValueError, match="must agree"):
        lloyd_statistics(np.zeros((3, 2)), np.zeros((0, 2)))


def test_halves_add_up_in_threads_and_the_kernel_releases_the_gil():
    # DP-Lloyd runs row chunks on threads: no shared state between calls, and the compiled
    # kernel must be nogil, else the threads serialise (the slowdown this module removed).
    gen = np.random.default_rng(2)
    X, C = gen.normal(size=(20_000, 20)), gen.normal(size=(16, 20))
    whole = assign_accumulate(X, C, compiled=True)
    out: dict[int, tuple] = {}
    threads = [threading.Thread(target=lambda i=i, p=p: out.__setitem__(
        i, assign_accumulate(p, C, compiled=True)))
               for i, p in enumerate((X[:10_000], X[10_000:]))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    np.testing.assert_allclose(out[0][0] + out[1][0], whole[0], rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(out[0][1] + out[1][1], whole[1])
    assert _kernel.targetoptions.get("nogil") is True


def test_warm_up_loads_every_kernel_with_the_signatures_fits_use(monkeypatch):
    # A server warms up at start (pages/_lifecycle.py) so LLVM's memory is in its baseline; a
    # fit afterwards must not need another compilation (a new signature would be one). The
    # fits below are small: the threshold is lowered so that they take the compiled kernels.
    from dpcore.core import kernels
    from dpcore.core.kernels import _grid_pass, warm_up

    monkeypatch.setattr(kernels, "COMPILED_MIN_WORK", 0)
    from dpcore.mechanisms.lloyd.estimator import DPLloyd

    warm_up()
    before = (len(_kernel.signatures), len(_grid_pass.signatures))
    assert min(before) >= 1
    X = np.random.default_rng(0).normal(size=(500, 3))
    DPLloyd(2, epsilon=1.0, radius=5.0, rng=0).fit(X)
    DPLloyd(2, epsilon=1.0, radius=5.0, sampler="privacy", q_grid=32, rng=0).fit(X)
    DPLloyd(2, epsilon=1.0, bounds=(-5, 5), sampler="privacy", q_grid=32, rng=0).fit(X)
    DPLloyd(2, epsilon=1.0, radius=5.0, sampler="privacy", diagnostics=False, rng=0).fit(X)
    assert (len(_kernel.signatures), len(_grid_pass.signatures)) == before
