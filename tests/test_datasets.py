import shutil

import numpy as np
import pytest

from dpcore.data import datasets
from dpcore.data.datasets import SAMPLE_DATASETS, data_dir, gaussian_mixture, load_sample
from dpcore.data.tables import to_matrix


@pytest.mark.parametrize("name", list(SAMPLE_DATASETS))
def test_bundled_samples_load_within_their_public_bounds(name):
    ds = SAMPLE_DATASETS[name]
    X = to_matrix(load_sample(name), list(ds.columns))
    assert X.shape[0] > 20_000 and X.shape[1] == len(ds.columns)
    lo, hi = np.array(ds.bounds).T
    assert np.all((X >= lo) & (X <= hi))


def test_cities_keep_namibia():
    assert (load_sample("cities")["label"] == "NA").sum() > 0


def test_unknown_sample():
    with pytest.raises(ValueError, match="unknown sample data set 'x'"):
        load_sample("x")


def test_samples_come_from_the_checkout_else_the_installed_bundle(monkeypatch, tmp_path):
    """Run from the checkout: its top-level sample_data/. Installed from the wheel (REPO_ROOT is
    then site-packages): dpcore/_bundle/sample_data/, which setup.py's build step fills."""
    assert datasets.resource_root() == datasets.REPO_ROOT
    assert datasets.SAMPLE_DIR == datasets.REPO_ROOT / "sample_data"
    checkout_cities = datasets.REPO_ROOT / "sample_data" / SAMPLE_DATASETS["cities"].filename
    site_packages, bundle = tmp_path / "site-packages", tmp_path / "site-packages/dpcore/_bundle"
    (bundle / "sample_data").mkdir(parents=True)
    (site_packages / "app.py").write_text("")  # a stray top-level app.py is no checkout
    monkeypatch.setattr(datasets, "REPO_ROOT", site_packages)
    monkeypatch.setattr(datasets, "BUNDLE_DIR", bundle)
    assert datasets.resource_root() == bundle
    with pytest.raises(FileNotFoundError):
        load_sample("cities")
    shutil.copy(checkout_cities, bundle / "sample_data")
    assert len(load_sample("cities")) > 20_000


def test_data_dir_setting(monkeypatch, tmp_path):
    monkeypatch.setenv("DPCORE_DATA_DIR", str(tmp_path))
    assert data_dir() == tmp_path
    monkeypatch.delenv("DPCORE_DATA_DIR")
    assert data_dir().name == "data" and data_dir().parent.name == "shared"


def test_gaussian_mixture_shapes_and_reproducibility():
    X, y, means = gaussian_mixture(1000, 3, 4, sigma=0.1, rng=0)
    assert X.shape == (1000, 3) and means.shape == (4, 3) and set(np.unique(y)) <= set(range(4))
    assert np.all(np.linalg.norm(means, axis=1) <= 10)
    assert np.allclose(np.linalg.norm(X - means[y], axis=1).mean(), 0.1 * np.sqrt(3), rtol=0.1)
    assert np.array_equal(
        gaussian_mixture(10, 2, 2, rng=5)[0], gaussian_mixture(10, 2, 2, rng=5)[0]
    )
    with pytest.raises(ValueError, match="≥ 1"):
        gaussian_mixture(0, 2, 2, rng=0)


def test_shared_data_present(shared_data):
    assert (shared_data / "mnist.npz").exists()
