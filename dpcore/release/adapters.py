"""Adapters from a registry row's target to ``run(X, rng, **params)``: scikit-learn style
estimators (:func:`estimator_runner`) and functions returning a result with ``privacy_``
(:func:`function_runner`). Split out of :mod:`dpcore.release.registry`, which re-exports them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

__all__ = ["RunFn", "RunFullFn", "estimator_runner", "function_runner"]

#: ``run(X, rng, **params) -> (released, guarantee)``: ``released`` maps output names to arrays,
#: floats or None (a mechanism may decline to release, e.g. FriendlyCore's "bottom").
RunFn = Callable[..., tuple[dict[str, Any], Any]]

RunFullFn = Callable[..., tuple[dict[str, Any], Any, Any]]  # ... and the fitted object/result


def estimator_runner(attributes: Mapping[str, str]) -> Callable[[type], RunFn]:
    """Adapter factory for scikit-learn style estimators.

    ``attributes`` maps a released name to the fitted attribute holding it (e.g.
    ``{"centers": "cluster_centers_"}``). Only those attributes are released; diagnostics such
    as sampled indices or per-point losses are not differentially private and are left out.
    """

    def make(cls: type) -> RunFn:
        return _released_only(_estimator_full(attributes, cls))

    return make


def _released_only(full: RunFullFn) -> RunFn:
    """A full runner's ``(released, guarantee)``: the fitted object stays inside."""
    def run(X: np.ndarray, rng: np.random.Generator, **params: Any):
        released, guarantee, _ = full(X, rng, **params)
        return released, guarantee

    return run


def _estimator_full(attributes: Mapping[str, str], cls: type) -> RunFullFn:
    def run(X: np.ndarray, rng: np.random.Generator, **params: Any):
        est = cls(**params, rng=rng).fit(X)
        released = {name: getattr(est, attr) for name, attr in attributes.items()}
        return released, est.privacy_, est

    return run


def function_runner(fields: Mapping[str, str]) -> Callable[[Callable], RunFn]:
    """Adapter factory for functions ``f(X, **params, rng=rng)``.

    The returned object may be a ``(value, guarantee)`` tuple (released as ``fields``' single
    name) or an object/dict whose attributes ``fields`` names; its guarantee is read from
    ``privacy_`` (or the older ``privacy`` / ``guarantee``).
    """

    def make(fn: Callable) -> RunFn:
        return _released_only(_function_full(fields, fn))

    return make


def _function_full(fields: Mapping[str, str], fn: Callable) -> RunFullFn:
    def run(X: np.ndarray, rng: np.random.Generator, **params: Any):
        out = fn(X, **params, rng=rng)
        if isinstance(out, tuple) and len(out) == 2 and len(fields) == 1:
            (name,) = fields
            return {name: out[0]}, out[1], out
        get = out.get if isinstance(out, Mapping) else lambda a: getattr(out, a, None)
        released = {name: get(attr) for name, attr in fields.items()}
        guarantee = next(
            (g for g in (get("privacy_"), get("privacy"), get("guarantee")) if g is not None),
            None,
        )
        if guarantee is None:
            raise TypeError(f"{fn.__name__} returned no guarantee")
        return released, guarantee, out

    return run
