#!/usr/bin/env bash
# Runs the whole test suite. The erasure-coding tests compare against ISA-L built from
# source, which needs nasm, autotools and libclang; the C interface's tests need a C
# compiler, pkg-config, valgrind, meson and ninja: they are installed here when missing
# (with apt-get, as root or through sudo; scripts/lib/test-deps.sh says what counts).
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/test-deps.sh
mapfile -t need < <(test_packages_missing)
if [ ${#need[@]} -gt 0 ]; then
    echo "installing build and test tools: ${need[*]}"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" >/dev/null
fi
have_libclang || { echo "test.sh: libclang is still missing after installing libclang-dev" >&2; exit 1; }

cargo test --workspace --locked "$@"
