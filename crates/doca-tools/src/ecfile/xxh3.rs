//! XXH3 with seed 0 and the default secret, streaming, giving the 64-bit and the 128-bit
//! digest from one state (the manifest's block checksums and content digest are both
//! taken from the same pass over a block). x86-64 only: other CPUs use `xxhash_rust`'s.
//!
//! The checksum pass reads every byte of a recover or an encode, on the thread that also
//! reads and decodes, so its speed is the tool's. `xxhash_rust` picks its vector code
//! when it is compiled, which for a portable x86-64 build is SSE2; here the long-input
//! loop (8 lanes of 64 bits: a 32x32-bit multiply and two adds a lane per 64-byte stripe,
//! a scramble every 1 KiB) runs in AVX2 where the CPU has it (AVX-512 CPUs included),
//! chosen at run time (about twice SSE2's speed on an AMD EPYC Zen 3), and in SSE2
//! elsewhere. Inputs of up to 240 bytes, which XXH3 hashes with other formulas, go to
//! `xxhash_rust`. Results equal `xxhash_rust`'s at every length and split (tests).

use xxhash_rust::const_xxh3::const_custom_default_secret;

/// XXH3's default secret (the seeded secret of seed 0 is the default one).
const SECRET: [u8; 192] = const_custom_default_secret(0);
const STRIPE: usize = 64;
/// Stripes between scrambles: each stripe moves 8 bytes further into the secret.
const PER_BLOCK: usize = (SECRET.len() - STRIPE) / 8;
/// Where the scramble's, the last stripe's and the two merges' keys begin.
const SCRAMBLE_AT: usize = SECRET.len() - STRIPE;
const LAST_AT: usize = SECRET.len() - STRIPE - 7;
const MERGE_LOW_AT: usize = 11;
const MERGE_HIGH_AT: usize = SECRET.len() - STRIPE - 11;
/// Up to this many bytes XXH3 uses its short-input formulas.
const SHORT_MAX: u64 = 240;
/// Bytes held back: a digest needs the last stripe of the input whole.
const HELD: usize = 256;

const P32_1: u64 = 0x9E37_79B1;
const P32_2: u64 = 0x85EB_CA77;
const P32_3: u64 = 0xC2B2_AE3D;
const P64_1: u64 = 0x9E37_79B1_85EB_CA87;
const P64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const P64_3: u64 = 0x1656_67B1_9E37_79F9;
const P64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const P64_5: u64 = 0x27D4_EB2F_1656_67C5;
const START: [u64; 8] = [P32_3, P64_1, P64_2, P64_3, P64_4, P32_2, P64_5, P32_1];

/// A streaming XXH3 hash of seed 0.
#[derive(Clone)]
pub struct Xxh3 {
    acc: [u64; 8],
    /// Stripes taken since the last scramble.
    stripes: usize,
    total: u64,
    /// Input not yet taken into `acc` (1 to 256 bytes once anything came in; all of it
    /// while the input is short).
    held: [u8; HELD],
    held_len: usize,
    /// The last 64 bytes taken into `acc`.
    last: [u8; STRIPE],
}

impl Default for Xxh3 {
    fn default() -> Self {
        Xxh3::new()
    }
}

impl std::fmt::Debug for Xxh3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Xxh3").field("len", &self.total).finish()
    }
}

impl Xxh3 {
    /// An empty hash.
    pub fn new() -> Xxh3 {
        Xxh3 {
            acc: START,
            stripes: 0,
            total: 0,
            held: [0; HELD],
            held_len: 0,
            last: [0; STRIPE],
        }
    }

    /// The next bytes.
    pub fn update(&mut self, mut input: &[u8]) {
        self.total += input.len() as u64;
        if self.held_len + input.len() <= HELD {
            self.held[self.held_len..self.held_len + input.len()].copy_from_slice(input);
            self.held_len += input.len();
            return;
        }
        // More input follows whatever is taken below: stripes are taken into `acc` only
        // when at least one byte comes after them, as XXH3's one-shot form takes them.
        if self.held_len > 0 {
            let fill = HELD - self.held_len;
            self.held[self.held_len..].copy_from_slice(&input[..fill]);
            input = &input[fill..];
            let held = self.held;
            consume(&mut self.acc, &mut self.stripes, &held);
            self.last.copy_from_slice(&held[HELD - STRIPE..]);
            self.held_len = 0;
        }
        if input.len() > HELD {
            let n = (input.len() - 1) / STRIPE * STRIPE;
            consume(&mut self.acc, &mut self.stripes, &input[..n]);
            self.last.copy_from_slice(&input[n - STRIPE..n]);
            input = &input[n..];
        }
        self.held[..input.len()].copy_from_slice(input);
        self.held_len = input.len();
    }

    /// The accumulators after the whole input (long inputs).
    fn finished(&self) -> [u64; 8] {
        let mut acc = self.acc;
        let mut stripes = self.stripes;
        let held = &self.held[..self.held_len];
        let whole = (held.len() - 1) / STRIPE * STRIPE;
        consume(&mut acc, &mut stripes, &held[..whole]);
        let mut stripe = [0u8; STRIPE];
        if held.len() >= STRIPE {
            stripe.copy_from_slice(&held[held.len() - STRIPE..]);
        } else {
            let from_last = STRIPE - held.len();
            stripe[..from_last].copy_from_slice(&self.last[held.len()..]);
            stripe[from_last..].copy_from_slice(held);
        }
        accumulate_scalar(&mut acc, &stripe, &SECRET[LAST_AT..LAST_AT + STRIPE]);
        acc
    }

    /// The 64-bit digest.
    pub fn digest(&self) -> u64 {
        if self.total <= SHORT_MAX {
            return xxhash_rust::xxh3::xxh3_64(&self.held[..self.held_len]);
        }
        merge(
            &self.finished(),
            MERGE_LOW_AT,
            self.total.wrapping_mul(P64_1),
        )
    }

    /// The 128-bit digest.
    pub fn digest128(&self) -> u128 {
        if self.total <= SHORT_MAX {
            return xxhash_rust::xxh3::xxh3_128(&self.held[..self.held_len]);
        }
        let acc = self.finished();
        let low = merge(&acc, MERGE_LOW_AT, self.total.wrapping_mul(P64_1));
        let high = merge(&acc, MERGE_HIGH_AT, !self.total.wrapping_mul(P64_2));
        (u128::from(high) << 64) | u128::from(low)
    }
}

fn read64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

fn merge(acc: &[u64; 8], at: usize, start: u64) -> u64 {
    let mut r = start;
    for i in 0..4 {
        let s = at + 16 * i;
        let a = acc[2 * i] ^ read64(&SECRET, s);
        let b = acc[2 * i + 1] ^ read64(&SECRET, s + 8);
        let p = u128::from(a) * u128::from(b);
        r = r.wrapping_add((p as u64) ^ ((p >> 64) as u64));
    }
    r ^= r >> 37;
    r = r.wrapping_mul(0x1656_6791_9E37_79F9);
    r ^ (r >> 32)
}

fn accumulate_scalar(acc: &mut [u64; 8], stripe: &[u8], key: &[u8]) {
    for i in 0..8 {
        let d = read64(stripe, 8 * i);
        let k = d ^ read64(key, 8 * i);
        acc[i ^ 1] = acc[i ^ 1].wrapping_add(d);
        acc[i] = acc[i].wrapping_add((k & 0xFFFF_FFFF) * (k >> 32));
    }
}

#[cfg(test)]
fn scramble_scalar(acc: &mut [u64; 8]) {
    for (i, a) in acc.iter_mut().enumerate() {
        let mut v = *a;
        v ^= v >> 47;
        v ^= read64(&SECRET, SCRAMBLE_AT + 8 * i);
        *a = v.wrapping_mul(P32_1);
    }
}

/// Portable code: whole stripes of `data` into `acc`, scrambling after every block (the
/// vector code's reference).
#[cfg(test)]
fn consume_scalar(acc: &mut [u64; 8], stripes: &mut usize, data: &[u8]) {
    for stripe in data.chunks_exact(STRIPE) {
        accumulate_scalar(acc, stripe, &SECRET[*stripes * 8..*stripes * 8 + STRIPE]);
        *stripes += 1;
        if *stripes == PER_BLOCK {
            scramble_scalar(acc);
            *stripes = 0;
        }
    }
}

/// Whole stripes of `data` (a multiple of 64 bytes) into `acc`, each followed by more
/// input, on the best code this CPU runs.
fn consume(acc: &mut [u64; 8], stripes: &mut usize, data: &[u8]) {
    debug_assert_eq!(data.len() % STRIPE, 0);
    match x86::kind() {
        // SAFETY: `kind` answers Avx2 only where the CPU has AVX2.
        x86::Kind::Avx2 => unsafe { x86::consume_avx2(acc, stripes, data) },
        x86::Kind::Sse2 => x86::consume_sse2(acc, stripes, data),
    }
}

mod x86 {
    use super::{P32_1, PER_BLOCK, SCRAMBLE_AT, SECRET, STRIPE};
    use std::arch::x86_64::*;

    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    pub(super) enum Kind {
        Sse2,
        Avx2,
    }

    /// The vector code of the erasure-coding kernel in force (`DOCA_EC_ISA` holds both
    /// to the same class of CPU): AVX2 with the vector kernels, SSE2 (part of every
    /// x86-64 CPU) with the table kernels. Both answers are kept where they are made
    /// (the codec decides once, the standard library caches the CPU's features).
    pub(super) fn kind() -> Kind {
        use ec_codec::Isa;
        match ec_codec::dispatch::selected() {
            Isa::Avx512 | Isa::Gfni512 | Isa::Avx2 | Isa::Gfni256
                if is_x86_feature_detected!("avx2") =>
            {
                Kind::Avx2
            }
            _ => Kind::Sse2,
        }
    }

    /// SSE2, which every x86-64 CPU has.
    pub(super) fn consume_sse2(acc: &mut [u64; 8], stripes: &mut usize, data: &[u8]) {
        // SAFETY: SSE2 is part of x86-64; unaligned loads and stores of 16 bytes inside
        // `acc` (64 bytes), each stripe of `data` (64 bytes) and the secret (a key of 64
        // bytes starts at most at byte 128 of 192).
        unsafe {
            let prime = _mm_set1_epi32(P32_1 as i32);
            let key = SECRET.as_ptr();
            let mut a = [_mm_setzero_si128(); 4];
            for (q, a) in a.iter_mut().enumerate() {
                *a = _mm_loadu_si128(acc.as_ptr().add(2 * q).cast());
            }
            let mut s = *stripes;
            for stripe in data.chunks_exact(STRIPE) {
                for (q, a) in a.iter_mut().enumerate() {
                    let d = _mm_loadu_si128(stripe.as_ptr().add(16 * q).cast());
                    let k = _mm_xor_si128(d, _mm_loadu_si128(key.add(s * 8 + 16 * q).cast()));
                    let p = _mm_mul_epu32(k, _mm_srli_epi64::<32>(k));
                    let swapped = _mm_shuffle_epi32::<0x4E>(d);
                    *a = _mm_add_epi64(*a, _mm_add_epi64(swapped, p));
                }
                s += 1;
                if s == PER_BLOCK {
                    for (q, a) in a.iter_mut().enumerate() {
                        let mut v = _mm_xor_si128(*a, _mm_srli_epi64::<47>(*a));
                        v = _mm_xor_si128(v, _mm_loadu_si128(key.add(SCRAMBLE_AT + 16 * q).cast()));
                        let lo = _mm_mul_epu32(v, prime);
                        let hi = _mm_mul_epu32(_mm_srli_epi64::<32>(v), prime);
                        *a = _mm_add_epi64(lo, _mm_slli_epi64::<32>(hi));
                    }
                    s = 0;
                }
            }
            for (q, a) in a.iter().enumerate() {
                _mm_storeu_si128(acc.as_mut_ptr().add(2 * q).cast(), *a);
            }
            *stripes = s;
        }
    }

    /// # Safety
    ///
    /// The CPU has AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn consume_avx2(acc: &mut [u64; 8], stripes: &mut usize, data: &[u8]) {
        let prime = _mm256_set1_epi32(P32_1 as i32);
        // SAFETY: unaligned loads and stores of 32 bytes inside `acc` (64 bytes), each
        // stripe of `data` (64 bytes) and the secret (a key of 64 bytes starts at most
        // at byte 128 of 192).
        unsafe {
            let key = SECRET.as_ptr();
            let mut a = [
                _mm256_loadu_si256(acc.as_ptr().cast()),
                _mm256_loadu_si256(acc.as_ptr().add(4).cast()),
            ];
            let mut s = *stripes;
            for stripe in data.chunks_exact(STRIPE) {
                for (h, a) in a.iter_mut().enumerate() {
                    let d = _mm256_loadu_si256(stripe.as_ptr().add(32 * h).cast());
                    let k = _mm256_xor_si256(d, _mm256_loadu_si256(key.add(s * 8 + 32 * h).cast()));
                    let p = _mm256_mul_epu32(k, _mm256_srli_epi64::<32>(k));
                    let swapped = _mm256_shuffle_epi32::<0x4E>(d);
                    *a = _mm256_add_epi64(*a, _mm256_add_epi64(swapped, p));
                }
                s += 1;
                if s == PER_BLOCK {
                    for (h, a) in a.iter_mut().enumerate() {
                        let mut v = _mm256_xor_si256(*a, _mm256_srli_epi64::<47>(*a));
                        v = _mm256_xor_si256(
                            v,
                            _mm256_loadu_si256(key.add(SCRAMBLE_AT + 32 * h).cast()),
                        );
                        let lo = _mm256_mul_epu32(v, prime);
                        let hi = _mm256_mul_epu32(_mm256_srli_epi64::<32>(v), prime);
                        *a = _mm256_add_epi64(lo, _mm256_slli_epi64::<32>(hi));
                    }
                    s = 0;
                }
            }
            _mm256_storeu_si256(acc.as_mut_ptr().cast(), a[0]);
            _mm256_storeu_si256(acc.as_mut_ptr().add(4).cast(), a[1]);
            *stripes = s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(n: usize) -> Vec<u8> {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    fn check(data: &[u8], split: &[usize]) {
        let mut h = Xxh3::new();
        let mut rest = data;
        for &n in split {
            let n = n.min(rest.len());
            h.update(&rest[..n]);
            rest = &rest[n..];
        }
        h.update(rest);
        assert_eq!(
            h.digest(),
            xxhash_rust::xxh3::xxh3_64(data),
            "64 bits, length {}, split {split:?}",
            data.len()
        );
        assert_eq!(
            h.digest128(),
            xxhash_rust::xxh3::xxh3_128(data),
            "128 bits, length {}, split {split:?}",
            data.len()
        );
    }

    #[test]
    fn equals_xxhash_rust_at_every_length_and_split() {
        let data = noise(8192);
        for len in (0..2200).chain([4095, 4096, 4097, 8191, 8192]) {
            let d = &data[..len];
            check(d, &[]);
            for first in [1, 63, 64, 65, 255, 256, 257, 1023, 1024, 1025] {
                check(d, &[first]);
                check(d, &[first, 64, 1, 300]);
            }
        }
    }

    #[test]
    fn long_inputs_in_uneven_pieces() {
        let data = noise(3 << 20);
        let mut h = Xxh3::new();
        let mut x = &data[..];
        let mut n = 1usize;
        while !x.is_empty() {
            let k = n.min(x.len());
            h.update(&x[..k]);
            x = &x[k..];
            n = (n * 7 + 13) % 300_000;
        }
        assert_eq!(h.digest(), xxhash_rust::xxh3::xxh3_64(&data));
        assert_eq!(h.digest128(), xxhash_rust::xxh3::xxh3_128(&data));
    }

    #[test]
    fn every_kernel_agrees_with_the_portable_code() {
        let data = noise(64 * 100);
        for start in [0, 5, 15] {
            let mut acc = START;
            let mut s = start;
            consume_scalar(&mut acc, &mut s, &data);
            let (mut a, mut t) = (START, start);
            x86::consume_sse2(&mut a, &mut t, &data);
            assert_eq!((a, t), (acc, s), "SSE2 from stripe {start}");
            if std::arch::is_x86_feature_detected!("avx2") {
                let (mut a, mut t) = (START, start);
                // SAFETY: the CPU has AVX2.
                unsafe { x86::consume_avx2(&mut a, &mut t, &data) };
                assert_eq!((a, t), (acc, s), "AVX2 from stripe {start}");
            }
        }
    }
}
