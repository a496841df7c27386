"""Reproduction of Rubinstein & Aldà (ICML 2017), "Pain-Free Random Differential Privacy".

``python -m dpcore.reproduce.sensitivity [--quick]`` (or ``dpcore reproduce sensitivity``)
writes ``docs/reproduction/sensitivity_sampler.md`` and plotly figures under
``docs/reproduction/figures/sensitivity_*.html``. Every table below is also a function returning
a pandas DataFrame:

* :func:`table1` / :func:`figure2` / :func:`figure3`: the operating points of Table 1 (exact).
* :func:`example6`: Figure 4, analytical vs sampled sensitivity of the mean of Exp(1) data.
* :func:`delivered_confidence`: the Monte Carlo check ``E[Φ(Δ̂)] = k/(m+1)`` (spec §7 claim 4).
* :func:`appendix_c`: Figure 9, the mean of bounded data, sampled vs global sensitivity.
* :func:`svm_sensitivity` / :func:`svm_utility`: Figures 5 and 6, linear SVM.
* :func:`kde_utility`: Figure 7, KDE released with the Bernstein mechanism.

Settings the paper leaves open follow the spec (``../shared/spec/sensitivity_sampler.md`` §6)
and are listed in the report. This module computes the tables; the claims are judged on them
(:func:`claims`) and the report (figures, markdown, the differences and findings texts) is
written by :mod:`dpcore.reproduce._sensitivity_report`.
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.special import lambertw

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.datasets import REPO_ROOT
from dpcore.mechanisms.sensitivity import statistics
from dpcore.mechanisms.sensitivity.sampler import (
    bernstein_design,
    bernstein_lattice,
    gamma_min,
    sample_sensitivity,
    sampler_config,
)
from dpcore.privacy import noise
from dpcore.reproduce._report import report_dir
from dpcore.reproduce._sensitivity_report import claims

__all__ = [
    "appendix_c",
    "delivered_confidence",
    "example6",
    "figure1",
    "figure2",
    "figure3",
    "kde_oracle",
    "kde_sensitivity_quantiles",
    "kde_utility",
    "main",
    "svm_oracle",
    "svm_sensitivity",
    "svm_utility",
    "table1",
]

ROOT = REPO_ROOT
REPORT_DIR = ROOT / "docs" / "reproduction"
REPORT_NAME = "sensitivity_sampler.md"

ROW1_GAMMAS = (
    0.9,
    0.75,
    0.5,
    0.4,
    0.3,
    0.2,
    0.15,
    0.1,
    0.075,
    0.05,
    0.025,
    0.02,
    0.01,
    0.005,
    0.001,
)

ROW3_MS = (10, 50, 100, 500, 1000, 1500, 5000, 10_000, 50_000, 100_000, 1_000_000)


# ------------------------------------------------------------------------------------ Table 1


def _m_on_branch(gamma: float, branch: int) -> float:
    """Row-1 ``m`` with ``ρ`` from Lambert-W branch ``branch`` (real part, as the Python port)."""
    rho = math.exp(lambertw(-gamma / (2 * math.sqrt(math.e)), branch).real + 0.5)
    if not 0 < rho < min(gamma, 0.5):
        return math.nan  # infeasible: Theorem 15 needs 0 < ρ < min(γ, 1/2)
    return math.ceil(math.log(1 / rho) / (2 * (gamma - rho) ** 2))


def table1(gammas: Sequence[float] = ROW1_GAMMAS, ms: Sequence[int] = ROW3_MS):
    """Table 1 rows 1 and 3 as two DataFrames (row 1 with the wrong-branch ``m`` for contrast)."""
    row1 = []
    for g in gammas:
        cfg = sampler_config(gamma=g)
        row1.append(
            {
                "gamma": g,
                "rho": cfg.rho,
                "m": cfg.m,
                "k": cfg.k,
                "m (branch +1, Python port)": _m_on_branch(g, 1),
            }
        )
    row3 = [
        {"m": m, "rho": (c := sampler_config(m=m)).rho, "gamma_min": c.gamma, "k": c.k} for m in ms
    ]
    return pd.DataFrame(row1), pd.DataFrame(row3)


def figure2(gammas: Sequence[float] | None = None) -> pd.DataFrame:
    """Figure 2: the minimum number of pairs ``m`` for a target ``γ`` (row 1)."""
    gammas = np.geomspace(1e-3, 0.95, 120) if gammas is None else np.asarray(gammas)
    return pd.DataFrame({"gamma": gammas, "m": [sampler_config(gamma=g).m for g in gammas]})


def figure3(ms: Sequence[int] = (100, 1000, 10_000), points: int = 60) -> pd.DataFrame:
    """Figure 3: ``k/m`` against ``γ`` for fixed budgets ``m`` (row 2), from ``γ_min(m)``."""
    rows = []
    for m in ms:
        for g in np.linspace(gamma_min(m), 0.99, points):
            cfg = sampler_config(m=m, gamma=float(g))
            rows.append({"m": m, "gamma": float(g), "k": cfg.k, "k/m": cfg.k / m})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------- Example 6


def _exp_oracle(size: int, rng: np.random.Generator) -> np.ndarray:
    return rng.exponential(1.0, size)


def _expected_order_statistic(m: int, k: int) -> float:
    """``E[G_(k)]`` for ``m`` i.i.d. Exp(1): ``H_m − H_{m−k}`` (Rényi representation)."""
    return float(np.sum(1.0 / np.arange(m - k + 1, m + 1)))


def example6(
    ms: Sequence[int] = (100, 1000, 10_000),
    gammas: Sequence[float] | None = None,
    *,
    n: int = 100,
    repeats: int = 50,
    rng: RNGLike = 0,
) -> pd.DataFrame:
    """Figure 4: analytical ``log(1/γ)/n`` vs sampled ``Δ̂`` for the mean of Exp(1) records.

    ``n`` only rescales (``n·G ~ Exp(1)``), so values are reported as ``n·Δ``. For each budget
    ``m`` and each ``γ >= γ_min(m)``, ``k`` is the row-2 index; one sample of ``m`` pairs per
    repeat serves every ``γ`` (only the order statistic changes).
    """
    gen = as_generator(rng)
    if gammas is None:
        gammas = sorted({*np.round(np.geomspace(0.01, 0.6, 22), 4), 0.02, 0.05, 0.1, 0.2, 0.5})
    stat = statistics.mean(bounds=(0.0, 1.0))
    rows = []
    for m in ms:
        feasible = [g for g in gammas if g >= gamma_min(m)]
        ks = np.array([sampler_config(m=m, gamma=g).k for g in feasible])
        samples = np.stack(
            [
                sample_sensitivity(stat, _exp_oracle, n, m=m, k=m, rng=gen).sensitivities
                for _ in range(repeats)
            ]
        )
        for g, k in zip(feasible, ks, strict=True):
            est = n * samples[:, k - 1]
            rows.append(
                {
                    "m": m,
                    "gamma": g,
                    "k": int(k),
                    "n*analytic": math.log(1 / g),
                    "n*sampled (mean)": est.mean(),
                    "n*sampled (sd)": est.std(ddof=1),
                    "n*E[sampled] (exact)": _expected_order_statistic(m, int(k)),
                }
            )
    return pd.DataFrame(rows)


def figure1(m: int = 100, gamma: float = 0.3, *, n: int = 100, rng: RNGLike = 6):
    """Figure 1: empirical vs true CDF of G for Example 6, with the inverted level marked.

    Returns (ECDF table with the true CDF ``1 − exp(−nG)``, the config, ``Δ̂``).
    """
    cfg = sampler_config(m=m, gamma=gamma)
    est = sample_sensitivity(statistics.mean(), _exp_oracle, n, m=cfg.m, k=cfg.k, rng=rng)
    table = est.ecdf()
    table["true CDF"] = -np.expm1(-n * table["G"])
    return table, cfg, est.delta_hat


def delivered_confidence(
    cases: Sequence[tuple[int, float | None]] = ((100, 0.3), (1000, 0.1), (285, None)),
    *,
    runs: int = 2000,
    n: int = 100,
    rng: RNGLike = 1,
) -> pd.DataFrame:
    """Claim 4: the confidence actually delivered, ``Pr(G_new <= Δ̂)``, against ``k/(m+1)``.

    Example 6 gives the CDF exactly, ``Φ(Δ) = 1 − exp(−nΔ)``, so ``mean Φ(Δ̂)`` over ``runs``
    sampler runs estimates ``E[Φ(Δ̂)]``; one fresh pair per run gives the empirical fraction.
    ``(285, None)`` is row 1 for ``γ = 0.1``.
    """
    gen = as_generator(rng)
    stat = statistics.mean()
    rows = []
    for m, g in cases:
        cfg = sampler_config(gamma=0.1) if g is None else sampler_config(m=m, gamma=g)
        phi = np.empty(runs)
        fresh = np.empty(runs)
        for r in range(runs):
            dh = sample_sensitivity(stat, _exp_oracle, n, m=cfg.m, k=cfg.k, rng=gen).delta_hat
            phi[r] = -math.expm1(-n * dh)
            x = gen.exponential(size=2)
            fresh[r] = abs(x[0] - x[1]) / n <= dh
        rows.append(
            {
                "m": cfg.m,
                "k": cfg.k,
                "gamma": cfg.gamma,
                "1-gamma": 1 - cfg.gamma,
                "k/(m+1)": cfg.k / (cfg.m + 1),
                "mean Phi(delta_hat)": phi.mean(),
                "se": phi.std(ddof=1) / math.sqrt(runs),
                "fresh-pair fraction": fresh.mean(),
            }
        )
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------- Appendix C


def appendix_c(
    ds: Sequence[int] = (1, 10, 100),
    gammas: Sequence[float] = (0.5, 0.2, 0.1, 0.05, 0.02, 0.01),
    *,
    n: int = 500,
    rng: RNGLike = 2,
) -> pd.DataFrame:
    """Figure 9: mean of ``n`` uniform records on ``[0,1]^d``: ``d/n`` vs ``Δ̂`` (L1, row 1)."""
    gen = as_generator(rng)
    stat = statistics.mean(bounds=(0.0, 1.0))
    rows = []
    for d in ds:

        def oracle(size, rng, d=d):
            return rng.random((size, d))

        for g in gammas:
            cfg = sampler_config(gamma=g)
            est = sample_sensitivity(stat, oracle, n, m=cfg.m, k=cfg.k, norm=1, rng=gen)
            glob = stat.global_sensitivity(n, d, 1)
            rows.append(
                {
                    "d": d,
                    "gamma": g,
                    "m": cfg.m,
                    "global": glob,
                    "sampled": est.delta_hat,
                    "global/sampled": glob / est.delta_hat,
                }
            )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------- linear SVM


def svm_oracle(d: int):
    """§7.2 data: classes equiprobable, ``N(0.2·1, 0.01 I)`` (label +1) / ``N(0.8·1, 0.01 I)``."""

    def draw(size: int, rng: np.random.Generator) -> np.ndarray:
        y = rng.integers(0, 2, size)
        x = rng.normal(np.where(y[:, None] == 1, 0.2, 0.8), 0.1, (size, d))
        return np.column_stack([x, 2 * y - 1])

    return draw


def svm_sensitivity(
    ds: Sequence[int] = (8, 16, 32, 64),
    gammas: Sequence[float] = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
    *,
    m: int = 1500,
    n: int = 1000,
    C: float = 3.0,
    rng: RNGLike = 3,
    n_jobs: int | None = None,
) -> pd.DataFrame:
    """Figure 5: ``Δ̂`` (row 2, one sample of ``m`` pairs per ``d``) vs Proposition 19's ``Δ̄``."""
    gen = as_generator(rng)
    stat = statistics.linear_svm(C)
    rows = []
    for d in ds:
        est = sample_sensitivity(stat, svm_oracle(d), n, m=m, k=m, rng=gen, n_jobs=n_jobs)
        glob = statistics.svm_global_sensitivity(C, d, n)
        for g in gammas:
            if g < gamma_min(m):
                continue
            k = sampler_config(m=m, gamma=g).k
            dh = float(est.sensitivities[k - 1])
            rows.append(
                {
                    "d": d,
                    "gamma": g,
                    "m": m,
                    "k": k,
                    "sampled": dh,
                    "global": glob,
                    "global/sampled": glob / dh,
                }
            )
    return pd.DataFrame(rows)


def _svm_error(wb: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Misclassification rate of ``sign(x·w + b)`` for each row of ``wb`` (``(..., d+1)``)."""
    scores = x @ wb[..., :-1, None] + wb[..., -1:, None]  # (..., N, 1)
    return np.mean(np.where(scores[..., 0] > 0, 1, -1) != y, axis=-1)


def svm_utility(
    epsilons: Sequence[float] | None = None,
    *,
    d: int = 2,
    gamma: float = 0.05,
    m: int = 1500,
    n: int = 1000,
    C: float = 3.0,
    repeats: int = 500,
    test_size: int = 10_000,
    rng: RNGLike = 4,
    n_jobs: int | None = None,
) -> tuple[pd.DataFrame, float, float]:
    """Figure 6: test error of Laplace-private SVMs with ``Δ̂`` vs ``Δ̄`` (and non-private).

    ``Δ̂`` is sampled once (offline amortisation, §5.1: it depends on ``n``, ``f`` and ``P``
    only) and reused over ``repeats`` training sets. Returns (table, Δ̂, Δ̄).
    """
    gen = as_generator(rng)
    eps = np.geomspace(0.01, 1000, 16) if epsilons is None else np.asarray(epsilons, dtype=float)
    stat = statistics.linear_svm(C)
    oracle = svm_oracle(d)
    cfg = sampler_config(m=m, gamma=gamma)
    dh = sample_sensitivity(stat, oracle, n, m=cfg.m, k=cfg.k, rng=gen, n_jobs=n_jobs).delta_hat
    glob = statistics.svm_global_sensitivity(C, d, n)
    test = oracle(test_size, gen)
    x_test, y_test = test[:, :-1], test[:, -1]
    sens = np.array([dh, glob])
    err = np.zeros((repeats, eps.size, 2))
    base = np.zeros(repeats)
    for r in range(repeats):
        wb = stat(oracle(n, gen))
        base[r] = _svm_error(wb, x_test, y_test)
        lap = noise.laplace(1.0, size=(eps.size, 2, d + 1), rng=gen)
        noisy = wb + lap * (sens[None, :, None] / eps[:, None, None])
        err[r] = _svm_error(noisy, x_test, y_test)
    table = pd.DataFrame(
        {
            "epsilon": eps,
            "sampler": err[:, :, 0].mean(axis=0),
            "global": err[:, :, 1].mean(axis=0),
            "non-private": base.mean(),
        }
    )
    return table, dh, glob


# -------------------------------------------------------------------------------------- KDE


def kde_oracle(size: int, rng: np.random.Generator) -> np.ndarray:
    """§7.3 data: ``0.4 N(0.5, 0.02) + 0.6 N(0.75, 0.005)``, read as variances."""
    first = rng.random(size) < 0.4
    return np.where(
        first, rng.normal(0.5, math.sqrt(0.02), size), rng.normal(0.75, math.sqrt(0.005), size)
    )


def kde_utility(
    epsilons: Sequence[float] | None = None,
    gammas: Sequence[float] = (0.01, 0.1),
    *,
    m: int = 50_000,
    n: int = 5000,
    bandwidth: float = 0.05,
    lattice_k: int = 10,
    h: int = 3,
    repeats: int = 1000,
    grid_points: int = 200,
    rng: RNGLike = 5,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """Figure 7: mean |Bernstein release − non-private KDE| on a grid of ``[0, 1]``.

    The Bernstein mechanism (lattice ``k``, iterated order ``h``) is calibrated with the sampled
    L∞-on-the-lattice ``Δ̂`` for each ``γ`` (row 2 with budget ``m``), or with the global
    ``Δ̄ = 1/(n h sqrt(2π))``. Also reports the noiseless Bernstein error (the plateau).
    Returns (table, sensitivities by label plus the ratio of G's median to ``Δ̄``).
    """
    gen = as_generator(rng)
    eps = np.geomspace(1e-3, 10, 17) if epsilons is None else np.asarray(epsilons, dtype=float)
    lattice = bernstein_lattice(lattice_k)
    stat = statistics.kde(lattice, bandwidth=bandwidth)
    est = sample_sensitivity(stat, kde_oracle, n, m=m, k=m, norm=np.inf, rng=gen)
    sens = {
        f"sampler gamma={g:g}": float(est.sensitivities[sampler_config(m=m, gamma=g).k - 1])
        for g in gammas
    }
    sens["global"] = float(stat.global_sensitivity(n, 1, np.inf))
    median_ratio = float(np.median(est.sensitivities) / sens["global"])
    scales = np.array(list(sens.values()))[None, :, None] * (lattice_k + 1) / eps[:, None, None]
    grid = np.linspace(0.0, 1.0, grid_points)
    design = bernstein_design(grid, lattice_k, h)  # (grid, k+1)
    fine = statistics.kde(grid, bandwidth=bandwidth)
    err = np.zeros((eps.size, len(sens)))
    plateau = 0.0
    for _ in range(repeats):
        data = kde_oracle(n, gen)
        truth = fine(data)
        coeffs = stat(data)
        plateau += np.abs(design @ coeffs - truth).mean()
        noisy = coeffs + noise.laplace(1.0, size=(eps.size, len(sens), lattice_k + 1), rng=gen)
        noisy = coeffs + (noisy - coeffs) * scales
        err += np.abs(noisy @ design.T - truth).mean(axis=-1)
    table = pd.DataFrame(err / repeats, columns=list(sens))
    table.insert(0, "epsilon", eps)
    table["noiseless Bernstein"] = plateau / repeats
    return table, {**sens, "median G / global": median_ratio}


def kde_sensitivity_quantiles(
    bandwidths: Sequence[float] = (0.01, 0.02, 0.05),
    levels: Sequence[float] = (0.5, 0.9, 0.99, 1.0),
    *,
    m: int = 50_000,
    n: int = 5000,
    lattice_k: int = 10,
    rng: RNGLike = 7,
) -> pd.DataFrame:
    """Quantiles of the KDE's lattice sensitivity G relative to the sharp global bound.

    Explains Figure 7: the sampler can only help where the quantile it inverts (``k/m``) sits
    well below ``Δ̄``.
    """
    gen = as_generator(rng)
    rows = []
    for bw in bandwidths:
        stat = statistics.kde(bernstein_lattice(lattice_k), bandwidth=bw)
        g = sample_sensitivity(stat, kde_oracle, n, m=m, k=m, norm=np.inf, rng=gen).sensitivities
        glob = stat.global_sensitivity(n, 1, np.inf)
        rows.append(
            {"bandwidth": bw, **{f"q{lv:g} / global": np.quantile(g, lv) / glob for lv in levels}}
        )
    return pd.DataFrame(rows)


def main(argv: Sequence[str] | None = None) -> int:
    """Write ``docs/reproduction/sensitivity_sampler.md`` and its figures."""
    parser = argparse.ArgumentParser(prog="python -m dpcore.reproduce.sensitivity")
    parser.add_argument("--quick", action="store_true", help="small sizes (about a minute)")
    parser.add_argument("--jobs", type=int, default=None, help="joblib workers for the SVM")
    parser.add_argument("--out", type=Path, default=None,
                        help="report folder (default: docs/reproduction; --quick: a scratch "
                             "folder, never the committed report)")
    args = parser.parse_args(argv)
    args.out = report_dir(args.out, args.quick)
    report = args.out / REPORT_NAME
    q = args.quick
    t0 = time.perf_counter()
    timings: dict[str, float] = {}

    def timed(label, fn, *a, **kw):
        t = time.perf_counter()
        res = fn(*a, **kw)
        timings[label] = time.perf_counter() - t
        return res

    row1, row3 = timed("table1", table1)
    f1, f1_cfg, f1_dh = figure1()
    f2 = timed("figure2", figure2)
    f3 = timed("figure3", figure3)
    e6 = timed("example6", example6, repeats=10 if q else 50)
    conf = timed("confidence", delivered_confidence, runs=300 if q else 2000)
    appc = timed(
        "appendix_c",
        appendix_c,
        gammas=(0.5, 0.2, 0.1, 0.05) if q else (0.5, 0.2, 0.1, 0.05, 0.02, 0.01),
    )
    svm_s = timed(
        "svm_sensitivity",
        svm_sensitivity,
        ds=(8, 16) if q else (8, 16, 32, 64),
        m=40 if q else 1500,
        gammas=(0.3, 0.5) if q else (0.05, 0.1, 0.2, 0.3, 0.4, 0.5),
        n_jobs=args.jobs,
    )
    svm_u, svm_dh, svm_glob = timed(
        "svm_utility",
        svm_utility,
        m=40 if q else 1500,
        gamma=0.3 if q else 0.05,
        repeats=20 if q else 500,
        n_jobs=args.jobs,
    )
    kde_t, kde_sens = timed("kde_utility", kde_utility, repeats=50 if q else 1000)
    kde_q = timed("kde_quantiles", kde_sensitivity_quantiles, m=5000 if q else 50_000)

    from dpcore.reproduce._sensitivity_report import write_report

    results = {"row1": row1, "row3": row3, "f1": f1, "f1_cfg": f1_cfg, "f1_dh": f1_dh, "f2": f2,
               "f3": f3, "e6": e6, "conf": conf, "appc": appc, "svm_s": svm_s, "svm_u": svm_u,
               "svm_dh": svm_dh, "svm_glob": svm_glob, "kde_t": kde_t, "kde_sens": kde_sens,
               "kde_q": kde_q,
               "claims": claims(row1, f2, f3, e6, conf, appc, svm_s, svm_u, kde_t)}
    write_report(report, results, quick=q, timings=timings, started=t0)
    print(f"wrote {report} in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
