"""Total mechanisms (issue 22, item 1): ⊥ never depends on the private table.

The release door plans on public inputs (declared n, k, the box) and computes on the private rows;
any exception there is ⊥ (charged). A mechanism that raises on some private tables (n = 0, n < 2,
n < k, all rows equal, ...) turns ⊥ into a leak: stepping k in a curator deployment revealed the
exact n of a small table with certainty. Every registered releasable mechanism must return an
output for every private table of the declared shape; whether it runs may depend on public inputs
only.

* :func:`test_every_registered_mechanism_is_total` (hypothesis) drives every releasable row of the
  registry (drawn from :data:`dpcore.release.registry.ENTRIES`, not a hand list) through the door
  on degenerate tables (n = 0, 1, < k, identical rows, rows at a corner, rows outside the
  declared bounds, non-numbers) and fails on ⊥, on an exception, or on a refusal that the same
  public inputs do not give on an ordinary table.
* :func:`test_small_n_neighbours_get_the_same_bottom_or_refusal` is the leak test with real
  neighbours: n = 0…13 against n + 1 rows, k stepping 1…13, every mechanism; ⊥-ness and the
  refusal must be identical (nothing but the DP output may differ). A quick subset runs always,
  the full grid is ``slow``.

Bugs these catch: a guard that raises on the true n (``n < 2``, ``n < k``, an empty table), an
estimator that reads n off the data where the door declared it, a guarantee that depends on the
true n (the door yields ⊥ when the delivered guarantee is not the planned one).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore.core.errors import ReleaseRefused
from dpcore.mechanisms.sensitivity.statistics import MENU
from dpcore.privacy.guarantees import PrivacyLedger, RandomDP
from dpcore.release.door import ReleaseDoor
from dpcore.release.registry import ENTRIES, MECHANISMS, PublicInputs, entry
from dpcore.release.schema import PublicDescription

#: Every releasable row that imports here (a row added to the registry is tested unedited).
RELEASABLE = [e.key for e in ENTRIES if e.releasable and e.key in MECHANISMS]
COLUMNS = ["a", "b"]
LO, HI = -1.0, 1.0
DELTA = 1e-6


def _desc(n: int) -> PublicDescription:
    return PublicDescription(COLUMNS, lower=[LO, LO], upper=[HI, HI], n=n)


def _params(key: str, k: int, n: int, epsilon: float, statistic: str | None = None) -> dict:
    """The row's own defaults (:meth:`Entry.defaults`) at these public inputs. The sensitivity
    sampler's statistic follows k when it is k-means (the issue's ``kmeans_centres`` at n < k)."""
    desc = _desc(n)
    p = dict(entry(key).defaults(PublicInputs(k, epsilon, DELTA, float(desc.radius), n)))
    if "statistic" in p:
        name = statistic or "kmeans_centres"
        p["statistic"] = name
        p["statistic_params"] = {"k": k} if name == "kmeans_centres" else {}
    return p


def outcome(key: str, params: dict, X: np.ndarray, n_declared: int) -> str:
    """What an analyst can tell apart: a refusal (its message), ⊥, or a release (any output).
    Any other exception propagates and fails the test."""
    door = ReleaseDoor(pd.DataFrame(X, columns=COLUMNS), _desc(n_declared),
                       PrivacyLedger(RandomDP(1e6, 0.5, 0.9)))
    try:
        rel = door.release(key, params)
    except ReleaseRefused as exc:
        return f"refused: {exc}"
    return "⊥" if rel.failed else "released"


def _ordinary(n: int) -> np.ndarray:
    gen = np.random.default_rng(7)
    return np.clip(np.vstack([gen.normal(-0.5, 0.15, (n // 2, 2)),
                              gen.normal(0.5, 0.15, (n - n // 2, 2))]), LO, HI)


def _degenerate(kind: str, n: int, seed: int) -> np.ndarray:
    gen = np.random.default_rng(seed)
    if kind == "identical":
        return np.tile(gen.uniform(LO, HI, (1, 2)), (n, 1))
    if kind == "corner":
        return np.full((n, 2), HI)
    if kind == "outside":  # far outside the declared box: the door clamps, the mechanism runs
        return gen.choice([-1e6, 1e6], size=(n, 2))
    if kind == "not numbers":
        return np.where(gen.random((n, 2)) < 0.5, np.nan, np.inf)
    return gen.uniform(LO, HI, (n, 2))


@settings(max_examples=60, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(RELEASABLE), k=st.integers(1, 13),
       n_declared=st.sampled_from([1, 2, 3, 12, 40]), n_true=st.integers(0, 15),
       kind=st.sampled_from(["uniform", "identical", "corner", "outside", "not numbers"]),
       epsilon=st.sampled_from([0.3, 1.0, 4.0]), statistic=st.sampled_from(sorted(MENU)),
       seed=st.integers(0, 2**16))
def test_every_registered_mechanism_is_total(key, k, n_declared, n_true, kind, epsilon,
                                              statistic, seed):
    """No ⊥ and no exception on a degenerate table; a refusal only where the same public inputs
    refuse an ordinary table of the declared n too (so a public input explains it)."""
    params = _params(key, k, n_declared, epsilon, statistic)
    got = outcome(key, params, _degenerate(kind, n_true, seed), n_declared)
    expected = outcome(key, params, _ordinary(n_declared), n_declared)
    assert got != "⊥", f"{key} {params} released ⊥ on a {kind} table of n = {n_true}"
    assert got == expected, (f"{key} {params}: {got!r} on a {kind} table of n = {n_true}, "
                             f"{expected!r} on an ordinary one (declared n = {n_declared})")


@pytest.mark.slow
@settings(max_examples=8, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(key=st.sampled_from(["friendlycore_kmeans", "friendly_mean"]), k=st.integers(1, 2),
       n_true=st.integers(0, 15),
       kind=st.sampled_from(["uniform", "identical", "corner", "outside"]),
       seed=st.integers(0, 2**16))
def test_friendlycore_is_total_where_its_public_n_admits_it(key, k, n_true, kind, seed):
    """FriendlyCore is refused (publicly) at the small declared n above; at a declared n = 1200
    with a large ε (t = n/2k ≥ 300 tuples: admitted) it runs, and must release on any table."""
    params = _params(key, k, 1200, 8.0)
    got = outcome(key, params, _degenerate(kind, n_true, seed), 1200)
    assert got == "released", f"{key} {params}: {got} on a {kind} table of n = {n_true}"


def _neighbour_grid(keys, ks, ns, n_declared: int) -> list[str]:
    """Every (mechanism, k, n) whose outcome differs between n and n + 1 rows (same public
    description: the tables are neighbours, one row added)."""
    rows = _ordinary(max(ns) + 1)
    leaks = []
    for key in keys:
        for k in ks:
            params = _params(key, k, n_declared, 1.0)
            prev = outcome(key, params, rows[:ns[0]], n_declared)
            for n in ns:
                nxt = outcome(key, params, rows[:n + 1], n_declared)
                if prev != nxt:
                    leaks.append(f"{key} k={k}: n={n} {prev!r} vs n={n + 1} {nxt!r}")
                prev = nxt
    return leaks


@pytest.mark.parametrize("n_declared", [12])
def test_small_n_neighbours_get_the_same_bottom_or_refusal(n_declared):
    """The issue's attack, quick subset: k ∈ {1, 2, 12, 13} against n = 0…13 (declared n = 12,
    as a private estimate would give). ⊥ or a refusal that differs between neighbours reveals n
    exactly (ε = ∞)."""
    leaks = _neighbour_grid(RELEASABLE, [1, 2, 12, 13], list(range(14)), n_declared)
    assert not leaks, f"{len(leaks)} neighbour pair(s) differ: " + "; ".join(leaks[:20])


@pytest.mark.slow
@pytest.mark.parametrize("n_declared", [5, 12, 40])
def test_small_n_neighbours_full_grid(n_declared):
    """The whole grid: k = 1…13, n = 0…13, every releasable mechanism, three declared n."""
    leaks = _neighbour_grid(RELEASABLE, list(range(1, 14)), list(range(14)), n_declared)
    assert not leaks, f"{len(leaks)} neighbour pair(s) differ: " + "; ".join(leaks[:20])
