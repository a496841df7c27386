"""The scikit-learn base of dpcore's clustering estimators.

:class:`DPClusterer` gives every estimator scikit-learn's contract (``get_params``,
``set_params``, ``clone``, ``repr``, pickling, :class:`~sklearn.pipeline.Pipeline`) and one
validation path: the class attribute ``_parameter_constraints`` (:mod:`dpcore.data.params`),
checked by :meth:`DPClusterer._validate_params` in ``fit``, which is the same declaration the
release door, the run configurations, the CLI and the dashboard read
(:func:`dpcore.data.params.constraints_of`).

What differs from a non-private scikit-learn clusterer, on purpose:

* **No** ``labels_``. The training rows' labels are a per-row function of the private data; a
  fitted model (pickled, shared, released) must hold only what the guarantee ``privacy_``
  covers. ``fit_predict(X)`` is ``fit(X).predict(X)`` and returns the labels without storing
  them.
* ``rng`` instead of ``random_state`` (dpcore's name throughout;
  :func:`dpcore.core.rng.as_generator` takes None, an int or a Generator). With an int the fit is
  reproducible; with None or a Generator it is not (tag ``non_deterministic``).
* Whether an empty ``X`` is refused is each mechanism's decision (DP-Lloyd releases noise around
  its public start: refusing ∅ alone would reveal it).

scikit-learn is imported on first use, not with this module (issue 23.7: ``dpcore run`` paid
≈ 0.8 s idle, 1.1 s under load, importing it for a fit that never calls it). Until then the
class stands on :class:`_SklearnBase`, whose ``get_params``, ``set_params``, ``repr``, tags,
``clone`` and pickling hooks import scikit-learn, put ``ClusterMixin`` and ``BaseEstimator``
in its place among :class:`DPClusterer`'s bases (every subclass's MRO follows) and answer as
they do; if scikit-learn is already loaded, that happens at import. So ``isinstance(est,
BaseEstimator)`` holds from the first scikit-learn call on, and the contract
(``tests/test_sklearn_contract.py``) is scikit-learn's own code.
"""

from __future__ import annotations

import inspect
import numbers
import sys
import threading
from typing import Any, ClassVar

import numpy as np

from dpcore.data.params import Param, validate_params

__all__ = ["DPClusterer", "dense_matrix"]


def dense_matrix(X: Any) -> np.ndarray:
    """``X`` as a float64 array, refusing sparse and complex input with a one-line message.

    Besides the conversion only zero columns are refused here: the other shape, emptiness and
    finiteness checks stay with each mechanism (its refusals are part of its privacy argument).
    """
    sparse = sys.modules.get("scipy.sparse")  # not loaded: X cannot be a scipy sparse matrix
    if sparse is not None and sparse.issparse(X):
        raise TypeError("sparse input is not supported: pass a dense array (X.toarray()); the "
                        "mechanisms clip and add noise to every coordinate")
    A = np.asarray(X)
    if np.iscomplexobj(A):
        raise ValueError("Complex data not supported: X must hold real numbers")
    if A.ndim == 2 and A.shape[1] == 0:  # scikit-learn's wording
        raise ValueError(f"X has 0 feature(s) (shape={A.shape}) while a minimum of 1 is "
                         "required.")
    return np.asarray(A, dtype=float)


_ATTACH_LOCK = threading.Lock()


def _init_parameters(cls: type) -> list[str]:
    """``cls.__init__``'s parameter names, as ``BaseEstimator._get_param_names`` lists them."""
    names = cls.__dict__.get("_dpcore_init_parameters")
    if names is None:
        sig = inspect.signature(cls.__init__)
        names = sorted(p.name for p in sig.parameters.values()
                       if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL))
        cls._dpcore_init_parameters = names
    return names


def _attach_sklearn() -> None:
    """Make ``ClusterMixin`` and ``BaseEstimator`` the bases of :class:`DPClusterer` (once)."""
    if DPClusterer.__bases__ != (_SklearnBase,):
        return
    with _ATTACH_LOCK:
        if DPClusterer.__bases__ == (_SklearnBase,):
            from sklearn.base import BaseEstimator, ClusterMixin

            DPClusterer.__bases__ = (ClusterMixin, BaseEstimator)


def _sklearn_hook(name: str):
    def hook(self, *args, **kwargs):
        _attach_sklearn()  # now the MRO finds scikit-learn's own method
        return getattr(super(DPClusterer, self), name)(*args, **kwargs)

    hook.__name__ = name
    return hook


class _SklearnBase:
    """Stand-in base until scikit-learn is needed (module docstring): each hook loads it, swaps
    it in and calls scikit-learn's method."""

    get_params = _sklearn_hook("get_params")
    set_params = _sklearn_hook("set_params")
    __repr__ = _sklearn_hook("__repr__")
    __getstate__ = _sklearn_hook("__getstate__")
    __setstate__ = _sklearn_hook("__setstate__")
    __sklearn_tags__ = _sklearn_hook("__sklearn_tags__")
    __sklearn_clone__ = _sklearn_hook("__sklearn_clone__")

    @classmethod
    def _get_param_names(cls) -> list[str]:
        _attach_sklearn()
        return super(DPClusterer, cls)._get_param_names()


class DPClusterer(_SklearnBase):
    """Base of dpcore's clustering estimators (module docstring).

    Subclasses declare ``_parameter_constraints`` for every ``__init__`` parameter but ``rng``,
    store the parameters unchanged in ``__init__`` (keyword-only but ``n_clusters``), call
    :meth:`_validate_params` at the start of ``fit`` and set ``cluster_centers_``,
    ``n_features_in_`` and ``privacy_`` (the delivered guarantee) there.
    """

    _parameter_constraints: ClassVar[dict[str, Param]] = {}

    def _validate_params(self) -> dict[str, Any]:
        """Every parameter checked against ``_parameter_constraints``; returns the checked
        values (numbers converted: ``3.0`` for an ``int`` parameter becomes ``3``).

        Replaces scikit-learn's ``BaseEstimator._validate_params``, which expects scikit-learn's
        own constraint lists.
        """
        # the __init__ parameters, read as get_params(deep=False) does, without scikit-learn
        params = {name: getattr(self, name) for name in _init_parameters(type(self))}
        return validate_params(type(self)._parameter_constraints, params)

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "cluster_centers_")

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"this {type(self).__name__} is not fitted yet; call fit(X) "
                                 "first")

    def _check_predict_X(self, X) -> np.ndarray:
        """The rows to label: fitted model, dense real finite 2-D X of the fitted width."""
        self._check_fitted()
        X = dense_matrix(X)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-D array (n, d), got shape {X.shape}. Reshape your "
                             "data: X.reshape(-1, 1) for one feature, X.reshape(1, -1) for one "
                             "row")
        if X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is "
                             f"expecting {self.n_features_in_} features as input")
        if not np.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values; drop or impute them first")
        return X

    def fit_predict(self, X, y=None) -> np.ndarray:
        """``fit(X).predict(X)``: the labels of the training rows (not stored: no ``labels_``)."""
        return self.fit(X).predict(X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        rng = getattr(self, "rng", None)
        tags.non_deterministic = not (isinstance(rng, numbers.Integral)
                                      and not isinstance(rng, bool))
        return tags


if "sklearn.base" in sys.modules:  # already paid for: be a scikit-learn estimator at once
    _attach_sklearn()
