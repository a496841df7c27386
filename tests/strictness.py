"""Whether a missing tool or data set skips (a user's clone) or fails (CI): one place, importable
by name from any test module (``conftest`` is ambiguous once sub-folders have their own)."""

from __future__ import annotations

import os

import pytest


def strict() -> bool:
    """True when skips for missing tools or data must fail (CI)."""
    return os.environ.get("DPCORE_STRICT") == "1" or os.environ.get("CI", "").lower() == "true"


def require(condition: bool, reason: str) -> None:
    """Skip (or, in strict mode, fail) the calling test unless ``condition`` holds."""
    if condition:
        return
    if strict():
        pytest.fail(f"required for CI but missing: {reason}", pytrace=False)
    pytest.skip(reason)
