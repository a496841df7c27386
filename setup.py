"""Build step: the wheel carries the dashboard and the bundled sample data.

``app.py``, ``pages/``, ``.streamlit/config.toml`` and ``sample_data/`` stay at the top of the
source checkout, where ``make app``, ``streamlit run app.py`` and the tests use them. They are
not inside the ``dpcore`` package, so package data alone cannot ship them, and a second copy in
the repository would drift. This ``build_py`` step copies them into ``dpcore/_bundle/`` in the
build tree only; ``dpcore.data.datasets.resource_root`` reads them from the checkout when run
from one, else from the installed bundle. Editable installs skip the copy (they use the checkout).
All other metadata is in pyproject.toml.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
#: Globs, relative to the checkout, of what the wheel carries (keep MANIFEST.in in step).
BUNDLE = ("app.py", "pages/*.py", ".streamlit/config.toml", "sample_data/*")


def bundle_files(root: Path = ROOT) -> list[Path]:
    files = sorted(p for pattern in BUNDLE for p in root.glob(pattern) if p.is_file())
    missing = [pattern for pattern in BUNDLE if not any(root.glob(pattern))]
    if missing:
        raise FileNotFoundError(f"cannot bundle {missing}: not found under {root}")
    return files


class BuildPyWithBundle(build_py):
    """``build_py`` that also copies the dashboard and the sample data into dpcore/_bundle."""

    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return
        target = Path(self.build_lib) / "dpcore" / "_bundle"
        shutil.rmtree(target, ignore_errors=True)  # no stale file from an earlier build
        for src in bundle_files():
            dest = target / src.relative_to(ROOT)
            self.mkpath(str(dest.parent))
            self.copy_file(str(src), str(dest), preserve_mode=False)


setup(cmdclass={"build_py": BuildPyWithBundle})
