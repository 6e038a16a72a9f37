#!/usr/bin/env bash
# Creates (idempotently) the Python virtualenv used by the Python-based tests, with the
# reference implementation `anthropic==2.10.0` (its BetaLocalFilesystemMemoryTool is the
# oracle of the `python-sdk` dialect).
#
#   scripts/python-env.sh            # venv at $MEMFS_VENV, default <repo>/.venv-sdk
#   "$MEMFS_VENV/bin/python" tests/differential/differential.py --memfs target/debug/memfs
#
# Prints only the venv's python path (last line), so callers can do
#   PY=$(scripts/python-env.sh)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${MEMFS_VENV:-$repo/.venv-sdk}"
python="${PYTHON:-python3}"

# Pinned requirements; add further test dependencies here.
requirements=(
    "anthropic==2.10.0"
    # The official MCP client (stdio and streamable HTTP): tests/mcp/client.py drives `memfs mcp`.
    "mcp==2.3.0"
    # The independent reader of format 1 (tests/format_reader), written from docs/FORMAT.md.
    "blake3==1.0.11"
    "xxhash==4.1.0"
    "cryptography==50.0.2"
)

if [ ! -x "$venv/bin/python" ]; then
    "$python" -m venv "$venv"
fi

# Install only what is missing or at another version (pip check-free, quick when satisfied).
missing=()
for req in "${requirements[@]}"; do
    name="${req%%==*}"
    want="${req#*==}"
    have="$("$venv/bin/python" -m pip show "$name" 2>/dev/null | sed -n 's/^Version: //p' || true)"
    if [ "$have" != "$want" ]; then
        missing+=("$req")
    fi
done
if [ "${#missing[@]}" -gt 0 ]; then
    "$venv/bin/python" -m pip install -q --disable-pip-version-check "${missing[@]}"
fi

echo "$venv/bin/python"
