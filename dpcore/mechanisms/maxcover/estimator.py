"""Algorithm 2 end to end: :class:`MaxCoverKMeans`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from dpcore.core.cancel import checkpoint, substep
from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.base import DPClusterer, dense_matrix
from dpcore.data.geometry import clip_to_ball, nearest_center
from dpcore.data.limits import check_approx_range
from dpcore.data.params import (
    DELTA_POSITIVE,
    EPSILON_FINITE,
    N_CLUSTERS,
    N_PUBLIC_INT,
    PROJ_DIM,
    RADIUS_REQUIRED,
    SHARE,
    Param,
)
from dpcore.mechanisms.lloyd.estimator import cluster_sums, lloyd_statistics
from dpcore.mechanisms.lloyd.staged import SEEDING_PROGRESS, fit_lloyd_stage
from dpcore.mechanisms.maxcover.accounting import split_budget, split_seeding_budget
from dpcore.mechanisms.maxcover.averaging import (
    _clip_with_warning,
    _noisy_averages_from_statistics,
    _uniform_in_ball,
    noisy_cluster_averages,
)
from dpcore.mechanisms.maxcover.cover import SAMPLERS, ball_volume, private_grid_set_cover
from dpcore.mechanisms.maxcover.grid import jl_matrix, level_schedule, project_to_unit_ball
from dpcore.mechanisms.maxcover.proxy import noisy_candidate_counts, prune_proxy_weights
from dpcore.privacy.guarantees import ApproxDP, PrivacyLeakWarning
from dpcore.privacy.noise import postprocessing_seed

#: ``grid_stride="auto"`` keeps a cover ball at ≤ this many lattice points (≈ its volume).
AUTO_BALL_POINTS = 12.0

PRESETS = ("auto", "recommended", "paper")
#: ``preset="recommended"``: the share of ε that Algorithm 2's lines 1–19 (the seeding: the
#: partition) get; DP-Lloyd gets the rest. Chosen from 0.1–0.47 on seeds 0–9 of
#: ``benchmarks/bench_maxcover.py``'s three data sets (docs/dp_kmeans.md, "Max-cover k-means
#: followed by DP-Lloyd"): 0.2 had the lowest median cost on all three; checked on seeds 10–19.
DEFAULT_SEED_SHARE = 0.2
#: Parameters of Algorithm 2 itself, passed on to the seeding under ``preset="recommended"``.
_ALGORITHM2_PARAMS = ("approx", "budget_split", "proj_dim", "sampler", "grid_stride",
                      "em_bound", "prune_proxy")


def auto_grid_stride(approx: float, d_prime: int | None = None) -> int:
    """The default ``grid_stride`` s for approximation constant ε and projected dimension d'.

    In lattice units of the paper's grid the cover radius is ρ = (1+ε)√d'/ε; on the sub-lattice
    of stride s it is ρ/s. Two data-independent targets, the larger stride wins:

    * coverage: every point of R^{d'} lies within √d'/2 of a sub-lattice point, so ρ/s > √d'/2
      (⇔ s < 2(1+ε)/ε, s = ⌈2(1+ε)/ε⌉ − 1: 5 at ε = 0.5) leaves every point coverable at
      every level;
    * work: a ball holds ≈ vol_{d'}(ρ/s) lattice points, the per-point work of the dense
      levels; s is raised until that is ≤ :data:`AUTO_BALL_POINTS` (12), so the work per point
      does not grow with d' = ⌊ln n / 2⌋ (at ε = 0.5: s = 5, 6, 7 for d' = 4, 5, 6; the paper's
      grid has ≈ 7·10⁴ lattice points per ball at d' = 5). Where this wins (d' ≥ 6 at
      ε = 0.5), points near the centre of a sub-lattice cell are only covered at a coarser level.
    """
    s = max(1, math.ceil(2.0 * (1.0 + approx) / approx - 1e-9) - 1)
    if d_prime is not None:
        rho = (1.0 + approx) * math.sqrt(d_prime) / approx
        while ball_volume(rho / s, d_prime) > AUTO_BALL_POINTS:
            s += 1
    return s


def _resolve_stride(grid_stride: int | str, approx: float, d_prime: int | None = None) -> int:
    if grid_stride == "auto":
        return auto_grid_stride(approx, d_prime)
    if grid_stride == "paper":
        return 1
    if (
        isinstance(grid_stride, bool)
        or not isinstance(grid_stride, int | np.integer | float)
        or int(grid_stride) != grid_stride
        or grid_stride < 1
    ):
        raise ValueError(
            f"grid_stride must be a positive integer, 'auto' or 'paper', got {grid_stride!r}"
        )
    return int(grid_stride)


def _weighted_kmeans(
    C: np.ndarray, w: np.ndarray, k: int, gen: np.random.Generator, n_init: int = 3
) -> np.ndarray:
    """Line 19: non-private k-means++ + weighted Lloyd on the proxy set D'' (R^{d'}).

    D'' has at most m·k' distinct points, so plain numpy Lloyd (best of ``n_init`` k-means++
    starts) costs microseconds; scikit-learn's KMeans spent ~0.1 s per call in thread-pool set-up.
    """
    from sklearn.cluster import kmeans_plusplus

    pos = w > 0
    Cp, wp = C[pos], w[pos]
    if Cp.shape[0] <= k:  # fewer than k usable candidates: pad with uniform points of B_1(0)
        pad = _uniform_in_ball(k - Cp.shape[0], C.shape[1], 1.0, gen)
        return np.vstack([Cp, pad])
    best, best_cost = None, np.inf
    for _ in range(n_init):
        S, _ = kmeans_plusplus(Cp, k, sample_weight=wp, random_state=postprocessing_seed(gen))
        for _ in range(300):
            sums, mass = cluster_sums(Cp, nearest_center(Cp, S)[0], k, wp)
            new = np.where(mass[:, None] > 0, sums / np.maximum(mass, 1e-300)[:, None], S)
            if np.allclose(new, S, rtol=0, atol=1e-12):
                break
            S = new
        cost = float(np.dot(wp, nearest_center(Cp, S)[1]))
        if cost < best_cost:
            best, best_cost = S, cost
    return best


@dataclass(frozen=True, eq=False)
class ProxyPartition:
    """Algorithm 2's partition (lines 20–21) as a public per-row map: the nearest proxy centre.

    x ↦ argmin_j ‖y(x) − S''_j‖ with y(x) = clip_1(T (x − shift)/((1 + ε)·radius)) (lines 2–5,
    the same arithmetic as :func:`~dpcore.mechanisms.maxcover.grid.project_to_unit_ball`). The JL
    matrix T is drawn independently of the data, S'' is a function of the released proxy counts, and
    radius, ε (``approx``) and ``shift`` are public: a row's label depends on that row alone,
    so DP-Lloyd may use this map for an iteration's assignment at that iteration's ε.

    Attributes
    ----------
    projection : (d', d) array, T
    centers : (k, d') array, S''
    radius : float, the public radius of Algorithm 2's ball
    approx : float, the approximation constant ε
    shift : (d,) array or None, subtracted from rows first (the ball's centre in X's coordinates)
    """

    projection: np.ndarray
    centers: np.ndarray
    radius: float
    approx: float
    shift: np.ndarray | None = None

    def __call__(self, X) -> np.ndarray:
        """Labels (m,) of the rows of X (m, d); T·(x − c) = T·x − T·c, so no copy of X."""
        Y = np.asarray(X, dtype=float) @ self.projection.T
        if self.shift is not None:
            Y -= self.projection @ self.shift
        Y *= 1.0 / ((1.0 + self.approx) * self.radius)
        return nearest_center(clip_to_ball(Y, 1.0), self.centers)[0]


class MaxCoverKMeans(DPClusterer):
    """DP k-means by exponential-mechanism max cover on grids (Algorithms 2 and 3).

    Parameters
    ----------
    n_clusters : int
        k; ``fit`` always returns exactly k centres.
    epsilon, delta : float
        Total privacy budget (ε_p, δ_p) of Theorem 6.1 (+ final round).
    radius : float
        Public radius: the data are assumed to lie in B_radius(0) (Δ = 2·radius). Rows outside
        are clipped onto the ball with a warning.
    approx : float
        The paper's approximation constant ε ∈ (0, 1) (not a privacy parameter). Default 0.5.
    budget_split : mapping, optional
        Shares of ε_p (see :func:`split_budget`); default :data:`DEFAULT_BUDGET_SPLIT`.
    proj_dim : int, optional
        d'. Default ⌊ln(n)/2⌋ (≥ 1) as in the experiments (Sec. 7).
    n_public : int, optional
        The public n the schedule uses (r_1 = 1/n, m, d'). The paper treats n as public; by
        default the data's own n is used and a PrivacyLeakWarning says so.
    preset : {"auto", "recommended", "paper"}
        What runs after Algorithm 2. ``"paper"``: nothing, or the paper's ``final_lloyd`` /
        ``lloyd_rounds`` NoisyAVG rounds (Sec. 7) on the ``budget_split`` shares.
        ``"recommended"``: Algorithm 2's lines 1–19 (:meth:`fit_partition`: candidates,
        proxy counts, S'') on ``seed_share``·ε and all of δ, then the recommended budget-aware
        DP-Lloyd (:class:`dpcore.estimators.dpkmeans.DPKMeans`: T and the count/sum split from Su et
        al.'s error model, L2 noise on the ball) on the rest of ε, whose first round averages
        Algorithm 2's partition (lines 20–21) with DP-Lloyd's pure-ε noise instead of NoisyAVG
        (line 22) and gets one round more than the error model's T; (ε, δ)-DP by basic
        composition. ``"auto"`` (default): ``"paper"`` when ``final_lloyd``
        or ``lloyd_rounds`` is given (the paper's configuration, e.g. the reproduction's),
        else ``"recommended"``.
    seed_share : float in (0, 1), optional
        ``preset="recommended"`` only: the share of ε of Algorithm 2's lines 1–19 (default
        :data:`DEFAULT_SEED_SHARE`, 0.2).
    final_lloyd : bool
        Run one DP Lloyd round (NoisyAVG per cluster in R^d, spec §4.3) after Algorithm 2, as the
        paper's experiments do (Sec. 7); it takes the ``"lloyd"`` share of the budget.
        Selects ``preset="paper"`` under ``"auto"``.
    sampler : {"auto", "hybrid", "lazy", "incidence"}
        Implementation of the exponential mechanism over G_i (identical output distribution).
        ``"auto"`` (default): ``"hybrid"`` (near-linear time, see
        ``dpcore.mechanisms.maxcover.hybrid``) when a cover ball holds few lattice points, else
        ``"lazy"`` (the paper's grid).
    grid_stride : int, "auto" or "paper"
        ``"paper"`` (= 1) is the paper's grid. s > 1 restricts the candidates to the
        sub-lattice (s·t_i)·Z^{d'} with the same cover radius R_i: NOT in the paper, a
        data-independent restriction of the exponential mechanism's range (spec §5.3 item 8),
        so the privacy guarantee is unchanged. It divides the grid points per ball by ≈ s^{d'}.
        ``"auto"`` (default, :func:`auto_grid_stride`): s = ⌈2(1+ε)/ε⌉ − 1 (5 at ε = 0.5),
        the largest stride leaving every point within R_i of a candidate (ρ/s > √d'/2), raised
        further while a ball holds > 12 lattice points (s = 6, 7 at d' = 5, 6), so the work per
        point stays flat in n. Lemma 5.1's argument then holds with the inner radius r_i
        replaced by r_i(1 + ε − sε/2) when that is positive (a ball of that radius around any
        centre lies in the cover ball of its nearest candidate): a constant-factor change of
        the approximation, and none of the privacy.
    lloyd_rounds : int, optional
        Number of DP Lloyd rounds (NoisyAVG per cluster) after Algorithm 2, sharing the
        ``"lloyd"`` budget share equally (basic composition). Default: 1 if ``final_lloyd``
        else 0; ``lloyd_rounds > 0`` implies the ``"lloyd"`` share.
    em_bound : {"exact", "paper"}
        How Lemma 6.2 charges the candidate construction (see
        :func:`dpcore.mechanisms.maxcover.accounting.em_privacy_loss`): ``"exact"`` (default) holds
        for every ε_E; ``"paper"`` is the printed e·ε_E·ln(1/δ_E)/2, valid only for ε_E ≤ 2.
    prune_proxy : bool
        Drop candidates whose noisy count is below ln|C|/ε_L from D'' (post-processing, see
        :func:`prune_proxy_weights`; default True). False is the paper's literal line 18.
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k, d) array
    privacy_ : ApproxDP
        The whole fit's guarantee (with ``"recommended"``: lines 1–19's (ε₁, δ) + DP-Lloyd's
        ε₂).
    preset_ : str, the preset used (``preset`` resolved)
    seed_centers_ : (k, d) array, Algorithm 2's centres: its NoisyAVG averages (``"paper"``) or
        DP-Lloyd's first round, the average of its partition (``"recommended"``)
    partition_ : ProxyPartition, ``"recommended"`` / :meth:`fit_partition` only: the public map
        row ↦ nearest proxy centre that DP-Lloyd's first round uses
    lloyd_ : DPLloyd or None, the fitted DP-Lloyd stage of ``"recommended"`` (n_iter_, …)
    budget_ : BudgetSplit (of the seeding's share under ``"recommended"``, ``eps_G = 0``)
    candidates_ : (|C|, d') array, the released candidate grid points
    proxy_weights_ : (|C|,) array, the noisy counts max(0, round(n_c + Lap(1/ε_L))), pruned
        (``prune_proxy``)
    proxy_centers_ : (k, d') array S''
    schedule_ : LevelSchedule
    grid_stride_ : int, the stride used (``grid_stride`` resolved)
    stats_ : dict of work counters and each level's sampler mode (data-dependent diagnostics,
        not a DP release: do not publish them)
    n_features_in_ : int
    """

    #: Every parameter's constraint (:mod:`dpcore.data.params`), read by ``fit`` and by every
    #: other consumer; ``n_public`` and ``radius`` are the proof's public inputs.
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "n_clusters": N_CLUSTERS,
        "epsilon": EPSILON_FINITE,
        "delta": DELTA_POSITIVE,
        "radius": RADIUS_REQUIRED,
        "approx": Param("float", 0.01, 0.99, check=lambda v, name: check_approx_range(v, name),
                        doc="approximation constant ε of Algorithm 2 (not the privacy ε)"),
        "budget_split": Param("mapping", special=(None,), doc="shares of ε per step"),
        "proj_dim": PROJ_DIM,
        "n_public": N_PUBLIC_INT,
        "final_lloyd": Param("bool", doc="one NoisyAVG Lloyd round after Algorithm 2 (paper)"),
        "sampler": Param("str", choices=SAMPLERS, doc="exponential-mechanism implementation"),
        "grid_stride": Param("int", 1, 10**6, special=("auto", "paper"),
                             doc="candidate sub-lattice stride"),
        "lloyd_rounds": Param("int", 0, 1000, special=(None,),
                              doc="NoisyAVG Lloyd rounds after Algorithm 2 (paper)"),
        "em_bound": Param("str", choices=("exact", "paper"), doc="Lemma 6.2's charge"),
        "prune_proxy": Param("bool", doc="drop candidates with small noisy counts"),
        "preset": Param("str", choices=PRESETS, doc="what runs after Algorithm 2"),
        "seed_share": SHARE.also(None),
    }

    def __init__(
        self,
        n_clusters: int,
        *,
        epsilon: float,
        delta: float,
        radius: float,
        approx: float = 0.5,
        budget_split: Mapping[str, float] | None = None,
        proj_dim: int | None = None,
        n_public: int | None = None,
        final_lloyd: bool = False,
        sampler: str = "auto",
        grid_stride: int | str = "auto",
        rng: RNGLike = None,
        lloyd_rounds: int | None = None,
        em_bound: str = "exact",
        prune_proxy: bool = True,
        preset: str = "auto",
        seed_share: float | None = None,
    ) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.approx = approx
        self.budget_split = budget_split
        self.proj_dim = proj_dim
        self.n_public = n_public
        self.final_lloyd = final_lloyd
        self.sampler = sampler
        self.grid_stride = grid_stride
        self.rng = rng
        self.lloyd_rounds = lloyd_rounds
        self.em_bound = em_bound
        self.prune_proxy = prune_proxy
        self.preset = preset
        self.seed_share = seed_share

    # -- validation ---------------------------------------------------------------------------
    def _validate(self, X) -> tuple[np.ndarray, int]:
        """Check public inputs; refusals depend on public inputs only (declared n, k, ε, ...)."""
        p = self._validate_params()  # one declaration (_parameter_constraints) for every reader
        k, n_pub = p["n_clusters"], p["n_public"]
        X = dense_matrix(X)
        if X.ndim != 2 or X.shape[1] == 0:
            raise ValueError(f"X must be a 2-D array (n points × d), got shape {X.shape}")
        if not np.isfinite(X.sum()) and not np.all(np.isfinite(X)):  # no n×d temporary
            raise ValueError("X contains NaN or infinite values")
        if n_pub is not None:
            # public: compares two public inputs. The data's own size is never compared with k
            # (a refusal flipping between neighbours would be an ε = ∞ event); with fewer rows
            # than k the fit still returns k centres (the missing ones are NoisyAVG fallbacks).
            if k > n_pub:
                raise ValueError(f"n_clusters={k} exceeds the declared n_public={n_pub}")
        elif X.shape[0] == 0:
            raise ValueError("X is empty and n_public is not given (nothing to set n from)")
        if p["approx"] > 0.5:
            warnings.warn(
                f"approx={self.approx} > 0.5: the paper's utility analysis assumes ε ≤ 0.5 "
                "(its constants need 1 − ε − ε² > 0); privacy is unaffected",
                UserWarning,
                stacklevel=4,
            )
        self._preset()  # DPKMeans checks seed_share
        return _clip_with_warning(X, p["radius"]), int(k)

    def _preset(self) -> str:
        if self.preset != "auto":
            return self.preset
        paper = self.final_lloyd or self.lloyd_rounds is not None
        return "paper" if paper else "recommended"

    def _rounds(self) -> int:
        if self.lloyd_rounds is None:
            return int(bool(self.final_lloyd))
        return int(self.lloyd_rounds)

    def _start(self, X) -> tuple[np.ndarray, int, int, np.random.Generator]:
        """Validated (clipped) X, k, the public n and the generator (shared by both fits)."""
        X, k = self._validate(X)
        gen = as_generator(self.rng)
        n = X.shape[0]
        if self.n_public is None:
            warnings.warn(
                f"n_public not given: the schedule uses the data's size n={n}, which the paper "
                "treats as public (pass n_public to make that explicit)",
                PrivacyLeakWarning,
                stacklevel=3,
            )
            return X, k, n, gen
        return X, k, int(self.n_public), gen

    def fit(self, X, y=None) -> MaxCoverKMeans:
        """Run Algorithm 2 (and the optional final DP Lloyd round); returns self."""
        X, k, n_pub, gen = self._start(X)
        self.preset_ = self._preset()
        if self.preset_ == "recommended":
            return self._fit_recommended(X, k, n_pub, gen)
        self.lloyd_ = None
        radius = float(self.radius)
        rounds = self._rounds()
        budget = split_budget(
            self.epsilon,
            self.delta,
            self.budget_split,
            final_lloyd=rounds > 0,
            lloyd_rounds=max(rounds, 1),
            em_bound=self.em_bound,
        )
        Y, S2 = self._proxy_stage(X, k, n_pub, gen, budget)
        # Lines 20–22: partition D' by S'', NoisyAVG in R^d.
        lab, _ = nearest_center(Y, S2)
        centers = noisy_cluster_averages(
            X, lab, k, radius=radius, epsilon=budget.eps_G, delta=budget.delta_G, rng=gen
        )
        self.seed_centers_ = centers
        m = self.schedule_.m
        for _ in range(rounds):  # Sec. 7 / spec §4.3: DP Lloyd rounds, NoisyAVG per cluster
            checkpoint((m + 1) / (m + 2), "max-cover: DP Lloyd rounds")
            sums, counts = lloyd_statistics(X, centers)
            centers = _noisy_averages_from_statistics(
                sums,
                counts,
                radius=radius,
                epsilon=budget.eps_lloyd / rounds,
                delta=budget.delta_lloyd / rounds,
                rng=gen,
            )
        self.cluster_centers_ = centers
        self.privacy_ = budget.guarantee
        self.budget_ = budget
        return self

    def fit_partition(self, X, y=None) -> MaxCoverKMeans:
        """Algorithm 2's lines 1–19 only: the max-cover *seeding* of ``preset="recommended"``.

        Runs the candidate levels (exponential mechanism), the Laplace proxy counts and Lloyd on
        the proxy set D'' with the whole (``epsilon``, ``delta``), split by
        :func:`~dpcore.mechanisms.maxcover.accounting.split_seeding_budget` (``budget_split`` takes
        the keys ``"em"`` and ``"counts"``; all of δ goes to the exponential mechanism). Instead of
        NoisyAVG's centres it releases the partition of lines 20–21 as a public map,
        ``partition_`` (:class:`ProxyPartition`), which :class:`dpcore.estimators.dpkmeans.DPKMeans`
        hands to DP-Lloyd's first round (``DPLloyd(init_assign=...)``). ``privacy_`` is
        (L_E + ε_L, δ) = (``epsilon``, ``delta``). No ``cluster_centers_``.

        Why not NoisyAVG: its count threshold (5/ε_G)·ln(2/δ_G) and Gaussian scale
        5Δ·sqrt(2 ln(3.5/δ))/(4 ε_G m̂) are far larger than DP-Lloyd's pure-ε noise for the same
        average (at ε_G = 0.23, δ = n^−1.5, n = 20 000: clusters below ≈ 340 points fall back to
        a uniform point of the whole ball, and a 2 000-point cluster's centre moves by ≈ 2.3
        in 16-d), so its centres were poor starts that two DP-Lloyd rounds did not repair.
        """
        if self._rounds() > 0:
            raise ValueError("fit_partition runs Algorithm 2's lines 1–19 only; final_lloyd / "
                             "lloyd_rounds do not apply (use fit with preset='paper')")
        X, k, n_pub, gen = self._start(X)
        budget = split_seeding_budget(self.epsilon, self.delta, self.budget_split,
                                      em_bound=self.em_bound)
        self._proxy_stage(X, k, n_pub, gen, budget)
        self.partition_ = ProxyPartition(self.projection_, self.proxy_centers_,
                                         float(self.radius), float(self.approx))
        self.privacy_ = budget.guarantee
        self.budget_ = budget
        return self

    def _proxy_stage(self, X, k: int, n_pub: int, gen, budget) -> tuple[np.ndarray, np.ndarray]:
        """Lines 1–19 on the split ``budget``: the projected data Y and the proxy centres S''."""
        n, d = X.shape
        approx = float(self.approx)
        radius = float(self.radius)
        d_prime = int(self.proj_dim) if self.proj_dim else max(1, int(math.log(n_pub) / 2))
        # Lines 1–5: data-independent JL + public scaling + radial clip.
        T = jl_matrix(d, d_prime, gen)  # first draw of rng: identical for neighbouring data
        Y = project_to_unit_ball(X, T, radius, approx)
        d_prime = Y.shape[1]
        sched = level_schedule(n_pub, d_prime, approx)
        k_prime = math.ceil(k / approx - 1e-12)
        # Lines 8–12: Algorithm 3 at every level, finest first; covered points stay covered.
        active = np.ones(n, dtype=bool)
        stats: dict = {}
        cands = []
        stride = _resolve_stride(self.grid_stride, approx, d_prime)
        for i in range(sched.m):
            checkpoint(i / (sched.m + 2), "max-cover: candidate levels")
            b = private_grid_set_cover(
                Y,
                active,
                float(sched.t[i]) * stride,
                sched.rho / stride,
                int(sched.M[i]) // stride,
                k_prime,
                budget.eps_E,
                rng=gen,
                sampler=self.sampler,
                stats=stats,
            )
            cands.append(b * (sched.t[i] * stride))
        checkpoint(sched.m / (sched.m + 2), "max-cover: proxy data set and averages")
        # Line 14: C = ∪ C_i (exact duplicates merged: post-processing).
        C = np.unique(np.vstack(cands), axis=0)
        # Lines 13, 15–18: reset D', nearest candidate, Laplace counts (ℓ1 sensitivity 1).
        w = np.maximum(0.0, np.round(noisy_candidate_counts(Y, C, budget.eps_L, rng=gen)))
        if self.prune_proxy:
            w = prune_proxy_weights(w, k, budget.eps_L)
        # Line 19: Lloyd on D''.
        S2 = _weighted_kmeans(C, w, k, gen)
        self.candidates_ = C
        self.proxy_weights_ = w
        self.proxy_centers_ = S2
        self.schedule_ = sched
        self.proj_dim_ = d_prime
        self.projection_ = T
        self.n_features_in_ = d
        self.grid_stride_ = stride
        self.stats_ = {**stats, "levels": sched.m, "k_prime": k_prime, "candidates": C.shape[0]}
        return Y, S2

    def _fit_recommended(self, X: np.ndarray, k: int, n_pub: int, gen) -> MaxCoverKMeans:
        """``preset="recommended"``: Algorithm 2's lines 1–19 on ``seed_share``·ε and δ
        (:func:`fit_seeding`), then budget-aware DP-Lloyd on the rest
        (:func:`~dpcore.mechanisms.lloyd.staged.fit_lloyd_stage`), whose first round averages the
        released partition. The same code path as ``DPKMeans(seeding="maxcover")``. The guarantee
        is the exact basic composition of the two parts' reported guarantees.
        """
        eps = float(self.epsilon)
        with substep(0.0, SEEDING_PROGRESS):
            seed = fit_seeding(X, k, epsilon=eps, delta=float(self.delta),
                               radius=float(self.radius), n_public=n_pub,
                               seed_share=self.seed_share, rng=gen,
                               params={name: getattr(self, name) for name in _ALGORITHM2_PARAMS})
        with substep(SEEDING_PROGRESS, 1.0):
            lloyd = fit_lloyd_stage(X, k, epsilon=eps - seed.privacy_.epsilon,
                                    radius=float(self.radius), n=float(n_pub),
                                    init_assign=seed.partition_, rng=gen)
        for name in ("budget_", "candidates_", "proxy_weights_", "proxy_centers_", "schedule_",
                     "proj_dim_", "projection_", "grid_stride_", "stats_", "partition_"):
            setattr(self, name, getattr(seed, name))
        self.seed_centers_ = lloyd.history_[1]
        self.lloyd_ = lloyd
        self.cluster_centers_ = lloyd.cluster_centers_
        s = seed.privacy_
        self.privacy_ = ApproxDP(s.epsilon + lloyd.privacy_.epsilon, s.delta)
        self.n_features_in_ = X.shape[1]
        return self

    def predict(self, X) -> np.ndarray:
        """Index of the nearest released centre for each row."""
        return nearest_center(self._check_predict_X(X), self.cluster_centers_)[0]


def seed_share_of(seed_share: float | None, default: float = DEFAULT_SEED_SHARE) -> float:
    """The seeding's share of ε: ``seed_share`` checked to lie in (0, 1), or ``default``."""
    share = default if seed_share is None else seed_share
    if isinstance(share, bool) or not isinstance(share, int | float) or not 0 < share < 1:
        raise ValueError(f"seed_share must be in (0, 1), got {seed_share!r}")
    return float(share)


def fit_seeding(
    X: np.ndarray,
    k: int,
    *,
    epsilon: float,
    delta: float,
    radius: float,
    n_public: int | None,
    seed_share: float | None,
    rng,
    params: Mapping | None = None,
) -> MaxCoverKMeans:
    """Max-cover as a seeding: Algorithm 2's lines 1–19 on ``seed_share``·ε and all of δ.

    Returns the fitted :class:`MaxCoverKMeans` (``preset="paper"``, :meth:`MaxCoverKMeans.
    fit_partition`): its ``partition_`` (nearest proxy centre S'' after the public JL
    projection) is the next stage's first assignment, ``privacy_`` what the seeding spent.
    X must lie in the ball of ``radius`` around the origin (centre it first).
    """
    share = seed_share_of(seed_share)
    if not 0.0 < float(delta) < 1.0:
        raise ValueError("a max-cover seeding needs 0 < delta < 1 (it is (ε, δ)-DP)")
    return MaxCoverKMeans(k, epsilon=share * epsilon, delta=float(delta), radius=radius,
                          n_public=n_public, rng=rng, **{**(params or {}), "preset": "paper"}
                          ).fit_partition(X)
