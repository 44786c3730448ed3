#!/usr/bin/env bash
# Runs the Rust tests of ec-codec (its integration tests), doca-core, doca-dma, doca-ec, doca-sha, doca-compress,
# doca-aes-gcm, doca-comm-channel, doca-rdma and doca-capi (its unit tests and the zero-allocation test) under
# AddressSanitizer (and LeakSanitizer), on the stable toolchain:
#
#   bash scripts/asan-tests.sh
#
# Doctests are left out (rustdoc does not take the sanitizer flags), and so are the C
# programs of doca-capi's c_api test: they run under valgrind's memcheck in the normal
# test run. The instrumented build goes to target/x86_64-unknown-linux-gnu.
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-unknown-linux-gnu
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    rustup target add "$target"
fi
export RUSTC_BOOTSTRAP=1
export RUSTFLAGS="-Zsanitizer=address"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
# ec-codec: its integration tests (the kernels, the codec, ISA-L's tables), which run
# every unsafe path of the crate; its unit tests (field arithmetic, matrices, the
# helper pool) would build the whole crate a second time under the sanitizer.
# The sanitizer instruments each of the kernels' instances: optimized as in the test
# profile (opt-level 3) that took over 10 minutes of the build, at opt-level 1 (every
# command below, since the libraries above it link it) a fraction of that; the kernel
# tests take their sample of cases, which reaches every code path they aim at
# (EC_CODEC_TEST_QUICK=1; the whole set: EC_CODEC_TEST_QUICK=0).
cargo() { command cargo "$@" --config 'profile.dev.package.ec-codec.opt-level=1'; }
EC_CODEC_TEST_QUICK="${EC_CODEC_TEST_QUICK:-1}" cargo test --locked --target "$target" -p ec-codec --test '*'
cargo test --locked --target "$target" -p doca-core -p doca-dma -p doca-ec -p doca-sha -p doca-compress -p doca-aes-gcm \
    -p doca-comm-channel --lib --tests
# UCX patches the process's mmap and malloc calls when it loads (its memory hooks),
# which AddressSanitizer's own interceptors cannot share: off for these runs (the hooks
# serve registration caches of RDMA NICs, which the tests do not use).
UCX_MEM_MMAP_HOOK_MODE=none UCX_MEM_MALLOC_HOOKS=no \
    cargo test --locked --target "$target" -p doca-rdma --lib --tests
cargo test --locked --target "$target" -p doca-capi --lib --test zero_alloc
echo "asan-tests: every test passed under AddressSanitizer"
