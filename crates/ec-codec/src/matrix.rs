//! Coding matrices (Cauchy, Vandermonde, raw) and the matrices derived from them for
//! recovery and update.

use crate::error::{CodecError, Result};
use crate::gf;

/// Most data blocks.
pub const MAX_DATA: usize = 128;
/// Most redundancy blocks.
pub const MAX_RDNC: usize = 32;

/// How a coding matrix is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixKind {
    /// coefficient (r, j) = inv((M + r) XOR j): ISA-L's `gf_gen_cauchy1_matrix`.
    Cauchy,
    /// coefficient (r, j) = (j + 1)^r.
    Vandermonde,
    /// Caller-supplied coefficients.
    Raw,
}

/// Checks M and K against the limits (1..=128, 1..=32).
pub fn check_counts_pub(m: usize, k: usize) -> Result<()> {
    check_counts(m, k)
}

pub(crate) fn check_counts(m: usize, k: usize) -> Result<()> {
    if m == 0 || m > MAX_DATA {
        return Err(CodecError::Limit {
            what: "data block count",
            value: m,
            allowed: "1..=128",
        });
    }
    if k == 0 || k > MAX_RDNC {
        return Err(CodecError::Limit {
            what: "redundancy block count",
            value: k,
            allowed: "1..=32",
        });
    }
    Ok(())
}

/// A K x M coding matrix: redundancy block r = sum over j of coef(r, j) * data block j.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodingMatrix {
    kind: MatrixKind,
    m: usize,
    k: usize,
    /// Row-major, K rows of M.
    coefs: Vec<u8>,
}

impl CodingMatrix {
    /// Builds a matrix of `kind` for M data and K redundancy blocks (`Raw` is refused
    /// here: use [`from_raw`](CodingMatrix::from_raw)).
    pub fn new(kind: MatrixKind, m: usize, k: usize) -> Result<CodingMatrix> {
        match kind {
            MatrixKind::Cauchy => CodingMatrix::cauchy(m, k),
            MatrixKind::Vandermonde => CodingMatrix::vandermonde(m, k),
            MatrixKind::Raw => Err(CodecError::Invalid(
                "a raw matrix needs its coefficients: use from_raw".into(),
            )),
        }
    }

    /// The Cauchy matrix: the same coefficients as ISA-L's `gf_gen_cauchy1_matrix`.
    pub fn cauchy(m: usize, k: usize) -> Result<CodingMatrix> {
        check_counts(m, k)?;
        let mut coefs = Vec::with_capacity(k * m);
        for r in 0..k {
            for j in 0..m {
                coefs.push(gf::inv(((m + r) ^ j) as u8));
            }
        }
        Ok(CodingMatrix {
            kind: MatrixKind::Cauchy,
            m,
            k,
            coefs,
        })
    }

    /// The Vandermonde matrix of DOCA: coefficient (r, j) = (j + 1)^r.
    pub fn vandermonde(m: usize, k: usize) -> Result<CodingMatrix> {
        check_counts(m, k)?;
        let mut coefs = Vec::with_capacity(k * m);
        for r in 0..k {
            for j in 0..m {
                coefs.push(gf::pow((j + 1) as u8, r as u32));
            }
        }
        Ok(CodingMatrix {
            kind: MatrixKind::Vandermonde,
            m,
            k,
            coefs,
        })
    }

    /// A caller-supplied matrix in DOCA's raw layout: M rows (data blocks) of K
    /// coefficients (redundancy blocks), i.e. `raw[j * K + r]` = coef(r, j).
    pub fn from_raw(raw: &[u8], m: usize, k: usize) -> Result<CodingMatrix> {
        check_counts(m, k)?;
        if raw.len() != m * k {
            return Err(CodecError::Invalid(format!(
                "a raw {m} x {k} matrix needs {} bytes, got {}",
                m * k,
                raw.len()
            )));
        }
        let mut coefs = vec![0u8; k * m];
        for j in 0..m {
            for r in 0..k {
                coefs[r * m + j] = raw[j * k + r];
            }
        }
        Ok(CodingMatrix {
            kind: MatrixKind::Raw,
            m,
            k,
            coefs,
        })
    }

    /// How it was built.
    pub fn kind(&self) -> MatrixKind {
        self.kind
    }

    /// Data block count M.
    pub fn data_count(&self) -> usize {
        self.m
    }

    /// Redundancy block count K.
    pub fn rdnc_count(&self) -> usize {
        self.k
    }

    /// coef(r, j).
    pub fn coef(&self, r: usize, j: usize) -> u8 {
        self.coefs[r * self.m + j]
    }

    /// The K x M coefficients, row-major.
    pub fn coefs(&self) -> &[u8] {
        &self.coefs
    }

    /// Row `i` of the full (M + K) x M generator: identity for data rows, coding rows
    /// after.
    fn generator_row(&self, i: usize, out: &mut [u8]) {
        if i < self.m {
            out.fill(0);
            out[i] = 1;
        } else {
            out.copy_from_slice(&self.coefs[(i - self.m) * self.m..(i - self.m + 1) * self.m]);
        }
    }

    /// The recovery plan for the blocks in `missing` (indices 0..M+K, data first, in the
    /// order the outputs are wanted): which M surviving blocks to read (the first M in
    /// index order) and the `missing.len()` x M matrix that rebuilds the missing blocks
    /// from them.
    pub fn recover(&self, missing: &[usize]) -> Result<RecoverMatrix> {
        let (m, k) = (self.m, self.k);
        if missing.is_empty() {
            return Err(CodecError::Invalid(
                "no missing block given to recover".into(),
            ));
        }
        if missing.len() > k {
            return Err(CodecError::Invalid(format!(
                "{} blocks are missing ({missing:?}) but at most {k} can be recovered with {k} redundancy blocks",
                missing.len()
            )));
        }
        let mut seen = vec![false; m + k];
        for &i in missing {
            if i >= m + k {
                return Err(CodecError::Invalid(format!(
                    "missing block index {i} is out of range (0..{} for {m} data + {k} redundancy blocks)",
                    m + k
                )));
            }
            if seen[i] {
                return Err(CodecError::Invalid(format!(
                    "missing block index {i} is listed twice"
                )));
            }
            seen[i] = true;
        }
        let survivors: Vec<usize> = (0..m + k).filter(|i| !seen[*i]).take(m).collect();
        // Square matrix of the survivors' generator rows.
        let mut a = vec![0u8; m * m];
        for (row, &s) in survivors.iter().enumerate() {
            self.generator_row(s, &mut a[row * m..(row + 1) * m]);
        }
        let inv = invert(&a, m).ok_or_else(|| CodecError::Singular {
            missing: missing.to_vec(),
        })?;
        // data = inv * survivors; a missing row i = generator_row(i) * inv.
        let mut rows = vec![0u8; missing.len() * m];
        let mut g = vec![0u8; m];
        for (o, &i) in missing.iter().enumerate() {
            let out = &mut rows[o * m..(o + 1) * m];
            if i < m {
                out.copy_from_slice(&inv[i * m..(i + 1) * m]);
            } else {
                self.generator_row(i, &mut g);
                for (c, oc) in out.iter_mut().enumerate() {
                    let mut acc = 0u8;
                    for (t, gt) in g.iter().enumerate() {
                        acc ^= gf::mul(*gt, inv[t * m + c]);
                    }
                    *oc = acc;
                }
            }
        }
        Ok(RecoverMatrix {
            missing: missing.to_vec(),
            survivors,
            rows,
            m,
        })
    }

    /// The update plan for the data blocks in `changed`: a K x (2u + K) matrix over the
    /// sources `old_1, new_1, ..., old_u, new_u, parity_0, ..., parity_{K-1}` giving the
    /// new parity: `parity_r + sum coef(r, i) * (old_i + new_i)`.
    pub fn update(&self, changed: &[usize]) -> Result<UpdateMatrix> {
        let (m, k) = (self.m, self.k);
        if changed.is_empty() || changed.len() > m {
            return Err(CodecError::Limit {
                what: "updated block count",
                value: changed.len(),
                allowed: "1..=M",
            });
        }
        let mut seen = vec![false; m];
        for &i in changed {
            if i >= m {
                return Err(CodecError::Invalid(format!(
                    "updated block index {i} is out of range (0..{m})"
                )));
            }
            if seen[i] {
                return Err(CodecError::Invalid(format!(
                    "updated block index {i} is listed twice"
                )));
            }
            seen[i] = true;
        }
        let cols = 2 * changed.len() + k;
        let mut rows = vec![0u8; k * cols];
        for r in 0..k {
            let row = &mut rows[r * cols..(r + 1) * cols];
            for (u, &i) in changed.iter().enumerate() {
                row[2 * u] = self.coef(r, i);
                row[2 * u + 1] = self.coef(r, i);
            }
            row[2 * changed.len() + r] = 1;
        }
        Ok(UpdateMatrix {
            changed: changed.to_vec(),
            rows,
            cols,
        })
    }
}

/// Rebuilds missing blocks from M survivors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoverMatrix {
    /// Missing block indices, in output order.
    pub missing: Vec<usize>,
    /// The M surviving block indices to read, in input order.
    pub survivors: Vec<usize>,
    /// missing.len() x M, row-major.
    pub rows: Vec<u8>,
    m: usize,
}

impl RecoverMatrix {
    /// Input count (M).
    pub fn cols(&self) -> usize {
        self.m
    }
}

/// Computes new parity from changed data blocks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdateMatrix {
    /// The changed data block indices, in source order.
    pub changed: Vec<usize>,
    /// K x cols, row-major.
    pub rows: Vec<u8>,
    /// 2 * changed.len() + K.
    pub cols: usize,
}

/// Inverts an n x n matrix by Gauss-Jordan elimination; `None` when singular.
pub fn invert(a: &[u8], n: usize) -> Option<Vec<u8>> {
    let mut a = a.to_vec();
    let mut b = vec![0u8; n * n];
    invert_in_place(&mut a, &mut b, n).then_some(b)
}

/// Inverts the n x n matrix `a` into `b` by Gauss-Jordan elimination, reducing `a` to
/// the identity on the way, step for step as ISA-L's `gf_invert_matrix` does (the pivot
/// of a column is the first nonzero entry at or below the diagonal). Returns `false` when
/// `a` is singular; both matrices then hold the elimination's state at that column.
///
/// # Panics
/// If either matrix holds fewer than `n * n` entries.
pub fn invert_in_place(a: &mut [u8], b: &mut [u8], n: usize) -> bool {
    let (a, b) = (&mut a[..n * n], &mut b[..n * n]);
    b.fill(0);
    for i in 0..n {
        b[i * n + i] = 1;
    }
    for col in 0..n {
        let Some(pivot) = (col..n).find(|&r| a[r * n + col] != 0) else {
            return false;
        };
        if pivot != col {
            for c in 0..n {
                a.swap(pivot * n + c, col * n + c);
                b.swap(pivot * n + c, col * n + c);
            }
        }
        let p = gf::inv(a[col * n + col]);
        for c in 0..n {
            a[col * n + c] = gf::mul(a[col * n + c], p);
            b[col * n + c] = gf::mul(b[col * n + c], p);
        }
        for r in 0..n {
            if r != col {
                let f = a[r * n + col];
                if f != 0 {
                    for c in 0..n {
                        a[r * n + c] ^= gf::mul(f, a[col * n + c]);
                        b[r * n + c] ^= gf::mul(f, b[col * n + c]);
                    }
                }
            }
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cauchy_matches_isal_definition() {
        let c = CodingMatrix::cauchy(10, 4).unwrap();
        for r in 0..4 {
            for j in 0..10 {
                assert_eq!(c.coef(r, j), gf::inv(((10 + r) ^ j) as u8));
            }
        }
    }

    #[test]
    fn vandermonde_first_row_is_xor() {
        let v = CodingMatrix::vandermonde(6, 3).unwrap();
        assert!((0..6).all(|j| v.coef(0, j) == 1));
        assert_eq!(v.coef(1, 2), 3);
        assert_eq!(v.coef(2, 2), gf::mul(3, 3));
    }

    #[test]
    fn limits_are_named() {
        let e = CodingMatrix::cauchy(0, 2).unwrap_err();
        assert!(e.to_string().contains("data block count is 0"));
        let e = CodingMatrix::cauchy(129, 2).unwrap_err();
        assert!(e.to_string().contains("1..=128"));
        let e = CodingMatrix::vandermonde(4, 33).unwrap_err();
        assert!(e.to_string().contains("redundancy block count is 33"));
        assert!(CodingMatrix::from_raw(&[1, 2, 3], 2, 2).is_err());
    }

    #[test]
    fn raw_layout_is_data_major() {
        // 2 data x 3 redundancy: raw[j * 3 + r].
        let raw = [1, 2, 3, 4, 5, 6];
        let c = CodingMatrix::from_raw(&raw, 2, 3).unwrap();
        assert_eq!(c.coef(0, 0), 1);
        assert_eq!(c.coef(2, 0), 3);
        assert_eq!(c.coef(0, 1), 4);
        assert_eq!(c.coef(2, 1), 6);
    }

    #[test]
    fn inverse_times_matrix_is_identity() {
        let c = CodingMatrix::cauchy(5, 5).unwrap();
        let inv = invert(c.coefs(), 5).unwrap();
        for i in 0..5 {
            for j in 0..5 {
                let mut acc = 0;
                for t in 0..5 {
                    acc ^= gf::mul(c.coefs()[i * 5 + t], inv[t * 5 + j]);
                }
                assert_eq!(acc, (i == j) as u8);
            }
        }
        assert!(invert(&[1, 1, 1, 1], 2).is_none());
    }

    #[test]
    fn recover_rejects_bad_patterns() {
        let c = CodingMatrix::cauchy(4, 2).unwrap();
        assert!(c.recover(&[]).is_err());
        assert!(
            c.recover(&[0, 1, 2])
                .unwrap_err()
                .to_string()
                .contains("at most 2")
        );
        assert!(c.recover(&[6]).is_err());
        assert!(c.recover(&[1, 1]).is_err());
    }
}
