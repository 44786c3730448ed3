//! `libisal.so.2`: ISA-L's erasure-code, Galois-field and RAID interface (`erasure_code.h`,
//! `gf_vect_mul.h`, `raid.h`), computed by `ec-codec`'s kernels.
//!
//! Programs and engines that load ISA-L by name (liberasurecode, and so pyeclib and
//! OpenStack Swift; Hadoop's native erasure coder; anything linked with `-lisal`) run
//! unchanged on this library when it comes first on the library path. Every function
//! has ISA-L's prototype and gives ISA-L's bytes and return values on the same CPU:
//! tables are ISA-L's 32 bytes per coefficient, written in the layout ISA-L writes on
//! this CPU (bit matrices where it picks its GFNI code, nibble tables elsewhere) and
//! read where the caller keeps them; the `_base`, `_sse`, `_avx`, `_avx2`, `_avx512`
//! and `_gfni` names exist, each with its own table reading and length rules, and all
//! run on the kernel `ec-codec` picks for this CPU. Nothing allocates and no thread is
//! started.
//!
//! `scripts/install-isal-compat.sh --prefix DIR` installs the library, ISA-L's header
//! names and `libisal.pc`.
//!
//! This crate is a C library only (no Rust interface): a program uses it as it uses
//! ISA-L, and `tests/c/` builds such programs against it. The usual encode:
//!
//! ```c
//! #include <isa-l/erasure_code.h>
//!
//! unsigned char matrix[6 * 4], tables[32 * 4 * 2];
//! gf_gen_cauchy1_matrix(matrix, 6, 4);               /* 4 data + 2 parity rows */
//! ec_init_tables(4, 2, &matrix[4 * 4], tables);      /* the parity rows' tables */
//! ec_encode_data(4096, 4, 2, tables, data, parity);  /* unsigned char *data[4], *parity[2] */
//! ```

mod ec;
mod matrix;
mod raid;
mod tier;

use std::ffi::{c_char, c_uint};

/// The ISA-L release whose interface this library provides: 2.32.0.
const VERSION: c_uint = 2 << 16 | 32 << 8;

/// ISA-L's version as `major << 16 | minor << 8 | patch`.
#[unsafe(no_mangle)]
pub extern "C" fn isal_get_version() -> c_uint {
    VERSION
}

/// ISA-L's version as text.
#[unsafe(no_mangle)]
pub extern "C" fn isal_get_version_str() -> *const c_char {
    c"2.32.0".as_ptr()
}

/// Runs when the library is loaded: the kernel choice, the cache size and the derived
/// coefficient tables are computed here, once, so that no exported function allocates,
/// reads the environment or pays for them.
extern "C" fn warm_up() {
    ec_codec::tables::warm_up();
    let _ = tier::tiers();
}

#[used]
#[unsafe(link_section = ".init_array")]
static WARM_UP: extern "C" fn() = warm_up;
