//! Which losses a coding matrix can undo.
//!
//! A set of surviving blocks rebuilds the file exactly when M of their generator rows
//! (unit rows for data blocks, coefficient rows for redundancy blocks) are linearly
//! independent. Cauchy matrices (the default) always have that for any M survivors;
//! Vandermonde matrices do not, for some shapes: some losses of K blocks, and sometimes a
//! choice of M survivors among more, cannot be inverted.

use doca_ec::MatrixType;
use ec_codec::gf;
use ec_codec::{CodingMatrix, MatrixKind};

fn coding(kind: MatrixType, data: usize, rdnc: usize) -> Option<CodingMatrix> {
    let kind = match kind {
        MatrixType::Cauchy => MatrixKind::Cauchy,
        MatrixType::Vandermonde => MatrixKind::Vandermonde,
    };
    CodingMatrix::new(kind, data, rdnc).ok()
}

/// Block `i`'s generator row.
fn row(c: &CodingMatrix, data: usize, i: usize) -> Vec<u8> {
    if i < data {
        let mut r = vec![0u8; data];
        r[i] = 1;
        r
    } else {
        (0..data).map(|j| c.coef(i - data, j)).collect()
    }
}

/// M blocks among `present` (tried in the order given) whose rows are independent, or
/// `None` when the present blocks cannot rebuild the file.
pub fn independent_survivors(
    kind: MatrixType,
    data: usize,
    rdnc: usize,
    present: &[usize],
) -> Option<Vec<usize>> {
    let c = coding(kind, data, rdnc)?;
    // Reduced rows of the basis so far, each with its pivot column.
    let mut basis: Vec<(usize, Vec<u8>)> = Vec::with_capacity(data);
    let mut chosen = Vec::with_capacity(data);
    for &i in present {
        let mut r = row(&c, data, i);
        for (p, b) in &basis {
            let f = r[*p];
            if f != 0 {
                for (x, y) in r.iter_mut().zip(b) {
                    *x ^= gf::mul(f, *y);
                }
            }
        }
        if let Some(p) = r.iter().position(|&x| x != 0) {
            let inv = gf::inv(r[p]);
            for x in r.iter_mut() {
                *x = gf::mul(*x, inv);
            }
            basis.push((p, r));
            chosen.push(i);
            if chosen.len() == data {
                return Some(chosen);
            }
        }
    }
    None
}

/// Whether the square matrix `a` (n x n, row-major) is invertible over GF(2^8).
fn invertible(mut a: Vec<u8>, n: usize) -> bool {
    for col in 0..n {
        let Some(p) = (col..n).find(|&r| a[r * n + col] != 0) else {
            return false;
        };
        if p != col {
            for j in 0..n {
                a.swap(p * n + j, col * n + j);
            }
        }
        let inv = gf::inv(a[col * n + col]);
        for r in col + 1..n {
            let f = gf::mul(a[r * n + col], inv);
            if f != 0 {
                for j in col..n {
                    let v = gf::mul(f, a[col * n + j]);
                    a[r * n + j] ^= v;
                }
            }
        }
    }
    true
}

/// Loss patterns of exactly K blocks the shape cannot undo, and how many there are in
/// all (`C(M + K, K)`), when at most `budget` patterns are to be tried; `None` for a
/// larger shape. Cauchy matrices are never short of any.
pub fn unrecoverable_losses(
    kind: MatrixType,
    data: usize,
    rdnc: usize,
    budget: u64,
) -> Option<(u64, u64)> {
    // C(M + K, K) (each step exact; too large for 64 bits is past any budget).
    let mut total: u64 = 1;
    for i in 0..rdnc as u64 {
        total = total.checked_mul(data as u64 + rdnc as u64 - i)? / (i + 1);
    }
    if total > budget {
        return None;
    }
    if kind == MatrixType::Cauchy {
        return Some((0, total));
    }
    let c = coding(kind, data, rdnc)?;
    // A loss of j data blocks (columns D) and K - j redundancy blocks leaves j
    // redundancy rows S: it is undone exactly when the j x j minor (S, D) is invertible.
    let mut bad = 0u64;
    for j in 1..=rdnc.min(data) {
        for rows in combinations(rdnc, j) {
            for cols in combinations(data, j) {
                let mut a = Vec::with_capacity(j * j);
                for &r in &rows {
                    for &col in &cols {
                        a.push(c.coef(r, col));
                    }
                }
                if !invertible(a, j) {
                    bad += 1;
                }
            }
        }
    }
    Some((bad, total))
}

/// Every k-subset of 0..n, in lexicographic order.
fn combinations(n: usize, k: usize) -> impl Iterator<Item = Vec<usize>> {
    let mut cur: Option<Vec<usize>> = (k <= n).then(|| (0..k).collect());
    std::iter::from_fn(move || {
        let out = cur.clone()?;
        let c = cur.as_mut()?;
        let mut i = k;
        loop {
            if i == 0 {
                cur = None;
                break;
            }
            i -= 1;
            if c[i] < n - k + i {
                c[i] += 1;
                for t in i + 1..k {
                    c[t] = c[t - 1] + 1;
                }
                break;
            }
        }
        Some(out)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vandermonde_shapes_known_to_fall_short() {
        // The counts a brute-force search over the codec's recover plans found.
        for (m, k, bad, total) in [(4, 4, 1, 70), (10, 4, 12, 1001)] {
            assert_eq!(
                unrecoverable_losses(MatrixType::Vandermonde, m, k, 1 << 20),
                Some((bad, total)),
                "{m}+{k}"
            );
        }
        assert_eq!(
            unrecoverable_losses(MatrixType::Cauchy, 10, 4, 1 << 20),
            Some((0, 1001))
        );
        assert_eq!(
            unrecoverable_losses(MatrixType::Vandermonde, 128, 32, 1 << 20),
            None
        );
    }

    #[test]
    fn the_survivors_found_agree_with_the_codec() {
        // Every loss of K blocks at 4+4: recoverable exactly when the codec inverts it.
        let c = CodingMatrix::new(MatrixKind::Vandermonde, 4, 4).unwrap();
        let mut bad = 0;
        for lost in combinations(8, 4) {
            let present: Vec<usize> = (0..8).filter(|i| !lost.contains(i)).collect();
            let ours = independent_survivors(MatrixType::Vandermonde, 4, 4, &present);
            assert_eq!(ours.is_some(), c.recover(&lost).is_ok(), "{lost:?}");
            bad += usize::from(ours.is_none());
        }
        assert_eq!(bad, 1);
        assert_eq!(combinations(5, 2).count(), 10);
        assert_eq!(combinations(3, 0).count(), 1);
    }
}
