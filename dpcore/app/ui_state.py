"""Pure helpers behind the dashboard: seeds, fingerprints, subsampling, projections, proxies.

Nothing here imports Streamlit; the pages call these so the logic is testable from Python.

Randomness policy (issue 7, "never reuse DP noise across different requested releases, never
resample it on a mere rerun"):

* explore mode: a view's seed is :func:`explore_seed` ``(base_seed, run_id)``: deterministic, so a
  rerun or a shared URL shows the same draw; the "new draw" button increments ``run_id``.
* release mode: every release draws OS entropy inside :class:`dpcore.release.door.ReleaseDoor` and
  has no seed at all (a published seed makes the release a deterministic function of the data),
  so two releases never share noise even with identical parameters (two releases ``f + b₁Z`` and
  ``f + b₂Z`` with the same ``Z`` would reveal ``f`` exactly).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.datasets import synthetic_proxy
from dpcore.data.geometry import DeclaredGeometry, box_geometry

__all__ = [
    "DeclaredGeometry",
    "MAX_SCATTER_POINTS",
    "Projection",
    "box_geometry",
    "explore_seed",
    "fingerprint",
    "fresh_seed",
    "pca_projection",
    "synthetic_proxy",
    "subsample_indices",
]

#: Scatters above this many points draw a seeded subsample ("showing n of N").
MAX_SCATTER_POINTS = 50_000
_SEED_MAX = 2**63 - 1


def fingerprint(*arrays: np.ndarray | None) -> str:
    """A short content hash of arrays (shape, dtype and bytes), for cache keys."""
    h = hashlib.blake2b(digest_size=12)
    for a in arrays:
        if a is None:
            h.update(b"<none>")
            continue
        a = np.ascontiguousarray(a)
        h.update(f"{a.shape}{a.dtype.str}".encode())
        h.update(a.tobytes())
    return h.hexdigest()


def explore_seed(base_seed: int, run_id: int = 0) -> int:
    """The seed of the ``run_id``-th draw of an explore-mode view.

    ``run_id = 0`` is ``base_seed`` itself (so ``?seed=7`` reproduces ``seed = 7`` in a run
    configuration); later draws are derived with :class:`numpy.random.SeedSequence`, which
    gives independent streams for distinct ``(base_seed, run_id)``.
    """
    base_seed, run_id = int(base_seed), int(run_id)
    if base_seed < 0 or run_id < 0:
        raise ValueError(f"seed and run id must be ≥ 0, got {base_seed!r} and {run_id!r}")
    if run_id == 0:
        return base_seed
    state = np.random.SeedSequence([base_seed, run_id]).generate_state(2, np.uint32)
    return int((int(state[0]) << 31) ^ int(state[1])) & _SEED_MAX


def fresh_seed() -> int:
    """A seed from OS entropy (explore-mode estimates that must not reuse a view's seed)."""
    return secrets.randbits(63)


def subsample_indices(n: int, max_points: int = MAX_SCATTER_POINTS, *, rng: RNGLike = 0):
    """Sorted indices of a seeded uniform subsample of ``max_points`` of ``n`` rows.

    Returns ``None`` when ``n <= max_points`` (draw everything).
    """
    if max_points < 1:
        raise ValueError(f"max_points must be ≥ 1, got {max_points!r}")
    if n <= max_points:
        return None
    return np.sort(as_generator(rng).choice(n, size=max_points, replace=False))


@dataclass(frozen=True)
class Projection:
    """An affine map to 2-D: ``(X - mean) @ components.T`` (identity for 2-D data)."""

    mean: np.ndarray
    components: np.ndarray
    axis_titles: tuple[str, str]

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.atleast_2d(np.asarray(X, dtype=float))
        return (X - self.mean) @ self.components.T


def pca_projection(X: np.ndarray, columns: Sequence[str] | None = None) -> Projection:
    """The first two principal components of ``X`` (the papers' Figure 1 view).

    Data with at most two columns is drawn as is (one column gets a zero second axis). The
    principal axes are read off the data: this is an explore-mode (non-private) view.
    """
    X = np.asarray(X, dtype=float)
    n, d = X.shape
    names = [str(c) for c in columns] if columns is not None else [f"x{j}" for j in range(d)]
    if d <= 2:
        comps = np.eye(2, d)
        titles = (names[0], names[1] if d == 2 else "(none)")
        return Projection(np.zeros(d), comps, titles)
    mean = X.mean(axis=0)
    # SVD of a row subsample bounds the cost for large n; two leading axes are stable.
    idx = subsample_indices(n, 20_000, rng=0)
    Xs = X if idx is None else X[idx]
    _, s, vt = np.linalg.svd(Xs - mean, full_matrices=False)
    share = s[:2] ** 2 / max(float(np.sum(s**2)), 1e-300)
    titles = (f"PC1 ({share[0]:.0%} of variance)", f"PC2 ({share[1]:.0%} of variance)")
    return Projection(mean, vt[:2], titles)


