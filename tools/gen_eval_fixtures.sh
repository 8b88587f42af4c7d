#!/usr/bin/env bash
# Regenerate tests/fixtures/eval/ (eval's conformance fixtures; see tools/README.md).
#
#   tools/gen_eval_fixtures.sh [extra args for gen_eval_fixtures.py]
#
# Uses tools/.venv-jax (created if missing from tools/requirements-jax.txt); set
# PYTHON_VENV=/path/to/venv to use an existing venv instead.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"

source "$here/venv.sh"
py="$(setup_venv jax "${PYTHON_VENV:-}" "${PYTHON:-python3}")"
cd "$repo"
exec "$py" "$here/gen_eval_fixtures.py" "$@"
