#!/usr/bin/env bash
# Benchmark: the same 1,000-command memory-tool session through memfs (encrypted local folder,
# with history) and through anthropic==2.10.0's plaintext BetaLocalFilesystemMemoryTool, side by
# side in one run; prints both times, the mean latency per command and the ratio SDK/memfs
# (>1 means memfs is faster). See tests/bench/vs_sdk.py.
#
#   scripts/bench-vs-sdk.sh                     # 3 runs, seed 1
#   scripts/bench-vs-sdk.sh --runs 5 --seed 7   # any vs_sdk.py options
#
# Temp directories go to $TMPDIR (or --tmpdir DIR); they must be on ext4 so that the SDK's
# directory sizes are the 4096 bytes memfs reports.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --locked -q -p memfs-cli
PY="$(scripts/python-env.sh | tail -n 1)"
exec "$PY" tests/bench/vs_sdk.py --memfs target/release/memfs "$@"
