"""DP-Lloyd as the second stage of a seeded k-means: the one code path behind
``MaxCoverKMeans(preset="recommended")`` and ``DPKMeans(seeding=...)``.

A seeding releases either initial centres or a public partition (max-cover's proxy centres S''
and the nearest-centre map after the public JL projection). The partition is DP-Lloyd's first
assignment, so the first round's noisy counts and sums average it (the job NoisyAVG had in
Algorithm 2 of paper 003); that round is added to the rounds the error-budget rule allows
DP-Lloyd itself (:func:`dpcore.mechanisms.lloyd.domain.error_budget_n_iter`).
"""

from __future__ import annotations

import numpy as np

from dpcore.core.rng import RNGLike
from dpcore.mechanisms.lloyd.estimator import DPLloyd

__all__ = ["PARTITION_ROUNDS", "SEEDING_PROGRESS", "fit_lloyd_stage"]

#: DP-Lloyd rounds added for a seeding's partition: T = the error-budget rule's T + 1.
PARTITION_ROUNDS = 1
#: Share of the reported progress taken by a max-cover seeding (it dominates the run time).
SEEDING_PROGRESS = 0.8


def fit_lloyd_stage(
    X: np.ndarray,
    n_clusters: int,
    *,
    epsilon: float,
    rng: RNGLike,
    radius: float | None = None,
    bounds=None,
    n: float | None = None,
    n_iter: int | None = None,
    count_share: float | str = "auto",
    sum_noise: str = "auto",
    sampler: str | None = None,
    sample_size: float | None = None,
    init: str | np.ndarray = "random_ball",
    init_assign=None,
) -> DPLloyd:
    """Fit budget-aware DP-Lloyd (``preset="auto"``) after a seeding; returns the fitted stage.

    Parameters
    ----------
    X : (n, d) array
    n_clusters : int
    epsilon : float
        The stage's ε (the total minus what the seeding spent).
    rng : Generator
        The caller's generator, so that seeding and stage draw from one stream.
    radius, bounds, n, count_share, sum_noise, sampler, sample_size, init
        As for :class:`~dpcore.mechanisms.lloyd.estimator.DPLloyd`.
    n_iter : int, optional
        T; None = the error-budget rule (plus :data:`PARTITION_ROUNDS` with ``init_assign``).
    init_assign : partition map, optional
        The seeding's released partition, used for the first assignment.
    """
    lloyd = DPLloyd(
        n_clusters, epsilon=epsilon, bounds=bounds, radius=radius, n=n, sum_noise=sum_noise,
        n_iter=n_iter, preset="auto", count_share=count_share, sampler=sampler,
        sample_size=sample_size, diagnostics=False, init=init, init_assign=init_assign, rng=rng,
    )
    if init_assign is not None and n_iter is None:
        t_rule, _ = lloyd._budget(epsilon, X.shape[0], X.shape[1], n_clusters,
                                  lloyd._domain(X.shape[1]))
        lloyd.n_iter = t_rule + PARTITION_ROUNDS
    return lloyd.fit(X)
