"""The CLI imports only what a command needs (issue 23.7).

``dpcore run dplloyd`` paid for scikit-learn (the estimators' base class) and for every mechanism
module of the registry (scipy.stats through the sensitivity sampler) before fitting anything.
Each check runs in a fresh interpreter: the test session itself has scikit-learn loaded.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.slow
def test_cli_run_of_dplloyd_imports_neither_sklearn_nor_other_mechanisms(tmp_path):
    """Catches an eager scikit-learn import (the base class), a registry that loads every row
    at import or when a name is checked, and the run configuration's eager sensitivity import.
    The fit itself must still work (released centres on stdout)."""
    data = tmp_path / "small.csv"
    X = np.random.default_rng(0).normal(size=(200, 3))
    np.savetxt(data, X, delimiter=",", header="a,b,c", comments="")
    out = _python(f"""
        import sys
        from dpcore.cli import main
        rc = main(["run", "dplloyd", {str(data)!r}, "--radius", "10", "--epsilon", "1",
                   "-k", "3"])
        print("rc", rc)
        for m in ("sklearn", "scipy.stats", "dpcore.mechanisms.sensitivity",
                  "dpcore.mechanisms.friendlycore", "dpcore.mechanisms.baselines"):
            print(m, m in sys.modules)
    """)
    assert "rc 0" in out and "centers (3, 3)" in out
    for m in ("sklearn", "scipy.stats", "dpcore.mechanisms.sensitivity",
              "dpcore.mechanisms.friendlycore", "dpcore.mechanisms.baselines"):
        assert f"{m} False" in out, out


@pytest.mark.slow
def test_estimator_is_a_sklearn_estimator_from_its_first_sklearn_call():
    """Without scikit-learn loaded, the first ``get_params``/``repr``/``clone``/pickle loads it
    and makes every estimator a ``BaseEstimator`` and a clusterer (tags), with scikit-learn's
    own behaviour. Catches hooks that recurse, answer differently from scikit-learn or leave a
    subclass's MRO stale."""
    out = _python("""
        import pickle, sys
        from dpcore.mechanisms.lloyd.estimator import DPLloyd
        from dpcore.estimators.dpkmeans import DPKMeans
        e = DPLloyd(3, epsilon=1.0, radius=2.0, n_iter=4)
        assert "sklearn" not in sys.modules
        e._validate_params()  # fit's validation needs no scikit-learn
        assert "sklearn" not in sys.modules
        print(repr(e))
        from sklearn.base import BaseEstimator, ClusterMixin, clone, is_clusterer
        assert isinstance(e, BaseEstimator) and isinstance(DPKMeans(2, epsilon=1.0), ClusterMixin)
        c = clone(e)
        assert c.get_params() == e.get_params() and c is not e
        assert pickle.loads(pickle.dumps(e)).get_params() == e.get_params()
        assert is_clusterer(e) and is_clusterer(DPKMeans(2, epsilon=1.0))
        e.set_params(n_iter=5)
        assert e.n_iter == 5
        print("ok")
    """)
    assert "DPLloyd(epsilon=1.0, n_clusters=3, n_iter=4, radius=2.0)" in out
    assert out.strip().endswith("ok")


@pytest.mark.slow
def test_registry_tables_load_a_row_when_asked_and_all_when_listed():
    """Asking for one mechanism imports its module only; listing the table imports every row;
    a name is in exactly one of MECHANISMS and UNAVAILABLE. Catches a lazy table that forgets
    rows (listing) or loads them all on a single lookup."""
    out = _python("""
        import sys
        from dpcore.release import registry as r
        assert "dplloyd" in r.MECHANISMS and r.get_mechanism("dplloyd").name == "dplloyd"
        print("sens", "dpcore.mechanisms.sensitivity" in sys.modules)
        print("names", sorted(r.mechanism_names()))
        names = set(r.MECHANISMS) | set(r.UNAVAILABLE)
        print("listed", sorted(names))
        assert not set(r.MECHANISMS) & set(r.UNAVAILABLE)
        print("sens2", "dpcore.mechanisms.sensitivity" in sys.modules)
    """)
    assert "sens False" in out and "sens2 True" in out
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines())
    assert lines["names"] == lines["listed"]
