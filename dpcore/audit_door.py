"""Audits of DPKMeans's private ball and of the release door's DPKMeans paths (issue 22).

Two parts, both on :func:`dpcore.privacy.audit.audit_epsilon` with a worst-case add/remove
pair (a row at the box's corner) and a deliberately broken twin that the audit must flag:

* the private ball's mechanisms for the audit suite (:mod:`dpcore.audit_suite` builds its cases
  from :func:`ball_centre` and :func:`ball_fit`): the released centre
  (:func:`dpcore.estimators.dpkmeans_ball.private_centre`) and a whole
  ``DPKMeans(seeding="private-ball")`` fit;
* the door paths (:func:`run_door`): DPKMeans released through
  :meth:`dpcore.release.door.ReleaseDoor.release` itself (defended discrete noise, the
  registry's privacy map, the declared box) at the dashboard's parameters (the registry
  variant's ``params``, as :mod:`dpcore.app.sweeps` calls it), with the door's randomness
  forced per draw from the audit's generator (as ``tests/test_release_leak.py`` forces it). At
  the app's parameters (k = 1, ε = 1, declared n = 100, box [0, 10] × [0, 1]: ε·n/(k·d) = 50)
  ``seeding="auto"`` takes the private ball; ``seeding="box"`` is audited beside it.

Regenerate the door-path rows of ``docs/privacy_audit.md`` (hand-written section; paste the
printed table)::

    python -m dpcore.audit_door [--draws 2000]
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd

import dpcore.estimators.dpkmeans as dpk
import dpcore.release.door as door_mod
from dpcore.estimators.dpkmeans_ball import private_centre
from dpcore.privacy.audit import AuditResult, audit_epsilon
from dpcore.privacy.guarantees import PrivacyLedger, PureDP
from dpcore.release.registry import PublicInputs, entry
from dpcore.release.schema import PublicDescription

__all__ = ["BALL_D0", "BALL_D1", "BOX", "DOOR_D0", "DOOR_D1", "DOOR_N", "DoorCase",
           "DoorResult", "app_params", "ball_centre", "ball_fit", "door_cases", "door_markdown",
           "door_sample", "run_door"]

SampleFn = Callable[[Any, int, np.random.Generator], np.ndarray]
BOTTOM = -1e9  # the scalar an audit sees for ⊥ (as in the audit suite)

#: The app's box (issue 22's door rows): one wide and one narrow column, so the box's
#: per-coordinate sum noise is shaped by the ranges.
BOX = ([0.0, 0.0], [10.0, 1.0])
_MID, _CORNER = [5.0, 0.5], [10.0, 1.0]

#: The suite's pair: 50 rows at the box centre, D₁ = D₀ + the corner (the largest change of a
#: clamped sum, and a row at the box's edge for the radius's norm quantile).
BALL_N = 50
BALL_D0 = np.tile(_MID, (BALL_N, 1))
BALL_D1 = np.vstack([BALL_D0, [_CORNER]])


def ball_centre(epsilon: float) -> SampleFn:
    """First coordinate of the private ball's centre on :data:`BOX` at public n = 50, ε-DP
    (``epsilon`` > the claim is the broken twin: a sensitivity taken too small, e.g. the ball's
    radius instead of the box's half-diagonal)."""
    def sample(X: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        return np.fromiter((private_centre(X, BOX, BALL_N, epsilon, rng=rng)[0]
                            for _ in range(size)), float, size)

    return sample


def ball_fit(epsilon: float) -> SampleFn:
    """First centre coordinate of a whole ``DPKMeans(1, seeding="private-ball")`` fit on
    :data:`BOX` (declared n = 50, the defaults: the ball's share, T and the count/sum split from
    the estimator); ``epsilon`` > the claim is the broken twin (every noise too small).

    (A twin that spends the ball's ε uncharged on top of DP-Lloyd's whole ε is not flagged by
    this statistic at 2,000 draws, audited ε ≥ 0.09 for a true ε of 2: the final centre hardly
    depends on the ball's noise; the centre's own case audits the ball's release.)
    """
    def one(X: np.ndarray, rng: np.random.Generator) -> float:
        km = dpk.DPKMeans(1, epsilon=epsilon, bounds=BOX, n=BALL_N, seeding="private-ball",
                          rng=rng)
        return float(km.fit(X).cluster_centers_[0, 0])

    def sample(X: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # D₁ has n + 1 rows: the declared-n warning
            return np.fromiter((one(X, rng) for _ in range(size)), float, size)

    return sample


# ---------------------------------------------------------------------------------------------
# the door paths
# ---------------------------------------------------------------------------------------------

DOOR_N = 100
DOOR_D0 = np.tile(_MID, (DOOR_N, 1))
DOOR_D1 = np.vstack([DOOR_D0, [_CORNER]])
_COLUMNS = ["a", "b"]


def _description() -> PublicDescription:
    return PublicDescription(_COLUMNS, lower=BOX[0], upper=BOX[1], n=DOOR_N)


def app_params(epsilon: float = 1.0, k: int = 1) -> dict[str, Any]:
    """DPKMeans's parameters as the dashboard sends them to the door: the registry variant's
    ``params`` on the description's public inputs (radius, declared n, centred box)."""
    desc = _description()
    box = desc.box()
    bounds = None if box is None else (box[0].tolist(), box[1].tolist())
    variant = entry("dpkmeans").variants[0]
    return variant.params(PublicInputs(k, epsilon, 0.0, float(desc.radius), int(desc.n), bounds))


def door_sample(params: dict[str, Any]) -> SampleFn:
    """``size`` releases of ``dpkmeans`` through a fresh :class:`ReleaseDoor` on the table X,
    each with the door's randomness forced to a generator seeded from ``rng``; statistic: the
    first centre coordinate in the table's units (⊥ as :data:`BOTTOM`)."""
    def sample(X: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
        door = door_mod.ReleaseDoor(pd.DataFrame(X, columns=_COLUMNS), _description(),
                                    PrivacyLedger(PureDP(1e12)))
        out = np.empty(size)
        for i, seed in enumerate(rng.integers(0, 2**63, size=size)):
            forced = np.random.default_rng(int(seed))
            with mock.patch.object(door_mod, "_entropy", lambda g=forced: g):
                rel = door.release("dpkmeans", params)
            out[i] = (BOTTOM if rel.failed
                      else float(door.to_table_units(rel.output["centers"])[0, 0]))
        return out

    return sample


@dataclass(frozen=True)
class DoorCase:
    """One door path: what runs, its claim, the real and the broken twin's parameters."""

    name: str
    config: str
    claim: float
    params: dict[str, Any]
    broken_params: dict[str, Any]
    broken_what: str

    @property
    def sample(self) -> SampleFn:
        return door_sample(self.params)

    @property
    def broken(self) -> SampleFn:
        return door_sample(self.broken_params)


@dataclass(frozen=True)
class DoorResult:
    case: DoorCase
    real: AuditResult
    broken: AuditResult
    draws: int
    seconds: float

    @property
    def passes(self) -> bool:
        return self.real.consistent_with(self.case.claim)

    @property
    def flags_broken(self) -> bool:
        return not self.broken.consistent_with(self.case.claim)


def door_cases() -> list[DoorCase]:
    """The app's DPKMeans on the private ball (``seeding="auto"``) and on the box."""
    pair = ("box [0, 10] × [0, 1], declared n = 100; D₀ = 100 rows at the box centre, D₁ = D₀ "
            "+ the corner (10, 1); statistic: first centre coordinate")
    out = []
    # the twins pin the path: at ε = 10, ε·n/(k·d) = 500 and "auto" would take the box
    for name, extra, seeding, how in (
            ("DPKMeans at the app's parameters (private ball)", {}, "private-ball",
             "`seeding=\"auto\"`, which takes the private ball here (ε·n/(k·d) = 50 < 500)"),
            ("DPKMeans box path", {"seeding": "box"}, "box", "`seeding=\"box\"`")):
        real, broken = app_params(1.0) | extra, app_params(10.0) | {"seeding": seeding}
        out.append(DoorCase(
            name, f"the dashboard variant's own parameters (`Variant.params`: k = 1, ε = 1, "
            f"radius, n and the centred box from the description; T and the count/sum split "
            f"chosen by the estimator), {how}; {pair}", 1.0, real, broken,
            f"ε = 10 sent with `seeding=\"{seeding}\"`, claim 1 (every "
            "noise ÷10)"))
    return out


def run_door(draws: int = 2_000, *, rng: int = 0) -> list[DoorResult]:
    """Audit each door path and its broken twin at ``draws`` releases per input."""
    results = []
    for case in door_cases():
        t0 = time.perf_counter()
        real = audit_epsilon(case.sample, DOOR_D0, DOOR_D1, n_samples=draws, rng=rng)
        broken = audit_epsilon(case.broken, DOOR_D0, DOOR_D1, n_samples=draws, rng=rng + 1)
        results.append(DoorResult(case, real, broken, draws, time.perf_counter() - t0))
    return results


def _fmt(x: float) -> str:
    return "∞" if math.isinf(x) else f"{x:.3g}"


def door_markdown(results: list[DoorResult]) -> str:
    """The door-path rows of ``docs/privacy_audit.md``."""
    lines = ["| door path | configuration and neighbouring pair | claimed ε | audited ε ≥ | "
             "broken variant | audited ε ≥ (broken) | draws per input | verdict |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        verdict = ("pass, broken flagged" if r.passes and r.flags_broken else
                   "FAIL" if not r.passes else "pass, broken NOT flagged")
        lines.append(f"| {r.case.name} | {r.case.config} | {_fmt(r.case.claim)} | "
                     f"{_fmt(r.real.epsilon_lower)} | {r.case.broken_what} | "
                     f"{_fmt(r.broken.epsilon_lower)} | {r.draws:,} | {verdict} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=2_000, help="releases per input")
    args = parser.parse_args(argv)
    results = run_door(args.draws)
    print(door_markdown(results))
    print("seconds per path (real + broken): "
          + ", ".join(f"{r.case.name}: {r.seconds:.0f}" for r in results))
    return 0 if all(r.passes and r.flags_broken for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
