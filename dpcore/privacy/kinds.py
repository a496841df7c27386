"""The four kinds of privacy guarantee, their conversions and their basic composition.

The public names live in :mod:`dpcore.privacy.guarantees` (the contract); this module holds the
definitions so that :mod:`dpcore.privacy.parts` and the ledger can build on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar

__all__ = ["ZCDP", "ApproxDP", "Guarantee", "PureDP", "RandomDP", "compose",
           "guarantee_from_dict", "zcdp_to_epsilon"]


def _check_nonneg(name: str, value: float, *, allow_inf: bool = False) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number, got {value!r}") from None
    if math.isnan(v) or v < 0 or (math.isinf(v) and not allow_inf):
        kind = "a non-negative number" if allow_inf else "a finite non-negative number"
        raise ValueError(f"{name} must be {kind}, got {value!r}")
    return v


def _check_prob(name: str, value: float) -> float:
    v = _check_nonneg(name, value)
    if v >= 1:
        raise ValueError(f"{name} must be in [0, 1), got {value!r}")
    return v


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.4g}"


def zcdp_to_epsilon(rho: float, delta: float) -> float:
    """ε such that ρ-zCDP implies (ε, δ)-DP: ``ρ + 2√(ρ ln(1/δ))`` (Bun & Steinke 2016, Prop. 1.3).

    Parameters
    ----------
    rho : float
        zCDP parameter, ≥ 0.
    delta : float
        Target δ in (0, 1).
    """
    rho = _check_nonneg("rho", rho, allow_inf=True)
    if rho == 0:
        return 0.0
    if not 0 < delta < 1:
        raise ValueError(f"converting zCDP to (ε, δ)-DP needs δ in (0, 1), got {delta!r}")
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


@dataclass(frozen=True)
class PureDP:
    """ε-differential privacy (Dwork et al. 2006)."""

    epsilon: float
    kind: ClassVar[str] = "PureDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_nonneg("epsilon", self.epsilon, allow_inf=True))

    def __str__(self) -> str:
        return f"ε = {_fmt(self.epsilon)} (pure DP)"

    def to_approx_dp(self, delta_conv: float | None = None) -> ApproxDP:
        """The same guarantee as (ε, 0)-DP."""
        return ApproxDP(self.epsilon, 0.0)

    def to_zcdp(self) -> ZCDP:
        """ε-DP implies (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
        return ZCDP(self.epsilon**2 / 2.0)

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "epsilon": self.epsilon}

    def __add__(self, other: Guarantee) -> Guarantee:
        return compose(self, other)


@dataclass(frozen=True)
class ApproxDP:
    """(ε, δ)-differential privacy."""

    epsilon: float
    delta: float
    kind: ClassVar[str] = "ApproxDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_nonneg("epsilon", self.epsilon, allow_inf=True))
        object.__setattr__(self, "delta", _check_prob("delta", self.delta))

    def __str__(self) -> str:
        return f"(ε = {_fmt(self.epsilon)}, δ = {self.delta:.3g})-DP"

    def to_approx_dp(self, delta_conv: float | None = None) -> ApproxDP:
        return self

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "epsilon": self.epsilon, "delta": self.delta}

    def __add__(self, other: Guarantee) -> Guarantee:
        return compose(self, other)


@dataclass(frozen=True)
class ZCDP:
    """ρ-zero-concentrated DP; with ``delta > 0`` the approximate (ρ, δ)-zCDP."""

    rho: float
    delta: float = 0.0
    kind: ClassVar[str] = "ZCDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", _check_nonneg("rho", self.rho, allow_inf=True))
        object.__setattr__(self, "delta", _check_prob("delta", self.delta))

    def __str__(self) -> str:
        if self.delta:
            return f"(ρ = {_fmt(self.rho)}, δ = {self.delta:.3g})-zCDP"
        return f"ρ = {_fmt(self.rho)} zCDP"

    def to_approx_dp(self, delta_conv: float | None = None) -> ApproxDP:
        """(ρ, δ)-zCDP ⇒ (ρ + 2√(ρ ln(1/δ')), δ + δ')-DP for the chosen ``delta_conv`` = δ'."""
        if self.rho == 0:
            return ApproxDP(0.0, self.delta)
        if delta_conv is None:
            raise ValueError("converting zCDP to (ε, δ)-DP needs delta_conv, the δ' to spend on it")
        return ApproxDP(zcdp_to_epsilon(self.rho, delta_conv), self.delta + delta_conv)

    def as_dict(self) -> dict[str, Any]:
        return {"type": self.kind, "rho": self.rho, "delta": self.delta}

    def __add__(self, other: Guarantee) -> Guarantee:
        return compose(self, other)


@dataclass(frozen=True)
class RandomDP:
    """(ε, δ, γ)-random DP: (ε, δ)-DP except on a γ-fraction of neighbouring data sets."""

    epsilon: float
    delta: float
    gamma: float
    kind: ClassVar[str] = "RandomDP"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", _check_nonneg("epsilon", self.epsilon, allow_inf=True))
        object.__setattr__(self, "delta", _check_prob("delta", self.delta))
        object.__setattr__(self, "gamma", _check_prob("gamma", self.gamma))

    def __str__(self) -> str:
        return (
            f"(ε = {_fmt(self.epsilon)}, δ = {self.delta:.3g}, γ = {self.gamma:.3g})-random DP"
        )

    def to_approx_dp(self, delta_conv: float | None = None) -> ApproxDP:
        if self.gamma == 0:
            return ApproxDP(self.epsilon, self.delta)
        raise TypeError(
            f"{self} holds only on a 1 - γ fraction of data sets; it cannot be stated as (ε, δ)-DP"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "type": self.kind, "epsilon": self.epsilon, "delta": self.delta, "gamma": self.gamma
        }

    def __add__(self, other: Guarantee) -> Guarantee:
        return compose(self, other)


Guarantee = PureDP | ApproxDP | ZCDP | RandomDP


def _as_eps_delta_gamma(g: Guarantee) -> tuple[float, float, float]:
    if isinstance(g, PureDP):
        return g.epsilon, 0.0, 0.0
    if isinstance(g, ApproxDP):
        return g.epsilon, g.delta, 0.0
    if isinstance(g, RandomDP):
        return g.epsilon, g.delta, g.gamma
    raise TypeError(
        f"{g} cannot be composed with (ε, δ)-type guarantees directly: convert it first with "
        ".to_approx_dp(delta_conv)"
    )


def compose(*guarantees: Guarantee) -> Guarantee:
    """Sequential composition of guarantees.

    Same kinds add (ε and δ; ρ and δ; γ by the union bound). Mixed kinds take the weakest
    common type: pure + approximate → :class:`ApproxDP`; pure + zCDP → :class:`ZCDP` (pure ε
    converted to ε²/2); anything (ε, δ)-type + random DP → :class:`RandomDP`. zCDP mixed with
    (ε, δ)-DP raises :class:`TypeError`: the conversion needs a δ' that only the caller can choose.
    With no argument, returns ``PureDP(0)``.
    """
    for g in guarantees:
        if not isinstance(g, PureDP | ApproxDP | ZCDP | RandomDP):
            raise TypeError(f"not a privacy guarantee: {g!r}")
    if not guarantees:
        return PureDP(0.0)
    kinds = {type(g) for g in guarantees}
    if ZCDP in kinds:
        if kinds - {ZCDP, PureDP}:
            raise TypeError(
                "cannot compose zCDP with (ε, δ)-DP or random DP without choosing a δ': "
                "convert the zCDP terms with .to_approx_dp(delta_conv) first"
            )
        zs = [g if isinstance(g, ZCDP) else g.to_zcdp() for g in guarantees]
        return ZCDP(math.fsum(z.rho for z in zs), min(math.fsum(z.delta for z in zs), _ONE_MINUS))
    triples = [_as_eps_delta_gamma(g) for g in guarantees]
    eps = math.fsum(t[0] for t in triples)
    delta = min(math.fsum(t[1] for t in triples), _ONE_MINUS)
    if RandomDP in kinds:
        return RandomDP(eps, delta, min(math.fsum(t[2] for t in triples), _ONE_MINUS))
    if ApproxDP in kinds:
        return ApproxDP(eps, delta)
    return PureDP(eps)


_KINDS: dict[str, type] = {"PureDP": PureDP, "ApproxDP": ApproxDP, "ZCDP": ZCDP,
                           "RandomDP": RandomDP}


def guarantee_from_dict(d: dict[str, Any]) -> Guarantee:
    """Inverse of ``Guarantee.as_dict()`` (e.g. a guarantee stored by the lasting ledger)."""
    try:
        cls = _KINDS[d["type"]]
    except (KeyError, TypeError):
        raise ValueError(f"not a stored privacy guarantee: {d!r}") from None
    return cls(**{k: v for k, v in d.items() if k != "type"})


# Composed δ or γ are capped just below 1 so a sum stays a valid (if vacuous) guarantee.
_ONE_MINUS = math.nextafter(1.0, 0.0)
_REL_TOL = 1e-9


def _leq(a: float, b: float) -> bool:
    return a <= b + _REL_TOL * max(abs(b), 1e-12)

