"""What a release is made of, read off the fitted estimator (or the function's result).

Each function here is the ``parts`` of a row of :data:`dpcore.release.registry.ENTRIES`: the
steps of one release as :mod:`dpcore.privacy.parts` (e.g. DP-Lloyd's T rounds of a noisy count
and a noisy sum), for the ledger's tight total. They read only public facts of the fit (T, the
noise scales, the guarantee), never the data, and return None where the structure is not known
(a sampler, the paper preset). :meth:`~dpcore.release.registry.Mechanism.run_accounted` drops
parts that do not compose to exactly the reported guarantee.
"""

from __future__ import annotations

import math
from typing import Any

from dpcore.privacy.guarantees import ZCDP, ApproxDP, Part, PureDP

__all__ = ["dpkmeans_parts", "dplloyd_parts", "friendly_mean_parts", "lloyd_rounds",
           "maxcover_parts"]


def lloyd_rounds(lloyd: Any) -> list[Part] | None:
    """DP-Lloyd on all the rows: T rounds, each a Laplace count (ε_c = 1/β_count, sensitivity 1)
    and a sum noise (ε_s = r/β_sum), with T·(ε_c + ε_s) = ε (the closed-form calibration of
    :func:`dpcore.mechanisms.importance.calibration.calibrate_lloyd`). None with a sampler (the
    rounds share one sample: amplification is not per round) or when the check fails."""
    if getattr(lloyd, "sampler", None) is not None:
        return None
    g, t = getattr(lloyd, "privacy_", None), getattr(lloyd, "n_iter_", None)
    if not isinstance(g, PureDP) or not t or not math.isfinite(g.epsilon):
        return None
    e_count = 1.0 / float(lloyd.beta_count_)
    e_sum = float(lloyd.domain_.radius) / float(lloyd.beta_sum_)
    if abs(int(t) * (e_count + e_sum) - g.epsilon) > 1e-9 * g.epsilon:
        return None
    return [PureDP(e_count), PureDP(e_sum)] * int(t)


def dplloyd_parts(est: Any) -> list[Part] | None:
    return lloyd_rounds(est)


def dpkmeans_parts(est: Any) -> list[Part] | None:
    rounds = lloyd_rounds(est.lloyd_)
    if rounds is None:
        return None
    g, stage = est.privacy_, est.lloyd_.privacy_.epsilon
    if getattr(est, "ball_", None) is not None:  # private ball: its centre and radius first
        return [*est.ball_.parts, *rounds]
    if getattr(est, "seeding_", None) is not None:  # max-cover seeding: (ε₁, δ), then DP-Lloyd
        return [ApproxDP(g.epsilon - stage, g.delta), *rounds]
    if est.seeding == "moments":  # three Laplace releases of a third of the seeding's ε each
        return [PureDP((g.epsilon - stage) / 3.0)] * 3 + rounds
    return rounds


def maxcover_parts(est: Any) -> list[Part] | None:
    if getattr(est, "lloyd_", None) is None:  # preset="paper": its NoisyAVG rounds, one part
        return None
    rounds = lloyd_rounds(est.lloyd_)
    if rounds is None:
        return None
    g = est.privacy_
    return [ApproxDP(g.epsilon - est.lloyd_.privacy_.epsilon, g.delta), *rounds]


def friendly_mean_parts(result: Any) -> list[Part] | None:
    """FC_Avg runs in zCDP: its steps' (ρ, δ) (FindDiam, FriendlyCore, FriendlyAvg); the
    conversion to the reported (ε, δ) is left to the ledger. None with subsampling."""
    steps = list(getattr(result, "budget", None) or [])
    zc = [g for _, g in steps if isinstance(g, ZCDP)]
    others = [g for _, g in steps if not isinstance(g, ZCDP)]
    if not zc or any(not (isinstance(g, ApproxDP) and g.epsilon == 0) for g in others):
        return None
    return zc
