"""The data of a run configuration: bundled samples, files, Parquet folders and synthetic
mixtures as tables; the declared columns, centre and radius applied; a release as a CSV table.

Nothing here is estimated from the data: the centre and radius are the *declared, public*
geometry the privacy proofs assume (rows are centred on it and clipped to the ball).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from dpcore.data import limits

__all__ = [
    "MIXTURE_PREFIX",
    "POINT_OUTPUTS",
    "check_mixture_size",
    "load_data",
    "load_prepared",
    "mixture_frame",
    "mixture_source",
    "prepare_matrix",
    "read_table",
    "release_frame",
]


MIXTURE_PREFIX = "mixture:"


def mixture_source(n: int, d: int, k: int, sigma: float, center_radius: float) -> str:
    """``data.source`` naming the synthetic Gaussian mixture the dashboard offers.

    ``read_table`` regenerates it (:func:`dpcore.data.datasets.gaussian_mixture` with ``rng=0``), so
    a configuration downloaded from the dashboard's synthetic data runs from the command line.
    """
    return (f"{MIXTURE_PREFIX}n={int(n)},d={int(d)},k={int(k)},sigma={float(sigma)!r},"
            f"center_radius={float(center_radius)!r}")


def mixture_frame(n: int, d: int, k: int, sigma: float, center_radius: float):
    """The synthetic mixture as a DataFrame: columns ``x1..xd`` and its ``component``."""
    import pandas as pd

    from dpcore.data.datasets import gaussian_mixture

    X, labels, _ = gaussian_mixture(n, d, k, sigma=sigma, center_radius=center_radius, rng=0)
    df = pd.DataFrame(X, columns=[f"x{j + 1}" for j in range(d)])
    df["component"] = labels
    return df


def _parse_mixture(source: str) -> dict:
    types = {"n": int, "d": int, "k": int, "sigma": float, "center_radius": float}
    try:
        items = dict(item.split("=", 1) for item in source[len(MIXTURE_PREFIX):].split(","))
        if set(items) != set(types) or any(len(v) > 32 for v in items.values()):
            raise ValueError
        spec = {key: types[key](value) for key, value in items.items()}
    except ValueError:
        raise ValueError(f"data.source {source[:120]!r} must look like "
                         f"{mixture_source(1000, 2, 3, 1.0, 10.0)!r}") from None
    check_mixture_size(spec["n"], spec["d"], spec["k"], spec["sigma"], spec["center_radius"])
    return spec


def check_mixture_size(n: int, d: int, k: int, sigma: float, center_radius: float) -> None:
    """The synthetic mixture's parameters, with n × d within the session memory budget
    (:func:`dpcore.data.limits.resource_limits`): the dashboard's sliders and ``mixture:``
    sources."""
    from dpcore.data.tables import DEFAULT_MAX_COLUMNS

    try:
        d = limits.check_count("d", d, 1, DEFAULT_MAX_COLUMNS)
        max_rows = limits.resource_limits(d).max_rows(d)
        limits.check_count("n", n, 2, max_rows,
                           why=f" for d = {d} within the session memory budget "
                               f"({limits.MEMORY_ENV})")
        limits.check_count("k", k, 1, n)
        limits.check_radius(sigma, "sigma")
        limits.check_radius(center_radius, "center_radius")
    except limits.ParameterError as exc:
        raise ValueError(f"mixture: {exc}") from None


def read_table(source: str):
    """A bundled sample, a file, a directory of Parquet files or a synthetic mixture
    (:func:`mixture_source`), as a DataFrame.

    Returns ``(df, default_columns)``: a sample data set's documented feature columns (e.g.
    longitude/latitude of "cities", not its population), ``None`` for files (all numeric).
    A local file is the user's own choice, so the dashboard's upload size limit does not apply.
    """
    import pandas as pd

    from dpcore.data import tables as dpdata
    from dpcore.data.datasets import SAMPLE_DATASETS, load_sample

    if source.startswith(MIXTURE_PREFIX):
        return mixture_frame(**_parse_mixture(source)), None
    path = Path(source).expanduser()
    if path.is_dir():
        if not any(path.glob("*.parquet")):
            raise dpdata.DataError(f"directory {source!r} holds no *.parquet files")
        try:
            return pd.read_parquet(path), None
        except Exception as exc:  # pyarrow raises many types; all mean "not readable"
            raise dpdata.DataError(f"the Parquet files in {source!r} cannot be read "
                                   f"({type(exc).__name__}: {exc})") from None
    if path.exists():
        return dpdata.load_table(path, max_bytes=2**40), None
    if source in SAMPLE_DATASETS:
        return load_sample(source), list(SAMPLE_DATASETS[source].columns)
    raise dpdata.DataError(
        f"data source {source!r} is neither an existing file or directory nor a sample data "
        f"set ({', '.join(sorted(SAMPLE_DATASETS))})"
    )


def prepare_matrix(
    X: Any,
    *,
    columns: list | None = None,
    radius: float | None = None,
    center: list[float] | np.ndarray | None = None,
    missing: Mapping[str, Any] | None = None,
) -> np.ndarray:
    """Select columns, centre on the *declared* centre and clip rows to the *declared* radius.

    ``X`` is a DataFrame (columns are selected by name, default all numeric ones) or an array
    (``columns`` then index positions). Nothing is estimated from the data. Values, centre and
    radius must lie in the documented range of :mod:`dpcore.data.limits` (``|x| ≤ 1e100``, radius in
    [1e-100, 1e100]); outside it a :class:`~dpcore.data.tables.DataError` names the column and row
    (never a silently zeroed row).
    """
    return _prepare(X, columns, radius, center, missing)[0]


def _prepare(X: Any, columns: list | None, radius: float | None,
             center: Any, missing: Mapping[str, Any] | None = None
             ) -> tuple[np.ndarray, list[str]]:
    """:func:`prepare_matrix` and the names of the columns used."""
    from dpcore.data import tables as dpdata
    if hasattr(X, "columns"):  # DataFrame
        names = [str(c) for c in columns] if columns else dpdata.numeric_columns(X)
        # checks the value range, naming column and row; the missing-cells rule per column
        M = dpdata.to_matrix(X, columns, missing=missing)
    else:
        try:
            M = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError, OverflowError):
            raise dpdata.DataError("data must be a numeric 2-D table") from None
        if M.ndim != 2:
            raise dpdata.DataError(f"data must be a 2-D table, got shape {M.shape}")
        if columns is not None:
            if not all(isinstance(c, int) and not isinstance(c, bool) for c in columns):
                raise dpdata.DataError(f"columns {columns!r} given by name but the data is an "
                                       "array; pass a DataFrame or integer positions")
            bad = [c for c in columns if not -M.shape[1] <= c < M.shape[1]]
            if bad:
                raise dpdata.DataError(f"columns {bad} are not positions of the data's "
                                       f"{M.shape[1]} columns")
            M = M[:, columns]
        names = [f"x{j + 1}" for j in range(M.shape[1])]
        limits.check_data_range(M, names)
    try:
        if center is not None:
            M = M - limits.check_center(center, M.shape[1])
        if radius is not None:
            from dpcore.data.geometry import clip_to_ball

            M = clip_to_ball(M, limits.check_radius(radius))
    except limits.ParameterError as exc:
        raise dpdata.DataError(str(exc)) from None
    return M, names


def load_prepared(data: Mapping[str, Any]) -> tuple[np.ndarray, list[str]]:
    """The prepared matrix a configuration's ``data`` section describes, and its column names."""
    df, default_columns = read_table(data["source"])
    return _prepare(df, data.get("columns") or default_columns, data.get("radius"),
                    data.get("center"), data.get("missing"))


def load_data(data: Mapping[str, Any]) -> np.ndarray:
    """Load and prepare the matrix a configuration's ``data`` section describes."""
    return load_prepared(data)[0]


#: Released outputs that are points of the data space (shown in the table's units and columns).
POINT_OUTPUTS = ("centers", "mean")


def release_frame(
    released: Mapping[str, Any],
    columns: list[str],
    algorithm: str,
    guarantee: Any = None,
    center: Any = None,
):
    """The wide CSV table of a release, as the dashboard's centre downloads write it.

    One row per released point (each centre, or the mean), in the *table's units* (the declared
    centre added back: post-processing), with the table's column names, an ``algorithm``
    column and a ``guarantee`` column (every release carries its guarantee). A non-point output
    (e.g. the sensitivity sampler's ``value``) gets columns ``value`` or ``value_1 …``. A
    declined release (None) is one row of empty cells, so the file says that nothing was
    released. Write it with :func:`dpcore.core.text.csv_safe_frame` (user-named columns).
    """
    import pandas as pd

    shift = None if center is None else np.asarray(center, dtype=float)
    frames = []
    for name, value in released.items():
        if value is None:
            frames.append(pd.DataFrame({c: [np.nan] for c in columns}))
            continue
        arr = np.atleast_2d(np.asarray(value, dtype=float))
        if name in POINT_OUTPUTS and arr.shape[1] == len(columns):
            pts = arr if shift is None else arr + shift
            frames.append(pd.DataFrame(pts, columns=list(columns)))
        else:
            flat = arr.reshape(arr.shape[0], -1)
            cols = ["value"] if flat.shape[1] == 1 else [f"value_{j + 1}"
                                                         for j in range(flat.shape[1])]
            frames.append(pd.DataFrame(flat, columns=cols))
    out = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)
    out["algorithm"] = algorithm
    out["guarantee"] = "" if guarantee is None else str(guarantee)
    return out
