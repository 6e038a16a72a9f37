#!/usr/bin/env bash
# The browser tests of `memfs ui` (tests/ui/ui.test.mjs): playwright-core driving Debian's
# headless Chromium against the real server, each test on a fresh store in a temp folder, every
# write made in the page checked through the engine (`memfs cat`, `memfs log --json`).
#
#   scripts/test-ui.sh                       # after `cargo build -p memfs-cli`
#   MEMFS_UI_SCREENSHOTS=1 scripts/test-ui.sh   # also rewrite docs/ui-tree.png, docs/ui-timeline.png
#   scripts/test-ui.sh --test-name-pattern conflict   # extra arguments go to `node --test`
#
# Installs what it needs: Debian's chromium-headless-shell (apt-get, only when
# /usr/bin/chromium-headless-shell is missing) and playwright-core, pinned by
# tests/ui/package-lock.json (`npm ci` there; node_modules is kept, git-ignored, and reinstalled
# only when the lock file changes). Builds nothing: it runs target/debug/memfs (or $MEMFS_BIN).
# A failing test leaves a screenshot in target/ui-test-failures/.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

memfs="${MEMFS_BIN:-$repo/target/debug/memfs}"
if [ ! -x "$memfs" ]; then
    echo "test-ui.sh: $memfs is missing; run cargo build -p memfs-cli first" >&2
    exit 1
fi
command -v node >/dev/null 2>&1 || { echo "test-ui.sh: node (20 or later) is required" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || { echo "test-ui.sh: npm is required" >&2; exit 1; }

chromium=/usr/bin/chromium-headless-shell
if [ ! -x "$chromium" ]; then
    echo "test-ui.sh: installing chromium-headless-shell" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { apt-get install -y -qq --no-install-recommends chromium-headless-shell >/dev/null; }
    # Without package lists (a fresh machine) the install fails: update once and retry.
    apt_install 2>/dev/null || { apt-get update -qq >/dev/null && apt_install; }
fi

ui="$repo/tests/ui"
stamp="$ui/node_modules/.memfs-lock.sha256"
want="$(sha256sum "$ui/package-lock.json" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    (cd "$ui" && npm ci --no-audit --no-fund --loglevel=error)
    echo "$want" > "$stamp"
fi

MEMFS_BIN="$memfs" exec node --test "$@" tests/ui/ui.test.mjs
