"""The built wheel is a real package: installed alone, it has the sample data and the dashboard.

Builds the wheel from a copy of the checkout, installs it into a fresh virtual environment and,
from a folder outside the checkout, loads a bundled sample and starts ``dpcore app`` (issue 21.5,
issue 27.1 and 27.4 on the installed package). The fresh environment borrows the already
installed dependencies of the interpreter running the tests through a ``.pth`` file, so nothing
is downloaded to install it; dpcore itself must come from the wheel.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest
from server_helpers import (
    answers,
    free_port,
    gone,
    kill_group,
    listening_addresses,
    process_tree,
    sigterm_and_wait,
    wait_healthy,
)

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [pytest.mark.slow, pytest.mark.timeout(300)]

#: Left out of the copy the wheel is built from: environments, build output, caches, git.
NOT_SOURCES = shutil.ignore_patterns(
    ".git", ".venv*", "build", "dist", "*.egg-info", "_bundle", "__pycache__", ".pytest_cache",
    ".ruff_cache", ".hypothesis", "_data", "tmp",
)

#: Run by the fresh environment's Python outside the checkout: where dpcore and its files come
#: from, the cities sample, and one AppTest session of the installed dashboard (as
#: tests/apptest_helpers.new_app runs it: the navigation router, not the legacy pages/ one).
PROBE = """
import json, dpcore
import streamlit.testing.v1.app_test as app_test
from streamlit.runtime.pages_manager import PagesManager
from streamlit.testing.v1 import AppTest
from dpcore.data.datasets import load_sample, resource_root

class NavigationPagesManager(PagesManager):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        PagesManager.uses_pages_directory = False

app_test.PagesManager = NavigationPagesManager
at = AppTest.from_file(str(resource_root() / "app.py"), default_timeout=60).run()
print(json.dumps({
    "dpcore": dpcore.__file__, "root": str(resource_root()), "rows": len(load_sample("cities")),
    "exceptions": [e.value for e in at.exception], "errors": [e.value for e in at.error],
    "title": [t.value for t in at.title], "subheader": [h.value for h in at.subheader],
    "charts": len(at.get("plotly_chart")), "pages": sorted(at.session_state["nav_pages"]),
}))
"""


def _build_wheel(dest: Path, tmp: Path) -> Path:
    """``pip wheel`` of a copy of the checkout (the checkout gets no build/ or egg-info)."""
    src = tmp / "src"
    shutil.copytree(ROOT, src, ignore=NOT_SOURCES)
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dest),
                    str(src)], check=True, capture_output=True, text=True, timeout=180)
    (wheel,) = dest.glob("dpcore-*.whl")
    return wheel


def _fresh_venv(where: Path, wheel: Path) -> Path:
    """A virtual environment holding the wheel; the dependencies come from this interpreter."""
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    # pip of this interpreter installs into the fresh one; done before the .pth below exists, so
    # pip sees no other dpcore installed (the checkout's editable one) and installs the wheel.
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                    "--no-index", "-q", str(wheel)],
                   check=True, capture_output=True, text=True, timeout=120)
    site = subprocess.run([str(python), "-c",
                           "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          check=True, capture_output=True, text=True).stdout.strip()
    # Appended after the fresh site-packages: the wheel's dpcore wins. A path listed in a .pth is
    # not itself scanned for .pth files, so the editable install's finder stays out.
    borrowed = dict.fromkeys(sysconfig.get_path(k) for k in ("purelib", "platlib"))
    (Path(site) / "borrowed_dependencies.pth").write_text("\n".join(borrowed) + "\n")
    return where


def test_installed_wheel_has_the_samples_and_serves_the_dashboard(tmp_path):
    wheel = _build_wheel(tmp_path / "dist", tmp_path)
    env_dir = _fresh_venv(tmp_path / "venv", wheel)
    elsewhere = tmp_path / "elsewhere"  # not the checkout, nothing of dpcore beside it
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    env["HOME"] = str(tmp_path)  # no ~/.streamlit of the user's

    probe = subprocess.run([str(env_dir / "bin" / "python"), "-c", PROBE], cwd=elsewhere,
                           env=env, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr[-3000:]
    found = json.loads(probe.stdout.strip().splitlines()[-1])
    assert Path(found["dpcore"]).is_relative_to(env_dir), found  # the wheel's, not the checkout's
    assert Path(found["root"]) == Path(found["dpcore"]).parent / "_bundle"
    assert found["rows"] > 20_000
    # The installed dashboard runs: Data page on the cities sample, every page in the navigation.
    assert found["exceptions"] == [] and found["errors"] == [], found
    assert found["title"] == ["Data"] and "World cities" in found["subheader"][0]
    assert found["charts"] >= 1
    assert found["pages"] == sorted(f"pages/{p.name}" for p in (ROOT / "pages").glob("[!_]*.py"))

    port = free_port()
    proc = subprocess.Popen([str(env_dir / "bin" / "dpcore"), "app", "--port", str(port)],
                            cwd=elsewhere, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        body = wait_healthy(proc, port, timeout=60)
        if body != b"ok":
            kill_group(proc)
            pytest.fail(f"no dashboard on port {port} (exit code {proc.poll()}):\n"
                        f"{proc.stdout.read().decode(errors='replace')[-2000:]}")
        assert listening_addresses(proc.pid, port) == {"127.0.0.1"}
        tree = process_tree(proc.pid)
        assert any("_bundle" in " ".join(p.cmdline()) and "app.py" in " ".join(p.cmdline())
                   for p in tree)  # the installed app, not the checkout's
        sigterm_and_wait(proc, tree)
        assert not answers(port)
        assert [p.pid for p in tree if not gone(p)] == []
    finally:
        kill_group(proc)
