import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpcore.app.evaluate import kmeans_cost, l2_error, normalized_kmeans_cost
from dpcore.data.geometry import clip_to_ball, nearest_center, row_norms, squared_distances

finite = st.floats(-100, 100, allow_nan=False, allow_infinity=False)


@settings(max_examples=50, deadline=None)
@given(
    arrays(float, (40, 3), elements=finite),
    arrays(float, (5, 3), elements=finite),
    st.integers(1, 50),
)
def test_nearest_center_matches_brute_force(X, C, block):
    labels, sq = nearest_center(X, C, block_rows=block)
    brute = ((X[:, None, :] - C[None, :, :]) ** 2).sum(-1)
    assert np.allclose(sq, brute.min(1), atol=1e-6 * (1 + brute.max()))
    # ties may resolve differently; the chosen centre must be (numerically) a nearest one
    assert np.allclose(
        brute[np.arange(len(X)), labels], brute.min(1), atol=1e-6 * (1 + brute.max())
    )


def test_squared_distances_nonnegative_and_correct():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 4)) * 1e3
    D = squared_distances(X, X)
    assert np.all(D >= 0) and np.allclose(np.diag(D), 0, atol=1e-6 * D.max())


@settings(max_examples=50, deadline=None)
@given(arrays(float, (30, 4), elements=finite), st.floats(0.1, 50))
def test_clip_to_ball_invariants(X, r):
    Y, count = clip_to_ball(X, r, return_count=True)
    n = row_norms(X)
    assert np.all(row_norms(Y) <= r * (1 + 1e-12))
    inside = n <= r
    assert np.array_equal(Y[inside], X[inside])  # rows inside are untouched
    assert count == int((~inside).sum())
    # clipped rows keep their direction
    out = ~inside & (n > 0)
    assert np.allclose(Y[out] * n[out, None] / r, X[out])


def test_costs():
    X = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0]])
    C = np.array([[1.0, 0.0], [10.0, 0.0]])
    assert kmeans_cost(X, C) == 2.0
    assert kmeans_cost(X, C, weights=np.array([2.0, 1.0, 5.0])) == 3.0
    assert normalized_kmeans_cost(X, C) == 2.0 / 3
    assert l2_error([3, 4], [0, 0]) == 5.0
