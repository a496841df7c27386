"""Data of the importance-sampling reproduction: Covertype, MNIST and the gas-sensor data after
the paper's pre-processing (spec §6.2), as :class:`Prepared`; re-exported by
:mod:`dpcore.reproduce.importance`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.datasets import data_dir

__all__ = ["EXTRA_DATASETS", "Prepared", "load_covertype", "load_extra", "preprocess",
           "subsample"]

COVERTYPE_FILE = "covertype.csv.gz"


@dataclass(frozen=True)
class Prepared:
    """A data set after the paper's pre-processing (spec §6.2)."""

    X: np.ndarray
    radius: float
    mean_sq_norm: float

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def dim(self) -> int:
        return self.X.shape[1]


def preprocess(X, percentile: float = 97.5) -> Prepared:
    """Centre, drop rows with ‖x‖₂ ≥ the ``percentile``-th percentile, re-centre (spec §6.2).

    r is the largest norm and x̃ the mean squared norm after re-centring (Table 1). All of these
    are read off the data, as in the paper (not private; spec §9.12).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[0] < 2:
        raise ValueError(f"X must be a 2-D array with at least 2 rows, got shape {X.shape}")
    X = X - X.mean(axis=0)
    norms = np.sqrt(np.einsum("ij,ij->i", X, X))
    X = X[norms < np.percentile(norms, percentile)]
    X = X - X.mean(axis=0)
    sq = np.einsum("ij,ij->i", X, X)
    return Prepared(np.ascontiguousarray(X), float(np.sqrt(sq.max())), float(sq.mean()))


@functools.lru_cache(maxsize=1)
def load_covertype() -> Prepared:
    """Covertype (581,012 × 54) from ``data_dir()``, pre-processed as in the paper (§6.2).

    Gives n = 566,486, r = 4489.17, x̃ = 3,839,798.28, as in the paper's Table 1.
    """
    path = data_dir() / COVERTYPE_FILE
    if not path.exists():
        raise FileNotFoundError(
            f"{COVERTYPE_FILE} not found in {path.parent}; set DPCORE_DATA_DIR to the folder "
            "that holds the shared data sets"
        )
    df = pd.read_csv(path)
    return preprocess(df.drop(columns="label").to_numpy(dtype=float))


#: Further public data sets in ``data_dir()`` that fit the paper's setting (unlabelled k-means
#: on numeric features, n ≫ m): grids scaled like the paper's (m up to ≈ n x̃ / r²).
EXTRA_DATASETS = {
    "mnist": {"m_fig3": (3000, 5000, 10000), "m_fig4": (3000, 5000, 8000, 10000, 15000)},
    "gas": {"m_fig3": (100, 200, 400), "m_fig4": (100, 200, 300, 400, 600)},
}


@functools.lru_cache(maxsize=2)
def load_extra(name: str) -> Prepared:
    """MNIST (70,000 × 784 pixels, train + test) or the gas-sensor drift data (6,697 × 128,
    batches 1–6, 8, 9), pre-processed as in the paper (§6.2)."""
    if name == "mnist":
        z = np.load(data_dir() / "mnist.npz")
        X = np.vstack([z["x_train"], z["x_test"]]).astype(float)
    elif name == "gas":
        df = pd.read_csv(data_dir() / "gas_drift_partial.csv.gz")
        X = df[[f"f{i}" for i in range(1, 129)]].to_numpy(float)
    else:
        raise ValueError(f"dataset must be one of {sorted(EXTRA_DATASETS)}, got {name!r}")
    return preprocess(X)


def subsample(P: Prepared, n: int, *, rng: RNGLike = 0) -> Prepared:
    """A uniformly random subset of ``n`` rows, re-pre-processed (for quick runs and tests)."""
    gen = as_generator(rng)
    idx = np.sort(gen.choice(P.n, size=min(int(n), P.n), replace=False))
    X = P.X[idx] - P.X[idx].mean(axis=0)
    sq = np.einsum("ij,ij->i", X, X)
    return Prepared(np.ascontiguousarray(X), float(np.sqrt(sq.max())), float(sq.mean()))

