"""Random differential privacy for black-box statistics: the sensitivity sampler.

Rubinstein & Aldà, "Pain-Free Random Differential Privacy with Sensitivity Sampling", ICML 2017
(``../shared/seeds/004_*``; spec ``../shared/spec/sensitivity_sampler.md``).

* :func:`sampler_config` chooses the sample size ``m``, the order-statistic index ``k`` and the
  confidence ``gamma`` (Theorem 15, Table 1, Corollaries 20-22; closed forms on the Lambert-W
  branch ``-1``).
* :func:`sample_sensitivity` is Algorithm 1 (SensitivitySampler): it estimates the sensitivity
  ``Δ̂ = G_(k)`` of any function of a data set from ``m`` neighbouring pairs drawn from a public
  distribution ``P`` (the *oracle*).
* :func:`sample_then_respond` is Algorithm 2: the estimate calibrates a sensitivity-induced
  mechanism (Laplace, Gaussian, exponential, Bernstein; paper §4), and the release carries an
  ``(ε, δ, γ)``-random-DP guarantee (Definition 4).

The code lives in smaller modules, all re-exported here (``from
dpcore.mechanisms.sensitivity.sampler import sampler_config`` keeps working):
:mod:`.config` (Table 1), :mod:`.estimation` (Algorithm 1), :mod:`.response` (mechanisms and
Algorithm 2), :mod:`.bernstein` (the Bernstein mechanism) and :mod:`.validation` (shared checks).
"""

from __future__ import annotations

from dpcore.core.errors import SamplerError
from dpcore.mechanisms.sensitivity.bernstein import (
    BernsteinRelease,
    bernstein_basis,
    bernstein_design,
    bernstein_lattice,
    bernstein_mechanism,
)
from dpcore.mechanisms.sensitivity.config import (
    SamplerConfig,
    gamma_min,
    rdp_gamma_under_shift,
    rho_for_gamma,
    rho_for_m,
    sampler_config,
    theorem15_holds,
)
from dpcore.mechanisms.sensitivity.estimation import NormLike as NormLike  # type aliases
from dpcore.mechanisms.sensitivity.estimation import Oracle as Oracle
from dpcore.mechanisms.sensitivity.estimation import (
    SensitivityResult,
    empirical_oracle,
    sample_sensitivity,
)
from dpcore.mechanisms.sensitivity.response import Mechanism as Mechanism  # type alias
from dpcore.mechanisms.sensitivity.response import (
    SensitivityRelease,
    respond,
    sample_then_respond,
)

__all__ = [
    "BernsteinRelease",
    "SensitivityRelease",
    "SamplerConfig",
    "SamplerError",
    "SensitivityResult",
    "bernstein_basis",
    "bernstein_design",
    "bernstein_lattice",
    "bernstein_mechanism",
    "empirical_oracle",
    "gamma_min",
    "rdp_gamma_under_shift",
    "respond",
    "rho_for_gamma",
    "rho_for_m",
    "sample_sensitivity",
    "sample_then_respond",
    "sampler_config",
    "theorem15_holds",
]


def __getattr__(name: str):
    """``Release`` (0.1) is :class:`SensitivityRelease`, with a DeprecationWarning."""
    from dpcore.mechanisms.sensitivity import response

    return getattr(response, name)
