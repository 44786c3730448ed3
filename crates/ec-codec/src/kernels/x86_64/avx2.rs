//! AVX2: multiplication by nibble-table shuffles (`vpshufb`). Up to 8 outputs are held in
//! registers per pass. With at most 4, each step covers a whole 64-byte cache line (two
//! registers per output), so every loaded table serves two vectors; with 5 to 8, a step
//! covers 32 bytes, so one pass still reads every source once and splits each source
//! vector into nibbles once for all its outputs. Passes of 5 to 8 outputs are used only
//! when the matrix's nibble tables fit in L1 (see `group_rows`).

use super::vector::Multiplier;
use crate::kernels::Tables;
use std::arch::x86_64::*;

driver!("avx2", Shuffle256, group_rows, 8);

/// Most tables a pass of 5 to 8 outputs may read per step: 32-byte steps read every table
/// twice as often per byte as 64-byte ones, which pays while the tables stay in L1.
const WIDE_GROUP_TABLE_BYTES: usize = 16 << 10;

/// Outputs per pass: 8 at 32 bytes per step when the matrix's tables fit in L1, else 4
/// at 64 bytes per step.
fn group_rows<P: Tables>(p: &P) -> usize {
    if p.rows() * p.cols() * 32 <= WIDE_GROUP_TABLE_BYTES {
        8
    } else {
        4
    }
}

/// Nibble-table multiplication on 256-bit registers: a coefficient is its low- and
/// high-nibble product tables, each in both lanes.
pub(crate) struct Shuffle256;

impl<P: Tables> Multiplier<P> for Shuffle256 {
    type R = __m256i;
    // Two registers per output while 2 x N accumulators, the nibbles of two vectors and
    // two tables fit in the 16 registers.
    const TWO_REGISTERS_UP_TO: usize = 4;
    const PREFETCH: bool = true;
    const STREAM_AHEAD: usize = 1024;
    const CHEAP_PRODUCT: bool = false;
    const PAIR_COLUMNS: bool = false;
    const SOURCE_MAJOR: bool = true;
    type Coef = (__m256i, __m256i);
    type Split = (__m256i, __m256i);

    type Consts = __m256i;

    #[inline(always)]
    unsafe fn consts() -> __m256i {
        // SAFETY: the CPU supports the kernel's features (the trait's contract).
        unsafe { _mm256_set1_epi8(0x0f) }
    }

    #[inline(always)]
    unsafe fn split(x: __m256i, mask: __m256i) -> Self::Split {
        // SAFETY: AVX2 (the trait's contract).
        unsafe {
            (
                _mm256_and_si256(x, mask),
                _mm256_and_si256(_mm256_srli_epi64::<4>(x), mask),
            )
        }
    }

    #[inline(always)]
    unsafe fn coef(p: &P, c: usize, r: usize) -> Self::Coef {
        let t = p.table(c, r).cast::<u8>();
        // SAFETY: c < cols and r < rows, so the 32-byte table is readable: low then high
        // nibble products.
        unsafe {
            (
                _mm256_broadcastsi128_si256(_mm_loadu_si128(t.cast())),
                _mm256_broadcastsi128_si256(_mm_loadu_si128(t.add(16).cast())),
            )
        }
    }

    #[inline(always)]
    unsafe fn mul((lo, hi): Self::Split, (tl, th): Self::Coef) -> __m256i {
        // SAFETY: AVX2 (the trait's contract).
        unsafe { _mm256_xor_si256(_mm256_shuffle_epi8(tl, lo), _mm256_shuffle_epi8(th, hi)) }
    }
}
