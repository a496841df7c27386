"""dpcore: differentially private clustering and aggregation.

The computation layer of the dashboard, in layers that only import downwards
(docs/architecture.md): ``core`` (primitives) → ``privacy`` and ``data`` → ``mechanisms`` (one
subpackage per paper) → ``estimators`` (the recommended DPKMeans) → ``release`` (registry, door,
configs, curator) → ``app`` (sweeps, advice, plots, export) → ``scale``, ``reproduce``, ``cli``.
No Streamlit here.

The public façade::

    from dpcore import DPKMeans, DPLloyd, MaxCoverKMeans, FriendlyCoreKMeans, PrivacyLedger

Names load lazily, so ``import dpcore`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

from dpcore import _aliases

__version__ = "0.1.0"

#: Public name -> module that defines it.
_FACADE: dict[str, str] = {
    "DPKMeans": "dpcore.estimators.dpkmeans",
    "DPLloyd": "dpcore.mechanisms.lloyd.estimator",
    "MaxCoverKMeans": "dpcore.mechanisms.maxcover",
    "FriendlyCoreKMeans": "dpcore.mechanisms.friendlycore",
    "friendly_core": "dpcore.mechanisms.friendlycore",
    "friendly_mean": "dpcore.mechanisms.friendlycore",
    "sample_then_respond": "dpcore.mechanisms.sensitivity.sampler",
    "PureDP": "dpcore.privacy.guarantees",
    "ApproxDP": "dpcore.privacy.guarantees",
    "ZCDP": "dpcore.privacy.guarantees",
    "RandomDP": "dpcore.privacy.guarantees",
    "PrivacyLedger": "dpcore.privacy.guarantees",
    "BudgetExceededError": "dpcore.privacy.guarantees",
    "PrivacyLeakWarning": "dpcore.privacy.guarantees",
    "ReleaseDoor": "dpcore.release.door",
    "load_sample": "dpcore.data.datasets",
}

__all__ = sorted(_FACADE)

_aliases.install()


def __getattr__(name: str) -> Any:
    module = _FACADE.get(name)
    if module is None:
        raise AttributeError(f"module 'dpcore' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_FACADE])
