#!/usr/bin/env bash
# Writers sharing one bucket through scripts/faultproxy.py (resets before and after a request
# took effect, cut answers, 503 and 500 from the proxy itself, seeded), then the store read
# without the proxy: issue 42's exactly-once check. scripts/test.sh runs it for two seeds on each
# backend; CLOUD.md says how to run more.
#
#   scripts/emulators.sh run scripts/fault-fleet.sh SEED [WRITERS [ROUNDS]]
#   BACKEND=azure scripts/emulators.sh run scripts/fault-fleet.sh SEED
#
# Each of WRITERS (default 8) `memfs exec --actor wN` sessions sends ROUNDS (default 10) times:
# a create of its own file, an insert of a line of its own at line 1 of the shared file (all
# writers contend there), and an edit of the file it created. Afterwards, read directly:
# - every acknowledged command's effect is there once: its created file, its line in the shared
#   file (exactly once), its edit;
# - no command answered with an error (other than "the outcome is unknown") left its effect:
#   no "already exists" for a file of its own, no line or edit of a command reported failed;
# - each writer's lines in the shared file are as many as its insert commits in `memfs log`;
# - no writer crashed or left a command unanswered (each has 10 minutes); `memfs check` finds
#   no problems.
# Prints the proxy's fault counts by type and the commands acknowledged, errored and of unknown
# outcome; exits 1 if any check fails. MEMFS_BIN: the binary (default target/debug/memfs).
set -uo pipefail
SEED=${1:?usage: fault-fleet.sh SEED [WRITERS [ROUNDS]]}
WRITERS=${2:-8}
ROUNDS=${3:-10}
BACKEND=${BACKEND:-s3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${MEMFS_BIN:-$ROOT/target/debug/memfs}
D=$(mktemp -d "${TMPDIR:-/tmp}/fault-fleet.XXXXXX")
case $BACKEND in
    s3) UPSTREAM=$MEMFS_TEST_S3_ENDPOINT; URL="s3://$MEMFS_TEST_S3_BUCKET/fault-fleet-$SEED-$RANDOM" ;;
    azure) UPSTREAM=$MEMFS_TEST_AZURE_ENDPOINT; URL="az://$MEMFS_TEST_AZURE_CONTAINER/fault-fleet-$SEED-$RANDOM" ;;
    *) echo "fault-fleet: BACKEND is s3 or azure" >&2; exit 2 ;;
esac

# FAULT_RATES: the proxy's rate options (default: its own, 3.5% of each failure).
# shellcheck disable=SC2086
python3 "$ROOT/scripts/faultproxy.py" --upstream "$UPSTREAM" --seed "$SEED" ${FAULT_RATES:-} \
    --stats "$D/stats.json" --port-file "$D/port" > "$D/proxy.out" &
PROXY=$!
trap 'kill -TERM $PROXY 2>/dev/null' EXIT
for _ in $(seq 100); do [ -s "$D/port" ] && break; sleep 0.1; done
PORT=$(cat "$D/port")

# `memfs` on the store, straight to the emulator (direct) or through the proxy (faulty).
memfs_at() {
    local endpoint=$1 state=$2; shift 2
    env HOME="$D/home" XDG_STATE_HOME="$D/$state" \
        AWS_ENDPOINT="$endpoint" AWS_ALLOW_HTTP=true AWS_REGION=us-east-1 \
        AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test \
        AZURE_STORAGE_USE_EMULATOR=true AZURITE_BLOB_STORAGE_URL="$endpoint" \
        "$BIN" --store "$URL" --key-file "$D/key" "$@"
}
direct() { memfs_at "$UPSTREAM" state-direct "$@"; }

direct init > "$D/init.out" 2>&1 || { cat "$D/init.out" >&2; exit 1; }
echo '{"command":"create","path":"/memories/shared.md","file_text":"start\n"}' | direct exec > /dev/null 2>&1

for w in $(seq 1 "$WRITERS"); do
    python3 - "$w" "$ROUNDS" > "$D/in-$w.jsonl" <<'PY'
import json, sys
w, rounds = sys.argv[1], int(sys.argv[2])
for i in range(rounds):
    own = f"/memories/w{w}/f{i}.md"
    print(json.dumps({"command": "create", "path": own, "file_text": f"w{w} f{i}\n"}))
    print(json.dumps({"command": "insert", "path": "/memories/shared.md", "insert_line": 1, "insert_text": f"line w{w}-{i}"}))
    print(json.dumps({"command": "str_replace", "path": own, "old_str": f"w{w} f{i}", "new_str": f"w{w} f{i} edited"}))
PY
    (
        memfs_at "http://127.0.0.1:$PORT" "state-$w" exec --actor "w$w" < "$D/in-$w.jsonl" \
            > "$D/out-$w.jsonl" 2> "$D/err-$w.txt"
        echo $? > "$D/rc-$w"
    ) &
done
WRITER_SHELLS=$(jobs -p | grep -vx "$PROXY")
for w in $(seq 1 "$WRITERS"); do
    for _ in $(seq 6000); do [ -s "$D/rc-$w" ] && break; sleep 0.1; done
done
# A writer still running after that has hung: it is stopped, and the check below says so.
for shell in $WRITER_SHELLS; do pkill -KILL -P "$shell" 2>/dev/null; done
wait $WRITER_SHELLS 2>/dev/null
kill -TERM $PROXY; wait $PROXY; trap - EXIT

direct export "$D/tree" > /dev/null 2>&1 || { echo "fault-fleet: memfs export failed" >&2; exit 1; }
direct log > "$D/log.txt" 2>&1
direct check > "$D/check.txt" 2>&1
echo $? > "$D/check.rc"

python3 - "$D" "$WRITERS" <<'PY'
import collections, json, os, re, sys
d, writers = sys.argv[1], int(sys.argv[2])
lines = collections.Counter(open(f"{d}/tree/shared.md").read().split("\n"))

def content(path):
    """The file at /memories/PATH as exported, or None."""
    local = os.path.join(d, "tree", path.removeprefix("/memories/"))
    return open(local).read() if os.path.isfile(local) else None

def effect(command):
    """How many times the command's effect is in the store (0 or 1; an insert's line can be more)."""
    if command["command"] == "insert":
        return lines[command["insert_text"]]
    now = content(command["path"])
    if command["command"] == "create":
        return int(now is not None)
    return int(now is not None and command["new_str"] in now)

inserts_in_log = collections.Counter(re.findall(r"^@\d+ \S+ \S+ (w\d+) insert ", open(f"{d}/log.txt").read(), re.M))
failures, counts, errors = [], collections.Counter(), collections.Counter()
for w in range(1, writers + 1):
    sent = [json.loads(l) for l in open(f"{d}/in-{w}.jsonl")]
    answers = [json.loads(l) for l in open(f"{d}/out-{w}.jsonl") if l.strip()]
    rc = open(f"{d}/rc-{w}").read().strip() if os.path.exists(f"{d}/rc-{w}") else "none"
    if len(answers) != len(sent) or rc != "0":
        failures.append(f"w{w}: {len(answers)} answers to {len(sent)} commands, exit status {rc}")
    for command, answer in zip(sent, answers):
        unknown = answer["is_error"] and "the outcome is unknown" in answer["content"]
        counts["unknown" if unknown else "errored" if answer["is_error"] else "acknowledged"] += 1
        if answer["is_error"] and not unknown:
            errors[answer["content"][:100]] += 1
        n = effect(command)
        what = f"{command['command']} {command.get('insert_text') or command['path']}"
        if n > 1:
            failures.append(f"{what} is in {n} times")
        if n == 0 and not answer["is_error"]:
            failures.append(f"{what} was acknowledged and is not in the store")
        if n > 0 and answer["is_error"] and not unknown:
            failures.append(f"{what} is in the store and was answered: {answer['content'][:100]}")
    mine = sum(n for line, n in lines.items() if line.startswith(f"line w{w}-"))
    if mine != inserts_in_log[f"w{w}"]:
        failures.append(f"w{w}: {mine} lines in the shared file, {inserts_in_log[f'w{w}']} insert commits in the log")
if open(f"{d}/check.rc").read().strip() != "0":
    failures.append("memfs check: " + open(f"{d}/check.txt").read().strip())
stats = json.load(open(f"{d}/stats.json"))
print(f"requests {stats['requests']}, faults {json.dumps(stats['faults'])}, upstream errors {stats['upstream_errors']}")
print(f"commands: {counts['acknowledged']} acknowledged, {counts['errored']} errored, {counts['unknown']} of unknown outcome")
for text, n in errors.most_common():
    print(f"  errored {n}x: {text}")
for f in failures:
    print("FAILED:", f)
print(f"({d})")
sys.exit(1 if failures else 0)
PY
