#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for SECONDS each, with cargo-fuzz.
#
#   scripts/fuzz.sh                    # each target for 30 s
#   scripts/fuzz.sh 300                # each target for 5 min
#   scripts/fuzz.sh 60 path_parse      # one target
#
# Needs cargo-fuzz (`cargo install cargo-fuzz --locked`); without it, says so and exits 0.
# Works on the stable toolchain: coverage instrumentation needs no nightly, only the sanitizers
# do, so the default is `--sanitizer none`. With a nightly toolchain, set
# MEMFS_FUZZ_SANITIZER=address (and `cargo +nightly` via RUSTUP_TOOLCHAIN=nightly) for ASan.
#
# The corpus grows in fuzz/corpus/<target> and crashes land in fuzz/artifacts/<target> (both
# git-ignored); fuzz/dict/<target>.dict, when present, is passed as a libFuzzer dictionary.
# Exits non-zero if any target crashed; replay a crash with
#   cargo fuzz run -s none <target> fuzz/artifacts/<target>/<crash-file>
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-30}"
shift || true
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

failed=()
for target in "${targets[@]}"; do
    echo "==> fuzzing $target for ${seconds}s (sanitizer: $sanitizer)"
    mkdir -p "fuzz/corpus/$target"
    args=(-max_total_time="$seconds" -print_final_stats=1)
    if [ -f "fuzz/dict/$target.dict" ]; then
        args+=(-dict="fuzz/dict/$target.dict")
    fi
    if ! cargo fuzz run --sanitizer "$sanitizer" "$target" "fuzz/corpus/$target" -- "${args[@]}"; then
        failed+=("$target")
    fi
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz.sh: crashes in: ${failed[*]} (see fuzz/artifacts/)" >&2
    exit 1
fi
echo "fuzz.sh: ${#targets[@]} target(s) ran ${seconds}s each, no crash"
