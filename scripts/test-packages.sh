#!/usr/bin/env bash
# The packages as a user installs them (issue 20):
#
# - Python: builds the wheel (maturin, from crates/memfs-python), installs it with the real SDK
#   (anthropic==2.10.0) into a fresh virtualenv, and runs tests/packages/python_package.py there;
# - Node: packs crates/memfs-node (its native addon, the workspace's build of the memfs-node
#   crate, debug info stripped) with `npm pack`, installs the tarball with the real SDK
#   (@anthropic-ai/sdk@1.12.0) into a fresh folder, and runs tests/packages/node_package.mjs there.
#
# Each runs the SDK's tool runners against the scripted Messages API server, the six commands,
# stores that cannot open, two tools sharing a store, and checks that the event loop goes on.
#
#   scripts/test-packages.sh            # after `cargo build --workspace` (its builds are reused)
#
# Both are built with the dev profile from the workspace's own build, so nothing is compiled
# twice: maturin builds the one crate; the Node addon is the workspace's target/debug build of
# memfs-node (napi-rs's CLI would build for an explicit --target, in a target folder of its
# own, every dependency again; `npm run build` in crates/memfs-node does that, and regenerates
# index.js and index.d.ts after a change of the addon's API). A release wheel: `maturin build
# --release -m crates/memfs-python/Cargo.toml`. maturin is pinned and kept in a git-ignored
# virtualenv (.venv-maturin); the test's virtualenv and Node folder are made fresh in a
# temporary folder each run, their HOME and XDG folders too, and removed after. Everything it
# starts listens on 127.0.0.1 and is stopped before it exits.
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

MATURIN_VERSION=1.16.0
SDK_VERSION=2.10.0
python="${PYTHON:-python3}"

maturin_venv="$repo/.venv-maturin"
if [ ! -x "$maturin_venv/bin/maturin" ] || [ "$("$maturin_venv/bin/maturin" --version)" != "maturin $MATURIN_VERSION" ]; then
    "$python" -m venv "$maturin_venv"
    "$maturin_venv/bin/pip" install -q --disable-pip-version-check "maturin==$MATURIN_VERSION"
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

started=$(date +%s)
echo "-- building the wheel (maturin $MATURIN_VERSION, dev profile)"
rm -rf target/wheels
"$maturin_venv/bin/maturin" build --quiet --profile dev --compatibility linux \
    -m crates/memfs-python/Cargo.toml -o target/wheels
wheel="$(ls target/wheels/memfs_store-*.whl)"
echo "   $(basename "$wheel") ($(du -h "$wheel" | cut -f1))"

echo "-- a fresh virtualenv with the wheel and anthropic==$SDK_VERSION"
"$python" -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check "$wheel" "anthropic==$SDK_VERSION"

echo "-- tests/packages/python_package.py"
mkdir -p "$work/home"
env -u MEMFS_STORE -u MEMFS_PASSPHRASE -u MEMFS_KEY_FILE \
    HOME="$work/home" XDG_DATA_HOME="$work/home/data" XDG_CONFIG_HOME="$work/home/config" \
    XDG_STATE_HOME="$work/home/state" \
    "$work/venv/bin/python" tests/packages/python_package.py
echo "-- the Node package (npm pack of crates/memfs-node, the workspace's memfs-node build)"
cargo build --quiet -p memfs-node
strip --strip-debug -o crates/memfs-node/memfs.linux-x64-gnu.node target/debug/libmemfs_node.so
tarball="$(cd crates/memfs-node && npm pack --silent --pack-destination "$work")"
echo "   $tarball ($(du -h "$work/$tarball" | cut -f1))"
mkdir -p "$work/node"
cp tests/packages/node_package.mjs "$work/node/"
(cd "$work/node" && npm init -y >/dev/null && npm pkg set type=module >/dev/null &&
    npm install --no-audit --no-fund --loglevel=error "$work/$tarball" @anthropic-ai/sdk@1.12.0)
echo "-- tests/packages/node_package.mjs"
(cd "$work/node" && env -u MEMFS_STORE -u MEMFS_PASSPHRASE -u MEMFS_KEY_FILE \
    HOME="$work/home" XDG_DATA_HOME="$work/home/data" XDG_CONFIG_HOME="$work/home/config" \
    XDG_STATE_HOME="$work/home/state" \
    node node_package.mjs "$repo/tests/scripted/messages_server.py")
# The examples (examples/python/run_agent.py, examples/typescript/run-agent.ts) as a user runs
# them with the installed packages, against the scripted Messages API server: each creates a
# store, gives Claude its memory tool, and prints the final answer.
final="Based on your customer service guidelines, I can help you craft a response. Please share the ticket details..."
scripted() { # scripted CMD...: runs CMD against a fresh scripted server; prints its stdout
    local status=0 url
    coproc SERVER { exec python3 "$repo/tests/scripted/messages_server.py" --record "$work/requests.jsonl"; }
    read -r url <&"${SERVER[0]}"
    ANTHROPIC_BASE_URL="$url" ANTHROPIC_API_KEY=sk-ant-test-key HOME="$work/home" \
        XDG_STATE_HOME="$work/home/state" "$@" || status=$?
    exec {SERVER[1]}>&- # its stdin closed, it stops
    wait "$SERVER_PID" || true
    return "$status"
}
expect_final() { # expect_final WHAT OUTPUT
    if [ "$2" != "$final" ]; then
        echo "FAIL $1: printed $2" >&2
        exit 1
    fi
    echo "ok   $1"
}
echo "-- examples/python/run_agent.py with the wheel"
out="$(scripted "$work/venv/bin/python" examples/python/run_agent.py --store "$work/py-example" --key-file "$work/py-example.key")"
expect_final "run_agent.py" "$out"
echo "-- examples/typescript/run-agent.ts with the Node package (type-checked first)"
ts="$repo/examples/typescript"
dev() { node -p "require('$ts/package.json').devDependencies['$1']"; }
(cd "$work/node" && npm install --no-audit --no-fund --loglevel=error \
    "tsx@$(dev tsx)" "typescript@$(dev typescript)" "@types/node@$(dev @types/node)" >/dev/null)
cp "$ts/run-agent.ts" "$ts/tsconfig.json" "$work/node/"
(cd "$work/node" && node_modules/.bin/tsc -p .)
out="$(cd "$work/node" && scripted node_modules/.bin/tsx run-agent.ts --store "$work/ts-example" --key-file "$work/ts-example.key")"
expect_final "run-agent.ts" "$out"

echo "-- packages: $(($(date +%s) - started)) s, builds and installs included"
