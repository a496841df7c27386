"""The privacy audit suite: every released mechanism, audited at its claim, with a broken twin.

For each mechanism the app and the CLI release, :data:`CASES` holds one :class:`Case`: the
configuration it is released in, a worst-case neighbouring pair (D₀, D₁ = D₀ plus one extreme
row), the claimed (ε, δ) (zCDP claims converted at a stated δ), and a deliberately broken variant
(noise scale cut, a step that leaks n, FriendlyCore's replacement bug). :func:`run_case` runs
:func:`dpcore.privacy.audit.audit_epsilon` on both: the real mechanism must stay under its claim,
the broken one must be flagged (lower bound above the claim). ``audit_epsilon`` tries events in both
directions (D₀ vs D₁ and D₁ vs D₀), so one pair audits adding *and* removing the extreme row.

Draw counts: ≥ 10⁴ per input where a draw is cheap; fewer where one draw is a whole fit
(max-cover, FriendlyCore k-means), said so in the table (``n_samples``). An audit can prove a
mechanism broken, never prove it private; a pass means "no contradiction found at this power".

Regenerate the table of ``docs/privacy_audit.md``::

    python -m dpcore.audit_suite --write docs/privacy_audit.md

Its second table, the *accountant* table (:func:`accountant_session`), charges one realistic
analyst session through the release door and compares today's basic composition, the ledger's
basic and tight totals, the best-order RDP and PLD accountants and a correct lower bound
(``--accountant`` regenerates only that table, in a few seconds).
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.audit_door import BALL_D0, BALL_D1, ball_centre, ball_fit
from dpcore.privacy.audit import AuditResult, audit_epsilon
from dpcore.privacy.guarantees import ZCDP, ApproxDP
from dpcore.release.accountant_session import (
    ACCOUNTANT_HEADING,
    AccountantSession,
    accountant_markdown,
    accountant_session,
)
from dpcore.reproduce._friendlycore_covariance import covariance_pair, covariance_sampler

__all__ = ["CASES", "AccountantSession", "Case", "CaseResult", "accountant_markdown",
           "accountant_session", "markdown_table", "run_case", "run_suite"]

SampleFn = Callable[[Any, int, np.random.Generator], np.ndarray]
DELTA_CONV = 1e-6  # δ at which zCDP claims are converted to (ε, δ) for the audit
BOTTOM = -1e9  # the scalar an audit sees for ⊥ (failure is an output too)


@dataclass(frozen=True)
class Case:
    """One mechanism in its released configuration.

    Attributes
    ----------
    name : str ; config : str — what is run, in words (parameters, neighbouring pair)
    claim : ApproxDP — the claimed guarantee at which the audit must pass
    sample : SampleFn — ``(data, size, rng) -> size`` scalar outputs of the real mechanism
    broken : SampleFn ; broken_what : str — the deliberately broken variant
    d0, d1 : the neighbouring inputs ; n_samples : int — draws per input
    slow : bool — part of the slow tier (whole fits per draw)
    """

    name: str
    config: str
    claim: ApproxDP
    sample: SampleFn
    broken: SampleFn
    broken_what: str
    d0: Any
    d1: Any
    n_samples: int
    slow: bool = False
    broken_samples: int | None = None  # cheap broken variants get more draws (more power)


@dataclass(frozen=True)
class CaseResult:
    case: Case
    real: AuditResult | None
    broken: AuditResult | None
    seconds: float
    error: str = ""  # the mechanism raised (reported in the table, never hidden)

    @property
    def passes(self) -> bool:
        return self.real is not None and self.real.consistent_with(self.case.claim.epsilon)

    @property
    def flags_broken(self) -> bool:
        return self.broken is not None and not self.broken.consistent_with(self.case.claim.epsilon)


def _repeat(one: Callable[[Any, np.random.Generator], float]) -> SampleFn:
    def sample(data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.fromiter((one(data, rng) for _ in range(size)), float, size)

    return sample


def _zcdp(rho: float, delta: float = 0.0) -> ApproxDP:
    return ZCDP(rho, delta).to_approx_dp(DELTA_CONV)


def _leak_n(one: Callable[[Any, np.random.Generator], float], n_of: Callable[[Any], int],
            n_cut: int) -> SampleFn:
    """Broken variant: refuse (output ⊥) when n < n_cut — a data-dependent refusal."""
    return _repeat(lambda data, rng: BOTTOM if n_of(data) < n_cut else one(data, rng))


# ---------------------------------------------------------------------------------------------
# the mechanisms
# ---------------------------------------------------------------------------------------------

_R = 1.0
_X0 = np.zeros((20, 2))
_X1 = np.vstack([_X0, [[_R, 0.0]]])  # one extra row at the radius: the largest change


def _dplloyd(epsilon: float, sampler: str | None = None, **kw: Any):
    from dpcore.mechanisms.lloyd.estimator import DPLloyd

    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        km = DPLloyd(1, epsilon=epsilon, radius=_R, n_iter=1, sampler=sampler, init="random_ball",
                     rng=rng, **kw).fit(X)
        return float(km.cluster_centers_[0, 0])

    return _repeat(one)


def _lloyd_broken(sampler: str, kw: dict) -> tuple[SampleFn, str]:
    if sampler == "coreset":  # ~30 ms a fit: 2,000 draws cannot see a 10ε twin; a cheap leak
        return (_leak_n(lambda X, rng: 0.0, lambda X: X.shape[0], 401),
                "refuses n < 401 (a size check on the true n)")
    return _dplloyd(10.0, sampler, **kw), "calibrated to 10ε"


def _dplloyd_cases() -> list[Case]:
    cases = [Case(
        "DP-Lloyd (full data)", "k = 1, n_iter = 1, radius 1, ε = 1; D₀ = 20 rows at 0, "
        "D₁ = D₀ + (1, 0); statistic: first centre coordinate",
        ApproxDP(1.0, 0.0), _dplloyd(1.0), _dplloyd(10.0), "noise scales ÷10 (calibrated to 10ε)",
        _X0, _X1, 10_000)]
    X0 = np.zeros((400, 2))
    # centred with x̃ > 0 (the coreset sampler needs both), and 0 in the audited coordinate so
    # that which rows are sampled does not blur the extra row's effect on it
    X0[:, 1] = np.tile([0.5, -0.5], 200)
    X1 = np.vstack([X0, [[_R, 0.0]]])
    for sampler, kw in (("uniform", {"sample_size": 100}), ("coreset", {"sample_size": 100}),
                        ("privacy", {}), ("privacy", {"q_grid": 64}),
                        ("privacy", {"q_grid": None})):
        # the default is the norm grid (4096 bins); q_grid=None is the exact per-point path
        grid = ("" if "q_grid" not in kw else " (exact q)" if kw["q_grid"] is None
                else " (norm grid, thinned sampling)")
        how = ("exact per-point q" if "q_grid" in kw and kw["q_grid"] is None
               else "q_grid = 64" if grid else "the default path (norm grid)")
        m = ", m = 100" if "sample_size" in kw else ""
        cases.append(Case(
            f"DP-Lloyd + {sampler} sampler{grid}", f"k = 1, n_iter = 1, ε = 1 delivered (sampled "
            f"run calibrated by {how}{m}); D₀ = 400 rows "
            "at (0, ±0.5), D₁ = D₀ + (1, 0); statistic: first centre coordinate; slow (a fit "
            "per draw)", ApproxDP(1.0, 0.0), _dplloyd(1.0, sampler, **kw),
            *_lloyd_broken(sampler, kw), X0, X1, 2_000 if sampler == "coreset" else 10_000,
            slow=True, broken_samples=100_000 if sampler == "coreset" else None))
    return cases


_MC0 = np.random.default_rng(0).uniform(-0.5, 0.5, size=(200, 2))


def _maxcover(epsilon: float, *, leak_n: bool = False):
    """One max-cover fit's first centre coordinate; ``leak_n`` adds a step that reads n (the
    broken twin: a few hundred whole fits cannot resolve a noise scale that is merely too small,
    e.g. an uncharged partition round)."""
    from dpcore.mechanisms.maxcover import MaxCoverKMeans

    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        km = MaxCoverKMeans(1, epsilon=epsilon, delta=1e-6, radius=_R, rng=rng).fit(X)
        return float(km.cluster_centers_[0, 0]) + (10.0 * (X.shape[0] % 2) if leak_n else 0.0)

    return _repeat(one)


def _balcan_partition(eps_level: float):
    """Number of candidates of one private partition level (Balcan et al. step 2)."""
    from dpcore.mechanisms.baselines.balcan17 import private_partition

    return _repeat(lambda X, rng: float(private_partition(
        X, half_side=_R, levels=1, eps_level=eps_level, threshold=20.5, rng=rng).shape[0]))


def _balcan_local_search(lam: float):
    """The candidate one private local-search swap picks (k = 1, candidates ±10, Λ = 20)."""
    from dpcore.mechanisms.baselines.balcan17 import private_local_search

    C = np.array([[-10.0], [10.0]])
    return _repeat(lambda X, rng: float(private_local_search(
        X, C, 1, epsilon=1.0, lam=lam, n_swaps=1, rng=rng)[0][0]))


def _balcan(epsilon: float, *, leak_n: bool = False):
    """One Balcan17KMeans fit's first centre coordinate (``leak_n``: the parity-of-n twin)."""
    from dpcore.mechanisms.baselines.balcan17 import Balcan17KMeans

    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        km = Balcan17KMeans(1, epsilon=epsilon, delta=1e-6, radius=_R, n_public=200,
                            rng=rng).fit(X)
        return float(km.cluster_centers_[0, 0]) + (10.0 * (X.shape[0] % 2) if leak_n else 0.0)

    return _repeat(one)


def _kv18(rho: float):
    """KV18's estimate (one coordinate) as the FriendlyCore page releases it: with the public n."""
    from dpcore.mechanisms.baselines.kv18 import kv18_mean

    return _repeat(lambda X, rng: float(kv18_mean(
        X, rho=rho, sigma=1.0, radius=20.0, n_public=100, rng=rng).estimate[0]))


def _lsh_coreset(noise_divisor: float = 1.0):
    """Σ w_leaf · centre_leaf of LSHClustering's private coreset (k = 2, ε = 2, δ = 1e-8,
    radius 1, depth 3): the released leaf sums (sensitivity Λ) plus noise. ``noise_divisor`` > 1
    is the broken twin: the Gaussian sum noise divided by it (e.g. sensitivity 1 taken for Λ)."""
    from unittest import mock

    import dpcore.mechanisms.baselines.lsh_clustering as lsh

    real = lsh.lsh_noise_parameters

    def params(e: float, dl: float, depth: int) -> tuple[float, float]:
        alpha, a = real(e, dl, depth)
        return alpha / noise_divisor, a

    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        est = lsh.LSHClustering(2, epsilon=2.0, delta=1e-8, radius=1.0, max_depth=3)
        with mock.patch.object(lsh, "lsh_noise_parameters", params):
            c, w = est.private_coreset(X, rng)
        return float((c[:, 0] * w).sum())

    return _repeat(one)


def _noisy_average(epsilon: float):
    from dpcore.mechanisms.maxcover import noisy_average

    return _repeat(lambda X, rng: float(
        noisy_average(X, radius=_R, epsilon=epsilon, delta=1e-6, rng=rng).center[0]))


def _friendly_filter(rho: float):
    from dpcore.mechanisms.friendlycore import friendly_core

    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        res = friendly_core(X, 1.0, rho=rho, delta=1e-6, rng=rng)
        return float(res.mask[:60].sum())  # the 60 shared points of the pair below

    return _repeat(one)


def _friendly_mean(rho: float):
    from dpcore.mechanisms.friendlycore import friend_counts, friendly_mean

    def sample(X: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        counts = friend_counts(X, 1.0)
        out = np.empty(size)
        for i in range(size):
            est = friendly_mean(X, radius=1.0, rho=rho, delta=1e-6, counts=counts,
                                check_size=False, rng=rng).estimate
            out[i] = BOTTOM if est is None else est[0]
        return out

    return sample


def _fc_kmeans(rho: float, accounting: str = "add_remove"):
    from dpcore.mechanisms.friendlycore import FriendlyCoreKMeans

    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        km = FriendlyCoreKMeans(1, rho=rho, delta=1e-6, radius=1.0, t=300, accounting=accounting,
                                rng=rng).fit(X)
        return BOTTOM if km.cluster_centers_ is None else float(km.cluster_centers_[0, 0])

    return _repeat(one)


def _coinpress(rho: float):
    from dpcore.mechanisms.baselines.coinpress import coinpress_mean

    return _repeat(
        lambda X, rng: float(coinpress_mean(X, rho=rho, radius=1.0, rng=rng).estimate[0]))


def _sensitivity_release(epsilon: float):
    from dpcore.mechanisms.sensitivity.population import population_sampler
    from dpcore.mechanisms.sensitivity.sampler import sample_then_respond
    from dpcore.mechanisms.sensitivity.statistics import get_statistic

    stat = get_statistic("mean", bounds=[-1.0, 1.0])
    draw = population_sampler("uniform", (-1.0, 1.0), 1)

    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        rel = sample_then_respond(stat, X, draw, epsilon=epsilon, gamma=0.1, rng=rng)
        return float(np.ravel(rel.value)[0])

    return _repeat(one)


_CANDIDATES = np.geomspace(0.01, 10.0, 50)


def _norm_quantile(epsilon: float):
    from dpcore.mechanisms.bounds import private_norm_quantile

    return _repeat(lambda X, rng: private_norm_quantile(
        X, 0.5, epsilon=epsilon, lower=0.01, upper=10.0, n_candidates=50, rng=rng).radius)


def _row_count(epsilon: float):
    from dpcore.mechanisms.bounds import private_row_count

    def sample(n: int, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.fromiter((private_row_count(n, epsilon=epsilon, rng=rng).value
                            for _ in range(size)), float, size)

    return sample


def _defended(sample: SampleFn, claim: ApproxDP) -> SampleFn:
    """The same mechanism with release-mode (floating-point-safe) noise."""
    from dpcore.privacy.noise import defended_noise

    def run(data: Any, size: int, rng: np.random.Generator) -> np.ndarray:
        with defended_noise(claim):
            return sample(data, size, rng)

    return run


def _dask_mean_sq_norm(epsilon: float):
    from dpcore.scale.dask_kmeans import _private_mean_sq_norm

    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        sum_sq = float(np.einsum("ij,ij->", X, X))
        # n is the declared public n (the Dask path refuses a mismatch before releasing)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the clamp's warning (post-processing)
            return _private_mean_sq_norm(sum_sq, 50, radius=_R, epsilon=epsilon,
                                         sample_size=1.0, lam=0.5, rng=rng)

    return _repeat(one)


def _cases() -> list[Case]:
    cases = _dplloyd_cases()
    Xa = np.zeros((40, 1))
    cov0, cov1 = covariance_pair()
    cases += [
        Case("MaxCoverKMeans (end to end)", "k = 1, ε = 1, δ = 1e-6, radius 1, defaults "
             "(Algorithm 2's lines 1–19 on 0.2 ε and all of δ, then DP-Lloyd on 0.8 ε whose "
             "first round averages their partition: basic composition); D₀ = 200 "
             "rows uniform in [−0.5, 0.5]², D₁ = D₀ + (1, 0); statistic: first centre coordinate; "
             "slow tier: one draw is a whole fit (a few ms at this size), 300 draws",
             ApproxDP(1.0, 1e-6),
             _maxcover(1.0), _maxcover(1.0, leak_n=True), "leaks the parity of n", _MC0,
             np.vstack([_MC0, [[_R, 0.0]]]), 300, slow=True),
        Case("Balcan et al. 2017: private partition level", "one level, ε_ℓ = 1, threshold "
             "20.5; D₀ = 20 rows at (0.5, 0.5) (one cell), D₁ = D₀ + one more; statistic: "
             "number of candidates", ApproxDP(1.0, 0.0), _balcan_partition(1.0),
             _balcan_partition(10.0), "calibrated to 10ε", np.full((20, 2), 0.5),
             np.full((21, 2), 0.5), 20_000),
        Case("Balcan et al. 2017: private local search", "k = 1, one swap + the final pick, "
             "ε = 1, candidates ±10, Λ = 20; D₀ = 10 rows at 0, D₁ = D₀ + (10) (moves a "
             "candidate's cost by Λ²); statistic: the chosen candidate", ApproxDP(1.0, 0.0),
             _balcan_local_search(20.0), _balcan_local_search(math.sqrt(20.0)),
             "sensitivity Λ instead of Λ² (20× too sharp)", np.zeros((10, 1)),
             np.vstack([np.zeros((10, 1)), [[10.0]]]), 20_000),
        Case("Balcan17KMeans (end to end)", "k = 1, ε = 1, δ = 1e-6, radius 1, n_public = 200, "
             "defaults; D₀ = D₁ of the max-cover row; statistic: first centre coordinate; slow: "
             "a whole fit per draw, 300 draws", ApproxDP(1.0, 1e-6), _balcan(1.0),
             _balcan(1.0, leak_n=True), "leaks the parity of n", _MC0,
             np.vstack([_MC0, [[_R, 0.0]]]), 300, slow=True),
        Case("noisy_average (NoisyAVG)", "ε = 1/3, δ = 1e-6, radius 1; D₀ = 20 rows at 0, D₁ = "
             "D₀ + (1, 0)", ApproxDP(1 / 3, 1e-6), _noisy_average(1 / 3), _repeat(
                 lambda X, rng: float(X.shape[0] == 21)), "leaks n (outputs 1{n = 21})",
             _X0, _X1, 20_000),
        Case("FriendlyCore filter (zCDP)", "ρ = 1, δ = 1e-6, r = 1; D₀ = 60 points at 0, D₁ = "
             "D₀ + one point at 0.5 (everybody's friend); statistic: shared points kept",
             _zcdp(1.0, 1e-6), _friendly_filter(1.0),
             _leak_n(lambda X, rng: 0.0, lambda X: X.shape[0], 61),
             "refuses n < 61 (a size check on the true n)", np.zeros((60, 1)),
             np.vstack([np.zeros((60, 1)), [[0.5]]]), 10_000, broken_samples=100_000),
        Case("friendly_mean (FC_Avg)", "ρ = 1, δ = 1e-6, r = 1, exact counts; D₀ = 300 points "
             "at 0, D₁ = D₀ + (1); statistic: the estimate (⊥ as a value)", _zcdp(1.0, 1e-6),
             _friendly_mean(1.0), _leak_n(lambda X, rng: 0.0, lambda X: X.shape[0], 301),
             "refuses n < 301 (the old size check)", np.zeros((300, 1)),
             np.vstack([np.zeros((300, 1)), [[1.0]]]), 10_000, broken_samples=100_000),
        Case("FriendlyCoreKMeans", "k = 1, ρ = 1, δ = 1e-6, t = 300 parts, radius 1; D₀ = 600 "
             "points at 0, D₁ = D₀ + (1); statistic: the centre (⊥ as a value); slow: a fit "
             "per draw", _zcdp(1.0, 1e-6), _fc_kmeans(1.0),
             _leak_n(lambda X, rng: 0.0, lambda X: X.shape[0], 601),
             "refuses n < 601 (defect 4's n < t·k refusal)", np.zeros((600, 1)),
             np.vstack([np.zeros((600, 1)), [[1.0]]]), 1_000, slow=True, broken_samples=100_000),
        Case("FriendlyCovariance (FC_Covariance's private step, FriendlyCore App. A)", "ε = 1, "
             f"δ = 1e-6, η = 0.1, d = 2, c₁ = 0.1; D₀ = {len(cov0)} matrices: {len(cov0) - 1} × "
             "I and one 1.1·I (friendly: matrixDist 0.1), D₁ = D₀ without it, n at the abort "
             "threshold so the two means are γ apart (the lemma's edge); statistic: trace of Σ̂ "
             "(⊥ as −1); slow: 20,000 estimates", ApproxDP(1.0, 1e-6), covariance_sampler(False),
             covariance_sampler(True), "B_η drawn with η/1000 (threshold as declared)", cov0,
             cov1, 20_000, slow=True),
        Case("KV18 mean (FriendlyCore page's comparison)", "ρ = 0.05, σ = 1, radius 20, "
             "n_public = 100 (as the release door fills it); D₀ = 100 rows at 0, D₁ = D₀ + one "
             "row at 20 (clipped to the range)", _zcdp(0.05), _kv18(0.05), _kv18(20.0),
             "calibrated to 400ρ (σ ÷20)", np.zeros((100, 1)),
             np.vstack([np.zeros((100, 1)), [[20.0]]]), 20_000),
        Case("LSH clustering (CK21) private coreset", "k = 2, ε = 2, δ = 1e-8, radius 1, depth "
             "3; D₀ = 40 rows at 0, D₁ = D₀ + one row at 1; statistic: Σ w·centre over the "
             "leaves (the released sums plus noise)", ApproxDP(2.0, 1e-8), _lsh_coreset(),
             _lsh_coreset(30.0), "sum noise ÷30", np.zeros((40, 1)),
             np.vstack([np.zeros((40, 1)), [[1.0]]]), 10_000),
        Case("CoinPress mean", "ρ = 0.5, radius 1, 2 steps; replace-one pair at public n = 40 "
             "(its stated model): D₀ = 40 rows at 0, D₁ = 39 at 0 + one at 1",
             _zcdp(0.5), _coinpress(0.5), _coinpress(5000.0), "calibrated to 10⁴ρ (σ ÷100)",
             Xa, np.vstack([Xa[:-1], [[1.0]]]), 20_000),
        Case("Sensitivity sampler release", "mean on [−1, 1], Laplace, ε = 1, γ = 0.1, uniform "
             "P; a pair drawn from P (RDP's promise is for such pairs): D₁ = D₀ + one record",
             ApproxDP(1.0, 0.0), _sensitivity_release(1.0), _sensitivity_release(10.0),
             "calibrated to 10ε", *(lambda d0: (d0, np.vstack([d0, [[0.9]]])))(
                 np.random.default_rng(7).uniform(-1, 1, size=(50, 1))), 10_000),
        Case("bounds.private_norm_quantile", "median of norms, ε = 1, 50 geometric candidates "
             "in [0.01, 10]; D₀ = one row at each candidate norm (scores a V of slope 1), D₁ = "
             "D₀ + a row of norm 0.005 (shifts the V)", ApproxDP(1.0, 0.0), _norm_quantile(1.0),
             _norm_quantile(20.0), "calibrated to 20ε", _CANDIDATES[:, None],
             np.r_[_CANDIDATES, 0.005][:, None], 20_000),
        Case("bounds.private_row_count", "ε = 1; n = 100 vs 101", ApproxDP(1.0, 0.0),
             _row_count(1.0), _row_count(10.0), "calibrated to 10ε", 100, 101, 20_000),
        Case("bounds.private_row_count, release-mode noise", "as above, inside "
             "noise.defended_noise (exact discrete Laplace on a 2⁻²⁰ grid; claim includes the "
             "slack)", ApproxDP(1.0 * (1 + 2.0**-20) ** 2, 0.0),
             _defended(_row_count(1.0), ApproxDP(1.0, 0.0)),
             _defended(_row_count(10.0), ApproxDP(10.0, 0.0)), "calibrated to 10ε", 100, 101,
             20_000),
        Case("DP-Lloyd (full data), release-mode noise", "as the first row, inside "
             "noise.defended_noise (grid-rounded sums and counts; slow)",
             ApproxDP(1.0 * (1 + 2.0**-20) ** 2, 0.0),
             _defended(_dplloyd(1.0), ApproxDP(1.0, 0.0)),
             _defended(_dplloyd(10.0), ApproxDP(10.0, 0.0)), "calibrated to 10ε", _X0, _X1,
             10_000, slow=True),
        Case("Dask path: private mean squared norm", "scale._private_mean_sq_norm, ε = 0.5, "
             "radius 1, declared n = 50; D₀ = 50 rows at 0 (sum ‖x‖² = 0), D₁ = one row at the "
             "radius", ApproxDP(0.5, 0.0), _dask_mean_sq_norm(0.5), _dask_mean_sq_norm(5.0),
             "calibrated to 10ε", np.zeros((50, 1)), np.vstack([np.zeros((49, 1)), [[1.0]]]),
             20_000),
        Case("DPKMeans private ball: the centre", "dpkmeans_ball.private_centre at ε = 1 (a fit "
             "spends 7 % of its ε here), box [0, 10] × [0, 1], public n = 50; D₀ = 50 rows at "
             "the box centre, D₁ = D₀ + the corner (10, 1); statistic: first coordinate",
             ApproxDP(1.0, 0.0), ball_centre(1.0), ball_centre(10.0), "calibrated to 10ε (a "
             "sensitivity 10× too small, e.g. the ball's radius for the box's)", BALL_D0,
             BALL_D1, 20_000),
        Case("DPKMeans on the private ball (end to end)", "DPKMeans(k = 1, ε = 1, "
             "seeding='private-ball'), box and pair as above, declared n = 50, the defaults "
             "(10 % of ε for the ball, T and the count/sum split by the estimator); statistic: "
             "first centre coordinate; slow: a fit per draw", ApproxDP(1.0, 0.0), ball_fit(1.0),
             ball_fit(10.0), "calibrated to 10ε (the ball's and DP-Lloyd's noise ÷10)", BALL_D0,
             BALL_D1, 3_000, slow=True),
    ]
    return cases


CASES: list[Case] = _cases()


def run_case(case: Case, *, n_samples: int | None = None, rng: int = 0) -> CaseResult:
    """Audit the real and the broken mechanism of ``case`` (same draws count, same seed)."""
    n = case.n_samples if n_samples is None else int(n_samples)
    t0 = time.perf_counter()
    real = audit_epsilon(case.sample, case.d0, case.d1, n_samples=n, delta=case.claim.delta,
                         rng=rng)
    nb = n if case.broken_samples is None or n_samples is not None else case.broken_samples
    broken = audit_epsilon(case.broken, case.d0, case.d1, n_samples=nb, delta=case.claim.delta,
                           rng=rng + 1)
    return CaseResult(case, real, broken, time.perf_counter() - t0)


def run_suite(*, include_slow: bool = True, rng: int = 0) -> list[CaseResult]:
    """All cases; a case whose mechanism raises is reported with its error (a crash is a bug)."""
    out = []
    for c in CASES:
        if not include_slow and c.slow:
            continue
        t0 = time.perf_counter()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out.append(run_case(c, rng=rng))
        except Exception as exc:
            out.append(CaseResult(c, None, None, time.perf_counter() - t0,
                                  f"{type(exc).__name__}: {exc}"))
    return out


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.3g}"


def markdown_table(results: list[CaseResult]) -> str:
    """The table of ``docs/privacy_audit.md``."""
    lines = [
        "| mechanism | configuration and neighbouring pair | claimed (ε, δ) | audited ε ≥ "
        "(real) | broken variant | audited ε ≥ (broken) | draws per input (real / broken) | "
        "verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        c = r.case
        verdict = ("pass, broken flagged" if r.passes and r.flags_broken else
                   (f"ERROR ({r.error})" if r.error else
                    ("FAIL" if not r.passes else "pass, broken NOT flagged")))
        real = "—" if r.real is None else _fmt(r.real.epsilon_lower)
        broken = "—" if r.broken is None else _fmt(r.broken.epsilon_lower)
        lines.append(
            f"| {c.name} | {c.config} | ({_fmt(c.claim.epsilon)}, "
            f"{f'{c.claim.delta:.0e}' if c.claim.delta else '0'}) | "
            f"{real} | {c.broken_what} | {broken} | "
            f"{c.n_samples:,}{' (slow)' if c.slow else ''}"
            f"{f' / {c.broken_samples:,}' if c.broken_samples else ''} | {verdict} |")
    return "\n".join(lines) + "\n"


_HEADER = """# Privacy audit of every released mechanism

Generated by `python -m dpcore.audit_suite --write docs/privacy_audit.md` (the test suite
`tests/test_privacy_audit_suite.py` runs the same cases). For each mechanism, in the
configuration the app and the CLI release it in, a worst-case neighbouring pair (D₁ = D₀ plus
one extreme row; the audit tests events in both directions, so adding and removing the row are
both covered) is sampled; `dpcore.privacy.audit.audit_epsilon` turns the draws into a
Clopper–Pearson lower bound on ε (95 % confidence, event chosen on half the draws, evaluated on the
other half) at the claimed δ. A mechanism passes when that bound stays under its claim; its
deliberately broken twin must be flagged (bound above the claim). zCDP claims are converted to (ε,
δ) at δ = {delta_conv:g}. An audit can prove a mechanism broken, never prove it private.

"""


def _hand_written(text: str) -> str:
    """The sections after the accountant table (hand-written, e.g. the door paths): kept."""
    rest = text.partition(ACCOUNTANT_HEADING)[2]
    nxt = rest.find("\n## ")
    return "" if nxt < 0 else rest[nxt + 1:]


def _replace_section(text: str, section: str, tail: str | None = None) -> str:
    tail = _hand_written(text) if tail is None else tail
    head = text.partition(ACCOUNTANT_HEADING)[0]
    return head.rstrip("\n") + "\n\n" + section + ("\n" + tail if tail else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, help="write the markdown report to this path")
    parser.add_argument("--fast", action="store_true", help="skip the slow cases")
    parser.add_argument("--accountant", action="store_true",
                        help="only the accountant table (replaced in --write's file)")
    args = parser.parse_args(argv)
    section = accountant_markdown(accountant_session())
    if args.accountant:
        if args.write:
            old = args.write.read_text(encoding="utf-8") if args.write.exists() else ""
            args.write.write_text(_replace_section(old, section), encoding="utf-8")
        print(section)
        return 0
    results = run_suite(include_slow=not args.fast)
    text = _HEADER.format(delta_conv=DELTA_CONV) + markdown_table(results)
    total = sum(r.seconds for r in results)
    text += f"\nRun time of this table: {total:.0f} s.\n"
    old = args.write.read_text(encoding="utf-8") if args.write and args.write.exists() else ""
    text = _replace_section(text, section, _hand_written(old))
    if args.write:
        args.write.parent.mkdir(parents=True, exist_ok=True)
        args.write.write_text(text, encoding="utf-8")
    print(text)
    return 0 if all(r.passes and r.flags_broken for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
