#!/bin/sh
# Build the separate diffprivlib environment at .venv-diffprivlib (repository root).
# Usage: sh benchmarks/diffprivlib_env/build.sh [python]   (default: python3.11 or python3)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
py=${1:-$(command -v python3.11 || command -v python3)}
"$py" -m venv "$root/.venv-diffprivlib"
"$root/.venv-diffprivlib/bin/python" -m pip install --quiet --upgrade pip
"$root/.venv-diffprivlib/bin/python" -m pip install --quiet -r "$here/requirements.txt"
"$root/.venv-diffprivlib/bin/python" -c "import diffprivlib, sklearn; print('diffprivlib', diffprivlib.__version__, 'scikit-learn', sklearn.__version__)"
