"""dpcore.app.describe: label / ID detection by name and type, suggested bounds, applying bounds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn import datasets

from dpcore.app.describe import (
    apply_description,
    describe,
    excluded_columns,
    radius_estimate_band,
    suggest_bounds,
)
from dpcore.mechanisms.bounds import private_norm_quantile


@pytest.mark.parametrize("loader,label", [
    (datasets.load_iris, "target"), (datasets.load_wine, "target"),
    (datasets.load_breast_cancer, "target"), (datasets.load_digits, "target"),
])
def test_sklearn_tables_exclude_their_label_and_keep_every_feature(loader, label):
    frame = loader(as_frame=True).frame
    out = excluded_columns(frame)
    assert label in out and "label" in out[label]
    assert set(frame.columns) - set(out) == set(frame.columns) - {label}


def test_ids_text_and_booleans_are_excluded_but_look_alike_features_are_not():
    df = pd.DataFrame({"id": [1, 2], "row_id": [1, 2], "Unnamed: 0": [0, 1], "name": ["a", "b"],
                       "flag": [True, False], "width": [1.0, 2.0], "idle_time": [3.0, 4.0],
                       "valid": [1.0, 2.0], "width_class2": [1, 2]})
    out = excluded_columns(df)
    assert set(out) == {"id", "row_id", "Unnamed: 0", "name", "flag"}


def test_suggested_bounds_from_names():
    assert suggest_bounds("Latitude") == (-90.0, 90.0)
    assert suggest_bounds("longitude") == (-180.0, 180.0)
    assert suggest_bounds("pixel_3_4", digits_hint=True) == (0.0, 16.0)
    assert suggest_bounds("pixel12") == (0.0, 255.0)
    assert suggest_bounds("alcohol") is None


def test_description_geometry_and_clamping_and_scaling():
    desc = describe(["a", "b"], [0, -2], [4, 2], n=10)
    assert desc["center"] == [2.0, 0.0] and desc["radius"] == pytest.approx(np.hypot(2, 2))
    df = pd.DataFrame({"a": [-1.0, 2.0, 9.0], "b": [0.0, 5.0, -1.0], "c": [7, 7, 7]})
    out = apply_description(df, desc)
    assert list(out.columns) == ["a", "b"]
    np.testing.assert_allclose(out.to_numpy(), [[0, 0], [2, 2], [4, -1]])
    sc = describe(["a", "b"], [0, -2], [4, 2], scaled=True)
    assert sc["center"] == [0.0, 0.0] and sc["radius"] == pytest.approx(np.sqrt(2))
    np.testing.assert_allclose(apply_description(df, sc).to_numpy(),
                               [[-1, 0], [0, 1], [1, -0.5]])
    with pytest.raises(ValueError, match="lower < upper"):
        describe(["a"], [1.0], [1.0])


def test_radius_band_covers_the_estimate_and_widens_with_small_n():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 3))
    norms = np.sort(np.linalg.norm(X, axis=1))
    lo, hi = radius_estimate_band(2000, 0.9, 1.0)
    inside = 0
    for s in range(40):
        r = private_norm_quantile(X, 0.9, epsilon=1.0, lower=0.01, upper=10.0, rng=s).radius
        q = np.searchsorted(norms, r, side="right") / 2000
        inside += lo - 1e-9 <= q <= hi + 1e-9
    assert inside >= 38  # holds with probability ≥ 95 % per draw
    assert radius_estimate_band(150, 0.99, 0.1) == (0.0, 1.0)  # iris at ε = 0.1: uninformative
