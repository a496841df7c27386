"""FriendlyCore's size check at its exact boundary (a survivor of ``make mutate``).

``_check_enough__mutmut_16`` turns ``need > n`` into ``need >= n`` in the sampled-counting check:
it refuses a declared ``n`` whose reference set must be the whole data set (``need == n``), a
configuration the filter handles. The boundary needs a fixed point of
``required_size(ρ, δ, n=·)``; it exists because the needed size grows like √(n log n) while n
grows by one per step, so ``need(n) − n`` falls by 0 or 1 per step from positive to negative and
takes the value 0 (the test finds it by search rather than pinning a number).
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.mechanisms import friendlycore as fc
from dpcore.mechanisms.friendlycore.filters import _check_enough
from dpcore.privacy.guarantees import ZCDP


def _first_fixed_point(rho: float, delta: float, limit: int = 5_000) -> int:
    """The smallest n >= 2 with ``required_size(rho, delta, n=n) == n``."""
    for n in range(2, limit):
        if fc.required_size(rho, delta, n=n) == n:
            return n
    raise AssertionError(f"no fixed point of required_size(n=·) below {limit}")


@pytest.mark.parametrize(("rho", "delta"), [(1.0, 1e-6), (0.1, 1e-9)])
def test_sampled_size_check_accepts_a_reference_set_of_the_whole_data(rho, delta):
    """At ``need == n`` the check passes (``sample_size = n``); one row fewer it refuses, since
    there ``need(n − 1) = n > n − 1``. Kills ``_check_enough__mutmut_16`` (``>=``), which
    refuses the first too."""
    n = _first_fixed_point(rho, delta)
    _check_enough(n, rho, delta, sample_size=n)
    assert fc.required_size(rho, delta, n=n - 1) > n - 1
    with pytest.raises(ValueError, match=rf"^n = {n - 1} is too small for sampled FriendlyCore"):
        _check_enough(n - 1, rho, delta, sample_size=n - 1)


def test_friendly_core_runs_at_the_boundary_with_check_size():
    """The same boundary through the public function: the filter runs at δ/2 with sampling, so
    the fixed point is searched at δ/2; a perfectly friendly data set of that declared size is
    not refused (and the rest of the run is the filter's)."""
    rho, delta = 1.0, 2e-6
    n = _first_fixed_point(rho, delta / 2.0)
    X = np.zeros((n, 2))  # every pair of points are friends
    res = fc.friendly_core(X, 0.5, rho=rho, delta=delta, sample_size=n, n_public=n,
                           check_size=True, rng=0)
    assert res.mask.shape == (n,)
    with pytest.raises(ValueError, match="too small for sampled FriendlyCore"):
        fc.friendly_core(X[:-1], 0.5, rho=rho, delta=delta, sample_size=n - 1,
                         n_public=n - 1, check_size=True, rng=0)


def test_the_core_size_is_the_number_of_kept_points():
    """``FriendlyCoreResult.size``:1 (a property, mutated since tools/mutate.py unwraps
    ``@property``): the size the pages and reports show must count the mask."""
    X = np.r_[np.zeros((40, 2)), np.full((3, 2), 50.0)]
    res = fc.friendly_core(X, 0.5, rho=4.0, delta=1e-6, rng=0)
    assert res.size == int(res.mask.sum()) and isinstance(res.size, int)
    assert 0 < res.size < X.shape[0]


# ---- filters.filter_with_reference (FC_Clustering's tuple filter; App. B sampled counting) ----
#
# Its 66 mutants were "no tests" in the run of 2026-11-26 (its only callers were outside the
# module's covering tests); the tests below check it directly against the documented steps:
# n̂ = noisy_size_upper(size, ρ₁ = 0.1ρ, δ), τ(n̂) = √(n̂ ln(2n̂/δ)/(4ρ₂)) + 1/2 with ρ₂ = 0.9ρ,
# q = min(1, 4τ/n̂), S ~ Bernoulli(q) per element (only when q < 1), scores = #friends in S − |S|/2
# and the filter's draw, all from one generator.


def _line(size: int, seed: int) -> np.ndarray:
    """1-D points: a tight cluster holding 98 % of them, the rest spread far apart."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 0.1, size)
    lone = rng.random(size) < 0.02
    x[lone] = rng.uniform(-1e4, 1e4, lone.sum())
    return x


def _brute_counts(x: np.ndarray, radius: float):
    """count(reference) by brute force: friends (distance ≤ radius, self included when it is in
    the reference set) among the reference elements (None: all); records each call."""
    calls = []

    def count(ref):
        calls.append(ref)
        cols = x if ref is None else x[ref]
        return (np.abs(x[:, None] - cols[None, :]) <= radius).sum(axis=1)

    return count, calls


def _by_hand(count, size, rho, delta, seed):
    """The documented steps, written out, from one generator."""
    from dpcore.mechanisms.friendlycore.filters import noisy_size_upper

    gen = np.random.default_rng(seed)
    n_hat = noisy_size_upper(size, 0.1 * rho, delta, rng=gen)
    tau = np.sqrt(n_hat * np.log(2 * n_hat / delta) / (4 * 0.9 * rho)) + 0.5
    q = min(1.0, 4 * tau / n_hat)
    ref = gen.random(size) < q if q < 1 else None
    counts = count(ref)
    m = size if ref is None else int(ref.sum())
    res = fc.zCDPFilter(rho, delta).apply(counts, reference_size=m, n_hat=n_hat, rng=gen)
    return res, ref, counts, m, n_hat, tau, q


@pytest.mark.parametrize(("size", "rho", "delta", "sampled"),
                         [(3000, 1.0, 1e-6, True), (400, 0.1, 1e-6, False),
                          (2500, 2.0, 1e-9, True)])
def test_filter_with_reference_follows_its_documented_steps(size, rho, delta, sampled):
    """filter_with_reference, every step: ρ₁ = 0.1ρ for n̂ (the filter's, not ρ), the reference
    rate from τ(n̂) with ρ₂ = 0.9ρ and the factor 4, a reference set only when q < 1, the scores
    counted among S minus |S|/2 (not n/2), the released n̂ passed on (not drawn twice, which
    spends ρ₁ twice), and one generator throughout. Catches any of these swapped, dropped or
    rescaled: the kept set, the reference set, the scores, n̂, τ or σ then differ from the
    written-out steps."""
    from dpcore.mechanisms.friendlycore.filters import filter_with_reference

    x = _line(size, seed=size)
    count, calls = _brute_counts(x, 0.5)
    res, ref = filter_with_reference(count, size, rho, delta, rng=7)
    count2, _ = _brute_counts(x, 0.5)
    want, want_ref, counts, m, n_hat, tau, q = _by_hand(count2, size, rho, delta, seed=7)
    assert bool(q < 1) == sampled and (ref is not None) == sampled
    assert len(calls) == 1 and calls[0] is ref  # counted once, among the returned set
    if sampled:
        assert np.array_equal(ref, want_ref) and 0 < m < size
    assert res.n_hat == pytest.approx(n_hat, rel=1e-12)
    assert res.threshold == pytest.approx(tau, rel=1e-12)
    assert res.noise_sd == pytest.approx(np.sqrt(n_hat / (8 * 0.9 * rho)), rel=1e-12)
    assert np.array_equal(res.scores, counts - m / 2.0)
    assert np.array_equal(res.mask, want.mask)
    assert res.privacy_ == ZCDP(rho, delta)
    # the cluster is kept and the lone points (one friend at most: themselves) are not
    lone = np.abs(x) > 10
    assert lone.any() and res.mask[~lone].mean() > 0.5 and not res.mask[lone].any()


def test_filter_with_reference_on_no_elements_draws_nothing():
    """size = 0: n̂ = 0 without a draw, no reference set, count(None) on the empty set and an
    empty result. Catches the empty case sent through noisy_size_upper or the reference
    draw (`if size` inverted), which fail or return a non-empty mask."""
    from dpcore.mechanisms.friendlycore.filters import filter_with_reference

    count, calls = _brute_counts(np.zeros(0), 1.0)
    res, ref = filter_with_reference(count, 0, 1.0, 1e-6, rng=0)
    assert ref is None and calls == [None]
    assert res.mask.shape == (0,) and res.n_hat == 0.0 and res.size == 0


def test_filter_with_reference_draws_no_reference_when_the_filter_is_empty(monkeypatch):
    """When 2n̂/δ ≤ 1 the filter's output is empty whatever the counts (zCDPFilter's rule, a
    function of n̂), so no reference set is drawn and every element is counted (q is not
    computed from a τ(n̂) that would take the log of a number ≤ 1). Catches the guard on
    `2n̂/δ > 1` or on `n̂ > 0` weakened or dropped (then log(2n̂/δ) ≤ 0 or of a negative
    number: a NaN rate or a math error), e.g. `3n̂/δ > 1`, which n̂ = 0.4 at δ = 0.9 passes."""
    import dpcore.mechanisms.friendlycore.filters as filters

    for forced in (0.3, 0.4, -2.0):
        monkeypatch.setattr(filters, "noisy_size_upper",
                            lambda n, rho1, delta, rng=None, v=forced: v)
        count, calls = _brute_counts(np.zeros(50), 1.0)
        res, ref = filters.filter_with_reference(count, 50, 1.0, 0.9, rng=0)
        assert ref is None and calls == [None]
        assert not res.mask.any() and res.n_hat == forced


def test_a_seeded_friendly_core_draws_its_size_estimate_from_the_seed():
    """friendly_core (`noisy_size_upper(..., rng=gen)` → `rng=None`): n̂ must come from the
    run's generator, so a seeded run (a stored run, a reproduction report) gives the same n̂,
    threshold and core again. The mutant draws n̂ from the operating system; the cores of two
    runs then often still agree (a mutation run on unchanged code detected it once and missed
    it the next time), their n̂ never does."""
    X = np.r_[np.zeros((60, 2)), np.random.default_rng(1).normal(0, 5, (20, 2))]
    a = fc.friendly_core(X, 0.5, rho=2.0, delta=1e-6, rng=3)
    b = fc.friendly_core(X, 0.5, rho=2.0, delta=1e-6, rng=3)
    assert a.n_hat == b.n_hat and a.threshold == b.threshold
    assert np.array_equal(a.mask, b.mask)
