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

Importing the package registers them as run-configuration mechanisms (``lsh_clustering``,
``kv18_mean``, ``balcan17_kmeans``) so that dashboard releases and ``dpcore run --config`` can
name them.
"""

from __future__ import annotations

from dpcore.mechanisms.baselines.balcan17 import Balcan17KMeans
from dpcore.mechanisms.baselines.kv18 import kv18_mean, kv18_mean_1d
from dpcore.mechanisms.baselines.lsh_clustering import LSHClustering
from dpcore.release import runconfig

__all__ = ["Balcan17KMeans", "LSHClustering", "kv18_mean", "kv18_mean_1d"]

for _mech in (
    runconfig.Mechanism(
        "lsh_clustering", LSHClustering,
        runconfig.estimator_runner({"centers": "cluster_centers_"})(LSHClustering),
        "LSH_Clustering: private LSH prefix tree + k-means++ on its coreset (Google CK21; "
        "FriendlyCore's baseline)"),
    runconfig.Mechanism(
        "kv18_mean", kv18_mean, runconfig.function_runner({"mean": "estimate"})(kv18_mean),
        "KV18 Gaussian mean, coordinate-wise after a random rotation, ρ-zCDP (FriendlyCore's "
        "Fig. 5(3) baseline)", False),
    runconfig.Mechanism(
        "balcan17_kmeans", Balcan17KMeans,
        runconfig.estimator_runner({"centers": "cluster_centers_"})(Balcan17KMeans),
        "Balcan et al. (ICML 2017): private partitions + private local search, NoisyAVG recovery "
        "and one DP Lloyd round (paper 003's baseline)"),
):
    if _mech.name not in runconfig.MECHANISMS:
        runconfig.register(_mech)
