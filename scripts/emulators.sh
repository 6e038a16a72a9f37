#!/usr/bin/env bash
# Real S3 and Azure servers for the tests, on 127.0.0.1 only:
#
#   scripts/emulators.sh run CMD [ARGS...]
#
# installs (once, cached in git-ignored folders) moto 5.2.5 (S3, honest conditional writes)
# in .venv-moto and Azurite 3.35.0 (Azure Blob) in .cache/azurite; starts both on free
# loopback ports; creates the bucket and the container `memfs-test`; runs CMD with
#
#   MEMFS_TEST_S3_ENDPOINT, MEMFS_TEST_S3_BUCKET          (moto)
#   MEMFS_TEST_AZURE_ENDPOINT, AZURITE_BLOB_STORAGE_URL,  (Azurite; object_store's emulator
#   MEMFS_TEST_AZURE_CONTAINER                             mode reads AZURITE_BLOB_STORAGE_URL)
#   MEMFS_TEST_CLOUD=required                             (a test missing these fails, never skips)
#
# and stops both servers when CMD ends, whatever happens, exiting with CMD's status. See
# docs/ARCHITECTURE.md ("Tests") for why these two and why no GCS emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

MOTO_VERSION=5.2.5
AZURITE_VERSION=3.35.0
MOTO_VENV="$ROOT/.venv-moto"
AZURITE_DIR="$ROOT/.cache/azurite"

say() { printf 'emulators: %s\n' "$*" >&2; }

install() {
    if [ ! -x "$MOTO_VENV/bin/moto_server" ]; then
        say "installing moto[server]==$MOTO_VERSION into $MOTO_VENV"
        python3 -m venv "$MOTO_VENV"
        "$MOTO_VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION"
    fi
    if [ ! -x "$AZURITE_DIR/node_modules/.bin/azurite-blob" ]; then
        say "installing azurite@$AZURITE_VERSION into $AZURITE_DIR"
        mkdir -p "$AZURITE_DIR"
        npm install --prefix "$AZURITE_DIR" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >&2
    fi
}

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# wait_for NAME URL PID LOG: until URL answers (any HTTP status), the process dies, or 60 s pass.
wait_for() {
    local name=$1 url=$2 pid=$3 log=$4
    for _ in $(seq 1 300); do
        if curl -s -o /dev/null "$url"; then
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            say "$name exited before answering; its log:"
            tail -n 30 "$log" >&2
            return 1
        fi
        sleep 0.2
    done
    say "$name did not answer on $url within 60 s; its log:"
    tail -n 30 "$log" >&2
    return 1
}

PIDS=()
LOGS=""
stop() {
    local pid
    for pid in "${PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [ -n "$LOGS" ]; then
        rm -rf "$LOGS"
    fi
}

run() {
    install
    trap stop EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    LOGS=$(mktemp -d)

    local s3_port az_port
    s3_port=$(free_port)
    "$MOTO_VENV/bin/moto_server" -H 127.0.0.1 -p "$s3_port" >"$LOGS/moto.log" 2>&1 &
    PIDS+=($!)
    az_port=$(free_port)
    "$AZURITE_DIR/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$az_port" \
        --inMemoryPersistence --disableTelemetry --skipApiVersionCheck --loose >"$LOGS/azurite.log" 2>&1 &
    PIDS+=($!)

    wait_for moto "http://127.0.0.1:$s3_port/" "${PIDS[0]}" "$LOGS/moto.log"
    wait_for Azurite "http://127.0.0.1:$az_port/devstoreaccount1?comp=list" "${PIDS[1]}" "$LOGS/azurite.log"

    export MEMFS_TEST_S3_ENDPOINT="http://127.0.0.1:$s3_port"
    export MEMFS_TEST_S3_BUCKET=memfs-test
    export MEMFS_TEST_AZURE_ENDPOINT="http://127.0.0.1:$az_port"
    export AZURITE_BLOB_STORAGE_URL="$MEMFS_TEST_AZURE_ENDPOINT"
    export MEMFS_TEST_AZURE_CONTAINER=memfs-test
    export MEMFS_TEST_CLOUD=required
    # The AWS client must never wander off to an instance metadata service.
    export AWS_EC2_METADATA_DISABLED=true

    curl -sf -X PUT -o /dev/null "$MEMFS_TEST_S3_ENDPOINT/$MEMFS_TEST_S3_BUCKET"
    python3 scripts/az_mkcontainer.py "$MEMFS_TEST_AZURE_ENDPOINT" "$MEMFS_TEST_AZURE_CONTAINER"
    say "moto on $MEMFS_TEST_S3_ENDPOINT, Azurite on $MEMFS_TEST_AZURE_ENDPOINT"

    local status=0
    "$@" || status=$?
    return "$status"
}

case "${1:-}" in
    run)
        shift
        [ $# -gt 0 ] || { say "usage: scripts/emulators.sh run CMD [ARGS...]"; exit 2; }
        run "$@"
        ;;
    install)
        install
        ;;
    *)
        say "usage: scripts/emulators.sh run CMD [ARGS...] | install"
        exit 2
        ;;
esac
