"""Data larger than one machine: importance sampling and DP-Lloyd on Dask.

``from dpcore import scale; scale.kmeans(...)`` (the README's form) reaches the functions of
:mod:`.dask_kmeans`; they load on first use, so importing the package does not import Dask.
"""

from __future__ import annotations

import importlib
import warnings
from typing import Any

#: Names of 0.1 that now mean something else's name elsewhere (dpcore.mechanisms.lloyd.dp_lloyd
#: is the in-memory loop): old name -> new name, with a DeprecationWarning.
_RENAMED = {"dp_lloyd": "dp_lloyd_on_partitions"}


def __getattr__(name: str) -> Any:
    if name.startswith("__"):
        raise AttributeError(name)
    if name in _RENAMED:
        warnings.warn(f"dpcore.scale.{name} is now dpcore.scale.{_RENAMED[name]}",
                      DeprecationWarning, stacklevel=2)
        name = _RENAMED[name]
    module = importlib.import_module("dpcore.scale.dask_kmeans")
    try:
        return getattr(module, name)
    except AttributeError:
        raise AttributeError(f"module 'dpcore.scale' has no attribute {name!r}") from None
