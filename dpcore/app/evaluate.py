"""Utility metrics for clustering and averaging results."""

from __future__ import annotations

import numpy as np

from dpcore.data.geometry import nearest_center

__all__ = ["kmeans_cost", "normalized_kmeans_cost", "l2_error"]


def kmeans_cost(X: np.ndarray, centers: np.ndarray, weights: np.ndarray | None = None) -> float:
    """k-means objective φ_D(C) = Σ_i w_i min_j ‖x_i − c_j‖² (importance sampling, Sec. 4.1)."""
    _, sq = nearest_center(X, centers)
    if weights is None:
        return float(sq.sum())
    w = np.asarray(weights, dtype=float)
    if w.shape != sq.shape:
        raise ValueError(f"weights must have shape {sq.shape}, got {w.shape}")
    return float(w @ sq)


def normalized_kmeans_cost(X: np.ndarray, centers: np.ndarray) -> float:
    """k-means cost divided by the number of points (the papers' "cost/n")."""
    X = np.asarray(X, dtype=float)
    if X.shape[0] == 0:
        raise ValueError("cannot evaluate a cost on an empty data set")
    return kmeans_cost(X, centers) / X.shape[0]


def l2_error(estimate: np.ndarray, truth: np.ndarray) -> float:
    """Euclidean distance between an estimate and the true value (averaging error)."""
    return float(np.linalg.norm(np.asarray(estimate, float) - np.asarray(truth, float)))
