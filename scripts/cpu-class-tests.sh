#!/usr/bin/env bash
# Runs the erasure-coding test binaries on emulated x86-64 CPUs of the classes this
# machine may not be: an AMD EPYC with AVX2 and no AVX-512 or GFNI (EPYC-Rome), and a
# Hygon Dhyana (AVX2, where ISA-L keeps its AVX update code). User-mode QEMU runs each
# binary with that CPU's CPUID, so ISA-L 2.32 and libisal.so.2 both pick what they pick
# on such a CPU, and the byte-equality suite compares them there; ec-codec's kernels are
# checked against the scalar reference on the same CPU.
#
#   bash scripts/cpu-class-tests.sh [CPU_MODEL ...]     (default: EPYC-Rome Dhyana)
#
# Needs Debian's qemu-user (installed when missing, as root). On a CPU
# that lacks AVX-512 and GFNI, scripts/emulated-isa-tests.sh covers those classes.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
. scripts/lib/install-missing.sh

models=("$@")
[ ${#models[@]} -gt 0 ] || models=(EPYC-Rome Dhyana)
command -v qemu-x86_64 >/dev/null || install_missing cpu-class-tests qemu-user

echo "cpu-class-tests: building the test binaries"
. scripts/lib/test-binaries.sh
# The workspace's test build (CI has made it already; naming the packages alone would
# compile shared crates again with other features).
mapfile -t bins < <(test_binaries ec-codec,isal-compat kernels,codec,isal,ec_codec,byte_equal -- --workspace --locked |
    awk '{ print $2, $3 }')
if [ ${#bins[@]} -lt 5 ]; then
    echo "cpu-class-tests: could not build the test binaries" >&2
    exit 1
fi

failed=0
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
for model in "${models[@]}"; do
    for b in "${bins[@]}"; do
        name="${b%% *}"
        exe="${b#* }"
        echo "== $model: $name"
        status=0
        # The kernels are the same code natively (where the workspace's tests compared
        # every one this CPU runs with the scalar reference); what the model changes is
        # which one each call picks: the kernel tests take their sample of cases here.
        EC_CODEC_TEST_QUICK=1 qemu-x86_64 -cpu "$model" "$exe" --test-threads 2 >"$log" 2>&1 || status=$?
        grep -E '^test result|FAILED|panicked|differs|model' "$log" || true
        if [ "$status" != 0 ] || ! grep -q '^test result: ok' "$log"; then
            echo "cpu-class-tests: $name FAILED on $model (exit $status); its output ends:" >&2
            tail -n 30 "$log" >&2
            failed=1
        fi
    done
done
[ "$failed" = 0 ] || exit 1
echo "cpu-class-tests: all test binaries passed on ${models[*]}"
