"""Number fields that never clamp silently (issue 26), for the frame and every page.

Streamlit's bounded ``number_input`` turns an out-of-range or non-finite value into its bound or
its default without a word (its deserialiser does so on the server; the browser clamps too), so
what is shown and what is used could differ. These fields are text fields checked by a
:mod:`dpcore.data.limits` check: a refused value gives a message and the previous value stays.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from dpcore.core.text import md_text
from dpcore.data.limits import check_number


def number_text(value: float | None) -> str:
    """How a declared number is shown in a :func:`checked_number` field: the shortest text that
    reads back as exactly the float used (what is shown is what is used)."""
    return "" if value is None else repr(float(value)).removesuffix(".0")


def checked_number(where, label: str, key: str, check: Callable[[float], float], *,
                   on_valid: Callable[[float | None], None] | None = None,
                   optional: bool = True, help: str | None = None, **widget: Any) -> str:
    """A number field that never clamps silently (issue 26).

    A ``number_input`` with bounds turned a typed ``1e309`` into its minimum 1e-9 (and Clustering
    ran on data collapsed to a point), and kept showing ``1e-300`` while 201.2 was used; its
    deserialiser also puts an out-of-range or non-finite value back to the default without a
    word. Here the text is parsed and ``check`` (a :mod:`dpcore.data.limits` check) decides: a
    refused value gives a message and the field shows the previous value again; an accepted one
    is written back in its canonical form (:func:`number_text`) and passed to ``on_valid``. The
    field's own key then holds the text of the value used, so ``float(ss[key])`` (or ``int``) is
    what is shown. Empty text means "not declared" when ``optional``. ``widget`` goes to
    ``text_input`` (``value``, ``disabled``, ``bind``, ``persist_state``).
    """
    ss = st.session_state
    prev = f"_prev_{key}"

    def _changed() -> None:
        text = str(ss.get(key) or "").strip()
        try:
            if not text and optional:
                value = None
            else:
                try:
                    number = float(text.replace(",", "."))
                except ValueError:
                    raise ValueError(f"{label.lower()} must be a number") from None
                value = check(number)
        except ValueError as exc:
            ss[f"_msg_{key}"] = (f"{text[:40]!r} was not used: {exc}. The previous value "
                                 f"{ss.get(prev) or '(none)'} is kept.")
            ss[key] = ss.get(prev, "")
            return
        ss[key] = ss[prev] = number_text(value)
        if on_valid is not None:
            on_valid(value)

    shown = where.text_input(label, key=key, on_change=_changed, help=help, **widget)
    if prev not in ss:  # after the widget: a URL-bound field starts from the URL's value
        ss[prev] = shown or ""
    msg = ss.pop(f"_msg_{key}", None)
    if msg:
        st.error(md_text(msg))
    return shown or ""


def check_delta_field(value: float) -> float:
    """The δ fields' range: from 1e-12 (smaller buys nothing visible) to 0.1."""
    return check_number("δ", value, 1e-12, 0.1)


def number_field(where, label: str, key: str, check: Callable[[float], float], default: float,
                 **widget: Any) -> float:
    """A required :func:`checked_number` starting at ``default``; returns the value used
    (``check`` of the text shown: an ``int`` from a count check).

    Replaces bounded ``number_input`` fields, whose out-of-range values became the minimum or
    the default without a word (issue 26). ``default`` goes to the widget only on its first
    run: afterwards the session state holds the text (passing both warns in Streamlit).
    """
    if key not in st.session_state:
        widget["value"] = number_text(default)
    return check(float(checked_number(where, label, key, check, optional=False, **widget)))
