#!/usr/bin/env bash
# The SDK adapters of examples/ with their real SDKs and tool runners, against the scripted
# Messages API server (tests/scripted/messages_server.py): tests/sdk/adapters.py.
#
#   scripts/test-sdk-adapters.sh            # after `cargo build -p memfs-cli`
#
# Installs what it needs: the Python SDK (anthropic==2.10.0, in the venv of
# scripts/python-env.sh) and the TypeScript SDK with tsx and tsc (`npm ci` in examples/typescript,
# versions pinned by its package-lock.json; node_modules is kept, git-ignored, and reinstalled
# only when the lock file changes). Builds nothing: it runs target/debug/memfs (or $MEMFS_BIN).
# Everything it starts listens on 127.0.0.1 and is stopped before it exits.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

memfs="${MEMFS_BIN:-$repo/target/debug/memfs}"
if [ ! -x "$memfs" ]; then
    echo "test-sdk-adapters.sh: $memfs is missing; run cargo build -p memfs-cli first" >&2
    exit 1
fi
command -v node >/dev/null 2>&1 || { echo "test-sdk-adapters.sh: node (20 or later) is required" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "test-sdk-adapters.sh: npm is required" >&2; exit 1; }

python="$(scripts/python-env.sh | tail -n 1)"

ts="$repo/examples/typescript"
stamp="$ts/node_modules/.memfs-lock.sha256"
want="$(sha256sum "$ts/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
fi

echo "-- type-checking examples/typescript (tsc)"
(cd "$ts" && node_modules/.bin/tsc -p .)

exec "$python" tests/sdk/adapters.py --memfs "$memfs"
