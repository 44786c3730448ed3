#!/usr/bin/env bash
# Builds the DOCA 2.2 C libraries and installs them with their headers and pkg-config
# files:
#
#   scripts/install-capi.sh --prefix DIR [--profile release|dev]
#
# Installs DIR/include/doca_*.h, DIR/lib/libdoca_common.so.2 (the library) with
# libdoca_{dma,sha,erasure_coding,argp} as links to it (linker scripts for -l, soname
# links for programs linked elsewhere), the static libdoca_*.a, and
# DIR/lib/pkgconfig/doca.pc and doca-libs.pc. Then, for a program of the host side:
#
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig gcc app.c $(pkg-config --cflags --libs doca)
#
# The DPU flavour (DOCA_ARCH_DPU defined, the process runs as the DPU side) is
# DIR/lib/pkgconfig/doca-dpu.pc, with DIR/include/dpu/doca_build_config.h and
# DIR/lib/doca-dpu/doca_arch_dpu.o; DIR/lib/pkgconfig/dpu/ holds it under the name doca,
# for build files that ask for dependency('doca'):
#
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig gcc app.c $(pkg-config --cflags --libs doca-dpu)
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig/dpu meson setup build
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

. "$root/scripts/lib/install-args.sh"
parse_install_args install-capi 2,20 "$@"
for tool in cc ar; do
    command -v "$tool" >/dev/null || { echo "install-capi: '$tool' is needed (apt-get install gcc binutils)" >&2; exit 1; }
done

cargo build --quiet --profile "$profile" -p doca-capi --lib --manifest-path "$root/Cargo.toml"
target="${CARGO_TARGET_DIR:-$root/target}"
archive="$target/$outdir/libdoca_capi.a"
[ -f "$archive" ] || { echo "install-capi: $archive was not built" >&2; exit 1; }

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
inc="$prefix/include"
lib="$prefix/lib"
pc="$lib/pkgconfig"
mkdir -p "$inc" "$lib" "$pc"

# Build everything in a scratch directory first, then move it into place, so that a
# failed build leaves no half-installed library behind.
stage="$(mktemp -d "$lib/.doca-install.XXXXXX")"
trap 'rm -rf "$stage"' EXIT

version=2.2.0080
real="libdoca_common.so.$version"
printf '{\n  global: doca_*;\n  local: *;\n};\n' >"$stage/exports.map"
cc -shared -o "$stage/$real" -Wl,-soname,libdoca_common.so.2 \
    -Wl,--whole-archive "$archive" -Wl,--no-whole-archive \
    -Wl,--version-script="$stage/exports.map" -Wl,--gc-sections \
    -lpthread -ldl -lm -lgcc_s -lc
rm "$stage/exports.map"
ln -s "$real" "$stage/libdoca_common.so.2"
ln -s libdoca_common.so.2 "$stage/libdoca_common.so"
cp "$archive" "$stage/libdoca_common.a"
for l in dma sha erasure_coding argp comm_channel; do
    # -ldoca_<lib> finds a linker script naming the one real library.
    echo "INPUT(libdoca_common.so.2)" >"$stage/libdoca_$l.so"
    echo "INPUT(libdoca_common.a)" >"$stage/libdoca_$l.a"
    # Programs linked against per-library sonames load the same library.
    ln -s libdoca_common.so.2 "$stage/libdoca_$l.so.2"
done

for p in doca doca-libs doca-dpu; do
    sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" "$root/crates/doca-capi/pkgconfig/$p.pc.in" >"$stage/$p.pc"
done
mkdir "$stage/pc-dpu"
sed -e 's|^Name: doca-dpu$|Name: doca|' "$stage/doca-dpu.pc" >"$stage/pc-dpu/doca.pc"
ln -s ../doca-libs.pc "$stage/pc-dpu/doca-libs.pc"

# The DPU flavour: its doca_build_config.h, and the object that makes a program the DPU
# side of the machine before main.
mkdir -p "$stage/dpu-include" "$stage/doca-dpu"
cp "$root/crates/doca-capi/include/dpu/doca_build_config.h" "$stage/dpu-include/"
cc -c -fPIC -O2 -Wall -Wextra -Werror -I"$stage/dpu-include" \
    -o "$stage/doca-dpu/doca_arch_dpu.o" "$root/crates/doca-capi/csrc/arch_dpu.c"

cp "$root"/crates/doca-capi/include/doca_*.h "$inc/"
rm -rf "$inc/dpu" "$lib/doca-dpu" "$pc/dpu"
mv "$stage/dpu-include" "$inc/dpu"
mv "$stage/doca-dpu" "$lib/doca-dpu"
mv "$stage/pc-dpu" "$pc/dpu"
mv "$stage"/doca.pc "$stage"/doca-libs.pc "$stage"/doca-dpu.pc "$pc/"
for f in "$stage"/*; do
    mv -f "$f" "$lib/"
done
echo "installed the DOCA $version C libraries in $prefix (pkg-config: PKG_CONFIG_PATH=$pc)"
