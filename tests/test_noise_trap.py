"""The noise trap (issue 21 item 6, issue 22 item 3): no release draws DP noise outside the
defended samplers of :mod:`dpcore.privacy.noise`.

Every mechanism of the run-configuration table (``dpcore.release.runconfig.MECHANISMS``: a newly
registered one is trapped without editing this file) is released through the door at its defaults
on a small table, with every sampling method of :class:`numpy.random.Generator` wrapped. Each call
made while the door computes is classified by :func:`dpcore.privacy.noise.draw_site`: a defended
sampler, a selection sampler (a discrete choice) or registered public randomness (row sampling,
random directions, initial centres, post-processing seeds; noise.py's module docstring states the
rule). Anything else is raw noise, and the test fails naming the mechanism, the method, the call
site and how many calls and values it made.

How the trap sees every draw: the door's randomness (``door._entropy``) and every Generator that
``numpy.random.default_rng`` makes during the test (``as_generator``, child generators) are
instances of a subclass whose sampling methods record their caller; ``spawn`` hands out trapped
children; draws made through SciPy or scikit-learn with such a generator pass through the same
methods. The legacy global-state functions of ``numpy.random`` and of :mod:`random` are recorded
whenever they are called during a release (dpcore never uses them). The trap is armed only while
the door computes on the private rows: its dry run on the public proxy is not a release.
"""

from __future__ import annotations

import importlib
import random
import sys
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from strictness import require

import dpcore.release.door as door_mod
from dpcore.privacy import draw_sites, noise
from dpcore.privacy.guarantees import PrivacyLedger, RandomDP
from dpcore.release.door import ReleaseDoor
from dpcore.release.runconfig import MECHANISMS, UNAVAILABLE, Mechanism, register
from dpcore.release.schema import PublicDescription

ROOT = Path(__file__).resolve().parents[1]
N = 600
DESC = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=N)
R = float(DESC.radius)

#: Public parameter values by name, for the required parameters of any mechanism.
GENERIC = {"n_clusters": 2, "epsilon": 1.0, "delta": 1e-6, "rho": 0.5, "statistic": "mean"}
#: What a mechanism needs beyond GENERIC to run on the small table (public values only).
SPECIFIC: dict[str, dict] = {
    # zCDP FriendlyCore: enough tuples per part at n = 600 needs a large ρ
    "friendlycore_kmeans": {"rho": 4.0, "delta": 1e-6, "t": 250},
    # its ``radius`` is the pairwise-distance bound (the ball's diameter), not filled by the door
    "friendly_mean": {"radius": 2.0 * R, "epsilon": 8.0},
    "kv18_mean": {"radius": R},  # not filled by the door (fill_radius=False)
    "noisy_average": {"epsilon": 0.3},  # NoisyAVG is proven only for ε ≤ 1/3
    "sensitivity": {"gamma": 0.1},  # the sampler needs a target confidence (or m)
    "fc_covariance": {"t": 10, "epsilon": 1.0},  # 600 rows, 10 parts: ⊥ after n̂ and the filter
}
#: Non-default paths that draw differently (a mechanism missing from the table is left out).
#: FriendlyCore's ``oracle="sklearn"`` is left out for time (250 scikit-learn fits, ≈ 20 s): its
#: one draw is a registered seed, which test_registered_draw_sites... checks like every site.
VARIANTS: list[tuple[str, dict]] = [
    ("dpkmeans", {"seeding": "moments"}),
    ("dpkmeans", {"seeding": "maxcover", "delta": 1e-6}),
    ("dpkmeans", {"sampler": "privacy"}),
    ("dplloyd", {"sampler": "uniform", "sample_size": 300}),
    ("dplloyd", {"sampler": "privacy"}),
    ("friendlycore_kmeans", {"oracle": "pca"}),
    ("friendly_mean", {"sample_rate": 0.5}),
    ("maxcover_kmeans", {"sampler": "lazy"}),
    ("maxcover_kmeans", {"sampler": "incidence"}),
    ("maxcover_kmeans", {"preset": "recommended"}),
    ("balcan17_kmeans", {"recovery": "laplace"}),
    ("sensitivity", {"mechanism": "gaussian", "delta": 1e-6}),
    ("sensitivity", {"statistic": "median"}),
]

_SAMPLERS = tuple(sorted(n for n in dir(np.random.Generator)
                         if not n.startswith("_") and n not in ("bit_generator", "spawn")))
_NUMPY_GLOBAL = tuple(sorted(n for n in dir(np.random.RandomState)
                             if not n.startswith("_") and callable(getattr(np.random, n, None))))
_PY_GLOBAL = ("betavariate", "choice", "choices", "expovariate", "gammavariate", "gauss",
              "getrandbits", "lognormvariate", "normalvariate", "paretovariate", "randbytes",
              "randint", "random", "randrange", "sample", "shuffle", "triangular", "uniform",
              "vonmisesvariate", "weibullvariate")


def _raw_table() -> defaultdict:
    return defaultdict(lambda: [0, 0])


@dataclass
class TrapLog:
    armed: bool = False
    #: (method, call site) -> [calls, values], for the draws draw_site does not allow
    raw: dict[tuple[str, str], list[int]] = field(default_factory=_raw_table)
    plans: list = field(default_factory=list)
    #: (kind, call site) -> calls, for the draws draw_site allows
    allowed: dict[tuple[str, str], int] = field(default_factory=lambda: defaultdict(int))

    def record(self, method: str, frame, values: int) -> None:
        entry = self.raw[(method, _site(frame))]
        entry[0] += 1
        entry[1] += values

    def report(self) -> str:
        return "; ".join(f"{method}: {calls} call(s), {values} value(s) at {site}"
                         for (method, site), (calls, values) in sorted(self.raw.items()))


LOG = TrapLog()


def _site(frame) -> str:
    """The frame that decides (as draw_site walks: dpcore code or a registered site)."""
    f = frame
    while f is not None:
        code = f.f_code
        if code in draw_sites.SITES or code.co_filename.startswith(draw_sites.PACKAGE_DIR):
            break
        f = f.f_back
    f = f or frame
    try:
        path = Path(f.f_code.co_filename).resolve().relative_to(ROOT)
    except ValueError:
        path = Path(f.f_code.co_filename)
    return f"{path}:{f.f_lineno} ({f.f_code.co_name})"


def _size(out, args) -> int:
    return int(np.size(out if out is not None else (args[0] if args else 0)))


def _trapped(name: str):
    base = getattr(np.random.Generator, name)

    def method(self, *args, **kwargs):
        out = base(self, *args, **kwargs)
        if LOG.armed:
            frame = sys._getframe(1)
            site = noise.draw_site(frame)
            if site is None:
                LOG.record(f"Generator.{name}", frame, _size(out, args))
            else:
                LOG.allowed[(site[0], _site(frame))] += 1
        return out

    method.__name__ = name
    return method


def _spawn(self, n_children):
    return [TrapGenerator(child.bit_generator)
            for child in np.random.Generator.spawn(self, n_children)]


TrapGenerator = type("TrapGenerator", (np.random.Generator,),
                     {**{name: _trapped(name) for name in _SAMPLERS}, "spawn": _spawn})
_REAL_DEFAULT_RNG = np.random.default_rng


def _trap_default_rng(seed=None):
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, np.random.BitGenerator):
        return TrapGenerator(seed)
    return TrapGenerator(np.random.PCG64(seed))


def _global(module, prefix: str, name: str):
    real = getattr(module, name)

    def fn(*args, **kwargs):
        out = real(*args, **kwargs)
        if LOG.armed:  # the global state is never an allowed source of randomness in a release
            LOG.record(f"{prefix}.{name} (global state)", sys._getframe(1), _size(out, args))
        return out

    return fn


@pytest.fixture
def trap(monkeypatch):
    """Wrap the Generator's sampling methods, arm them while the door computes; yields the log."""
    LOG.armed, LOG.raw, LOG.plans = False, _raw_table(), []
    LOG.allowed = defaultdict(int)
    monkeypatch.setattr(np.random, "default_rng", _trap_default_rng)
    monkeypatch.setattr(door_mod, "_entropy", lambda: TrapGenerator(np.random.PCG64()))
    for name in _NUMPY_GLOBAL:
        monkeypatch.setattr(np.random, name, _global(np.random, "numpy.random", name))
    for name in _PY_GLOBAL:
        monkeypatch.setattr(random, name, _global(random, "random", name))
    real_compute = ReleaseDoor._compute

    def armed(self, plan):
        LOG.plans.append(plan)
        LOG.armed = True
        try:
            return real_compute(self, plan)
        finally:
            LOG.armed = False

    monkeypatch.setattr(ReleaseDoor, "_compute", armed)
    yield LOG
    LOG.armed = False


def _table() -> pd.DataFrame:
    gen = _REAL_DEFAULT_RNG(2024)
    X = np.vstack([gen.normal((-0.5, -0.4), 0.12, (N // 2, 2)),
                   gen.normal((0.5, 0.4), 0.12, (N - N // 2, 2))])
    return pd.DataFrame(np.clip(X, -1, 1), columns=["a", "b"])


def default_params(name: str) -> dict:
    """The mechanism's required parameters from GENERIC and SPECIFIC; everything else default."""
    mech = MECHANISMS[name]
    accepted = mech.parameters()
    params = {k: GENERIC[k] for k in mech.required() if k in GENERIC}
    if "n" in accepted:
        params["n"] = N  # the declared n (the door fills ``n_public`` only)
    params.update(SPECIFIC.get(name, {}))
    if not {"epsilon", "rho"} & params.keys():
        budget = "epsilon" if "epsilon" in accepted else "rho"
        if budget in accepted:
            params[budget] = GENERIC[budget]
    missing = [k for k in mech.required()
               if k not in params and not (k == "radius" and mech.fill_radius)]
    assert not missing, f"{name}: give public values for {missing} in SPECIFIC"
    return params


def trap_release(name: str, params: dict, log: TrapLog):
    """Release ``name`` through the door under the armed trap; fail if the release failed."""
    door = ReleaseDoor(_table(), DESC, PrivacyLedger(RandomDP(1e3, 0.5, 0.5)))
    rel = door.release(name, params)
    if rel.failed:  # say why: the same run on the private rows, outside the door
        plan = log.plans[-1]
        try:
            with noise.defended_noise():
                MECHANISMS[name].run(door._X, _REAL_DEFAULT_RNG(0), **plan.params)
            why = "the guarantee differed from the planned one"
        except Exception as exc:
            why = f"{type(exc).__name__}: {exc}"
        pytest.fail(f"{name} {params} released ⊥ through the door ({why})")
    return rel


def _check(name: str, params: dict, log: TrapLog) -> None:
    trap_release(name, params, log)
    assert not log.raw, (f"{name} {params} draws DP noise outside the defended samplers of "
                         f"dpcore.privacy.noise: {log.report()}")
    # The trap must have seen the release's noise, else it was blind to this mechanism's draws.
    assert any(kind in ("defended", "selection") for kind, _ in log.allowed), \
        f"{name} {params}: the trap saw no noise draw at all"


def test_every_mechanism_is_available_to_the_trap():
    """A mechanism whose module fails to import leaves the table silently (runconfig.UNAVAILABLE):
    the trap would not see it. Skipped on a clone missing an optional dependency, failed in CI."""
    require(not UNAVAILABLE, f"mechanisms not available, so not trapped: {UNAVAILABLE}")


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_no_raw_noise_in_a_release_at_defaults(name, trap):
    _check(name, default_params(name), trap)


@pytest.mark.parametrize(("name", "extra"), [v for v in VARIANTS if v[0] in MECHANISMS],
                         ids=lambda v: v if isinstance(v, str) else ",".join(map(str, v.values())))
def test_no_raw_noise_on_other_paths(name, extra, trap):
    _check(name, default_params(name) | extra, trap)


# ------------------------------------------------------------------ the trap's power


def test_trap_catches_a_raw_laplace_in_dp_lloyd(trap, monkeypatch):
    """DP-Lloyd's count noise replaced by ``counts + rng.laplace(...)``: caught, named."""
    import dpcore.mechanisms.lloyd.algorithm as lloyd

    def raw_add_laplace(value, scale, *, sensitivity, rng=None):
        value = np.asarray(value, dtype=float)
        return value + rng.laplace(0.0, scale, value.shape)

    monkeypatch.setattr(lloyd, "add_laplace", raw_add_laplace)
    trap_release("dplloyd", default_params("dplloyd"), trap)
    methods = {m for m, _ in trap.raw}
    sites = {s for _, s in trap.raw}
    assert methods == {"Generator.laplace"}, trap.report()
    assert all(s.startswith("dpcore/mechanisms/lloyd/algorithm.py") for s in sites), sites


def test_trap_catches_the_lsh_baselines_former_raw_noise(trap, monkeypatch):
    """The LSH baseline as it was before the trap: numpy geometric differences on the counts and
    Generator.normal on the leaf sums, inside the release. Both are caught, at their call site."""
    import math

    import dpcore.mechanisms.baselines.lsh_clustering as lsh

    def geometric_counts(value, a, *, rng=None):
        value = np.asarray(value, dtype=float)
        p = -math.expm1(-a)
        size = value.shape if value.ndim else None
        return value + (rng.geometric(p, size=size) - rng.geometric(p, size=size))

    def normal_sums(value, sigma, *, sensitivity, rng=None):
        return value + rng.normal(scale=sigma, size=np.shape(value))

    monkeypatch.setattr(lsh, "add_discrete_laplace", geometric_counts)
    monkeypatch.setattr(lsh, "add_gaussian", normal_sums)
    trap_release("lsh_clustering", default_params("lsh_clustering"), trap)
    assert {m for m, _ in trap.raw} == {"Generator.geometric", "Generator.normal"}, trap.report()
    assert all("lsh_clustering.py" in site for _, site in trap.raw), trap.report()


@pytest.fixture
def toy(monkeypatch):
    """Register a throw-away mechanism whose run the test chooses; removed afterwards."""
    holder = {}

    def target(X, *, epsilon: float, radius: float, rng=None):  # signature only
        raise NotImplementedError

    def run(X, rng, *, epsilon, radius):
        from dpcore.privacy.guarantees import PureDP

        return {"value": holder["draw"](X, rng)}, PureDP(epsilon)

    register(Mechanism("toy_trap", target, run, "test only"), replace=True)
    yield holder
    MECHANISMS.pop("toy_trap", None)


def test_trap_sees_draws_through_libraries_children_and_global_state(trap, toy):
    from scipy import stats

    def draw(X, rng):
        out = stats.laplace.rvs(size=2, random_state=rng)  # through SciPy
        out = out + rng.spawn(1)[0].normal(size=2)  # a child generator
        child = np.random.default_rng(int(rng.integers(2**32)))  # a new generator, seeded
        out = out + child.exponential(size=2)
        out = out + np.random.laplace(size=2) + random.gauss(0.0, 1.0)  # noqa: NPY002
        with ThreadPoolExecutor(1) as pool:  # a worker thread does not inherit the defence
            snapped = pool.submit(noise.add_l2_exponential, X[:1], 1.0, sensitivity=1.0, rng=rng)
            out = out + snapped.result().sum()
        return out

    toy["draw"] = draw
    trap_release("toy_trap", {"epsilon": 0.5}, trap)
    assert {m for m, _ in trap.raw} == {
        "Generator.laplace", "Generator.normal", "Generator.integers", "Generator.exponential",
        "Generator.standard_normal", "Generator.gamma", "numpy.random.laplace (global state)",
        "random.gauss (global state)"}, trap.report()


def test_trap_allows_defended_selection_and_public_draws(trap, toy):
    from dpcore.mechanisms.maxcover.grid import jl_matrix

    def draw(X, rng):
        J = jl_matrix(3, 2, rng)  # public randomness
        pick = noise.exponential_mechanism(np.arange(3.0), 1.0, 1.0, rng=rng)  # selection
        v = noise.add_laplace(X.sum(axis=0), 1.0, sensitivity=1.0, rng=rng)  # defended
        w = noise.add_l2_exponential(X[:2], 1.0, sensitivity=1.0, rng=rng)  # defended
        return v + J[0, :2] + pick + w.sum(axis=0)

    toy["draw"] = draw
    trap_release("toy_trap", {"epsilon": 0.5}, trap)
    assert not trap.raw, trap.report()


def test_draw_site_rule():
    from dpcore.mechanisms.maxcover.grid import jl_matrix

    assert noise.draw_site(None) is None
    here = sys._getframe()
    assert noise.draw_site(here) is None  # test code is neither dpcore nor registered
    assert draw_sites.SITES[jl_matrix.__code__][0] == "public"
    with pytest.raises(ValueError, match="reason"):
        noise.public_randomness("  ")
    # the bare float samplers are never an allowed site, not even inside the defence
    for fn in (noise.laplace, noise.gaussian, noise.sample_l2_exponential):
        assert fn.__code__ not in draw_sites.SITES and fn.__code__ not in draw_sites.DEFENDED


def test_registered_draw_sites_are_small_named_and_give_a_reason():
    """The rule of noise.py's docstring: a registered site is a small function of dpcore that
    states why its draws are not noise (a big block cannot be blessed wholesale)."""
    for module in ("dpcore.mechanisms.baselines", "dpcore.mechanisms.sensitivity.population"):
        importlib.import_module(module)  # every registration runs on import

    assert len(draw_sites.SITES) >= 20
    for code, (kind, reason) in draw_sites.SITES.items():
        where = f"{code.co_filename}:{code.co_firstlineno} {code.co_name}"
        assert kind in ("public", "selection"), where
        assert len(reason) >= 20, where
        assert code.co_filename.startswith(draw_sites.PACKAGE_DIR), where
        assert code.co_name != "<lambda>", where
        lines = [ln for _, _, ln in code.co_lines() if ln is not None]
        assert max(lines) - code.co_firstlineno <= 30, f"{where} is too long to register whole"
