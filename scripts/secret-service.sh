#!/usr/bin/env bash
# A real Linux Secret Service (gnome-keyring-daemon) on a private D-Bus session bus, for tests
# of the OS keyring (the `keyring` crate's zbus Secret Service store) on a headless machine:
#
#   scripts/secret-service.sh run CMD [ARGS...]
#   scripts/secret-service.sh install            (only install the Debian packages)
#
# Installs, only when missing, Debian's dbus-daemon, dbus-bin (dbus-send), gnome-keyring and
# libsecret-tools (secret-tool, for checks by hand). Then, in a mktemp folder: a dbus-daemon
# listening on a unix socket there only (no TCP, no service activation, so nothing but the
# daemon below answers), and gnome-keyring-daemon with the secrets component only, its HOME,
# XDG_DATA_HOME and XDG_RUNTIME_DIR in that folder, unlocked with a fixed password on stdin:
# with a non-empty password it creates a fresh "login" collection, unlocked, that the
# "default" alias points to, which is where the keyring crate writes (an empty password
# leaves no login collection). Waits until the default alias resolves, runs CMD with
#
#   DBUS_SESSION_BUS_ADDRESS   the private bus (CMD keeps its own HOME)
#   MEMFS_TEST_SECRET_SERVICE=required   (a keyring test missing the service fails, never skips)
#
# then stops both daemons and removes the folder whatever happens, exiting with CMD's status
# (a SIGINT/SIGTERM sent to this script alone takes effect when CMD ends; send it to the
# process group, as Ctrl-C does). The daemons' logs are printed if they fail to start.
# apt-get (as root) runs only when one of the commands is missing.
set -euo pipefail

PACKAGES=(dbus-daemon dbus-bin gnome-keyring libsecret-tools)
COMMANDS=(dbus-daemon dbus-send gnome-keyring-daemon secret-tool)
PASSWORD=memfs-test
START_TIMEOUT=20 # seconds for each daemon to come up

usage() {
    sed -n '5,6p' "$0" | sed 's/^#   //' >&2
    exit 2
}

install() {
    local missing=0 c
    for c in "${COMMANDS[@]}"; do
        command -v "$c" >/dev/null || missing=1
    done
    [ "$missing" = 0 ] && return 0
    echo "secret-service.sh: installing ${PACKAGES[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt_install() { apt-get install -y -qq --no-install-recommends "${PACKAGES[@]}" >/dev/null; }
    # Without package lists (a fresh machine) the install fails: update once and retry.
    apt_install 2>/dev/null || { apt-get update -qq >/dev/null && apt_install; }
}

cmd="${1:-}"
[ "$#" -gt 0 ] && shift
case "$cmd" in
    install) install; exit 0 ;;
    run) [ "$#" -gt 0 ] || usage ;;
    *) usage ;;
esac
install

dir="$(mktemp -d "${TMPDIR:-/tmp}/secret-service.XXXXXX")"
bus_pid=""
keyring_pid=""
cleanup() {
    local pid
    for pid in $keyring_pid $bus_pid; do
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

fail() {
    echo "secret-service.sh: $*" >&2
    local log
    for log in "$dir"/*.log; do
        [ -s "$log" ] && { echo "--- $log" >&2; tail -n 20 "$log" >&2; }
    done
    exit 1
}

# Wait until "$@" succeeds, for up to START_TIMEOUT seconds; give up at once if it returns 2.
wait_for() {
    local i rc
    for ((i = 0; i < START_TIMEOUT * 10; i++)); do
        rc=0
        "$@" >/dev/null 2>&1 || rc=$?
        case "$rc" in 0) return 0 ;; 2) return 1 ;; esac
        sleep 0.1
    done
    return 1
}

# The session bus: the stock session policy (anyone may own and send anything), but listening
# on our socket only and without <standard_session_servicedirs/>, so nothing gets auto-started.
cat >"$dir/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=$dir/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
EOF
# (As root in a container, dbus-daemon logs that it cannot raise its fd limit: harmless.)
dbus-daemon --config-file="$dir/bus.conf" --nofork --print-address=1 \
    >"$dir/bus.address" 2>"$dir/dbus-daemon.log" </dev/null &
bus_pid=$!
bus_up() { test -s "$dir/bus.address" || { kill -0 "$bus_pid" || return 2; return 1; }; }
wait_for bus_up || fail "dbus-daemon did not start"
export DBUS_SESSION_BUS_ADDRESS
DBUS_SESSION_BUS_ADDRESS="$(head -n 1 "$dir/bus.address")"

mkdir -m 700 "$dir/home" "$dir/data" "$dir/runtime"
HOME="$dir/home" XDG_DATA_HOME="$dir/data" XDG_RUNTIME_DIR="$dir/runtime" \
    XDG_CONFIG_HOME="$dir/home/.config" \
    gnome-keyring-daemon --foreground --unlock --components=secrets \
    <<<"$PASSWORD" >"$dir/gnome-keyring.log" 2>&1 &
keyring_pid=$!

# Ready when the default alias names a collection ("/" means none) and that one is unlocked.
default_collection() {
    dbus-send --session --print-reply=literal --dest=org.freedesktop.secrets \
        /org/freedesktop/secrets org.freedesktop.Secret.Service.ReadAlias string:default |
        tr -d ' '
}
ready() {
    local path
    kill -0 "$keyring_pid" || return 2
    path="$(default_collection)" && [ -n "$path" ] && [ "$path" != / ] || return 1
    dbus-send --session --print-reply=literal --dest=org.freedesktop.secrets "$path" \
        org.freedesktop.DBus.Properties.Get string:org.freedesktop.Secret.Collection \
        string:Locked | grep -q 'boolean false'
}
wait_for ready || fail "gnome-keyring-daemon did not offer an unlocked default collection"

export MEMFS_TEST_SECRET_SERVICE=required
status=0
"$@" || status=$?
exit "$status"
