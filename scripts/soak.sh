#!/usr/bin/env bash
# A soak under faults, for N minutes (default 1):
#
#   bash scripts/soak.sh [--minutes N]
#
# Two thirds of the time: RDMA pairs between two network namespaces with faults chosen
# at random (1-5% loss each way, a partition or a link down with operations in flight,
# a peer killed mid-transfer; crates/doca-rdma/tests/netns.rs, test `soak`), every byte
# checked. The rest: DOCA's storage reference application's stand-in (C++17 host, DPU
# service and RDMA storage targets, on one machine and across namespaces; test
# `storage_application_stand_ins_3x` of crates/doca-capi/tests/c_api3.rs) run again and
# again, every block read back checked. Needs root (namespaces, nftables). Runs the
# workspace's own test executables, built by `cargo test --workspace --locked` (built
# here when missing). Prints the totals; fails on the first wrong byte, hang or crash.
set -euo pipefail
cd "$(dirname "$0")/.."
minutes=1
while [ $# -gt 0 ]; do
    case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
case "$minutes" in
'' | *[!0-9]*) echo "--minutes takes a whole number of minutes" >&2; exit 2 ;;
esac
[ "$minutes" -ge 1 ] || { echo "--minutes takes at least 1" >&2; exit 2; }

. scripts/lib/test-binaries.sh
mapfile -t bins < <(test_binaries doca-rdma,doca-capi netns,c_api3 -- --workspace --locked)
rdma="" capi="" rdma_dir="" capi_dir=""
for b in "${bins[@]}"; do
    read -r _pkg name exe dir <<<"$b"
    case "$name" in
    netns) rdma="$exe" rdma_dir="$dir" ;;
    c_api3) capi="$exe" capi_dir="$dir" ;;
    esac
done
[ -n "$rdma" ] && [ -n "$capi" ] || { echo "soak: the test executables were not built" >&2; exit 1; }

total=$((minutes * 60))
rdma_secs=$((total * 2 / 3))
export DOCA_REQUIRE_NETNS=1
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
echo "soak: RDMA pairs under faults for $rdma_secs s"
if ! (cd "$rdma_dir" && DOCA_SOAK_SECONDS="$rdma_secs" "$rdma" --exact soak --nocapture --test-threads 1) >"$log" 2>&1; then
    cat "$log" >&2
    echo "soak: the RDMA soak failed" >&2
    exit 1
fi
grep '^soak:' "$log"

end=$((SECONDS + total - rdma_secs))
runs=0
while [ "$SECONDS" -lt "$end" ]; do
    if ! (cd "$capi_dir" && "$capi" --exact storage_application_stand_ins_3x -q) >"$log" 2>&1; then
        cat "$log" >&2
        echo "soak: the storage stand-in failed after $runs good runs" >&2
        exit 1
    fi
    runs=$((runs + 1))
done
echo "soak: the storage stand-in ran whole $runs times"
echo "soak passed: $minutes minute(s), wrong bytes 0, hangs 0, crashes 0"
