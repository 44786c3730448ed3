//! AVX-512BW: nibble-table shuffles on 512-bit registers, 64 bytes per step.

use super::PREFETCH_AHEAD;
use crate::kernels::{ColKind, Tables};
use std::arch::x86_64::*;

driver!("avx512f,avx512bw", Tables, |_| 16, group);

#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn group<P: Tables, const N: usize, const DENSE: bool>(
    p: &P,
    ins: &[*const u8],
    outs: &[*mut u8],
    r0: usize,
    off: usize,
    len: usize,
    nt: bool,
) {
    let mask = _mm512_set1_epi8(0x0f);
    let mut pos = off;
    let end = off + len;
    while pos < end {
        let mut acc = [_mm512_setzero_si512(); N];
        if P::ACCUMULATE {
            for (k, a) in acc.iter_mut().enumerate() {
                // SAFETY: the output is readable and writable over the range.
                *a = unsafe { _mm512_loadu_si512(outs[r0 + k].add(pos).cast()) };
            }
        }
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
            let lo = _mm512_and_si512(x, mask);
            let hi = _mm512_and_si512(_mm512_srli_epi64::<4>(x), mask);
            for (k, a) in acc.iter_mut().enumerate() {
                let t = p.table(c, r0 + k).cast::<u8>();
                // SAFETY: c < cols and r0 + k < rows, so the 32-byte table is readable:
                // low then high nibble products.
                let tl = unsafe { _mm512_broadcast_i32x4(_mm_loadu_si128(t.cast())) };
                // SAFETY: as above.
                let th = unsafe { _mm512_broadcast_i32x4(_mm_loadu_si128(t.add(16).cast())) };
                let prod =
                    _mm512_xor_si512(_mm512_shuffle_epi8(tl, lo), _mm512_shuffle_epi8(th, hi));
                *a = _mm512_xor_si512(*a, prod);
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
