//! x86-64 SIMD kernels. Each module exposes `run` with the signature of the scalar
//! kernel plus a non-temporal-store flag; callers check CPU support first.

use super::{Affine, MAX_COLS, MAX_ROWS, Tables};
use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
use std::mem::MaybeUninit;

/// Calls `$f::<_, N, $d, $o>` for N = 1..=16 chosen at run time (`$f` instantiates its
/// work only for the N its kernel's groups reach: see `group`).
macro_rules! for_n {
    ($n:expr, $f:ident, $d:expr, $o:expr, $($arg:expr),*) => {
        match $n {
            1 => $f::<_, 1, { $d }, { $o }>($($arg),*),
            2 => $f::<_, 2, { $d }, { $o }>($($arg),*),
            3 => $f::<_, 3, { $d }, { $o }>($($arg),*),
            4 => $f::<_, 4, { $d }, { $o }>($($arg),*),
            5 => $f::<_, 5, { $d }, { $o }>($($arg),*),
            6 => $f::<_, 6, { $d }, { $o }>($($arg),*),
            7 => $f::<_, 7, { $d }, { $o }>($($arg),*),
            8 => $f::<_, 8, { $d }, { $o }>($($arg),*),
            9 => $f::<_, 9, { $d }, { $o }>($($arg),*),
            10 => $f::<_, 10, { $d }, { $o }>($($arg),*),
            11 => $f::<_, 11, { $d }, { $o }>($($arg),*),
            12 => $f::<_, 12, { $d }, { $o }>($($arg),*),
            13 => $f::<_, 13, { $d }, { $o }>($($arg),*),
            14 => $f::<_, 14, { $d }, { $o }>($($arg),*),
            15 => $f::<_, 15, { $d }, { $o }>($($arg),*),
            _ => $f::<_, 16, { $d }, { $o }>($($arg),*),
        }
    };
}

/// The driver shared by every SIMD kernel. Kernels that ask for it
/// ([`Multiplier::SOURCE_MAJOR`](vector::Multiplier::SOURCE_MAJOR)) run dense jobs source
/// by source ([`vector::source_major`]). Otherwise outputs are computed in groups of at
/// most `$g(p)` (a function of the matrix), each held in registers while every source
/// is read once. With one group the kernel streams straight from the sources. With
/// several, every group reads every source again, so the block length is walked in tiles
/// and each tile of every source is first copied into a stack buffer ([`staged`]) that
/// the groups then read: blocks that start at the same offset in their pages would
/// otherwise all land in the same few L1 cache sets and evict each other between groups.
///
/// Each group runs [`vector::multiply`] with the kernel's [`Multiplier`](vector::Multiplier)
/// `$m`, inside functions compiled with the kernel's features `$feat`.
macro_rules! driver {
    ($feat:literal, $m:ty, $g:expr, $max:literal) => {
        /// Runs the kernel over `[off, off + len)`, storing with non-temporal stores
        /// where `stream` and the outputs are 64-byte aligned. With `realign` the bulk
        /// may start where most blocks are aligned ([`aligning_head`]), the first and
        /// last 64 bytes run apart and are written twice with the same bytes: the
        /// caller promises that no output shares a byte with an input and that the
        /// outputs are overwritten (not accumulated into).
        ///
        /// # Safety
        /// The CPU must support the kernel's features; inputs readable and outputs
        /// writable over the range; outputs overlap each other nowhere, and the inputs
        /// nowhere when `realign`; `len` a multiple of 64.
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn run<P: $crate::kernels::Tables>(
            p: &P,
            ins: &[*const u8],
            outs: &[*mut u8],
            off: usize,
            len: usize,
            stream: bool,
            realign: bool,
        ) where
            $m: $crate::kernels::x86_64::vector::Multiplier<P>,
            for<'x> $m: $crate::kernels::x86_64::vector::Multiplier<$crate::kernels::x86_64::Part<'x, P, false, false>>
                + $crate::kernels::x86_64::vector::Multiplier<$crate::kernels::x86_64::Part<'x, P, true, false>>
                + $crate::kernels::x86_64::vector::Multiplier<$crate::kernels::x86_64::Part<'x, P, false, true>>,
        {
            let aligned_at = |at: usize| outs.iter().all(|o| (*o as usize).wrapping_add(at) % 64 == 0);
            // Nibble kernels run dense jobs source by source (`source_major`) where the
            // blocks come from cache, or where the outputs take more than one group (the
            // sources would otherwise be staged and read once per group). From memory
            // with one group, reading every source at each step measured as fast or
            // faster (AVX2, 10+4 with 16 MiB blocks).
            let by_source = <$m as $crate::kernels::x86_64::vector::Multiplier<P>>::SOURCE_MAJOR
                && !P::ACCUMULATE
                && !P::SEEDED
                && (!stream || outs.len() > ($g)(p))
                && p.all_mul(0, outs.len());
            let nt;
            if by_source || outs.len() <= ($g)(p) {
                let head = if realign && !P::ACCUMULATE {
                    $crate::kernels::x86_64::aligning_head(ins, outs, off, len)
                } else {
                    None
                };
                let mut pieces = [(off, len, false); 3];
                let used = match head {
                    None => {
                        nt = stream && aligned_at(off);
                        pieces[0].2 = nt;
                        1
                    }
                    Some(h) => {
                        nt = stream && aligned_at(off + h);
                        pieces = [(off, 64, false), (off + h, len - 64, nt), (off + len - 64, 64, false)];
                        3
                    }
                };
                if by_source {
                    for &(o, l, pnt) in &pieces[..used] {
                        // SAFETY: forwarded contract; every piece lies inside the range, is a
                        // multiple of 64 bytes long and aligned for its stores when `pnt`.
                        unsafe {
                            $crate::kernels::x86_64::vector::source_major::<P, $m>(p, ins, outs, o, l, pnt)
                        };
                    }
                // Split by columns where crowded blocks come from cache (L3); from memory
                // (`stream`: the job outgrows the last-level cache) the split measured slower.
                } else if !stream && !P::ACCUMULATE && !P::SEEDED && $crate::kernels::x86_64::crowded(ins, outs, off, len) {
                    for &(o, l, pnt) in &pieces[..used] {
                        if l >= $crate::kernels::x86_64::SPLIT_MIN {
                            // SAFETY: as below; `crowded` checked the split's shape.
                            unsafe { split_tiles(p, ins, outs, o, l, pnt) };
                        } else {
                            // SAFETY: as below.
                            unsafe { groups(p, ins, outs, &[(o, l, pnt)]) };
                        }
                    }
                } else {
                    // SAFETY: forwarded contract; every piece lies inside the range and is a
                    // multiple of 64 bytes long; pieces overlap only as `realign` allows.
                    unsafe { groups(p, ins, outs, &pieces[..used]) };
                }
            } else {
                nt = stream && aligned_at(off);
                // SAFETY: forwarded contract; `staged` hands `groups` a copy of each
                // source tile and the outputs advanced to the tile.
                unsafe {
                    $crate::kernels::x86_64::staged(ins, outs, off, len, |sins, souts, tl| {
                        groups(p, sins, souts, &[(0, tl, nt)])
                    })
                };
            }
            if nt {
                std::arch::x86_64::_mm_sfence();
            }
        }

        /// `[off, off + len)` of a multiplication whose blocks crowd the same cache sets
        /// ([`crowded`](crate::kernels::x86_64::crowded)), in tiles and in passes of at
        /// most [`CROWD_LIMIT`](crate::kernels::x86_64::CROWD_LIMIT) crowded blocks
        /// each: the first columns are summed into a stack tile (in passes of up to the
        /// limit), then the last columns, seeded with that sum, go to the outputs, which
        /// are written once. Non-temporal stores (`nt`) in that last pass only.
        ///
        /// # Safety
        /// As for `run`; outputs fewer than the limit and inputs more than the limit
        /// less the outputs (what `crowded` checks); `len` a multiple of 64.
        #[target_feature(enable = $feat)]
        unsafe fn split_tiles<P: $crate::kernels::Tables>(
            p: &P,
            ins: &[*const u8],
            outs: &[*mut u8],
            off: usize,
            len: usize,
            nt: bool,
        ) where
            for<'x> $m: $crate::kernels::x86_64::vector::Multiplier<$crate::kernels::x86_64::Part<'x, P, false, false>>
                + $crate::kernels::x86_64::vector::Multiplier<$crate::kernels::x86_64::Part<'x, P, true, false>>
                + $crate::kernels::x86_64::vector::Multiplier<$crate::kernels::x86_64::Part<'x, P, false, true>>,
        {
            use $crate::kernels::x86_64::{Part, SplitTile, CROWD_LIMIT, SPLIT_TILE_BYTES};
            use $crate::kernels::{MAX_COLS, MAX_ROWS};
            let (rows, cols) = (outs.len(), ins.len());
            let last = CROWD_LIMIT - rows;
            let before = cols - last;
            let tile = SPLIT_TILE_BYTES / rows / 64 * 64;
            let mut stack = std::mem::MaybeUninit::<SplitTile>::uninit();
            let base = stack.as_mut_ptr().cast::<u8>();
            let mut sums = [std::ptr::null_mut::<u8>(); MAX_ROWS];
            let mut seeds = [std::ptr::null::<u8>(); MAX_ROWS];
            for r in 0..rows {
                // SAFETY: rows * tile <= SPLIT_TILE_BYTES.
                sums[r] = unsafe { base.add(r * tile) };
                seeds[r] = sums[r];
            }
            let mut ip = [std::ptr::null::<u8>(); MAX_COLS];
            let mut op = [std::ptr::null_mut::<u8>(); MAX_ROWS];
            let mut t = 0;
            while t < len {
                let tl = tile.min(len - t);
                for (d, s) in ip.iter_mut().zip(ins) {
                    // SAFETY: off + t lies inside every block.
                    *d = unsafe { s.add(off + t) };
                }
                for (d, o) in op.iter_mut().zip(outs) {
                    // SAFETY: as above.
                    *d = unsafe { o.add(off + t) };
                }
                let mut c0 = 0;
                while c0 < before {
                    let n = (before - c0).min(CROWD_LIMIT);
                    let piece = [(0, tl, false)];
                    // SAFETY: the inputs are readable over the tile; the sums are this
                    // frame's stack, written whole by the first pass before any read, and
                    // overlap no input.
                    unsafe {
                        if c0 == 0 {
                            let v = Part::<P, false, false>::new(p, c0, n, seeds);
                            groups(&v, &ip[c0..c0 + n], &sums[..rows], &piece)
                        } else {
                            let v = Part::<P, true, false>::new(p, c0, n, seeds);
                            groups(&v, &ip[c0..c0 + n], &sums[..rows], &piece)
                        }
                    };
                    c0 += n;
                }
                let v = Part::<P, false, true>::new(p, before, last, seeds);
                // SAFETY: the seeds hold the first columns' sums over the tile; the outputs
                // are writable over it, and aligned when `nt` (the tiles keep `off`'s
                // alignment).
                unsafe { groups(&v, &ip[before..cols], &op[..rows], &[(0, tl, nt)]) };
                t += tl;
            }
        }

        /// Every output group over each piece `(offset, length, non-temporal)`.
        ///
        /// # Safety
        /// As for `run`, for each piece.
        #[target_feature(enable = $feat)]
        unsafe fn groups<P: $crate::kernels::Tables>(
            p: &P,
            ins: &[*const u8],
            outs: &[*mut u8],
            pieces: &[(usize, usize, bool)],
        ) where
            $m: $crate::kernels::x86_64::vector::Multiplier<P>,
        {
            let rows = outs.len();
            let g: usize = ($g)(p);
            let mut r0 = 0;
            while r0 < rows {
                let n = (rows - r0).min(g);
                // A dense group (no column of only 0s and 1s) skips the per-column checks;
                // a first output of all ones is added to without multiplying.
                // Where products are cheap, columns of 0s and 1s run as products too
                // (their tables are those of 0 and 1), and only a column of 0s breaks
                // density.
                let dense = if <$m as $crate::kernels::x86_64::vector::Multiplier<P>>::CHEAP_PRODUCT {
                    p.no_zero_col(r0, n)
                } else {
                    p.all_mul(r0, n)
                };
                // (A group with columns of 0s and 1s takes its row of ones as products:
                // such matrices are rare, and the pair of shortcuts is not compiled.)
                let one_first = dense && p.one_rows(r0, n) & 1 != 0;
                for &(off, len, nt) in pieces {
                    // SAFETY: forwarded contract; n <= g and r0 + n <= rows.
                    unsafe {
                        match (dense, one_first) {
                            (true, true) => {
                                for_n!(n, group, true, true, p, ins, outs, r0, off, len, nt)
                            }
                            (true, false) => {
                                for_n!(n, group, true, false, p, ins, outs, r0, off, len, nt)
                            }
                            (false, _) => {
                                for_n!(n, group, false, false, p, ins, outs, r0, off, len, nt)
                            }
                        }
                    }
                }
                r0 += n;
            }
        }

        /// Outputs `r0 .. r0 + N` (see `multiply`).
        ///
        /// # Safety
        /// As for `run`; `r0 + N <= outs.len()`.
        #[target_feature(enable = $feat)]
        #[allow(clippy::too_many_arguments)]
        unsafe fn group<
            P: $crate::kernels::Tables,
            const N: usize,
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
            $m: $crate::kernels::x86_64::vector::Multiplier<P>,
        {
            use $crate::kernels::x86_64::vector::{Multiplier, multiply};
            // The branches are constants, so only the multiplications this kernel can
            // reach are compiled: groups of at most `$max` outputs (what `$g` gives), two
            // registers a step only up to the kernel's limit.
            if const { N > $max } {
                unreachable!("a group of {N} outputs, more than the kernel's {}", $max);
            } else if const { N <= <$m as Multiplier<P>>::TWO_REGISTERS_UP_TO } {
                // Steps of two registers, then one register for a remaining 64 bytes when
                // a register holds 64.
                let step = 2 * <<$m as Multiplier<P>>::R as $crate::kernels::x86_64::vector::Register>::BYTES;
                let main = len / step * step;
                // SAFETY: forwarded contract; the kernel's features are enabled here and
                // main is a multiple of the step.
                unsafe { multiply::<P, $m, N, 2, DENSE, ONE_FIRST>(p, ins, outs, r0, off, main, nt) }
                // (With 32-byte registers a step is 64 bytes: there is never a rest, and
                // no one-register pass is compiled.)
                if const { <<$m as Multiplier<P>>::R as $crate::kernels::x86_64::vector::Register>::BYTES == 64 } && main < len {
                    // SAFETY: as above; the rest is a multiple of 64 and of the register.
                    unsafe {
                        multiply::<P, $m, N, 1, DENSE, ONE_FIRST>(p, ins, outs, r0, off + main, len - main, nt)
                    }
                }
            } else {
                // SAFETY: as above.
                unsafe { multiply::<P, $m, N, 1, DENSE, ONE_FIRST>(p, ins, outs, r0, off, len, nt) }
            }
        }
    };
}

/// Where to start the bulk of a multiplication over `[off, off + len)` so that the
/// blocks' 64-byte loads and stores do not straddle cache lines: `Some(h)` (1..64) when
/// most blocks are 64-byte aligned at `off + h`, else `None`. Heap blocks
/// of one size are often all misaligned alike (glibc places large ones 16 bytes into a
/// page), and straddling loads cost the kernels about a fifth of their speed where the
/// blocks come from L2. The first and last 64 bytes then run apart, so a range shorter
/// than 128 bytes is never split.
pub(crate) fn aligning_head(
    ins: &[*const u8],
    outs: &[*mut u8],
    off: usize,
    len: usize,
) -> Option<usize> {
    if len < 128 {
        return None;
    }
    let mis = || {
        ins.iter()
            .map(|p| *p as usize)
            .chain(outs.iter().map(|p| *p as usize))
            .map(|a| a.wrapping_add(off) % 64)
    };
    // The misalignment most blocks share, if more than half do (majority vote). Only
    // then is it worth the two extra 64-byte passes.
    let (mut cand, mut votes) = (0, 0usize);
    for m in mis() {
        if votes == 0 {
            cand = m;
        }
        votes = if m == cand { votes + 1 } else { votes - 1 };
    }
    if cand == 0 || 2 * mis().filter(|&m| m == cand).count() <= ins.len() + outs.len() {
        return None;
    }
    Some(64 - cand)
}

/// Most blocks one pass of a multiplication reads or writes at once when they crowd the
/// same cache sets. Blocks laid back to back at a power-of-two size (one buffer of M
/// blocks of 1 MiB, as DOCA's EC tasks take them) share their offset within the L2's
/// set period, and where their pages are contiguous in physical memory every block's
/// line of one step falls in one L2 set. Measured on 1 MiB blocks at 1 MiB apart: up
/// to 9 such blocks run at the speed of blocks set apart; 14 (10+4) run 3.5x slower.
pub(crate) const CROWD_LIMIT: usize = 9;

/// Shortest range a crowded multiplication is split for; shorter ones run in one pass.
pub(crate) const SPLIT_MIN: usize = 4 << 10;

/// Smallest job (bytes read and written) split by columns: below it the blocks come
/// from L2, where crowding costs less than the split's extra passes over the sums
/// (measured: 10+4 and 8+4 on 64 KiB blocks lose a third when split).
pub(crate) const SPLIT_MIN_BYTES: usize = 2 << 20;

/// Most outputs of a multiplication split by columns. With more, the last pass takes
/// few columns, the sums make several round trips, and the products, not the memory,
/// bound the job (20+8 on 1 MiB blocks measured slower split).
pub(crate) const SPLIT_MAX_ROWS: usize = 4;

/// Bytes of stack for the sums of a split multiplication's first columns (one tile of
/// every output; small enough to stay in L1 between the passes).
pub(crate) const SPLIT_TILE_BYTES: usize = 16 << 10;

#[repr(C, align(64))]
pub(crate) struct SplitTile([MaybeUninit<u8>; SPLIT_TILE_BYTES]);

/// The L2 set period the crowding test assumes (64 KiB: a 1 MiB, 16-way L2; larger L2s
/// have longer periods, of which this is a divisor).
const SET_PERIOD: usize = 64 << 10;

/// Whether a multiplication over `[off, off + len)` should run split by columns: more
/// than [`CROWD_LIMIT`] of its blocks sit within a few lines of one another in the L2's
/// set period, the job is larger than L2 ([`SPLIT_MIN_BYTES`]), and a split brings every
/// pass under the limit with few outputs ([`SPLIT_MAX_ROWS`]) and more inputs than the
/// last pass takes.
pub(crate) fn crowded(ins: &[*const u8], outs: &[*mut u8], off: usize, len: usize) -> bool {
    const LINES: usize = SET_PERIOD / 64;
    if len < SPLIT_MIN
        || (ins.len() + outs.len()) * len <= SPLIT_MIN_BYTES
        || ins.len() + outs.len() <= CROWD_LIMIT
        || outs.len() > SPLIT_MAX_ROWS
        || ins.len() <= CROWD_LIMIT - outs.len()
    {
        return false;
    }
    let set = |a: usize| (a.wrapping_add(off) / 64) % LINES;
    let sets = || {
        ins.iter()
            .map(|p| set(*p as usize))
            .chain(outs.iter().map(|p| set(*p as usize)))
    };
    let mut count = [0u16; LINES];
    for s in sets() {
        count[s] += 1;
    }
    // Blocks within two lines of each other share sets as the passes advance.
    sets().any(|s| {
        (0..5)
            .map(|d| usize::from(count[(s + LINES + d - 2) % LINES]))
            .sum::<usize>()
            > CROWD_LIMIT
    })
}

/// Columns `c0 .. c0 + cols` of a matrix, as a matrix of their own: one pass of a
/// multiplication split by columns. `ACC`: the pass adds to its outputs; `SEED`: each
/// output starts from its seed (the sums of the earlier passes).
pub(crate) struct Part<'a, P, const ACC: bool, const SEED: bool> {
    p: &'a P,
    c0: usize,
    cols: usize,
    seeds: [*const u8; MAX_ROWS],
}

impl<'a, P, const ACC: bool, const SEED: bool> Part<'a, P, ACC, SEED> {
    pub(crate) fn new(p: &'a P, c0: usize, cols: usize, seeds: [*const u8; MAX_ROWS]) -> Self {
        Part { p, c0, cols, seeds }
    }
}

impl<P: Tables, const ACC: bool, const SEED: bool> Tables for Part<'_, P, ACC, SEED> {
    const ACCUMULATE: bool = ACC;
    const SEEDED: bool = SEED;

    #[inline(always)]
    fn rows(&self) -> usize {
        self.p.rows()
    }

    #[inline(always)]
    fn cols(&self) -> usize {
        self.cols
    }

    #[inline(always)]
    fn table(&self, c: usize, r: usize) -> *const [u8; 32] {
        self.p.table(self.c0 + c, r)
    }

    #[inline(always)]
    fn masks(&self, c: usize) -> (u32, u32) {
        self.p.masks(self.c0 + c)
    }

    #[inline(always)]
    fn seed(&self, r: usize) -> *const u8 {
        self.seeds[r]
    }
}

impl<P: Affine, const ACC: bool, const SEED: bool> Affine for Part<'_, P, ACC, SEED> {
    #[inline(always)]
    unsafe fn affine(&self, c: usize, r: usize) -> u64 {
        // SAFETY: c < cols, so c0 + c is a column of the whole matrix; r < rows.
        unsafe { self.p.affine(self.c0 + c, r) }
    }
}

/// How far ahead of the bytes being multiplied each source is prefetched: the hardware
/// prefetchers lose track when a job reads dozens of blocks at once.
pub(crate) const PREFETCH_AHEAD: usize = 128;

/// Bytes of stack holding one tile of every source while the output groups run over it.
const STAGE_BYTES: usize = 64 << 10;

#[repr(C, align(64))]
struct Stage([MaybeUninit<u8>; STAGE_BYTES]);

/// Tile length for `cols` staged sources: as many 64-byte lines as fit, made odd so
/// that the copies, laid end to end, start in different L1 cache sets.
pub(crate) fn stage_tile(cols: usize) -> usize {
    let lines = (STAGE_BYTES / 64 / cols).max(1);
    (lines - 1 + lines % 2).max(1) * 64
}

/// Walks `[off, off + len)` in tiles: copies the tile of every input into a stack
/// buffer (prefetching the next tile) and calls `f(staged inputs, outputs advanced to
/// the tile, tile length)`.
///
/// # Safety
/// Inputs readable and outputs writable over the range; `len` a multiple of 64; `f`
/// must only read the staged inputs and write the given outputs over the tile length.
pub(crate) unsafe fn staged(
    ins: &[*const u8],
    outs: &[*mut u8],
    off: usize,
    len: usize,
    mut f: impl FnMut(&[*const u8], &[*mut u8], usize),
) {
    let cols = ins.len();
    let tile = stage_tile(cols);
    let mut stage = MaybeUninit::<Stage>::uninit();
    let base = stage.as_mut_ptr().cast::<u8>();
    let mut sp = [std::ptr::null::<u8>(); MAX_COLS];
    for (c, d) in sp.iter_mut().take(cols).enumerate() {
        // SAFETY: cols * tile <= STAGE_BYTES by construction of `stage_tile`.
        *d = unsafe { base.add(c * tile) };
    }
    let mut op = [std::ptr::null_mut::<u8>(); MAX_ROWS];
    let mut t = 0;
    while t < len {
        let tl = tile.min(len - t);
        for (c, &src) in ins.iter().enumerate() {
            // SAFETY: the input is readable over [off + t, off + t + tl) and the copy
            // lands inside this input's slot of the stack buffer.
            unsafe { std::ptr::copy_nonoverlapping(src.add(off + t), base.add(c * tile), tl) };
            let mut l = 0;
            while l < tl {
                // SAFETY: SSE is part of x86-64; a prefetch never faults, so an address
                // past the block is harmless.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(off + t + tl + l).cast()) };
                l += 64;
            }
        }
        for (d, &o) in op.iter_mut().zip(outs) {
            // SAFETY: off + t is inside the output range.
            *d = unsafe { o.add(off + t) };
        }
        f(&sp[..cols], &op[..outs.len()], tl);
        t += tl;
    }
}

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod gfni;
pub(crate) mod vector;
