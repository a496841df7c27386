"""The code version of a saved reproduction run, and the rule that a figure uses one (issue 24).

Every saved per-repetition row carries ``code_version`` — a hash of the source of the dpcore
modules its run depends on (:func:`code_version`: the mechanism modules, followed through their
dpcore imports, plus the runner module itself) — and ``git_commit`` (the checkout's commit, with
``+dirty`` when dpcore has uncommitted edits; provenance only, the hash is what is compared).

A rebuild from saved runs calls :func:`check_one_version` per figure: rows of two versions in one
figure (e.g. repetitions 0–24 from before a fix and 25–29 after it) raise
:class:`MixedVersionsError`, naming the runs of each version, instead of drawing them together.
Rows saved before versioning carry no column; they count as the version ``unrecorded`` (one
version, unless :func:`versions_from_history` recovers more from the git history of the file).
"""

from __future__ import annotations

import ast
import hashlib
import importlib.util
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from pathlib import Path

import pandas as pd

from dpcore.data.datasets import REPO_ROOT

__all__ = ["MixedVersionsError", "UNRECORDED", "check_one_version", "code_version",
           "git_commit", "stamp", "versions_from_history"]

UNRECORDED = "unrecorded"
#: Columns that describe a run rather than its setting or its result.
VERSION_COLUMNS = ("code_version", "git_commit")


class MixedVersionsError(ValueError):
    """A figure would be drawn from runs of more than one code version."""


def _module_file(name: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return Path(spec.origin) if spec is not None and spec.origin not in (None, "built-in") \
        else None


def _imports(path: Path, name: str) -> set[str]:
    """Every dpcore module named by an import anywhere in the file (function bodies included:
    the reports import some mechanisms lazily)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            found.add(base)
            found |= {f"{base}.{a.name}" for a in node.names}  # `from pkg import submodule`
    return {m for m in found if m == "dpcore" or m.startswith("dpcore.")}


@cache
def _closure(roots: tuple[str, ...]) -> tuple[tuple[str, Path], ...]:
    """The roots and the dpcore modules they import, transitively (a package's ``__init__``
    only when it is imported from; ``dpcore`` and ``dpcore.mechanisms``, which import every
    mechanism, are not followed as parents). Report modules (``dpcore.reproduce.*`` other than
    the roots) are left out: formatting does not change a run."""
    seen: dict[str, Path] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen or (name.startswith("dpcore.reproduce") and name not in roots):
            continue
        path = _module_file(name)
        if path is None or path.suffix != ".py":
            continue  # a name imported from a module, not a module
        seen[name] = path
        todo += sorted(_imports(path, name))
    return tuple(sorted(seen.items()))


def code_version(roots: Sequence[str]) -> str:
    """12 hex digits of a SHA-256 over the source of ``roots`` and every dpcore module they
    import (transitively; module names and bytes, in name order)."""
    h = hashlib.sha256()
    for name, path in _closure(tuple(roots)):
        h.update(name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:12]


def _git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True,
                          check=True, timeout=30).stdout.strip()


def git_commit() -> str:
    """The checkout's short commit, ``+dirty`` if dpcore/ has uncommitted edits; ``unknown``
    outside a git checkout (an installed package)."""
    try:
        head = _git("rev-parse", "--short=10", "HEAD")
        dirty = _git("status", "--porcelain", "--", "dpcore")
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "")


def stamp(df: pd.DataFrame, version: str, commit: str) -> pd.DataFrame:
    """``df`` with the run's ``code_version`` and ``git_commit`` on every row."""
    return df.assign(code_version=version, git_commit=commit)


def _describe(df: pd.DataFrame, panel: str) -> str:
    """'panel: method reps a–b (n rows)' for each method of a group of rows."""
    parts = []
    for method, g in (df.groupby("method") if "method" in df else [("", df)]):
        reps = (f" reps {int(g['rep'].min())}–{int(g['rep'].max())}" if "rep" in g else "")
        parts.append(f"{method}{reps} ({len(g)} rows)".strip())
    return f"{panel}: " + ", ".join(parts)


def check_one_version(raw: Mapping[str, pd.DataFrame],
                      figures: Mapping[str, Iterable[str]]) -> dict[str, str]:
    """The one code version of each figure (``figures``: figure name → its panels' keys in
    ``raw``); raise :class:`MixedVersionsError` naming the runs when a figure has several."""
    out = {}
    for fig, panels in figures.items():
        groups: dict[str, list[str]] = {}
        for p in panels:
            df = raw.get(p)
            if df is None or df.empty:
                continue
            v = df["code_version"].fillna(UNRECORDED) if "code_version" in df \
                else pd.Series(UNRECORDED, index=df.index)
            for version, g in df.groupby(v.to_numpy()):
                groups.setdefault(str(version), []).append(_describe(g, p))
        if len(groups) > 1:
            listing = "; ".join(f"version {v}: " + " | ".join(d) for v, d in groups.items())
            raise MixedVersionsError(
                f"{fig} would mix {len(groups)} code versions ({listing}). Re-run every run of "
                f"{fig} with one version instead of rebuilding from these.")
        if groups:
            out[fig] = next(iter(groups))
    return out


def versions_from_history(path: Path, keys: Sequence[str]) -> pd.Series:
    """For a saved CSV without ``code_version``: ``unrecorded@<commit>`` per row, the commit
    that first stored the row's ``keys`` (setting, method, repetition), walking the file's git
    history oldest first. Runs added by a later top-up get a later commit, so a figure whose rows
    were made at different times is refused although nobody recorded its versions."""
    rel = Path(path).resolve().relative_to(REPO_ROOT)
    commits = _git("log", "--format=%h", "--reverse", "--", str(rel)).split()
    first: dict[tuple, str] = {}
    for c in commits:
        blob = subprocess.run(["git", "show", f"{c}:{rel}"], cwd=REPO_ROOT, capture_output=True,
                              check=True, timeout=60).stdout
        old = pd.read_csv(pd.io.common.BytesIO(blob), compression="gzip")
        if not set(keys) <= set(old.columns):
            continue
        for key in old[list(keys)].itertuples(index=False, name=None):
            first.setdefault(key, c)
    now = pd.read_csv(path)
    return pd.Series([f"{UNRECORDED}@{first.get(k, 'worktree')}"
                      for k in now[list(keys)].itertuples(index=False, name=None)],
                     index=now.index, name="code_version")
