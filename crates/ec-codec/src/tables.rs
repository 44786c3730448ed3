//! Coefficient tables in ISA-L's layouts, run where they lie.
//!
//! ISA-L expands each coefficient `c` into 32 bytes of tables, and its functions read
//! those bytes in one of four ways ([`Layout`]): as nibble products (`c` times each
//! low-nibble value `0..16`, then `c` times each high-nibble value `0x00, 0x10, ..,
//! 0xf0`, [`crate::gf::nibble_tables`]), as the coefficient in byte 1
//! (the `_base` functions), or as `GF2P8AFFINEQB` bit matrices (the GFNI functions: one
//! matrix in bytes 0..8, or one per 64-bit lane). Programs written for ISA-L size these
//! tables, keep them, and index into them (Ceph passes `g_tbls + 32 * k * row`), so
//! [`multiply_as`] reads them in place, as the given layout says: it allocates nothing
//! and reads no byte past a coefficient's 32. It runs the same SIMD kernels as
//! [`crate::GfMatrix`], chosen by [`crate::dispatch`], on one thread.

use crate::dispatch::{self, Isa};
use crate::gf;
use crate::kernels::{MAX_COLS, MAX_ROWS};

/// Bytes of tables per coefficient.
pub const TABLE_BYTES: usize = 32;

/// How a function reads the 32 bytes of tables of a coefficient to multiply byte `x` at
/// offset `i` of a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Nibble products: `t[x & 15] ^ t[16 + (x >> 4)]` (ISA-L's SSE, AVX, AVX2 and
    /// AVX-512 functions; tables made by [`init`]).
    Nibble,
    /// The coefficient in byte 1: `t[1] * x` (ISA-L's `_base` functions).
    Base,
    /// The bit matrix in bytes 0..8, applied as `GF2P8AFFINEQB` does (ISA-L's AVX-512
    /// GFNI functions and AVX2 GFNI multiply-adds; tables made by [`init_affine`]).
    Affine,
    /// Four bit matrices, the one in bytes `8 * (i % 32 / 8)` applied to byte `i` (ISA-L's
    /// AVX2 GFNI dot products and vector multiplication, which load all 32 bytes into a
    /// register).
    AffineLanes,
}

/// The nibble tables of coefficient `c` (ISA-L's `gf_vect_mul_init` on CPUs without
/// GFNI).
pub fn init(c: u8) -> [u8; TABLE_BYTES] {
    gf::nibble_tables(c)
}

/// The bit matrix of coefficient `c` in each of the four 64-bit lanes (ISA-L's
/// `gf_vect_mul_init` on CPUs with GFNI).
pub fn init_affine(c: u8) -> [u8; TABLE_BYTES] {
    let m = gf::affine_matrix(c).to_le_bytes();
    let mut t = [0u8; TABLE_BYTES];
    for lane in t.chunks_exact_mut(8) {
        lane.copy_from_slice(&m);
    }
    t
}

/// The bit matrix in 64-bit lane `l` (0..4) of a coefficient's tables.
#[inline(always)]
fn lane(t: &[u8; 32], l: usize) -> u64 {
    let mut q = [0u8; 8];
    q.copy_from_slice(&t[8 * l..8 * l + 8]);
    u64::from_le_bytes(q)
}

/// The bit matrix of the identity: a product by it is the source.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64 kernels only
const IDENTITY: u64 = 0x0102_0408_1020_4080;

/// Most coefficients of a piece the GFNI kernels run (8 KiB of bit matrices on the
/// stack); larger pieces are split by columns.
const AFFINE_MAX: usize = 1024;

/// The tables and the bit matrix of every coefficient, computed once per process.
struct Derived {
    nibbles: [[u8; 32]; 256],
    affine: [u64; 256],
}

fn derived() -> &'static Derived {
    static DERIVED: std::sync::OnceLock<Derived> = std::sync::OnceLock::new();
    DERIVED.get_or_init(|| {
        let mut t = Derived {
            nibbles: [[0u8; 32]; 256],
            affine: [0u64; 256],
        };
        for c in 0..256 {
            t.nibbles[c] = gf::nibble_tables(c as u8);
            t.affine[c] = gf::affine_matrix(c as u8);
        }
        t
    })
}

/// Computes what the table path derives, once, so that no call pays for it.
pub fn warm_up() {
    let _ = derived();
    let _ = dispatch::selected();
    let _ = dispatch::llc_bytes();
}

/// The tables of 1: a product by them is the source.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64 kernels only
const ONE: [u8; 32] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 0x10, 0x20, 0x30, 0x40, 0x50, 0x60,
    0x70, 0x80, 0x90, 0xa0, 0xb0, 0xc0, 0xd0, 0xe0, 0xf0,
];

/// [`multiply_as`] with nibble tables (`Layout::Nibble`).
///
/// # Safety
/// As for [`multiply_as`].
pub unsafe fn multiply(
    len: usize,
    tables: *const u8,
    row_stride: usize,
    ins: &[*const u8],
    outs: &[*mut u8],
    accumulate: bool,
) {
    // SAFETY: forwarded contract.
    unsafe {
        multiply_as(
            Layout::Nibble,
            len,
            tables,
            row_stride,
            ins,
            outs,
            accumulate,
        )
    }
}

/// `out[r] = XOR over c of coef(r, c) * in[c]` over `len` bytes, or `out[r] ^=` that sum
/// when `accumulate`, where the tables of coef(r, c) lie at
/// `tables + 32 * (r * row_stride + c)` and are read as `layout` says. `ins.len()` is
/// the column count and `outs.len()` the row count; any counts and any length work.
///
/// Any 32 bytes give what ISA-L's function of that layout gives for them: each product
/// is computed as the layout defines it, or by a kernel that gives the same bytes (the
/// GFNI kernels run any bit matrix, and nibble tables that are some coefficient's;
/// tables of 0 or 1 are skipped or added without lookups).
///
/// # Safety
/// The 32 bytes of every coefficient's tables are readable; every input is readable and
/// every output readable and writable for `len` bytes; outputs overlap neither each
/// other nor any input, except that with one input and one output and no
/// `accumulate`, the output may be the input itself (a product in place).
pub unsafe fn multiply_as(
    layout: Layout,
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
    let gfni = matches!(isa, Isa::Gfni256 | Isa::Gfni512);
    let simd = gfni || matches!(isa, Isa::Avx2 | Isa::Avx512);
    let mut r0 = 0;
    while r0 < outs.len() {
        let nr = (outs.len() - r0).min(MAX_ROWS);
        // The GFNI kernels hold every bit matrix of a piece on the stack; the shuffle
        // kernels read nibble tables where they lie.
        let col_cap = if gfni || layout != Layout::Nibble {
            (AFFINE_MAX / nr).min(MAX_COLS)
        } else {
            MAX_COLS
        };
        let mut c0 = 0;
        while c0 < ins.len() {
            let nc = (ins.len() - c0).min(col_cap);
            // Columns past the first piece add to what the first piece wrote.
            let acc = accumulate || c0 > 0;
            let piece = Piece {
                layout,
                base: tables.wrapping_add(TABLE_BYTES * (r0 * row_stride + c0)),
                row_stride,
                rows: nr,
                cols: nc,
            };
            let (pins, pouts) = (&ins[c0..c0 + nc], &outs[r0..r0 + nr]);
            let done = if simd {
                // SAFETY: forwarded contract; the piece's tables are inside the caller's.
                unsafe { piece.run_simd(isa, pins, pouts, len, acc) }
            } else {
                0
            };
            // SAFETY: forwarded contract over [done, len).
            unsafe { piece.lookup(pins, pouts, done, len - done, acc) };
            c0 += nc;
        }
        r0 += nr;
    }
}

/// A rows x cols piece of caller-owned tables (at most 32 x 288), read as `layout` says.
#[derive(Clone, Copy)]
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // x86-64 kernels only
struct Piece {
    layout: Layout,
    base: *const u8,
    row_stride: usize,
    rows: usize,
    cols: usize,
}

impl Piece {
    /// The tables of coef(r, c) of the piece.
    #[inline(always)]
    fn table(&self, c: usize, r: usize) -> *const [u8; 32] {
        self.base
            .wrapping_add(TABLE_BYTES * (r * self.row_stride + c))
            .cast()
    }

    /// Runs a SIMD kernel over as much of `[0, len)` as it can give the layout's bytes
    /// for, and returns where the rest begins: `len`, or the end of the last whole
    /// 64 bytes, or 0 when no kernel gives this layout's bytes for these tables.
    ///
    /// # Safety
    /// As for [`multiply_as`], for the piece; `isa` supported by this CPU and a SIMD one.
    #[allow(unused_variables)]
    unsafe fn run_simd(
        &self,
        isa: Isa,
        ins: &[*const u8],
        outs: &[*mut u8],
        len: usize,
        acc: bool,
    ) -> usize {
        #[cfg(target_arch = "x86_64")]
        {
            let bulk = len & !63;
            // The last 64 bytes again, overlapping the bulk, finish a tail when the
            // products overwrite outputs that no input shares.
            let apart = !acc
                && outs.iter().all(|&o| {
                    ins.iter().all(|&i| {
                        let (o, i) = (o as usize, i as usize);
                        o + len <= i || i + len <= o
                    })
                });
            let overlap = bulk < len && bulk > 0 && apart;
            let stream = dispatch::use_streaming((self.rows + self.cols) * len);
            use crate::kernels::x86_64::{avx2, avx512, gfni};
            // Runs `$kernel` on `$view` over the whole 64-byte steps, then over the last
            // 64 bytes again when `overlap`; evaluates to the end of what it covered.
            macro_rules! cover {
                ($kernel:path, $view:expr) => {{
                    if bulk > 0 {
                        // SAFETY: forwarded contract over [0, bulk), a multiple of 64;
                        // dispatch checked the CPU's features.
                        // Outputs that share no byte with an input may be realigned.
                        unsafe { $kernel($view, ins, outs, 0, bulk, stream, apart) };
                    }
                    if overlap {
                        // SAFETY: as above, over the last 64 bytes, which get the bytes
                        // the bulk gave them (the products depend on the inputs only).
                        unsafe { $kernel($view, ins, outs, len - 64, 64, false, false) };
                        len
                    } else {
                        bulk
                    }
                }};
            }
            if matches!(isa, Isa::Gfni256 | Isa::Gfni512) {
                let mut a = Affines::new(self.rows, self.cols);
                if a.fill(self) {
                    return match (isa == Isa::Gfni512, acc) {
                        (true, false) => cover!(gfni::v512::run, &a),
                        (true, true) => cover!(gfni::v512::run, &a.accumulating()),
                        (false, false) => cover!(gfni::v256::run, &a),
                        (false, true) => cover!(gfni::v256::run, &a.accumulating()),
                    };
                }
            }
            if self.layout != Layout::Nibble {
                return 0;
            }
            let b = Borrowed::<false>::new(self);
            match (matches!(isa, Isa::Avx512 | Isa::Gfni512), acc) {
                (true, false) => cover!(avx512::run, &b),
                (true, true) => cover!(avx512::run, &b.accumulating()),
                (false, false) => cover!(avx2::run, &b),
                (false, true) => cover!(avx2::run, &b.accumulating()),
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        0
    }

    /// Byte-at-a-time products over `[off, off + len)`, as the layout defines them.
    ///
    /// # Safety
    /// As for [`multiply_as`], for the piece.
    unsafe fn lookup(
        &self,
        ins: &[*const u8],
        outs: &[*mut u8],
        off: usize,
        len: usize,
        acc: bool,
    ) {
        if len == 0 {
            return;
        }
        // SAFETY: forwarded contract (each arm).
        unsafe {
            match self.layout {
                Layout::Nibble => self.lookup_with(ins, outs, off, len, acc, |t, x, _| {
                    t[(x & 15) as usize] ^ t[16 + (x >> 4) as usize]
                }),
                Layout::Base => {
                    self.lookup_with(ins, outs, off, len, acc, |t, x, _| gf::mul(t[1], x))
                }
                Layout::Affine => self.lookup_with(ins, outs, off, len, acc, |t, x, _| {
                    gf::affine_apply(lane(t, 0), x)
                }),
                Layout::AffineLanes => self.lookup_with(ins, outs, off, len, acc, |t, x, i| {
                    gf::affine_apply(lane(t, i % 32 / 8), x)
                }),
            }
        }
    }

    /// [`lookup`](Piece::lookup) with `product(tables, x, offset)`.
    ///
    /// # Safety
    /// As for [`multiply_as`], for the piece.
    #[inline(always)]
    unsafe fn lookup_with(
        &self,
        ins: &[*const u8],
        outs: &[*mut u8],
        off: usize,
        len: usize,
        acc: bool,
        product: impl Fn(&[u8; 32], u8, usize) -> u8,
    ) {
        for (r, &out) in outs.iter().enumerate() {
            for i in off..off + len {
                // SAFETY: the output is readable and writable over the range.
                let mut a = if acc { unsafe { *out.add(i) } } else { 0 };
                for (c, &src) in ins.iter().enumerate() {
                    // SAFETY: the input is readable over the range and the tables too
                    // ([u8; 32] has alignment 1). Each position of the source is read
                    // before the output's is written, so a product may be in place.
                    let (x, t) = unsafe { (*src.add(i), &*self.table(c, r)) };
                    a ^= product(t, x, i);
                }
                // SAFETY: as above.
                unsafe { *out.add(i) = a };
            }
        }
    }
}

/// A piece of nibble tables read where they lie, with the column bitmaps the kernels use
/// to skip zero coefficients and add ones.
#[cfg(target_arch = "x86_64")]
struct Borrowed<const ACC: bool> {
    piece: Piece,
    nonzero: [u32; MAX_COLS],
    ones: [u32; MAX_COLS],
}

#[cfg(target_arch = "x86_64")]
impl Borrowed<false> {
    /// The piece's bitmaps (its tables are readable: [`multiply_as`]'s contract).
    fn new(piece: &Piece) -> Self {
        let mut b = Borrowed {
            piece: *piece,
            nonzero: [0; MAX_COLS],
            ones: [0; MAX_COLS],
        };
        for c in 0..piece.cols {
            for r in 0..piece.rows {
                // SAFETY: the piece's tables are readable; [u8; 32] has alignment 1.
                let t = unsafe { &*piece.table(c, r) };
                b.nonzero[c] |= ((*t != [0; 32]) as u32) << r;
                b.ones[c] |= ((*t == ONE) as u32) << r;
            }
        }
        b
    }

    fn accumulating(&self) -> Borrowed<true> {
        Borrowed {
            piece: self.piece,
            nonzero: self.nonzero,
            ones: self.ones,
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl<const ACC: bool> crate::kernels::Tables for Borrowed<ACC> {
    const ACCUMULATE: bool = ACC;

    #[inline(always)]
    fn rows(&self) -> usize {
        self.piece.rows
    }

    #[inline(always)]
    fn cols(&self) -> usize {
        self.piece.cols
    }

    #[inline(always)]
    fn table(&self, c: usize, r: usize) -> *const [u8; 32] {
        self.piece.table(c, r)
    }

    #[inline(always)]
    fn masks(&self, c: usize) -> (u32, u32) {
        (self.nonzero[c], self.ones[c])
    }
}

/// A piece as one bit matrix per coefficient, for the GFNI kernels: what each product
/// is when the layout's bytes are a single `GF2P8AFFINEQB` of it.
#[cfg(target_arch = "x86_64")]
struct Affines<const ACC: bool> {
    rows: usize,
    cols: usize,
    /// Column-major: `[c * rows + r]`.
    affine: [u64; AFFINE_MAX],
    nonzero: [u32; MAX_COLS],
    ones: [u32; MAX_COLS],
}

#[cfg(target_arch = "x86_64")]
impl Affines<false> {
    fn new(rows: usize, cols: usize) -> Self {
        Affines {
            rows,
            cols,
            affine: [0; AFFINE_MAX],
            nonzero: [0; MAX_COLS],
            ones: [0; MAX_COLS],
        }
    }

    /// The bit matrices of the piece's coefficients (`rows * cols <= AFFINE_MAX`), or
    /// `false` when one of them is not a single matrix: nibble tables that are not some
    /// coefficient's, or four lanes that differ.
    fn fill(&mut self, piece: &Piece) -> bool {
        let d = derived();
        for c in 0..piece.cols {
            for r in 0..piece.rows {
                // SAFETY: the piece's tables are readable; [u8; 32] has alignment 1.
                let t = unsafe { &*piece.table(c, r) };
                let q = |l: usize| lane(t, l);
                let m = match piece.layout {
                    Layout::Nibble if *t == d.nibbles[t[1] as usize] => d.affine[t[1] as usize],
                    Layout::Nibble => return false,
                    Layout::Base => d.affine[t[1] as usize],
                    Layout::Affine => q(0),
                    Layout::AffineLanes if (1..4).all(|l| q(l) == q(0)) => q(0),
                    Layout::AffineLanes => return false,
                };
                self.affine[c * piece.rows + r] = m;
                self.nonzero[c] |= ((m != 0) as u32) << r;
                self.ones[c] |= ((m == IDENTITY) as u32) << r;
            }
        }
        true
    }

    fn accumulating(&self) -> Affines<true> {
        Affines {
            rows: self.rows,
            cols: self.cols,
            affine: self.affine,
            nonzero: self.nonzero,
            ones: self.ones,
        }
    }
}

#[cfg(target_arch = "x86_64")]
impl<const ACC: bool> crate::kernels::Tables for Affines<ACC> {
    const ACCUMULATE: bool = ACC;

    #[inline(always)]
    fn rows(&self) -> usize {
        self.rows
    }

    #[inline(always)]
    fn cols(&self) -> usize {
        self.cols
    }

    /// The nibble tables of a coefficient that is its bit matrix's, or of 0: the GFNI
    /// kernels read the matrices only.
    #[inline(always)]
    fn table(&self, c: usize, r: usize) -> *const [u8; 32] {
        let m = self.affine[c * self.rows + r];
        let d = derived();
        let k = gf::affine_apply(m, 1) as usize;
        if d.affine[k] == m {
            &d.nibbles[k]
        } else {
            &d.nibbles[0]
        }
    }

    #[inline(always)]
    fn masks(&self, c: usize) -> (u32, u32) {
        (self.nonzero[c], self.ones[c])
    }
}

#[cfg(target_arch = "x86_64")]
impl<const ACC: bool> crate::kernels::Affine for Affines<ACC> {
    #[inline(always)]
    unsafe fn affine(&self, c: usize, r: usize) -> u64 {
        // SAFETY: c < cols and r < rows (the caller's contract), and rows * cols <=
        // AFFINE_MAX.
        unsafe { *self.affine.get_unchecked(c * self.rows + r) }
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
