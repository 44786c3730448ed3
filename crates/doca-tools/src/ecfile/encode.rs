//! Encoding a file into its block set: stripes through DOCA EC jobs, checksums of
//! every block, the manifest, and the set replaced all at once.

use super::*;

/// The most loss patterns an encode tries on a Vandermonde shape (16 + 8 has 735471).
const SHAPE_CHECK_BUDGET: u64 = 1_000_000;

/// What an encode did.
#[derive(Debug, Clone)]
pub struct EncodeReport {
    /// The layout written.
    pub layout: Layout,
    /// For a Vandermonde matrix: the losses of K blocks it cannot undo and how many
    /// losses there are (`None` when the shape is too large to try them all).
    pub short: Option<Option<(u64, u64)>>,
    /// Seconds spent.
    pub secs: f64,
}

/// Encodes `input` into `dir` (created if needed): M data block files, K redundancy
/// block files, `data_info` and the manifest. Refuses a directory that already holds
/// blocks unless `opts.force`.
///
/// Replacing a block set is all or nothing: the new set is built whole in a directory
/// beside `dir` and the two directories are swapped in one step (`RENAME_EXCHANGE`), so
/// that `dir` holds the old set or the new one, complete, at every instant (a run killed
/// at any point leaves one of them, and the next run removes the other). A directory
/// that holds other files besides its block set cannot be swapped and is refused.
pub fn encode(
    dev: &Dev,
    input: &Path,
    dir: &Path,
    kind: MatrixType,
    data: usize,
    rdnc: usize,
    opts: &Options,
) -> Result<EncodeReport> {
    let t = Instant::now();
    let file = crate::open_regular(input)?;
    let meta = file
        .metadata()
        .map_err(|e| io_error(format!("cannot stat '{}'", input.display()), &e))?;
    // A file whose size lies (a /proc or /sys file says 0 and holds text) is refused
    // before anything is written.
    input_unchanged(&file, &meta, &meta, input)?;
    let mut layout = Layout::for_file(meta.len(), input.as_os_str(), kind, data, rdnc)?;
    std::fs::create_dir_all(dir)
        .map_err(|e| io_error(format!("cannot create '{}'", dir.display()), &e))?;
    let old = existing_outputs(dir);
    if !old.is_empty() && !opts.force {
        return Err(Error::with_context(
            ErrorCode::AlreadyExist,
            format!(
                "'{}' already holds erasure coded blocks ({}); use --force to replace them",
                dir.display(),
                old.join(", ")
            ),
        ));
    }
    // Where the new set is written: `dir` itself, or (replacing a set) a directory
    // beside it that takes its place when complete.
    let staging = if old.is_empty() {
        None
    } else {
        Some(Staging::beside(dir)?)
    };
    let target = staging.as_ref().map_or(dir, |s| s.path.as_path());
    let n = layout.count();
    let outs: Vec<AtomicFile> = (0..n)
        .map(|i| {
            let f = AtomicFile::create(&target.join(layout.block_file(i)), true)?;
            f.reserve(layout.block)?;
            Ok(f)
        })
        .collect::<Result<_>>()?;
    let stripe = stripe_len(&layout, opts.stripe);
    let pb = progress(layout.block * data as u64, "encode", opts.progress);
    // Two coders circulate: the main thread reads a stripe (a slice of every data block)
    // straight into one coder's memory, runs its job and hashes the slices, while a
    // writer thread writes the other's data and redundancy slices from where they lie
    // (writing into the page cache is the longest stage).
    let (to_writer, stripes) = std::sync::mpsc::sync_channel::<(u64, usize, Stripe)>(1);
    let (give_back, free) = std::sync::mpsc::sync_channel::<Stripe>(2);
    for _ in 0..2 {
        let coder = StripeCoder::new(dev, data, rdnc, stripe)?;
        let matrix = coder.ec.matrix_create(kind, data, rdnc)?;
        let _ = give_back.send(Stripe { coder, matrix });
    }
    let outs_ref = &outs;
    let layout_ref = &layout;
    let (main_result, sums) = std::thread::scope(|s| {
        let writer = s.spawn(move || -> Result<()> {
            for (off, len, mut st) in stripes {
                let (ins, parity) = st.coder.areas(&st.matrix, len)?;
                // Two threads write, every other block each: writing into the page cache
                // is the longest stage, and one file's writes do not overlap (the file
                // system serializes them), so each thread has files of its own.
                let write_half = |half: usize| -> Result<()> {
                    let chunks = ins.chunks(len).chain(parity.chunks(len)).enumerate();
                    for (i, chunk) in chunks.filter(|(i, _)| i % 2 == half) {
                        write_at(outs_ref[i].file_ref(), off, chunk, outs_ref[i].path())?;
                    }
                    Ok(())
                };
                std::thread::scope(|w| {
                    let second = w.spawn(|| write_half(1));
                    let first = write_half(0);
                    let second = writer_result(second.join());
                    first.and(second)
                })?;
                // The main thread may have stopped; the coder is then simply dropped.
                let _ = give_back.send(st);
            }
            Ok(())
        });
        let mut hashers = BlockHashers::new(layout_ref);
        let mut off = 0u64;
        let r = (|| -> Result<()> {
            while off < layout.block {
                crate::cleanup::interrupted()?;
                let len = stripe.min((layout.block - off) as usize);
                // No coder back: the writer stopped (its error is reported below).
                let Ok(mut st) = free.recv() else {
                    return Ok(());
                };
                let Stripe { coder, matrix } = &mut st;
                coder.code::<Create>(matrix, len, |ins| {
                    for (i, chunk) in ins.chunks_mut(len).enumerate() {
                        let at = i as u64 * layout.block + off;
                        // Bytes of block i past the end of the file are zeros.
                        let end = layout.size.saturating_sub(at).min(len as u64) as usize;
                        read_input(&file, at, &mut chunk[..end], input, layout.size)?;
                        chunk[end..].fill(0);
                    }
                    Ok(())
                })?;
                let (ins, parity) = st.coder.areas(&st.matrix, len)?;
                for (i, chunk) in ins.chunks(len).chain(parity.chunks(len)).enumerate() {
                    hashers.update(i, off, chunk);
                }
                if to_writer.send((off, len, st)).is_err() {
                    return Ok(());
                }
                off += len as u64;
                pb.inc((len * data) as u64);
            }
            Ok(())
        })();
        drop(to_writer);
        let sums = writer_result(writer.join()).map(|()| hashers.finish());
        (r, sums)
    });
    pb.finish_and_clear();
    main_result?;
    let (sums, content) = sums?;
    // The blocks stand for the input only if it did not change meanwhile (a write in
    // place, an append, a truncation): else nothing replaces the old set.
    let now = file
        .metadata()
        .map_err(|e| io_error(format!("cannot stat '{}'", input.display()), &e))?;
    input_unchanged(&file, &meta, &now, input)?;
    layout.sums = Some(sums);
    layout.content = Some(content);
    let mut info = AtomicFile::create(&target.join(DATA_INFO), true)?;
    write_at(info.file(), 0, &layout.data_info(), &target.join(DATA_INFO))?;
    let mut manifest = AtomicFile::create(&target.join(MANIFEST), true)?;
    write_at(
        manifest.file(),
        0,
        layout.manifest_text().as_bytes(),
        &target.join(MANIFEST),
    )?;
    for o in outs {
        o.commit_with(opts.sync)?;
    }
    info.commit_with(opts.sync)?;
    manifest.commit_with(opts.sync)?;
    if let Some(s) = staging {
        s.swap_into(dir, opts.sync)?;
    }
    let short = (kind == MatrixType::Vandermonde)
        .then(|| mds::unrecoverable_losses(kind, data, rdnc, SHAPE_CHECK_BUDGET));
    Ok(EncodeReport {
        short,
        layout,
        secs: t.elapsed().as_secs_f64(),
    })
}

/// A joined writer thread's outcome: its own, or an error when it panicked.
pub(super) fn writer_result(joined: std::thread::Result<Result<()>>) -> Result<()> {
    thread_result(joined, "the block writer thread")
}

/// A joined thread's outcome: its own, or an error naming `what` when it panicked.
pub(super) fn thread_result<T>(joined: std::thread::Result<Result<T>>, what: &str) -> Result<T> {
    joined.unwrap_or_else(|_| {
        Err(Error::with_context(
            ErrorCode::Unexpected,
            format!("{what} panicked"),
        ))
    })
}

/// A stripe coder with its matrix (a matrix belongs to one context).
struct Stripe {
    coder: StripeCoder,
    matrix: doca_ec::Matrix,
}

/// The checksum of every block and the content digest of the file, in one pass over
/// the blocks: a data block's file bytes come first and its zero padding (if any) last,
/// so the content digest's part for block `i` is block `i`'s hash state where its
/// padding begins (XXH3's 64- and 128-bit digests come from the same state).
pub(super) struct BlockHashers<'a> {
    layout: &'a Layout,
    blocks: Vec<Xxh3>,
    /// Per data block: the state where its padding began.
    content: Vec<Option<Xxh3>>,
}

impl BlockHashers<'_> {
    pub(super) fn new(layout: &Layout) -> BlockHashers<'_> {
        BlockHashers {
            layout,
            blocks: (0..layout.count()).map(|_| Xxh3::new()).collect(),
            content: vec![None; layout.data],
        }
    }

    /// The bytes of block `i` at `off`.
    pub(super) fn update(&mut self, i: usize, off: u64, chunk: &[u8]) {
        let h = &mut self.blocks[i];
        if i >= self.layout.data {
            h.update(chunk);
            return;
        }
        let file = self.layout.file_bytes(i, off, chunk.len());
        h.update(&chunk[..file]);
        if file < chunk.len() {
            if self.content[i].is_none() {
                self.content[i] = Some(h.clone());
            }
            h.update(&chunk[file..]);
        }
    }

    /// Every block's checksum, and the content digest.
    pub(super) fn finish(self) -> (Vec<u64>, u128) {
        let parts = self
            .content
            .into_iter()
            .zip(&self.blocks)
            .map(|(c, b)| c.unwrap_or_else(|| b.clone()))
            .collect();
        (
            self.blocks.iter().map(Xxh3::digest).collect(),
            ContentHasher::from_parts(parts).digest(),
        )
    }
}
