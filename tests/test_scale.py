"""dpcore.scale.dask_kmeans: importance sampling on Dask with the in-memory path's distribution.

Fast tests run on Dask's synchronous scheduler; the ``cluster`` tests run on a
``LocalCluster(n_workers=2, processes=True, threads_per_worker=1)`` (slow: ~10 s to start),
including a worker killed in the middle of a run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import types
import warnings
from unittest import mock

import dask
import dask.array as da
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from dpcore.data.geometry import clip_to_ball
from dpcore.mechanisms.importance import sampling as importance
from dpcore.privacy.guarantees import PrivacyLeakWarning, PureDP
from dpcore.scale import dask_kmeans as scale

R = 5.0  # declared radius
# n and x̃ read off the data warn (tested in test_mean_sq_norm_treatments); elsewhere that is
# the point of the test, not a finding.
pytestmark = pytest.mark.filterwarnings("ignore::dpcore.privacy.guarantees.PrivacyLeakWarning")


def two_scale_data(n_per: int = 1000, d: int = 3, seed: int = 0) -> np.ndarray:
    """Two partitions with very different norms (0.3 vs 2 per coordinate): a per-partition x̃
    instead of the global one would change q by a factor ~10 in the first partition."""
    rng = np.random.default_rng(seed)
    return np.vstack([0.3 * rng.normal(size=(n_per, d)), 2.0 * rng.normal(size=(n_per, d))])


@pytest.fixture
def sync():
    with dask.config.set(scheduler="synchronous"):
        yield


def global_q(X, m, lam=0.5):
    """The in-memory path's probabilities for the (clipped) full data."""
    return importance.coreset_probabilities(clip_to_ball(X, R), m, lam=lam, radius=R)


def test_partition_probabilities_equal_the_in_memory_function():
    X = two_scale_data()
    sq = np.einsum("ij,ij->i", X, X)
    q = importance.coreset_q(sq, sample_size=150, n=len(X), mean_sq_norm=sq.mean(), lam=0.3)
    np.testing.assert_allclose(q, importance.coreset_probabilities(X, 150, lam=0.3), rtol=1e-13)


@pytest.mark.slow
def test_sample_matches_the_in_memory_distribution(sync):
    """Inclusion frequencies and sample sizes over 150 runs against the in-memory sampler.

    Power: a per-partition x̃ (the bug this targets) multiplies the coreset part of q in the
    first partition by ~10; over 150 runs the first partition's expected inclusions (~1,500)
    would then be several times larger: the chi-square statistic would be in the thousands.
    """
    X = two_scale_data()
    A = da.from_array(X, chunks=(500, -1))  # 4 partitions
    m, reps = 100, 150
    q = global_q(X, m)
    Xc = clip_to_ball(X, R)  # a few rows of the wide partition are clipped
    x_tilde = float(np.mean(np.einsum("ij,ij->i", Xc, Xc)))
    counts = np.zeros(len(X))
    sizes, ref_sizes, ht = [], [], []
    for s in range(reps):
        S = scale.importance_sample(A, m, radius=R, rng=s, mean_sq_norm=x_tilde)
        counts[S.indices] += 1
        sizes.append(len(S.X))
        ht.append(float(np.sum(S.weights * np.einsum("ij,ij->i", S.X, S.X))))
        np.testing.assert_allclose(S.weights, 1 / q[S.indices], rtol=1e-12)
        np.testing.assert_array_equal(S.X, Xc[S.indices])
        ref_sizes.append(len(importance.poisson_sample(q, rng=10_000 + s)[0]))
    # grouped chi-square: partition x decile of q; variance of a sum of Bernoullis
    deciles = np.quantile(q, np.linspace(0, 1, 11)[1:-1])
    groups = np.repeat(np.arange(4), 500) * 10 + np.digitize(q, deciles)
    obs = np.bincount(groups, counts)
    exp = reps * np.bincount(groups, q)
    var = reps * np.bincount(groups, q * (1 - q))
    keep = exp > 0
    chi2 = float(np.sum((obs[keep] - exp[keep]) ** 2 / var[keep]))
    assert stats.chi2.sf(chi2, keep.sum()) > 1e-3, chi2
    assert stats.ks_2samp(sizes, ref_sizes).pvalue > 1e-3
    # sizes: mean m, variance Σ q(1 − q)
    assert abs(np.mean(sizes) - m) < 4 * np.sqrt(np.sum(q * (1 - q)) / reps)
    # Horvitz-Thompson: Σ w ‖x‖² is unbiased for the full-data sum
    total = float(np.sum(np.einsum("ij,ij->i", Xc, Xc)))
    assert abs(np.mean(ht) - total) < 4 * np.std(ht) / np.sqrt(reps)


def test_partition_streams_are_independent_and_reproducible(sync):
    rng = np.random.default_rng(1)
    block = rng.normal(size=(1000, 2))
    A = da.from_array(np.vstack([block, block]), chunks=(1000, -1))  # two identical partitions
    S = scale.importance_sample(A, 200, radius=R, sampler="uniform", rng=7)
    first, second = S.indices[S.indices < 1000], S.indices[S.indices >= 1000] - 1000
    assert not np.array_equal(first, second)  # one shared stream would draw the same rows
    again = scale.importance_sample(A, 200, radius=R, sampler="uniform", rng=7)
    np.testing.assert_array_equal(S.indices, again.indices)
    other = scale.importance_sample(A, 200, radius=R, sampler="uniform", rng=8)
    assert not np.array_equal(S.indices, other.indices)
    assert S.guarantee is None and S.mean_sq_norm is None
    np.testing.assert_array_equal(S.partition_rows, [1000, 1000])
    # declaring n (and x̃) skips the counting pass; same probabilities, same streams, same sample
    one = scale.importance_sample(A, 200, radius=R, sampler="uniform", rng=7, n=2000)
    np.testing.assert_array_equal(one.indices, S.indices)
    assert one.seconds["pass1"] < S.seconds["pass1"]
    two = scale.importance_sample(A, 200, radius=R, rng=7, mean_sq_norm=1.5)
    one = scale.importance_sample(A, 200, radius=R, rng=7, mean_sq_norm=1.5, n=2000)
    np.testing.assert_array_equal(one.X, two.X)


@settings(max_examples=20, deadline=None)
@given(
    n=st.integers(1, 300),
    chunk=st.integers(5, 120),
    m_frac=st.floats(0.01, 1.0),
    lam=st.sampled_from([0.0, 0.5, 1.0]),
    seed=st.integers(0, 2**32 - 1),
)
def test_sample_invariants_for_any_partitioning(n, chunk, m_frac, lam, seed):
    """Whatever the partitioning: every row is seen once, rows come back clipped and centred,
    indices are valid and distinct, and each weight is 1/q of its row (Definition 5)."""
    X = np.random.default_rng(seed).normal(size=(n, 2)) * 3.0
    A = da.from_array(X, chunks=(chunk, -1))
    Xc = clip_to_ball(X, R)
    sq = np.einsum("ij,ij->i", Xc, Xc)
    x_tilde = max(float(sq.mean()), 1e-3)
    m = max(m_frac * importance.coreset_max_sample_size(n, x_tilde, R * R, lam=lam), 1e-3)
    m = min(m, n)
    with dask.config.set(scheduler="synchronous"):
        S = scale.importance_sample(A, m, radius=R, lam=lam, n=n, mean_sq_norm=x_tilde,
                                    rng=seed)
    assert S.partition_rows.sum() == n and len(S.partition_rows) == A.numblocks[0]
    assert S.size == len(S.X) == len(S.weights) == len(np.unique(S.indices))
    np.testing.assert_array_equal(S.X, Xc[S.indices])
    q = importance.coreset_q(sq, sample_size=m, n=n, mean_sq_norm=x_tilde, lam=lam)
    np.testing.assert_allclose(S.weights, 1 / q[S.indices], rtol=1e-12)


def test_dataframe_parquet_columns_center_and_clipping(sync, tmp_path):
    rng = np.random.default_rng(2)
    df = pd.DataFrame(rng.normal(size=(600, 3)) + 10.0, columns=["a", "b", "c"])
    df["name"] = "x"
    df.loc[0, ["a", "b"]] = [1e6, 1e6]
    for i in range(3):
        df.iloc[i * 200:(i + 1) * 200].to_parquet(tmp_path / f"part{i}.parquet")
    S = scale.importance_sample(tmp_path, 600, radius=R, sampler="uniform",
                                columns=["a", "b"], center=[10.0, 10.0], rng=0)
    assert S.X.shape == (600, 2) and S.n == 600  # m = n: q = 1, everything kept
    np.testing.assert_allclose(np.linalg.norm(S.X[0]), R)  # the outlier is clipped
    np.testing.assert_allclose(S.X[1:], df[["a", "b"]].to_numpy()[1:S.n] - 10.0)
    same = scale.importance_sample(df, 600, radius=R, sampler="uniform", columns=["a", "b"],
                                   center=[10.0, 10.0], rng=0)  # an in-memory pandas frame
    np.testing.assert_array_equal(same.X, S.X)


def test_mean_sq_norm_treatments(sync):
    X = two_scale_data()
    A = da.from_array(X, chunks=(1000, -1))
    with pytest.warns(PrivacyLeakWarning, match="read off the data"):
        S = scale.importance_sample(A, 100, radius=R, rng=0)
    assert S.mean_sq_norm_source == "data"
    Xc = clip_to_ball(X, R)
    np.testing.assert_allclose(S.mean_sq_norm, np.mean(np.einsum("ij,ij->i", Xc, Xc)))
    with pytest.warns(PrivacyLeakWarning, match="uses n=2000 counted in the data"):
        scale.importance_sample(A, 100, radius=R, rng=0, mean_sq_norm=2.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        S = scale.importance_sample(A, 100, radius=R, rng=0, mean_sq_norm=2.0, n=2000)
        assert S.mean_sq_norm == 2.0 and S.guarantee is None
        S = scale.importance_sample(A, 100, radius=R, rng=0, stat_epsilon=0.5, n=2000)
    assert S.mean_sq_norm_source == "private" and S.guarantee == PureDP(0.5)


def test_private_mean_sq_norm_is_laplace_with_sensitivity_r_squared():
    """KS against Laplace(r²/ε₀) on 3000 draws: a scale off by 20 % (e.g. r instead of r² at
    r = 1.2) is detected (KS distance ≈ 0.05 against a critical value of ≈ 0.035)."""
    n, total, eps, r = 5000, 3600.0, 0.7, 1.2  # x̃ = 0.72 = r²/2: never clamped here
    rng = np.random.default_rng(3)
    draws = np.array([
        scale._private_mean_sq_norm(total, n, radius=r, epsilon=eps, sample_size=10, lam=0.5,
                                    rng=rng) for _ in range(3000)])
    noise = draws * n - total
    assert stats.kstest(noise, stats.laplace(scale=r**2 / eps).cdf).pvalue > 1e-3
    # clamped to the feasible interval: a tiny true statistic still gives q ≤ 1 on the ball
    with pytest.warns(UserWarning, match="expected sample size is below 10"):
        low = scale._private_mean_sq_norm(0.0, n, radius=r, epsilon=1e6, sample_size=10,
                                          lam=0.5, rng=rng)
    assert importance.coreset_max_sample_size(n, low, r * r, lam=0.5) >= 10 * (1 - 1e-9)


def test_private_mean_sq_norm_passes_the_audit_and_a_wrong_scale_does_not(monkeypatch):
    """Audit of the x̃ release (dpcore.privacy.audit) on neighbours whose sums of squared clipped
    norms differ by r² (one row moved from the centre to the sphere). With the sensitivity wrongly
    taken as r (r = 3, so the true ε is 3 ε₀), the lower bound exceeds ε₀: the audit has power."""
    from dpcore.privacy import audit, noise
    r, eps0, n = 3.0, 1.0, 10_000
    d0, d1 = 0.5 * n * r * r, 0.5 * n * r * r + r * r

    def release(total, gen):
        return scale._private_mean_sq_norm(total, n, radius=r, epsilon=eps0, sample_size=10,
                                           lam=0.5, rng=gen)

    sample = audit.repeat(release)
    good = audit.audit_epsilon(sample, d0, d1, n_samples=20_000, rng=0)
    assert good.consistent_with(eps0), good
    real = noise.laplace_scale
    monkeypatch.setattr(noise, "laplace_scale", lambda sens, eps: real(np.sqrt(sens), eps))
    bad = audit.audit_epsilon(sample, d0, d1, n_samples=20_000, rng=0)
    assert not bad.consistent_with(eps0), bad


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"sample_size": 5000}, "sample_size must be in (0, n=2000]"),
        ({"sample_size": 1900, "mean_sq_norm": 2.0}, "exceed 1 on the ball of radius"),
        ({"sampler": "optimal"}, "'coreset', 'uniform' or 'privacy', got 'optimal'"),
        ({"sampler": "privacy", "mean_sq_norm": None}, "sampler='privacy' needs epsilon"),
        ({"sampler": "privacy", "mean_sq_norm": None, "epsilon": 1.0},
         "pass sample_size=None"),
        ({"radius": None}, "radius must be a declared"),
        ({"n": 1999}, "row count differs from the declared n=1999; no"),  # no true count
        ({"n": 1999, "mean_sq_norm": None, "stat_epsilon": 1.0},
         "row count differs from the declared n=1999"),  # two passes
        ({"mean_sq_norm": 1.0, "stat_epsilon": 1.0}, "either mean_sq_norm"),
        ({"columns": [7]}, "columns [7] are not positions of the array's 3 columns"),
    ],
)
def test_bad_input_is_refused(sync, kwargs, message):
    A = da.from_array(two_scale_data(), chunks=(1000, -1))
    args = {"sample_size": 100, "radius": R, "mean_sq_norm": 3.0} | kwargs
    with pytest.raises((ValueError, IndexError), match=None) as info:
        scale.importance_sample(A, args.pop("sample_size"), **args)
    assert message in str(info.value)


def test_nan_partition_is_named(sync):
    X = two_scale_data()
    X[1500, 1] = np.nan
    with pytest.raises(ValueError, match="partition 1: column 2 has 1 missing"):
        scale.importance_sample(da.from_array(X, chunks=(1000, -1)), 100, radius=R,
                                mean_sq_norm=1.0)


def test_changed_data_between_passes_is_an_error(sync, monkeypatch):
    from dpcore.scale import sampling  # where importance_sample looks _sample_part up

    real = sampling._sample_part

    def lossy(part, index, *args):  # a partition that comes back shorter in pass 2
        return real(part[:-1] if index == 1 else part, index, *args)

    monkeypatch.setattr(sampling, "_sample_part", lossy)
    with pytest.raises(scale.ScaleError, match=r"differ between the passes \(partitions \[1\]\)"):
        scale.importance_sample(da.from_array(two_scale_data(), chunks=(1000, -1)), 100,
                                radius=R, mean_sq_norm=1.0, rng=0)


def mixture(n: int = 3000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    truth = np.array([[-2.0, 0.0], [2.0, 0.0], [0.0, 2.5]])
    X = truth[rng.integers(0, 3, n)] + 0.3 * rng.normal(size=(n, 2))
    return clip_to_ball(X, R), truth


def test_dask_dp_lloyd_is_the_in_memory_algorithm(sync, monkeypatch):
    """Same seed: the same noise draws in the same order, so the map-reduced statistics give the
    in-memory DPLloyd's centres up to summation order; and noise is added once per iteration."""
    from dpcore.mechanisms.lloyd import estimator as lloyd
    X, _ = mixture()
    calls = []
    real = lloyd.noisy_lloyd_update
    monkeypatch.setattr(lloyd, "noisy_lloyd_update",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    res = scale.dp_lloyd_on_partitions(da.from_array(X, chunks=(700, -1)), 3, epsilon=2.0, radius=R,
                         n_iter=6, rng=11, persist=True)
    assert len(calls) == 6
    monkeypatch.setattr(lloyd, "noisy_lloyd_update", real)
    ref = lloyd.DPLloyd(3, epsilon=2.0, radius=R, n_iter=6, rng=11).fit(X)
    np.testing.assert_allclose(res.cluster_centers_, ref.cluster_centers_, rtol=1e-9, atol=1e-12)
    assert res.privacy_ == ref.privacy_ == PureDP(2.0)
    assert (res.beta_sum, res.beta_count) == pytest.approx((ref.beta_sum_, ref.beta_count_))
    np.testing.assert_array_equal(res.predict(X), ref.predict(X))


def test_kmeans_pipeline_has_the_in_memory_guarantee(sync):
    from dpcore.mechanisms.lloyd import estimator as lloyd
    X, truth = mixture(6000)
    A = da.from_array(X, chunks=(2000, -1))
    res = scale.kmeans(A, 3, epsilon=50.0, radius=R, sample_size=1500, rng=0)
    ref = lloyd.DPLloyd(3, epsilon=50.0, radius=R, sampler="coreset", sample_size=1500,
                        rng=0).fit(X)
    # equal up to the summation order of x̃ (root-finding then lands within 1e-9)
    assert res.privacy_.epsilon == pytest.approx(ref.privacy_.epsilon, rel=1e-9)
    assert res.beta_sum == pytest.approx(ref.beta_sum_, rel=1e-9)
    assert res.sample.n == 6000 and abs(len(res.sample.X) - 1500) < 4 * np.sqrt(1500)
    uni = scale.kmeans(A, 3, epsilon=2.0, radius=R, sample_size=1500, sampler="uniform", rng=0)
    ref_uni = lloyd.DPLloyd(3, epsilon=2.0, radius=R, sampler="uniform", sample_size=1500,
                            rng=0).fit(X)
    assert uni.privacy_ == ref_uni.privacy_ and uni.beta_sum == ref_uni.beta_sum_
    # useful at a generous ε: every true centre has a released centre nearby
    dist = np.linalg.norm(truth[:, None] - res.cluster_centers_[None], axis=2).min(axis=1)
    assert dist.max() < 0.3, res.cluster_centers_
    # a private x̃ is paid from the same total ε
    res = scale.kmeans(A, 3, epsilon=50.0, radius=R, sample_size=1500, stat_epsilon=1.0,
                       rng=0)
    assert res.sample.guarantee == PureDP(1.0)
    assert isinstance(res.privacy_, PureDP)
    assert 50.0 * (1 - 1e-9) < res.privacy_.epsilon <= 50.0  # calibrated to ≤ the target
    with pytest.raises(ValueError, match="leaves nothing of epsilon"):
        scale.kmeans(A, 3, epsilon=1.0, radius=R, sample_size=1500, stat_epsilon=1.0)


def test_privacy_sampler_is_the_in_memory_one_in_a_single_pass(sync):
    """Theorem 10 with the 'sampling for free' noise: q depends on x alone, so one pass, no n
    and no x̃ (no PrivacyLeakWarning at all), and the same q, noise and ε as DPLloyd."""
    from dpcore.mechanisms.lloyd import estimator as lloyd
    X, _ = mixture(4000)
    A = da.from_array(X, chunks=(1000, -1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        ref = lloyd.DPLloyd(3, epsilon=3.0, radius=R, sampler="privacy", rng=0).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PrivacyLeakWarning)
        S = scale.importance_sample(A, None, radius=R, sampler="privacy", epsilon=3.0,
                                    n_iter=10, rng=0)
        res = scale.kmeans(A, 3, epsilon=3.0, radius=R, sampler="privacy", rng=0)
    np.testing.assert_allclose(S.weights, 1 / ref.probabilities_[S.indices], rtol=1e-12)
    assert S.sample_size == pytest.approx(ref.probabilities_.sum(), rel=1e-12)
    assert S.n == 4000 and S.seconds["pass1"] < 0.05  # nothing before the sampling pass
    assert abs(S.size - S.sample_size) < 4 * np.sqrt(S.sample_size)
    assert res.privacy_ == ref.privacy_ == PureDP(3.0)
    assert res.beta_sum == pytest.approx(ref.beta_sum_, rel=1e-12)


def test_sample_kept_on_the_cluster_gives_the_same_centres(sync):
    """gather=False: the sample stays in the partitions and DP-Lloyd map-reduces over them with
    the same noise draws, so the centres equal the gathered run's up to summation order."""
    X, _ = mixture(6000)
    A = da.from_array(X, chunks=(1500, -1))
    kw = {"epsilon": 20.0, "radius": R, "sample_size": 1500, "n": 6000, "rng": 9}
    near = scale.kmeans(A, 3, **kw)
    far = scale.kmeans(A, 3, gather=False, **kw)
    assert far.sample.X is None and len(far.sample.partitions) == 4
    assert far.sample.size == near.sample.size and far.sample.dim == 2
    assert "kept on the cluster" in far.sample.summary()
    np.testing.assert_allclose(far.cluster_centers_, near.cluster_centers_, rtol=1e-9)
    assert far.privacy_ == near.privacy_


# --------------------------------------------------------------------------------------------
# LocalCluster with worker processes
# --------------------------------------------------------------------------------------------


def slow_block(i: int, rows: int, d: int, delay: float) -> np.ndarray:
    """Deterministic block i of synthetic data, slow to produce (keeps workers busy)."""
    time.sleep(delay)
    return np.random.default_rng(1000 + i).normal(size=(rows, d))


def slow_array(blocks: int = 12, rows: int = 400, d: int = 3, delay: float = 0.25) -> da.Array:
    parts = [da.from_delayed(dask.delayed(slow_block)(i, rows, d, delay), (rows, d), float)
             for i in range(blocks)]
    return da.concatenate(parts)


@contextlib.contextmanager
def _plain_main():
    """Worker processes are spawned, and a spawned child re-runs the parent's ``__main__`` file.
    After an AppTest test in the same process, ``__main__`` is the last page script Streamlit ran
    (e.g. pages/game.py), so every worker died at start ("Nanny failed to start worker process",
    only when the suite ran AppTest first); a bare ``__main__`` while the cluster lives avoids
    it."""
    with mock.patch.dict(sys.modules, {"__main__": types.ModuleType("__main__")}):
        yield


@pytest.fixture(scope="module")
def client():
    from distributed import Client, LocalCluster

    with _plain_main(), LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                     dashboard_address=":0") as lc, Client(lc) as c:
        yield c


@pytest.mark.slow
def test_cluster_sample_equals_the_local_one(client):
    A = slow_array(delay=0.0)
    S = scale.importance_sample(A, 500, radius=R, rng=3, mean_sq_norm=3.0, client=client)
    with dask.config.set(scheduler="synchronous"):
        ref = scale.importance_sample(A, 500, radius=R, rng=3, mean_sq_norm=3.0)
    np.testing.assert_array_equal(S.indices, ref.indices)
    np.testing.assert_array_equal(S.X, ref.X)
    X, _ = mixture(2000)
    B = da.from_array(X, chunks=(500, -1))
    res = scale.dp_lloyd_on_partitions(B, 3, epsilon=1.0, radius=R, n_iter=3, rng=5, client=client,
                         persist=True)
    with dask.config.set(scheduler="synchronous"):
        local = scale.dp_lloyd_on_partitions(B, 3, epsilon=1.0, radius=R, n_iter=3, rng=5)
    np.testing.assert_allclose(res.cluster_centers_, local.cluster_centers_, rtol=1e-9)
    kw = {"epsilon": 20.0, "radius": R, "sample_size": 500, "n": 2000, "rng": 2}
    far = scale.kmeans(B, 3, gather=False, client=client, **kw)
    with dask.config.set(scheduler="synchronous"):
        near = scale.kmeans(B, 3, **kw)
    np.testing.assert_allclose(far.cluster_centers_, near.cluster_centers_, rtol=1e-9)


@pytest.mark.slow
def test_cli_runs_on_a_scheduler_address(client, tmp_path, capsys):
    """`dpcore run ... --dask ADDRESS` and `dpcore sample --scheduler ADDRESS` use the cluster."""
    import json

    from dpcore import cli
    X, _ = mixture(3000)
    for i in range(3):
        pd.DataFrame(X[i * 1000:(i + 1) * 1000], columns=["a", "b"]).to_parquet(
            tmp_path / f"p{i}.parquet")
    address = client.scheduler.address
    out = tmp_path / "r.json"
    code = cli.main(["-q", "run", "dplloyd", str(tmp_path), "--radius", "5", "--epsilon", "20",
                     "-k", "3", "--sampler", "coreset", "--sample-size", "800", "--n-rows",
                     "3000", "--mean-sq-norm", "4.0", "--dask", address, "--seed", "1",
                     "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    assert np.shape(json.loads(out.read_text())["released"]["centers"]) == (3, 2)
    code = cli.main(["-q", "sample", str(tmp_path), "--radius", "5", "--sample-size", "300",
                     "--sampler", "uniform", "--n-rows", "3000", "--scheduler", address,
                     "--out", str(tmp_path / "s.npz")])
    assert code == 0 and np.load(tmp_path / "s.npz")["X"].shape[1] == 2


def _dead(pid: int, timeout: float = 10.0) -> bool:
    import psutil

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return True
        except psutil.NoSuchProcess:
            return True
        time.sleep(0.05)
    return False


def _kill_a_busy_worker(client, after: float = 0.1) -> tuple[threading.Thread, dict]:
    """SIGKILL the first worker seen processing a task, ``after`` seconds into that task (so
    the kill lands mid-run however slow the machine is). Returns the thread and {"pid": ...}."""
    pids = client.run(os.getpid)
    killed: dict = {}

    def kill():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            busy = [w for w, keys in client.processing().items() if keys and w in pids]
            if busy:
                time.sleep(after)
                killed["pid"] = pids[busy[0]]
                os.kill(killed["pid"], signal.SIGKILL)
                return
            time.sleep(0.02)

    t = threading.Thread(target=kill)
    t.start()
    return t, killed


@pytest.mark.slow
def test_killed_worker_gives_the_undisturbed_sample(client):
    """The nanny restarts the worker and Dask recomputes its partitions; the per-partition
    streams make the recomputed draws identical, so the sample is the undisturbed one."""
    A = slow_array()
    with dask.config.set(scheduler="synchronous"):
        ref = scale.importance_sample(slow_array(delay=0.0), 500, radius=R, rng=4,
                                      mean_sq_norm=3.0)
    killer, killed = _kill_a_busy_worker(client)
    S = scale.importance_sample(A, 500, radius=R, rng=4, mean_sq_norm=3.0, client=client)
    killer.join()
    assert "pid" in killed  # a worker was killed while processing a partition of this run
    np.testing.assert_array_equal(S.indices, ref.indices)
    np.testing.assert_array_equal(S.partition_rows, np.full(12, 400))
    assert _dead(killed["pid"])  # it really died (Dask finished without it or restarted it)


@pytest.mark.slow
def test_worker_death_beyond_retries_fails_clearly():
    """With no retries allowed (a cluster of its own, allowed-failures = 0), a worker killed
    while it reads a partition fails the run with ScaleError: no partial sample."""
    from distributed import Client, LocalCluster

    with dask.config.set({"distributed.scheduler.allowed-failures": 0}), _plain_main(), \
            LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                         dashboard_address=":0") as lc, Client(lc) as own:
        # blocks of 0.8 s: the task is still running when the worker dies 0.1 s into it
        killer, killed = _kill_a_busy_worker(own)
        with pytest.raises(scale.ScaleError, match="no partial result is returned"):
            scale.importance_sample(slow_array(blocks=6, delay=0.8), 500, radius=R, rng=4,
                                    mean_sq_norm=3.0, client=own)
        killer.join()
        assert "pid" in killed
