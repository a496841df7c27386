"""The menu of ready statistics: values, vectorised forms, global bounds, use with the sampler."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import trim_mean

from dpcore.mechanisms.sensitivity.sampler import (
    SamplerError,
    sample_sensitivity,
    sample_then_respond,
)
from dpcore.mechanisms.sensitivity.statistics import (
    MENU,
    STATISTICS,
    describe_menu,
    get_statistic,
    kde,
    kmeans_centres,
    least_squares,
    linear_svm,
    mean,
    median,
    quantile,
    ridge,
    svm_global_sensitivity,
    trimmed_mean,
)

RNG = np.random.default_rng(12345)
UNIT = RNG.random((4, 30, 3))  # four data sets of 30 records in [0,1]^3


def svm_records(size, rng, d=2):
    y = rng.integers(0, 2, size)
    x = rng.normal(np.where(y[:, None] == 1, 0.2, 0.8), 0.1, (size, d))
    return np.column_stack([x, 2 * y - 1])


@pytest.mark.parametrize(
    ("stat", "reference"),
    [
        (mean(), lambda x: x.mean(axis=0)),
        (median(), lambda x: np.median(x, axis=0)),
        (trimmed_mean(0.2), lambda x: trim_mean(x, 0.2, axis=0)),
        (quantile(0.75), lambda x: np.quantile(x, 0.75, axis=0)),
    ],
)
def test_location_statistics_match_numpy_and_batch(stat, reference):
    for x in UNIT:
        np.testing.assert_allclose(stat(x), reference(x))
    np.testing.assert_allclose(stat.batch(UNIT), np.stack([stat(x) for x in UNIT]))
    assert stat.output_dim(3) == 3


def test_regressions_match_scikit_learn():
    from sklearn.linear_model import LinearRegression, Ridge

    x = RNG.normal(size=(50, 4))
    for stat, model in ((least_squares(), LinearRegression()), (ridge(2.5), Ridge(alpha=2.5))):
        fit = model.fit(x[:, :3], x[:, 3])
        np.testing.assert_allclose(stat(x), np.r_[fit.coef_, fit.intercept_], atol=1e-10)
        stacked = RNG.normal(size=(3, 40, 4))
        np.testing.assert_allclose(
            stat.batch(stacked), np.stack([stat(s) for s in stacked]), atol=1e-10
        )


def test_least_squares_rank_deficient_is_finite():
    x = np.column_stack([np.ones(20), np.ones(20), np.arange(20.0)])
    assert np.all(np.isfinite(least_squares()(x)))


def test_linear_svm_matches_sklearn_with_loss_weight_c_over_n():
    from sklearn.svm import SVC

    x = svm_records(200, np.random.default_rng(0))
    ref = SVC(kernel="linear", C=3 / 200, tol=1e-6).fit(x[:, :2], x[:, 2])
    np.testing.assert_allclose(linear_svm(3.0)(x), np.r_[ref.coef_[0], ref.intercept_], atol=1e-6)
    assert linear_svm().global_sensitivity(1000, 9) == pytest.approx(19.067, abs=1e-3)
    # spec §5.3 table: Prop. 19 for C = 3, n = 1000
    for d, value in [(2, 10.509), (8, 19.067), (16, 26.192), (32, 36.325), (64, 50.768)]:
        assert svm_global_sensitivity(3.0, d, 1000) == pytest.approx(value, abs=1e-3)


def test_linear_svm_one_class_data_set_fails_clearly():
    with pytest.raises(ValueError, match="both classes"):
        linear_svm()(np.column_stack([RNG.random((10, 2)), np.ones(10)]))

    def mostly_positive(size, rng):  # n = 4 records: all one class with probability ~0.66
        return np.column_stack([rng.random((size, 2)), np.where(rng.random(size) < 0.9, 1, -1)])

    with pytest.raises(SamplerError, match=r"failed on \d+ of 50 .*both classes"):
        sample_sensitivity(linear_svm(), mostly_positive, 4, m=50, k=50, rng=0)


def test_kde_values_record_map_and_lattice():
    stat = kde(np.linspace(0, 1, 5), bandwidth=0.1)
    x = RNG.random(40)
    dens = np.exp(-0.5 * ((np.linspace(0, 1, 5)[:, None] - x[None, :]) / 0.1) ** 2).mean(axis=1)
    np.testing.assert_allclose(stat(x), dens / (0.1 * np.sqrt(2 * np.pi)))
    np.testing.assert_allclose(stat.record_map(x).mean(axis=0), stat(x))
    np.testing.assert_allclose(stat.batch(np.stack([x, x])), np.stack([stat(x)] * 2))
    on_lattice = stat.at_points(np.linspace(0, 1, 11))
    assert on_lattice(x).shape == (11,) and on_lattice.params["bandwidth"] == 0.1
    with pytest.raises(ValueError, match="one column"):
        stat(RNG.random((10, 2)))


def test_kmeans_centres_agree_with_scikit_learn_on_separated_clusters():
    from sklearn.cluster import KMeans

    centres = np.array([[0.1, 0.1], [0.5, 0.9], [0.9, 0.2]])
    x = np.concatenate([c + 0.02 * RNG.standard_normal((50, 2)) for c in centres])
    ours = kmeans_centres(3)(x).reshape(3, 2)
    ref = KMeans(3, n_init=10, random_state=0).fit(x).cluster_centers_
    np.testing.assert_allclose(ours, ref[np.argsort(ref[:, 0])], atol=1e-9)
    stacked = RNG.random((3, 60, 2))
    np.testing.assert_allclose(
        kmeans_centres(3).batch(stacked), np.stack([kmeans_centres(3)(s) for s in stacked])
    )


# Global bounds: adversarial neighbours (the replaced record moved to a corner) never exceed
# them, and the mean's bound is attained (sharp).
BOUNDED = ["mean", "median", "trimmed_mean", "quantile", "kde", "kmeans_centres"]


@given(
    st.sampled_from(BOUNDED),
    st.integers(min_value=5, max_value=40),
    st.integers(min_value=0, max_value=2**32 - 1),
    st.sampled_from([1, 2, np.inf]),
)
@settings(max_examples=80, deadline=None)
def test_global_bounds_hold_on_adversarial_neighbours(name, n, seed, norm):
    stat = STATISTICS[name]
    rng = np.random.default_rng(seed)
    d = 1 if name == "kde" else 2
    x = rng.random((n, d))
    x_prime = x.copy()
    x_prime[rng.integers(n)] = rng.integers(0, 2, d)  # move one record to a corner of the box
    gap = np.linalg.norm(stat(x) - stat(x_prime), ord=norm)
    assert gap <= stat.global_sensitivity(n, d, norm) * (1 + 1e-9)


def test_mean_bound_is_attained_and_sampled_below_it():
    x = np.zeros((10, 3))
    x_prime = x.copy()
    x_prime[-1] = 1.0
    assert np.abs(mean()(x) - mean()(x_prime)).sum() == mean().global_sensitivity(10, 3, 1)

    # Proposition 18 / claim 6: Δ̂ <= Δ̄ for every bounded entry on the uniform box.
    def unif(size, rng):
        return rng.random((size, 2))

    for name in ("mean", "median", "trimmed_mean", "quantile", "kmeans_centres"):
        est = sample_sensitivity(STATISTICS[name], unif, 50, m=100, k=100, rng=1)
        assert est.delta_hat <= STATISTICS[name].global_sensitivity(50, 2, 1)


def test_every_entry_runs_through_the_sampler():
    rng = np.random.default_rng(3)
    for name, stat in STATISTICS.items():
        if name == "kde":

            def oracle(size, rng):
                return rng.random(size)
        elif name == "linear_svm":
            oracle = svm_records
        else:

            def oracle(size, rng):
                return rng.random((size, 3))

        est = sample_sensitivity(stat, oracle, 40, m=12, k=12, rng=rng)
        assert np.isfinite(est.delta_hat) and est.delta_hat >= 0
        expected = (
            "loop"
            if name == "linear_svm"
            else ("record_map" if name in ("mean", "kde") else "batch")
        )
        assert est.path == expected


def test_release_from_menu_entry():
    data = RNG.random((100, 2))

    def unif(size, rng):
        return rng.random((size, 2))

    rel = sample_then_respond(STATISTICS["mean"], data, unif, epsilon=1.0, gamma=0.2, rng=0)
    assert rel.value.shape == (2,)
    assert rel.sensitivity.delta_hat <= STATISTICS["mean"].global_sensitivity(100, 2, 1)


def test_menu_lookup_and_table():
    assert (
        set(MENU)
        == set(STATISTICS)
        == {
            "mean",
            "median",
            "trimmed_mean",
            "quantile",
            "least_squares",
            "ridge",
            "linear_svm",
            "kde",
            "kmeans_centres",
        }
    )
    assert get_statistic("quantile", q=0.5).params["q"] == 0.5
    with pytest.raises(ValueError, match="unknown statistic 'mode'"):
        get_statistic("mode")
    with pytest.raises(ValueError, match="bad parameters for 'mean'"):
        get_statistic("mean", q=3)
    table = describe_menu(n=1000, d=2)
    assert len(table) == 9 and table.loc[table.name == "mean", "global_sensitivity"].item() == 0.002
    assert table.loc[table.name == "least_squares", "global_sensitivity"].isna().item()
    assert not table.loc[table.name == "linear_svm", "vectorised"].item()


@pytest.mark.parametrize(
    ("factory", "kwargs", "message"),
    [
        (trimmed_mean, {"proportion": 0.5}, r"proportion must be in \[0, 0\.5\)"),
        (quantile, {"q": 1.5}, r"q must be in \[0, 1\]"),
        (ridge, {"alpha": 0.0}, r"alpha must be > 0"),
        (linear_svm, {"C": -1.0}, r"C must be > 0"),
        (kde, {"bandwidth": 0.0}, r"bandwidth must be > 0"),
        (kmeans_centres, {"k": 0}, r"k must be >= 1"),
        (mean, {"bounds": (1.0, 0.0)}, r"lo < hi"),
    ],
)
def test_bad_parameters(factory, kwargs, message):
    with pytest.raises(ValueError, match=message):
        factory(**kwargs)


def test_bad_data_shapes():
    with pytest.raises(ValueError, match="at least two columns"):
        least_squares()(RNG.random(10))
    with pytest.raises(ValueError, match="non-empty table"):
        mean()(np.empty((0, 2)))
    with pytest.raises(ValueError, match="at least k=3 records"):
        kmeans_centres(3)(RNG.random((2, 2)))
