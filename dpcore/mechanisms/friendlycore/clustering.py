"""FriendlyCore k-means: FC_Clustering (Tsfadia et al. 2022, Sec. 5.2; spec ``friendlycore.md`` §3).

Pipeline (sample and aggregate): every point to an independent uniform part (t parts) → a
non-private oracle (k-means++ or the PCA oracle of Sec. 6.2) gives one unordered k-tuple of
centres per part → FriendlyCore over the tuples with ``match_{1/7}`` → FriendlyReorder →
FC_AvgOrdTup (per-position FindDiam, a second FriendlyCore with ``dist_{r_1..r_k}``,
FriendlyOrdTupAvg) → NoisyLloydStep on the whole data.

Privacy under add/remove neighbours (issue 12, defect 2)
--------------------------------------------------------
The paper's Thm 5.3/5.4 argue "a data point influences one tuple only". With the earlier
shuffle-and-cut into ``⌊n/t⌋``-point parts that was false (adding a point shifts every later part,
and ``⌊n/t⌋`` itself changes), and even with one part affected the tuple set changes by a
*replacement* (t stays t; tuple j becomes another tuple), which the filters' add/remove proofs do
not cover. Here:

* **Parts.** Each point gets a part label drawn i.i.d. uniform on {0..t−1}, independently of
  the data (:func:`assign_parts`). Coupling the labels of the common points, D and D ∪ {x} have
  identical parts except the one x falls into: exactly one tuple is replaced, the others are
  equal (the oracles are per part: :mod:`.oracles` freezes each part's Lloyd run at its own
  convergence, so a batch never couples parts). No n-dependent cut, no refusal on n: a part with
  fewer than k points yields a junk tuple drawn uniformly in the public ball (a function of that
  part only), and a run whose cores end empty returns ⊥ (``failed_``).
* **Charge.** Under a replacement of tuple j every score ``z_i = w_i − m/2`` of the other tuples
  moves by ≤ 1 (one friend lost, one gained; m unchanged) instead of ≤ 1/2, so the Gaussian score
  noise of the tuple FriendlyCore costs **4×** its nominal ρ₂ (ρ = Δ²/2σ²); its size estimate n̂
  has sensitivity 0 (m = t is public) and keeps its 1× charge. Downstream of the core, the
  coupled cores of D and D′ differ by one element added, removed *or replaced*, so every later
  step must hold for a replacement too: the ordered-tuple FriendlyCore's scores again move by
  ≤ 1 (**4×** on its ρ₂; its n̂ moves by ≤ 1, 1×); CheckDiam's average ``a = Σ s_i / c`` moves by
  ≤ 2(c − 1)/c < 2 under a replacement (c fixed), within the sensitivity 2 it is calibrated to
  (1×); FriendlyOrdTupAvg's mean moves by ≤ 2r_j/c under a replacement of friendly tuples,
  within its 2r_j/n̂ noise (n̂ ≤ c), and its size by ≤ 1 (1×). The δ terms are the same
  high-probability events and are unchanged. NoisyLloydStep runs on the points (add/remove): 1×.
  This reproduces the issue's estimate (claimed (1, 1e-6) with the practical split is
  ≈ (1.72, 1e-6) under the old charge). :func:`replacement_multiplier` gives the factor on a split;
  ``fit`` shrinks the nominal budgets by it so that the **charged** ρ equals the requested ρ (or
  the ρ whose conversion is the requested ε). ``budget_`` lists the charged amounts.

Readings of the paper (spec §7) that keep the privacy proof valid:

* FriendlyOrdTupAvg uses ``n̂`` (not n) in ``σ_j = (2 r_j/n̂) √(k/(2ρ₂))`` (§7.1).
* Budget split (§7.4): the formal split (ρ/4 for the tuple core, 0.0125ρ for the second core, …)
  cannot work at the paper's t = 200 and ρ = 1: the second FriendlyCore would get ρ = 0.0125, whose
  threshold (≈ 440) exceeds the largest possible score (≈ 100), so the core is always empty.
  ``budget_split="practical"`` (default) gives the two FriendlyCores most of the budget
  (0.35 each, with 0.1 for FindDiam, 0.1 for FriendlyOrdTupAvg and 0.1 for the Lloyd step);
  ``"paper"`` is the formal split. δ is split as in the paper (δ/4, δ/8, δ/8, δ/2). Any split is
  valid by composition.
* FindDiam at t ≈ 200 tuples is coarse: CheckDiam passes once the average friend count clears
  ``t − √(4 ln(1/β)/ρ)``, and with ρ split over k positions and log₂ t probes that slack is a large
  fraction of t, so the radius found covers only about half of the pairs. The ordered predicate
  is a product over the k positions, so such radii leave the second core empty. We multiply each
  radius by a public ``radius_inflation`` (default 4; post-processing, free). The noise of
  FriendlyOrdTupAvg grows by the same factor, which is negligible next to the Lloyd step.
* NoisyLloydStep (§7.5): points with ‖x‖ > Λ are dropped; a cluster whose FriendlyAvg returns ⊥
  keeps its input centre (post-processing).
* ``ord_X(Y)`` is undefined when the nearest-neighbour map is not a bijection (impossible on a
  match_{1/7}-friendly core, which the filter certifies w.h.p.); we then use the optimal
  assignment (Hungarian), which does not affect the privacy argument (§3.3).
* Failure (empty / tiny core, ⊥ from FriendlyOrdTupAvg) is reported in ``failed_`` and
  ``failure_reason_``. With ``fallback="lsh"`` (the paper's backup, Sec. 6.2: LSH_Clustering at
  ρ = 0.01 of 1) or ``"dplloyd"`` a declared share of ρ is reserved up front and the backup runs
  only on failure (:mod:`.fallback`); its ρ composes with FriendlyCore's in zCDP.

Work (issue 23.5)
-----------------
The two tuple cores count friends pair by pair in compiled loops (:mod:`.counting`), and among a
Poisson reference set when t is well above what the filter's threshold needs
(:func:`.filters.filter_with_reference`: O(t^{3/2}) instead of O(t²); the same seed then gives a
different core than exact counting). t is at most :data:`.planning.MAX_PARTS`;
:func:`.planning.kmeans_plan` picks t from public inputs (1.5 × the need), so at a fixed budget
a larger n only lengthens the per-part clustering, which is linear in n.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import ClassVar

import numpy as np
from scipy.optimize import linear_sum_assignment

from dpcore.core.errors import ParameterError
from dpcore.core.rng import RNGLike, as_generator
from dpcore.core.threads import single_threaded_blas
from dpcore.data import limits
from dpcore.data.base import DPClusterer, dense_matrix
from dpcore.data.geometry import nearest_center, row_norms, squared_distances
from dpcore.data.params import (
    DELTA_POSITIVE,
    EPSILON_FINITE,
    N_CLUSTERS,
    N_ITER,
    RADIUS_REQUIRED,
    RHO,
    SHARE,
    Param,
)
from dpcore.privacy.guarantees import ZCDP, ApproxDP, Guarantee, compose
from dpcore.privacy.noise import add_gaussian, gaussian_sigma_zcdp, public_randomness

from .averaging import find_diam, friendly_avg, noisy_size_lower
from .counting import match_counts, match_permutation, ordered_tuple_counts
from .fallback import FALLBACKS, run_fallback
from .filters import filter_with_reference
from .oracles import batched_kmeans, pca_oracle_batched, sklearn_oracle
from .planning import (
    BUDGET_SPLITS,
    DELTA_SHARES,
    FILTER_PARTS,
    MAX_PARTS,
    SIZE_SHARE,
    fc_budgets,
    parts_needed,
    replacement_multiplier,
    split_of,
    too_few_parts_message,
)
from .validation import check_points

__all__ = ["BUDGET_SPLITS", "FriendlyCoreKMeans", "assign_parts", "replacement_multiplier"]

FAILED_MESSAGE = (
    "FriendlyCore k-means returned ⊥: the friendly cores were empty (the oracle's tuples do not "
    "agree across parts: too few points per part, too small a budget, or no cluster structure)"
)
_FILTER_PARTS, _SIZE_SHARE, _DELTA_SHARES = FILTER_PARTS, SIZE_SHARE, DELTA_SHARES  # old names


@public_randomness("uniform part labels: split the rows into t parts independently of their "
                   "values")
def assign_parts(n: int, t: int, rng: np.random.Generator) -> np.ndarray:
    """I.i.d. uniform part labels in {0..t−1}, one per point, independent of the data values.

    With the labels of common points coupled, adding or removing one point changes one part only
    (the module docstring's add/remove argument); the stream is prefix-stable (the first n labels
    for n + 1 points are the labels for n points under the same seed).
    """
    return rng.integers(0, t, size=n)


@public_randomness("junk tuples of too-small parts, uniform in the public ball: independent of "
                   "the data")
def _uniform_in_ball(size: int, k: int, d: int, radius: float, gen: np.random.Generator):
    g = gen.standard_normal((size, k, d))
    g /= np.maximum(np.linalg.norm(g, axis=2, keepdims=True), 1e-300)
    return g * (radius * gen.random((size, k, 1)) ** (1.0 / d))

Oracle = Callable[[np.ndarray, int, np.random.Generator], np.ndarray]

# Built-in oracles work on all parts at once: (t, m, d) -> (t, k, d).
_BATCHED: dict[str, Callable[[np.ndarray, int, np.random.Generator], np.ndarray]] = {
    "kmeans++": batched_kmeans,
    "pca": pca_oracle_batched,
}
_PER_PART: dict[str, Oracle] = {"sklearn": sklearn_oracle}


@public_randomness("FriendlyReorder's random relabelling of the k positions: a permutation "
                   "independent of the data")
def _reorder(T: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """FriendlyReorder (Sec. 5.2.2): order every tuple like the first, then a random relabelling."""
    if T.shape[0] == 0:
        return T
    ref = T[0]
    out = np.empty_like(T)
    for i, Y in enumerate(T):
        pi = match_permutation(ref, Y)
        if pi is None:  # not friendly w.r.t. ref (off the high-probability event)
            _, pi = linear_sum_assignment(squared_distances(ref, Y))
        out[i] = Y[pi]
    return out[:, rng.permutation(T.shape[1])]


def _check_oracle(value, name: str):
    names = sorted([*_BATCHED, *_PER_PART])
    if not (callable(value) or (isinstance(value, str) and value in names)):
        raise ParameterError(name, f"{name} must be one of {names} or a callable, got "
                                   f"{value!r}"[:300])
    return value


def _check_split(value, name: str):
    if not (isinstance(value, Mapping) or (isinstance(value, str) and value in BUDGET_SPLITS)):
        raise ParameterError(name, f"{name} must be one of {sorted(BUDGET_SPLITS)} or a dict, "
                                   f"got {value!r}"[:300])
    return value  # a dict's keys and shares: FriendlyCoreKMeans._split


def _check_fallback(value, name: str):
    if value is not None and value not in FALLBACKS:
        raise ParameterError(name, f"{name} must be None, 'lsh' or 'dplloyd', got "
                                   f"{value!r}"[:300])
    return value


def _check_parts(value, name: str):
    """t bounds the counting work (t × reference pairs of k-tuples): a public cap, checked
    before any data is read (issue 23: t = 10⁷ on 1,000 rows ran for > 90 s)."""
    return limits.check_count(name, value, 1, MAX_PARTS, why=(
        ": FriendlyCore k-means' work grows with the number of parts, not of rows; "
        "dpcore.mechanisms.friendlycore.kmeans_plan(n, k, ...) gives a t that fits n"))


class FriendlyCoreKMeans(DPClusterer):
    """(ρ, δ)-zCDP k-means by FriendlyCore (FC_Clustering, Sec. 5.2.5).

    Parameters
    ----------
    n_clusters : int
        k.
    rho / epsilon : float
        Exactly one: total zCDP ρ, or a target (ε, δ)-DP (run in zCDP with the ρ that converts to
        ε spending δ/2 on the conversion).
    delta : float
        Total δ.
    radius : float
        Λ: public bound on ‖x‖ for the final noisy Lloyd step (points beyond it are dropped there);
        also ``r_max = 2Λ`` for the diameter search.
    t : int
        Number of disjoint parts / tuples (paper: 200), at most
        :data:`~dpcore.mechanisms.friendlycore.planning.MAX_PARTS`;
        :func:`~dpcore.mechanisms.friendlycore.planning.kmeans_plan` suggests one for a declared n.
    r_min : float
        Public lower bound on the per-centre spread across tuples (paper: 0.001 or 0.1).
    oracle : "kmeans++", "pca", "sklearn" or callable ``(X_part, k, rng) -> (k, d)``
        Non-private clustering run on every part: "kmeans++" = k-means++ with Lloyd, best of 10
        starts, batched over the parts (:mod:`.oracles`); "pca" = the PCA oracle of Fig. 7;
        "sklearn" = scikit-learn ``KMeans(n_init=10)`` part by part (slower, same algorithm).
    gamma : float
        The ``match_γ`` parameter (1/7).
    beta : float
        Confidence of the diameter search (utility only).
    budget_split : "practical", "paper" or dict
        Shares of ρ for ``tuple_core, find_diam, ordered_core, ordered_avg, lloyd`` (module doc).
    radius_inflation : float
        Public factor (≥ 1) applied to FindDiam's radii before the ordered-tuple FriendlyCore
        (post-processing; see module doc).
    fallback : None, "lsh" or "dplloyd"
        On failure run the backup on ``fallback_share`` of ρ, reserved up front (:mod:`.fallback`):
        "lsh" = LSH clustering [CK21], the paper's backup (Sec. 6.2); "dplloyd" =
        :class:`~dpcore.mechanisms.lloyd.estimator.DPLloyd`. ``budget_`` lists the reserved share.
    fallback_share : float
        In (0, 1); the paper uses 0.01.
    fallback_iter : int
        DPLloyd iterations (unused by "lsh").
    accounting : "add_remove" or "paper"
        ``"add_remove"`` (default): the nominal budgets are shrunk by
        :func:`replacement_multiplier` so that the charged total is the requested ρ / ε.
        ``"paper"``: the paper's nominal budgets (its noise levels, to reproduce its figures);
        ``privacy_`` then reports the true, larger, charge (ρ × multiplier; ε from it).
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k, d) array, or None if the run failed without fallback
    privacy_ : ZCDP or ApproxDP — the guarantee of the whole fit (fallback share included)
    failed_ : bool — FriendlyCore did not produce centres
    failure_reason_ : str
    used_fallback_ : bool
    part_labels_ : (n,) int — each point's part (i.i.d. uniform, :func:`assign_parts`)
    tuples_ : (t, k, d) — the oracle's unordered tuples, tuple j from part j
    tuple_scores_ : (t,) — zCDPFilter scores of the tuples (match counts − t/2)
    tuple_core_mask_ : (t,) bool — tuples kept by the first FriendlyCore
    tuple_reference_ : (t,) bool or None — the Poisson reference set of the tuple counts (None:
        exact counting among all t; :func:`.filters.filter_with_reference`)
    ordered_tuples_ : (c, k, d) — the kept tuples after FriendlyReorder
    tuple_radii_ : (k,) — the per-position radii from FindDiam
    ordered_core_mask_ : (c,) bool — ordered tuples kept by the second FriendlyCore
    center_averages_ : (k, d) — FC_AvgOrdTup's private per-centre averages (before the Lloyd step)
    budget_ : list of (step, guarantee)
    n_features_in_ : int
    """

    #: Every parameter's constraint (:mod:`dpcore.data.params`), read by ``fit`` and by every
    #: other consumer; ``radius`` (Λ) is the proof's public input.
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "n_clusters": N_CLUSTERS,
        "rho": RHO.also(None),
        "epsilon": EPSILON_FINITE.also(None),
        "delta": DELTA_POSITIVE,
        "radius": RADIUS_REQUIRED,
        "t": Param("int", 1, MAX_PARTS, check=_check_parts,
                   doc="number of parts / tuples (at most planning.MAX_PARTS)"),
        "r_min": Param("float", limits.MIN_RADIUS, limits.MAX_RADIUS,
                       doc="public lower bound on the per-centre spread"),
        "oracle": Param("str", choices=tuple(sorted([*_BATCHED, *_PER_PART])),
                        check=_check_oracle, doc="non-private clustering run on every part"),
        "gamma": Param("float", limits.MIN_PROBABILITY, 1.0, doc="γ of the match_γ predicate"),
        "beta": Param("float", limits.MIN_PROBABILITY, 1.0,
                      check=lambda v, name: limits.check_probability(v, name),
                      doc="confidence of the diameter search"),
        "budget_split": Param("str", choices=tuple(BUDGET_SPLITS), check=_check_split,
                              doc="shares of ρ per step"),
        "radius_inflation": Param("float", 1.0, limits.MAX_ABS_VALUE,
                                  doc="public factor on FindDiam's radii"),
        "fallback": Param("str", choices=FALLBACKS, special=(None,), check=_check_fallback,
                          doc="backup on a reserved share if FriendlyCore fails: 'lsh' (the "
                              "paper's) or 'dplloyd'"),
        "fallback_share": SHARE,
        "fallback_iter": N_ITER,
        "accounting": Param("str", choices=("add_remove", "paper"),
                            doc="charge for add/remove neighbours or the paper's nominal one"),
    }

    def __init__(
        self,
        n_clusters: int,
        *,
        rho: float | None = None,
        epsilon: float | None = None,
        delta: float = 1e-8,
        radius: float,
        t: int = 200,
        r_min: float = 1e-3,
        oracle: str | Oracle = "kmeans++",
        gamma: float = 1 / 7,
        beta: float = 0.05,
        budget_split: str | dict = "practical",
        radius_inflation: float = 4.0,
        fallback: str | None = None,
        fallback_share: float = 0.01,
        fallback_iter: int = 5,
        accounting: str = "add_remove",
        rng: RNGLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.rho = rho
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.t = t
        self.r_min = r_min
        self.oracle = oracle
        self.gamma = gamma
        self.beta = beta
        self.budget_split = budget_split
        self.radius_inflation = radius_inflation
        self.fallback = fallback
        self.fallback_share = fallback_share
        self.fallback_iter = fallback_iter
        self.accounting = accounting
        self.rng = rng

    # ------------------------------------------------------------------ checks
    def _split(self) -> dict[str, float]:
        return split_of(self.budget_split)

    def _check_params(self) -> tuple[float, float, float, float, Guarantee]:
        """Public checks only (k, t, budget, δ): nothing here reads the data."""
        p = self._validate_params()  # one declaration (_parameter_constraints) for every reader
        k, t = p["n_clusters"], p["t"]
        b = fc_budgets(rho=self.rho, epsilon=self.epsilon, delta=float(self.delta),
                       fallback_share=self.fallback_share if self.fallback else None,
                       budget_split=self.budget_split, accounting=self.accounting)
        need = parts_needed(b, self.budget_split)  # the page's advice asks the same function
        if t < need:
            raise ValueError(too_few_parts_message(t, need, k, b, float(self.delta)))
        return b.total, b.fc_rho, b.nominal, b.z_delta, b.delivered

    # ------------------------------------------------------------------ fit
    def fit(self, X: np.ndarray, y: object = None) -> FriendlyCoreKMeans:
        """Run FC_Clustering on ``X`` (n, d); sets the attributes listed in the class doc."""
        X = dense_matrix(X)
        if X.ndim != 2:  # check_points would read 1-D as n points in d = 1; an estimator doesn't
            raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}")
        X = check_points(X, min_rows=1)
        n, d = X.shape
        total, fc_rho, nominal, z_delta, delivered = self._check_params()
        k, t, lam = int(self.n_clusters), int(self.t), float(self.radius)
        gen = as_generator(self.rng)
        split = self._split()
        rho_of = {key: share * nominal for key, share in split.items()}
        delta_of = {key: share * z_delta for key, share in _DELTA_SHARES.items()}
        charged = dict(rho_of)
        for key in _FILTER_PARTS:
            charged[key] = (_SIZE_SHARE + 4.0 * (1.0 - _SIZE_SHARE)) * rho_of[key]

        self.budget_ = [
            ("tuple FriendlyCore (4× scores: replacement)",
             ZCDP(charged["tuple_core"], delta_of["tuple_core"])),
            ("FindDiam (k positions)", ZCDP(charged["find_diam"])),
            ("ordered-tuple FriendlyCore (4× scores)",
             ZCDP(charged["ordered_core"], delta_of["ordered_core"])),
            ("FriendlyOrdTupAvg", ZCDP(charged["ordered_avg"], delta_of["ordered_avg"])),
            ("NoisyLloydStep", ZCDP(charged["lloyd"], delta_of["lloyd"])),
        ]
        rho_fb = total - fc_rho
        if self.fallback:
            name = {"dplloyd": "DPLloyd", "lsh": "LSH clustering"}[self.fallback]
            self.budget_.append((f"fallback {name} (reserved)", ZCDP(rho_fb)))
        if self.epsilon is not None:
            self.budget_.append(("zCDP → (ε, δ) conversion", ApproxDP(0.0, self.delta / 2.0)))
        self.privacy_ = delivered
        self.failed_, self.failure_reason_, self.used_fallback_ = False, "", False
        self.n_features_in_ = d

        # 1-4: independent uniform parts, oracle on every part
        self.part_labels_ = assign_parts(n, t, gen)
        self.tuples_ = self._oracle_tuples(X, self.part_labels_, k, gen)

        # FC_kTupleClustering: FriendlyCore with match_γ, then FriendlyReorder
        # t is public: the reference rate is a function of the released n̂ only (filters doc)
        res, self.tuple_reference_ = filter_with_reference(
            lambda ref: match_counts(self.tuples_, self.gamma, reference=ref), t,
            rho_of["tuple_core"], delta_of["tuple_core"], rng=gen)
        self.tuple_scores_ = res.scores
        self.tuple_core_mask_ = res.mask
        self.tuple_core_n_hat_ = res.n_hat
        self.ordered_tuples_ = _reorder(self.tuples_[res.mask], gen)
        self.tuple_radii_ = None
        self.ordered_core_mask_ = np.zeros(self.ordered_tuples_.shape[0], dtype=bool)
        self.center_averages_ = None
        c = self.ordered_tuples_.shape[0]
        if c == 0:
            return self._fail(X, gen, rho_fb)

        # FC_AvgOrdTup: FindDiam per position, FriendlyCore with dist_{r_1..r_k}, averaging
        self.tuple_radii_ = self.radius_inflation * np.array([
            find_diam(self.ordered_tuples_[:, j], rho=rho_of["find_diam"] / k,
                      beta=self.beta / (2 * k), r_min=self.r_min, r_max=max(2 * lam, self.r_min),
                      base=1.5, rng=gen)
            for j in range(k)
        ])
        res2, _ = filter_with_reference(
            lambda ref: ordered_tuple_counts(self.ordered_tuples_, self.tuple_radii_,
                                             reference=ref), c,
            rho_of["ordered_core"], delta_of["ordered_core"], rng=gen)
        self.ordered_core_mask_ = res2.mask
        avg = self._ordered_avg(
            self.ordered_tuples_[res2.mask], rho_of["ordered_avg"], delta_of["ordered_avg"], gen
        )
        if avg is None:
            return self._fail(X, gen, rho_fb)
        self.center_averages_ = avg

        # NoisyLloydStep on the whole data
        self.cluster_centers_ = self._noisy_lloyd(X, avg, rho_of["lloyd"], delta_of["lloyd"], gen)
        return self

    def _ordered_avg(
        self, C: np.ndarray, rho: float, delta: float, gen: np.random.Generator
    ) -> np.ndarray | None:
        """FriendlyOrdTupAvg (Sec. 5.2.3) with n̂ in σ_j (spec §7.1)."""
        n_hat = noisy_size_lower(C.shape[0], 0.1 * rho, delta, rng=gen)
        if C.shape[0] == 0 or n_hat <= 0:
            return None
        k = C.shape[1]
        out = C.mean(axis=0)
        for j in range(k):
            sigma = gaussian_sigma_zcdp(2.0 * self.tuple_radii_[j] / n_hat, 0.9 * rho / k)
            sens_j = 2.0 * self.tuple_radii_[j] / n_hat
            out[j] = add_gaussian(out[j], sigma, sensitivity=sens_j, rng=gen)
        return out

    def _noisy_lloyd(
        self, X: np.ndarray, Y: np.ndarray, rho: float, delta: float, gen: np.random.Generator
    ) -> np.ndarray:
        """NoisyLloydStep (Sec. 5.2.5): FriendlyAvg with r = 2Λ on each cluster (parallel)."""
        lam = float(self.radius)
        Xin = X[row_norms(X) <= lam]
        centers = Y.copy()
        if Xin.shape[0] == 0:
            return centers
        labels, _ = nearest_center(Xin, Y)
        for j in range(Y.shape[0]):
            part = Xin[labels == j]
            if part.shape[0] == 0:
                continue
            est = friendly_avg(part, rho=rho, delta=delta, radius=2 * lam, rng=gen).estimate
            if est is not None:
                centers[j] = est
        return centers

    def _oracle_tuples(
        self, X: np.ndarray, labels: np.ndarray, k: int, gen: np.random.Generator
    ) -> np.ndarray:
        """One k-tuple per part; each a function of its own part (and fresh randomness) only.

        Parts of equal size run as one batch (a handful of batches: sizes are Binomial(n, 1/t));
        a part with fewer than k points gets a junk tuple uniform in the public ball.
        """
        t, d = int(self.t), X.shape[1]
        sizes = np.bincount(labels, minlength=t)
        order = np.argsort(labels, kind="stable")
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        T = np.empty((t, k, d))
        oracle = self.oracle
        # Small per-part BLAS/LAPACK calls run far faster single-threaded on a busy machine.
        with single_threaded_blas():
            for size in np.unique(sizes):
                idx = np.flatnonzero(sizes == size)
                if size < k:
                    T[idx] = _uniform_in_ball(idx.size, k, d, float(self.radius), gen)
                    continue
                parts = X[order[starts[idx][:, None] + np.arange(size)]]  # (g, size, d)
                if isinstance(oracle, str) and oracle in _BATCHED:
                    out = _BATCHED[oracle](parts, k, gen)
                else:
                    fn = oracle if callable(oracle) else _PER_PART[oracle]
                    out = np.stack([np.asarray(fn(P, k, gen), dtype=float) for P in parts])
                if out.shape != (idx.size, k, d):
                    raise ValueError(f"the oracle must return (k, d) = ({k}, {d}) centres per part")
                T[idx] = out
        return T

    def _fail(self, X: np.ndarray, gen: np.random.Generator, rho_fb: float) -> FriendlyCoreKMeans:
        # A fixed message: which stage emptied (and how many survived) is data-dependent.
        self.failed_, self.failure_reason_ = True, FAILED_MESSAGE
        self.cluster_centers_ = None
        if self.fallback:
            self.cluster_centers_, _ = run_fallback(
                self.fallback, X, int(self.n_clusters), rho_fb, radius=float(self.radius),
                n_iter=int(self.fallback_iter), rng=gen)
            self.used_fallback_ = True
        return self

    # ------------------------------------------------------------------ use
    def predict(self, X: np.ndarray) -> np.ndarray:
        """Index of the nearest centre of each row."""
        self._check_fitted()
        if self.cluster_centers_ is None:
            raise ValueError(f"FriendlyCoreKMeans failed, no centres: {self.failure_reason_}")
        return nearest_center(self._check_predict_X(X), self.cluster_centers_)[0]

    @property
    def total_budget_(self) -> Guarantee:
        """Composition of :attr:`budget_` (zCDP parts only; equals ``privacy_`` in zCDP)."""
        return compose(*[g for _, g in self.budget_ if isinstance(g, ZCDP)])
