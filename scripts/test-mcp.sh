#!/usr/bin/env bash
# `memfs mcp` against the official MCP Python SDK (PyPI `mcp`, pinned in scripts/python-env.sh):
# its stdio client, and its streamable-HTTP client against `memfs mcp --http 127.0.0.1:0 --tokens
# FILE` (a free port on loopback, a bearer token, stopped with SIGTERM by the test). Every store is made in a temporary folder
# and removed afterwards. See tests/mcp/client.py.
#
#   scripts/test-mcp.sh                   # both transports, target/debug/memfs (built if needed)
#   scripts/test-mcp.sh --transport stdio
set -euo pipefail
cd "$(dirname "$0")/.."

python="$(scripts/python-env.sh | tail -n 1)"
cargo build -p memfs-cli --locked --quiet
"$python" tests/mcp/client.py --memfs target/debug/memfs "$@"
