#!/bin/sh
# Regenerates crates/ucx-sys/src/bindings.rs from the installed ucp.h (bindgen-cli).
set -eu
cd "$(dirname "$0")/.."
hdr=$(mktemp --suffix=.h)
trap 'rm -f "$hdr"' EXIT
echo '#include <ucp/api/ucp.h>' >"$hdr"
bindgen "$hdr" \
    --allowlist-function 'ucp_.*' --allowlist-type 'ucp_.*' --allowlist-var 'UCP_.*' \
    --allowlist-type 'ucs_status_t' --allowlist-function 'ucs_status_string' \
    --no-layout-tests --default-enum-style consts --no-prepend-enum-name \
    --no-doc-comments --merge-extern-blocks --rust-target 1.82 \
    -o crates/ucx-sys/src/bindings.rs
