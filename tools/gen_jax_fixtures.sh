#!/usr/bin/env bash
# Regenerate the JAX fixtures in tests/fixtures/ (see tools/README.md).
#
#   tools/gen_jax_fixtures.sh [extra args for gen_jax_fixtures.py]
#
# Creates tools/.venv-jax (if missing) with the pinned versions from
# tools/requirements-jax.txt and runs tools/gen_jax_fixtures.py with it.
# Set PYTHON_VENV=/path/to/venv to use an existing venv instead, and
# PYTHON=/path/to/python3 to choose the interpreter that creates the venv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"

if [[ -n "${PYTHON_VENV:-}" ]]; then
    venv="$PYTHON_VENV"
    if [[ ! -x "$venv/bin/python" ]]; then
        echo "PYTHON_VENV=$venv has no bin/python" >&2
        exit 1
    fi
else
    venv="$here/.venv-jax"
    stamp="$venv/.requirements-jax.txt"
    if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$here/requirements-jax.txt" "$stamp"; then
        echo "setting up $venv" >&2
        "${PYTHON:-python3}" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --upgrade pip
        "$venv/bin/python" -m pip install --quiet -r "$here/requirements-jax.txt"
        cp "$here/requirements-jax.txt" "$stamp"
    fi
fi

"$venv/bin/python" -c 'import jax, jaxlib, numpy, ml_dtypes; print("using jax", jax.__version__, "jaxlib", jaxlib.__version__, "numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)' >&2
cd "$repo"
exec "$venv/bin/python" "$here/gen_jax_fixtures.py" "$@"
