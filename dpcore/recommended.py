"""The recommended DP k-means of dpcore: box-aware, budget-aware DP-Lloyd.

:class:`DPKMeans` is weighted DP-Lloyd (Su et al. 2016; Fay, Mair & Sjölund 2024, Algorithm 2)
configured from the public information an analyst has:

* a per-feature box ``bounds=(lo, hi)`` (or the paper's ball ``radius=``): clamping, the sum
  noise and its sensitivity come from the box (:mod:`dpcore.kmeans_domain`: per-coordinate
  Laplace with a weighted-ℓ1 sensitivity or the L2-exponential noise with the half-diagonal,
  whichever has less noise);
* the budget: the count/sum split minimises a noisy centre's error
  (:func:`~dpcore.kmeans_domain.auto_count_share`) and T is the most rounds whose predicted
  centre error stays within 1 % of the domain (:func:`~dpcore.kmeans_domain.error_budget_n_iter`,
  3 ≤ T ≤ 10), both from Su et al.'s (2016) error model and measured in
  ``benchmarks/bench_kmeans.py``;
* optionally a private seeding (``seeding="maxcover"``: :class:`dpcore.maxcover.MaxCoverKMeans`
  on a share of the budget, then DP-Lloyd from its centres; (ε, δ)-DP by basic composition).
  It is **off by default** because it did not measurably help: on the KDD-like set at ε = 1
  (share 0.2, δ = 1e-6, ``grid_stride=8``) the cost was 1.609× non-private against 1.606× without
  seeding, and the seeding took 490 s per fit on 200,000 × 38 rows (this round's max-cover).

n is public: declare it (``n=``, or estimate it privately with
:func:`dpcore.bounds.private_row_count` and pay for it); otherwise it is read off the data with a
:class:`~dpcore.privacy.PrivacyLeakWarning`.

Example
-------
>>> import numpy as np
>>> from dpcore.recommended import DPKMeans
>>> X = np.random.default_rng(0).uniform(0, 10, size=(5000, 3))
>>> km = DPKMeans(4, epsilon=1.0, bounds=(0.0, 10.0), n=5000, rng=0).fit(X)
>>> km.cluster_centers_.shape, str(km.privacy_)
((4, 3), 'ε = 1 (pure DP)')
"""

from __future__ import annotations

import math

import numpy as np

from dpcore.kmeans_domain import declared_n
from dpcore.lloyd import DPLloyd
from dpcore.privacy import ApproxDP, PureDP
from dpcore.privacy_grid import DEFAULT_GRID
from dpcore.rng import RNGLike, as_generator

__all__ = ["DPKMeans"]

class DPKMeans:
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
        T; "auto" = :func:`dpcore.kmeans_domain.error_budget_n_iter`.
    count_share : float or "auto"
        Share of each round's ε for the counts; "auto" = the error-minimising share.
    sum_noise : "auto", "l2" or "laplace"
        Box only (see :func:`dpcore.kmeans_domain.box_domain`).
    sampler, sample_size : optional
        Importance sampling as in :class:`~dpcore.lloyd.DPLloyd`; ``sampler="privacy"`` uses the
        one-pass histogram calibration (:mod:`dpcore.privacy_grid`).
    seeding : None or "maxcover"
        Private initial centres from :class:`dpcore.maxcover.MaxCoverKMeans` (ball of the box's
        half-diagonal around its centre) with ``seed_share`` of ε and ``delta``.
    seed_share : float in (0, 1)
    delta : float
        δ of the max-cover seeding (0 without seeding).
    seeding_params : dict, optional
        Extra keyword arguments for MaxCoverKMeans (e.g. ``grid_stride``).
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k, d) array
    privacy_ : PureDP or ApproxDP (with seeding)
    lloyd_ : DPLloyd, the fitted DP-Lloyd stage (n_iter_, count_share_, domain_, …)
    seeding_ : MaxCoverKMeans or None
    """

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
        seeding: str | None = None,
        seed_share: float = 0.2,
        delta: float = 0.0,
        seeding_params: dict | None = None,
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
        self.rng = rng

    def fit(self, X, y=None) -> DPKMeans:
        """Fit on X (rows outside the public domain are clipped, with a warning)."""
        X = DPLloyd._check_X(X)
        if self.bounds is None and self.radius is None:
            raise ValueError("DPKMeans needs public bounds=(lo, hi) or radius=")
        if self.seeding not in (None, "maxcover"):
            raise ValueError(f"seeding must be None or 'maxcover', got {self.seeding!r}")
        eps = float(self.epsilon)
        if math.isnan(eps) or eps <= 0:
            raise ValueError(f"epsilon must be > 0 (inf for no noise), got {self.epsilon!r}")
        k = self.n_clusters
        gen = as_generator(self.rng)
        t, n_pub = self.n_iter, self.n
        if t == "auto":  # resolved by DPLloyd (error_budget_n_iter), which needs a public n
            n_pub = declared_n(self.n, X.shape[0], why="DPKMeans(n_iter='auto')")
            t = None
        init, eps_lloyd, self.seeding_ = "random_ball", eps, None
        if self.seeding == "maxcover":
            init, eps_lloyd = self._maxcover_seeds(X, eps, gen)
        lloyd = DPLloyd(
            k, epsilon=eps_lloyd, bounds=self.bounds, radius=self.radius, n=n_pub,
            sum_noise=self.sum_noise, n_iter=t, preset="auto", count_share=self.count_share,
            sampler=self.sampler, sample_size=self.sample_size,
            q_grid=DEFAULT_GRID if self.sampler == "privacy" else None, diagnostics=False,
            init=init, rng=gen,
        ).fit(X)
        self.lloyd_ = lloyd
        self.cluster_centers_ = lloyd.cluster_centers_
        self.n_iter_, self.count_share_ = lloyd.n_iter_, lloyd.count_share_
        self.n_features_in_ = X.shape[1]
        if self.seeding_ is None:
            self.privacy_ = PureDP(lloyd.privacy_.epsilon)
        else:  # basic composition of the seeding's (ε₁, δ) with DP-Lloyd's ε₂
            s = self.seeding_.privacy_
            self.privacy_ = ApproxDP(s.epsilon + lloyd.privacy_.epsilon, s.delta)
        return self

    def _maxcover_seeds(self, X, eps, gen) -> tuple[np.ndarray, float]:
        from dpcore.maxcover import MaxCoverKMeans

        share = float(self.seed_share)
        if not 0.0 < share < 1.0:
            raise ValueError(f"seed_share must be in (0, 1), got {self.seed_share!r}")
        if not 0.0 < float(self.delta) < 1.0:
            raise ValueError("seeding='maxcover' needs 0 < delta < 1 (it is (ε, δ)-DP)")
        if self.bounds is not None:
            lo, hi = (np.broadcast_to(np.asarray(b, dtype=float), (X.shape[1],))
                      for b in self.bounds)
            center, radius = (lo + hi) / 2.0, float(np.linalg.norm((hi - lo) / 2.0))
        else:
            center, radius = np.zeros(X.shape[1]), float(self.radius)
        n_pub = None if self.n is None else int(self.n)
        mc = MaxCoverKMeans(self.n_clusters, epsilon=share * eps, delta=float(self.delta),
                            radius=radius, n_public=n_pub, rng=gen,
                            **(self.seeding_params or {})).fit(X - center)
        self.seeding_ = mc
        return mc.cluster_centers_ + center, (1.0 - share) * eps

    def predict(self, X) -> np.ndarray:
        """Index of the nearest learned centre for each row of X."""
        if not hasattr(self, "lloyd_"):
            raise ValueError("this DPKMeans is not fitted yet; call fit(X) first")
        return self.lloyd_.predict(X)
