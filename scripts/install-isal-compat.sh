#!/usr/bin/env bash
# Builds libisal.so.2 (crates/isal-compat: ISA-L's erasure-code, GF and RAID interface on
# the software DOCA codec) and installs it as ISA-L is installed:
#
#   scripts/install-isal-compat.sh --prefix DIR [--profile release|dev]
#
# Installs DIR/lib/libisal.so.2.0.32 with the links libisal.so.2 (the soname) and
# libisal.so, the static DIR/lib/libisal.a, the headers DIR/include/isa-l.h and
# DIR/include/isa-l/{erasure_code,gf_vect_mul,raid,isal_api}.h, and
# DIR/lib/pkgconfig/libisal.pc. Programs and engines that load ISA-L by name then run on
# it unchanged:
#
#   LD_LIBRARY_PATH=DIR/lib python3 -c 'import pyeclib.ec_iface ...'   # liberasurecode
#   PKG_CONFIG_PATH=DIR/lib/pkgconfig gcc app.c $(pkg-config --cflags --libs libisal)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"

. "$root/scripts/lib/install-args.sh"
parse_install_args install-isal-compat 2,16 "$@"
if [ "$reuse" = 1 ]; then
    echo "install-isal-compat: --reuse is not an option of this script (its install only copies files)" >&2
    exit 2
fi

cargo build --quiet --locked --profile "$profile" -p isal-compat --lib --manifest-path "$root/Cargo.toml"
target="${CARGO_TARGET_DIR:-$root/target}"
so="$target/$outdir/libisal.so"
archive="$target/$outdir/libisal.a"
for f in "$so" "$archive"; do
    [ -f "$f" ] || { echo "install-isal-compat: $f was not built" >&2; exit 1; }
done

mkdir -p "$prefix"
prefix="$(cd "$prefix" && pwd)"
lib="$prefix/lib"
mkdir -p "$lib/pkgconfig" "$prefix/include/isa-l"
src="$root/crates/isal-compat"

# Each file is written beside its name and renamed into place, so a program starting
# meanwhile never loads a half-written library.
put() {
    cp "$1" "$2.tmp.$$"
    chmod "$3" "$2.tmp.$$"
    mv -f "$2.tmp.$$" "$2"
}
put "$so" "$lib/libisal.so.2.0.32" 755
put "$archive" "$lib/libisal.a" 644
ln -sfn libisal.so.2.0.32 "$lib/libisal.so.2"
ln -sfn libisal.so.2 "$lib/libisal.so"
put "$src/include/isa-l.h" "$prefix/include/isa-l.h" 644
for h in "$src"/include/isa-l/*.h; do
    put "$h" "$prefix/include/isa-l/$(basename "$h")" 644
done
sed "s|@PREFIX@|$prefix|" "$src/pkgconfig/libisal.pc.in" > "$lib/pkgconfig/libisal.pc.tmp.$$"
mv -f "$lib/pkgconfig/libisal.pc.tmp.$$" "$lib/pkgconfig/libisal.pc"
echo "installed libisal.so.2 (ISA-L 2.32 interface) into $prefix"
