//! `erasure_code.h` and `gf_vect_mul.h`: tables, encoding, updates, dot products,
//! multiply-adds and vector multiplication.
//!
//! Two semantics, as in ISA-L. The SIMD names multiply through the tables
//! ([`tables::multiply`]); the `_base` names, and the encoders below their SIMD
//! minimum length, take byte 1 of each coefficient's tables as the coefficient. Both
//! give the same bytes for tables made by `ec_init_tables`. Dot products, multiply-adds
//! and vector multiplications shorter than their SIMD minimum do nothing, as ISA-L's
//! SIMD functions do.

use ec_codec::gf;
use ec_codec::tables::{self, TABLE_BYTES};
use std::ffi::{c_int, c_uchar, c_void};

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

/// `outs[r] (^)= XOR over c of coef(r, c) * ins[c]`, with coef(r, c) = byte 1 of the
/// tables at `tbls + 32 * (r * stride + c)`: ISA-L's `_base` arithmetic.
///
/// # Safety
/// As for [`tables::multiply`]; an output may also be its own input at the same bytes.
unsafe fn multiply_base(
    len: usize,
    tbls: *const u8,
    stride: usize,
    ins: &[*const u8],
    outs: &[*mut u8],
    acc: bool,
) {
    for (r, &out) in outs.iter().enumerate() {
        for i in 0..len {
            // SAFETY: the output is readable and writable for len bytes.
            let mut s = if acc { unsafe { *out.add(i) } } else { 0 };
            for (c, &src) in ins.iter().enumerate() {
                // SAFETY: the input is readable for len bytes and the tables are readable.
                let (x, coef) =
                    unsafe { (*src.add(i), *tbls.add(TABLE_BYTES * (r * stride + c) + 1)) };
                s ^= gf::mul(x, coef);
            }
            // SAFETY: as above.
            unsafe { *out.add(i) = s };
        }
    }
}

/// Lookups through the tables for lengths from `simd_min` up, base arithmetic below.
///
/// # Safety
/// As for [`tables::multiply`].
unsafe fn multiply(
    simd_min: usize,
    len: usize,
    tbls: *const u8,
    stride: usize,
    ins: &[*const u8],
    outs: &[*mut u8],
    acc: bool,
) {
    if len < simd_min {
        // SAFETY: forwarded contract.
        unsafe { multiply_base(len, tbls, stride, ins, outs, acc) };
    } else {
        // SAFETY: forwarded contract.
        unsafe { tables::multiply(len, tbls, stride, ins, outs, acc) };
    }
}

/// The tables of one coefficient (`gf_vect_mul_init`).
///
/// # Safety
/// `tbl` writable for 32 bytes.
unsafe fn write_tables(c: u8, tbl: *mut u8) {
    let t = tables::init(c);
    // SAFETY: per the contract.
    unsafe { std::ptr::copy_nonoverlapping(t.as_ptr(), tbl, TABLE_BYTES) };
}

macro_rules! init_tables {
    ($($name:ident),*) => {$(
        /// Expands the `rows` x `k` coefficients of `a` (row-major) into 32-byte tables.
        ///
        /// # Safety
        /// `a` readable for `k * rows` bytes; `g_tbls` writable for `32 * k * rows`.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(k: c_int, rows: c_int, a: *const c_uchar, g_tbls: *mut c_uchar) {
            for i in 0..count(k) * count(rows) {
                // SAFETY: per the contract.
                unsafe { write_tables(*a.add(i), g_tbls.add(TABLE_BYTES * i)) };
            }
        }
    )*};
}
init_tables!(ec_init_tables, ec_init_tables_base);

macro_rules! mul_init {
    ($($name:ident),*) => {$(
        /// Writes the 32-byte tables of `c` to `tbl`.
        ///
        /// # Safety
        /// `tbl` writable for 32 bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(c: c_uchar, tbl: *mut c_uchar) {
            // SAFETY: per the contract.
            unsafe { write_tables(c, tbl) };
        }
    )*};
}
mul_init!(gf_vect_mul_init, gf_vect_mul_init_base);

macro_rules! encode {
    ($($name:ident: $min:expr),*) => {$(
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
            // SAFETY: per the contract.
            unsafe { multiply($min, len, g_tbls, k, ptrs(data, k), ptrs_mut(coding, rows), false) };
        }
    )*};
}
encode!(
    ec_encode_data: 32,
    ec_encode_data_base: usize::MAX,
    ec_encode_data_sse: 16,
    ec_encode_data_avx: 16,
    ec_encode_data_avx2: 32,
    ec_encode_data_avx512: 64
);

macro_rules! encode_update {
    ($($name:ident: $min:expr),*) => {$(
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
            let tbls = g_tbls.wrapping_add(TABLE_BYTES * count(vec_i));
            let ins = [data];
            // SAFETY: per the contract.
            unsafe { multiply($min, len, tbls, k, &ins, ptrs_mut(coding, rows), true) };
        }
    )*};
}
encode_update!(
    ec_encode_data_update: 32,
    ec_encode_data_update_base: usize::MAX,
    ec_encode_data_update_sse: 16,
    ec_encode_data_update_avx: 16,
    ec_encode_data_update_avx2: 32,
    ec_encode_data_update_avx512: 64
);

macro_rules! dot_prod {
    ($($name:ident: $min:expr),*) => {$(
        /// `dest = XOR over j of c(j) * src[j]`, with the tables of the `vlen`
        /// coefficients at `gftbls`. Returns 0, or 1 (doing nothing) when `len` is below
        /// the function's minimum.
        ///
        /// # Safety
        /// `src` holds `vlen` pointers readable and `dest` is writable for `len` bytes;
        /// `gftbls` readable for `32 * vlen` bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            vlen: c_int,
            gftbls: *const c_uchar,
            src: *const *mut c_uchar,
            dest: *mut c_uchar,
        ) -> c_int {
            if len < $min {
                return 1;
            }
            let (len, vlen) = (count(len), count(vlen));
            let outs = [dest];
            // SAFETY: per the contract.
            unsafe { multiply(0, len, gftbls, vlen, ptrs(src, vlen), &outs, false) };
            0
        }
    )*};
}
dot_prod!(
    gf_vect_dot_prod: 32,
    gf_vect_dot_prod_sse: 16,
    gf_vect_dot_prod_avx: 16,
    gf_vect_dot_prod_avx2: 32,
    gf_vect_dot_prod_avx512: 64
);

/// `dest = XOR over j of c(j) * src[j]`, coefficients taken from byte 1 of each table.
///
/// # Safety
/// As for `gf_vect_dot_prod`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gf_vect_dot_prod_base(
    len: c_int,
    vlen: c_int,
    v: *const c_uchar,
    src: *const *mut c_uchar,
    dest: *mut c_uchar,
) {
    let (len, vlen) = (count(len), count(vlen));
    let outs = [dest];
    // SAFETY: per the contract.
    unsafe { multiply_base(len, v, vlen, ptrs(src, vlen), &outs, false) };
}

macro_rules! n_dot_prod {
    ($($name:ident: $n:expr, $min:expr),*) => {$(
        /// The dot products of `N` outputs at once: output `p` uses the `vlen` tables at
        /// `gftbls + 32 * vlen * p`. Returns 0, or 1 (doing nothing) below the minimum
        /// length.
        ///
        /// # Safety
        /// `src` holds `vlen` readable pointers, `dest` `N` writable ones, for `len`
        /// bytes; `gftbls` readable for `32 * vlen * N` bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            vlen: c_int,
            gftbls: *const c_uchar,
            src: *const *mut c_uchar,
            dest: *const *mut c_uchar,
        ) -> c_int {
            if len < $min {
                return 1;
            }
            let (len, vlen) = (count(len), count(vlen));
            // SAFETY: per the contract.
            unsafe { multiply(0, len, gftbls, vlen, ptrs(src, vlen), ptrs_mut(dest, $n), false) };
            0
        }
    )*};
}
n_dot_prod!(
    gf_2vect_dot_prod_sse: 2, 16, gf_2vect_dot_prod_avx: 2, 16, gf_2vect_dot_prod_avx2: 2, 32,
    gf_2vect_dot_prod_avx512: 2, 64,
    gf_3vect_dot_prod_sse: 3, 16, gf_3vect_dot_prod_avx: 3, 16, gf_3vect_dot_prod_avx2: 3, 32,
    gf_3vect_dot_prod_avx512: 3, 64,
    gf_4vect_dot_prod_sse: 4, 16, gf_4vect_dot_prod_avx: 4, 16, gf_4vect_dot_prod_avx2: 4, 32,
    gf_4vect_dot_prod_avx512: 4, 64,
    gf_5vect_dot_prod_sse: 5, 16, gf_5vect_dot_prod_avx: 5, 16, gf_5vect_dot_prod_avx2: 5, 32,
    gf_5vect_dot_prod_avx512: 5, 64,
    gf_6vect_dot_prod_sse: 6, 16, gf_6vect_dot_prod_avx: 6, 16, gf_6vect_dot_prod_avx2: 6, 32,
    gf_6vect_dot_prod_avx512: 6, 64
);

macro_rules! mad {
    ($($name:ident: $min:expr),*) => {$(
        /// `dest ^= c(vec_i) * src`, with the tables of `vec` coefficients at `gftbls`.
        /// Returns 0, or 1 (doing nothing) below the minimum length.
        ///
        /// # Safety
        /// `src` readable and `dest` readable and writable for `len` bytes; the tables
        /// of coefficient `vec_i` readable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            vec: c_int,
            vec_i: c_int,
            gftbls: *const c_uchar,
            src: *const c_uchar,
            dest: *mut c_uchar,
        ) -> c_int {
            if len < $min || vec_i < 0 {
                return 1;
            }
            let tbls = gftbls.wrapping_add(TABLE_BYTES * count(vec_i));
            let (ins, outs) = ([src], [dest]);
            // SAFETY: per the contract.
            unsafe { multiply(0, count(len), tbls, count(vec), &ins, &outs, true) };
            0
        }
    )*};
}
mad!(
    gf_vect_mad: 32,
    gf_vect_mad_sse: 16,
    gf_vect_mad_avx: 16,
    gf_vect_mad_avx2: 32,
    gf_vect_mad_avx512: 64
);

/// `dest ^= c(vec_i) * src`, the coefficient taken from byte 1 of its tables.
///
/// # Safety
/// As for `gf_vect_mad`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gf_vect_mad_base(
    len: c_int,
    vec: c_int,
    vec_i: c_int,
    v: *const c_uchar,
    src: *const c_uchar,
    dest: *mut c_uchar,
) {
    if vec_i < 0 {
        return;
    }
    let tbls = v.wrapping_add(TABLE_BYTES * count(vec_i));
    let (ins, outs) = ([src], [dest]);
    // SAFETY: per the contract.
    unsafe { multiply_base(count(len), tbls, count(vec), &ins, &outs, true) };
}

macro_rules! n_mad {
    ($($name:ident: $n:expr, $min:expr),*) => {$(
        /// `dest[p] ^= c(p, vec_i) * src` for `N` outputs; the tables of output `p` are
        /// the `vec` at `gftbls + 32 * vec * p`. Returns 0, or 1 (doing nothing) below
        /// the minimum length.
        ///
        /// # Safety
        /// `src` readable and the `N` outputs readable and writable for `len` bytes; the
        /// tables readable.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(
            len: c_int,
            vec: c_int,
            vec_i: c_int,
            gftbls: *const c_uchar,
            src: *const c_uchar,
            dest: *const *mut c_uchar,
        ) -> c_int {
            if len < $min || vec_i < 0 {
                return 1;
            }
            let tbls = gftbls.wrapping_add(TABLE_BYTES * count(vec_i));
            let ins = [src];
            // SAFETY: per the contract.
            unsafe { multiply(0, count(len), tbls, count(vec), &ins, ptrs_mut(dest, $n), true) };
            0
        }
    )*};
}
n_mad!(
    gf_2vect_mad_sse: 2, 16, gf_2vect_mad_avx: 2, 16, gf_2vect_mad_avx2: 2, 32,
    gf_2vect_mad_avx512: 2, 64,
    gf_3vect_mad_sse: 3, 16, gf_3vect_mad_avx: 3, 16, gf_3vect_mad_avx2: 3, 32,
    gf_3vect_mad_avx512: 3, 64,
    gf_4vect_mad_sse: 4, 16, gf_4vect_mad_avx: 4, 16, gf_4vect_mad_avx2: 4, 32,
    gf_4vect_mad_avx512: 4, 64,
    gf_5vect_mad_sse: 5, 16, gf_5vect_mad_avx: 5, 16, gf_5vect_mad_avx2: 5, 32,
    gf_5vect_mad_avx512: 5, 64,
    gf_6vect_mad_sse: 6, 16, gf_6vect_mad_avx: 6, 16, gf_6vect_mad_avx2: 6, 32,
    gf_6vect_mad_avx512: 6, 64
);

macro_rules! vect_mul {
    ($($name:ident),*) => {$(
        /// `dest = c * src` with the tables of `c` at `gftbl`; `src` may be `dest`.
        /// Returns 0, or 1 (doing nothing) when `len` is not a multiple of 32.
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
            if len % 32 != 0 || len < 0 {
                return 1;
            }
            let (ins, outs) = ([src.cast::<u8>()], [dest.cast::<u8>()]);
            // SAFETY: per the contract; with one output, the kernels read each position
            // of the source before they write it, so the product may be done in place.
            unsafe { tables::multiply(count(len), gftbl, 1, &ins, &outs, false) };
            0
        }
    )*};
}
vect_mul!(gf_vect_mul, gf_vect_mul_sse, gf_vect_mul_avx);

/// `dest = c * src` with `c` = byte 1 of the tables at `a`. Returns 0, or -1 (doing
/// nothing) when `len` is not a multiple of 32.
///
/// # Safety
/// As for `gf_vect_mul`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gf_vect_mul_base(
    len: c_int,
    a: *const c_uchar,
    src: *const c_uchar,
    dest: *mut c_uchar,
) -> c_int {
    if len % 32 != 0 || len < 0 {
        return -1;
    }
    let (ins, outs) = ([src], [dest]);
    // SAFETY: per the contract; the base loop reads each byte before writing it.
    unsafe { multiply_base(count(len), a, 1, &ins, &outs, false) };
    0
}
