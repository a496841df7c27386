"""FriendlyCore's filters and paradigms (Tsfadia et al. 2022, Sec. 4; spec ``friendlycore.md`` §1).

* :class:`BasicFilter` (Sec. 4.1) — ``p_i = clip(z_i / ((1/2 − α) n), 0, 1)``, ``v_i ~ Bern(p_i)``;
  no privacy parameter of its own; used by the (ε, δ)-DP paradigm (Thm 4.2).
* :class:`zCDPFilter` (Sec. 4.2) — noisy scores against a noisy over-estimate ``n̂`` of n; it is
  itself (ρ, δ)-zCDP in the sense of Lemma 4.2 and is used by the zCDP paradigm (Thm 4.1).
* :func:`friendly_core` — the filter applied to the ``dist_r`` predicate on points, exact or with a
  sampled reference set (App. B, in the proof-valid form described there).
* :func:`zcdp_paradigm_guarantee` (Thm 4.1) and :func:`dp_paradigm_guarantee` (Thm 4.2): the
  end-to-end guarantee of ``A(core)`` for an f-friendly downstream algorithm ``A``.

Scores are ``z_i = w_i − m/2`` where ``w_i`` counts friends (self included) among a reference set
of size ``m``; with exact counting the reference set is the whole data set (``m = n``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy import special

from dpcore.core.rng import RNGLike, as_generator
from dpcore.privacy.guarantees import ZCDP, ApproxDP, PureDP, compose, privacy_alias
from dpcore.privacy.noise import (
    add_gaussian,
    gaussian_sigma_zcdp,
    public_randomness,
    selection_sampler,
)

from .counting import count_within, friend_counts, reference_fraction
from .validation import check_points, check_positive, check_privacy

__all__ = [
    "BasicFilter",
    "FilterResult",
    "FriendlyCoreResult",
    "dp_paradigm_guarantee",
    "filter_with_reference",
    "friendly_core",
    "noisy_size_upper",
    "required_size",
    "zCDPFilter",
    "zcdp_paradigm_guarantee",
]


@dataclass(frozen=True)
class FilterResult:
    """Output of a filter.

    Attributes
    ----------
    mask : (n,) bool — ``v``; the core is ``D[mask]``.
    scores : (n,) float — ``z_i = w_i − m/2``.
    probabilities : (n,) float — ``Pr[v_i = 1]``: BasicFilter's ``p_i``; for zCDPFilter the
        probability given the released ``n̂`` (``Φ((z_i − τ)/σ)``).
    privacy_ : ZCDP or None — the filter's own guarantee (Lemma 4.2); ``None`` for BasicFilter,
        whose privacy only exists through Thm 4.2. ``guarantee`` is its deprecated name.
    n_hat, threshold, noise_sd : zCDPFilter's ``n̂``, ``τ`` and score noise σ (None for Basic).
    """

    mask: np.ndarray
    scores: np.ndarray
    probabilities: np.ndarray
    privacy_: ZCDP | None = None
    n_hat: float | None = None
    threshold: float | None = None
    noise_sd: float | None = None

    guarantee = privacy_alias("guarantee")

    @property
    def size(self) -> int:
        """Number of elements kept."""
        return int(self.mask.sum())


def _scores(counts: np.ndarray, reference_size: int | None) -> tuple[np.ndarray, int]:
    counts = np.asarray(counts)
    if counts.ndim != 1:
        raise ValueError(f"counts must be a 1-D array, got shape {counts.shape}")
    m = counts.size if reference_size is None else int(reference_size)
    return counts.astype(float) - m / 2.0, m


@selection_sampler("BasicFilter's selection v_i ~ Bern(p_i): one bit per element")
def _bernoulli_mask(p: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    return gen.random(p.size) < p


@public_randomness("the reference set of sampled counting: a Poisson sample of the rows (App. B), "
                   "no noise term")
def _reference_mask(n: int, q: float, gen: np.random.Generator) -> np.ndarray:
    return gen.random(n) < q


@dataclass(frozen=True)
class BasicFilter:
    """BasicFilter(D, f, α) of Sec. 4.1 (Algorithm "BasicFilter").

    ``p_i = 0`` if ``z_i ≤ 0``, ``1`` if ``z_i ≥ (1/2 − α) n``, linear in between;
    ``v_i ~ Bern(p_i)``.
    A (f, α)-complete product filter with ``‖p_{−j} − p'‖₁ ≤ 1/(1 − 2α)`` (Lemma 4.1).

    Parameters
    ----------
    alpha : float
        ``0 ≤ α < 1/2``.
    """

    alpha: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.alpha < 0.5:
            raise ValueError(f"alpha must be in [0, 1/2), got {self.alpha!r}")

    def probabilities(self, counts: np.ndarray) -> np.ndarray:
        """``p_i`` from exact friend counts (reference set = the data)."""
        z, n = _scores(counts, None)
        if n == 0:
            return np.zeros(0)
        return np.clip(z / ((0.5 - self.alpha) * n), 0.0, 1.0)

    def apply(self, counts: np.ndarray, *, rng: RNGLike = None) -> FilterResult:
        """Sample ``v ~ Bern(p)`` from exact friend counts."""
        z, _ = _scores(counts, None)
        p = self.probabilities(counts)
        v = _bernoulli_mask(p, as_generator(rng))
        return FilterResult(mask=v, scores=z, probabilities=p)


def noisy_size_upper(n: int, rho1: float, delta: float, *, rng: RNGLike = None) -> float:
    """``n̂ = n + √(ln(2/δ)/ρ₁) + N(0, 1/(2ρ₁))`` (zCDPFilter step ii): ρ₁-zCDP, ≥ n w.p. 1 − δ/2."""
    sigma = gaussian_sigma_zcdp(1.0, rho1)
    shifted = n + math.sqrt(math.log(2.0 / delta) / rho1)
    return float(add_gaussian(shifted, sigma, sensitivity=1.0, rng=rng))


def _threshold(n_hat: float, rho2: float, delta: float) -> tuple[float, float]:
    """(τ, σ) of zCDPFilter step iii: σ² = n̂/(8ρ₂), τ = √(n̂ ln(2n̂/δ)/(4ρ₂)) + 1/2."""
    sigma = gaussian_sigma_zcdp(0.5, rho2 / n_hat)
    return math.sqrt(n_hat * math.log(2.0 * n_hat / delta) / (4.0 * rho2)) + 0.5, sigma


@dataclass(frozen=True)
class zCDPFilter:
    """zCDPFilter(D, f, ρ, δ) of Sec. 4.2 (ρ₁ = 0.1ρ for n̂, ρ₂ = 0.9ρ for the scores).

    ``v_i = 1{ z_i + N(0, n̂/(8ρ₂)) ≥ √(n̂ ln(2n̂/δ)/(4ρ₂)) + 1/2 }``. A product filter that is
    (ρ, δ)-indistinguishable on neighbours in the sense of Lemma 4.2.

    If ``n = 0``, ``n̂ ≤ 0`` or ``2n̂/δ ≤ 1`` the output is empty (spec §1.3.2, INFERRED; a function
    of ``n̂`` only, so private).
    """

    rho: float
    delta: float

    def __post_init__(self) -> None:
        check_privacy(rho=self.rho, delta=self.delta)

    @property
    def rho1(self) -> float:
        return 0.1 * self.rho

    @property
    def rho2(self) -> float:
        return 0.9 * self.rho

    @property
    def guarantee(self) -> ZCDP:
        return ZCDP(self.rho, self.delta)

    def apply(
        self,
        counts: np.ndarray,
        *,
        reference_size: int | None = None,
        n_hat: float | None = None,
        rng: RNGLike = None,
    ) -> FilterResult:
        """Run the filter on friend counts.

        Parameters
        ----------
        counts : (n,) array
            Friends of each element among a reference set (self included when it belongs to it).
        reference_size : int, optional
            Size ``m`` of the reference set (default ``n``: exact counting).
        n_hat : float, optional
            A released ``n̂`` from :func:`noisy_size_upper` with ``ρ₁``, if already drawn.
        """
        gen = as_generator(rng)
        z, _ = _scores(counts, reference_size)
        n = z.size
        if n_hat is None:
            n_hat = noisy_size_upper(n, self.rho1, self.delta, rng=gen) if n else 0.0
        if n == 0 or n_hat <= 0 or 2.0 * n_hat / self.delta <= 1.0:
            empty = np.zeros(n, dtype=bool)
            return FilterResult(empty, z, np.zeros(n), self.guarantee, float(n_hat))
        tau, sigma = _threshold(n_hat, self.rho2, self.delta)
        noisy = add_gaussian(z, sigma, sensitivity=0.5 * math.sqrt(n), rng=gen)
        prob = special.ndtr((z - tau) / sigma)
        return FilterResult(noisy >= tau, z, prob, self.guarantee, float(n_hat), tau, sigma)


#: A sampled reference set aims at this many times the filter's threshold τ(n̂): a complete set
#: then scores |S|/2 ≈ 2τ, and a set of which a share p ≥ 3/4 are mutual friends still clears τ.
REFERENCE_FACTOR = 4.0


def filter_with_reference(
    count: Callable[[np.ndarray | None], np.ndarray], size: int, rho: float, delta: float, *,
    rng: RNGLike = None,
) -> tuple[FilterResult, np.ndarray | None]:
    """zCDPFilter over ``size`` elements, counting friends among a Poisson reference set when
    all ``size`` would be more than the threshold needs (sub-quadratic counting, App. B).

    ``count(reference)`` returns every element's friends among the reference elements (a
    boolean mask; ``None`` = all). The filter's size estimate n̂ is released first (as
    :meth:`zCDPFilter.apply` would), then the reference rate ``q = min(1, 4 τ(n̂) / n̂)`` — a
    function of n̂ and the public (ρ, δ) only, so post-processing. With ``q = 1`` (the common
    case: ``size`` within a few times the filter's need) nothing more is drawn and the result is
    exactly the exact-count filter's for the same seed; with ``q < 1`` each element joins the
    reference set independently with probability q, and the result **differs** from the exact
    count's for the same seed.

    Privacy: as in :func:`friendly_core`'s Notes. The membership coins are public randomness
    independent of the data; conditioned on them the scores ``z_i = #{friends in S} − |S|/2``
    move by ≤ 1/2 when one element is added or removed (≤ 1 when one is replaced, the case of
    FC_Clustering's tuples, charged there 4×), so the noise ``N(0, n̂/(8ρ₂))`` costs ρ₂ as in
    Lemma 4.2; a kept element has more than ``|S|/2 + 1/2`` friends in S w.h.p., so any two kept
    elements share a friend outside the changed one (friendliness). Work: O(size · m) pairs with
    ``m ≈ 4τ ∝ √(n̂ log(n̂/δ)/ρ)`` instead of O(size²).
    """
    filt = zCDPFilter(rho, delta)
    gen = as_generator(rng)
    n_hat = noisy_size_upper(size, filt.rho1, delta, rng=gen) if size else 0.0
    reference = None
    if size and n_hat > 0 and 2.0 * n_hat / delta > 1.0:
        tau, _ = _threshold(n_hat, filt.rho2, delta)
        q = reference_fraction(REFERENCE_FACTOR * tau, n_hat)
        if q < 1.0:
            reference = _reference_mask(size, q, gen)
    counts = count(reference)
    m = None if reference is None else int(reference.sum())
    return filt.apply(counts, reference_size=m, n_hat=n_hat, rng=gen), reference


def required_size(
    rho: float, delta: float, *, alpha: float = 0.0, n: int | None = None
) -> int:
    """Smallest size at which zCDPFilter keeps a point with ``(1 − α)``-share friends w.p. ≥ 1/2.

    Without ``n``: the smallest data-set size n (exact counting). With ``n``: the smallest
    reference-set size m for sampled counting on n points (the noise and threshold scale with n).
    Evaluated at the expected ``n̂``; below it FriendlyCore returns an (almost) empty core even on
    a perfectly friendly data set. A practical bound, far below Lemma 4.2's sufficient n.
    """
    check_privacy(rho=rho, delta=delta)
    rho1, rho2 = 0.1 * rho, 0.9 * rho
    shift = math.sqrt(math.log(2.0 / delta) / rho1)

    def ok(m: int) -> bool:
        tau, _ = _threshold((m if n is None else n) + shift, rho2, delta)
        return (0.5 - alpha) * m >= tau

    hi = 1
    while not ok(hi):
        hi *= 2
        if n is not None and hi > 4 * n:
            return hi  # unreachable with this n: any m ≤ n fails
    lo = hi // 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


@dataclass(frozen=True)
class FriendlyCoreResult:
    """Output of :func:`friendly_core`.

    Attributes
    ----------
    mask : (n,) bool — the core ``C = X[mask]``.
    scores : (n,) float — ``z_i`` (``w_i − m/2``).
    probabilities : (n,) float — per-point inclusion probabilities (see :class:`FilterResult`).
    counts : (n,) int64 — friend counts among the reference set.
    privacy_ : ZCDP or None — the filter's own (ρ, δ) (zCDP paradigm); ``None`` for the DP
        paradigm, whose end-to-end guarantee is :func:`dp_paradigm_guarantee`. ``guarantee``
        is its deprecated name.
    paradigm : "zcdp" or "dp"
    radius : float
    reference_size : int — ``m`` (``n`` when counting exactly).
    n_hat, threshold, noise_sd : see :class:`FilterResult`.
    """

    mask: np.ndarray
    scores: np.ndarray
    probabilities: np.ndarray
    counts: np.ndarray
    privacy_: ZCDP | None
    paradigm: str
    radius: float
    reference_size: int
    n_hat: float | None = None
    threshold: float | None = None
    noise_sd: float | None = None
    alpha: float = 0.0
    extra: dict = field(default_factory=dict)

    guarantee = privacy_alias("guarantee")

    @property
    def size(self) -> int:
        return int(self.mask.sum())

    def end_to_end(self, downstream: ZCDP | ApproxDP | PureDP) -> ZCDP | ApproxDP:
        """Guarantee of ``A(core)`` for an f-friendly ``A`` with guarantee ``downstream``."""
        if self.paradigm == "zcdp":
            assert self.privacy_ is not None
            return zcdp_paradigm_guarantee(self.privacy_, downstream)
        return dp_paradigm_guarantee(downstream, alpha=self.alpha)


def zcdp_paradigm_guarantee(core: ZCDP, downstream: ZCDP | PureDP) -> ZCDP:
    """Theorem 4.1: FriendlyCore (ρ, δ) then an f-friendly (ρ', δ')-zCDP A is (ρ+ρ', δ+δ')-zCDP.

    A pure ε-DP downstream counts as ε²/2-zCDP.
    """
    if isinstance(downstream, PureDP):
        downstream = downstream.to_zcdp()
    if not isinstance(core, ZCDP) or not isinstance(downstream, ZCDP):
        raise TypeError(f"Theorem 4.1 composes zCDP guarantees, got {core} and {downstream}")
    return compose(core, downstream)


def dp_paradigm_guarantee(downstream: ApproxDP | PureDP, *, alpha: float = 0.0) -> ApproxDP:
    """Theorem 4.2: ``A(FriendlyCoreDP(D, f, α))`` for an f-friendly (ε, δ)-DP A is
    ``(g (e^ε − 1), g δ e^{ε + g (e^ε − 1)})``-DP with ``g = 1/(1 − 2α) + 1``.
    """
    if not 0 <= alpha < 0.5:
        raise ValueError(f"alpha must be in [0, 1/2), got {alpha!r}")
    if isinstance(downstream, PureDP):
        downstream = downstream.to_approx_dp()
    if not isinstance(downstream, ApproxDP):
        raise TypeError(f"Theorem 4.2 needs an (ε, δ)-DP downstream guarantee, got {downstream}")
    g = 1.0 / (1.0 - 2.0 * alpha) + 1.0
    eps = g * math.expm1(downstream.epsilon)
    # log space: e^{ε + g(e^ε − 1)} overflows a float from ε ≈ 6 on (the bound is then vacuous)
    log_delta = (math.log(g * downstream.delta) + downstream.epsilon + eps
                 if downstream.delta > 0 else -math.inf)
    return ApproxDP(eps, math.exp(min(log_delta, math.log1p(-1e-16))))


def friendly_core(
    X: np.ndarray,
    radius: float,
    *,
    paradigm: str = "zcdp",
    rho: float | None = None,
    delta: float | None = None,
    alpha: float = 0.0,
    sample_size: int | None = None,
    check_size: bool = True,
    counts: np.ndarray | None = None,
    n_public: int | None = None,
    rng: RNGLike = None,
) -> FriendlyCoreResult:
    """FriendlyCore with the ``dist_r`` predicate ``‖x − y‖ ≤ r`` (Sec. 4.3 / 4.4).

    Parameters
    ----------
    X : (n, d) array of finite values
    radius : float
        ``r > 0``.
    paradigm : {"zcdp", "dp"}
        ``"zcdp"``: :class:`zCDPFilter` with (``rho``, ``delta``); the core is (ρ, δ)-zCDP in the
        paradigm's sense (Thm 4.1). ``"dp"``: :class:`BasicFilter` with ``alpha``; the core has no
        guarantee of its own, compose with :func:`dp_paradigm_guarantee` (Thm 4.2).
    rho, delta : float
        zCDP paradigm only; ``delta`` is the total δ (including the sampling δ below).
    alpha : float
        DP paradigm: BasicFilter's α in [0, 1/2).
    sample_size : int, optional
        zCDP paradigm only: count friends among a random reference set of about this many points
        instead of all n (App. B), O(n · m · d) instead of O(n² d). See Notes.
    check_size : bool
        Raise ``ValueError`` when the *declared* size ``n_public`` (or the reference size) is below
        :func:`required_size`, i.e. when even a perfectly friendly data set of that size would
        give an (almost) empty core. Only public inputs decide a refusal (issue 12, defect 4: a
        refusal that reads the true n flips between neighbours, an ε = ∞ event); without
        ``n_public`` nothing is refused and a too-small data set simply yields an empty core.
    n_public : int, optional
        The declared (public) number of rows, used only by ``check_size``.
    counts : (n,) int array, optional
        Precomputed exact friend counts ``friend_counts(X, radius)`` (they are a deterministic
        function of the data), to re-draw the core without recounting. Exact counting only.
    rng : None, int or Generator

    Notes
    -----
    *Sampling (App. B), proof-valid reading.* The paper estimates ``w_i`` by ``(n/m)`` times the
    friends among one m-subset and shifts the score by ``ξ n``, claiming the same privacy "up to an
    additional δ". For zCDPFilter that does not go through: one removed sample point moves every
    estimate by ``n/m``, so the scores lose their sensitivity 1/2 on which the Gaussian-noise proof
    rests (and BasicFilter loses its ``‖p − p'‖₁`` bound). We therefore draw the reference set by
    independent Bernoulli(q) membership, ``q = min(1, m/n̂)`` (``n̂`` is the filter's released size,
    so q is post-processing), and use the raw count among the reference set ``S``:
    ``z_i = #{y ∈ S : ‖x_i − y‖ ≤ r} − |S|/2``. Removing a point changes every other score by at
    most 1/2 (if it was in S) or not at all, so the noise ``N(0, n̂/(8ρ₂))`` still costs ρ₂ over
    the n scores, and a kept point has more than ``|S|/2`` friends in S, so two kept points share
    a friend (friendliness, as in Lemma 4.2). The reference set must be large enough for a
    complete data set to clear the threshold (``|S| ≳ 2τ``, τ ∝ √(n̂ log(n̂/δ)/ρ)), so the cost is
    O(n^{3/2} √log · d) rather than the paper's O(n log n). We run the filter with δ/2 and charge
    the remaining δ/2 as App. B's "additional δ" (conservative: the proof above does not need it).
    Sampling is refused for the DP paradigm, whose ℓ₁-stability it would break.
    """
    X = check_points(X)
    radius = check_positive("radius", radius)
    n = X.shape[0]
    gen = as_generator(rng)
    if paradigm == "dp":
        if sample_size is not None:
            raise ValueError(
                "sample_size (App. B sampling) is only supported with paradigm='zcdp': with "
                "BasicFilter a sampled reference set breaks the l1-stability of Lemma 4.1"
            )
        filt = BasicFilter(alpha)
        counts = _exact_counts(X, radius, counts)
        res = filt.apply(counts, rng=gen)
        return FriendlyCoreResult(
            res.mask, res.scores, res.probabilities, counts, None, "dp", radius, n, alpha=alpha
        )
    if paradigm != "zcdp":
        raise ValueError(f"paradigm must be 'zcdp' or 'dp', got {paradigm!r}")
    if rho is None or delta is None:
        raise ValueError("the zCDP paradigm needs rho and delta (e.g. rho=0.1, delta=1e-9)")
    check_privacy(rho=rho, delta=delta)
    filt_delta = delta if sample_size is None else delta / 2.0
    filt = zCDPFilter(rho, filt_delta)
    if check_size and n_public is not None:
        _check_enough(int(n_public), rho, filt_delta, sample_size)
    n_hat = noisy_size_upper(n, filt.rho1, filt_delta, rng=gen) if n else 0.0
    if sample_size is None:
        counts = _exact_counts(X, radius, counts)
        m = n
        extra: dict = {}
    else:
        if counts is not None:
            raise ValueError("precomputed counts are only for exact counting (sample_size=None)")
        q = reference_fraction(check_positive("sample_size", sample_size), n_hat)
        in_ref = _reference_mask(n, q, gen)
        counts = count_within(X, X[in_ref], radius)
        m = int(in_ref.sum())
        extra = {"reference_mask": in_ref, "reference_rate": q}
    res = filt.apply(counts, reference_size=m, n_hat=n_hat, rng=gen)
    guarantee = ZCDP(rho, delta)
    return FriendlyCoreResult(
        res.mask, res.scores, res.probabilities, counts, guarantee, "zcdp", radius, m,
        res.n_hat, res.threshold, res.noise_sd, extra=extra,
    )


def _exact_counts(X: np.ndarray, radius: float, counts: np.ndarray | None) -> np.ndarray:
    if counts is None:
        return friend_counts(X, radius)
    counts = np.asarray(counts)
    if counts.shape != (X.shape[0],):
        raise ValueError(f"counts must have shape ({X.shape[0]},), got {counts.shape}")
    return counts


def _check_enough(n: int, rho: float, delta: float, sample_size: int | None = None) -> None:
    if sample_size is None:
        need = required_size(rho, delta)
        if n < need:
            raise ValueError(
                f"the declared n = {n} is too small for FriendlyCore with rho = {rho:g}, delta = "
                f"{delta:g}: even a perfectly friendly data set would lose most points. Need "
                f"n >= {need} (or a larger rho / delta); pass check_size=False to run anyway."
            )
        return
    need = required_size(rho, delta, n=n)
    if need > n:
        raise ValueError(
            f"n = {n} is too small for sampled FriendlyCore with rho = {rho:g}, delta = "
            f"{delta:g}: the reference set would need more points than the data has; use exact "
            "counting (sample_size=None) or a larger rho / delta."
        )
    if sample_size < need:
        raise ValueError(
            f"sample_size = {sample_size} is too small for n = {n}, rho = {rho:g}, delta = "
            f"{delta:g}: a perfectly friendly data set would lose most points. Need "
            f"sample_size >= {need}."
        )
