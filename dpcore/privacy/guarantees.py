"""Privacy guarantees, their conversions and composition, and a session ledger.

Four guarantee types, all small frozen value objects:

* :class:`PureDP` ``(ε)``: ε-differential privacy.
* :class:`ApproxDP` ``(ε, δ)``: (ε, δ)-differential privacy.
* :class:`ZCDP` ``(ρ, δ=0)``: ρ-zero-concentrated DP (Bun & Steinke 2016); ``δ > 0`` is the
  approximate (ρ, δ)-zCDP that FriendlyCore uses (Tsfadia et al. 2022, Sec. 2).
* :class:`RandomDP` ``(ε, δ, γ)``: random differential privacy (Hall, Rinaldo & Wasserman 2012),
  the guarantee of the sensitivity sampler (Rubinstein & Aldà 2017, Def. 4): (ε, δ)-DP on all but a
  γ-fraction of neighbouring data sets drawn from the population.

Conversions: pure ε-DP is (ε²/2)-zCDP (Bun & Steinke, Prop. 1.4); ρ-zCDP is
(ρ + 2√(ρ ln(1/δ')), δ')-DP for every δ' > 0 (their Prop. 1.3). Sequential composition adds ε and δ,
adds ρ (and the δ of approximate zCDP), and adds γ by the union bound.

:class:`PrivacyLedger` records what a session released against a budget and refuses, without
recording anything, a release that would exceed it.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from dpcore.core.errors import BudgetExceededError, PrivacyLeakWarning

__all__ = [
    "ApproxDP",
    "BudgetExceededError",
    "Guarantee",
    "LedgerEntry",
    "PrivacyLeakWarning",
    "PrivacyLedger",
    "PureDP",
    "RandomDP",
    "ZCDP",
    "compose",
    "guarantee_from_dict",
    "privacy_alias",
    "zcdp_to_epsilon",
]


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


def privacy_alias(old: str) -> property:
    """A read-only property ``old`` returning ``self.privacy_``: the deprecated name of a
    result's delivered guarantee.

    Every estimator and release-function result names its guarantee ``privacy_``; results that
    called it ``privacy`` or ``guarantee`` keep that name as this alias for existing callers
    (the release door and the run configurations still read them). It does not warn yet: the
    run configurations record every warning of a run in its result.
    """

    def get(self) -> Guarantee:
        return self.privacy_

    get.__name__ = old
    get.__doc__ = "Deprecated name of ``privacy_`` (the delivered guarantee); use ``privacy_``."
    return property(get)


def _leq(a: float, b: float) -> bool:
    return a <= b + _REL_TOL * max(abs(b), 1e-12)


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release."""

    label: str
    guarantee: Guarantee
    params: dict[str, Any] = field(default_factory=dict)
    timestamp: float = field(default_factory=time.time)

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "guarantee": self.guarantee.as_dict(),
            "guarantee_text": str(self.guarantee),
            "params": self.params,
            "timestamp": self.timestamp,
        }


class PrivacyLedger:
    """The releases of a session, composed against a total budget.

    The budget's type decides how entries are composed (:meth:`total`):

    * ``PureDP`` budget: only pure entries; ε adds.
    * ``ZCDP`` budget: pure (as ε²/2) and zCDP entries; ρ and δ add.
    * ``ApproxDP`` budget: pure and approximate entries add; all zCDP entries are first composed
      in zCDP (ρ adds, which is tighter than converting each) and converted once, spending on
      the conversion all the δ the budget has left (so the total δ then equals the budget's δ).
    * ``RandomDP`` budget: as ``ApproxDP``, and random-DP entries add their γ (union bound).

    A release whose kind cannot be composed into the budget raises :class:`TypeError`; one that
    would exceed it raises :class:`BudgetExceededError`. Neither records anything.

    Parameters
    ----------
    budget : Guarantee
        The total the session may spend.
    """

    def __init__(self, budget: Guarantee) -> None:
        if not isinstance(budget, PureDP | ApproxDP | ZCDP | RandomDP):
            raise TypeError(f"budget must be a privacy guarantee, got {budget!r}")
        self.budget: Guarantee = budget
        self._entries: list[LedgerEntry] = []

    @classmethod
    def from_entries(cls, budget: Guarantee, entries: list[LedgerEntry]) -> PrivacyLedger:
        """A ledger holding ``entries`` as already recorded (e.g. read back from SQLite).

        They are not re-checked one by one: :meth:`spend` checks the composed total of all of
        them with the new release, which is what matters.
        """
        led = cls(budget)
        led._entries = list(entries)
        return led

    @property
    def entries(self) -> list[LedgerEntry]:
        """The recorded releases, oldest first (a copy)."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def _compose(self, guarantees: list[Guarantee]) -> Guarantee:
        b = self.budget
        allowed: dict[type, tuple[type, ...]] = {
            PureDP: (PureDP,),
            ZCDP: (PureDP, ZCDP),
            ApproxDP: (PureDP, ApproxDP, ZCDP),
            RandomDP: (PureDP, ApproxDP, ZCDP, RandomDP),
        }
        for g in guarantees:
            if not isinstance(g, allowed[type(b)]):
                raise TypeError(
                    f"a {g.kind} release ({g}) cannot be composed into this ledger's "
                    f"{b.kind} budget ({b})"
                )
        if isinstance(b, PureDP | ZCDP):
            # Seeding with the budget's zero makes pure entries come out as ρ = ε²/2 under zCDP.
            return compose(type(b)(0.0), *guarantees)
        zc = [g for g in guarantees if isinstance(g, ZCDP)]
        rest = [g for g in guarantees if not isinstance(g, ZCDP)]
        eps, delta, gamma = _as_eps_delta_gamma(compose(*rest))
        if zc:
            z = compose(*zc)
            assert isinstance(z, ZCDP)
            delta += z.delta
            if z.rho > 0:
                delta_conv = b.delta - delta
                eps += zcdp_to_epsilon(z.rho, delta_conv) if delta_conv > 0 else math.inf
                delta = max(b.delta, delta)
        delta = min(delta, _ONE_MINUS)
        if isinstance(b, RandomDP):
            return RandomDP(eps, delta, min(gamma, _ONE_MINUS))
        return ApproxDP(eps, delta)

    def total(self) -> Guarantee:
        """Composition of all recorded releases, in the budget's type."""
        return self._compose([e.guarantee for e in self._entries])

    @staticmethod
    def _components(g: Guarantee) -> dict[str, float]:
        return {k: v for k, v in g.as_dict().items() if k != "type"}

    def _within(self, total: Guarantee) -> bool:
        budget = self._components(self.budget)
        return all(_leq(v, budget[k]) for k, v in self._components(total).items())

    def can_spend(self, guarantee: Guarantee) -> bool:
        """Whether ``guarantee`` could be spent now without exceeding the budget."""
        try:
            return self._within(self._compose([*self._entries_g(), guarantee]))
        except TypeError:
            return False

    def _entries_g(self) -> list[Guarantee]:
        return [e.guarantee for e in self._entries]

    def spend(self, label: str, guarantee: Guarantee, **params: Any) -> LedgerEntry:
        """Record a release, or refuse it.

        Raises
        ------
        BudgetExceededError
            If the composed total would exceed the budget (nothing is recorded).
        TypeError
            If the release's kind cannot be composed into the budget's type.
        """
        new_total = self._compose([*self._entries_g(), guarantee])
        if not self._within(new_total):
            raise BudgetExceededError(
                f"refused '{label}': it needs {guarantee}, but {self.total()} of the budget "
                f"{self.budget} is already spent ({self.remaining()} left)"
            )
        entry = LedgerEntry(str(label), guarantee, dict(params))
        self._entries.append(entry)
        return entry

    def remaining(self) -> Guarantee:
        """Budget minus total, component by component, floored at zero."""
        total = self._components(self.total())
        budget = self._components(self.budget)
        left = {k: max(v - total.get(k, 0.0), 0.0) for k, v in budget.items()}
        return type(self.budget)(**left)

    def reset(self) -> None:
        """Forget every recorded release."""
        self._entries.clear()

    def to_frame(self) -> pd.DataFrame:
        """One row per release: label, guarantee text and its parameters, time, release params."""
        rows = []
        for e in self._entries:
            row: dict[str, Any] = {"label": e.label, "guarantee": str(e.guarantee)}
            row.update(e.guarantee.as_dict())
            row["params"] = json.dumps(e.params, default=str, sort_keys=True)
            row["time"] = pd.Timestamp(e.timestamp, unit="s", tz="UTC")
            rows.append(row)
        cols = ["label", "guarantee", "type", "epsilon", "delta", "rho", "gamma", "params", "time"]
        return pd.DataFrame(rows, columns=cols)

    def to_json(self, indent: int | None = 2) -> str:
        """The budget, every entry, the total and what remains, as JSON."""
        doc = {
            "budget": self.budget.as_dict(),
            "entries": [e.as_dict() for e in self._entries],
            "total": self.total().as_dict(),
            "remaining": self.remaining().as_dict(),
        }
        return json.dumps(doc, indent=indent, default=str)
