//! AVX-512BW: nibble-table shuffles on 512-bit registers, 64 bytes per step.

use super::vector::Multiplier;
use crate::kernels::Tables;
use std::arch::x86_64::*;

driver!("avx512f,avx512bw", Shuffle512, |_| 16, 16);

/// Nibble-table multiplication on 512-bit registers: a coefficient is its low- and
/// high-nibble product tables, each in all four lanes.
pub(crate) struct Shuffle512;

impl<P: Tables> Multiplier<P> for Shuffle512 {
    type R = __m512i;
    const TWO_REGISTERS_UP_TO: usize = 0;
    const PREFETCH: bool = true;
    const STREAM_AHEAD: usize = 1024;
    const CHEAP_PRODUCT: bool = false;
    const PAIR_COLUMNS: bool = false;
    const SOURCE_MAJOR: bool = true;
    type Coef = (__m512i, __m512i);
    type Split = (__m512i, __m512i);

    type Consts = __m512i;

    #[inline(always)]
    unsafe fn consts() -> __m512i {
        // SAFETY: the CPU supports the kernel's features (the trait's contract).
        unsafe { _mm512_set1_epi8(0x0f) }
    }

    #[inline(always)]
    unsafe fn split(x: __m512i, mask: __m512i) -> Self::Split {
        // SAFETY: AVX-512BW (the trait's contract).
        unsafe {
            (
                _mm512_and_si512(x, mask),
                _mm512_and_si512(_mm512_srli_epi64::<4>(x), mask),
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
                _mm512_broadcast_i32x4(_mm_loadu_si128(t.cast())),
                _mm512_broadcast_i32x4(_mm_loadu_si128(t.add(16).cast())),
            )
        }
    }

    #[inline(always)]
    unsafe fn mul((lo, hi): Self::Split, (tl, th): Self::Coef) -> __m512i {
        // SAFETY: AVX-512BW (the trait's contract).
        unsafe { _mm512_xor_si512(_mm512_shuffle_epi8(tl, lo), _mm512_shuffle_epi8(th, hi)) }
    }
}
