//! Arithmetic in GF(2^8) with the polynomial x^8 + x^4 + x^3 + x^2 + 1 (0x11D), the field
//! of ISA-L and DOCA erasure coding. Tables are built at compile time.

/// The field polynomial.
pub const POLY: u16 = 0x11D;

const fn build_exp_log() -> ([u8; 512], [u8; 256]) {
    let mut exp = [0u8; 512];
    let mut log = [0u8; 256];
    let mut x: u16 = 1;
    let mut i = 0;
    while i < 255 {
        exp[i] = x as u8;
        exp[i + 255] = x as u8;
        log[x as usize] = i as u8;
        x <<= 1;
        if x & 0x100 != 0 {
            x ^= POLY;
        }
        i += 1;
    }
    exp[510] = exp[0];
    exp[511] = exp[1];
    (exp, log)
}

const TABLES: ([u8; 512], [u8; 256]) = build_exp_log();
/// `EXP[i]` = 2^i (doubled so sums of two logs need no reduction).
pub static EXP: [u8; 512] = TABLES.0;
/// `LOG[x]` = log2(x) for x != 0.
pub static LOG: [u8; 256] = TABLES.1;

const fn build_mul() -> [[u8; 256]; 256] {
    let mut t = [[0u8; 256]; 256];
    let mut a = 1;
    while a < 256 {
        let mut b = 1;
        while b < 256 {
            t[a][b] = TABLES.0[TABLES.1[a] as usize + TABLES.1[b] as usize];
            b += 1;
        }
        a += 1;
    }
    t
}

/// `MUL[a][b]` = a * b.
pub static MUL: [[u8; 256]; 256] = build_mul();

/// a * b.
#[inline]
pub fn mul(a: u8, b: u8) -> u8 {
    MUL[a as usize][b as usize]
}

/// The multiplicative inverse; `inv(0)` is 0 (as ISA-L's `gf_inv`).
#[inline]
pub fn inv(a: u8) -> u8 {
    if a == 0 {
        0
    } else {
        EXP[255 - LOG[a as usize] as usize]
    }
}

/// a / b for b != 0 (0 when b is 0).
#[inline]
pub fn div(a: u8, b: u8) -> u8 {
    mul(a, inv(b))
}

/// a^n.
pub fn pow(a: u8, n: u32) -> u8 {
    if n == 0 {
        return 1;
    }
    if a == 0 {
        return 0;
    }
    EXP[((LOG[a as usize] as u32 * n) % 255) as usize]
}

/// Carry-less multiply then reduce: the slow, obviously correct definition.
pub fn mul_slow(mut a: u8, mut b: u8) -> u8 {
    let mut p: u8 = 0;
    while b != 0 {
        if b & 1 != 0 {
            p ^= a;
        }
        let carry = a & 0x80 != 0;
        a <<= 1;
        if carry {
            a ^= (POLY & 0xff) as u8;
        }
        b >>= 1;
    }
    p
}

/// The 8x8 bit matrix of "multiply by `c`", in the layout of the x86 `GF2P8AFFINEQB`
/// instruction: byte `7 - i` holds the row that produces output bit `i`.
pub fn affine_matrix(c: u8) -> u64 {
    let mut m = 0u64;
    for i in 0..8 {
        let mut row = 0u8;
        for j in 0..8 {
            if mul(c, 1 << j) & (1 << i) != 0 {
                row |= 1 << j;
            }
        }
        m |= (row as u64) << (8 * (7 - i));
    }
    m
}

/// `GF2P8AFFINEQB` of one byte with no constant: output bit `i` is the parity of
/// `x` ANDed with byte `7 - i` of `m`. With `m = affine_matrix(c)` it is `c * x`.
#[inline]
pub fn affine_apply(m: u64, x: u8) -> u8 {
    let mut y = 0u8;
    for i in 0..8 {
        let row = (m >> (8 * (7 - i))) as u8;
        y |= (((row & x).count_ones() & 1) as u8) << i;
    }
    y
}

/// The two 16-entry nibble tables of "multiply by `c`": `c * n` and `c * (n << 4)`.
pub fn nibble_tables(c: u8) -> [u8; 32] {
    let mut t = [0u8; 32];
    for n in 0..16u8 {
        t[n as usize] = mul(c, n);
        t[16 + n as usize] = mul(c, n << 4);
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_agree_with_the_definition() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                assert_eq!(mul(a, b), mul_slow(a, b));
            }
            if a != 0 {
                assert_eq!(mul(a, inv(a)), 1);
            }
        }
        assert_eq!(inv(0), 0);
        assert_eq!(pow(2, 8), 0x1d);
        assert_eq!(pow(3, 0), 1);
        assert_eq!(div(mul(7, 9), 9), 7);
    }

    #[test]
    fn affine_and_nibbles_multiply() {
        for c in [0u8, 1, 2, 0x1d, 0x8e, 0xff] {
            let m = affine_matrix(c);
            let t = nibble_tables(c);
            for x in 0..=255u8 {
                assert_eq!(affine_apply(m, x), mul(c, x));
                assert_eq!(t[(x & 15) as usize] ^ t[16 + (x >> 4) as usize], mul(c, x));
            }
        }
    }
}
