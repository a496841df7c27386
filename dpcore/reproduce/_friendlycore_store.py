"""FriendlyCore reproduction: saved runs — their code version, loading, and top-ups.

Split from :mod:`dpcore.reproduce.friendlycore` (which re-exports :func:`top_up`): each saved
row carries the code version of :mod:`dpcore.reproduce._versions`; a rebuild refuses a figure of
mixed versions and a top-up refuses to add rows of another version.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.reproduce._versions import (
    MixedVersionsError,
    check_one_version,
    code_version,
    git_commit,
    stamp,
    versions_from_history,
)

#: FC_Clustering's backup after a failure: the paper's is LSH_Clustering (Sec. 6.2), at the
#: reserved ρ = 0.01 (``FriendlyCoreKMeans(fallback="lsh")``); ``"dplloyd"`` was the stand-in.
FALLBACK = "lsh"
#: The modules whose source is a run's code version (:mod:`dpcore.reproduce._versions`).
VERSION_ROOTS = ("dpcore.reproduce.friendlycore", "dpcore.reproduce._friendlycore_covariance")
#: The paper's figures and the saved panels each is drawn from: one code version per figure.
FIGURES = {"Fig. 5": ("f5r", "f5d", "f5n"), "Fig. 6": ("f6", "f6r"), "Fig. 7": ("f7", "f7r"),
           "App. A": ("cov",)}


RAW_FILES = ("f5r", "f5d", "f5n", "f6", "f6r", "f7", "f7r", "cov")


CLUSTERING_PANELS = ("f6", "f6r", "f7", "f7r")


def withdraw_mixed(raw: dict[str, pd.DataFrame]) -> tuple[dict[str, pd.DataFrame],
                                                           dict[str, str]]:
    """``raw`` without the figures whose runs mix code versions, and why each was withdrawn
    (the refusal's message): a report can then show what is of one version and say what is
    missing, instead of drawing mixed runs together."""
    kept, withdrawn = dict(raw), {}
    for fig, panels in FIGURES.items():
        try:
            check_one_version(raw, {fig: panels})
        except MixedVersionsError as exc:
            withdrawn[fig] = str(exc)
            for p in panels:
                kept.pop(p, None)
    return kept, withdrawn


def run_stamp() -> tuple[str, str]:
    """(code version, git commit) of this checkout, taken when a run starts: edits made while it
    runs do not relabel it."""
    return code_version(VERSION_ROOTS), git_commit()


def stamp_runs(raw: dict[str, pd.DataFrame], fallback: str,
               version: tuple[str, str] | None = None) -> dict[str, pd.DataFrame]:
    """Every panel's rows with the run's code version and commit (``version`` from
    :func:`run_stamp` at the start; now if None) and, for the clustering panels, FC_Clustering's
    backup."""
    v, commit = version or run_stamp()
    return {k: stamp(df.assign(fc_fallback=fallback) if k in CLUSTERING_PANELS else df,
                     v, commit) for k, df in raw.items()}


def load_raw(folder: Path) -> dict[str, pd.DataFrame]:
    """The saved panels in ``folder``; rows saved before versioning get
    ``unrecorded@<commit that first stored them>`` from git (``_versions``), so a figure whose
    repetitions were made at different times is still recognised as mixed."""
    raw = {}
    for k in RAW_FILES:
        f = folder / f"friendlycore_{k}.csv.gz"
        if not f.exists():
            continue
        df = pd.read_csv(f)
        if "code_version" not in df:
            keys = [c for c in df.columns if c not in RESULT_COLUMNS]
            try:
                df["code_version"] = versions_from_history(f, keys).to_numpy()
            except (OSError, ValueError, RuntimeError, subprocess.SubprocessError):
                pass  # not in a git checkout: one "unrecorded" version
        raw[k] = df
    return raw


#: Columns holding a run's result or provenance (not its setting).
RESULT_COLUMNS = ("error", "loss", "failure", "fc_success", "fc_core_kept", "x", "y",
                  "nearest_true", "code_version", "git_commit", "fc_fallback", "dist",
                  "nonprivate_dist", "seconds", "scale_gap", "epsilon_total", "delta_total")


def _topup_jobs(seed: int, fallback: str, runners) -> list[tuple]:
    """(panel, method counted, setting columns, runner(setting, reps, rng)) for the panels that
    :func:`top_up` extends; each runner makes every method of its group on the same data."""
    figure6, figure6_lsh = runners.figure6, runners.figure6_lsh
    figure7_left, figure7_left_lsh = runners.figure7_left, runners.figure7_left_lsh
    return [
        ("f6", "FC_Clustering", ("n", "reading"),
         lambda s, k, g: figure6([int(s[0])], reps=k, reading=s[1], rng=g, fallback=fallback)),
        ("f6", "LSH_Clustering ε=2", ("n", "reading"),
         lambda s, k, g: figure6_lsh([int(s[0])], reps=k, reading=s[1], rng=g)),
        ("f7", "FC_Clustering (PCA oracle)", ("d",),
         lambda s, k, g: figure7_left([int(s[0])], reps=k, rng=g, fallback=fallback)),
        ("f7", "LSH_Clustering ε=2", ("d",),
         lambda s, k, g: figure7_left_lsh([int(s[0])], reps=k, rng=g)),
    ]


def top_up(raw: dict[str, pd.DataFrame], reps: int = 30, *, runners, seed: int = 0,
           save: Path | None = None, progress: bool = False) -> dict[str, pd.DataFrame]:
    """Add repetitions to stored Fig. 6 / Fig. 7 left runs until every setting has ``reps``.

    The panels draw their repetitions from one sequential stream, so the missing repetitions
    ``h … reps − 1`` of a setting (the ``i``-th of its panel, job ``j`` of
    :func:`_topup_jobs`) come from their own stream ``default_rng([seed, 1000 + j, i, h])``:
    independent of the stored ones, and the same on every top-up of the same stored runs. The
    new rows are numbered on from the stored repetitions; with ``save`` (a folder) each panel
    is written to ``friendlycore_<panel>.csv.gz`` after every setting, so a stopped run keeps
    what it finished. New rows carry this checkout's code version; a top-up of runs of another
    version raises :class:`~dpcore.reproduce._versions.MixedVersionsError` before running
    anything (it would mix versions in one figure).
    """
    if reps < 1:
        raise ValueError(f"reps must be ≥ 1, got {reps}")
    raw = dict(raw)
    now = run_stamp()
    have_versions = check_one_version(raw, {"Figs. 6 / 7 left": ("f6", "f7")})
    version = now[0]
    stale = {v for v in have_versions.values() if v != version}
    if stale:
        raise MixedVersionsError(
            f"the saved Fig. 6 / 7 left runs are of code version {', '.join(sorted(stale))}, this "
            f"checkout is {version}: a top-up would mix them; re-run the figures instead")
    fallback = raw["f6"]["fc_fallback"].iloc[0] if "fc_fallback" in raw.get(
        "f6", pd.DataFrame()) else FALLBACK
    for j, (panel, method, cols, run) in enumerate(_topup_jobs(seed, fallback, runners)):
        df = raw.get(panel)
        if df is None or df.empty:
            continue
        settings = df[list(cols)].drop_duplicates().sort_values(list(cols))
        for i, setting in enumerate(settings.itertuples(index=False)):
            sel = df["method"] == method
            for col, v in zip(cols, setting, strict=True):
                sel &= df[col] == v
            have = int(sel.sum())
            if have >= reps:
                continue
            t0 = time.perf_counter()
            new = run(tuple(setting), reps - have, np.random.default_rng([seed, 1000 + j, i, have]))
            new = stamp_runs({panel: new}, fallback, now)[panel]
            new["rep"] += have
            df = raw[panel] = pd.concat([df, new], ignore_index=True)
            if save is not None:
                df.to_csv(save / f"friendlycore_{panel}.csv.gz", index=False)
            if progress:
                where = dict(zip(cols, setting, strict=True))
                print(f"{panel} {method} {where}: repetitions {have}…{reps - 1} in "
                      f"{time.perf_counter() - t0:.0f} s", flush=True)
    return raw
