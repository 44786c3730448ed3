#!/usr/bin/env bash
# Builds the DOCA C libraries of both API generations (2.2, and 3.x's progress engine
# and tasks) and installs them side by side with their headers and pkg-config files:
#
#   scripts/install-capi.sh --prefix DIR [--profile release|dev] [--reuse]
#
# --reuse: when DIR already holds what this script would install now (the same library
# build, headers, pkg-config templates and script), it is left as it is.
#
# Installs DIR/include/doca_*.h, DIR/lib/libdoca_common.so.2 (the library) with
# libdoca_{dma,sha,erasure_coding,compress,argp,comm_channel,rdma} as links to it (linker scripts for -l, soname
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
#
# The 3.x generation: DIR/include/doca-3/, DIR/lib/doca-3/libdoca_common.so.3 (with
# libdoca_{dma,sha,erasure_coding,compress,aes_gcm,argp,comch,rdma,comm_channel} linking
# to it), and the pkg-config modules DOCA 3.x ships: doca-common, doca-argp, doca-dma,
# doca-erasure-coding, doca-sha, doca-compress, doca-aes-gcm, doca-comch and doca-rdma, with doca-comm-channel (the
# 2.x comm channel, as DOCA 2.5 and 2.6 shipped it beside the progress engine) and
# doca-cc (DOCA 2.6's names of comch, doca_cc*.h); their
# DPU flavour is in DIR/lib/pkgconfig/dpu/:
#
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig gcc app.c $(pkg-config --cflags --libs doca-common doca-dma)
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig/dpu gcc app.c $(pkg-config --cflags --libs doca-common doca-dma)
#
# The 1.x generation (1.3-1.4): DIR/include/doca-1/, DIR/lib/doca-1/libdoca_common.so.1
# (with libdoca_{dma,argp,comm_channel} linking to it), and the pkg-config modules doca-1 and
# doca-1-dpu (the DPU flavour); DIR/lib/pkgconfig/doca-1/ and doca-1-dpu/ hold them
# under the names 1.x build files ask for (doca, doca-common, doca-dma, doca-argp,
# doca-comm-channel):
#
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig gcc app.c $(pkg-config --cflags --libs doca-1)
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig/doca-1 meson setup build
#
# DOCA 1.5: 2.2's headers with DIR/include/doca-1.5/ first (doca_api_level.h, which adds
# the 1.5 declarations), DIR/lib/doca-1.5/libdoca_common.so.1 (with
# libdoca_{dma,argp,comm_channel,sha,compress} linking to it), and the pkg-config modules
# doca-1.5 and doca-1.5-dpu; DIR/lib/pkgconfig/doca-1.5/ and doca-1.5-dpu/ hold them under
# the names 1.5 build files ask for (doca, doca-common, doca-dma, doca-argp,
# doca-comm-channel, doca-sha, doca-compress; and, adding nothing, the names of the 1.5
# libraries this SDK does not implement, such as doca-flow):
#
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig/doca-1.5 cmake -S . -B build
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

. "$root/scripts/lib/install-args.sh"
parse_install_args install-capi 2,20 "$@"
for tool in cc ar nm objcopy; do
    command -v "$tool" >/dev/null || { echo "install-capi: '$tool' is needed (apt-get install gcc binutils)" >&2; exit 1; }
done

cargo build --quiet --profile "$profile" -p doca-capi --lib --manifest-path "$root/Cargo.toml"
target="${CARGO_TARGET_DIR:-$root/target}"
archive="$target/$outdir/libdoca_capi.a"
[ -f "$archive" ] || { echo "install-capi: $archive was not built" >&2; exit 1; }
# What the installed files are made of: with --reuse, an install of the same is kept.
stamp_of() {
    {
        stat -c '%n %s %Y' "$archive"
        (cd "$root" && find scripts/install-capi.sh scripts/lib/install-args.sh \
            crates/doca-capi/include* crates/doca-capi/pkgconfig* crates/doca-capi/csrc \
            -type f -print0 | sort -z | xargs -0 sha256sum)
        echo "prefix $1"
    } | sha256sum | cut -d' ' -f1
}
if [ "$reuse" = 1 ] && [ -f "$prefix/.doca-install-stamp" ]; then
    prefix_abs="$(cd "$prefix" && pwd)"
    if [ "$(cat "$prefix/.doca-install-stamp")" = "$(stamp_of "$prefix_abs")" ]; then
        echo "install-capi: $prefix_abs already holds this build (--reuse)"
        exit 0
    fi
fi

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
# Written again once everything is in place.
rm -f "$prefix/.doca-install-stamp"
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
    -lucp -lucs -lpthread -ldl -lm -lgcc_s -lc
rm "$stage/exports.map"
ln -s "$real" "$stage/libdoca_common.so.2"
ln -s libdoca_common.so.2 "$stage/libdoca_common.so"
cp "$archive" "$stage/libdoca_common.a"
for l in dma sha erasure_coding compress argp comm_channel rdma; do
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
# The library of generation $1 (version $2) in the directory $3, from the archive: the
# names the generation shares with 2.2 under another meaning are defined as
# doca<gen>__<rest>; they take their public names, and the 2.2 functions of those names
# are renamed out of the way (doca22__<rest>, not exported). The libraries named after
# $4... are links to the one library.
generation_libs() {
    local gen="$1" ver="$2" dir="$3" major="${2%%.*}"
    shift 3
    local work
    work="$(mktemp -d "$stage/.gen.XXXXXX")"
    nm --defined-only "$archive" 2>/dev/null | awk -v p="^doca${gen}__" '$3 ~ p {print $3}' | sort -u >"$work/newer"
    [ -s "$work/newer" ] || { echo "install-capi: no ${gen}.x symbols found in $archive" >&2; exit 1; }
    nm --defined-only "$archive" 2>/dev/null | awk '$3 ~ /^doca_/ {print $3}' | sort -u >"$work/older"
    while read -r sym; do
        pub="doca_${sym#doca${gen}__}"
        if grep -qx "$pub" "$work/older"; then
            echo "$pub doca22__${pub#doca_}"
        fi
        echo "$sym $pub"
    done <"$work/newer" >"$work/renames"
    objcopy --redefine-syms="$work/renames" "$archive" "$dir/libdoca_common.a"
    printf '{\n  global: doca_*;\n  local: *;\n};\n' >"$work/exports.map"
    cc -shared -o "$dir/libdoca_common.so.$ver" -Wl,-soname,"libdoca_common.so.$major" \
        -Wl,--whole-archive "$dir/libdoca_common.a" -Wl,--no-whole-archive \
        -Wl,--version-script="$work/exports.map" -Wl,--gc-sections \
        -lucp -lucs -lpthread -ldl -lm -lgcc_s -lc
    ln -s "libdoca_common.so.$ver" "$dir/libdoca_common.so.$major"
    ln -s "libdoca_common.so.$major" "$dir/libdoca_common.so"
    for l in "$@"; do
        echo "INPUT(libdoca_common.so.$major)" >"$dir/libdoca_$l.so"
        echo "INPUT(libdoca_common.a)" >"$dir/libdoca_$l.a"
        ln -s "libdoca_common.so.$major" "$dir/libdoca_$l.so.$major"
    done
    rm -rf "$work"
}

# ---- The 3.x generation, beside 2.2's ----
version3=3.3.0
stage3="$stage/doca-3"
mkdir -p "$stage3/lib/dpu" "$stage3/include/dpu" "$stage3/pc/dpu"
generation_libs 3 "$version3" "$stage3/lib" dma sha erasure_coding compress aes_gcm argp comch rdma comm_channel cc
cp "$root"/crates/doca-capi/include3/doca_*.h "$stage3/include/"
cp "$root/crates/doca-capi/include3/dpu/doca_build_config.h" "$stage3/include/dpu/"
cc -c -fPIC -O2 -Wall -Wextra -Werror -I"$stage3/include/dpu" \
    -o "$stage3/lib/dpu/doca_arch_dpu.o" "$root/crates/doca-capi/csrc/arch_dpu.c"
pc3="$root/crates/doca-capi/pkgconfig3"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version3|" "$pc3/doca-common.pc.in" >"$stage3/pc/doca-common.pc"
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version3|" "$pc3/doca-common-dpu.pc.in" >"$stage3/pc/dpu/doca-common.pc"
for spec in argp:argp:Argp dma:dma:DMA erasure-coding:erasure_coding:Erasure\ Coding sha:sha:SHA compress:compress:Compress aes-gcm:aes_gcm:AES-GCM comch:comch:Comch rdma:rdma:RDMA comm-channel:comm_channel:Comm\ Channel cc:cc:Comm\ Channel\ \(2.6\ names\ of\ comch\); do
    IFS=: read -r name soname title <<<"$spec"
    sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version3|" -e "s|@LIB@|$name|" \
        -e "s|@SONAME@|$soname|" -e "s|@TITLE@|$title|" "$pc3/doca-lib.pc.in" >"$stage3/pc/doca-$name.pc"
    cp "$stage3/pc/doca-$name.pc" "$stage3/pc/dpu/doca-$name.pc"
done

rm -rf "$inc/doca-3" "$lib/doca-3"
mkdir -p "$pc/dpu"
mv "$stage3/pc/dpu"/*.pc "$pc/dpu/"
rmdir "$stage3/pc/dpu"
mv "$stage3/pc"/*.pc "$pc/"
mv "$stage3/include" "$inc/doca-3"
mv "$stage3/lib" "$lib/doca-3"
rm -rf "$stage3"

# ---- The 1.x generation (1.3-1.4), beside the others ----
# The headers 1.x keeps from 2.2 (errors, log, argp, build configuration) are copied
# beside its own.
version1=1.4.0079
stage1="$stage/doca-1"
mkdir -p "$stage1/lib/dpu" "$stage1/include/dpu" "$stage1/pc/doca-1" "$stage1/pc/doca-1-dpu"
generation_libs 1 "$version1" "$stage1/lib" dma argp comm_channel
for h in doca_error.h doca_log.h doca_argp.h doca_compat.h doca_config.h doca_api_level.h doca_common_defines.h doca_build_config.h; do
    cp "$root/crates/doca-capi/include/$h" "$stage1/include/"
done
cp "$root"/crates/doca-capi/include1/doca_*.h "$stage1/include/"
cp "$root/crates/doca-capi/include/dpu/doca_build_config.h" "$stage1/include/dpu/"
cc -c -fPIC -O2 -Wall -Wextra -Werror -I"$stage1/include/dpu" \
    -o "$stage1/lib/dpu/doca_arch_dpu.o" "$root/crates/doca-capi/csrc/arch_dpu.c"
pc1="$root/crates/doca-capi/pkgconfig1"
# In the doca-1 and doca-1-dpu directories, the module names 1.x projects ask for
# (doca, doca-common, doca-dma, doca-argp) all give the 1.x headers and libraries.
specs=(doca-1:doca-1 doca-1-dpu:doca-1-dpu)
for d in doca-1 doca-1-dpu; do
    for m in doca doca-common doca-dma doca-argp doca-comm-channel; do specs+=("$d/$m:$d"); done
done
for spec in "${specs[@]}"; do
    IFS=: read -r out tmpl <<<"$spec"
    extra=""
    [ "${out##*/}" = doca-argp ] && extra=" -ldoca_argp"
    [ "${out##*/}" = doca-comm-channel ] && extra=" -ldoca_comm_channel"
    sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version1|" -e "s|@NAME@|${out##*/}|" \
        -e "s|^\(Libs:.*\)$|\1$extra|" "$pc1/$tmpl.pc.in" >"$stage1/pc/$out.pc"
done

rm -rf "$inc/doca-1" "$lib/doca-1" "$pc/doca-1" "$pc/doca-1-dpu"
mv "$stage1/pc/doca-1.pc" "$stage1/pc/doca-1-dpu.pc" "$pc/"
mv "$stage1/pc/doca-1" "$stage1/pc/doca-1-dpu" "$pc/"
mv "$stage1/include" "$inc/doca-1"
mv "$stage1/lib" "$lib/doca-1"
rm -rf "$stage1"

# ---- DOCA 1.5, beside the others ----
# 1.5 is 2.2's API (work queues and jobs, getters and setters) with the 1.x memory map
# and PCI addresses: 2.2's headers, with DIR/include/doca-1.5/doca_api_level.h found
# first (it defines DOCA_API_1_5, which declares 1.5's own names), and
# DIR/lib/doca-1.5/libdoca_common.so.1, 2.2's library with 1.5's meanings of
# the names the two share.
version15=1.5.1007
stage15="$stage/doca-1.5"
mkdir -p "$stage15/lib" "$stage15/pc/doca-1.5" "$stage15/pc/doca-1.5-dpu"
generation_libs 15 "$version15" "$stage15/lib" dma argp comm_channel sha compress
mkdir -p "$stage15/include"
cp "$root/crates/doca-capi/include15/doca_api_level.h" "$stage15/include/"
pc15="$root/crates/doca-capi/pkgconfig15"
# The modules 1.5 projects ask for, host and DPU flavours: doca-1.5 (and doca-1.5-dpu) in
# DIR/lib/pkgconfig, and the 1.5 names in DIR/lib/pkgconfig/doca-1.5/ and doca-1.5-dpu/.
for d in doca-1.5 doca-1.5-dpu; do
    for spec in "$d:Core and libraries: -ldoca_dma -ldoca_argp -ldoca_comm_channel -ldoca_sha -ldoca_compress" \
        "$d/doca:Core and libraries: -ldoca_dma -ldoca_argp -ldoca_comm_channel -ldoca_sha -ldoca_compress" \
        "$d/doca-common:Core:" "$d/doca-dma:DMA: -ldoca_dma" "$d/doca-argp:Argp: -ldoca_argp" \
        "$d/doca-comm-channel:Comm Channel: -ldoca_comm_channel" "$d/doca-sha:SHA: -ldoca_sha" \
        "$d/doca-compress:Compress: -ldoca_compress"; do
        IFS=: read -r out title libs <<<"$spec"
        sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version15|" -e "s|@NAME@|${out##*/}|" \
            -e "s|@TITLE@|$title|" -e "s|@LIBS@|$libs|" "$pc15/$d.pc.in" >"$stage15/pc/$out.pc"
    done
    # The 1.5 libraries this SDK does not implement: present, adding nothing.
    for spec in "apsh:App Shield:doca_apsh.h" dpi:DPI:doca_dpi.h "dpdk-bridge:DPDK Bridge:doca_dpdk.h" \
        flow:Flow:doca_flow.h "flow-grpc:Flow gRPC:doca_flow_grpc_client.h" ipsec:IPsec:doca_ipsec.h \
        regex:RegEx:doca_regex.h telemetry:Telemetry:doca_telemetry.h; do
        IFS=: read -r name title header <<<"$spec"
        sed -e "s|@VERSION@|$version15|" -e "s|@NAME@|doca-$name|" -e "s|@TITLE@|$title|" \
            -e "s|@HEADER@|$header|" "$pc15/doca-absent.pc.in" >"$stage15/pc/$d/doca-$name.pc"
    done
done
rm -rf "$inc/doca-1.5" "$lib/doca-1.5" "$pc/doca-1.5" "$pc/doca-1.5-dpu"
mv "$stage15/include" "$inc/doca-1.5"
mv "$stage15/pc/doca-1.5.pc" "$stage15/pc/doca-1.5-dpu.pc" "$pc/"
mv "$stage15/pc/doca-1.5" "$stage15/pc/doca-1.5-dpu" "$pc/"
mv "$stage15/lib" "$lib/doca-1.5"
rm -rf "$stage15"

for f in "$stage"/*; do
    mv -f "$f" "$lib/"
done
stamp_of "$prefix" >"$prefix/.doca-install-stamp.tmp.$$"
mv -f "$prefix/.doca-install-stamp.tmp.$$" "$prefix/.doca-install-stamp"
echo "installed the DOCA $version, $version3, $version1 and $version15 C libraries in $prefix (pkg-config: PKG_CONFIG_PATH=$pc)"
