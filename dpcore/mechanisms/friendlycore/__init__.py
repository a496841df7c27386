"""FriendlyCore (Tsfadia, Cohen, Kaplan, Mansour, Stemmer, ICML 2022): DP aggregation of a core.

Spec: ``../shared/spec/friendlycore.md``. Submodules:

* :mod:`.counting` — friend counts for ``dist_r``, ``match_γ`` and ``dist_{r_1..r_k}``.
* :mod:`.filters` — BasicFilter, zCDPFilter, :func:`friendly_core`, Theorems 4.1 / 4.2.
* :mod:`.averaging` — FriendlyAvg, CheckDiam / FindDiam, :func:`friendly_mean` (FC_Avg).
* :mod:`.clustering` — :class:`FriendlyCoreKMeans` (FC_Clustering).
* :mod:`.sampling` — Poisson subsampling in front of FC_Avg and its amplification.
"""

from .averaging import (
    FriendlyMeanResult,
    check_diam,
    find_diam,
    friendly_avg,
    friendly_mean,
)
from .clustering import FriendlyCoreKMeans
from .counting import (
    count_within,
    friend_counts,
    match_counts,
    match_permutation,
    ordered_tuple_counts,
)
from .filters import (
    BasicFilter,
    FilterResult,
    FriendlyCoreResult,
    dp_paradigm_guarantee,
    friendly_core,
    required_size,
    zcdp_paradigm_guarantee,
    zCDPFilter,
)
from .planning import MAX_PARTS, KMeansPlan, kmeans_plan
from .sampling import amplified, inner_budget, poisson_rate, poisson_rows

__all__ = [
    "BasicFilter",
    "FilterResult",
    "FriendlyCoreKMeans",
    "FriendlyCoreResult",
    "FriendlyMeanResult",
    "KMeansPlan",
    "MAX_PARTS",
    "check_diam",
    "count_within",
    "dp_paradigm_guarantee",
    "find_diam",
    "friend_counts",
    "friendly_avg",
    "friendly_core",
    "friendly_mean",
    "kmeans_plan",
    "amplified",
    "inner_budget",
    "poisson_rate",
    "poisson_rows",
    "match_counts",
    "match_permutation",
    "ordered_tuple_counts",
    "required_size",
    "zCDPFilter",
    "zcdp_paradigm_guarantee",
]
from .covariance import fc_covariance as fc_covariance  # App. A (FC_Covariance)
