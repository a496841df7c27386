"""Registered draw sites: which random draws in a release are not raw noise.

The rule is stated in :mod:`dpcore.privacy.noise` (module docstring, "Which random draws are
noise"), which re-exports :func:`public_randomness`, :func:`selection_sampler`, :func:`draw_site`
and :func:`postprocessing_seed`; ``tests/test_noise_trap.py`` enforces it. The samplers behind
noise.py's adders register themselves with :func:`register_defended`.
"""

from __future__ import annotations

import os
import types
from collections.abc import Callable

from dpcore.core.rng import RNGLike, as_generator

__all__ = ["draw_site", "postprocessing_seed", "public_randomness", "register_defended",
           "selection_sampler"]

#: Code object of a registered draw site -> (kind, reason); kind "public" or "selection".
SITES: dict[types.CodeType, tuple[str, str]] = {}
#: Code object of a defended sampler's draw -> (reason, condition on its frame or None).
DEFENDED: dict[types.CodeType, tuple[str, Callable[[types.FrameType], bool] | None]] = {}
#: The dpcore package's directory: a frame of its code that is not registered decides "raw".
PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _check_reason(reason: str) -> str:
    if not isinstance(reason, str) or not reason.strip():
        raise ValueError("a draw site needs its reason (why its draws are not raw noise)")
    return reason.strip()


def _register(kind: str, reason: str):
    reason = _check_reason(reason)

    def mark(fn):
        SITES[fn.__code__] = (kind, reason)
        return fn

    return mark


def public_randomness(reason: str):
    """Mark a function whose random draws are not a noise term (noise.py's rule, kind 3).

    The function must make its draws itself (the innermost frame decides) and must not add a
    random term to a statistic of the private data; ``reason`` says why its draws are public.
    Returns the function unchanged.
    """
    return _register("public", reason)


def selection_sampler(reason: str):
    """Mark a sampler of DP randomness whose output is a discrete choice (noise.py's rule,
    kind 2): an index, a grid point, a bit. Returns the function unchanged."""
    return _register("selection", reason)


def register_defended(fn: Callable, reason: str, *,
                      when: Callable[[types.FrameType], bool] | None = None) -> None:
    """Register a sampler behind noise.py's defended adders (kind 1); ``when(frame)``, given the
    sampler's own frame, says whether this draw is the defended one (default: always)."""
    DEFENDED[fn.__code__] = (_check_reason(reason), when)


def draw_site(frame: types.FrameType | None) -> tuple[str, str] | None:
    """Why a random draw made from ``frame`` is not raw noise: ``(kind, reason)`` with kind
    "defended", "selection" or "public", or None for a raw draw.

    The innermost frame, from ``frame`` outwards, that is a registered site or dpcore code
    decides; frames of other libraries (numpy, SciPy, scikit-learn) are looked through.
    """
    f = frame
    while f is not None:
        code = f.f_code
        defended = DEFENDED.get(code)
        if defended is not None:
            reason, when = defended
            return ("defended", reason) if when is None or when(f) else None
        site = SITES.get(code)
        if site is not None:
            return site
        if code.co_filename.startswith(PACKAGE_DIR):
            return None
        f = f.f_back
    return None


@public_randomness("a seed for a library routine (scikit-learn's k-means++) run on values that "
                   "are already private: post-processing")
def postprocessing_seed(rng: RNGLike = None) -> int:
    """An int seed for a library's ``random_state`` in post-processing of private values."""
    return int(as_generator(rng).integers(2**31 - 1))
