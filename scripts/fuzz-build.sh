#!/usr/bin/env bash
# Builds the fuzz workspace (fuzz/, its own cargo workspace) on the stable toolchain, so CI
# catches fuzz targets (and the seed writer, `fuzz/examples/make_seeds.rs`) that no longer
# compile against the crates they fuzz. Needs a C++ compiler:
# libfuzzer-sys builds libFuzzer with the `cc` crate.
#
#   scripts/fuzz-build.sh            # debug build into fuzz/target
#   scripts/fuzz-build.sh --release  # extra arguments go to cargo build
#
# This is a plain build, without coverage instrumentation: to fuzz, use scripts/fuzz.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

cargo build --manifest-path fuzz/Cargo.toml --bins --examples "$@"
