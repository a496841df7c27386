"""Tests written from the survivors of ``make mutate``'s sensitivity module (tools/mutate.py).

Each test names the mutants it kills (mutmut's names, ``<function>__mutmut_<n>``) and the plausible
bug it stands for; survivors argued equivalent are in tools/survivors.py and docs/testing.md.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpcore.core.errors import SamplerError
from dpcore.mechanisms.sensitivity import response as response_module
from dpcore.mechanisms.sensitivity import sampler as sampler_module
from dpcore.mechanisms.sensitivity.estimation import empirical_oracle, sample_sensitivity
from dpcore.mechanisms.sensitivity.response import SensitivityRelease, sample_then_respond


def _uniform(size, rng):
    return rng.uniform(0.0, 1.0, size)


def _reference_gaps(f, records: np.ndarray, n: int, dist) -> np.ndarray:
    """Algorithm 1 line 3 written out: D = X_{1..n}, D' = X_{1..n−1, n+1}, G = dist(f(D), f(D'))."""
    return np.sort([dist(f(x[:n]), f(np.concatenate((x[: n - 1], x[n : n + 1])))) for x in records])


class _Recording:
    """An oracle that keeps what it returned, so the pairs can be rebuilt from its draws."""

    def __init__(self):
        self.draws: list[np.ndarray] = []

    def __call__(self, size, rng):
        out = rng.uniform(0.0, 1.0, size)
        self.draws.append(out)
        return out


# === the pairwise gap (estimation.py) ===========================================================

def _ragged(d):
    """Outputs whose length depends on the shared first record (0, 2 or 3 values): the loop's
    one-step conversion fails and every pair goes through ``_gap``."""
    length = int(3 * d[0])
    return np.cumsum(np.full(length, d.sum()))


@pytest.mark.parametrize("norm, dist", [
    (1, lambda a, b: np.abs(a - b).sum()),
    (np.inf, lambda a, b: np.abs(a - b).max(initial=0.0)),
])
def test_pairwise_gaps_of_ragged_outputs_match_the_reference(norm, dist):
    """Kills _gap:15/20/26–31/33–38 (the pairwise norm of a statistic whose output length varies
    between data sets: a − b as a + b, ord dropped (L2 instead of L1), the finiteness test
    inverted or void, an empty output's gap 1 instead of 0, every gap 0) — Δ̂ itself wrong.
    """
    n, m = 4, 60
    oracle = _Recording()
    res = sample_sensitivity(_ragged, oracle, n, m=m, k=m, norm=norm, rng=3)
    records = np.concatenate(oracle.draws[1:]).reshape(m, n + 1)
    ref = _reference_gaps(_ragged, records, n, dist)
    assert {int(3 * x[0]) for x in records} >= {0, 2}  # empty and vector outputs both occur
    np.testing.assert_allclose(res.sensitivities, ref, rtol=1e-12)
    assert res.delta_hat == res.sensitivities[-1] > 0


def test_a_custom_distance_of_zero_is_a_gap_and_a_negative_or_infinite_one_a_failure():
    """Kills _gap:12 (a distance of exactly 0 taken as a failure: a statistic constant on the
    sampled pairs could never be released) and _gap:9/10 (a negative or infinite distance
    accepted as a gap, an invalid Δ̂).
    """
    res = sample_sensitivity(lambda d: 1.0, _uniform, 3, m=5, k=5, norm=lambda a, b: 0.0, rng=0)
    assert res.delta_hat == 0.0 and res.norm == "custom"
    for dist in (lambda a, b: -1.0, lambda a, b: np.inf):
        with pytest.raises(SamplerError, match="failed on 5 of 5"):
            sample_sensitivity(lambda d: 1.0, _uniform, 3, m=5, k=5, norm=dist, rng=0)


def test_a_failing_statistic_is_reported_with_its_exception_type():
    """Kills _loop_gaps:15 (the first failure reported as ``NoneType``: the user cannot tell
    what the black box raised) and sample_sensitivity:206 (``errors[1]``: a single failure
    becomes an IndexError traceback)."""
    def f(d):
        raise ZeroDivisionError("boom")

    with pytest.raises(SamplerError, match="ZeroDivisionError: boom"):
        sample_sensitivity(f, _uniform, 3, m=1, k=1, rng=0)


def test_norm_names_are_case_insensitive_and_integral_float_counts_are_accepted():
    """Kills _norm_order:3 (``norm='L2'`` refused) and _check_count:6/7 (an integral float
    count such as m = 10.0, from a config file, fails with a TypeError)."""
    res = sample_sensitivity(lambda d: float(np.sum(d)), _uniform, 3, m=10.0, k=10, norm="L2",
                             rng=0)
    assert res.norm == "l2" and res.config.m == 10


class _VectorSum:
    """f(D) = Σ_i (x_i, 2x_i, −x_i) with a batched form: outputs are 3-vectors."""

    def __call__(self, d):
        return np.array([1.0, 2.0, -1.0]) * np.sum(d)

    def batch(self, ds):
        return np.sum(ds, axis=1)[:, None] * np.array([1.0, 2.0, -1.0])


def test_batched_vector_outputs_use_the_norm_and_stay_on_the_batch_path():
    """Kills _batch_gaps:26 (the batch path ignores the norm: L2 instead of L1 for vector
    outputs, a Δ̂ too small for the Laplace mechanism) and _batch_gaps:35/36/42/43 (a reshape that
    fails on vector outputs and silently drops to the slow loop); sample_then_respond:127 (the
    release reports path 'loop' for a batched estimate).
    """
    a = sample_sensitivity(_VectorSum(), _uniform, 5, m=40, k=40, norm=1, rng=2)
    assert a.path == "batch"
    b = sample_sensitivity(lambda d: _VectorSum()(d), _uniform, 5, m=40, k=40, norm=1, rng=2)
    np.testing.assert_allclose(a.sensitivities, b.sensitivities, rtol=1e-12)
    rel = sample_then_respond(_VectorSum(), np.full(5, 0.5), _uniform, epsilon=1.0, m=40, k=40,
                              rng=2)
    assert rel.sensitivity.path == "batch"


def test_a_batch_of_the_wrong_length_falls_back_to_the_loop():
    """Kills _batch_gaps:14 (a batch returning 2B rows for B data sets is accepted when both
    sides agree: reshape(B, −1) pairs unrelated outputs and Δ̂ is wrong)."""
    class Doubled:
        def __call__(self, d):
            return float(np.sum(d))

        def batch(self, ds):
            return np.repeat(np.sum(ds, axis=1), 2)

    a = sample_sensitivity(Doubled(), _uniform, 5, m=30, k=30, rng=4)
    b = sample_sensitivity(lambda d: float(np.sum(d)), _uniform, 5, m=30, k=30, rng=4)
    assert a.path == "loop"
    np.testing.assert_allclose(a.sensitivities, b.sensitivities, rtol=1e-12)


# === the oracle and the result's bookkeeping ====================================================

def test_empirical_oracle_keeps_its_table_and_result_as_dict_names_every_field():
    """Kills empirical_oracle:20 (the table the oracle resamples is not kept on it) and
    SensitivityResultǁas_dict:1–8 (a renamed key: a saved run that no longer reads back).
    """
    draw = empirical_oracle(np.array([[1.0], [2.0]]))
    np.testing.assert_array_equal(draw.records, [[1.0], [2.0]])
    res = sample_sensitivity(lambda d: float(np.sum(d)), draw, 3, m=20, k=19, rng=0)
    out = res.as_dict()
    assert {k: out[k] for k in ("delta_hat", "n", "norm", "path")} == {
        "delta_hat": res.delta_hat, "n": 3, "norm": "l1", "path": "loop"}
    assert out["config_m"] == 20 and out["config_k"] == 19


# === Sample-Then-Respond (response.py) ==========================================================

@pytest.mark.parametrize("n", [2.5, True, 1])
def test_a_non_integer_public_n_is_refused(n):
    """Kills sample_then_respond:44 (``and`` for ``or``: n = 2.5 is truncated to 2 and a bool
    accepted, so the sampler estimates Δ̂ at a size the caller did not declare)."""
    with pytest.raises(ValueError, match="at least n=2"):
        sample_then_respond(lambda d: float(np.sum(d)), np.ones(3), _uniform, epsilon=1.0,
                            m=20, k=20, n=n, rng=0)


def test_warnings_point_at_the_caller_not_inside_the_sampler():
    """Kills sample_then_respond:64/172 (stacklevel dropped: the leak warning and the Δ̂ = 0
    warning point inside response.py, where filters by module never match)."""
    data = np.zeros(4)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sample_then_respond(lambda d: 0.0, data, data, epsilon=1.0, m=20, k=20, rng=0)
    assert len(caught) >= 2
    assert all(not w.filename.endswith("response.py") for w in caught)


def test_the_deprecated_release_name_still_resolves_with_a_warning():
    """Kills response.__getattr__:1–9 and sampler.__getattr__:1–4 (the 0.1 name ``Release``
    lost, resolved without the DeprecationWarning, or any name resolving to it)."""
    for mod in (response_module, sampler_module):
        with pytest.warns(DeprecationWarning, match="SensitivityRelease"):
            assert mod.Release is SensitivityRelease
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(AttributeError, match="Nope"):
            response_module.Nope  # noqa: B018


class _MapFeatures:
    """f(D) = mean of (x, 2x, −x) over the records, declared as a record map and as a batch."""

    def __call__(self, d):
        return np.mean(self.record_map(d), axis=0)

    def record_map(self, x):
        return np.asarray(x, dtype=float)[:, None] * np.array([1.0, 2.0, -1.0])


@pytest.mark.parametrize("norm, dist", [
    (1, lambda a, b: np.abs(a - b).sum()),
    ("custom", lambda a, b: float(np.abs(a - b).sum())),
])
def test_record_map_gaps_match_the_reference_in_the_chosen_distance(norm, dist):
    """Kills _record_map_gaps:27 (the norm dropped: L2 instead of L1 on vector features) and
    _rowwise_gaps:1/3–10/12/13 (a callable distance on the record-map path evaluated on the
    wrong arguments or not at all): Δ̂ of a declared mean wrong in every case.
    """
    n, m = 7, 50
    oracle = _Recording()
    f = _MapFeatures()
    res = sample_sensitivity(f, oracle, n, m=m, k=m, norm=dist if norm == "custom" else norm,
                             rng=5)
    assert res.path == "record_map"
    (records,) = oracle.draws
    feats = f.record_map(records)
    ref = np.sort([dist(feats[i], feats[m + i]) / n for i in range(m)])
    np.testing.assert_allclose(res.sensitivities, ref, rtol=1e-12)


@pytest.mark.parametrize("batched", [False, True])
def test_chunked_draws_rebuild_into_the_pairs_of_algorithm_1(monkeypatch, batched):
    """Kills sample_sensitivity's chunking survivors (the per-pair size (n + 1)·d, the chunk
    count, the last chunk's size m − s, the reshape into (pairs, n + 1, d)): any of them pairs
    the wrong records or draws the wrong number, and Δ̂ no longer is Algorithm 1's G_(k) of the
    drawn pairs. Records are 2-D, m is not a multiple of the chunk.
    """
    from dpcore.mechanisms.sensitivity import estimation

    monkeypatch.setattr(estimation, "_CHUNK_ELEMENTS", 2 * 7 * (5 + 1) * 2)  # 7 pairs a chunk
    n, m, k = 5, 23, 20

    class Oracle(_Recording):
        def __call__(self, size, rng):
            out = rng.uniform(0.0, 1.0, (size, 2))
            self.draws.append(out)
            return out

    def f(d):
        return d.sum(axis=0) * np.array([1.0, 3.0])

    if batched:
        class F:
            def __call__(self, d):
                return f(d)

            def batch(self, ds):
                return ds.sum(axis=1) * np.array([1.0, 3.0])
        stat = F()
    else:
        stat = f
    oracle = Oracle()
    res = sample_sensitivity(stat, oracle, n, m=m, k=k, norm=1, rng=9)
    assert res.path == ("batch" if batched else "loop")
    assert [len(d) for d in oracle.draws] == [1, 42, 42, 42, 12]  # the probe, 7, 7, 7, 2 pairs
    records = np.concatenate(oracle.draws[1:]).reshape(m, n + 1, 2)
    ref = _reference_gaps(f, records, n, lambda a, b: np.abs(a - b).sum())
    np.testing.assert_allclose(res.sensitivities, ref, rtol=1e-12)
    assert res.delta_hat == ref[k - 1] and res.n == n


def test_too_small_k_keeps_the_order_statistic_with_no_confidence():
    """Kills the fallback config of sample_sensitivity (k too small for any γ < 1: the result
    must say γ = 1 and ρ of m, mode 'manual', so Sample-Then-Respond refuses it)."""
    from dpcore.mechanisms.sensitivity.config import rho_for_m

    res = sample_sensitivity(lambda d: float(np.sum(d)), _uniform, 3, m=10, k=1, rng=0)
    assert res.config.gamma == 1.0 and res.config.k == 1 and res.config.m == 10
    assert res.config.mode == "manual" and res.config.rho == rho_for_m(10)
    assert res.delta_hat == res.sensitivities[0]


def test_outputs_of_different_shapes_are_reported_with_the_exception_type():
    """Kills _loop_gaps:73: the same report for a pair whose two outputs have different
    shapes (the pairwise distance raises), which named the failure ``NoneType``. A statistic
    whose output length depends on the data fails that way on some pairs."""
    def f(d):
        return np.ones(1 + int(np.asarray(d)[-1] > 0.5))

    with pytest.raises(SamplerError, match=r"first failure: ValueError: f returned outputs of "
                                           r"different shapes"):
        sample_sensitivity(f, _uniform, 3, m=40, k=40, rng=0)
