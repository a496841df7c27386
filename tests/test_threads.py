"""Thread counts that follow the machine and the caller (dpcore.core.threads), lazy numba, and
DPLloyd's per-point diagnostics computed when read."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from dpcore.core import threads
from dpcore.mechanisms.lloyd import diagnostics as diag_mod
from dpcore.mechanisms.lloyd.estimator import DPLloyd
from dpcore.privacy.guarantees import PrivacyLeakWarning


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv(threads.ENV_VAR, raising=False)
    return monkeypatch


def test_default_is_the_allowed_cores_not_a_fixed_two(clean_env):
    # the old N_THREADS = min(2, cpu_count) would fail here on any machine with an affinity
    # other than 2 cores; the monkeypatched affinity stands in for an 8-core laptop
    clean_env.setattr(threads, "available_cores", lambda: 8)
    clean_env.setattr(threads, "_library_limit", lambda: None)
    assert threads.n_threads() == 8


def test_sklearn_n_jobs_convention_and_env_variable(clean_env):
    clean_env.setattr(threads, "available_cores", lambda: 8)
    clean_env.setattr(threads, "_library_limit", lambda: None)
    assert threads.n_threads(3) == 3
    assert threads.n_threads(-1) == 8
    assert threads.n_threads(-2) == 7
    assert threads.n_threads(-100) == 1
    clean_env.setenv(threads.ENV_VAR, "5")
    assert threads.n_threads() == 5
    assert threads.n_threads(2) == 2  # an explicit n_jobs wins over the server default
    with threads.thread_limit(3):
        assert threads.n_threads() == 3
        with threads.thread_limit(None):  # an estimator's n_jobs=None keeps the outer limit
            assert threads.n_threads() == 3
    assert threads.n_threads() == 5
    clean_env.setenv(threads.ENV_VAR, "many")
    with pytest.raises(ValueError, match="DPCORE_NUM_THREADS must be a positive integer"):
        threads.n_threads()
    with pytest.raises(ValueError, match="n_jobs"):
        threads.resolve_n_jobs(0)


def test_threadpoolctl_limits_are_honoured_but_not_our_own_blas_limit(clean_env):
    # a caller's threadpool_limits(1) makes dpcore single-threaded (as scikit-learn); dpcore's
    # own single_threaded_blas inside a fit must not be mistaken for the caller's limit
    clean_env.setattr(threads, "available_cores", lambda: 64)
    before = threads.n_threads()
    with threadpool_limits(limits=1):
        assert threads.n_threads() == 1
        clean_env.setenv(threads.ENV_VAR, "3")  # a server's explicit setting is not capped
        assert threads.n_threads() == 3
        clean_env.delenv(threads.ENV_VAR)
    with threads.single_threaded_blas():
        assert threads.n_threads() == before


def test_row_blocks_do_not_depend_on_threads_and_runs_cover_each_block_once():
    blocks = threads.row_blocks(100_000)
    assert blocks[0].start == 0 and blocks[-1].stop == 100_000
    assert all(a.stop == b.start for a, b in itertools.pairwise(blocks))
    assert len(blocks) <= threads.MAX_BLOCKS
    # a large partial (k·d) caps the blocks by memory, never below one
    assert len(threads.row_blocks(100_000, partial_size=10**9)) == 1
    seen = []
    for workers in (1, 2, 3, 7, 64):
        out = threads.map_row_blocks(lambda sl: (sl.start, sl.stop), blocks, threads=workers)
        seen.append(out)
    assert all(s == [(b.start, b.stop) for b in blocks] for s in seen)


@pytest.mark.slow  # a fresh interpreter: 2–7 s of imports on the shared machine
def test_a_small_fit_never_imports_numba():
    """The CLI's per-call cost: a small fit must run on numpy, without loading the compiled
    kernels (numba's import and LLVM's start-up cost more than such a fit)."""
    code = ("import sys, numpy as np\n"
            "from dpcore.mechanisms.lloyd.estimator import DPLloyd\n"
            "X = np.random.default_rng(0).normal(size=(2000, 3))\n"
            "DPLloyd(3, epsilon=1.0, radius=10.0, rng=0).fit(X)\n"
            "DPLloyd(3, epsilon=1.0, radius=10.0, sampler='privacy', rng=0).fit(X)\n"
            "print('numba' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


R = 12.0  # above every row's norm: no clipping warning


def _fit(**kw):
    X = np.random.default_rng(4).normal(size=(3000, 3)) * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        return X, DPLloyd(3, epsilon=1.0, radius=R, rng=1, **kw).fit(X)


@pytest.mark.parametrize("kw", [{}, {"sampler": "privacy"}, {"sampler": "privacy",
                                                             "q_grid": None},
                                {"sampler": "uniform", "sample_size": 500}])
def test_diagnostics_are_computed_when_read_not_during_fit(kw, monkeypatch):
    """Reading individual_epsilon_ runs the profile; fit does not (a fit that computed the
    whole-data losses eagerly calls it during fit, caught by the counter)."""
    calls = []
    real = diag_mod.lloyd_profile
    monkeypatch.setattr(diag_mod, "lloyd_profile", lambda *a, **k: calls.append(1) or real(*a, **k))
    _X, km = _fit(**kw)
    assert calls == []
    psi = km.individual_epsilon_
    assert len(calls) == 1 and psi.shape == (3000,)
    assert km.individual_epsilon_ is psi and len(calls) == 1  # computed once
    assert np.all(psi <= 1.0 * (1 + 1e-9)) and np.all(psi > 0)
    if "sampler" in kw:
        q = km.probabilities_
        assert q.shape == (3000,) and np.all((q > 0) & (q <= 1))
        np.testing.assert_allclose(km.sample_weights_, 1 / q[km.sample_indices_])


def test_grid_diagnostics_equal_the_eager_formula_and_default_is_the_grid():
    from dpcore.mechanisms.importance import amplified_epsilon, lloyd_profile
    from dpcore.mechanisms.importance.grid import DEFAULT_GRID

    X, km = _fit(sampler="privacy")
    assert km.get_params()["q_grid"] == DEFAULT_GRID
    # q on the grid: one value per occupied bin, never more distinct values than bins
    q = km.probabilities_
    assert np.unique(q).size <= DEFAULT_GRID + 1
    # ψ from the s the pass wrote equals the formula on numpy's norms (a wrong s, a missing
    # clamp or q from another fit would differ)
    cal = km.calibration_
    slopes = lloyd_profile(np.minimum(np.linalg.norm(X, axis=1), R), beta_sum=cal.beta_sum,
                           beta_count=cal.beta_count, n_iter=km.n_iter_).slopes
    ref = amplified_epsilon(q, np.where(q > 0, slopes / q, 0.0))
    np.testing.assert_allclose(km.individual_epsilon_, ref, rtol=1e-10)


def test_diagnostics_false_keeps_nothing_and_says_so():
    _, km = _fit(sampler="privacy", diagnostics=False)
    assert not hasattr(km, "individual_epsilon_") and not hasattr(km, "probabilities_")
    with pytest.raises(AttributeError, match="diagnostics=False"):
        _ = km.individual_epsilon_
    assert not hasattr(DPLloyd(2, epsilon=1.0, radius=1.0), "individual_epsilon_")


def test_a_dask_worker_task_uses_its_share_of_the_cores(clean_env):
    """A worker running 4 tasks at once on 16 cores gives each task 4 threads (the machine's
    16 in every task would oversubscribe 4×); outside a worker the default is unchanged."""
    distributed = pytest.importorskip("distributed")

    class Worker:
        class state:
            nthreads = 4

    clean_env.setattr(threads, "available_cores", lambda: 16)
    clean_env.setattr(threads, "_library_limit", lambda: None)
    assert threads.n_threads() == 16  # not in a worker: get_worker raises ValueError
    clean_env.setattr(distributed, "get_worker", lambda: Worker())
    assert threads.n_threads() == 4
    clean_env.setenv(threads.ENV_VAR, "2")  # a server's setting still wins
    assert threads.n_threads() == 2
