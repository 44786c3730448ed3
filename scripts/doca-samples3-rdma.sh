#!/usr/bin/env bash
# Builds NVIDIA's DOCA 3.x RDMA sample pairs from a checkout of
# github.com/NVIDIA-DOCA/doca-samples (not part of this project), or with --gen 2.2 the
# DOCA 2.2 pairs of a DOCA 2.2.0080 samples tree (github.com/nvbrent/random_spi_gw at
# its first commit holds one under samples/), unchanged, against the
# libraries installed by scripts/install-capi.sh, with strict flags, and runs each pair
# as two processes: the descriptors go through files (as the samples' guide tells a
# user to copy them) or the pair uses the connection manager (--use-rdma-cm). With
# --netns, the two sides run in two network namespaces joined by a veth pair (UCX over
# TCP, as between two machines; needs root and iproute2's ip). With --shm, both sides
# allow shared memory (DOCA_RDMA_SHM=1: on one machine, reads and writes are copied
# directly).
#
#   bash scripts/doca-samples3-rdma.sh --samples DIR --prefix PREFIX [--netns | --shm] [--gen 2.2]
#
# Pairs: write, read, write_immediate (requester/responder), send/receive,
# send_immediate/receive_immediate, and for 3.x sync_event (requester/responder), each
# also with the connection manager, and multi_conn send/receive (two connections); 2.2
# has no connection manager (descriptor files only). Prints one line per run and fails
# on the first failure, after checking what the receiving side printed.
set -euo pipefail
samples="" prefix="" netns=0 gen=3
while [ $# -gt 0 ]; do
    case "$1" in
    --samples) samples="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --netns) netns=1; shift ;;
    --shm) export DOCA_RDMA_SHM=1; shift ;;
    --gen) gen="$2"; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -d "$samples/samples/doca_rdma" ] || { echo "--samples must name a doca-samples checkout" >&2; exit 2; }
case "$gen" in
3) modules="doca-common doca-rdma doca-argp" ;;
2.2) modules="doca" ;;
*) echo "--gen is 3 or 2.2" >&2; exit 2 ;;
esac
[ -d "$prefix/lib/pkgconfig" ] || { echo "--prefix must name an install of scripts/install-capi.sh" >&2; exit 2; }
out="$(mktemp -d)"
nsa="" nsb=""
cleanup() {
    [ -n "$nsa" ] && ip netns del "$nsa" 2>/dev/null || true
    [ -n "$nsb" ] && ip netns del "$nsb" 2>/dev/null || true
    rm -rf "$out"
}
trap cleanup EXIT
strict=(-Wall -Wextra -Werror -std=gnu11 -DDOCA_ALLOW_EXPERIMENTAL_API)
S="$samples/samples"
R="$S/doca_rdma"
for d in "$R"/rdma_*/; do
    name="$(basename "$d")"
    # shellcheck disable=SC2046
    cc "${strict[@]}" -I"$S" -I"$R" "$d"/*.c "$R/rdma_common.c" "$S/common.c" -o "$out/$name" \
        $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs $modules)
done

# The two sides: plain processes of this machine, or one per namespace.
run_a=() run_b=() addr_a=127.0.0.1
if [ "$netns" = 1 ]; then
    id=$$
    nsa="doca-rdma-samples-$id-a" nsb="doca-rdma-samples-$id-b"
    ip netns add "$nsa"
    ip netns add "$nsb"
    ip link add "sv${id}a" netns "$nsa" type veth peer name "sv${id}b" netns "$nsb"
    ip -n "$nsa" addr add 169.254.77.1/16 dev "sv${id}a"
    ip -n "$nsb" addr add 169.254.77.2/16 dev "sv${id}b"
    for n in "$nsa:sv${id}a" "$nsb:sv${id}b"; do
        ip -n "${n%%:*}" link set "${n#*:}" up
        ip -n "${n%%:*}" link set lo up
    done
    for _ in $(seq 100); do
        ip -n "$nsb" link show "sv${id}b" | grep -q "state UP" && break
        sleep 0.05
    done
    run_a=(ip netns exec "$nsa" env UCX_TLS=tcp UCX_NET_DEVICES="sv${id}a")
    run_b=(ip netns exec "$nsb" env UCX_TLS=tcp UCX_NET_DEVICES="sv${id}b")
    addr_a=169.254.77.1
fi

# pair NAME FIRST SECOND EXPECT [ARGS...]: FIRST (the responder or receiver) starts,
# then SECOND; each gets the enters its guide asks for; EXPECT must appear in what
# FIRST printed.
pair() {
    local name="$1" first="$2" second="$3" expect="$4"
    shift 4
    local d="$out/run" cm="${CM:-}"
    rm -rf "$d" && mkdir -p "$d/a" "$d/b"
    local fa=() sa=()
    if [ -n "$cm" ]; then
        fa=(-cm -lp "$cm")
        sa=(-cm -lp "$cm" -sa "$addr_a" -sat IPv4)
    else
        # Each side has its own files; they are copied across, as between machines.
        fa=(-ld "$d/a/first_conn" -re "$d/a/second_conn" -m "$d/a/first_res")
        sa=(-ld "$d/b/second_conn" -re "$d/b/first_conn" -m "$d/b/first_res")
        (
            for _ in $(seq 60); do
                sleep 0.2
                cp "$d"/a/first_* "$d/b/" 2>/dev/null || true
                cp "$d"/b/second_conn* "$d/a/" 2>/dev/null || true
            done
        ) &
    fi
    (
        cd "$d/a"
        set +o pipefail # the enters may outlast the program (SIGPIPE)
        r=0
        (for t in ${FIRST_ENTERS:-1.5 3 2}; do sleep "$t"; echo; done) |
            timeout 30 "${run_a[@]}" "$out/$first" -d mlx5_0 "${fa[@]}" "$@" >"$d/first.log" 2>&1 || r=$?
        echo "$r" >"$d/first.rc"
    ) &
    sleep 0.5
    local rc=0
    (cd "$d/b" && set +o pipefail && (for t in ${SECOND_ENTERS:-2 1 1}; do sleep "$t"; echo; done) |
        timeout 30 "${run_b[@]}" "$out/$second" -d mlx5_0 "${sa[@]}" "$@" >"$d/second.log" 2>&1) || rc=$?
    wait
    if [ "$rc" != 0 ] || [ "$(cat "$d/first.rc")" != 0 ] || ! grep -qF -- "$expect" "$d/first.log" "$d/second.log"; then
        echo "FAIL $name${cm:+ (rdma-cm)} (second $rc, first $(cat "$d/first.rc"))"
        tail -n 8 "$d/first.log" "$d/second.log"
        exit 1
    fi
    echo "ok   $name${cm:+ (rdma-cm)}"
}

if [ "$gen" = 2.2 ]; then
    # DOCA 2.2: descriptor files; the responders of write and read wait for two enters.
    pair write rdma_write_responder rdma_write_requester 'Responder has written: "Hi DOCA RDMA!"'
    pair read rdma_read_responder rdma_read_requester 'Read from responder: "Hi DOCA RDMA!"'
    pair write_imm rdma_write_immediate_responder rdma_write_immediate_requester 'Requester has written: "Hi DOCA RDMA!" with immediate data'
    pair send rdma_receive rdma_send 'Got from sender: "Hi DOCA RDMA!"'
    pair send_imm rdma_receive_immediate rdma_send_immediate 'Got from sender: "Hi DOCA RDMA!" with immediate'
    exit 0
fi
for CM in "" 13579; do
    pair write rdma_write_responder rdma_write_requester 'Requester has written: "Hi DOCA RDMA!"'
    pair read rdma_read_responder rdma_read_requester 'Read from responder: "Hi DOCA RDMA!"'
    pair write_imm rdma_write_immediate_responder rdma_write_immediate_requester 'Requester has written: "Hi DOCA RDMA!" with immediate data'
    pair send rdma_receive rdma_send 'Got from sender: "Hi DOCA RDMA!"'
    pair send_imm rdma_receive_immediate rdma_send_immediate 'Got from sender: "Hi DOCA RDMA!" with immediate'
    pair sync_event rdma_sync_event_responder rdma_sync_event_requester 'Sample finished successfully'
done
# Two connections of one context each: an enter per connection on each side, in turn.
CM="" FIRST_ENTERS="1.5 2 3 1.5" SECOND_ENTERS="2 2 1 2" \
    pair multi_conn rdma_multi_conn_receive rdma_multi_conn_send 'Got from sender: "Hi DOCA RDMA!"' -nc 2
