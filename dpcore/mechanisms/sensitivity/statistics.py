"""A menu of ready statistics for the sensitivity sampler (dashboard and CLI).

Users of the dashboard cannot type code, so the sampler's black box ``f`` comes from this menu;
arbitrary Python callables stay a library feature of :mod:`dpcore.mechanisms.sensitivity.sampler`.
Each entry is a :class:`Statistic`: a callable ``f(D)`` on a data set ``D`` of ``n`` records (rows;
a 1-D array is one column) returning a 1-D vector, with

* ``batch``: the same statistic on stacked data sets ``(B, n, d)`` at once (numpy / BLAS), used
  by :func:`~dpcore.mechanisms.sensitivity.sampler.sample_sensitivity` to evaluate all sampled pairs
  together;
* ``record_map``: for empirical averages ``f(D) = mean_i φ(x_i)``, the map ``φ`` (the sampler
  then needs only the two records a pair differs in);
* ``output_dim(d)`` and ``global_sensitivity(n, d, norm)``: the worst-case bound over the
  declared domain ``[lo, hi]^d`` where one is known (``None`` where none exists), to set the
  sampled ``Δ̂`` against it (paper §7.2 and App. C; Proposition 18 says ``Δ̂ <= Δ̄``).

Supervised statistics (least squares, ridge, linear SVM) read the last column as the target.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "MENU",
    "STATISTICS",
    "Statistic",
    "describe_menu",
    "get_statistic",
    "kde",
    "kmeans_centres",
    "least_squares",
    "linear_svm",
    "mean",
    "median",
    "quantile",
    "ridge",
    "svm_global_sensitivity",
    "trimmed_mean",
]

Bounds = tuple[float, float]


def _total_batch(batch: Callable[[np.ndarray], np.ndarray], fallback: np.ndarray
                 ) -> Callable[[np.ndarray], np.ndarray]:
    """``batch`` with :meth:`Statistic.total`'s default for every data set where it fails."""

    def run(xs: np.ndarray) -> np.ndarray:
        try:
            out = np.asarray(batch(xs), dtype=float)
        except Exception:  # one data set of the stack is undefined: the default for it alone
            out = np.full((len(xs), fallback.size), np.nan)
            for i, x in enumerate(_stack(xs)):
                try:
                    out[i] = np.asarray(batch(x[None]), dtype=float).ravel()
                except Exception:
                    out[i] = fallback
        out = out.reshape(len(xs), -1)
        bad = ~np.all(np.isfinite(out), axis=1)
        out[bad] = fallback
        return out

    return run


def _records(d: Any) -> np.ndarray:
    """A data set as a float array ``(n, d)``; a 1-D array is one column."""
    x = d.to_numpy(dtype=float) if hasattr(d, "to_numpy") else np.asarray(d, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] == 0:
        raise ValueError(f"a data set must be a non-empty table of records, got shape {x.shape}")
    return x


def _stack(ds: Any) -> np.ndarray:
    """Stacked data sets as ``(B, n, d)``; ``(B, n)`` means one column."""
    x = np.asarray(ds, dtype=float)
    return x[..., None] if x.ndim == 2 else x


def _norm_factor(dim: int, norm: float) -> float:
    """``‖(1, ..., 1)‖`` in R^dim: turns a per-coordinate bound into a vector-norm bound."""
    if norm == 1:
        return float(dim)
    if norm == 2:
        return math.sqrt(dim)
    if np.isinf(norm):
        return 1.0
    raise ValueError(f"norm must be 1, 2 or inf, got {norm!r}")


def _norm_order(norm: Any) -> float:
    names = {"l1": 1.0, "l2": 2.0, "linf": np.inf, "inf": np.inf}
    return names[norm.lower()] if isinstance(norm, str) else float(norm)


@dataclass(frozen=True, eq=False)
class Statistic:
    """A statistic ``f(D)`` with what the sampler and the dashboard need to know about it.

    Attributes
    ----------
    name, description : str
    func : callable
        ``(n, d)`` records -> 1-D output.
    output_dim : callable
        Record dimension ``d`` -> output length.
    batch : callable, optional
        ``(B, n, d)`` -> ``(B, output_dim)``.
    record_map : callable, optional
        ``(N, d)`` -> ``(N, output_dim)`` with ``f(D) = mean_i record_map(D)[i]``.
    bound : callable, optional
        ``(n, d, norm) -> float | None``: the global sensitivity over ``domain``.
    domain : str
        What the global bound assumes.
    params : dict
        The parameters the entry was built with.
    at_points : callable, optional
        For function-valued statistics (KDE): ``points -> Statistic`` evaluating there (the
        Bernstein mechanism needs the values on its lattice).
    binary_label : bool
        The last column is a ±1 class label (only its sign is used), so a public oracle must
        draw it from {−1, +1} rather than from the feature box.
    """

    name: str
    description: str
    func: Callable[[np.ndarray], np.ndarray] = field(repr=False)
    output_dim: Callable[[int], int] = field(repr=False)
    batch: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)
    record_map: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)
    bound: Callable[[int, int, float], float | None] | None = field(default=None, repr=False)
    domain: str = ""
    params: dict[str, Any] = field(default_factory=dict)
    at_points: Callable[[np.ndarray], Statistic] | None = field(default=None, repr=False)
    binary_label: bool = False
    #: The public output where ``f`` is undefined (set by :meth:`total`; None: ``f`` raises).
    fallback: np.ndarray | None = field(default=None, repr=False)

    def __call__(self, d: Any) -> np.ndarray:
        if self.fallback is None:
            return np.asarray(self.func(_records(d)), dtype=float).ravel()
        try:
            value = np.asarray(self.func(_records(d)), dtype=float).ravel()
        except Exception:  # undefined on this data set (n = 0, n < k, one class): the default
            return self.fallback.copy()
        ok = value.shape == self.fallback.shape and np.all(np.isfinite(value))
        return value if ok else self.fallback.copy()

    def total(self, d: int) -> Statistic:
        """This statistic made total on data sets of ``d`` columns: ``f̃(D) = f(D)`` where ``f``
        is defined and finite, else a public default (the centre of ``bounds`` in every output
        coordinate, or 0 without bounds).

        Privacy: the default depends on public inputs only, so ``f̃`` is a fixed function of the
        data set like ``f``; the sensitivity sampler (paper 004, Alg. 1) estimates the sampled
        sensitivity of ``f̃`` itself (its ``batch`` falls back data set by data set), so the
        random-DP guarantee of Sample-Then-Respond holds for ``f̃``, and whether a release is made
        no longer depends on the private table (an empty table or n < k was ⊥: a leak of n).
        """
        bounds = self.params.get("bounds")
        mid = 0.0 if bounds is None else 0.5 * (float(bounds[0]) + float(bounds[1]))
        fallback = np.full(int(self.output_dim(int(d))), mid)
        batch = None if self.batch is None else _total_batch(self.batch, fallback)
        at_points = self.at_points
        return replace(self, fallback=fallback, batch=batch,
                       at_points=None if at_points is None else
                       (lambda pts: at_points(pts).total(d)))

    def global_sensitivity(self, n: int, d: int, norm: Any = 1) -> float | None:
        """Worst-case ``sup ‖f(D) − f(D')‖`` over neighbours in ``domain``; ``None`` if unknown."""
        if self.bound is None:
            return None
        return self.bound(int(n), int(d), _norm_order(norm))


# ----------------------------------------------------------------------------- location menu


def _box_bound(bounds: Bounds, per_coordinate: Callable[[int], float]):
    """A per-coordinate bound ``(hi - lo) * per_coordinate(n)`` turned into a vector-norm bound."""
    width = bounds[1] - bounds[0]

    def bound(n: int, d: int, norm: float) -> float:
        return width * per_coordinate(n) * _norm_factor(d, norm)

    return bound


def _check_bounds(bounds: Bounds) -> Bounds:
    lo, hi = (float(b) for b in bounds)
    if not hi > lo:
        raise ValueError(f"bounds must be (lo, hi) with lo < hi, got {bounds!r}")
    return lo, hi


def _same_dim(d: int) -> int:
    return d


def mean(*, bounds: Bounds = (0.0, 1.0)) -> Statistic:
    """Column means. Global sensitivity on ``[lo, hi]^d``: ``(hi-lo)/n`` per coordinate."""
    bounds = _check_bounds(bounds)
    return Statistic(
        name="mean",
        description="Sample mean of each column",
        func=lambda x: x.mean(axis=0),
        output_dim=_same_dim,
        batch=lambda xs: _stack(xs).mean(axis=1),
        record_map=lambda x: _records(x),
        bound=_box_bound(bounds, lambda n: 1.0 / n),
        domain=f"records in [{bounds[0]:g}, {bounds[1]:g}]^d",
        params={"bounds": bounds},
    )


def median(*, bounds: Bounds = (0.0, 1.0)) -> Statistic:
    """Column medians. Global sensitivity on ``[lo, hi]^d``: ``hi - lo`` per coordinate."""
    bounds = _check_bounds(bounds)
    return Statistic(
        name="median",
        description="Sample median of each column",
        func=lambda x: np.median(x, axis=0),
        output_dim=_same_dim,
        batch=lambda xs: np.median(_stack(xs), axis=1),
        bound=_box_bound(bounds, lambda n: 1.0),
        domain=f"records in [{bounds[0]:g}, {bounds[1]:g}]^d",
        params={"bounds": bounds},
    )


def trimmed_mean(proportion: float = 0.1, *, bounds: Bounds = (0.0, 1.0)) -> Statistic:
    """Column means after cutting ``⌊proportion·n⌋`` records from each end (scipy ``trim_mean``).

    Replacing one record moves each kept order statistic at most to its neighbour, so the sum of
    the ``n - 2g`` kept values changes by at most ``hi - lo``: the global sensitivity is
    ``(hi - lo) / (n - 2g)`` per coordinate.
    """
    from scipy.stats import trim_mean

    if not 0.0 <= proportion < 0.5:
        raise ValueError(f"proportion must be in [0, 0.5), got {proportion!r}")
    bounds = _check_bounds(bounds)
    return Statistic(
        name="trimmed_mean",
        description=f"Mean of each column after trimming {proportion:.0%} from each end",
        func=lambda x: trim_mean(x, proportion, axis=0),
        output_dim=_same_dim,
        batch=lambda xs: trim_mean(_stack(xs), proportion, axis=1),
        bound=_box_bound(bounds, lambda n: 1.0 / (n - 2 * int(proportion * n))),
        domain=f"records in [{bounds[0]:g}, {bounds[1]:g}]^d",
        params={"proportion": proportion, "bounds": bounds},
    )


def quantile(q: float = 0.9, *, bounds: Bounds = (0.0, 1.0)) -> Statistic:
    """Column ``q``-quantiles (linear interpolation). Global: ``hi - lo`` per coordinate."""
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"q must be in [0, 1], got {q!r}")
    bounds = _check_bounds(bounds)
    return Statistic(
        name="quantile",
        description=f"The {q:g}-quantile of each column",
        func=lambda x: np.quantile(x, q, axis=0),
        output_dim=_same_dim,
        batch=lambda xs: np.quantile(_stack(xs), q, axis=1),
        bound=_box_bound(bounds, lambda n: 1.0),
        domain=f"records in [{bounds[0]:g}, {bounds[1]:g}]^d",
        params={"q": q, "bounds": bounds},
    )


# -------------------------------------------------------------------------- regression menu


def _split_xy(xs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if xs.shape[-1] < 2:
        raise ValueError(
            "a supervised statistic needs at least two columns: features, then the target last"
        )
    return xs[..., :-1], xs[..., -1]


def _linear_fit(xs: np.ndarray, alpha: float) -> np.ndarray:
    """Least squares / ridge with an unpenalised intercept on stacked ``(B, n, d)`` records.

    Returns ``(B, d)``: the ``d - 1`` coefficients, then the intercept. Matches scikit-learn's
    ``LinearRegression`` / ``Ridge(alpha)`` (centre, solve, recover the intercept).
    """
    x, y = _split_xy(xs)
    x_bar = x.mean(axis=-2, keepdims=True)
    y_bar = y.mean(axis=-1, keepdims=True)
    xc, yc = x - x_bar, y - y_bar
    if alpha > 0:
        gram = np.einsum("bni,bnj->bij", xc, xc) + alpha * np.eye(x.shape[-1])
        w = np.linalg.solve(gram, np.einsum("bni,bn->bi", xc, yc)[..., None])[..., 0]
    else:
        w = np.einsum("bin,bn->bi", np.linalg.pinv(xc), yc)  # minimum-norm if rank deficient
    b = y_bar[:, 0] - np.einsum("bi,bi->b", x_bar[:, 0, :], w)
    return np.concatenate([w, b[:, None]], axis=1)


def least_squares() -> Statistic:
    """Ordinary least-squares coefficients and intercept (target = last column).

    No global bound: one record can move the fit arbitrarily (unbounded leverage).
    """
    return Statistic(
        name="least_squares",
        description="Least-squares regression coefficients and intercept (last column = target)",
        func=lambda x: _linear_fit(x[None], 0.0)[0],
        output_dim=_same_dim,
        batch=lambda xs: _linear_fit(_stack(xs), 0.0),
        domain="none known (unbounded leverage)",
    )


def ridge(alpha: float = 1.0) -> Statistic:
    """Ridge coefficients and unpenalised intercept, as scikit-learn ``Ridge(alpha)``."""
    if not alpha > 0:
        raise ValueError(f"alpha must be > 0, got {alpha!r}")
    return Statistic(
        name="ridge",
        description=f"Ridge regression (alpha={alpha:g}) coefficients and intercept",
        func=lambda x: _linear_fit(x[None], alpha)[0],
        output_dim=_same_dim,
        batch=lambda xs: _linear_fit(_stack(xs), alpha),
        domain="none known without bounds on the target",
        params={"alpha": alpha},
    )


def svm_global_sensitivity(C: float, d: int, n: int) -> float:
    """L1 global sensitivity of linear-SVM ``(w, b)`` on ``[0, 1]^d`` (Proposition 19).

    ``2 + 2C sqrt(d) + 4Cd/n`` for hinge loss, linear kernel, box ``0 <= α_j <= C/n``.
    """
    return 2.0 + 2.0 * C * math.sqrt(d) + 4.0 * C * d / n


def _svm_fit(x: np.ndarray, C: float) -> np.ndarray:
    from sklearn.svm import SVC

    feats, y = _split_xy(x)
    labels = np.where(y > 0, 1, -1)
    if np.unique(labels).size < 2:
        raise ValueError("the linear SVM needs both classes (target > 0 and target <= 0)")
    # App. D's dual box 0 <= α_j <= C/n is the primal ½‖w‖² + (C/n) Σ hinge: sklearn C = C/n.
    model = SVC(kernel="linear", C=C / x.shape[0], tol=1e-6).fit(feats, labels)
    return np.concatenate([model.coef_[0], model.intercept_])


def linear_svm(C: float = 3.0) -> Statistic:
    """Linear-SVM normal vector and bias ``(w, b)`` (hinge loss; labels ``sign(last column)``).

    ``C`` is the paper's (§7.2, C = 3): the loss weight is ``C/n``. Global L1 sensitivity on
    features in ``[0, 1]^(d-1)``: Proposition 19 (also a valid L2 / L∞ bound, being larger).
    """
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C!r}")

    def bound(n: int, d: int, norm: float) -> float:
        return svm_global_sensitivity(C, d - 1, n)

    return Statistic(
        name="linear_svm",
        description=f"Linear SVM (C={C:g}) weights and bias; last column = label (sign)",
        func=lambda x: _svm_fit(x, C),
        output_dim=_same_dim,
        bound=bound,
        domain="features in [0, 1]^(d-1), labels ±1 (Proposition 19)",
        params={"C": C},
        binary_label=True,
    )


# ---------------------------------------------------------------------- density, clustering


def kde(
    grid: Any = None, *, bandwidth: float = 0.05, bounds: Bounds = (0.0, 1.0), points: int = 64
) -> Statistic:
    """Gaussian kernel density estimate of one column, evaluated on a grid.

    ``f(D)(y) = (1/n) Σ_i φ_h(y − x_i)``: an empirical average, so the sampler only needs the two
    records a pair differs in. Global sensitivity: each grid value moves by at most
    ``max φ_h / n = 1 / (n h sqrt(2π))`` (L∞), times the grid size (L1) or its root (L2).
    ``bandwidth`` must be public (a data-driven rule would read the data).
    """
    if not bandwidth > 0:
        raise ValueError(f"bandwidth must be > 0, got {bandwidth!r}")
    bounds = _check_bounds(bounds)
    g = np.linspace(*bounds, points) if grid is None else np.asarray(grid, dtype=float).ravel()
    if g.size == 0:  # an empty output: Δ̂ = 0 and nothing to release (exponential: no candidate)
        raise ValueError("the KDE needs at least one grid point (points >= 1 or a non-empty grid)")
    peak = 1.0 / (bandwidth * math.sqrt(2.0 * math.pi))

    def phi(x: np.ndarray) -> np.ndarray:
        x = _records(x)
        if x.shape[1] != 1:
            raise ValueError(f"the KDE statistic needs one column, got {x.shape[1]}")
        return peak * np.exp(-0.5 * ((g[None, :] - x) / bandwidth) ** 2)

    def bound(n: int, d: int, norm: float) -> float:
        return peak / n * _norm_factor(g.size, norm)

    return Statistic(
        name="kde",
        description=f"Gaussian KDE (bandwidth {bandwidth:g}) on {g.size} grid points",
        func=lambda x: phi(x).mean(axis=0),
        output_dim=lambda d: g.size,
        batch=lambda xs: np.stack([phi(x).mean(axis=0) for x in _stack(xs)]),
        record_map=phi,
        bound=bound,
        domain="any one-column data (the kernel is bounded)",
        params={"bandwidth": bandwidth, "grid": g, "bounds": bounds},
        at_points=lambda pts: kde(pts, bandwidth=bandwidth, bounds=bounds),
    )


def _lloyd(xs: np.ndarray, k: int, iterations: int) -> np.ndarray:
    """Batched non-private Lloyd on ``(B, n, d)``: centres ``(B, k·d)`` sorted by first coordinate.

    Initial centres are the records at the ``(j + ½)/k`` quantiles of the first coordinate (a
    deterministic function of the data); an emptied cluster keeps its centre.
    """
    b, n, d = xs.shape
    if n < k:
        raise ValueError(f"k-means needs at least k={k} records, got {n}")
    order = np.argsort(xs[:, :, 0], axis=1)
    pick = order[:, ((np.arange(k) + 0.5) * n / k).astype(int)]
    centres = np.take_along_axis(xs, pick[:, :, None], axis=1)
    sq = np.einsum("bnd,bnd->bn", xs, xs)
    rows = np.arange(k)
    for _ in range(iterations):
        dist = sq[:, :, None] - 2.0 * (xs @ centres.transpose(0, 2, 1))
        dist += np.einsum("bkd,bkd->bk", centres, centres)[:, None, :]
        onehot = (np.argmin(dist, axis=2)[:, None, :] == rows[None, :, None]).astype(float)
        counts = onehot.sum(axis=2)  # (B, k)
        sums = onehot @ xs  # (B, k, d), batched BLAS
        centres = np.where(
            counts[:, :, None] > 0, sums / np.maximum(counts, 1.0)[:, :, None], centres
        )
    rank = np.argsort(centres[:, :, 0], axis=1)  # a canonical order: labels are arbitrary
    return np.take_along_axis(centres, rank[:, :, None], axis=1).reshape(b, k * d)


def kmeans_centres(k: int = 3, *, iterations: int = 20, bounds: Bounds = (0.0, 1.0)) -> Statistic:
    """Centres of a non-private Lloyd's k-means (sorted by first coordinate), flattened.

    An *unstable* statistic: one record can flip an assignment and move a centre by a lot, which
    the sampled sensitivity shows. Global bound on ``[lo, hi]^d``: centres stay in the box, so
    ``(hi - lo)`` per output coordinate (the trivial diameter bound).
    """
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k!r}")
    bounds = _check_bounds(bounds)
    width = bounds[1] - bounds[0]
    return Statistic(
        name="kmeans_centres",
        description=f"Centres of non-private Lloyd's k-means with k={k} (sorted), flattened",
        func=lambda x: _lloyd(x[None], k, iterations)[0],
        output_dim=lambda d: k * d,
        batch=lambda xs: _lloyd(_stack(xs), k, iterations),
        bound=lambda n, d, norm: width * _norm_factor(k * d, norm),
        domain=f"records in [{bounds[0]:g}, {bounds[1]:g}]^d (diameter bound)",
        params={"k": k, "iterations": iterations, "bounds": bounds},
    )


MENU: dict[str, Callable[..., Statistic]] = {
    "mean": mean,
    "median": median,
    "trimmed_mean": trimmed_mean,
    "quantile": quantile,
    "least_squares": least_squares,
    "ridge": ridge,
    "linear_svm": linear_svm,
    "kde": kde,
    "kmeans_centres": kmeans_centres,
}


def get_statistic(name: str, **params: Any) -> Statistic:
    """The menu entry ``name`` built with ``params`` (e.g. ``get_statistic("quantile", q=0.5)``)."""
    try:
        factory = MENU[name]
    except KeyError:
        raise ValueError(f"unknown statistic {name!r}; choose one of {sorted(MENU)}") from None
    try:
        return factory(**params)
    except TypeError as exc:
        raise ValueError(f"bad parameters for {name!r}: {exc}") from None


def describe_menu(n: int | None = None, d: int = 1, norm: Any = 1) -> pd.DataFrame:
    """The menu as a table: name, description, output dimension, global bound (for ``n``, ``d``)."""
    rows = []
    for name, factory in MENU.items():
        stat = factory()
        dim = d + 1 if name in {"least_squares", "ridge", "linear_svm"} else d
        if name == "kde":
            dim = 1
        rows.append(
            {
                "name": name,
                "description": stat.description,
                "record_columns": dim,
                "output_dim": stat.output_dim(dim),
                "global_sensitivity": None if n is None else stat.global_sensitivity(n, dim, norm),
                "domain": stat.domain,
                "vectorised": stat.batch is not None or stat.record_map is not None,
            }
        )
    return pd.DataFrame(rows)

#: Every menu entry with its default parameters, by name (what the dashboard lists).
STATISTICS: dict[str, Statistic] = {name: factory() for name, factory in MENU.items()}
