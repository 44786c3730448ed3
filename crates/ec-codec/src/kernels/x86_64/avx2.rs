//! AVX2: multiplication by nibble-table shuffles (`vpshufb`). Each step covers a whole
//! 64-byte cache line (two registers), so every loaded table serves two vectors and every
//! source line is consumed at once.

use super::PREFETCH_AHEAD;
use crate::kernels::{ColKind, Prepared};
use std::arch::x86_64::*;

driver!("avx2", 4, group);

#[target_feature(enable = "avx2")]
unsafe fn group<const N: usize, const DENSE: bool>(
    p: &Prepared,
    ins: &[*const u8],
    outs: &[*mut u8],
    r0: usize,
    off: usize,
    len: usize,
    nt: bool,
) {
    let rows = p.rows;
    let tables = p.tables.as_ptr();
    let mask = _mm256_set1_epi8(0x0f);
    let mut pos = off;
    let end = off + len;
    while pos < end {
        let mut acc0 = [_mm256_setzero_si256(); N];
        let mut acc1 = [_mm256_setzero_si256(); N];
        for (c, &src) in ins.iter().enumerate() {
            let kind = if DENSE {
                ColKind::Mul
            } else {
                p.col_kind(c, r0, N)
            };
            if kind == ColKind::Zero {
                continue;
            }
            // SAFETY: pos + 64 <= end (lengths are multiples of 64) and the input is
            // readable over the range.
            let (x0, x1) = unsafe {
                (
                    _mm256_loadu_si256(src.add(pos).cast()),
                    _mm256_loadu_si256(src.add(pos + 32).cast()),
                )
            };
            if let ColKind::Xor(bits) = kind {
                for k in 0..N {
                    if bits >> k & 1 != 0 {
                        acc0[k] = _mm256_xor_si256(acc0[k], x0);
                        acc1[k] = _mm256_xor_si256(acc1[k], x1);
                    }
                }
                continue;
            }
            _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(pos + PREFETCH_AHEAD).cast());
            let lo0 = _mm256_and_si256(x0, mask);
            let hi0 = _mm256_and_si256(_mm256_srli_epi64::<4>(x0), mask);
            let lo1 = _mm256_and_si256(x1, mask);
            let hi1 = _mm256_and_si256(_mm256_srli_epi64::<4>(x1), mask);
            // SAFETY: the table index is inside rows x cols.
            let t = unsafe { tables.add(c * rows + r0) };
            for k in 0..N {
                // SAFETY: each table entry is 32 bytes: low then high nibble table.
                let tl = unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.add(k).cast())) };
                // SAFETY: as above.
                let th = unsafe {
                    _mm256_broadcastsi128_si256(_mm_loadu_si128(
                        t.add(k).cast::<u8>().add(16).cast(),
                    ))
                };
                acc0[k] = _mm256_xor_si256(
                    acc0[k],
                    _mm256_xor_si256(_mm256_shuffle_epi8(tl, lo0), _mm256_shuffle_epi8(th, hi0)),
                );
                acc1[k] = _mm256_xor_si256(
                    acc1[k],
                    _mm256_xor_si256(_mm256_shuffle_epi8(tl, lo1), _mm256_shuffle_epi8(th, hi1)),
                );
            }
        }
        for k in 0..N {
            // SAFETY: the output is writable over the range.
            let dst = unsafe { outs[r0 + k].add(pos) };
            if nt {
                // SAFETY: nt is only set for 64-byte-aligned outputs.
                unsafe {
                    _mm256_stream_si256(dst.cast(), acc0[k]);
                    _mm256_stream_si256(dst.add(32).cast(), acc1[k]);
                }
            } else {
                // SAFETY: as above.
                unsafe {
                    _mm256_storeu_si256(dst.cast(), acc0[k]);
                    _mm256_storeu_si256(dst.add(32).cast(), acc1[k]);
                }
            }
        }
        pos += 64;
    }
}
