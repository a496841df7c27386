"""A statistic with an empty output (shape ``(0,)``) through the sensitivity sampler and release.

Written from the last untriaged survivors of ``make mutate``'s sensitivity module:
``_rowwise_gaps__mutmut_29`` (``np.zeros(None)``) and ``_rowwise_gaps__mutmut_30``
(``np.zeros(diff.shape[1])``), both in the branch for rows of length 0. The map ``D ↦ f(D) ∈ R⁰``
has sensitivity 0 in every norm, so Algorithm 1 must return ``Δ̂ = 0`` on each of its three paths
(loop, batch, record map) rather than a traceback. Found while constructing it: the exponential
mechanism over zero candidates failed with numpy's "zero-size array to reduction operation
maximum" (now a clear refusal), and the menu's KDE accepted an empty grid (now refused when the
statistic is built, so the release door refuses it from public parameters before any charge).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.mechanisms.sensitivity import statistics
from dpcore.mechanisms.sensitivity.estimation import sample_sensitivity
from dpcore.mechanisms.sensitivity.response import respond, sample_then_respond
from dpcore.privacy.guarantees import RandomDP
from dpcore.privacy.ledger import PrivacyLedger

N, M, K = 30, 40, 38


def _oracle(size, rng):
    return rng.uniform(0.0, 1.0, (size, 2))


def _empty(path: str):
    """A statistic returning no values, taking the sampler's ``path`` (loop, batch, record_map)."""
    def f(d):
        return np.empty(0)

    if path == "batch":
        f.batch = lambda ds: np.empty((np.shape(ds)[0], 0))
    if path == "record_map":
        f.record_map = lambda x: np.empty((np.shape(x)[0], 0))
    return f


@pytest.mark.parametrize("norm", [1, 2, np.inf])
@pytest.mark.parametrize("path", ["loop", "batch", "record_map"])
def test_an_empty_output_has_sampled_sensitivity_zero_on_every_path(path, norm):
    """Kills ``_rowwise_gaps__mutmut_29/30``: a wrongly sized (or 0-d) gap array for rows of
    length 0 raised IndexError / TypeError out of the sampler on all three paths (the batch
    path's fallback re-enters the same code). The bug it stands for: an empty row's norm left
    to numpy, whose max-reduction (L∞) has no identity on numpy < 2."""
    res = sample_sensitivity(_empty(path), _oracle, N, m=M, k=K, norm=norm, rng=0)
    assert res.path == path
    assert res.delta_hat == 0.0
    np.testing.assert_array_equal(res.sensitivities, np.zeros(M))


@pytest.mark.parametrize("path", ["loop", "batch", "record_map"])
@pytest.mark.parametrize("mechanism", ["laplace", "gaussian"])
def test_an_empty_output_releases_an_empty_value(path, mechanism):
    """Sample-Then-Respond on an empty statistic is defined: Δ̂ = 0 (with the 'numerically 0'
    warning) and the release is the empty vector. A bug that crashed here (a max over no
    values when scaling the zero-sensitivity warning) would be a traceback instead."""
    data = np.random.default_rng(1).uniform(size=(N, 2))
    with pytest.warns(UserWarning, match="numerically 0"):
        rel = sample_then_respond(_empty(path), data, _oracle, epsilon=1.0, gamma=0.1,
                                  mechanism=mechanism, delta=1e-6 if mechanism == "gaussian"
                                  else 0.0, rng=0)
    assert np.shape(rel.value) == (0,)
    assert rel.sensitivity.delta_hat == 0.0


def test_the_exponential_mechanism_refuses_zero_candidates_by_name():
    """Was numpy's "zero-size array to reduction operation maximum which has no identity"
    (the Δ = 0 branch) — a traceback, not a message. One candidate stays valid (a check of
    ``size <= 1`` would refuse it), at Δ = 0 and at Δ > 0."""
    for sens in (0.0, 1.0):
        with pytest.raises(ValueError, match=r"^the exponential mechanism needs at least one "
                                             r"candidate"):
            respond(np.empty(0), sensitivity=sens, epsilon=1.0, mechanism="exponential", rng=0)
        index, _ = respond(np.array([3.0]), sensitivity=sens, epsilon=1.0,
                           mechanism="exponential", rng=0)
        assert index == 0
    data = np.random.default_rng(1).uniform(size=(N, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(ValueError, match="at least one candidate"):
            sample_then_respond(_empty("loop"), data, _oracle, epsilon=1.0, gamma=0.1,
                                mechanism="exponential", rng=0)


@pytest.mark.parametrize("params", [{"points": 0}, {"grid": []}])
def test_an_empty_kde_grid_is_refused_before_the_door_charges(params):
    """The one menu statistic that could have an empty output: a KDE on no grid points. The
    refusal comes from building the statistic (public parameters), so the door's privacy map
    refuses it with nothing charged; before, Laplace released an empty vector and the
    exponential mechanism a ⊥, each with its budget spent."""
    from dpcore.core.errors import ReleaseRefused
    from dpcore.release.door import ReleaseDoor
    from dpcore.release.schema import PublicDescription

    with pytest.raises(ValueError, match="at least one grid point"):
        statistics.get_statistic("kde", **params)
    table = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (100, 1)), columns=["a"])
    ledger = PrivacyLedger(RandomDP(50.0, 1e-3, 0.9))
    door = ReleaseDoor(table, PublicDescription(["a"], lower=[0], upper=[1], n=100), ledger)
    for mechanism in ("laplace", "exponential"):
        with pytest.raises(ReleaseRefused, match="at least one grid point"):
            door.release("sensitivity", {"statistic": "kde", "statistic_params": params,
                                         "epsilon": 1.0, "gamma": 0.1, "mechanism": mechanism})
    assert ledger.entries == []  # nothing charged


def test_a_bernstein_release_is_refused_before_the_door_charges():
    """The sensitivity map accepted ``mechanism="bernstein"``, whose output is a function the
    door cannot release as values: every such release was ⊥ with its budget charged (found by
    the mutation review). It is refused from public parameters, with nothing charged."""
    from dpcore.core.errors import ReleaseRefused
    from dpcore.release.door import ReleaseDoor
    from dpcore.release.schema import PublicDescription

    table = pd.DataFrame(np.random.default_rng(0).uniform(0, 1, (100, 1)), columns=["a"])
    ledger = PrivacyLedger(RandomDP(50.0, 1e-3, 0.9))
    door = ReleaseDoor(table, PublicDescription(["a"], lower=[0], upper=[1], n=100), ledger)
    with pytest.raises(ReleaseRefused, match="Bernstein"):
        door.release("sensitivity", {"statistic": "mean", "epsilon": 1.0, "gamma": 0.1,
                                     "mechanism": "bernstein"})
    assert ledger.entries == []
