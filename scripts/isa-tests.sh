#!/usr/bin/env bash
# Runs the erasure-coding tests once per kernel this CPU can run natively
# (DOCA_EC_ISA = scalar, portable, avx2, avx512, gfni256, gfni512): ec-codec's codec
# tests and libisal.so.2's byte equality with ISA-L 2.32, whose table layout and length
# rules follow the CPU whatever kernel computes the products. Kernels the CPU lacks are
# named, and covered by scripts/emulated-isa-tests.sh.
#
#   bash scripts/isa-tests.sh [--quick]
#
# --quick (CI, after the workspace's tests, which compared every kernel this CPU runs
# with the scalar reference): the kernel tests check only the kernel named in each
# round, on their sample of cases (EC_CODEC_TEST_QUICK=1); the codec and byte-equality
# tests run whole.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
--quick) quick=1 ;;
"") ;;
*)
    echo "usage: bash scripts/isa-tests.sh [--quick]" >&2
    exit 2
    ;;
esac

have() { grep -qw "$1" /proc/cpuinfo; }
isas=(scalar portable)
have avx2 && isas+=(avx2)
have avx512f && have avx512bw && isas+=(avx512)
have avx2 && have gfni && isas+=(gfni256)
have avx512f && have avx512bw && have gfni && isas+=(gfni512)
for isa in avx2 avx512 gfni256 gfni512; do
    [[ " ${isas[*]} " == *" $isa "* ]] || echo "isa-tests: this CPU cannot run the $isa kernels natively (scripts/emulated-isa-tests.sh runs them)"
done
# The workspace's test executables (built by its test run; a cargo command naming these
# packages alone would compile ec-codec and its users again with other features).
. scripts/lib/test-binaries.sh
mapfile -t bins < <(test_binaries ec-codec,isal-compat codec,kernels,byte_equal -- --workspace --locked)
if [ ${#bins[@]} -ne 3 ]; then
    echo "isa-tests: could not build the test executables (found ${#bins[@]} of 3)" >&2
    exit 1
fi
for isa in "${isas[@]}"; do
    echo "== DOCA_EC_ISA=$isa"
    for b in "${bins[@]}"; do
        read -r pkg name exe dir <<<"$b"
        echo "-- $pkg: $name"
        if [ "$name" = kernels ] && [ "$quick" = 1 ]; then
            (cd "$dir" && DOCA_EC_ISA=$isa EC_CODEC_TEST_KERNELS=$isa EC_CODEC_TEST_QUICK=1 "$exe" -q)
        else
            (cd "$dir" && DOCA_EC_ISA=$isa "$exe" -q)
        fi
    done
done
echo "isa-tests: passed on ${isas[*]}"
