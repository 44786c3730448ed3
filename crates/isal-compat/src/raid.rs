//! `raid.h`: XOR parity (RAID 5) and P+Q parity (RAID 6, Q over GF(2^8) with
//! polynomial 0x11D), with ISA-L's length rules and return values.

use std::ffi::{c_int, c_void};

/// The `vects` buffer pointers of `array` (empty when `vects` is not positive).
///
/// # Safety
/// `array` holds `vects` pointers.
unsafe fn buffers<'a>(vects: c_int, array: *const *mut c_void) -> &'a [*mut u8] {
    if vects <= 0 || array.is_null() {
        return &[];
    }
    // SAFETY: per the contract; `*mut c_void` and `*mut u8` have one layout.
    unsafe { std::slice::from_raw_parts(array.cast::<*mut u8>(), vects as usize) }
}

/// Bytes per step of the word loops.
const STEP: usize = 64;

/// Loads `STEP` bytes as words.
///
/// # Safety
/// `p` readable for `STEP` bytes.
#[inline(always)]
unsafe fn load(p: *const u8) -> [u64; STEP / 8] {
    // SAFETY: per the contract; read_unaligned has no alignment need.
    unsafe { p.cast::<[u64; STEP / 8]>().read_unaligned() }
}

/// Multiplies each byte of a word by 2 in GF(2^8).
#[inline(always)]
fn times2(q: u64) -> u64 {
    ((q << 1) & 0xfefe_fefe_fefe_fefe) ^ (((q >> 7) & 0x0101_0101_0101_0101) * 0x1d)
}

/// The XOR of `srcs` at byte `i` (for the tail).
///
/// # Safety
/// Every source readable at `i`.
unsafe fn xor_byte(srcs: &[*mut u8], i: usize) -> u8 {
    // SAFETY: per the contract.
    srcs.iter().fold(0, |a, &s| a ^ unsafe { *s.add(i) })
}

/// `dest = XOR of srcs` over `len` bytes.
///
/// # Safety
/// Sources readable and `dest` writable for `len` bytes; `dest` overlaps no source.
unsafe fn xor_into(srcs: &[*mut u8], dest: *mut u8, len: usize) {
    let mut i = 0;
    while i + STEP <= len {
        let mut p = [0u64; STEP / 8];
        for &s in srcs {
            // SAFETY: i + STEP <= len.
            let w = unsafe { load(s.add(i)) };
            p.iter_mut().zip(w).for_each(|(p, w)| *p ^= w);
        }
        // SAFETY: as above.
        unsafe { dest.add(i).cast::<[u64; STEP / 8]>().write_unaligned(p) };
        i += STEP;
    }
    for i in i..len {
        // SAFETY: i < len.
        unsafe { *dest.add(i) = xor_byte(srcs, i) };
    }
}

macro_rules! xor_gen {
    ($($name:ident),*) => {$(
        /// Writes the XOR of the first `vects - 1` buffers into the last. Returns 0, or 1
        /// when there are fewer than 2 sources.
        ///
        /// # Safety
        /// `array` holds `vects` pointers to buffers of `len` bytes; the last is writable
        /// and overlaps no other.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(vects: c_int, len: c_int, array: *const *mut c_void) -> c_int {
            if vects < 3 {
                return 1;
            }
            // SAFETY: per the contract.
            let b = unsafe { buffers(vects, array) };
            let (dest, srcs) = b.split_last().expect("vects >= 3");
            // SAFETY: per the contract.
            unsafe { xor_into(srcs, *dest, len.max(0) as usize) };
            0
        }
    )*};
}
xor_gen!(
    xor_gen,
    xor_gen_base,
    xor_gen_sse,
    xor_gen_avx,
    xor_gen_avx512
);

macro_rules! xor_check {
    ($($name:ident),*) => {$(
        /// Returns 0 when the XOR of all `vects` buffers is zero over `len` bytes, else 1
        /// (also for fewer than 2 buffers).
        ///
        /// # Safety
        /// `array` holds `vects` pointers to readable buffers of `len` bytes.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(vects: c_int, len: c_int, array: *const *mut c_void) -> c_int {
            if vects < 2 {
                return 1;
            }
            // SAFETY: per the contract.
            let b = unsafe { buffers(vects, array) };
            // SAFETY: every buffer is readable for len bytes.
            let bad = (0..len.max(0) as usize).any(|i| unsafe { xor_byte(b, i) } != 0);
            bad as c_int
        }
    )*};
}
xor_check!(xor_check, xor_check_base, xor_check_sse);

/// P and Q of `srcs` over `len` bytes (a multiple of 8): `P = XOR of D_j`,
/// `Q = XOR of 2^j * D_j`.
///
/// # Safety
/// Sources readable, `p` and `q` writable for `len` bytes, overlapping no source.
unsafe fn pq_into(srcs: &[*mut u8], p: *mut u8, q: *mut u8, len: usize) {
    let Some((&top, rest)) = srcs.split_last() else {
        return;
    };
    let mut i = 0;
    while i + STEP <= len {
        // SAFETY: i + STEP <= len for every buffer.
        let mut pw = unsafe { load(top.add(i)) };
        let mut qw = pw;
        for &s in rest.iter().rev() {
            // SAFETY: as above.
            let w = unsafe { load(s.add(i)) };
            for ((p, q), w) in pw.iter_mut().zip(qw.iter_mut()).zip(w) {
                *p ^= w;
                *q = times2(*q) ^ w;
            }
        }
        // SAFETY: as above.
        unsafe {
            p.add(i).cast::<[u64; STEP / 8]>().write_unaligned(pw);
            q.add(i).cast::<[u64; STEP / 8]>().write_unaligned(qw);
        }
        i += STEP;
    }
    while i + 8 <= len {
        // SAFETY: i + 8 <= len.
        let word = |s: *mut u8| unsafe { s.add(i).cast::<u64>().read_unaligned() };
        let (mut pw, mut qw) = (word(top), word(top));
        for &s in rest.iter().rev() {
            let w = word(s);
            pw ^= w;
            qw = times2(qw) ^ w;
        }
        // SAFETY: as above.
        unsafe {
            p.add(i).cast::<u64>().write_unaligned(pw);
            q.add(i).cast::<u64>().write_unaligned(qw);
        }
        i += 8;
    }
}

macro_rules! pq_gen {
    ($($name:ident: $align:expr),*) => {$(
        /// Writes P into buffer `vects - 2` and Q into buffer `vects - 1` from the first
        /// `vects - 2`. Returns 0, or 1 (doing nothing) with fewer than 2 sources or a
        /// length that is not a multiple of the function's step.
        ///
        /// # Safety
        /// `array` holds `vects` pointers to buffers of `len` bytes; the last two are
        /// writable and overlap no other.
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name(vects: c_int, len: c_int, array: *const *mut c_void) -> c_int {
            if vects < 4 || len < 0 || len % $align != 0 {
                return 1;
            }
            // SAFETY: per the contract.
            let b = unsafe { buffers(vects, array) };
            let n = b.len();
            // SAFETY: per the contract.
            unsafe { pq_into(&b[..n - 2], b[n - 2], b[n - 1], len as usize) };
            0
        }
    )*};
}
pq_gen!(
    pq_gen_sse: 16,
    pq_gen_avx: 16,
    pq_gen_avx2: 32,
    pq_gen_avx512: 32,
    pq_gen_avx2_gfni: 32,
    pq_gen_avx512_gfni: 32
);

/// `pq_gen` as ISA-L picks it on this CPU: the base code, or the SSE and AVX code (16-byte
/// lengths), or the AVX2 code and above (32-byte lengths).
///
/// # Safety
/// As for `pq_gen_avx2`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pq_gen(vects: c_int, len: c_int, array: *const *mut c_void) -> c_int {
    use crate::tier::{Tier, tiers};
    // SAFETY: forwarded contract.
    unsafe {
        match tiers().general {
            Tier::Base => pq_gen_base(vects, len, array),
            Tier::Sse | Tier::Avx => pq_gen_sse(vects, len, array),
            _ => pq_gen_avx2(vects, len, array),
        }
    }
}

/// As `pq_gen`, over the whole 8-byte words of `len` (the bytes past the last whole
/// word are left alone), as ISA-L's base function does.
///
/// # Safety
/// As for `pq_gen`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pq_gen_base(vects: c_int, len: c_int, array: *const *mut c_void) -> c_int {
    if vects < 4 {
        return 1;
    }
    // SAFETY: per the contract.
    let b = unsafe { buffers(vects, array) };
    let n = b.len();
    // SAFETY: per the contract.
    unsafe { pq_into(&b[..n - 2], b[n - 2], b[n - 1], len.max(0) as usize & !7) };
    0
}

/// The first byte where P or Q disagrees: `(i, 1)` for P, `(i, 2)` for Q.
///
/// # Safety
/// `array` holds `vects >= 4` pointers to readable buffers of `len` bytes.
unsafe fn pq_mismatch(b: &[*mut u8], len: usize) -> Option<(usize, c_int)> {
    let n = b.len();
    let (srcs, p, q) = (&b[..n - 2], b[n - 2], b[n - 1]);
    let (&top, rest) = srcs.split_last()?;
    (0..len).find_map(|i| {
        // SAFETY: i < len in every buffer.
        let at = |s: *mut u8| unsafe { *s.add(i) };
        let (mut pb, mut qb) = (at(top), at(top));
        for &s in rest.iter().rev() {
            pb ^= at(s);
            qb = ec_codec::gf::mul(qb, 2) ^ at(s);
        }
        if at(p) != pb {
            Some((i, 1))
        } else if at(q) != qb {
            Some((i, 2))
        } else {
            None
        }
    })
}

/// Returns 0 when P and Q match the sources, else 1 (also with fewer than 2 sources or
/// a length that is not a multiple of 16).
///
/// # Safety
/// `array` holds `vects` pointers to readable buffers of `len` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pq_check(vects: c_int, len: c_int, array: *const *mut c_void) -> c_int {
    // SAFETY: per the contract.
    unsafe { pq_check_sse(vects, len, array) }
}

/// As `pq_check`.
///
/// # Safety
/// As for `pq_check`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pq_check_sse(
    vects: c_int,
    len: c_int,
    array: *const *mut c_void,
) -> c_int {
    if vects < 4 || len < 0 || len % 16 != 0 {
        return 1;
    }
    // SAFETY: per the contract.
    let b = unsafe { buffers(vects, array) };
    // SAFETY: per the contract.
    unsafe { pq_mismatch(b, len as usize) }.is_some() as c_int
}

/// Returns 0 when P and Q match, else `i | 1` (P wrong at byte `i`) or `i | 2` (Q
/// wrong), as ISA-L's base function does; 1 with fewer than 2 sources.
///
/// # Safety
/// As for `pq_check`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn pq_check_base(
    vects: c_int,
    len: c_int,
    array: *const *mut c_void,
) -> c_int {
    if vects < 4 {
        return 1;
    }
    // SAFETY: per the contract.
    let b = unsafe { buffers(vects, array) };
    // SAFETY: per the contract.
    match unsafe { pq_mismatch(b, len.max(0) as usize) } {
        Some((i, which)) => i as c_int | which,
        None => 0,
    }
}
