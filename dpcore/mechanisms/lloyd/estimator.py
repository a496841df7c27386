"""Weighted DP-Lloyd (Algorithm 2 of Fay, Mair & Sjölund 2024) and the :class:`DPLloyd` estimator.

Each of the T iterations assigns every (weighted) point to its nearest centre and releases, per
cluster j, a noisy weighted count and a noisy weighted sum:

    c_j = (ζ_j + Σ_{(w,x)∈C_j} w x) / (ξ_j + Σ_{(w,x)∈C_j} w),
    ξ_j ~ Laplace(0, β_count),  ζ_j ~ density ∝ exp(−‖ζ‖₂/β_sum)  (Gamma(d, β_sum) radius).

On data in the ball of radius r this is ε-DP with ε = T (r/β_sum + 1/β_count) (Sec. 4), and its
personalised profile is ε(w, x) = T w (1/β_count + ‖x‖/β_sum) (Prop. 13), which is what
importance sampling (:mod:`dpcore.mechanisms.importance.sampling`) amplifies.

Building blocks meant for reuse (the distributed path maps :func:`lloyd_statistics` over
partitions, adds the results and calls :func:`noisy_lloyd_update` once):

* :func:`lloyd_statistics` — noise-free per-cluster weighted sums and counts;
* :func:`noisy_lloyd_update` — the noisy release and the post-processing rules below;
* :func:`dp_lloyd_noise_scales`, :func:`dp_lloyd_epsilon` — calibration (Su et al. split ρ = 0.225).

Decisions the paper leaves open (all post-processing of released values, so privacy is unchanged):

* **Small or non-positive noisy counts.** A cluster whose noisy count ξ_j + Σw is below
  ``min_count`` (default 1, i.e. less than one unit-weight point) keeps its previous centre: the
  ratio would divide the sum noise by a number near or below zero and throw the centre far away
  (the paper applies the formula literally; spec §4.4, §9.13). Empty clusters are the same case.
* **Centres stay in the ball**: every new centre is projected onto the ball of radius r with
  :func:`dpcore.data.geometry.clip_to_ball`. The ball is convex and holds all data, so the
  projection never increases a centre's distance to any data point.
* **Speed**: each step is one compiled GIL-free pass (:mod:`dpcore.core.kernels`) per row block,
  the blocks on as many threads as the process may use (``n_jobs``, :mod:`dpcore.core.threads`)
  with single-threaded BLAS; the result does not depend on the thread count
  (``benchmarks/bench_threads.py``, ``docs/dp_kmeans.md``).
* **The privacy sampler's fast path is the default**: ``sampler="privacy"`` samples by the
  upper envelope of q_priv on a public norm grid of ``q_grid`` = 4096 bins (one pass, B from a
  histogram; the same guarantee, :mod:`dpcore.mechanisms.importance.grid`); ``q_grid=None``
  asks for the paper's exact per-point q. Per-point diagnostics are computed when read
  (:mod:`dpcore.mechanisms.lloyd.diagnostics`).
* **Data outside the ball** are clipped to it (with a warning), never silently: the guarantee
  needs ‖x‖ ≤ r.
* **Initial centres** are data-independent by default (``init="random_ball"``: k points uniform
  in the ball of radius r/2 — see :func:`random_ball_centers`). The paper's "k random data
  points" is ``init="sample"`` and warns with
  :class:`~dpcore.privacy.guarantees.PrivacyLeakWarning`, because the analysis treats the initial
  centres as public.
* **A public first partition** (``init_assign``): the first iteration may assign each point by
  a given public per-row map instead of the nearest initial centre (max-cover's partition,
  :class:`dpcore.estimators.dpkmeans.DPKMeans`). Each point still lands in exactly one cluster by a
  function of that point and public values only, so the iteration's release and its ε are
  those of any other iteration.

Example
-------
>>> import numpy as np
>>> from dpcore.mechanisms.lloyd.estimator import DPLloyd
>>> X = np.random.default_rng(0).normal(size=(2000, 2))
>>> X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / 3.0)
>>> km = DPLloyd(3, epsilon=1.0, radius=3.0, rng=0).fit(X)
>>> km.cluster_centers_.shape, str(km.privacy_)
((3, 2), 'ε = 1 (pure DP)')
"""

from __future__ import annotations

import math
import warnings
from typing import ClassVar

import numpy as np

from dpcore.core.errors import ParameterError
from dpcore.core.rng import RNGLike, as_generator
from dpcore.core.threads import thread_limit
from dpcore.data.base import DPClusterer, dense_matrix
from dpcore.data.geometry import nearest_center, row_norms
from dpcore.data.params import (
    BOUNDS,
    EPSILON,
    N_CLUSTERS,
    N_ITER,
    N_JOBS,
    N_PUBLIC,
    RADIUS,
    SAMPLE_SIZE,
    SHARE,
    Param,
)
from dpcore.mechanisms.importance import (
    SAMPLERS,
    LloydCalibration,
    calibrate_lloyd,
    coreset_probabilities,
    dp_lloyd_epsilon,
    dp_lloyd_noise_scales,
    lloyd_profile,
    poisson_sample,
    privacy_constrained_weights,
    su_noise_scales,
    uniform_probabilities,
)
from dpcore.mechanisms.importance.grid import (
    DEFAULT_GRID,
    calibrate_lloyd_histogram,
    gather_rows,
    grid_histogram,
    grid_poisson_sample,
)
from dpcore.mechanisms.lloyd.algorithm import (  # re-exported: the functional core
    BLOCK_ROWS,
    cluster_sums,
    dp_lloyd,
    lloyd_statistics,
    noisy_lloyd_update,
    random_ball_centers,
)
from dpcore.mechanisms.lloyd.diagnostics import LazyDiagnostics
from dpcore.mechanisms.lloyd.domain import (
    SUM_NOISES,
    LloydDomain,
    auto_count_share,
    ball_domain,
    box_domain,
    declared_n,
    error_budget_n_iter,
)
from dpcore.privacy.guarantees import PrivacyLeakWarning, PureDP
from dpcore.privacy.noise import public_randomness

__all__ = [
    "INITS",
    "SAMPLER",
    "SUM_NOISE",
    "DPLloyd",
    "cluster_sums",
    "dp_lloyd",
    "dp_lloyd_epsilon",
    "dp_lloyd_noise_scales",
    "lloyd_statistics",
    "noisy_lloyd_update",
    "random_ball_centers",
    "su_noise_scales",
]
PRESETS = ("paper", "auto")
INITS = ("random_ball", "sample")


def _check_init(value, name: str):
    """``init``: one of :data:`INITS` or an array (its (k, d) shape is checked in ``fit``)."""
    if isinstance(value, str | bytes) and value not in INITS:
        raise ParameterError(name, f"{name} must be 'random_ball', 'sample' or a (k, d) array, "
                                   f"got {value!r}"[:300])
    return value


def _check_callable(value, name: str):
    if not callable(value):
        raise ParameterError(name, f"{name} must be None or a callable (rows -> labels), got "
                                   f"{value!r}"[:300])
    return value


#: Constraints shared with :class:`dpcore.estimators.dpkmeans.DPKMeans`.
SUM_NOISE = Param("str", choices=SUM_NOISES,
                  doc="box only: L2-exponential or per-coordinate Laplace sum noise, or the one "
                      "with less noise")
SAMPLER = Param("str", choices=SAMPLERS, special=(None,),
                doc="importance sampler (None: every row)")


@public_randomness("initial centres uniform in the middle half of the declared box: "
                   "independent of the data")
def _middle_of_box_centers(dom: LloydDomain, k: int, d: int, gen: np.random.Generator):
    return dom.center + dom.half_ranges * gen.uniform(-0.5, 0.5, (k, d))


@public_randomness("init='sample' picks k rows as starting centres; choosing rows adds no noise "
                   "term (the release door refuses it: PrivacyLeakWarning)")
def _row_choice(n: int, k: int, gen: np.random.Generator) -> np.ndarray:
    return gen.choice(n, size=k, replace=False)


class DPLloyd(LazyDiagnostics, DPClusterer):
    """ε-DP k-means by (optionally importance-sampled) weighted DP-Lloyd.

    Fay, Mair & Sjölund (2024): Algorithm 2 with Poisson importance sampling (Def. 5) by a uniform,
    coreset (Sec. 4) or privacy-constrained (Thm 10, Algorithm 1) distribution; noise scales with
    the Su et al. (2016) split ρ = 0.225, calibrated so the *whole* mechanism (sampling included)
    is ``epsilon``-DP (spec §6.4).

    Parameters
    ----------
    n_clusters : int
        k.
    epsilon : float
        Target ε of the released centres (``inf``: no noise, a non-private reference).
    radius : float, optional
        Public bound r on ‖x‖₂ (points outside are clipped, with a warning). Needed unless
        ``bounds`` is given.
    bounds : (lo, hi), optional
        Public per-feature box (scalars or length-d arrays, in the coordinates of X): points are
        clamped to it, sums are released around the box centre and centres stay in the box; the
        sum noise is chosen by ``sum_noise`` (:mod:`dpcore.mechanisms.lloyd.domain` has the
        sensitivity proof). With a sampler the sensitivity norm is ‖x − c‖₂ ≤ half-diagonal (L2
        noise).
    sum_noise : "auto", "l2" or "laplace"
        Box only: L2-exponential noise with the half-diagonal as radius, per-coordinate Laplace
        noise (weighted ℓ1 sensitivity), or the one with less expected noise ("auto").
    n_iter : int or "auto", optional
        T. Default: 10 with ``preset="paper"``; "auto" (and the default with ``preset="auto"``)
        chooses T from ε, n, d, k and the domain
        (:func:`dpcore.mechanisms.lloyd.domain.error_budget_n_iter`, after Su et al. 2016).
    n : float, optional
        Public (declared or privately estimated) number of rows, used by ``n_iter="auto"`` and
        by ``sampler="uniform"``; otherwise X.shape[0] is read with a PrivacyLeakWarning.
    preset : "paper" or "auto"
        "paper" (default): the paper's configuration (T = 10, Su et al. ratio
        β_count/β_sum = (4dρ²)^{1/3}), exactly as the reproduction runs it. "auto": T and the
        count share from the budget rules of :mod:`dpcore.mechanisms.lloyd.domain`.
    sampler : None, "uniform", "coreset" or "privacy"
        None runs on all data. Otherwise a Poisson sample of expected size ``sample_size`` is
        drawn with q = m/n, q_core (λ = ``lam``; data must be centred), or q_priv = 1/w from
        Algorithm 1 at target ε* = ``epsilon`` with the noise chosen so that Σ q = m.
    sample_size : float, optional
        Expected sample size m. Needed for "uniform" and "coreset"; for "privacy" None means the
        "sampling for free" noise (the full-data noise at ``epsilon``; m is then what it gives).
    q_grid : int, None or "exact"
        ``sampler="privacy"`` only: the upper envelope of q_priv on this many norm bins
        (default 4096, :mod:`dpcore.mechanisms.importance.grid`): B from a histogram, one pass
        over X, no per-point Lambert W, the same guarantee. None (or "exact"): the exact
        per-point q and a root search over all n (the paper's; several times the cost of the
        sampled fit itself).
    diagnostics : bool
        Keep what ``individual_epsilon_`` and (on the grid) ``probabilities_`` are computed from
        when read (one float and one bin per point; no pass during ``fit``). Default True.
    n_jobs : int, optional
        Threads of the row loops (scikit-learn's convention: None = the cores this process may
        use, or ``DPCORE_NUM_THREADS``, within any threadpoolctl limit; −1 = every allowed
        core; k = k). The result does not depend on it (:mod:`dpcore.core.threads`).
    lam : float
        λ of the coreset mixture (1/2 in the paper).
    init : "random_ball", "sample" or (k, d) array
        "random_ball" (default): data-independent (:func:`random_ball_centers`; with a box:
        uniform in the middle half of the box). "sample": k distinct points of the (sampled)
        data, the paper's choice; warns :class:`~dpcore.privacy.PrivacyLeakWarning` because it is
        not covered by the guarantee. An array is used as given (clipped to the domain).
    init_assign : callable, optional
        A public partition for the first iteration: maps a block of rows (m, d) to labels in
        [0, k) (see :func:`dp_lloyd`'s ``first_assign``; it must depend on each row and public
        values only). The initial centres then only serve clusters the first iteration leaves
        (noisily) empty. Used by :class:`dpcore.estimators.dpkmeans.DPKMeans` for max-cover's
        partition.
    min_count : float
        Noisy counts below this keep the previous centre (see :func:`noisy_lloyd_update`).
    count_share : float in (0, 1) or "auto", optional
        Share of ε spent on the counts (at ‖x‖ = r). Default: the paper's Su et al. ratio
        β_count/β_sum = (4dρ²)^{1/3} (``preset="paper"``), which was derived for data in
        [−1, 1]^d; with a large radius it leaves the counts almost no budget (Covertype:
        ≈ 0.01 %) and their noise dominates the error. "auto" (default with ``preset="auto"``):
        the scale-free error-minimising share
        :func:`dpcore.mechanisms.lloyd.domain.auto_count_share`.
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k, d) array
    privacy_ : PureDP
        The guarantee of the whole run (sampling included).
    history_ : list of (k, d) arrays
        Initial centres and the centres after each iteration.
    n_iter_, count_share_ : int, float
        T and the count share used (count_share_ is None for the paper's Su et al. ratio).
    domain_ : LloydDomain
        The public domain and sum noise used.
    beta_sum_, beta_count_, noise_constant_ : float
        The noise scales used and the paper's constant B.
    calibration_ : LloydCalibration
    individual_epsilon_ : (n,) array
        Per-point loss ψ(x_i) (Theorem 6) of the training points (ε(1, x_i) without sampling);
        only with ``diagnostics=True``; computed on first access.
    sample_indices_, sample_weights_, probabilities_ : arrays
        Only when sampled: the kept rows, their weights 1/q and every point's q
        (``probabilities_`` on the grid only with ``diagnostics=True``; computed on first
        access).
    n_features_in_ : int
    """

    #: Every parameter's constraint (:mod:`dpcore.data.params`): ``fit`` checks them, the release
    #: door, the run configurations and the dashboard read them. ``n``, ``radius`` and ``bounds``
    #: are the public inputs of the privacy proof.
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "n_clusters": N_CLUSTERS,
        "epsilon": EPSILON,
        "radius": RADIUS,
        "bounds": BOUNDS,
        "sum_noise": SUM_NOISE,
        "n_iter": N_ITER.also("auto", None),
        "n": N_PUBLIC,
        "preset": Param("str", choices=PRESETS, doc="the paper's configuration or budget rules"),
        "sampler": SAMPLER,
        "sample_size": SAMPLE_SIZE,
        "q_grid": Param("int", 2, 10**9, special=(None, "exact"),
                        doc="sampler='privacy': number of norm bins (None or 'exact': the "
                            "paper's exact q, slow)"),
        "diagnostics": Param("bool", doc="keep what individual_epsilon_ is computed from (on "
                                         "access)"),
        "n_jobs": N_JOBS,
        "lam": Param("float", 0.0, 1.0, doc="λ of the coreset mixture"),
        "init": Param("str", choices=INITS, check=_check_init,
                      doc="initial centres: 'random_ball', 'sample' or a (k, d) array"),
        "min_count": Param("float", doc="noisy counts below this keep the previous centre"),
        "count_share": SHARE.also("auto", None),
        "init_assign": Param("object", special=(None,), check=_check_callable,
                             doc="public first partition: rows -> labels"),
    }

    def __init__(
        self,
        n_clusters: int,
        *,
        epsilon: float,
        radius: float | None = None,
        bounds=None,
        sum_noise: str = "auto",
        n_iter: int | str | None = None,
        n: float | None = None,
        preset: str = "paper",
        sampler: str | None = None,
        sample_size: float | None = None,
        q_grid: int | str | None = DEFAULT_GRID,
        diagnostics: bool = True,
        lam: float = 0.5,
        init="random_ball",
        min_count: float = 1.0,
        count_share: float | str | None = None,
        rng: RNGLike = None,
        init_assign=None,
        n_jobs: int | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.radius = radius
        self.bounds = bounds
        self.sum_noise = sum_noise
        self.n_iter = n_iter
        self.n = n
        self.preset = preset
        self.sampler = sampler
        self.sample_size = sample_size
        self.q_grid = q_grid
        self.diagnostics = diagnostics
        self.lam = lam
        self.init = init
        self.init_assign = init_assign
        self.min_count = min_count
        self.count_share = count_share
        self.rng = rng
        self.n_jobs = n_jobs

    # ---- validation -------------------------------------------------------------------------

    def _check_params(self) -> tuple[int, float]:
        """``_parameter_constraints`` (one declaration for every consumer) and what depends on
        two parameters: k and ε, checked."""
        p = self._validate_params()
        if self.bounds is None and self.radius is None:
            raise ParameterError("radius", "radius must be a finite number > 0 (or give "
                                           "bounds=), got None")
        return p["n_clusters"], float(p["epsilon"])

    @staticmethod
    def _check_X(X) -> np.ndarray:
        # Zero rows are a data set like any other: the release is then noise around the public
        # start, never a refusal (a refusal only on ∅ would tell ∅ from one row without noise).
        X = dense_matrix(X)
        if X.ndim != 2 or X.shape[1] == 0:
            raise ValueError(f"X must be a 2-D array (n, d) with d ≥ 1, got shape {X.shape}")
        return X

    @staticmethod
    def _squared_norms(X: np.ndarray) -> np.ndarray:
        # NaN and ±inf propagate into ‖x‖², so this one pass is also the finiteness check.
        x_sq = row_norms(X, squared=True)
        if not np.all(np.isfinite(x_sq)):
            raise ValueError("X contains NaN or infinite (or overflowing) values; drop or impute "
                             "them first")
        return x_sq

    def _domain(self, d: int) -> LloydDomain:
        if self.bounds is None:
            return ball_domain(float(self.radius), d)
        return box_domain(self.bounds, d, sum_noise="l2" if self.sampler else self.sum_noise)

    def _budget(self, eps: float, n_rows: int, d: int, k: int,
                dom: LloydDomain) -> tuple[int, float | None]:
        """T and the count share (None = the paper's Su et al. ratio)."""
        auto = self.preset == "auto"
        share = self.count_share
        if share is None and auto:
            share = "auto"
        if isinstance(share, str):
            if share != "auto":
                raise ValueError(f"count_share must be a number in (0, 1) or 'auto', got {share!r}")
            share = auto_count_share(dom)
        t = self.n_iter
        if t is None:
            t = "auto" if auto else 10
        if t == "auto":
            n = declared_n(self.n, n_rows, why="n_iter='auto'", stacklevel=4)
            f = auto_count_share(dom) if share is None else share
            t = error_budget_n_iter(eps, n, k, dom, f)
        return int(t), None if share is None else float(share)

    # ---- fitting ----------------------------------------------------------------------------

    def _calibrate(self, X, s, dom, eps, t, share) -> tuple[LloydCalibration, np.ndarray | None]:
        """Noise scales and (when sampled) every point's probability q (s: sensitivity norms)."""
        n, d = X.shape
        r = dom.radius
        sampler, m = self.sampler, self.sample_size
        common = dict(epsilon=eps, n=n, dim=d, radius=r, n_iter=t, count_share=share)
        if sampler is None:
            return calibrate_lloyd(None, **common), None
        if sampler == "uniform":
            n_pub = round(declared_n(self.n, n, why="sampler='uniform' (rate m/n)",
                                     stacklevel=5))
            common["n"] = n_pub
            cal = calibrate_lloyd("uniform", sample_size=m, **common)
            return cal, np.full(n, cal.sample_size / n_pub)
        if sampler == "coreset":
            warnings.warn("sampler='coreset' reads n and the mean squared norm x̃ off the data "
                          "(the paper treats them as public; spec §9.12)", PrivacyLeakWarning,
                          stacklevel=3)
            Xc = dom.centred_rows(X) if dom.is_box else X
            q = coreset_probabilities(Xc, m, lam=self.lam, radius=r)
            cal = calibrate_lloyd("coreset", sample_size=m, mean_sq_norm=float(np.mean(s * s)),
                                  lam=self.lam, **common)
            return cal, q
        if m is not None:
            warnings.warn("sampler='privacy' with a sample_size chooses the noise from the norms "
                          "of all points (Σ q = m); pass sample_size=None for the data-"
                          "independent 'sampling for free' noise", PrivacyLeakWarning,
                          stacklevel=3)
        cal = calibrate_lloyd("privacy", sample_size=m, norms=s, **common)
        slopes = lloyd_profile(s, beta_sum=cal.beta_sum, beta_count=cal.beta_count,
                               n_iter=t).slopes
        return cal, 1.0 / privacy_constrained_weights(slopes, eps)

    def _initial_centers(self, S, k, dom: LloydDomain, gen) -> np.ndarray:
        init = self.init
        d = S.shape[1]
        if isinstance(init, str) and init == "random_ball":
            if dom.is_box:  # uniform in the middle half of the box: public, like the ball's r/2
                return _middle_of_box_centers(dom, k, d, gen)
            return random_ball_centers(k, d, dom.l2_radius, rng=gen)
        if isinstance(init, str) and init == "sample":
            warnings.warn("init='sample' starts from k data points, which the DP analysis "
                          "treats as public input (spec §9.12)", PrivacyLeakWarning, stacklevel=3)
            if S.shape[0] < k:
                raise ValueError(f"init='sample' needs at least n_clusters={k} (sampled) points, "
                                 f"got {S.shape[0]}; use init='random_ball'")
            C = S[_row_choice(S.shape[0], k, gen)]  # a copy; rows outside a box clamped
            return np.clip(C, dom.lo, dom.hi, out=C) if dom.is_box else C
        if isinstance(init, str):
            raise ValueError(
                f"init must be 'random_ball', 'sample' or a (k, d) array, got {init!r}"
            )
        C = np.asarray(init, dtype=float)
        if C.shape != (k, d) or not np.all(np.isfinite(C)):
            raise ValueError(f"init array must be finite with shape ({k}, {d}), got {C.shape}")
        return dom.project_shifted(C - dom.center) + dom.center

    def fit(self, X, y=None) -> DPLloyd:
        """Run (sampled) weighted DP-Lloyd on X; see the class docstring."""
        k, eps = self._check_params()
        self._keep_diagnostics()
        X = self._check_X(X)
        with thread_limit(self.n_jobs):  # no extra frame: warnings point at the caller
            gen = as_generator(self.rng)
            n_rows, d = X.shape
            dom = self._domain(d)
            t, share = self._budget(eps, n_rows, d, k, dom)
            private = math.isfinite(eps)
            if private and self.sampler == "privacy" and self.q_grid not in (None, "exact"):
                return self._fit_privacy_grid(X, dom, k, eps, t, share, gen)
            x_sq = self._squared_norms(X)
            # A box is clamped where the rows are read (each Lloyd step's cache block, the
            # norms' chunks, the sample), never by copying X (issue 23.6: 6 rows outside of
            # 494k cost +166 MiB); a ball is projected here (a copy, only with rows outside).
            outside = None
            if dom.is_box:
                outside = dom.rows_outside(X)
                n_out = outside.size
            else:
                X, n_out = dom.clip(X, norms=np.sqrt(x_sq))
            if n_out:
                what = ("lie outside bounds" if dom.is_box
                        else f"have norm > radius={dom.radius:g}")
                warnings.warn(f"{n_out} of {n_rows} points {what}; they were clipped to the "
                              "domain (the guarantee needs every point inside)", UserWarning,
                              stacklevel=2)
                x_sq = None if dom.is_box else row_norms(X, squared=True)
            need_s = private and (self.sampler is not None or self.diagnostics)
            s = (dom.sensitivity_norms(X, x_sq, clamp=dom.is_box and n_out > 0) if need_s
                 else None)

            if private:
                cal, q = self._calibrate(X, s, dom, eps, t, share)
            else:
                cal = LloydCalibration(self.sampler, math.inf, float(self.sample_size or n_rows),
                                       0.0, 0.0, math.inf)
                q = self._nonprivate_probabilities(X, dom)
            if q is None:
                S, w = X, None
            else:
                idx, w = poisson_sample(q, rng=gen)
                S = X[idx]
                if n_out and dom.is_box:  # the sample is a copy already: clamp it in place
                    np.clip(S, dom.lo, dom.hi, out=S)
                    outside = None
                self.sample_indices_, self.sample_weights_ = idx, w
            self._run(S, w, dom, k, t, share, cal, gen, outside=outside)
            self._keep_diagnostics(q=q, private=private, n=n_rows, cal=cal, t=t,
                                   s=s if self.diagnostics else None)
            if not self.diagnostics:
                self._diag["n"] = None  # no individual_epsilon_ (as before: never set)
            return self

    def _run(self, S, w, dom, k, t, share, cal, gen, outside=None) -> None:
        """DP-Lloyd on the (sampled) rows S and the fitted attributes (``outside``: S's rows
        outside the box, clamped inside each step)."""
        history = dp_lloyd(S, self._initial_centers(S, k, dom, gen), n_iter=t,
                           beta_sum=cal.beta_sum, beta_count=cal.beta_count, domain=dom,
                           weights=w, rng=gen, min_count=self.min_count,
                           first_assign=self.init_assign, outside=outside)
        self.cluster_centers_ = history[-1]
        self.history_ = history
        self.calibration_ = cal
        self.n_iter_, self.count_share_, self.domain_ = t, share, dom
        self.beta_sum_, self.beta_count_ = cal.beta_sum, cal.beta_count
        self.noise_constant_ = cal.noise_constant
        self.privacy_ = PureDP(cal.epsilon)
        self.n_features_in_ = S.shape[1]

    def _fit_privacy_grid(self, X, dom, k, eps, t, share, gen) -> DPLloyd:
        """Privacy-constrained sampling on the public norm grid
        (:mod:`dpcore.mechanisms.importance.grid`).

        One compiled pass over the *unclipped* rows gives every point's bin of its sensitivity
        norm s and the histogram: clamping to the domain only shortens s(x) (each coordinate
        moves towards the centre), and q_priv grows with s while ψ falls with q (Prop. 17), so
        q = q_priv(min(s, r)) rounded up to the grid keeps ψ ≤ ε*. Only the sampled rows are
        clipped; thinning draws ≈ n q̄ variates, not n. The same pass writes every point's s
        when ``diagnostics=True``, for ``probabilities_`` and ``individual_epsilon_`` on access.
        """
        center = dom.center if np.any(dom.center != 0) else None
        s = np.empty(X.shape[0]) if self.diagnostics else None
        bins, counts, finite = grid_histogram(X, dom.radius, int(self.q_grid), center, norms=s)
        if not finite:
            self._squared_norms(X)  # raises the message for NaN, ±inf or overflowing rows
            raise ValueError("X has rows whose squared norm is not finite")
        if self.sample_size is not None:
            warnings.warn("sampler='privacy' with a sample_size chooses the noise from the norms "
                          "of all points (Σ q = m); pass sample_size=None for the data-"
                          "independent 'sampling for free' noise", PrivacyLeakWarning,
                          stacklevel=3)
        cal, table = calibrate_lloyd_histogram(counts, epsilon=eps, dim=X.shape[1],
                                               radius=dom.radius, n_iter=t,
                                               sample_size=self.sample_size, count_share=share)
        idx, w = grid_poisson_sample(bins, table, counts, rng=gen)
        S, n_out = dom.clip_gathered(gather_rows(X, idx), bins[idx], int(self.q_grid))
        if n_out:
            warnings.warn("some points lie outside the declared domain; they were clipped to it "
                          "(the guarantee needs every point inside)", UserWarning, stacklevel=3)
        self.sample_indices_, self.sample_weights_ = idx, w
        self._run(S, w, dom, k, t, share, cal, gen)
        if self.diagnostics:  # q and ψ when read (LazyDiagnostics), from the pass's bins and s
            self._keep_diagnostics(bins=bins, table=table, s=s, radius=dom.radius, cal=cal, t=t,
                                   private=True, n=X.shape[0])
        return self

    def _nonprivate_probabilities(self, X, dom: LloydDomain) -> np.ndarray | None:
        """ε = ∞ reference: the same sampling distributions without noise (spec §6.4)."""
        n = X.shape[0]
        if self.sampler is None:
            return None
        if self.sampler == "uniform":
            return uniform_probabilities(n, self.sample_size)
        if self.sampler == "coreset":
            Xc = dom.centred_rows(X) if dom.is_box else X
            return coreset_probabilities(Xc, self.sample_size, lam=self.lam, radius=dom.radius)
        raise ValueError("sampler='privacy' needs a finite epsilon (its q depends on the noise)")

    def predict(self, X) -> np.ndarray:
        """Index of the nearest learned centre for each row of X."""
        X = self._check_predict_X(X)
        self._squared_norms(X)  # overflowing rows
        return nearest_center(X, self.cluster_centers_, block_rows=BLOCK_ROWS)[0]
