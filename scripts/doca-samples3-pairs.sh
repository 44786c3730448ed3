#!/usr/bin/env bash
# Builds NVIDIA's DOCA 3.x host/DPU sample pairs and applications from a checkout of
# github.com/NVIDIA-DOCA/doca-samples (not part of this project), unchanged, against the
# libraries installed by scripts/install-capi.sh, with strict flags, and runs each pair
# as two processes of this machine with default addresses:
#
#   bash scripts/doca-samples3-pairs.sh --samples DIR --prefix PREFIX [--rounds N]
#
# Pairs: comch_ctrl_path_server/client, comch_data_path_high_speed_server/client,
# sync_event_local_pci/remote_pci (sync, async and atomic modes, both directions),
# dma_copy_dpu/host; applications: dma_copy and file_integrity (both directions),
# secure_channel. Prints one line per run and fails on the first failure. Before the
# runs, the samples are also built the way a DOCA user builds one, with its own
# meson.build.public (needs meson and ninja; the checkout's VERSION file must be there).
set -euo pipefail
samples="" prefix="" rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
    --samples) samples="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -d "$samples/samples" ] || { echo "--samples must name a doca-samples checkout" >&2; exit 2; }
[ -d "$prefix/lib/pkgconfig" ] || { echo "--prefix must name an install of scripts/install-capi.sh" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
strict=(-Wall -Wextra -Werror -std=gnu11 -DDOCA_ALLOW_EXPERIMENTAL_API)
mods="doca-common doca-comch doca-dma doca-sha doca-argp"
S="$samples/samples" A="$samples/applications"

build() { # side name sources...
    local side="$1" name="$2"; shift 2
    local pc="$prefix/lib/pkgconfig" inc=() f
    [ "$side" = dpu ] && pc="$pc/dpu"
    # Each sample's directory and its group's, as the samples' meson files give them.
    for f in "$@"; do inc+=(-I"$(dirname "$f")" -I"$(dirname "$(dirname "$f")")"); done
    # shellcheck disable=SC2046
    cc "${strict[@]}" "${inc[@]}" -I"$S" -I"$samples" -I"$A/common" "$@" -o "$out/$name" \
        $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs $mods) -lpthread
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

C="$S/doca_comch"
build dpu comch_server "$C"/comch_ctrl_path_server/*.c "$C/comch_ctrl_path_common.c" "$S/common.c"
build host comch_client "$C"/comch_ctrl_path_client/*.c "$C/comch_ctrl_path_common.c" "$S/common.c"
build dpu hs_server "$C"/comch_data_path_high_speed_server/*.c "$C/comch_data_path_high_speed_common.c" "$C/comch_ctrl_path_common.c" "$S/common.c"
build host hs_client "$C"/comch_data_path_high_speed_client/*.c "$C/comch_data_path_high_speed_common.c" "$C/comch_ctrl_path_common.c" "$S/common.c"
G="$S/doca_common"
for s in sync_event_local_pci sync_event_remote_pci; do
    build dpu "${s}_dpu" "$G/$s"/*.c "$G/common_common.c" "$S/common.c"
    build host "${s}_host" "$G/$s"/*.c "$G/common_common.c" "$S/common.c"
done
D="$S/doca_dma"
build dpu dma_copy_dpu "$D"/dma_copy_dpu/*.c "$D/dma_common.c" "$S/common.c"
build host dma_copy_host "$D"/dma_copy_host/*.c "$D/dma_common.c" "$S/common.c"
for app in dma_copy file_integrity secure_channel; do
    for side in dpu host; do
        build "$side" "${app}_app_$side" "$A/$app"/*.c "$A/common/comch_utils.c" "$A/common/utils.c" \
            "$A/common/pack.c" "$S/common.c"
    done
done
echo "built every pair with ${strict[*]}"

if command -v meson >/dev/null && command -v ninja >/dev/null && [ -f "$samples/VERSION" ]; then
    # A copy of the checkout: the public build files go where DOCA's own are.
    mkdir -p "$out/meson-tree"
    cp -r "$samples/VERSION" "$samples/samples" "$samples/applications" "$out/meson-tree/"
    for d in doca_comch/comch_ctrl_path_server:dpu doca_comch/comch_ctrl_path_client:host \
        doca_comch/comch_data_path_high_speed_server:dpu doca_comch/comch_data_path_high_speed_client:host \
        doca_common/sync_event_local_pci:host doca_common/sync_event_remote_pci:dpu \
        doca_common/pe_polling:host doca_dma/dma_copy_host:host doca_dma/dma_copy_dpu:dpu; do
        pc="$prefix/lib/pkgconfig"
        [ "${d##*:}" = dpu ] && pc="$pc/dpu"
        work="$out/meson-tree/samples/${d%%:*}"
        cp "$work/meson.build.public" "$work/meson.build"
        rm -rf "$work/build"
        if ! (cd "$work" && PKG_CONFIG_PATH="$pc" meson setup build >"$out/meson.log" 2>&1 &&
            ninja -C build >>"$out/meson.log" 2>&1); then
            echo "FAIL meson build of ${d%%:*}"
            tail -n 20 "$out/meson.log"
            exit 1
        fi
        echo "ok   meson build of ${d%%:*} (${d##*:} side)"
    done
fi

head -c 300000 /dev/urandom >"$out/src.bin"
for r in $(seq 1 "$rounds"); do
    pair "comch_ctrl_path ($r)" "$out/comch_server" -- "$out/comch_client"
    pair "comch_data_path_high_speed ($r)" "$out/hs_server" -- "$out/hs_client"
    for mode in "" "--async --async-num-tasks 4" "--atomic" "--async --atomic --async-num-tasks 4"; do
        # shellcheck disable=SC2086
        pair "sync_event remote on the DPU [$mode] ($r)" "$out/sync_event_remote_pci_dpu" -d 03:00.0 -r 3b:00.0 $mode \
            -- "$out/sync_event_local_pci_host" -d 3b:00.0 $mode
        # shellcheck disable=SC2086
        pair "sync_event local on the DPU [$mode] ($r)" "$out/sync_event_local_pci_dpu" -d 03:00.0 -r 3b:00.0 $mode \
            -- "$out/sync_event_remote_pci_host" -d 3b:00.0 $mode
    done
    rm -f /tmp/export_desc.txt /tmp/buffer_info.txt
    # The host side writes its descriptor files, then waits for Enter (given once the
    # DPU side is done).
    (cd "$out" && { sleep 3; echo; } | timeout 60 "$out/dma_copy_host" >"$out/h.log" 2>&1) &
    sleep 0.5
    (cd "$out" && timeout 60 "$out/dma_copy_dpu" >"$out/d.log" 2>&1) || { echo "FAIL dma_copy pair"; tail -n 5 "$out/d.log"; exit 1; }
    wait
    grep -q "Remote DMA copy was done Successfully" "$out/d.log" && echo "ok   dma_copy_dpu/host ($r)"
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
    pair "secure_channel 4080 B x 5000 ($r)" "$out/secure_channel_app_dpu" -s 4080 -n 5000 -p 03:00.0 -r 3b:00.0 \
        -- "$out/secure_channel_app_host" -s 4080 -n 5000 -p 3b:00.0
done
echo "every pair ran $rounds time(s)"
