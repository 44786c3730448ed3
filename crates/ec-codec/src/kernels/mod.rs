//! Kernels and the prepared matrices they run: `out[r] = sum over c of coef(r, c) * in[c]`
//! over GF(2^8), for every byte position.

pub(crate) mod scalar;
#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

use crate::dispatch::{self, Isa};
use crate::error::{CodecError, Result};

/// Most outputs of one multiplication (K, or missing blocks).
pub const MAX_ROWS: usize = 32;
/// Most inputs of one multiplication (an update of all 128 data blocks: 2 * 128 + 32).
pub const MAX_COLS: usize = 2 * crate::matrix::MAX_DATA + crate::matrix::MAX_RDNC;
/// Smallest block.
pub const MIN_BLOCK: usize = 64;
/// Largest block (128 MiB).
pub const MAX_BLOCK: usize = 128 << 20;

/// A coefficient matrix prepared for the kernels: rows x cols coefficients plus, per
/// coefficient, its nibble tables (shuffle kernels) and affine bit matrix (GFNI).
#[derive(Debug, Clone)]
pub struct GfMatrix {
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    /// Row-major.
    coefs: Vec<u8>,
    /// Column-major: `[c * rows + r]`.
    #[cfg(target_arch = "x86_64")]
    pub(crate) tables: Vec<[u8; 32]>,
    /// Column-major: `[c * rows + r]`.
    #[cfg(target_arch = "x86_64")]
    pub(crate) affine: Vec<u64>,
    /// Per column: bit r set when coef(r, c) != 0.
    #[cfg(target_arch = "x86_64")]
    pub(crate) nonzero: Vec<u32>,
    /// Per column: bit r set when coef(r, c) == 1.
    #[cfg(target_arch = "x86_64")]
    pub(crate) ones: Vec<u32>,
    isa: Isa,
}

/// How column `c` contributes to outputs `r0..r0 + n`: skipped (all coefficients 0),
/// added (every nonzero coefficient is 1) or multiplied.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum ColKind {
    Zero,
    /// Bit k set: output r0 + k gets the source XORed in.
    Xor(u32),
    Mul,
}

/// What the shuffle kernels read of a matrix: its shape, the 32-byte nibble tables of
/// each coefficient (products of the low nibbles, then of the high nibbles) and how each
/// column contributes. Prepared matrices and borrowed ISA-L-layout tables
/// ([`crate::tables`]) both provide it, so one kernel serves both.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Tables {
    /// Whether outputs are XORed into (`out ^= product`) rather than overwritten.
    const ACCUMULATE: bool;
    /// Whether each output starts from its seed ([`seed`](Tables::seed)) rather than
    /// from zero (and is then overwritten): a sum begun by an earlier pass elsewhere.
    const SEEDED: bool = false;
    /// Where output `r`'s seed lies, at the same offsets as the outputs (only read when
    /// [`SEEDED`](Tables::SEEDED)).
    fn seed(&self, _r: usize) -> *const u8 {
        std::ptr::null()
    }
    /// Output count.
    fn rows(&self) -> usize;
    /// Input count.
    fn cols(&self) -> usize;
    /// The tables of coef(r, c), valid for 32 bytes when `r < rows` and `c < cols`.
    fn table(&self, c: usize, r: usize) -> *const [u8; 32];
    /// Column `c`'s bitmaps: bit r of the first set when coef(r, c) is not 0, of the
    /// second when it is 1.
    fn masks(&self, c: usize) -> (u32, u32);
    /// How column `c` contributes to outputs `r0..r0 + n`.
    #[inline(always)]
    fn col_kind(&self, c: usize, r0: usize, n: usize) -> ColKind {
        let (nonzero, ones) = self.masks(c);
        col_kind_of(nonzero, ones, r0, n)
    }
    /// Whether every coefficient of outputs `r0..r0 + n` is a general one (not 0 or 1),
    /// so the kernels can skip per-column checks.
    fn all_mul(&self, r0: usize, n: usize) -> bool {
        (0..self.cols()).all(|c| self.col_kind(c, r0, n) == ColKind::Mul)
    }
    /// Whether every column has a nonzero coefficient among outputs `r0..r0 + n`.
    fn no_zero_col(&self, r0: usize, n: usize) -> bool {
        (0..self.cols()).all(|c| self.col_kind(c, r0, n) != ColKind::Zero)
    }
    /// Outputs among `r0..r0 + n` whose coefficient is 1 in every column (bit k for
    /// output `r0 + k`): the kernels add the sources to them without multiplying, as
    /// for the first parity row of a Vandermonde code.
    fn one_rows(&self, r0: usize, n: usize) -> u32 {
        let m = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
        (0..self.cols()).fold(m, |acc, c| acc & (self.masks(c).1 >> r0))
    }
}

/// A matrix the GFNI kernels can run: each coefficient's 8x8 bit matrix.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Affine: Tables {
    /// The bit matrix of coef(r, c).
    ///
    /// # Safety
    /// `c < cols` and `r < rows`.
    unsafe fn affine(&self, c: usize, r: usize) -> u64;
}

/// Column kind from the column's bitmaps of nonzero and one coefficients.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(crate) fn col_kind_of(nonzero: u32, ones: u32, r0: usize, n: usize) -> ColKind {
    let m = if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    let nz = (nonzero >> r0) & m;
    if nz == 0 {
        ColKind::Zero
    } else if (ones >> r0) & m == nz {
        ColKind::Xor(nz)
    } else {
        ColKind::Mul
    }
}

#[cfg(target_arch = "x86_64")]
impl Tables for GfMatrix {
    const ACCUMULATE: bool = false;

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
        self.tables.as_ptr().wrapping_add(c * self.rows + r)
    }

    #[inline(always)]
    fn masks(&self, c: usize) -> (u32, u32) {
        (self.nonzero[c], self.ones[c])
    }
}

#[cfg(target_arch = "x86_64")]
impl Affine for GfMatrix {
    #[inline(always)]
    unsafe fn affine(&self, c: usize, r: usize) -> u64 {
        // SAFETY: c < cols and r < rows (the caller's contract); the matrices are
        // rows * cols long.
        unsafe { *self.affine.get_unchecked(c * self.rows + r) }
    }
}

struct SendPtrs<'a>(&'a [*const u8], &'a [*mut u8]);
// SAFETY: the pointers are only used by the pool's helpers on disjoint byte ranges of
// the outputs (and shared reads of the inputs) during the call that lends them.
unsafe impl Send for SendPtrs<'_> {}
// SAFETY: as above.
unsafe impl Sync for SendPtrs<'_> {}

impl GfMatrix {
    /// Prepares a rows x cols matrix (row-major coefficients) for the kernel chosen at
    /// start-up (see [`crate::dispatch`]).
    pub fn new(rows: usize, cols: usize, coefs: &[u8]) -> Result<GfMatrix> {
        if rows == 0 || rows > MAX_ROWS {
            return Err(CodecError::Limit {
                what: "output block count",
                value: rows,
                allowed: "1..=32",
            });
        }
        if cols == 0 || cols > MAX_COLS {
            return Err(CodecError::Limit {
                what: "input block count",
                value: cols,
                allowed: "1..=288",
            });
        }
        if coefs.len() != rows * cols {
            return Err(CodecError::Invalid(format!(
                "a {rows} x {cols} matrix needs {} coefficients, got {}",
                rows * cols,
                coefs.len()
            )));
        }
        // Read the cache size now, so that running the matrix never allocates.
        let _ = dispatch::llc_bytes();
        #[cfg(target_arch = "x86_64")]
        {
            let mut tables = vec![[0u8; 32]; rows * cols];
            let mut affine = vec![0u64; rows * cols];
            let mut nonzero = vec![0u32; cols];
            let mut ones = vec![0u32; cols];
            for c in 0..cols {
                for r in 0..rows {
                    let v = coefs[r * cols + c];
                    tables[c * rows + r] = crate::gf::nibble_tables(v);
                    affine[c * rows + r] = crate::gf::affine_matrix(v);
                    nonzero[c] |= ((v != 0) as u32) << r;
                    ones[c] |= ((v == 1) as u32) << r;
                }
            }
            Ok(GfMatrix {
                rows,
                cols,
                coefs: coefs.to_vec(),
                tables,
                affine,
                nonzero,
                ones,
                isa: dispatch::selected(),
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        Ok(GfMatrix {
            rows,
            cols,
            coefs: coefs.to_vec(),
            isa: dispatch::selected(),
        })
    }

    /// The same matrix, run by `isa` (`None` when this CPU cannot run it).
    pub fn with_isa(mut self, isa: Isa) -> Option<GfMatrix> {
        if !isa.is_supported() {
            return None;
        }
        self.isa = isa;
        Some(self)
    }

    /// The kernel that runs this matrix.
    pub fn isa(&self) -> Isa {
        self.isa
    }

    /// Output count.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Input count.
    pub fn cols(&self) -> usize {
        self.cols
    }

    /// coef(r, c).
    pub fn coef(&self, r: usize, c: usize) -> u8 {
        self.coefs[r * self.cols + c]
    }

    /// Checks shapes and overlaps; returns the block length.
    fn check(&self, inputs: &[&[u8]], outputs: &[&mut [u8]]) -> Result<usize> {
        if inputs.len() != self.cols {
            return Err(CodecError::Invalid(format!(
                "expected {} input blocks, got {}",
                self.cols,
                inputs.len()
            )));
        }
        if outputs.len() != self.rows {
            return Err(CodecError::Invalid(format!(
                "expected {} output blocks, got {}",
                self.rows,
                outputs.len()
            )));
        }
        let len = inputs[0].len();
        check_block_len(len)?;
        if let Some(b) = inputs
            .iter()
            .map(|b| b.len())
            .chain(outputs.iter().map(|b| b.len()))
            .find(|&l| l != len)
        {
            return Err(CodecError::Invalid(format!(
                "all blocks must have the same size: found {len} and {b} bytes"
            )));
        }
        // Outputs are &mut, so they cannot overlap each other or the inputs in safe
        // Rust; raw callers are checked by `run_raw`'s contract.
        Ok(len)
    }

    /// `out[r] = sum over c of coef(r, c) * in[c]`. All blocks have the same size, a
    /// multiple of 64 between 64 B and 128 MiB. Allocates nothing; the SIMD kernels use
    /// up to 64 KiB of the calling thread's stack to stage sources when the outputs
    /// take several register groups.
    pub fn apply(&self, inputs: &[&[u8]], outputs: &mut [&mut [u8]]) -> Result<()> {
        self.apply_par(inputs, outputs, 1)
    }

    /// Like [`apply`](GfMatrix::apply), splitting the block length across `threads`
    /// scoped threads when the job is large enough to gain from it.
    pub fn apply_par(
        &self,
        inputs: &[&[u8]],
        outputs: &mut [&mut [u8]],
        threads: usize,
    ) -> Result<()> {
        let len = self.check(inputs, outputs)?;
        let mut ip = [std::ptr::null::<u8>(); MAX_COLS];
        let mut op = [std::ptr::null_mut::<u8>(); MAX_ROWS];
        for (d, s) in ip.iter_mut().zip(inputs) {
            *d = s.as_ptr();
        }
        for (d, s) in op.iter_mut().zip(outputs.iter_mut()) {
            *d = s.as_mut_ptr();
        }
        // SAFETY: the slices guarantee readability/writability over [0, len); &mut outputs
        // cannot alias each other or the shared inputs.
        unsafe { self.run_raw(&ip[..self.cols], &op[..self.rows], len, threads) };
        Ok(())
    }

    /// `src` holds the `cols` input blocks back to back; `dst` receives the `rows`
    /// output blocks back to back. The block size is `src.len() / cols`.
    pub fn apply_contiguous(&self, src: &[u8], dst: &mut [u8], threads: usize) -> Result<()> {
        if !src.len().is_multiple_of(self.cols) {
            return Err(CodecError::Invalid(format!(
                "source length {} is not a multiple of the {} input blocks",
                src.len(),
                self.cols
            )));
        }
        let len = src.len() / self.cols;
        check_block_len(len)?;
        if dst.len() != len * self.rows {
            return Err(CodecError::Invalid(format!(
                "destination must hold {} blocks of {len} bytes ({} bytes), got {}",
                self.rows,
                len * self.rows,
                dst.len()
            )));
        }
        let mut ip = [std::ptr::null::<u8>(); MAX_COLS];
        let mut op = [std::ptr::null_mut::<u8>(); MAX_ROWS];
        for (c, d) in ip.iter_mut().take(self.cols).enumerate() {
            *d = src[c * len..].as_ptr();
        }
        for (r, d) in op.iter_mut().take(self.rows).enumerate() {
            *d = dst[r * len..].as_mut_ptr();
        }
        // SAFETY: src and dst are distinct borrows covering every block.
        unsafe { self.run_raw(&ip[..self.cols], &op[..self.rows], len, threads) };
        Ok(())
    }

    /// Runs on raw blocks.
    ///
    /// # Safety
    /// `ins` (cols pointers) readable and `outs` (rows pointers) writable for `len`
    /// bytes; outputs overlap neither each other nor the inputs; `len` a multiple of 64.
    pub unsafe fn run_raw(&self, ins: &[*const u8], outs: &[*mut u8], len: usize, threads: usize) {
        let threads = threads.clamp(1, 64);
        // Non-temporal stores only when the whole job's working set exceeds the LLC.
        let stream = dispatch::use_streaming((self.rows + self.cols) * len);
        let per = (len / threads).next_multiple_of(64);
        if threads == 1 || per < PAR_MIN_CHUNK || len * (self.rows + self.cols) < PAR_MIN_BYTES {
            // SAFETY: forwarded.
            unsafe { self.run_range(ins, outs, 0, len, stream) };
            return;
        }
        let ptrs = SendPtrs(ins, outs);
        let pieces = len.div_ceil(per);
        // Piece i covers [i * per, min((i + 1) * per, len)): disjoint output ranges.
        crate::pool::run(threads, pieces, &|i| {
            let off = i * per;
            let n = per.min(len - off);
            let p = &ptrs;
            // SAFETY: forwarded contract; pieces write disjoint ranges of the outputs.
            unsafe { self.run_range(p.0, p.1, off, n, stream) };
        });
    }

    /// # Safety
    /// As for `run_raw`, over `[off, off + len)`.
    unsafe fn run_range(
        &self,
        ins: &[*const u8],
        outs: &[*mut u8],
        off: usize,
        len: usize,
        stream: bool,
    ) {
        #[cfg(not(target_arch = "x86_64"))]
        let _ = stream;
        match self.isa {
            // SAFETY: forwarded contract.
            Isa::Scalar => unsafe { scalar::run(self, ins, outs, off, len) },
            // SAFETY: forwarded contract.
            Isa::Portable => unsafe { scalar::run_words(self, ins, outs, off, len) },
            // SAFETY: forwarded contract; `with_isa`/`dispatch` checked the CPU features.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx2 => unsafe { x86_64::avx2::run(self, ins, outs, off, len, stream, true) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Isa::Avx512 => unsafe { x86_64::avx512::run(self, ins, outs, off, len, stream, true) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Isa::Gfni256 => unsafe {
                x86_64::gfni::v256::run(self, ins, outs, off, len, stream, true)
            },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Isa::Gfni512 => unsafe {
                x86_64::gfni::v512::run(self, ins, outs, off, len, stream, true)
            },
            // SAFETY: forwarded contract.
            #[cfg(not(target_arch = "x86_64"))]
            _ => unsafe { scalar::run_words(self, ins, outs, off, len) },
        }
    }
}

/// Smallest per-thread share worth a thread.
const PAR_MIN_CHUNK: usize = 64 << 10;
/// Smallest job (bytes read + written) worth splitting.
const PAR_MIN_BYTES: usize = 4 << 20;

/// Checks a block size against the limits.
pub fn check_block_len(len: usize) -> Result<()> {
    if !(MIN_BLOCK..=MAX_BLOCK).contains(&len) {
        return Err(CodecError::Limit {
            what: "block size",
            value: len,
            allowed: "between 64 B and 128 MiB",
        });
    }
    if !len.is_multiple_of(64) {
        return Err(CodecError::Limit {
            what: "block size",
            value: len,
            allowed: "a multiple of 64 bytes",
        });
    }
    Ok(())
}
