"""Reproduction of "Personalized Privacy Amplification via Importance Sampling" (TMLR 2024).

Regenerates the paper's Figure 2 (Laplace weighted sum), Figures 3/4 on Covertype (k-means cost
of sampled DP-Lloyd versus ε and versus m), a Table-2 style timing table, and a claim-by-claim
comparison with spec ``../shared/spec/importance_sampling.md`` §7 (C1–C11)::

    python -m dpcore.reproduce.importance            # full run (≈ an hour of one idle core,
                                                     # hours niced on the shared machine)
    python -m dpcore.reproduce.importance --quick    # a few minutes, smaller grid
    python -m dpcore.reproduce.importance --from-runs docs/reproduction/figures --top-up
                                                     # add missing repetitions to saved runs

Both write ``docs/reproduction/importance_sampling.md`` and plotly figures
``docs/reproduction/figures/importance_*.html``. Every function returns pandas DataFrames, so the
same numbers are available from Python.

Protocol (spec §6): Covertype pre-processed as in §6.2 (centre, drop rows with ‖x‖ at or above
the 97.5th percentile, re-centre; r = largest norm, x̃ = mean squared norm), k = 25, T = 10,
Su et al. split ρ = 0.225, noise constant B calibrated per (sampler, m, ε) (§6.4), initial
centres k random points of the sample (the paper's choice, see below), cost of the final centres
on all rows divided by n, median and quartiles over repetitions.

Deliberate differences from the paper's code, all towards correct DP (spec §4.3, §9):

* the sum noise has density ∝ exp(−‖ζ‖/β_sum) with a Gamma(d, β_sum) radius
  (:func:`dpcore.privacy.noise.sample_l2_exponential`); the authors' code draws an
  Exponential(β_sum) radius, about d = 54 times less noise, and is not ε-DP;
* noisy counts below 1 keep the previous centre and centres are clipped to the ball
  (:func:`dpcore.mechanisms.lloyd.estimator.noisy_lloyd_update`); the paper applies the ratio
  literally;
* the coreset ε is the exact maximum of Eq. 5, not a 100-point grid maximum.

Like the paper, the pre-processing (mean, percentile, r, x̃) and the initial centres are read off
the data without accounting (spec §9.12); this module reproduces the paper's protocol and says so
in the report. :class:`dpcore.mechanisms.lloyd.estimator.DPLloyd` defaults to data-independent
initial centres.

The data loaders live in :mod:`dpcore.reproduce._importance_data`, Figure 2 in
:mod:`dpcore.reproduce._importance_fig2` and the report in
:mod:`dpcore.reproduce._importance_report`; this module runs Figures 3/4 and the timings and
re-exports the rest. """

from __future__ import annotations

import argparse
import math
import os
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from dpcore.app.evaluate import kmeans_cost
from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.datasets import REPO_ROOT
from dpcore.mechanisms.importance import (
    calibrate_lloyd,
    coreset_probabilities,
    lloyd_profile,
    poisson_sample,
    privacy_constrained_weights,
    uniform_probabilities,
)
from dpcore.mechanisms.lloyd.estimator import dp_lloyd, lloyd_statistics, random_ball_centers
from dpcore.privacy.guarantees import PrivacyLeakWarning
from dpcore.privacy.noise import laplace, sample_l2_exponential
from dpcore.reproduce._figures import METHOD_COLORS
from dpcore.reproduce._importance_data import COVERTYPE_FILE as COVERTYPE_FILE
from dpcore.reproduce._importance_data import (
    EXTRA_DATASETS,
    Prepared,
    load_covertype,
    load_extra,
    preprocess,
    subsample,
)
from dpcore.reproduce._importance_fig2 import (
    fig2_checks,
    figure2_curves,
    figure2_weights,
    lws_data,
)
from dpcore.reproduce._report import report_dir

__all__ = [
    "EPS_GRID",
    "Prepared",
    "covertype_runs",
    "figure2_curves",
    "figure2_weights",
    "load_covertype",
    "lws_data",
    "main",
    "preprocess",
    "summarize",
    "split_runs",
    "timing_table",
    "top_up_runs",
    "variant_runs",
]

REPORT_NAME = "importance_sampling.md"
#: The paper's ε grid (its code uses 50 instead of 30; spec §6.3 / §9.7).
EPS_GRID = (0.5, 1.0, 3.0, 10.0, 30.0, 100.0, 300.0, 1000.0)
M_FIG3 = (5000, 20000, 75000)
M_FIG4 = (5000, 10000, 15000, 20000, 50000, 75000)
EPS_FIG4 = (3.0, 100.0)
K, T = 25, 10
LABEL = {"uniform": "unif", "coreset": "core", "privacy": "opt", None: "full"}
#: The paper's plot colours (colour-blind palette, prior_art §1), as in the reports' table.
PAPER_COLORS = {k: METHOD_COLORS[k] for k in ("unif", "core", "opt", "full")}
ROOT = REPO_ROOT


# --------------------------------------------------------------------------------------------
# Figures 3/4: sampled DP-Lloyd on Covertype
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SamplerSetup:
    """Probabilities and noise for one (sampler, m, ε) cell (spec §6.4)."""

    sampler: str | None
    m: float
    epsilon: float
    q: np.ndarray | None
    beta_sum: float
    beta_count: float
    delivered_epsilon: float
    t_weights: float
    t_calibration: float


def setup_sampler(P: Prepared, sampler: str | None, m: float | None, epsilon: float,
                  *, lam: float = 0.5, count_share: float | None = None) -> SamplerSetup:
    """Calibrate the noise for (sampler, m, ε) and compute every point's q (timed separately).

    ``epsilon = inf`` gives the non-private reference (no noise) of Fig. 3. ``count_share``
    replaces the paper's Su et al. noise ratio (see
    :func:`dpcore.mechanisms.importance.sampling.calibrate_lloyd`). """
    n = P.n
    if not math.isfinite(epsilon):
        t0 = time.perf_counter()
        q = None if sampler is None else (uniform_probabilities(n, m) if sampler == "uniform"
                                          else coreset_probabilities(P.X, m, lam=lam,
                                                                     radius=P.radius))
        return SamplerSetup(sampler, m or n, epsilon, q, 0.0, 0.0, math.inf,
                            time.perf_counter() - t0, 0.0)
    norms = np.sqrt(np.einsum("ij,ij->i", P.X, P.X))
    t0 = time.perf_counter()
    cal = calibrate_lloyd(sampler, epsilon=epsilon, n=n, dim=P.dim, radius=P.radius, n_iter=T,
                          sample_size=m, norms=norms, mean_sq_norm=P.mean_sq_norm, lam=lam,
                          count_share=count_share)
    t_cal = time.perf_counter() - t0
    t0 = time.perf_counter()
    if sampler is None:
        q = None
    elif sampler == "uniform":
        q = uniform_probabilities(n, m)
    elif sampler == "coreset":
        q = coreset_probabilities(P.X, m, lam=lam, radius=P.radius)
    else:
        slopes = lloyd_profile(norms, beta_sum=cal.beta_sum, beta_count=cal.beta_count,
                               n_iter=T).slopes
        q = 1.0 / privacy_constrained_weights(slopes, epsilon)
    t_w = time.perf_counter() - t0
    return SamplerSetup(sampler, cal.sample_size, epsilon, q, cal.beta_sum, cal.beta_count,
                        cal.epsilon, t_w, t_cal)


def _cost_over_n(X: np.ndarray, centers: np.ndarray) -> float:
    with threadpool_limits(limits=1, user_api="blas"):
        return kmeans_cost(X, centers) / X.shape[0]


#: Variants of the DP-Lloyd step compared in the report (``run_once(variant=...)``).
VARIANTS = {
    "dpcore": "dpcore (Gamma-radius noise, keep centre if noisy count < 1, clip to ball)",
    "dpcore_ball_init": "dpcore with data-independent initial centres (DPLloyd default)",
    "literal": "Algorithm 2 applied literally (Gamma-radius noise, plain ratio)",
    "authors_code": "authors' code: plain ratio, Exponential-radius noise (NOT ε-DP)",
}


def _literal_dp_lloyd(S, init, weights, beta_sum: float, beta_count: float, gen,
                      exponential_radius: bool) -> np.ndarray:
    """Algorithm 2 with the update c = (ζ + Σwx)/(ξ + Σw) applied literally (spec §4.4).

    ``exponential_radius=True`` reproduces the authors' ``DP_k_means``: the sum noise has a
    uniform direction and an Exponential(β_sum) radius, which is *not* the stated density and
    not ε-DP for d ≥ 2 (spec §4.3). For comparison in the report only.
    """
    C = np.asarray(init, dtype=float)
    k, d = C.shape
    for _ in range(T):
        sums, counts = lloyd_statistics(S, C, weights)
        xi = laplace(beta_count, size=k, rng=gen)
        if exponential_radius:
            g = gen.standard_normal((k, d))
            zeta = g / np.linalg.norm(g, axis=1, keepdims=True) * gen.exponential(beta_sum,
                                                                                   (k, 1))
        else:
            zeta = sample_l2_exponential(beta_sum, d, k, rng=gen)
        C = (sums + zeta) / (counts + xi)[:, None]
    return C


def run_once(P: Prepared, setup: SamplerSetup, rng: RNGLike, variant: str = "dpcore") -> dict:
    """One repetition: Poisson sample, k random sampled points as init, T DP-Lloyd steps, cost.

    ``variant`` (see :data:`VARIANTS`) changes the DP-Lloyd step or the initialisation.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {variant!r}")
    gen = as_generator(rng)
    t0 = time.perf_counter()
    if setup.q is None:
        S, w = P.X, None
    else:
        idx, w = poisson_sample(setup.q, rng=gen)
        S = P.X[idx]
    t_sample = time.perf_counter() - t0
    if S.shape[0] < K:
        return {"cost": math.nan, "sample": S.shape[0], "t_sampling": t_sample, "t_lloyd": 0.0}
    t0 = time.perf_counter()
    if variant == "dpcore_ball_init":
        init = random_ball_centers(K, P.dim, P.radius, rng=gen)
    else:
        init = S[gen.choice(S.shape[0], size=K, replace=False)]
    if variant in ("dpcore", "dpcore_ball_init"):
        centers = dp_lloyd(S, init, n_iter=T, beta_sum=setup.beta_sum,
                           beta_count=setup.beta_count, radius=P.radius, weights=w, rng=gen)[-1]
    else:
        centers = _literal_dp_lloyd(S, init, w, setup.beta_sum, setup.beta_count, gen,
                                    exponential_radius=variant == "authors_code")
    t_lloyd = time.perf_counter() - t0
    return {"cost": _cost_over_n(P.X, centers), "sample": S.shape[0], "t_sampling": t_sample,
            "t_lloyd": t_lloyd}


def split_runs(P: Prepared, cells, *, shares=(None, 0.1), reps: int = 10,
               seed: int = 11) -> pd.DataFrame:
    """Median cost/n per (sampler, m, ε) with the paper's noise split and with other ones.

    ``shares`` are the ε shares given to the counts (``None``: the paper's Su et al. ratio,
    which leaves the counts ≈ 1e-4 of ε on Covertype).
    """
    rows = []
    for c, (sampler, m, eps) in enumerate(cells):
        for share in shares:
            setup = setup_sampler(P, sampler, m, eps, count_share=share)
            costs = [run_once(P, setup, np.random.default_rng([seed, c, r]))["cost"]
                     for r in range(reps)]
            rows.append({"sampler": LABEL[sampler], "m": setup.m, "epsilon": eps,
                         "count_share": "Su et al. (paper)" if share is None else f"{share:g}",
                         "beta_count": setup.beta_count, "beta_sum": setup.beta_sum,
                         "median": float(np.nanmedian(costs)),
                         "q25": float(np.nanquantile(costs, 0.25)),
                         "q75": float(np.nanquantile(costs, 0.75))})
    return pd.DataFrame(rows)


def variant_runs(P: Prepared, cells, *, variants=tuple(VARIANTS), reps: int = 10,
                 seed: int = 7) -> pd.DataFrame:
    """Median cost/n of each DP-Lloyd variant per (sampler, m, ε) cell (same samples/seeds)."""
    rows = []
    for c, (sampler, m, eps) in enumerate(cells):
        setup = setup_sampler(P, sampler, m, eps)
        for variant in variants:
            costs = [run_once(P, setup, np.random.default_rng([seed, c, r]), variant)["cost"]
                     for r in range(reps)]
            rows.append({"sampler": LABEL[sampler], "m": setup.m, "epsilon": eps,
                         "variant": variant, "median": float(np.nanmedian(costs)),
                         "q25": float(np.nanquantile(costs, 0.25)),
                         "q75": float(np.nanquantile(costs, 0.75))})
    return pd.DataFrame(rows)


def covertype_runs(
    P: Prepared,
    cells: Sequence[tuple[str | None, float | None, float]],
    *,
    reps: int = 10,
    seed: int = 0,
    progress: bool = False,
    first_rep: int = 0,
) -> pd.DataFrame:
    """Run every (sampler, m, ε) cell ``reps`` times; one row per run (tidy).

    Repetition ``rep`` of cell ``c`` uses the stream ``default_rng([seed, c, rep])``, so
    repetitions ``first_rep … first_rep + reps − 1`` extend an earlier run with the same cells
    and seed exactly (the papers' 50 repetitions can be run in blocks and concatenated).

    Columns: sampler (unif/core/opt/full), m, epsilon, rep, cost (cost/n on all rows), sample
    (realised size), delivered_epsilon, beta_sum, beta_count, t_weights, t_calibration,
    t_sampling, t_lloyd. A cell that cannot be calibrated (opt above its largest feasible m at a
    small ε, core above the q ≤ 1 bound) gives one row with rep = −1, cost NaN and the reason in
    ``infeasible``.
    """
    rows = []
    for c, cell in enumerate(cells):
        block = _cell_runs(P, c, cell, reps=reps, first_rep=first_rep, seed=seed)
        rows += block
        if progress:
            _print_cell(cell, block)
    return pd.DataFrame(rows)


def _cell_runs(P: Prepared, c: int, cell, *, reps: int, first_rep: int, seed: int) -> list[dict]:
    """Repetitions ``first_rep … first_rep + reps − 1`` of cell number ``c`` (streams
    ``default_rng([seed, c, rep])``), or one rep = −1 record if the cell is infeasible."""
    sampler, m, eps = cell
    try:
        setup = setup_sampler(P, sampler, m, eps)
    except ValueError as err:  # e.g. opt above its largest feasible m at a small ε
        return [{"sampler": LABEL[sampler], "m": m, "epsilon": eps, "rep": -1,
                 "cost": math.nan, "infeasible": str(err)}]
    rows = []
    for rep in range(first_rep, first_rep + reps):
        rng = np.random.default_rng([seed, c, rep])  # one independent stream per run
        rows.append({"sampler": LABEL[sampler], "m": setup.m, "epsilon": eps, "rep": rep,
                     "delivered_epsilon": setup.delivered_epsilon,
                     "beta_sum": setup.beta_sum, "beta_count": setup.beta_count,
                     "t_weights": setup.t_weights, "t_calibration": setup.t_calibration,
                     **run_once(P, setup, rng)})
    return rows


def _print_cell(cell, block: list[dict]) -> None:
    sampler, m, eps = cell
    if block and block[0]["rep"] < 0:
        print(f"  {LABEL[sampler]:>4} m={m:>8} ε={eps:<6g} infeasible: {block[0]['infeasible']}",
              flush=True)
        return
    med = float(np.nanmedian([r["cost"] for r in block])) if block else math.nan
    size = block[0]["m"] if block else math.nan
    print(f"  {LABEL[sampler]:>4} m={size:>8.0f} ε={eps:<6g} median cost/n {med:.4g}",
          flush=True)


def top_up_runs(
    P: Prepared,
    cells: Sequence[tuple[str | None, float | None, float]],
    stored: pd.DataFrame | None,
    *,
    reps: int,
    seed: int = 0,
    block: int = 10,
    save: Path | None = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Add repetitions to ``stored`` runs until every feasible cell has ``reps`` of them.

    Repetition ``rep`` of cell ``c`` uses the same stream as :func:`covertype_runs`, so a
    topped-up run equals one made with ``reps`` from the start (same cells, same seed). The
    missing repetitions are run in rounds of ``block`` over all cells, and the runs so far are
    written to ``save`` (CSV) after each round: a run stopped early leaves every cell with a
    whole number of rounds, never a few cells ahead of the others.
    """
    if reps < 1 or block < 1:
        raise ValueError(f"reps and block must be ≥ 1, got reps={reps}, block={block}")
    runs = pd.DataFrame() if stored is None else stored.copy()
    have = {}
    for c, (sampler, m, eps) in enumerate(cells):
        sel = runs[(runs["sampler"] == LABEL[sampler]) & (runs["epsilon"] == eps)] \
            if len(runs) else runs
        if m is not None and len(sel):
            sel = sel[np.isclose(sel["m"], m)]
        if len(sel) and (sel["rep"] < 0).any():
            have[c] = None  # infeasible, recorded once
        else:
            have[c] = int(sel["rep"].max()) + 1 if len(sel) else 0
            if len(sel) and sorted(sel["rep"]) != list(range(have[c])):
                raise ValueError(f"stored runs of cell {cells[c]} are not repetitions "
                                 f"0…{have[c] - 1}")
    start = min((h for h in have.values() if h is not None), default=reps)
    for first in range(start, reps, block):
        hi = min(first + block, reps)
        new = []
        for c, cell in enumerate(cells):
            if have[c] is None or have[c] >= hi:
                continue
            part = _cell_runs(P, c, cell, reps=hi - have[c], first_rep=have[c], seed=seed)
            new += part
            have[c] = None if part and part[0]["rep"] < 0 else hi
            if progress:
                _print_cell(cell, part)
        runs = pd.concat([runs, pd.DataFrame(new)], ignore_index=True)
        if save is not None:
            runs.to_csv(save, index=False)
        if progress:
            print(f"repetitions up to {hi - 1} done", flush=True)
    return runs


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Median and quartiles of cost/n per (sampler, m, ε) (the paper's lines and bands)."""
    if "rep" in runs:
        runs = runs[runs["rep"] >= 0]  # drop the records of infeasible cells
    g = runs.groupby(["sampler", "m", "epsilon"], sort=False)["cost"]
    out = g.agg(median="median", q25=lambda s: s.quantile(0.25),
                q75=lambda s: s.quantile(0.75), runs="count").reset_index()
    return out


def fig3_cells(m_grid=M_FIG3, eps_grid=EPS_GRID) -> list:
    """(sampler, m, ε) cells of Fig. 3: three samplers per m and ε, full data per ε, ε = ∞."""
    cells = [(s, m, e) for m in m_grid for e in eps_grid for s in ("uniform", "coreset", "privacy")]
    cells += [(s, m, math.inf) for m in m_grid for s in ("uniform", "coreset")]
    cells += [(None, None, e) for e in eps_grid]
    return cells


def fig4_cells(m_grid=M_FIG4, eps_grid=EPS_FIG4, skip=()) -> list:
    """(sampler, m, ε) cells of Fig. 4 that are not already in ``skip``."""
    cells = [(s, m, e) for e in eps_grid for m in m_grid for s in ("uniform", "coreset", "privacy")]
    cells += [(None, None, e) for e in eps_grid]
    return [c for c in cells if c not in set(skip)]


def timing_table(P: Prepared, m_grid=(5000, 10000, 15000, 20000, 50000, 75000), *,
                 epsilon: float = 3.0, reps: int = 3, seed: int = 1) -> pd.DataFrame:
    """Table 2 style timings at ε = 3: weights, sampling, DP-Lloyd; relative to full DP-Lloyd.

    t_weights is the time to compute every point's q given the noise (for opt: Algorithm 1, here
    the closed form); t_calibration the search for the noise constant B (≈ 5 s for opt, which
    the paper does not time but a user waits for: it is part of t_total). Times are medians
    over ``reps``.
    """
    cells = [(None, None, epsilon)] + [(s, m, epsilon) for m in m_grid
                                       for s in ("uniform", "coreset", "privacy")]
    runs = covertype_runs(P, cells, reps=reps, seed=seed)
    runs = runs[runs["rep"] >= 0]
    g = runs.groupby(["sampler", "m"], sort=False).agg(
        t_weights=("t_weights", "median"), t_calibration=("t_calibration", "median"),
        t_sampling=("t_sampling", "median"), t_lloyd=("t_lloyd", "median")).reset_index()
    g["t_total"] = g["t_weights"] + g["t_calibration"] + g["t_sampling"] + g["t_lloyd"]
    t_full = float(g.loc[g["sampler"] == "full", "t_lloyd"].iloc[0])
    g["rel_total_pct"] = 100 * g["t_total"] / t_full
    g["m_over_n_pct"] = 100 * g["m"] / P.n
    return g


# --------------------------------------------------------------------------------------------
# Claims (spec §7)
# --------------------------------------------------------------------------------------------


def _cell(summary: pd.DataFrame, sampler: str, m, eps) -> pd.Series | None:
    sel = summary[(summary["sampler"] == sampler) & (summary["epsilon"] == eps)]
    if m is not None:
        sel = sel[np.isclose(sel["m"], m)]
    return None if sel.empty else sel.iloc[0]


def _load(name: str) -> Prepared:
    return load_covertype() if name == "covertype" else load_extra(name)


def _cells_for(name: str, quick: bool) -> list:
    if name == "covertype":
        if quick:
            cells = fig3_cells(m_grid=(5000, 20000), eps_grid=(1.0, 3.0, 100.0, 1000.0))
            return cells + fig4_cells(m_grid=(5000, 10000, 20000), skip=cells)
        cells = fig3_cells()
        return cells + fig4_cells(skip=cells)
    g = EXTRA_DATASETS[name]
    cells = fig3_cells(m_grid=g["m_fig3"])
    return cells + fig4_cells(m_grid=g["m_fig4"], skip=cells)


def main(argv: Sequence[str] | None = None) -> int:
    """Regenerate ``importance_sampling.md`` (``--quick``: short run in a scratch folder)."""
    from dpcore.reproduce._importance_report import theory_checks, write_report

    parser = argparse.ArgumentParser(prog="python -m dpcore.reproduce.importance",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true",
                        help="small grid, 3 repetitions, 150k-row Covertype subsample only")
    parser.add_argument("--reps", type=int, default=None,
                        help="repetitions per cell (default: the paper's 50; quick: 3)")
    parser.add_argument("--datasets", default=None,
                        help="comma-separated subset of covertype,mnist,gas (default: all)")
    parser.add_argument("--out", type=Path, default=None,
                        help="report folder (default: docs/reproduction; --quick: a scratch "
                             "folder, never the committed report)")
    parser.add_argument("--from-runs", type=Path, default=None,
                        help="rebuild from saved importance_runs_<data>.csv.gz (and the "
                             "variants/splits/timing CSVs) in this folder: no new Lloyd runs")
    parser.add_argument("--top-up", action="store_true",
                        help="with --from-runs: run the repetitions the saved runs lack, up to "
                             "--reps per cell (same streams as a full run), and add them; the "
                             "runs so far are saved after every round of 10 repetitions")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-timing", action="store_true", help="skip the Table 2 timings")
    args = parser.parse_args(argv)
    quick = args.quick
    reps = args.reps or (3 if quick else 50)
    if reps < 1:
        parser.error("--reps must be ≥ 1")
    if args.top_up and args.from_runs is None:
        parser.error("--top-up needs --from-runs (the folder of the saved runs to extend)")
    names = (args.datasets or ("covertype" if quick else "covertype,mnist,gas")).split(",")
    if "covertype" not in names or not set(names) <= {"covertype", *EXTRA_DATASETS}:
        parser.error("--datasets must include covertype and name only covertype, mnist, gas")
    out = report_dir(args.out, quick)
    figs = out / "figures"
    figs.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    warnings.simplefilter("ignore", PrivacyLeakWarning)  # the paper's protocol; stated above

    fig2_runs = 200 if quick else 1000
    X = lws_data(rng=args.seed)
    fig2w = figure2_weights(X)
    fig2c = figure2_curves(X, n_runs=fig2_runs, rng=args.seed)
    print("Figure 2 done", flush=True)
    try:
        prepared = {n: _load(n) for n in names}
    except FileNotFoundError as err:
        print(f"error: {err}")
        return 2
    if quick:
        prepared["covertype"] = subsample(prepared["covertype"], 150_000, rng=args.seed)
    src = args.from_runs
    runs = {}
    for n in names:
        f = None if src is None else src / f"importance_runs_{n}.csv.gz"
        stored = pd.read_csv(f) if f is not None and f.exists() else None
        if stored is not None and not args.top_up:
            runs[n] = stored
        else:  # a fresh run is a top-up of nothing: saved after every round
            runs[n] = top_up_runs(prepared[n], _cells_for(n, quick), stored, reps=reps,
                                  seed=args.seed, save=figs / f"importance_runs_{n}.csv.gz",
                                  progress=True)
        runs[n].to_csv(figs / f"importance_runs_{n}.csv.gz", index=False)
    P = prepared["covertype"]

    def saved(name: str, make):
        f = None if src is None else src / name
        df = pd.read_csv(f) if f is not None and f.exists() else make()
        df.to_csv(figs / name, index=False)
        return df

    timing_reps = 2 if quick else 5
    timing = None if args.no_timing else saved("importance_timing.csv", lambda: timing_table(
        P, m_grid=(5000, 20000) if quick else (5000, 10000, 15000, 20000, 50000, 75000),
        reps=timing_reps))
    vreps = 3 if quick else 12
    variant_cells = [(s, 20000, 3.0) for s in ("uniform", "coreset", "privacy")]
    variant_cells += [("coreset", 20000, 100.0), (None, None, 3.0)]
    variants = saved("importance_variants.csv", lambda: variant_runs(
        P, variant_cells, reps=vreps, seed=args.seed + 7))
    split_cells = [(None, None, e) for e in (1.0, 3.0, 30.0)]
    split_cells += [(s, 20000, e) for e in (1.0, 3.0, 30.0) for s in ("uniform", "privacy")]
    splits = saved("importance_splits.csv", lambda: split_runs(
        P, split_cells, reps=vreps, seed=args.seed + 11))
    reps_by = {}
    for n, r in runs.items():
        c = r[r["rep"] >= 0].groupby(["sampler", "m", "epsilon"]).size()
        reps_by[n] = f"{c.min()}" if c.min() == c.max() else f"{c.min()}–{c.max()}"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    meta = {"command": "python -m dpcore.reproduce.importance" + (" --quick" if quick else ""),
            "run": f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
                   f"{time.perf_counter() - start:.0f} s wall (1-min load average at the end "
                   f"{load:.1f} on 2 cores){'; QUICK run: reduced grid' if quick else ''}"
                   + ("" if src is None else "; Lloyd runs read from saved CSVs"
                      + (f", the missing repetitions up to {reps} added" if args.top_up else "")),
            "reps_by_data": reps_by, "paper_reps": 50, "timing_reps": timing_reps,
            "variant_reps": vreps}
    path = write_report(out / REPORT_NAME, fig2w=fig2w, fig2c=fig2c, runs=runs,
                        prepared=prepared, timing=timing, variants=variants, splits=splits,
                        checks=theory_checks(P), fig2=fig2_checks(fig2w, fig2c), meta=meta,
                        variant_keys=VARIANTS)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
