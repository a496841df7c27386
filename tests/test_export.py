"""Exported Python scripts and notebooks re-run to the same output as the dashboard."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from apptest_helpers import capture_downloads, clear_caches, errors, new_app

from dpcore.app.export import CSV_MARKER, notebook, python_script

pytestmark = pytest.mark.filterwarnings(
    "ignore::dpcore.privacy.guarantees.PrivacyLeakWarning", "ignore::UserWarning"
)


@pytest.fixture(autouse=True)
def _clear():
    clear_caches()


def _csv_after_marker(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text.split(CSV_MARKER, 1)[1].strip()))


def _run_script(code: str, tmp_path, *args: str) -> pd.DataFrame:
    path = tmp_path / "exported.py"
    path.write_text(code)
    out = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    return _csv_after_marker(out.stdout)


def _run_notebook(nb_text: str, tmp_path) -> pd.DataFrame:
    nb = json.loads(nb_text)
    assert nb["nbformat"] == 4 and nb["cells"][0]["cell_type"] == "markdown"
    ns: dict = {"__name__": "exported_notebook"}
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.chdir(tmp_path):
        for cell in nb["cells"]:
            if cell["cell_type"] == "code":
                exec(compile(cell["source"], "<cell>", "exec"), ns)
    return _csv_after_marker(buf.getvalue())


def test_importance_page_script_and_notebook_reproduce_the_centres(monkeypatch, tmp_path):
    downloads = capture_downloads(monkeypatch)
    at = new_app({"sampler": "coreset", "seed": "3"})
    at.switch_page("pages/importance.py").run()
    assert not at.exception and not errors(at)
    app = pd.read_csv(io.StringIO(downloads["imp_centers_csv"]))  # the CLI's layout
    assert app.columns.tolist() == ["longitude", "latitude", "algorithm", "guarantee"]
    assert set(app["algorithm"]) == {"dplloyd"}
    app = app.drop(columns=["algorithm", "guarantee"])
    for got in (_run_script(downloads["imp_config_py"], tmp_path),
                _run_notebook(downloads["imp_config_nb"], tmp_path)):
        assert set(got["output"]) == {"centers"}
        np.testing.assert_allclose(got[list(app.columns)].to_numpy(), app.to_numpy(), rtol=1e-9,
                                   atol=1e-9)


def test_upload_with_public_bounds_script_reproduces_clustering(monkeypatch, tmp_path):
    from sklearn import datasets

    frame = datasets.load_iris(as_frame=True).frame
    csv = frame.to_csv(index=False)
    (tmp_path / "iris.csv").write_text(csv)
    downloads = capture_downloads(monkeypatch)
    at = new_app({"k": "3"})
    at.file_uploader(key="upload").set_value(("iris.csv", csv.encode(), "text/csv")).run()
    at.switch_page("pages/clustering.py").run()
    assert not at.exception and not errors(at)
    app = pd.read_csv(io.StringIO(downloads["clu_centers_csv"]))
    # the CLI's layout: the table's columns, then the registry variant's label (two variants of
    # one mechanism stay apart, issue 27.8) and the guarantee (empty for the baseline)
    assert app.columns.tolist() == [*frame.columns[:4], "algorithm", "guarantee"]
    assert "k-means (non-private)" in set(app["algorithm"])
    assert app.loc[app["algorithm"] == "k-means (non-private)", "guarantee"].isna().all()
    dpl = app[app["algorithm"] == "DP k-means (recommended)"]
    assert len(dpl) == 3 and dpl["guarantee"].str.contains("ε").all()
    app = dpl.drop(columns=["algorithm", "guarantee"])
    script = downloads["clu_cfg_0_py"]
    assert "DESCRIPTION" in script and "apply_description" in script
    got = _run_script(script, tmp_path, "iris.csv")
    np.testing.assert_allclose(got[list(app.columns)].to_numpy(), app.to_numpy(), rtol=1e-9,
                               atol=1e-9)


def test_script_without_a_description_has_none_and_names_its_mechanism():
    from dpcore.release.runconfig import make_config

    cfg = make_config("dplloyd", {"n_clusters": 2, "epsilon": 1.0, "radius": 1.0},
                      {"source": "cities", "columns": ["longitude", "latitude"], "radius": 201.0,
                       "center": [0.0, 0.0]}, 5)
    code = python_script(cfg)
    assert "dplloyd" in code.splitlines()[0] and "DESCRIPTION = json.loads(r'''null''')" in code
    compile(code, "exported.py", "exec")
    assert json.loads(notebook(cfg))["cells"][2]["source"].startswith("# The run configuration")
