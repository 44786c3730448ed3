//! AVX2: multiplication by nibble-table shuffles (`vpshufb`), 32 bytes per step.

use crate::kernels::Prepared;
use std::arch::x86_64::*;

driver!("avx2", 8, group);

#[target_feature(enable = "avx2")]
unsafe fn group<const N: usize>(
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
        let mut acc = [_mm256_setzero_si256(); N];
        for (c, &src) in ins.iter().enumerate() {
            // SAFETY: pos + 32 <= end and the input is readable over the range.
            let x = unsafe { _mm256_loadu_si256(src.add(pos).cast()) };
            let lo = _mm256_and_si256(x, mask);
            let hi = _mm256_and_si256(_mm256_srli_epi64::<4>(x), mask);
            for (k, a) in acc.iter_mut().enumerate() {
                // SAFETY: the table index is inside rows x cols.
                let t = unsafe { tables.add(c * rows + r0 + k) };
                // SAFETY: each table entry is 32 bytes: low then high nibble table.
                let tl = unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.cast())) };
                // SAFETY: as above.
                let th = unsafe {
                    _mm256_broadcastsi128_si256(_mm_loadu_si128(t.cast::<u8>().add(16).cast()))
                };
                let prod =
                    _mm256_xor_si256(_mm256_shuffle_epi8(tl, lo), _mm256_shuffle_epi8(th, hi));
                *a = _mm256_xor_si256(*a, prod);
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
