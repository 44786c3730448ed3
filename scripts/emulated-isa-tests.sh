#!/usr/bin/env bash
# Runs ec-codec's test binaries on an emulated CPU that has AVX-512 (F, BW, VL, VBMI)
# and GFNI, so the avx512, gfni256 and gfni512 kernels are checked against the scalar
# reference (and against ISA-L's own AVX-512/GFNI code) on a machine whose CPU lacks
# them.
#
# How: the test binaries are linked statically and packed, with a small init
# (scripts/emu/init.c), into an initramfs; a Debian kernel boots it from an ISO image in
# the Bochs emulator (CPU model "tigerlake"); init runs each binary and prints its exit
# status on the serial port, which this script reads. Bochs 2.7 complements every
# GF2P8AFFINEQB result (it uses an even-parity table), so the script runs a copy of its
# binary with that fixed (scripts/emu/patch-bochs.py), and the first program in the
# emulated machine checks the instruction in every encoding (scripts/emu/gfnicheck.c).
#
#   bash scripts/emulated-isa-tests.sh [--quick] [--timeout SECONDS] [--keep DIR]
#
# --quick (what CI runs) checks only the kernels this machine cannot run natively
# (EC_CODEC_TEST_KERNELS=avx512,gfni256,gfni512), takes the sample of the largest
# kernel tests that EC_CODEC_TEST_QUICK gives (every code path, fewer cases), and leaves
# out the codec's Vandermonde pattern sweep (matrix inversion, the same on every kernel
# and run natively) and the crate's unit tests: about 10 minutes instead of about 50.
#
# Needs Debian packages bochs, bochs-x, bochsbios, vgabios, xvfb, xauth, isolinux,
# syslinux-common, xorriso, cpio and gcc; as root the script installs what is missing.
# Emulation is slow: expect about 50 minutes on one core for the whole run.
set -euo pipefail

timeout_s=3600
keep=""
quick=0
while [ $# -gt 0 ]; do
    case "$1" in
    --timeout) timeout_s="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    --quick) quick=1; shift ;;
    -h | --help) sed -n '2,26p' "$0"; exit 0 ;;
    *) echo "emulated-isa-tests: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
done

root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/scripts/lib/install-missing.sh"
work="${keep:-$(mktemp -d)}"
mkdir -p "$work"
if [ -z "$keep" ]; then
    trap 'rm -rf "$work"' EXIT
fi

need=()
command -v bochs >/dev/null || need+=(bochs bochsbios vgabios)
dpkg -s bochs-x >/dev/null 2>&1 || need+=(bochs-x)
command -v xvfb-run >/dev/null || need+=(xvfb xauth)
[ -f /usr/lib/ISOLINUX/isolinux.bin ] || need+=(isolinux)
[ -f /usr/lib/syslinux/modules/bios/ldlinux.c32 ] || need+=(syslinux-common)
command -v xorriso >/dev/null || need+=(xorriso)
command -v cpio >/dev/null || need+=(cpio)
install_missing emulated-isa-tests "${need[@]}"

# The kernel: Debian's, from the package archive (no modules needed: the serial port,
# the initramfs and the ISO loader are built in).
if [ ! -f "$work/vmlinuz" ]; then
    (
        cd "$work"
        apt-get download linux-image-amd64 2>/dev/null || {
            apt-get update -qq
            apt-get download linux-image-amd64
        }
        dep=$(dpkg-deb -f linux-image-amd64_*.deb Depends | grep -o 'linux-image-[0-9][^ ,]*' | head -1)
        apt-get download "$dep" 2>/dev/null
        dpkg-deb -x "$dep"_*.deb kpkg
        cp kpkg/boot/vmlinuz-* vmlinuz
        rm -rf kpkg ./*.deb
    )
fi

# The test binaries, linked statically for the initramfs.
host=x86_64-unknown-linux-gnu
echo "emulated-isa-tests: building the test binaries (static)"
# The quick run leaves out the crate's unit tests (field arithmetic, matrices, the helper
# pool: nothing that depends on the CPU but the table layouts, which the kernel tests
# cover), which would compile the whole crate a second time.
targets=(--tests)
nbins=5
if [ "$quick" = 1 ]; then
    targets=(--test kernels --test codec --test isal --test dispatch_env)
    nbins=4
fi
mapfile -t bins < <(cd "$root" && RUSTFLAGS="-C target-feature=+crt-static" \
    cargo test -p ec-codec --release --no-run "${targets[@]}" --target "$host" --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] in ("kernels", "codec", "isal", "dispatch_env", "ec_codec"):
        print(m["target"]["name"], m["executable"])
')
if [ ${#bins[@]} -lt "$nbins" ]; then
    echo "emulated-isa-tests: could not build the test binaries" >&2
    exit 1
fi

rd="$work/initrd"
rm -rf "$rd"
mkdir -p "$rd/dev" "$rd/tests"
mknod "$rd/dev/console" c 5 1
mknod "$rd/dev/null" c 1 3
gcc -O2 -static "$root/scripts/emu/init.c" -o "$rd/init"
gcc -O2 -static "$root/scripts/emu/gfnicheck.c" -o "$rd/tests/gfnicheck"
for b in "${bins[@]}"; do
    strip -o "$rd/tests/${b%% *}" "${b#* }"
done
# One line per run: binary, then environment (NAME=VALUE) and arguments. The emulator's
# GFNI is checked first. The codec tests run once on each wide kernel (dispatch_env
# checks the automatic choice).
runs=8
if [ "$quick" = 1 ]; then
    runs=7
    cat >"$rd/tests/list" <<'EOF'
gfnicheck
kernels EC_CODEC_TEST_QUICK=1 EC_CODEC_TEST_KERNELS=avx512,gfni256,gfni512
codec DOCA_EC_ISA=avx512 --skip vandermonde
codec DOCA_EC_ISA=gfni256 --skip vandermonde
codec DOCA_EC_ISA=gfni512 --skip vandermonde
isal
dispatch_env
EOF
else
    cat >"$rd/tests/list" <<'EOF'
gfnicheck
kernels
codec DOCA_EC_ISA=avx512
codec DOCA_EC_ISA=gfni256
codec DOCA_EC_ISA=gfni512
isal
dispatch_env
ec_codec
EOF
fi

iso="$work/iso"
rm -rf "$iso"
mkdir -p "$iso/isolinux"
cp /usr/lib/ISOLINUX/isolinux.bin /usr/lib/syslinux/modules/bios/ldlinux.c32 "$iso/isolinux/"
cp "$work/vmlinuz" "$iso/vmlinuz"
(cd "$rd" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$iso/initrd.gz")
# Kernel options for Bochs 2.7's tigerlake model: it reports an empty PKRU save area and
# the standard XSAVE size for the compacted format, so PKU (feature bit 515), XSAVES (323)
# and XSAVEC (321) are hidden from the kernel; with FSRM (580), RDPID (534) or UMIP (514)
# in use the kernel faults forever in its page-fault handler early in boot; APERF/MPERF
# (124) are advertised but not implemented. Hiding them from the kernel leaves AVX-512
# and GFNI visible to programs. The legacy PIC timer and HLT idle are the most dependable
# under emulation.
cat >"$iso/isolinux/isolinux.cfg" <<'EOF'
DEFAULT t
PROMPT 0
TIMEOUT 0
LABEL t
  KERNEL /vmlinuz
  APPEND initrd=/initrd.gz console=ttyS0,115200 rdinit=/init loglevel=4 nokaslr mitigations=off lsm= nosmp noapic nolapic audit=0 tsc=unstable clearcpuid=515,323,321,124,580,534,514 idle=halt
EOF
xorriso -as mkisofs -quiet -o "$work/boot.iso" -b isolinux/isolinux.bin -c isolinux/boot.cat \
    -no-emul-boot -boot-load-size 4 -boot-info-table "$iso" 2>/dev/null

cat >"$work/bochsrc" <<EOF
megs: 1024
cpu: model=tigerlake, count=1, ips=200000000
romimage: file=/usr/share/bochs/BIOS-bochs-latest
vgaromimage: file=/usr/share/bochs/VGABIOS-lgpl-latest
display_library: x
ata0-master: type=cdrom, path=$work/boot.iso, status=inserted
boot: cdrom
com1: enabled=1, mode=file, dev=$work/serial.txt
log: $work/bochs.log
speaker: enabled=0
sound: waveoutdrv=dummy, waveindrv=dummy, midioutdrv=dummy
panic: action=fatal
error: action=report
clock: sync=none
EOF
python3 "$root/scripts/emu/patch-bochs.py" "$(command -v bochs-bin)" "$work/bochs-bin"
chmod +x "$work/bochs-bin"
# Debian's Bochs starts in its debugger: "c" continues.
echo c >"$work/debugger.rc"
rm -f "$work/serial.txt"

echo "emulated-isa-tests: booting the emulated machine (this takes a while)"
start=$(date +%s)
(cd "$work" && GUEST=guest exec xvfb-run -a "$work/bochs-bin" -q -f "$work/bochsrc" -rc "$work/debugger.rc" \
    >"$work/bochs.out" 2>&1 </dev/null) &
emu=$!
shown=0
status=1
while :; do
    sleep 5
    if [ -f "$work/serial.txt" ]; then
        lines=$(grep -c '' "$work/serial.txt" || true)
        if [ "$lines" -gt "$shown" ]; then
            sed -n "$((shown + 1)),${lines}p" "$work/serial.txt" | grep -a '^EMU\|^GF \|^test \|panicked\|differs' |
                sed "s/^/[$(($(date +%s) - start))s] /" || true
            shown=$lines
        fi
        if grep -aq '^EMU done' "$work/serial.txt"; then
            if grep -aq "^EMU done ran=$runs failed=0" "$work/serial.txt" &&
                grep -aq '^EMU cpu: avx2=yes avx512f=yes avx512bw=yes avx512vl=yes avx512vbmi=yes gfni=yes' "$work/serial.txt"; then
                status=0
            fi
            break
        fi
    fi
    if ! kill -0 "$emu" 2>/dev/null; then
        echo "emulated-isa-tests: the emulator stopped before the tests finished" >&2
        break
    fi
    if [ $(($(date +%s) - start)) -gt "$timeout_s" ]; then
        echo "emulated-isa-tests: timed out after ${timeout_s}s" >&2
        break
    fi
done
# The emulator itself, not xvfb-run around it (which then stops its X server).
pkill -f "^$work/bochs-bin .*$work/bochsrc" 2>/dev/null || true
wait "$emu" 2>/dev/null || true
echo "emulated-isa-tests: $(($(date +%s) - start)) s in the emulator"
if [ "$status" != 0 ]; then
    echo "emulated-isa-tests: FAILED; the serial log follows" >&2
    tail -n 60 "$work/serial.txt" >&2 2>/dev/null || true
    exit 1
fi
echo "emulated-isa-tests: all test binaries passed on the emulated AVX-512/GFNI CPU"
