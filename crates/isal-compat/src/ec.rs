//! `erasure_code.h` and `gf_vect_mul.h`: tables, encoding, updates, dot products,
//! multiply-adds and vector multiplication.
//!
//! Every function is one of ISA-L's implementations ([`Impl`]): the `_base` code, which
//! takes byte 1 of each coefficient's tables as the coefficient; the SSE to AVX-512 code,
//! which reads nibble tables and runs from a minimum length (below it the encoders fall
//! back to the base code and the others do nothing and return 1); or the GFNI code,
//! which reads bit matrices at any length. A suffixed name is always its own
//! implementation; a dispatched name (`ec_encode_data`, `gf_vect_mad`, ...) is the one
//! ISA-L picks on this CPU ([`tier`](crate::tier)), and so are the tables that
//! `ec_init_tables` and `gf_vect_mul_init` write. Every product runs on `ec-codec`'s
//! kernels ([`tables::multiply_as`]), whatever the CPU.

use crate::tier::{Tier, tiers};
use ec_codec::tables::{self, Layout, TABLE_BYTES};
use std::ffi::{c_int, c_uchar, c_void};

/// One of ISA-L's implementations of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Impl {
    /// The `_base` code: byte 1 of each table, any length.
    Base,
    /// SSE, AVX, AVX2 or AVX-512 code: nibble tables from this many bytes up.
    Nibble(usize),
    /// GFNI code: bit matrices read as the layout says, any length.
    Gfni(Layout),
}

impl Impl {
    /// How an encoder of this implementation reads its tables for `len` bytes.
    fn encoder_layout(self, len: usize) -> Layout {
        match self {
            Impl::Base => Layout::Base,
            Impl::Nibble(min) if len < min => Layout::Base,
            Impl::Nibble(_) => Layout::Nibble,
            Impl::Gfni(l) => l,
        }
    }

    /// How a dot product, multiply-add or vector multiplication of this implementation
    /// reads its tables for `len` bytes; `None` when it does nothing (too short).
    fn kernel_layout(self, len: c_int) -> Option<Layout> {
        match self {
            Impl::Base => Some(Layout::Base),
            Impl::Nibble(min) if len < min as c_int => None,
            Impl::Nibble(_) => Some(Layout::Nibble),
            Impl::Gfni(l) => Some(l),
        }
    }
}

/// Nibble-table code's minimum length at each tier.
fn nibble_min(t: Tier, avx512: usize) -> Impl {
    match t {
        Tier::Base => Impl::Base,
        Tier::Sse | Tier::Avx => Impl::Nibble(16),
        Tier::Avx2 => Impl::Nibble(32),
        _ => Impl::Nibble(avx512),
    }
}

/// What `ec_encode_data` is on this CPU.
fn encode_impl() -> Impl {
    match tiers().general {
        Tier::Avx2Gfni => Impl::Gfni(Layout::AffineLanes),
        Tier::Avx512Gfni => Impl::Gfni(Layout::Affine),
        t => nibble_min(t, 64),
    }
}

/// What `ec_encode_data_update` is on this CPU.
fn update_impl() -> Impl {
    match tiers().update {
        Tier::Avx2Gfni | Tier::Avx512Gfni => Impl::Gfni(Layout::Affine),
        t => nibble_min(t, 64),
    }
}

/// What `gf_vect_dot_prod` is on this CPU (ISA-L's AVX-512 one runs from 32 bytes).
fn dot_prod_impl() -> Impl {
    match tiers().general {
        Tier::Avx2Gfni => Impl::Gfni(Layout::AffineLanes),
        Tier::Avx512Gfni => Impl::Gfni(Layout::Affine),
        t => nibble_min(t, 32),
    }
}

/// What `gf_vect_mad` is on this CPU.
fn mad_impl() -> Impl {
    match tiers().general {
        Tier::Avx2Gfni | Tier::Avx512Gfni => Impl::Gfni(Layout::Affine),
        t => nibble_min(t, 64),
    }
}

/// The first `n` pointers of a C array of buffers (none when `n` is 0).
///
/// # Safety
/// When `n > 0`, `p` points to `n` readable pointers that stay unchanged during the call.
unsafe fn ptrs<'a>(p: *const *mut c_uchar, n: usize) -> &'a [*const u8] {
    if n == 0 || p.is_null() {
        return &[];
    }
    // SAFETY: per the contract; `*mut u8` and `*const u8` have one layout.
    unsafe { std::slice::from_raw_parts(p.cast::<*const u8>(), n) }
}

/// As [`ptrs`], for outputs.
///
/// # Safety
/// As for [`ptrs`].
unsafe fn ptrs_mut<'a>(p: *const *mut c_uchar, n: usize) -> &'a [*mut u8] {
    if n == 0 || p.is_null() {
        return &[];
    }
    // SAFETY: per the contract.
    unsafe { std::slice::from_raw_parts(p, n) }
}

/// A count from C: negative counts are empty.
fn count(n: c_int) -> usize {
    n.max(0) as usize
}

/// `outs[r] (^)= XOR over c of coef(r, c) * ins[c]` over `len` bytes, the tables of
/// coef(r, c) at `tbls + 32 * (r * stride + c)` read as `layout` says.
///
/// # Safety
/// As for [`tables::multiply_as`].
unsafe fn multiply(
    layout: Layout,
    len: usize,
    tbls: *const u8,
    stride: usize,
    ins: &[*const u8],
    outs: &[*mut u8],
    acc: bool,
) {
    // SAFETY: forwarded contract.
    unsafe { tables::multiply_as(layout, len, tbls, stride, ins, outs, acc) };
}

/// Writes the tables of `rows * k` coefficients of `a`, each 32 bytes, in the GFNI
/// layout or the nibble layout.
///
/// # Safety
/// `a` readable for `k * rows` bytes; `g_tbls` writable for `32 * k * rows`.
unsafe fn init_tables(gfni: bool, k: c_int, rows: c_int, a: *const c_uchar, g_tbls: *mut c_uchar) {
    for i in 0..count(k) * count(rows) {
        // SAFETY: per the contract.
        let c = unsafe { *a.add(i) };
        let t = if gfni {
            tables::init_affine(c)
        } else {
            tables::init(c)
        };
        // SAFETY: per the contract.
        unsafe {
            std::ptr::copy_nonoverlapping(t.as_ptr(), g_tbls.add(TABLE_BYTES * i), TABLE_BYTES)
        };
    }
}

macro_rules! init_tables {
    ($($name:ident: $gfni:expr),*) => {$(
        /// Expands the `rows` x `k` coefficients of `a` (row-major) into 32-byte tables.
        ///
        /// # Safety
        /// `a` readable for `k * rows` bytes; `g_tbls` writable for `32 * k * rows`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(k: c_int, rows: c_int, a: *const c_uchar, g_tbls: *mut c_uchar) {
            // SAFETY: per the contract.
            unsafe { init_tables($gfni, k, rows, a, g_tbls) };
        }
    )*};
}
init_tables!(
    ec_init_tables: tiers().general.gfni(),
    ec_init_tables_base: false,
    ec_init_tables_gfni: true
);

macro_rules! mul_init {
    ($($name:ident: $gfni:expr),*) => {$(
        /// Writes the 32-byte tables of `c` to `tbl`.
        ///
        /// # Safety
        /// `tbl` writable for 32 bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(c: c_uchar, tbl: *mut c_uchar) {
            // SAFETY: per the contract.
            unsafe { init_tables($gfni, 1, 1, &c, tbl) };
        }
    )*};
}
mul_init!(
    gf_vect_mul_init: tiers().general.gfni(),
    gf_vect_mul_init_base: false,
    gf_vect_mul_init_gfni: true
);

macro_rules! encode {
    ($($name:ident: $impl:expr),*) => {$(
        /// `coding[r] = XOR over j of a(r, j) * data[j]` for the `rows` x `k` tables
        /// made by `ec_init_tables`.
        ///
        /// # Safety
        /// `data` holds `k` pointers readable and `coding` `rows` pointers writable for
        /// `len` bytes each; `g_tbls` readable for `32 * k * rows` bytes; outputs overlap
        /// nothing else.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            k: c_int,
            rows: c_int,
            g_tbls: *const c_uchar,
            data: *const *mut c_uchar,
            coding: *const *mut c_uchar,
        ) {
            if len <= 0 || rows <= 0 {
                return;
            }
            let (len, k, rows) = (count(len), count(k), count(rows));
            let layout = $impl.encoder_layout(len);
            // SAFETY: per the contract.
            unsafe { multiply(layout, len, g_tbls, k, ptrs(data, k), ptrs_mut(coding, rows), false) };
        }
    )*};
}
encode!(
    ec_encode_data: encode_impl(),
    ec_encode_data_base: Impl::Base,
    ec_encode_data_sse: Impl::Nibble(16),
    ec_encode_data_avx: Impl::Nibble(16),
    ec_encode_data_avx2: Impl::Nibble(32),
    ec_encode_data_avx512: Impl::Nibble(64),
    ec_encode_data_avx2_gfni: Impl::Gfni(Layout::AffineLanes),
    ec_encode_data_avx512_gfni: Impl::Gfni(Layout::Affine)
);

macro_rules! encode_update {
    ($($name:ident: $impl:expr),*) => {$(
        /// Adds data block `vec_i`'s share to the `rows` coding blocks:
        /// `coding[r] ^= a(r, vec_i) * data`, with the tables of all `k` x `rows`
        /// coefficients at `g_tbls`.
        ///
        /// # Safety
        /// `data` readable and the `rows` coding blocks readable and writable for `len`
        /// bytes; `g_tbls` readable for `32 * k * rows` bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            k: c_int,
            rows: c_int,
            vec_i: c_int,
            g_tbls: *const c_uchar,
            data: *const c_uchar,
            coding: *const *mut c_uchar,
        ) {
            if len <= 0 || rows <= 0 || k <= 0 || vec_i < 0 {
                return;
            }
            let (len, k, rows) = (count(len), count(k), count(rows));
            let layout = $impl.encoder_layout(len);
            let tbls = g_tbls.wrapping_add(TABLE_BYTES * count(vec_i));
            let ins = [data];
            // SAFETY: per the contract.
            unsafe { multiply(layout, len, tbls, k, &ins, ptrs_mut(coding, rows), true) };
        }
    )*};
}
encode_update!(
    ec_encode_data_update: update_impl(),
    ec_encode_data_update_base: Impl::Base,
    ec_encode_data_update_sse: Impl::Nibble(16),
    ec_encode_data_update_avx: Impl::Nibble(16),
    ec_encode_data_update_avx2: Impl::Nibble(32),
    ec_encode_data_update_avx512: Impl::Nibble(64),
    ec_encode_data_update_avx2_gfni: Impl::Gfni(Layout::Affine),
    ec_encode_data_update_avx512_gfni: Impl::Gfni(Layout::Affine)
);

macro_rules! dot_prod {
    ($($name:ident: $n:tt, $impl:expr),*) => {$(
        /// The dot products of `N` outputs: output `p` is `XOR over j of c(p, j) *
        /// src[j]`, with the `vlen` tables of output `p` at `gftbls + 32 * vlen * p`.
        /// Returns 0, or 1 (doing nothing) when `len` is below the function's minimum.
        ///
        /// # Safety
        /// `src` holds `vlen` readable pointers and `dest` (one pointer, or an array of
        /// `N`) writable ones, for `len` bytes; `gftbls` readable for `32 * vlen * N`
        /// bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            vlen: c_int,
            gftbls: *const c_uchar,
            src: *const *mut c_uchar,
            dest: dot_prod!(@dest $n),
        ) -> c_int {
            let Some(layout) = $impl.kernel_layout(len) else {
                return 1;
            };
            let (len, vlen) = (count(len), count(vlen));
            let d = dot_prod!(@outs $n, dest);
            // SAFETY: per the contract.
            unsafe { multiply(layout, len, gftbls, vlen, ptrs(src, vlen), d, false) };
            0
        }
    )*};
    (@dest 1) => { *mut c_uchar };
    (@dest $n:tt) => { *const *mut c_uchar };
    (@outs 1, $d:ident) => { &[$d] };
    (@outs $n:tt, $d:ident) => {
        // SAFETY: `dest` holds N pointers (the contract of the function written here).
        unsafe { ptrs_mut($d, $n) }
    };
}
dot_prod!(
    gf_vect_dot_prod: 1, dot_prod_impl(),
    gf_vect_dot_prod_base: 1, Impl::Base,
    gf_vect_dot_prod_sse: 1, Impl::Nibble(16),
    gf_vect_dot_prod_avx: 1, Impl::Nibble(16),
    gf_vect_dot_prod_avx2: 1, Impl::Nibble(32),
    gf_vect_dot_prod_avx512: 1, Impl::Nibble(32),
    gf_vect_dot_prod_avx2_gfni: 1, Impl::Gfni(Layout::AffineLanes),
    gf_vect_dot_prod_avx512_gfni: 1, Impl::Gfni(Layout::Affine),
    gf_2vect_dot_prod_sse: 2, Impl::Nibble(16),
    gf_2vect_dot_prod_avx: 2, Impl::Nibble(16),
    gf_2vect_dot_prod_avx2: 2, Impl::Nibble(32),
    gf_2vect_dot_prod_avx512: 2, Impl::Nibble(64),
    gf_2vect_dot_prod_avx2_gfni: 2, Impl::Gfni(Layout::AffineLanes),
    gf_2vect_dot_prod_avx512_gfni: 2, Impl::Gfni(Layout::Affine),
    gf_3vect_dot_prod_sse: 3, Impl::Nibble(16),
    gf_3vect_dot_prod_avx: 3, Impl::Nibble(16),
    gf_3vect_dot_prod_avx2: 3, Impl::Nibble(32),
    gf_3vect_dot_prod_avx512: 3, Impl::Nibble(64),
    gf_3vect_dot_prod_avx2_gfni: 3, Impl::Gfni(Layout::AffineLanes),
    gf_3vect_dot_prod_avx512_gfni: 3, Impl::Gfni(Layout::Affine),
    gf_4vect_dot_prod_sse: 4, Impl::Nibble(16),
    gf_4vect_dot_prod_avx: 4, Impl::Nibble(16),
    gf_4vect_dot_prod_avx2: 4, Impl::Nibble(32),
    gf_4vect_dot_prod_avx512: 4, Impl::Nibble(64),
    gf_4vect_dot_prod_avx512_gfni: 4, Impl::Gfni(Layout::Affine),
    gf_5vect_dot_prod_sse: 5, Impl::Nibble(16),
    gf_5vect_dot_prod_avx: 5, Impl::Nibble(16),
    gf_5vect_dot_prod_avx2: 5, Impl::Nibble(32),
    gf_5vect_dot_prod_avx512: 5, Impl::Nibble(64),
    gf_5vect_dot_prod_avx512_gfni: 5, Impl::Gfni(Layout::Affine),
    gf_6vect_dot_prod_sse: 6, Impl::Nibble(16),
    gf_6vect_dot_prod_avx: 6, Impl::Nibble(16),
    gf_6vect_dot_prod_avx2: 6, Impl::Nibble(32),
    gf_6vect_dot_prod_avx512: 6, Impl::Nibble(64),
    gf_6vect_dot_prod_avx512_gfni: 6, Impl::Gfni(Layout::Affine)
);

macro_rules! mad {
    ($($name:ident: $n:tt, $impl:expr),*) => {$(
        /// `dest[p] ^= c(p, vec_i) * src` for `N` outputs; the tables of output `p` are
        /// the `vec` at `gftbls + 32 * vec * p`. Returns 0, or 1 (doing nothing) below
        /// the function's minimum length.
        ///
        /// # Safety
        /// `src` readable and the outputs (one pointer, or an array of `N`) readable and
        /// writable for `len` bytes; the tables of coefficient `vec_i` of each output
        /// readable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            vec: c_int,
            vec_i: c_int,
            gftbls: *const c_uchar,
            src: *const c_uchar,
            dest: dot_prod!(@dest $n),
        ) -> c_int {
            let Some(layout) = $impl.kernel_layout(len) else {
                return 1;
            };
            if vec_i < 0 {
                return 1;
            }
            let tbls = gftbls.wrapping_add(TABLE_BYTES * count(vec_i));
            let ins = [src];
            let d = dot_prod!(@outs $n, dest);
            // SAFETY: per the contract.
            unsafe { multiply(layout, count(len), tbls, count(vec), &ins, d, true) };
            0
        }
    )*};
}
mad!(
    gf_vect_mad: 1, mad_impl(),
    gf_vect_mad_base: 1, Impl::Base,
    gf_vect_mad_sse: 1, Impl::Nibble(16),
    gf_vect_mad_avx: 1, Impl::Nibble(16),
    gf_vect_mad_avx2: 1, Impl::Nibble(32),
    gf_vect_mad_avx512: 1, Impl::Nibble(64),
    gf_vect_mad_avx2_gfni: 1, Impl::Gfni(Layout::Affine),
    gf_vect_mad_avx512_gfni: 1, Impl::Gfni(Layout::Affine),
    gf_2vect_mad_sse: 2, Impl::Nibble(16),
    gf_2vect_mad_avx: 2, Impl::Nibble(16),
    gf_2vect_mad_avx2: 2, Impl::Nibble(32),
    gf_2vect_mad_avx512: 2, Impl::Nibble(64),
    gf_2vect_mad_avx2_gfni: 2, Impl::Gfni(Layout::Affine),
    gf_2vect_mad_avx512_gfni: 2, Impl::Gfni(Layout::Affine),
    gf_3vect_mad_sse: 3, Impl::Nibble(16),
    gf_3vect_mad_avx: 3, Impl::Nibble(16),
    gf_3vect_mad_avx2: 3, Impl::Nibble(32),
    gf_3vect_mad_avx512: 3, Impl::Nibble(64),
    gf_3vect_mad_avx2_gfni: 3, Impl::Gfni(Layout::Affine),
    gf_3vect_mad_avx512_gfni: 3, Impl::Gfni(Layout::Affine),
    gf_4vect_mad_sse: 4, Impl::Nibble(16),
    gf_4vect_mad_avx: 4, Impl::Nibble(16),
    gf_4vect_mad_avx2: 4, Impl::Nibble(32),
    gf_4vect_mad_avx512: 4, Impl::Nibble(64),
    gf_4vect_mad_avx2_gfni: 4, Impl::Gfni(Layout::Affine),
    gf_4vect_mad_avx512_gfni: 4, Impl::Gfni(Layout::Affine),
    gf_5vect_mad_sse: 5, Impl::Nibble(16),
    gf_5vect_mad_avx: 5, Impl::Nibble(16),
    gf_5vect_mad_avx2: 5, Impl::Nibble(32),
    gf_5vect_mad_avx512: 5, Impl::Nibble(64),
    gf_5vect_mad_avx2_gfni: 5, Impl::Gfni(Layout::Affine),
    gf_5vect_mad_avx512_gfni: 5, Impl::Gfni(Layout::Affine),
    gf_6vect_mad_sse: 6, Impl::Nibble(16),
    gf_6vect_mad_avx: 6, Impl::Nibble(16),
    gf_6vect_mad_avx2: 6, Impl::Nibble(32),
    gf_6vect_mad_avx512: 6, Impl::Nibble(64),
    gf_6vect_mad_avx512_gfni: 6, Impl::Gfni(Layout::Affine)
);

/// What `gf_vect_mul` is on this CPU.
fn vect_mul_impl() -> Impl {
    match tiers().general {
        Tier::Base => Impl::Base,
        t if t.gfni() => Impl::Gfni(Layout::AffineLanes),
        _ => Impl::Nibble(0),
    }
}

macro_rules! vect_mul {
    ($($name:ident: $impl:expr),*) => {$(
        /// `dest = c * src` with the tables of `c` at `gftbl`; `src` may be `dest`.
        /// Returns 0, or (doing nothing) 1, or -1 for the base code, when `len` is not
        /// a multiple of 32.
        ///
        /// # Safety
        /// `gftbl` readable for 32 bytes; `src` readable and `dest` writable for `len`
        /// bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            gftbl: *const c_uchar,
            src: *const c_void,
            dest: *mut c_void,
        ) -> c_int {
            let imp: Impl = $impl;
            if len % 32 != 0 || len < 0 {
                return if imp == Impl::Base { -1 } else { 1 };
            }
            let layout = imp.encoder_layout(count(len));
            let (ins, outs) = ([src.cast::<u8>()], [dest.cast::<u8>()]);
            // SAFETY: per the contract; with one input and one output the product may be
            // done in place.
            unsafe { multiply(layout, count(len), gftbl, 1, &ins, &outs, false) };
            0
        }
    )*};
}
vect_mul!(
    gf_vect_mul: vect_mul_impl(),
    gf_vect_mul_base: Impl::Base,
    gf_vect_mul_sse: Impl::Nibble(0),
    gf_vect_mul_avx: Impl::Nibble(0),
    gf_vect_mul_avx2_gfni: Impl::Gfni(Layout::AffineLanes)
);
