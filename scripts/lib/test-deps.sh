# Sourced by scripts/test.sh and .ci/run: test_packages_missing prints the Debian
# packages the test suite needs that this machine lacks, one per line, by checking for
# exactly what each tool needs:
#   - ISA-L, built from source for the comparisons: nasm, autoreconf, automake,
#     libtoolize, make;
#   - bindgen (ISA-L's Rust bindings): a libclang shared library where clang-sys looks
#     for one (libclang.so, libclang-N.so, libclang.so.N or libclang-N.so.N in
#     $LIBCLANG_PATH or under /usr/lib* and /usr/local/lib*; libclang-cpp is a different
#     library and does not count);
#   - the C interface's tests: cc, c++, pkg-config, valgrind, meson and ninja, cmake
#     (a 1.x project is built with CMake, meson and make),
#     rdma-core's <infiniband/verbs.h> (doca_rdma_bridge.h includes it) and
#     <rdma/rdma_cma.h> (doca_rdma.h includes it, as DOCA's does), json-c's
#     headers (argp's JSON files are compared with what json-c takes), and zlib's,
#     liblz4's and OpenSSL's headers (compress and AES-GCM results are read back with
#     them, and they read what those libraries write);
#   - doca-rdma: UCX (libucx-dev), iproute2's ip for the tests that put the two
#     sides in two network namespaces, and nftables' nft for the faults those tests
#     inject between them (random loss, partitions);
#   - libisal.so.2's engine tests: Debian's liberasurecode with its headers (pyeclib is
#     built against it from PyPI's source), and a python3 that can make a virtual
#     environment and build C extensions.

have_libclang() {
    local d f
    if command -v llvm-config >/dev/null 2>&1; then
        set -- "$(llvm-config --libdir 2>/dev/null)"
    else
        set --
    fi
    for d in ${LIBCLANG_PATH:-} "$@" /usr/local/llvm*/lib* /usr/local/lib* /usr/local/lib*/* \
        /usr/local/lib*/*/* /usr/lib* /usr/lib*/* /usr/lib*/*/*; do
        [ -d "$d" ] || continue
        for f in "$d"/libclang.so "$d"/libclang.so.* "$d"/libclang-*.so "$d"/libclang-*.so.*; do
            case "$f" in *-cpp.*) continue ;; esac
            [ -e "$f" ] && return 0
        done
    done
    return 1
}

test_packages_missing() {
    local t
    for t in nasm:nasm autoreconf:autoconf automake:automake libtoolize:libtool make:make \
        cc:gcc c++:g++ pkg-config:pkg-config valgrind:valgrind meson:meson ninja:ninja-build \
        cmake:cmake; do
        command -v "${t%%:*}" >/dev/null 2>&1 || echo "${t#*:}"
    done
    have_libclang || echo libclang-dev
    [ -f /usr/include/infiniband/verbs.h ] || echo libibverbs-dev
    [ -f /usr/include/rdma/rdma_cma.h ] || echo librdmacm-dev
    [ -f /usr/include/json-c/json.h ] || echo libjson-c-dev
    [ -f /usr/include/zlib.h ] || echo zlib1g-dev
    [ -f /usr/include/lz4.h ] || echo liblz4-dev
    [ -f /usr/include/openssl/evp.h ] || echo libssl-dev
    [ -f /usr/include/liberasurecode/erasurecode.h ] || echo liberasurecode-dev
    [ -f /usr/include/ucp/api/ucp.h ] || echo libucx-dev
    command -v ip >/dev/null 2>&1 || echo iproute2
    command -v nft >/dev/null 2>&1 || echo nftables
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || echo python3-venv
        python3 -c 'import os, sysconfig; p = sysconfig.get_paths()["include"]; assert os.path.exists(os.path.join(p, "Python.h"))' \
            >/dev/null 2>&1 || echo python3-dev
    else
        echo python3 python3-venv python3-dev | tr ' ' '\n'
    fi
}
