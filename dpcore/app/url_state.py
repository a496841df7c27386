"""Validation of the dashboard's URL (query-parameter) state, without Streamlit.

The dashboard binds a few widgets to the URL (``?data=cities&eps=1.0&k=5&seed=0&mode=explore``,
``clu_algs``, ``pu_algs``, ``sampler``, ``stat``). A URL is user input: anything can be typed or
sent in a link. :func:`clean_query_params` checks every known parameter against its
:class:`QueryParam` and returns the valid values plus one message per ignored value
("ignored k=abc: must be an integer from 1 to 50"), so the page can show the message and drop
the value (the widget then shows its default) instead of silently resetting or failing. It never
raises, whatever the URL: 5,000-digit numbers, ``../../etc/passwd``, control characters,
repeated keys.

The messages quote the user's value shortened and as plain text: show them with
:func:`dpcore.core.text.md_text` (or ``st.text``), never as raw Markdown.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["QueryCheck", "QueryParam", "app_query_spec", "clean_query_params"]

_MAX_SHOWN = 24  # characters of a rejected value quoted back
_MAX_NUMBER_CHARS = 32  # longer "numbers" are refused before int()/float() (int() of 5000
#                         digits raises ValueError past sys.get_int_max_str_digits())


@dataclass(frozen=True)
class QueryParam:
    """One URL parameter: its kind and allowed values.

    Parameters
    ----------
    name : str
        The URL key (the widget key).
    kind : {"choice", "int", "float", "multi"}
        ``choice``: one of ``choices`` (strings); ``int``: an integer in [lo, hi]; ``float``: a
        number in [lo, hi], or one of ``choices`` (numbers) when given (a select slider);
        ``multi``: repeated values, each one of ``choices`` (a multiselect).
    """

    name: str
    kind: str
    choices: tuple = ()
    lo: float | None = None
    hi: float | None = None


@dataclass
class QueryCheck:
    """Result of :func:`clean_query_params`.

    Attributes
    ----------
    values : dict
        Valid values, typed (str, int, float or list of str), by key.
    messages : list of str
        One "ignored key=value: reason" line per rejected value, for the page to show.
    rejected : list of str
        Keys whose value was rejected (remove them from the URL so the widget shows its default).
    unknown : list of str
        Keys the spec does not know (left alone; another component may use them).
    """

    values: dict[str, Any] = field(default_factory=dict)
    messages: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)


def app_query_spec(
    *,
    data_keys: Sequence[str],
    epsilon_grid: Sequence[float],
    algorithms: Sequence[str] | None = None,
    statistics: Sequence[str] | None = None,
    samplers: Sequence[str] = ("privacy", "coreset", "uniform"),
    k_range: tuple[int, int] = (1, 50),
    seed_range: tuple[int, int] = (0, 2**31 - 1),
) -> dict[str, QueryParam]:
    """The dashboard's URL parameters (the widgets bound with ``bind="query-params"``).

    ``data_keys`` and ``epsilon_grid`` are the page's own lists (``pages._common.DATA_KEYS``,
    ``EPSILON_GRID``); algorithms default to :func:`dpcore.app.sweeps.clustering_algorithms`,
    statistics to :data:`dpcore.mechanisms.sensitivity.statistics.STATISTICS`.
    """
    if algorithms is None:
        from dpcore.app.sweeps import clustering_algorithms

        algorithms = list(clustering_algorithms())
    if statistics is None:
        from dpcore.mechanisms.sensitivity.statistics import STATISTICS

        statistics = list(STATISTICS)
    algs = tuple(algorithms)
    return {
        "data": QueryParam("data", "choice", tuple(data_keys)),
        "mode": QueryParam("mode", "choice", ("explore", "release")),
        "eps": QueryParam("eps", "float", tuple(float(e) for e in epsilon_grid)),
        "k": QueryParam("k", "int", lo=k_range[0], hi=k_range[1]),
        "seed": QueryParam("seed", "int", lo=seed_range[0], hi=seed_range[1]),
        "clu_algs": QueryParam("clu_algs", "multi", algs),
        "pu_algs": QueryParam("pu_algs", "multi", algs),
        "sampler": QueryParam("sampler", "choice", tuple(samplers)),
        "stat": QueryParam("stat", "choice", tuple(statistics)),
    }


def _shown(value: str) -> str:
    """The rejected value quoted back: printable, at most 24 characters."""
    text = "".join(ch if ch.isprintable() else "?" for ch in value[:_MAX_SHOWN])
    if len(value) > _MAX_SHOWN:
        text += f"… ({len(value):,} characters)"
    return text


def _listed(choices: Iterable[Any], limit: int = 8) -> str:
    items = [f"{c:g}" if isinstance(c, float) else str(c) for c in choices]
    return ", ".join(items[:limit]) + (", …" if len(items) > limit else "")


def _check_one(p: QueryParam, value: str) -> tuple[Any, str | None]:
    """(typed value, None) or (None, reason)."""
    v = value.strip()
    if p.kind == "choice":
        if v in p.choices:
            return v, None
        return None, f"must be one of {_listed(p.choices)}"
    if p.kind == "int":
        reason = f"must be an integer from {p.lo:g} to {p.hi:,}"
        body = v[1:] if v[:1] in "+-" else v
        if not body.isascii() or not body.isdigit() or len(v) > _MAX_NUMBER_CHARS:
            return None, reason
        n = int(v)
        return (n, None) if p.lo <= n <= p.hi else (None, reason)
    if p.kind == "float":
        if p.choices:
            reason = f"must be one of {_listed(p.choices, 20)}"
        else:
            reason = f"must be a number from {p.lo:g} to {p.hi:g}"
        if len(v) > _MAX_NUMBER_CHARS or not v.isascii():
            return None, reason
        try:
            x = float(v)
        except ValueError:
            return None, reason
        if not math.isfinite(x):
            return None, reason
        if p.choices:
            # the URL holds the slider's label: match with a relative tolerance
            hit = next((c for c in p.choices if math.isclose(x, c, rel_tol=1e-9)), None)
            return (hit, None) if hit is not None else (None, reason)
        return (x, None) if p.lo <= x <= p.hi else (None, reason)
    raise ValueError(f"unknown QueryParam kind {p.kind!r}")  # a bug in the spec, not the URL


def _as_list(raw: Any) -> list[str]:
    if raw is None:
        return []
    if isinstance(raw, str | bytes):
        raw = [raw]
    try:
        items = list(raw)
    except TypeError:
        items = [raw]
    return [i.decode("utf-8", "replace") if isinstance(i, bytes) else str(i) for i in items]


def clean_query_params(raw: Mapping[str, Any], spec: Mapping[str, QueryParam]) -> QueryCheck:
    """Check URL parameters against ``spec``; never raises on any URL content.

    Parameters
    ----------
    raw : mapping
        Key -> value or list of values (repeated keys), e.g.
        ``{k: st.query_params.get_all(k) for k in st.query_params}``.
    spec : mapping
        Key -> :class:`QueryParam` (:func:`app_query_spec`).

    Returns
    -------
    QueryCheck
        Valid values, messages for the rejected ones ("ignored k=abc: must be an integer from
        1 to 50"), rejected and unknown keys. A single-valued key given several times keeps its
        last valid value; a multiselect keeps its valid items and reports the others.
    """
    out = QueryCheck()
    try:
        keys = list(raw.keys())
    except Exception:  # a mapping-like object that fails: nothing usable
        return out
    for key in keys:
        try:
            values = _as_list(raw[key])
        except Exception:
            values = []
        name = str(key)
        p = spec.get(name)
        if p is None:
            out.unknown.append(_shown(name))
            continue
        if p.kind == "multi":
            good, bad = [], []
            for v in values:
                (good if v in p.choices and v not in good else bad).append(v)
            out.values[name] = good
            for v in bad:
                why = ("listed twice" if v in good else f"must be one of {_listed(p.choices)}")
                out.messages.append(f"ignored {name}={_shown(v)}: {why}")
            if bad:
                out.rejected.append(name)
            continue
        accepted, had_bad = None, False
        for v in values or [""]:
            typed, reason = _check_one(p, v)
            if reason is None:
                accepted = typed
            else:
                had_bad = True
                out.messages.append(f"ignored {name}={_shown(v)}: {reason}")
        if accepted is not None:
            out.values[name] = accepted
        if had_bad:
            out.rejected.append(name)
    return out
