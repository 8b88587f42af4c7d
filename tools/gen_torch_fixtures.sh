#!/usr/bin/env bash
# Regenerate the PyTorch fixtures in tests/fixtures/torch/ (see tools/torch.md).
# A one-off developer step: the fixtures are committed, CI never runs this.
#
#   tools/gen_torch_fixtures.sh [extra args for gen_torch_fixtures.py]
#
# Creates tools/.venv-torch (if missing) with the pinned versions from
# tools/requirements-torch.txt and runs tools/gen_torch_fixtures.py with it.
# Set PYTHON_VENV=/path/to/venv to use an existing venv instead, and
# PYTHON=/path/to/python3 to choose the interpreter that creates the venv.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(dirname "$here")"

source "$here/venv.sh"
py="$(setup_venv torch "${PYTHON_VENV:-}" "${PYTHON:-python3}")"

CUDA_VISIBLE_DEVICES= PYTHONWARNINGS=ignore "$py" -c 'import torch, numpy; print("using torch", torch.__version__, "numpy", numpy.__version__)' >&2
cd "$repo"
exec "$py" "$here/gen_torch_fixtures.py" "$@"
