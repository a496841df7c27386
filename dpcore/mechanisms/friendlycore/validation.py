"""Input checks shared by the FriendlyCore modules: clear ``ValueError`` messages."""

from __future__ import annotations

import math

import numpy as np

from dpcore.data.tables import DataError

__all__ = ["check_points", "check_positive", "check_privacy"]


def check_points(X: np.ndarray, name: str = "X", *, min_rows: int = 0) -> np.ndarray:
    """``X`` as a finite float64 (n, d) array (a 1-D array is read as n points in d = 1)."""
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be a numeric (n, d) array") from None
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise DataError(f"{name} must be a 2-D (n, d) array, got shape {arr.shape}")
    if arr.shape[1] == 0:
        raise DataError(f"{name} has no columns (shape {arr.shape})")
    if not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).any(axis=1).sum())
        raise DataError(
            f"{name} has {bad} row(s) with NaN or infinite values; drop or impute them first"
        )
    if arr.shape[0] < min_rows:
        raise DataError(f"{name} needs at least {min_rows} rows, got {arr.shape[0]}")
    return arr


def check_positive(name: str, value: float) -> float:
    """A finite number > 0."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number > 0, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return v


def check_privacy(
    *, rho: float | None = None, delta: float | None = None, epsilon: float | None = None
) -> None:
    """ρ, ε finite and > 0; δ in (0, 1)."""
    if rho is not None:
        check_positive("rho", rho)
    if epsilon is not None:
        check_positive("epsilon", epsilon)
    if delta is not None:
        d = float(delta)
        if not 0 < d < 1:
            raise ValueError(f"delta must be in (0, 1), got {delta!r}")
