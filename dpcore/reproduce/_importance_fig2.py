"""Figure 2 of the importance-sampling paper: the Laplace weighted sum (Sec. 3.3), with the
numbers behind claims C4/C5 (:func:`fig2_checks`); re-exported by
:mod:`dpcore.reproduce.importance`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import optimize, stats

from dpcore.core.rng import RNGLike, as_generator
from dpcore.mechanisms.importance import (
    amplified_epsilon,
    laplace_sum_profile,
    privacy_constrained_weights,
    uniform_probabilities,
    variance_optimal_probabilities,
)
from dpcore.privacy.noise import laplace

__all__ = ["fig2_checks", "figure2_curves", "figure2_weights", "lws_data"]


def lws_data(n: int = 1000, d: int = 10, *, rng: RNGLike = 0) -> np.ndarray:
    """n points from N(0, I/d) in d dimensions (Sec. 3.3)."""
    return as_generator(rng).normal(0.0, math.sqrt(1.0 / d), size=(int(n), int(d)))


def _target_for_sample_size(slopes: np.ndarray, m: float) -> float:
    """ε* with Σ_i q_priv(x_i; ε*) = m for a linear profile (root in log ε*)."""
    k_max = float(slopes.max())

    def gap(log_eps: float) -> float:
        return float(np.sum(1.0 / privacy_constrained_weights(slopes, math.exp(log_eps)))) - m

    lo = math.log(k_max)
    if gap(lo) < 0:
        raise ValueError(f"m={m:g} is above what sampling for free gives at ε* = {k_max:g}")
    hi = lo + 1.0
    while gap(hi) > 0:
        hi += 1.0
    return math.exp(optimize.brentq(gap, lo, hi, xtol=1e-12))


def figure2_weights(X: np.ndarray | None = None, m: float = 19, *, scale: float = 1.0
                    ) -> pd.DataFrame:
    """Figure 2 (left): importance weights of the three strategies at expected size m.

    Privacy-constrained weights use b = ``scale`` and the ε* for which Σ q = m (the paper does
    not state its (b, ε*); spec §3.3). Rows are sorted by ℓ1 norm, as in the paper's plot.
    """
    X = lws_data() if X is None else np.asarray(X, dtype=float)
    n = X.shape[0]
    slopes = laplace_sum_profile(X, scale=scale).slopes
    target = _target_for_sample_size(slopes, m)
    w_priv = privacy_constrained_weights(slopes, target)
    w_var = 1.0 / variance_optimal_probabilities(X, m)
    order = np.argsort(slopes * scale)
    return pd.DataFrame({
        "rank": np.arange(n),
        "l1_norm": (slopes * scale)[order],
        "uniform": np.full(n, n / m),
        "privacy": w_priv[order],
        "variance": w_var[order],
        "target_epsilon": target,
    })


def _lws_mse(X: np.ndarray, q: np.ndarray, scale: float, n_runs: int, gen) -> float:
    """Monte Carlo E‖ζ + Σ_S w x − Σ x‖² over Poisson samples and Laplace(scale) noise."""
    n, d = X.shape
    keep = gen.random((n_runs, n)) < q
    est = (keep / np.where(q > 0, q, 1.0)) @ X + laplace(scale, size=(n_runs, d), rng=gen)
    return float(np.mean(np.sum((est - X.sum(axis=0)) ** 2, axis=1)))


def figure2_curves(
    X: np.ndarray | None = None,
    b_grid: Sequence[float] | None = None,
    *,
    n_runs: int = 1000,
    rng: RNGLike = 0,
) -> pd.DataFrame:
    """Figure 2 (right): (max PDP loss, MSE) of uniform, privacy-constrained and variance-optimal
    sampling over the noise scale b ∈ [3, 3000].

    For each b the privacy-constrained weights at ε*_b = max_i ‖x_i‖₁/b ("sampling for free", the
    base mechanism's own ε; spec §3.3) fix m_b = Σ q_priv; uniform and variance-optimal sampling
    get the same expected size. MSE is measured over ``n_runs`` runs and also given exactly,
    Σ_j Var = 2 b² d + Σ_i (1/q_i − 1)‖x_i‖²₂ (Sec. 3.3).
    """
    X = lws_data() if X is None else np.asarray(X, dtype=float)
    b_grid = np.geomspace(3, 3000, 13) if b_grid is None else np.asarray(b_grid, dtype=float)
    gen = as_generator(rng)
    n, d = X.shape
    sq = np.einsum("ij,ij->i", X, X)
    rows = []
    for b in b_grid:
        slopes = laplace_sum_profile(X, scale=b).slopes
        target = float(slopes.max())
        q_priv = 1.0 / privacy_constrained_weights(slopes, target)
        m_b = float(q_priv.sum())
        for name, q in (("uniform", uniform_probabilities(n, m_b)), ("privacy", q_priv),
                        ("variance", variance_optimal_probabilities(X, m_b))):
            psi = amplified_epsilon(q, np.where(q > 0, slopes / np.where(q > 0, q, 1), 0.0))
            exact = 2 * b * b * d + float(np.sum((1.0 / q - 1.0) * sq))
            rows.append({"b": b, "strategy": name, "m": m_b, "max_loss": float(psi.max()),
                         "mse": _lws_mse(X, q, b, n_runs, gen), "mse_exact": exact})
    return pd.DataFrame(rows)


def fig2_checks(weights: pd.DataFrame, curves: pd.DataFrame) -> dict:
    """Numbers behind C4/C5."""
    corr = float(np.corrcoef(weights["privacy"], weights["variance"])[0, 1])
    rho_norm = float(stats.spearmanr(weights["privacy"], weights["l1_norm"]).statistic)
    piv = curves.pivot(index="b", columns="strategy", values=["max_loss", "mse_exact", "mse"])
    loss_ok = bool(np.all(piv["max_loss"]["privacy"] <= piv["max_loss"]["uniform"] * (1 + 1e-9)))
    # Curves in the (max loss, MSE) plane: the uniform curve's MSE at the privacy-constrained
    # curve's max losses (log-log interpolation inside its range) against the latter's MSE.
    lu, mu = np.log(piv["max_loss"]["uniform"]), np.log(piv["mse_exact"]["uniform"])
    lp, mp = np.log(piv["max_loss"]["privacy"]), np.log(piv["mse_exact"]["privacy"])
    order = np.argsort(lu)
    inside = (lp >= lu.min()) & (lp <= lu.max())
    unif_at = np.interp(lp[inside], lu.iloc[order], mu.iloc[order])
    dominance = np.exp(unif_at - mp[inside])
    mse_ok = bool(np.all(dominance > 1))
    gap_var = float(np.max(piv["mse_exact"]["privacy"] / piv["mse_exact"]["variance"]))
    gap_eq_m = float(np.max(piv["mse_exact"]["privacy"] / piv["mse_exact"]["uniform"]))
    return {"corr": corr, "spearman_norm": rho_norm, "loss_ok": loss_ok, "mse_ok": mse_ok,
            "min_dominance": float(dominance.min()), "max_dominance": float(dominance.max()),
            "max_ratio_to_var": gap_var, "max_ratio_unif_equal_m": gap_eq_m,
            "target": float(weights["target_epsilon"].iloc[0]),
            "w_priv_range": (float(weights["privacy"].min()), float(weights["privacy"].max())),
            "w_var_range": (float(weights["variance"].min()), float(weights["variance"].max()))}


