#!/bin/sh
# Times `memfs key shred` on a local folder store of 2,000 files (40 folders, 2,000 commits of
# history), then checks the store with the new key file (docs/SECURITY.md, "Keys"). BIN names
# the binary (default target/debug/memfs; build it first); the store is made in a temporary
# folder and removed at the end.
set -eu
B=$(mktemp -d)
trap 'rm -rf "$B"' EXIT
export HOME="$B/home" XDG_STATE_HOME="$B/state" XDG_CONFIG_HOME="$B/config" XDG_DATA_HOME="$B/data"
BIN=${BIN:-target/debug/memfs}
M="$BIN --store file://$B/store --key-file $B/old.key"
$M init 2>/dev/null
python3 -c '
import json
for i in range(2000):
    print(json.dumps({"command": "create", "path": "/memories/d%02d/f%04d.md" % (i % 40, i), "file_text": "file %d: %s" % (i, "x" * 200)}))
' | $M exec >/dev/null
/usr/bin/time -f "key shred: %e s wall, %U s user, %M KB max RSS" $M key shred --new-key-file "$B/new.key" --yes
$BIN --store "file://$B/store" --key-file "$B/new.key" check --read-data | tail -1
