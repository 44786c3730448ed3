//! AVX2: multiplication by nibble-table shuffles (`vpshufb`). Up to 8 outputs are held in
//! registers per pass. With at most 4, each step covers a whole 64-byte cache line (two
//! registers per output), so every loaded table serves two vectors; with 5 to 8, a step
//! covers 32 bytes, so one pass still reads every source once and splits each source
//! vector into nibbles once for all its outputs. Passes of 5 to 8 outputs are used only
//! when the matrix's nibble tables fit in L1 (see `group_rows`).

use super::PREFETCH_AHEAD;
use crate::kernels::{ColKind, Tables};
use std::arch::x86_64::*;

driver!("avx2", Tables, group_rows, group);

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

#[target_feature(enable = "avx2")]
unsafe fn group<P: Tables, const N: usize, const DENSE: bool>(
    p: &P,
    ins: &[*const u8],
    outs: &[*mut u8],
    r0: usize,
    off: usize,
    len: usize,
    nt: bool,
) {
    // Registers per output and step: two while 2 x N accumulators, the nibbles of two
    // vectors and two tables fit in the 16 registers; else one.
    let v = if N <= 4 { 2 } else { 1 };
    let mask = _mm256_set1_epi8(0x0f);
    let mut pos = off;
    let end = off + len;
    while pos < end {
        // acc[k][j]: output r0 + k, vector j of the step.
        let mut acc = [[_mm256_setzero_si256(); 2]; N];
        if P::ACCUMULATE {
            for (k, a) in acc.iter_mut().enumerate() {
                for (j, a) in a.iter_mut().enumerate().take(v) {
                    // SAFETY: the output is readable and writable over the range.
                    *a = unsafe { _mm256_loadu_si256(outs[r0 + k].add(pos + 32 * j).cast()) };
                }
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
            let mut x = [_mm256_setzero_si256(); 2];
            for (j, x) in x.iter_mut().enumerate().take(v) {
                // SAFETY: pos + 32 * v <= end (lengths are multiples of 64) and the input
                // is readable over the range.
                *x = unsafe { _mm256_loadu_si256(src.add(pos + 32 * j).cast()) };
            }
            if let ColKind::Xor(bits) = kind {
                for (k, a) in acc.iter_mut().enumerate() {
                    if bits >> k & 1 != 0 {
                        for (a, x) in a.iter_mut().zip(&x).take(v) {
                            *a = _mm256_xor_si256(*a, *x);
                        }
                    }
                }
                continue;
            }
            _mm_prefetch::<_MM_HINT_T0>(src.wrapping_add(pos + PREFETCH_AHEAD).cast());
            let mut lo = [_mm256_setzero_si256(); 2];
            let mut hi = [_mm256_setzero_si256(); 2];
            for j in 0..v {
                lo[j] = _mm256_and_si256(x[j], mask);
                hi[j] = _mm256_and_si256(_mm256_srli_epi64::<4>(x[j]), mask);
            }
            for (k, a) in acc.iter_mut().enumerate() {
                let t = p.table(c, r0 + k).cast::<u8>();
                // SAFETY: c < cols and r0 + k < rows, so the 32-byte table is readable:
                // low then high nibble products.
                let tl = unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.cast())) };
                // SAFETY: as above.
                let th = unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.add(16).cast())) };
                for (a, (l, h)) in a.iter_mut().zip(lo.iter().zip(&hi)).take(v) {
                    *a = _mm256_xor_si256(
                        *a,
                        _mm256_xor_si256(_mm256_shuffle_epi8(tl, *l), _mm256_shuffle_epi8(th, *h)),
                    );
                }
            }
        }
        for (k, a) in acc.iter().enumerate() {
            for (j, a) in a.iter().enumerate().take(v) {
                // SAFETY: the output is writable over the range.
                let dst = unsafe { outs[r0 + k].add(pos + 32 * j) };
                if nt {
                    // SAFETY: nt is only set for 64-byte-aligned outputs.
                    unsafe { _mm256_stream_si256(dst.cast(), *a) };
                } else {
                    // SAFETY: as above.
                    unsafe { _mm256_storeu_si256(dst.cast(), *a) };
                }
            }
        }
        pos += 32 * v;
    }
}
