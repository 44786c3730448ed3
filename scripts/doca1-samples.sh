#!/usr/bin/env bash
# Builds NVIDIA's DOCA 1.3 DMA and comm channel samples (not part of this project)
# unchanged against the 1.x libraries installed by scripts/install-capi.sh, host and DPU
# flavours, through the 1.x pkg-config module names, and runs them:
#
#   bash scripts/doca1-samples.sh --samples DIR --prefix PREFIX [--rounds N] [--netns]
#
# DIR holds the samples' files anywhere below it: dma_common.c, dma_common.h,
# dma_local_copy.c, dma_remote_copy_sender.c and dma_remote_copy_receiver.c (a DOCA 1.3
# samples tree, or a copy of those five). The samples' own mains parse DOCA's argp
# options; this script links the sample functions to a main of its own that takes the
# same values from its command line. Runs: the local copy on the DPU side, and the
# remote copy as two processes (the receiver on the DPU side listening on a TCP port,
# the sender on the host side exporting its buffer and sending the JSON descriptor),
# the copied text checked on both sides. With --netns (root, iproute2) the two run in
# two network namespaces joined by a veth pair, the descriptor crossing TCP between them.
#
# Where DIR also holds the 1.3 comm channel samples (the files that define
# create_comm_channel_client and create_comm_channel_server with the 1.3 endpoint
# attributes, whatever their names), they are built the same way and run as two
# processes: the server on the DPU side, then the client on the host side, once per
# round against the same server, each exchange checked on both sides.
set -euo pipefail
samples="" prefix="" rounds=3 netns=0
while [ $# -gt 0 ]; do
    case "$1" in
    --samples) samples="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --netns) netns=1; shift ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -d "$samples" ] || { echo "--samples must name a directory holding the DOCA 1.3 DMA samples" >&2; exit 2; }
[ -d "$prefix/lib/pkgconfig/doca-1" ] || { echo "--prefix must name an install of scripts/install-capi.sh" >&2; exit 2; }
src=()
for f in dma_common.c dma_common.h dma_local_copy.c dma_remote_copy_sender.c dma_remote_copy_receiver.c; do
    p="$(find "$samples" -name "$f" -type f | head -n 1)"
    [ -n "$p" ] || { echo "$f not found under $samples" >&2; exit 2; }
    src+=("$p")
done
# The comm channel samples, found by what they define.
cc_client="$(grep -rlE --include='*.c' '^create_comm_channel_client\(char \*server_name\)' "$samples" | head -n 1 || true)"
cc_server="$(grep -rlE --include='*.c' '^create_comm_channel_server\(char \*server_name\)' "$samples" | head -n 1 || true)"
out="$(mktemp -d)"
ns_a="doca1s-a-$$" ns_b="doca1s-b-$$"
cleanup() {
    if [ "$netns" = 1 ]; then
        ip netns del "$ns_a" 2>/dev/null || true
        ip netns del "$ns_b" 2>/dev/null || true
    fi
    rm -rf "$out"
}
trap cleanup EXIT
mkdir -p "$out/src"
cp "${src[@]}" "$out/src/"

# The main: the sample functions' arguments from the command line.
cat >"$out/src/main1.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <doca_error.h>
#include <doca_types.h>

doca_error_t dma_local_copy(struct doca_pci_bdf *pcie_addr, char *dst_buffer, char *src_buffer, size_t length);
doca_error_t dma_remote_copy_sender(struct doca_pci_bdf *pcie_addr, char *src_buffer, size_t length,
				    char *receiver_ip, uint16_t receiver_port);
doca_error_t dma_remote_copy_receiver(struct doca_pci_bdf *pcie_addr, char *dst_buffer, const char *data_to_copy,
				      size_t data_to_copy_len, const char *port);

#define LEN 4096

static int bdf_of(const char *s, struct doca_pci_bdf *b)
{
	unsigned int bus, dev, fn;

	if (sscanf(s, "%x:%x.%x", &bus, &dev, &fn) != 3 || bus > 255 || dev > 31 || fn > 7)
		return -1;
	b->raw = (uint16_t)(bus << 8 | dev << 3 | fn);
	return 0;
}

int main(int argc, char **argv)
{
	struct doca_pci_bdf bdf;
	char *a = calloc(1, LEN), *b = calloc(1, LEN);
	doca_error_t r;

	if (argc < 4 || bdf_of(argv[2], &bdf) != 0 || a == NULL || b == NULL) {
		fprintf(stderr, "usage: %s local BDF TEXT | sender BDF IP PORT TEXT | receiver BDF PORT\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "local") == 0) {
		snprintf(a, LEN, "%s", argv[3]);
		r = dma_local_copy(&bdf, b, a, LEN);
		printf("local copy: %s; destination holds: %s\n", doca_get_error_string(r), b);
		return r == DOCA_SUCCESS && strcmp(a, b) == 0 ? 0 : 1;
	}
	if (strcmp(argv[1], "sender") == 0 && argc == 6) {
		snprintf(a, LEN, "%s", argv[5]);
		r = dma_remote_copy_sender(&bdf, a, LEN, argv[3], (uint16_t)atoi(argv[4]));
		printf("sender: %s\n", doca_get_error_string(r));
		return r == DOCA_SUCCESS ? 0 : 1;
	}
	r = dma_remote_copy_receiver(&bdf, b, NULL, LEN, argv[3]);
	printf("receiver: %s; copied: %s\n", doca_get_error_string(r), b);
	return r == DOCA_SUCCESS ? 0 : 1;
}
EOF

# NVIDIA's files themselves warn under -Wextra (a signed/unsigned comparison and an
# unused parameter of the receiver): those two stay warnings; everything else,
# including anything the installed headers cause, is an error.
strict=(-std=gnu11 -Wall -Wextra -Werror -Wno-error=sign-compare -Wno-error=unused-parameter
    -Werror=implicit-function-declaration)
for side in doca-1 doca-1-dpu; do
    pc="$prefix/lib/pkgconfig/$side"
    # shellcheck disable=SC2046
    cc "${strict[@]}" -I"$out/src" "$out"/src/*.c -o "$out/dma1-$side" \
        $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs doca-common doca-dma json-c) 2>"$out/cc.log" ||
        { echo "FAIL build ($side)"; cat "$out/cc.log"; exit 1; }
    if grep -v -e sign-compare -e unused-parameter "$out/cc.log" | grep -q warning; then
        echo "FAIL build ($side): warnings"; cat "$out/cc.log"; exit 1
    fi
done
# The receiver reaches the memory map's functions through doca_buf.h, doca_buf_inventory.h
# and doca_dma.h alone; a C++ compiler refuses an undeclared function outright.
if command -v g++ >/dev/null; then
    # shellcheck disable=SC2046
    g++ -std=c++20 -x c++ -fsyntax-only -Wall -Werror -Wno-sign-compare \
        -I"$out/src" "$out/src/dma_remote_copy_receiver.c" \
        $(PKG_CONFIG_PATH="$prefix/lib/pkgconfig/doca-1-dpu" pkg-config --cflags doca-common doca-dma json-c) ||
        { echo "FAIL the receiver as C++"; exit 1; }
    echo "ok   the receiver compiles as C++20 (the memory map reached through the headers it includes)"
fi
if [ -n "$cc_client" ] && [ -n "$cc_server" ]; then
    mkdir -p "$out/cc"
    cp "$cc_client" "$out/cc/client.c"
    cp "$cc_server" "$out/cc/server.c"
    cat >"$out/cc/main_cc.c" <<'EOF'
#include <stdio.h>
#include <string.h>

#include <doca_error.h>

doca_error_t create_comm_channel_client(char *server_name);
doca_error_t create_comm_channel_server(char *server_name);

int main(int argc, char **argv)
{
	doca_error_t r;

	if (argc != 3 || (strcmp(argv[1], "client") != 0 && strcmp(argv[1], "server") != 0)) {
		fprintf(stderr, "usage: %s client|server NAME\n", argv[0]);
		return 2;
	}
	if (strcmp(argv[1], "server") == 0)
		r = create_comm_channel_server(argv[2]);
	else
		r = create_comm_channel_client(argv[2]);
	printf("%s: %s\n", argv[1], doca_get_error_string(r));
	return r == DOCA_SUCCESS ? 0 : 1;
}
EOF
    for side in doca-1 doca-1-dpu; do
        pc="$prefix/lib/pkgconfig/$side"
        # shellcheck disable=SC2046
        cc "${strict[@]}" "$out"/cc/*.c -o "$out/cc1-$side" \
            $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs doca-common doca-comm-channel) 2>"$out/cc.log" ||
            { echo "FAIL build of the comm channel samples ($side)"; cat "$out/cc.log"; exit 1; }
        if grep -q warning "$out/cc.log"; then
            echo "FAIL build of the comm channel samples ($side): warnings"; cat "$out/cc.log"; exit 1
        fi
    done
else
    cc_client=""
    echo "skip the comm channel samples: none under $samples"
fi
echo "built both flavours with ${strict[*]}"

host_ip=127.0.0.1
in_dpu=() in_host=()
if [ "$netns" = 1 ]; then
    ip netns add "$ns_a"
    ip netns add "$ns_b"
    ip link add "v$$a" type veth peer name "v$$b"
    ip link set "v$$a" netns "$ns_a"
    ip link set "v$$b" netns "$ns_b"
    ip -n "$ns_a" addr add 169.254.51.1/24 dev "v$$a"
    ip -n "$ns_b" addr add 169.254.51.2/24 dev "v$$b"
    ip -n "$ns_a" link set "v$$a" up
    ip -n "$ns_b" link set "v$$b" up
    ip -n "$ns_a" link set lo up
    ip -n "$ns_b" link set lo up
    host_ip=169.254.51.1 # the receiver (DPU side) is in namespace a
    in_dpu=(ip netns exec "$ns_a")
    in_host=(ip netns exec "$ns_b")
fi
export DOCA_SW_RUNTIME_DIR="$out/rt"
mkdir -p -m 700 "$DOCA_SW_RUNTIME_DIR"
unset DOCA_SW_TOPOLOGY DOCA_SW_ROLE
for r in $(seq 1 "$rounds"); do
    text="local text $r of the 1.3 sample"
    timeout 60 "$out/dma1-doca-1-dpu" local 03:00.0 "$text" >"$out/l.log" 2>&1 ||
        { echo "FAIL local copy ($r)"; cat "$out/l.log"; exit 1; }
    grep -q "Success, memory copied and verified as correct" "$out/l.log" &&
        grep -q "destination holds: $text" "$out/l.log" || { echo "FAIL local copy ($r)"; cat "$out/l.log"; exit 1; }
    echo "ok   dma_local_copy ($r)"

    port=$((47000 + RANDOM % 1000))
    text="remote text $r from the 1.3 sender"
    ("${in_dpu[@]}" timeout 60 "$out/dma1-doca-1-dpu" receiver 03:00.0 "$port" >"$out/r.log" 2>&1
        echo $? >"$out/r.rc") &
    sleep 0.5
    rc=0
    "${in_host[@]}" timeout 60 "$out/dma1-doca-1" sender 3b:00.0 "$host_ip" "$port" "$text" >"$out/s.log" 2>&1 || rc=$?
    wait
    if [ "$rc" != 0 ] || [ "$(cat "$out/r.rc")" != 0 ] ||
        ! grep -q "Memory content: $text" "$out/r.log" ||
        ! grep -q "Ack message was received" "$out/s.log"; then
        echo "FAIL dma_remote_copy sender/receiver ($r): sender $rc, receiver $(cat "$out/r.rc")"
        cat "$out/s.log" "$out/r.log"
        exit 1
    fi
    echo "ok   dma_remote_copy_sender/receiver ($r)$([ "$netns" = 1 ] && echo ", two namespaces")"
done

if [ -n "$cc_client" ]; then
    # The server answers every client until it is stopped; several clients in turn.
    name="cc_sample_server_$$"
    timeout 120 "$out/cc1-doca-1-dpu" server "$name" >"$out/ccs.log" 2>&1 &
    server=$!
    for _ in $(seq 1 100); do
        grep -q "Server started Listening" "$out/ccs.log" && break
        sleep 0.1
    done
    for r in $(seq 1 "$rounds"); do
        timeout 60 "$out/cc1-doca-1" client "$name" >"$out/ccc.log" 2>&1 ||
            { echo "FAIL cc_client ($r)"; cat "$out/ccc.log" "$out/ccs.log"; kill "$server"; exit 1; }
        if ! grep -q "Server response: Hello From Server" "$out/ccc.log" ||
            [ "$(grep -c "Received message: Hello From Client" "$out/ccs.log")" != "$r" ]; then
            echo "FAIL cc_client/cc_server ($r)"; cat "$out/ccc.log" "$out/ccs.log"; kill "$server"; exit 1
        fi
        echo "ok   cc_client/cc_server ($r): the client's hello and the server's answer"
    done
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
fi
