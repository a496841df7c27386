"""LSH_Clustering: private k-means by a private LSH prefix tree (Chang & Kamath 2021 [CK21]).

FriendlyCore's clustering baseline (Tsfadia et al. 2022, Sec. 6.2) is Google's open-source
implementation in ``google/differential-privacy``, ``learning/clustering``. This module is our own
re-implementation of that algorithm, written from its description (no code copied):

1. Clip every point to the public ball of radius Λ (``radius``).
2. Draw ``max_depth`` random Gaussian directions v_1 … v_D (SimHash). A point's hash bit at level
   ℓ is 1 if ⟨x, v_ℓ⟩ < 0, else 0; a node at depth ℓ is a hash prefix of length ℓ.
3. Root count: n + discrete Laplace noise. Tree thresholds (Google's default heuristic):
   ``min_node = max(1, min(⌊10 √d α⌋, root_count // (2k)))`` with α = σ/Λ the sum-noise
   multiplier, and ``min_branch = 3 min_node``.
4. Level by level: every node whose noisy count ≥ ``min_branch`` gets **both** children (empty or
   not), each with a fresh noisy count; children with noisy count < ``min_node`` are dropped.
   A node with no child left is a leaf.
5. Each leaf releases (sum of its points + N(0, σ² I_d)) / (its noisy count), clipped to the
   ball: the private coreset, weighted by the leaves' noisy counts.
6. Non-private weighted k-means++ (scikit-learn) on the coreset (post-processing).

**Privacy** (add/remove one point, ‖x‖ ≤ Λ). Each point lies in at most one node per level, so
the counts of one level are one ε_c-DP discrete Laplace release (parameter a = ε_c; pmf ∝ e^{−a|z|})
and there are D + 1 levels; it lies in at most one leaf, so the leaf sums are one Gaussian
release with ℓ2 sensitivity Λ. Google calibrates the single knob α (σ = αΛ, a = 1/(20α)) with
the PLD accountant; we calibrate the same knob with zCDP composition (each ε_c-DP count level is
ε_c²/2-zCDP, the Gaussian 1/(2α²)-zCDP; ρ → (ε, δ) by ρ + 2√(ρ ln(1/δ))), which is looser, so
this version adds somewhat **more** noise than Google's at the same (ε, δ)
(:attr:`noise_multiplier_`
states how much; it is a disadvantage to the baseline, never a privacy gain).

**Noise in a release** (:func:`dpcore.privacy.noise.defended_noise`, the release door). All noise
goes through the adders of :mod:`dpcore.privacy.noise`. The counts get
:func:`~dpcore.privacy.noise.add_discrete_laplace`: the exact discrete Laplace of Canonne, Kamath
& Steinke (2020) with parameter a' ≤ a, so each count level stays ε_c-DP (a'·1 ≤ a = ε_c). The
leaf sums get :func:`~dpcore.privacy.noise.add_gaussian` once, all leaves together: the sums are
rounded to a grid λℤ (λ a power of two ≤ ηΛ/√s, s the number of coordinates) and the exact
discrete Gaussian with σ/λ is added, which is (Λ/λ + √s)²λ²/(2σ²) ≤ (1 + η)²/(2α²)-zCDP
(CKS 2020, the same ρ as the continuous Gaussian at an integer sensitivity). The total ρ is then
at most (1 + η)² times the nominal one and ε(ρ) = ρ + 2√(ρ ln(1/δ)) at most (1 + η)² times the
nominal ε: the slack the door charges (:class:`~dpcore.privacy.noise.NoiseDefence`), so the
reported (ε, δ) and the charged (ε(1 + η)², δ) hold. Outside a release (explore mode, the
experiments) the adders draw what this module drew before (numpy geometric differences and
``Generator.normal``): the same seeded streams.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from scipy.optimize import brentq

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.base import DPClusterer, dense_matrix
from dpcore.data.geometry import clip_to_ball
from dpcore.data.params import (
    DELTA_POSITIVE,
    EPSILON_FINITE,
    N_CLUSTERS,
    RADIUS_REQUIRED,
    Param,
)
from dpcore.privacy.guarantees import ApproxDP, zcdp_to_epsilon
from dpcore.privacy.noise import (
    add_discrete_laplace,
    add_gaussian,
    postprocessing_seed,
    public_randomness,
)

__all__ = ["LSHClustering", "lsh_noise_parameters"]

LAPLACE_MULTIPLIER = 20.0  # Google's default: count parameter a = 1 / (20 α)


@public_randomness("SimHash directions of the LSH tree: independent of the data")
def _simhash_directions(depth: int, d: int, gen: np.random.Generator) -> np.ndarray:
    return gen.standard_normal((depth, d))


def _counts(codes: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """How many entries of ``codes`` equal each entry of ``nodes`` (vectorised)."""
    order = np.argsort(nodes)
    pos = np.clip(np.searchsorted(nodes[order], codes), 0, nodes.size - 1)
    hit = nodes[order][pos] == codes
    out = np.zeros(nodes.size)
    np.add.at(out, order[pos[hit]], 1.0)
    return out


def _zcdp_rho(alpha: float, levels: int) -> float:
    a = 1.0 / (LAPLACE_MULTIPLIER * alpha)
    return 1.0 / (2.0 * alpha**2) + levels * a**2 / 2.0


def lsh_noise_parameters(epsilon: float, delta: float, max_depth: int) -> tuple[float, float]:
    """(α, a): the smallest sum-noise multiplier α = σ/Λ and the count parameter a = 1/(20α)
    such that the Gaussian leaf sums and the ``max_depth + 1`` count levels compose to
    (ε, δ)-DP under zCDP accounting."""
    levels = max_depth + 1

    def gap(log_alpha: float) -> float:
        return zcdp_to_epsilon(_zcdp_rho(math.exp(log_alpha), levels), delta) - epsilon

    alpha = math.exp(brentq(gap, math.log(1e-6), math.log(1e8), xtol=1e-10))
    alpha *= 1.0 + 1e-9  # land on the private side of the root
    return alpha, 1.0 / (LAPLACE_MULTIPLIER * alpha)


class LSHClustering(DPClusterer):
    """Private k-means by an LSH prefix tree ([CK21], Google's ``private_lsh_clustering``).

    Parameters
    ----------
    n_clusters : int
    epsilon, delta : float
        The (ε, δ)-DP guarantee (add/remove one point).
    radius : float
        Public Λ: points are clipped to the ball of this radius around the origin.
    max_depth : int
        Tree depth D (Google's default 20).
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k', d) array
        k' = min(k, number of coreset points), as in Google's implementation.
    privacy_ : ApproxDP
    coreset_, coreset_weights_ : arrays
        The private coreset (leaf averages) and their noisy counts.
    noise_multiplier_ : float
        α = σ/Λ of the leaf sums; ``count_parameter_`` is a.
    n_features_in_ : int
    """

    #: Every parameter's constraint (:mod:`dpcore.data.params`), read by ``fit`` and by every
    #: other consumer; ``radius`` (Λ) is the proof's public input.
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "n_clusters": N_CLUSTERS,
        "epsilon": EPSILON_FINITE,
        "delta": DELTA_POSITIVE,
        "radius": RADIUS_REQUIRED,
        "max_depth": Param("int", 1, 62, doc="depth D of the LSH prefix tree"),
    }

    def __init__(self, n_clusters: int, *, epsilon: float, delta: float, radius: float,
                 max_depth: int = 20, rng: RNGLike = None) -> None:
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.max_depth = max_depth
        self.rng = rng

    def _check(self, X) -> np.ndarray:
        self._validate_params()  # one declaration (_parameter_constraints) for every reader
        X = dense_matrix(X)
        # An empty table is a table (n = 0 is private): the noisy counts and sums of the tree
        # are then pure noise, and the release is made like any other (refusing would be a ⊥
        # that reveals n = 0 to a neighbour of one row).
        if X.ndim != 2 or X.shape[1] == 0:
            raise ValueError(f"X must be a 2-D array (n, d) with d ≥ 1, got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinite values; drop or impute them first")
        return X

    def fit(self, X, y=None) -> LSHClustering:
        """Build the private coreset and cluster it (steps 1–6 of the module doc)."""
        from sklearn.cluster import KMeans

        gen = as_generator(self.rng)
        coreset, weights = self.private_coreset(X, gen)
        km = KMeans(n_clusters=min(int(self.n_clusters), len(coreset)), init="k-means++",
                    n_init=1, random_state=postprocessing_seed(gen))
        km.fit(coreset, sample_weight=weights)
        self.cluster_centers_ = km.cluster_centers_
        self.privacy_ = ApproxDP(float(self.epsilon), float(self.delta))
        self.n_features_in_ = coreset.shape[1]
        return self

    def private_coreset(self, X, rng: RNGLike = None) -> tuple[np.ndarray, np.ndarray]:
        """Steps 1–5: the private coreset (leaf averages) and its weights (noisy leaf counts).

        Everything :meth:`fit` releases is a function of these two arrays; the privacy audits
        test them directly.
        """
        X = self._check(X)
        gen = as_generator(rng)
        k, depth, lam = int(self.n_clusters), int(self.max_depth), float(self.radius)
        alpha, a = lsh_noise_parameters(self.epsilon, self.delta, depth)
        X = clip_to_ball(X, lam)
        n, d = X.shape
        bits = (X @ _simhash_directions(depth, d, gen).T < 0).astype(np.int64)  # (n, D) SimHash

        root = max(1.0, float(add_discrete_laplace(n, a, rng=gen)))
        min_node = max(1, min(int(10.0 * math.sqrt(d) * alpha), int(root // (2 * k))))
        min_branch = 3 * min_node

        # codes[:, l] = the point's hash prefix of length l as an integer (its node at level l).
        codes = np.zeros((n, depth + 1), dtype=np.int64)
        for level in range(depth):
            codes[:, level + 1] = 2 * codes[:, level] + bits[:, level]
        nodes, counts = np.zeros(1, dtype=np.int64), np.array([root])
        leaves: list[tuple[int, np.ndarray, np.ndarray]] = []  # (level, prefixes, noisy counts)
        level = 0
        while level < depth:
            branch = counts >= min_branch
            leaves.append((level, nodes[~branch], counts[~branch]))
            parents, parent_counts = nodes[branch], counts[branch]
            if parents.size == 0:
                nodes = nodes[:0]
                break
            # Both children of every branching node get a noisy count, empty or not, so which
            # counts are released depends on the data only through released counts.
            children = np.concatenate([2 * parents, 2 * parents + 1])
            noisy = add_discrete_laplace(_counts(codes[:, level + 1], children), a, rng=gen)
            keep = noisy >= min_node
            childless = ~(keep[: parents.size] | keep[parents.size:])
            leaves.append((level, parents[childless], parent_counts[childless]))
            nodes, counts = children[keep], noisy[keep]
            level += 1
        leaves.append((level, nodes, counts))

        # Each point lies in at most one leaf: one Gaussian release of all leaf sums (ℓ2
        # sensitivity Λ), through the defended adder (module docstring, "Noise in a release").
        sums, weights = [], []
        for lev, prefixes, cnt in leaves:
            if prefixes.size == 0:
                continue
            order = np.argsort(prefixes)
            pos = np.clip(np.searchsorted(prefixes[order], codes[:, lev]), 0, prefixes.size - 1)
            member = prefixes[order][pos] == codes[:, lev]
            leaf_sums = np.zeros((prefixes.size, d))
            np.add.at(leaf_sums, order[pos[member]], X[member])
            sums.append(leaf_sums)
            weights.append(np.maximum(cnt, 1.0))
        if sums:
            weights = np.concatenate(weights)
            noisy = add_gaussian(np.concatenate(sums), alpha * lam, sensitivity=lam, rng=gen)
            centres = noisy / weights[:, None]
        else:
            centres, weights = np.zeros((1, d)), np.ones(1)
        self.coreset_, self.coreset_weights_ = clip_to_ball(centres, lam), weights
        self.noise_multiplier_, self.count_parameter_ = alpha, a
        self.min_points_in_node_, self.min_points_in_branching_node_ = min_node, min_branch
        return self.coreset_, self.coreset_weights_

    def predict(self, X) -> np.ndarray:
        """Index of the nearest centre of each row."""
        from dpcore.data.geometry import nearest_center

        return nearest_center(self._check_predict_X(X), self.cluster_centers_)[0]
