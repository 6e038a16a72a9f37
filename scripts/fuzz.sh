#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) with cargo-fuzz, for a time or a number of runs,
# and prints each target's execution count as libFuzzer reports it.
#
#   scripts/fuzz.sh                         # each target for 30 s
#   scripts/fuzz.sh 300                     # each target for 5 min
#   scripts/fuzz.sh 60 path_parse           # one target
#   scripts/fuzz.sh --runs 1000000          # each target for a million executions
#   scripts/fuzz.sh --runs 1000000 keys head
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`); without it, says so and exits 0.
# Works on the stable toolchain: coverage instrumentation needs no nightly, only the sanitizers
# do, so the default is `--sanitizer none`. With a nightly toolchain, set
# MEMFS_FUZZ_SANITIZER=address (and `cargo +nightly` via RUSTUP_TOOLCHAIN=nightly) for ASan.
#
# Each target starts from its committed seeds, fuzz/seeds/<target> (written by
# `cd fuzz && cargo run --example make_seeds` from the format-1 fixture store), and grows its
# corpus in fuzz/corpus/<target>; crashes land in fuzz/artifacts/<target> (corpus and artifacts
# are git-ignored). fuzz/dict/<target>.dict, when present, is passed as a libFuzzer dictionary.
# Exits non-zero if any target crashed; replay a crash with
#   cargo fuzz run -s none <target> fuzz/artifacts/<target>/<crash-file>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=""
seconds=30
if [ "${1:-}" = "--runs" ]; then
    runs="${2:?--runs needs a number}"
    shift 2
elif [ "$#" -gt 0 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    seconds="$1"
    shift
fi
sanitizer="${MEMFS_FUZZ_SANITIZER:-none}"

if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "fuzz.sh: cargo-fuzz is not installed (cargo install cargo-fuzz --locked); skipping" >&2
    exit 0
fi

if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo fuzz list)
fi

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
failed=()
summary=()
for target in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$target"
    args=(-print_final_stats=1)
    if [ -n "$runs" ]; then
        echo "==> fuzzing $target for $runs runs (sanitizer: $sanitizer)"
        args+=(-runs="$runs")
    else
        echo "==> fuzzing $target for ${seconds}s (sanitizer: $sanitizer)"
        args+=(-max_total_time="$seconds")
    fi
    if [ -f "fuzz/dict/$target.dict" ]; then
        args+=(-dict="fuzz/dict/$target.dict")
    fi
    corpora=("fuzz/corpus/$target")
    if [ -d "fuzz/seeds/$target" ]; then
        corpora+=("fuzz/seeds/$target")
    fi
    # libFuzzer writes its stats to stderr: keep them for the summary, and show them too.
    status=ok
    if ! cargo fuzz run --sanitizer "$sanitizer" "$target" "${corpora[@]}" -- "${args[@]}" 2>&1 | tee "$logs/$target"; then
        status=CRASH
        failed+=("$target")
    fi
    execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$logs/$target" | tail -n 1)"
    seconds_taken="$(sed -n 's/^stat::.*//;s/^Done \([0-9]*\) runs in \([0-9]*\) second.*/\2/p' "$logs/$target" | tail -n 1)"
    summary+=("$(printf '%-16s %12s executions %6s s  %s' "$target" "${execs:-?}" "${seconds_taken:-?}" "$status")")
done

echo "fuzz.sh: per target (libFuzzer's stat::number_of_executed_units):"
printf '  %s\n' "${summary[@]}"
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz.sh: crashes in: ${failed[*]} (see fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz.sh: ${#targets[@]} target(s), no crash"
