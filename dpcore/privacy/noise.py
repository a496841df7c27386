"""Noise samplers and their calibration: the only place dpcore draws DP noise.

* :func:`laplace`, :func:`gaussian`: i.i.d. scalar noise.
* :func:`sample_l2_exponential`: vectors with density ∝ exp(−‖z‖₂/β), the sum noise of DP-Lloyd
  (importance-sampling paper, Sec. 4 / App. D; spec ``importance_sampling.md`` §4.3). The radius
  ‖z‖₂ has density ∝ r^{d−1} e^{−r/β}, i.e. Gamma(shape=d, scale=β), and the direction is uniform on
  the sphere. The papers' public code draws an Exponential radius instead, which is a different
  density and is *not* ε-DP for d ≥ 2 (``dpcore.privacy.audit`` catches it).
* :func:`exponential_mechanism`: McSherry & Talwar (2007) over a finite candidate set, by the
  Gumbel-max trick, so it stays exact and finite for any ε·score.
* Calibration: :func:`laplace_scale`, :func:`gaussian_sigma_zcdp`,
  :func:`gaussian_sigma_approx_dp` (the analytic Gaussian mechanism of Balle & Wang 2018).
* Value-aware adders :func:`add_laplace`, :func:`add_gaussian`, :func:`add_l2_exponential`:
  ``value + noise``. Mechanisms call these, never ``value + laplace(...)``, so that inside
  :func:`defended_noise` (the release door) every draw is floating-point safe.
  :func:`add_discrete_laplace` adds P(z) ∝ exp(−a|z|) on ℤ to an integer statistic (a count):
  the two-sided geometric mechanism.

Floating-point defence (Mironov, CCS 2012)
-----------------------------------------
A textbook float sampler (Laplace as ``−b·sgn(U)·ln(1−2|U|)``, Gaussian, Gamma radius) reaches
only some doubles, and *which* doubles depends on the exact input: from one output of
``f(D) + Lap(b)`` an adversary can often tell f(D) = 0 from f(D′) = 1 with certainty
(``tests/test_noise_defended.py`` runs that attack). Inside :func:`defended_noise`:

* :func:`add_laplace` / :func:`add_gaussian` round the value to the grid λℤ with λ a power of two,
  add *exact* discrete Laplace / discrete Gaussian noise on that grid (Canonne, Kamath & Steinke
  2020; :mod:`dpcore.privacy.discrete_noise`, integer arithmetic only) and return ``λ·(integer)``.
  The output is post-processing of an exact integer mechanism, so no floating-point effect remains.
  Cost: rounding moves each of the s coordinates by ≤ λ/2, so the integer sensitivity grows from
  Δ/λ to at most Δ/λ + s (ℓ1) or Δ/λ + √s (ℓ2); with ``λ = 2^⌊log₂(ηΔ/s)⌋`` (ℓ1) or
  ``2^⌊log₂(ηΔ/√s)⌋`` (ℓ2) that is a factor ≤ 1 + η on the sensitivity. Discrete Laplace with
  scale b/λ is then ε(1 + η)-DP (ε = Δ/b) and the discrete Gaussian with σ/λ is
  ρ(1 + η)²-zCDP (CKS 2020, Thm 4 / Prop. 5 for independent coordinates). ``sensitivity`` must be
  a *lower* bound on the true one: a smaller value only makes the grid finer (η·Δ_given/Δ_true
  ≤ η). Values are clamped to ±2⁶²λ first (1-Lipschitz, so free) so the integers stay in int64.
* :func:`add_discrete_laplace` needs no grid: the value is an integer and the exact CKS sampler
  draws the discrete Laplace with parameter a' = 1/s, s the smallest double ≥ 1/a, so a' ≤ a
  (a little *more* noise) and the release keeps its nominal ε = a·Δ₁ without any slack.
* :func:`add_l2_exponential` rounds the value to the ℓ2 grid the same way and snaps the (float)
  Gamma-radius noise to that grid, so the output is a multiple of λ whatever the input: the
  exact-input recovery of Mironov's attack is gone and the rounding costs the same (1 + η)
  factor plus √d·λ/β ≤ η·ε for the snapping of an ideal noise vector. The float Gamma / normal
  samplers themselves are not proven exact (no exact sampler of this density is known to us).
* :func:`exponential_mechanism` outputs an index, which has no low-order bits to leak; it keeps
  the Gumbel-max sampler.

The whole run's extra cost is fixed before it starts: :func:`defended_noise` takes the release's
nominal guarantee and yields a :class:`NoiseDefence` whose ``slack`` is the extra
(``((1 + η)² − 1)·`` the nominal ε or ρ), a guarantee the door composes into its charge.
Outside the context (explore mode, experiments) the adders draw exactly what
``value + laplace(...)`` drew before: same speed, same seeded streams.

Which random draws are noise (the rule ``tests/test_noise_trap.py`` enforces)
------------------------------------------------------------------------------
In a release (the door's :func:`defended_noise` block) every call of a sampling method of
:class:`numpy.random.Generator`, made directly or through a library such as SciPy, must come from
one of three kinds of code. The innermost frame of the call stack that is dpcore code or a
registered site decides (:func:`draw_site`):

1. **defended noise**: the samplers behind this module's ``add_*`` adders, i.e. the seed of the
   exact integer samplers (:func:`dpcore.privacy.discrete_noise.integer_source`) and the snapped
   noise of :func:`add_l2_exponential` (only when reached from it with the defence active). The
   bare float samplers (:func:`laplace`, :func:`gaussian`, :func:`sample_l2_exponential` called
   directly) never are.
2. **selection** (:func:`selection_sampler`): DP randomness whose result is a discrete choice, i.e.
   :func:`exponential_mechanism`, the exact lazy or rejection samplers of its law (max-cover's grid
   samplers) and a filter's Bernoulli selection. An index, a grid point or a bit has no low-order
   bits for Mironov's attack to read. (Their probabilities, Gumbel variates and acceptance tests
   are still computed in floating point, a relative error of the law of order 2⁻⁵² that this rule
   does not address.)
3. **public randomness** (:func:`public_randomness`): randomness that is not a noise term of a
   statistic of the data. It is independent of the data (random directions, JL matrices,
   rotations, grid shifts, initial centres in the declared domain, records of a public oracle),
   or it chooses rows (Poisson subsampling, uniform part labels), or it drives a computation whose
   output reaches the release only through a later DP step or after one (FriendlyCore's
   non-private oracles; k-means++ on an already-private coreset, :func:`postprocessing_seed`).

A registered site is a small named function that makes its draws itself and states why in its
``reason``. It never adds a random term to a statistic of the private data: that is noise, and
noise goes through an ``add_*`` adder. Every other draw in a release is *raw* noise; the trap
test names the mechanism, the method and the call site. Registering costs nothing at run time
(the decorators return the function unchanged).
"""

from __future__ import annotations

import contextvars
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.privacy import discrete_noise
from dpcore.privacy.draw_sites import (  # re-exported: the rule is stated in this module
    draw_site,
    postprocessing_seed,
    public_randomness,
    register_defended,
    selection_sampler,
)
from dpcore.privacy.guarantees import ZCDP, ApproxDP, Guarantee, PureDP, RandomDP

__all__ = [
    "DEFAULT_ETA",
    "NoiseDefence",
    "add_discrete_laplace",
    "add_gaussian",
    "add_l2_exponential",
    "add_laplace",
    "defended_noise",
    "defence_active",
    "draw_site",
    "exponential_mechanism",
    "exponential_mechanism_probabilities",
    "gaussian",
    "gaussian_sigma_approx_dp",
    "gaussian_sigma_zcdp",
    "laplace",
    "laplace_scale",
    "postprocessing_seed",
    "public_randomness",
    "sample_l2_exponential",
    "selection_sampler",
]


def _scale(name: str, value: float) -> float:
    v = float(value)
    if not math.isfinite(v) or v < 0:
        raise ValueError(f"{name} must be finite and ≥ 0, got {value!r}")
    return v


def laplace(scale: float, size: int | tuple[int, ...] | None = None, *, rng: RNGLike = None):
    """I.i.d. Laplace(0, ``scale``) noise, density ∝ exp(−|x|/scale). ``scale = 0`` gives zeros.

    A float sampler, not for release: refused inside :func:`defended_noise` (use
    :func:`add_laplace`).
    """
    _refuse_bare("laplace")
    scale = _scale("scale", scale)
    gen = as_generator(rng)
    if scale == 0:
        return np.zeros(size) if size is not None else 0.0
    return gen.laplace(0.0, scale, size)


def gaussian(sigma: float, size: int | tuple[int, ...] | None = None, *, rng: RNGLike = None):
    """I.i.d. N(0, σ²) noise. ``sigma = 0`` gives zeros (refused inside :func:`defended_noise`)."""
    _refuse_bare("gaussian")
    sigma = _scale("sigma", sigma)
    gen = as_generator(rng)
    if sigma == 0:
        return np.zeros(size) if size is not None else 0.0
    return gen.normal(0.0, sigma, size)


def sample_l2_exponential(beta: float, dim: int, size: int, *, rng: RNGLike = None) -> np.ndarray:
    """Draw ``size`` vectors in R^dim with density ∝ exp(−‖z‖₂/β).

    Polar decomposition (spec ``importance_sampling.md`` §4.3): the radius R = ‖z‖₂ has density
    ∝ r^{dim−1} e^{−r/β}, i.e. R ~ Gamma(shape=dim, scale=β), independent of the direction, which
    is uniform on the unit sphere (a normalised standard normal vector). Then E‖z‖₂ = dim·β.

    Parameters
    ----------
    beta : float
        Scale β > 0. Releasing f(D) + z is (Δ₂/β)-DP for an ℓ2-sensitivity Δ₂.
    dim : int
        Dimension d ≥ 1.
    size : int
        Number of vectors.
    rng : None, int or Generator

    Returns
    -------
    ndarray of shape (size, dim)
    """
    _refuse_bare("sample_l2_exponential")
    return _l2_exponential_draw(*_check_l2_exponential(beta, dim, size), as_generator(rng))


def _check_l2_exponential(beta: float, dim: int, size: int) -> tuple[float, int, int]:
    beta = float(beta)
    if not math.isfinite(beta) or beta <= 0:
        raise ValueError(f"beta must be finite and > 0, got {beta!r}")
    dim, size = int(dim), int(size)
    if dim < 1 or size < 0:
        raise ValueError(f"need dim ≥ 1 and size ≥ 0, got dim={dim}, size={size}")
    return beta, dim, size


def _l2_exponential_draw(beta: float, dim: int, size: int, gen: np.random.Generator):
    """The float draw of :func:`sample_l2_exponential` (defended only when
    :func:`add_l2_exponential` snaps it: :func:`draw_site`)."""
    direction = gen.standard_normal((size, dim))
    norms = np.linalg.norm(direction, axis=1, keepdims=True)
    # A zero normal vector has probability 0; guard anyway so we never divide by zero.
    norms[norms == 0] = 1.0
    radius = gen.gamma(shape=dim, scale=beta, size=(size, 1))
    return direction * (radius / norms)


def laplace_scale(sensitivity: float, epsilon: float) -> float:
    """Scale b = Δ₁/ε of the Laplace mechanism for ε-DP (Dwork et al. 2006)."""
    sensitivity = _scale("sensitivity", sensitivity)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    return sensitivity / float(epsilon)


def gaussian_sigma_zcdp(l2_sensitivity: float, rho: float) -> float:
    """σ = Δ₂/√(2ρ) of the Gaussian mechanism for ρ-zCDP (Bun & Steinke 2016, Prop. 1.6)."""
    l2_sensitivity = _scale("l2_sensitivity", l2_sensitivity)
    if not rho > 0:
        raise ValueError(f"rho must be > 0, got {rho!r}")
    return l2_sensitivity / math.sqrt(2.0 * float(rho))


def _analytic_gaussian_delta(sigma: float, sensitivity: float, epsilon: float) -> float:
    # Balle & Wang (2018), Thm 8: δ(σ) = Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ); log-space for
    # the second term so large ε does not overflow.
    a = sensitivity / (2.0 * sigma)
    b = epsilon * sigma / sensitivity
    from scipy import special  # on use: scipy.special/optimize cost ≈ 0.4 s at start-up

    return float(special.ndtr(a - b) - math.exp(epsilon + special.log_ndtr(-a - b)))


def gaussian_sigma_approx_dp(l2_sensitivity: float, epsilon: float, delta: float) -> float:
    """Smallest σ for which the Gaussian mechanism is (ε, δ)-DP (analytic Gaussian mechanism).

    Solves Balle & Wang (2018, Thm 8) ``Φ(Δ/2σ − εσ/Δ) − e^ε Φ(−Δ/2σ − εσ/Δ) = δ`` for σ; exact
    for every ε > 0 (the classical Δ√(2 ln(1.25/δ))/ε is only valid for ε < 1 and is looser).
    """
    l2_sensitivity = _scale("l2_sensitivity", l2_sensitivity)
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta!r}")
    if l2_sensitivity == 0:
        return 0.0

    def gap(log_sigma: float) -> float:
        return _analytic_gaussian_delta(math.exp(log_sigma), l2_sensitivity, epsilon) - delta

    lo = math.log(l2_sensitivity) - 10.0
    hi = math.log(l2_sensitivity * (math.sqrt(2.0 * math.log(1.25 / delta)) / epsilon + 1.0))
    while gap(lo) < 0:
        lo -= 10.0
    while gap(hi) > 0:
        hi += 2.0
    from scipy import optimize  # on use (start-up time, issue 23.7)

    return math.exp(optimize.brentq(gap, lo, hi, xtol=1e-14, rtol=1e-12))


def _em_logits(scores, epsilon: float, sensitivity: float, monotonic: bool) -> np.ndarray:
    s = np.asarray(scores, dtype=float)
    if s.ndim != 1 or s.size == 0:
        raise ValueError("scores must be a non-empty 1-D array")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    if not epsilon > 0:
        raise ValueError(f"epsilon must be > 0, got {epsilon!r}")
    if not sensitivity > 0:
        raise ValueError(f"sensitivity must be > 0, got {sensitivity!r}")
    factor = 1.0 if monotonic else 2.0
    # Shift by the maximum first: the logits are then ≤ 0, and a huge ε·score can only push the
    # others towards −inf (probability 0), never overflow to +inf.
    with np.errstate(over="ignore"):
        return (float(epsilon) / (factor * float(sensitivity))) * (s - s.max())


@selection_sampler("the exponential mechanism's Gumbel-max draw: its output is an index")
def exponential_mechanism(
    scores,
    epsilon: float,
    sensitivity: float,
    *,
    rng: RNGLike = None,
    size: int | None = None,
    monotonic: bool = False,
):
    """Pick index i with probability ∝ exp(ε·score_i / (2Δ)) (McSherry & Talwar 2007).

    Gumbel-max: argmax_i (ε·score_i/(2Δ) + G_i) with G_i i.i.d. standard Gumbel has exactly that
    law and never exponentiates, so it is exact and finite for any ε·score. ε-DP when each
    score has sensitivity ≤ Δ; with ``monotonic=True`` (scores that move in one direction
    between neighbours) the factor 2 is dropped, as the standard analysis allows.

    Returns
    -------
    int, or ndarray of ``size`` ints
    """
    logits = _em_logits(scores, epsilon, sensitivity, monotonic)
    gen = as_generator(rng)
    if size is None:
        return int(np.argmax(logits + gen.gumbel(size=logits.shape)))
    return np.argmax(logits[None, :] + gen.gumbel(size=(int(size), logits.size)), axis=1)


def exponential_mechanism_probabilities(
    scores, epsilon: float, sensitivity: float, *, monotonic: bool = False
) -> np.ndarray:
    """The exact output distribution of :func:`exponential_mechanism` (log-sum-exp, stable)."""
    logits = _em_logits(scores, epsilon, sensitivity, monotonic)
    from scipy import special  # on use (start-up time, issue 23.7)

    return np.exp(logits - special.logsumexp(logits))


# --------------------------------------------------------------------------------------------
# Floating-point-safe release noise (module docstring, "Floating-point defence")
# --------------------------------------------------------------------------------------------

#: Relative sensitivity inflation per draw inside :func:`defended_noise` (2⁻²⁰ ≈ 9.5e-7).
DEFAULT_ETA = 2.0**-20
_CLAMP_UNITS = 2.0**62


@dataclass(frozen=True)
class NoiseDefence:
    """What :func:`defended_noise` yields.

    Attributes
    ----------
    eta : float
        Sensitivity inflation factor 1 + η of every draw (η fixed for the whole run).
    nominal : Guarantee
        The release's guarantee as if noise were ideal (what the mechanism reports).
    slack : Guarantee
        The extra cost of the defence, known before the run: ``((1 + η)² − 1)`` times the nominal
        ε (pure / approximate DP, and ε of random DP) or ρ (zCDP), δ and γ unchanged. It bounds the
        effect of inflating every sensitivity by 1 + η: pure-ε and Laplace parts scale by 1 + η,
        ρ of zCDP parts by (1 + η)², and the (ε, δ) guarantees dpcore reports are conversions of
        those (ρ + 2√(ρ ln 1/δ) grows by at most (1 + η)²). ``compose(nominal, slack)`` is the
        delivered guarantee.
    """

    eta: float
    nominal: Guarantee | None

    def slack_for(self, nominal: Guarantee) -> Guarantee:
        """The defence's extra cost for a release whose ideal-noise guarantee is ``nominal``."""
        return _slack(nominal, (1.0 + self.eta) ** 2 - 1.0)

    @property
    def slack(self) -> Guarantee:
        if self.nominal is None:
            raise ValueError("defended_noise() was entered without the release's nominal "
                             "guarantee: pass it, or use slack_for(guarantee)")
        return self.slack_for(self.nominal)

    @property
    def delivered(self) -> Guarantee:
        """``compose(nominal, slack)``: what the release delivers with the defence."""
        from dpcore.privacy.guarantees import compose

        return compose(self.nominal, self.slack)


_DEFENCE: contextvars.ContextVar[NoiseDefence | None] = contextvars.ContextVar(
    "dpcore_noise_defence", default=None
)


def _slack(nominal: Guarantee, growth: float) -> Guarantee:
    if isinstance(nominal, PureDP):
        return PureDP(growth * nominal.epsilon)
    if isinstance(nominal, ZCDP):
        return ZCDP(growth * nominal.rho)
    if isinstance(nominal, RandomDP):
        return RandomDP(growth * nominal.epsilon, 0.0, 0.0)
    if isinstance(nominal, ApproxDP):
        return ApproxDP(growth * nominal.epsilon, 0.0)
    raise TypeError(f"nominal must be a dpcore.privacy.guarantees guarantee, got {nominal!r}")


@contextmanager
def defended_noise(
    nominal: Guarantee | None = None, *, eta: float = DEFAULT_ETA
) -> Iterator[NoiseDefence]:
    """Release-mode noise: every draw in the block is floating-point safe (module docstring).

    Parameters
    ----------
    nominal : Guarantee, optional
        The guarantee the release claims with ideal noise (the door's charge); ``slack`` is
        computed from it before the run (without it, call ``slack_for(guarantee)``).
    eta : float
        Relative sensitivity inflation per draw, in (0, 2⁻¹⁰].

    Yields
    ------
    NoiseDefence
        ``slack`` is the extra guarantee to compose into the charge. Inside the block the bare
        samplers :func:`laplace`, :func:`gaussian`, :func:`sample_l2_exponential` refuse (a noise
        draw that does not see its value cannot be defended); use the ``add_*`` adders.
    """
    eta = float(eta)
    if not 0 < eta <= 2.0**-10:
        raise ValueError(f"eta must be in (0, 2^-10], got {eta!r}")
    if nominal is not None:
        _slack(nominal, 0.0)  # type check up front
    defence = NoiseDefence(eta, nominal)
    token = _DEFENCE.set(defence)
    try:
        yield defence
    finally:
        _DEFENCE.reset(token)


def defence_active() -> bool:
    """True inside :func:`defended_noise`."""
    return _DEFENCE.get() is not None


def _refuse_bare(name: str) -> None:
    if _DEFENCE.get() is not None:
        raise RuntimeError(
            f"noise.{name} was called inside defended_noise(): release-mode noise must go "
            f"through the value-aware adders (add_laplace, add_gaussian, add_l2_exponential)"
        )


def _grid(sensitivity: float, per_element: float, eta: float) -> float:
    """Largest power of two λ ≤ η·Δ/per_element (per_element = s for ℓ1, √s for ℓ2)."""
    target = eta * sensitivity / per_element
    if not (math.isfinite(target) and target > 2.0**-1000):
        raise ValueError(f"sensitivity must be finite and > 0 (defended noise), got {sensitivity}")
    return 2.0 ** math.floor(math.log2(target))


def _to_units(value: np.ndarray, lam: float) -> np.ndarray:
    """round(clamp(value)/λ) as int64 (exact: λ is a power of two)."""
    bound = _CLAMP_UNITS * lam
    return np.rint(np.clip(value, -bound, bound) / lam).astype(np.int64)


def _shape_out(value: np.ndarray, out: np.ndarray):
    return float(out) if value.ndim == 0 else out


def _check_sensitivity(sensitivity: float) -> float:
    s = float(sensitivity)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"sensitivity must be finite and > 0, got {sensitivity!r}")
    return s


def add_laplace(value, scale: float, *, sensitivity: float, rng: RNGLike = None):
    """``value + Lap(scale)`` per coordinate; floating-point safe inside :func:`defended_noise`.

    Parameters
    ----------
    value : float or array
        The statistic f(D) (every coordinate gets independent noise).
    scale : float
        Laplace scale b (≥ 0; 0 returns the value).
    sensitivity : float
        A lower bound on the ℓ1 sensitivity Δ₁ of ``value`` that the privacy proof uses (sets the
        defended grid; see the module docstring). Not used outside the defence.
    rng : None, int or Generator

    Returns
    -------
    float for a scalar value, else an array of the value's shape.
    """
    v = np.asarray(value, dtype=float)
    scale = _scale("scale", scale)
    defence = _DEFENCE.get()
    if scale == 0:  # no noise (inside the defence too, where the bare laplace() refuses)
        return _shape_out(v, v + 0.0)
    if defence is None:
        return _shape_out(v, v + laplace(scale, v.shape if v.ndim else None, rng=rng))
    lam = _grid(_check_sensitivity(sensitivity), max(v.size, 1), defence.eta)
    src = discrete_noise.integer_source(rng)
    z = discrete_noise.discrete_laplace(Fraction(scale) / Fraction(lam), v.size, src)
    return _shape_out(v, (_to_units(v, lam) + z.reshape(v.shape)) * lam)


def _discrete_laplace_scale(a: float) -> Fraction:
    """The exact scale s = the smallest double ≥ 1/a, so that the parameter 1/s ≤ a."""
    scale = Fraction(1.0 / a)
    if Fraction(1) / scale > Fraction(a):
        scale = Fraction(math.nextafter(1.0 / a, math.inf))
    return scale


def add_discrete_laplace(value, a: float, *, rng: RNGLike = None):
    """``value + Z`` per coordinate with P(Z = z) ∝ exp(−a|z|), z ∈ ℤ, for an integer ``value``.

    The two-sided geometric mechanism (Ghosh, Roughgarden & Sundararajan 2009): ε-DP for an
    integer statistic of ℓ1 sensitivity Δ₁ with a = ε/Δ₁. Inside :func:`defended_noise` the noise
    is the exact sampler of :func:`dpcore.privacy.discrete_noise.discrete_laplace` with parameter
    a' ≤ a (module docstring: no grid, no slack); outside it (explore mode), the difference of
    two numpy geometric draws: fast, but float-based and not proven exact.

    Parameters
    ----------
    value : int, float or array
        Integer values (a count, counts); a non-integer value is refused.
    a : float
        The parameter a > 0 (finite).
    rng : None, int or Generator

    Returns
    -------
    float for a scalar value, else a float array of the value's shape (integer-valued).
    """
    v = np.asarray(value, dtype=float)
    a = float(a)
    if not (math.isfinite(a) and a > 0):
        raise ValueError(f"a must be finite and > 0, got {a!r}")
    if not (np.all(np.isfinite(v)) and np.all(v == np.rint(v))
            and np.all(np.abs(v) <= _CLAMP_UNITS)):
        raise ValueError("add_discrete_laplace needs integer values (|value| ≤ 2^62)")
    if _DEFENCE.get() is None:
        p = -math.expm1(-a)  # 1 − e^{−a}: Geometric(p) − Geometric(p) has P(z) ∝ e^{−a|z|}
        size = v.shape if v.ndim else None
        gen = as_generator(rng)
        return _shape_out(v, v + (gen.geometric(p, size=size) - gen.geometric(p, size=size)))
    src = discrete_noise.integer_source(rng)
    z = discrete_noise.discrete_laplace(_discrete_laplace_scale(a), v.size, src)
    return _shape_out(v, (v.astype(np.int64) + z.reshape(v.shape)).astype(float))


def add_gaussian(value, sigma, *, sensitivity: float, rng: RNGLike = None):
    """``value + N(0, σ²)`` per coordinate; floating-point safe inside :func:`defended_noise`.

    ``sigma`` may be an array broadcastable to the value (independent blocks, e.g. one σ per
    cluster); ``sensitivity`` is then a lower bound on the smallest block's ℓ2 sensitivity.
    Defended: exact discrete Gaussian on the grid λℤ, λ = 2^⌊log₂(ηΔ₂/√s)⌋.
    """
    v = np.asarray(value, dtype=float)
    sig = np.broadcast_to(np.asarray(sigma, dtype=float), v.shape)
    if not np.all(np.isfinite(sig) & (sig >= 0)):
        raise ValueError("sigma must be finite and ≥ 0")
    defence = _DEFENCE.get()
    if defence is not None and not np.any(sig > 0):
        return _shape_out(v, v.copy())
    if defence is None:
        if np.ndim(sigma) == 0:
            return _shape_out(v, v + gaussian(float(sigma), v.shape if v.ndim else None, rng=rng))
        return v + gaussian(1.0, v.shape, rng=rng) * sig
    lam = _grid(_check_sensitivity(sensitivity), math.sqrt(max(v.size, 1)), defence.eta)
    src = discrete_noise.integer_source(rng)
    units = _to_units(v, lam).ravel()
    flat_sig = sig.ravel()
    out = units.copy()
    for s_val in np.unique(flat_sig[flat_sig > 0]):
        idx = np.flatnonzero(flat_sig == s_val)
        sigma2 = (Fraction(float(s_val)) / Fraction(lam)) ** 2
        out[idx] += discrete_noise.discrete_gaussian(sigma2, idx.size, src)
    return _shape_out(v, (out * lam).reshape(v.shape))


def add_l2_exponential(value, beta: float, *, sensitivity: float, rng: RNGLike = None):
    """``value`` (k, d) plus k vectors of density ∝ exp(−‖z‖₂/β) (:func:`sample_l2_exponential`).

    Defended: value rounded to λℤ (λ = 2^⌊log₂(ηΔ₂/√(kd))⌋) and the noise snapped to the same grid,
    so every output is a multiple of λ (module docstring: the float Gamma sampler is not proven
    exact). ``sensitivity`` is a lower bound on the ℓ2 sensitivity of one row.
    """
    v = np.asarray(value, dtype=float)
    if v.ndim != 2:
        raise ValueError(f"value must be a (k, d) array, got shape {v.shape}")
    k, d = v.shape
    defence = _DEFENCE.get()
    if defence is None:
        return v + sample_l2_exponential(beta, d, k, rng=rng)
    lam = _grid(_check_sensitivity(sensitivity), math.sqrt(max(v.size, 1)), defence.eta)
    z = _l2_exponential_draw(*_check_l2_exponential(beta, d, k), as_generator(rng))
    return (_to_units(v, lam) + _to_units(z, lam)) * lam


register_defended(discrete_noise.integer_source, "seed of the exact integer samplers (CKS 2020)")
register_defended(
    _l2_exponential_draw, "add_l2_exponential: noise snapped to the defended grid",
    when=lambda frame: (frame.f_back is not None
                        and frame.f_back.f_code is add_l2_exponential.__code__
                        and defence_active()))
