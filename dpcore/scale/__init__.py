"""Data larger than one machine: importance sampling and DP-Lloyd on Dask.

``from dpcore import scale; scale.kmeans(...)`` (the README's form) reaches the functions of
:mod:`.dask_kmeans`; they load on first use, so importing the package does not import Dask.
"""

from __future__ import annotations

import importlib
from typing import Any


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    module = importlib.import_module("dpcore.scale.dask_kmeans")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'dpcore.scale' has no attribute {name!r}") from None
