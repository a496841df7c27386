"""Old flat module paths (``dpcore.lloyd``, ``dpcore.runconfig``, …) as aliases of their new homes.

dpcore was flat in 0.1; saved scripts and notebooks import the old paths. A
:class:`importlib.abc.MetaPathFinder` answers those names with the module that now holds the code
(the same module object, so ``isinstance`` and monkeypatching behave), warning with a
:class:`DeprecationWarning` for internal modules. The names of the public contract
(``dpcore.importance``, ``dpcore.lloyd``, ``dpcore.noise``, ``dpcore.friendlycore``,
``dpcore.maxcover``, ``dpcore.sensitivity``) stay supported without a warning.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from types import ModuleType

#: Public-contract paths: kept, no warning.
PUBLIC: dict[str, str] = {
    "dpcore.importance": "dpcore.mechanisms.importance",
    "dpcore.lloyd": "dpcore.mechanisms.lloyd",
    "dpcore.noise": "dpcore.privacy.noise",
    "dpcore.friendlycore": "dpcore.mechanisms.friendlycore",
    "dpcore.maxcover": "dpcore.mechanisms.maxcover",
    "dpcore.sensitivity": "dpcore.mechanisms.sensitivity",
    "dpcore.baselines": "dpcore.mechanisms.baselines",
}

#: Deprecated flat paths of 0.1 (removed in the release after next).
DEPRECATED: dict[str, str] = {
    "dpcore.rng": "dpcore.core.rng",
    "dpcore.threads": "dpcore.core.threads",
    "dpcore.compiled": "dpcore.core.compiled",
    "dpcore.lloyd_kernel": "dpcore.core.kernels",
    "dpcore.cancel": "dpcore.core.cancel",
    "dpcore.memory": "dpcore.core.memory",
    "dpcore.text": "dpcore.core.text",
    "dpcore.discrete_noise": "dpcore.privacy.discrete_noise",
    "dpcore.ledger": "dpcore.privacy.ledger",
    "dpcore.audit": "dpcore.privacy.audit",
    "dpcore.limits": "dpcore.data.limits",
    "dpcore.geometry": "dpcore.data.geometry",
    "dpcore.datasets": "dpcore.data.datasets",
    "dpcore.lloyd_calibration": "dpcore.mechanisms.importance.calibration",
    "dpcore.privacy_grid": "dpcore.mechanisms.importance.grid",
    "dpcore.kmeans_domain": "dpcore.mechanisms.lloyd.domain",
    "dpcore.coinpress": "dpcore.mechanisms.baselines.coinpress",
    "dpcore.bounds": "dpcore.mechanisms.bounds",
    "dpcore.bernstein": "dpcore.mechanisms.sensitivity.bernstein",
    "dpcore.sensitivity_population": "dpcore.mechanisms.sensitivity.population",
    "dpcore.statistics": "dpcore.mechanisms.sensitivity.statistics",
    "dpcore.recommended": "dpcore.estimators.dpkmeans",
    "dpcore.runconfig": "dpcore.release.runconfig",
    "dpcore.config_schema": "dpcore.release.config_schema",
    "dpcore.curator": "dpcore.release.curator",
    "dpcore.schema": "dpcore.release.schema",
    "dpcore.sweeps": "dpcore.app.sweeps",
    "dpcore.advice": "dpcore.app.advice",
    "dpcore.plots": "dpcore.app.plots",
    "dpcore.url_state": "dpcore.app.url_state",
    "dpcore.ui_state": "dpcore.app.ui_state",
    "dpcore.export": "dpcore.app.export",
    "dpcore.suggest": "dpcore.app.suggest",
    "dpcore.evaluate": "dpcore.app.evaluate",
    "dpcore.describe": "dpcore.app.describe",
    "dpcore.bounded_cache": "dpcore.app.bounded_cache",
    "dpcore.scale_errors": "dpcore.scale.errors",
}


def target(fullname: str) -> str | None:
    """The new module path behind an old one (``dpcore.maxcover.grid`` included), or None."""
    for table in (PUBLIC, DEPRECATED):
        for old, new in table.items():
            if fullname == old or fullname.startswith(old + "."):
                return new + fullname[len(old):]
    return None


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path, target_module=None):
        if not fullname.startswith("dpcore.") or target(fullname) is None:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec) -> ModuleType:
        new = target(spec.name)
        assert new is not None
        if not any(spec.name == o or spec.name.startswith(o + ".") for o in PUBLIC):
            warnings.warn(f"{spec.name} moved to {new}; the old path goes in a later release",
                          DeprecationWarning, stacklevel=2)
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module was executed under its new name already."""


def install() -> None:
    """Put the alias finder first: an old name must resolve to the one module object of its
    new home, not be found again through the aliased parent's ``__path__`` and executed a
    second time under the old name. It answers old names only, none of which is a real module.
    """
    if not any(isinstance(f, _AliasFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _AliasFinder())
