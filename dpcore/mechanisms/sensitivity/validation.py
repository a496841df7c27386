"""Argument checks shared by the sensitivity sampler's modules and the Bernstein mechanism.

Its own module so that :mod:`.config`, :mod:`.estimation` and :mod:`.bernstein` can all import
them at the top, without an import cycle (they used to live in :mod:`.sampler`, which imports
:mod:`.bernstein`).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _check_gamma(gamma: float) -> float:
    """The confidence ``gamma`` as a float strictly inside (0, 1).

    Raises
    ------
    ValueError
        If it is not a number in (0, 1); the message says what γ means.
    """
    try:
        g = float(gamma)
    except (TypeError, ValueError):
        raise ValueError(f"gamma must be a number in (0, 1), got {gamma!r}") from None
    if not 0.0 < g < 1.0:
        raise ValueError(
            f"gamma must lie strictly between 0 and 1 (it is the probability that the privacy "
            f"guarantee fails on a random pair of data sets), got gamma={gamma!r}"
        )
    return g


def _check_count(value: Any, name: str, minimum: int = 1) -> int:
    """``value`` as an int ``>= minimum`` (an integral float is accepted, a bool is not).

    Raises
    ------
    ValueError
        Naming ``name`` when the value is not such an integer.
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        if isinstance(value, float | np.floating) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)
