"""DP averaging with FriendlyCore (Tsfadia et al. 2022, Sec. 3 and 5.1; spec §2).

* :func:`friendly_avg` — FriendlyAvg: a ``dist_r``-friendly (ρ, δ)-zCDP mean (Sec. 3).
* :func:`check_diam`, :func:`find_diam` — the private diameter search (Sec. 5.1.2).
* :func:`friendly_mean` — FC_Avg (known diameter, Sec. 5.1.1) and FC_Avg_UnknownDiam (Sec. 5.1.2).

Readings of the paper's ambiguities (spec §7), chosen so the privacy proofs hold:

* Footnote 4's split ``ρ₁ = (√ln(1/δ) ρ / n)^{2/3}`` needs the size n of FriendlyAvg's input,
  which is private. We plug in the ``n̂`` that FriendlyCore has already released
  (post-processing), and cap ρ₁ at ρ/2. (The footnote says "minimum" of f; it is the maximiser.)
* FriendlyAvg's size noise uses ``(1 − δ) ρ₁`` (as printed for the default split) so that
  conditioning on ``n̂ ≤ n`` (Fact C.1) keeps it within ρ₁ for any split.
* FindDiam (spec §7.2): ``t = ⌈log_b(r_max/r_min)⌉``, ``L = max(1, ⌈log₂(t+1)⌉)`` probes of
  CheckDiam with (ρ/L, β/L) each, searching the smallest passing exponent; none passing gives
  ``r_min b^t``.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np

from dpcore.core.errors import ParameterError
from dpcore.core.rng import RNGLike, as_generator
from dpcore.data import limits
from dpcore.data.params import (
    DELTA_POSITIVE,
    EPSILON_FINITE,
    N_PUBLIC_INT,
    RHO,
    Param,
    declare,
    validate_params,
)
from dpcore.privacy.guarantees import ZCDP, ApproxDP, Guarantee, privacy_alias
from dpcore.privacy.noise import add_gaussian, gaussian_sigma_zcdp

from .counting import total_friends
from .filters import FriendlyCoreResult, friendly_core
from .validation import check_points, check_positive, check_privacy

FAILED_MESSAGE = (
    "FriendlyAvg returned ⊥ (its noisy size n̂ ≤ 0): radius too small, data not friendly, or too "
    "few points. The budget is spent: ⊥ is an output of the mechanism."
)

__all__ = [
    "FAILED_MESSAGE",
    "FriendlyAvgResult",
    "FriendlyMeanResult",
    "check_diam",
    "find_diam",
    "footnote_rho1",
    "friendly_avg",
    "friendly_mean",
    "noisy_size_lower",
    "rho_for_epsilon",
]


def footnote_rho1(rho: float, delta: float, n_public: float) -> float:
    """Footnote 4's size budget ``(√ln(1/δ) ρ / n)^{2/3}``, capped at ρ/2 (n must be public)."""
    if not n_public > 0:
        return 0.1 * rho
    return min(0.5 * rho, (math.sqrt(math.log(1.0 / delta)) * rho / n_public) ** (2.0 / 3.0))


def noisy_size_lower(n: int, rho1: float, delta: float, *, rng: RNGLike = None) -> float:
    """``n̂ = n − √(ln(1/δ)/ρ₁') − 1 + N(0, 1/(2ρ₁'))``, ``ρ₁' = (1 − δ)ρ₁`` (FriendlyAvg and
    FriendlyOrdTupAvg step 2): ≤ n w.p. ≥ 1 − δ, and ρ₁-zCDP even conditioned on that event."""
    rho1_eff = (1.0 - delta) * rho1
    base = n - math.sqrt(math.log(1.0 / delta) / rho1_eff) - 1.0
    return float(add_gaussian(base, gaussian_sigma_zcdp(1.0, rho1_eff), sensitivity=1.0, rng=rng))


@dataclass(frozen=True)
class FriendlyAvgResult:
    """FriendlyAvg's output: ``estimate`` is ``None`` for ⊥ (``n̂ ≤ 0``); ``privacy_`` the
    guarantee (``guarantee`` is its deprecated name)."""

    estimate: np.ndarray | None
    n_hat: float
    noise_sd: float | None
    privacy_: ZCDP

    guarantee = privacy_alias("guarantee")


def friendly_avg(
    X: np.ndarray,
    *,
    rho: float,
    delta: float,
    radius: float,
    rho1: float | None = None,
    rng: RNGLike = None,
) -> FriendlyAvgResult:
    """FriendlyAvg(D, ρ, δ, r) (Sec. 3): ``dist_r``-friendly (ρ, δ)-zCDP average.

    ``n̂ = n − √(ln(1/δ)/ρ₁') − 1 + N(0, 1/(2ρ₁'))`` with ``ρ₁' = (1 − δ) ρ₁``; ⊥ if ``n̂ ≤ 0``;
    else ``Avg(D) + N(0, σ² I)``, ``σ = (2r/n̂)/√(2ρ₂)``, ``ρ₂ = ρ − ρ₁``. Default ``ρ₁ = 0.1ρ``.
    Only private for neighbours whose union is ``dist_r``-friendly (Claim 3.1): run it on a
    FriendlyCore output, or on data in a ball of radius r/2.
    """
    X = check_points(X)
    check_privacy(rho=rho, delta=delta)
    radius = check_positive("radius", radius)
    gen = as_generator(rng)
    rho1 = 0.1 * rho if rho1 is None else float(rho1)
    if not 0 < rho1 < rho:
        raise ValueError(f"rho1 must be in (0, rho = {rho:g}), got {rho1!r}")
    rho2 = rho - rho1
    n = X.shape[0]
    n_hat = noisy_size_lower(n, rho1, delta, rng=gen)
    guarantee = ZCDP(rho, delta)
    if n == 0 or n_hat <= 0:
        return FriendlyAvgResult(None, n_hat, None, guarantee)
    sigma = gaussian_sigma_zcdp(2.0 * radius / n_hat, rho2)
    estimate = add_gaussian(X.mean(axis=0), sigma, sensitivity=2.0 * radius / n_hat, rng=gen)
    return FriendlyAvgResult(estimate, n_hat, sigma, guarantee)


def _check_diam_from_total(
    total: float, n: int, rho: float, beta: float, gen: np.random.Generator
) -> bool:
    a_hat = float(add_gaussian(total / n, gaussian_sigma_zcdp(2.0, rho), sensitivity=2.0, rng=gen))
    return a_hat >= n - math.sqrt(4.0 * math.log(1.0 / beta) / rho)


def check_diam(
    X: np.ndarray, *, rho: float, beta: float, radius: float, rng: RNGLike = None
) -> bool:
    """CheckDiam(D, ρ, β, r) (Sec. 5.1.2): ρ-zCDP test that most pairs are within ``r``.

    ``a = (1/n) Σ_i s_i`` with ``s_i = #{j : ‖x_i − x_j‖ ≤ r}``; output ``a + N(0, 2/ρ) ≥
    n − √(4 ln(1/β)/ρ)`` (a and a − n have sensitivity ≤ 2). False for empty data.
    """
    X = check_points(X)
    check_privacy(rho=rho)
    n = X.shape[0]
    if n == 0:
        return False
    total = total_friends(X, np.array([check_positive("radius", radius)]))[0]
    return _check_diam_from_total(total, n, rho, beta, as_generator(rng))


def find_diam(
    X: np.ndarray,
    *,
    rho: float,
    beta: float,
    r_min: float,
    r_max: float,
    base: float = 1.5,
    rng: RNGLike = None,
) -> float:
    """FindDiam(D, ρ, β, r_min, r_max, b) (Sec. 5.1.2): ρ-zCDP binary search for a diameter.

    Searches the smallest ``e ∈ {0..t}`` with ``CheckDiam(r_min b^e) = 1`` using
    ``L = max(1, ⌈log₂(t+1)⌉)`` probes of (ρ/L, β/L); returns ``r_min b^e`` (``r_min b^t`` if no
    probe passes). All candidate totals come from one distance pass.
    """
    X = check_points(X)
    check_privacy(rho=rho)
    r_min = check_positive("r_min", r_min)
    r_max = check_positive("r_max", r_max)
    if r_max < r_min:
        raise ValueError(f"need r_min <= r_max, got r_min = {r_min!r}, r_max = {r_max!r}")
    if not base > 1:
        raise ValueError(f"base must be > 1, got {base!r}")
    gen = as_generator(rng)
    t = max(0, math.ceil(math.log(r_max / r_min) / math.log(base) - 1e-12))
    grid = r_min * base ** np.arange(t + 1)
    n = X.shape[0]
    if n == 0 or t == 0:
        return float(grid[-1])
    probes = max(1, math.ceil(math.log2(t + 1)))
    totals = total_friends(X, grid)
    lo, hi = 0, t
    for _ in range(probes):
        if lo >= hi:
            break
        mid = (lo + hi) // 2
        if _check_diam_from_total(totals[mid], n, rho / probes, beta / probes, gen):
            hi = mid
        else:
            lo = mid + 1
    return float(grid[hi])


def rho_for_epsilon(epsilon: float, delta_conv: float) -> float:
    """The ρ whose conversion ``ρ + 2√(ρ ln(1/δ'))`` equals ``epsilon`` (Bun & Steinke 1.3)."""
    check_privacy(epsilon=epsilon, delta=delta_conv)
    L = math.log(1.0 / delta_conv)
    return (math.sqrt(L + epsilon) - math.sqrt(L)) ** 2


@dataclass(frozen=True)
class FriendlyMeanResult:
    """Output of :func:`friendly_mean`.

    Attributes
    ----------
    estimate : (d,) array or None — ``None`` when FriendlyAvg aborted (⊥); see ``reason``.
    core_mask : (n,) bool — FriendlyCore's kept points.
    privacy_ : the guarantee delivered (ZCDP(ρ, δ), or ApproxDP(ε, δ) when called with ε);
        ``guarantee`` is its deprecated name.
    radius : float — r used (given, or found by FindDiam).
    radius_was_searched : bool
    failed : bool ; reason : str
    core : FriendlyCoreResult ; n_hat : float — FriendlyAvg's noisy size ; noise_sd : float
    budget : list of (step, guarantee) — how the budget was split.
    """

    estimate: np.ndarray | None
    core_mask: np.ndarray
    privacy_: Guarantee
    radius: float
    radius_was_searched: bool
    core: FriendlyCoreResult
    n_hat: float
    noise_sd: float | None
    failed: bool = False
    reason: str = ""
    budget: list = field(default_factory=list)

    guarantee = privacy_alias("guarantee")

    @property
    def core_size(self) -> int:
        return int(self.core_mask.sum())


_POSITIVE = Param("float", limits.MIN_RADIUS, limits.MAX_RADIUS, special=(None,))


def _check_rate(value, name: str) -> float:
    """A sampling rate in (0, 1]."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value <= 1:
        raise ParameterError(name, f"{name} must be in (0, 1], got {value!r}"[:300])
    return float(value)


@declare(
    # r of the dist_r predicate (most pairs within r): public, but not the rows' norm bound
    radius=Param("float", limits.MIN_RADIUS, limits.MAX_RADIUS, special=(None,),
                 check=lambda v, name: limits.check_radius(v, name),
                 doc="r of the dist_r predicate (None: searched privately)"),
    rho=RHO.also(None),
    epsilon=EPSILON_FINITE.also(None),
    delta=DELTA_POSITIVE,
    r_min=_POSITIVE,
    r_max=_POSITIVE,
    beta=Param("float", limits.MIN_PROBABILITY, 1.0,
               check=lambda v, name: limits.check_probability(v, name),
               doc="confidence of the diameter search"),
    split=Param("str", choices=("paper", "default"), doc="FriendlyAvg's internal split"),
    sample_size=_POSITIVE,
    check_size=Param("bool", doc="refuse a declared n_public too small for the core"),
    counts=Param("object", special=(None,), doc="precomputed friend counts"),
    n_public=N_PUBLIC_INT,
    sample_rate=Param("float", limits.MIN_PROBABILITY, 1.0, special=(None,),
                      check=lambda v, name: _check_rate(v, name),
                      doc="public Poisson sampling rate of X"),
)
def friendly_mean(
    X: np.ndarray,
    *,
    radius: float | None = None,
    rho: float | None = None,
    epsilon: float | None = None,
    delta: float,
    r_min: float | None = None,
    r_max: float | None = None,
    beta: float = 0.05,
    split: str = "paper",
    sample_size: int | None = None,
    check_size: bool = True,
    counts: np.ndarray | None = None,
    n_public: int | None = None,
    sample_rate: float | None = None,
    rng: RNGLike = None,
) -> FriendlyMeanResult:
    """Private mean by FC_Avg (Sec. 5.1.1) or FC_Avg_UnknownDiam (Sec. 5.1.2).

    Known diameter (``radius`` given): ``C = FriendlyCore(D, dist_r, 0.1ρ, δ/2)`` then
    ``FriendlyAvg(C, 0.9ρ, δ/2, r)``: (ρ, δ)-zCDP (Thm 5.1). Unknown diameter (``radius=None``):
    ``r = FindDiam(D, 0.1ρ, β/2, r_min, r_max, 1.5)`` then FC_Avg with 0.9ρ (Thm 5.2).

    Parameters
    ----------
    X : (n, d) array
    radius : float, optional
        The diameter-like r of the ``dist_r`` predicate (most pairs of points within r). Public.
    rho / epsilon : float
        Exactly one. With ``epsilon`` the mechanism runs in zCDP with the ρ that converts, with
        δ/2 spent on the conversion, to (ε, δ)-DP (the paper's zCDP paradigm is the practical one,
        Sec. 4.5); the result then carries ``ApproxDP(ε, δ)``.
    delta : float
        Total δ in (0, 1).
    r_min, r_max : float
        Public bounds for the diameter search (unknown diameter only).
    beta : float
        Confidence parameter of FindDiam (utility only).
    split : {"paper", "default"}
        FriendlyAvg's internal split: ``"paper"`` = footnote 4 (the paper's experiments, with n the
        released FriendlyCore ``n̂``), ``"default"`` = 0.1 / 0.9 as in the algorithm box.
    sample_size : int, optional
        Sampled friend counting (App. B, see :func:`friendly_core`).
    check_size : bool
        Refuse (``ValueError``) when the declared ``n_public`` is too small for the core to
        survive; see :func:`friendly_core`. Never reads the true n: without ``n_public`` a data
        set too small runs and returns ⊥ (``failed=True``, :data:`FAILED_MESSAGE`).
    n_public : int, optional
        The declared (public) number of rows.
    sample_rate : float in (0, 1], optional
        ``X`` is a Poisson sample of the data at this public rate
        (:func:`~dpcore.mechanisms.friendlycore.sampling.poisson_rows`). With ``epsilon``: FC_Avg
        runs at the (ε_in, δ_in) whose amplification is (ε, δ) (:func:`.sampling.inner_budget`), so
        the result's ``privacy_`` is the requested (ε, δ) for the *data*, not the sample.
    counts : array, optional
        Precomputed ``friend_counts(X, radius)`` (known diameter, exact counting only).
    """
    X = check_points(X)
    if (rho is None) == (epsilon is None):
        raise ValueError("give exactly one of rho (zCDP) or epsilon ((epsilon, delta)-DP)")
    validate_params(friendly_mean._parameter_constraints, {
        "radius": radius, "rho": rho, "epsilon": epsilon, "delta": delta, "r_min": r_min,
        "r_max": r_max, "beta": beta, "split": split, "sample_size": sample_size,
        "check_size": check_size, "counts": counts, "n_public": n_public,
        "sample_rate": sample_rate})
    gen = as_generator(rng)
    rate = 1.0 if sample_rate is None else float(sample_rate)
    if not 0 < rate <= 1:
        raise ValueError(f"sample_rate must be in (0, 1], got {sample_rate!r}")
    if rate < 1.0:
        if epsilon is None:
            raise ValueError("sample_rate needs an epsilon target (amplification is in (ε, δ))")
        from .sampling import inner_budget

        asked = ApproxDP(epsilon, delta)
        epsilon, delta = inner_budget(epsilon, delta, rate)
    if epsilon is not None:
        z_delta = delta / 2.0
        total_rho = rho_for_epsilon(epsilon, delta / 2.0)
        delivered: Guarantee = ApproxDP(epsilon, delta)
    else:
        z_delta = delta
        total_rho = float(rho)
        delivered = ZCDP(total_rho, delta)
    budget: list = []
    searched = radius is None
    if searched:
        if r_min is None or r_max is None:
            raise ValueError(
                "without radius, give public bounds r_min and r_max for the private diameter "
                "search (e.g. r_min=1e-3, r_max=1e3)"
            )
        rho_find = 0.1 * total_rho
        radius = find_diam(
            X, rho=rho_find, beta=beta / 2.0, r_min=r_min, r_max=r_max, base=1.5, rng=gen
        )
        budget.append(("FindDiam", ZCDP(rho_find)))
        avg_rho = total_rho - rho_find
    else:
        radius = check_positive("radius", radius)
        avg_rho = total_rho
    if searched and counts is not None:
        raise ValueError("precomputed counts need a known radius")
    core_rho, fa_rho = 0.1 * avg_rho, 0.9 * avg_rho
    core = friendly_core(
        X, radius, paradigm="zcdp", rho=core_rho, delta=z_delta / 2.0,
        sample_size=sample_size, check_size=check_size, counts=counts, n_public=n_public, rng=gen,
    )
    budget.append(("FriendlyCore", ZCDP(core_rho, z_delta / 2.0)))
    rho1 = footnote_rho1(fa_rho, z_delta / 2.0, core.n_hat or 0.0) if split == "paper" else None
    avg = friendly_avg(
        X[core.mask], rho=fa_rho, delta=z_delta / 2.0, radius=radius, rho1=rho1, rng=gen
    )
    budget.append(("FriendlyAvg", ZCDP(fa_rho, z_delta / 2.0)))
    if epsilon is not None:
        budget.append(("zCDP → (ε, δ) conversion", ApproxDP(0.0, delta / 2.0)))
    if rate < 1.0:
        budget.append((f"Poisson subsampling at q = {rate:g} (amplification)", asked))
        delivered = asked
    failed = avg.estimate is None
    reason = FAILED_MESSAGE if failed else ""  # fixed text: core sizes are data-dependent
    return FriendlyMeanResult(
        avg.estimate, core.mask, delivered, float(radius), searched, core, avg.n_hat,
        avg.noise_sd, failed, reason, budget,
    )
