//! x86-64 SIMD kernels. Each module exposes `run` with the signature of the scalar
//! kernel plus a non-temporal-store flag; callers check CPU support first.

/// Calls `$f::<N, $d>` for N = 1..=16 chosen at run time.
macro_rules! for_n {
    ($n:expr, $f:ident, $d:expr, $($arg:expr),*) => {
        match $n {
            1 => $f::<1, { $d }>($($arg),*),
            2 => $f::<2, { $d }>($($arg),*),
            3 => $f::<3, { $d }>($($arg),*),
            4 => $f::<4, { $d }>($($arg),*),
            5 => $f::<5, { $d }>($($arg),*),
            6 => $f::<6, { $d }>($($arg),*),
            7 => $f::<7, { $d }>($($arg),*),
            8 => $f::<8, { $d }>($($arg),*),
            9 => $f::<9, { $d }>($($arg),*),
            10 => $f::<10, { $d }>($($arg),*),
            11 => $f::<11, { $d }>($($arg),*),
            12 => $f::<12, { $d }>($($arg),*),
            13 => $f::<13, { $d }>($($arg),*),
            14 => $f::<14, { $d }>($($arg),*),
            15 => $f::<15, { $d }>($($arg),*),
            _ => $f::<16, { $d }>($($arg),*),
        }
    };
}

/// The tile/group driver shared by every SIMD kernel: walks the block length in tiles
/// (so that re-reading sources for later output groups hits the cache) and the outputs
/// in groups of at most `$g`, calling `$group::<N>` for each.
macro_rules! driver {
    ($feat:literal, $g:expr, $group:ident) => {
        /// Runs the kernel over `[off, off + len)`.
        ///
        /// # Safety
        /// The CPU must support the kernel's features; inputs readable and outputs
        /// writable over the range; outputs overlap nothing; `len` a multiple of 64.
        #[target_feature(enable = $feat)]
        pub(crate) unsafe fn run(
            p: &$crate::kernels::Prepared,
            ins: &[*const u8],
            outs: &[*mut u8],
            off: usize,
            len: usize,
            nt: bool,
        ) {
            let rows = outs.len();
            let tile = if rows > $g { p.tile.min(len) } else { len };
            let mut t = 0;
            while t < len {
                let tl = tile.min(len - t);
                let mut r0 = 0;
                while r0 < rows {
                    let n = (rows - r0).min($g);
                    if p.all_mul(r0, n) {
                        // SAFETY: forwarded contract; n <= $g and r0 + n <= rows.
                        unsafe { for_n!(n, $group, true, p, ins, outs, r0, off + t, tl, nt) };
                    } else {
                        // SAFETY: as above.
                        unsafe { for_n!(n, $group, false, p, ins, outs, r0, off + t, tl, nt) };
                    }
                    r0 += n;
                }
                t += tl;
            }
            if nt {
                std::arch::x86_64::_mm_sfence();
            }
        }
    };
}

pub(crate) mod avx2;
pub(crate) mod avx512;
pub(crate) mod gfni;
