#!/usr/bin/env bash
# Runs ec-codec's tests built for 64-bit Arm (aarch64) under QEMU's user-mode emulator:
# there the codec has no x86 kernels and runs its portable path, which must agree with
# the scalar reference and recover every erasure pattern just as on x86-64.
#
#   bash scripts/aarch64-tests.sh
#
# Needs the Rust standard library for aarch64-unknown-linux-gnu (added with rustup) and
# Debian's gcc-aarch64-linux-gnu and qemu-user; as root the script installs what is
# missing. Where rustup cannot fetch the aarch64 standard library, the script says so
# and exits 0 without testing; any other failure exits non-zero.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/lib/install-missing.sh

target=aarch64-unknown-linux-gnu
if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
    if ! rustup target add "$target"; then
        echo "aarch64-tests: SKIPPED: rustup could not add the $target standard library" >&2
        exit 0
    fi
fi

need=()
command -v aarch64-linux-gnu-gcc >/dev/null || need+=(gcc-aarch64-linux-gnu)
command -v qemu-aarch64 >/dev/null || need+=(qemu-user)
install_missing aarch64-tests "${need[@]}"

runner="qemu-aarch64 -L /usr/aarch64-linux-gnu"
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_RUNNER="$runner"
# Tests that start this binary again as a child process start it through QEMU too.
export EC_CODEC_TEST_RUNNER="$runner"
cargo test --locked -p ec-codec --release --target "$target"
echo "aarch64-tests: ec-codec's tests passed on aarch64 (portable kernel)"
