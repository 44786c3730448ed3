//! Verifying a block set: every block's checksum and the parity of every stripe.

use super::*;

/// What a verify found.
#[derive(Debug, Clone)]
pub struct VerifyReport {
    /// The layout found.
    pub layout: Layout,
    /// Blocks that are not whole, with why.
    pub lost: Vec<String>,
    /// Redundancy blocks that do not match the data (checked when every block is
    /// present), with the first differing offset.
    pub inconsistent: Vec<String>,
    /// Whether `recover` can undo the loss found: at most K blocks lost and, with a
    /// Vandermonde matrix, M independent blocks left.
    pub recoverable: bool,
}

impl VerifyReport {
    /// Whether everything is whole and consistent.
    pub fn ok(&self) -> bool {
        self.lost.is_empty() && self.inconsistent.is_empty()
    }
}

/// Checks every block: presence, size and, with a manifest, checksum. Blocks that all
/// match the checksums recorded when they were written are the blocks that encode wrote,
/// redundancy consistent with data, so nothing more is read. Without a manifest (DOCA's
/// sample layout) and every block present, the redundancy blocks are compared with what
/// the data blocks encode to, which is the only way damage shows there.
pub fn verify(
    dev: &Dev,
    dir: &Path,
    guess: Option<(MatrixType, usize, usize)>,
    opts: &Options,
) -> Result<VerifyReport> {
    let layout = Layout::read(dir, guess)?;
    let states = scan(dir, &layout, opts)?;
    let mut inconsistent = Vec::new();
    if layout.sums.is_none() && states.iter().all(|s| *s == BlockState::Ok) {
        for (r, b) in check_parity(dev, dir, &layout, opts)?.iter().enumerate() {
            if let Some(at) = b {
                inconsistent.push(format!(
                    "{} differs from the data's encoding at byte {at}",
                    layout.block_file(layout.data + r)
                ));
            }
        }
    }
    let found = losses(&layout, &states);
    let present: Vec<usize> = (0..layout.count())
        .filter(|i| states[*i] == BlockState::Ok)
        .collect();
    let recoverable = found.len() <= layout.rdnc
        && mds::independent_survivors(layout.kind, layout.data, layout.rdnc, &present).is_some();
    let lost: Vec<String> = found.into_iter().map(|(_, s)| s).collect();
    Ok(VerifyReport {
        layout,
        lost,
        inconsistent,
        recoverable,
    })
}

/// A stripe of every block for [`check_parity`]: the data slices in the coder's input
/// area, the redundancy slices read beside them.
struct CheckStripe {
    coder: StripeCoder,
    matrix: doca_ec::Matrix,
    theirs: Vec<u8>,
}

/// One pass over every block of a whole set: per redundancy block, the first offset
/// where it differs from the data's encoding. A reader thread reads a stripe of every
/// block while the calling thread encodes the stripe before it and compares.
fn check_parity(
    dev: &Dev,
    dir: &Path,
    layout: &Layout,
    opts: &Options,
) -> Result<Vec<Option<u64>>> {
    // Nothing is written: a stripe small enough to stay in the cache between the read
    // that brings it and the job and the comparison that use it (about 4 MiB of all
    // blocks; 16 MiB stripes measured at half the speed).
    let asked = match opts.stripe {
        0 => ((4usize << 20) / layout.count()).clamp(64 << 10, 1 << 20),
        n => n,
    };
    let stripe = stripe_len(layout, asked);
    let (data, rdnc) = (layout.data, layout.rdnc);
    let files: Vec<(PathBuf, File)> = (0..layout.count())
        .map(|i| {
            let p = dir.join(layout.block_file(i));
            crate::open_regular(&p).map(|f| (p.clone(), f))
        })
        .collect::<Result<_>>()?;
    // Stripes are small: several circulate, so that neither side waits for the other's
    // wake-up at every hand-over.
    const CIRCULATING: usize = 4;
    let (to_main, full) = std::sync::mpsc::sync_channel::<(u64, usize, CheckStripe)>(CIRCULATING);
    let (give_back, free) = std::sync::mpsc::sync_channel::<CheckStripe>(CIRCULATING);
    for _ in 0..CIRCULATING {
        let coder = StripeCoder::new(dev, data, rdnc, stripe)?;
        let matrix = coder.ec.matrix_create(layout.kind, data, rdnc)?;
        let theirs = crate::zeroed(rdnc * stripe, "stripes; give a smaller --stripe")?;
        let _ = give_back.send(CheckStripe {
            coder,
            matrix,
            theirs,
        });
    }
    let pb = progress(
        layout.block * layout.count() as u64,
        "verify",
        opts.progress,
    );
    let files = &files;
    let (read_result, checked) = std::thread::scope(|s| {
        let reader = s.spawn(move || -> Result<()> {
            let mut off = 0u64;
            while off < layout.block {
                crate::cleanup::interrupted()?;
                let len = stripe.min((layout.block - off) as usize);
                // No stripe back: the checking side stopped (its error is reported).
                let Ok(mut st) = free.recv() else {
                    return Ok(());
                };
                st.coder.load(data * len, |ins| {
                    for (i, chunk) in ins.chunks_mut(len).enumerate() {
                        read_padded(&files[i].1, off, chunk, &files[i].0)?;
                    }
                    Ok(())
                })?;
                for (r, chunk) in st.theirs[..rdnc * len].chunks_mut(len).enumerate() {
                    let (p, f) = &files[data + r];
                    read_padded(f, off, chunk, p)?;
                }
                if to_main.send((off, len, st)).is_err() {
                    return Ok(());
                }
                off += len as u64;
            }
            Ok(())
        });
        let mut bad = vec![None::<u64>; rdnc];
        let r = (|| -> Result<()> {
            for (off, len, mut st) in full {
                let CheckStripe {
                    coder,
                    matrix,
                    theirs,
                } = &mut st;
                // The inputs are in place already (the reader loaded them).
                coder.code::<Create>(matrix, len, |_| Ok(()))?;
                let (_, parity) = coder.areas(matrix, len)?;
                for (r, (ours, theirs)) in parity
                    .chunks(len)
                    .zip(theirs[..rdnc * len].chunks(len))
                    .enumerate()
                {
                    // Whole slices compare as memory does; the byte is looked for only
                    // where they differ.
                    if bad[r].is_none()
                        && ours != theirs
                        && let Some(at) = ours.iter().zip(theirs).position(|(a, b)| a != b)
                    {
                        bad[r] = Some(off + at as u64);
                    }
                }
                pb.inc((len * layout.count()) as u64);
                // The reader may have stopped; the stripe is then simply dropped.
                let _ = give_back.send(st);
            }
            Ok(())
        })();
        // Unblocks a reader waiting for a stripe back.
        drop(give_back);
        let read = thread_result(reader.join(), "the block reader thread");
        (read, r.map(|()| bad))
    });
    pb.finish_and_clear();
    read_result?;
    checked
}
