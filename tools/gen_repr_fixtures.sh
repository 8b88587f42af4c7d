#!/usr/bin/env bash
# Regenerate the array-printing fixtures (tests/fixtures/repr/*.json) (see tools/README.md).
#
#   tools/gen_repr_fixtures.sh [extra args for gen_repr_fixtures.py]
#
# Creates tools/.venv-jax (if missing) with the pinned versions from
# tools/requirements-jax.txt and runs tools/gen_repr_fixtures.py with it.
# Set PYTHON_VENV=/path/to/venv to use an existing venv instead, and
# PYTHON=/path/to/python3 to choose the interpreter that creates the venv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"

source "$here/venv.sh"
py="$(setup_venv jax "${PYTHON_VENV:-}" "${PYTHON:-python3}")"

"$py" -c 'import jax, jaxlib, numpy, ml_dtypes; print("using jax", jax.__version__, "jaxlib", jaxlib.__version__, "numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)' >&2
cd "$repo"
exec "$py" "$here/gen_repr_fixtures.py" "$@"
