"""The mechanism registry: every mechanism of dpcore declared once, in one table.

A row (:class:`Entry`) says what a mechanism is — its key, display name, the estimator or
function behind it and which of its outputs are released — and everything the rest of the
package needs to know about it: its parameters and which of them are *public inputs* (n, the
radius, the box) that the release door fills from the declared description, the kind of
guarantee it delivers, whether it may be released at all, the pages of the dashboard that show
it, and its dashboard variants (:class:`Variant`: a named configuration from public inputs, with
its colour, marker and cost model). The run configurations, the CLI (``dpcore list``), the
config schema, the release door, the sweeps, the plots' styles, the advice's cost estimates and
the dashboard's page list all read this table; ``tests/test_registry.py`` walks it, so a
mechanism added here is released, exported, re-run, drawn and costed — or a test says why not.

Adding a mechanism: write its module under :mod:`dpcore.mechanisms` (a scikit-learn estimator
with ``privacy_``, or a function returning its release and guarantee), declare its parameter
constraints (:mod:`dpcore.data.params`), and add one :class:`Entry` to :data:`ENTRIES`.

A row may say what a release is made of (``parts``, :mod:`dpcore.release.release_parts`), for
the ledger's tight total; parts that do not compose to exactly the reported guarantee are dropped.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.data.params import Param, constraints_of
from dpcore.privacy.guarantees import Part, parts_consistent
from dpcore.release.adapters import (
    RunFn,
    RunFullFn,
    _estimator_full,
    _function_full,
    estimator_runner,
    function_runner,
)
from dpcore.release.lazy_table import LazyTable
from dpcore.release.release_parts import (
    dpkmeans_parts,
    dplloyd_parts,
    friendly_mean_parts,
    maxcover_parts,
)

__all__ = [
    "ENTRIES",
    "MECHANISMS",
    "UNAVAILABLE",
    "Entry",
    "Mechanism",
    "PublicInputs",
    "Variant",
    "entry",
    "estimator_runner",
    "function_runner",
    "get_mechanism",
    "importable",
    "mechanism_names",
    "page_available",
    "register",
    "variants",
]

#: Guarantee kinds a row may declare.
GUARANTEES = ("pure", "approx", "zcdp", "random", "none")


@dataclass(frozen=True)
class PublicInputs:
    """What a dashboard variant may build its parameters from: public values only.

    ``bounds``: the declared per-column box ``[lo, hi]`` in the centred coordinates the
    mechanisms see, when every column has public bounds (the public description's or a bundled
    sample's, never read off the data); None otherwise (a radius-only description).
    """

    k: int
    epsilon: float
    delta: float
    radius: float
    n: int
    bounds: tuple[Sequence[float], Sequence[float]] | None = None


@dataclass(frozen=True)
class Variant:
    """A named configuration of a mechanism, as the dashboard offers it.

    Parameters
    ----------
    label : str
        Display name, unique across the registry (legend, tables, URL state).
    params : callable
        :class:`PublicInputs` -> keyword parameters (``rng`` aside).
    color_key : str
        Key of :data:`dpcore.app.style.METHOD_COLORS` (the one colour table, shared with the
        reproduction reports).
    symbol : str
        Plotly marker symbol.
    seconds_per_unit : float
        Cost model: one fit takes about ``0.02 + seconds_per_unit · n · k · d`` seconds on this
        project's 2-core machine, idle (measured on the bundled sets at k = 5;
        ``tests/test_registry.py`` checks every variant within 3×, relative to the machine's
        current load).
    description : str
    cost : callable, optional
        ``(n, d, k, params) -> seconds`` for a mechanism whose work is not linear in n·k·d
        (FriendlyCore's t² tuple pairs); the release deadline (:mod:`dpcore.release.timing`)
        uses it with the release's parameters.
    """

    label: str
    params: Callable[[PublicInputs], dict[str, Any]]
    color_key: str
    symbol: str
    seconds_per_unit: float
    description: str = ""
    cost: Callable[[int, int, int, dict], float] | None = None

    def seconds(self, n: int, d: int, k: int, params: dict | None = None) -> float:
        """Estimated wall time of one fit on n rows, d columns, k clusters; with the release's
        ``params``, the row's own ``cost`` model where its work is not linear in n·k·d."""
        if self.cost is not None and params is not None:
            return self.cost(int(n), int(d), int(k), params)
        return 0.02 + self.seconds_per_unit * float(n) * max(int(k), 1) * max(int(d), 1)


@dataclass(frozen=True)
class Entry:
    """One mechanism (see the module docstring).

    Parameters
    ----------
    key : str
        Run-configuration key (``[a-z0-9_]``): ``dpcore run``, the door, saved configurations.
    name : str
        Display name.
    target : str
        ``"module:attribute"`` of the estimator class or function (imported lazily: a module
        that does not import makes the mechanism unavailable, with the reason).
    released : mapping
        Released output name -> estimator attribute or result field (only DP outputs).
    guarantee : str
        One of :data:`GUARANTEES`: the kind of ``privacy_`` it delivers ("none": a non-private
        reference, never released).
    releasable : bool
        Whether the door and run configurations may run it (False for references and for
        optional outside libraries whose noise dpcore does not control).
    task : str
        "clustering", "mean" or "statistic".
    pages : tuple of str
        Dashboard pages (their file stems) that show it.
    variants : tuple of Variant
        The dashboard's configurations of it (first: the default).
    description : str
        One line for ``dpcore list`` and the docs.
    kind : str
        "estimator" (``cls(**params, rng=rng).fit(X)``) or "function" (``f(X, **params,
        rng=rng)``).
    example : callable, optional
        :class:`PublicInputs` -> the parameters of a release at its defaults (default: the first
        variant's); ``tests/test_registry.py`` releases every row with them.
    needs_radius : bool, optional
        Whether the door refuses it without a declared radius (default: when the radius fills
        one of its parameters).
    parts : callable, optional
        Fitted estimator (or function result) -> the release's parts, or None when they are
        not known for this configuration (module docstring).
    """

    key: str
    name: str
    target: str
    released: Mapping[str, str]
    guarantee: str
    releasable: bool = True
    task: str = "clustering"
    pages: tuple[str, ...] = ()
    variants: tuple[Variant, ...] = ()
    description: str = ""
    kind: str = "estimator"
    example: Callable[[PublicInputs], dict[str, Any]] | None = None
    needs_radius: bool | None = None
    parts: Callable[[Any], Sequence[Part] | None] | None = None

    def __post_init__(self) -> None:
        if self.guarantee not in GUARANTEES:
            raise ValueError(f"{self.key}: guarantee must be one of {GUARANTEES}")
        if not self.key or not self.key.replace("_", "").isalnum():
            raise ValueError(f"mechanism key must be [a-z0-9_]+, got {self.key!r}")

    def load(self) -> Any:
        """The estimator class or function (imports its module)."""
        module, _, attr = self.target.partition(":")
        return getattr(importlib.import_module(module), attr)

    def constraints(self) -> dict[str, Param]:
        """The target's declared parameter constraints (:mod:`dpcore.data.params`)."""
        return constraints_of(self.load())

    def public_inputs(self) -> dict[str, str]:
        """Parameter -> the public input that fills it when unset (``"n"``, ``"radius"``,
        ``"bounds"``): the target's own declaration (``Param(public=...)``), so the row and the
        estimator cannot disagree."""
        return {name: c.public for name, c in self.constraints().items() if c.public}

    @property
    def fill_radius(self) -> bool:
        """Whether the declared radius fills the ``radius`` keyword (FriendlyCore's averaging
        calls its pairwise-distance threshold ``radius``: not a bound on ‖x‖)."""
        return self.public_inputs().get("radius") == "radius"

    @property
    def privacy_map(self) -> Callable[..., Any] | None:
        """The row's privacy map (:data:`dpcore.release.privacy_maps.MAPS`), None if none."""
        from dpcore.release.privacy_maps import MAPS

        return MAPS.get(self.key)

    def defaults(self, p: PublicInputs) -> dict[str, Any]:
        """Parameters of a release at the row's defaults, from public inputs only."""
        if self.example is not None:
            return self.example(p)
        if self.variants:
            return self.variants[0].params(p)
        raise ValueError(f"{self.key}: no variant and no example parameters")

    @property
    def requires_radius(self) -> bool:
        return self.fill_radius if self.needs_radius is None else self.needs_radius

    def runner(self) -> RunFn:
        target = self.load()
        if self.kind == "estimator":
            return estimator_runner(self.released)(target)
        return function_runner(self.released)(target)

    def full_runner(self) -> RunFullFn:
        """Like :meth:`runner`, and also returns the fitted estimator (or the result)."""
        full = _estimator_full if self.kind == "estimator" else _function_full
        return full(self.released, self.load())


@dataclass(frozen=True)
class Mechanism:
    """A registry row that imports here, ready to run (:data:`MECHANISMS`)."""

    name: str
    target: Callable[..., Any]
    run: RunFn
    description: str = ""
    fill_radius: bool = True
    entry: Entry | None = None

    @property
    def needs_radius(self) -> bool:
        """Whether a release needs a declared radius (the door refuses it otherwise)."""
        return self.entry.requires_radius if self.entry is not None else self.fill_radius

    def parameters(self) -> dict[str, inspect.Parameter]:
        """Keyword parameters the mechanism accepts (data and ``rng`` excluded)."""
        try:
            sig = inspect.signature(self.target)
        except (TypeError, ValueError):  # builtins without a signature: accept anything
            return {}
        params = list(sig.parameters.values())
        if not isinstance(self.target, type) and params and params[0].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            params = params[1:]  # the data argument of a function
        return {
            p.name: p
            for p in params
            if p.name != "rng"
            and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
        }

    def accepts_any_keyword(self) -> bool:
        try:
            sig = inspect.signature(self.target)
        except (TypeError, ValueError):
            return True
        return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values())

    def required(self) -> list[str]:
        """Parameters without a default (the user must give them)."""
        return [n for n, p in self.parameters().items() if p.default is inspect.Parameter.empty]

    def public_inputs(self) -> dict[str, str]:
        """Parameter -> public input (``n``, ``radius``, ``bounds``) that fills it."""
        if self.entry is not None:
            return self.entry.public_inputs()
        return {"radius": "radius"} if self.fill_radius else {}

    def run_accounted(self, X: np.ndarray, rng: np.random.Generator, **params: Any
                      ) -> tuple[dict[str, Any], Any, tuple[Part, ...] | None]:
        """``run`` and the release's parts (None: unknown, or not exactly its guarantee)."""
        if self.entry is None or self.entry.parts is None:
            released, guarantee = self.run(X, rng, **params)
            return released, guarantee, None
        released, guarantee, obj = self.entry.full_runner()(X, rng, **params)
        try:
            parts = self.entry.parts(obj)
        except (AttributeError, TypeError, ValueError):
            parts = None
        if not parts or not parts_consistent(tuple(parts), guarantee):
            return released, guarantee, None
        return released, guarantee, tuple(parts)


# ---- the table ---------------------------------------------------------------------------------

_CENTERS = {"centers": "cluster_centers_"}
_CLUSTER_PAGES = ("clustering", "utility")


def _coreset_size(n: int) -> int:
    # The paper's experiments sample a few percent of n; 10 % (≥ 200) keeps the noise moderate.
    return int(min(n, max(200, n // 10)))


def _dpkmeans_params(p: PublicInputs) -> dict[str, Any]:
    # The declared box when every column has one (issue 23.6): its clamping, noise and start
    # beat the enclosing ball's; the radius stays for descriptions without bounds. The door
    # fills ``bounds`` from its description the same way (BOUNDS is a public input).
    q = {"n_clusters": p.k, "epsilon": p.epsilon, "radius": p.radius, "n": p.n}
    if p.bounds is not None:
        q["bounds"] = [list(map(float, p.bounds[0])), list(map(float, p.bounds[1]))]
    return q


ENTRIES: tuple[Entry, ...] = (
    Entry(
        "dpkmeans", "DP k-means (recommended)", "dpcore.estimators.dpkmeans:DPKMeans", _CENTERS,
        "pure",
        pages=_CLUSTER_PAGES,
        variants=(Variant(
            "DP k-means (recommended)",
            _dpkmeans_params, "dpkmeans", "star-diamond", 2e-8,
            "DP-Lloyd with iterations and count/sum split chosen from ε, n, d and k "
            "(docs/dp_kmeans.md); beats the paper's fixed T = 10 at equal budget"),),
        description="recommended DP k-means: DP-Lloyd on the declared box or ball with the "
                    "iterations and count/sum split chosen from the budget; on a box it first "
                    "releases a ball inside it (a private centre and radius, 10 % of ε)",
        parts=dpkmeans_parts),
    Entry(
        "dplloyd", "DP-Lloyd", "dpcore.mechanisms.lloyd.estimator:DPLloyd", _CENTERS, "pure",
        pages=("importance", *_CLUSTER_PAGES, "tour"),
        variants=(
            Variant("DP-Lloyd",
                    lambda p: {"n_clusters": p.k, "epsilon": p.epsilon, "radius": p.radius,
                               "n_iter": 10},
                    "dplloyd", "x", 2e-8, "weighted DP-Lloyd on all points, T = 10 (paper 000, "
                                          "Alg. 2)"),
            Variant("DP-Lloyd + coreset sampling",
                    lambda p: {"n_clusters": p.k, "epsilon": p.epsilon, "radius": p.radius,
                               "n_iter": 10, "sampler": "coreset",
                               "sample_size": _coreset_size(p.n)},
                    "core", "star", 2e-8, "DP-Lloyd on a Poisson coreset sample of ~10 % "
                                          "(paper 000, Sec. 4)"),
            Variant("DP-Lloyd + privacy-constrained sampling",
                    lambda p: {"n_clusters": p.k, "epsilon": p.epsilon, "radius": p.radius,
                               "n_iter": 10, "sampler": "privacy"},
                    "opt", "diamond", 2e-8, "DP-Lloyd on q = 1/w from Alg. 1, 'sampling for "
                                            "free' noise (paper 000, Thm 10)"),
        ),
        description="weighted DP-Lloyd k-means, optionally importance-sampled (paper 000/001)",
        parts=dplloyd_parts),
    Entry(
        "maxcover_kmeans", "Max-cover k-means", "dpcore.mechanisms.maxcover:MaxCoverKMeans",
        _CENTERS, "approx",
        pages=_CLUSTER_PAGES,
        variants=(Variant(
            "Max-cover k-means",
            lambda p: {"n_clusters": p.k, "epsilon": p.epsilon, "delta": p.delta,
                       "radius": p.radius, "n_public": p.n},
            "maxcover", "cross", 8e-7,  # the linear-time incidence build (issue 23.4)
            "exponential-mechanism max cover on grids (paper 003) on 0.2 ε, then budget-aware "
            "DP-Lloyd from its partition"),),
        description="k-means by JL, grids and exponential-mechanism max cover (paper 003), then "
                    "budget-aware DP-Lloyd from its partition (preset='paper': the paper's "
                    "configuration)",
        parts=maxcover_parts),
    Entry(
        "friendlycore_kmeans", "FriendlyCore k-means",
        "dpcore.mechanisms.friendlycore:FriendlyCoreKMeans", _CENTERS, "approx",
        pages=("friendlycore", *_CLUSTER_PAGES),
        variants=(Variant(
            "FriendlyCore k-means",
            lambda p: {"n_clusters": p.k, "epsilon": p.epsilon, "delta": p.delta,
                       "radius": p.radius, "fallback": "dplloyd", "t": importlib.import_module(
                           "dpcore.mechanisms.friendlycore.planning").kmeans_plan(  # one rule
                           int(p.n), int(p.k), epsilon=p.epsilon, delta=p.delta).t},
            "FC_Clustering", "triangle-up", 1.2e-6,  # at the planned t (measured on the sets)
            "FC_Clustering with a DP-Lloyd fallback (paper 002, Sec. 5.2.5)",
            lambda n, d, k, q: importlib.import_module(  # t² tuple pairs: not linear in n
                "dpcore.mechanisms.friendlycore.planning").estimated_seconds(
                    n, d, k, int(q.get("t") or 0)),),),
        description="FriendlyCore k-means clustering (paper 002)"),
    Entry(
        "friendly_mean", "FriendlyCore mean", "dpcore.mechanisms.friendlycore:friendly_mean",
        {"mean": "estimate"}, "approx", kind="function", task="mean",
        pages=("friendlycore", "tour"),
        example=lambda p: {"epsilon": p.epsilon, "delta": p.delta, "radius": 2 * p.radius},
        description="FriendlyCore DP averaging (paper 002); params.radius is the "
                    "pairwise-distance bound",
        parts=friendly_mean_parts),
    Entry(
        "fc_covariance", "FriendlyCore covariance",
        "dpcore.mechanisms.friendlycore.covariance:fc_covariance", {"covariance": "estimate"},
        "approx", kind="function", task="statistic", pages=("friendlycore",),
        example=lambda p: {"epsilon": min(p.epsilon, 1.0), "delta": p.delta, "t": 10},
        description="FriendlyCore covariance estimation, no bound on ‖Σ‖ (paper 002, App. A)"),
    Entry(
        "noisy_average", "Noisy average (max-cover)", "dpcore.mechanisms.maxcover:noisy_average",
        {"mean": "center"}, "approx", kind="function",
        task="mean",  # NoisyAVG is proven (ε, δ)-DP for ε ≤ 1/3 only (Theorem 2.6)
        example=lambda p: {"epsilon": min(p.epsilon, 1 / 3), "delta": p.delta},
        description="private averaging of points in a ball (paper 003)"),
    Entry(
        "sensitivity", "Sensitivity sampler",
        "dpcore.release.sensitivity_release:sensitivity_release", {"value": "value"}, "random",
        kind="function", task="statistic", pages=("sensitivity",), needs_radius=True,
        example=lambda p: {"statistic": "median", "epsilon": p.epsilon,
                           "bounds": [-p.radius, p.radius], "gamma": 0.1},
        description="random DP release of a statistic via the sensitivity sampler (paper 004)"),
    Entry(
        "lsh_clustering", "LSH clustering (Google CK21)",
        "dpcore.mechanisms.baselines.lsh_clustering:LSHClustering", _CENTERS, "approx",
        pages=_CLUSTER_PAGES,
        variants=(Variant(
            "LSH clustering (Google CK21)",
            lambda p: {"n_clusters": p.k, "epsilon": p.epsilon, "delta": p.delta,
                       "radius": p.radius},
            "LSH_Clustering ε=2", "triangle-down", 2e-7,
            "private LSH prefix tree + k-means++ on its coreset (FriendlyCore's baseline, "
            "paper 002)"),),
        description="LSH_Clustering: private LSH prefix tree + k-means++ on its coreset (Google "
                    "CK21; FriendlyCore's baseline)"),
    Entry(
        "kv18_mean", "KV18 Gaussian mean", "dpcore.mechanisms.baselines.kv18:kv18_mean",
        {"mean": "estimate"}, "zcdp", kind="function", task="mean",
        example=lambda p: {"rho": p.epsilon ** 2 / 2, "sigma": p.radius / 10,
                           "radius": p.radius},
        description="KV18 Gaussian mean, coordinate-wise after a random rotation, ρ-zCDP "
                    "(FriendlyCore's Fig. 5(3) baseline)"),
    Entry(
        "balcan17_kmeans", "Balcan et al. 2017 (paper 003's baseline)",
        "dpcore.mechanisms.baselines.balcan17:Balcan17KMeans", _CENTERS, "approx",
        pages=_CLUSTER_PAGES,
        variants=(Variant(
            "Balcan et al. 2017 (paper 003's baseline)",
            lambda p: {"n_clusters": p.k, "epsilon": p.epsilon, "delta": p.delta,
                       "radius": p.radius, "n_public": p.n},
            "balcan", "hexagon", 8e-7,
            "private grid partitions + private local search + NoisyAVG and one DP Lloyd round "
            "(Balcan et al. ICML 2017, the max-cover paper's baseline)"),),
        description="Balcan et al. (ICML 2017): private partitions + private local search, "
                    "NoisyAVG recovery and one DP Lloyd round (paper 003's baseline)"),
    Entry(
        "diffprivlib_kmeans", "diffprivlib KMeans (reference)", "diffprivlib.models:KMeans",
        _CENTERS, "pure", releasable=False, pages=_CLUSTER_PAGES,
        variants=(Variant(
            "diffprivlib KMeans (reference)",
            lambda p: {"n_clusters": p.k, "epsilon": p.epsilon},
            "diffprivlib", "square", 1e-6, "IBM diffprivlib's DP k-means (optional extra)"),),
        description="IBM diffprivlib's DP k-means (an outside library: compared, never "
                    "released)"),
    Entry(
        "kmeans", "k-means (non-private)", "dpcore.estimators.lloyd_kmeans:LloydKMeans",
        _CENTERS, "none", releasable=False, pages=_CLUSTER_PAGES,
        variants=(Variant(
            "k-means (non-private)", lambda p: {"n_clusters": p.k, "n_init": 1},
            "lloyd", "circle-open", 1e-7,
            "Lloyd's k-means, one k-means++ seeding on a sample of ≤ 20,000 rows (stoppable): "
            "the non-private reference"),),
        description="Lloyd's k-means (k-means++ on a sample, stoppable): the non-private "
                    "reference (never released)"),
)


def _check_table(entries: tuple[Entry, ...]) -> None:
    keys = [e.key for e in entries]
    labels = [v.label for e in entries for v in e.variants]
    for what, items in (("key", keys), ("variant label", labels)):
        dup = {x for x in items if items.count(x) > 1}
        if dup:
            raise ValueError(f"registry: duplicate {what}(s) {sorted(dup)}")


_check_table(ENTRIES)
_BY_KEY: dict[str, Entry] = {e.key: e for e in ENTRIES}

_LOADED: set[str] = set()  # keys whose row was imported (or that were set at run time)


#: The releasable rows that import here, ready to run; :data:`UNAVAILABLE` the others' reasons
#: (both filled on demand, issue 23.7: :class:`~dpcore.release.lazy_table.LazyTable`; a key's
#: row is imported when that key is asked for, every row when a table is iterated).
MECHANISMS: dict[str, Mechanism] = LazyTable(lambda key: _load_one(key), lambda: _load_all(),
                                             _LOADED)
UNAVAILABLE: dict[str, str] = LazyTable(lambda key: _load_one(key), lambda: _load_all(), _LOADED)


def _load_one(key) -> None:
    """Import the releasable row ``key`` into :data:`MECHANISMS` or :data:`UNAVAILABLE`."""
    e = _BY_KEY.get(key) if isinstance(key, str) else None
    if e is None or not e.releasable or key in _LOADED:
        return
    _LOADED.add(key)
    try:
        target = e.load()
    except Exception as exc:  # any import problem makes it unavailable, with the reason
        dict.__setitem__(UNAVAILABLE, e.key,
                         f"{e.target} cannot be imported ({type(exc).__name__}: {exc})")
        return
    dict.__setitem__(MECHANISMS, e.key, Mechanism(e.key, target, e.runner(), e.description,
                                                  e.fill_radius, e))


def _load_all() -> None:
    for e in ENTRIES:
        _load_one(e.key)


def mechanism_names() -> set[str]:
    """Every name a release may give: the releasable rows and the run-time registrations,
    without importing any mechanism module (an unknown name is still refused by
    :func:`get_mechanism`, with the choices)."""
    return {e.key for e in ENTRIES if e.releasable} | set(dict.keys(MECHANISMS))


def register(mechanism: Mechanism, *, replace: bool = False) -> Mechanism:
    """Add a runtime :class:`Mechanism` (tests and plug-ins; the package's own are rows of
    :data:`ENTRIES`)."""
    if not mechanism.name or not mechanism.name.replace("_", "").isalnum():
        raise ValueError(f"mechanism name must be [a-z0-9_]+, got {mechanism.name!r}")
    if mechanism.name in MECHANISMS and not replace:
        raise ValueError(f"mechanism {mechanism.name!r} is already registered (pass replace=True)")
    MECHANISMS[mechanism.name] = mechanism
    UNAVAILABLE.pop(mechanism.name, None)
    return mechanism


def get_mechanism(name: str) -> Mechanism:
    """Return the runnable mechanism ``name`` or raise a ValueError that lists the choices."""
    if name in MECHANISMS:
        return MECHANISMS[name]
    if name in UNAVAILABLE:
        raise ValueError(f"mechanism {name!r} is not available here: {UNAVAILABLE[name]}")
    if name in _BY_KEY:
        raise ValueError(f"{_BY_KEY[name].name} ({name!r}) is a reference, not a private "
                         "release; it cannot be run as a release")
    raise ValueError(
        f"unknown mechanism {name!r}; choose one of {sorted(MECHANISMS)}"
        + (f" (unavailable: {sorted(UNAVAILABLE)})" if UNAVAILABLE else "")
    )


def entry(key: str) -> Entry:
    """The registry row ``key`` (KeyError if none)."""
    return _BY_KEY[key]


def variants(task: str | None = None) -> list[tuple[Entry, Variant]]:
    """Every (row, variant) in table order, optionally of one task."""
    return [(e, v) for e in ENTRIES if task in (None, e.task) for v in e.variants]


def importable(e: Entry) -> str | None:
    """None if the row's target imports here, else the reason."""
    try:
        e.load()
    except Exception as exc:  # an optional extra or an algorithm still being written
        return f"{e.target} cannot be imported ({type(exc).__name__}: {exc})"
    return None


def page_available(page: str) -> bool:
    """Whether a dashboard page that shows registry rows has one that imports here (pages
    without rows — data, ledger, tour — are always available)."""
    rows = [e for e in ENTRIES if page in e.pages and e.releasable]
    return not rows or any(importable(e) is None for e in rows)
