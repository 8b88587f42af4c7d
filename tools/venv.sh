# Sourced by the tools/gen_*_fixtures.sh scripts.
#
# setup_venv NAME OVERRIDE_DIR INTERPRETER -> prints the venv's python
#   OVERRIDE_DIR non-empty: use that existing venv. Otherwise create or refresh
#   tools/.venv-NAME with INTERPRETER from tools/requirements-NAME.txt (pinned), redoing the
#   install whenever the requirements file changes.
setup_venv() {
    local name="$1" override="$2" interp="$3"
    local tools
    tools="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
    local req="$tools/requirements-$name.txt" venv
    if [[ -n "$override" ]]; then
        venv="$override"
        if [[ ! -x "$venv/bin/python" ]]; then
            echo "$venv has no bin/python" >&2
            exit 1
        fi
    else
        venv="$tools/.venv-$name"
        local stamp="$venv/.requirements-$name.txt"
        if [[ ! -x "$venv/bin/python" ]] || ! cmp -s "$req" "$stamp"; then
            echo "setting up $venv" >&2
            "$interp" -m venv "$venv"
            "$venv/bin/python" -m pip install --quiet --upgrade pip >&2
            "$venv/bin/python" -m pip install --quiet -r "$req" >&2
            cp "$req" "$stamp"
        fi
    fi
    echo "$venv/bin/python"
}
