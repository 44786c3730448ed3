#!/usr/bin/env bash
# Builds NVIDIA's compress and AES-GCM samples and the file_compression application from a
# checkout of github.com/NVIDIA-DOCA/doca-samples 3.3.0 (not part of this project), or
# with --gen 2.2 the compress_deflate sample and file_compression application of a DOCA
# 2.2.0080 samples tree (github.com/nvbrent/random_spi_gw's first commit holds one),
# unchanged, with strict flags, against the libraries installed by
# scripts/install-capi.sh, runs them, and checks what they write with other libraries:
# zlib (Python's zlib module) reads what compress_deflate writes and writes what
# decompress_deflate reads, liblz4's command-line tool writes the frames
# decompress_lz4_stream reads (linked and independent blocks, with and without block
# checksums), OpenSSL (Python's cryptography module) reads what aes_gcm_encrypt writes
# and writes what aes_gcm_decrypt reads (tags of 12 and 16 bytes, additional data,
# short IVs, buffer lists); a tampered ciphertext fails the decrypt. file_compression
# runs as two processes (host client, DPU server) and the file arrives whole.
#
#   bash scripts/doca-samples-data.sh --samples DIR --prefix PREFIX [--gen 2.2]
#
# Needs python3 with the cryptography module (Debian: python3-cryptography), lz4 (the
# command-line tool) and zlib's headers. Prints one line per check; fails on the first
# failure.
set -euo pipefail
samples="" prefix="" gen=3
while [ $# -gt 0 ]; do
    case "$1" in
    --samples) samples="$2"; shift 2 ;;
    --prefix) prefix="$2"; shift 2 ;;
    --gen) gen="$2"; shift 2 ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
done
[ -d "$samples/samples/doca_compress" ] || { echo "--samples must name a doca-samples checkout" >&2; exit 2; }
[ -d "$prefix/lib/pkgconfig" ] || { echo "--prefix must name an install of scripts/install-capi.sh" >&2; exit 2; }
command -v lz4 >/dev/null || { echo "lz4 (the command-line tool) is needed" >&2; exit 2; }
python3 -c 'import cryptography' 2>/dev/null || { echo "python3's cryptography module is needed" >&2; exit 2; }
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
strict=(-Wall -Wextra -Werror -std=gnu11 -DDOCA_ALLOW_EXPERIMENTAL_API)
S="$samples/samples" A="$samples/applications"
export DOCA_SW_RUNTIME_DIR="$out/rt"
mkdir -p -m 700 "$DOCA_SW_RUNTIME_DIR"

build() { # side name modules sources...
    local side="$1" name="$2" mods="$3" pc="$prefix/lib/pkgconfig" inc=() f
    shift 3
    [ "$side" = dpu ] && pc="$pc/dpu"
    for f in "$@"; do inc+=(-I"$(dirname "$f")" -I"$(dirname "$(dirname "$f")")"); done
    # shellcheck disable=SC2046,SC2086
    cc "${strict[@]}" "${inc[@]}" -I"$S" -I"$samples" -I"$A/common" -I"$A/common/src" "$@" -o "$out/$name" \
        $(PKG_CONFIG_PATH="$pc" pkg-config --cflags --libs $mods) -lz -lpthread
}

ok() { echo "ok   $*"; }
fail() { echo "FAIL $*"; exit 1; }

# pair NAME DPU-COMMAND -- HOST-COMMAND: the DPU side first, then the host side.
pair() {
    local name="$1"; shift
    local dpu=() host=()
    while [ "$1" != -- ]; do dpu+=("$1"); shift; done
    shift
    host=("$@")
    (cd "$out" && { timeout 60 "${dpu[@]}" >"$out/dpu.log" 2>&1; echo $? >"$out/dpu.rc"; }) &
    sleep 0.3
    local rc=0
    (cd "$out" && timeout 60 "${host[@]}" >"$out/host.log" 2>&1) || rc=$?
    wait
    [ "$rc" = 0 ] && [ "$(cat "$out/dpu.rc")" = 0 ] || { tail -n 5 "$out/host.log" "$out/dpu.log"; fail "$name"; }
    ok "$name"
}

# A text file of 300,000 bytes: this project's README and book, repeated.
root="$(cd "$(dirname "$0")/.." && pwd)"
for _ in 1 2 3 4 5 6; do cat "$root/README.md" "$root"/docs/*.md; done >"$out/readme6.txt"
head -c 300000 "$out/readme6.txt" >"$out/in.txt"

if [ "$gen" = 2.2 ]; then
    build dpu compress_deflate doca "$S"/doca_compress/compress_deflate/*.c "$S/common.c" "$A/common/src/utils.c"
    for side in dpu host; do
        build "$side" "file_compression_$side" doca "$A"/file_compression/src/*.c "$A/common/src/utils.c" \
            "$A/common/src/pack.c" "$S/common.c"
    done
    echo "built the DOCA 2.2 compress sample and file_compression with ${strict[*]}"
    "$out/compress_deflate" -f "$out/in.txt" -o "$out/c.raw" -m compress >"$out/log" 2>&1 || fail compress_deflate
    python3 -c "import zlib,sys; d=open(sys.argv[1],'rb').read(); assert zlib.decompress(open(sys.argv[2],'rb').read(),-15)==d" \
        "$out/in.txt" "$out/c.raw" || fail "zlib reads compress_deflate's output"
    ok "compress_deflate (2.2): zlib inflates its raw deflate"
    python3 -c "import zlib,sys; c=zlib.compressobj(6,zlib.DEFLATED,-15); open(sys.argv[2],'wb').write(c.compress(open(sys.argv[1],'rb').read())+c.flush())" \
        "$out/in.txt" "$out/z.raw"
    "$out/compress_deflate" -f "$out/z.raw" -o "$out/back" -m decompress >"$out/log" 2>&1 || fail "compress_deflate -m decompress"
    cmp -s "$out/back" "$out/in.txt" || fail "decompress of zlib's raw deflate differs"
    ok "compress_deflate -m decompress (2.2): zlib's raw deflate back to the file"
    pair "file_compression (2.2): host compresses, DPU decompresses, checksums agree" \
        "$out/file_compression_dpu" -p 03:00.0 -r 3b:00.0 -f "$out/fc.txt" -- \
        "$out/file_compression_host" -p 3b:00.0 -f "$out/in.txt"
    cmp -s "$out/fc.txt" "$out/in.txt" || fail "file_compression: the file differs"
    exit 0
fi

C="$S/doca_compress"
for s in compress_deflate decompress_deflate decompress_lz4_stream; do
    build dpu "$s" "doca-common doca-compress doca-argp" "$C/$s"/*.c "$C/compress_common.c" "$S/common.c" "$A/common/utils.c"
done
G="$S/doca_aes_gcm"
for s in aes_gcm_encrypt aes_gcm_decrypt; do
    build dpu "$s" "doca-common doca-aes-gcm doca-argp" "$G/$s"/*.c "$G/aes_gcm_common.c" "$S/common.c" "$A/common/utils.c"
done
for side in dpu host; do
    build "$side" "file_compression_$side" "doca-common doca-compress doca-comch doca-argp" \
        "$A"/file_compression/*.c "$C/compress_common.c" "$A/common/comch_utils.c" "$A/common/utils.c" \
        "$A/common/pack.c" "$S/common.c"
done
echo "built the compress and AES-GCM samples and file_compression with ${strict[*]}"

# ---- deflate ----
"$out/compress_deflate" -f "$out/in.txt" -o "$out/c.raw" -c >"$out/log" 2>&1 || fail compress_deflate
"$out/compress_deflate" -f "$out/in.txt" -o "$out/c.z" -wf >"$out/log" 2>&1 || fail "compress_deflate -wf"
python3 - "$out/in.txt" "$out/c.raw" "$out/c.z" <<'EOF' || fail "zlib reads compress_deflate's output"
import sys, zlib
d = open(sys.argv[1], 'rb').read()
assert zlib.decompress(open(sys.argv[2], 'rb').read(), -15) == d
assert zlib.decompress(open(sys.argv[3], 'rb').read()) == d
EOF
ok "compress_deflate: zlib inflates its raw deflate and its zlib frame"
python3 - "$out/in.txt" "$out" <<'EOF'
import sys, zlib
d = open(sys.argv[1], 'rb').read()
c = zlib.compressobj(1, zlib.DEFLATED, -15)
open(sys.argv[2] + '/z1.raw', 'wb').write(c.compress(d) + c.flush())
open(sys.argv[2] + '/z6.z', 'wb').write(zlib.compress(d, 6))
EOF
"$out/decompress_deflate" -f "$out/z1.raw" -o "$out/back1" -c >"$out/log" 2>&1 || fail decompress_deflate
"$out/decompress_deflate" -f "$out/z6.z" -o "$out/back2" -wf >"$out/log" 2>&1 || fail "decompress_deflate -wf"
cmp -s "$out/back1" "$out/in.txt" && cmp -s "$out/back2" "$out/in.txt" || fail "decompress_deflate's output differs"
ok "decompress_deflate: zlib's raw deflate (level 1) and zlib frame (level 6) back to the file"

# ---- LZ4 ----
for opts in "" "-BD" "-BX" "-BD -BX" "-B4" "-9"; do
    rm -f "$out/f.lz4" "$out/back3"
    # shellcheck disable=SC2086
    lz4 -q -f $opts "$out/in.txt" "$out/f.lz4"
    "$out/decompress_lz4_stream" -f "$out/f.lz4" -o "$out/back3" -wf -c >"$out/log" 2>&1 ||
        { tail -n 3 "$out/log"; fail "decompress_lz4_stream of lz4 $opts"; }
    cmp -s "$out/back3" "$out/in.txt" || fail "decompress_lz4_stream of lz4 $opts differs"
    ok "decompress_lz4_stream: liblz4's frame (lz4 ${opts:-defaults}), its content checksum matches"
done

# ---- AES-GCM ----
K=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
head -c 5000 "$out/in.txt" >"$out/p.txt"
for args in "-t 12" "-t 16 -a 10" "-t 12 -i 0a0b0c0d" "-t 16 -ns 3 -nd 2 -a 5" "-k ${K:0:32} -t 16" "-k $K -t 16 -i 00112233445566778899aabb"; do
    rm -f "$out/enc.bin" "$out/dec.txt"
    # shellcheck disable=SC2086
    "$out/aes_gcm_encrypt" -f "$out/p.txt" -o "$out/enc.bin" $args >"$out/log" 2>&1 || fail "aes_gcm_encrypt $args"
    python3 - "$out/p.txt" "$out/enc.bin" "$args" <<'EOF' || fail "OpenSSL reads aes_gcm_encrypt's output ($args)"
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
a = sys.argv[3].split()
o = dict(zip(a[::2], a[1::2]))
k = bytes.fromhex(o.get('-k', '00' * 32))
iv = bytes.fromhex(o.get('-i', '00' * 12)).ljust(12, b'\0')
t, aad = int(o['-t']), int(o.get('-a', '0'))
d, e = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read()
assert e[:aad] == d[:aad]
dec = Cipher(algorithms.AES(k), modes.GCM(iv, e[-t:], min_tag_length=t)).decryptor()
dec.authenticate_additional_data(d[:aad])
assert dec.update(e[aad:-t]) + dec.finalize() == d[aad:]
EOF
    # shellcheck disable=SC2086
    "$out/aes_gcm_decrypt" -f "$out/enc.bin" -o "$out/dec.txt" $args >"$out/log" 2>&1 || fail "aes_gcm_decrypt $args"
    cmp -s "$out/dec.txt" "$out/p.txt" || fail "aes_gcm_decrypt $args differs"
    ok "aes_gcm_encrypt/decrypt $args: OpenSSL authenticates and decrypts it"
done
python3 - "$out/p.txt" "$out/ossl.bin" <<'EOF'
import sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
d = open(sys.argv[1], 'rb').read()
open(sys.argv[2], 'wb').write(AESGCM(bytes(range(32))).encrypt(bytes.fromhex('0a0b0c0d0e0f101112131415'), d, None))
EOF
"$out/aes_gcm_decrypt" -f "$out/ossl.bin" -o "$out/dec2.txt" -k "$K" -i 0a0b0c0d0e0f101112131415 -t 16 >"$out/log" 2>&1 ||
    fail "aes_gcm_decrypt of OpenSSL's output"
cmp -s "$out/dec2.txt" "$out/p.txt" || fail "aes_gcm_decrypt of OpenSSL's output differs"
ok "aes_gcm_decrypt: OpenSSL's sealed block back to the file"
printf '\x55' | dd of="$out/ossl.bin" bs=1 seek=100 conv=notrunc 2>/dev/null
if "$out/aes_gcm_decrypt" -f "$out/ossl.bin" -o "$out/dec3.txt" -k "$K" -i 0a0b0c0d0e0f101112131415 -t 16 >"$out/log" 2>&1; then
    fail "aes_gcm_decrypt accepted a tampered ciphertext"
fi
grep -q "Input/output operation failed" "$out/log" || fail "the tampered decrypt did not fail with IO_FAILED"
[ ! -s "$out/dec3.txt" ] || fail "the tampered decrypt wrote plaintext"
ok "aes_gcm_decrypt: a tampered ciphertext fails, no plaintext written"

# ---- file_compression ----
pair "file_compression: host compresses, DPU decompresses, checksums agree" \
    "$out/file_compression_dpu" -p 03:00.0 -r 3b:00.0 -f "$out/fc.txt" -- \
    "$out/file_compression_host" -p 3b:00.0 -f "$out/in.txt"
cmp -s "$out/fc.txt" "$out/in.txt" || fail "file_compression: the file differs"
