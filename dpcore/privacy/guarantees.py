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

The guarantee types are defined in :mod:`dpcore.privacy.kinds` and the parts in
:mod:`dpcore.privacy.parts`; this module is their public home.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from dpcore.core.errors import BudgetExceededError, PrivacyLeakWarning
from dpcore.privacy.accountant import FilterPlan
from dpcore.privacy.kinds import (
    _ONE_MINUS,
    ZCDP,
    ApproxDP,
    Guarantee,
    PureDP,
    RandomDP,
    _as_eps_delta_gamma,
    _leq,
    compose,
    guarantee_from_dict,
    zcdp_to_epsilon,
)
from dpcore.privacy.parts import (
    Gaussian,
    Laplace,
    Part,
    atom_of,
    part_from_dict,
    parts_consistent,
    scale_part,
)

__all__ = [
    "ACCOUNTANTS",
    "RANDOM_DP_CAVEAT",
    "Accounts",
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
    "privacy_alias",
    "scale_part",
    "zcdp_to_epsilon",
]

#: What random DP does not promise, in one sentence (the ledger view and the curator's refusal).
RANDOM_DP_CAVEAT = (
    "Random DP (the sensitivity sampler) promises (ε, δ)-DP only for all but a γ-fraction of "
    "data sets drawn from an assumed population, so it bounds nothing for an unlucky data set "
    "or a worst-case neighbour: its releases are kept out of the DP total.")


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
        return [atom_of(p) for p in (self.parts if self.parts else (self.guarantee,))]

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
