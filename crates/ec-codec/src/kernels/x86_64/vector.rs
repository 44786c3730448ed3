//! The one multiply-accumulate loop of every x86-64 kernel, generic over a [`Register`]
//! type and a [`Multiplier`] (how a source is multiplied by a coefficient). Each kernel is a
//! `#[target_feature]` shim that picks its vector type; everything here is
//! `#[inline(always)]`, so the loop and the intrinsics are compiled inside the shim with
//! its features.

use super::PREFETCH_AHEAD;
use crate::kernels::{ColKind, Tables};
use std::arch::x86_64::*;

/// A SIMD register of bytes.
pub(crate) trait Register: Copy {
    /// Bytes per register.
    const BYTES: usize;
    /// All zero.
    ///
    /// # Safety
    /// The CPU supports the register's features (as for every method).
    unsafe fn zero() -> Self;
    /// Loads `BYTES` bytes, unaligned.
    ///
    /// # Safety
    /// `p` is readable for `BYTES` bytes.
    unsafe fn load(p: *const u8) -> Self;
    /// Stores `BYTES` bytes, with a non-temporal store when `nt`.
    ///
    /// # Safety
    /// `p` is writable for `BYTES` bytes, and aligned to `BYTES` when `nt`.
    unsafe fn store(self, p: *mut u8, nt: bool);
    /// Bytewise XOR.
    ///
    /// # Safety
    /// As for [`zero`](Register::zero).
    unsafe fn xor(self, other: Self) -> Self;
    /// `self ^ a ^ b`.
    ///
    /// # Safety
    /// As for [`zero`](Register::zero).
    #[inline(always)]
    unsafe fn xor3(self, a: Self, b: Self) -> Self {
        // SAFETY: forwarded contract.
        unsafe { self.xor(a).xor(b) }
    }
}

/// How a kernel multiplies registers by the coefficients of a matrix view `P`.
pub(crate) trait Multiplier<P: ?Sized> {
    /// The register type.
    type R: Register;
    /// Passes of up to this many outputs hold two registers of each output per step
    /// (every loaded coefficient then serves two registers); larger passes hold one.
    const TWO_REGISTERS_UP_TO: usize;
    /// Whether each step prefetches every source [`PREFETCH_AHEAD`] bytes ahead even
    /// where the blocks come from cache. The nibble kernels gain from it where the blocks
    /// come from L2; the GFNI kernels, which take two registers per output, measured as
    /// fast or faster without it, and faster where the blocks come from L3 (prefetches
    /// then compete with the hardware's own streams). From memory every kernel
    /// prefetches (see `prefetch_step`).
    const PREFETCH: bool;
    /// How far ahead each source is prefetched where a job streams its outputs (its
    /// blocks come from memory). The nibble kernels, which spend longer on each byte,
    /// need the data further ahead to keep enough misses in flight: 1 KiB (AVX2, 10+4
    /// with 16 MiB blocks: 14 GB/s at 128 bytes, 19-21 GB/s at 1-2 KiB, 17-18 at 4
    /// KiB); the GFNI kernels measured best at [`PREFETCH_AHEAD`] (0.71-0.75x of the
    /// traffic floor at 1 KiB against 1.00x).
    const STREAM_AHEAD: usize;
    /// Whether a product costs about what an addition does (one instruction), so that
    /// columns of 0s and 1s gain nothing from a path of their own: the kernel then
    /// multiplies them like any other column unless the column is all 0s.
    const CHEAP_PRODUCT: bool;
    /// Whether dense passes take two columns at a time, adding both products to an
    /// output in one three-way XOR (`VPTERNLOGQ`): a gain where the product is one
    /// instruction and three-way XOR is one too; the nibble kernels, whose sources take
    /// two registers each, lose registers to it.
    const PAIR_COLUMNS: bool;
    /// Whether dense multiplications without seeds or accumulation run source by source
    /// ([`source_major`]): each tile of one source multiplied into running sums held in
    /// L1, with the source's coefficients kept in registers. A gain for the nibble
    /// kernels, whose coefficients take two registers and were loaded at every step, and
    /// whose steps, reading every source at one offset, crowd blocks that start at the
    /// same offset in their pages into one L1 set; the GFNI kernels, whose product is one
    /// instruction, would spend more on the sums' loads and stores than they save.
    /// Measured with AVX2 on an AMD Zen 4 against the kernel's steps over every source:
    /// 10+4 on 16 KiB blocks 1.18x, on 1 MiB 1.1x; 128+32 on 1 MiB (where every group
    /// of outputs read staged copies of the sources) 1.3x; the AVX-512 nibble kernel
    /// 1.19x and 1.43x on the 1 MiB shapes.
    const SOURCE_MAJOR: bool;
    /// A coefficient made ready to multiply by (nibble tables, or a bit matrix).
    type Coef: Copy;
    /// A source register made ready to be multiplied (its nibbles, or itself).
    type Split: Copy;
    /// Constants the kernel keeps in registers for a whole call (the nibble mask).
    type Consts: Copy;
    /// The constants.
    ///
    /// # Safety
    /// The CPU supports the kernel's features (as for every method).
    unsafe fn consts() -> Self::Consts;
    /// Prepares a source register for its multiplications.
    ///
    /// # Safety
    /// As for [`consts`](Multiplier::consts).
    unsafe fn split(x: Self::R, k: Self::Consts) -> Self::Split;
    /// Coefficient (`c`, `r`) of `p`.
    ///
    /// # Safety
    /// As for [`consts`](Multiplier::consts); `c < p.cols()` and `r < p.rows()`.
    unsafe fn coef(p: &P, c: usize, r: usize) -> Self::Coef;
    /// The product of a prepared source and a coefficient.
    ///
    /// # Safety
    /// As for [`consts`](Multiplier::consts).
    unsafe fn mul(s: Self::Split, k: Self::Coef) -> Self::R;
}

/// Outputs `r0 .. r0 + N` over `[off, off + len)`: each step holds `S` registers of
/// every output, reads every source once, and adds its products (or, for a column of
/// 0s and 1s, the source itself) to the outputs. `DENSE`: no column is all 0s and 1s
/// (no per-column check). `ONE_FIRST`: output `r0` has coefficient 1 in every column,
/// so the sources are added to it unmultiplied (the first parity row of a Vandermonde
/// code). With `P::ACCUMULATE` the outputs' bytes are added to; with `P::SEEDED` each
/// output is its seed's bytes plus the products; else the products alone.
///
/// # Safety
/// The CPU supports `M`'s features; inputs readable and outputs writable over the range;
/// `len` a multiple of `S * M::R::BYTES`; `r0 + N <= outs.len()`; outputs 64-byte aligned
/// when `nt`.
#[inline(always)]
#[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
pub(crate) unsafe fn multiply<
    P,
    M,
    const N: usize,
    const S: usize,
    const DENSE: bool,
    const ONE_FIRST: bool,
>(
    p: &P,
    ins: &[*const u8],
    outs: &[*mut u8],
    r0: usize,
    off: usize,
    len: usize,
    nt: bool,
) where
    P: Tables,
    M: Multiplier<P>,
{
    // SAFETY: the CPU supports M's features (the caller's contract).
    let consts = unsafe { M::consts() };
    let mut pos = off;
    let end = off + len;
    while pos < end {
        // acc[k][j]: output r0 + k, register j of the step. Indexed loops over the
        // constant bounds keep every value in registers.
        // SAFETY: the CPU supports M's features (the caller's contract, as for every call
        // below).
        let mut acc = [[unsafe { M::R::zero() }; S]; N];
        if P::ACCUMULATE {
            for k in 0..N {
                for j in 0..S {
                    // SAFETY: the output is readable and writable over the range.
                    acc[k][j] = unsafe { M::R::load(outs[r0 + k].add(pos + M::R::BYTES * j)) };
                }
            }
        } else if P::SEEDED {
            for k in 0..N {
                for j in 0..S {
                    // SAFETY: the seeds are readable over the outputs' range (`Tables`).
                    acc[k][j] = unsafe { M::R::load(p.seed(r0 + k).add(pos + M::R::BYTES * j)) };
                }
            }
        }
        let mut first = 0;
        if DENSE && M::PAIR_COLUMNS {
            // Two columns at a time: each output takes both products in one three-way
            // addition.
            while first + 2 <= ins.len() {
                let (c, s0, s1) = (first, ins[first], ins[first + 1]);
                // SAFETY: pos + S * BYTES <= end and the inputs are readable over the range.
                let (x0, x1) =
                    unsafe { (load_step::<P, M, S>(s0, pos), load_step::<P, M, S>(s1, pos)) };
                if ONE_FIRST {
                    for j in 0..S {
                        // SAFETY: as above.
                        acc[0][j] = unsafe { acc[0][j].xor3(x0[j], x1[j]) };
                    }
                }
                // SAFETY: as above.
                unsafe {
                    prefetch_step::<P, M, S>(s0, pos, nt);
                    prefetch_step::<P, M, S>(s1, pos, nt);
                }
                // SAFETY: as above.
                let (t0, t1) = unsafe {
                    (
                        split_step::<P, M, S>(&x0, consts),
                        split_step::<P, M, S>(&x1, consts),
                    )
                };
                for k in 0..N {
                    if ONE_FIRST && k == 0 {
                        continue;
                    }
                    // SAFETY: c + 1 < cols and r0 + k < rows.
                    let (a, b) = unsafe { (M::coef(p, c, r0 + k), M::coef(p, c + 1, r0 + k)) };
                    for j in 0..S {
                        // SAFETY: as above.
                        acc[k][j] = unsafe { acc[k][j].xor3(M::mul(t0[j], a), M::mul(t1[j], b)) };
                    }
                }
                first += 2;
            }
        }
        for (c, &src) in ins.iter().enumerate().skip(first) {
            let kind = if DENSE {
                ColKind::Mul
            } else {
                p.col_kind(c, r0, N)
            };
            if kind == ColKind::Zero {
                continue;
            }
            // SAFETY: pos + S * BYTES <= end and the input is readable over the range.
            let x = unsafe { load_step::<P, M, S>(src, pos) };
            if let ColKind::Xor(bits) = kind {
                for k in 0..N {
                    if bits >> k & 1 != 0 {
                        for j in 0..S {
                            // SAFETY: as above.
                            acc[k][j] = unsafe { acc[k][j].xor(x[j]) };
                        }
                    }
                }
                continue;
            }
            if ONE_FIRST {
                for j in 0..S {
                    // SAFETY: as above.
                    acc[0][j] = unsafe { acc[0][j].xor(x[j]) };
                }
            }
            // SAFETY: as above.
            unsafe { prefetch_step::<P, M, S>(src, pos, nt) };
            // SAFETY: as above.
            let s = unsafe { split_step::<P, M, S>(&x, consts) };
            for k in 0..N {
                if ONE_FIRST && k == 0 {
                    continue;
                }
                // SAFETY: c < cols and r0 + k < rows.
                let t = unsafe { M::coef(p, c, r0 + k) };
                for j in 0..S {
                    // SAFETY: as above.
                    acc[k][j] = unsafe { acc[k][j].xor(M::mul(s[j], t)) };
                }
            }
        }
        for k in 0..N {
            for j in 0..S {
                // SAFETY: the output is writable over the range, and aligned when nt.
                unsafe { acc[k][j].store(outs[r0 + k].add(pos + M::R::BYTES * j), nt) };
            }
        }
        pos += M::R::BYTES * S;
    }
}

/// Bytes of stack for the running sums of [`source_major`]: one tile of every output.
pub(crate) const SUM_BYTES: usize = 16 << 10;

/// Longest tile of [`source_major`]. Measured with AVX2 on 10+4 (blocks from L1, L2 and
/// memory): tiles of 1 KiB ran as fast as 2 KiB and 4 KiB in L1 and faster from memory.
pub(crate) const SOURCE_TILE: usize = 1 << 10;

#[repr(C, align(64))]
struct Sums([std::mem::MaybeUninit<u8>; SUM_BYTES]);

/// Every output over `[off, off + len)`, source by source: the range is walked in tiles
/// of at most [`SOURCE_TILE`] bytes (fewer where many outputs share the sums' stack);
/// within a tile each source in turn is multiplied by its coefficients (held in
/// registers for the whole tile) and added to the outputs' running sums, which stay in
/// L1; the first source sets the sums and the last one's results go to the outputs, so
/// each output byte is written once. Outputs are taken four at a time, so a source's
/// tile is read from memory once and from L1 by the other groups. While a source is
/// multiplied the next-but-one source's tile is prefetched (the tile after, for the
/// last sources), so memory is read ahead in the order the loop will want it.
/// Coefficients 0 and 1 are multiplied like any other.
///
/// # Safety
/// The CPU supports `M`'s features; inputs readable and outputs writable over the range;
/// no output overlaps an input or another output; `len` a multiple of 64; at most
/// [`MAX_ROWS`](crate::kernels::MAX_ROWS) outputs; outputs 64-byte aligned at `off` when
/// `nt`.
#[inline(always)]
pub(crate) unsafe fn source_major<P: Tables, M: Multiplier<P>>(
    p: &P,
    ins: &[*const u8],
    outs: &[*mut u8],
    off: usize,
    len: usize,
    nt: bool,
) {
    let (rows, cols) = (outs.len(), ins.len());
    let tile = (SUM_BYTES / rows / 64 * 64).min(SOURCE_TILE);
    let mut stack = std::mem::MaybeUninit::<Sums>::uninit();
    let sums = stack.as_mut_ptr().cast::<u8>();
    let end = off + len;
    let mut t = off;
    while t < end {
        let tl = tile.min(end - t);
        for (c, &src) in ins.iter().enumerate() {
            let ahead = c + 2;
            let pf = ins[ahead % cols].wrapping_add(t + ahead / cols * tl);
            let mut r0 = 0;
            while r0 < rows {
                let n = (rows - r0).min(4);
                let a = Pass {
                    c,
                    r0,
                    // SAFETY: t < end, inside the block.
                    src: unsafe { src.add(t) },
                    pf: if r0 == 0 { Some(pf) } else { None },
                    // SAFETY: (r0 + n) * tl <= rows * tile <= SUM_BYTES.
                    sums: unsafe { sums.add(r0 * tl) },
                    tl,
                    outs,
                    at: t,
                    nt,
                };
                let (first, last) = (c == 0, c + 1 == cols);
                // SAFETY: forwarded contract; the sums of rows r0..r0 + n over the tile
                // were set by the first source before any later one reads them.
                unsafe {
                    match (n, first, last) {
                        (1, f, l) => source_pass_as::<P, M, 1>(p, &a, f, l),
                        (2, f, l) => source_pass_as::<P, M, 2>(p, &a, f, l),
                        (3, f, l) => source_pass_as::<P, M, 3>(p, &a, f, l),
                        (_, f, l) => source_pass_as::<P, M, 4>(p, &a, f, l),
                    }
                }
                r0 += n;
            }
        }
        t += tl;
    }
}

/// One source's tile multiplied into the sums of outputs `r0 .. r0 + N`.
struct Pass<'a> {
    /// The source's column.
    c: usize,
    r0: usize,
    /// The source at the tile.
    src: *const u8,
    /// A line to prefetch per line multiplied, at the same distance (first group only).
    pf: Option<*const u8>,
    /// Output r0's sums; output r0 + k's at `k * tl` past it.
    sums: *mut u8,
    tl: usize,
    outs: &'a [*mut u8],
    /// The tile's offset in the outputs.
    at: usize,
    nt: bool,
}

/// [`source_pass`] with `first` and `last` made constants.
///
/// # Safety
/// As for [`source_pass`].
#[inline(always)]
unsafe fn source_pass_as<P: Tables, M: Multiplier<P>, const N: usize>(
    p: &P,
    a: &Pass<'_>,
    first: bool,
    last: bool,
) {
    // SAFETY: forwarded contract.
    unsafe {
        match (first, last) {
            (true, true) => source_pass::<P, M, N, true, true>(p, a),
            (true, false) => source_pass::<P, M, N, true, false>(p, a),
            (false, true) => source_pass::<P, M, N, false, true>(p, a),
            (false, false) => source_pass::<P, M, N, false, false>(p, a),
        }
    }
}

/// One source's tile times its coefficients for outputs `r0 .. r0 + N`: `FIRST` sets the
/// sums (else adds to them), `LAST` writes sums plus products to the outputs (else to the
/// sums).
///
/// # Safety
/// The CPU supports `M`'s features; the source readable over the tile; the sums
/// writable over `N` tiles, and readable with their bytes set unless `FIRST`; the
/// outputs writable over the tile at `at`, 64-byte aligned there when `nt`; `tl` a
/// multiple of 64.
#[inline(always)]
unsafe fn source_pass<
    P: Tables,
    M: Multiplier<P>,
    const N: usize,
    const FIRST: bool,
    const LAST: bool,
>(
    p: &P,
    a: &Pass<'_>,
) {
    // SAFETY: the CPU supports M's features; c < cols and r0 + k < rows.
    let (consts, coefs) = unsafe {
        (
            M::consts(),
            std::array::from_fn::<M::Coef, N, _>(|k| M::coef(p, a.c, a.r0 + k)),
        )
    };
    let mut outs = [std::ptr::null_mut::<u8>(); N];
    for (k, o) in outs.iter_mut().enumerate() {
        // SAFETY: the tile lies inside every output.
        *o = unsafe { a.outs[a.r0 + k].add(a.at) };
    }
    let regs = 64 / M::R::BYTES;
    let mut i = 0;
    while i < a.tl {
        if let Some(pf) = a.pf {
            // SAFETY: SSE is part of x86-64; a prefetch never faults.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(pf.wrapping_add(i).cast()) };
        }
        for j in 0..regs {
            let at = i + j * M::R::BYTES;
            // SAFETY: at + BYTES <= tl: the source, sums and outputs are valid there
            // (the contract).
            unsafe {
                let s = M::split(M::R::load(a.src.add(at)), consts);
                for k in 0..N {
                    let mut v = M::mul(s, coefs[k]);
                    let sum = a.sums.add(k * a.tl + at);
                    if !FIRST {
                        v = v.xor(M::R::load(sum));
                    }
                    if LAST {
                        v.store(outs[k].add(at), a.nt);
                    } else {
                        v.store(sum, false);
                    }
                }
            }
        }
        i += 64;
    }
}

/// One step's `S` registers of a source at `pos`.
///
/// # Safety
/// The CPU supports `M`'s features; `src` readable over `[pos, pos + S * BYTES)`.
#[inline(always)]
unsafe fn load_step<P, M: Multiplier<P>, const S: usize>(src: *const u8, pos: usize) -> [M::R; S] {
    // SAFETY: forwarded contract.
    unsafe { std::array::from_fn(|j| M::R::load(src.add(pos + M::R::BYTES * j))) }
}

/// One step's registers of a source made ready to multiply.
///
/// # Safety
/// The CPU supports `M`'s features.
#[inline(always)]
unsafe fn split_step<P, M: Multiplier<P>, const S: usize>(
    x: &[M::R; S],
    consts: M::Consts,
) -> [M::Split; S] {
    // SAFETY: forwarded contract.
    unsafe { std::array::from_fn(|j| M::split(x[j], consts)) }
}

/// Prefetches the lines of a source [`PREFETCH_AHEAD`] bytes past one step at `pos`,
/// for the multipliers that ask for it (`M::PREFETCH`), and for every multiplier when
/// the job streams its outputs (`nt`: its blocks outgrow the last-level cache and come
/// from memory). There the GFNI kernels too gain from it: 10+4 with 16 MiB blocks
/// encodes at 1.00-1.08x of the traffic floor with it, 0.84-0.99x without.
///
/// # Safety
/// None beyond the CPU's: SSE is part of x86-64, and a prefetch never faults, so an
/// address past the block is harmless.
#[inline(always)]
unsafe fn prefetch_step<P, M: Multiplier<P>, const S: usize>(src: *const u8, pos: usize, nt: bool) {
    if !M::PREFETCH && !nt {
        return;
    }
    let ahead = if nt { M::STREAM_AHEAD } else { PREFETCH_AHEAD };
    for line in (0..S * M::R::BYTES).step_by(64) {
        // SAFETY: see above.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(pos + line + ahead).cast()) };
    }
}

impl Register for __m256i {
    const BYTES: usize = 32;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the CPU supports AVX (the trait's contract).
        unsafe { _mm256_setzero_si256() }
    }

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: readable for 32 bytes (the trait's contract).
        unsafe { _mm256_loadu_si256(p.cast()) }
    }

    #[inline(always)]
    unsafe fn store(self, p: *mut u8, nt: bool) {
        if nt {
            // SAFETY: writable and 32-byte aligned (the trait's contract).
            unsafe { _mm256_stream_si256(p.cast(), self) }
        } else {
            // SAFETY: writable for 32 bytes.
            unsafe { _mm256_storeu_si256(p.cast(), self) }
        }
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: the CPU supports AVX2 (the trait's contract).
        unsafe { _mm256_xor_si256(self, other) }
    }
}

impl Register for __m512i {
    const BYTES: usize = 64;

    #[inline(always)]
    unsafe fn zero() -> Self {
        // SAFETY: the CPU supports AVX-512F (the trait's contract).
        unsafe { _mm512_setzero_si512() }
    }

    #[inline(always)]
    unsafe fn load(p: *const u8) -> Self {
        // SAFETY: readable for 64 bytes (the trait's contract).
        unsafe { _mm512_loadu_si512(p.cast()) }
    }

    #[inline(always)]
    unsafe fn store(self, p: *mut u8, nt: bool) {
        if nt {
            // SAFETY: writable and 64-byte aligned (the trait's contract).
            unsafe { _mm512_stream_si512(p.cast(), self) }
        } else {
            // SAFETY: writable for 64 bytes.
            unsafe { _mm512_storeu_si512(p.cast(), self) }
        }
    }

    #[inline(always)]
    unsafe fn xor(self, other: Self) -> Self {
        // SAFETY: the CPU supports AVX-512F (the trait's contract).
        unsafe { _mm512_xor_si512(self, other) }
    }

    #[inline(always)]
    unsafe fn xor3(self, a: Self, b: Self) -> Self {
        // SAFETY: the CPU supports AVX-512F (the trait's contract); 0x96 is a ^ b ^ c.
        unsafe { _mm512_ternarylogic_epi64::<0x96>(self, a, b) }
    }
}
