"""Algorithm 3: private greedy grid set cover at one level."""

from __future__ import annotations

import math

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.mechanisms.maxcover.grid import _offsets_within, _signed_offsets
from dpcore.mechanisms.maxcover.hybrid import _HybridCover
from dpcore.mechanisms.maxcover.incidence import _IncidenceCover
from dpcore.mechanisms.maxcover.lazy import _LazyCover

SAMPLERS = ("auto", "hybrid", "lazy", "incidence")
#: ``sampler="auto"`` uses the hybrid sampler while a cover ball holds at most this many lattice
#: points (its dense levels enumerate them per point), else the lazy one (the paper's grid).
HYBRID_MAX_BALL_POINTS = 4096.0


def ball_volume(rho: float, d: int) -> float:
    """Volume of the d-ball of radius ρ (≈ the number of lattice points it holds)."""
    return math.exp(d / 2 * math.log(math.pi) - math.lgamma(d / 2 + 1) + d * math.log(rho))


def resolve_sampler(sampler: str, rho: float, d: int) -> str:
    """The sampler ``"auto"`` stands for at cover radius ρ (lattice units) in d' dimensions."""
    if sampler not in SAMPLERS:
        raise ValueError(f"sampler must be one of {SAMPLERS}, got {sampler!r}")
    if sampler != "auto":
        return sampler
    return "hybrid" if ball_volume(rho, d) <= HYBRID_MAX_BALL_POINTS else "lazy"


def private_grid_set_cover(
    Y: np.ndarray,
    active: np.ndarray,
    t: float,
    rho: float,
    M: int,
    k_prime: int,
    eps_E: float,
    *,
    rng: RNGLike = None,
    sampler: str = "auto",
    max_incidences: int = 20_000_000,
    max_proposals: int = 200_000,
    max_work: float = 5e8,
    stats: dict | None = None,
) -> np.ndarray:
    """Algorithm 3 (private grid set cover) at one level; returns C_i as lattice indices.

    Parameters
    ----------
    Y : (n, d') projected data in B_1(0).
    active : (n,) bool, updated in place: points covered by a pick are set False (D' is passed
        by reference in Alg. 2 line 9; covered points stay removed at later levels).
    t, rho, M : grid unit t_i, cover radius in lattice units ρ = R_i/t_i, grid half-width M_i.
    k_prime : number of picks k' (all are made, even once D' is empty: no early stop).
    eps_E : privacy ε of each exponential-mechanism pick (weight exp(ε_E·|cover[g]|/2)).
    sampler : ``"auto"``, ``"hybrid"``, ``"lazy"`` or ``"incidence"`` (identical output
        distributions; see :func:`resolve_sampler` and the modules ``hybrid``, ``lazy``).
    max_incidences, max_proposals, max_work : work limits per level (incidences of the
        incidence sampler; proposals and points counted by k-d tree queries of the lazy one);
        exceeding one raises a clear error instead of running (or allocating) without bound.

    Returns
    -------
    (k', d') int64 array of lattice indices b; the grid points are t·b.
    """
    gen = as_generator(rng)
    Yl = np.asarray(Y, dtype=float) / t  # lattice units: grid points are the integer vectors
    d = Yl.shape[1]
    a = eps_E / 2.0
    log_n = d * math.log(2 * M + 1)
    out = np.empty((k_prime, d), dtype=np.int64)
    sampler = resolve_sampler(sampler, rho, d)
    if sampler == "incidence":
        act_idx = np.flatnonzero(active)
        V_signed = _signed_offsets(_offsets_within(d, rho * rho))
        inc = _IncidenceCover(Yl[act_idx], rho, M, V_signed, max_incidences)
        local_active = np.ones(act_idx.size, dtype=bool)
        for q in range(k_prime):
            b = inc.draw(a, log_n, gen)
            covered = inc.cover_of(b, local_active)
            local_active[covered] = False
            inc.remove(covered)
            active[act_idx[covered]] = False
            out[q] = b
        return out
    if sampler == "hybrid":
        cover = _HybridCover(Yl, active, rho, M, a, k_prime)

        def draw():
            return cover.draw(gen, max_proposals)
    else:
        cover = _LazyCover(Yl, active, rho, M, a)

        def draw():
            return cover.draw(log_n, gen, max_proposals, max_work)

    for q in range(k_prime):
        b = draw()
        covered = cover.cover_of(b)
        active[covered] = False
        cover.remove(covered)
        out[q] = b
    if stats is not None:  # diagnostics (data-dependent work counters, not released)
        for key, v in (("proposals", cover.n_proposals), ("evaluations", cover.n_evaluations)):
            stats[key] = stats.get(key, 0) + v
        stats["work"] = stats.get("work", 0) + cover.work
        stats.setdefault("modes", []).append(getattr(cover, "mode", sampler))
    return out
