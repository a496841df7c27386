"""Weighted DP-Lloyd (Algorithm 2 of Fay, Mair & Sjölund 2024) and its public data domains.
"""

from dpcore.mechanisms.lloyd.estimator import (
    DPLloyd,
    cluster_sums,
    dp_lloyd,
    dp_lloyd_epsilon,
    dp_lloyd_noise_scales,
    lloyd_statistics,
    noisy_lloyd_update,
    random_ball_centers,
    su_noise_scales,
)

__all__ = [
    'DPLloyd',
    'cluster_sums',
    'dp_lloyd',
    'dp_lloyd_epsilon',
    'dp_lloyd_noise_scales',
    'lloyd_statistics',
    'noisy_lloyd_update',
    'random_ball_centers',
    'su_noise_scales',
]
