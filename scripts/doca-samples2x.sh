#!/usr/bin/env bash
# Builds NVIDIA's DOCA 2.5-2.10 samples of the libraries we implement, unchanged, from a
# DOCA samples tree (not part of this project: a doca-samples checkout, or the
# opt/mellanox/doca directory of the doca-samples and doca-apps-dev packages: samples/
# and applications/common/), against the 3.x face installed by scripts/install-capi.sh,
# with strict flags, and runs each with its default arguments; host/DPU pairs run as two
# processes of this machine:
#
#   bash scripts/doca-samples2x.sh --samples DIR --prefix PREFIX [--rounds N]
#
# Samples: the progress engine ones (pe_*), graph, dma_local_copy, sha_create,
# sha_partial_create, erasure_coding_recover; pairs, where the tree has them:
# comm_channel_server/client (2.5-2.6: the 2.x comm channel beside the progress engine),
# cc_ctrl_path and cc_data_path_high_speed server/client (2.6: doca_cc, comch's name then),
# sync_event_dpu/host (2.5-2.6; sync, async and atomic modes), dma_copy_dpu/host, and
# the applications that use the 2.x comm channel (2.5-2.6: dma_copy both ways,
# file_integrity, secure_channel). The
# 2.7-2.10 pairs (comch, sync_event_local_pci/remote_pci) are those of
# scripts/doca-samples3-pairs.sh. Prints one line per run and fails on the first
# failure.
set -euo pipefail
samples="" prefix="" rounds=2
while [ $# -gt 0 ]; do
    case "$1" in
    --samples) samples="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h | --help) sed -n '2,15p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -d "$samples/samples/doca_common" ] || { echo "--samples must name a DOCA tree holding samples/" >&2; exit 2; }
[ -d "$prefix/lib/pkgconfig" ] || { echo "--prefix must name an install of scripts/install-capi.sh" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
strict=(-Wall -Wextra -Werror -std=gnu11 -DDOCA_ALLOW_EXPERIMENTAL_API)
mods="doca-common doca-argp doca-dma doca-sha doca-erasure-coding doca-comm-channel doca-cc"
S="$samples/samples" U="$samples/applications/common/src"
[ -f "$U/utils.h" ] || U="$samples/applications/common"

build() { # side name sources...
    local side="$1" name="$2"; shift 2
    local pc="$prefix/lib/pkgconfig" inc=() f
    [ "$side" = dpu ] && pc="$pc/dpu"
    for f in "$@"; do inc+=(-I"$(dirname "$f")" -I"$(dirname "$(dirname "$f")")"); done
    # shellcheck disable=SC2046
    cc "${strict[@]}" "${inc[@]}" -I"$S" -I"$samples" -I"$U" "$@" -o "$out/$name" \
        $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs $mods) -lpthread
}

# one NAME COMMAND...: a sample on its own, in the output directory.
one() {
    local name="$1"; shift
    if ! (cd "$out" && timeout 60 "$@" >"$out/one.log" 2>&1) || ! grep -q "finished successfully" "$out/one.log"; then
        echo "FAIL $name"
        tail -n 8 "$out/one.log"
        exit 1
    fi
    echo "ok   $name"
}

# pair NAME DPU-COMMAND -- HOST-COMMAND: the DPU side first, then the host side.
pair() {
    local name="$1"; shift
    local dpu=() host=()
    while [ "$1" != -- ]; do dpu+=("$1"); shift; done
    shift
    host=("$@")
    export DOCA_SW_RUNTIME_DIR="$out/rt"
    mkdir -p -m 700 "$DOCA_SW_RUNTIME_DIR"
    (
        cd "$out"
        r=0
        timeout 60 "${dpu[@]}" >"$out/dpu.log" 2>&1 || r=$?
        echo "$r" >"$out/dpu.rc"
    ) &
    sleep 0.3
    local rc=0
    (cd "$out" && timeout 60 "${host[@]}" <<<"" >"$out/host.log" 2>&1) || rc=$?
    wait
    if [ "$rc" != 0 ] || [ "$(cat "$out/dpu.rc")" != 0 ]; then
        echo "FAIL $name (host $rc, dpu $(cat "$out/dpu.rc"))"
        tail -n 5 "$out/host.log" "$out/dpu.log"
        exit 1
    fi
    echo "ok   $name"
}

G="$S/doca_common"
singles=()
for s in pe_async_stop pe_event pe_multi_context pe_polling pe_reactive pe_single_task_comp_cb pe_task_error \
    pe_task_resubmit pe_task_try_submit; do
    build host "$s" "$G/$s"/*.c "$G/pe_common.c" "$S/common.c"
    singles+=("$s")
done
build host graph "$G"/graph/*.c "$S/common.c"
build dpu dma_local_copy "$S"/doca_dma/dma_local_copy/*.c "$S/doca_dma/dma_common.c" "$S/common.c"
for s in sha_create sha_partial_create; do
    build host "$s" "$S/doca_sha/$s"/*.c "$S/common.c" "$U/utils.c"
done
build dpu erasure_coding_recover "$S"/doca_erasure_coding/erasure_coding_recover/*.c "$S/common.c" "$U/utils.c"
C="$S/doca_comm_channel"
[ -d "$C" ] && build dpu comm_channel_server "$C"/comm_channel_server/*.c "$C/comm_channel_common.c" "$S/common.c"
[ -d "$C" ] && build host comm_channel_client "$C"/comm_channel_client/*.c "$C/comm_channel_common.c" "$S/common.c"
K="$S/doca_cc"
if [ -d "$K" ]; then
    build dpu cc_server "$K"/cc_ctrl_path_server/*.c "$K/cc_ctrl_path_common.c" "$S/common.c"
    build host cc_client "$K"/cc_ctrl_path_client/*.c "$K/cc_ctrl_path_common.c" "$S/common.c"
    build dpu cc_hs_server "$K"/cc_data_path_high_speed_server/*.c "$K/cc_data_path_high_speed_common.c" \
        "$K/cc_ctrl_path_common.c" "$S/common.c"
    build host cc_hs_client "$K"/cc_data_path_high_speed_client/*.c "$K/cc_data_path_high_speed_common.c" \
        "$K/cc_ctrl_path_common.c" "$S/common.c"
fi
if [ -d "$G/sync_event_dpu" ]; then
    build dpu sync_event_dpu "$G"/sync_event_dpu/*.c "$G/common_common.c" "$S/common.c"
    build host sync_event_host "$G"/sync_event_host/*.c "$G/common_common.c" "$S/common.c"
fi
D="$S/doca_dma"
build dpu dma_copy_dpu "$D"/dma_copy_dpu/*.c "$D/dma_common.c" "$S/common.c"
build host dma_copy_host "$D"/dma_copy_host/*.c "$D/dma_common.c" "$S/common.c"
# The applications that use the 2.x comm channel (DOCA 2.5-2.6 trees keep their sources
# in applications/NAME/src).
apps=()
for app in dma_copy file_integrity secure_channel; do
    src="$samples/applications/$app/src"
    [ -d "$src" ] || continue
    for side in dpu host; do
        build "$side" "${app}_app_$side" "$src"/*.c "$U/utils.c" "$U/pack.c" "$S/common.c"
    done
    apps+=("$app")
done
echo "built every sample with ${strict[*]}"

for r in $(seq 1 "$rounds"); do
    for s in "${singles[@]}" graph dma_local_copy sha_create sha_partial_create; do
        one "$s ($r)" "$out/$s"
    done
    mkdir -p "$out/ec"
    one "erasure_coding_recover ($r)" "$out/erasure_coding_recover" -o "$out/ec"
    if [ -x "$out/comm_channel_server" ]; then
        pair "comm_channel server/client ($r)" "$out/comm_channel_server" -- "$out/comm_channel_client"
    fi
    if [ -x "$out/cc_server" ]; then
        pair "cc_ctrl_path server/client ($r)" "$out/cc_server" -- "$out/cc_client"
        pair "cc_data_path_high_speed server/client ($r)" "$out/cc_hs_server" -- "$out/cc_hs_client"
    fi
    if [ -x "$out/sync_event_dpu" ]; then
        for mode in "" "--async --async_num_tasks 4" "--atomic" "--async --atomic --async_num_tasks 4"; do
            # shellcheck disable=SC2086
            pair "sync_event dpu/host [$mode] ($r)" "$out/sync_event_dpu" -d 03:00.0 -r 3b:00.0 $mode \
                -- "$out/sync_event_host" -d 3b:00.0 $mode
        done
    fi
    rm -f /tmp/export_desc.txt /tmp/buffer_info.txt
    (cd "$out" && { sleep 3; echo; } | timeout 60 "$out/dma_copy_host" >"$out/h.log" 2>&1) &
    sleep 0.5
    (cd "$out" && timeout 60 "$out/dma_copy_dpu" >"$out/d.log" 2>&1) || { echo "FAIL dma_copy pair"; tail -n 5 "$out/d.log"; exit 1; }
    wait
    grep -q "Remote DMA copy was done Successfully" "$out/d.log" || { echo "FAIL dma_copy pair"; tail -n 5 "$out/d.log" "$out/h.log"; exit 1; }
    echo "ok   dma_copy_dpu/host ($r)"
    if [ ${#apps[@]} -gt 0 ]; then
        head -c 300000 /dev/urandom >"$out/src.bin"
        rm -f "$out/dst.bin" "$out/dst2.bin" "$out/fi.bin"
        pair "dma_copy app host to DPU ($r)" "$out/dma_copy_app_dpu" -p 03:00.0 -r 3b:00.0 -f "$out/dst.bin" \
            -- "$out/dma_copy_app_host" -p 3b:00.0 -f "$out/src.bin"
        cmp -s "$out/src.bin" "$out/dst.bin" || { echo "FAIL dma_copy app: the copy differs"; exit 1; }
        pair "dma_copy app DPU to host ($r)" "$out/dma_copy_app_dpu" -p 03:00.0 -r 3b:00.0 -f "$out/src.bin" \
            -- "$out/dma_copy_app_host" -p 3b:00.0 -f "$out/dst2.bin"
        cmp -s "$out/src.bin" "$out/dst2.bin" || { echo "FAIL dma_copy app: the copy differs"; exit 1; }
        pair "file_integrity ($r)" "$out/file_integrity_app_dpu" -p 03:00.0 -r 3b:00.0 -f "$out/fi.bin" \
            -- "$out/file_integrity_app_host" -p 3b:00.0 -f "$out/src.bin"
        cmp -s "$out/src.bin" "$out/fi.bin" || { echo "FAIL file_integrity: the file differs"; exit 1; }
        # DOCA 2.6's secure_channel runs until it is interrupted (SIGINT): once both
        # sides sent their messages, both are interrupted and must have received all.
        export DOCA_SW_RUNTIME_DIR="$out/rt"
        (cd "$out" && exec "$out/secure_channel_app_dpu" -s 4000 -n 2000 -p 03:00.0 -r 3b:00.0 >"$out/scd.log" 2>&1) &
        scd=$!
        sleep 0.3
        (cd "$out" && exec "$out/secure_channel_app_host" -s 4000 -n 2000 -p 3b:00.0 >"$out/sch.log" 2>&1) &
        sch=$!
        for _ in $(seq 1 600); do
            if grep -q "messages sent successfully: 2000" "$out/scd.log" &&
                grep -q "messages sent successfully: 2000" "$out/sch.log"; then
                break
            fi
            sleep 0.1
        done
        sleep 0.5
        kill -INT "$sch" "$scd" 2>/dev/null || true
        wait "$sch" "$scd" || true
        if ! grep -q "messages received successfully: 2000" "$out/scd.log" ||
            ! grep -q "messages received successfully: 2000" "$out/sch.log"; then
            echo "FAIL secure_channel"
            tail -n 5 "$out/sch.log" "$out/scd.log"
            exit 1
        fi
        echo "ok   secure_channel 4000 B x 2000, both ways ($r)"
    fi
done
echo "every sample ran $rounds time(s)"
