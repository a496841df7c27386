"""Balcan, Dick, Liang, Mou & Zhang (ICML 2017): private k-means in high-dimensional spaces.

The max-cover paper's (seed 003) only private baseline (spec ``maxcover_kmeans.md`` §1.7,
§4.3–4.4). Re-implemented from the algorithm's structure as paper 003 and the authors' public
MATLAB code (``mouwenlong/dp-clustering-icml17``, read only) describe it; no code copied.

Steps (add/remove-one neighbours, data in the public ball B_radius(0)):

1. **JL projection** to p = ⌊½ ln n⌋ dimensions with a data-independent N(0, 1)/√p matrix
   (identity when d ≤ p, as the MATLAB code does for d ≤ 5), then radial clipping to the public
   ball of radius r_p (below). Costs nothing.
2. **Candidate centres** (:func:`private_partition`): a recursive 2^p-ary partition of the cube
   [−r_p, r_p]^p. Every child of an active cell gets a noisy count n_c + Lap(1/ε_ℓ) and is active
   when it exceeds γ = 2 ln(n)/ε_ℓ; the centres of all active cells are candidates. Repeated on
   ``n_shifts`` randomly shifted copies of the data (the shift is public randomness) plus the
   unshifted one. Candidates of a cell are the cell's centre (shifted back).
3. **Private local search** (:func:`private_local_search`, Gupta et al. 2010 as used by the
   paper): start from k uniformly drawn candidates; T = min(k, 20) times, pick one swap
   (centre i → candidate j) by the exponential mechanism with score −cost(new set) (sensitivity
   Λ² = (2 r_p)², a point's largest squared distance to a candidate; monotone under add/remove);
   finally pick one of the T recorded centre sets by the exponential mechanism on the same
   score.
4. **Recovery** in R^d: each point goes to its nearest local-search centre (in R^p) and every
   cluster's mean is released by NoisyAVG (paper 003's Algorithm 1; disjoint clusters, parallel
   composition); then ``lloyd_rounds`` DP Lloyd rounds (nearest released centre in R^d,
   NoisyAVG). This is paper 003's corrected variant (Sec. 7: NoisyAVG instead of the Laplace
   average with the *exact* count of the MATLAB code, then one DP Lloyd round), the default.
   ``recovery="laplace"`` is the paper's own Laplace average, with a **noisy** count as in its
   pseudocode (the exact count of the MATLAB code is not private): pure ε-DP.

**Budget** (:func:`balcan_budget`; default :data:`DEFAULT_SPLIT`): shares of ε for
``candidates`` (split equally between the 1 + ``n_shifts`` partitions, then equally between the
L levels of each: every point lies in one cell per level, so one level's counts are ε_ℓ-DP),
``local_search`` (split equally between the T + 1 exponential mechanisms), ``recovery`` and
``lloyd`` (split equally between the rounds). δ is used only by NoisyAVG: δ/2 for the recovery,
δ/2 for the Lloyd rounds. Basic composition: the shares sum to the claim (ε, δ) exactly
(``privacy_``); with ``recovery="laplace"`` it is (ε, 0). NoisyAVG is only proven for ε ≤ 1/3
per call: a larger share is clamped to 1/3 with a warning (as in MaxCoverKMeans), and
``privacy_`` states the smaller total actually spent.

**Inferred where the paper and its code leave things open** (spec §4.4 names only the structure):

* Budget split: the MATLAB code gives candidates 2ε/3, local search ε/12, recovery ε/6 and each
  of its 3 Lloyd rounds ε/6 (1.42ε in total, it over-spends). We keep its candidates : local
  search ratio 8 : 1 and give recovery and the single Lloyd round 0.25ε each, the same shares
  as MaxCoverKMeans' default averaging and final round, so both algorithms' last two steps cost
  the same: candidates 4/9, local search 1/18, recovery 1/4, Lloyd 1/4.
* Levels per partition L = ⌈ln n⌉ − 1 (the code's ``while depth < log(n)``) with the level
  budget ε_ℓ = ε_part/L (the code uses ε/(2 ln n), i.e. it charges 2ε_ℓ per level, the
  replace-one cost; we use add/remove like the rest of dpcore). Threshold γ = 2 ln(n)/ε_ℓ as in
  the code (an empty cell becomes active with probability n^-2/2).
* Every child of an active cell gets a noisy count, empty or not (the code only tests non-empty
  children, which is only (ε, δ)-private); cells are indexed by the signs of (point − centre),
  so every point lies in exactly one cell per level even outside the nominal cube (the code's
  root cube is not reset between partitions, a bug we do not reproduce). Shifts are uniform in
  [−r_p/2, r_p/2]^p; all active cells (also those of the last level) are candidates.
* r_p: the public clipping radius after projection, radius·sqrt(χ²_p(0.99)/p) (99 % of a fixed
  vector's projected norm; the code uses the data's own range, which is not private); radius
  itself when nothing is projected. Λ = 2 r_p (the code uses 2·range, also read off the data).
* The exponential mechanism is the code's exp(−ε'·cost/Λ²), without the general form's factor
  2: under add/remove neighbours every candidate set's cost moves in the same direction (adding
  a point adds a term in [0, Λ²] to all of them), so the one-sided form is ε'-DP
  (``monotonic=True`` of :func:`dpcore.privacy.noise.exponential_mechanism`). Under replace-one it
  would cost 2ε'.
* T = min(k, 20) swaps and k uniform initial candidates (with repetition), as in the code.
* ``lloyd_rounds=1`` (paper 003; the code runs 3).

**Engineering deviation**: the local search costs ~(T + 1)·m·n. The paper and the code keep every
active cell, which at ε = 10 and n = 200,000 (2-d) is ~2,400 candidates, 100 s and 7.5 GB. By
default (``max_candidates="auto"``) the candidates are capped from the public n and k so that
the work stays ≤ 1.5·10⁸ (≈ 2 s at the ~14 ns a unit measured), keeping the cells with the
largest released noisy counts (post-processing: no privacy cost), and the distances are held
in blocks of bounded size.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import ClassVar

import numpy as np
from scipy import stats

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.base import DPClusterer, dense_matrix
from dpcore.data.geometry import clip_to_ball, nearest_center, squared_distances
from dpcore.data.params import (
    DELTA_POSITIVE,
    EPSILON,
    N_CLUSTERS,
    N_PUBLIC_INT,
    PROJ_DIM,
    RADIUS_REQUIRED,
    Param,
)
from dpcore.mechanisms.maxcover.accounting import NOISY_AVG_MAX_EPSILON
from dpcore.mechanisms.maxcover.averaging import noisy_cluster_averages
from dpcore.mechanisms.maxcover.grid import jl_matrix
from dpcore.privacy.guarantees import ApproxDP, PrivacyLeakWarning
from dpcore.privacy.noise import add_laplace, exponential_mechanism, public_randomness

__all__ = [
    "DEFAULT_SPLIT",
    "Balcan17Budget",
    "Balcan17KMeans",
    "balcan_budget",
    "partition_levels",
    "private_local_search",
    "private_partition",
    "projected_radius",
]

#: Default shares of ε (module doc, "Inferred"): MATLAB's 8 : 1 candidates : local search, and
#: MaxCoverKMeans' 0.25 / 0.25 for the NoisyAVG recovery and the final DP Lloyd round.
DEFAULT_SPLIT: dict[str, float] = {
    "candidates": 4.0 / 9.0, "local_search": 1.0 / 18.0, "recovery": 0.25, "lloyd": 0.25,
}
RECOVERIES = ("noisyavg", "laplace")
MAX_CHILD_BITS = 16  # 2^p children per active cell: p ≤ 16 keeps that enumerable


@dataclass(frozen=True)
class Balcan17Budget:
    """Per-step privacy parameters (module doc, "Budget"); ``guarantee`` is their sum."""

    eps_candidates: float
    eps_local_search: float
    eps_recovery: float
    eps_lloyd: float
    delta_recovery: float
    delta_lloyd: float

    @property
    def guarantee(self) -> ApproxDP:
        eps = self.eps_candidates + self.eps_local_search + self.eps_recovery + self.eps_lloyd
        return ApproxDP(eps, self.delta_recovery + self.delta_lloyd)


def balcan_budget(epsilon: float, delta: float, split: Mapping[str, float] | None = None, *,
                  lloyd_rounds: int = 1, recovery: str = "noisyavg") -> Balcan17Budget:
    """Split (ε, δ) into the four steps' budgets (basic composition sums back to (ε, δ)).

    Raises ValueError naming ``budget_split`` when the shares are malformed. A NoisyAVG call
    whose share exceeds ε = 1/3 (Theorem 2.6 of paper 003 proves NoisyAVG only up to 1/3) gets
    1/3 with a warning, as in MaxCoverKMeans: the guarantee is then below the requested ε.
    """
    keys = set(DEFAULT_SPLIT) if lloyd_rounds > 0 else set(DEFAULT_SPLIT) - {"lloyd"}
    if split is None:  # the default without its Lloyd share when there are no Lloyd rounds
        total = sum(DEFAULT_SPLIT[k] for k in keys)
        split = {k: DEFAULT_SPLIT[k] / total for k in keys}
    split = dict(split)
    if set(split) != keys:
        raise ValueError(f"budget_split must have exactly the keys {sorted(keys)}, got "
                         f"{sorted(split)}")
    vals = np.array([float(v) for v in split.values()])
    if not np.all(np.isfinite(vals)) or np.any(vals <= 0) or abs(vals.sum() - 1.0) > 1e-9:
        raise ValueError(f"budget_split shares must be > 0 and sum to 1, got {split}")
    eps_rec = split["recovery"] * epsilon
    eps_ll = split.get("lloyd", 0.0) * epsilon
    if recovery == "noisyavg":
        eps_rec = _clamp_noisy_avg(eps_rec, "recovery")
        rounds = max(lloyd_rounds, 1)
        eps_ll = rounds * _clamp_noisy_avg(eps_ll / rounds, "lloyd")
        d_rec, d_ll = (delta / 2, delta / 2) if lloyd_rounds > 0 else (delta, 0.0)
    else:
        d_rec = d_ll = 0.0
    return Balcan17Budget(split["candidates"] * epsilon, split["local_search"] * epsilon,
                          eps_rec, eps_ll, d_rec, d_ll)


def projected_radius(radius: float, d: int, p: int) -> float:
    """Public radius r_p the projected points are clipped to (module doc, "Inferred")."""
    if p >= d:
        return float(radius)
    return float(radius) * math.sqrt(stats.chi2.ppf(0.99, p) / p)


def partition_levels(n_public: int) -> int:
    """L = ⌈ln n⌉ − 1 levels of splitting (≥ 1), the MATLAB code's ``depth < log(n)``."""
    return max(1, math.ceil(math.log(max(n_public, 2))) - 1)


def private_partition(Y: np.ndarray, *, half_side: float, levels: int, eps_level: float,
                      threshold: float, rng: RNGLike = None,
                      return_counts: bool = False) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Centres of the active cells of one private recursive partition (step 2), root included.

    The root cube is centred at 0 with half side ``half_side``. At every level each of the 2^p
    children of every active cell gets ``count + Lap(1/eps_level)`` and is active when that
    exceeds ``threshold``. A point lies in one child per level, so the counts of one level have
    ℓ1 sensitivity 1: ``levels`` levels cost ``levels · eps_level`` (basic composition).
    With ``return_counts`` also the released noisy count of each centre (the root's is +inf).
    """
    gen = as_generator(rng)
    n, p = Y.shape
    if p > MAX_CHILD_BITS:
        raise ValueError(f"proj_dim={p} > {MAX_CHILD_BITS}: 2^p children per cell are too many")
    bits = 1 << np.arange(p)  # child index = Σ_j 2^j·[y_j ≥ centre_j]
    signs = 2.0 * ((np.arange(1 << p)[:, None] >> np.arange(p)) & 1) - 1.0  # (2^p, p)
    centres = np.zeros((1, p))
    cell = np.zeros(n, dtype=np.int64)  # index of each point's active cell, −1: none
    out = [centres]
    out_counts = [np.array([np.inf])]
    h = float(half_side)
    for _ in range(levels):
        live = cell >= 0
        if not live.any() and centres.shape[0] == 0:
            break
        child = (Y[live] >= centres[cell[live]]) @ bits
        key = cell[live] * (1 << p) + child
        counts = np.bincount(key, minlength=centres.shape[0] << p)
        noisy = add_laplace(counts.astype(float), 1.0 / eps_level, sensitivity=1.0, rng=gen)
        active = np.flatnonzero(noisy > threshold)
        h /= 2.0
        new_centres = centres[active >> p] + h * signs[active & ((1 << p) - 1)]
        remap = np.full(counts.size, -1, dtype=np.int64)
        remap[active] = np.arange(active.size)
        cell = np.full(n, -1, dtype=np.int64)
        cell[live] = remap[key]
        centres = new_centres
        out.append(centres)
        out_counts.append(noisy[active])
        if centres.shape[0] == 0:
            break
    if return_counts:
        return np.vstack(out), np.concatenate(out_counts)
    return np.vstack(out)


def _swap_costs(D: np.ndarray, centre_ids: np.ndarray) -> np.ndarray:
    """cost(S with centre i replaced by candidate j) for all (i, j): (k, m), O(m·n) per call.

    With d1, d2 the nearest and second-nearest current centres' distances and a the nearest's
    position: cost(i→j) = Σ_x min(D_j(x), d1(x)) + Σ_{x: a(x)=i} [min(D_j, d2) − min(D_j, d1)].
    ``D`` is (m, n), or a block of its columns (the sums are additive over points).
    """
    k = centre_ids.size
    Dc = D[centre_ids]  # (k, n)
    if k == 1:
        return D.sum(axis=1)[None, :]
    part = np.argpartition(Dc, 1, axis=0)[:2]
    cols = np.arange(D.shape[1])
    d1, d2, a = Dc[part[0], cols], Dc[part[1], cols], part[0]
    base = np.minimum(D, d1).sum(axis=1)  # (m,)
    out = np.empty((k, D.shape[0]))
    order = np.argsort(a, kind="stable")
    bounds = np.searchsorted(a[order], np.arange(k + 1))
    for i in range(k):  # a loop over centres, not points
        idx = order[bounds[i]:bounds[i + 1]]
        Dj = D[:, idx]
        out[i] = base + (np.minimum(Dj, d2[idx]) - np.minimum(Dj, d1[idx])).sum(axis=1)
    return out


def _distance_blocks(Y: np.ndarray, candidates: np.ndarray, max_cells: int):
    """A function returning the (m, n) candidate-to-point squared distances as column blocks.

    Held whole when m·n ≤ ``max_cells`` (computed once); otherwise recomputed per call in
    blocks of ≤ ``max_cells`` entries, so memory stays O(max_cells) for any n (a whole
    2386 × 200,000 matrix took 7.5 GB).
    """
    n, m = Y.shape[0], max(candidates.shape[0], 1)
    step = max(1, int(max_cells) // m)
    if step >= n:
        D = squared_distances(Y, candidates).T
        return lambda: (D,)
    return lambda: (squared_distances(Y[s:s + step], candidates).T for s in range(0, n, step))


@public_randomness("the local search's start: k uniform indices of the candidate set, "
                   "independent of the data")
def _start_ids(m: int, k: int, gen: np.random.Generator) -> np.ndarray:
    return gen.integers(m, size=k)


@public_randomness("a uniform random shift of the partition grid: independent of the data")
def _grid_shift(r_p: float, p: int, gen: np.random.Generator) -> np.ndarray:
    return gen.uniform(-r_p / 2, r_p / 2, size=p)


def private_local_search(Y: np.ndarray, candidates: np.ndarray, k: int, *, epsilon: float,
                         lam: float, n_swaps: int | None = None, rng: RNGLike = None,
                         max_cells: int = 2**23) -> tuple[np.ndarray, int]:
    """Step 3: private local search over ``candidates`` (rows of R^p), ε-DP in total.

    ``n_swaps`` (default min(k, 20)) exponential-mechanism swaps and one final pick among the
    recorded sets, each with ε/(n_swaps + 1) and score −cost (sensitivity ``lam``² under
    add/remove: points and candidates lie in a ball of diameter ``lam``). Every candidate set's
    cost grows by a point's distance to it (in [0, Λ²]) when the point is added: the scores move
    in one direction between neighbours, so the one-sided mechanism exp(−ε'·cost/Λ²) is ε'-DP
    (as the authors' code uses it). Returns the chosen candidate indices (k, with repetition
    allowed) and the number of swaps. Memory: O(``max_cells``) floats beyond the data.
    """
    gen = as_generator(rng)
    T = min(k, 20) if n_swaps is None else int(n_swaps)
    m = candidates.shape[0]
    eps_step = epsilon / (T + 1)
    sens = float(lam) ** 2
    blocks = _distance_blocks(Y, candidates, max_cells)
    ids = _start_ids(m, k, gen)
    record, costs = [], []
    for _ in range(T):
        new = sum(_swap_costs(D, ids) for D in blocks())  # (k, m)
        pick = exponential_mechanism(-new.ravel(), eps_step, sens, rng=gen, monotonic=True)
        ids = ids.copy()
        ids[pick // m] = pick % m
        record.append(ids)
        costs.append(new.ravel()[pick])
    if T == 0:
        return ids, 0
    chosen = exponential_mechanism(-np.asarray(costs), eps_step, sens, rng=gen, monotonic=True)
    return record[chosen], T


def auto_max_candidates(n_public: int, k: int, n_swaps: int | None = None,
                        work: float = 1.5e8) -> int:
    """Default cap on the candidate set: the local search does ~(T + 1)·m·n work, kept ≤ ``work``.

    From public n and k only (never at fewer than 4k, nor above 4096). The paper and the
    authors' code keep every active cell; at ε = 10 and n = 200,000 that is ~2,400 candidates
    and 100 s of local search, so this is an engineering cap, stated in the module doc.
    """
    T = min(k, 20) if n_swaps is None else int(n_swaps)
    n = min(max(int(n_public), 1), 10**18)  # an int beyond float range (fuzz) caps at the floor
    by_work = int(work / ((T + 1) * n))
    return int(min(4096, max(4 * int(k), by_work)))


def keep_candidates(centres: np.ndarray, noisy_counts: np.ndarray, limit: int | None) -> np.ndarray:
    """The ``limit`` candidates with the largest released noisy counts (post-processing).

    Ties (and the roots, whose count is +inf) keep their order; ``None`` keeps all.
    """
    if limit is None or centres.shape[0] <= limit:
        return centres
    order = np.argsort(-noisy_counts, kind="stable")[: int(limit)]
    return centres[np.sort(order)]


def _laplace_averages(X: np.ndarray, labels: np.ndarray, k: int, *, radius: float,
                      epsilon: float, rng: np.random.Generator) -> np.ndarray:
    """The paper's Laplace average per cluster: (sum + Lap)/(count + Lap), ε/2 each, clipped.

    A point in B_radius(0) moves a sum by at most radius·√d in ℓ1 and a count by 1; clusters
    are disjoint (parallel composition): ε-DP.
    """
    d = X.shape[1]
    sums = np.zeros((k, d))
    np.add.at(sums, labels, X)
    counts = np.bincount(labels, minlength=k).astype(float)
    ns = add_laplace(sums, 2.0 * radius * math.sqrt(d) / epsilon,
                     sensitivity=radius * math.sqrt(d), rng=rng)
    nc = add_laplace(counts, 2.0 / epsilon, sensitivity=1.0, rng=rng)
    return clip_to_ball(ns / np.maximum(nc, 1.0)[:, None], radius)


def _clamp_noisy_avg(eps: float, what: str) -> float:
    if eps > NOISY_AVG_MAX_EPSILON:
        warnings.warn(f"the {what} share gives a NoisyAVG call ε = {eps:.4g} > 1/3, beyond its "
                      "proven range (paper 003, Theorem 2.6); using 1/3, so the guarantee "
                      "(privacy_) is below the requested epsilon", UserWarning, stacklevel=4)
        return NOISY_AVG_MAX_EPSILON
    return eps


class Balcan17KMeans(DPClusterer):
    """Private k-means of Balcan et al. (ICML 2017), paper 003's baseline (module doc).

    Parameters
    ----------
    n_clusters : int
    epsilon, delta : float
        The total (ε, δ)-DP guarantee (add/remove one point); δ is used by NoisyAVG only.
    radius : float
        Public radius: rows outside B_radius(0) are clipped onto it.
    n_public : int, optional
        The public n used for p, the number of levels and the threshold. Default: the data's
        own n, with a PrivacyLeakWarning (paper 003 treats n as public).
    proj_dim : int, optional
        p; default ⌊½ ln n⌋ (≥ 1); no projection when d ≤ p.
    n_shifts : int
        Randomly shifted partitions besides the unshifted one (the code's T = 2).
    n_swaps : int, optional
        Local-search swaps; default min(k, 20).
    max_candidates : int, "auto" or None
        Cap on the candidate set, keeping the cells with the largest released noisy counts
        (post-processing): "auto" = :func:`auto_max_candidates` (local-search work ≤ 1.5·10⁸
        from the public n and k), None = every active cell as in the paper.
    recovery : {"noisyavg", "laplace"}
        Paper 003's corrected NoisyAVG (default) or the paper's Laplace average (noisy count).
    lloyd_rounds : int
        DP Lloyd rounds after the recovery (default 1, paper 003; 0 for none).
    budget_split : mapping, optional
        Shares of ε: ``candidates``, ``local_search``, ``recovery``, ``lloyd``
        (:data:`DEFAULT_SPLIT`; without ``lloyd`` when ``lloyd_rounds=0``).
    rng : None, int or Generator

    Attributes
    ----------
    cluster_centers_ : (k, d) array
    privacy_ : ApproxDP — the claimed guarantee (sum of the budget's parts)
    budget_ : Balcan17Budget
    candidates_ : (m, p) array — released candidate centres (projected space)
    local_search_centers_ : (k, p) array
    projection_ : (p, d) array ; proj_dim_ : int ; levels_ : int ; threshold_ : float
    n_features_in_ : int
    """

    #: Every parameter's constraint (:mod:`dpcore.data.params`), read by ``fit`` and by every
    #: other consumer; ``n_public`` and ``radius`` are the proof's public inputs. ε = inf is the
    #: non-private reference (no noise in the partitions and the local search).
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "n_clusters": N_CLUSTERS,
        "epsilon": EPSILON,
        "delta": DELTA_POSITIVE,
        "radius": RADIUS_REQUIRED,
        "n_public": N_PUBLIC_INT,
        "proj_dim": replace(PROJ_DIM, high=MAX_CHILD_BITS),
        "n_shifts": Param("int", 0, 1000, doc="randomly shifted partitions besides the first"),
        "n_swaps": Param("int", 0, 10**6, special=(None,),
                         doc="local-search swaps (None: min(k, 20))"),
        "recovery": Param("str", choices=RECOVERIES, doc="NoisyAVG or the Laplace average"),
        "lloyd_rounds": Param("int", 0, 1000, doc="DP Lloyd rounds after the recovery"),
        "budget_split": Param("mapping", special=(None,), doc="shares of ε per step"),
        "max_candidates": Param("int", 1, 10**9, special=("auto", None),
                                doc="cap on the candidate set (None: every active cell)"),
    }

    def __init__(self, n_clusters: int, *, epsilon: float, delta: float, radius: float,
                 n_public: int | None = None, proj_dim: int | None = None, n_shifts: int = 2,
                 n_swaps: int | None = None, recovery: str = "noisyavg", lloyd_rounds: int = 1,
                 budget_split: Mapping[str, float] | None = None,
                 max_candidates: int | str | None = "auto", rng: RNGLike = None) -> None:
        self.max_candidates = max_candidates
        self.n_clusters = n_clusters
        self.epsilon = epsilon
        self.delta = delta
        self.radius = radius
        self.n_public = n_public
        self.proj_dim = proj_dim
        self.n_shifts = n_shifts
        self.n_swaps = n_swaps
        self.recovery = recovery
        self.lloyd_rounds = lloyd_rounds
        self.budget_split = budget_split
        self.rng = rng

    def _check(self, X) -> tuple[np.ndarray, int, dict]:
        p = self._validate_params()  # one declaration (_parameter_constraints) for every reader
        if self.n_public is not None and p["n_clusters"] > p["n_public"]:
            raise ValueError(f"n_clusters={self.n_clusters} exceeds n_public={self.n_public}")
        X = dense_matrix(X)
        if X.ndim != 2 or X.shape[1] == 0:
            raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}")
        if X.shape[0] == 0 and self.n_public is None:
            raise ValueError("X is empty and n_public is not given")
        if not np.all(np.isfinite(X)):
            raise ValueError("X contains NaN or infinite values; drop or impute them first")
        if self.n_public is None:
            warnings.warn(f"n_public not given: the algorithm uses the data's size n="
                          f"{X.shape[0]}, which it treats as public (pass n_public)",
                          PrivacyLeakWarning, stacklevel=3)
            return X, X.shape[0], p
        return X, p["n_public"], p

    def fit(self, X, y=None) -> Balcan17KMeans:
        """Steps 1–4 of the module doc; returns self."""
        X, n_pub, params = self._check(X)
        k, rounds = int(self.n_clusters), int(self.lloyd_rounds)
        budget = balcan_budget(float(self.epsilon), float(self.delta), self.budget_split,
                               lloyd_rounds=rounds, recovery=self.recovery)
        gen = as_generator(self.rng)
        radius = float(self.radius)
        X = clip_to_ball(X, radius)
        d = X.shape[1]
        p = int(self.proj_dim) if self.proj_dim else max(1, int(0.5 * math.log(n_pub)))
        T = jl_matrix(d, min(p, d), gen)  # data-independent; identity when d ≤ p
        p = T.shape[0]
        r_p = projected_radius(radius, d, p)
        Y = clip_to_ball(X @ T.T, r_p)
        # Step 2: 1 + n_shifts partitions, L levels each, equal shares.
        parts = 1 + int(self.n_shifts)
        L = partition_levels(n_pub)
        eps_level = budget.eps_candidates / (parts * L)
        gamma = 2.0 * math.log(max(n_pub, 2)) / eps_level
        cands, noisy = [], []
        for s in range(parts):
            shift = np.zeros(p) if s == 0 else _grid_shift(r_p, p, gen)
            c, nc = private_partition(Y + shift, half_side=r_p, levels=L, eps_level=eps_level,
                                      threshold=gamma, rng=gen, return_counts=True)
            cands.append(c - shift)
            noisy.append(nc)
        # post-processing of released cells: drop duplicates, keep the best-supported ones
        C, first = np.unique(np.vstack(cands), axis=0, return_index=True)
        limit = (auto_max_candidates(n_pub, k, params["n_swaps"])
                 if params["max_candidates"] == "auto" else params["max_candidates"])
        C = clip_to_ball(keep_candidates(C, np.concatenate(noisy)[first], limit), r_p)
        # Step 3: private local search (Λ = 2 r_p bounds point–candidate distances).
        ids, _ = private_local_search(Y, C, k, epsilon=budget.eps_local_search, lam=2 * r_p,
                                      n_swaps=params["n_swaps"], rng=gen)
        U = C[ids]
        # Step 4: recovery in R^d, then the DP Lloyd rounds.
        labels = nearest_center(Y, U)[0]
        centers = self._average(X, labels, k, budget.eps_recovery, budget.delta_recovery, gen)
        for _ in range(rounds):
            labels = nearest_center(X, centers)[0]
            centers = self._average(X, labels, k, budget.eps_lloyd / rounds,
                                    budget.delta_lloyd / rounds, gen)
        self.cluster_centers_ = centers
        self.budget_ = budget
        self.privacy_ = budget.guarantee
        self.candidates_ = C
        self.local_search_centers_ = U
        self.projection_, self.proj_dim_ = T, p
        self.levels_, self.threshold_ = L, gamma
        self.n_features_in_ = d
        return self

    def _average(self, X, labels, k, eps, delta, gen) -> np.ndarray:
        if self.recovery == "laplace":
            return _laplace_averages(X, labels, k, radius=float(self.radius), epsilon=eps,
                                     rng=gen)
        return noisy_cluster_averages(X, labels, k, radius=float(self.radius), epsilon=eps,
                                      delta=delta, rng=gen)

    def predict(self, X) -> np.ndarray:
        """Index of the nearest released centre of each row."""
        return nearest_center(self._check_predict_X(X), self.cluster_centers_)[0]
