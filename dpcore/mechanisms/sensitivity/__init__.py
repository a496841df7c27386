"""Random differential privacy for black-box statistics: the sensitivity sampler (Rubinstein &
Aldà 2017), its Bernstein mechanism, the population view of random DP and a menu of statistics.
"""

from dpcore.mechanisms.sensitivity.sampler import (
    BernsteinRelease,
    Release,
    SamplerConfig,
    SamplerError,
    SensitivityResult,
    bernstein_basis,
    bernstein_design,
    bernstein_lattice,
    bernstein_mechanism,
    empirical_oracle,
    gamma_min,
    rdp_gamma_under_shift,
    respond,
    rho_for_gamma,
    rho_for_m,
    sample_sensitivity,
    sample_then_respond,
    sampler_config,
    theorem15_holds,
)

__all__ = [
    'BernsteinRelease',
    'Release',
    'SamplerConfig',
    'SamplerError',
    'SensitivityResult',
    'bernstein_basis',
    'bernstein_design',
    'bernstein_lattice',
    'bernstein_mechanism',
    'empirical_oracle',
    'gamma_min',
    'rdp_gamma_under_shift',
    'respond',
    'rho_for_gamma',
    'rho_for_m',
    'sample_sensitivity',
    'sample_then_respond',
    'sampler_config',
    'theorem15_holds',
]
