#!/usr/bin/env bash
# Regenerate the TensorFlow fixtures in tests/fixtures/ (see tools/tensorflow.md).
#
#   tools/gen_tensorflow_fixtures.sh [extra args for gen_tensorflow_fixtures.py]
#
# Creates tools/.venv-tensorflow (if missing) with the pinned versions from
# tools/requirements-tensorflow.txt and runs tools/gen_tensorflow_fixtures.py with it.
# Set PYTHON_VENV=/path/to/venv to use an existing venv instead, and
# PYTHON=/path/to/python3 to choose the interpreter that creates the venv.
set -euo pipefail
export TF_CPP_MIN_LOG_LEVEL=3 TF_ENABLE_ONEDNN_OPTS=0

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"

if [[ -n "${PYTHON_VENV:-}" ]]; then
    venv="$PYTHON_VENV"
    if [[ ! -x "$venv/bin/python" ]]; then
        echo "PYTHON_VENV=$venv has no bin/python" >&2
        exit 1
    fi
else
    venv="$here/.venv-tensorflow"
    stamp="$venv/.requirements-tensorflow.txt"
    if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$here/requirements-tensorflow.txt" "$stamp"; then
        echo "setting up $venv" >&2
        "${PYTHON:-python3}" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --upgrade pip
        "$venv/bin/python" -m pip install --quiet -r "$here/requirements-tensorflow.txt"
        cp "$here/requirements-tensorflow.txt" "$stamp"
    fi
fi

"$venv/bin/python" -c 'import tensorflow as tf, numpy, ml_dtypes; print("using tensorflow", tf.__version__, "numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)' >&2
cd "$repo"
exec "$venv/bin/python" "$here/gen_tensorflow_fixtures.py" "$@"
