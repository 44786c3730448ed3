//! The stripe coder: one DOCA EC job per stripe over a buffer the context's memory map
//! holds, and the positioned reads and writes of block files and inputs around it.

use crate::io_error;
use doca_core::RetrieveError;
use doca_core::{BufInventory, Dev, Error, ErrorCode, Mmap, Result, WorkQ};
use doca_ec::{Ec, EcJob, EcOp, Matrix};
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::Duration;

use super::Layout;

pub(super) fn stripe_len(layout: &Layout, asked: usize) -> usize {
    let want = if asked == 0 {
        ((16usize << 20) / layout.count()).clamp(64 << 10, 4 << 20)
    } else {
        asked
    };
    let want = (want / 64 * 64).max(64);
    want.min(layout.block as usize)
}

/// Runs one DOCA EC job per stripe: inputs are read straight into the mmap, outputs
/// are written straight from it.
pub(super) struct StripeCoder {
    pub(super) ec: Ec,
    wq: WorkQ,
    mmap: Mmap,
    inv: BufInventory,
    /// Offset of the output area.
    out_at: usize,
}

impl StripeCoder {
    pub(super) fn new(
        dev: &Dev,
        inputs: usize,
        outputs: usize,
        stripe: usize,
    ) -> Result<StripeCoder> {
        let out_at = inputs * stripe;
        let total = out_at + outputs * stripe;
        let memory = crate::zeroed(total, "stripes; give a smaller --stripe")?;
        let (mmap, inv) = crate::local_memory(dev, memory, 2)?;
        let ec = Ec::new();
        ec.as_ctx().dev_add(dev)?;
        ec.as_ctx().start()?;
        let mut wq = WorkQ::new(1)?;
        ec.as_ctx().workq_add(&mut wq)?;
        Ok(StripeCoder {
            ec,
            wq,
            mmap,
            inv,
            out_at,
        })
    }

    /// `fill` writes the matrix's inputs (`len` bytes each, back to back) into the
    /// first area; the job runs; `take` reads the outputs.
    pub(super) fn run<O: EcOp>(
        &mut self,
        matrix: &Matrix,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<()>,
        take: impl FnOnce(&[u8]) -> Result<()>,
    ) -> Result<()> {
        self.code::<O>(matrix, len, fill)?;
        let (_, outs) = self.areas(matrix, len)?;
        take(outs)
    }

    /// The inputs (`len` bytes each, back to back) and the outputs of the last job.
    pub(super) fn areas(&mut self, matrix: &Matrix, len: usize) -> Result<(&[u8], &[u8])> {
        self.areas_n(matrix.inputs(), matrix.outputs(), len)
    }

    /// The first `ins` blocks of the input area and the first `outs` of the output
    /// area, `len` bytes each.
    pub(super) fn areas_n(
        &mut self,
        ins: usize,
        outs: usize,
        len: usize,
    ) -> Result<(&[u8], &[u8])> {
        let out_at = self.out_at;
        let m = self.mmap.memory_mut()?;
        Ok((&m[..ins * len], &m[out_at..out_at + outs * len]))
    }

    /// `fill` writes the first `n` bytes of the input area; no job runs (a stripe that
    /// is only passed through).
    pub(super) fn load(
        &mut self,
        n: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        fill(&mut self.mmap.memory_mut()?[..n])
    }

    /// `fill` writes the matrix's inputs (`len` bytes each, back to back) into the
    /// first area; the job runs and leaves the outputs in the second ([`areas`]).
    ///
    /// [`areas`]: StripeCoder::areas
    pub(super) fn code<O: EcOp>(
        &mut self,
        matrix: &Matrix,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<()>,
    ) -> Result<()> {
        let (ins, outs) = (matrix.inputs(), matrix.outputs());
        fill(&mut self.mmap.memory_mut()?[..ins * len])?;
        let src = self.inv.buf_with_data_at(&self.mmap, 0, ins * len)?;
        let dst = self.inv.buf_at(&self.mmap, self.out_at, outs * len)?;
        self.wq
            .submit_job(self.ec.as_ctx(), EcJob::<O>::new(matrix, src, dst, 0))
            .map_err(|(e, _)| e)?;
        match self.wq.wait(Some(Duration::from_secs(600))) {
            Ok(c) => drop(c),
            Err(RetrieveError::Again) => {
                return Err(Error::with_context(
                    ErrorCode::TimeOut,
                    "an erasure coding job did not complete",
                ));
            }
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }
}

impl Drop for StripeCoder {
    fn drop(&mut self) {
        let _ = self.ec.as_ctx().workq_rm(&mut self.wq);
        let _ = self.ec.as_ctx().stop();
    }
}

/// Reads `buf.len()` bytes at `off`, zero-filling past the end of the file.
pub(super) fn read_padded(f: &File, off: u64, buf: &mut [u8], name: &Path) -> Result<()> {
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], off + n as u64) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(format!("cannot read '{}'", name.display()), &e)),
        }
    }
    buf[n..].fill(0);
    Ok(())
}

/// Reads exactly `buf.len()` bytes of the input at `off`: the input held `size` bytes
/// when the encode began, so a short read means it shrank meanwhile.
pub(super) fn read_input(f: &File, off: u64, buf: &mut [u8], name: &Path, size: u64) -> Result<()> {
    let mut n = 0;
    while n < buf.len() {
        match f.read_at(&mut buf[n..], off + n as u64) {
            Ok(0) => {
                return Err(Error::with_context(
                    ErrorCode::IoFailed,
                    format!(
                        "'{}' shrank while it was being encoded (it held {size} bytes when the encode began; it ends at byte {}); no block was replaced",
                        name.display(),
                        off + n as u64
                    ),
                ));
            }
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(format!("cannot read '{}'", name.display()), &e)),
        }
    }
    Ok(())
}

/// Fails unless the input still is what `before` described: the same size and
/// modification time as `now`, and no byte past that size (a file whose size lies,
/// such as `/proc/self/status`, which says 0 bytes and holds text).
pub(super) fn input_unchanged(
    f: &File,
    before: &std::fs::Metadata,
    now: &std::fs::Metadata,
    name: &Path,
) -> Result<()> {
    let changed = |why: String| {
        Err(Error::with_context(
            ErrorCode::IoFailed,
            format!(
                "'{}' {why}; no block was replaced (encode a copy that does not change)",
                name.display()
            ),
        ))
    };
    if now.len() != before.len() {
        return changed(format!(
            "changed size while it was being encoded ({} -> {} bytes)",
            before.len(),
            now.len()
        ));
    }
    if now.modified().ok() != before.modified().ok() {
        return changed("was modified while it was being encoded".into());
    }
    let mut probe = [0u8; 1];
    loop {
        match f.read_at(&mut probe, before.len()) {
            Ok(0) => return Ok(()),
            Ok(_) if before.len() == 0 => {
                return changed(
                    "says it holds 0 bytes but has content (a /proc or /sys file?)".into(),
                );
            }
            Ok(_) => {
                return changed(format!(
                    "holds more bytes than its size ({}) says",
                    before.len()
                ));
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error(format!("cannot read '{}'", name.display()), &e)),
        }
    }
}

pub(super) fn write_at(f: &File, off: u64, buf: &[u8], name: &Path) -> Result<()> {
    f.write_all_at(buf, off)
        .map_err(|e| io_error(format!("cannot write '{}'", name.display()), &e))
}
