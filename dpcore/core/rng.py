"""One way to turn a user's ``rng`` argument into a :class:`numpy.random.Generator`.

Follows SciPy SPEC 7: ``None`` draws fresh OS entropy, an int (or ``SeedSequence``) seeds a new
generator, and a ``Generator`` is used as is (so callers can share one stream). Nothing in dpcore
touches the global NumPy random state.
"""

from __future__ import annotations

import numbers
from typing import TypeAlias

import numpy as np

RNGLike: TypeAlias = int | np.integer | np.random.SeedSequence | np.random.Generator | None


def as_generator(rng: RNGLike = None) -> np.random.Generator:
    """Return a Generator for ``rng``.

    Parameters
    ----------
    rng : None, int, numpy.random.SeedSequence or numpy.random.Generator
        ``None`` gives a generator seeded from OS entropy; an int or SeedSequence a reproducible
        one; a Generator is returned unchanged (not copied).

    Raises
    ------
    TypeError
        For anything else, in particular the legacy ``RandomState`` (its global-state habits are
        what this function exists to avoid).
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if int(rng) < 0:
            raise ValueError(f"rng seed must be a non-negative integer, got {rng!r}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        "rng must be None, a non-negative int, a numpy SeedSequence or a numpy Generator, "
        f"got {type(rng).__name__}"
    )
