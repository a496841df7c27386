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
"""

from __future__ import annotations

import numbers
from typing import Any, ClassVar

import numpy as np
from scipy import sparse
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.exceptions import NotFittedError

from dpcore.data.params import Param, validate_params

__all__ = ["DPClusterer", "dense_matrix"]


def dense_matrix(X: Any) -> np.ndarray:
    """``X`` as a float64 array, refusing sparse and complex input with a one-line message.

    Besides the conversion only zero columns are refused here: the other shape, emptiness and
    finiteness checks stay with each mechanism (its refusals are part of its privacy argument).
    """
    if sparse.issparse(X):
        raise TypeError("sparse input is not supported: pass a dense array (X.toarray()); the "
                        "mechanisms clip and add noise to every coordinate")
    A = np.asarray(X)
    if np.iscomplexobj(A):
        raise ValueError("Complex data not supported: X must hold real numbers")
    if A.ndim == 2 and A.shape[1] == 0:  # scikit-learn's wording
        raise ValueError(f"X has 0 feature(s) (shape={A.shape}) while a minimum of 1 is "
                         "required.")
    return np.asarray(A, dtype=float)


class DPClusterer(ClusterMixin, BaseEstimator):
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
        return validate_params(type(self)._parameter_constraints, self.get_params(deep=False))

    def __sklearn_is_fitted__(self) -> bool:
        return hasattr(self, "cluster_centers_")

    def _check_fitted(self) -> None:
        if not self.__sklearn_is_fitted__():
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
