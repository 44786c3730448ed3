#!/usr/bin/env bash
# Builds the fuzz targets in fuzz/ with libFuzzer's coverage instrumentation and
# AddressSanitizer (the flags cargo-fuzz passes; cargo-fuzz itself is not needed) and
# runs each for a while (seed inputs that once found a bug, in fuzz/seeds/<target>,
# run first):
#
#   bash scripts/fuzz.sh [--seconds N] [--runs N] [TARGET...]
#
# Default: every target for 60 seconds. `cargo fuzz run mem_ops` (RUSTC_BOOTSTRAP=1)
# works as well. Corpora are kept in fuzz/corpus/<target> (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=60
runs=""
targets=()
while [ $# -gt 0 ]; do
    case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --runs) runs="$2"; shift 2 ;;
    -h | --help) sed -n '2,10p' "$0"; exit 0 ;;
    *) targets+=("$1"); shift ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(mem_ops capi_ops pe_ops xproc_input comch_input rdma_input argp_json compress_input aes_gcm_input)
target=x86_64-unknown-linux-gnu
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target"
fi
command -v c++ >/dev/null || { echo "fuzz: a C++ compiler is needed for libFuzzer (apt-get install g++)" >&2; exit 1; }
export RUSTC_BOOTSTRAP=1
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions \
-Coverflow-checks -Zsanitizer=address"
# ec-codec's SIMD kernels are thousands of unrolled instances that no target aims at
# (the kernel tests check them against the scalar reference); instrumenting them
# optimized takes longer than building everything else, so that crate is built
# unoptimized here (the targets that run erasure coding still run it, more slowly).
cargo build --release --locked --manifest-path fuzz/Cargo.toml --target "$target" --bins \
    --config 'profile.release.package.ec-codec.opt-level=0'
for t in "${targets[@]}"; do
    corpus="fuzz/corpus/$t"
    mkdir -p "$corpus"
    args=(-max_total_time="$seconds" -max_len=4096 -print_final_stats=1)
    [ -n "$runs" ] && args+=(-runs="$runs")
    echo "== fuzz $t (${seconds}s${runs:+, at most $runs runs})"
    # Inputs that once found a bug are kept in fuzz/seeds/<target> and run first.
    seeds=()
    [ -d "fuzz/seeds/$t" ] && seeds=("fuzz/seeds/$t")
    "fuzz/target/$target/release/$t" "${args[@]}" "$corpus" "${seeds[@]}"
done
