"""Checked values for the dashboard's "suggest" and "declare" actions, without Streamlit.

A value a page stores in the session (a suggested radius, a typed centre, a candidate range)
is read by every later page. One NaN stored there wedges the whole session ("radius must be
finite and > 0, got nan" on every page). Each function here returns a :class:`Suggestion`: a
value that is inside the documented range of :mod:`dpcore.data.limits`, or ``None`` with a one-line
message saying why and what to do instead. Store ``value`` only when it is not ``None``.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpcore.data import limits
from dpcore.data.tables import DataError

__all__ = ["Suggestion", "check_radius_value", "parse_center_text", "suggest_radius"]


@dataclass(frozen=True)
class Suggestion:
    """A usable value, or ``None`` and the reason (a plain-text line for the page)."""

    value: Any
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.value is not None


def check_radius_value(value: Any, name: str = "radius") -> Suggestion:
    """A radius about to be stored: inside [1e-100, 1e100], else ``None`` and the reason."""
    try:
        return Suggestion(limits.check_radius(value, name))
    except limits.ParameterError as exc:
        return Suggestion(None, str(exc))


def suggest_radius(data: Any, *, columns: list[str] | None = None, center: Any = None,
                   quantile: float = 0.99, significant: int = 4) -> Suggestion:
    """The ``quantile`` of the row norms after centring, rounded *up* to ``significant`` digits.

    Read off the data: not private (a :class:`~dpcore.privacy.guarantees.PrivacyLeakWarning` is
    raised, as by :func:`dpcore.data.tables.data_radius`); for explore mode or public data only.
    Never returns NaN or inf: data outside the supported range, a degenerate table (every row at the
    centre) or a bad centre give ``None`` and a message.
    """
    from dpcore.data.tables import data_radius
    from dpcore.release.runconfig import prepare_matrix

    try:
        X = prepare_matrix(data, columns=columns, center=center)
    except (DataError, ValueError) as exc:
        return Suggestion(None, f"no radius suggested: {exc}")
    if X.shape[0] == 0:
        return Suggestion(None, "no radius suggested: the table has no rows")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            r = data_radius(X, quantile=quantile)
    except (DataError, ValueError) as exc:
        return Suggestion(None, f"no radius suggested: {exc}")
    if not math.isfinite(r):
        return Suggestion(None, "no radius suggested: the row norms are beyond the float range; "
                                "rescale the columns")
    if r <= 0:
        return Suggestion(None, "no radius suggested: every row equals the centre (all norms "
                                "are 0); declare a radius from what you know about the data")
    # round up so the suggested ball still holds the quantile
    exp = math.floor(math.log10(r)) - (significant - 1)
    rounded = math.ceil(r / 10.0**exp) * 10.0**exp
    rounded = float(f"{rounded:.{significant}g}")
    return check_radius_value(rounded)


def parse_center_text(text: str, d: int) -> Suggestion:
    """A centre typed as comma- (or semicolon-) separated numbers; empty text is "no centre"
    (``Suggestion(None, "")``). ``d`` coordinates, each with ``|c| ≤ 1e100``."""
    text = (text or "").strip()
    if not text:
        return Suggestion(None, "")
    parts = [t.strip() for t in text.replace(";", ",").split(",")]
    if len(parts) != d:
        return Suggestion(None, f"the centre needs {d} coordinate(s), one per chosen column; "
                                f"got {len(parts)}")
    values = []
    for i, t in enumerate(parts):
        try:
            if len(t) > 64:
                raise ValueError
            values.append(float(t))
        except ValueError:
            return Suggestion(None, f"centre coordinate {i + 1} is not a number")
    try:
        c = limits.check_center(np.array(values), d, name="centre")
    except limits.ParameterError as exc:
        return Suggestion(None, str(exc))
    return Suggestion(c.tolist())
