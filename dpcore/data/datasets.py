"""Bundled sample data, the location of the large data sets, and synthetic generators.

* ``sample_data/`` (shipped): GeoNames cities (lat/long) and USGS earthquakes, the dashboard's
  default data; see ``sample_data/README.md`` for provenance and licences. It lives at the top
  of the source checkout beside ``app.py``, ``pages/`` and ``.streamlit/``; a built wheel carries
  all four in ``dpcore/_bundle/`` (``setup.py``), and :func:`resource_root` finds them.
* ``fc_mixture`` (generated on the fly, deterministic, no file): 200,000 rows of five
  well-separated 2-D Gaussians, large enough for FriendlyCore's regime (issue 25.1):
  :func:`friendlycore_mixture`.
* Large real data (Covertype, MNIST) live outside the repository; :func:`data_dir` is the one
  setting that finds them: ``$DPCORE_DATA_DIR``, by default ``../shared/data`` next to the
  checkout.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.core.rng import RNGLike, as_generator
from dpcore.data.geometry import clip_to_ball

__all__ = [
    "SAMPLE_DATASETS",
    "SampleDataset",
    "data_dir",
    "friendlycore_mixture",
    "gaussian_mixture",
    "load_sample",
    "resource_root",
    "synthetic_proxy",
]

REPO_ROOT = Path(__file__).resolve().parents[2]
#: Where an installed wheel holds app.py, pages/, .streamlit/ and sample_data/ (copied there by
#: setup.py's build step; never committed: a checkout has them at its top, in REPO_ROOT).
BUNDLE_DIR = Path(__file__).resolve().parents[1] / "_bundle"


def resource_root() -> Path:
    """Folder holding ``app.py``, ``pages/``, ``.streamlit/`` and ``sample_data/``.

    The source checkout when dpcore is imported from one (run from it, or installed editable),
    else the installed package's bundle. Installed, REPO_ROOT is site-packages, which has no
    ``pyproject.toml`` beside an ``app.py`` and a ``sample_data/``.
    """
    if all((REPO_ROOT / name).exists() for name in ("pyproject.toml", "app.py", "sample_data")):
        return REPO_ROOT
    return BUNDLE_DIR


SAMPLE_DIR = resource_root() / "sample_data"


def data_dir() -> Path:
    """Folder of the large data sets: ``$DPCORE_DATA_DIR`` or ``../shared/data`` beside the repo.

    A relative ``DPCORE_DATA_DIR`` is taken relative to the repository root.
    """
    value = os.environ.get("DPCORE_DATA_DIR", "../shared/data")
    path = Path(value)
    return path if path.is_absolute() else (REPO_ROOT / path).resolve()


@dataclass(frozen=True)
class SampleDataset:
    """A bundled data set: file, the feature columns to use, and public bounds for them."""

    name: str
    filename: str
    title: str
    columns: tuple[str, ...]
    description: str
    # Public per-column bounds (from the domain, not the data): lat ∈ [-90, 90], long ∈ [-180, 180].
    bounds: tuple[tuple[float, float], ...]
    #: A generated sample has no file: ``generate()`` returns its frame (deterministic).
    generate: Callable[[], pd.DataFrame] | None = None
    #: Where the bounds come from, in words (the Data page shows it).
    bounds_from: str = "longitude ∈ [-180, 180], latitude ∈ [-90, 90]"


def friendlycore_mixture(n: int = 200_000, *, seed: int = 2022) -> pd.DataFrame:
    """Five 2-D Gaussians (σ = 0.5) centred on a regular pentagon of radius 6, clipped to
    [−10, 10]²: a generated table in FriendlyCore's regime (clusters that every part of a few
    dozen rows recovers, enough rows for thousands of parts). Deterministic for a given seed;
    the ``cluster`` column is the generating component (a label, not a feature)."""
    gen = as_generator(seed)
    angle = np.pi / 2 + 2 * np.pi * np.arange(5) / 5
    means = 6.0 * np.c_[np.cos(angle), np.sin(angle)]
    labels = gen.integers(0, 5, size=int(n))
    X = np.clip(means[labels] + 0.5 * gen.standard_normal((int(n), 2)), -10.0, 10.0)
    return pd.DataFrame({"x": X[:, 0], "y": X[:, 1], "cluster": labels})


SAMPLE_DATASETS: dict[str, SampleDataset] = {
    "cities": SampleDataset(
        name="cities",
        filename="geonames_cities15000.csv.gz",
        title="World cities (GeoNames, population > 15,000)",
        columns=("longitude", "latitude"),
        description="32,847 cities; 2-D points (longitude, latitude) in degrees. CC BY 4.0.",
        bounds=((-180.0, 180.0), (-90.0, 90.0)),
    ),
    "earthquakes": SampleDataset(
        name="earthquakes",
        filename="earthquakes_1965_2016.csv.gz",
        title="Significant earthquakes 1965–2016 (USGS, M ≥ 5.5)",
        columns=("longitude", "latitude"),
        description="23,412 earthquakes; (longitude, latitude) in degrees. Public domain.",
        bounds=((-180.0, 180.0), (-90.0, 90.0)),
    ),
    "fc_mixture": SampleDataset(
        name="fc_mixture",
        filename="",
        title="Generated: 200,000-row Gaussian mixture (FriendlyCore's regime)",
        columns=("x", "y"),
        description="Generated on the fly (no download, deterministic): 200,000 points from five "
                    "well-separated 2-D Gaussians, large enough for FriendlyCore clustering.",
        bounds=((-10.0, 10.0), (-10.0, 10.0)),
        generate=friendlycore_mixture,
        bounds_from="x ∈ [-10, 10], y ∈ [-10, 10] (the generator clips to them)",
    ),
}


def load_sample(name: str) -> pd.DataFrame:
    """Read a bundled sample data set (see :data:`SAMPLE_DATASETS`) as a DataFrame."""
    try:
        ds = SAMPLE_DATASETS[name]
    except KeyError:
        raise ValueError(
            f"unknown sample data set {name!r}; choose one of {', '.join(SAMPLE_DATASETS)}"
        ) from None
    if ds.generate is not None:
        return ds.generate()
    # keep_default_na=False: GeoNames writes Namibia's country code as "NA".
    path = resource_root() / "sample_data" / ds.filename  # the checkout's, else the installed
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def gaussian_mixture(
    n: int,
    d: int,
    k: int,
    *,
    sigma: float = 1.0,
    center_radius: float = 10.0,
    weights: np.ndarray | None = None,
    rng: RNGLike = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sample n points from a mixture of k spherical Gaussians in R^d.

    Means are drawn uniformly in the ball of radius ``center_radius``; each point is its mean
    plus N(0, σ² I). Paper-specific constructions (e.g. max-cover's 64 Gaussians, FriendlyCore's
    well-separated mixtures) build on this with their own parameters.

    Returns
    -------
    X : (n, d) array
    labels : (n,) int array
    means : (k, d) array
    """
    if min(n, d, k) < 1:
        raise ValueError(f"n, d and k must be ≥ 1, got n={n}, d={d}, k={k}")
    gen = as_generator(rng)
    direction = gen.standard_normal((k, d))
    direction /= np.linalg.norm(direction, axis=1, keepdims=True)
    means = direction * (center_radius * gen.random((k, 1)) ** (1.0 / d))
    p = np.full(k, 1.0 / k) if weights is None else np.asarray(weights, float) / np.sum(weights)
    labels = gen.choice(k, size=n, p=p)
    X = means[labels] + sigma * gen.standard_normal((n, d))
    return X, labels, means


def synthetic_proxy(n: int, d: int, radius: float, *, k: int = 5, rng: RNGLike = 0) -> np.ndarray:
    """Release-mode stand-in for the private data: same shape, inside the declared ball.

    A mixture of ``k`` spherical Gaussians whose means lie in the ball of radius ``radius/2``
    with spread ``radius/10``, clipped to the ball. It depends only on public quantities
    (n, d, radius), never on the data values.
    """
    n, d = int(n), int(d)
    X, _, _ = gaussian_mixture(
        n, d, max(1, int(k)), sigma=radius / 10, center_radius=radius / 2, rng=rng
    )
    return clip_to_ball(X, radius)
