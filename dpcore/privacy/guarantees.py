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
recording anything, a release that would exceed it. It keeps two accounts:

* the **DP account** (pure, approximate and zCDP releases) bounds the worst case. It reports the
  *basic* total (the rules above) and the *tight* total of :mod:`dpcore.privacy.accountant`, a
  Rényi filter over each release's parts (:class:`Laplace`, :class:`Gaussian`, or guarantees),
  and refuses against the better of the two (see :class:`PrivacyLedger`);
* the **random-DP account**, only when the budget carries γ (a :class:`RandomDP` budget):
  random-DP releases never enter the DP account. Random DP bounds nothing in the worst case: its
  (ε, δ) hold only on all but a γ-fraction of data sets drawn from an assumed population
  (:data:`RANDOM_DP_CAVEAT`).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pandas as pd

from dpcore.core.errors import BudgetExceededError, PrivacyLeakWarning
from dpcore.privacy.accountant import FilterPlan

__all__ = [
    "ACCOUNTANTS",
    "RANDOM_DP_CAVEAT",
    "ApproxDP",
    "BudgetExceededError",
    "Gaussian",
    "Guarantee",
    "Laplace",
    "LedgerEntry",
    "Part",
    "PrivacyLeakWarning",
    "PrivacyLedger",
    "PureDP",
    "RandomDP",
    "ZCDP",
    "compose",
    "guarantee_from_dict",
    "part_from_dict",
    "parts_consistent",
    "scale_part",
    "zcdp_to_epsilon",
]

#: What random DP does not promise, in one sentence (the ledger view and the curator's refusal).
RANDOM_DP_CAVEAT = (
    "Random DP (the sensitivity sampler) promises (ε, δ)-DP only for all but a γ-fraction of "
    "data sets drawn from an assumed population, so it bounds nothing for an unlucky data set "
    "or a worst-case neighbour: its releases are kept out of the DP total.")


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


# ---- the parts of a release ---------------------------------------------------------------------


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


def _atom(p: Part) -> tuple:
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


def _parts_as_guarantee(parts: Sequence[Part]) -> Guarantee | None:
    """zCDP-only parts as one zCDP guarantee (so the entry composes natively); else None."""
    gs = [_part_guarantee(p) for p in parts]
    if gs and all(isinstance(g, ZCDP) for g in gs):
        return ZCDP(math.fsum(g.rho for g in gs), min(math.fsum(g.delta for g in gs), _ONE_MINUS))
    return None


@dataclass(frozen=True)
class LedgerEntry:
    """One recorded release.

    ``parts``: what the release is made of (e.g. DP-Lloyd's T rounds of noisy counts and sums),
    for the tight accountant; None: the guarantee is the only part. ``analyst``: who spent it
    (a named analyst of the lasting ledger), or None.
    """

    label: str
    guarantee: Guarantee
    params: dict[str, Any] = field(default_factory=dict)
    timestamp: float = field(default_factory=time.time)
    parts: tuple[Part, ...] | None = None
    analyst: str | None = None

    @property
    def account(self) -> str:
        """"dp" or "random" (random-DP releases are kept out of the DP account)."""
        return "random" if isinstance(self.guarantee, RandomDP) else "dp"

    def atoms(self) -> list[tuple]:
        """The accountant's atoms of this release (its parts, or its guarantee)."""
        return [_atom(p) for p in (self.parts if self.parts else (self.guarantee,))]

    def as_dict(self) -> dict[str, Any]:
        d = {
            "label": self.label,
            "guarantee": self.guarantee.as_dict(),
            "guarantee_text": str(self.guarantee),
            "account": self.account,
            "params": self.params,
            "timestamp": self.timestamp,
        }
        if self.parts:
            d["parts"] = [p.as_dict() for p in self.parts]
        if self.analyst is not None:
            d["analyst"] = self.analyst
        return d


#: How a ledger's DP account refuses: "tight" (the better of the basic total and the Rényi
#: filter), "filter" (the Rényi filter alone) or "basic" (basic composition alone).
ACCOUNTANTS = ("tight", "filter", "basic")


@dataclass(frozen=True)
class Accounts:
    """What a ledger has spent, per account (:meth:`PrivacyLedger.accounts`).

    ``dp_basic``/``dp_tight``: the DP account's basic total and its tight total (None where the
    budget has no δ, or an entry cannot be accounted tightly); ``dp_spent``: the one refusals
    use; ``random``: the random-DP account's total (all releases, γ by the union bound), or
    None without a random-DP account.
    """

    dp_budget: Guarantee
    dp_basic: Guarantee
    dp_tight: ApproxDP | None
    dp_spent: Guarantee
    refuses_by: str
    filter_member: str | None
    random_budget: RandomDP | None
    random: Guarantee | None
    random_entries: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "dp": {"budget": self.dp_budget.as_dict(), "basic": self.dp_basic.as_dict(),
                   "tight": None if self.dp_tight is None else self.dp_tight.as_dict(),
                   "spent": self.dp_spent.as_dict(), "refuses_by": self.refuses_by,
                   "filter_member": self.filter_member},
            "random": None if self.random_budget is None else {
                "budget": self.random_budget.as_dict(),
                "total": None if self.random is None else self.random.as_dict(),
                "entries": self.random_entries, "caveat": RANDOM_DP_CAVEAT},
        }


class PrivacyLedger:
    """The releases of a session, composed against a total budget, in two accounts.

    **DP account** (pure, approximate and zCDP releases), against the budget's (ε, δ) (its
    ``(ε, δ)`` part for a :class:`RandomDP` budget). Its *basic* total follows the budget's type:

    * ``PureDP`` budget: only pure entries; ε adds.
    * ``ZCDP`` budget: pure (as ε²/2) and zCDP entries; ρ and δ add.
    * ``ApproxDP`` budget: pure and approximate entries add; all zCDP entries are first composed
      in zCDP (ρ adds, which is tighter than converting each) and converted once, spending on
      the conversion all the δ the budget has left (so the total δ then equals the budget's δ).

    With δ > 0 it also has a *tight* total: :class:`dpcore.privacy.accountant.FilterPlan`, a
    Rényi filter over every entry's parts, fixed from the budget. ``accountant`` says what
    refuses: ``"tight"`` (default) the better of the two totals, ``"filter"`` the Rényi filter
    alone (valid whatever an adaptive analyst does, at the price of refusing some spends the
    basic total allows), ``"basic"`` the basic total alone. See :meth:`accounts`.

    **Random-DP account** (only with a ``RandomDP`` budget): every entry composed as random DP
    (ε and δ add, γ by the union bound) against the whole budget. A random-DP release never
    moves the DP account; a ledger without γ refuses it (:class:`TypeError`).

    A release whose kind cannot be composed raises :class:`TypeError`; one that would exceed an
    account raises :class:`BudgetExceededError`. Neither records anything.

    Parameters
    ----------
    budget : Guarantee
        The total the session may spend.
    accountant : {"tight", "filter", "basic"}
    plan : FilterPlan, optional
        The Rényi filter's parameters (default: :meth:`FilterPlan.for_budget` of the DP budget).
    """

    def __init__(self, budget: Guarantee, *, accountant: str = "tight",
                 plan: FilterPlan | None = None) -> None:
        if not isinstance(budget, PureDP | ApproxDP | ZCDP | RandomDP):
            raise TypeError(f"budget must be a privacy guarantee, got {budget!r}")
        if accountant not in ACCOUNTANTS:
            raise ValueError(f"accountant must be one of {ACCOUNTANTS}, got {accountant!r}")
        self.budget: Guarantee = budget
        self.accountant = accountant
        dp = self.dp_budget
        if plan is None and isinstance(dp, ApproxDP) and dp.delta > 0 and dp.epsilon > 0 \
                and math.isfinite(dp.epsilon):
            plan = FilterPlan.for_budget(dp.epsilon, dp.delta)
        self.plan: FilterPlan | None = plan if accountant != "basic" else None
        self._entries: list[LedgerEntry] = []

    @classmethod
    def from_entries(cls, budget: Guarantee, entries: list[LedgerEntry], *,
                     accountant: str = "tight", plan: FilterPlan | None = None) -> PrivacyLedger:
        """A ledger holding ``entries`` as already recorded (e.g. read back from SQLite).

        They are not re-checked one by one: :meth:`spend` checks the composed totals of all of
        them with the new release, which is what matters.
        """
        led = cls(budget, accountant=accountant, plan=plan)
        led._entries = list(entries)
        return led

    def copy(self) -> PrivacyLedger:
        return PrivacyLedger.from_entries(self.budget, self._entries,
                                          accountant=self.accountant, plan=self.plan)

    @property
    def entries(self) -> list[LedgerEntry]:
        """The recorded releases, oldest first (a copy)."""
        return list(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    # ---- the two accounts' budgets --------------------------------------------------------

    @property
    def dp_budget(self) -> Guarantee:
        """The DP account's budget: the budget, or the (ε, δ) of a random-DP budget."""
        b = self.budget
        if isinstance(b, RandomDP):
            return ApproxDP(b.epsilon, b.delta) if b.delta > 0 else PureDP(b.epsilon)
        return b

    @property
    def random_budget(self) -> RandomDP | None:
        """The random-DP account's budget (None: random-DP releases are refused)."""
        return self.budget if isinstance(self.budget, RandomDP) else None

    # ---- composition ----------------------------------------------------------------------

    @staticmethod
    def _compose_in(b: Guarantee, guarantees: list[Guarantee]) -> Guarantee:
        """Basic composition of ``guarantees`` in the type of budget ``b`` (class docstring)."""
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
                    + (": random DP needs a budget with γ (EPS,DELTA,GAMMA)"
                       if isinstance(g, RandomDP) else "")
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

    def _compose(self, guarantees: list[Guarantee]) -> Guarantee:
        return self._compose_in(self.budget, guarantees)

    def total(self) -> Guarantee:
        """Basic composition of all recorded releases, in the budget's type (for a random-DP
        budget: the random-DP account; the DP account alone is :meth:`dp_total`)."""
        return self._compose([e.guarantee for e in self._entries])

    def dp_total(self) -> Guarantee:
        """The DP account's basic total (random-DP releases left out)."""
        return self._compose_in(self.dp_budget,
                                [e.guarantee for e in self._entries if e.account == "dp"])

    def _dp_atoms(self, entries: Iterable[LedgerEntry]) -> list[tuple] | None:
        """Every DP entry's atoms; None when one of them cannot be accounted tightly."""
        atoms: list[tuple] = []
        for e in entries:
            if e.account != "dp":
                continue
            try:
                atoms.extend(e.atoms())
            except (TypeError, AttributeError):
                return None
        return atoms

    def tight_total(self) -> ApproxDP | None:
        """The DP account's total by the Rényi filter (None without one: no δ in the budget,
        the basic accountant, or an entry the filter cannot account)."""
        return self._tight(self._entries)[0]

    def _tight(self, entries: list[LedgerEntry]) -> tuple[ApproxDP | None, str | None]:
        if self.plan is None:
            return None, None
        atoms = self._dp_atoms(entries)
        if atoms is None:
            return None, None
        res = self.plan.evaluate(atoms)
        if math.isinf(res.epsilon):
            return ApproxDP(math.inf, min(res.delta, _ONE_MINUS)), res.member
        return ApproxDP(res.epsilon, min(res.delta, _ONE_MINUS)), res.member

    def _dp_spent(self, entries: list[LedgerEntry]) -> tuple[Guarantee, str]:
        """The DP account's total that refusals use, and which it is."""
        basic = self._compose_in(self.dp_budget,
                                 [e.guarantee for e in entries if e.account == "dp"])
        tight, _ = self._tight(entries)
        if tight is None:
            return basic, "basic"
        if self.accountant == "filter" or tight.epsilon < basic.epsilon:
            return tight, "tight (Rényi filter)"
        return basic, "basic"

    def spent(self) -> Guarantee:
        """The DP account's total that refusals are judged against (see :meth:`accounts`)."""
        return self._dp_spent(self._entries)[0]

    def accounts(self) -> Accounts:
        """Both accounts: the DP account's basic and tight totals and which one refuses, and
        the random-DP account's total (see :class:`Accounts`)."""
        spent, by = self._dp_spent(self._entries)
        tight, member = self._tight(self._entries)
        rnd = [e for e in self._entries if e.account == "random"]
        return Accounts(self.dp_budget, self.dp_total(), tight, spent, by, member,
                        self.random_budget,
                        self.total() if self.random_budget is not None else None, len(rnd))

    @staticmethod
    def _components(g: Guarantee) -> dict[str, float]:
        return {k: v for k, v in g.as_dict().items() if k != "type"}

    @classmethod
    def _within_budget(cls, total: Guarantee, budget: Guarantee) -> bool:
        b = cls._components(budget)
        return all(_leq(v, b[k]) for k, v in cls._components(total).items() if k in b)

    def _within(self, total: Guarantee) -> bool:
        return self._within_budget(total, self.budget)

    def _dp_within(self, entries: list[LedgerEntry]) -> bool:
        return self._within_budget(self._dp_spent(entries)[0], self.dp_budget)

    def _check(self, entries: list[LedgerEntry]) -> None:
        """Raise TypeError / BudgetExceededError unless ``entries`` fit both accounts."""
        new = entries[len(self._entries):]
        dp_new = [e for e in new if e.account == "dp"]
        if any(e.account == "random" for e in new) and self.random_budget is None:
            g = next(e.guarantee for e in new if e.account == "random")
            raise TypeError(f"a {g.kind} release ({g}) cannot be composed into this ledger's "
                            f"{self.budget.kind} budget ({self.budget}): random DP needs a "
                            "budget with γ (EPS,DELTA,GAMMA)")
        # kinds first (TypeError), then the totals
        self._compose_in(self.dp_budget, [e.guarantee for e in entries if e.account == "dp"])
        if dp_new and not self._dp_within(entries):
            raise BudgetExceededError(self._refusal_text(new, "DP account"))
        if self.random_budget is not None and not self._within(
                self._compose([e.guarantee for e in entries])):
            raise BudgetExceededError(self._refusal_text(new, "random-DP account"))

    def _refusal_text(self, new: list[LedgerEntry], account: str) -> str:
        what = new[0].label if len(new) == 1 else f"all {len(new)} parts"
        need = new[0].guarantee if len(new) == 1 else "together more"
        if account == "DP account":
            spent, by = self._dp_spent(self._entries)
            budget = self.dp_budget
            after, _ = self._dp_spent([*self._entries, *new])
            return (f"refused '{what}': it needs {need}, but {spent} of the budget {budget} is "
                    f"already spent ({self.remaining()} left; {by} total); with it the DP "
                    f"account would reach {after}")
        return (f"refused '{what}': it needs {need}, but {self.total()} of the random-DP budget "
                f"{self.budget} is already spent ({self.remaining()} left)")

    def can_spend(self, guarantee: Guarantee, *, parts: Sequence[Part] | None = None) -> bool:
        """Whether ``guarantee`` could be spent now without exceeding the budget."""
        try:
            self._check([*self._entries, self._make_entry("?", guarantee, {}, parts)])
        except (TypeError, ValueError):
            return False
        return True

    def _entries_g(self) -> list[Guarantee]:
        return [e.guarantee for e in self._entries]

    @staticmethod
    def _make_entry(label: str, guarantee: Guarantee, params: dict[str, Any],
                    parts: Sequence[Part] | None, analyst: str | None = None) -> LedgerEntry:
        if not isinstance(guarantee, PureDP | ApproxDP | ZCDP | RandomDP):
            raise TypeError(f"not a privacy guarantee: {guarantee!r}")
        if parts is not None:
            parts = tuple(parts)
            if not parts_consistent(parts, guarantee):
                raise ValueError(f"the parts of '{label}' ({', '.join(map(str, parts))}) do not "
                                 f"compose to its guarantee {guarantee}")
        return LedgerEntry(str(label), guarantee, dict(params), parts=parts or None,
                           analyst=analyst)

    def spend(self, label: str, guarantee: Guarantee, *, parts: Sequence[Part] | None = None,
              **params: Any) -> LedgerEntry:
        """Record a release, or refuse it.

        ``parts``: what the release is made of, for the tight total; they must compose to
        exactly ``guarantee`` (:func:`parts_consistent`).

        Raises
        ------
        BudgetExceededError
            If an account's total would exceed its budget (nothing is recorded).
        TypeError
            If the release's kind cannot be composed into the budget's type.
        ValueError
            If ``parts`` do not compose to ``guarantee``.
        """
        entry = self._make_entry(label, guarantee, params, parts)
        self._check([*self._entries, entry])
        self._entries.append(entry)
        return entry

    def remaining(self) -> Guarantee:
        """Budget minus what is spent, component by component, floored at zero.

        The DP account's refusing total (:meth:`spent`) for a DP budget; the random-DP
        account's total for a random-DP budget.
        """
        total = self._components(self.total() if self.random_budget is not None
                                 else self.spent())
        budget = self._components(self.budget)
        left = {k: max(v - total.get(k, 0.0), 0.0) for k, v in budget.items()}
        return type(self.budget)(**left)

    def reset(self) -> None:
        """Forget every recorded release."""
        self._entries.clear()

    def to_frame(self) -> pd.DataFrame:
        """One row per release: label, guarantee text and its parameters, account, time, release
        params."""
        rows = []
        for e in self._entries:
            row: dict[str, Any] = {"label": e.label, "guarantee": str(e.guarantee)}
            row.update(e.guarantee.as_dict())
            row["account"] = "random DP" if e.account == "random" else "DP"
            row["parts"] = len(e.parts) if e.parts else 1
            row["analyst"] = e.analyst
            row["params"] = json.dumps(e.params, default=str, sort_keys=True)
            row["time"] = pd.Timestamp(e.timestamp, unit="s", tz="UTC")
            rows.append(row)
        cols = ["label", "guarantee", "type", "epsilon", "delta", "rho", "gamma", "account",
                "parts", "analyst", "params", "time"]
        return pd.DataFrame(rows, columns=cols)

    def to_json(self, indent: int | None = 2) -> str:
        """The budget, every entry, the totals, the accounts and what remains, as JSON."""
        doc = {
            "budget": self.budget.as_dict(),
            "entries": [e.as_dict() for e in self._entries],
            "total": self.total().as_dict(),
            "remaining": self.remaining().as_dict(),
            "accounts": self.accounts().as_dict(),
            "accountant": self.accountant,
            "filter": None if self.plan is None else self.plan.as_dict(),
        }
        return json.dumps(doc, indent=indent, default=str)
