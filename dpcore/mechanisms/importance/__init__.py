"""Personalized privacy amplification by importance sampling (Fay, Mair & Sjölund, TMLR 2024).

:mod:`.amplification` holds Theorem 6 and the PDP profiles; :mod:`.weights` the
privacy-constrained weights (Problem 7, Alg. 1); :mod:`.sampling` the sampling distributions
(and re-exports the other two); :mod:`.calibration` DP-Lloyd's noise scales and the ε of full and
sampled runs; :mod:`.grid` the one-pass privacy-constrained sampler on a public norm grid.
"""

from dpcore.mechanisms.importance.calibration import (
    LloydCalibration,
    calibrate_lloyd,
    dp_lloyd_epsilon,
    dp_lloyd_noise_scales,
    sampled_lloyd_epsilon,
    su_noise_scales,
)
from dpcore.mechanisms.importance.sampling import (
    SAMPLERS,
    FunctionProfile,
    LinearProfile,
    PDPProfile,
    amplified_epsilon,
    coreset_max_sample_size,
    coreset_probabilities,
    coreset_q,
    laplace_sum_profile,
    lloyd_profile,
    logexpm1,
    poisson_sample,
    privacy_constrained_weights,
    privacy_probabilities,
    solve_privacy_constrained,
    uniform_probabilities,
    variance_optimal_probabilities,
)

__all__ = [
    'SAMPLERS',
    'FunctionProfile',
    'LinearProfile',
    'PDPProfile',
    'amplified_epsilon',
    'coreset_max_sample_size',
    'coreset_probabilities',
    'coreset_q',
    'laplace_sum_profile',
    'lloyd_profile',
    'logexpm1',
    'poisson_sample',
    'privacy_constrained_weights',
    'privacy_probabilities',
    'solve_privacy_constrained',
    'uniform_probabilities',
    'variance_optimal_probabilities',
    'LloydCalibration',
    'calibrate_lloyd',
    'dp_lloyd_epsilon',
    'dp_lloyd_noise_scales',
    'sampled_lloyd_epsilon',
    'su_noise_scales',
]
