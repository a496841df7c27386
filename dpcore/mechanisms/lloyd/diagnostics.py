"""DPLloyd's per-point diagnostics, computed when read (not during ``fit``).

Every point's sampling probability q and personalised loss ψ (Theorem 6 of Fay, Mair & Sjölund
2024; ε(1, x) = T(1/β_count + s(x)/β_sum) without sampling, Prop. 13) are whole-data arrays
that the release never needs: ``fit`` keeps only what they are made of (each point's
sensitivity norm s, and on the norm grid its bin) and :class:`LazyDiagnostics`'s properties
compute them on first access. A fit that nobody inspects pays nothing for them.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpcore.mechanisms.importance import amplified_epsilon, lloyd_profile

__all__ = ["LazyDiagnostics"]


class LazyDiagnostics:
    """Mixin of :class:`~dpcore.mechanisms.lloyd.estimator.DPLloyd`: ``probabilities_`` and
    ``individual_epsilon_`` as lazily computed properties.

    ``fit`` calls :meth:`_keep_diagnostics` with the pieces; each property raises
    AttributeError where the fit did not keep what it needs (``diagnostics=False``, no sampler
    for ``probabilities_``), like an attribute that was never set.
    """

    _diag: dict[str, Any] | None = None

    def _keep_diagnostics(self, **parts: Any) -> None:
        """Keep the pieces (``s``, ``q``, ``bins`` + ``table``, ``cal``, ``t``, ``radius``,
        ``n``, ``private``) for the properties; None drops the previous fit's."""
        self._diag = dict(parts) if parts else None

    def _diag_part(self, name: str, attr: str) -> Any:
        d = self._diag
        if d is None or d.get(name) is None:
            raise AttributeError(f"{type(self).__name__} has no {attr} (not fitted, no sampler, "
                                 "or fitted with diagnostics=False)")
        return d[name]

    @property
    def probabilities_(self) -> np.ndarray:
        """Every training point's sampling probability q (only when sampled)."""
        d = self._diag or {}
        if d.get("q") is None and d.get("bins") is not None:
            d["q"] = d["table"][d["bins"]]  # the grid sampler's q, looked up once
        return self._diag_part("q", "probabilities_")

    @property
    def individual_epsilon_(self) -> np.ndarray:
        """Per-point loss ψ(x_i) (Theorem 6) of the training points (ε(1, x_i) unsampled)."""
        d = self._diag or {}
        if d.get("psi") is None and d:
            d["psi"] = self._individual_epsilon(d)
        return self._diag_part("psi", "individual_epsilon_")

    def _individual_epsilon(self, d: dict[str, Any]) -> np.ndarray | None:
        if not d.get("private"):
            return np.full(int(d["n"]), math.inf) if d.get("n") is not None else None
        s = d.get("s")
        if s is None:
            return None
        if d.get("radius") is not None:  # grid path: s of the unclipped rows, clamped as fit did
            s = np.minimum(s, d["radius"])
        cal = d["cal"]
        slopes = lloyd_profile(s, beta_sum=cal.beta_sum, beta_count=cal.beta_count,
                               n_iter=d["t"]).slopes
        q = self.probabilities_ if (d.get("q") is not None or d.get("bins") is not None) \
            else None
        if q is None:
            return slopes
        return amplified_epsilon(q, np.where(q > 0, slopes / q, 0.0))
