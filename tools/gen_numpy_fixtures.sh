#!/usr/bin/env bash
# Regenerate the NumPy / array-api fixtures in tests/fixtures/ (see tools/numpy.md).
#
#   tools/gen_numpy_fixtures.sh [extra args for gen_numpy_fixtures.py, e.g. --only numpy1]
#
# Creates (if missing, or if the requirements file changed) one venv per library with the
# pinned versions:
#   tools/.venv-numpy2     tools/requirements-numpy2.txt     (NumPy 2.x)
#   tools/.venv-numpy1     tools/requirements-numpy1.txt     (NumPy 1.26)
#   tools/.venv-array-api  tools/requirements-array-api.txt  (array-api-strict)
# and runs tools/gen_numpy_fixtures.py, which starts one subprocess per task with the
# matching interpreter.
#
# Environment:
#   PYTHON=/path/to/python3          interpreter that creates the venvs (default python3)
#   PYTHON_NUMPY1=/path/to/python3   interpreter for the NumPy 1.26 venv (default $PYTHON;
#                                    numpy 1.26.4 has wheels for CPython 3.9-3.12 only)
#   VENV_NUMPY2=, VENV_NUMPY1=, VENV_ARRAY_API=/path/to/venv
#                                    use an existing venv instead of creating one
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"

source "$here/venv.sh"

py="${PYTHON:-python3}"
py_numpy2="$(setup_venv numpy2 "${VENV_NUMPY2:-}" "$py")"
py_numpy1="$(setup_venv numpy1 "${VENV_NUMPY1:-}" "${PYTHON_NUMPY1:-$py}")"
py_array_api="$(setup_venv array-api "${VENV_ARRAY_API:-}" "$py")"

"$py_numpy2" -c 'import numpy, platform; print("numpy2: python", platform.python_version(), "numpy", numpy.__version__)' >&2
"$py_numpy1" -c 'import numpy, platform; print("numpy1: python", platform.python_version(), "numpy", numpy.__version__)' >&2
"$py_array_api" -c 'import array_api_strict as xp, numpy, platform; print("array-api: python", platform.python_version(), "array-api-strict", xp.__version__, "api", xp.__array_api_version__, "numpy", numpy.__version__)' >&2

cd "$repo"
exec "$py_numpy2" "$here/gen_numpy_fixtures.py" \
    --python "numpy2=$py_numpy2" --python "numpy1=$py_numpy1" --python "array-api=$py_array_api" "$@"
