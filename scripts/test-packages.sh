#!/usr/bin/env bash
# The packages as a user installs them (issue 20): builds the Python wheel (maturin, from
# crates/memfs-python), installs it with the real SDK (anthropic==2.10.0) into a fresh
# virtualenv, and runs tests/packages/python_package.py there: the SDK's sync and async tool
# runners against the scripted Messages API server, the six commands, stores that cannot open,
# two tools sharing a store, an event loop that is not blocked.
#
#   scripts/test-packages.sh            # after `cargo build --workspace` (its builds are reused)
#
# The wheel is built with the dev profile, so the workspace's debug build of every dependency
# is reused (a release wheel: `maturin build --release -m crates/memfs-python/Cargo.toml`).
# maturin is pinned and kept in a git-ignored virtualenv (.venv-maturin); the test's own
# virtualenv is made fresh in a temporary folder each run, its HOME and XDG folders too, and
# removed after. Everything it starts listens on 127.0.0.1 and is stopped before it exits.
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
wheel="$(ls target/wheels/memfs-*.whl)"
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
echo "-- packages: $(($(date +%s) - started)) s, wheel build and installs included"
