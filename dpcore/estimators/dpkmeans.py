"""The recommended DP k-means of dpcore: box-aware, budget-aware DP-Lloyd.

:class:`DPKMeans` is weighted DP-Lloyd (Su et al. 2016; Fay, Mair & Sjölund 2024, Algorithm 2)
configured from the public information an analyst has:

* a per-feature box ``bounds=(lo, hi)`` (or the paper's ball ``radius=``): clamping, the sum
  noise and its sensitivity come from the box (:mod:`dpcore.mechanisms.lloyd.domain`: per-coordinate
  Laplace with a weighted-ℓ1 sensitivity or the L2-exponential noise with the half-diagonal,
  whichever has less noise);
* the budget: the count/sum split minimises a noisy centre's error
  (:func:`~dpcore.mechanisms.lloyd.domain.auto_count_share`) and T is the most rounds whose
  predicted centre error stays within 1 % of the domain
  (:func:`~dpcore.mechanisms.lloyd.domain.error_budget_n_iter`, 2 ≤ T ≤ 10), both from Su et al.'s
  (2016) error model and measured in ``benchmarks/bench_kmeans.py``;
* the start and domain, chosen from public inputs (``seeding="auto"``, :func:`auto_seeding`):
  on a box while ε·n/(k·d) < :data:`BALL_START_BELOW`, a private ball inside the box
  (``"private-ball"``, :mod:`dpcore.estimators.dpkmeans_ball`: a noisy centre and a noisy
  97.5 % norm quantile on :data:`~dpcore.estimators.dpkmeans_ball.BALL_SHARE` of ε), then
  DP-Lloyd on that ball (or on the box where the ball would be noisier) from the ball's start;
  else the box's start (uniform in its middle half). Measured in
  ``benchmarks/bench_recommended.py`` (docs/dp_kmeans.md, "The private ball"): on KDD-like
  data, whose box (the per-column range of heavy tails) is ~30× wider than the bulk, 22–30 %
  below the ball start it replaced and 23 % below max-cover on the box at ε = 3; within 3.3 %
  of the best box method on letter- and digit-like data. The *choice* never reads the data
  (the ball itself is a charged release), so ``privacy_`` is the same function of public
  inputs: pure ε;
* optionally a private seeding (``seeding="maxcover"``: the partition of
  :meth:`dpcore.mechanisms.maxcover.MaxCoverKMeans.fit_partition`, Algorithm 2's lines 1–19, on a
  share of the budget; DP-Lloyd's first round averages it instead of NoisyAVG and gets one round
  more; (ε, δ)-DP by basic composition). This is the same code path as
  ``MaxCoverKMeans(preset="recommended")``, its default. ``"auto"`` does not choose it (see
  :func:`auto_seeding`), so the pure-DP default never becomes an (ε, δ) release.

n is public: declare it (``n=``, or estimate it privately with
:func:`dpcore.mechanisms.bounds.private_row_count` and pay for it); otherwise it is read off the
data with a :class:`~dpcore.privacy.guarantees.PrivacyLeakWarning`.

Example
-------
>>> import numpy as np
>>> from dpcore.estimators.dpkmeans import DPKMeans
>>> X = np.random.default_rng(0).uniform(0, 10, size=(5000, 3))
>>> km = DPKMeans(4, epsilon=1.0, bounds=(0.0, 10.0), n=5000, rng=0).fit(X)
>>> km.cluster_centers_.shape, str(km.privacy_)
((4, 3), 'ε = 1 (pure DP)')
"""

from __future__ import annotations

import math
import warnings
from dataclasses import replace
from typing import ClassVar

import numpy as np

from dpcore.core.cancel import substep
from dpcore.core.errors import ParameterError
from dpcore.core.rng import RNGLike, as_generator
from dpcore.core.threads import thread_limit
from dpcore.data.base import DPClusterer
from dpcore.data.geometry import nearest_center
from dpcore.data.params import (
    BOUNDS,
    DELTA,
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
from dpcore.estimators.dpkmeans_ball import (
    BALL_SHARE,
    ball_budget,
    ball_is_quieter,
    private_ball,
    stage_budget,
)
from dpcore.mechanisms.lloyd.algorithm import BLOCK_ROWS, random_ball_centers
from dpcore.mechanisms.lloyd.domain import box_domain, declared_n
from dpcore.mechanisms.lloyd.estimator import SAMPLER, SUM_NOISE, DPLloyd
from dpcore.mechanisms.lloyd.staged import PARTITION_ROUNDS, SEEDING_PROGRESS, fit_lloyd_stage
from dpcore.mechanisms.maxcover.estimator import fit_seeding, seed_share_of
from dpcore.privacy.guarantees import ApproxDP, PureDP
from dpcore.privacy.noise import add_laplace, public_randomness

__all__ = ["BALL_START_BELOW", "PARTITION_ROUNDS", "SEEDINGS", "DPKMeans", "auto_seeding"]

SEEDINGS = (None, "auto", "box", "ball", "moments", "maxcover", "private-ball")
_CHUNK = 16384


@public_randomness("initial centres drawn around the private mean with the private spread: "
                   "post-processing of released moments")
def _spread_centres(mean: np.ndarray, sd: np.ndarray, k: int, gen: np.random.Generator):
    return mean + sd * gen.standard_normal((k, mean.size))


def auto_seeding(n: float, d: int, k: int, epsilon: float, *, box: bool,
                 sampled: bool = False) -> str:
    """The start ``seeding="auto"`` uses: a function of public inputs only (n, d, k, ε and
    whether the domain is a box), never of the data, so it costs no privacy and ``privacy_``
    follows from the same public inputs.

    On a box with a finite ε, ``"private-ball"`` (:mod:`dpcore.estimators.dpkmeans_ball`: a
    ball inside the box released on a share of ε, then DP-Lloyd on it) while ε·n/(k·d) <
    :data:`BALL_START_BELOW`, else ``"box"`` (uniform in the box's middle half: there the noise
    is small next to the clipping bias of a quantile ball); on a ball, its own start.
    Max-cover's partition is not chosen: on ``benchmarks/bench_recommended.py``'s sets it was
    the best box method before the private ball only on KDD-like data at ε = 3 and letter-like
    at ε = 1, 1–60 % worse in the other cells with no public input separating them, and it
    needs δ > 0; the private ball is 23 % below it on KDD-like data at ε = 3 (docs/dp_kmeans.md,
    "The private ball"). With a sampler, the ball start as before (the sampled calibration on
    the private ball was not measured).
    """
    if box and math.isfinite(epsilon) and epsilon * n / (k * d) < BALL_START_BELOW:
        # a sampled fit keeps the ball start: on the ball its calibration was not measured
        return "ball" if sampled else "private-ball"
    return "box" if box else "ball"


#: ``seeding="auto"`` fits a box in a private ball below this ε·n/(k·d) (the cells measured
#: span 26 to 375; the ball start it replaces was better than the box start in all of them).
BALL_START_BELOW = 500.0


class DPKMeans(DPClusterer):
    """Recommended ε-DP k-means (see the module docstring).

    Parameters
    ----------
    n_clusters : int
        k.
    epsilon : float
        Total ε (seeding included).
    bounds : (lo, hi), optional
        Public per-feature box (scalars or length-d arrays). Either this or ``radius``.
    radius : float, optional
        Public ball ‖x‖₂ ≤ radius (the paper's description), when no box is known.
    n : float, optional
        Public (declared or privately estimated) number of rows; read off X with a
        PrivacyLeakWarning if omitted.
    n_iter : int or "auto"
        T; "auto" = :func:`dpcore.mechanisms.lloyd.domain.error_budget_n_iter`.
    count_share : float or "auto"
        Share of each round's ε for the counts; "auto" = the error-minimising share.
    sum_noise : "auto", "l2" or "laplace"
        Box only (see :func:`dpcore.mechanisms.lloyd.domain.box_domain`).
    sampler, sample_size : optional
        Importance sampling as in :class:`~dpcore.mechanisms.lloyd.estimator.DPLloyd`;
        ``sampler="privacy"`` uses the one-pass histogram calibration
        (:mod:`dpcore.mechanisms.importance.grid`).
    seeding : "auto", None, "box", "ball", "moments", "maxcover" or "private-ball"
        The start. "auto" (default): :func:`auto_seeding` of the public n, d, k, ε and the
        domain kind (never of the data). None: the domain's own data-independent start ("box":
        uniform in the box's middle half; on a ball, in the ball of r/2); "ball": on a box, the
        ball's start (uniform in the ball of half the half-diagonal around the box's centre).
        Private starts: "moments" — initial centres from a private per-feature mean and spread
        (``seed_share`` of ε, box only; pure DP); "maxcover" — the partition of
        :meth:`dpcore.mechanisms.maxcover.MaxCoverKMeans.fit_partition` (Algorithm 2's lines 1–19 on
        the ball of the box's half-diagonal around its centre, ``seed_share`` of ε and ``delta``),
        averaged by DP-Lloyd's first round (one round more than the error model's T);
        "private-ball" — box only, pure DP: a centre and radius released on ``seed_share`` of ε
        (default :data:`~dpcore.estimators.dpkmeans_ball.BALL_SHARE`,
        :func:`~dpcore.estimators.dpkmeans_ball.private_ball`), then DP-Lloyd on that ball
        from its start clamped to the box, or on the box where the ball's sum noise would be
        larger (:func:`~dpcore.estimators.dpkmeans_ball.ball_is_quieter`), at the box's T and
        count share for the whole ε either way.
    seed_share : float in (0, 1), optional
        The seeding's share of ε. Default: 0.2 for "moments"; for "maxcover"
        :data:`dpcore.mechanisms.maxcover.estimator.DEFAULT_SEED_SHARE`, the split of
        ``MaxCoverKMeans(preset="recommended")``, which runs this very path.
    delta : float
        δ of the max-cover seeding (0 without seeding).
    seeding_params : dict, optional
        Extra keyword arguments for MaxCoverKMeans (e.g. ``grid_stride``).
    n_jobs : int, optional
        Threads of the row loops (scikit-learn's convention, :func:`dpcore.core.threads.
        thread_limit`; None: the cores the process may use). The result does not depend on it:
        the row blocks and their order of addition are fixed by the shapes.
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k, d) array
    privacy_ : PureDP or ApproxDP (with seeding)
    lloyd_ : DPLloyd, the fitted DP-Lloyd stage (n_iter_, count_share_, domain_, …)
    seeding_kind_ : str or None, the start used (``seeding`` resolved)
    seeding_ : MaxCoverKMeans or None
        The fitted max-cover seeding (``partition_``, ``proxy_centers_``, ``budget_``, …).
    ball_ : PrivateBall or None
        The released ball of ``"private-ball"`` (``center``, ``radius``, ``parts``).
    ball_used_ : bool
        Whether DP-Lloyd ran on that ball (its noise is below the box's): ``lloyd_`` then works
        on the unit ball, x ↦ (x − ``ball_.center``)/``ball_.radius``; else on the box.
    n_iter_, count_share_ : int, float
    n_features_in_ : int
    """

    #: Every parameter's constraint (:mod:`dpcore.data.params`), read by ``fit`` and by every
    #: other consumer; ``n``, ``radius``, ``bounds`` are the proof's public inputs.
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "n_clusters": N_CLUSTERS,
        "epsilon": EPSILON,
        "bounds": BOUNDS,
        "radius": RADIUS,
        "n": N_PUBLIC,
        "n_iter": N_ITER.also("auto"),
        "count_share": SHARE.also("auto"),
        "sum_noise": SUM_NOISE,
        "sampler": SAMPLER,
        "sample_size": SAMPLE_SIZE,
        "seeding": Param("str", choices=tuple(s for s in SEEDINGS if s is not None),
                         special=(None,), doc="start: 'auto' (chosen from public inputs), "
                         "None, 'box', 'ball', 'moments', 'maxcover' or 'private-ball'"),
        "seed_share": SHARE.also(None),
        "delta": DELTA,
        "seeding_params": Param("mapping", special=(None,),
                                doc="extra keyword arguments of the max-cover seeding"),
        "n_jobs": N_JOBS,
    }

    def __init__(
        self,
        n_clusters: int,
        *,
        epsilon: float,
        bounds=None,
        radius: float | None = None,
        n: float | None = None,
        n_iter: int | str = "auto",
        count_share: float | str = "auto",
        sum_noise: str = "auto",
        sampler: str | None = None,
        sample_size: float | None = None,
        seeding: str | None = "auto",
        seed_share: float | None = None,
        delta: float = 0.0,
        seeding_params: dict | None = None,
        n_jobs: int | None = None,
        rng: RNGLike = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.bounds = bounds
        self.radius = radius
        self.n = n
        self.n_iter = n_iter
        self.count_share = count_share
        self.sum_noise = sum_noise
        self.sampler = sampler
        self.sample_size = sample_size
        self.seeding = seeding
        self.seed_share = seed_share
        self.delta = delta
        self.seeding_params = seeding_params
        self.n_jobs = n_jobs
        self.rng = rng

    def fit(self, X, y=None) -> DPKMeans:
        """Fit on X (rows outside the public domain are clipped, with a warning)."""
        p = self._validate_params()
        if self.bounds is None and self.radius is None:
            raise ParameterError("bounds", "DPKMeans needs public bounds=(lo, hi) or radius=")
        X = DPLloyd._check_X(X)
        with thread_limit(self.n_jobs):  # no extra frame: warnings point at the caller
            eps = float(p["epsilon"])
            k = p["n_clusters"]
            gen = as_generator(self.rng)
            t, n_pub = self.n_iter, self.n
            if t == "auto":  # resolved by DPLloyd (error_budget_n_iter), which needs a public n
                n_pub = declared_n(self.n, X.shape[0], why="DPKMeans(n_iter='auto')")
                t = None
            init, eps_lloyd, self.seeding_, assign = "random_ball", eps, None, None
            seeding = self.seeding_kind_ = self._seeding_kind(X, eps, k)
            self.ball_, radius, bounds, X_fit = None, self.radius, self.bounds, X
            share, self.ball_used_ = self.count_share, False
            # progress: the seeding (most of the time) then the DP-Lloyd rounds, one rising fraction
            split = SEEDING_PROGRESS if seeding == "maxcover" else 0.0
            with substep(0.0, split):
                if seeding == "maxcover":
                    eps_lloyd, assign = self._maxcover_partition(X, eps, gen)
                elif seeding == "moments" and math.isfinite(eps):
                    init, eps_lloyd = self._moment_seeds(X, eps, gen)
                elif seeding == "ball" and self.bounds is not None:
                    init = self._ball_start(X.shape[1], k, gen)
                elif seeding == "private-ball" and math.isfinite(eps):
                    Z, eps_lloyd = self._private_ball(X, eps, gen)
                    d = X.shape[1]
                    t, share = stage_budget(eps, n_pub, k, self.bounds, d, self.count_share,
                                            self.sum_noise, t)
                    # with a sampler always the ball: its calibrated ε is then the map's
                    if self.sampler is not None or ball_is_quieter(self.ball_, self.bounds, d,
                                                                   self.sum_noise):
                        X_fit, radius, bounds, self.ball_used_ = Z, 1.0, None, True
                        init = self._ball_start(d, k, gen, self.ball_)
                    else:  # the box is quieter: DP-Lloyd on it, from its ball start
                        init = self._ball_start(d, k, gen)
            with substep(split, 1.0):
                lloyd = fit_lloyd_stage(
                    X_fit, k, epsilon=eps_lloyd, bounds=bounds, radius=radius, n=n_pub,
                    sum_noise=self.sum_noise, n_iter=t, count_share=share,
                    sampler=self.sampler, sample_size=self.sample_size, init=init,
                    init_assign=assign, rng=gen)
            self.lloyd_ = lloyd
            self.cluster_centers_ = lloyd.cluster_centers_
            if self.ball_used_:  # back to the data's coordinates, inside the box
                dom = box_domain(self.bounds, X.shape[1])
                self.cluster_centers_ = np.clip(
                    lloyd.cluster_centers_ * self.ball_.radius + self.ball_.center, dom.lo, dom.hi)
            self.n_iter_, self.count_share_ = lloyd.n_iter_, lloyd.count_share_
            self.n_features_in_ = X.shape[1]
            if self.ball_ is not None:  # the ball's ε_c + ε_r, then DP-Lloyd's: all pure
                self.privacy_ = PureDP(lloyd.privacy_.epsilon + self.ball_.privacy_.epsilon)
            elif self.seeding_ is None or seeding == "moments":
                self.privacy_ = PureDP(lloyd.privacy_.epsilon + (eps - eps_lloyd))
            else:  # basic composition of the seeding's (ε₁, δ) with DP-Lloyd's ε₂
                s = self.seeding_.privacy_
                self.privacy_ = ApproxDP(s.epsilon + lloyd.privacy_.epsilon, s.delta)
        return self

    # -- the start, chosen from public inputs (issue 23) ---------------------------------------
    def _seeding_kind(self, X, eps: float, k: int) -> str | None:
        """``seeding`` resolved on X's shape (n read off X warns when not declared)."""
        if self.seeding != "auto":
            return self.resolved_seeding(X.shape[0], X.shape[1])
        n = declared_n(self.n, X.shape[0], why="DPKMeans(seeding='auto')", stacklevel=5)
        return auto_seeding(n, X.shape[1], k, eps, box=self.bounds is not None,
                            sampled=self.sampler is not None)

    def resolved_seeding(self, n: float, d: int) -> str | None:
        """The start ``fit`` will use on a table of n rows (public) and d columns: "auto"
        becomes :func:`auto_seeding` of the public inputs (``n=`` when declared), None on a
        box "box". Never reads data: the privacy map plans with it."""
        if self.seeding != "auto":
            return "box" if self.seeding is None and self.bounds is not None else self.seeding
        n_pub = float(n) if self.n is None else float(self.n)
        return auto_seeding(n_pub, int(d), int(self.n_clusters), float(self.epsilon),
                            box=self.bounds is not None, sampled=self.sampler is not None)

    def _ball_start(self, d: int, k: int, gen, ball=None) -> np.ndarray:
        """The ball's start on a box: uniform in the ball of half the box's half-diagonal
        around its centre (what ``radius=`` gets), clamped to the box. With a private ``ball``:
        uniform in the ball of half its radius around its centre, clamped to the box, in the
        unit-ball coordinates DP-Lloyd then works in (x − center)/radius. The clamp matters
        where the columns' ranges differ (Covertype: 44 binary columns next to ranges of
        thousands): an isotropic start put most centres far outside the binary columns' range,
        where they never win a row."""
        dom = box_domain(self.bounds, d)
        if ball is None:
            C = random_ball_centers(k, d, float(np.linalg.norm(dom.half_ranges)), rng=gen)
            return np.clip(C, -dom.half_ranges, dom.half_ranges) + dom.center
        C = random_ball_centers(k, d, ball.radius, rng=gen) + ball.center
        return (np.clip(C, dom.lo, dom.hi) - ball.center) / ball.radius

    def _private_ball(self, X, eps, gen) -> tuple[np.ndarray, float]:
        """The rows in a private ball's coordinates and DP-Lloyd's ε (``seed_share`` of ε spent,
        default :data:`~dpcore.estimators.dpkmeans_ball.BALL_SHARE`; pure DP)."""
        if self.bounds is None:
            raise ValueError("seeding='private-ball' needs bounds=(lo, hi)")
        share = seed_share_of(self.seed_share, BALL_SHARE)
        n = declared_n(self.n, X.shape[0], why="DPKMeans(seeding='private-ball')", stacklevel=6)
        eps_ball, eps_lloyd = ball_budget(eps, share)
        lo, hi = (np.asarray(b, dtype=float) for b in self.bounds)  # as declared: no rounding
        if X.shape[0] and (np.any(X.min(axis=0) < lo) or np.any(X.max(axis=0) > hi)):
            # as the box path says it (DPLloyd), without the count: the ball clamps silently
            warnings.warn("some points lie outside bounds; they were clipped to the domain (the "
                          "guarantee needs every point inside)", UserWarning, stacklevel=4)
        self.ball_, Z = private_ball(X, self.bounds, n, eps_ball, rng=gen)
        return Z, eps_lloyd

    def _moment_seeds(self, X, eps, gen) -> tuple[np.ndarray, float]:
        """k initial centres from a private per-feature mean and spread (``seed_share`` of ε).

        Three Laplace releases over the clamped, box-centred rows y = clip(x) − c (|y_i| ≤ h_i),
        each with a third of ε_seed: the count (sensitivity 1), Σ y (per-coordinate scales
        β u_i, u_i ∝ h_i^{1/3}: weighted-ℓ1 sensitivity Σ h_i/u_i, as for the Lloyd sums) and
        Σ y² (u_i ∝ h_i^{2/3}, sensitivity Σ h_i²/u_i). Centres = mean + spread ⊙ N(0, 1),
        clamped to the box: post-processing. With heavy tails the box is far wider than the
        data, and starting inside the data's spread instead of the box's is what the Lloyd
        rounds cannot recover from (they only move centres that win points).
        """
        if self.bounds is None:
            raise ValueError("seeding='moments' needs bounds=(lo, hi)")
        share = seed_share_of(self.seed_share, 0.2)
        dom = box_domain(self.bounds, X.shape[1])
        c, h = dom.center, dom.half_ranges
        e3 = share * eps / 3.0
        count = 0.0
        s1 = np.zeros(X.shape[1])
        s2 = np.zeros(X.shape[1])
        for a in range(0, X.shape[0], _CHUNK):
            y = np.clip(X[a:a + _CHUNK], dom.lo, dom.hi) - c
            count += y.shape[0]
            s1 += y.sum(axis=0)
            s2 += np.einsum("ij,ij->j", y, y)
        u1, u2 = np.cbrt(h / h.max()), np.cbrt((h / h.max()) ** 2)
        # Lap(β·u_i) per coordinate = u_i·(s_i/u_i + Lap(β)): through the value-aware adder (the
        # defended one in a release) with the ℓ1 sensitivities of s/u (a bare laplace() refused
        # there, so every door release of this seeding was ⊥).
        n_noisy = max(add_laplace(count, 1.0 / e3, sensitivity=1.0, rng=gen), 1.0)
        sens1, sens2 = float(np.sum(h / u1)), float(np.sum(h * h / u2))
        mean = add_laplace(s1 / u1, sens1 / e3, sensitivity=sens1, rng=gen) * u1 / n_noisy
        sq = add_laplace(s2 / u2, sens2 / e3, sensitivity=sens2, rng=gen) * u2 / n_noisy
        mean = np.clip(mean, -h, h)
        sd = np.sqrt(np.clip(sq - mean * mean, 0.0, h * h))
        self.seeding_ = None
        C = _spread_centres(mean, sd, int(self.n_clusters), gen)
        return np.clip(C, -h, h) + c, (1.0 - share) * eps

    def _maxcover_partition(self, X, eps, gen) -> tuple[float, object]:
        """Max-cover's partition on ``seed_share``·ε and δ: (DP-Lloyd's ε, the partition map).

        :meth:`MaxCoverKMeans.fit_partition` (Algorithm 2's lines 1–19, ball of the box's
        half-diagonal around its centre) releases the proxy centres S''; their partition
        (nearest S'' after the public JL projection) is DP-Lloyd's first assignment, so the
        first round's noisy sums and counts replace NoisyAVG (lines 20–22). The rest of ε goes
        to DP-Lloyd; the composition is (ε₁, δ) + ε₂ (module docstring).
        """
        if self.bounds is not None:
            lo, hi = (np.broadcast_to(np.asarray(b, dtype=float), (X.shape[1],))
                      for b in self.bounds)
            center, radius = (lo + hi) / 2.0, float(np.linalg.norm((hi - lo) / 2.0))
        else:
            center, radius = np.zeros(X.shape[1]), float(self.radius)
        n_pub = None if self.n is None else int(self.n)
        shifted = np.any(center != 0)
        mc = fit_seeding(X - center if shifted else X, int(self.n_clusters), epsilon=eps,
                         delta=float(self.delta), radius=radius, n_public=n_pub,
                         seed_share=self.seed_share, rng=gen, params=self.seeding_params)
        self.seeding_ = mc
        part = replace(mc.partition_, shift=center) if shifted else mc.partition_
        return eps - mc.privacy_.epsilon, part

    def predict(self, X) -> np.ndarray:
        """Index of the nearest learned centre for each row of X."""
        self._check_predict_X(X)
        if getattr(self, "ball_used_", False):  # nearest released centre, data's coordinates
            return nearest_center(np.asarray(X, dtype=float), self.cluster_centers_,
                                  block_rows=BLOCK_ROWS)[0]
        return self.lloyd_.predict(X)
