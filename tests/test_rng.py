import numpy as np
import pytest

from dpcore.core.rng import as_generator


def test_int_seed_is_reproducible():
    assert as_generator(7).random() == as_generator(7).random()


def test_generator_is_passed_through_not_copied():
    g = np.random.default_rng(1)
    assert as_generator(g) is g


def test_none_gives_fresh_entropy():
    assert as_generator(None).random() != as_generator(None).random()


def test_seed_sequence_and_numpy_int():
    ss = np.random.SeedSequence(3)
    assert as_generator(ss).random() == np.random.default_rng(np.random.SeedSequence(3)).random()
    assert as_generator(np.int64(5)).random() == as_generator(5).random()


@pytest.mark.parametrize("bad", [np.random.RandomState(0), "seed", 1.5, True])
def test_rejects_other_types(bad):
    with pytest.raises(TypeError, match="rng must be"):
        as_generator(bad)


def test_rejects_negative_seed():
    with pytest.raises(ValueError, match="non-negative"):
        as_generator(-1)


def test_no_global_state_touched():
    np.random.seed(123)  # noqa: NPY002 - the legacy global state is what we check stays untouched
    before = np.random.get_state()[1].copy()  # noqa: NPY002
    as_generator(None).normal(size=10)
    as_generator(4).normal(size=10)
    assert np.array_equal(np.random.get_state()[1], before)  # noqa: NPY002
