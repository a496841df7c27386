"""The sensitivity sampler as a release: Sample-Then-Respond (paper 004) on a statistic of the
menu (:mod:`dpcore.mechanisms.sensitivity.statistics`), with a public oracle distribution."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from dpcore.data import limits
from dpcore.data.params import N_PUBLIC_INT, declare
from dpcore.mechanisms.sensitivity import sampler as sensitivity
from dpcore.mechanisms.sensitivity import statistics
from dpcore.privacy.noise import public_randomness
from dpcore.release.tables import read_table

__all__ = ["sensitivity_release"]


@declare(n=N_PUBLIC_INT)
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
    n: int | None = None,
    rng: np.random.Generator | None = None,
):
    """Sample-Then-Respond (paper 004) on a statistic of the
    :mod:`dpcore.mechanisms.sensitivity.statistics` menu.

    The sensitivity sampler needs a *public* distribution P (the oracle): ``"uniform"`` draws
    records uniformly from the box ``bounds`` = [lo, hi] in every coordinate (default: the
    statistic's own ``bounds`` parameter, else [0, 1]); any other value is a file or sample data
    set holding a public table with as many numeric columns as the data.

    ``n`` is the public n (the door fills it from the declared or estimated n): the sensitivity
    is sampled on neighbours of that size, and the statistic is made total
    (:meth:`~dpcore.mechanisms.sensitivity.statistics.Statistic.total`), so a private table
    with fewer rows than the statistic needs (n < 2, n < k) gets a release like any other (its
    value is the statistic's public default, noised) instead of a ⊥ that would reveal its size.
    """
    d = X.shape[1]
    if n is not None:  # the declared constraint (a function is not checked by its decorator)
        n = N_PUBLIC_INT.validate("n", n)
    limits.check_params(epsilon=epsilon, m=m, d=d)
    if gamma is not None:
        limits.check_probability(gamma, "gamma")
    if statistic_params is not None and not isinstance(statistic_params, Mapping):
        raise ValueError(f"statistic_params must be an object, got {statistic_params!r}"[:200])
    stat = statistics.get_statistic(statistic, **(statistic_params or {}))
    if n is not None:
        stat = stat.total(d)
    if oracle == "uniform":
        pair = bounds if bounds is not None else stat.params.get("bounds", (0.0, 1.0))
        if not isinstance(pair, list | tuple | np.ndarray) or len(pair) != 2:
            raise ValueError(f"bounds must be [lo, hi], got {pair!r}"[:200])
        lo, hi = (limits.check_number(f"bounds[{i}]", v, -limits.MAX_ABS_VALUE,
                                      limits.MAX_ABS_VALUE) for i, v in enumerate(pair))
        if not lo < hi:
            raise ValueError(f"bounds must be [lo, hi] with lo < hi, got {[lo, hi]!r}")

        @public_randomness("records uniform in the public box (the sensitivity sampler's "
                           "oracle): independent of the data")
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
        rng=rng, n=None if n is None else int(n))
