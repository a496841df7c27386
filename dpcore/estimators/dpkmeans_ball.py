"""A private ball inside a public box: DPKMeans's ``seeding="private-ball"`` (issue 23.6).

DP-Lloyd's sum noise scales with the public domain (Su et al. 2016; Fay, Mair & Sjölund 2024,
Algorithm 2: ε_sum = r/β_sum). A declared box as wide as heavy-tailed data's per-column range
(KDD-like data: half-diagonal 370 for a bulk of norm ≈ 12) makes every noisy sum ~30× noisier
than the data need. On a share of ε this module releases a smaller domain instead:

1. a centre m: the noisy mean of the box-clamped rows, Σ (clip(x) − c) plus the box's own sum
   noise (:func:`dpcore.mechanisms.lloyd.domain.box_domain`: L2-exponential with the
   half-diagonal or per-coordinate Laplace, whichever has less noise), divided by the public n
   (post-processing), clamped to the box: ε_c-DP;
2. a radius r: the :data:`BALL_QUANTILE` of ‖clip(x) − m‖₂ by the exponential mechanism over
   public log-spaced candidates in [H/100, H], H the box's half-diagonal
   (:func:`dpcore.mechanisms.bounds.private_norm_quantile`): ε_r-DP given m.

Both are pure DP, so the pair is (ε_c + ε_r)-DP by basic composition (``privacy_``), and
DP-Lloyd on the ball ‖x − m‖ ≤ r with the rest of ε keeps the fit pure ε-DP. The rows are
clamped to the box, then projected onto the ball: the projection is part of the released
mechanism, so no row count outside the ball is ever shown.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.mechanisms.bounds import private_norm_quantile
from dpcore.mechanisms.lloyd.domain import (
    auto_count_share,
    ball_domain,
    box_domain,
    error_budget_n_iter,
)
from dpcore.privacy.guarantees import PureDP
from dpcore.privacy.kinds import compose
from dpcore.privacy.noise import add_l2_exponential, add_laplace, exponential_mechanism

__all__ = ["BALL_CENTRE_SPLIT", "BALL_QUANTILE", "BALL_SHARE", "PrivateBall", "ball_budget",
           "ball_is_quieter", "ball_parts", "private_ball", "private_centre", "stage_budget"]

#: Share of DPKMeans's ε spent on the ball (measured in ``benchmarks/bench_recommended.py``).
BALL_SHARE = 0.1
#: Share of the ball's ε spent on the centre (its noise grows with d; the radius needs less).
BALL_CENTRE_SPLIT = 0.7
#: The norm quantile the radius targets (``bench_kmeans``'s public radius for KDD-like data).
BALL_QUANTILE = 0.975
#: Smallest candidate radius ÷ the box's half-diagonal. Where ε·n is too small for the
#: exponential mechanism to resolve ranks its pick is near uniform, and a range of three decades
#: then picked radii of H/300 (every row projected onto a tiny sphere); two decades still cover
#: KDD-like data (r/H ≈ 0.03).
_LOWEST = 1e-2
#: Largest candidate ÷ the box's half-diagonal: a ball wider than the box's own enclosing ball
#: saves nothing, and every candidate above the data's norms dilutes the exponential mechanism.
_HIGHEST = 1.0
#: Candidate radii, 12 % apart: with 4 % spacing the many candidates above the data's norms
#: won the exponential mechanism often enough at ε ≤ 1 to pick radii 1.2–2× too large
#: (letter- and digit-like data); 12 % cost 1–3 % less on letter- and KDD-like data (15 seeds).
_CANDIDATES = 40


@dataclass(frozen=True)
class PrivateBall:
    """A privately released ball ‖x − center‖₂ ≤ radius and what it cost.

    Attributes
    ----------
    center : (d,) array, in the data's coordinates (inside the box)
    radius : float
    parts : (PureDP, PureDP), the centre's and the radius's guarantees
    """

    center: np.ndarray
    radius: float
    parts: tuple[PureDP, PureDP]

    @property
    def privacy_(self) -> PureDP:
        return compose(*self.parts)


def ball_budget(epsilon: float, share: float) -> tuple[float, float]:
    """(the ball's ε, DP-Lloyd's ε) for a fit of total ``epsilon`` spending ``share`` on the ball.

    DP-Lloyd gets (1 − share)·ε and the ball the exact difference (Sterbenz: exact for
    share ≤ 1/2), so the two add up to ε in floating point and ``privacy_`` is ε, not ε + 1 ulp.
    """
    lloyd = (1.0 - share) * epsilon
    return epsilon - lloyd, lloyd


def ball_parts(epsilon: float, centre_split: float = BALL_CENTRE_SPLIT
               ) -> tuple[PureDP, PureDP]:
    """The centre's and the radius's guarantees on the ball's ``epsilon`` (what
    :func:`private_ball` spends; the release's privacy map plans with the same numbers). The
    radius gets the exact remainder, so the parts compose to ``epsilon`` itself."""
    centre = centre_split * epsilon
    return PureDP(centre), PureDP(epsilon - centre)


def stage_budget(epsilon: float, n: float | None, k: int, bounds, d: int,
                 count_share: float | str, sum_noise: str = "auto",
                 n_iter: int | None = None) -> tuple[int, float]:
    """T and the count share of DP-Lloyd after the ball: the box's own rules
    (:func:`~dpcore.mechanisms.lloyd.domain.error_budget_n_iter`,
    :func:`~dpcore.mechanisms.lloyd.domain.auto_count_share`) at the *whole* ε.

    One (T, share) for whichever domain :func:`ball_is_quieter` picks, so the fit's parts are
    the privacy map's whatever the released radius (a function of public inputs only). At the
    whole ε: the rule's tolerance is relative to the domain, and at (1 − share)·ε it dropped a
    round the box fit gets (letter-like data at ε = 3: T = 2 instead of 3, +4 % cost); the
    ball's share buys a domain no noisier than the box, so the box's rounds stay affordable.
    """
    dom = box_domain(bounds, d, sum_noise=sum_noise)
    f = auto_count_share(dom) if isinstance(count_share, str) else float(count_share)
    t = error_budget_n_iter(epsilon, float(n), k, dom, f) if n_iter is None else int(n_iter)
    return t, f


def ball_is_quieter(ball: PrivateBall, bounds, d: int, sum_noise: str = "auto") -> bool:
    """Whether DP-Lloyd's sums are less noisy on the released ball than on the box: expected
    noise power at the same ε, r²·d(d + 1) for the ball's L2-exponential noise against the
    box's own (the comparison :func:`~dpcore.mechanisms.lloyd.domain.box_domain` makes between
    its two noises). Post-processing of the released radius. False on a box the data fill
    (Covertype: r = 0.9 of the half-diagonal, and the box's per-column Laplace noise spares its
    44 binary columns): DP-Lloyd then runs on the box, at the same T and share.
    """
    box = box_domain(bounds, d, sum_noise=sum_noise)
    ball_dom = ball_domain(ball.radius, d)
    return ball_dom.radius**2 * ball_dom.noise_power() < box.radius**2 * box.noise_power()


def private_ball(
    X: np.ndarray,
    bounds,
    n: float,
    epsilon: float,
    *,
    centre_split: float = BALL_CENTRE_SPLIT,
    quantile: float = BALL_QUANTILE,
    rng: RNGLike = None,
) -> tuple[PrivateBall, np.ndarray]:
    """Release a ball inside the public box on ``epsilon`` (module docstring).

    Parameters
    ----------
    X : (n, d) array
    bounds : (lo, hi)
        The public box (rows outside are clamped to it first).
    n : float
        The public (declared) row count that divides the noisy sum.
    epsilon : float
        The ball's ε (finite, > 0): ``centre_split`` of it for the centre, the rest for r.
    rng : None, int or Generator

    Returns
    -------
    ball : PrivateBall
    Z : (n, d) array
        The rows clamped to the box, mapped by x ↦ (x − center)/radius and projected onto the
        unit ball: what DP-Lloyd on ``radius=1`` reads without clipping again. (Its noise and
        ε are scale-free, so this is DP-Lloyd on the ball; on the unit ball a sampled stage's
        ε is computed with the same floats as the privacy map's, which cannot know r.)
    """
    gen = as_generator(rng)
    dom = box_domain(bounds, X.shape[1])
    parts = ball_parts(epsilon, centre_split)
    Y = np.clip(X, dom.lo, dom.hi) - dom.center
    m = _noisy_centre(Y, dom, n, parts[0].epsilon, gen)
    eps_r = parts[1].epsilon
    Y -= m
    H = dom.l2_radius
    lower, upper = _LOWEST * H, _HIGHEST * H
    if Y.shape[0]:
        r = private_norm_quantile(Y, quantile, epsilon=eps_r, lower=lower, upper=upper,
                                  n_candidates=_CANDIDATES, rng=gen).radius
    else:  # no rows (the door's parameter check): every score is 0, the same law as above
        j = exponential_mechanism(np.zeros(_CANDIDATES), eps_r, 1.0, rng=gen)
        r = float(np.geomspace(lower, upper, _CANDIDATES)[int(j)])
    Y /= r  # the unit ball: DP-Lloyd's accounting is then the map's, bit for bit
    Z, _ = ball_domain(1.0, X.shape[1]).clip(Y)
    return PrivateBall(m + dom.center, float(r), parts), Z


def private_centre(X: np.ndarray, bounds, n: float, epsilon: float, *,
                   rng: RNGLike = None) -> np.ndarray:
    """The ball's centre alone: the ε-DP noisy mean of the box-clamped rows over the public n
    (step 1 of the module docstring; what the audit tests)."""
    dom = box_domain(bounds, X.shape[1])
    Y = np.clip(X, dom.lo, dom.hi) - dom.center
    return _noisy_centre(Y, dom, n, epsilon, as_generator(rng)) + dom.center


def _noisy_centre(Y: np.ndarray, dom, n: float, eps: float, gen) -> np.ndarray:
    """Σ y over box-centred rows y = clip(x) − c plus the box's sum noise, ÷ the public n,
    clamped to the box (in the box-centred coordinates)."""
    s = Y.sum(axis=0)
    if dom.weights is None:  # ‖clip(x) − c‖₂ ≤ the half-diagonal
        noisy = add_l2_exponential(s[None], dom.radius / eps, sensitivity=dom.radius, rng=gen)[0]
    else:  # Σ|clip(x)_i − c_i|/u_i ≤ dom.radius: Lap(β u_i) per coordinate, as DP-Lloyd's sums
        u = dom.weights
        noisy = add_laplace(s / u, dom.radius / eps, sensitivity=dom.radius, rng=gen) * u
    return np.clip(noisy / float(n), -dom.half_ranges, dom.half_ranges)
