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

if [[ -n "${PYTHON_VENV:-}" ]]; then
    venv="$PYTHON_VENV"
    if [[ ! -x "$venv/bin/python" ]]; then
        echo "PYTHON_VENV=$venv has no bin/python" >&2
        exit 1
    fi
else
    venv="$here/.venv-torch"
    stamp="$venv/.requirements-torch.txt"
    if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$here/requirements-torch.txt" "$stamp"; then
        echo "setting up $venv" >&2
        "${PYTHON:-python3}" -m venv "$venv"
        "$venv/bin/python" -m pip install --quiet --upgrade pip
        # torch pulls several GB of CUDA wheels from PyPI; only the CPU is used.
        "$venv/bin/python" -m pip install --quiet -r "$here/requirements-torch.txt"
        cp "$here/requirements-torch.txt" "$stamp"
    fi
fi

CUDA_VISIBLE_DEVICES= PYTHONWARNINGS=ignore "$venv/bin/python" -c 'import torch, numpy; print("using torch", torch.__version__, "numpy", numpy.__version__)' >&2
cd "$repo"
exec "$venv/bin/python" "$here/gen_torch_fixtures.py" "$@"
