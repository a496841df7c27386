"""scikit-learn's estimator contract and the one-place parameter declarations (issue 21, 3–4).

Every clustering estimator inherits :class:`dpcore.data.base.DPClusterer` (``BaseEstimator`` +
``ClusterMixin``): ``get_params``/``set_params``/``clone`` and pipelines work, ``fit`` validates
through the class's ``_parameter_constraints`` (:mod:`dpcore.data.params`), and the delivered
guarantee is ``privacy_`` on every estimator and release-function result.

scikit-learn's own checks run through ``parametrize_with_checks``; the ones a DP estimator fails
on purpose are listed in :data:`EXPECTED_FAILED` with the reason.
"""

from __future__ import annotations

import inspect
import math
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils.estimator_checks import parametrize_with_checks

from dpcore.core.errors import ParameterError
from dpcore.data.base import DPClusterer
from dpcore.data.params import Param, constraints_of
from dpcore.estimators.dpkmeans import DPKMeans
from dpcore.mechanisms.baselines.balcan17 import Balcan17KMeans
from dpcore.mechanisms.baselines.coinpress import coinpress_mean
from dpcore.mechanisms.baselines.kv18 import kv18_mean
from dpcore.mechanisms.baselines.lsh_clustering import LSHClustering
from dpcore.mechanisms.friendlycore import friendly_mean
from dpcore.mechanisms.friendlycore.clustering import FriendlyCoreKMeans
from dpcore.mechanisms.lloyd.estimator import DPLloyd
from dpcore.mechanisms.maxcover import noisy_average
from dpcore.mechanisms.maxcover.estimator import MaxCoverKMeans
from dpcore.privacy.guarantees import ZCDP, ApproxDP, PrivacyLeakWarning, PureDP
from dpcore.release import config_schema, runconfig

pytestmark = pytest.mark.filterwarnings("ignore:.*beyond its proven range:UserWarning")

ESTIMATORS = [DPLloyd, DPKMeans, MaxCoverKMeans, FriendlyCoreKMeans, Balcan17KMeans,
              LSHClustering]
#: The release functions registered as run-configuration mechanisms (sensitivity_release lives in
#: dpcore.release.runconfig, which the registry rewrite owns).
FUNCTIONS = [friendly_mean, noisy_average, kv18_mean]


def _blobs(n: int = 600, d: int = 2, seed: int = 0) -> np.ndarray:
    g = np.random.default_rng(seed)
    centres = np.array([[3.0, 3.0], [-3.0, 3.0], [0.0, -3.0]])[:, :d]
    return centres[g.integers(0, 3, n)] + g.normal(scale=0.4, size=(n, d))


# ---- one declaration per parameter ----------------------------------------------------------


def _init_params(cls) -> dict[str, inspect.Parameter]:
    sig = inspect.signature(cls.__init__)
    return {name: p for name, p in sig.parameters.items() if name != "self"}


@pytest.mark.parametrize("cls", ESTIMATORS, ids=lambda c: c.__name__)
def test_every_init_parameter_but_rng_has_a_constraint(cls):
    """Fails when someone adds a parameter without declaring it (or leaves a stale one)."""
    declared = constraints_of(cls)
    assert declared, f"{cls.__name__} declares no _parameter_constraints"
    assert all(isinstance(c, Param) for c in declared.values())
    assert set(declared) == set(_init_params(cls)) - {"rng"}
    assert declared == cls._parameter_constraints  # the one dict fit reads


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_every_release_function_keyword_but_rng_has_a_constraint(fn):
    keywords = {name for name, p in inspect.signature(fn).parameters.items()
                if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert set(constraints_of(fn)) == keywords - {"rng"}


@pytest.mark.parametrize("target", ESTIMATORS + FUNCTIONS, ids=lambda t: t.__name__)
def test_defaults_satisfy_their_own_declaration(target):
    fn = target.__init__ if inspect.isclass(target) else target
    for name, c in constraints_of(target).items():
        default = inspect.signature(fn).parameters[name].default
        if default is not inspect.Parameter.empty:
            c.validate(name, default)  # raises if the declaration refuses the default


def test_public_inputs_are_marked_for_the_release_door():
    """n (``n`` or ``n_public``), radius and bounds: what the privacy proofs assume public."""
    public = {cls.__name__: {name: c.public for name, c in constraints_of(cls).items()
                             if c.public} for cls in ESTIMATORS}
    assert public == {
        "DPLloyd": {"n": "n", "radius": "radius", "bounds": "bounds"},
        "DPKMeans": {"n": "n", "radius": "radius", "bounds": "bounds"},
        "MaxCoverKMeans": {"n_public": "n", "radius": "radius"},
        "FriendlyCoreKMeans": {"radius": "radius"},
        "Balcan17KMeans": {"n_public": "n", "radius": "radius"},
        "LSHClustering": {"radius": "radius"},
    }
    # friendly_mean's and kv18_mean's radius is not the rows' norm bound: never filled from it
    assert constraints_of(friendly_mean)["radius"].public is None
    assert constraints_of(kv18_mean)["radius"].public is None
    assert constraints_of(noisy_average)["radius"].public == "radius"
    assert constraints_of(friendly_mean)["n_public"].public == "n"
    assert constraints_of(kv18_mean)["n_public"].public == "n"


@pytest.mark.parametrize(
    ("make", "bad", "match"),
    [
        (lambda **kw: DPLloyd(3, epsilon=1.0, radius=6.0, **kw), {"preset": "best"}, "preset"),
        (lambda **kw: DPLloyd(3, epsilon=1.0, radius=6.0, **kw), {"q_grid": 1}, "q_grid"),
        (lambda **kw: DPKMeans(3, epsilon=1.0, radius=6.0, n=600, **kw), {"n_iter": 0},
         "n_iter"),
        (lambda **kw: DPKMeans(3, epsilon=1.0, radius=6.0, n=600, **kw), {"count_share": 1.0},
         "count_share"),
        (lambda **kw: MaxCoverKMeans(3, epsilon=1.0, delta=1e-6, radius=6.0, **kw),
         {"grid_stride": 0}, "grid_stride"),
        (lambda **kw: FriendlyCoreKMeans(3, rho=1.0, radius=6.0, **kw), {"gamma": 0.0}, "gamma"),
        (lambda **kw: Balcan17KMeans(3, epsilon=1.0, delta=1e-6, radius=6.0, **kw),
         {"proj_dim": 17}, "proj_dim"),
        (lambda **kw: LSHClustering(3, epsilon=1.0, delta=1e-6, radius=6.0, **kw),
         {"max_depth": 63}, "max_depth"),
    ],
)
def test_fit_refuses_what_the_declaration_refuses(make, bad, match):
    (name, value), = bad.items()
    est = make(**bad)
    with pytest.raises(ParameterError, match=match) as info:
        est._parameter_constraints[name].validate(name, value)
    with pytest.raises(ParameterError) as fitted:
        est.fit(_blobs(50))
    assert fitted.value.parameter == name and str(fitted.value) == str(info.value)


def test_integral_floats_are_converted_as_the_declaration_says():
    """A JSON config or a widget gives 3.0 for k; the declaration accepts and converts it."""
    X = _blobs()
    a = DPLloyd(3, epsilon=1.0, radius=6.0, n_iter=4, rng=0).fit(X)
    b = DPLloyd(3.0, epsilon=1.0, radius=6.0, n_iter=4.0, rng=0).fit(X)
    np.testing.assert_array_equal(a.cluster_centers_, b.cluster_centers_)


# ---- n_iter="auto" (the documented value dpcore.data.limits used to refuse) ----------------------


def test_dplloyd_n_iter_auto_is_accepted():
    X = _blobs()
    km = DPLloyd(3, epsilon=1.0, radius=6.0, n=600, n_iter="auto", rng=0).fit(X)
    assert km.n_iter_ >= 1 and km.privacy_ == PureDP(1.0)
    same = DPLloyd(3, epsilon=1.0, radius=6.0, n=600, n_iter=km.n_iter_, preset="paper",
                   count_share=km.count_share_, rng=0)
    assert same.fit(X).n_iter_ == km.n_iter_


def test_dplloyd_n_iter_auto_through_run_config():
    X = _blobs()
    cfg = config_schema.make_config(
        "dplloyd", {"n_clusters": 3, "epsilon": 1.0, "n_iter": "auto", "n": 600},
        {"source": "inline", "radius": 6.0}, seed=0)
    res = runconfig.run_config(cfg, X)
    assert res.released["centers"].shape == (3, 2) and res.guarantee == PureDP(1.0)
    assert not res.warnings  # n declared: nothing read off the data
    direct = DPLloyd(3, epsilon=1.0, radius=6.0, n=600, n_iter="auto",
                     rng=np.random.default_rng(0)).fit(X)
    np.testing.assert_array_equal(res.released["centers"], direct.cluster_centers_)
    with pytest.raises(ValueError, match=r"params\.n_iter"):
        runconfig.run_config(cfg | {"params": cfg["params"] | {"n_iter": "many"}}, X)


# ---- scikit-learn's contract ----------------------------------------------------------------


def test_clone_of_dpkmeans_keeps_the_parameters_and_drops_the_fit():
    km = DPKMeans(3, epsilon=1.0, bounds=(-5.0, 5.0), n=600, rng=0).fit(_blobs())
    c = clone(km)
    assert c is not km and c.get_params() == km.get_params()
    assert not hasattr(c, "cluster_centers_") and not hasattr(c, "privacy_")
    assert c.set_params(epsilon=2.0) is c and c.epsilon == 2.0 and km.epsilon == 1.0
    np.testing.assert_array_equal(c.set_params(epsilon=1.0).fit(_blobs()).cluster_centers_,
                                  km.cluster_centers_)


def test_repr_shows_the_changed_parameters():
    assert (repr(DPKMeans(3, epsilon=1.0, radius=6.0))
            == "DPKMeans(epsilon=1.0, n_clusters=3, radius=6.0)")


def _to_unit_box(X, lo, hi):
    """Public-bounds scaling: a fixed map (never fitted on the data, which would not be DP)."""
    return (np.asarray(X, dtype=float) - lo) / (hi - lo)


def test_pipeline_with_a_public_bounds_scaler_fits_and_predicts():
    X = _blobs()
    lo, hi = np.array([-6.0, -6.0]), np.array([6.0, 6.0])
    pipe = Pipeline([
        ("scale", FunctionTransformer(_to_unit_box, kw_args={"lo": lo, "hi": hi})),
        ("km", DPKMeans(3, epsilon=2.0, bounds=(0.0, 1.0), n=600, rng=0)),
    ])
    labels = pipe.fit(X).predict(X)
    assert labels.shape == (600,) and set(np.unique(labels)) <= {0, 1, 2}
    km = pipe.named_steps["km"]
    assert km.privacy_ == PureDP(2.0)
    direct = DPKMeans(3, epsilon=2.0, bounds=(0.0, 1.0), n=600, rng=0).fit(_to_unit_box(X, lo, hi))
    np.testing.assert_array_equal(km.cluster_centers_, direct.cluster_centers_)
    # parameters reachable through the pipeline; clone and pickle work
    pipe.set_params(km__epsilon=1.0)
    assert pipe.named_steps["km"].epsilon == 1.0
    again = pickle.loads(pickle.dumps(clone(pipe).fit(X)))
    assert again.predict(X).shape == (600,)
    np.testing.assert_array_equal(pipe.fit_predict(X), pipe.predict(X))


@pytest.mark.parametrize("make", [
    lambda: DPLloyd(3, epsilon=2.0, radius=6.0, rng=0),
    lambda: DPKMeans(3, epsilon=2.0, radius=6.0, n=600, rng=0),
    lambda: MaxCoverKMeans(3, epsilon=2.0, delta=1e-6, radius=6.0, n_public=600, rng=0),
    lambda: FriendlyCoreKMeans(3, rho=2.0, delta=1e-6, radius=6.0, t=150,
                               fallback="dplloyd", rng=0),
    lambda: Balcan17KMeans(3, epsilon=2.0, delta=1e-6, radius=6.0, n_public=600, rng=0),
    lambda: LSHClustering(3, epsilon=2.0, delta=1e-6, radius=6.0, rng=0),
], ids=lambda m: type(m()).__name__)
def test_fit_predict_is_fit_then_predict_and_no_labels_are_stored(make):
    X = _blobs()
    labels = make().fit_predict(X)
    est = make().fit(X)
    np.testing.assert_array_equal(labels, est.predict(X))
    assert not hasattr(est, "labels_")  # a per-row function of the private data: not kept
    assert isinstance(est.privacy_, PureDP | ApproxDP | ZCDP)
    assert est.n_features_in_ == 2 and isinstance(est, DPClusterer)


def test_non_deterministic_tag_follows_rng():
    from sklearn.utils import get_tags

    assert not get_tags(DPLloyd(3, epsilon=1.0, radius=1.0, rng=0)).non_deterministic
    assert get_tags(DPLloyd(3, epsilon=1.0, radius=1.0)).non_deterministic
    assert get_tags(DPLloyd(3, epsilon=1.0, radius=1.0,
                            rng=np.random.default_rng(0))).non_deterministic
    assert get_tags(DPLloyd(3, epsilon=1.0, radius=1.0)).estimator_type == "clusterer"


#: The instances scikit-learn's checks run on: ε large enough that the checks' tiny blobs
#: cluster, an integer rng (deterministic), public radius/box wide enough for the checks' data
#: (uniform in [0, 1) to make_blobs' ±10 scaled). n is not declared for max-cover and Balcan et
#: al. (the checks use 1 to 200 rows): it is read off the data with a PrivacyLeakWarning.
CHECKED = [
    DPLloyd(3, epsilon=100.0, radius=30.0, n_iter=5, rng=0),
    DPKMeans(3, epsilon=100.0, bounds=(-20.0, 20.0), n=100, rng=0),
    DPKMeans(3, epsilon=100.0, radius=30.0, n=100),  # rng=None: tagged non_deterministic
    MaxCoverKMeans(3, epsilon=100.0, delta=1e-3, radius=30.0, rng=0),
    FriendlyCoreKMeans(3, rho=100.0, delta=1e-3, radius=30.0, t=10, fallback="dplloyd", rng=0),
    Balcan17KMeans(3, epsilon=100.0, delta=1e-3, radius=30.0, rng=0),
    LSHClustering(3, epsilon=100.0, delta=1e-3, radius=30.0, rng=0),
]

NO_LABELS = ("no labels_ on purpose: the training rows' labels are a per-row function of the "
             "private data, and a fitted model holds only what privacy_ covers (fit_predict "
             "returns them without storing)")
EMPTY_DATA = ("an empty X is a data set like any other: the release is noise around the public "
              "start; refusing ∅ alone would tell ∅ from one row (a data-dependent refusal)")
FRESH_NOISE = ("rng=None draws fresh noise at every fit (as a DP release must); scikit-learn's "
               "set_random_state sets random_state, which dpcore calls rng")


def expected_failed(estimator) -> dict[str, str]:
    """Checks a DP estimator fails on purpose (scikit-learn ≥ 1.6 ``expected_failed_checks``)."""
    out = {"check_clustering": NO_LABELS}
    if isinstance(estimator, DPLloyd | DPKMeans | FriendlyCoreKMeans | LSHClustering):
        out["check_estimators_empty_data_messages"] = EMPTY_DATA
    if estimator.rng is None:
        out["check_fit_idempotent"] = FRESH_NOISE
    return out


@parametrize_with_checks(CHECKED, expected_failed_checks=expected_failed)
def test_sklearn_estimator_checks(estimator, check):
    with warnings.catch_warnings():
        # the checks' data lie partly outside the declared domain and declare no n
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        warnings.filterwarnings("ignore", message=".*clipped.*")
        check(estimator)


# ---- one name for the delivered guarantee ---------------------------------------------------


def test_release_function_results_expose_privacy_and_keep_the_old_names():
    X = _blobs(400)
    na = noisy_average(X, radius=6.0, epsilon=0.3, delta=1e-6, rng=0)
    assert na.privacy_ == ApproxDP(0.3, 1e-6) and na.privacy is na.privacy_
    kv = kv18_mean(X, rho=1.0, radius=20.0, n_public=400, rng=0)
    assert kv.privacy_ == ZCDP(1.0) and kv.privacy is kv.privacy_
    fm = friendly_mean(X, rho=1.0, delta=1e-6, radius=8.0, rng=0)
    assert fm.privacy_ == ZCDP(1.0, 1e-6) and fm.guarantee is fm.privacy_
    assert fm.core.guarantee is fm.core.privacy_
    cp = coinpress_mean(X, rho=1.0, radius=20.0, rng=0)
    assert cp.privacy_ == ZCDP(1.0) and cp.guarantee is cp.privacy_
    # the run configurations still read the old names until the registry reads privacy_
    cfg = config_schema.make_config("noisy_average", {"epsilon": 0.3, "delta": 1e-6},
                                    {"source": "inline", "radius": 6.0}, seed=0)
    res = runconfig.run_config(cfg, X)
    assert res.guarantee == na.privacy_ and not res.warnings
    assert math.isfinite(float(res.released["mean"][0]))
