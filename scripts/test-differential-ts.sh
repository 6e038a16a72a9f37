#!/usr/bin/env bash
# The differential test against the real TypeScript SDK: `memfs exec --dialect typescript-sdk`
# against BetaLocalFilesystemMemoryTool of @anthropic-ai/sdk@1.12.0, command by command, byte for
# byte (tests/differential/differential-ts.mjs). Prints the commands compared, the differences
# (each explained deviation by class, docs/COMPAT.md) and the unexplained ones; exits 1 on any
# unexplained difference.
#
#   scripts/test-differential-ts.sh            # after `cargo build -p memfs-cli`
#   scripts/test-differential-ts.sh --coverage # extra arguments go to differential-ts.mjs
#
# Installs what it needs: the SDK, pinned by tests/differential/ts/package-lock.json (`npm ci`
# there; node_modules is kept, git-ignored, and reinstalled only when the lock file changes).
# Builds nothing: it runs target/debug/memfs (or $MEMFS_BIN). MEMFS_DIFF_SEED, MEMFS_DIFF_SESSIONS
# and MEMFS_DIFF_COMMANDS change the seed (default 20261121), the sessions (20) and the random
# commands per session (150): 3,000 random commands, plus the state-check views.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

memfs="${MEMFS_BIN:-$repo/target/debug/memfs}"
if [ ! -x "$memfs" ]; then
    echo "test-differential-ts.sh: $memfs is missing; run cargo build -p memfs-cli first" >&2
    exit 1
fi
command -v node >/dev/null 2>&1 || { echo "test-differential-ts.sh: node (20 or later) is required" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "test-differential-ts.sh: npm is required" >&2; exit 1; }

ts="$repo/tests/differential/ts"
stamp="$ts/node_modules/.memfs-lock.sha256"
want="$(sha256sum "$ts/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    (cd "$ts" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
fi

# LC_ALL=C: the SDK writes 999,999 with toLocaleString(), in the locale Node.js starts with.
LC_ALL=C exec node tests/differential/differential-ts.mjs --memfs "$memfs" \
    --seed "${MEMFS_DIFF_SEED:-20261121}" --sessions "${MEMFS_DIFF_SESSIONS:-20}" \
    --commands "${MEMFS_DIFF_COMMANDS:-150}" "$@"
