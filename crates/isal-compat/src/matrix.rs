//! The Galois-field scalars and matrices of `erasure_code.h`: `gf_mul`, `gf_inv`, the
//! Vandermonde-style and Cauchy generator matrices, and Gauss-Jordan inversion, each
//! with ISA-L's exact output (and, for inversion, ISA-L's changes to its input).

use ec_codec::gf;
use std::ffi::{c_int, c_uchar};

/// `a * b` in GF(2^8) with polynomial 0x11D.
#[unsafe(no_mangle)]
pub extern "C" fn gf_mul(a: c_uchar, b: c_uchar) -> c_uchar {
    gf::mul(a, b)
}

/// `1 / a`; 0 for 0.
#[unsafe(no_mangle)]
pub extern "C" fn gf_inv(a: c_uchar) -> c_uchar {
    gf::inv(a)
}

/// The `m` x `k` matrix as a mutable slice (empty for non-positive sizes).
///
/// # Safety
/// `a` writable for `m * k` bytes when both are positive.
unsafe fn matrix<'a>(a: *mut c_uchar, m: c_int, k: c_int) -> &'a mut [u8] {
    if m <= 0 || k <= 0 || a.is_null() {
        return &mut [];
    }
    // SAFETY: per the contract.
    unsafe { std::slice::from_raw_parts_mut(a, m as usize * k as usize) }
}

/// Zeroes the `m` x `k` matrix and puts the identity in its top `k` rows (as many as
/// there are); `None` for an empty matrix.
///
/// # Safety
/// As for [`matrix`].
unsafe fn identity_on_top<'a>(
    a: *mut c_uchar,
    m: c_int,
    k: c_int,
) -> Option<(&'a mut [u8], usize, usize)> {
    // SAFETY: per the contract.
    let a = unsafe { matrix(a, m, k) };
    if a.is_empty() {
        return None;
    }
    let (m, k) = (m as usize, k as usize);
    a.fill(0);
    for i in 0..k.min(m) {
        a[k * i + i] = 1;
    }
    Some((a, m, k))
}

/// An `m` x `k` encoding matrix: the identity over `k` rows, then rows `i` of
/// `base^j` with `base = 2^(i - k)`. Not every square submatrix is invertible for large
/// shapes, as in ISA-L.
///
/// # Safety
/// `a` writable for `m * k` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gf_gen_rs_matrix(a: *mut c_uchar, m: c_int, k: c_int) {
    // SAFETY: per the contract.
    let Some((a, m, k)) = (unsafe { identity_on_top(a, m, k) }) else {
        return;
    };
    let mut base = 1u8;
    for i in k..m {
        let mut p = 1u8;
        for j in 0..k {
            a[k * i + j] = p;
            p = gf::mul(p, base);
        }
        base = gf::mul(base, 2);
    }
}

/// An `m` x `k` encoding matrix: the identity over `k` rows, then `1 / (i ^ j)`.
///
/// # Safety
/// `a` writable for `m * k` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gf_gen_cauchy1_matrix(a: *mut c_uchar, m: c_int, k: c_int) {
    // SAFETY: per the contract.
    let Some((a, m, k)) = (unsafe { identity_on_top(a, m, k) }) else {
        return;
    };
    for i in k..m {
        for j in 0..k {
            a[k * i + j] = gf::inv((i ^ j) as u8);
        }
    }
}

/// Inverts the `n` x `n` matrix `in_mat` into `out_mat` by Gauss-Jordan elimination,
/// reducing `in_mat` to the identity on the way. Returns 0, or -1 when the matrix is
/// singular (both matrices then hold the elimination's state, as in ISA-L).
///
/// # Safety
/// Both matrices readable and writable for `n * n` bytes and distinct.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn gf_invert_matrix(
    in_mat: *mut c_uchar,
    out_mat: *mut c_uchar,
    n: c_int,
) -> c_int {
    // SAFETY: per the contract.
    let (a, b) = unsafe { (matrix(in_mat, n, n), matrix(out_mat, n, n)) };
    if a.is_empty() || b.is_empty() {
        return 0;
    }
    if ec_codec::matrix::invert_in_place(a, b, n as usize) {
        0
    } else {
        -1
    }
}
