#!/usr/bin/env bash
# Builds public DOCA 1.x programs (not part of this project) unchanged, with their own
# build files, against the libraries installed by scripts/install-capi.sh, and runs them:
#
#   bash scripts/doca1-programs.sh --prefix PREFIX [--rounds N] [--netns]
#        [--comm-channel-bench DIR] [--dma-bench DIR] [--doca-dma-benchmark DIR]
#
# --comm-channel-bench: a checkout of github.com/ZhuJiaqi9905/comm_channel_bench (DOCA
#   1.5, C, 2023): a comm channel ping-pong benchmark, CMake's pkg_check_modules asking
#   for every DOCA 1.5 module. Each round runs the server as the DPU side (representor
#   3b:00.0) and the client on the host side with a message size of its own; both must
#   end successfully, and the server must have timed every iteration the client asked
#   for.
# --dma-bench: a checkout of github.com/ZhuJiaqi9905/dma_bench (DOCA 1.5, C, 2023): a
#   local DMA benchmark on the DPU (03:00.0) that copies random text into the same
#   destination buffer again and again and compares source and destination in its
#   warm-up rounds. Each round must copy every warm-up and timed iteration, with
#   destination equal to source each time.
# --doca-dma-benchmark: a clone (with its history) of
#   github.com/GlitterIsMe/doca_dma_benchmark (DOCA 1.3-1.4, C++14, 2022): a sender on
#   the host (af:00.0) exports its memory and sends the JSON descriptor over TCP to a
#   receiver on the DPU (03:00.0), which reads and writes 64-byte blocks of it by DMA.
#   Its last commit is built; the sender of that commit maps a device-DAX persistent
#   memory file (not a regular file) and its receiver's latency histogram is never
#   cleared, so the runs use the commit before the histogram (872dc54: a 1024-byte
#   DRAM buffer, one read and one write of a random block, the host printing its
#   buffer afterwards), checked byte by byte; the last commit's receiver then runs its
#   setup and teardown against that sender. The two sides see one machine described by
#   a topology file (host function af:00.0, its representor on DPU port 03:00.0).
#   dma_bench and doca_dma_benchmark run their odd rounds with 2 engine threads per
#   device (jobs complete asynchronously), their even rounds without.
#   Needs gflags, libpmem and json-c (apt-get install libgflags-dev libpmem-dev
#   libjson-c-dev).
#
# Each program is configured with its own CMakeLists.txt: the 1.5 ones with
# PKG_CONFIG_PATH at PREFIX/lib/pkgconfig/doca-1.5; doca_dma_benchmark sets
# PKG_CONFIG_PATH itself (to DOCA's /opt/mellanox/doca), so it finds the 1.x modules
# through PKG_CONFIG_LIBDIR (PREFIX/lib/pkgconfig/doca-1, then the system's). Programs
# whose build files take only the modules' include directories get
# -DDOCA_ALLOW_EXPERIMENTAL_API as DOCA programs are built. Built with -Wall -Wextra:
# a warning in one of the installed DOCA headers fails the build; the programs' own
# warnings are listed. --netns (root, iproute2) puts the TCP peers of
# doca_dma_benchmark in two network namespaces joined by a veth pair.
set -euo pipefail
prefix="" rounds=3 netns=0 ccb="" dmab="" gdb=""
while [ $# -gt 0 ]; do
    case "$1" in
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --netns) netns=1; shift ;;
    --comm-channel-bench) ccb="$2"; shift 2 ;;
    --dma-bench) dmab="$2"; shift 2 ;;
    --doca-dma-benchmark) gdb="$2"; shift 2 ;;
    -h | --help) sed -n '2,46p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -d "$prefix/lib/pkgconfig/doca-1.5" ] && [ -d "$prefix/lib/pkgconfig/doca-1" ] ||
    { echo "--prefix must name an install of scripts/install-capi.sh" >&2; exit 2; }
[ -n "$ccb$dmab$gdb" ] || { echo "name at least one program's checkout (see --help)" >&2; exit 2; }
command -v cmake >/dev/null || { echo "cmake is needed (apt-get install cmake)" >&2; exit 2; }
out="$(mktemp -d)"
ns_a="doca1p-a-$$" ns_b="doca1p-b-$$"
cleanup() {
    if [ "$netns" = 1 ]; then
        ip netns del "$ns_a" 2>/dev/null || true
        ip netns del "$ns_b" 2>/dev/null || true
    fi
    rm -rf "$out"
}
trap cleanup EXIT
export DOCA_SW_RUNTIME_DIR="$out/rt"
mkdir -p -m 700 "$DOCA_SW_RUNTIME_DIR"
unset DOCA_SW_TOPOLOGY DOCA_SW_ROLE

# cmake_build NAME SRC BUILD LANG-FLAGS-VAR [cmake args...]: configures and builds with
# -Wall -Wextra; fails on an error or on any warning in the installed DOCA headers.
cmake_build() {
    local name="$1" src="$2" build="$3" flags_var="$4"
    shift 4
    if ! cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
        "-D$flags_var=-DDOCA_ALLOW_EXPERIMENTAL_API -Wall -Wextra" "$@" >"$build.cmake.log" 2>&1; then
        cat "$build.cmake.log"
        echo "FAIL $name: cmake" >&2
        exit 1
    fi
    if ! make -C "$build" >"$build.make.log" 2>&1; then
        cat "$build.make.log"
        echo "FAIL $name: build" >&2
        exit 1
    fi
    if grep -E "^$prefix/[^:]*:[0-9]+:[0-9]+: warning" "$build.make.log"; then
        echo "FAIL $name: warnings in the installed DOCA headers" >&2
        exit 1
    fi
    local own
    own="$(grep -oE "warning: .*\[-W[a-z-]+(=[0-9])?\]" "$build.make.log" | grep -oE "\[-W[^]]*\]" | sort -u | tr -d '[]' | tr '\n' ' ' || true)"
    echo "ok   $name built with its CMakeLists.txt${own:+ (warnings of its own code: $own)}"
}

# engine_of ROUND: the engine threads of a round's devices: none (jobs run in the
# caller) in even rounds, 2 in odd ones.
engine_of() { [ $(($1 % 2)) = 1 ] && echo 2 || true; }

# machine THREADS HOST-PCI: writes a topology file (one host function, its representor
# on DPU port 03:00.0, THREADS engine threads per device; 0: none) and prints its path.
machine() {
    local f="$out/machine-$1-$2.toml"
    cat >"$f" <<TOML
role = "host"
[[host.device]]
pci_addr = "0000:$2"
iface_name = "ens7f0np0"
ibdev_name = "mlx5_2"
engine_threads = $1
[[dpu.device]]
pci_addr = "0000:03:00.0"
iface_name = "p0"
ibdev_name = "mlx5_0"
engine_threads = $1
  [[dpu.device.representor]]
  pci_addr = "0000:$2"
  vuid = "MT0000SW0001pf0hpf"
TOML
    echo "$f"
}

# ---- comm_channel_bench (1.5) ----
if [ -n "$ccb" ]; then
    [ -f "$ccb/CMakeLists.txt" ] && [ -f "$ccb/src/server.c" ] ||
        { echo "--comm-channel-bench must name a checkout of comm_channel_bench" >&2; exit 2; }
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig/doca-1.5" cmake_build comm_channel_bench "$ccb" "$out/ccb" CMAKE_C_FLAGS
    bin="$out/ccb/main"
    sizes=(64 1024 4080)
    for ((r = 0; r < rounds; r++)); do
        size="${sizes[$((r % ${#sizes[@]}))]}" iters=$((20 + r * 10)) name="ccb15-$r-$$"
        DOCA_SW_ROLE=dpu timeout 120 "$bin" -d 03:00.0 -r 3b:00.0 -n "$name" >"$out/server.log" 2>&1 &
        server=$!
        for _ in $(seq 1 300); do
            grep -q "Server started Listening" "$out/server.log" && break
            kill -0 "$server" 2>/dev/null || break
            sleep 0.1
        done
        if ! timeout 120 "$bin" -d 3b:00.0 -c -n "$name" -s "$size" -w 3 -i "$iters" >"$out/client.log" 2>&1; then
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
fi

# ---- dma_bench (1.5) ----
if [ -n "$dmab" ]; then
    [ -f "$dmab/CMakeLists.txt" ] && [ -f "$dmab/src/core.c" ] ||
        { echo "--dma-bench must name a checkout of dma_bench" >&2; exit 2; }
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig/doca-1.5" cmake_build dma_bench "$dmab" "$out/dmab" CMAKE_C_FLAGS
    sizes=(64 4096 65536)
    for ((r = 0; r < rounds; r++)); do
        size="${sizes[$((r % ${#sizes[@]}))]}" warm=$((3 + r)) iters=$((10 + r * 10))
        engine="$(engine_of "$r")"
        if ! env ${engine:+DOCA_SW_TOPOLOGY="$(machine "$engine" 3b:00.0)"} DOCA_SW_ROLE=dpu timeout 120 \
            "$out/dmab/main" -p 03:00.0 -s "$size" -w "$warm" -i "$iters" >"$out/dmab.log" 2>&1; then
            cat "$out/dmab.log"
            echo "FAIL dma_bench, round $r" >&2
            exit 1
        fi
        copied="$(grep -c ']: Success, memory copied$' "$out/dmab.log" || true)"
        # Its random text may hold a NUL (its alphabet counts the string's terminator),
        # so each line shows source and destination up to the first one.
        checked="$(grep -oE 'src data: [^,]*, dst data: .*$' "$out/dmab.log" |
            sed -E 's/^src data: ([^,]*), dst data: (.*)$/\1\t\2/' |
            awk -F '\t' '$1 == $2 { n++ } END { print n + 0 }')"
        if grep -q "\[ERR\]" "$out/dmab.log" || [ "$copied" != $((warm + iters)) ] || [ "$checked" != "$warm" ]; then
            grep -v "src data" "$out/dmab.log" | head -40
            echo "FAIL dma_bench, round $r: $copied of $((warm + iters)) copies, $checked of $warm checked equal" >&2
            exit 1
        fi
        avg="$(grep -o "average duration [0-9.]* us" "$out/dmab.log")"
        echo "ok   dma_bench round $r: $warm checked and $iters timed copies of $size bytes into one destination, $avg${engine:+, $engine engine threads}"
    done
fi

# ---- doca_dma_benchmark (1.3-1.4, C++) ----
if [ -n "$gdb" ]; then
    git -C "$gdb" cat-file -e 872dc54:main.cpp 2>/dev/null && [ -f "$gdb/CMakeLists.txt" ] ||
        { echo "--doca-dma-benchmark must name a clone of doca_dma_benchmark with its history" >&2; exit 2; }
    for m in gflags libpmem json-c; do
        pkg-config --exists "$m" ||
            { echo "doca_dma_benchmark needs $m (apt-get install libgflags-dev libpmem-dev libjson-c-dev)" >&2; exit 2; }
    done
    sys_pc="$(pkg-config --variable pc_path pkg-config)"
    mkdir -p "$out/gdb-872dc54"
    git -C "$gdb" archive 872dc54 | tar -x -C "$out/gdb-872dc54"
    for tree in "$gdb" "$out/gdb-872dc54"; do
        what="doca_dma_benchmark $(git -C "$gdb" rev-parse --short HEAD)"
        build="$out/gdb-head"
        if [ "$tree" != "$gdb" ]; then what="doca_dma_benchmark 872dc54" build="$out/gdb-old"; fi
        PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig/doca-1:$sys_pc" cmake_build "$what" "$tree" "$build" CMAKE_CXX_FLAGS
    done
    recv_ip=127.0.0.1 in_dpu=() in_host=()
    if [ "$netns" = 1 ]; then
        ip netns add "$ns_a"
        ip netns add "$ns_b"
        ip link add "d1p$$a" type veth peer name "d1p$$b"
        ip link set "d1p$$a" netns "$ns_a"
        ip link set "d1p$$b" netns "$ns_b"
        ip -n "$ns_a" addr add 169.254.52.2/24 dev "d1p$$a"
        ip -n "$ns_b" addr add 169.254.52.1/24 dev "d1p$$b"
        for ns in "$ns_a" "$ns_b"; do ip -n "$ns" link set lo up; done
        ip -n "$ns_a" link set "d1p$$a" up
        ip -n "$ns_b" link set "d1p$$b" up
        recv_ip=169.254.52.2 # the receiver (DPU side) is in namespace a
        in_dpu=(ip netns exec "$ns_a")
        in_host=(ip netns exec "$ns_b")
    elif ss -ltn 2>/dev/null | grep -q ":45678 "; then
        echo "FAIL doca_dma_benchmark's receiver listens on port 45678, which is taken here (use --netns)" >&2
        exit 1
    fi
    # pair BIN [receiver args...]: the receiver on the DPU side, then the sender (872dc54)
    # on the host side; both logs in $out.
    pair() {
        local bin="$1" topo="$2" rc=0
        shift 2
        ("${in_dpu[@]}" env DOCA_SW_TOPOLOGY="$topo" DOCA_SW_ROLE=dpu timeout 60 "$bin" --is_server=false "$@" >"$out/recv.log" 2>&1
            echo $? >"$out/recv.rc") &
        for _ in $(seq 1 100); do
            grep -q "Waiting for sender node" "$out/recv.log" 2>/dev/null && break
            sleep 0.1
        done
        "${in_host[@]}" env DOCA_SW_TOPOLOGY="$topo" DOCA_SW_ROLE=host timeout 60 "$out/gdb-old/dma_test" --is_server=true \
            --receiver_ip="$recv_ip" >"$out/send.log" 2>&1 || rc=$?
        wait
        echo "$rc" >"$out/send.rc"
    }
    pattern="$(awk 'BEGIN { for (i = 0; i < 1023; i++) printf "%c", 97 + i % 25 }')"
    for ((r = 0; r < rounds; r++)); do
        engine="$(engine_of "$r")"
        pair "$out/gdb-old/dma_test" "$(machine "${engine:-0}" af:00.0)"
        got="$(sed -n 's/^Server buffer //p' "$out/send.log")"
        # The receiver wrote 64 '0' bytes over one 64-byte block; everything else is the
        # sender's pattern.
        block="$(awk -v a="$pattern" -v b="$got" 'BEGIN {
            if (length(a) != length(b)) { print "length"; exit }
            n = 0
            for (k = 0; k < 16; k++) {
                x = substr(a, k * 64 + 1, 64); y = substr(b, k * 64 + 1, 64)
                if (x == y) continue
                if (y ~ /^0+$/ && length(y) == length(x)) { n++; at = k } else { print "bad"; exit }
            }
            print (n == 1 ? at : "count " n) }')"
        if [ "$(cat "$out/send.rc")" != 0 ] || [ "$(cat "$out/recv.rc")" != 0 ] ||
            grep -q "\[ERR\]" "$out/send.log" "$out/recv.log" ||
            ! grep -q "Ack message was received" "$out/send.log" ||
            ! grep -qE "^DMA Read lat: [0-9]+ us$" "$out/recv.log" ||
            ! grep -qE "^DMA Write lat: [0-9]+ us$" "$out/recv.log" ||
            ! [[ "$block" =~ ^[0-9]+$ ]]; then
            cat "$out/send.log" "$out/recv.log"
            echo "FAIL doca_dma_benchmark 872dc54, round $r: sender $(cat "$out/send.rc"), receiver $(cat "$out/recv.rc"), buffer: $block" >&2
            exit 1
        fi
        echo "ok   doca_dma_benchmark 872dc54 round $r: the DPU read a block and wrote block $block of the host's buffer${engine:+, $engine engine threads}$([ "$netns" = 1 ] && echo ", two namespaces")"
    done
    pair "$out/gdb-head/dma_test" "$(machine 0 af:00.0)" --benchmarks=none
    if [ "$(cat "$out/send.rc")" != 0 ] || [ "$(cat "$out/recv.rc")" != 0 ] ||
        grep -q "\[ERR\]" "$out/send.log" "$out/recv.log" ||
        ! grep -q "Exported data was received" "$out/recv.log" ||
        ! grep -q "Ack message was received" "$out/send.log" ||
        [ "$(sed -n 's/^Server buffer //p' "$out/send.log")" != "$pattern" ]; then
        cat "$out/send.log" "$out/recv.log"
        echo "FAIL doca_dma_benchmark's last receiver: sender $(cat "$out/send.rc"), receiver $(cat "$out/recv.rc")" >&2
        exit 1
    fi
    echo "ok   doca_dma_benchmark $(git -C "$gdb" rev-parse --short HEAD): its receiver imported the host's memory and acknowledged"
fi
