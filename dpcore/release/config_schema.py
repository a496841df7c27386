"""The run-configuration schema: building, reading and validating the JSON that the dashboard,
the command line and scripts share (see :mod:`dpcore.release.runconfig` for the format).

:func:`validate_config` is the one validator: :func:`~dpcore.release.runconfig.run_config`,
:func:`make_config` and ``dpcore run`` (with or without ``--config``) all go through it. JSON text
is read with size and depth limits (:func:`read_config`: no ``RecursionError`` on ``[[[[…``),
unknown keys are refused with a "did you mean" suggestion (a typo such as ``"Seed"`` must not
silently drop the seed), and parameters are checked against the documented ranges of
:mod:`dpcore.data.limits`. Everything here is re-exported by :mod:`dpcore.release.runconfig`.
"""

from __future__ import annotations

import difflib
import json
import math
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

import dpcore
from dpcore.data import limits
from dpcore.data.missing import check_missing_rule
from dpcore.release.registry import MECHANISMS, UNAVAILABLE

__all__ = [
    "MAX_CONFIG_BYTES",
    "MAX_CONFIG_DEPTH",
    "check_config_keys",
    "jsonable",
    "make_config",
    "read_config",
    "validate_config",
]

_DATA_KEYS = ("source", "columns", "radius", "center", "missing")


def jsonable(value: Any, where: str) -> Any:
    """Turn numpy scalars/arrays into plain JSON values; raise on anything else unserialisable."""
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, Mapping):
        return {str(k): jsonable(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v, where) for v in value]
    if isinstance(value, Path):
        return str(value)
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise ValueError(
        f"{where} = {value!r} is not JSON-serialisable; use numbers, strings, lists or dicts"
    )


def make_config(
    mechanism: str,
    params: Mapping[str, Any] | None = None,
    data: Mapping[str, Any] | str | None = None,
    seed: int | None = None,
) -> dict:
    """Build a validated run configuration.

    Parameters
    ----------
    mechanism : str
        A key of :data:`MECHANISMS` (or of :data:`UNAVAILABLE`: a configuration can be written
        where the mechanism is missing, it just cannot be run there).
    params : mapping, optional
        Keyword parameters of the mechanism (JSON-serialisable; numpy values are converted).
    data : mapping or str, optional
        ``{"source", "columns", "radius", "center"}``; a string is taken as the source.
    seed : int, optional
        Seed of the run's random generator. ``None`` draws a fresh one from OS entropy and
        records it, so the configuration always reproduces the run it describes.
    """
    if isinstance(data, str | Path):
        data = {"source": str(data)}
    data = dict(data or {})
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1, np.uint32)[0])
    config = {
        "dpcore_version": dpcore.__version__,
        "mechanism": mechanism,
        "params": jsonable(dict(params or {}), "params"),
        "data": {k: jsonable(data.get(k), f"data.{k}") for k in _DATA_KEYS
                 if k != "missing" or data.get(k)}
        | {k: jsonable(v, f"data.{k}") for k, v in data.items() if k not in _DATA_KEYS},
        "seed": seed,
    }
    return validate_config(config)


#: Largest configuration file / string, and deepest nesting of its JSON (a run configuration
#: is 3 levels deep; deeper nesting is an attack on the parser, not a configuration).
MAX_CONFIG_BYTES = 2**20
MAX_CONFIG_DEPTH = 16
_TOP_KEYS = ("dpcore_version", "mechanism", "params", "data", "seed")


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether nested lists/dicts go deeper than ``limit`` (iterative: no recursion)."""
    stack = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, dict | list):
            if depth > limit:
                return True
            stack.extend((c, depth + 1) for c in (v.values() if isinstance(v, dict) else v))
    return False


def read_config(text: str | bytes, where: str = "run configuration") -> Any:
    """Parse configuration JSON with size and depth limits; one-line ``ValueError`` otherwise."""
    if len(text) > MAX_CONFIG_BYTES:
        raise ValueError(f"{where} is larger than {MAX_CONFIG_BYTES // 2**10} KiB; a run "
                         "configuration is a few lines")
    try:
        value = json.loads(text, object_pairs_hook=_unique_keys, parse_float=_finite_float,
                           parse_constant=_no_constant)
    except RecursionError:
        raise ValueError(f"{where} is nested deeper than {MAX_CONFIG_DEPTH} levels") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{where} is not valid JSON ({exc})") from None
    except ValueError as exc:  # a repeated key or an overflowing number
        raise ValueError(f"{where}: {exc}") from None
    if _depth_exceeds(value, MAX_CONFIG_DEPTH):
        raise ValueError(f"{where} is nested deeper than {MAX_CONFIG_DEPTH} levels")
    return value


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are distinct: ``{"epsilon": 1, "epsilon": 50}`` is refused, not
    read as ε = 50 (issue 26)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"the key {key[:80]!r} appears twice in one object; keep one")
        out[key] = value
    return out


def _finite_float(text: str) -> float:
    """A JSON number as a float, refused when it overflows: ``1e400`` is not ε = ∞."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is beyond the float range")
    return value


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is not JSON; write a number")


def _check_keys(found: Any, allowed: Any, where: str) -> None:
    """Refuse unknown keys, suggesting the nearest allowed one (a typo such as ``"Seed"`` or
    ``"raduis"`` must not silently drop a setting)."""
    allowed = [str(a) for a in allowed]
    for key in found:
        if key in allowed:
            continue
        near = difflib.get_close_matches(str(key), allowed, n=1, cutoff=0.6) or [
            a for a in allowed if a.lower() == str(key).lower()]
        hint = f"; did you mean {near[0]!r}?" if near else f"; expected one of {sorted(allowed)}"
        raise ValueError(f"unknown key {str(key)[:80]!r} in {where}{hint}")


def check_config_keys(config: Mapping[str, Any]) -> None:
    """Refuse unknown top-level and ``data`` keys of a (partial) configuration, with a "did you
    mean" suggestion; the command line checks its ``--config`` file with it before merging."""
    _check_keys(config, _TOP_KEYS, "run configuration")
    if isinstance(config.get("data"), Mapping):
        _check_keys(config["data"], _DATA_KEYS, "data")


def _finite_number(value: Any, where: str, *, positive: bool = False) -> float:
    try:
        if positive:
            return limits.check_radius(value, where)
        return limits.check_number(where, value, -limits.MAX_ABS_VALUE, limits.MAX_ABS_VALUE)
    except limits.ParameterError as exc:
        raise ValueError(str(exc)) from None


def _config_width(data: Mapping[str, Any]) -> int:
    """d when the configuration tells it (columns or centre), for budget-derived limits."""
    for key in ("columns", "center"):
        value = data.get(key)
        if isinstance(value, list | tuple) and value:
            return len(value)
    return 2


def validate_config(d: Any) -> dict:
    """Check a run configuration and return a normalised copy.

    The one validator of run configurations: :func:`run_config`, :func:`make_config` and the
    command line (``dpcore run``, with or without ``--config``) all go through it.

    Raises
    ------
    ValueError
        One line naming the offending key, the value found and what is expected. Unknown
        top-level, ``data`` or parameter keys are errors with a "did you mean" suggestion.
        Parameters are checked against the mechanism's signature when the mechanism is available
        here, and against the documented ranges of :mod:`dpcore.data.limits` (ε, δ, ρ, radius,
        n_clusters, n_iter, sample_size, β, t). JSON text is read with size and depth limits.
    """
    if isinstance(d, str | bytes):
        d = read_config(d)
    if not isinstance(d, Mapping):
        raise ValueError(f"run configuration must be a JSON object, got {type(d).__name__}")
    if _depth_exceeds(dict(d), MAX_CONFIG_DEPTH):
        raise ValueError(f"run configuration is nested deeper than {MAX_CONFIG_DEPTH} levels")
    _check_keys(d, _TOP_KEYS, "run configuration")
    missing = {"mechanism", "data", "seed"} - set(d)
    if missing:
        raise ValueError(f"run configuration lacks {sorted(missing)}")

    version = d.get("dpcore_version", dpcore.__version__)
    if not isinstance(version, str):
        raise ValueError(f"dpcore_version must be a string, got {version!r}")
    if version != dpcore.__version__:
        warnings.warn(
            f"configuration written by dpcore {version}, running dpcore {dpcore.__version__}: "
            "results may differ",
            UserWarning,
            stacklevel=2,
        )

    mechanism = d["mechanism"]
    if not isinstance(mechanism, str) or (
        mechanism not in MECHANISMS and mechanism not in UNAVAILABLE
    ):
        names = sorted(set(MECHANISMS) | set(UNAVAILABLE))
        near = difflib.get_close_matches(str(mechanism), names, n=1)
        shown = repr(mechanism) if len(repr(mechanism)) <= 80 else repr(mechanism)[:80] + "…"
        raise ValueError(f"unknown mechanism {shown}; "
                         + (f"did you mean {near[0]!r}? " if near else "")
                         + f"choose one of {names}")

    params = d.get("params") or {}
    if not isinstance(params, Mapping):
        raise ValueError(f"params must be an object of keyword arguments, got {params!r}")
    params = jsonable(dict(params), "params")
    if "rng" in params:
        raise ValueError("params must not contain 'rng'; use the top-level 'seed'")
    if mechanism in MECHANISMS:
        mech = MECHANISMS[mechanism]
        accepted = mech.parameters()
        if accepted and not mech.accepts_any_keyword():
            _check_keys(params, accepted, f"the parameters of {mechanism}")

    data = d["data"]
    if isinstance(data, str):
        data = {"source": data}
    if not isinstance(data, Mapping):
        raise ValueError(f"data must be an object with keys {list(_DATA_KEYS)}, got {data!r}")
    _check_keys(data, _DATA_KEYS, "data")
    try:
        limits.check_params(params, d=_config_width(data))
    except limits.ParameterError as exc:
        raise ValueError(f"params.{exc}") from None
    source = data.get("source")
    if not isinstance(source, str) or not source:
        raise ValueError(f"data.source must be a sample name or a file path, got {source!r}")
    columns = data.get("columns")
    if columns is not None and (
        not isinstance(columns, list | tuple)
        or not columns
        or not all(isinstance(c, str | int) and not isinstance(c, bool) for c in columns)
    ):
        raise ValueError(f"data.columns must be null or a non-empty list of names, got {columns!r}")
    radius = data.get("radius")
    if radius is not None:
        radius = _finite_number(radius, "data.radius", positive=True)
    center = data.get("center")
    if center is not None:
        if not isinstance(center, list | tuple) or not center:
            raise ValueError(f"data.center must be null or a list of numbers, got {center!r}")
        try:
            center = limits.check_center(center, name="data.center").tolist()
        except limits.ParameterError as exc:
            raise ValueError(str(exc)) from None
        if columns is not None and len(center) != len(columns):
            raise ValueError(f"data.center has {len(center)} coordinates but data.columns "
                             f"names {len(columns)} columns")
    # the missing-cells rule per column (dpcore.data.missing), the same as the Data page's and
    # the curator schema's: "drop" the rows or {"fill": a public constant}
    try:
        missing = check_missing_rule(data.get("missing"), columns, name="data.missing")
    except limits.ParameterError as exc:
        raise ValueError(str(exc)) from None

    seed = d["seed"]
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**128:
        shown = seed if not isinstance(seed, int) or seed.bit_length() < 200 else "a huge integer"
        raise ValueError(f"seed must be a non-negative integer below 2**128, got {shown!r}")

    return {
        "dpcore_version": version,
        "mechanism": mechanism,
        "params": params,
        "data": {
            "source": source,
            "columns": list(columns) if columns is not None else None,
            "radius": radius,
            "center": center,
        } | ({"missing": missing} if missing else {}),
        "seed": seed,
    }
