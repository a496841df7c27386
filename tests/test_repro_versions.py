"""One code version per figure (issue 24): every saved run records its version; a rebuild or a
top-up that would mix versions in one figure is refused with the runs named."""

from __future__ import annotations

import pandas as pd
import pytest

from dpcore.reproduce import _versions as V
from dpcore.reproduce import friendlycore as fc_rep
from dpcore.reproduce._friendlycore_store import FIGURES, VERSION_ROOTS, stamp_runs


def _f6(version: str | None, reps=range(3), method="FC_Clustering") -> pd.DataFrame:
    df = pd.DataFrame({"n": 10_000, "reading": "sd", "rep": list(reps), "method": method,
                       "loss": 0.1, "fc_success": True})
    return df if version is None else df.assign(code_version=version)


def test_a_figure_of_two_versions_is_refused_naming_the_runs():
    """The review's case: repetitions 0–24 from one version, 25–29 from another. Bug: a rebuild
    that draws them together (or an error that does not say which runs)."""
    raw = {"f6": pd.concat([_f6("aaa", range(25)), _f6("bbb", range(25, 30))])}
    with pytest.raises(V.MixedVersionsError) as err:
        V.check_one_version(raw, FIGURES)
    msg = str(err.value)
    assert "Fig. 6" in msg and "aaa" in msg and "bbb" in msg
    assert "reps 0–24" in msg and "reps 25–29" in msg
    # the right panel counts as the same figure: one version there, another on the left
    raw = {"f6": _f6("aaa"), "f6r": pd.DataFrame({"reading": ["sd"], "who": ["x"],
                                                   "code_version": ["bbb"]})}
    with pytest.raises(V.MixedVersionsError):
        V.check_one_version(raw, FIGURES)
    # unrecorded rows next to recorded ones are two versions too
    with pytest.raises(V.MixedVersionsError, match="unrecorded"):
        V.check_one_version({"f6": pd.concat([_f6(None), _f6("aaa", range(3, 6))])}, FIGURES)


def test_one_version_per_figure_passes_and_figures_may_differ():
    raw = {"f6": _f6("aaa"), "f7": pd.DataFrame({"d": [32], "rep": [0], "method": ["m"],
                                                 "code_version": ["bbb"]})}
    assert V.check_one_version(raw, FIGURES) == {"Fig. 6": "aaa", "Fig. 7": "bbb"}


def test_the_rebuild_command_refuses_mixed_saved_runs(tmp_path, capsys):
    """``--from-raw`` on saved runs of two versions exits 2 with the message, no traceback."""
    pd.concat([_f6("aaa", range(2)), _f6("bbb", range(2, 4))]).to_csv(
        tmp_path / "friendlycore_f6.csv.gz", index=False)
    assert fc_rep.main(["--from-raw", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    assert "refusing to rebuild" in capsys.readouterr().err


def test_a_top_up_of_another_versions_runs_is_refused_before_running():
    """Bug: topping up stored runs of an older version (the review's mixed Fig. 6)."""
    with pytest.raises(V.MixedVersionsError, match="would mix"):
        fc_rep.top_up({"f6": _f6("0ld0ld0ld0ld")}, 5)


def test_runs_are_stamped_with_the_source_hash_and_commit():
    """The version is a hash of the runner and the dpcore modules it imports: it changes when a
    mechanism's source does, not when an unrelated module does."""
    out = stamp_runs({"f6": _f6(None), "f5r": pd.DataFrame({"R": [1.0]})}, "lsh")
    v = V.code_version(VERSION_ROOTS)
    assert set(out["f6"].code_version) == {v} and set(out["f5r"].code_version) == {v}
    assert set(out["f6"].fc_fallback) == {"lsh"} and "fc_fallback" not in out["f5r"]
    assert out["f6"].git_commit.iloc[0]
    names = {n for n, _ in V._closure(tuple(VERSION_ROOTS))}
    assert "dpcore.mechanisms.friendlycore.filters" in names
    assert "dpcore.mechanisms.maxcover.cover" not in names  # unrelated mechanisms: no new version
