"""The registry walk (issue 21): every row of dpcore.release.registry is released through the
door on each bundled data set, exported, re-run by the CLI to the same output, drawn in its own
colour and costed within 3× of its measured time. A mechanism added to the table without
working end to end fails here, not in front of a user.

The budget is ε = 3 (δ = 1e-6, k = 5): the smallest ε of the dashboard's grid at which every
registered mechanism works on the bundled sets (FriendlyCore's tuple core needs t ≥ 14,865 parts
at ε = 1 and 2, i.e. n ≥ 74k; at ε = 3 it needs ~3k, and cities has 32,847 rows).
"""

from __future__ import annotations

import json
import time
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpcore.app.plots import algorithm_style
from dpcore.app.sweeps import clustering_algorithms, fit_algorithm
from dpcore.cli import main as cli_main
from dpcore.data.datasets import SAMPLE_DATASETS, load_sample
from dpcore.privacy.guarantees import ZCDP, ApproxDP, PrivacyLedger, PureDP, RandomDP
from dpcore.release import registry
from dpcore.release.config_schema import make_config
from dpcore.release.door import ReleaseDoor
from dpcore.release.registry import ENTRIES, MECHANISMS, PublicInputs
from dpcore.release.runconfig import run_config
from dpcore.release.schema import PublicDescription

EPS, DELTA, K = 3.0, 1e-6, 5
#: Rows whose fit on the bundled sets takes tens of seconds (FriendlyCore's friend counting is
#: quadratic in the part size, and the door's dry runs on the proxy repeat it; issue 23 makes
#: it sub-quadratic): released on the smaller set only, to keep the suite within its budget.
HEAVY = {"friendlycore_kmeans", "friendly_mean"}
BOTTOM_AT_DEFAULTS = {"fc_covariance"}  # needs ~10⁶ rows (FriendlyCore App. A): ⊥ on these sets
SMALLEST = min(SAMPLE_DATASETS, key=lambda name: len(load_sample(name)))
KINDS = {"pure": (PureDP,), "approx": (PureDP, ApproxDP), "zcdp": (ZCDP,),
         "random": (RandomDP,)}


def _door(name: str) -> tuple[ReleaseDoor, PublicDescription]:
    ds = SAMPLE_DATASETS[name]
    lo, hi = zip(*ds.bounds, strict=True)
    df = load_sample(name)
    desc = PublicDescription(list(ds.columns), lower=lo, upper=hi, n=len(df))
    # a random-DP budget admits every kind (a curator keeps DP and random DP apart; here the
    # point is that each row releases)
    return ReleaseDoor(df, desc, PrivacyLedger(RandomDP(1e3, 0.5, 0.5))), desc


def _inputs(desc: PublicDescription) -> PublicInputs:
    return PublicInputs(K, EPS, DELTA, float(desc.radius), int(desc.n))


def test_the_table_is_consistent():
    keys = [e.key for e in ENTRIES]
    assert len(keys) == len(set(keys))
    for e in ENTRIES:
        if e.releasable:
            assert e.key in MECHANISMS or e.key in registry.UNAVAILABLE, e.key
            assert e.guarantee != "none"
        # every public input a row names is a parameter its target accepts
        if e.key in MECHANISMS:
            accepted = MECHANISMS[e.key].parameters()
            assert set(e.public_inputs()) <= set(accepted), e.key
    # nothing releasable is left out of MECHANISMS but by an import failure
    assert set(MECHANISMS) | set(registry.UNAVAILABLE) == {e.key for e in ENTRIES
                                                           if e.releasable}


def test_every_variant_is_drawn_in_its_own_colour_and_marker():
    styles = {v.label: algorithm_style(v.label) for _, v in registry.variants("clustering")}
    colours = [s.color for s in styles.values()]
    assert len(set(colours)) == len(colours), styles
    # the style is the registry row's, not a hash fallback
    for _, v in registry.variants("clustering"):
        assert styles[v.label].symbol == v.symbol


@pytest.mark.slow
@pytest.mark.parametrize("dataset", sorted(SAMPLE_DATASETS))
def test_every_mechanism_is_released_through_the_door_at_its_defaults(dataset):
    door, desc = _door(dataset)
    for key in sorted(MECHANISMS):
        if key in HEAVY and dataset != SMALLEST:
            continue
        e = registry.entry(key)
        params = e.defaults(_inputs(desc))
        rel = door.release(key, params)
        assert rel.output is not None, f"{key} released ⊥ on {dataset}"
        assert key in BOTTOM_AT_DEFAULTS or all(v is not None for v in rel.output.values()), key
        assert isinstance(rel.guarantee, KINDS[e.guarantee]), (key, rel.guarantee)


@pytest.mark.slow
def test_every_mechanism_exports_and_the_cli_reruns_it_to_the_same_output(tmp_path):
    door, desc = _door(SMALLEST)
    ds = SAMPLE_DATASETS[SMALLEST]
    data = {"source": SMALLEST, "columns": list(ds.columns), "radius": float(desc.radius),
            "center": list(desc.center)}
    for key in sorted(MECHANISMS):
        params = door._plan(key, registry.entry(key).defaults(_inputs(desc)), None).params
        cfg = make_config(key, params, data, seed=11)
        path = tmp_path / f"{key}.json"
        path.write_text(json.dumps(cfg))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            py = run_config(json.loads(path.read_text()))
            out = tmp_path / f"{key}_out.json"
            assert cli_main(["run", "--config", str(path), "--out", str(out)]) == 0, key
        cli = json.loads(out.read_text())
        for name, value in py.released.items():
            assert value is not None or key in BOTTOM_AT_DEFAULTS, key
            np.testing.assert_array_equal(np.asarray(cli["released"][name], dtype=float),
                                          np.asarray(value, dtype=float), err_msg=key)


@pytest.mark.slow
def test_every_clustering_variant_costs_within_3x_of_its_measured_time():
    """The cost model decides whether a page runs at once or behind a Run button (and the
    wait it announces). Each variant: the min of two fits. The model is for an idle machine;
    under load every fit slows by about the same factor L (the median of measured/estimated),
    so each variant must lie within 3× of L × its estimate (fits under 0.1 s: 0.1 s of slack).
    A row with a wrong model (DPKMeans estimated at 38.6× DP-Lloyd, issue 21) fails."""
    from threadpoolctl import threadpool_limits

    from dpcore.core.kernels import warm_up

    warm_up()
    algorithms = clustering_algorithms()
    rows = []
    # one BLAS/OpenMP thread: on a shared machine scikit-learn's OpenMP threads are slowed far
    # more than the rest by oversubscription (0.05 s idle, 1.2 s at load 7 on cities)
    limit = threadpool_limits(1)
    for name in sorted(SAMPLE_DATASETS):
        _, desc = _door(name)
        X = desc.prepare(load_sample(name))
        n, d = X.shape
        for _, v in registry.variants("clustering"):
            alg = algorithms.get(v.label)
            if alg is None:  # an optional library missing here (diffprivlib)
                continue
            times = []
            for seed in range(2):
                t0 = time.perf_counter()
                out = fit_algorithm(alg, X, k=K, epsilon=EPS, delta=DELTA,
                                    radius=float(desc.radius), seed=seed)
                times.append(time.perf_counter() - t0)
                assert out.error is None, (v.label, name, out.error)
            rows.append((f"{v.label} on {name}", min(times), v.seconds(n, d, K)))
    limit.restore_original_limits()
    load = max(1.0, float(np.median([t / est for _, t, est in rows])))
    bad = [f"{what}: measured {t:.3f} s, estimated {est:.3f} s (load factor {load:.2f})"
           for what, t, est in rows
           if not load * est / 3 - 0.1 * load <= t <= 3 * load * est + 0.1 * load]
    assert not bad, "\n".join(bad)


# ---- privacy maps (issue 22, item 2) -----------------------------------------------------------

# FriendlyCore k-means plans at k = 3, ε = 8 from n ≥ 1,644 (at 600 the door refused it, and the
# defaults test compared nothing for it)
MAP_N = 2_000
MAP_DESC = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=MAP_N)
#: Public switches that change a release's accounting (each row's other parameters are its
#: defaults at the drawn ε, δ, k); a key missing here is drawn at its defaults only.
SWITCHES: dict[str, list[dict]] = {
    "dpkmeans": [{}, {"seeding": "moments"}, {"seeding": "maxcover", "delta": 1e-6},
                 {"n_iter": 4, "count_share": 0.3}, {"sampler": "uniform", "sample_size": 300},
                 {"sampler": "privacy"}],
    "dplloyd": [{}, {"n_iter": 3}, {"count_share": 0.5},
                {"sampler": "uniform", "sample_size": 300}, {"sampler": "privacy"}],
    "maxcover_kmeans": [{}, {"preset": "paper"}, {"preset": "paper", "lloyd_rounds": 2}],
    "friendly_mean": [{}, {"sample_rate": 0.5}],
    "balcan17_kmeans": [{}, {"recovery": "laplace"}],
    "sensitivity": [{}, {"gamma": 0.05}, {"m": 400, "gamma": None},
                    {"mechanism": "gaussian", "delta": 1e-6}],
}


def _map_door() -> ReleaseDoor:
    gen = np.random.default_rng(3)
    X = np.clip(np.vstack([gen.normal(-0.5, 0.15, (MAP_N // 2, 2)),
                           gen.normal(0.5, 0.15, (MAP_N - MAP_N // 2, 2))]), -1, 1)
    import pandas as pd

    return ReleaseDoor(pd.DataFrame(X, columns=["a", "b"]), MAP_DESC,
                       PrivacyLedger(RandomDP(1e6, 0.5, 0.9)))


def check_map_against_fit(key: str, eps: float, delta: float, k: int, switch: dict) -> bool:
    """Plan the release from the registry row's privacy map (public inputs only), fit the real
    mechanism with the planned parameters, and compare: the guarantee the estimator reports must
    equal the map's, in the same kind; where the fit's parts are known, the map must give the
    same parts (a map that dropped them would charge the basic total where the tight one is
    due; a map with different parts would mis-charge the ledger's tight total)."""
    from dpcore.core.errors import ReleaseRefused

    door = _map_door()
    params = registry.entry(key).defaults(PublicInputs(k, eps, delta, float(MAP_DESC.radius),
                                                       MAP_N)) | switch
    try:
        plan = door._plan(key, params, None)
    except ReleaseRefused:  # refused from public inputs (e.g. too few FriendlyCore tuples)
        return False  # nothing compared: the callers make sure that is not every case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, g, parts = MECHANISMS[key].run_accounted(door._X, np.random.default_rng(0),
                                                    **plan.params)
    # equal up to the last bit of rounding, and never below the fit (the door yields ⊥ when a
    # fit delivers more than the map charged)
    assert type(g) is type(plan.guarantee), f"{key} {switch}: map {plan.guarantee}, fit {g}"
    for f in ("epsilon", "delta", "rho", "gamma"):
        if hasattr(g, f):
            mapped, fitted = getattr(plan.guarantee, f), getattr(g, f)
            assert fitted <= mapped and mapped == pytest.approx(fitted, rel=1e-12, abs=0), \
                f"{key} {switch}: map {plan.guarantee}, fit {g}"
    if parts is not None:
        assert plan.parts is not None and len(plan.parts) == len(parts), \
            f"{key} {switch}: map parts {plan.parts}, fit {parts}"
        for mapped, fitted in zip(plan.parts, parts, strict=True):
            assert type(mapped) is type(fitted) and all(
                getattr(mapped, f) == pytest.approx(getattr(fitted, f), rel=1e-12, abs=0)
                for f in ("epsilon", "delta", "rho") if hasattr(fitted, f)), \
                f"{key} {switch}: map parts {plan.parts}, fit {parts}"
    return True


@pytest.mark.parametrize("key", sorted(MECHANISMS))
def test_every_privacy_map_equals_the_fitted_guarantee_at_the_defaults(key):
    """Every registered mechanism has a privacy map, and at the row's defaults it is what a fit
    reports (a mechanism added without a map, or a map that drifted from the code, fails)."""
    assert registry.entry(key).privacy_map is not None, f"{key} has no privacy map"
    eps = 8.0 if key in HEAVY else 1.0
    checked = [check_map_against_fit(key, eps, 1e-6, 3, switch)
               for switch in SWITCHES.get(key, [{}])[:2]]
    assert all(checked), f"{key}: the door refused its own defaults, so nothing was compared"


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True)
@given(data=st.data(), key=st.sampled_from(sorted(MECHANISMS)),
       eps=st.sampled_from([0.2, 0.7, 1.0, 3.0, 8.0]), delta=st.sampled_from([1e-8, 1e-6]),
       k=st.integers(1, 6))
def test_privacy_maps_equal_the_fitted_guarantee_over_drawn_parameters(data, key, eps, delta,
                                                                       k):
    switch = data.draw(st.sampled_from(SWITCHES.get(key, [{}])))
    assume(check_map_against_fit(key, eps, delta, k, switch))  # a refused plan is no example


def test_planning_charges_the_map_in_milliseconds_without_the_rows(monkeypatch):
    """The door charges from the map: planning never computes on rows (the old dry run on a
    2000-row public proxy took ~77 s for FriendlyCore k-means at the cities set's n). Its only
    run is the public parameter check on an empty table; a plan that ran on rows, or took a
    second, fails here."""
    import pandas as pd

    from dpcore.core.errors import ReleaseRefused

    real = registry.Mechanism.run_accounted
    rows = []

    def spy(self, X, rng, **params):
        rows.append(X.shape[0])
        return real(self, X, rng, **params)

    monkeypatch.setattr(registry.Mechanism, "run_accounted", spy)
    n = 32_847  # the cities set's n, declared; the table itself is small
    desc = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=n)
    door = ReleaseDoor(pd.DataFrame(np.zeros((5, 2)), columns=["a", "b"]), desc,
                       PrivacyLedger(RandomDP(1e6, 0.5, 0.9)))
    for i, key in enumerate(sorted(MECHANISMS) * 2):  # round 1 imports (scikit-learn: 1.7 s)
        params = registry.entry(key).defaults(PublicInputs(5, 3.0, 1e-6, float(desc.radius), n))
        t0 = time.perf_counter()
        try:
            door._plan(key, params, None)
        except ReleaseRefused:  # a public refusal is fine
            pass
        took = time.perf_counter() - t0
        assert took < 1.0 or i < len(MECHANISMS), f"{key}: planning took {took:.2f} s"
    assert rows and set(rows) == {0}, rows
