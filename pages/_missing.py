"""The Data page's missing-cells section (issue 27.2) and the columns it leaves out (issue 26).

One rule per column (:mod:`dpcore.data.missing`): drop the rows holding a missing cell, or fill
it with a public constant the user declares. The choice is stored in the data spec
(``spec["missing"]``) and reaches every path from there: explore (:func:`pages._common.
current_dataset`), release (:func:`pages._common.public_description` → the door), the exported
run configuration (``data.missing``, hence ``dpcore run``) and, written into ``schema.json``, the
curator deployment. Counts of affected rows are a statistic of the table: shown in explore mode
only, never in release mode.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dpcore.core.text import md_text
from dpcore.data import limits
from dpcore.data.missing import describe_rule, missing_mask
from dpcore.data.tables import column_report
from pages._common import checked_number, curator, number_text

CHOICES = ("refuse (choose one)", "drop those rows", "fill with a constant")


def _key(key: str, column: str, what: str) -> str:
    return f"miss_{what}_{key}_{column}"


def missing_section(df: pd.DataFrame, sp: dict[str, Any], key: str) -> None:
    """Explore mode: the left-out columns with why, and a choice per column with missing cells."""
    ss = st.session_state
    left_out = {c: why for c, why in column_report(df).items() if c not in sp["columns"]}
    if left_out:
        with st.expander(f"Columns left out ({len(left_out)}) and why"):
            for c, why in left_out.items():
                st.markdown(f"- **{md_text(c, max_chars=60)}**: {md_text(why)}")
    columns = list(sp["columns"])
    counts = missing_mask(df, columns).sum()  # explore mode only: the table is shown here anyway
    rule = dict(sp.get("missing") or {})
    todo = [c for c in columns if counts[c] > 0 or c in rule]
    if not todo:
        return
    st.markdown("**Missing cells** — choose per column (one rule for explore, release, the "
                "exported configuration and `dpcore run`):")
    for c in todo:
        current = rule.get(c)
        wkey = _key(key, c, "how")
        if wkey not in ss:
            ss[wkey] = CHOICES[0 if current is None else 1 if current == "drop" else 2]

        def _set(c: str = c, wkey: str = wkey) -> None:
            how = ss[wkey]
            missing = dict(sp.get("missing") or {})
            if how == CHOICES[1]:
                missing[c] = "drop"
            elif how == CHOICES[2]:
                fill = (missing.get(c) or {}).get("fill", 0.0) if missing.get(c) != "drop" \
                    else 0.0
                missing[c] = {"fill": float(fill)}
                ss[_key(key, c, "fill")] = ss[f"_prev_{_key(key, c, 'fill')}"] = \
                    number_text(fill)
            else:
                missing.pop(c, None)
            sp["missing"] = missing

        a, b, cc = st.columns([2, 2, 1])
        a.markdown(f"{md_text(c, max_chars=60)}: {int(counts[c]):,} missing cell(s)")
        b.selectbox(f"Missing cells of {md_text(c, max_chars=40)}", CHOICES, key=wkey,
                    on_change=_set, label_visibility="collapsed")
        if ss[wkey] == CHOICES[2]:
            fkey = _key(key, c, "fill")
            if fkey not in ss:
                ss[fkey] = number_text((rule.get(c) or {}).get("fill", 0.0))

            def _fill(v: float | None, c: str = c) -> None:
                missing = dict(sp.get("missing") or {})
                missing[c] = {"fill": 0.0 if v is None else float(v)}
                sp["missing"] = missing

            checked_number(cc, "constant (public)", fkey, lambda v: limits.check_number(
                "the fill value", v, -limits.MAX_ABS_VALUE, limits.MAX_ABS_VALUE),
                on_valid=_fill, optional=False,
                help="A public constant you declare, never read off the data.")
    rule = {c: r for c, r in (sp.get("missing") or {}).items() if c in columns}
    affected = int(missing_mask(df, list(rule)).any(axis=1).sum()) if rule else 0
    undecided = [c for c in todo if c not in rule]  # columns with missing cells, no rule yet
    st.caption(md_text(describe_rule(rule, undecided, release=False))
               + (f" Rows affected: {affected:,} (shown in explore mode only)." if rule else ""))


def release_missing_caption() -> None:
    """Release mode: what happens to missing cells, from the public description only (no
    count: whether a cell is missing is private)."""
    from pages._common import DATA_KEYS, raw_frame, spec

    dep = curator()
    if dep is not None:
        from pages._common import release_door

        door = release_door()
        if door is None:
            return
        desc = door.description
        rule, columns = desc.missing, list(desc.columns)
    else:
        key = st.session_state.get("data") or DATA_KEYS[0]
        df, _, _ = raw_frame(key)
        if df is None:
            return
        sp = spec(key, df)
        columns = list(sp["columns"])
        rule = {c: r for c, r in (sp.get("missing") or {}).items() if c in columns}
    st.caption(md_text(describe_rule(rule, columns, release=True)))
