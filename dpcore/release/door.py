"""The release door: the one way a private table's information leaves, for the app, CLI and Python.

A :class:`ReleaseDoor` holds a private table, its declared
:class:`~dpcore.release.schema.PublicDescription` and a ledger (normally the lasting
:class:`~dpcore.privacy.ledger.LastingLedger`). Its :meth:`~ReleaseDoor.release` is the only method
that touches the private rows, and it

1. plans the release from public inputs only: the mechanism (a key of
   :data:`dpcore.release.runconfig.MECHANISMS`), its parameters, the declared radius, the declared
   or privately estimated n; the guarantee is read off a dry run on a public synthetic proxy of the
   declared shape, and a :class:`~dpcore.privacy.guarantees.PrivacyLeakWarning` there is a refusal;
2. charges the whole guarantee (all parts of a multi-part release, and the floating-point slack
   of defended noise) in one ledger transaction **before** computing, with what the release is
   made of (its registry row's ``parts``, read off the dry run) for the ledger's tight total;
3. computes with randomness from the operating system, with ``PrivacyLeakWarning`` turned into an
   error; any failure (an exception, a leak warning, a guarantee or parts that differ from the
   planned ones) keeps the charge and yields ⊥ with the fixed message :data:`FAILED`;
4. returns :class:`Release` ``(output, guarantee, label)``: the DP output only, never a seed, a
   timing, a warning text or an intermediate statistic.

Refusals before the charge (:class:`ReleaseRefused`,
:class:`~dpcore.privacy.guarantees.BudgetExceededError`) depend only on public inputs and on the
ledger, so their messages may be shown. A door with ``allow_random_dp=False`` (a curator
deployment that did not enable it) refuses random-DP releases (the sensitivity sampler) before
anything is charged; a lasting ledger that cannot be used (moved, edited, read-only) is a refusal
too, whose reason goes to the curator's log, never to the analyst.

Example
-------
>>> import numpy as np, pandas as pd
>>> from dpcore.release.schema import PublicDescription
>>> from dpcore.privacy.guarantees import ApproxDP, PrivacyLedger
>>> table = pd.DataFrame(np.random.default_rng(1).uniform(-1, 1, (500, 2)), columns=["a", "b"])
>>> desc = PublicDescription(["a", "b"], lower=[-1, -1], upper=[1, 1], n=500)
>>> door = ReleaseDoor(table, desc, PrivacyLedger(ApproxDP(2.0, 1e-5)))
>>> rel = door.release("noisy_average", {"epsilon": 0.3, "delta": 1e-6})
>>> str(rel.guarantee), sorted(rel.output)
('(ε = 0.3, δ = 1e-06)-DP', ['mean'])
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.core.errors import LedgerError, ReleaseRefused
from dpcore.privacy.guarantees import (
    RANDOM_DP_CAVEAT,
    ZCDP,
    ApproxDP,
    Guarantee,
    Part,
    PrivacyLeakWarning,
    PureDP,
    RandomDP,
    compose,
    scale_part,
)
from dpcore.privacy.noise import defended_noise
from dpcore.release.config_schema import jsonable as _jsonable
from dpcore.release.registry import get_mechanism
from dpcore.release.runconfig import _resolve_params

__all__ = ["FAILED", "Release", "ReleaseDoor", "ReleaseRefused"]

#: The one message of a failed release (it must not depend on the data).
FAILED = "The mechanism released ⊥ (no output). Its budget is spent: ⊥ is itself an output."

#: Size of the public synthetic proxy used for previews and dry runs above it (rows).
PROXY_ROWS = 2000

#: A refusal because the ledger cannot be used (the reason is logged for the curator).
LEDGER_UNAVAILABLE = ("The privacy ledger cannot be used right now (the curator sees why in the "
                      "server log); nothing was released or charged.")

#: The refusal of a random-DP release in a deployment that did not enable random DP.
RANDOM_DP_OFF = ("Random-DP releases (the sensitivity sampler) are off in this deployment: the "
                 "curator enables them with --random-dp and a budget with γ. "
                 + RANDOM_DP_CAVEAT)

_log = logging.getLogger("dpcore.ledger")


def _entropy() -> np.random.Generator:
    """The release's randomness: fresh OS entropy, never stored. Tests monkeypatch this to
    force the same draw on neighbouring data sets; nothing user-visible can set it."""
    return np.random.default_rng()


@dataclass(frozen=True)
class Release:
    """What the door let out.

    Attributes
    ----------
    output : dict or None
        Released name -> value (in the mechanism's centred coordinates), or None for ⊥.
    guarantee : Guarantee
        What was charged for it.
    label : str
    """

    output: dict[str, Any] | None
    guarantee: Guarantee
    label: str

    @property
    def failed(self) -> bool:
        return self.output is None

    @property
    def message(self) -> str:
        return FAILED if self.failed else f"Released under {self.guarantee}."


@dataclass(frozen=True)
class _Plan:
    label: str
    mechanism: str
    params: dict[str, Any]
    guarantee: Guarantee
    parts: tuple[Part, ...] | None = None


class ReleaseDoor:
    """A private table behind its public description and a ledger.

    Parameters
    ----------
    table : DataFrame or array
        The private rows (never shown; only :meth:`release` reads them).
    description : PublicDescription
        Columns, bounds or centre + radius, and optionally n: all public.
    ledger : LastingLedger or PrivacyLedger
        Where every release is charged before it is computed.
    allow_random_dp : bool
        Whether random-DP releases may be made (a curator deployment enables them explicitly).
    """

    def __init__(self, table: Any, description, ledger, *, allow_random_dp: bool = True) -> None:
        self.description = description
        self.ledger = ledger
        self.allow_random_dp = bool(allow_random_dp)
        self._X = description.prepare(table)

    # ---- public facts ------------------------------------------------------------------------

    @property
    def d(self) -> int:
        return self.description.d

    @property
    def radius(self) -> float | None:
        return self.description.radius

    @property
    def n(self) -> int | None:
        """The declared n, else the privately estimated (and charged) one, else None."""
        if self.description.n is not None:
            return self.description.n
        getter = getattr(self.ledger, "released_value", None)
        value = getter("n") if getter is not None else getattr(self, "_n_estimate", None)
        return None if value is None else int(value)

    @property
    def n_source(self) -> str:
        if self.description.n is not None:
            return "declared"
        return "estimated privately" if self.n is not None else "unknown"

    def estimate_n(self, epsilon: float) -> int:
        """Estimate n with the ε-DP Laplace count
        (:func:`dpcore.mechanisms.bounds.private_row_count`), charging ε first; a lasting ledger
        keeps the estimate for every later session."""
        from dpcore.mechanisms.bounds import private_row_count

        if self.n is not None:
            return self.n
        eps = float(epsilon)
        if not eps > 0 or not np.isfinite(eps):
            raise ReleaseRefused(f"epsilon for estimating n must be a finite number > 0, got "
                                 f"{epsilon!r}")
        def compute() -> int:
            return int(private_row_count(self._X.shape[0], epsilon=eps, rng=_entropy()).value)

        params = {"mechanism": "private_row_count", "epsilon": eps}
        with defended_noise(PureDP(eps)) as defence, _ledger_usable():
            g = defence.delivered  # the Laplace count is floating-point safe
            store = getattr(self.ledger, "spend_and_store", None)
            if store is not None:
                return int(store("estimate of n", g, "n", compute, **params))
            self.ledger.spend("estimate of n", g, **params)
            self._n_estimate = compute()
        return self._n_estimate

    def to_table_units(self, M: Any) -> np.ndarray:
        """Centred coordinates back to the table's units (post-processing)."""
        M = np.atleast_2d(np.asarray(M, dtype=float))
        return M + self.description.center_array()

    def proxy(self, n: int = PROXY_ROWS, *, seed: int = 0) -> np.ndarray:
        """A public stand-in for the rows: a synthetic mixture inside the declared ball/box.

        Its size is ``n`` (a fixed public number, not the table's), its geometry the declared
        description only.
        """
        from dpcore.data.datasets import synthetic_proxy

        X = synthetic_proxy(int(n), self.d, float(self.radius or 1.0), rng=seed)
        box = self.description.box()
        if box is not None:
            from dpcore.data.geometry import clip_to_ball

            X = clip_to_ball(np.clip(X, *box), float(self.radius))
        return X

    # ---- planning (public inputs only) -------------------------------------------------------

    def _plan(self, mechanism: str, params: Mapping[str, Any], label: str | None) -> _Plan:
        try:
            mech = get_mechanism(mechanism)
            p = dict(_jsonable(dict(params), "params"))
        except ValueError as exc:
            raise ReleaseRefused(str(exc)) from None
        for bad in ("rng", "seed", "random_state"):
            if bad in p:
                raise ReleaseRefused(f"params.{bad}: a release draws its randomness from the "
                                     "operating system; a seed cannot be given")
        if self.radius is None and mech.needs_radius:
            raise ReleaseRefused("the public description declares no radius (or bounds); a "
                                 "release needs one")
        n = self.n
        if n is None:
            raise ReleaseRefused("n is neither declared nor estimated: estimate it privately "
                                 "first (it is charged to the ledger)")
        box = self.description.box()
        # The registry row says which parameters take which public input (n, the box; the
        # radius is filled below): the door supplies the declared values, never the data's.
        for param, source in mech.public_inputs().items():
            if p.get(param) is not None:
                continue
            if source == "n":
                p[param] = n
            elif source == "bounds" and box is not None:
                # the declared per-column bounds are tighter than their enclosing ball
                p[param] = [box[0].tolist(), box[1].tolist()]
        try:
            p = _resolve_params(mech, p, {"radius": self.radius})
        except ValueError as exc:
            raise ReleaseRefused(str(exc)) from None
        g, parts = self._dry_guarantee(mech, p, n)
        if isinstance(g, RandomDP) and not self.allow_random_dp:
            raise ReleaseRefused(RANDOM_DP_OFF)
        return _Plan(label or mechanism, mech.name, p, g, parts)

    def _dry_guarantee(self, mech, params: dict, n: int
                       ) -> tuple[Guarantee, tuple[Part, ...] | None]:
        """The guarantee and parts, from a run on the public proxy (seeded: nothing private)."""
        def dry(rows: int) -> tuple[Guarantee, tuple[Part, ...] | None]:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                warnings.simplefilter("error", PrivacyLeakWarning)
                try:
                    _, g, parts = mech.run_accounted(self.proxy(rows), np.random.default_rng(0),
                                                     **params)
                except PrivacyLeakWarning as w:
                    raise ReleaseRefused(f"{mech.name} reads a parameter off the data, which a "
                                         f"release cannot allow: {w}") from None
                except (ValueError, TypeError) as exc:  # computed on public data: public
                    raise ReleaseRefused(f"{mech.name} cannot run with these parameters: "
                                         f"{exc}") from None
            if not isinstance(g, (PureDP, *_guarantee_types())):
                raise ReleaseRefused(f"{mech.name} returned no privacy guarantee")
            return g, parts

        if n <= PROXY_ROWS:
            return dry(n)
        g = dry(PROXY_ROWS)
        # A guarantee (or parts) that change with the number of rows are recomputed at the
        # public n.
        return g if dry(PROXY_ROWS - 1) == g else dry(n)

    # ---- releasing ---------------------------------------------------------------------------

    def release(self, mechanism: str, params: Mapping[str, Any] | None = None, *,
                label: str | None = None) -> Release:
        """One release (see the module docstring); :meth:`release_many` with one part."""
        return self.release_many([(mechanism, params or {})], labels=[label])[0]

    def release_many(self, parts: Sequence[tuple[str, Mapping[str, Any]]], *,
                     labels: Sequence[str | None] | None = None,
                     origin: str = "") -> list[Release]:
        """Several releases charged as a whole (all or nothing), then computed one by one; a
        lasting ledger keeps their DP outputs with their entries (``origin``: where they were
        made, e.g. the app's page).

        Raises
        ------
        ReleaseRefused
            A part cannot be planned from public inputs (nothing charged).
        BudgetExceededError
            The parts together do not fit the budget (nothing charged).
        """
        labels = list(labels or [None] * len(parts))
        plans = [self._plan(m, p, lab) for (m, p), lab in zip(parts, labels, strict=True)]
        # Floating-point-safe noise (Mironov 2012): every draw inside is on a grid, and the
        # defence's small extra cost (``slack_for``) is part of what each release charges.
        with defended_noise() as defence, _ledger_usable():
            delivered = [compose(pl.guarantee, defence.slack_for(pl.guarantee)) for pl in plans]
            growth = (1.0 + defence.eta) ** 2  # every part's ε (or ρ) grows as the whole's
            charges = [_charge(pl, g, growth) for pl, g in zip(plans, delivered, strict=True)]
            spend_many = getattr(self.ledger, "spend_many", None)
            if spend_many is not None:
                spent = spend_many(charges)
            else:  # an in-memory PrivacyLedger: check the whole, then record
                spent = _spend_all(self.ledger, charges)
            out = [Release(self._compute(pl), g, pl.label)
                   for pl, g in zip(plans, delivered, strict=True)]
        keep = getattr(self.ledger, "keep_outputs", None)
        if keep is not None:  # never raises: the outputs are released and charged already
            keep(spent, out, origin=origin)
        return out

    def _compute(self, plan: _Plan) -> dict[str, Any] | None:
        """Run on the private rows; ⊥ (None) on any failure, with nothing of it kept."""
        mech = get_mechanism(plan.mechanism)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                warnings.simplefilter("error", PrivacyLeakWarning)
                released, guarantee, parts = mech.run_accounted(self._X, _entropy(),
                                                                **plan.params)
            if guarantee != plan.guarantee or (plan.parts is not None and parts != plan.parts):
                return None  # the delivered guarantee (or its parts) is not the one charged
            return {k: (None if v is None else np.asarray(v, dtype=float))
                    for k, v in dict(released).items()}
        except Exception:
            return None


def _guarantee_types() -> tuple[type, ...]:
    return (ApproxDP, ZCDP, RandomDP)


def _charge(plan: _Plan, delivered: Guarantee, growth: float
            ) -> tuple[str, Guarantee, dict, tuple[Part, ...] | None]:
    """What the ledger records for a planned release: its label, the guarantee charged, its
    public parameters and its parts grown by the defence. A release whose parts are all zCDP
    (FriendlyCore's mean, which reports (ε, δ)) is charged as the zCDP it is, so that it composes
    in ρ with the others."""
    params = {"mechanism": plan.mechanism} | plan.params
    if plan.parts is None:
        return plan.label, delivered, params, None
    parts = tuple(scale_part(p, growth) for p in plan.parts)
    if isinstance(delivered, ApproxDP) and all(isinstance(p, ZCDP) for p in parts):
        delivered = ZCDP(sum(p.rho for p in parts), sum(p.delta for p in parts))
    return plan.label, delivered, params, parts


@contextlib.contextmanager
def _ledger_usable() -> Iterator[None]:
    """Turn a ledger that cannot be used (:class:`LedgerError`) into a public refusal; the
    reason (paths, what was found) goes to the ``dpcore.ledger`` log for the curator."""
    try:
        yield
    except LedgerError as exc:
        _log.error("the privacy ledger cannot be used: %s", exc)
        raise ReleaseRefused(LEDGER_UNAVAILABLE) from exc


def _spend_all(ledger, charges: list[tuple[str, Guarantee, dict, Any]]) -> None:
    from dpcore.privacy.guarantees import BudgetExceededError

    copy = getattr(ledger, "copy", None)
    trial = copy() if copy is not None else None
    if trial is None:
        from dpcore.privacy.guarantees import PrivacyLedger

        trial = PrivacyLedger.from_entries(ledger.budget, ledger.entries)
    try:
        for label, g, p, parts in charges:
            trial.spend(label, g, parts=parts, **p)
    except BudgetExceededError:
        raise BudgetExceededError(f"refused: the release needs more than the {ledger.remaining()} "
                                  f"left of {ledger.budget}") from None
    for label, g, p, parts in charges:
        ledger.spend(label, g, parts=parts, **p)

