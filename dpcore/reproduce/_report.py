"""Small helpers shared by the reproduction reports (markdown tables)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd


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
        return str(v)

    lines = ["| " + " | ".join(map(str, df.columns)) + " |", "|" + "---|" * len(df.columns)]
    lines += ["| " + " | ".join(map(cell, row)) + " |" for row in df.itertuples(index=False)]
    return "\n".join(lines)
