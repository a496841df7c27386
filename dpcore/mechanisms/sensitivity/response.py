"""Sensitivity-induced mechanisms (paper §4) and Algorithm 2, Sample-Then-Respond.

:func:`respond` runs the Laplace, Gaussian, exponential or Bernstein mechanism calibrated with a
sensitivity; :func:`sample_then_respond` estimates that sensitivity with the sampler
(:func:`~dpcore.mechanisms.sensitivity.estimation.sample_sensitivity`) and releases a
:class:`SensitivityRelease` carrying an ``(ε, δ, γ)``-random-DP guarantee (Definition 4).

Split out of :mod:`dpcore.mechanisms.sensitivity.sampler`, which re-exports every public name.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.limits import check_sampler_work
from dpcore.data.params import EPSILON_FINITE, GAMMA, PAIRS, declare, validate_params
from dpcore.mechanisms.sensitivity.bernstein import (
    bernstein_lattice,
    bernstein_mechanism,
)
from dpcore.mechanisms.sensitivity.bernstein import bernstein_target as _bernstein_target
from dpcore.mechanisms.sensitivity.config import sampler_config
from dpcore.mechanisms.sensitivity.estimation import (
    Oracle,
    SensitivityResult,
    _norm_name,
    sample_sensitivity,
)
from dpcore.privacy.guarantees import privacy_alias
from dpcore.privacy.noise import selection_sampler

__all__ = ["Mechanism", "SensitivityRelease", "respond", "sample_then_respond"]


def __getattr__(name: str):
    if name == "Release":  # the 0.1 name; dpcore.release.door.Release is the door's
        import warnings

        warnings.warn("dpcore.mechanisms.sensitivity.Release is now SensitivityRelease",
                      DeprecationWarning, stacklevel=2)
        return SensitivityRelease
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# Δ̂ below this fraction of |f(D)| is round-off (e.g. a solver returning the same fit twice).
_ZERO_SENSITIVITY = 1e-10


# ----------------------------------------------------------------------------------------------
# Sensitivity-induced mechanisms (paper §4) and Algorithm 2: Sample-Then-Respond
# ----------------------------------------------------------------------------------------------

Mechanism = Literal["laplace", "gaussian", "exponential", "bernstein"]
_MECHANISM_NORM = {"laplace": 1.0, "gaussian": 2.0, "exponential": np.inf, "bernstein": np.inf}


@selection_sampler("the exponential mechanism's limit at sensitivity 0: a uniform index among "
                   "the best candidates")
def _uniform_choice(best: np.ndarray, gen: np.random.Generator) -> int:
    return int(gen.choice(best))


def respond(
    value: Any,
    *,
    sensitivity: float,
    epsilon: float,
    delta: float = 0.0,
    mechanism: Mechanism = "laplace",
    rng: RNGLike = None,
    lattice_k: int = 10,
    dims: int = 1,
    h: int = 1,
    calibration: Literal["analytic", "classic"] = "analytic",
) -> tuple[Any, float]:
    """Run a sensitivity-induced mechanism ``M_Δ`` on ``value = f(D)`` (paper §4).

    Parameters
    ----------
    value : array-like
        Laplace / Gaussian: the statistic. Exponential: the score vector over candidates.
        Bernstein: the values of ``F(D, ·)`` on :func:`bernstein_lattice` (``dims`` axes).
    sensitivity : float
        ``Δ`` in the norm the mechanism needs (L1, L2, L∞, L∞ on the lattice).
    epsilon, delta : float
        ``δ`` only for the Gaussian mechanism.
    calibration : {"analytic", "classic"}
        Gaussian only. ``"analytic"``: the exact analytic Gaussian mechanism (Balle & Wang 2018),
        valid for every ε. ``"classic"``: ``σ = Δ sqrt(2 log(1.25/δ)) / ε`` of Corollary 12, whose
        proof needs ε < 1 (refused otherwise).

    Returns
    -------
    (released, noise_scale)
        ``noise_scale`` is the Laplace scale, the Gaussian σ, or ``2Δ/ε`` (exponential).
    """
    from dpcore.privacy import noise
    if not (isinstance(epsilon, int | float | np.floating) and epsilon > 0):
        raise ValueError(f"epsilon must be a number > 0, got {epsilon!r}")
    sens = float(sensitivity)
    if not (math.isfinite(sens) and sens >= 0):
        raise ValueError(f"sensitivity must be finite and >= 0, got {sensitivity!r}")
    gen = as_generator(rng)
    if mechanism == "laplace":
        v = np.asarray(value, dtype=float)
        scale = noise.laplace_scale(sens, epsilon)
        out = np.asarray(noise.add_laplace(v, scale, sensitivity=sens, rng=gen))
        return (float(out) if out.ndim == 0 else out), scale
    if mechanism == "gaussian":
        if not 0.0 < delta < 1.0:
            raise ValueError(f"the Gaussian mechanism needs delta in (0, 1), got delta={delta!r}")
        v = np.asarray(value, dtype=float)
        if calibration == "analytic":
            sigma = noise.gaussian_sigma_approx_dp(sens, epsilon, delta)
        elif calibration == "classic":
            if epsilon >= 1:
                raise ValueError(
                    f"the classic Gaussian calibration (Corollary 12) is proven only for "
                    f"epsilon < 1, got epsilon={epsilon}; use calibration='analytic'"
                )
            sigma = sens * math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon
        else:
            raise ValueError(f"calibration must be 'analytic' or 'classic', got {calibration!r}")
        out = np.asarray(noise.add_gaussian(v, sigma, sensitivity=sens, rng=gen))
        return (float(out) if out.ndim == 0 else out), sigma
    if mechanism == "exponential":
        scores = np.asarray(value, dtype=float)
        if scores.size == 0:  # numpy's max() would fail with "zero-size array to reduction ..."
            raise ValueError("the exponential mechanism needs at least one candidate's score; "
                             "the statistic returned none")
        if sens == 0:
            # ε/(2Δ) → ∞: the mechanism's limit is uniform over the best-scoring candidates.
            best = np.flatnonzero(scores == scores.max())
            return _uniform_choice(best, gen), 0.0
        return noise.exponential_mechanism(scores, epsilon, sens, rng=gen), 2.0 * sens / epsilon
    if mechanism == "bernstein":
        rel = bernstein_mechanism(
            value, sensitivity=sens, epsilon=epsilon, lattice_k=lattice_k, dims=dims, h=h, rng=gen
        )
        return rel, sens * (lattice_k + 1) ** rel.dims / epsilon
    raise ValueError(
        f"mechanism must be 'laplace', 'gaussian', 'exponential' or 'bernstein', got {mechanism!r}"
    )


@dataclass(frozen=True, eq=False)
class SensitivityRelease:
    """What Sample-Then-Respond released, with its guarantee.

    Attributes
    ----------
    value :
        The private response: an array or float (Laplace, Gaussian), a candidate (exponential),
        or a :class:`BernsteinRelease` (Bernstein).
    privacy_ : RandomDP
        ``(ε, δ, γ)``-random DP (Theorem 15); ``guarantee`` is its deprecated name.
    sensitivity : SensitivityResult
        The sampler's estimate ``Δ̂`` with its sample and configuration.
    mechanism : str
    noise_scale : float
    """

    value: Any
    privacy_: Any
    sensitivity: SensitivityResult
    mechanism: str
    noise_scale: float

    guarantee = privacy_alias("guarantee")


@declare(epsilon=EPSILON_FINITE, gamma=GAMMA.also(None), m=PAIRS.also(None),
         k=PAIRS.also(None))
def sample_then_respond(
    f: Callable[[Any], Any],
    data: Any,
    oracle: Oracle | Any,
    *,
    epsilon: float,
    gamma: float | None = None,
    m: int | None = None,
    k: int | None = None,
    delta: float = 0.0,
    mechanism: Mechanism = "laplace",
    rng: RNGLike = None,
    candidates: Sequence[Any] | None = None,
    lattice_k: int = 10,
    dims: int = 1,
    h: int = 1,
    calibration: Literal["analytic", "classic"] = "analytic",
    sensitivity: SensitivityResult | None = None,
    n_jobs: int | None = None,
    n: int | None = None,
) -> SensitivityRelease:
    """Algorithm 2 (Sample-Then-Respond): release ``M_Δ̂(f(D))`` with ``(ε, δ, γ)``-random DP.

    Parameters
    ----------
    f : callable
        The statistic (see :func:`sample_sensitivity`). Exponential: ``f(D)`` is the score vector
        over ``candidates``. Bernstein: ``f(D)`` is a function on ``[0, 1]^dims`` (vectorised over
        points), or ``f.at_points(points)`` gives a statistic returning its values there.
    data : array-like
        The private data set; only ``f(data)`` and ``n = len(data)`` are used.
    oracle : callable or table
        The public distribution ``P`` (never the private data: that warns).
    epsilon : float
        Privacy level ε > 0.
    gamma, m, k :
        Passed to :func:`sampler_config` (give ``gamma`` or ``m``, or both).
    delta : float
        Gaussian only, in (0, 1).
    mechanism : {"laplace", "gaussian", "exponential", "bernstein"}
        Calibrated as paper §4: L1 / L2 / L∞ / L∞-on-the-lattice sensitivity.
    candidates : sequence, optional
        Exponential: the response set; the released value is ``candidates[index]``.
    lattice_k, dims, h : int
        Bernstein lattice size ``k``, dimension ``ℓ`` and iterated-Bernstein order (``h > 1``
        with ``ℓ > 1`` uses the tensor product of the 1-D iterated operators [INFERRED]).
    calibration : {"analytic", "classic"}
        Gaussian calibration, see :func:`respond`.
    sensitivity : SensitivityResult, optional
        A previous estimate to reuse (offline amortisation, paper §5.1); it must match ``n`` and
        the mechanism's norm. No new sampling is done.
    rng : None, int or Generator
    n_jobs : int, optional
        Parallel evaluation of the sampled pairs (see :func:`sample_sensitivity`).
    n : int, optional
        The public size of the data sets whose neighbours the sensitivity is sampled on (the
        release door's declared or privately estimated n). Default ``len(data)``, the paper's
        setting where n is public; with ``n`` given nothing about the private table's size
        decides what runs (``f`` must then be total, :meth:`Statistic.total`).

    Returns
    -------
    SensitivityRelease
        The value, its :class:`~dpcore.privacy.guarantees.RandomDP` guarantee and the sampler's
        output.

    Notes
    -----
    ``Δ̂ = 0`` (a statistic that did not change on the sampled pairs) releases ``f(D)`` without
    noise, which is what the mechanism prescribes: with probability ``>= 1 - γ`` a fresh pair
    has identical outputs, so ``ε``-DP holds on it for any ``ε``. A warning says so.
    """
    from dpcore.privacy.guarantees import PrivacyLeakWarning, RandomDP

    if mechanism not in _MECHANISM_NORM:
        raise ValueError(
            "mechanism must be 'laplace', 'gaussian', 'exponential' or 'bernstein', "
            f"got {mechanism!r}"
        )
    # the one constraints table (dpcore.data.params): ε ≤ 1e4, γ ≥ 1e-100, m bounded
    validate_params(sample_then_respond._parameter_constraints,
                    {"epsilon": epsilon, "gamma": gamma, "m": m, "k": k})
    if mechanism == "gaussian" and not 0.0 < delta < 1.0:
        raise ValueError(f"the Gaussian mechanism needs delta in (0, 1), got delta={delta!r}")
    if mechanism != "gaussian" and delta != 0.0:
        raise ValueError(f"delta is only used by the Gaussian mechanism; {mechanism} is pure (δ=0)")
    if n is None:
        try:
            n = len(data)
        except TypeError:
            raise ValueError(
                "data must be a sized collection of records (array, DataFrame, list)"
            ) from None
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 2:
        raise ValueError(f"the data set needs at least n=2 records, got n={n!r}")
    n = int(n)
    if oracle is data or (
        isinstance(oracle, np.ndarray)
        and isinstance(data, np.ndarray)
        and np.shares_memory(oracle, data)
    ):
        warnings.warn(
            "the oracle resamples the private data set itself; the sensitivity sample must be "
            "privacy-insensitive (a public or proxy distribution, paper Remark 7), so this "
            "release is not random-DP",
            PrivacyLeakWarning,
            stacklevel=2,
        )
    target = f
    if mechanism == "bernstein":
        target = _bernstein_target(f, bernstein_lattice(lattice_k, dims))
    order = _MECHANISM_NORM[mechanism]
    gen = as_generator(rng)
    if sensitivity is None:
        config = sampler_config(m=m, gamma=gamma, k=k)
        check_sampler_work(config.m, n, from_gamma=gamma if m is None else None)
        est = sample_sensitivity(
            target, oracle, n, m=config.m, k=config.k, norm=order, rng=gen, n_jobs=n_jobs
        )
        est = SensitivityResult(
            delta_hat=est.delta_hat,
            sensitivities=est.sensitivities,
            config=config,
            n=n,
            norm=est.norm,
            path=est.path,
        )
    else:
        est = sensitivity
        if est.n != n or est.norm != _norm_name(order):
            raise ValueError(
                f"the given sensitivity estimate is for n={est.n} in the {est.norm} norm; this "
                f"release needs n={n} in the {_norm_name(order)} norm ({mechanism} mechanism)"
            )
        config = est.config
    if config.gamma >= 1.0:
        raise ValueError(f"{config} gives no random-DP confidence (gamma >= 1); raise k or m")
    try:
        value = target(data)
    except Exception as exc:
        raise ValueError(
            f"the statistic failed on the data set ({type(exc).__name__}: {exc}); nothing released"
        ) from exc
    if not np.all(np.isfinite(np.asarray(value, dtype=float))):
        raise ValueError("the statistic returned non-finite values on the data; nothing released")
    scale_of_value = float(np.max(np.abs(np.asarray(value, dtype=float)), initial=1.0))
    if est.delta_hat <= _ZERO_SENSITIVITY * scale_of_value:
        warnings.warn(
            f"the sampled sensitivity Δ̂ = {est.delta_hat:.3g} is numerically 0: f did not "
            "change on the sampled pairs, so f(D) is released essentially without noise "
            "(random DP holds because f is insensitive on 1 - gamma of pairs; nothing is "
            "promised on the others; check that the oracle covers the data's domain)",
            UserWarning,
            stacklevel=2,
        )
    released, scale = respond(
        value,
        sensitivity=est.delta_hat,
        epsilon=epsilon,
        delta=delta,
        mechanism=mechanism,
        rng=gen,
        lattice_k=lattice_k,
        dims=dims,
        h=h,
        calibration=calibration,
    )
    if mechanism == "exponential" and candidates is not None:
        released = candidates[released]
    return SensitivityRelease(
        value=released,
        privacy_=RandomDP(epsilon=float(epsilon), delta=float(delta), gamma=config.gamma),
        sensitivity=est,
        mechanism=mechanism,
        noise_scale=scale,
    )
