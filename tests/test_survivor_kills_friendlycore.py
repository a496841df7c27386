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
