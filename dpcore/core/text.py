"""User text shown as text: Markdown escaping for the dashboard, formula-safe CSV for downloads.

Column names, file names, cell values and error messages come from the user (or from a file a
user was sent). Rendered as Markdown they can fetch URLs (``![t](http://…)`` images), become
links, or inject HTML; written to a CSV they can run as spreadsheet formulas (``=HYPERLINK(…)``,
``=cmd|' /C calc'!A0``). Two functions neutralise them:

* :func:`md_text` escapes a string so that Streamlit Markdown (CommonMark + GitHub extensions +
  ``$…$`` math + ``:colour[…]`` / ``:material/…:`` directives) shows it literally;
* :func:`csv_safe_frame` prefixes a ``'`` to every header and string cell that starts with
  ``= + - @``, a tab or a carriage return, as the OWASP "CSV Injection" guidance recommends.
  Numbers stay numbers (a negative *number* is data, not a formula).
"""

from __future__ import annotations

import re
import string
from typing import Any

import pandas as pd

__all__ = ["FORMULA_PREFIXES", "csv_safe", "csv_safe_frame", "md_text"]

# CommonMark lets every ASCII punctuation character be backslash-escaped (and renders it as
# itself). Escaping all of them, not a hand-picked list, also breaks GFM autolinks (``www.x``,
# ``http://``, ``a@b.c``), ``$`` math and Streamlit's ``:red[…]`` directives.
_MD_SPECIAL = re.compile("([" + re.escape(string.punctuation) + "])")
_NEWLINES = re.compile(r"\r\n|\r|\n")

FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")

# Streamlit's Markdown (remark-gfm) turns ``http://…``, ``www.…`` and ``a@b.c`` into links even
# when every character is backslash-escaped (seen in Chromium: an escaped
# ``![t](http://127.0.0.1:9/x.png)`` still became ``<a href="http://127.0.0.1:9/x.png)">``).
# An invisible WORD JOINER (U+2060) inside the trigger breaks the autolink and shows nothing.
WORD_JOINER = "\u2060"
_AUTOLINK_TRIGGERS = re.compile(r"(?i)(?<=:)(?=//)|(?<=www)(?=\.)|(?<=@)")


def md_text(value: Any, *, max_chars: int | None = None) -> str:
    """``value`` as a Markdown fragment that renders as exactly its text.

    Backslash-escapes every Markdown / HTML / math / directive character, so no link, image,
    emphasis, heading, HTML tag, entity, ``$`` formula or ``:red[…]`` colour is produced; line
    breaks become spaces (a name is one line); an invisible U+2060 is put after ``:`` of
    ``://``, after ``www`` and after ``@`` so that no autolink forms. ``max_chars`` shortens
    very long strings (``…`` appended), e.g. 80 for a column name in a caption; ``None``
    (default) keeps all.

    Example: ``![t](http://127.0.0.1:9/x.png)`` becomes ``\\!\\[t\\]\\(http\\:\\/\\/…`` and
    renders as exactly ``![t](http://127.0.0.1:9/x.png)``: no image is fetched.
    """
    text = str(value)
    if max_chars is not None and len(text) > max_chars:
        text = text[:max_chars] + "…"
    text = _NEWLINES.sub(" ", text)
    text = _AUTOLINK_TRIGGERS.sub(WORD_JOINER, text)
    return _MD_SPECIAL.sub(r"\\\1", text)


def csv_safe(value: Any) -> Any:
    """A string starting with a formula prefix gets a leading ``'``; anything else unchanged."""
    if isinstance(value, str) and value.startswith(FORMULA_PREFIXES):
        return "'" + value
    return value


def csv_safe_frame(df: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``df`` whose headers and string cells cannot run as spreadsheet formulas.

    Only text is changed (headers, and cells of object / string columns); numeric columns are
    written as they are. Use it for every CSV a user downloads or the command line writes.
    """
    out = df.copy(deep=False)
    out.columns = [csv_safe(str(c)) for c in df.columns]
    for j in range(out.shape[1]):
        col = out.iloc[:, j]
        if col.dtype == object or pd.api.types.is_string_dtype(col.dtype):
            out.isetitem(j, col.map(csv_safe))
    return out
