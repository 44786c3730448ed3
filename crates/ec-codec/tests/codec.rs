//! Encode / recover / update semantics: exhaustive erasure patterns, random patterns at
//! the maxima, Vandermonde singular patterns, updates equal to re-encoding.

use ec_codec::{CodecError, CodingMatrix, Decoder, Encoder, Updater, gf};

mod common;
use common::Rng;

struct Stripe {
    blocks: Vec<Vec<u8>>, // data then parity
}

fn encode(m: &CodingMatrix, len: usize, rng: &mut Rng) -> Stripe {
    let data: Vec<Vec<u8>> = (0..m.data_count()).map(|_| rng.bytes(len)).collect();
    let mut parity = vec![vec![0u8; len]; m.rdnc_count()];
    let enc = Encoder::new(m).unwrap();
    enc.encode(
        &data.iter().map(|b| &b[..]).collect::<Vec<_>>(),
        &mut parity.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>(),
    )
    .unwrap();
    let mut blocks = data;
    blocks.extend(parity);
    Stripe { blocks }
}

fn try_recover(m: &CodingMatrix, s: &Stripe, missing: &[usize]) -> Result<(), CodecError> {
    let dec = Decoder::new(m, missing)?;
    let len = s.blocks[0].len();
    // Survivors must be the first M present blocks, in index order.
    let expect: Vec<usize> = (0..s.blocks.len())
        .filter(|i| !missing.contains(i))
        .take(m.data_count())
        .collect();
    assert_eq!(dec.survivors(), &expect[..]);
    let ins: Vec<&[u8]> = dec.survivors().iter().map(|&i| &s.blocks[i][..]).collect();
    let mut out = vec![vec![0u8; len]; missing.len()];
    dec.recover(
        &ins,
        &mut out.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>(),
    )?;
    for (o, &i) in missing.iter().enumerate() {
        assert!(
            out[o] == s.blocks[i],
            "block {i} of pattern {missing:?} recovered wrong"
        );
    }
    Ok(())
}

fn for_each_pattern(n: usize, max: usize, f: &mut impl FnMut(&[usize])) {
    fn rec(
        start: usize,
        n: usize,
        left: usize,
        cur: &mut Vec<usize>,
        f: &mut impl FnMut(&[usize]),
    ) {
        if !cur.is_empty() {
            f(cur);
        }
        if left == 0 {
            return;
        }
        for i in start..n {
            cur.push(i);
            rec(i + 1, n, left - 1, cur, f);
            cur.pop();
        }
    }
    rec(0, n, max, &mut Vec::new(), f);
}

#[test]
fn cauchy_recovers_every_pattern() {
    let mut rng = Rng(42);
    for (m, k) in [(2, 2), (4, 2), (6, 3), (8, 4), (10, 4), (12, 4)] {
        let mat = CodingMatrix::cauchy(m, k).unwrap();
        let s = encode(&mat, 64, &mut rng);
        let mut count = 0;
        for_each_pattern(m + k, k, &mut |missing| {
            try_recover(&mat, &s, missing).unwrap();
            count += 1;
        });
        let expected: usize = (1..=k).map(|e| binom(m + k, e)).sum();
        assert_eq!(count, expected, "({m},{k})");
    }
}

#[test]
fn missing_order_is_output_order() {
    let mut rng = Rng(5);
    let mat = CodingMatrix::cauchy(6, 3).unwrap();
    let s = encode(&mat, 128, &mut rng);
    try_recover(&mat, &s, &[7, 2, 0]).unwrap();
    try_recover(&mat, &s, &[8, 6]).unwrap();
}

fn binom(n: usize, k: usize) -> usize {
    (0..k).fold(1, |acc, i| acc * (n - i) / (i + 1))
}

#[test]
fn random_patterns_at_the_maxima() {
    let mut rng = Rng(7);
    let mat = CodingMatrix::cauchy(128, 32).unwrap();
    let s = encode(&mat, 64, &mut rng);
    for round in 0..12 {
        let n = 1 + round % 32;
        let mut missing: Vec<usize> = Vec::new();
        while missing.len() < n.max(if round < 6 { 32 } else { 1 }) {
            let i = (rng.next() % 160) as usize;
            if !missing.contains(&i) {
                missing.push(i);
            }
        }
        try_recover(&mat, &s, &missing).unwrap();
    }
}

/// Rank over GF(2^8), by row echelon form (independent of the codec's inverse).
fn rank(mut a: Vec<Vec<u8>>) -> usize {
    let cols = a[0].len();
    let mut r = 0;
    for c in 0..cols {
        let Some(p) = (r..a.len()).find(|&i| a[i][c] != 0) else {
            continue;
        };
        a.swap(r, p);
        let inv = gf::inv(a[r][c]);
        let pivot = a[r].clone();
        for row in a.iter_mut().skip(r + 1) {
            let f = gf::mul(row[c], inv);
            for (x, p) in row.iter_mut().zip(&pivot) {
                *x ^= gf::mul(f, *p);
            }
        }
        r += 1;
    }
    r
}

#[test]
fn vandermonde_invertible_patterns_recover_and_singular_ones_error() {
    let mut rng = Rng(11);
    let mut singular = 0;
    let mut ok = 0;
    for (m, k) in [(4, 2), (6, 3), (10, 4), (12, 4), (20, 3), (30, 3)] {
        let mat = CodingMatrix::vandermonde(m, k).unwrap();
        let s = encode(&mat, 64, &mut rng);
        for_each_pattern(m + k, k, &mut |missing| {
            let survivors: Vec<usize> = (0..m + k)
                .filter(|i| !missing.contains(i))
                .take(m)
                .collect();
            let rows: Vec<Vec<u8>> = survivors
                .iter()
                .map(|&i| {
                    (0..m)
                        .map(|j| {
                            if i < m {
                                (i == j) as u8
                            } else {
                                mat.coef(i - m, j)
                            }
                        })
                        .collect()
                })
                .collect();
            let invertible = rank(rows) == m;
            match try_recover(&mat, &s, missing) {
                Ok(()) => {
                    assert!(invertible, "{missing:?} recovered but is singular");
                    ok += 1;
                }
                Err(CodecError::Singular { missing: named }) => {
                    assert!(!invertible, "{missing:?} is invertible but was refused");
                    assert_eq!(named, missing);
                    singular += 1;
                }
                Err(e) => panic!("unexpected error {e}"),
            }
        });
    }
    assert!(ok > 1000);
    assert!(
        singular > 0,
        "no singular Vandermonde pattern found in the shapes tried"
    );
    eprintln!("vandermonde: {ok} patterns recovered, {singular} singular patterns refused");
}

#[test]
fn update_equals_reencoding() {
    let mut rng = Rng(3);
    for (m, k, changed) in [
        (4, 2, vec![1]),
        (10, 4, vec![0, 9, 3]),
        (8, 4, (0..8).collect::<Vec<_>>()),
        (128, 32, vec![127, 5]),
    ] {
        let mat = CodingMatrix::cauchy(m, k).unwrap();
        let len = 128;
        let old = encode(&mat, len, &mut rng);
        let mut new_data: Vec<Vec<u8>> = old.blocks[..m].to_vec();
        for &i in &changed {
            new_data[i] = rng.bytes(len);
        }
        let mut want = vec![vec![0u8; len]; k];
        Encoder::new(&mat)
            .unwrap()
            .encode(
                &new_data.iter().map(|b| &b[..]).collect::<Vec<_>>(),
                &mut want.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>(),
            )
            .unwrap();
        let up = Updater::new(&mat, &changed).unwrap();
        let mut sources: Vec<&[u8]> = Vec::new();
        for &i in &changed {
            sources.push(&old.blocks[i]);
            sources.push(&new_data[i]);
        }
        for p in &old.blocks[m..] {
            sources.push(p);
        }
        let mut got = vec![vec![0u8; len]; k];
        up.update(
            &sources,
            &mut got.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>(),
        )
        .unwrap();
        assert!(got == want, "update of {changed:?} in ({m},{k})");
    }
    let mat = CodingMatrix::cauchy(4, 2).unwrap();
    assert!(Updater::new(&mat, &[]).is_err());
    assert!(Updater::new(&mat, &[4]).is_err());
    assert!(Updater::new(&mat, &[1, 1]).is_err());
}

#[test]
fn raw_matrix_round_trip() {
    let mut rng = Rng(9);
    let raw = rng.bytes(5 * 3);
    let mat = CodingMatrix::from_raw(&raw, 5, 3).unwrap();
    let s = encode(&mat, 64, &mut rng);
    // Check parity by the definition.
    for r in 0..3 {
        for i in 0..64 {
            let mut acc = 0;
            for j in 0..5 {
                acc ^= gf::mul(raw[j * 3 + r], s.blocks[j][i]);
            }
            assert_eq!(s.blocks[5 + r][i], acc);
        }
    }
    for_each_pattern(8, 3, &mut |missing| match try_recover(&mat, &s, missing) {
        Ok(()) | Err(CodecError::Singular { .. }) => {}
        Err(e) => panic!("{e}"),
    });
}
