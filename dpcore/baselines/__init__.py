"""The papers' comparison baselines, re-implemented from their papers (not the authors' code).

* :mod:`dpcore.baselines.kv18` — Karwa & Vadhan (2018) Gaussian mean estimator (FriendlyCore's
  Fig. 5(3) baseline);
* :mod:`dpcore.baselines.lsh_clustering` — LSH_Clustering, Google's private clustering by an LSH
  prefix tree (FriendlyCore's Figs. 6–7 baseline).

Balcan, Dick, Liang, Mou & Zhang (ICML 2017), the max-cover paper's baseline, is not implemented.

Importing the package registers both as run-configuration mechanisms (``lsh_clustering``,
``kv18_mean``) so that dashboard releases and ``dpcore run --config`` can name them.
"""

from __future__ import annotations

from dpcore import runconfig
from dpcore.baselines.kv18 import kv18_mean, kv18_mean_1d
from dpcore.baselines.lsh_clustering import LSHClustering

__all__ = ["LSHClustering", "kv18_mean", "kv18_mean_1d"]

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
):
    if _mech.name not in runconfig.MECHANISMS:
        runconfig.register(_mech)
