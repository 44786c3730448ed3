#!/usr/bin/env bash
# Builds a public DOCA 1.5 program (not part of this project) unchanged, with its own
# build files, against the 1.5 libraries installed by scripts/install-capi.sh, and runs
# it:
#
#   bash scripts/doca15-programs.sh --comm-channel-bench DIR --prefix PREFIX [--rounds N]
#
# DIR is a checkout of github.com/ZhuJiaqi9905/comm_channel_bench (a comm channel
# ping-pong benchmark of 2023: CMake's pkg_check_modules asking for every DOCA 1.5
# module, doca_argp options, devices found by struct doca_pci_bdf, a server with a
# representor on the DPU side and a client on the host side). It is configured with
# PKG_CONFIG_PATH at PREFIX/lib/pkgconfig/doca-1.5 and built with -Wall -Wextra -Werror
# (the program's own sign-compare, unused-parameter and old-style-declaration warnings
# left as warnings). Each round runs the server as the DPU side (DOCA_SW_ROLE=dpu: the
# project links what pkg-config names as libraries, not the DPU flavour's object) and
# the client against it, with a message size of its own; both must end successfully,
# and the server must have timed every iteration the client asked for.
set -euo pipefail
ccb="" prefix="" rounds=3
while [ $# -gt 0 ]; do
    case "$1" in
    --comm-channel-bench) ccb="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -f "$ccb/CMakeLists.txt" ] && [ -f "$ccb/src/server.c" ] ||
    { echo "--comm-channel-bench must name a checkout of comm_channel_bench" >&2; exit 2; }
[ -d "$prefix/lib/pkgconfig/doca-1.5" ] || { echo "--prefix must name an install of scripts/install-capi.sh" >&2; exit 2; }
command -v cmake >/dev/null || { echo "cmake is needed (apt-get install cmake)" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

PKG_CONFIG_PATH="$prefix/lib/pkgconfig/doca-1.5" cmake -S "$ccb" -B "$out/build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS="-Wall -Wextra -Werror -Wno-error=sign-compare -Wno-error=unused-parameter -Wno-error=old-style-declaration" \
    >"$out/cmake.log" 2>&1 || { cat "$out/cmake.log"; exit 1; }
make -C "$out/build" >"$out/make.log" 2>&1 || { cat "$out/make.log"; exit 1; }
bin="$out/build/main"
echo "ok   comm_channel_bench built with its CMakeLists.txt (doca-1.5)"

export DOCA_SW_RUNTIME_DIR="$out/rt"
mkdir -p -m 700 "$DOCA_SW_RUNTIME_DIR"
sizes=(64 1024 4080)
for ((r = 0; r < rounds; r++)); do
    size="${sizes[$((r % ${#sizes[@]}))]}" iters=$((20 + r * 10)) name="ccb15-$r"
    env -u DOCA_SW_TOPOLOGY DOCA_SW_ROLE=dpu timeout 120 "$bin" -d 03:00.0 -r 3b:00.0 -n "$name" \
        >"$out/server.log" 2>&1 &
    server=$!
    for _ in $(seq 1 300); do
        grep -q "Server started Listening" "$out/server.log" && break
        kill -0 "$server" 2>/dev/null || break
        sleep 0.1
    done
    if ! env -u DOCA_SW_TOPOLOGY -u DOCA_SW_ROLE timeout 120 "$bin" -d 3b:00.0 -c -n "$name" \
        -s "$size" -w 3 -i "$iters" >"$out/client.log" 2>&1; then
        cat "$out/client.log" "$out/server.log"
        kill "$server" 2>/dev/null || true
        echo "FAIL comm_channel_bench client, round $r" >&2
        exit 1
    fi
    if ! wait "$server"; then
        cat "$out/server.log"
        echo "FAIL comm_channel_bench server, round $r" >&2
        exit 1
    fi
    grep -q "size: $size, warm_up: 3, iterations: $iters" "$out/server.log" ||
        { cat "$out/server.log"; echo "FAIL the server did not get the client's parameters" >&2; exit 1; }
    timed="$(grep -c "DOCA\]\[INF\]\[server.c:[0-9]*\]: duration" "$out/server.log" || true)"
    [ "$timed" = "$iters" ] ||
        { cat "$out/server.log"; echo "FAIL the server timed $timed of $iters iterations" >&2; exit 1; }
    avg="$(grep -o "average duration [0-9.]* us" "$out/server.log")"
    echo "ok   comm_channel_bench round $r: $iters round trips of $size bytes, $avg"
done
