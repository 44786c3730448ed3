//! Reed-Solomon erasure coding over GF(2^8) (polynomial 0x11D), the codec behind the
//! DOCA Erasure Coding library. No DOCA types: matrices, block operations and kernels.
//!
//! ```
//! use ec_codec::{CodingMatrix, Encoder, Decoder};
//!
//! let m = CodingMatrix::cauchy(4, 2)?;
//! let data: Vec<Vec<u8>> = (0..4).map(|i| vec![i as u8 + 1; 4096]).collect();
//! let mut parity = vec![vec![0u8; 4096]; 2];
//! let enc = Encoder::new(&m)?;
//! enc.encode(&data.iter().map(|b| &b[..]).collect::<Vec<_>>(),
//!            &mut parity.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>())?;
//!
//! // Lose data blocks 1 and 3; rebuild them from blocks 0, 2, 4 (parity 0), 5 (parity 1).
//! let dec = Decoder::new(&m, &[1, 3])?;
//! assert_eq!(dec.survivors(), &[0, 2, 4, 5]);
//! let survivors = [&data[0][..], &data[2][..], &parity[0][..], &parity[1][..]];
//! let mut rebuilt = vec![vec![0u8; 4096]; 2];
//! dec.recover(&survivors, &mut rebuilt.iter_mut().map(|b| &mut b[..]).collect::<Vec<_>>())?;
//! assert_eq!(rebuilt[0], data[1]);
//! assert_eq!(rebuilt[1], data[3]);
//! # Ok::<(), ec_codec::CodecError>(())
//! ```

pub mod dispatch;
pub mod error;
pub mod gf;
pub mod kernels;
pub mod matrix;
mod pool;

/// Runs `f(0) .. f(n - 1)` on the calling thread and up to `threads - 1` of the codec's
/// helper threads (the ones its parallel block operations use: started on first use
/// and kept, parked, for later calls); returns once every piece ran. A panic in a
/// piece is raised here once all are done.
pub fn parallel(threads: usize, n: usize, f: &(dyn Fn(usize) + Sync)) {
    pool::run(threads, n, f)
}
pub mod tables;

pub use dispatch::Isa;
pub use error::{CodecError, Result};
pub use kernels::{GfMatrix, MAX_BLOCK, MIN_BLOCK, check_block_len};
pub use matrix::{CodingMatrix, MAX_DATA, MAX_RDNC, MatrixKind, RecoverMatrix, UpdateMatrix};

/// Computes the K redundancy blocks of M data blocks.
#[derive(Debug, Clone)]
pub struct Encoder {
    gf: GfMatrix,
}

impl Encoder {
    /// Prepares the coding matrix.
    pub fn new(m: &CodingMatrix) -> Result<Encoder> {
        Ok(Encoder {
            gf: GfMatrix::new(m.rdnc_count(), m.data_count(), m.coefs())?,
        })
    }

    /// The prepared multiplication.
    pub fn matrix(&self) -> &GfMatrix {
        &self.gf
    }

    /// Same encoder on another kernel (`None` if the CPU cannot run it).
    pub fn with_isa(self, isa: Isa) -> Option<Encoder> {
        Some(Encoder {
            gf: self.gf.with_isa(isa)?,
        })
    }

    /// M data blocks in, K redundancy blocks out.
    pub fn encode(&self, data: &[&[u8]], parity: &mut [&mut [u8]]) -> Result<()> {
        self.gf.apply(data, parity)
    }

    /// Like [`encode`](Encoder::encode) on `threads` threads for large blocks: this one
    /// and helpers kept for later calls (see [`parallel`]).
    pub fn encode_par(
        &self,
        data: &[&[u8]],
        parity: &mut [&mut [u8]],
        threads: usize,
    ) -> Result<()> {
        self.gf.apply_par(data, parity, threads)
    }
}

/// Rebuilds missing blocks (data and/or redundancy) from M survivors.
#[derive(Debug, Clone)]
pub struct Decoder {
    plan: RecoverMatrix,
    gf: GfMatrix,
}

impl Decoder {
    /// Prepares recovery of the blocks in `missing` (indices: data 0..M, redundancy
    /// M..M+K; outputs come in this order). Fails for more than K missing blocks or a
    /// singular pattern.
    pub fn new(m: &CodingMatrix, missing: &[usize]) -> Result<Decoder> {
        let plan = m.recover(missing)?;
        let gf = GfMatrix::new(plan.missing.len(), plan.cols(), &plan.rows)?;
        Ok(Decoder { plan, gf })
    }

    /// The M surviving block indices to pass, in order.
    pub fn survivors(&self) -> &[usize] {
        &self.plan.survivors
    }

    /// The missing block indices, in output order.
    pub fn missing(&self) -> &[usize] {
        &self.plan.missing
    }

    /// The prepared multiplication.
    pub fn matrix(&self) -> &GfMatrix {
        &self.gf
    }

    /// Same decoder on another kernel.
    pub fn with_isa(self, isa: Isa) -> Option<Decoder> {
        let Decoder { plan, gf } = self;
        Some(Decoder {
            plan,
            gf: gf.with_isa(isa)?,
        })
    }

    /// Survivors (in [`survivors`](Decoder::survivors) order) in, missing blocks out.
    pub fn recover(&self, survivors: &[&[u8]], out: &mut [&mut [u8]]) -> Result<()> {
        self.gf.apply(survivors, out)
    }

    /// Like [`recover`](Decoder::recover) on `threads` threads for large blocks.
    pub fn recover_par(
        &self,
        survivors: &[&[u8]],
        out: &mut [&mut [u8]],
        threads: usize,
    ) -> Result<()> {
        self.gf.apply_par(survivors, out, threads)
    }
}

/// Computes new redundancy blocks after some data blocks changed.
#[derive(Debug, Clone)]
pub struct Updater {
    plan: UpdateMatrix,
    gf: GfMatrix,
}

impl Updater {
    /// Prepares the update of data blocks `changed`.
    pub fn new(m: &CodingMatrix, changed: &[usize]) -> Result<Updater> {
        let plan = m.update(changed)?;
        let gf = GfMatrix::new(m.rdnc_count(), plan.cols, &plan.rows)?;
        Ok(Updater { plan, gf })
    }

    /// The changed data block indices.
    pub fn changed(&self) -> &[usize] {
        &self.plan.changed
    }

    /// The prepared multiplication.
    pub fn matrix(&self) -> &GfMatrix {
        &self.gf
    }

    /// Sources `old_1, new_1, ..., old_u, new_u, parity_0..parity_K` in; new parity out.
    pub fn update(&self, sources: &[&[u8]], new_parity: &mut [&mut [u8]]) -> Result<()> {
        self.gf.apply(sources, new_parity)
    }
}
