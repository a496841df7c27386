"""Random differential privacy for black-box statistics: the sensitivity sampler (Rubinstein &
Aldà 2017), its Bernstein mechanism, the population view of random DP and a menu of statistics.

:mod:`.config` chooses (m, k, γ) (Table 1); :mod:`.estimation` is Algorithm 1;
:mod:`.response` the calibrated mechanisms and Algorithm 2; :mod:`.bernstein` the Bernstein
mechanism; :mod:`.validation` the checks they share; :mod:`.sampler` re-exports all of them.
:mod:`.population` and :mod:`.statistics` are the population view and the statistics menu.
"""

from dpcore.mechanisms.sensitivity.sampler import (
    BernsteinRelease,
    SamplerConfig,
    SamplerError,
    SensitivityRelease,
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
    'SensitivityRelease',
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


def __getattr__(name: str):
    """``Release`` (0.1) is :class:`SensitivityRelease`, with a DeprecationWarning."""
    from dpcore.mechanisms.sensitivity import response

    return getattr(response, name)
