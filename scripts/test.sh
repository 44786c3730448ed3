#!/usr/bin/env bash
# Runs the whole test suite. The erasure-coding tests compare against ISA-L built from
# source, which needs nasm, autotools and libclang; the C interface's tests need a C
# compiler, pkg-config and valgrind: they are installed here when missing (with apt-get,
# as root or through sudo).
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
command -v nasm >/dev/null 2>&1 || need+=(nasm)
command -v autoreconf >/dev/null 2>&1 || need+=(autoconf)
command -v automake >/dev/null 2>&1 || need+=(automake)
command -v libtoolize >/dev/null 2>&1 || need+=(libtool)
command -v cc >/dev/null 2>&1 || need+=(gcc)
command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
if ! ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1 && ! ldconfig -p 2>/dev/null | grep -q libclang; then
    need+=(libclang-dev)
fi
if [ ${#need[@]} -gt 0 ]; then
    echo "installing build and test tools: ${need[*]}"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}" make >/dev/null
fi

cargo test --workspace --locked "$@"
