"""Warnings and failures in plain words, with the technical text in a "details" expander."""

from __future__ import annotations

from collections import Counter

import streamlit as st

from dpcore.app.advice import plain_error, plain_warning
from dpcore.core.text import md_text


def show_plain_warnings(messages: list[str], *, prefix: str = "") -> None:
    """One orange line per distinct plain-words warning; the originals under "details"."""
    if not messages:
        return
    plain = Counter()
    originals: dict[str, list[str]] = {}
    for m in dict.fromkeys(messages):
        p = plain_warning(m)
        plain[p.text] += 1
        originals.setdefault(p.text, []).append(p.details)
    for text in plain:
        st.caption(f":orange[⚠ {md_text(prefix + text)}]")
    with st.expander("Details of the warnings"):
        for items in originals.values():
            for item in items:
                st.code(item, language=None)


def show_plain_error(message: str, *, lead: str = "") -> None:
    """A failure as a warning in plain words, the technical message under "details"."""
    p = plain_error(message)
    st.warning(md_text(f"{lead}{p.text}"))
    with st.expander("Details"):
        st.code(p.details, language=None)
