"""Named analysts of the lasting ledger: each spends from a share of the budget the curator
granted them (:class:`AnalystShares`, mixed into :class:`dpcore.privacy.ledger.LastingLedger`).

The curator's ``grant`` prints a token (only its hash is kept); a ledger opened with it records
that analyst's releases under their name and refuses them beyond their share; releases without a
token spend only what no analyst was given. Shares are arithmetic on the budget (they add); the
ledger's DP account still composes every release, whoever made it.
"""

from __future__ import annotations

import copy
import hmac
import json
import secrets
import time
from typing import Any

from dpcore.core.errors import LedgerError
from dpcore.privacy.guarantees import (
    ApproxDP,
    BudgetExceededError,
    Guarantee,
    LedgerEntry,
    PrivacyLedger,
    PureDP,
    compose,
    guarantee_from_dict,
)
from dpcore.privacy.ledger_file import key_state, token_hash

__all__ = ["LOGIN_REFUSED", "AnalystShares", "LoginRefused"]

#: The one answer to a wrong login: the same whether the name exists or not.
LOGIN_REFUSED = ("This analyst name and token do not match a grant of this data set. Check both "
                 "(the curator gives them: `dpcore ledger grant`).")
_NO_TOKEN = token_hash("dpcore: no such analyst")  # compared against, so both paths do the same


class LoginRefused(ValueError):
    """A name and token that do not match a grant (:data:`LOGIN_REFUSED`, always)."""


class AnalystShares:
    """Named analysts' shares (a mixin of :class:`~dpcore.privacy.ledger.LastingLedger`)."""

    analyst: str | None

    # ---- named analysts ---------------------------------------------------------------------

    def _grants(self) -> dict[str, dict]:
        with self._store.reading() as (_, _, rows):
            return key_state(rows, self.key)["grants"]

    def _analyst_ledger(self, entries: list[LedgerEntry], grant: dict | None) -> PrivacyLedger:
        """An analyst's share as a ledger: their allocation and their own releases (grant None:
        the unallocated rest of the budget and the releases of no named analyst)."""
        who = None if grant is None else grant["name"]
        mine = [e for e in entries if e.analyst == who and e.account == "dp"]
        if grant is not None:
            allocation = guarantee_from_dict(grant["allocation"])
        else:
            allocation = self._unallocated()
        return PrivacyLedger.from_entries(allocation, mine, accountant=self.accountant)

    def _unallocated(self, grants: dict | None = None) -> Guarantee:
        grants = self._grants() if grants is None else grants
        dp = PrivacyLedger(self.budget).dp_budget
        allocs = [guarantee_from_dict(g["allocation"]) for g in grants.values()]
        return _subtract(dp, allocs)

    def _check_share(self, old: list[LedgerEntry], new: list[LedgerEntry],
                     grants: dict[str, dict]) -> None:
        """With named analysts: each spends from their allocation; everyone else from what is
        not allocated (one analyst cannot spend another's share). A named analyst revoked since
        their ledger was opened is refused any release, whoever else still holds a grant (the
        check used to come after "no grants left: nothing to check", so revoking the last
        analyst let them spend on from the whole budget)."""
        if self.analyst is not None and self.analyst not in grants:
            raise LedgerError(f"analyst '{self.analyst}' no longer has an allocation")
        if not grants or not any(e.account == "dp" for e in new):
            return
        grant = grants.get(self.analyst) if self.analyst is not None else None
        allocation = (guarantee_from_dict(grant["allocation"]) if grant is not None
                      else self._unallocated(grants))
        share = PrivacyLedger.from_entries(
            allocation, [e for e in old if e.analyst == self.analyst and e.account == "dp"],
            accountant=self.accountant)
        who = f"analyst '{self.analyst}'" if self.analyst else "the unallocated budget"
        for e in new:
            if e.account != "dp":
                continue
            try:
                share.spend(e.label, e.guarantee, parts=e.parts, **e.params)
            except BudgetExceededError:
                raise BudgetExceededError(
                    f"refused '{e.label}': it needs {e.guarantee}, more than the "
                    f"{share.remaining()} left of {who}'s share {allocation}") from None

    def grant(self, name: str, allocation: Guarantee) -> str:
        """Give analyst ``name`` a share of the budget; returns their token (shown once: only
        its hash is kept). A curator action, recorded in the ledger."""
        name = str(name).strip()
        if not name or len(name) > 100 or any(ord(c) < 32 for c in name):
            raise ValueError(f"an analyst name must be 1-100 printable characters, got {name!r}")
        token = "dpa_" + secrets.token_urlsafe(24)
        with self._store.transaction() as (con, ledger_id, rows):
            grants = key_state(rows, self.key)["grants"]
            if name in grants:
                raise ValueError(f"analyst '{name}' already has a share (revoke it first)")
            dp = PrivacyLedger(self.budget).dp_budget
            if type(allocation) is not type(dp) and not (
                    isinstance(dp, ApproxDP) and isinstance(allocation, PureDP)):
                raise TypeError(f"an allocation of this ledger must be {dp.kind}, got {allocation}")
            if isinstance(dp, ApproxDP) and isinstance(allocation, PureDP):
                allocation = ApproxDP(allocation.epsilon, 0.0)
            _subtract(dp, [guarantee_from_dict(g["allocation"]) for g in grants.values()]
                      + [allocation], strict=True)
            params = {"name": name, "allocation": allocation.as_dict(), "token": token_hash(token)}
            self._store.append(con, ledger_id, self.key, "grant", f"grant to {name}", params)
            con.execute("INSERT INTO analysts VALUES (?, ?, ?, ?, ?)",
                        (self.key, name, params["token"],
                         json.dumps(allocation.as_dict(), sort_keys=True), time.time()))
        return token

    def login(self, name: str, token: str) -> str:
        """Check an analyst's name and token against the grants; their name, or
        :class:`LoginRefused` with one message whether or not the name exists (the token's hash
        is compared in constant time on both paths)."""
        grant = self._grants().get(str(name).strip())
        expected = _NO_TOKEN if grant is None else str(grant["token"])
        match = hmac.compare_digest(token_hash(str(token).strip()), expected)
        if grant is None or not match:
            raise LoginRefused(LOGIN_REFUSED)
        return grant["name"]

    def as_analyst(self, name: str):
        """This ledger spending as the named analyst ``name`` (a copy; after :meth:`login`, or
        an OpenID Connect login whose e-mail the curator granted). :class:`LoginRefused` when
        ``name`` has no grant (e.g. revoked since)."""
        if name not in self._grants():
            raise LoginRefused(LOGIN_REFUSED)
        other = copy.copy(self)
        other.analyst = name
        return other

    def allowance(self) -> Guarantee:
        """What this ledger may spend: the analyst's allocation, else the whole budget."""
        if self.analyst is None:
            return self.budget
        grant = self._grants().get(self.analyst)
        if grant is None:
            return type(self.budget)(**{k: 0.0 for k in self.budget.as_dict() if k != "type"})
        return guarantee_from_dict(grant["allocation"])

    def share_accounts(self, name: str | None) -> dict[str, Any]:
        """One analyst's share (``name``; None: the releases of no named analyst): allocation,
        the DP account's basic and tight totals over their releases, what is left, and their
        random-DP releases composed by the random-DP account's rule."""
        snap = self.snapshot()
        grant = self._grants().get(name) if name is not None else None
        led = self._analyst_ledger(snap.entries, grant) if (grant or name is None) else None
        acc = None if led is None else led.accounts()
        rnd = [e.guarantee for e in snap.entries if e.analyst == name and e.account == "random"]
        return {"analyst": name, "allocation": None if led is None else str(led.budget),
                "releases": sum(e.analyst == name for e in snap.entries),
                "basic": None if acc is None else str(acc.dp_basic),
                "tight": None if acc is None or acc.dp_tight is None else str(acc.dp_tight),
                "spent": None if acc is None else str(acc.dp_spent),
                "remaining": None if led is None else str(led.remaining()),
                "random": str(compose(*rnd)) if rnd else None}

    def revoke(self, name: str) -> None:
        """Withdraw an analyst's token (their releases stay recorded and spent)."""
        with self._store.transaction() as (con, ledger_id, rows):
            if name not in key_state(rows, self.key)["grants"]:
                raise ValueError(f"no analyst '{name}' on this data set")
            self._store.append(con, ledger_id, self.key, "revoke", f"revoke {name}",
                               {"name": name})
            con.execute("DELETE FROM analysts WHERE key = ? AND name = ?", (self.key, name))

    def analysts(self) -> list[dict[str, Any]]:
        """Each named analyst: allocation, spent and remaining (and the unallocated rest)."""
        snap = self.snapshot()
        grants = self._grants()
        out = []
        for name, g in grants.items():
            led = self._analyst_ledger(snap.entries, g)
            out.append({"analyst": name, "allocation": str(led.budget),
                        "releases": len(led), "spent": str(led.spent()),
                        "remaining": str(led.remaining())})
        if grants:
            led = self._analyst_ledger(snap.entries, None)
            out.append({"analyst": "(unallocated)", "allocation": str(led.budget),
                        "releases": len(led), "spent": str(led.spent()),
                        "remaining": str(led.remaining())})
        return out



def _subtract(budget: Guarantee, allocations: list[Guarantee], *, strict: bool = False
              ) -> Guarantee:
    """``budget`` minus the allocations, component by component (basic arithmetic: shares of a
    budget add); ``strict``: raise when they do not fit."""
    b = {k: v for k, v in budget.as_dict().items() if k != "type"}
    for a in allocations:
        for k, v in a.as_dict().items():
            if k in b:
                b[k] -= v
    if strict and any(v < -1e-12 * max(1.0, abs(v)) for v in b.values()):
        raise BudgetExceededError(f"the analysts' shares would exceed the budget {budget}")
    return type(budget)(**{k: max(v, 0.0) for k, v in b.items()})

