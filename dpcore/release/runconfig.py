"""Run configurations: one JSON shape shared by the dashboard, the command line and scripts.

A run configuration says which mechanism to run, with which keyword parameters, on which data
and with which seed, so that a release made in the dashboard can be repeated from the command
line (``dpcore run --config cfg.json``) or from Python (:func:`run_config`)::

    {
      "dpcore_version": "0.1.0",
      "mechanism": "dplloyd",
      "params": {"n_clusters": 5, "epsilon": 1.0},
      "data": {"source": "cities", "columns": ["latitude", "longitude"],
               "radius": 200.0, "center": [0.0, 0.0]},
      "seed": 7
    }

``data.source`` is a bundled sample name (:data:`dpcore.data.datasets.SAMPLE_DATASETS`) or a file
path (CSV, TSV, Parquet, gzip) or a directory of Parquet files. ``data.radius`` and
``data.center`` are the *declared, public* geometry the privacy proofs assume: rows are centred
on ``center`` and then clipped to the ball of radius ``radius`` (norm clipping is the one
data-independent pre-processing the guarantees allow), and ``radius`` is passed on to every
mechanism that takes a ``radius`` keyword. Neither is ever read off the data here.

:data:`MECHANISMS` maps a name to a :class:`Mechanism`, an adapter that runs the package's
callable and says which of its outputs are released (only differentially private outputs are
returned: e.g. never the indices of sampled points). Mechanisms whose module does not import
are listed in :data:`UNAVAILABLE` with the reason instead.
"""

from __future__ import annotations

import importlib
import inspect
import json
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.core.rng import as_generator
from dpcore.data import limits
from dpcore.release.config_schema import (  # re-exported: the schema lives in its own module
    MAX_CONFIG_BYTES,
    MAX_CONFIG_DEPTH,
    check_config_keys,
    make_config,
    read_config,
    validate_config,
)
from dpcore.release.config_schema import jsonable as _jsonable

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "MECHANISMS",
    "UNAVAILABLE",
    "check_config_keys",
    "check_mixture_size",
    "Mechanism",
    "RunResult",
    "get_mechanism",
    "load_data",
    "load_prepared",
    "make_config",
    "mixture_frame",
    "mixture_source",
    "prepare_matrix",
    "read_config",
    "read_table",
    "release_frame",
    "register",
    "run_config",
    "validate_config",
]

#: ``run(X, rng, **params) -> (released, guarantee)``: ``released`` maps output names to arrays,
#: floats or None (a mechanism may decline to release, e.g. FriendlyCore's "bottom").
RunFn = Callable[..., tuple[dict[str, Any], Any]]


@dataclass(frozen=True)
class Mechanism:
    """A runnable mechanism of the package.

    Parameters
    ----------
    name : str
        Registry key (lower case, ``[a-z0-9_]``).
    target : callable
        The package's own estimator class or function; its signature defines the accepted
        parameters (everything keyword except the data and ``rng``).
    run : callable
        ``run(X, rng, **params) -> (released: dict, guarantee)``.
    description : str
        One line for listings (CLI ``dpcore list``, dashboard).
    fill_radius : bool
        Pass the declared ``data.radius`` as the ``radius`` keyword.
    """

    name: str
    target: Callable[..., Any]
    run: RunFn
    description: str = ""
    #: Whether the mechanism's ``radius`` keyword is the bound on ‖x‖ (then ``data.radius`` fills
    #: it). FriendlyCore's averaging calls the pairwise-distance threshold ``radius``: not filled.
    fill_radius: bool = True

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


MECHANISMS: dict[str, Mechanism] = {}
UNAVAILABLE: dict[str, str] = {}


def register(mechanism: Mechanism, *, replace: bool = False) -> Mechanism:
    """Add ``mechanism`` to :data:`MECHANISMS` (and drop it from :data:`UNAVAILABLE`)."""
    if not mechanism.name or not mechanism.name.replace("_", "").isalnum():
        raise ValueError(f"mechanism name must be [a-z0-9_]+, got {mechanism.name!r}")
    if mechanism.name in MECHANISMS and not replace:
        raise ValueError(f"mechanism {mechanism.name!r} is already registered (pass replace=True)")
    MECHANISMS[mechanism.name] = mechanism
    UNAVAILABLE.pop(mechanism.name, None)
    return mechanism


def get_mechanism(name: str) -> Mechanism:
    """Return the registered mechanism ``name`` or raise a ValueError that lists the choices."""
    if name in MECHANISMS:
        return MECHANISMS[name]
    if name in UNAVAILABLE:
        raise ValueError(f"mechanism {name!r} is not available here: {UNAVAILABLE[name]}")
    raise ValueError(
        f"unknown mechanism {name!r}; choose one of {sorted(MECHANISMS)}"
        + (f" (unavailable: {sorted(UNAVAILABLE)})" if UNAVAILABLE else "")
    )


# --------------------------------------------------------------------------------------------
# Adapters for the package's own mechanisms
# --------------------------------------------------------------------------------------------


def estimator_runner(attributes: Mapping[str, str]) -> Callable[[type], RunFn]:
    """Adapter factory for scikit-learn style estimators.

    ``attributes`` maps a released name to the fitted attribute holding it (e.g.
    ``{"centers": "cluster_centers_"}``). Only those attributes are released; diagnostics such
    as sampled indices or per-point losses are not differentially private and are left out.
    """

    def make(cls: type) -> RunFn:
        def run(X: np.ndarray, rng: np.random.Generator, **params: Any):
            est = cls(**params, rng=rng).fit(X)
            released = {name: getattr(est, attr) for name, attr in attributes.items()}
            return released, est.privacy_

        return run

    return make


def function_runner(fields: Mapping[str, str]) -> Callable[[Callable], RunFn]:
    """Adapter factory for functions ``f(X, **params, rng=rng)``.

    The returned object may be a ``(value, guarantee)`` tuple (released as ``fields``' single
    name) or an object/dict whose attributes ``fields`` names; its guarantee is read from
    ``privacy`` / ``guarantee`` / ``privacy_``.
    """

    def make(fn: Callable) -> RunFn:
        def run(X: np.ndarray, rng: np.random.Generator, **params: Any):
            out = fn(X, **params, rng=rng)
            if isinstance(out, tuple) and len(out) == 2 and len(fields) == 1:
                (name,) = fields
                return {name: out[0]}, out[1]
            get = out.get if isinstance(out, Mapping) else lambda a: getattr(out, a, None)
            released = {name: get(attr) for name, attr in fields.items()}
            guarantee = next(
                (g for g in (get("privacy"), get("guarantee"), get("privacy_")) if g is not None),
                None,
            )
            if guarantee is None:
                raise TypeError(f"{fn.__name__} returned no guarantee")
            return released, guarantee

        return run

    return make


def sensitivity_release(
    X: np.ndarray,
    *,
    statistic: str,
    epsilon: float,
    statistic_params: dict | None = None,
    oracle: str = "uniform",
    bounds: list[float] | None = None,
    gamma: float | None = None,
    m: int | None = None,
    delta: float = 0.0,
    mechanism: str = "laplace",
    rng: np.random.Generator | None = None,
):
    """Sample-Then-Respond (paper 004) on a statistic of the
    :mod:`dpcore.mechanisms.sensitivity.statistics` menu.

    The sensitivity sampler needs a *public* distribution P (the oracle): ``"uniform"`` draws
    records uniformly from the box ``bounds`` = [lo, hi] in every coordinate (default: the
    statistic's own ``bounds`` parameter, else [0, 1]); any other value is a file or sample data
    set holding a public table with as many numeric columns as the data.
    """
    from dpcore.mechanisms.sensitivity import sampler as sensitivity
    from dpcore.mechanisms.sensitivity import statistics
    d = X.shape[1]
    limits.check_params(epsilon=epsilon, m=m, d=d)
    if gamma is not None:
        limits.check_probability(gamma, "gamma")
    if statistic_params is not None and not isinstance(statistic_params, Mapping):
        raise ValueError(f"statistic_params must be an object, got {statistic_params!r}"[:200])
    stat = statistics.get_statistic(statistic, **(statistic_params or {}))
    if oracle == "uniform":
        pair = bounds if bounds is not None else stat.params.get("bounds", (0.0, 1.0))
        if not isinstance(pair, list | tuple | np.ndarray) or len(pair) != 2:
            raise ValueError(f"bounds must be [lo, hi], got {pair!r}"[:200])
        lo, hi = (limits.check_number(f"bounds[{i}]", v, -limits.MAX_ABS_VALUE,
                                      limits.MAX_ABS_VALUE) for i, v in enumerate(pair))
        if not lo < hi:
            raise ValueError(f"bounds must be [lo, hi] with lo < hi, got {[lo, hi]!r}")

        def draw(size: int, gen: np.random.Generator) -> np.ndarray:
            records = gen.uniform(float(lo), float(hi), size=(size, d))
            if stat.binary_label:  # a class label: both classes equally likely
                records[:, -1] = gen.choice([-1.0, 1.0], size=size)
            return records

        table = draw
    else:
        from dpcore.data.tables import to_matrix

        df, default_columns = read_table(oracle)
        table = to_matrix(df, default_columns)
        if table.shape[1] != d:
            raise ValueError(f"the oracle table {oracle!r} has {table.shape[1]} numeric columns, "
                             f"the data {d}")
    return sensitivity.sample_then_respond(
        stat, X, table, epsilon=epsilon, gamma=gamma, m=m, delta=delta, mechanism=mechanism,
        rng=rng)


# name, module, attribute, adapter, description[, fill_radius]
_BUILTIN: list[tuple] = [
    (
        "dplloyd",
        "dpcore.mechanisms.lloyd.estimator",
        "DPLloyd",
        estimator_runner({"centers": "cluster_centers_"}),
        "weighted DP-Lloyd k-means, optionally importance-sampled (paper 000/001)",
    ),
    (
        "friendlycore_kmeans",
        "dpcore.mechanisms.friendlycore",
        "FriendlyCoreKMeans",
        estimator_runner({"centers": "cluster_centers_"}),
        "FriendlyCore k-means clustering (paper 002)",
    ),
    (
        "friendly_mean",
        "dpcore.mechanisms.friendlycore",
        "friendly_mean",
        function_runner({"mean": "estimate"}),
        "FriendlyCore DP averaging (paper 002); params.radius is the pairwise-distance bound",
        False,
    ),
    (
        "dpkmeans",
        "dpcore.estimators.dpkmeans",
        "DPKMeans",
        estimator_runner({"centers": "cluster_centers_"}),
        "recommended DP k-means: DP-Lloyd on the declared box or ball with the iterations and "
        "count/sum split chosen from the budget",
    ),
    (
        "maxcover_kmeans",
        "dpcore.mechanisms.maxcover",
        "MaxCoverKMeans",
        estimator_runner({"centers": "cluster_centers_"}),
        "k-means by JL, grids and exponential-mechanism max cover (paper 003), then "
        "budget-aware DP-Lloyd from its partition (preset='paper': the paper's configuration)",
    ),
    (
        "noisy_average",
        "dpcore.mechanisms.maxcover",
        "noisy_average",
        function_runner({"mean": "center"}),
        "private averaging of points in a ball (paper 003)",
    ),
    (
        "sensitivity",
        "dpcore.release.runconfig",
        "sensitivity_release",
        function_runner({"value": "value"}),
        "random DP release of a statistic via the sensitivity sampler (paper 004)",
    ),
]


def _register_builtins() -> None:
    for name, module, attr, adapter, description, *fill in _BUILTIN:
        try:
            target = (globals()[attr] if module == __name__
                      else getattr(importlib.import_module(module), attr))
            if name == "sensitivity":  # the adapter above needs both modules
                importlib.import_module("dpcore.mechanisms.sensitivity.sampler")
                importlib.import_module("dpcore.mechanisms.sensitivity.statistics")
        except Exception as exc:  # any import problem makes it unavailable, with the reason
            UNAVAILABLE[name] = f"{module}.{attr} cannot be imported ({type(exc).__name__}: {exc})"
            continue
        MECHANISMS[name] = Mechanism(name, target, adapter(target), description, *fill)


_register_builtins()


def _register_baselines() -> None:
    """The papers' baselines (dpcore.mechanisms.baselines) register themselves when imported."""
    try:
        importlib.import_module("dpcore.mechanisms.baselines")
    except Exception as exc:  # an optional dependency missing: unavailable, with the reason
        UNAVAILABLE.setdefault("lsh_clustering", f"dpcore.mechanisms.baselines cannot be imported "
                                                 f"({exc})")


_register_baselines()


# --------------------------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------------------------


MIXTURE_PREFIX = "mixture:"


def mixture_source(n: int, d: int, k: int, sigma: float, center_radius: float) -> str:
    """``data.source`` naming the synthetic Gaussian mixture the dashboard offers.

    ``read_table`` regenerates it (:func:`dpcore.data.datasets.gaussian_mixture` with ``rng=0``), so
    a configuration downloaded from the dashboard's synthetic data runs from the command line.
    """
    return (f"{MIXTURE_PREFIX}n={int(n)},d={int(d)},k={int(k)},sigma={float(sigma)!r},"
            f"center_radius={float(center_radius)!r}")


def mixture_frame(n: int, d: int, k: int, sigma: float, center_radius: float):
    """The synthetic mixture as a DataFrame: columns ``x1..xd`` and its ``component``."""
    import pandas as pd

    from dpcore.data.datasets import gaussian_mixture

    X, labels, _ = gaussian_mixture(n, d, k, sigma=sigma, center_radius=center_radius, rng=0)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(d)])
    df["component"] = labels
    return df


def _parse_mixture(source: str) -> dict:
    types = {"n": int, "d": int, "k": int, "sigma": float, "center_radius": float}
    try:
        items = dict(item.split("=", 1) for item in source[len(MIXTURE_PREFIX):].split(","))
        if set(items) != set(types) or any(len(v) > 32 for v in items.values()):
            raise ValueError
        spec = {key: types[key](value) for key, value in items.items()}
    except ValueError:
        raise ValueError(f"data.source {source[:120]!r} must look like "
                         f"{mixture_source(1000, 2, 3, 1.0, 10.0)!r}") from None
    check_mixture_size(spec["n"], spec["d"], spec["k"], spec["sigma"], spec["center_radius"])
    return spec


def check_mixture_size(n: int, d: int, k: int, sigma: float, center_radius: float) -> None:
    """The synthetic mixture's parameters, with n × d within the session memory budget
    (:func:`dpcore.data.limits.resource_limits`): the dashboard's sliders and ``mixture:``
    sources."""
    from dpcore.data.tables import DEFAULT_MAX_COLUMNS

    try:
        d = limits.check_count("d", d, 1, DEFAULT_MAX_COLUMNS)
        max_rows = limits.resource_limits(d).max_rows(d)
        limits.check_count("n", n, 2, max_rows,
                           why=f" for d = {d} within the session memory budget "
                               f"({limits.MEMORY_ENV})")
        limits.check_count("k", k, 1, n)
        limits.check_radius(sigma, "sigma")
        limits.check_radius(center_radius, "center_radius")
    except limits.ParameterError as exc:
        raise ValueError(f"mixture: {exc}") from None


def read_table(source: str):
    """A bundled sample, a file, a directory of Parquet files or a synthetic mixture
    (:func:`mixture_source`), as a DataFrame.

    Returns ``(df, default_columns)``: a sample data set's documented feature columns (e.g.
    longitude/latitude of "cities", not its population), ``None`` for files (all numeric).
    A local file is the user's own choice, so the dashboard's upload size limit does not apply.
    """
    import pandas as pd

    from dpcore.data import tables as dpdata
    from dpcore.data.datasets import SAMPLE_DATASETS, load_sample

    if source.startswith(MIXTURE_PREFIX):
        return mixture_frame(**_parse_mixture(source)), None
    path = Path(source).expanduser()
    if path.is_dir():
        if not any(path.glob("*.parquet")):
            raise dpdata.DataError(f"directory {source!r} holds no *.parquet files")
        try:
            return pd.read_parquet(path), None
        except Exception as exc:  # pyarrow raises many types; all mean "not readable"
            raise dpdata.DataError(f"the Parquet files in {source!r} cannot be read "
                                   f"({type(exc).__name__}: {exc})") from None
    if path.exists():
        return dpdata.load_table(path, max_bytes=2**40), None
    if source in SAMPLE_DATASETS:
        return load_sample(source), list(SAMPLE_DATASETS[source].columns)
    raise dpdata.DataError(
        f"data source {source!r} is neither an existing file or directory nor a sample data "
        f"set ({', '.join(sorted(SAMPLE_DATASETS))})"
    )


def prepare_matrix(
    X: Any,
    *,
    columns: list | None = None,
    radius: float | None = None,
    center: list[float] | np.ndarray | None = None,
) -> np.ndarray:
    """Select columns, centre on the *declared* centre and clip rows to the *declared* radius.

    ``X`` is a DataFrame (columns are selected by name, default all numeric ones) or an array
    (``columns`` then index positions). Nothing is estimated from the data. Values, centre and
    radius must lie in the documented range of :mod:`dpcore.data.limits` (``|x| ≤ 1e100``, radius in
    [1e-100, 1e100]); outside it a :class:`~dpcore.data.tables.DataError` names the column and row
    (never a silently zeroed row).
    """
    return _prepare(X, columns, radius, center)[0]


def _prepare(X: Any, columns: list | None, radius: float | None,
             center: Any) -> tuple[np.ndarray, list[str]]:
    """:func:`prepare_matrix` and the names of the columns used."""
    from dpcore.data import tables as dpdata
    if hasattr(X, "columns"):  # DataFrame
        names = [str(c) for c in columns] if columns else dpdata.numeric_columns(X)
        M = dpdata.to_matrix(X, columns)  # checks the value range, naming column and row
    else:
        try:
            M = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise dpdata.DataError("data must be a numeric 2-D table") from None
        if M.ndim != 2:
            raise dpdata.DataError(f"data must be a 2-D table, got shape {M.shape}")
        if columns is not None:
            if not all(isinstance(c, int) and not isinstance(c, bool) for c in columns):
                raise dpdata.DataError(f"columns {columns!r} given by name but the data is an "
                                       "array; pass a DataFrame or integer positions")
            bad = [c for c in columns if not -M.shape[1] <= c < M.shape[1]]
            if bad:
                raise dpdata.DataError(f"columns {bad} are not positions of the data's "
                                       f"{M.shape[1]} columns")
            M = M[:, columns]
        names = [f"x{j + 1}" for j in range(M.shape[1])]
        limits.check_data_range(M, names)
    try:
        if center is not None:
            M = M - limits.check_center(center, M.shape[1])
        if radius is not None:
            from dpcore.data.geometry import clip_to_ball

            M = clip_to_ball(M, limits.check_radius(radius))
    except limits.ParameterError as exc:
        raise dpdata.DataError(str(exc)) from None
    return M, names


def load_prepared(data: Mapping[str, Any]) -> tuple[np.ndarray, list[str]]:
    """The prepared matrix a configuration's ``data`` section describes, and its column names."""
    df, default_columns = read_table(data["source"])
    return _prepare(df, data.get("columns") or default_columns, data.get("radius"),
                    data.get("center"))


def load_data(data: Mapping[str, Any]) -> np.ndarray:
    """Load and prepare the matrix a configuration's ``data`` section describes."""
    return load_prepared(data)[0]


#: Released outputs that are points of the data space (shown in the table's units and columns).
POINT_OUTPUTS = ("centers", "mean")


def release_frame(
    released: Mapping[str, Any],
    columns: list[str],
    algorithm: str,
    guarantee: Any = None,
    center: Any = None,
):
    """The wide CSV table of a release, as the dashboard's centre downloads write it.

    One row per released point (each centre, or the mean), in the *table's units* (the declared
    centre added back: post-processing), with the table's column names, an ``algorithm``
    column and a ``guarantee`` column (every release carries its guarantee). A non-point output
    (e.g. the sensitivity sampler's ``value``) gets columns ``value`` or ``value_1 …``. A
    declined release (None) is one row of empty cells, so the file says that nothing was
    released. Write it with :func:`dpcore.core.text.csv_safe_frame` (user-named columns).
    """
    import pandas as pd

    shift = None if center is None else np.asarray(center, dtype=float)
    frames = []
    for name, value in released.items():
        if value is None:
            frames.append(pd.DataFrame({c: [np.nan] for c in columns}))
            continue
        arr = np.atleast_2d(np.asarray(value, dtype=float))
        if name in POINT_OUTPUTS and arr.shape[1] == len(columns):
            pts = arr if shift is None else arr + shift
            frames.append(pd.DataFrame(pts, columns=list(columns)))
        else:
            flat = arr.reshape(arr.shape[0], -1)
            cols = ["value"] if flat.shape[1] == 1 else [f"value_{j + 1}"
                                                         for j in range(flat.shape[1])]
            frames.append(pd.DataFrame(flat, columns=cols))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    out["algorithm"] = algorithm
    out["guarantee"] = "" if guarantee is None else str(guarantee)
    return out


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------


def _guarantee_dict(g: Any) -> dict:
    if g is None:
        return {}
    if hasattr(g, "as_dict"):
        return {"type": type(g).__name__} | dict(g.as_dict())
    return {"type": type(g).__name__, "text": str(g)}


@dataclass
class RunResult:
    """What a run released, under which guarantee, and how long it took.

    Attributes
    ----------
    mechanism : str
    released : dict
        Output name -> numpy array, float or None (a declined release).
    guarantee : Guarantee
        The privacy guarantee the mechanism delivered (``dpcore.privacy.guarantees``).
    seconds : float
        Wall time of the mechanism (data loading excluded).
    config : dict
        The validated configuration that produced it.
    warnings : list of str
        Warnings raised during the run (e.g. ``PrivacyLeakWarning``), also re-emitted.
    """

    mechanism: str
    released: dict[str, Any]
    guarantee: Any
    seconds: float
    config: dict
    warnings: list[str] = field(default_factory=list)
    #: Names of the data columns the mechanism saw (the table's, or x1..xd for an array).
    columns: list[str] | None = None

    def to_dict(self) -> dict:
        """JSON-serialisable form (arrays as nested lists)."""
        return {
            "mechanism": self.mechanism,
            "released": {k: _jsonable(v, k) for k, v in self.released.items()},
            "guarantee": _guarantee_dict(self.guarantee),
            "guarantee_text": str(self.guarantee),
            "seconds": self.seconds,
            "warnings": list(self.warnings),
            "config": self.config,
        }

    def to_json(self, **kwargs: Any) -> str:
        return json.dumps(self.to_dict(), **({"indent": 2} | kwargs))

    def to_frame(self):
        """The wide table of :func:`release_frame`: one row per released point, in the table's
        units and columns, with ``algorithm`` (the mechanism) and ``guarantee`` columns."""
        d = self._width()
        columns = self.columns if self.columns and len(self.columns) == d else [
            f"x{j + 1}" for j in range(d)]
        return release_frame(self.released, columns, self.mechanism, self.guarantee,
                             self.config.get("data", {}).get("center"))

    def _width(self) -> int:
        for name in POINT_OUTPUTS:
            value = self.released.get(name)
            if value is not None:
                return int(np.atleast_2d(np.asarray(value, dtype=float)).shape[1])
        return len(self.columns or [])

    def to_csv(self, path: str | Path) -> None:
        """Write :meth:`to_frame` as CSV, formula prefixes neutralised (column names are the
        user's)."""
        from dpcore.core.text import csv_safe_frame

        csv_safe_frame(self.to_frame()).to_csv(path, index=False)

    def summary(self) -> str:
        """A few human-readable lines."""
        lines = [f"{self.mechanism}: released under {self.guarantee} in {self.seconds:.3g} s"]
        for name, value in self.released.items():
            if value is None:
                lines.append(f"  {name}: nothing released (the mechanism declined)")
                continue
            arr = np.asarray(value, dtype=float)
            if arr.ndim == 0:
                lines.append(f"  {name}: {float(arr):.6g}")
            else:
                with np.printoptions(precision=4, suppress=True, threshold=40, linewidth=96):
                    body = np.array2string(arr, prefix="    ")
                lines.append(f"  {name} {arr.shape}:\n    {body}")
        return "\n".join(lines)


def _resolve_params(mech: Mechanism, params: dict, data: Mapping[str, Any]) -> dict:
    """Fill ``radius`` from the declared data radius when the mechanism takes one."""
    params = dict(params)
    radius = data.get("radius") if mech.fill_radius else None
    accepted = mech.parameters()
    if radius is not None and ("radius" in accepted or mech.accepts_any_keyword()):
        given = params.get("radius")
        if given is not None and float(given) != float(radius):
            raise ValueError(f"params.radius = {given!r} differs from data.radius = {radius!r}; "
                             "give the radius once")
        params["radius"] = radius
    missing = [n for n in mech.required() if n not in params]
    if missing:
        raise ValueError(f"{mech.name} needs parameter(s) {missing}"
                         + (" (declare data.radius)" if "radius" in missing else ""))
    return params


def run_config(config: Mapping[str, Any] | str, X: Any = None, *,
               prepared: bool = False, ledger: Any = None) -> RunResult:
    """Run a configuration.

    Parameters
    ----------
    config : mapping or JSON string
        A run configuration (validated here).
    X : array or DataFrame, optional
        The data; when omitted it is loaded from ``config["data"]["source"]``. Either way the
        declared columns, centre and radius are applied (:func:`prepare_matrix`).
    prepared : bool
        ``X`` is already :func:`load_data`'s output for this configuration (skip preparing).
    ledger : dpcore.privacy.guarantees.PrivacyLedger, optional
        Record the release there (label: the mechanism, with its public parameters; never the
        seed, which would make the release a function of the data). A private table's release
        goes through :class:`dpcore.release.door.ReleaseDoor` instead. If the
        ledger refuses it (:class:`~dpcore.privacy.guarantees.BudgetExceededError`), the result is
        discarded: nothing is released.

    Returns
    -------
    RunResult
    """
    cfg = validate_config(config)
    mech = get_mechanism(cfg["mechanism"])
    data = cfg["data"]
    if X is None:
        M, names = load_prepared(data)
    elif prepared:
        M = np.asarray(X, dtype=np.float64)
        names = list(data["columns"]) if data["columns"] else None
    else:
        M, names = _prepare(X, data["columns"], data["radius"], data["center"])
    params = _resolve_params(mech, cfg["params"], data)
    try:  # the limits that depend on the data's width (n_clusters, sample_size)
        limits.check_params(params, d=int(M.shape[1]) if M.ndim == 2 else 2)
    except limits.ParameterError as exc:
        raise ValueError(f"params.{exc}") from None
    rng = as_generator(cfg["seed"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        released, guarantee = mech.run(M, rng, **params)
        seconds = time.perf_counter() - t0
    for w in caught:  # re-emit so callers' filters (and the CLI) see them
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    if ledger is not None:
        ledger.spend(mech.name, guarantee, **params)  # never the seed (issue 11, finding 1)
    return RunResult(
        mechanism=mech.name,
        released=dict(released),
        guarantee=guarantee,
        seconds=seconds,
        config=cfg,
        warnings=[f"{w.category.__name__}: {w.message}" for w in caught],
        columns=names,
    )
