"""Small helpers shared by the reproduction reports (markdown tables)."""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.data.datasets import REPO_ROOT

#: Where full runs write: the committed reports.
COMMITTED_DIR = REPO_ROOT / "docs" / "reproduction"


def scratch_dir() -> Path:
    """Where ``--quick`` runs write by default: a scratch folder outside the checkout."""
    return Path(tempfile.gettempdir()) / "dpcore-reproduce-quick"


def report_dir(out: Path | None, quick: bool) -> Path:
    """The report folder of a run: ``out`` if given, else the scratch folder for ``--quick``
    (a quick run must never overwrite the committed reports) and ``docs/reproduction``
    otherwise."""
    if out is not None:
        return Path(out)
    return scratch_dir() if quick else COMMITTED_DIR


def markdown_table(df: pd.DataFrame, floatfmt: str | int = ".4g") -> str:
    """A DataFrame as a GitHub markdown table; floats formatted with ``floatfmt``, NaN as –.

    ``floatfmt`` is a format spec (``".4g"``, ``".0f"``) or an int, meaning that many
    significant digits.

    Hand-written so the reports need no extra dependency (pandas' ``to_markdown`` needs tabulate).
    """

    spec = f".{floatfmt}g" if isinstance(floatfmt, int) else floatfmt

    def cell(v: object) -> str:
        if isinstance(v, float | np.floating):
            return "–" if math.isnan(v) else format(v, spec)
        return str(v).replace("|", "\\|")  # a literal | would split the cell

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)
