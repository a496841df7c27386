"""Algorithm 2 end to end: :class:`MaxCoverKMeans`."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping

import numpy as np

from dpcore.geometry import nearest_center
from dpcore.lloyd import lloyd_statistics
from dpcore.maxcover.accounting import _check_approx, _check_privacy, split_budget
from dpcore.maxcover.averaging import (
    _check_radius,
    _clip_with_warning,
    _noisy_averages_from_statistics,
    _uniform_in_ball,
    noisy_cluster_averages,
)
from dpcore.maxcover.cover import private_grid_set_cover
from dpcore.maxcover.grid import jl_matrix, level_schedule, project_to_unit_ball
from dpcore.noise import laplace
from dpcore.rng import RNGLike, as_generator


def noisy_candidate_counts(
    Y: np.ndarray, C: np.ndarray, eps_L: float, *, rng: RNGLike = None
) -> np.ndarray:
    """Algorithm 2, lines 13–17: n'_c = n_c + Lap(1/ε_L), n_c = #points of the full D' nearest c.

    The count vector has ℓ1 sensitivity 1 under add/remove (proof of Theorem 6.1), so this is
    ε_L-DP. Noise is added to every candidate, including those with n_c = 0.
    """
    lab, _ = nearest_center(Y, C)
    n_c = np.bincount(lab, minlength=C.shape[0])
    return n_c + laplace(1.0 / eps_L, C.shape[0], rng=rng)


def _weighted_kmeans(C: np.ndarray, w: np.ndarray, k: int, gen: np.random.Generator):
    """Line 19: non-private k-means++ + Lloyd on the weighted proxy set D'' (R^{d'})."""
    from sklearn.cluster import KMeans

    pos = w > 0
    Cp, wp = C[pos], w[pos]
    if Cp.shape[0] <= k:  # fewer than k usable candidates: pad with uniform points of B_1(0)
        pad = _uniform_in_ball(k - Cp.shape[0], C.shape[1], 1.0, gen)
        return np.vstack([Cp, pad])
    km = KMeans(n_clusters=k, n_init=3, max_iter=300, random_state=int(gen.integers(2**31 - 1)))
    km.fit(Cp, sample_weight=wp)
    return km.cluster_centers_


class MaxCoverKMeans:
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
    final_lloyd : bool
        Run one DP Lloyd round (NoisyAVG per cluster in R^d, spec §4.3) after Algorithm 2, as the
        paper's experiments do (Sec. 7); it takes the ``"lloyd"`` share of the budget.
    sampler : {"lazy", "incidence"}
        Implementation of the exponential mechanism over G_i (identical output distribution).
    grid_stride : int
        1 (default) is the paper's grid. s > 1 restricts the candidates to the sub-lattice
        (s·t_i)·Z^{d'} with the same cover radius R_i: NOT in the paper, a data-independent
        restriction of the exponential mechanism's range (spec §5.3 item 8), so the privacy
        guarantee is unchanged, but the snapping error grows to s·t_i√d' (Lemma 5.1's utility
        bound no longer applies). It divides the grid points per ball by ≈ s^{d'}, which is
        what makes the dense levels tractable at n ≈ 10⁵ (see the reproduction report).
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k, d) array
    privacy_ : ApproxDP
    budget_ : BudgetSplit
    candidates_ : (|C|, d') array, the released candidate grid points
    proxy_weights_ : (|C|,) array, the noisy counts max(0, round(n_c + Lap(1/ε_L)))
    proxy_centers_ : (k, d') array S''
    schedule_ : LevelSchedule
    stats_ : dict of work counters (not private: diagnostics only)
    """

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
        sampler: str = "lazy",
        grid_stride: int = 1,
        rng: RNGLike = None,
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

    # -- validation ---------------------------------------------------------------------------
    def _validate(self, X) -> tuple[np.ndarray, int]:
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
            raise ValueError(f"X must be a non-empty 2-D array (n points × d), got {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinite values")
        k = self.n_clusters
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise ValueError(f"n_clusters must be a positive integer, got {k!r}")
        if k > X.shape[0]:
            raise ValueError(f"n_clusters={k} exceeds the number of points n={X.shape[0]}")
        if _check_approx(self.approx) > 0.5:
            warnings.warn(
                f"approx={self.approx} > 0.5: the paper's utility analysis assumes ε ≤ 0.5 "
                "(its constants need 1 − ε − ε² > 0); privacy is unaffected",
                UserWarning,
                stacklevel=3,
            )
        _check_privacy(self.epsilon, self.delta)
        radius = _check_radius(self.radius)
        if self.sampler not in ("lazy", "incidence"):
            raise ValueError(f"sampler must be 'lazy' or 'incidence', got {self.sampler!r}")
        if (
            isinstance(self.grid_stride, bool)
            or int(self.grid_stride) != self.grid_stride
            or (self.grid_stride < 1)
        ):
            raise ValueError(f"grid_stride must be a positive integer, got {self.grid_stride!r}")
        if self.proj_dim is not None and (int(self.proj_dim) != self.proj_dim or self.proj_dim < 1):
            raise ValueError(f"proj_dim must be a positive integer or None, got {self.proj_dim!r}")
        return _clip_with_warning(X, radius), int(k)

    def fit(self, X, y=None) -> MaxCoverKMeans:
        """Run Algorithm 2 (and the optional final DP Lloyd round); returns self."""
        X, k = self._validate(X)
        gen = as_generator(self.rng)
        n, d = X.shape
        if self.n_public is None:
            from dpcore.privacy import PrivacyLeakWarning

            warnings.warn(
                f"n_public not given: the schedule uses the data's size n={n}, which the paper "
                "treats as public (pass n_public to make that explicit)",
                PrivacyLeakWarning,
                stacklevel=2,
            )
            n_pub = n
        else:
            n_pub = int(self.n_public)
        approx = float(self.approx)
        radius = float(self.radius)
        budget = split_budget(
            self.epsilon, self.delta, self.budget_split, final_lloyd=self.final_lloyd
        )
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
        stride = int(self.grid_stride)
        for i in range(sched.m):
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
        # Line 14: C = ∪ C_i (exact duplicates merged: post-processing).
        C = np.unique(np.vstack(cands), axis=0)
        # Lines 13, 15–18: reset D', nearest candidate, Laplace counts (ℓ1 sensitivity 1).
        w = np.maximum(0.0, np.round(noisy_candidate_counts(Y, C, budget.eps_L, rng=gen)))
        # Line 19: Lloyd on D''; lines 20–22: partition D' by S'', NoisyAVG in R^d.
        S2 = _weighted_kmeans(C, w, k, gen)
        lab, _ = nearest_center(Y, S2)
        centers = noisy_cluster_averages(
            X, lab, k, radius=radius, epsilon=budget.eps_G, delta=budget.delta_G, rng=gen
        )
        if self.final_lloyd:  # Sec. 7 / spec §4.3: one DP Lloyd round, NoisyAVG per cluster
            sums, counts = lloyd_statistics(X, centers)
            centers = _noisy_averages_from_statistics(
                sums,
                counts,
                radius=radius,
                epsilon=budget.eps_lloyd,
                delta=budget.delta_lloyd,
                rng=gen,
            )
        self.cluster_centers_ = centers
        self.privacy_ = budget.guarantee
        self.budget_ = budget
        self.candidates_ = C
        self.proxy_weights_ = w
        self.proxy_centers_ = S2
        self.schedule_ = sched
        self.proj_dim_ = d_prime
        self.projection_ = T
        self.n_features_in_ = d
        self.stats_ = {**stats, "levels": sched.m, "k_prime": k_prime, "candidates": C.shape[0]}
        return self

    def predict(self, X) -> np.ndarray:
        """Index of the nearest released centre for each row."""
        if not hasattr(self, "cluster_centers_"):
            raise ValueError("this MaxCoverKMeans is not fitted yet; call fit(X) first")
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X must have shape (n, {self.n_features_in_}), got {X.shape}")
        return nearest_center(X, self.cluster_centers_)[0]

    def fit_predict(self, X, y=None) -> np.ndarray:
        return self.fit(X).predict(X)
