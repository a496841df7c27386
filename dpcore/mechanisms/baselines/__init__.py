"""The papers' comparison baselines, re-implemented from their papers (not the authors' code).

* :mod:`dpcore.mechanisms.baselines.kv18` — Karwa & Vadhan (2018) Gaussian mean estimator
(FriendlyCore's
  Fig. 5(3) baseline);
* :mod:`dpcore.mechanisms.baselines.lsh_clustering` — LSH_Clustering, Google's private clustering by
an LSH
  prefix tree (FriendlyCore's Figs. 6–7 baseline);
* :mod:`dpcore.mechanisms.baselines.balcan17` — Balcan, Dick, Liang, Mou & Zhang (ICML 2017), the
max-cover
  paper's (003) baseline, with paper 003's NoisyAVG + DP-Lloyd correction.

Their rows in :mod:`dpcore.release.registry` (``lsh_clustering``, ``kv18_mean``,
``balcan17_kmeans``) make them runnable from dashboard releases and ``dpcore run --config``.
"""

from __future__ import annotations

from dpcore.mechanisms.baselines.balcan17 import Balcan17KMeans
from dpcore.mechanisms.baselines.kv18 import kv18_mean, kv18_mean_1d
from dpcore.mechanisms.baselines.lsh_clustering import LSHClustering

__all__ = ["Balcan17KMeans", "LSHClustering", "kv18_mean", "kv18_mean_1d"]
