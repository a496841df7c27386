"""The backup clustering after a FriendlyCore failure, on a share of ρ reserved up front.

The paper (Sec. 6.2) spends ρ = 0.99 on FC_Clustering and, when it fails (an empty or almost
empty core), runs LSH_Clustering [CK21] with ε = √0.02, i.e. ρ = 0.01 zCDP, "as backup".
``fallback="lsh"`` is that: :class:`dpcore.mechanisms.baselines.lsh_clustering.LSHClustering`
calibrated so that its own zCDP ρ (its count levels and leaf sums, composed in zCDP) is at most
the reserved ρ, composing exactly with FriendlyCore's ρ (no conversion loss).
``fallback="dplloyd"`` runs :class:`dpcore.mechanisms.lloyd.estimator.DPLloyd` at the pure
ε = √(2ρ), which is ε²/2 = ρ-zCDP.

The share is spent whether or not the backup runs (it is reserved before the fit), so running it
or not reveals nothing beyond the (private) failure bit.
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.privacy.guarantees import ZCDP, zcdp_to_epsilon

__all__ = ["FALLBACKS", "run_fallback"]

#: Backups FriendlyCoreKMeans accepts; "lsh" is the paper's.
FALLBACKS = ("lsh", "dplloyd")


def run_fallback(
    kind: str, X: np.ndarray, k: int, rho: float, *, radius: float, n_iter: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, ZCDP]:
    """Centres of the backup ``kind`` on X at ρ-zCDP, and the guarantee it spent.

    Parameters
    ----------
    kind : "lsh" or "dplloyd"
    rho : float
        The reserved share (> 0).
    radius : float
        The public Λ of the fit (LSH clips to it, DP-Lloyd drops rows beyond it).
    n_iter : int
        DP-Lloyd's iterations (unused by LSH).
    """
    if kind == "dplloyd":
        from dpcore.mechanisms.lloyd.estimator import DPLloyd

        fb = DPLloyd(k, epsilon=math.sqrt(2.0 * rho), radius=radius, n_iter=n_iter,
                     rng=rng).fit(X)
        return fb.cluster_centers_, ZCDP(rho)
    if kind != "lsh":
        raise ValueError(f"fallback must be one of {FALLBACKS}, got {kind!r}")
    from dpcore.mechanisms.baselines.lsh_clustering import (
        LSHClustering,
        _zcdp_rho,
        lsh_noise_parameters,
    )

    # LSHClustering calibrates its zCDP ρ(α) so that ρ(α) converts to (ε, δ_conv); asking for
    # the ε that ρ converts to at any δ_conv inverts that: ρ(α) ≤ ρ (its root lands on the
    # private side). The δ_conv is bookkeeping only: the mechanism itself is ρ-zCDP, δ = 0.
    delta_conv = 1e-6
    eps = zcdp_to_epsilon(rho, delta_conv)
    lsh = LSHClustering(k, epsilon=eps, delta=delta_conv, radius=radius, rng=rng)
    alpha, _ = lsh_noise_parameters(eps, delta_conv, int(lsh.max_depth))
    spent = _zcdp_rho(alpha, int(lsh.max_depth) + 1)
    if not spent <= rho * (1.0 + 1e-12):  # the accounting below would be wrong: refuse
        raise RuntimeError(f"LSH calibration spent ρ = {spent!r} > the reserved {rho!r}")
    centers = np.asarray(lsh.fit(X).cluster_centers_, dtype=float)
    return centers, ZCDP(rho)
