#!/usr/bin/env bash
# Real S3 and Azure servers for the tests, on 127.0.0.1 only:
#
#   scripts/emulators.sh run CMD [ARGS...]
#   scripts/emulators.sh install            (only install, e.g. to warm a CI cache)
#
# installs (once, cached in git-ignored folders) moto 5.2.5 (S3; run by scripts/moto_server.py,
# which makes its conditional PUTs atomic as on S3) in .venv-moto and Azurite 3.35.0 (Azure
# Blob, sped up by scripts/azurite_preload.js: no periodic extent collection, which stalls it
# for minutes under the fleet test, and blob lookups through the name index) in .cache/azurite;
# starts both on free loopback ports; creates the bucket and the container `memfs-test`; runs
# CMD with
#
#   MEMFS_TEST_S3_ENDPOINT, MEMFS_TEST_S3_BUCKET          (moto)
#   MEMFS_TEST_AZURE_ENDPOINT, AZURITE_BLOB_STORAGE_URL,  (Azurite; object_store's emulator
#   MEMFS_TEST_AZURE_CONTAINER                             mode reads AZURITE_BLOB_STORAGE_URL)
#   MEMFS_TEST_CLOUD=required                             (a test missing these fails, never skips)
#   AWS_EC2_METADATA_DISABLED=true
#
# and stops both servers when CMD ends, whatever happens (by PID: TERM, then KILL after 10 s),
# exiting with CMD's status. If CMD fails or a server died while it ran, the servers' logs are
# kept and their tails printed. Needs python3 (with venv), curl, Node.js 18 or newer and npm.
# See docs/ARCHITECTURE.md ("Tests") for why these two servers and why no GCS emulator.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

MOTO_VERSION=5.2.5
AZURITE_VERSION=3.35.0
MOTO_VENV="$ROOT/.venv-moto"
AZURITE_DIR="$ROOT/.cache/azurite"
BUCKET=memfs-test

say() { printf 'emulators: %s\n' "$*" >&2; }
die() {
    say "$*"
    exit 1
}

need() {
    command -v "$1" >/dev/null 2>&1 || die "$1 is not installed ($2)"
}

check_tools() {
    need python3 "moto runs in a Python virtualenv"
    need curl "used to wait for the servers and to create the bucket"
    need node "Azurite runs on Node.js 18 or newer"
    need npm "Azurite is installed with npm"
    need flock "serialises installs"
    local major
    major=$(node -p 'process.versions.node.split(".")[0]')
    [ "$major" -ge 18 ] || die "Azurite $AZURITE_VERSION needs Node.js 18 or newer; node is $(node --version)"
}

moto_installed() {
    [ -x "$MOTO_VENV/bin/moto_server" ] &&
        [ "$("$MOTO_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("moto"))' 2>/dev/null)" = "$MOTO_VERSION" ]
}

azurite_installed() {
    [ -x "$AZURITE_DIR/node_modules/.bin/azurite-blob" ] &&
        [ "$(node -p "require('$AZURITE_DIR/node_modules/azurite/package.json').version" 2>/dev/null)" = "$AZURITE_VERSION" ]
}

install() {
    check_tools
    mkdir -p "$ROOT/.cache"
    # One installer at a time: two runs started together on a fresh clone must not both
    # write the same virtualenv.
    exec 9>"$ROOT/.cache/emulators.lock"
    flock 9
    if ! moto_installed; then
        say "installing moto[server]==$MOTO_VERSION into $MOTO_VENV"
        python3 -m venv "$MOTO_VENV"
        "$MOTO_VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$MOTO_VERSION" >&2
        moto_installed || die "moto $MOTO_VERSION is not in $MOTO_VENV after installing it"
    fi
    if ! azurite_installed; then
        say "installing azurite@$AZURITE_VERSION into $AZURITE_DIR"
        mkdir -p "$AZURITE_DIR"
        npm install --prefix "$AZURITE_DIR" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >&2
        azurite_installed || die "azurite $AZURITE_VERSION is not in $AZURITE_DIR after installing it"
    fi
    flock -u 9
    exec 9>&-
}

# Two distinct free ports on 127.0.0.1 (both sockets are held until both are known).
free_ports() {
    python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s:
    x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))
for x in s:
    x.close()'
}

# wait_for NAME URL PID LOG: until URL answers (any HTTP status), the process dies, or 60 s pass.
wait_for() {
    local name=$1 url=$2 pid=$3 log=$4 start=$SECONDS
    while [ $((SECONDS - start)) -lt 60 ]; do
        if curl -s --max-time 2 -o /dev/null "$url"; then
            say "$name is up after $((SECONDS - start)) s"
            return 0
        fi
        if ! kill -0 "$pid" 2>/dev/null; then
            say "$name exited before answering; the end of its log:"
            tail -n 30 "$log" >&2
            return 1
        fi
        sleep 0.2
    done
    say "$name did not answer on $url within 60 s; the end of its log:"
    tail -n 30 "$log" >&2
    return 1
}

PIDS=()
NAMES=()
LOGS=""
STATUS=0
CMD_PID=""
STARTED=0

# terminate PID: SIGTERM, up to 10 s to go, then SIGKILL; reaps it.
terminate() {
    local pid=$1
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.2
    done
    if kill -0 "$pid" 2>/dev/null; then
        say "process $pid ignored SIGTERM for 10 s; killing it"
        kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
}

# On SIGINT or SIGTERM: pass it on to CMD, let it end, then exit (which stops the servers).
on_signal() {
    STATUS=$2
    if [ -n "$CMD_PID" ]; then
        kill -"$1" "$CMD_PID" 2>/dev/null || true
        terminate "$CMD_PID"
    fi
    exit "$STATUS"
}

# Runs on every exit: stops the servers this script started (by PID only), and keeps their
# logs when something went wrong.
stop() {
    local rc=$? i keep=0
    [ "$STATUS" -ne 0 ] || STATUS=$rc
    for i in "${!PIDS[@]}"; do
        if [ "$STARTED" -eq 1 ] && ! kill -0 "${PIDS[$i]}" 2>/dev/null; then
            say "${NAMES[$i]} had exited before the end; the end of its log:"
            tail -n 30 "$LOGS/${NAMES[$i]}.log" >&2 || true
            keep=1
        fi
        terminate "${PIDS[$i]}"
    done
    if [ -n "$LOGS" ]; then
        if [ "$keep" -eq 1 ] || [ "$STATUS" -ne 0 ]; then
            say "servers' logs kept in $LOGS"
        else
            rm -rf "$LOGS"
        fi
    fi
    exit "$STATUS"
}

run() {
    install
    trap stop EXIT
    trap 'on_signal INT 130' INT
    trap 'on_signal TERM 143' TERM
    LOGS=$(mktemp -d "${TMPDIR:-/tmp}/memfs-emulators.XXXXXX")

    local ports s3_port az_port
    ports=$(free_ports)
    read -r s3_port az_port <<<"$ports"

    # moto's server with its conditional PUTs made atomic, as on S3 (see scripts/moto_server.py).
    "$MOTO_VENV/bin/python" "$ROOT/scripts/moto_server.py" -H 127.0.0.1 -p "$s3_port" >"$LOGS/moto.log" 2>&1 &
    PIDS+=($!)
    NAMES+=(moto)
    # Keep-alive 300 s, as Azure's own idle timeout is minutes: Azurite's default of 5 s closes
    # connections the client still pools (reqwest keeps them 90 s), and a request sent on one
    # as it closes is lost, which real Azure does not do to an active client.
    # Without its periodic extent garbage collection, whose pass over every extent blocks
    # Azurite's one thread for minutes once the fleet test has made many blobs, and with blob
    # lookups that do not walk every blob (see scripts/azurite_preload.js). --silent: no access
    # log, a line per request on its only thread (as with moto's, see scripts/moto_server.py).
    MEMFS_AZURITE_DIR="$AZURITE_DIR" NODE_OPTIONS="--require $ROOT/scripts/azurite_preload.js" \
        "$AZURITE_DIR/node_modules/.bin/azurite-blob" --blobHost 127.0.0.1 --blobPort "$az_port" \
        --blobKeepAliveTimeout 300 --silent \
        --inMemoryPersistence --disableTelemetry --skipApiVersionCheck --loose >"$LOGS/azurite.log" 2>&1 &
    PIDS+=($!)
    NAMES+=(azurite)

    wait_for moto "http://127.0.0.1:$s3_port/" "${PIDS[0]}" "$LOGS/moto.log"
    wait_for Azurite "http://127.0.0.1:$az_port/devstoreaccount1?comp=list" "${PIDS[1]}" "$LOGS/azurite.log"

    export MEMFS_TEST_S3_ENDPOINT="http://127.0.0.1:$s3_port"
    export MEMFS_TEST_S3_BUCKET=$BUCKET
    export MEMFS_TEST_AZURE_ENDPOINT="http://127.0.0.1:$az_port"
    export AZURITE_BLOB_STORAGE_URL="$MEMFS_TEST_AZURE_ENDPOINT"
    export MEMFS_TEST_AZURE_CONTAINER=$BUCKET
    export MEMFS_TEST_CLOUD=required
    # The AWS client must never wander off to an instance metadata service.
    export AWS_EC2_METADATA_DISABLED=true

    curl -sSf --max-time 10 -X PUT -o /dev/null "$MEMFS_TEST_S3_ENDPOINT/$MEMFS_TEST_S3_BUCKET" ||
        die "could not create the bucket $BUCKET on moto"
    python3 scripts/az_mkcontainer.py "$MEMFS_TEST_AZURE_ENDPOINT" "$MEMFS_TEST_AZURE_CONTAINER" ||
        die "could not create the container $BUCKET on Azurite"
    say "moto on $MEMFS_TEST_S3_ENDPOINT, Azurite on $MEMFS_TEST_AZURE_ENDPOINT; running: $*"

    # CMD runs in the background so that a signal to this script is handled at once rather
    # than when CMD happens to end; with its stdin, and with SIGINT and SIGQUIT back to their
    # defaults (bash would otherwise have a background command, and all it runs, ignore them).
    STARTED=1
    (
        trap - INT QUIT
        exec "$@"
    ) <&0 &
    CMD_PID=$!
    wait "$CMD_PID" || STATUS=$?
    CMD_PID=""
    exit "$STATUS"
}

case "${1:-}" in
    run)
        shift
        [ $# -gt 0 ] || {
            say "usage: scripts/emulators.sh run CMD [ARGS...]"
            exit 2
        }
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
