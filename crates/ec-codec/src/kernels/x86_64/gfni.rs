//! GFNI: one `GF2P8AFFINEQB` per coefficient and vector, with the coefficient's 8x8 bit
//! matrix precomputed when the matrix is prepared. 256-bit (AVX2 + GFNI) and 512-bit
//! (AVX-512 + GFNI) encodings.

pub(crate) mod v256 {
    use super::super::PREFETCH_AHEAD;
    use crate::kernels::{Affine, ColKind};
    use std::arch::x86_64::*;

    driver!("avx2,gfni", Affine, |_| 8, group);

    #[target_feature(enable = "avx2,gfni")]
    unsafe fn group<P: Affine, const N: usize, const DENSE: bool>(
        p: &P,
        ins: &[*const u8],
        outs: &[*mut u8],
        r0: usize,
        off: usize,
        len: usize,
        nt: bool,
    ) {
        const { assert!(!P::ACCUMULATE, "the GFNI kernels overwrite their outputs") };
        let mut pos = off;
        let end = off + len;
        while pos < end {
            let mut acc = [_mm256_setzero_si256(); N];
            for (c, &src) in ins.iter().enumerate() {
                let kind = if DENSE {
                    ColKind::Mul
                } else {
                    p.col_kind(c, r0, N)
                };
                if kind == ColKind::Zero {
                    continue;
                }
                // SAFETY: pos + 32 <= end and the input is readable over the range.
                let x = unsafe { _mm256_loadu_si256(src.add(pos).cast()) };
                if let ColKind::Xor(bits) = kind {
                    for (k, a) in acc.iter_mut().enumerate() {
                        if bits >> k & 1 != 0 {
                            *a = _mm256_xor_si256(*a, x);
                        }
                    }
                    continue;
                }
                _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(pos + PREFETCH_AHEAD).cast());
                for (k, a) in acc.iter_mut().enumerate() {
                    let m = _mm256_set1_epi64x(p.affine(c, r0 + k) as i64);
                    *a = _mm256_xor_si256(*a, _mm256_gf2p8affine_epi64_epi8::<0>(x, m));
                }
            }
            for (k, a) in acc.iter().enumerate() {
                // SAFETY: the output is writable over the range.
                let dst = unsafe { outs[r0 + k].add(pos) };
                if nt {
                    // SAFETY: nt is only set for 32-byte-aligned outputs.
                    unsafe { _mm256_stream_si256(dst.cast(), *a) };
                } else {
                    // SAFETY: as above.
                    unsafe { _mm256_storeu_si256(dst.cast(), *a) };
                }
            }
            pos += 32;
        }
    }
}

pub(crate) mod v512 {
    use super::super::PREFETCH_AHEAD;
    use crate::kernels::{Affine, ColKind};
    use std::arch::x86_64::*;

    driver!("avx512f,avx512bw,gfni", Affine, |_| 16, group);

    #[target_feature(enable = "avx512f,avx512bw,gfni")]
    unsafe fn group<P: Affine, const N: usize, const DENSE: bool>(
        p: &P,
        ins: &[*const u8],
        outs: &[*mut u8],
        r0: usize,
        off: usize,
        len: usize,
        nt: bool,
    ) {
        const { assert!(!P::ACCUMULATE, "the GFNI kernels overwrite their outputs") };
        let mut pos = off;
        let end = off + len;
        while pos < end {
            let mut acc = [_mm512_setzero_si512(); N];
            for (c, &src) in ins.iter().enumerate() {
                let kind = if DENSE {
                    ColKind::Mul
                } else {
                    p.col_kind(c, r0, N)
                };
                if kind == ColKind::Zero {
                    continue;
                }
                // SAFETY: pos + 64 <= end and the input is readable over the range.
                let x = unsafe { _mm512_loadu_si512(src.add(pos).cast()) };
                if let ColKind::Xor(bits) = kind {
                    for (k, a) in acc.iter_mut().enumerate() {
                        if bits >> k & 1 != 0 {
                            *a = _mm512_xor_si512(*a, x);
                        }
                    }
                    continue;
                }
                _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(pos + PREFETCH_AHEAD).cast());
                for (k, a) in acc.iter_mut().enumerate() {
                    let m = _mm512_set1_epi64(p.affine(c, r0 + k) as i64);
                    *a = _mm512_xor_si512(*a, _mm512_gf2p8affine_epi64_epi8::<0>(x, m));
                }
            }
            for (k, a) in acc.iter().enumerate() {
                // SAFETY: the output is writable over the range.
                let dst = unsafe { outs[r0 + k].add(pos) };
                if nt {
                    // SAFETY: nt is only set for 64-byte-aligned outputs.
                    unsafe { _mm512_stream_si512(dst.cast(), *a) };
                } else {
                    // SAFETY: as above.
                    unsafe { _mm512_storeu_si512(dst.cast(), *a) };
                }
            }
            pos += 64;
        }
    }
}
