"""DP k-means via the exponential mechanism and max cover (Chaturvedi, Nguyen & Xu, AAAI 2021).

Seed paper ``../shared/seeds/003_*``; implementable spec ``../shared/spec/maxcover_kmeans.md``.

Two different epsilons live here and are never mixed:

* ``approx`` is the paper's plain ε, the *approximation constant*: JL distortion, the growth factor
  (1+ε) of the level schedule, the offset set V, and k' = ⌈k/ε⌉ picks per level.
* ``epsilon``/``delta`` are the *privacy* budget (ε_p, δ_p), split into ε_E, δ_E (exponential
  mechanism, Lemma 6.2), ε_L (Laplace counts), ε_G, δ_G (NoisyAVG) and, optionally, a final DP
  Lloyd round (Sec. 7).

Pieces, in the order of Algorithm 2:

* :func:`jl_matrix`, :func:`project_to_unit_ball`: lines 1–5 (data-independent Gaussian JL, public
  scaling 2/((1+ε)Δ) and radial clipping, never the data's own maximum norm).
* :func:`level_schedule`: r_i, t_i, the cover radius R_i = (1+ε) r_i and m = ⌈log_{1+ε} 2n⌉.
* :func:`offset_set`: the level-independent offsets V of Claim 4.1 (Σ v_j² < d'(1/ε+1)²).
* :func:`private_grid_set_cover`: Algorithm 3, the greedy max cover by the exponential mechanism
  over the whole (astronomically large) grid G_i. All samplers below draw from exactly
  P(g) ∝ exp(ε_E |cover[g]| / 2) over all of G_i while only touching populated cells; the mass of
  the empty cells enters analytically through |G_i| (Claim 4.2):

  - ``"hybrid"`` (module ``hybrid``; the default through ``sampler="auto"`` whenever a cover
    ball holds few lattice points, i.e. with ``grid_stride="auto"``): per level either plain
    rejection from the uniform law plus a global envelope (the fine levels, O(n) per level) or
    the exact incidences enumerated without waste and grouped by a compiled walk and radix sort
    (module ``kernels``; the few dense levels, O(n·vol(ρ)) per level). Linear in n up to the
    log n levels (KDD-like rows: CPU-time exponent 1.04 from 10⁴ to 5·10⁵), no work limits.
  - ``"incidence"``: Claim 4.2 literally. Every (point, grid point) incidence is enumerated with
    the offsets V (spec §5.3); P_samp = S/(S+|G|), S = Σ_g expm1(a·c_g), a = ε_E/2; the
    non-uniform branch draws g ∝ expm1(a·c_g). Cost ∝ n·|V|·2^{d'} per level: small problems.
  - ``"lazy"``: the same two-stage mixture, but the non-uniform branch is drawn by exact
    rejection sampling from an adaptive upper envelope (a list of lattice boxes, each with an
    upper bound on the cover of its grid points from a k-d tree count; a rejected box is split,
    Gilks-style adaptive rejection keeps each accepted draw exact). Exact cover counts are only
    computed where the envelope cannot rule a grid point out; memory is O(n + touched cells).
    Fine levels cost one O(n) pass. The cost sits in the few *dense* levels, where the cover
    radius is comparable to the data's spread: there the exact law needs the exact cover of
    every grid point near the densest spots (neighbouring grid points differ by ~75 % in cover
    at the paper's ρ = R/t ≈ 6.7 lattice units in 5-d, so no box bound is tight). Work limits
    raise a clear error. Used for the paper's own grid (``grid_stride="paper"``); the default
    ``grid_stride="auto"`` (a data-independent sub-lattice, privacy unchanged, not the paper's
    grid) divides the grid points per ball by s^{d'}.

* :func:`noisy_average`: Algorithm 1 (NoisyAVG, Nissim–Stemmer–Vadhan Alg. 5) with the empty /
  tiny-cluster fallback (a uniform point of B_{Δ/2}(0)).
* :class:`MaxCoverKMeans`: Algorithm 2 end to end, ``privacy_`` from Theorem 6.1 (+ the final
  rounds by basic composition), with Lemma 6.2's charge valid for every ε_E
  (:func:`em_privacy_loss`; the paper's e·ε_E·ln(1/δ_E)/2 needs ε_E ≤ 2). By default
  (``preset="recommended"``) Algorithm 2's lines 1–19 run on 0.2 of ε and the recommended
  budget-aware DP-Lloyd (:class:`dpcore.estimators.dpkmeans.DPKMeans`) averages their partition in
  its first round (instead of NoisyAVG) and continues; ``final_lloyd``
  / ``lloyd_rounds`` / ``preset="paper"`` give the paper's configuration (Sec. 7).

Modules: ``accounting`` (Thm 6.1, Lemma 6.2, budget split), ``averaging`` (Alg. 1), ``grid``
(JL, schedule, offsets), ``ballpoints``, ``hybrid``, ``lazy``, ``incidence`` (samplers),
``kernels`` (compiled incidence build), ``cover`` (Alg. 3), ``proxy`` (lines 13–18: nearest
candidate by k-d tree, Laplace counts, pruning), ``estimator`` (Alg. 2).
"""

from dpcore.mechanisms.maxcover.accounting import (
    DEFAULT_BUDGET_SPLIT,
    DEFAULT_BUDGET_SPLIT_WITH_LLOYD,
    NOISY_AVG_MAX_EPSILON,
    SEEDING_BUDGET_SPLIT,
    BudgetSplit,
    em_privacy_loss,
    privacy_cost,
    split_budget,
    split_seeding_budget,
)
from dpcore.mechanisms.maxcover.averaging import (
    NoisyAverage,
    noisy_average,
    noisy_cluster_averages,
)
from dpcore.mechanisms.maxcover.cover import private_grid_set_cover
from dpcore.mechanisms.maxcover.estimator import (
    MaxCoverKMeans,
    ProxyPartition,
    auto_grid_stride,
    noisy_candidate_counts,
    prune_proxy_weights,
)
from dpcore.mechanisms.maxcover.grid import (
    LevelSchedule,
    jl_matrix,
    level_schedule,
    offset_set,
    project_to_unit_ball,
)
from dpcore.mechanisms.maxcover.grid import (
    _signed_offsets as _signed_offsets,  # private, re-exported for old imports
)
from dpcore.mechanisms.maxcover.grid import (
    _within as _within,  # private, re-exported for old imports
)
from dpcore.mechanisms.maxcover.incidence import _IncidenceCover as _IncidenceCover
from dpcore.mechanisms.maxcover.lazy import _LazyCover as _LazyCover

__all__ = [
    "DEFAULT_BUDGET_SPLIT",
    "DEFAULT_BUDGET_SPLIT_WITH_LLOYD",
    "NOISY_AVG_MAX_EPSILON",
    "SEEDING_BUDGET_SPLIT",
    "BudgetSplit",
    "LevelSchedule",
    "MaxCoverKMeans",
    "NoisyAverage",
    "ProxyPartition",
    "auto_grid_stride",
    "em_privacy_loss",
    "prune_proxy_weights",
    "jl_matrix",
    "level_schedule",
    "noisy_average",
    "noisy_candidate_counts",
    "noisy_cluster_averages",
    "offset_set",
    "privacy_cost",
    "private_grid_set_cover",
    "project_to_unit_ball",
    "split_budget",
    "split_seeding_budget",
]
