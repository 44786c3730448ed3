//! Coefficient tables in ISA-L's layout, run where they lie.
//!
//! ISA-L's `ec_init_tables` expands each coefficient `c` into 32 bytes: `c` times each
//! low-nibble value `0..16`, then `c` times each high-nibble value `0x00, 0x10, .., 0xf0`
//! ([`gf::nibble_tables`](crate::gf::nibble_tables)). A product is then
//! `t[x & 15] ^ t[16 + (x >> 4)]`. Programs written for ISA-L size these tables, keep
//! them, and index into them (Ceph passes `g_tbls + 32 * k * row`), so [`multiply`]
//! reads them in place: it allocates nothing and reads no byte past a coefficient's 32.
//! It runs the same SIMD kernels as [`GfMatrix`](crate::GfMatrix), chosen by
//! [`dispatch`](crate::dispatch), on one thread.

use crate::dispatch::{self, Isa};
use crate::kernels::{MAX_COLS, MAX_ROWS};

/// Bytes of tables per coefficient.
pub const TABLE_BYTES: usize = 32;

/// The tables of coefficient `c` (ISA-L's `gf_vect_mul_init`).
pub fn init(c: u8) -> [u8; TABLE_BYTES] {
    crate::gf::nibble_tables(c)
}

/// Most coefficients of a piece the GFNI kernels run (8 KiB of bit matrices on the
/// stack); larger pieces keep the shuffle kernels.
#[cfg(target_arch = "x86_64")]
const AFFINE_MAX: usize = 1024;

/// The tables and the bit matrix of every coefficient, computed once per process.
#[cfg(target_arch = "x86_64")]
fn derived() -> &'static ([[u8; 32]; 256], [u64; 256]) {
    static DERIVED: std::sync::OnceLock<([[u8; 32]; 256], [u64; 256])> = std::sync::OnceLock::new();
    DERIVED.get_or_init(|| {
        let mut t = ([[0u8; 32]; 256], [0u64; 256]);
        for c in 0..256 {
            t.0[c] = crate::gf::nibble_tables(c as u8);
            t.1[c] = crate::gf::affine_matrix(c as u8);
        }
        t
    })
}

/// Computes what the table path derives, once, so that no call pays for it.
pub fn warm_up() {
    #[cfg(target_arch = "x86_64")]
    let _ = derived();
    let _ = dispatch::selected();
    let _ = dispatch::llc_bytes();
}

/// The tables of 1: a product by them is the source itself.
const ONE: [u8; 32] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60,
    0x70, 0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0,
];

/// `out[r] = XOR over c of coef(r, c) * in[c]` over `len` bytes, or `out[r] ^=` that sum
/// when `accumulate`, where the tables of coef(r, c) lie at
/// `tables + 32 * (r * row_stride + c)`. `ins.len()` is the column count and
/// `outs.len()` the row count; any counts and any length work.
///
/// Every product is the table lookup, as ISA-L's SIMD kernels compute it, so any 32
/// bytes give what ISA-L gives for them; tables equal to those of 0 or 1 are skipped or
/// added without lookups, which gives the same bytes.
///
/// # Safety
/// The 32 bytes of every coefficient's tables are readable; every input is readable and
/// every output readable and writable for `len` bytes; outputs overlap neither each
/// other nor any input.
pub unsafe fn multiply(
    len: usize,
    tables: *const u8,
    row_stride: usize,
    ins: &[*const u8],
    outs: &[*mut u8],
    accumulate: bool,
) {
    if len == 0 || outs.is_empty() {
        return;
    }
    if ins.is_empty() {
        if !accumulate {
            for &o in outs {
                // SAFETY: the output is writable for len bytes.
                unsafe { std::ptr::write_bytes(o, 0, len) };
            }
        }
        return;
    }
    let isa = dispatch::selected();
    let simd = matches!(isa, Isa::Avx2 | Isa::Avx512 | Isa::Gfni256 | Isa::Gfni512);
    let bulk = if simd { len & !63 } else { 0 };
    let mut r0 = 0;
    while r0 < outs.len() {
        let nr = (outs.len() - r0).min(MAX_ROWS);
        let mut c0 = 0;
        while c0 < ins.len() {
            let nc = (ins.len() - c0).min(MAX_COLS);
            // Columns past the first piece add to what the first piece wrote.
            let acc = accumulate || c0 > 0;
            let base = tables.wrapping_add(TABLE_BYTES * (r0 * row_stride + c0));
            // SAFETY: the piece's tables are inside the caller's tables.
            let view = unsafe { Borrowed::new(base, row_stride, nr, nc) };
            let (pins, pouts) = (&ins[c0..c0 + nc], &outs[r0..r0 + nr]);
            if bulk > 0 {
                // SAFETY: forwarded contract over [0, bulk), a multiple of 64.
                unsafe { view.run_simd(isa, pins, pouts, bulk, acc) };
            }
            // SAFETY: forwarded contract over [bulk, len).
            unsafe { view.lookup(pins, pouts, bulk, len - bulk, acc) };
            c0 += nc;
        }
        r0 += nr;
    }
}

/// A rows x cols piece of caller-owned tables (at most 32 x 288), with the column
/// bitmaps the kernels use to skip zero coefficients and add ones.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
struct Borrowed<const ACC: bool> {
    base: *const u8,
    row_stride: usize,
    rows: usize,
    cols: usize,
    nonzero: [u32; MAX_COLS],
    ones: [u32; MAX_COLS],
}

impl Borrowed<false> {
    /// # Safety
    /// The tables of every coefficient of the piece are readable.
    unsafe fn new(base: *const u8, row_stride: usize, rows: usize, cols: usize) -> Self {
        let mut b = Borrowed {
            base,
            row_stride,
            rows,
            cols,
            nonzero: [0; MAX_COLS],
            ones: [0; MAX_COLS],
        };
        for c in 0..cols {
            for r in 0..rows {
                // SAFETY: per the contract; [u8; 32] has alignment 1.
                let t = unsafe { &*b.table(c, r) };
                b.nonzero[c] |= ((*t != [0; 32]) as u32) << r;
                b.ones[c] |= ((*t == ONE) as u32) << r;
            }
        }
        b
    }

    /// The bit matrices of the piece's coefficients, column-major, when every table is
    /// the one `init` makes for its byte 1; `false` (and a partly written `out`) when
    /// one is not.
    #[cfg(target_arch = "x86_64")]
    fn affine_into(&self, out: &mut [u64; AFFINE_MAX]) -> bool {
        let (nibbles, affine) = derived();
        for c in 0..self.cols {
            for r in 0..self.rows {
                // SAFETY: the piece's tables are readable (checked at `new`'s contract).
                let t = unsafe { &*self.table(c, r) };
                let coef = t[1] as usize;
                if *t != nibbles[coef] {
                    return false;
                }
                out[c * self.rows + r] = affine[coef];
            }
        }
        true
    }

    #[cfg(target_arch = "x86_64")]
    fn accumulating(&self) -> Borrowed<true> {
        Borrowed {
            base: self.base,
            row_stride: self.row_stride,
            rows: self.rows,
            cols: self.cols,
            nonzero: self.nonzero,
            ones: self.ones,
        }
    }

    /// The SIMD kernel over `[0, len)`.
    ///
    /// # Safety
    /// As for [`multiply`]; `len` a multiple of 64; `isa` supported by this CPU.
    #[allow(unused_variables)]
    unsafe fn run_simd(
        &self,
        isa: Isa,
        ins: &[*const u8],
        outs: &[*mut u8],
        len: usize,
        acc: bool,
    ) {
        #[cfg(target_arch = "x86_64")]
        {
            use crate::kernels::x86_64::{avx2, avx512, gfni};
            let nt = dispatch::use_streaming((self.rows + self.cols) * len)
                && outs.iter().all(|p| (*p as usize).is_multiple_of(64));
            if matches!(isa, Isa::Gfni256 | Isa::Gfni512)
                && !acc
                && self.rows * self.cols <= AFFINE_MAX
            {
                // Tables made by `init` (as `ec_init_tables` makes them) name their
                // coefficient in byte 1, so the GFNI kernels can run the coefficient's bit
                // matrix instead; other tables keep the lookups, which define them.
                let mut affine = [0u64; AFFINE_MAX];
                if self.affine_into(&mut affine) {
                    let view = WithAffine {
                        tables: self,
                        affine: &affine,
                    };
                    // SAFETY: forwarded contract; dispatch checked the CPU's features.
                    unsafe {
                        if isa == Isa::Gfni512 {
                            gfni::v512::run(&view, ins, outs, 0, len, nt)
                        } else {
                            gfni::v256::run(&view, ins, outs, 0, len, nt)
                        }
                    };
                    return;
                }
            }
            let wide = matches!(isa, Isa::Avx512 | Isa::Gfni512);
            // SAFETY: forwarded contract; dispatch checked the CPU's features.
            unsafe {
                match (wide, acc) {
                    (true, false) => avx512::run(self, ins, outs, 0, len, nt),
                    (true, true) => avx512::run(&self.accumulating(), ins, outs, 0, len, nt),
                    (false, false) => avx2::run(self, ins, outs, 0, len, nt),
                    (false, true) => avx2::run(&self.accumulating(), ins, outs, 0, len, nt),
                }
            }
        }
    }
}

impl<const ACC: bool> Borrowed<ACC> {
    #[inline(always)]
    fn table(&self, c: usize, r: usize) -> *const [u8; 32] {
        self.base
            .wrapping_add(TABLE_BYTES * (r * self.row_stride + c))
            .cast()
    }

    /// Byte-at-a-time lookups over `[off, off + len)`.
    ///
    /// # Safety
    /// As for [`multiply`].
    unsafe fn lookup(
        &self,
        ins: &[*const u8],
        outs: &[*mut u8],
        off: usize,
        len: usize,
        acc: bool,
    ) {
        for (r, &out) in outs.iter().enumerate() {
            for i in off..off + len {
                // SAFETY: the output is readable and writable over the range.
                let mut a = if acc { unsafe { *out.add(i) } } else { 0 };
                for (c, &src) in ins.iter().enumerate() {
                    // SAFETY: the input is readable over the range and the tables too.
                    let (x, t) = unsafe { (*src.add(i), &*self.table(c, r)) };
                    a ^= t[(x & 15) as usize] ^ t[16 + (x >> 4) as usize];
                }
                // SAFETY: as above.
                unsafe { *out.add(i) = a };
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl<const ACC: bool> crate::kernels::Tables for Borrowed<ACC> {
    const ACCUMULATE: bool = ACC;

    #[inline(always)]
    fn rows(&self) -> usize {
        self.rows
    }

    #[inline(always)]
    fn cols(&self) -> usize {
        self.cols
    }

    #[inline(always)]
    fn table(&self, c: usize, r: usize) -> *const [u8; 32] {
        Borrowed::table(self, c, r)
    }

    #[inline(always)]
    fn masks(&self, c: usize) -> (u32, u32) {
        (self.nonzero[c], self.ones[c])
    }
}

/// A piece with the bit matrices of its coefficients, for the GFNI kernels.
#[cfg(target_arch = "x86_64")]
struct WithAffine<'a> {
    tables: &'a Borrowed<false>,
    /// Column-major: `[c * rows + r]`.
    affine: &'a [u64; AFFINE_MAX],
}

#[cfg(target_arch = "x86_64")]
impl crate::kernels::Tables for WithAffine<'_> {
    const ACCUMULATE: bool = false;

    #[inline(always)]
    fn rows(&self) -> usize {
        self.tables.rows
    }

    #[inline(always)]
    fn cols(&self) -> usize {
        self.tables.cols
    }

    #[inline(always)]
    fn table(&self, c: usize, r: usize) -> *const [u8; 32] {
        self.tables.table(c, r)
    }

    #[inline(always)]
    fn masks(&self, c: usize) -> (u32, u32) {
        (self.tables.nonzero[c], self.tables.ones[c])
    }
}

#[cfg(target_arch = "x86_64")]
impl crate::kernels::Affine for WithAffine<'_> {
    #[inline(always)]
    fn affine(&self, c: usize, r: usize) -> u64 {
        self.affine[c * self.tables.rows + r]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gf::mul;

    #[test]
    fn any_tables_act_as_lookups() {
        // Tables not made by `init`: every kernel must give the lookups' bytes.
        let (rows, cols, len) = (3usize, 5usize, 64 * 9 + 7);
        let mut seed = 99u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (seed >> 16) as u8
        };
        let tables: Vec<u8> = (0..rows * cols * 32).map(|_| rnd()).collect();
        let ins: Vec<Vec<u8>> = (0..cols)
            .map(|_| (0..len).map(|_| rnd()).collect())
            .collect();
        let want: Vec<Vec<u8>> = (0..rows)
            .map(|r| {
                (0..len)
                    .map(|i| {
                        (0..cols).fold(0u8, |a, c| {
                            let t = &tables[32 * (r * cols + c)..][..32];
                            let x = ins[c][i];
                            a ^ t[(x & 15) as usize] ^ t[16 + (x >> 4) as usize]
                        })
                    })
                    .collect()
            })
            .collect();
        let mut outs = vec![vec![0u8; len]; rows];
        let ip: Vec<*const u8> = ins.iter().map(|b| b.as_ptr()).collect();
        let op: Vec<*mut u8> = outs.iter_mut().map(|b| b.as_mut_ptr()).collect();
        // SAFETY: every buffer holds len bytes and the tables rows * cols * 32.
        unsafe { multiply(len, tables.as_ptr(), cols, &ip, &op, false) };
        assert_eq!(outs, want);
    }

    fn reference(
        coefs: &[u8],
        rows: usize,
        cols: usize,
        ins: &[Vec<u8>],
        acc: &[Vec<u8>],
    ) -> Vec<Vec<u8>> {
        (0..rows)
            .map(|r| {
                (0..ins[0].len())
                    .map(|i| {
                        (0..cols).fold(acc[r][i], |a, c| a ^ mul(coefs[r * cols + c], ins[c][i]))
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn borrowed_tables_give_the_field_products() {
        let mut seed = 7u32;
        let mut rnd = move || {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (seed >> 16) as u8
        };
        for &(rows, cols, len) in &[
            (1, 1, 1),
            (4, 10, 4096 + 33),
            (33, 3, 200),
            (2, 300, 64),
            (5, 7, 63),
        ] {
            let mut coefs: Vec<u8> = (0..rows * cols).map(|_| rnd()).collect();
            coefs[0] = 1;
            coefs[rows * cols - 1] = 0;
            let tables: Vec<u8> = coefs.iter().flat_map(|&c| init(c)).collect();
            let ins: Vec<Vec<u8>> = (0..cols)
                .map(|_| (0..len).map(|_| rnd()).collect())
                .collect();
            let start: Vec<Vec<u8>> = (0..rows)
                .map(|_| (0..len).map(|_| rnd()).collect())
                .collect();
            for accumulate in [false, true] {
                let mut outs = start.clone();
                let ip: Vec<*const u8> = ins.iter().map(|b| b.as_ptr()).collect();
                let op: Vec<*mut u8> = outs.iter_mut().map(|b| b.as_mut_ptr()).collect();
                // SAFETY: every buffer holds len bytes and the tables rows * cols * 32.
                unsafe { multiply(len, tables.as_ptr(), cols, &ip, &op, accumulate) };
                let zero = vec![vec![0u8; len]; rows];
                let want = reference(
                    &coefs,
                    rows,
                    cols,
                    &ins,
                    if accumulate { &start } else { &zero },
                );
                assert_eq!(
                    outs, want,
                    "{rows}x{cols} len {len} accumulate {accumulate}"
                );
            }
        }
    }
}
