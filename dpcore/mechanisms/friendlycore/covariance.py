"""FC_Covariance: learning an unrestricted covariance matrix with FriendlyCore (paper 002, App. A).

Spec ``../shared/spec/friendlycore.md`` §4. Data: i.i.d. rows of N(0, Σ), Σ ≻ 0, with **no bound
on ‖Σ‖** (the point of the construction: ``matrixDist`` is scale invariant).

* :func:`matrix_dist` — ``matrixDist(S1, S2) = max(‖S2^{-1/2} S1 S2^{-1/2} − I‖,
  ‖S1^{-1/2} S2 S1^{-1/2} − I‖)`` (operator norm; +∞ unless both ≻ 0), [AL21] via App. A.
* :func:`gamma_cov` — γ(η, ε, δ) of [AL21] Lemma 9.1.
* :func:`b_eta` — the mechanism ``B_η(S) = S^{1/2}(I + ηG)(I + ηG)^T S^{1/2}``, G i.i.d. N(0, 1).
* :func:`friendly_covariance` — Algorithm FriendlyCovariance: ``n̂ = n − ln(1/δ)/ε₁ + Lap(1/ε₁)``
  (ε₁ = 0.1 ε), ⊥ if ``n̂ ≤ c₁/γ`` with γ = γ(η, 0.9 ε, δ e^{−ε₁}), else ``B_η(mean)``;
  matrixDist_{0.1}-friendly (ε, δ)-DP (Claim A.x).
* :func:`fc_covariance` — Algorithm FC_Covariance: t parts of m = ⌊n/t⌋ rows, their empirical
  second-moment matrices ``S_i``, FriendlyCoreDP (BasicFilter, α = 0) with the predicate
  ``matrixDist ≤ 0.1``, then FriendlyCovariance on the core. Theorem A.1:
  ``(2(e^ε − 1), 2δ e^{ε + 2(e^ε − 1)})``-DP (:func:`~.filters.dp_paradigm_guarantee`).

Neighbours. Theorem A.1 is stated for databases of *parts* differing by one part added or
removed (``accounting="paper"``). One changed data row changes one part (the partition depends
only on the public n), i.e. one part removed and one added: group privacy of size 2 gives
``(2ε', (1 + e^{ε'}) δ')`` from Theorem A.1's (ε', δ'); that is the default
(``accounting="replace_one"``, with n public).

Noise. ``Lap(1/ε₁)`` goes through :func:`~dpcore.privacy.noise.add_laplace` and the factor
``I + ηG`` through :func:`~dpcore.privacy.noise.add_gaussian` applied to the (public) identity,
so inside the release door both are the defended exact discrete samplers. ``B_η`` is
multiplicative: the grid argument of the defence covers the draw, not the float products that
follow (no floating-point attack on such products is known to us; stated, not proven).

The constants c₁, c₂, c₃ of [AL21] are not given numerically; c₁ (the abort threshold ``c₁/γ``)
is a parameter (default 1, as the spec suggests). γ is tiny (≈ 1e-3 at d = 2, ε = 1, η = 0.1),
so FC_Covariance needs thousands of parts: n in the millions even at d = 2 (Theorem A.2:
n = Ω̃(d² ln(1/β)^{3/2} ln(1/δ)^{1/2} / ε)).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from dpcore.core.errors import ParameterError
from dpcore.core.rng import RNGLike, as_generator
from dpcore.data import limits
from dpcore.data.params import N_PUBLIC_INT, Param, declare, validate_params
from dpcore.mechanisms.friendlycore.filters import BasicFilter, dp_paradigm_guarantee
from dpcore.mechanisms.friendlycore.validation import check_points
from dpcore.privacy.guarantees import ApproxDP, PrivacyLeakWarning
from dpcore.privacy.noise import add_gaussian, add_laplace

__all__ = [
    "COVARIANCE_PARAMS",
    "FRIEND_GAMMA",
    "CovarianceResult",
    "b_eta",
    "fc_covariance",
    "fc_covariance_guarantee",
    "friendly_covariance",
    "gamma_cov",
    "matrix_dist",
    "pairwise_matrix_dist",
    "part_matrices",
]

#: The friendliness predicate's threshold: matrixDist ≤ 0.1 (App. A).
FRIEND_GAMMA = 0.1


def _unit_interval(value, name: str) -> float:
    """ε or δ of App. A: Lemma 9.1 of [AL21] needs both in (0, 1]."""
    v = limits.check_number(name, value, limits.MIN_EPSILON if name == "epsilon"
                            else limits.MIN_DELTA, 1.0,
                            why=" ([AL21] Lemma 9.1, used by FriendlyCovariance, needs it in "
                                "(0, 1])")
    return v


COVARIANCE_PARAMS: dict[str, Param] = {
    "epsilon": Param("float", limits.MIN_EPSILON, 1.0, check=_unit_interval,
                     doc="ε of FriendlyCovariance, in (0, 1]"),
    "delta": Param("float", limits.MIN_DELTA, 1.0, check=_unit_interval,
                   doc="δ of FriendlyCovariance, in (0, 1]"),
    "t": Param("int", 2, 10**6, doc="number of parts (each gives one covariance matrix)"),
    "eta": Param("float", 1e-6, 1e3, doc="η of B_η: the noise factor I + ηG"),
    "c1": Param("float", 1e-6, 1e6, doc="[AL21]'s constant in the abort threshold c1/γ"),
    "n_public": N_PUBLIC_INT,
    "accounting": Param("str", choices=("replace_one", "paper"),
                        doc="neighbours: one data row replaced (n public), or the paper's one "
                            "part added/removed"),
}


@dataclass(frozen=True)
class CovarianceResult:
    """Output of :func:`fc_covariance`.

    Attributes
    ----------
    estimate : (d, d) array or None — Σ̂, or None (⊥: FriendlyCovariance declined).
    n_hat : float — the released noisy core size ``n̂`` (ε₁ of the budget; part of the output).
    privacy_ : ApproxDP — the guarantee of the whole run (``accounting``).
    threshold : float — the public abort threshold ``c₁/γ``.
    """

    estimate: np.ndarray | None
    n_hat: float
    privacy_: ApproxDP
    threshold: float


def matrix_dist(S1: np.ndarray, S2: np.ndarray) -> float:
    """``matrixDist(S1, S2)`` (App. A, [AL21]); +∞ unless both are positive definite."""
    return float(pairwise_matrix_dist(np.stack([S1, S2]))[0, 1])


def _inv_sqrt(S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``S^{-1/2}`` of a batch of symmetric matrices and whether each is ≻ 0."""
    w, V = np.linalg.eigh(S)
    pd = w.min(axis=-1) > 0
    w = np.where(w > 0, w, 1.0)
    return (V / np.sqrt(w)[..., None, :]) @ np.swapaxes(V, -1, -2), pd


def pairwise_matrix_dist(Ss: np.ndarray, *, chunk: int = 256) -> np.ndarray:
    """(t, t) matrixDist of every pair: the eigenvalues λ of ``S_j^{-1/2} S_i S_j^{-1/2}`` give
    both terms (the other matrix has eigenvalues 1/λ): ``max(|λ − 1|, |1/λ − 1|)``."""
    Ss = np.asarray(Ss, dtype=float)
    W, pd = _inv_sqrt(Ss)
    t = Ss.shape[0]
    out = np.full((t, t), np.inf)
    for a in range(0, t, chunk):
        M = W[None, :] @ Ss[a:a + chunk, None] @ W[None, :]  # (c, t, d, d): S_j^-½ S_i S_j^-½
        lam = np.linalg.eigvalsh((M + np.swapaxes(M, -1, -2)) / 2)
        with np.errstate(divide="ignore"):
            dist = np.maximum(np.abs(lam - 1), np.abs(1 / lam - 1)).max(axis=-1)
        ok = pd[a:a + chunk, None] & pd[None, :] & (lam.min(axis=-1) > 0)
        out[a:a + chunk] = np.where(ok, dist, np.inf)
    return np.maximum(out, out.T)  # symmetric by definition; float round-off aside


def gamma_cov(eta: float, epsilon: float, delta: float, d: int) -> float:
    """γ(η, ε, δ) of [AL21] Lemma 9.1 (App. A): B_η(S1) ≈_{ε,δ} B_η(S2) when
    matrixDist(S1, S2) ≤ γ."""
    return min(math.sqrt(epsilon / (2 * d * (d + 1 / eta**2))),
               epsilon / (8 * d * math.sqrt(math.log(1 / delta))),
               epsilon / (8 * math.log(2 / delta)),
               epsilon * eta / (12 * math.sqrt(d * math.log(2 / delta))))


def b_eta(S: np.ndarray, eta: float, *, rng: RNGLike = None) -> np.ndarray:
    """``B_η(S) = S^{1/2}(I + ηG)(I + ηG)^T S^{1/2}`` ([AL21] Lemma 9.1); ``I + ηG`` is drawn by
    the defended Gaussian adder on the public identity (module docstring)."""
    d = S.shape[0]
    w, V = np.linalg.eigh((S + S.T) / 2)
    root = (V * np.sqrt(np.clip(w, 0, None))) @ V.T
    A = np.asarray(add_gaussian(np.eye(d), eta, sensitivity=eta, rng=rng))
    out = root @ A @ A.T @ root
    return (out + out.T) / 2


def friendly_covariance(Ss: np.ndarray, *, epsilon: float, delta: float, eta: float,
                        c1: float = 1.0, rng: RNGLike = None
                        ) -> tuple[np.ndarray | None, float, float]:
    """Algorithm FriendlyCovariance (App. A): (Σ̂ or None, n̂, threshold c₁/γ).

    matrixDist_{0.1}-friendly (ε, δ)-DP on databases of matrices (one matrix added/removed).
    """
    gen = as_generator(rng)
    Ss = np.asarray(Ss, dtype=float)
    n, d = Ss.shape[0], Ss.shape[-1]
    eps1, eps2 = 0.1 * epsilon, 0.9 * epsilon
    threshold = c1 / gamma_cov(eta, eps2, delta * math.exp(-eps1), d)
    n_hat = float(add_laplace(n - math.log(1 / delta) / eps1, 1 / eps1, sensitivity=1.0,
                              rng=gen))
    if n == 0 or n_hat <= threshold:
        return None, n_hat, threshold
    return b_eta(Ss.mean(axis=0), eta, rng=gen), n_hat, threshold


def part_matrices(X: np.ndarray, t: int, n: int) -> np.ndarray:
    """Step 2 of FC_Covariance: ``S_i = (1/m) Σ_{j in part i} x_j x_jᵀ``, m = ⌊n/t⌋, parts by
    position (they depend on the public n only; rows beyond t·m are not used)."""
    m = n // t
    d = X.shape[1]
    rows = X[: t * m]
    if rows.shape[0] < t * m:  # fewer rows than declared: the missing ones count as zeros
        rows = np.vstack([rows, np.zeros((t * m - rows.shape[0], d))])
    P = rows.reshape(t, m, d)
    return np.einsum("tmi,tmj->tij", P, P) / m


def fc_covariance_guarantee(epsilon: float, delta: float,
                            accounting: str = "replace_one") -> ApproxDP:
    """Theorem A.1 (``accounting="paper"``): ``(2(e^ε − 1), 2δ e^{ε + 2(e^ε − 1)})``; with
    ``"replace_one"`` group privacy of size 2 on top: ``(2ε', (1 + e^{ε'}) δ')``."""
    g = dp_paradigm_guarantee(ApproxDP(epsilon, delta), alpha=0.0)
    if accounting == "paper":
        return g
    return ApproxDP(2 * g.epsilon, min((1 + math.exp(g.epsilon)) * g.delta, 1.0 - 1e-16))


@declare(**COVARIANCE_PARAMS)
def fc_covariance(X: np.ndarray, *, epsilon: float = 1.0, delta: float = 1e-6, t: int = 1000,
                  eta: float = 0.1, c1: float = 1.0, n_public: int | None = None,
                  accounting: str = "replace_one", rng: RNGLike = None) -> CovarianceResult:
    """Algorithm FC_Covariance (App. A) on rows of N(0, Σ).

    Parameters
    ----------
    X : (n, d) array
        The rows (centred: App. A's model has mean 0; the second moment is what is estimated).
    epsilon, delta : float in (0, 1]
        FriendlyCovariance's (ε, δ); the run's guarantee is :func:`fc_covariance_guarantee`.
    t : int
        Number of parts.
    eta : float
        η of B_η.
    c1 : float
        [AL21]'s constant in the abort threshold c₁/γ (not given numerically; default 1).
    n_public : int, optional
        Public n (fixes the partition). Left unset, the row count is read off the data
        (:class:`PrivacyLeakWarning`).
    accounting : "replace_one" or "paper"
        See the module docstring.
    rng : seed or Generator

    Returns
    -------
    CovarianceResult
    """
    p = validate_params(COVARIANCE_PARAMS, dict(epsilon=epsilon, delta=delta, t=t, eta=eta, c1=c1,
                                                n_public=n_public, accounting=accounting))
    # with a public n the partition is fixed and missing rows count as zeros: an empty private
    # table releases like any other (total, issue 22.1); without it n is read off the data
    X = check_points(X, min_rows=0 if p["n_public"] is not None else 1)
    if p["n_public"] is None:
        warnings.warn("fc_covariance: n read off the data (pass n_public): the partition into "
                      "parts then depends on the private row count", PrivacyLeakWarning,
                      stacklevel=2)
        n = X.shape[0]
    else:
        n = int(p["n_public"])
    t_ = int(p["t"])
    if n // t_ < 1:
        raise ParameterError("t", f"t = {t_} parts need at least t rows (n = {n})")
    gen = as_generator(rng)
    Ss = part_matrices(X, t_, n)
    counts = (pairwise_matrix_dist(Ss) <= FRIEND_GAMMA).sum(axis=1)  # self included
    core = BasicFilter(alpha=0.0).apply(counts, rng=gen).mask
    est, n_hat, thr = friendly_covariance(Ss[core], epsilon=p["epsilon"], delta=p["delta"],
                                          eta=p["eta"], c1=p["c1"], rng=gen)
    return CovarianceResult(est, n_hat, fc_covariance_guarantee(p["epsilon"], p["delta"],
                                                                p["accounting"]), thr)
