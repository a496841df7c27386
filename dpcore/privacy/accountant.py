"""Tight composition for the ledger's DP account, on Google's ``dp-accounting``.

The ledger's basic composition adds ε over releases. A release is usually itself a composition of
many small parts (DP-Lloyd: T rounds of noisy counts and noisy sums), and sequential composition
of many small parts is much cheaper in Rényi DP (Mironov 2017) than in ε. This module accounts
for *atoms*: plain tuples that say what a part is, built by :mod:`dpcore.privacy.guarantees`
from a release's parts.

=====================  ===================================================================
atom                    meaning, and its Rényi curve
=====================  ===================================================================
``("rr", ε, δ)``        any (ε, δ)-DP part. With δ = 0 its pair of output distributions is a
                        post-processing of binary randomized response RR(ε) (Kairouz, Oh &
                        Viswanath 2015, Thm 2.1), so RR(ε)'s Rényi divergence bounds it at every
                        order; with δ > 0 it is RR(ε) except on an event of probability δ
                        (Murtagh & Vadhan 2016, Lemma 3.2), and δ joins the δ pool.
``("laplace", ε)``      the Laplace mechanism, ℓ1 sensitivity Δ, scale Δ/ε (exact curve,
                        Mironov 2017, Prop. 6).
``("gaussian", z)``     the Gaussian mechanism, noise multiplier z = σ/Δ₂ (exact curve).
``("zcdp", ρ, δ)``      (ρ, δ)-approximate zCDP (Bun & Steinke 2016): curve ρα, δ to the pool.
=====================  ===================================================================

**The refusal rule is a privacy filter.** Analysts choose each release's parameters after
seeing earlier outputs, so the ledger's test "does the total still fit?" must be a *filter*
(Rogers, Roth, Ullman & Vadhan 2016): a composition bound is not automatically valid when the
parameters are chosen adaptively. Two filters are valid here, and the ledger uses the pair
(:class:`FilterPlan`, fixed from the budget alone when a ledger is created):

* the Rényi filter at a **fixed order** α (Feldman & Zrnic 2021, Thm 3.1: Σ RDP_i(α) ≤ B is a
  valid filter whatever the adaptivity), converted to (ε, δ_α) with the conversion of
  Canonne, Kamath & Steinke 2020 (``ε = r + log(1 − 1/α) − (log δ_α + log α)/(α − 1)``), one
  such filter for each of a fixed list of orders (:data:`ORDERS`);
* the pure filter Σε_i ≤ ε_B ("order ∞", basic composition; no conversion δ), while there is no
  zCDP part.

Approximate parts put their δ on a common budget Δ = δ_B − δ_conv (coins of probability δ_i,
drawn from the history: the same on neighbouring data sets). A release is accepted while *one*
of the filters holds. Split the paths by the first filter that held all along: beyond the coins,
those of the pure filter are (ε_B, 0)-close and those of order α are (ε_B, δ_α)-close (on them
the interaction is the one that filter alone runs), so with Σ δ_α = δ_conv the whole interaction
is (ε_B, Δ + δ_conv) = (ε_B, δ_B)-DP. The union bound over orders costs log(#orders) in the
conversion; the best order after the fact would cost nothing and is not valid.
``tests/test_accountant.py`` compares every path with a correct bound.

What is *not* a filter, and only reported (:func:`rdp_epsilon`, :func:`pld_epsilon`): the best
order after the fact, and the privacy-loss-distribution (PLD) accountant. They bound the
composition of the recorded releases as if their parameters had been fixed in advance (the case
inside one release, whose parts are fixed when it is planned).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = [
    "Atom",
    "FilterPlan",
    "FilterResult",
    "atoms_epsilon_basic",
    "convert_rdp",
    "lower_bound_epsilon",
    "pld_epsilon",
    "rdp_epsilon",
    "rdp_of",
]

#: ``("rr", ε, δ)``, ``("laplace", ε)``, ``("gaussian", z)`` or ``("zcdp", ρ, δ)``.
Atom = tuple

#: Share of the budget's δ kept for the Rényi conversions (the rest is for approximate parts).
DELTA_CONV_SHARE = 0.1
#: The filter's Rényi orders: from large spends (α ≈ 1.5) to many tiny parts (α ≈ 128).
ORDERS = (1.5, 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 32.0, 64.0, 128.0)
_REL_TOL = 1e-9


def _dp():
    import dp_accounting

    return dp_accounting


def _delta(atom: Atom) -> float:
    return float(atom[2]) if atom[0] in ("rr", "zcdp") else 0.0


def _rr_noise(eps: float) -> float:
    """Binary randomized response whose likelihood ratio is e^ε: p = 2 / (1 + e^ε)."""
    return 2.0 / (1.0 + math.exp(eps)) if eps < 700 else 0.0


def _event(atom: Atom):
    dpa = _dp()
    kind = atom[0]
    if kind == "rr":
        return dpa.RandomizedResponseDpEvent(_rr_noise(float(atom[1])), 2)
    if kind == "laplace":
        return dpa.LaplaceDpEvent(1.0 / float(atom[1]))
    if kind == "gaussian":
        return dpa.GaussianDpEvent(float(atom[1]))
    if kind == "zcdp":
        return dpa.ZCDpEvent(float(atom[1]))
    raise ValueError(f"unknown accounting atom {atom!r}")


def _free(atom: Atom) -> bool:
    """An atom that costs nothing in Rényi DP (ε = 0, ρ = 0)."""
    if atom[0] in ("rr", "laplace", "zcdp"):
        return float(atom[1]) == 0.0
    return math.isinf(float(atom[1]))


def _infinite(atom: Atom) -> bool:
    if atom[0] in ("rr", "laplace", "zcdp"):
        return math.isinf(float(atom[1]))
    return float(atom[1]) == 0.0


@lru_cache(maxsize=4096)
def _rdp_one(atom: Atom, orders: tuple[float, ...]) -> tuple[float, ...]:
    """The Rényi curve of one atom at ``orders`` (dp-accounting's RDP accountant)."""
    if _free(atom):
        return (0.0,) * len(orders)
    if _infinite(atom):
        return (math.inf,) * len(orders)
    dpa = _dp()
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    # REPLACE_ONE only unlocks the randomized-response event: RR(ε) here is the dominating pair
    # of an ε-DP part under the ledger's add/remove relation, not a replace-one mechanism.
    acc = rdp.RdpAccountant(list(orders), dpa.NeighboringRelation.REPLACE_ONE)
    acc.compose(_event(atom))
    return tuple(float(v) for v in acc._rdp)  # the curve itself, one value per order


def rdp_of(atoms: Iterable[Atom], orders: Sequence[float]) -> tuple[np.ndarray, float]:
    """Σ of the atoms' Rényi curves at ``orders``, and Σ of their δ (the approximate parts)."""
    orders_t = tuple(float(a) for a in orders)
    total = np.zeros(len(orders_t))
    delta = 0.0
    for atom, count in Counter(atoms).items():
        total += count * np.asarray(_rdp_one(atom, orders_t))
        delta += count * _delta(atom)
    return total, delta


def convert_rdp(r: float, order: float, delta: float) -> float:
    """ε such that (α, r)-RDP implies (ε, δ)-DP (Canonne, Kamath & Steinke 2020, Prop. 12;
    the conversion of dp-accounting). Also valid for the sub-probability measures of the
    approximate parts (it uses only a pointwise bound on the likelihood ratio)."""
    a = float(order)
    if math.isinf(r):
        return math.inf
    if not 0 < delta < 1:
        return math.inf
    eps = r + math.log1p(-1.0 / a) - (math.log(delta) + math.log(a)) / (a - 1.0)
    return max(eps, 0.0)


def atoms_epsilon_basic(atoms: Iterable[Atom]) -> float:
    """Σε of the (ε, δ)-type atoms (basic composition; zCDP and Gaussian atoms give ∞)."""
    total = 0.0
    for atom in atoms:
        if atom[0] in ("rr", "laplace"):
            total += float(atom[1])
        elif not _free(atom):
            return math.inf
    return total


@dataclass(frozen=True)
class FilterResult:
    """The filter's view of a list of atoms (see the module docstring).

    ``epsilon``/``delta``: the smaller of the two filters' totals and the δ that goes with it
    (∞ when the approximate parts' δ exceeds the plan's share); ``member``: "pure" or "renyi";
    ``delta_parts``: Σδ of the approximate parts.
    """

    epsilon: float
    delta: float
    member: str
    delta_parts: float


@dataclass(frozen=True)
class FilterPlan:
    """The fixed parameters of a ledger's filter, chosen from its budget before any release.

    Parameters
    ----------
    epsilon, delta : float
        The budget (ε_B, δ_B), δ_B > 0.
    orders : tuple of float
        The Rényi orders, one filter each; a release passes while one of them (or the pure
        filter) holds, so each gets ``delta_conv / len(orders)`` of the conversion δ (union
        bound). Fixed orders, not the best order after the fact: that would not be a filter.
    delta_conv : float
        The δ of the Rényi conversions together; ``delta - delta_conv`` is the approximate
        parts' share.
    """

    epsilon: float
    delta: float
    orders: tuple[float, ...]
    delta_conv: float

    @property
    def delta_parts(self) -> float:
        return self.delta - self.delta_conv

    @classmethod
    def for_budget(cls, epsilon: float, delta: float, *, share: float = DELTA_CONV_SHARE,
                   orders: Sequence[float] = ORDERS) -> FilterPlan:
        """The plan of a budget (ε_B, δ_B): ``share``·δ_B for the conversions, ``orders``."""
        eps, delta = float(epsilon), float(delta)
        if not (eps > 0 and 0 < delta < 1 and 0 < share < 1):
            raise ValueError(f"a Rényi filter needs ε > 0 and δ in (0, 1), got ({eps}, {delta})")
        return cls(eps, delta, tuple(float(a) for a in orders), share * delta)

    def as_dict(self) -> dict:
        return {"type": "renyi_filter", "epsilon": self.epsilon, "delta": self.delta,
                "orders": list(self.orders), "delta_conv": self.delta_conv}

    @classmethod
    def from_dict(cls, d: dict) -> FilterPlan:
        if not isinstance(d, dict) or d.get("type") != "renyi_filter":
            raise ValueError(f"not a stored filter plan: {d!r}")
        return cls(float(d["epsilon"]), float(d["delta"]),
                   tuple(float(a) for a in d["orders"]), float(d["delta_conv"]))

    def evaluate(self, atoms: Sequence[Atom]) -> FilterResult:
        """Both filters' totals for ``atoms`` (see :class:`FilterResult`)."""
        atoms = list(atoms)
        r, d_parts = rdp_of(atoms, self.orders)
        if d_parts > self.delta_parts * (1 + _REL_TOL):
            return FilterResult(math.inf, d_parts, "δ share exceeded", d_parts)
        each = self.delta_conv / len(self.orders)
        eps_renyi = min(convert_rdp(float(v), a, each)
                        for v, a in zip(r, self.orders, strict=True))
        eps_pure = atoms_epsilon_basic(atoms)
        if eps_pure <= eps_renyi:
            return FilterResult(eps_pure, d_parts, "pure", d_parts)
        return FilterResult(eps_renyi, d_parts + self.delta_conv, "renyi", d_parts)

    def within(self, atoms: Sequence[Atom]) -> bool:
        """Whether the filter still accepts after ``atoms``."""
        return self.evaluate(atoms).epsilon <= self.epsilon * (1 + _REL_TOL) + 1e-12


# ---- reported, not used for refusals: fixed (non-adaptive) compositions ------------------------


def rdp_epsilon(atoms: Sequence[Atom], delta: float) -> float:
    """ε at δ of the atoms' composition, at the best of dp-accounting's default orders.

    Valid for releases whose parameters were fixed in advance (not a filter: see the module
    docstring); δ includes the approximate parts' δ.
    """
    from dp_accounting.rdp import rdp_privacy_accountant as rdp

    orders = list(rdp.DEFAULT_RDP_ORDERS)
    r, d_parts = rdp_of(atoms, orders)
    if d_parts >= delta:
        return math.inf
    return min(convert_rdp(float(v), a, delta - d_parts) for v, a in zip(r, orders, strict=True))


def _pld(atom: Atom, pessimistic: bool, interval: float):
    from dp_accounting.pld import common
    from dp_accounting.pld import privacy_loss_distribution as pld

    kind, x = atom[0], float(atom[1])
    if kind == "rr":
        if pessimistic:
            return pld.from_privacy_parameters(
                common.DifferentialPrivacyParameters(x, float(atom[2])),
                value_discretization_interval=interval)
        return pld.from_randomized_response(_rr_noise(x), 2, pessimistic_estimate=False,
                                            value_discretization_interval=interval)
    if kind == "laplace":
        return pld.from_laplace_mechanism(1.0 / x, pessimistic_estimate=pessimistic,
                                          value_discretization_interval=interval)
    if kind == "gaussian":
        return pld.from_gaussian_mechanism(x, pessimistic_estimate=pessimistic,
                                           value_discretization_interval=interval)
    if kind == "zcdp":  # lower bound only: the Gaussian with ρ = 1/(2σ²) is one ρ-zCDP mechanism
        return pld.from_gaussian_mechanism(1.0 / math.sqrt(2.0 * x),
                                           pessimistic_estimate=pessimistic,
                                           value_discretization_interval=interval)
    raise ValueError(f"unknown accounting atom {atom!r}")


def _compose_pld(atoms: Sequence[Atom], pessimistic: bool, interval: float):
    out = None
    for atom, count in Counter(atoms).items():
        if _free(atom):
            continue
        p = _pld(atom, pessimistic, interval)
        p = p.self_compose(count) if count > 1 else p
        out = p if out is None else out.compose(p)
    return out


def pld_epsilon(atoms: Sequence[Atom], delta: float, *, interval: float = 1e-3,
                splits: int = 19) -> float:
    """ε at δ by the PLD accountant (pessimistic discretisation) for the (ε, δ)-type atoms,
    composed by basic composition with the zCDP atoms converted on their own; the δ between the
    two is split at the best of ``splits`` fractions. Fixed parameters only (not a filter)."""
    zc = [a for a in atoms if a[0] in ("zcdp", "gaussian")]
    rest = [a for a in atoms if a[0] not in ("zcdp", "gaussian")]
    rho = sum(float(a[1]) if a[0] == "zcdp" else 0.5 / float(a[1]) ** 2 for a in zc)
    d_z = sum(_delta(a) for a in zc)
    left = delta - d_z
    if left <= 0:
        return math.inf
    p = _compose_pld(rest, True, interval)
    if p is None:
        return _zcdp_eps(rho, left)
    if rho == 0:
        return float(p.get_epsilon_for_delta(left))
    best = math.inf
    for f in np.linspace(0.05, 0.95, splits):
        best = min(best, float(p.get_epsilon_for_delta(f * left)) + _zcdp_eps(rho, (1 - f) * left))
    return best


def _zcdp_eps(rho: float, delta: float) -> float:
    if rho == 0:
        return 0.0
    return rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta))


def lower_bound_epsilon(atoms: Sequence[Atom], delta: float, *,
                        interval: float = 1e-3) -> float:
    """A correct lower bound: the ε at δ of one composition that satisfies every atom's claim.

    Each atom is replaced by a mechanism that meets its guarantee exactly (RR(ε) for an (ε, δ)
    part, the Laplace and Gaussian mechanisms themselves, the Gaussian with σ = 1/√(2ρ) for ρ-zCDP)
    and their composition is measured by the PLD accountant with *optimistic* discretisation,
    which under-estimates its true ε. No sound accountant may charge less for these atoms.
    """
    p = _compose_pld(list(atoms), False, interval)
    return 0.0 if p is None else float(p.get_epsilon_for_delta(delta))
