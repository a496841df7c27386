"""IBM diffprivlib's ``KMeans`` for the max-cover reproduction, run in its own environment
``.venv-diffprivlib`` (``benchmarks/diffprivlib_env/``): diffprivlib 0.6.6 does not import with
the project's scikit-learn. Re-exported by :mod:`dpcore.reproduce.maxcover`.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dpcore.data.datasets import REPO_ROOT

__all__ = ["DIFFPRIVLIB_MISSING", "diffprivlib_python", "run_diffprivlib"]

ROOT = REPO_ROOT


def diffprivlib_python() -> Path | None:
    """Interpreter of the separate diffprivlib environment, or None when it is not built."""
    env = os.environ.get("DPCORE_DIFFPRIVLIB_PYTHON")
    path = Path(env) if env else ROOT / ".venv-diffprivlib" / "bin" / "python"
    return path if path.exists() else None


DIFFPRIVLIB_MISSING = (
    "diffprivlib baseline skipped: its environment is not built "
    "(run `sh benchmarks/diffprivlib_env/build.sh`; diffprivlib 0.6.6 does not import with the "
    "project's scikit-learn ≥ 1.8)"
)


def run_diffprivlib(
    X: np.ndarray, k: int, epsilon: float, bound: float, seeds: Sequence[int]
) -> dict | None:
    """Fit diffprivlib ``KMeans`` in the separate environment; None when it is absent.

    Data go through a temporary .npy file, results come back as JSON on stdout. ``bound`` is the
    public per-feature bound: every coordinate lies in [−bound, bound].
    """
    py = diffprivlib_python()
    if py is None:
        return None
    runner = ROOT / "benchmarks" / "diffprivlib_env" / "runner.py"
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "X.npy"
        np.save(data, np.clip(X, -bound, bound))
        spec = {
            "data": str(data),
            "k": int(k),
            "epsilon": float(epsilon),
            "bounds": [-float(bound), float(bound)],
            "seeds": [int(s) for s in seeds],
        }
        out = subprocess.run(
            [str(py), str(runner)],
            input=json.dumps(spec),
            capture_output=True,
            text=True,
            check=False,
        )
    if out.returncode != 0:
        raise RuntimeError(f"diffprivlib runner failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout)

