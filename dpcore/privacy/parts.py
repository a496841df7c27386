"""The parts of a release: what it is made of, for the ledger's tight total.

A part is a guarantee (:class:`~dpcore.privacy.kinds.PureDP`, ``ApproxDP``, ``ZCDP``: only what
the step promises) or a mechanism whose privacy curve is known exactly (:class:`Laplace`,
:class:`Gaussian`). :func:`parts_consistent` checks that parts describe a release without
leaving anything out; :func:`atom_of` gives :mod:`dpcore.privacy.accountant` its atoms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from dpcore.privacy.kinds import (
    ZCDP,
    ApproxDP,
    Guarantee,
    PureDP,
    RandomDP,
    _check_nonneg,
    _fmt,
    _leq,
    guarantee_from_dict,
    zcdp_to_epsilon,
)

__all__ = ["Gaussian", "Laplace", "Part", "atom_of", "part_from_dict", "parts_consistent",
           "scale_part"]


@dataclass(frozen=True)
class Laplace:
    """A part that *is* the Laplace mechanism: ℓ1 sensitivity Δ, scale Δ/ε (ε-DP, and its exact
    Rényi curve is known). Only for noise drawn as continuous Laplace: inside the release door
    the noise is discrete (floating-point safe), and its parts are plain :class:`PureDP`."""

    epsilon: float
    kind: ClassVar[str] = "Laplace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_nonneg("epsilon", self.epsilon))

    def __str__(self) -> str:
        return f"Laplace mechanism (ε = {_fmt(self.epsilon)})"

    @property
    def guarantee(self) -> PureDP:
        return PureDP(self.epsilon)

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "epsilon": self.epsilon}


@dataclass(frozen=True)
class Gaussian:
    """A part that *is* the Gaussian mechanism: ℓ2 sensitivity Δ, standard deviation z·Δ
    (1/(2z²)-zCDP, exact Rényi curve). Continuous Gaussian noise only (see :class:`Laplace`)."""

    noise_multiplier: float
    kind: ClassVar[str] = "Gaussian"

    def __post_init__(self) -> None:
        z = _check_nonneg("noise_multiplier", self.noise_multiplier)
        if z == 0:
            raise ValueError("noise_multiplier must be > 0")
        object.__setattr__(self, "noise_multiplier", z)

    def __str__(self) -> str:
        return f"Gaussian mechanism (σ/Δ = {_fmt(self.noise_multiplier)})"

    @property
    def guarantee(self) -> ZCDP:
        return ZCDP(0.5 / self.noise_multiplier**2)

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "noise_multiplier": self.noise_multiplier}


#: One part of a release: what it is (a mechanism) or only what it promises (a guarantee).
Part = PureDP | ApproxDP | ZCDP | Laplace | Gaussian
_PART_TYPES = (PureDP, ApproxDP, ZCDP, Laplace, Gaussian)


def part_from_dict(d: dict[str, Any]) -> Part:
    """Inverse of ``Part.as_dict()``; random DP is never a part of a DP release."""
    if isinstance(d, dict) and d.get("type") in ("Laplace", "Gaussian"):
        cls = Laplace if d["type"] == "Laplace" else Gaussian
        return cls(**{k: v for k, v in d.items() if k != "type"})
    g = guarantee_from_dict(d)
    if isinstance(g, RandomDP):
        raise ValueError("a random-DP guarantee is not a part of a DP release")
    return g


def _part_guarantee(p: Part) -> Guarantee:
    return p.guarantee if isinstance(p, Laplace | Gaussian) else p


def atom_of(p: Part) -> tuple:
    """The accountant's atom of a part (:mod:`dpcore.privacy.accountant`)."""
    if isinstance(p, Laplace):
        return ("laplace", p.epsilon)
    if isinstance(p, Gaussian):
        return ("gaussian", p.noise_multiplier)
    if isinstance(p, PureDP):
        return ("rr", p.epsilon, 0.0)
    if isinstance(p, ApproxDP):
        return ("rr", p.epsilon, p.delta)
    if isinstance(p, ZCDP):
        return ("zcdp", p.rho, p.delta)
    raise TypeError(f"not a part of a DP release: {p!r}")


def scale_part(p: Part, factor: float) -> Part:
    """``p`` with its ε (or ρ) multiplied by ``factor`` ≥ 1: the release door's floating-point
    defence (:func:`dpcore.privacy.noise.defended_noise`) grows every part by (1 + η)². A
    :class:`Laplace` or :class:`Gaussian` part becomes its guarantee (the defended noise is
    discrete)."""
    g = _part_guarantee(p)
    if isinstance(g, PureDP):
        return PureDP(g.epsilon * factor)
    if isinstance(g, ApproxDP):
        return ApproxDP(g.epsilon * factor, g.delta)
    assert isinstance(g, ZCDP)
    return ZCDP(g.rho * factor, g.delta)


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b), 1e-12)


def parts_consistent(parts: Sequence[Part], guarantee: Guarantee) -> bool:
    """Whether ``parts`` compose (basic rules) to exactly ``guarantee``: a description of a
    release that leaves nothing out. zCDP parts of an (ε, δ) release are converted with the δ
    its parts leave (FriendlyCore's "run in zCDP, report (ε, δ)")."""
    if not parts or isinstance(guarantee, RandomDP):
        return False
    try:
        gs = [_part_guarantee(p) for p in parts]
    except AttributeError:
        return False
    if not all(isinstance(p, _PART_TYPES) for p in parts):
        return False
    zc = [g for g in gs if isinstance(g, ZCDP)]
    rest = [g for g in gs if not isinstance(g, ZCDP)]
    eps = math.fsum(g.epsilon for g in rest)
    delta = math.fsum(getattr(g, "delta", 0.0) for g in gs)
    rho = math.fsum(g.rho for g in zc)
    if isinstance(guarantee, PureDP):
        return not zc and delta == 0 and _close(eps, guarantee.epsilon)
    if isinstance(guarantee, ZCDP):
        rho_all = rho + math.fsum(g.epsilon**2 / 2 for g in rest)
        return (not any(isinstance(g, ApproxDP) and g.delta > 0 for g in rest)
                and _close(rho_all, guarantee.rho) and _leq(delta, guarantee.delta))
    if not _leq(delta, guarantee.delta):
        return False
    if rho > 0:
        left = guarantee.delta - delta
        eps += zcdp_to_epsilon(rho, left) if left > 0 else math.inf
    return _close(eps, guarantee.epsilon)

