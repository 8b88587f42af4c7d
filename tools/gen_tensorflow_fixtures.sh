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

source "$here/venv.sh"
py="$(setup_venv tensorflow "${PYTHON_VENV:-}" "${PYTHON:-python3}")"

"$py" -c 'import tensorflow as tf, numpy, ml_dtypes; print("using tensorflow", tf.__version__, "numpy", numpy.__version__, "ml_dtypes", ml_dtypes.__version__)' >&2
cd "$repo"
exec "$py" "$here/gen_tensorflow_fixtures.py" "$@"
