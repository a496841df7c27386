"""The release door (dpcore.release.door): plan from public inputs, charge before computing, ⊥ with
a fixed message on any failure, refusal of parameters read off the data, OS randomness only."""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd
import pytest

import dpcore.release.door as release_mod
from dpcore.privacy.guarantees import (
    ApproxDP,
    BudgetExceededError,
    PrivacyLeakWarning,
    PrivacyLedger,
    PureDP,
)
from dpcore.privacy.noise import DEFAULT_ETA
from dpcore.release.door import FAILED, ReleaseDoor, ReleaseRefused
from dpcore.release.runconfig import MECHANISMS, Mechanism, register
from dpcore.release.schema import PublicDescription

DESC = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=300)

#: The defended noise inflates every charge by (1 + η)² (dpcore.privacy.noise.defended_noise).
SLACK_GROWTH = (1.0 + DEFAULT_ETA) ** 2
DELIVERED_HALF = PureDP(0.5 * SLACK_GROWTH)


def _table(n: int = 300, seed: int = 0) -> pd.DataFrame:
    return pd.DataFrame(np.random.default_rng(seed).uniform(-1, 1, (n, 2)), columns=["a", "b"])


def _door(budget=None, desc=DESC, n=300) -> ReleaseDoor:
    return ReleaseDoor(_table(n), desc, PrivacyLedger(budget or ApproxDP(5.0, 1e-5)))


@pytest.fixture
def toy_mechanism():
    """A mechanism whose behaviour on the private rows the test chooses."""
    state = {"fail_on_private": False, "leak_on_private": False, "guarantee": PureDP(0.5)}

    def target(X, *, epsilon: float, radius: float, rng=None):  # signature only
        raise NotImplementedError

    def run(X, rng, *, epsilon, radius):
        private = X.shape[0] != 2000 and X.shape[0] != 1999 and not np.allclose(
            X[:3], release_mod.ReleaseDoor.proxy(door_stub, X.shape[0])[:3])
        if private and state["fail_on_private"]:
            raise ValueError(f"mean squared norm is {np.mean(X ** 2):.5f}")  # data-derived text
        if private and state["leak_on_private"]:
            warnings.warn("read n off the data", PrivacyLeakWarning, stacklevel=1)
        g = state["guarantee"] if private else PureDP(0.5)
        return {"value": X.mean(axis=0) + rng.laplace(0, 1 / epsilon, X.shape[1])}, g

    door_stub = _door()
    register(Mechanism("toy_test", target, run, "test only"), replace=True)
    yield state
    MECHANISMS.pop("toy_test", None)


def test_release_charges_before_and_returns_only_the_output():
    door = _door()
    rel = door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.5}, label="centres")
    assert not rel.failed and set(rel.output) == {"centers"}
    assert rel.guarantee == DELIVERED_HALF
    (entry,) = door.ledger.entries
    assert entry.label == "centres" and "seed" not in entry.params and "rng" not in entry.params
    assert entry.params["radius"] == pytest.approx(np.sqrt(2))  # declared, filled in


def test_failure_keeps_the_charge_and_says_nothing_about_the_data(toy_mechanism):
    toy_mechanism["fail_on_private"] = True
    door = _door()
    rel = door.release("toy_test", {"epsilon": 0.5})
    assert rel.failed and rel.output is None and rel.message == FAILED
    assert "squared" not in repr(rel)
    assert len(door.ledger) == 1  # finding 2: a failure is not free


def test_leak_warning_on_the_private_run_is_bottom_not_a_warning(toy_mechanism):
    toy_mechanism["leak_on_private"] = True
    door = _door()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing may escape the door
        rel = door.release("toy_test", {"epsilon": 0.5})
    assert rel.failed and len(door.ledger) == 1


def test_guarantee_other_than_planned_is_bottom(toy_mechanism):
    toy_mechanism["guarantee"] = PureDP(0.7)  # e.g. read off the data
    rel = _door().release("toy_test", {"epsilon": 0.5})
    assert rel.failed


def test_parameters_read_off_the_data_are_refused_before_any_charge():
    door = _door()
    with pytest.raises(ReleaseRefused, match="reads"):  # finding 3: coreset reads n and x̃
        door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.5, "sampler": "coreset",
                                 "sample_size": 100})
    with pytest.raises(ReleaseRefused, match="seed"):  # finding 1
        door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.5, "seed": 3})
    assert len(door.ledger) == 0


def test_maxcover_gets_the_declared_n():
    door = _door()
    rel = door.release("maxcover_kmeans", {"n_clusters": 2, "epsilon": 1.0, "delta": 1e-6})
    assert door.ledger.entries[0].params["n_public"] == 300
    assert rel.guarantee == ApproxDP(1.0 * SLACK_GROWTH, 1e-6)


def test_multi_part_release_is_checked_as_a_whole():
    door = _door(PureDP(1.0))
    parts = [("dplloyd", {"n_clusters": 2, "epsilon": 0.4})] * 3
    with pytest.raises(BudgetExceededError):
        door.release_many(parts)
    assert len(door.ledger) == 0  # finding 7: nothing computed or recorded
    assert len(door.release_many(parts[:2])) == 2 and len(door.ledger) == 2


def test_n_unknown_is_refused_until_estimated_and_charged():
    desc = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1])
    door = _door(desc=desc)
    assert door.n is None
    with pytest.raises(ReleaseRefused, match="estimate"):
        door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.5})
    n_hat = door.estimate_n(0.5)
    assert abs(n_hat - 300) < 60 and door.n == n_hat and door.n_source == "estimated privately"
    assert door.ledger.entries[0].guarantee == DELIVERED_HALF
    door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.5})
    assert len(door.ledger) == 2


def test_randomness_is_fresh_unless_a_test_forces_it(monkeypatch):
    door = _door(PureDP(10.0))
    p = {"n_clusters": 2, "epsilon": 0.5}
    a, b = (door.release("dplloyd", p).output["centers"] for _ in range(2))
    assert not np.allclose(a, b)
    monkeypatch.setattr(release_mod, "_entropy", lambda: np.random.default_rng(5))
    a, b = (door.release("dplloyd", p).output["centers"] for _ in range(2))
    np.testing.assert_array_equal(a, b)


def test_prepare_is_per_row_and_never_names_a_value():
    t = _table(5)
    t = t.astype(object)
    t.loc[2, "a"] = "secret-cell"
    t.loc[3, "b"] = 1e9
    X = DESC.prepare(t)
    assert X.shape == (5, 2) and np.all(np.linalg.norm(X, axis=1) <= DESC.radius + 1e-12)
    assert X[2, 0] == 0.0  # non-numeric cell -> the centre's coordinate
    assert X[3, 1] == 1.0  # clamped to the box


def test_release_runs_under_defended_noise_and_charges_its_slack(monkeypatch):
    """The mechanism runs inside dpcore.privacy.noise.defended_noise (a bare float sampler would
    refuse there), and the defence's slack is part of the one ledger entry and of the guarantee."""
    import dpcore.privacy.noise

    seen = []
    real = dpcore.privacy.noise.defended_noise

    def spy(*a, **kw):
        seen.append(True)
        return real(*a, **kw)

    monkeypatch.setattr("dpcore.release.door.defended_noise", spy)
    door = _door()
    rel = door.release("dplloyd", {"n_clusters": 2, "epsilon": 0.5})
    assert seen and not rel.failed
    assert [e.guarantee for e in door.ledger.entries] == [rel.guarantee] == [DELIVERED_HALF]


def test_public_description_json_round_trip_and_clear_errors():
    from dpcore.release.schema import SchemaError

    assert PublicDescription.from_json(DESC.to_json()) == DESC
    assert DESC.center == (0.0, 0.0) and DESC.radius == pytest.approx(np.sqrt(2))
    lo, hi = DESC.box()
    np.testing.assert_array_equal(lo, [-1, -1])
    np.testing.assert_array_equal(hi, [1, 1])
    ball = PublicDescription(["a"], center=[2.0], radius=3.0)
    assert ball.box() is None and PublicDescription.from_dict(ball.to_dict()) == ball
    for doc, word in (({"columns": ["a"], "lower": [1], "upper": [0]}, "lower < upper"),
                      ({"columns": ["a"], "lower": [0]}, "both"),
                      ({"columns": ["a"], "radius": -1}, "radius"),
                      ({"columns": ["a"], "n": 0}, "n must"),
                      ({"columns": []}, "columns"),
                      ({"columns": ["a"], "bounds": 1}, "unknown key")):
        with pytest.raises(SchemaError, match=word):
            PublicDescription.from_dict(doc)
    with pytest.raises(SchemaError, match="no column"):
        DESC.prepare(pd.DataFrame({"a": [1.0]}))


def test_declared_box_reaches_the_box_aware_kmeans_and_is_recorded():
    """A per-column box is a tighter public description than its enclosing ball (issue 15): the
    door passes it to DP k-means; centres stay in the box, the ledger records the public box."""
    t = pd.DataFrame(np.random.default_rng(1).uniform(-1, 1, (500, 2)) * [1, 10],
                     columns=["a", "b"])
    desc = PublicDescription(["a", "b"], lower=[-1, -10], upper=[1, 10], n=500)
    door = ReleaseDoor(t, desc, PrivacyLedger(ApproxDP(5.0, 1e-5)))
    rel = door.release("dpkmeans", {"n_clusters": 3, "epsilon": 1.0, "n": 500})
    assert not rel.failed
    c = rel.output["centers"]
    assert np.all(np.abs(c[:, 0]) <= 1.0) and np.all(np.abs(c[:, 1]) <= 10.0)
    assert door.ledger.entries[-1].params["bounds"] == [[-1.0, -10.0], [1.0, 10.0]]


# ---- padded releases (issue 22, item 6) --------------------------------------------------------


def _latencies(door: ReleaseDoor, params: dict, reps: int) -> list[float]:
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        door.release("dplloyd", params)
        out.append(time.perf_counter() - t0)
    return out


@pytest.mark.slow
def test_padded_latency_does_not_depend_on_n():
    """n and 2n private rows (DP-Lloyd, T = 40), measured in pairs run back to back (in a random
    order) so that a loaded machine's slow spells hit both members of a pair: without padding
    the 2n member is the slower one (the audit measured ×1.94; Wilcoxon signed-rank p < 0.01);
    with a public deadline that the fit meets both answer at it, so the paired differences are
    centred on zero (p > 0.002, medians within 10 ms). A door that answered as soon as it
    finished (no padding) fails the second part (12 pairs all one way: p ≈ 5e-4); the first part
    shows the test has the power to see it.

    The deadline is set well above the slowest fit seen, as a curator's deadline has a safety
    factor: a fit still running at the deadline holds the interpreter when the door wakes up, so
    on a loaded CI machine (2n close to a fixed 1.5 s deadline) the 2n releases answered a few ms
    later (unpaired Mann–Whitney p = 0.005). A pair with a fit past the deadline (⊥, answered at
    it: tested below) is left out of the padded comparison; at least 8 of 12 must remain."""
    from scipy.stats import wilcoxon

    from dpcore.release.timing import Deadline

    # large enough that the fit dominates the door's own overhead and a loaded machine's jitter
    # (DP-Lloyd got fast: 100k vs 200k rows at T = 10 both took ~10 ms)
    n = 500_000
    params = {"n_clusters": 5, "epsilon": 1.0, "n_iter": 40}
    small_desc = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=n)
    tables = {rows: _table(rows) for rows in (n, 2 * n)}

    def doors(deadline):
        return {rows: ReleaseDoor(t, small_desc, PrivacyLedger(PureDP(1e6)), deadline=deadline)
                for rows, t in tables.items()}

    bare = doors(None)
    for rows in tables:  # compiles the kernels
        _latencies(bare[rows], params, 1)
    seconds = min(6.0, max(1.5, 3.0 * max(_latencies(bare[2 * n], params, 2))))
    pad = doors(Deadline(seconds=seconds))
    order = np.random.default_rng(0)
    diffs: dict = {"bare": [], "pad": []}
    times: dict = {(kind, rows): [] for kind in diffs for rows in tables}
    for _ in range(12):
        for kind, door in (("bare", bare), ("pad", pad)):
            pair, late = {}, False
            for rows in ([n, 2 * n] if order.random() < 0.5 else [2 * n, n]):
                t0 = time.perf_counter()
                late |= door[rows].release("dplloyd", params).failed
                pair[rows] = time.perf_counter() - t0
            assert min(pair.values()) >= (seconds if kind == "pad" else 0.0)  # never early
            if not late:
                diffs[kind].append(pair[2 * n] - pair[n])
                for rows in tables:
                    times[(kind, rows)].append(pair[rows])
    p_bare = wilcoxon(diffs["bare"]).pvalue
    assert p_bare < 0.01, f"the unpadded door's latency should track n (p = {p_bare:.3g})"
    assert len(diffs["pad"]) >= 8, (f"{12 - len(diffs['pad'])} of 12 padded pairs had a fit past "
                                    f"the {seconds:.2f} s deadline: the machine is too loaded")
    a, b = times[("pad", n)], times[("pad", 2 * n)]
    p_pad = wilcoxon(diffs["pad"]).pvalue
    assert p_pad > 0.002, f"padded latencies differ between n and 2n (p = {p_pad:.3g})"
    assert abs(np.median(a) - np.median(b)) < 0.01


def test_a_release_slower_than_its_deadline_is_bottom_charged_and_answers_on_time():
    """A computation still running at the deadline is ⊥ (charged before computing) and the door
    answers at the deadline, not when the computation ends (a door that waited for it would leak
    its time; one that refunded it would make slowness free)."""
    import threading

    from dpcore.release.timing import Deadline

    def target(X, *, epsilon: float, rng=None):  # signature only
        raise NotImplementedError

    def run(X, rng, *, epsilon):
        if threading.current_thread().name == "dpcore-padded-release":  # the private run only
            time.sleep(1.5)
        return {"value": np.zeros(2)}, PureDP(epsilon)

    register(Mechanism("toy_slow", target, run, "test only"), replace=True)
    try:
        door = ReleaseDoor(_table(), DESC, PrivacyLedger(PureDP(5.0)),
                           deadline=Deadline(seconds=0.3))
        t0 = time.perf_counter()
        rel = door.release("toy_slow", {"epsilon": 0.5})
        took = time.perf_counter() - t0
    finally:
        MECHANISMS.pop("toy_slow", None)
    assert rel.failed and rel.message == FAILED and len(door.ledger) == 1
    assert 0.3 <= took < 1.0, took


def test_the_deadline_is_public_and_checked():
    """The estimate-based deadline reads the registry's cost model at the public n, d, k only
    (the same for any two tables of one description), grows with n, and bad settings are a clear
    error."""
    from dpcore.release.timing import Deadline

    d = Deadline()
    small = d.for_releases([("dplloyd", {"n_clusters": 5})], n=10_000, d=2)
    big = d.for_releases([("dplloyd", {"n_clusters": 5})], n=1_000_000, d=2)
    assert d.minimum <= small < big
    assert Deadline(seconds=2.0).for_releases([("dplloyd", {})], n=10**9, d=50) == 2.0
    for bad in (0, -1.0, float("nan"), "1"):
        with pytest.raises(ValueError, match="deadline seconds must be"):
            Deadline(seconds=bad)
