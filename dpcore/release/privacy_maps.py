"""Privacy maps: each registered mechanism's guarantee as a function of its public parameters.

A registry row (:class:`~dpcore.release.registry.Entry`) has a map (OpenDP's idea of a
measurement with a privacy map; ``Entry.privacy_map``, from :data:`MAPS` by key):
``map(params, facts) -> Planned``, where ``params`` are the
release's resolved public parameters and ``facts`` the public facts of the table (the declared or
privately estimated n, the number of columns d). The map returns the guarantee in the
mechanism's native kind (pure ε, (ε, δ), zCDP ρ, random DP) and, where the release's structure is
known, its parts (:mod:`dpcore.privacy.parts`) for the ledger's tight total. The release door
charges from the map, so planning a release takes milliseconds and never runs the mechanism (it
used to dry-run it on a public proxy: ~77 s for FriendlyCore k-means on the cities set).

The maps compute with the estimators' own public planning code (DP-Lloyd's ``_domain`` /
``_budget`` and :func:`~dpcore.mechanisms.importance.calibration.calibrate_lloyd`, FriendlyCore's
``_check_params``, the budget splits of max-cover and Balcan et al.), called on public inputs only,
never on data. ``tests/test_registry.py`` checks, for every registered mechanism over drawn
parameters, that the map equals the ``privacy_`` (and parts) the estimator reports after a real
fit, so the map and the code cannot drift; the door also yields ⊥ (charged) if a fit delivers more
than was charged.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from dpcore.privacy.guarantees import (
    ZCDP,
    ApproxDP,
    Guarantee,
    Part,
    PrivacyLeakWarning,
    PureDP,
    RandomDP,
    compose,
)

__all__ = ["CHECKED_BY_MAP", "MAPS", "Planned", "PublicFacts", "lloyd_plan_rounds"]


@dataclass(frozen=True)
class PublicFacts:
    """What a map may read about the table: all public."""

    n: int
    d: int


@dataclass(frozen=True)
class Planned:
    """A release's guarantee and (None: unknown) parts, from public inputs only."""

    guarantee: Guarantee
    parts: tuple[Part, ...] | None = None


PrivacyMap = Callable[[Mapping[str, Any], PublicFacts], Planned]


def _eps(p: Mapping[str, Any]) -> float:
    return float(p["epsilon"])


def approx_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """(ε, δ) as asked: NoisyAVG (paper 003, Thm 2.6) and LSH clustering (CK21; its noise is
    calibrated to exactly (ε, δ) by :func:`lsh_noise_parameters`)."""
    return Planned(ApproxDP(_eps(p), float(p["delta"])))


def kv18_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """ρ-zCDP: the d Gaussian histograms on ``range_share``·ρ and the clipped mean on the rest."""
    return Planned(ZCDP(float(p["rho"])))


def sensitivity_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """(ε, δ, γ)-random DP (paper 004, Thm 15): γ is the sampler configuration's
    (:func:`~dpcore.mechanisms.sensitivity.config.sampler_config` of the public m and γ)."""
    from dpcore.mechanisms.sensitivity.config import sampler_config
    from dpcore.mechanisms.sensitivity.statistics import get_statistic

    n = int(p.get("n") or facts.n)
    if n < 2:  # the sampler's neighbours need two records (public: the declared n)
        raise ValueError(f"the data set needs at least n=2 records, got the public n={n}")
    get_statistic(p["statistic"], **(p.get("statistic_params") or {}))  # a bad name: refused
    mechanism, delta = p.get("mechanism", "laplace"), float(p.get("delta", 0.0))
    if mechanism == "bernstein":  # a function, not values: the door would charge, then give ⊥
        raise ValueError("the release door releases values; the Bernstein mechanism releases "
                         "a function (use dpcore.mechanisms.sensitivity.sample_then_respond)")
    if (mechanism == "gaussian") != (delta > 0):
        raise ValueError("delta is used by the Gaussian mechanism only, and it needs one in (0, 1)")
    config = sampler_config(m=p.get("m"), gamma=p.get("gamma"))
    if config.gamma >= 1.0:
        raise ValueError(f"{config} gives no random-DP confidence (gamma >= 1); raise k or m")
    return Planned(RandomDP(_eps(p), delta, config.gamma))


def lloyd_plan_rounds(lloyd: Any, epsilon: float, facts: PublicFacts
                      ) -> tuple[Part, ...] | None:
    """DP-Lloyd's T rounds of a Laplace count and sum noise, planned as its ``fit`` does
    (``_domain``, ``_budget``, :func:`calibrate_lloyd` with no sampler) on public inputs: the
    parts :func:`dpcore.release.release_parts.lloyd_rounds` reads off a fitted estimator. None
    with a sampler (the rounds share one sample)."""
    from dpcore.mechanisms.importance.calibration import calibrate_lloyd

    if lloyd.sampler is not None or not math.isfinite(epsilon):
        return None
    dom = lloyd._domain(facts.d)
    t, share = lloyd._budget(epsilon, facts.n, facts.d, int(lloyd.n_clusters), dom)
    cal = calibrate_lloyd(None, epsilon=epsilon, n=facts.n, dim=facts.d, radius=dom.radius,
                          n_iter=t, count_share=share)
    e_count, e_sum = 1.0 / float(cal.beta_count), float(dom.radius) / float(cal.beta_sum)
    if abs(t * (e_count + e_sum) - epsilon) > 1e-9 * epsilon:
        return None
    return (PureDP(e_count), PureDP(e_sum)) * t


def lloyd_epsilon(lloyd: Any, epsilon: float, facts: PublicFacts) -> float:
    """The ε DP-Lloyd reports: the target, or with ``sampler="uniform"`` the amplified ε its
    closed-form calibration returns (paper 000, Prop. 3, rounded as ``calibrate_lloyd`` does).
    Samplers whose noise reads the data warn :class:`PrivacyLeakWarning` as ``fit`` does (the
    door refuses them)."""
    from dpcore.mechanisms.importance.calibration import calibrate_lloyd

    sampler = lloyd.sampler
    if sampler is None or not math.isfinite(epsilon):
        return epsilon
    if sampler == "coreset" or (sampler == "privacy" and lloyd.sample_size is not None):
        warnings.warn(f"sampler={sampler!r} with a sample_size chooses the noise from the data",
                      PrivacyLeakWarning, stacklevel=2)
    if sampler != "uniform":
        return epsilon
    dom = lloyd._domain(facts.d)
    t, share = lloyd._budget(epsilon, facts.n, facts.d, int(lloyd.n_clusters), dom)
    n_pub = round(facts.n if lloyd.n is None else float(lloyd.n))
    return calibrate_lloyd("uniform", epsilon=epsilon, n=n_pub, dim=facts.d, radius=dom.radius,
                           n_iter=t, sample_size=lloyd.sample_size, count_share=share).epsilon


def dplloyd_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """ε-DP (paper 000, Alg. 2: T rounds with T(ε_count + ε_sum) = ε; a sampler's ε from its
    calibration, :func:`lloyd_epsilon`)."""
    from dpcore.mechanisms.lloyd.estimator import DPLloyd

    lloyd = DPLloyd(**p)
    eps = _eps(p)
    return Planned(PureDP(lloyd_epsilon(lloyd, eps, facts)),
                   lloyd_plan_rounds(lloyd, eps, facts))


def _stage(k: int, epsilon: float, facts: PublicFacts, *, partition: bool, n_iter=None,
           **stage: Any) -> tuple[float, tuple[Part, ...] | None]:
    """The DP-Lloyd stage of a seeded k-means as
    :func:`~dpcore.mechanisms.lloyd.staged.fit_lloyd_stage` builds it (``stage``: its keyword
    arguments), planned on public inputs; ``partition``: a seeding's partition adds
    :data:`PARTITION_ROUNDS` to the error-budget rule's T. Returns the stage's reported ε and
    its rounds."""
    from dpcore.mechanisms.importance.grid import DEFAULT_GRID
    from dpcore.mechanisms.lloyd.estimator import DPLloyd
    from dpcore.mechanisms.lloyd.staged import PARTITION_ROUNDS

    kw = {"count_share": "auto", "sum_noise": "auto", "sampler": None, **stage}
    lloyd = DPLloyd(k, epsilon=epsilon, n_iter=n_iter, preset="auto",
                    q_grid=DEFAULT_GRID if kw["sampler"] == "privacy" else None,
                    diagnostics=False, **kw)
    if partition and n_iter is None:
        rule, _ = lloyd._budget(epsilon, facts.n, facts.d, k, lloyd._domain(facts.d))
        lloyd.n_iter = rule + PARTITION_ROUNDS
    return lloyd_epsilon(lloyd, epsilon, facts), lloyd_plan_rounds(lloyd, epsilon, facts)


def _dpkmeans_stage(est: Any, epsilon: float, facts: PublicFacts, partition: bool,
                    ball: tuple[int, float] | None = None
                    ) -> tuple[float, tuple[Part, ...] | None]:
    # after a private ball: DP-Lloyd on the unit ball (DPKMeans rescales; on the box it has the
    # same rounds) at the ball's (T, count share)
    t, f = ball if ball is not None else (None if est.n_iter == "auto" else est.n_iter,
                                         est.count_share)
    return _stage(int(est.n_clusters), epsilon, facts, partition=partition, n_iter=t,
                  bounds=None if ball else est.bounds, radius=1.0 if ball else est.radius,
                  n=est.n, sum_noise=est.sum_noise,
                  count_share=f, sampler=est.sampler, sample_size=est.sample_size)


def dpkmeans_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """ε-DP (DP-Lloyd, optionally after a pure moment seeding on ``seed_share``·ε), or
    (ε₁ + ε₂, δ) after a max-cover seeding on (ε₁, δ) (basic composition; ``DPKMeans.fit``)."""
    from dpcore.estimators.dpkmeans import DPKMeans
    from dpcore.mechanisms.maxcover.estimator import seed_share_of

    est = DPKMeans(**p)
    eps = _eps(p)
    if est.resolved_seeding(facts.n, facts.d) == "private-ball" and math.isfinite(eps):
        from dpcore.estimators.dpkmeans_ball import (
            BALL_SHARE,
            ball_budget,
            ball_parts,
            stage_budget,
        )

        eps_ball, eps_lloyd = ball_budget(eps, seed_share_of(est.seed_share, BALL_SHARE))
        parts = ball_parts(eps_ball)
        ball = compose(*parts).epsilon
        n_pub = float(facts.n if est.n is None else est.n)
        tf = stage_budget(eps, n_pub, int(est.n_clusters), est.bounds, facts.d, est.count_share,
                          est.sum_noise, None if est.n_iter == "auto" else est.n_iter)
        stage, rounds = _dpkmeans_stage(est, eps_lloyd, facts, False, ball=tf)
        return Planned(PureDP(stage + ball), None if rounds is None else (*parts, *rounds))
    if est.seeding == "maxcover":
        seed = maxcover_map({"n_clusters": est.n_clusters, "epsilon":
                             seed_share_of(est.seed_share) * eps, "delta": float(est.delta),
                             "radius": 1.0, "preset": "paper", **(est.seeding_params or {})},
                            facts, partition=True).guarantee
        eps_lloyd = eps - seed.epsilon
        stage, rounds = _dpkmeans_stage(est, eps_lloyd, facts, True)
        g = ApproxDP(seed.epsilon + stage, seed.delta)
        return Planned(g, None if rounds is None else (ApproxDP(g.epsilon - stage, g.delta),
                                                       *rounds))
    if est.seeding == "moments" and math.isfinite(eps):
        eps_lloyd = (1.0 - seed_share_of(est.seed_share, 0.2)) * eps
        stage, rounds = _dpkmeans_stage(est, eps_lloyd, facts, False)
        g = PureDP(stage + (eps - eps_lloyd))
        third = PureDP((g.epsilon - stage) / 3.0)
        return Planned(g, None if rounds is None else (third,) * 3 + rounds)
    stage, rounds = _dpkmeans_stage(est, eps, facts, False)
    return Planned(PureDP(stage + 0.0), rounds)


def maxcover_map(p: Mapping[str, Any], facts: PublicFacts, *, partition: bool = False
                 ) -> Planned:
    """(ε, δ) of Algorithm 2 (paper 003): ``preset="paper"`` its budget split
    (:func:`split_budget`; the seeding alone :func:`split_seeding_budget`), ``"recommended"``
    the seeding on ``seed_share``·ε then budget-aware DP-Lloyd, composed exactly."""
    from dpcore.mechanisms.maxcover.accounting import split_budget, split_seeding_budget
    from dpcore.mechanisms.maxcover.estimator import MaxCoverKMeans, seed_share_of

    est = MaxCoverKMeans(**p)
    if partition:
        return Planned(split_seeding_budget(est.epsilon, est.delta, est.budget_split,
                                            em_bound=est.em_bound).guarantee)
    if est._preset() == "recommended":
        eps = float(est.epsilon)
        seed = maxcover_map({**p, "epsilon": seed_share_of(est.seed_share) * eps,
                             "preset": "paper"}, facts, partition=True).guarantee
        eps_lloyd = eps - seed.epsilon
        n_pub = facts.n if est.n_public is None else est.n_public
        stage, rounds = _stage(int(est.n_clusters), eps_lloyd, facts, partition=True,
                               radius=float(est.radius), n=float(n_pub))
        g = ApproxDP(seed.epsilon + stage, seed.delta)
        return Planned(g, None if rounds is None else (ApproxDP(g.epsilon - stage, g.delta),
                                                       *rounds))
    rounds = est._rounds()
    return Planned(split_budget(est.epsilon, est.delta, est.budget_split,
                                final_lloyd=rounds > 0, lloyd_rounds=max(rounds, 1),
                                em_bound=est.em_bound).guarantee)


def balcan_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """(ε, δ) of Balcan et al. 2017's budget split (:func:`balcan_budget`)."""
    from dpcore.mechanisms.baselines.balcan17 import Balcan17KMeans, balcan_budget

    est = Balcan17KMeans(**p)
    return Planned(balcan_budget(float(est.epsilon), float(est.delta), est.budget_split,
                                 lloyd_rounds=int(est.lloyd_rounds),
                                 recovery=est.recovery).guarantee)


def friendlycore_kmeans_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """FC_Clustering (paper 002, Sec. 5.2): zCDP inside, reported as asked (ρ, or (ε, δ) after
    the conversion), including the fallback's reserve and the replacement multiplier
    (``FriendlyCoreKMeans._check_params``, which also refuses too few tuples: public)."""
    from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans

    est = FriendlyCoreKMeans(**p)
    return Planned(est._check_params()[4])  # it validates every parameter (fit's only check)


def friendly_mean_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """FC_Avg (paper 002, Thm 5.1/5.2): with ε, ρ = the zCDP budget that converts to (ε, δ/2)
    and δ/2 for the steps; parts FriendlyCore (0.1ρ', δ/4) and FriendlyAvg (0.9ρ', δ/4), with
    FindDiam (0.1ρ) first when the diameter is searched. None with subsampling."""
    from dpcore.mechanisms.friendlycore.averaging import rho_for_epsilon

    delta = float(p["delta"])
    rate = p.get("sample_rate")
    if p.get("epsilon") is None:
        total, z_delta, g = float(p["rho"]), delta, None
    else:
        total, z_delta = rho_for_epsilon(_eps(p), delta / 2.0), delta / 2.0
        g = ApproxDP(_eps(p), delta)
    g = ZCDP(total, delta) if g is None else g
    if rate is not None and float(rate) < 1.0:
        return Planned(g)
    parts: list[Part] = []
    avg = total
    if p.get("radius") is None:
        parts.append(ZCDP(0.1 * total))
        avg = total - 0.1 * total
    parts += [ZCDP(0.1 * avg, z_delta / 2.0), ZCDP(0.9 * avg, z_delta / 2.0)]
    return Planned(g, tuple(parts))


def fc_covariance_map(p: Mapping[str, Any], facts: PublicFacts) -> Planned:
    """FC_Covariance (paper 002, App. A, Thm A.1), with group privacy of 2 under the default
    ``accounting="replace_one"``: :func:`~dpcore.mechanisms.friendlycore.covariance.
    fc_covariance_guarantee`."""
    from dpcore.mechanisms.friendlycore.covariance import fc_covariance_guarantee

    return Planned(fc_covariance_guarantee(float(p.get("epsilon", 1.0)),
                                           float(p.get("delta", 1e-6)),
                                           str(p.get("accounting", "replace_one"))))


#: Rows whose map makes every public check of their ``fit`` itself, so the door skips its check
#: on an empty table (the sensitivity sampler would sample m pairs of the public n for it, and
#: FriendlyCore k-means run its oracle on t empty parts: 46 s at the cities set's n).
CHECKED_BY_MAP = frozenset({"sensitivity", "friendlycore_kmeans"})

#: Registry key -> privacy map (every releasable row of :data:`~dpcore.release.registry.ENTRIES`
#: has one; ``tests/test_registry.py`` checks it against the fitted ``privacy_``).
MAPS: dict[str, PrivacyMap] = {
    "dpkmeans": dpkmeans_map,
    "dplloyd": dplloyd_map,
    "maxcover_kmeans": maxcover_map,
    "friendlycore_kmeans": friendlycore_kmeans_map,
    "friendly_mean": friendly_mean_map,
    "noisy_average": approx_map,
    "sensitivity": sensitivity_map,
    "lsh_clustering": approx_map,
    "kv18_mean": kv18_map,
    "balcan17_kmeans": balcan_map,
    "fc_covariance": fc_covariance_map,
}
