"""Project-level rules that are cheap to check mechanically."""

import ast
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_dpcore_never_imports_streamlit():
    offenders = [p for p in (ROOT / "dpcore").rglob("*.py") if "streamlit" in _imports(p)]
    assert offenders == []


def test_no_global_numpy_seeding_in_package():
    pattern = re.compile(r"np\.random\.(seed|rand|randn|randint|normal|uniform|laplace|choice)\(")
    offenders = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "dpcore").rglob("*.py")
        if pattern.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_ci_runs_exactly_the_readme_test_command():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "make test    #" in readme and "make app     #" in readme
    assert re.search(r"^make test$", ci, flags=re.MULTILINE)
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^test: \$\(TEST_STAMP\)$", makefile, flags=re.MULTILINE)
    assert re.search(r"^app: \$\(STAMP\)$", makefile, flags=re.MULTILINE)


def test_make_app_installs_only_the_runtime():
    """`make app` installs `.` (no test tools); `make test` adds `.[test]` on top (issue 27.5)."""
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    recipes = dict(re.findall(r"^(\$\((?:TEST_)?STAMP\)):.*\n((?:\t.*\n)+)", makefile,
                              flags=re.MULTILINE))
    assert re.search(r"pip install .*-e \. ", recipes["$(STAMP)"])
    assert "[test]" not in recipes["$(STAMP)"]
    assert 'pip install --progress-bar on -e ".[test]"' in recipes["$(TEST_STAMP)"]
    assert re.search(r"^\$\(TEST_STAMP\): \$\(STAMP\)$", makefile, flags=re.MULTILINE)
    assert re.search(r"^HOST \?= 127\.0\.0\.1$", makefile, flags=re.MULTILINE)


def test_no_absolute_machine_paths_in_sources():
    pattern = re.compile(r"/(work|tmp|root|home)/[A-Za-z._]")
    tracked = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    offenders = [
        name
        for name in tracked
        if name.endswith((".py", ".md", ".toml", "Makefile", "run", ".txt", ".json"))
        and pattern.search((ROOT / name).read_text(encoding="utf-8", errors="ignore"))
    ]
    assert offenders == []
