"""Personalized privacy amplification by importance sampling (Fay, Mair & Sjölund, TMLR 2024).

Seed paper ``../shared/seeds/000_*`` / ``001_*``; spec ``../shared/spec/importance_sampling.md``.

What is here (all vectorised over points, all randomness through ``rng``):

* :func:`amplified_epsilon`: Theorem 6 (Eq. 1), ψ = log(1 + q (e^{ε(1/q, x)} − 1)) in log space.
* PDP profiles ε(w, x) with value and derivative in w (:class:`PDPProfile`): the linear profiles
  of weighted DP-Lloyd (Prop. 13, :func:`lloyd_profile`) and of the Laplace weighted sum (Sec. 3.3,
  :func:`laplace_sum_profile`), or your own (:class:`FunctionProfile`).
* Privacy-constrained weights (Problem 7, Theorem 10): :func:`solve_privacy_constrained` is
  Algorithm 1 for any profile, with the corrected bracket (``+2``) and Case-1 condition of the
  proof of Prop. 12 (spec §2.2, errata §9.1–9.3); :func:`privacy_constrained_weights` is the exact
  closed form for linear profiles through the lower branch W₋₁ of the Lambert W function
  (spec §2.3 item 7), evaluated in log space so that it holds for any ε* (also 1000).
* Sampling distributions: :func:`uniform_probabilities`, :func:`coreset_probabilities`
  (the λ-mixture of Sec. 4 / spec §5.2), :func:`privacy_probabilities` (DP-Lloyd's
  privacy-constrained q = 1/w), :func:`variance_optimal_probabilities` (the non-private
  benchmark of Fig. 2) and :func:`poisson_sample` (Definition 5).
* DP-Lloyd accounting: the Su et al. noise split (:func:`su_noise_scales`), the ε of full-data
  DP-Lloyd (:func:`dp_lloyd_epsilon`) and of a sampled run (:func:`sampled_lloyd_epsilon`, Eq. 5
  maximised exactly over ‖x‖ ∈ [0, r]), and the calibration of the noise constant B for a target
  (m, ε*) for every sampler (:func:`calibrate_lloyd`, spec §6.4).

The code of the first three items lives in :mod:`.amplification` (Theorem 6, profiles) and
:mod:`.weights` (Problem 7); this module holds the sampling distributions and re-exports the
rest, so ``from dpcore.mechanisms.importance.sampling import lloyd_profile`` keeps working. The
DP-Lloyd accounting is in :mod:`.calibration`, the one-pass grid sampler in :mod:`.grid`.
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.mechanisms.importance.amplification import (
    FunctionProfile,
    LinearProfile,
    PDPProfile,
    amplified_epsilon,
    laplace_sum_profile,
    lloyd_profile,
    logexpm1,
)
from dpcore.mechanisms.importance.weights import (
    _check_target,
    _weights_of_checked_slopes,
    privacy_constrained_weights,
    solve_privacy_constrained,
)
from dpcore.mechanisms.importance.weights import (
    _neg_lambertw_m1_from_log as _neg_lambertw_m1_from_log,  # tests import it from here
)
from dpcore.privacy.noise import public_randomness

__all__ = [
    "SAMPLERS",
    "FunctionProfile",
    "LinearProfile",
    "PDPProfile",
    "amplified_epsilon",
    "coreset_max_sample_size",
    "coreset_probabilities", "coreset_q",
    "laplace_sum_profile",
    "lloyd_profile",
    "logexpm1",
    "poisson_sample",
    "privacy_constrained_weights",
    "privacy_probabilities",
    "solve_privacy_constrained",
    "uniform_probabilities",
    "variance_optimal_probabilities",
]

#: Su et al. (2016) split of the budget between count and sum noise, used by the paper (Sec. 5).
SU_RHO = 0.225

#: Sampler names accepted by :func:`calibrate_lloyd` and
# :class:`dpcore.mechanisms.lloyd.estimator.DPLloyd`.
SAMPLERS = ("uniform", "coreset", "privacy")


# --------------------------------------------------------------------------------------------
# Sampling distributions and Poisson sampling
# --------------------------------------------------------------------------------------------


def _check_sample_size(sample_size: float, n: int) -> float:
    m = float(sample_size)
    if not (math.isfinite(m) and 0 < m <= n):
        raise ValueError(f"sample_size must be in (0, n={n}], got {sample_size!r}")
    return m


def uniform_probabilities(n: int, sample_size: float) -> np.ndarray:
    """q_unif(x) = m/n for all n points (expected sample size m; Sec. 5)."""
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be ≥ 1, got {n!r}")
    m = _check_sample_size(sample_size, n)
    return np.full(n, m / n)


def coreset_max_sample_size(
    n: int, mean_sq_norm: float, max_sq_norm: float, *, lam: float = 0.5
) -> float:
    """Largest m with q_core ≤ 1 for every point of squared norm ≤ ``max_sq_norm`` (spec §5.2).

    q_core(x) = λ m/n + (1 − λ) m ‖x‖²/(n x̃) ≤ 1 ⇔ m ≤ 1 / (λ/n + (1 − λ) ‖x‖²_max/(n x̃)).
    (The paper's m ≤ n x̃ / r² is sufficient for every λ; this is the exact bound.)
    """
    denom = lam / n + (1.0 - lam) * max_sq_norm / (n * mean_sq_norm)
    return float("inf") if denom == 0 else 1.0 / denom


def coreset_probabilities(
    X, sample_size: float, *, lam: float = 0.5, radius: float | None = None
) -> np.ndarray:
    """Poisson coreset distribution q_core (Sec. 4, after Bachem et al. 2018; spec §5.2).

    q_core(x) = λ m/n + (1 − λ) m ‖x‖²₂ / (n x̃),  x̃ = mean ‖x_i‖²₂, Σ_i q_core(x_i) = m.

    The data must be centred (the paper's prerequisite: ‖x‖² stands for the distance to the
    mean). n and x̃ are read off the data; the paper treats them as public (spec §9.12).

    Parameters
    ----------
    X : (n, d) array, centred
    sample_size : float
        Expected sample size m.
    lam : float in [0, 1]
        Mixing weight λ of the uniform part (λ = 1: uniform sampling; the paper uses 1/2).
    radius : float, optional
        The domain bound r. When given, q ≤ 1 is required on the whole ball ‖x‖ ≤ r (what the
        ε of Eq. 5 needs); otherwise only on the data points.

    Raises
    ------
    ValueError
        If some probability would exceed 1; the message states the largest feasible m.
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array (n, d), got shape {X.shape}")
    if not 0.0 <= float(lam) <= 1.0:
        raise ValueError(f"lam must be in [0, 1], got {lam!r}")
    n = X.shape[0]
    m = _check_sample_size(sample_size, n)
    sq = np.einsum("ij,ij->i", X, X)
    x_tilde = float(sq.mean())
    if x_tilde == 0 and lam < 1:
        raise ValueError("all points are 0: the coreset part is undefined; use lam=1 (uniform)")
    max_sq = float(radius) ** 2 if radius is not None else float(sq.max())
    m_max = coreset_max_sample_size(n, x_tilde if x_tilde > 0 else 1.0, max_sq, lam=lam)
    if m > m_max * (1 + 1e-12):
        where = f"‖x‖ ≤ radius={float(radius):g}" if radius is not None else "the data"
        raise ValueError(
            f"sample_size={m:g} makes some coreset probability exceed 1 on {where} "
            f"(lam={lam:g}); reduce sample_size or raise lam"  # no n, x̃ or bound: data-derived
        )
    return coreset_q(sq, sample_size=m, n=n, mean_sq_norm=x_tilde, lam=lam)


def coreset_q(
    sq_norms: np.ndarray, *, sample_size: float, n: int, mean_sq_norm: float, lam: float
) -> np.ndarray:
    """The formula of q_core (spec §5.2) for given squared norms and *given* n and x̃.

    :func:`coreset_probabilities` computes n and x̃ from its array; the distributed path
    (:mod:`dpcore.scale.dask_kmeans`) passes the global values to each partition. Capped at 1.
    """
    sq_norms = np.asarray(sq_norms, dtype=float)
    uniform = lam * sample_size / n
    if lam == 1:
        return np.full(sq_norms.shape, uniform)
    return np.minimum(uniform + (1.0 - lam) * sample_size * sq_norms / (n * mean_sq_norm), 1.0)


def variance_optimal_probabilities(X, sample_size: float) -> np.ndarray:
    """The non-private variance-optimal benchmark of Fig. 2 (Sec. 3.3; spec §3.2).

    Minimises Σ_i (1/q_i − 1)‖x_i‖²₂ subject to Σ q_i = m, 0 < q_i ≤ 1: q_i ∝ ‖x_i‖₂ with the
    points whose share would exceed 1 capped at 1 and the rest rescaled (water-filling).
    Not DP: it needs the whole data set (the paper's "oracle").
    """
    X = np.asarray(X, dtype=float)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    n = norms.shape[0]
    m = _check_sample_size(sample_size, n)
    q = np.zeros(n)
    capped = np.zeros(n, dtype=bool)
    for _ in range(n + 1):
        free = ~capped
        mass = m - capped.sum()
        total = norms[free].sum()
        if total <= 0:
            q[free] = mass / free.sum() if free.any() else 0.0
            break
        q[free] = mass * norms[free] / total
        over = free & (q > 1)
        if not over.any():
            break
        capped |= over
        q[capped] = 1.0
    return q


def privacy_probabilities(
    norms, *, beta_sum: float, beta_count: float, n_iter: int, target_epsilon: float
) -> np.ndarray:
    """The privacy-constrained sampler of DP-Lloyd, q_priv = 1/w (Theorem 10 with Prop. 13).

    Parameters
    ----------
    norms : (n,) array ≥ 0
        ‖x‖ of each point (clipped to the radius).
    beta_sum, beta_count : float
        DP-Lloyd's noise scales.
    n_iter : int
        Iterations T.
    target_epsilon : float
        ε*, the loss every point may have after sampling.

    Returns
    -------
    (n,) ndarray
        1 / :func:`privacy_constrained_weights` of the slopes of :func:`lloyd_profile`: a
        function of each point's norm and public constants alone (Definition 5). The one rule
        that :func:`~dpcore.mechanisms.importance.calibrate_lloyd` (Σ q),
        :mod:`~dpcore.mechanisms.importance.grid` (q at the grid's norms) and the Dask path
        (:mod:`dpcore.scale.sampling`, per partition) evaluate.
    """
    slopes = lloyd_profile(norms, beta_sum=beta_sum, beta_count=beta_count, n_iter=n_iter).slopes
    # the profile checked its slopes (finite, ≥ 0): the weights do not scan them again
    return 1.0 / _weights_of_checked_slopes(slopes, _check_target(target_epsilon))


@public_randomness("Poisson subsampling: chooses which rows enter (amplification), adds no "
                   "noise term")
def poisson_sample(q, *, rng: RNGLike = None) -> tuple[np.ndarray, np.ndarray]:
    """Poisson importance sampling (Definition 5).

    Each point i is kept independently with probability q_i and gets weight 1/q_i, so that any
    weighted sum over the sample is unbiased for the full-data sum.

    Returns
    -------
    indices : (m',) int64, sorted
    weights : (m',) float, 1/q at those indices
    """
    q = np.asarray(q, dtype=float)
    if q.ndim != 1 or np.any(~np.isfinite(q)) or np.any((q < 0) | (q > 1)):
        raise ValueError("q must be a 1-D array of probabilities in [0, 1]")
    gen = as_generator(rng)
    # random() is uniform on [0, 1): P(u < q) = q exactly, q = 0 never and q = 1 always kept.
    idx = np.flatnonzero(gen.random(q.shape[0]) < q)
    return idx, 1.0 / q[idx]
