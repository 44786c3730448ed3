//! The scalar reference: plain table arithmetic, one byte at a time. Obviously correct;
//! every other kernel is tested against it.

use super::GfMatrix;
use crate::gf::MUL;

/// out[r][i] = XOR over c of coef(r, c) * in[c][i], for i in [off, off + len).
///
/// # Safety
/// Every input must be valid for reads and every output for writes over
/// `[off, off + len)`; outputs must not overlap inputs or each other.
pub(crate) unsafe fn run(
    p: &GfMatrix,
    ins: &[*const u8],
    outs: &[*mut u8],
    off: usize,
    len: usize,
) {
    for (r, &out) in outs.iter().enumerate() {
        for i in off..off + len {
            let mut acc = 0u8;
            for (c, &src) in ins.iter().enumerate() {
                // SAFETY: per the contract, [off, off + len) is readable in every input.
                let x = unsafe { *src.add(i) };
                acc ^= MUL[p.coef(r, c) as usize][x as usize];
            }
            // SAFETY: per the contract, [off, off + len) is writable in every output.
            unsafe { *out.add(i) = acc };
        }
    }
}

/// A word-at-a-time portable kernel: eight bytes per step through the multiplication
/// table, accumulating into u64 words. Used where no SIMD kernel exists.
///
/// # Safety
/// As for [`run`].
pub(crate) unsafe fn run_words(
    p: &GfMatrix,
    ins: &[*const u8],
    outs: &[*mut u8],
    off: usize,
    len: usize,
) {
    for (r, &out) in outs.iter().enumerate() {
        let mut i = off;
        while i < off + len {
            let mut acc = 0u64;
            for (c, &src) in ins.iter().enumerate() {
                let t = &MUL[p.coef(r, c) as usize];
                // SAFETY: len is a multiple of 64, so [i, i + 8) is inside the range.
                let w = unsafe { src.add(i).cast::<u64>().read_unaligned() };
                let b = w.to_le_bytes();
                let m = [
                    t[b[0] as usize],
                    t[b[1] as usize],
                    t[b[2] as usize],
                    t[b[3] as usize],
                    t[b[4] as usize],
                    t[b[5] as usize],
                    t[b[6] as usize],
                    t[b[7] as usize],
                ];
                acc ^= u64::from_le_bytes(m);
            }
            // SAFETY: as above, for the output.
            unsafe { out.add(i).cast::<u64>().write_unaligned(acc) };
            i += 8;
        }
    }
}
