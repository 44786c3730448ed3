//! GFNI: one `GF2P8AFFINEQB` per coefficient and vector, with the coefficient's 8x8 bit
//! matrix precomputed when the matrix is prepared. 256-bit (AVX2 + GFNI) and 512-bit
//! (AVX-512 + GFNI) encodings.

use super::vector::Multiplier;
use crate::kernels::Affine;
use std::arch::x86_64::*;

/// Affine multiplication on 256-bit registers: a coefficient is its bit matrix in every
/// 64-bit lane, a source is multiplied as it is.
pub(crate) struct Affine256;

impl<P: Affine> Multiplier<P> for Affine256 {
    type R = __m256i;
    const TWO_REGISTERS_UP_TO: usize = 8;
    const PREFETCH: bool = false;
    const STREAM_AHEAD: usize = super::PREFETCH_AHEAD;
    const CHEAP_PRODUCT: bool = true;
    const PAIR_COLUMNS: bool = false;
    const SOURCE_MAJOR: bool = false;
    type Coef = __m256i;
    type Split = __m256i;

    type Consts = ();

    #[inline(always)]
    unsafe fn consts() {}

    #[inline(always)]
    unsafe fn split(x: __m256i, _: ()) -> __m256i {
        x
    }

    #[inline(always)]
    unsafe fn coef(p: &P, c: usize, r: usize) -> __m256i {
        // SAFETY: AVX (the trait's contract); c < cols and r < rows (`affine`'s).
        unsafe { _mm256_set1_epi64x(p.affine(c, r) as i64) }
    }

    #[inline(always)]
    unsafe fn mul(x: __m256i, m: __m256i) -> __m256i {
        // SAFETY: AVX2 and GFNI (the trait's contract).
        unsafe { _mm256_gf2p8affine_epi64_epi8::<0>(x, m) }
    }
}

/// Affine multiplication on 512-bit registers.
pub(crate) struct Affine512;

impl<P: Affine> Multiplier<P> for Affine512 {
    type R = __m512i;
    const TWO_REGISTERS_UP_TO: usize = 8;
    const PREFETCH: bool = false;
    const STREAM_AHEAD: usize = super::PREFETCH_AHEAD;
    const CHEAP_PRODUCT: bool = true;
    const PAIR_COLUMNS: bool = true;
    const SOURCE_MAJOR: bool = false;
    type Coef = __m512i;
    type Split = __m512i;

    type Consts = ();

    #[inline(always)]
    unsafe fn consts() {}

    #[inline(always)]
    unsafe fn split(x: __m512i, _: ()) -> __m512i {
        x
    }

    #[inline(always)]
    unsafe fn coef(p: &P, c: usize, r: usize) -> __m512i {
        // SAFETY: AVX-512F (the trait's contract); c < cols and r < rows (`affine`'s).
        unsafe { _mm512_set1_epi64(p.affine(c, r) as i64) }
    }

    #[inline(always)]
    unsafe fn mul(x: __m512i, m: __m512i) -> __m512i {
        // SAFETY: AVX-512BW and GFNI (the trait's contract).
        unsafe { _mm512_gf2p8affine_epi64_epi8::<0>(x, m) }
    }
}

pub(crate) mod v256 {
    driver!("avx2,gfni", super::Affine256, |_| 8, 8);
}

pub(crate) mod v512 {
    driver!("avx512f,avx512bw,gfni", super::Affine512, |_| 16, 16);
}
