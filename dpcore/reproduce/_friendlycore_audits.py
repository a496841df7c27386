"""Privacy audits for the FriendlyCore report: the zCDP filter and ``friendly_mean`` at the
claimed budget, each next to a deliberately broken variant the audit must flag; re-exported by
:mod:`dpcore.reproduce.friendlycore`.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.core.rng import RNGLike, as_generator
from dpcore.mechanisms.friendlycore import friendly_mean

__all__ = ["audits"]


def _audit_row(name: str, res, claimed: float) -> dict:
    return {"mechanism": name, "epsilon_lower": res.epsilon_lower, "claimed_epsilon": claimed,
            "passes": res.consistent_with(claimed)}


def audits(n_samples: int = 20_000, rng: RNGLike = 0) -> pd.DataFrame:
    """Privacy audits (:func:`dpcore.privacy.audit.audit_epsilon`) of the zCDP filter and
    friendly_mean at the claimed (ρ, δ) = (1, 1e-6) converted with δ' = 1e-3, each next to a
    deliberately broken variant (the bug named in the table) that the audit must flag."""
    from dpcore.mechanisms.friendlycore import filters as _filters
    from dpcore.mechanisms.friendlycore import friend_counts, zCDPFilter
    from dpcore.privacy.audit import audit_epsilon
    from dpcore.privacy.guarantees import ZCDP

    rho, delta = 1.0, 1e-6
    claim = ZCDP(rho, delta).to_approx_dp(1e-3)
    gen = as_generator(rng)
    f = zCDPFilter(rho, delta)
    n = 1000
    tau0, _ = _filters._threshold(n + math.sqrt(math.log(2 / delta) / f.rho1), f.rho2, delta)
    d0 = np.full(n, round(n / 2 + tau0))
    d1 = d0[:-1] - 1  # neighbour: a point that was everybody's friend removed

    def kept(apply):
        def sample(counts, size, g):
            return np.array([apply(counts[: n - 1], counts.size, g).sum() for _ in range(size)])
        return sample

    def good(c, size_ref, g):
        return f.apply(c, reference_size=size_ref, rng=g).mask

    def broken(c, size_ref, g):  # score noise variance 1/(8ρ₂) instead of n̂/(8ρ₂)
        n_hat = _filters.noisy_size_upper(size_ref, f.rho1, delta, rng=g)
        tau, _ = _filters._threshold(n_hat, f.rho2, delta)
        return c - size_ref / 2 + g.normal(0, math.sqrt(1 / (8 * f.rho2)), c.size) >= tau

    rows = []
    for name, fn in (("zCDPFilter (kept count)", good),
                     ("zCDPFilter with noise variance 1/(8ρ₂) (bug)", broken)):
        res = audit_epsilon(kept(fn), d0, d1, n_samples=n_samples, delta=claim.delta, rng=gen)
        rows.append(_audit_row(name, res, claim.epsilon))
    X0 = np.zeros((300, 1))
    X1 = np.vstack([X0, [[1.0]]])  # neighbour: one point at distance r (friendly)

    def mean_sample(scale):
        def sample(X, size, g):
            cnt = friend_counts(X, 1.0)
            out = np.empty(size)
            for i in range(size):
                est = friendly_mean(X, radius=1.0, rho=rho, delta=delta, counts=cnt, rng=g).estimate
                out[i] = -1e9 if est is None else X[:, 0].mean() + (est[0] - X[:, 0].mean()) * scale
            return out
        return sample

    for name, scale in (("friendly_mean (estimate)", 1.0),
                        ("friendly_mean with noise / 20 (bug)", 1 / 20)):
        res = audit_epsilon(mean_sample(scale), X0, X1, n_samples=n_samples // 2,
                            delta=claim.delta, rng=gen)
        rows.append(_audit_row(name, res, claim.epsilon))
    return pd.DataFrame(rows)

