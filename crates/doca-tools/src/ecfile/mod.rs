//! Files erasure coded in the block-directory layout of DOCA's erasure coding sample:
//! `data_block_<i>` and `rdnc_block_<i>` files of one block size (the file size divided
//! by the data block count, rounded up to 64 bytes; the last data blocks zero-padded),
//! and `data_info` holding `<original size> <original path>`. An `ec_manifest` beside
//! them ([`manifest`](Layout)) records the matrix, the original's digest and a checksum
//! (XXH3-64) of every block, so that damaged blocks are found as well as missing ones.
//!
//! Everything streams in stripes (a slice of every block at the same offset), through
//! one DOCA EC job per stripe (`coder`): memory stays bounded whatever the file size, and
//! every output is written under a temporary name and renamed only when complete; a
//! block set is replaced all at once (`staging`). This module holds the commands:
//! encode, scan, verify and recover.

use crate::{AtomicFile, io_error};
use doca_core::{Dev, Error, ErrorCode, Result};
use doca_ec::{Create, MatrixType, Recover};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Instant;
use xxh3::Xxh3;

mod coder;
mod manifest;
pub mod mds;
mod staging;
#[cfg(target_arch = "x86_64")]
pub mod xxh3;
/// XXH3 as `xxhash_rust` computes it (its vector code, NEON on 64-bit Arm, is chosen
/// when it is compiled).
#[cfg(not(target_arch = "x86_64"))]
pub mod xxh3 {
    pub use xxhash_rust::xxh3::Xxh3;
}
use coder::{StripeCoder, input_unchanged, read_input, read_padded, stripe_len, write_at};
pub use manifest::{ContentHasher, DATA_INFO, Layout, MANIFEST, kind_name, parse_kind};
use staging::{Staging, existing_outputs, is_set_member};

/// Options shared by the operations.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes of each block per stripe (0: chosen from the block count).
    pub stripe: usize,
    /// Replace existing outputs.
    pub force: bool,
    /// Show a progress bar (only drawn on a terminal).
    pub progress: bool,
    /// Flush outputs to disk before they take their names.
    pub sync: bool,
    /// Recover: write rebuilt blocks back into the block directory (when it can be
    /// written).
    pub write_back: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            stripe: 0,
            force: false,
            progress: true,
            sync: true,
            write_back: true,
        }
    }
}

fn progress(total: u64, what: &str, on: bool) -> ProgressBar {
    if !on {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{msg:>10} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {eta}",
    ) {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_message(what.to_string());
    pb
}

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
fn writer_result(joined: std::thread::Result<Result<()>>) -> Result<()> {
    thread_result(joined, "the block writer thread")
}

/// A joined thread's outcome: its own, or an error naming `what` when it panicked.
fn thread_result<T>(joined: std::thread::Result<Result<T>>, what: &str) -> Result<T> {
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
struct BlockHashers<'a> {
    layout: &'a Layout,
    blocks: Vec<Xxh3>,
    /// Per data block: the state where its padding began.
    content: Vec<Option<Xxh3>>,
}

impl BlockHashers<'_> {
    fn new(layout: &Layout) -> BlockHashers<'_> {
        BlockHashers {
            layout,
            blocks: (0..layout.count()).map(|_| Xxh3::new()).collect(),
            content: vec![None; layout.data],
        }
    }

    /// The bytes of block `i` at `off`.
    fn update(&mut self, i: usize, off: u64, chunk: &[u8]) {
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
    fn finish(self) -> (Vec<u64>, u128) {
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

/// The state of one block file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BlockState {
    /// Present, of the right size, and (with a manifest) its checksum matches.
    Ok,
    /// No such file.
    Missing,
    /// The file has the wrong size.
    WrongSize(u64),
    /// The checksum does not match the manifest's.
    Damaged,
    /// The file cannot be read.
    Unreadable(String),
}

impl BlockState {
    fn describe(&self, block: u64) -> String {
        match self {
            BlockState::Ok => "ok".into(),
            BlockState::Missing => "missing".into(),
            BlockState::WrongSize(n) => format!("wrong size: {n} bytes instead of {block}"),
            BlockState::Damaged => "damaged: checksum mismatch".into(),
            BlockState::Unreadable(e) => format!("unreadable: {e}"),
        }
    }
}

/// Checks every block file: presence, size, and (with a manifest) checksum.
pub fn scan(dir: &Path, layout: &Layout, opts: &Options) -> Result<Vec<BlockState>> {
    scan_with(dir, layout, opts, true)
}

/// [`scan`], checking checksums only with `hash` (else a present block of the right
/// size is `Ok` until its checksum says otherwise). The checksums are computed on up to
/// four threads (as many as the machine runs at once), each reading whole blocks.
fn scan_with(dir: &Path, layout: &Layout, opts: &Options, hash: bool) -> Result<Vec<BlockState>> {
    let mut states = Vec::with_capacity(layout.count());
    for i in 0..layout.count() {
        let path = dir.join(layout.block_file(i));
        states.push(match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BlockState::Missing,
            Err(e) => BlockState::Unreadable(e.to_string()),
            Ok(m) if m.len() != layout.block => BlockState::WrongSize(m.len()),
            Ok(_) => BlockState::Ok,
        });
    }
    let Some(sums) = layout.sums.as_ref().filter(|_| hash) else {
        return Ok(states);
    };
    let todo: Vec<usize> = (0..layout.count())
        .filter(|&i| states[i] == BlockState::Ok)
        .collect();
    let pb = progress(layout.block * todo.len() as u64, "check", opts.progress);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4)
        .min(todo.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    // Each worker takes the next block to check and returns what it found.
    let worker = || -> Result<Vec<(usize, BlockState)>> {
        // A slice that stays in the cache between the read and the hash.
        let mut buf = vec![0u8; 256 << 10];
        let mut found = Vec::new();
        while let Some(&i) = todo.get(next.fetch_add(1, std::sync::atomic::Ordering::Relaxed)) {
            crate::cleanup::interrupted()?;
            let path = dir.join(layout.block_file(i));
            let state = match hash_file(&path, &mut buf, &pb) {
                Ok(h) if h == sums[i] => BlockState::Ok,
                Ok(_) => BlockState::Damaged,
                Err(e) => BlockState::Unreadable(e.to_string()),
            };
            found.push((i, state));
        }
        Ok(found)
    };
    let results: Vec<_> = std::thread::scope(|s| {
        let helpers: Vec<_> = (1..threads).map(|_| s.spawn(worker)).collect();
        let mut all = vec![worker()];
        all.extend(
            helpers
                .into_iter()
                .map(|h| thread_result(h.join(), "a checksum thread")),
        );
        all
    });
    pb.finish_and_clear();
    for r in results {
        for (i, st) in r? {
            states[i] = st;
        }
    }
    Ok(states)
}

fn hash_file(path: &Path, buf: &mut [u8], pb: &ProgressBar) -> std::io::Result<u64> {
    use std::io::Read;
    let mut f = crate::open_regular(path).map_err(std::io::Error::other)?;
    let mut h = Xxh3::new();
    loop {
        let n = f.read(buf)?;
        if n == 0 {
            return Ok(h.digest());
        }
        h.update(&buf[..n]);
        pb.inc(n as u64);
    }
}

/// A block that is not whole, with why.
fn losses(layout: &Layout, states: &[BlockState]) -> Vec<(usize, String)> {
    states
        .iter()
        .enumerate()
        .filter(|(_, s)| **s != BlockState::Ok)
        .map(|(i, s)| {
            (
                i,
                format!("{} ({})", layout.block_file(i), s.describe(layout.block)),
            )
        })
        .collect()
}

/// How a recovered file was shown to be the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Proof {
    /// Its content digest matches the one the manifest recorded when it was encoded.
    Content,
    /// Every data block it was made of matches its recorded checksum (a version 1
    /// manifest records no digest of the whole file).
    Blocks,
    /// No checksums (DOCA's sample layout): the blocks left over after rebuilding agree
    /// with the rebuilt data; the length comes from `data_info`, which nothing checks.
    Consistent,
    /// Nothing could prove it, and why.
    Unproved(String),
}

/// What a recover did.
#[derive(Debug, Clone)]
pub struct RecoverReport {
    /// The layout found.
    pub layout: Layout,
    /// Blocks rebuilt, with why they were.
    pub rebuilt: Vec<String>,
    /// Where the original file was written.
    pub output: PathBuf,
    /// How the output was shown to be the original.
    pub proof: Proof,
    /// Why rebuilt blocks were not written back into the block directory, if they were
    /// not.
    pub not_written_back: Option<String>,
    /// Seconds spent.
    pub secs: f64,
}

/// Whether an I/O error says the file system is read-only.
fn read_only(e: &Error) -> bool {
    e.to_string().contains("Read-only file system")
}

/// Refuses a recover output that is one of the block set's own files (it would replace
/// a block or the manifest, or collide with a rebuilt block).
fn refuse_output_in_set(output: &Path, dir: &Path) -> Result<()> {
    let (Some(parent), Some(name)) = (output.parent(), output.file_name()) else {
        return Ok(());
    };
    let parent = if parent.as_os_str().is_empty() {
        Path::new(".")
    } else {
        parent
    };
    if let (Ok(a), Ok(b)) = (parent.canonicalize(), dir.canonicalize())
        && a == b
        && is_set_member(&name.to_string_lossy())
    {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "'{}' is one of the block set's own files in '{}'; write the recovered file elsewhere",
                output.display(),
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// The error for a loss the matrix cannot undo (possible with Vandermonde only).
fn unrecoverable(layout: &Layout, lost: &[usize]) -> Error {
    Error::with_context(
        ErrorCode::NotSupported,
        format!(
            "this loss ({}) cannot be undone: with the {} matrix, no {} of the remaining blocks are independent; nothing was written (cauchy matrices recover every loss of up to {} blocks)",
            lost.iter()
                .map(|&i| layout.block_file(i))
                .collect::<Vec<_>>()
                .join(", "),
            kind_name(layout.kind),
            layout.data,
            layout.rdnc
        ),
    )
}

fn not_written(msg: String) -> Error {
    Error::with_context(ErrorCode::Unexpected, format!("{msg}; nothing was written"))
}

/// Rebuilds the missing or damaged blocks of `dir` (at most K) and writes the original
/// file to `output`. Refuses an existing `output` unless `opts.force`.
///
/// Nothing is written unless the output is proved (see [`Proof`]) or nothing can prove
/// it: with a manifest, by its content digest (or block checksums); without one, by the
/// blocks the rebuild did not read, which must agree with the rebuilt data, and by the
/// padding past the file's end, which must be zeros. A block set that disagrees with
/// itself (a damaged block, a wrong matrix or count given for a sample directory) is
/// refused.
pub fn recover(
    dev: &Dev,
    dir: &Path,
    output: &Path,
    guess: Option<(MatrixType, usize, usize)>,
    opts: &Options,
) -> Result<RecoverReport> {
    let t = Instant::now();
    let layout = Layout::read(dir, guess)?;
    // With checksums, every block is checked in the pass that rebuilds (each read once):
    // the blocks are only looked at here. A block that turns out damaged counts as lost
    // and the rebuild runs again, its outputs from the first run never taking their names.
    let checked_late = layout.sums.is_some();
    let mut states = scan_with(dir, &layout, opts, !checked_late)?;
    loop {
        match rebuild(dev, dir, output, &layout, &states, checked_late, opts)? {
            Attempt::Done(mut report) => {
                report.secs = t.elapsed().as_secs_f64();
                return Ok(*report);
            }
            Attempt::Damaged(bad) => {
                for i in bad {
                    states[i] = BlockState::Damaged;
                }
            }
        }
    }
}

/// How one rebuild ended: done, or blocks read as intact turned out damaged (their
/// checksums, computed as they were read, do not match).
enum Attempt {
    Done(Box<RecoverReport>),
    Damaged(Vec<usize>),
}

/// A stripe coder with the recover matrix of the rebuild (none when nothing is missing:
/// the data blocks are only read and written).
struct RecoverStripe {
    coder: StripeCoder,
    matrix: Option<doca_ec::Matrix>,
}

/// One rebuild of `recover`, from the block states found. With `checked_late`, blocks in
/// the `Ok` state are checked against their checksums as they are read.
fn rebuild(
    dev: &Dev,
    dir: &Path,
    output: &Path,
    layout: &Layout,
    states: &[BlockState],
    checked_late: bool,
    opts: &Options,
) -> Result<Attempt> {
    let lost = losses(layout, states);
    if lost.len() > layout.rdnc {
        let intact = layout.count() - lost.len();
        return Err(Error::with_context(
            ErrorCode::NotFound,
            format!(
                "{} blocks are missing or damaged: {}; {} intact blocks remain but {} are needed ({} data + {} redundancy blocks can lose at most {})",
                lost.len(),
                lost.iter()
                    .map(|(_, s)| s.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                intact,
                layout.data,
                layout.data,
                layout.rdnc,
                layout.rdnc
            ),
        ));
    }
    let lost_at: Vec<usize> = lost.iter().map(|(i, _)| *i).collect();
    let present: Vec<usize> = (0..layout.count())
        .filter(|i| !lost_at.contains(i))
        .collect();
    // M independent survivors (with a Vandermonde matrix the first M may not be); any
    // present block left out is rebuilt as well (and checked, never written back).
    let chosen = mds::independent_survivors(layout.kind, layout.data, layout.rdnc, &present)
        .ok_or_else(|| unrecoverable(layout, &lost_at))?;
    let mut missing: Vec<u32> = lost_at.iter().map(|&i| i as u32).collect();
    if chosen[..] != present[..layout.data] {
        missing.extend(
            present
                .iter()
                .filter(|i| !chosen.contains(i))
                .map(|&i| i as u32),
        );
    }
    refuse_output_in_set(output, dir)?;
    let out = AtomicFile::create(output, opts.force)?;
    out.reserve(layout.size)?;
    let stripe = stripe_len(layout, opts.stripe);
    // Two coders circulate, as in encode: the main thread reads a stripe of the sources
    // into one, rebuilds and hashes, while a writer thread writes the other's.
    let (to_writer, stripes) = std::sync::mpsc::sync_channel::<(u64, usize, RecoverStripe)>(1);
    let (give_back, free) = std::sync::mpsc::sync_channel::<RecoverStripe>(2);
    let mut sources: Vec<usize> = (0..layout.data).collect();
    for _ in 0..2 {
        let coder = StripeCoder::new(dev, layout.data, layout.rdnc.max(1), stripe)?;
        let matrix = if missing.is_empty() {
            None
        } else {
            let coding = coder
                .ec
                .matrix_create(layout.kind, layout.data, layout.rdnc)?;
            let r = coder.ec.recover_matrix_create(&coding, &missing)?;
            // Sources: the survivors the recover matrix reads.
            sources = r.survivors().unwrap_or_default().to_vec();
            Some(r)
        };
        let _ = give_back.send(RecoverStripe { coder, matrix });
    }
    let open = |i: usize| {
        let p = dir.join(layout.block_file(i));
        crate::open_regular(&p).map(|f| (p.clone(), f))
    };
    let files: Vec<(PathBuf, File)> = sources.iter().map(|&i| open(i)).collect::<Result<_>>()?;
    // The present blocks the rebuild does not read. With checksums they are read only
    // to be checked; without, they check the rebuild: the data is encoded again and
    // compared with them.
    let others: Vec<(usize, PathBuf, File)> = (0..layout.count())
        .filter(|i| states[*i] == BlockState::Ok && !sources.contains(i))
        .map(|i| open(i).map(|(p, f)| (i, p, f)))
        .collect::<Result<_>>()?;
    let mut on_disk: Vec<Xxh3> = others.iter().map(|_| Xxh3::new()).collect();
    let mut checker = if others.is_empty() || checked_late {
        None
    } else {
        let c = StripeCoder::new(dev, layout.data, layout.rdnc, stripe)?;
        let m = c.ec.matrix_create(layout.kind, layout.data, layout.rdnc)?;
        Some((c, m))
    };
    // Rebuilt blocks go back into the directory, unless asked not to or it cannot be
    // written (read-only): the file is recovered either way.
    let mut not_written_back =
        (!opts.write_back && !lost_at.is_empty()).then(|| "as asked (--no-write-back)".to_string());
    let mut rebuilt: Vec<Option<AtomicFile>> = Vec::with_capacity(missing.len());
    for &i in &missing {
        let i = i as usize;
        if !lost_at.contains(&i) || not_written_back.is_some() {
            rebuilt.push(None);
            continue;
        }
        match AtomicFile::create(&dir.join(layout.block_file(i)), true) {
            Ok(f) => {
                f.reserve(layout.block)?;
                rebuilt.push(Some(f));
            }
            Err(e) if e.code() == ErrorCode::NotPermitted || read_only(&e) => {
                not_written_back = Some(format!("'{}' cannot be written: {e}", dir.display()));
                rebuilt.iter_mut().for_each(|r| *r = None);
                rebuilt.push(None);
            }
            Err(e) => return Err(e),
        }
    }
    // The data blocks' stripe, side by side (for the check without checksums).
    let mut full = if checker.is_some() {
        crate::zeroed(layout.data * stripe, "the check's stripe")?
    } else {
        Vec::new()
    };
    let mut scratch = vec![0u8; if others.is_empty() { 0 } else { stripe }];
    let mut padding_ok = true;
    let mut disagree: Option<(usize, u64)> = None;
    let pb = progress(layout.block * layout.data as u64, "recover", opts.progress);
    let (ins_n, outs_n) = (sources.len(), missing.len());
    let (out_ref, rebuilt_ref, sources_ref, missing_ref) = (&out, &rebuilt, &sources, &missing);
    // Block i's stripe at `off`: its file bytes go into the original file.
    let put = move |i: usize, off: u64, bytes: &[u8]| -> Result<()> {
        let n = if i < layout.data {
            layout.file_bytes(i, off, bytes.len())
        } else {
            0
        };
        if n > 0 {
            write_at(
                out_ref.file_ref(),
                i as u64 * layout.block + off,
                &bytes[..n],
                out_ref.path(),
            )?;
        }
        Ok(())
    };
    let (main_result, digests) = std::thread::scope(|s| {
        // The writer: the file's bytes on its own thread, the rebuilt blocks going back
        // into the directory on a second, so that writing into the page cache, the
        // longest stage, runs on both cores. One file's writes do not overlap (the file
        // system serializes them), so each thread has files of its own.
        let writer = s.spawn(move || -> Result<()> {
            for (off, len, mut st) in stripes {
                let (ins, outs) = st.coder.areas_n(ins_n, outs_n, len)?;
                std::thread::scope(|w| {
                    let second = w.spawn(|| -> Result<()> {
                        for (chunk, r) in outs.chunks(len).zip(rebuilt_ref) {
                            if let Some(r) = r {
                                write_at(r.file_ref(), off, chunk, r.path())?;
                            }
                        }
                        Ok(())
                    });
                    let blocks = ins.chunks(len).zip(sources_ref.iter().copied()).chain(
                        outs.chunks(len)
                            .zip(missing_ref.iter().map(|&i| i as usize)),
                    );
                    for (chunk, i) in blocks {
                        put(i, off, chunk)?;
                    }
                    writer_result(second.join())
                })?;
                // The main thread may have stopped; the coder is then simply dropped.
                let _ = give_back.send(st);
            }
            Ok(())
        });
        let mut hashers = BlockHashers::new(layout);
        let mut off = 0u64;
        let r = (|| -> Result<()> {
            while off < layout.block {
                crate::cleanup::interrupted()?;
                let len = stripe.min((layout.block - off) as usize);
                // No coder back: the writer stopped (its error is reported below).
                let Ok(mut st) = free.recv() else {
                    return Ok(());
                };
                let fill = |ins: &mut [u8]| -> Result<()> {
                    for (k, chunk) in ins.chunks_mut(len).enumerate() {
                        let (p, f) = &files[k];
                        read_padded(f, off, chunk, p)?;
                    }
                    Ok(())
                };
                match &st.matrix {
                    Some(m) => st.coder.code::<Recover>(m, len, fill)?,
                    None => st.coder.load(ins_n * len, fill)?,
                }
                let (ins, outs) = st.coder.areas_n(ins_n, outs_n, len)?;
                let blocks = ins
                    .chunks(len)
                    .zip(sources.iter().copied())
                    .chain(outs.chunks(len).zip(missing.iter().map(|&i| i as usize)));
                for (chunk, i) in blocks {
                    hashers.update(i, off, chunk);
                    if i < layout.data {
                        let n = layout.file_bytes(i, off, len);
                        padding_ok &= chunk[n..].iter().all(|&b| b == 0);
                        if !full.is_empty() {
                            full[i * len..(i + 1) * len].copy_from_slice(chunk);
                        }
                    }
                }
                if checked_late {
                    for ((_, p, f), h) in others.iter().zip(&mut on_disk) {
                        read_padded(f, off, &mut scratch[..len], p)?;
                        h.update(&scratch[..len]);
                    }
                }
                if let Some((c, m)) = checker.as_mut()
                    && disagree.is_none()
                {
                    let data = &full[..layout.data * len];
                    c.run::<Create>(
                        m,
                        len,
                        |ins| {
                            ins.copy_from_slice(data);
                            Ok(())
                        },
                        |parity| {
                            for (i, p, file) in &others {
                                let ours = if *i < layout.data {
                                    &data[i * len..(i + 1) * len]
                                } else {
                                    &parity[(i - layout.data) * len..(i - layout.data + 1) * len]
                                };
                                read_padded(file, off, &mut scratch[..len], p)?;
                                if let Some(at) =
                                    ours.iter().zip(&scratch[..len]).position(|(a, b)| a != b)
                                {
                                    disagree = Some((*i, off + at as u64));
                                    break;
                                }
                            }
                            Ok(())
                        },
                    )?;
                }
                if to_writer.send((off, len, st)).is_err() {
                    return Ok(());
                }
                off += len as u64;
                pb.inc((len * layout.data) as u64);
            }
            Ok(())
        })();
        drop(to_writer);
        let digests = writer_result(writer.join()).map(|()| hashers.finish());
        (r, digests)
    });
    pb.finish_and_clear();
    main_result?;
    let (digests, content) = digests?;
    if let (true, Some(want)) = (checked_late, &layout.sums) {
        let read = sources.iter().map(|&i| (i, digests[i])).chain(
            others
                .iter()
                .zip(&on_disk)
                .map(|((i, _, _), h)| (*i, h.digest())),
        );
        let bad: Vec<usize> = read
            .filter(|&(i, d)| d != want[i])
            .map(|(i, _)| i)
            .collect();
        if !bad.is_empty() {
            return Ok(Attempt::Damaged(bad));
        }
    }
    if let Some(want) = &layout.sums {
        for &i in &missing {
            if digests[i as usize] != want[i as usize] {
                return Err(not_written(format!(
                    "rebuilt {} does not match its checksum: other blocks are damaged in ways the checksums did not show",
                    layout.block_file(i as usize)
                )));
            }
        }
    }
    if let Some((i, at)) = disagree {
        return Err(not_written(format!(
            "the blocks disagree: {} differs at byte {at} from what the other blocks give; a block is damaged, or the matrix and counts (-x, -t, -r) are not the ones the blocks were made with",
            layout.block_file(i)
        )));
    }
    let proof = match (layout.content, &layout.sums) {
        (Some(want), _) => {
            if content != want {
                return Err(not_written(
                    "the recovered file does not match the digest of the original recorded when it was encoded".into(),
                ));
            }
            Proof::Content
        }
        (None, Some(_)) => Proof::Blocks,
        (None, None) => {
            if !padding_ok {
                return Err(not_written(format!(
                    "the data blocks hold bytes past the {} bytes {DATA_INFO} gives as the file's size: {DATA_INFO} is wrong, or the matrix and counts (-x, -t, -r) are",
                    layout.size
                )));
            }
            let expected = Layout::for_file(
                layout.size,
                &layout.name,
                layout.kind,
                layout.data,
                layout.rdnc,
            )
            .map(|l| l.block)
            .unwrap_or(0);
            if expected != layout.block {
                Proof::Unproved(format!(
                    "{DATA_INFO} gives {} bytes, which make blocks of {expected} bytes, but the blocks hold {}: the size cannot be trusted",
                    layout.size, layout.block
                ))
            } else if checker.is_some() {
                Proof::Consistent
            } else {
                Proof::Unproved(format!(
                    "there is no {MANIFEST} with checksums, and no block is left over to check the rebuilt data against ({} of {} redundancy blocks were needed)",
                    missing.len(),
                    layout.rdnc
                ))
            }
        }
    };
    out.file_ref()
        .set_len(layout.size)
        .map_err(|e| io_error(format!("cannot write '{}'", output.display()), &e))?;
    for r in rebuilt.into_iter().flatten() {
        r.commit_with(opts.sync)?;
    }
    out.commit_with(opts.sync)?;
    Ok(Attempt::Done(Box::new(RecoverReport {
        rebuilt: lost.into_iter().map(|(_, s)| s).collect(),
        layout: layout.clone(),
        output: output.to_path_buf(),
        proof,
        not_written_back,
        secs: 0.0,
    })))
}

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
