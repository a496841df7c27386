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

:data:`MECHANISMS` (built from the one table of :mod:`dpcore.release.registry`) maps a name to
a :class:`Mechanism`, an adapter that runs the package's callable and says which of its outputs
are released (only differentially private outputs are returned: e.g. never the indices of
sampled points). Mechanisms whose module does not import are listed in :data:`UNAVAILABLE` with
the reason instead. The data side (tables, mixtures, preparation) is :mod:`dpcore.release.tables`.
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.core.rng import as_generator
from dpcore.data import limits
from dpcore.data.params import constraints_of, validate_params
from dpcore.release.config_schema import (  # re-exported: the schema lives in its own module
    MAX_CONFIG_BYTES,
    MAX_CONFIG_DEPTH,
    check_config_keys,
    make_config,
    read_config,
    validate_config,
)
from dpcore.release.config_schema import jsonable as _jsonable
from dpcore.release.registry import (  # re-exported: the registry lives in its own module
    MECHANISMS,
    UNAVAILABLE,
    Mechanism,
    estimator_runner,
    function_runner,
    get_mechanism,
    register,
)
from dpcore.release.tables import (  # re-exported: the data side lives in its own module
    MIXTURE_PREFIX,
    POINT_OUTPUTS,
    _prepare,
    check_mixture_size,
    load_data,
    load_prepared,
    mixture_frame,
    mixture_source,
    prepare_matrix,
    read_table,
    release_frame,
)

__all__ = [
    "MAX_CONFIG_BYTES",
    "MIXTURE_PREFIX",
    "POINT_OUTPUTS",
    "estimator_runner",
    "function_runner",
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
    "sensitivity_release",  # noqa: F822 (module __getattr__, loaded on use)
    "validate_config",
]

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
        M, names = _prepare(X, data["columns"], data["radius"], data["center"],
                            data.get("missing"))
    params = _resolve_params(mech, cfg["params"], data)
    try:  # the limits that depend on the data's width (n_clusters, sample_size), then the
        # mechanism's own declaration (dpcore.data.params): what its fit would refuse, said now
        limits.check_params(params, d=int(M.shape[1]) if M.ndim == 2 else 2)
        params = validate_params(constraints_of(mech.target), params)
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


def __getattr__(name: str):
    # The sensitivity release imports scipy.stats (≈ 0.6 s under load): loaded when used, so a
    # ``dpcore run`` of another mechanism does not pay for it (issue 23.7).
    if name == "sensitivity_release":
        from dpcore.release.sensitivity_release import sensitivity_release

        return sensitivity_release
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
