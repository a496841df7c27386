"""Parameter constraints, declared once per mechanism (scikit-learn's ``_parameter_constraints``).

Each estimator class (or function, through :func:`declare`) states for every keyword parameter
its type, range, the literal values it also accepts (``None``, ``"auto"``, ``inf``) and whether
a *public input* fills it (``n``, ``radius``, ``bounds``, ``delta``: what the privacy proof
assumes public and the release door supplies from the declared description). The estimator's
``fit``, the run configurations, the CLI, the config schema and the dashboard's widget ranges all
read the same declaration (:func:`constraints_of`), so they cannot disagree.

The checks themselves are :mod:`dpcore.data.limits`'s (one wording per kind of mistake).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from dpcore.core.errors import ParameterError
from dpcore.data import limits

__all__ = [
    "BOUNDS",
    "DELTA",
    "DELTA_POSITIVE",
    "EPSILON",
    "EPSILON_FINITE",
    "GAMMA",
    "N_CLUSTERS",
    "N_ITER",
    "N_JOBS",
    "N_PUBLIC",
    "N_PUBLIC_INT",
    "PAIRS",
    "PROJ_DIM",
    "RADIUS",
    "RADIUS_REQUIRED",
    "RHO",
    "SAMPLE_SIZE",
    "SHARE",
    "Param",
    "constraints_of",
    "declare",
    "validate_params",
]

#: Kinds a parameter can have (the config schema and the widgets map them).
KINDS = ("int", "float", "str", "bool", "bounds", "mapping", "object")


@dataclass(frozen=True)
class Param:
    """The constraint of one keyword parameter.

    Parameters
    ----------
    kind : one of :data:`KINDS`
    low, high : float, optional
        Inclusive range of an ``int`` or ``float``.
    special : tuple
        Values accepted as they are besides the range (``None``, ``"auto"``, ``math.inf``).
    choices : tuple of str
        The accepted values of a ``str`` parameter.
    public : str, optional
        The public input that fills it when the caller leaves it unset: ``"n"``, ``"radius"``,
        ``"bounds"`` (the release door supplies the declared value; see
        :mod:`dpcore.release.registry`).
    check : callable, optional
        ``check(value, name) -> value`` replacing the generic range check (a limits function
        with its own wording, e.g. ε's "below 1e-6 the noise drowns everything").
    doc : str
        One line for help texts.
    """

    kind: str
    low: float | None = None
    high: float | None = None
    special: tuple[Any, ...] = ()
    choices: tuple[str, ...] = ()
    public: str | None = None
    check: Callable[[Any, str], Any] | None = None
    doc: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")

    def also(self, *special: Any) -> Param:
        """The same constraint accepting more literal values (e.g. ``N_ITER.also("auto")``)."""
        return replace(self, special=(*self.special, *special))

    def filled_by(self, public: str) -> Param:
        """The same constraint, filled from the public input ``public`` when unset."""
        return replace(self, public=public)

    def accepts_special(self, value: Any) -> bool:
        for s in self.special:
            if value is s or (type(value) is type(s) and value == s):
                return True
            if isinstance(s, float) and math.isinf(s) and isinstance(value, float | int) \
                    and not isinstance(value, bool) and value == s:
                return True
        return False

    def validate(self, name: str, value: Any) -> Any:
        """``value`` checked (and converted for numbers), or a :class:`ParameterError`."""
        if self.accepts_special(value):
            return value
        if self.check is not None:
            return self.check(value, name)
        if self.kind == "int":
            return limits.check_count(name, value, int(self.low if self.low is not None else
                                                      -limits.MAX_ABS_VALUE),
                                      int(self.high if self.high is not None else 10**15))
        if self.kind == "float":
            lo = -limits.MAX_ABS_VALUE if self.low is None else self.low
            hi = limits.MAX_ABS_VALUE if self.high is None else self.high
            return limits.check_number(name, value, lo, hi)
        if self.kind == "str":
            if not isinstance(value, str) or (self.choices and value not in self.choices):
                allowed = [*self.choices, *(s for s in self.special)]
                raise ParameterError(name, f"{name} must be one of {allowed!r}, "
                                           f"got {value!r}"[:300])
            return value
        if self.kind == "bool":
            if not isinstance(value, bool):
                raise ParameterError(name, f"{name} must be true or false, got {value!r}"[:300])
            return value
        if self.kind == "bounds":
            lo, hi = _bounds_pair(name, value)
            return (lo, hi)
        if self.kind == "mapping" and not isinstance(value, Mapping):
            raise ParameterError(name, f"{name} must be an object, got {value!r}"[:300])
        return value


def _bounds_pair(name: str, value: Any):
    """``(lo, hi)`` with scalars or length-d sequences, finite and ``lo < hi``."""
    import numpy as np

    if isinstance(value, str | bytes) or not hasattr(value, "__len__") or len(value) != 2:
        raise ParameterError(name, f"{name} must be a (lower, upper) pair, got {value!r}"[:300])
    try:
        lo, hi = (np.asarray(v, dtype=float) for v in value)
    except (TypeError, ValueError):
        raise ParameterError(name, f"{name} must hold numbers, got {value!r}"[:300]) from None
    if lo.ndim > 1 or hi.ndim > 1 or (lo.ndim and hi.ndim and lo.shape != hi.shape):
        raise ParameterError(name, f"{name}: lower and upper must be numbers or equal-length "
                                   f"lists, got {value!r}"[:300])
    if not (np.all(np.abs(lo) <= limits.MAX_ABS_VALUE)
            and np.all(np.abs(hi) <= limits.MAX_ABS_VALUE)):
        raise ParameterError(name, f"{name} must be finite with |·| ≤ 1e100, got {value!r}"[:300])
    if not np.all(lo < hi):
        raise ParameterError(name, f"{name}: lower must be < upper, got {value!r}"[:300])
    if not np.all(hi - lo >= limits.MIN_RADIUS):  # ±1e-300: a box of width 0 divided by zero
        raise ParameterError(name, f"{name}: every width upper − lower must be at least 1e-100 "
                                   f"(the smallest supported radius), got {value!r}"[:300])
    return value[0], value[1]


# ---- the common parameters, declared once ---------------------------------------------------

EPSILON = Param("float", limits.MIN_EPSILON, limits.MAX_EPSILON, special=(math.inf,),
                check=lambda v, name: limits.check_epsilon(v, name, allow_inf=True),
                doc="privacy loss ε (inf: no noise)")
DELTA = Param("float", 0.0, 1.0, check=lambda v, name: limits.check_delta(v, name,
                                                                          allow_zero=True),
              doc="δ of (ε, δ)-DP")
RADIUS = Param("float", limits.MIN_RADIUS, limits.MAX_RADIUS, special=(None,), public="radius",
               check=lambda v, name: limits.check_radius(v, name),
               doc="public bound on ‖x‖₂ (declared, never read off the data)")
BOUNDS = Param("bounds", special=(None,), public="bounds",
               doc="public per-feature box (lo, hi)")
N_PUBLIC = Param("float", 1.0, limits.MAX_ABS_VALUE, special=(None,), public="n",
                 doc="public (declared or privately estimated) number of rows")
N_CLUSTERS = Param("int", 1, 10_000, check=lambda v, name: limits.check_n_clusters(v, name=name),
                   doc="number of clusters k")
N_ITER = Param("int", 1, limits.MAX_ITER, doc="number of iterations T")

# Variants several mechanisms share (a mechanism needing δ > 0, a finite ε, an integer n, …).
EPSILON_FINITE = Param("float", limits.MIN_EPSILON, limits.MAX_EPSILON,
                       check=lambda v, name: limits.check_epsilon(v, name),
                       doc="privacy loss ε (finite)")
DELTA_POSITIVE = Param("float", limits.MIN_DELTA, 1.0,
                       check=lambda v, name: limits.check_delta(v, name),
                       doc="δ of (ε, δ)-DP, in (0, 1)")
RHO = Param("float", limits.MIN_RHO, limits.MAX_RHO,
            check=lambda v, name: limits.check_rho(v, name), doc="zCDP ρ")
RADIUS_REQUIRED = replace(RADIUS, special=())
N_PUBLIC_INT = Param("int", 1, 10**15, special=(None,), public="n",
                     doc="public (declared or privately estimated) number of rows, an integer")
SHARE = Param("float", 0.0, 1.0, check=lambda v, name: limits.check_share(v, name),
              doc="a share of the budget, in (0, 1)")
SAMPLE_SIZE = Param("float", 0.0, limits.MAX_ABS_VALUE, special=(None,),
                    check=lambda v, name: limits.check_sample_size(v, name=name),
                    doc="expected sample size m (within the session memory budget)")
def _check_gamma(value: Any, name: str) -> float:
    v = limits._real(name, value)
    if not 0.0 < v < 1.0:
        raise ParameterError(name, f"{name} must lie strictly between 0 and 1 (it is the "
                                   "probability that the privacy guarantee fails on a random "
                                   f"pair of data sets), got {name}={value!r}")
    return limits.check_probability(v, name)


GAMMA = Param("float", limits.MIN_PROBABILITY, 1.0, check=_check_gamma,
              doc="random-DP confidence γ in (0, 1); small γ needs many sampled pairs")
#: The sensitivity sampler's pairs m (and order statistic k); the work bound m · (n + 1000)
#: is checked against the public n where it is known (:func:`limits.check_sampler_work`).
PAIRS = Param("int", 1, int(limits.MAX_SAMPLER_WORK // 1000),
              doc="number of sampled neighbouring pairs m")
PROJ_DIM = Param("int", 1, 10**6, special=(None,), doc="dimension d' of the random projection")


def _check_n_jobs(value: Any, name: str) -> int:
    k = limits.check_count(name, value, -(10**6), 10**6)
    if k == 0:
        raise ParameterError(name, f"{name} must be None, a positive integer or negative "
                                   "(-1: all cores), got 0")
    return k


#: scikit-learn's ``n_jobs`` for dpcore's row threads (:mod:`dpcore.core.threads`); results
#: do not depend on it.
N_JOBS = Param("int", -(10**6), 10**6, special=(None,), check=_check_n_jobs,
               doc="threads (None: the allowed cores or DPCORE_NUM_THREADS; -1: all; k)")


def declare(**constraints: Param) -> Callable:
    """Decorator for a mechanism *function*: attaches its constraints (classes use the
    ``_parameter_constraints`` class attribute directly)."""

    def attach(fn: Callable) -> Callable:
        fn._parameter_constraints = dict(constraints)
        return fn

    return attach


def constraints_of(target: Any) -> dict[str, Param]:
    """The declared constraints of an estimator class or a function ({} if none)."""
    return dict(getattr(target, "_parameter_constraints", None) or {})


def validate_params(constraints: Mapping[str, Param], params: Mapping[str, Any]) -> dict:
    """Every parameter in ``params`` that has a constraint, checked; returns the checked dict.

    Parameters without a constraint pass unchanged (the mechanism's own code decides).
    """
    out = dict(params)
    for name, value in params.items():
        c = constraints.get(name)
        if c is not None:
            out[name] = c.validate(name, value)
    return out
