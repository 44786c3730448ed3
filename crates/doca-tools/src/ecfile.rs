//! Files erasure coded in the block-directory layout of DOCA's erasure coding sample:
//! `data_block_<i>` and `rdnc_block_<i>` files of one block size (the file size divided
//! by the data block count, rounded up to 64 bytes; the last data blocks zero-padded),
//! and `data_info` holding "<original size> <original path>". An `ec_manifest` beside
//! them records the matrix and a checksum (XXH3-64) of every block, so that damaged
//! blocks are found as well as missing ones.
//!
//! Everything streams in stripes (a slice of every block at the same offset), through
//! one DOCA EC job per stripe: memory stays bounded whatever the file size, and every
//! output is written under a temporary name and renamed only when complete.

use crate::{AtomicFile, io_error};
use doca_core::{AccessFlags, RetrieveError};
use doca_core::{BufInventory, Dev, Error, ErrorCode, Mmap, Result, WorkQ};
use doca_ec::{Ec, EcJob, JOB_CREATE, JOB_RECOVER, Matrix, MatrixType};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::fmt::Write as _;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use xxhash_rust::xxh3::Xxh3;

/// The sample's size-and-name file.
pub const DATA_INFO: &str = "data_info";
/// Matrix, counts, block size and block checksums.
pub const MANIFEST: &str = "ec_manifest";
const MANIFEST_MAGIC: &str = "doca-ec-manifest 1";

/// How a set of blocks was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Coding matrix type.
    pub kind: MatrixType,
    /// Data block count (M).
    pub data: usize,
    /// Redundancy block count (K).
    pub rdnc: usize,
    /// Bytes per block file.
    pub block: u64,
    /// Size of the original file.
    pub size: u64,
    /// The original file's path, as given when encoding.
    pub name: String,
    /// XXH3-64 of every block (data blocks, then redundancy), when a manifest exists.
    pub sums: Option<Vec<u64>>,
}

/// The matrix type's name on the command line.
pub fn kind_name(k: MatrixType) -> &'static str {
    match k {
        MatrixType::Cauchy => "cauchy",
        MatrixType::Vandermonde => "vandermonde",
    }
}

/// Parses "cauchy" or "vandermonde".
pub fn parse_kind(s: &str) -> Result<MatrixType> {
    match s {
        "cauchy" => Ok(MatrixType::Cauchy),
        "vandermonde" => Ok(MatrixType::Vandermonde),
        _ => Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!("matrix type '{s}' is not cauchy or vandermonde"),
        )),
    }
}

fn check_counts(data: usize, rdnc: usize) -> Result<()> {
    if !(1..=doca_ec::MAX_DATA_BLOCKS).contains(&data) {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "data block count is {data}; it must be 1..={}",
                doca_ec::MAX_DATA_BLOCKS
            ),
        ));
    }
    if !(1..=doca_ec::MAX_RDNC_BLOCKS).contains(&rdnc) {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "redundancy block count is {rdnc}; it must be 1..={}",
                doca_ec::MAX_RDNC_BLOCKS
            ),
        ));
    }
    Ok(())
}

impl Layout {
    /// The layout for a file of `size` bytes: block size = size / data, rounded up to
    /// 64 bytes (at least 64).
    pub fn for_file(
        size: u64,
        name: &str,
        kind: MatrixType,
        data: usize,
        rdnc: usize,
    ) -> Result<Layout> {
        check_counts(data, rdnc)?;
        let block = size.div_ceil(data as u64).next_multiple_of(64).max(64);
        Ok(Layout {
            kind,
            data,
            rdnc,
            block,
            size,
            name: name.to_string(),
            sums: None,
        })
    }

    /// All blocks: data, then redundancy.
    pub fn count(&self) -> usize {
        self.data + self.rdnc
    }

    /// The file name of block `i` (data 0..M, redundancy M..M+K).
    pub fn block_file(&self, i: usize) -> String {
        if i < self.data {
            format!("data_block_{i}")
        } else {
            format!("rdnc_block_{}", i - self.data)
        }
    }

    fn manifest_text(&self) -> String {
        let mut t = format!(
            "{MANIFEST_MAGIC}\nmatrix {}\ndata {}\nrdnc {}\nblock {}\nsize {}\nname {}\n",
            kind_name(self.kind),
            self.data,
            self.rdnc,
            self.block,
            self.size,
            self.name
        );
        if let Some(sums) = &self.sums {
            for (i, s) in sums.iter().enumerate() {
                let _ = writeln!(t, "xxh3 {} {s:016x}", self.block_file(i));
            }
        }
        t
    }

    fn parse_manifest(text: &str, path: &Path) -> Result<Layout> {
        let bad = |why: &str| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{}' is not a valid manifest: {why}", path.display()),
            )
        };
        let mut lines = text.lines();
        if lines.next() != Some(MANIFEST_MAGIC) {
            return Err(bad("it does not start with the manifest header"));
        }
        let mut get = |key: &str| -> Result<String> {
            let line = lines
                .next()
                .ok_or_else(|| bad(&format!("no '{key}' line")))?;
            line.strip_prefix(key)
                .and_then(|r| r.strip_prefix(' '))
                .map(str::to_string)
                .ok_or_else(|| bad(&format!("expected '{key} ...', found '{line}'")))
        };
        let num = |s: String, key: &str| -> Result<u64> {
            s.parse::<u64>()
                .map_err(|_| bad(&format!("'{key}' is not a number: '{s}'")))
        };
        let kind = parse_kind(&get("matrix")?).map_err(|e| bad(&e.to_string()))?;
        let data = num(get("data")?, "data")? as usize;
        let rdnc = num(get("rdnc")?, "rdnc")? as usize;
        let block = num(get("block")?, "block")?;
        let size = num(get("size")?, "size")?;
        let name = get("name")?;
        check_counts(data, rdnc).map_err(|e| bad(&e.to_string()))?;
        if block == 0 || block % 64 != 0 || size > block * data as u64 {
            return Err(bad("the block size does not fit the file size"));
        }
        let mut layout = Layout {
            kind,
            data,
            rdnc,
            block,
            size,
            name,
            sums: None,
        };
        let mut sums = Vec::with_capacity(layout.count());
        for i in 0..layout.count() {
            let v = get("xxh3")?;
            let (file, hex) = v
                .split_once(' ')
                .ok_or_else(|| bad("malformed checksum line"))?;
            if file != layout.block_file(i) {
                return Err(bad(&format!(
                    "checksum line for '{file}' where '{}' was expected",
                    layout.block_file(i)
                )));
            }
            sums.push(
                u64::from_str_radix(hex, 16).map_err(|_| bad("a checksum is not hexadecimal"))?,
            );
        }
        layout.sums = Some(sums);
        Ok(layout)
    }

    /// Reads a block directory's layout: its manifest, or (blocks made by DOCA's sample)
    /// `data_info` plus the counts and matrix given in `guess`, with the block size taken
    /// from the block files present.
    pub fn read(dir: &Path, guess: Option<(MatrixType, usize, usize)>) -> Result<Layout> {
        let mpath = dir.join(MANIFEST);
        match std::fs::read_to_string(&mpath) {
            Ok(t) => return Layout::parse_manifest(&t, &mpath),
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(io_error(format!("cannot read '{}'", mpath.display()), &e));
            }
            Err(_) => {}
        }
        let ipath = dir.join(DATA_INFO);
        let info = std::fs::read_to_string(&ipath).map_err(|e| {
            io_error(
                format!(
                    "'{}' holds no erasure coded blocks (cannot read {DATA_INFO})",
                    dir.display()
                ),
                &e,
            )
        })?;
        let (size, name) = info.trim_end_matches('\n').split_once(' ').ok_or_else(|| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{}' does not hold '<size> <path>'", ipath.display()),
            )
        })?;
        let size: u64 = size.parse().map_err(|_| {
            Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{}': '{size}' is not a size", ipath.display()),
            )
        })?;
        let Some((kind, data, rdnc)) = guess else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "'{}' has no {MANIFEST}: give the matrix and block counts it was made with (-x, -t, -r)",
                    dir.display()
                ),
            ));
        };
        let mut layout = Layout::for_file(size, name, kind, data, rdnc)?;
        // Blocks from elsewhere may use another rounding: trust the files present.
        if let Some(len) = (0..layout.count())
            .find_map(|i| std::fs::metadata(dir.join(layout.block_file(i))).ok())
            .map(|m| m.len())
            && len % 64 == 0
            && len * data as u64 >= size
            && len > 0
        {
            layout.block = len;
        }
        Ok(layout)
    }
}

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
}

impl Default for Options {
    fn default() -> Options {
        Options {
            stripe: 0,
            force: false,
            progress: true,
            sync: true,
        }
    }
}

fn stripe_len(layout: &Layout, asked: usize) -> usize {
    let want = if asked == 0 {
        ((16usize << 20) / layout.count()).clamp(64 << 10, 4 << 20)
    } else {
        asked
    };
    let want = (want / 64 * 64).max(64);
    want.min(layout.block as usize)
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

/// Runs one DOCA EC job per stripe: inputs are read straight into the mmap, outputs
/// are written straight from it.
struct StripeCoder {
    ec: Ec,
    wq: WorkQ,
    mmap: Mmap,
    inv: BufInventory,
    /// Offset of the output area.
    out_at: usize,
}

impl StripeCoder {
    fn new(dev: &Dev, inputs: usize, outputs: usize, stripe: usize) -> Result<StripeCoder> {
        let out_at = inputs * stripe;
        let total = out_at + outputs * stripe;
        let mut memory = Vec::new();
        memory.try_reserve_exact(total).map_err(|_| {
            Error::with_context(
                ErrorCode::NoMemory,
                format!("cannot allocate {total} bytes for stripes; give a smaller --stripe"),
            )
        })?;
        memory.resize(total, 0u8);
        let mut mmap = Mmap::new();
        mmap.set_memory(memory)?;
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
        mmap.dev_add(dev)?;
        mmap.start()?;
        let mut inv = BufInventory::new(2)?;
        inv.start()?;
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
    fn run(
        &mut self,
        matrix: &Matrix,
        job_type: u32,
        len: usize,
        fill: impl FnOnce(&mut [u8]) -> Result<()>,
        take: impl FnOnce(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let (ins, outs) = (matrix.inputs(), matrix.outputs());
        fill(&mut self.mmap.memory_mut()?[..ins * len])?;
        let src = self.inv.buf_with_data_at(&self.mmap, 0, ins * len)?;
        let dst = self.inv.buf_at(&self.mmap, self.out_at, outs * len)?;
        self.wq
            .submit_job(self.ec.as_ctx(), EcJob::new(job_type, matrix, src, dst, 0))
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
        take(&self.mmap.memory_mut()?[self.out_at..self.out_at + outs * len])
    }
}

impl Drop for StripeCoder {
    fn drop(&mut self) {
        let _ = self.ec.as_ctx().workq_rm(&mut self.wq);
        let _ = self.ec.as_ctx().stop();
    }
}

/// Reads `buf.len()` bytes at `off`, zero-filling past the end of the file.
fn read_padded(f: &File, off: u64, buf: &mut [u8], name: &Path) -> Result<()> {
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
fn read_input(f: &File, off: u64, buf: &mut [u8], name: &Path, size: u64) -> Result<()> {
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
fn input_unchanged(
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

fn write_at(f: &File, off: u64, buf: &[u8], name: &Path) -> Result<()> {
    f.write_all_at(buf, off)
        .map_err(|e| io_error(format!("cannot write '{}'", name.display()), &e))
}

/// Names a block directory holds that an encode would write.
fn existing_outputs(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| {
            n == DATA_INFO
                || n == MANIFEST
                || n.starts_with("data_block_")
                || n.starts_with("rdnc_block_")
        })
        .collect();
    v.sort();
    v
}

/// What an encode did.
#[derive(Debug, Clone)]
pub struct EncodeReport {
    /// The layout written.
    pub layout: Layout,
    /// Seconds spent.
    pub secs: f64,
}

/// Encodes `input` into `dir` (created if needed): M data block files, K redundancy
/// block files, `data_info` and the manifest. Refuses a directory that already holds
/// blocks unless `opts.force`.
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
    let mut layout = Layout::for_file(meta.len(), &input.to_string_lossy(), kind, data, rdnc)?;
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
    let n = layout.count();
    let outs: Vec<AtomicFile> = (0..n)
        .map(|i| AtomicFile::create(&dir.join(layout.block_file(i)), true))
        .collect::<Result<_>>()?;
    let stripe = stripe_len(&layout, opts.stripe);
    let mut coder = StripeCoder::new(dev, data, rdnc, stripe)?;
    let coding = coder.ec.matrix_create(kind, data, rdnc)?;
    let pb = progress(layout.block * data as u64, "encode", opts.progress);
    // A writer thread hashes and writes each stripe (data and redundancy blocks, back to
    // back) while the next one is read and coded. Two stripe buffers circulate.
    let (to_writer, stripes) = std::sync::mpsc::sync_channel::<(u64, usize, Vec<u8>)>(1);
    let (give_back, free) = std::sync::mpsc::sync_channel::<Vec<u8>>(2);
    for _ in 0..2 {
        let mut b = Vec::new();
        b.try_reserve_exact(n * stripe).map_err(|_| {
            Error::with_context(
                ErrorCode::NoMemory,
                "cannot allocate the stripe buffers; give a smaller --stripe",
            )
        })?;
        b.resize(n * stripe, 0);
        let _ = give_back.send(b);
    }
    let outs_ref = &outs;
    let (main_result, sums) = std::thread::scope(|s| {
        let writer = s.spawn(move || -> Result<Vec<u64>> {
            let mut sums: Vec<Xxh3> = (0..n).map(|_| Xxh3::new()).collect();
            for (off, len, bytes) in stripes {
                for (i, chunk) in bytes[..n * len].chunks(len).enumerate() {
                    sums[i].update(chunk);
                    write_at(outs_ref[i].file_ref(), off, chunk, outs_ref[i].path())?;
                }
                // The main thread may have stopped; the buffer is then simply dropped.
                let _ = give_back.send(bytes);
            }
            Ok(sums.iter().map(Xxh3::digest).collect())
        });
        let mut off = 0u64;
        let r = (|| -> Result<()> {
            while off < layout.block {
                crate::cleanup::interrupted()?;
                let len = stripe.min((layout.block - off) as usize);
                // No buffer back: the writer stopped (its error is reported below).
                let Ok(mut buf) = free.recv() else {
                    return Ok(());
                };
                let (head, tail) = buf[..n * len].split_at_mut(data * len);
                coder.run(
                    &coding,
                    JOB_CREATE,
                    len,
                    |ins| {
                        for (i, chunk) in ins.chunks_mut(len).enumerate() {
                            let at = i as u64 * layout.block + off;
                            // Bytes of block i past the end of the file are zeros.
                            let end = layout.size.saturating_sub(at).min(len as u64) as usize;
                            read_input(&file, at, &mut chunk[..end], input, layout.size)?;
                            chunk[end..].fill(0);
                        }
                        head.copy_from_slice(ins);
                        Ok(())
                    },
                    |parity| {
                        tail.copy_from_slice(parity);
                        Ok(())
                    },
                )?;
                if to_writer.send((off, len, buf)).is_err() {
                    return Ok(());
                }
                off += len as u64;
                pb.inc((len * data) as u64);
            }
            Ok(())
        })();
        drop(to_writer);
        let sums = writer.join().unwrap_or_else(|_| {
            Err(Error::with_context(
                ErrorCode::Unexpected,
                "the block writer thread panicked",
            ))
        });
        (r, sums)
    });
    pb.finish_and_clear();
    main_result?;
    let sums = sums?;
    // The blocks stand for the input only if it did not change meanwhile (a write in
    // place, an append, a truncation): else nothing replaces the old set.
    let now = file
        .metadata()
        .map_err(|e| io_error(format!("cannot stat '{}'", input.display()), &e))?;
    input_unchanged(&file, &meta, &now, input)?;
    layout.sums = Some(sums);
    let mut info = AtomicFile::create(&dir.join(DATA_INFO), true)?;
    write_at(
        info.file(),
        0,
        format!("{} {}", layout.size, layout.name).as_bytes(),
        &dir.join(DATA_INFO),
    )?;
    let mut manifest = AtomicFile::create(&dir.join(MANIFEST), true)?;
    write_at(
        manifest.file(),
        0,
        layout.manifest_text().as_bytes(),
        &dir.join(MANIFEST),
    )?;
    for o in outs {
        o.commit_with(opts.sync)?;
    }
    info.commit_with(opts.sync)?;
    manifest.commit_with(opts.sync)?;
    // Blocks of an earlier, wider layout would confuse a later recover.
    for name in old {
        let keep =
            name == DATA_INFO || name == MANIFEST || (0..n).any(|i| layout.block_file(i) == name);
        if !keep {
            let _ = std::fs::remove_file(dir.join(name));
        }
    }
    Ok(EncodeReport {
        layout,
        secs: t.elapsed().as_secs_f64(),
    })
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
    let mut states = Vec::with_capacity(layout.count());
    let pb = progress(layout.block * layout.count() as u64, "check", opts.progress);
    let mut buf = vec![0u8; 4 << 20];
    for i in 0..layout.count() {
        crate::cleanup::interrupted()?;
        let path = dir.join(layout.block_file(i));
        let state = match std::fs::metadata(&path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => BlockState::Missing,
            Err(e) => BlockState::Unreadable(e.to_string()),
            Ok(m) if m.len() != layout.block => BlockState::WrongSize(m.len()),
            Ok(_) => match &layout.sums {
                None => BlockState::Ok,
                Some(sums) => match hash_file(&path, &mut buf, &pb) {
                    Ok(h) if h == sums[i] => BlockState::Ok,
                    Ok(_) => BlockState::Damaged,
                    Err(e) => BlockState::Unreadable(e.to_string()),
                },
            },
        };
        states.push(state);
    }
    pb.finish_and_clear();
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

/// What a recover did.
#[derive(Debug, Clone)]
pub struct RecoverReport {
    /// The layout found.
    pub layout: Layout,
    /// Blocks rebuilt, with why they were.
    pub rebuilt: Vec<String>,
    /// Where the original file was written.
    pub output: PathBuf,
    /// Seconds spent.
    pub secs: f64,
}

/// Rebuilds the missing or damaged blocks of `dir` (at most K) and writes the original
/// file to `output`. Refuses an existing `output` unless `opts.force`.
pub fn recover(
    dev: &Dev,
    dir: &Path,
    output: &Path,
    guess: Option<(MatrixType, usize, usize)>,
    opts: &Options,
) -> Result<RecoverReport> {
    let t = Instant::now();
    let layout = Layout::read(dir, guess)?;
    let states = scan(dir, &layout, opts)?;
    let lost = losses(&layout, &states);
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
    let mut out = AtomicFile::create(output, opts.force)?;
    let missing: Vec<u32> = lost.iter().map(|(i, _)| *i as u32).collect();
    let stripe = stripe_len(&layout, opts.stripe);
    let mut coder = StripeCoder::new(dev, layout.data, layout.rdnc.max(1), stripe)?;
    let coding = coder
        .ec
        .matrix_create(layout.kind, layout.data, layout.rdnc)?;
    let rec = if missing.is_empty() {
        None
    } else {
        Some(coder.ec.recover_matrix_create(&coding, &missing)?)
    };
    // Sources: the survivors the recover matrix reads (all data blocks when nothing is
    // lost).
    let sources: Vec<usize> = match &rec {
        Some(r) => r.survivors().unwrap_or_default().to_vec(),
        None => (0..layout.data).collect(),
    };
    let files: Vec<(PathBuf, File)> = sources
        .iter()
        .map(|&i| {
            let p = dir.join(layout.block_file(i));
            crate::open_regular(&p).map(|f| (p.clone(), f))
        })
        .collect::<Result<_>>()?;
    let rebuilt: Vec<AtomicFile> = missing
        .iter()
        .map(|&i| AtomicFile::create(&dir.join(layout.block_file(i as usize)), true))
        .collect::<Result<_>>()?;
    let mut sums: Vec<Xxh3> = missing.iter().map(|_| Xxh3::new()).collect();
    let pb = progress(layout.block * layout.data as u64, "recover", opts.progress);
    let out_path = output.to_path_buf();
    // Writes block i's stripe at `off` into the original file (bytes below its size).
    let put = |out: &AtomicFile, i: usize, off: u64, bytes: &[u8]| -> Result<()> {
        if i >= layout.data {
            return Ok(());
        }
        let at = i as u64 * layout.block + off;
        let n = layout.size.saturating_sub(at).min(bytes.len() as u64) as usize;
        if n > 0 {
            write_at(out.file_ref(), at, &bytes[..n], &out_path)?;
        }
        Ok(())
    };
    let mut off = 0u64;
    let mut plain = vec![0u8; if rec.is_none() { stripe } else { 0 }];
    while off < layout.block {
        crate::cleanup::interrupted()?;
        let len = stripe.min((layout.block - off) as usize);
        match &rec {
            None => {
                for (k, (p, f)) in files.iter().enumerate() {
                    read_padded(f, off, &mut plain[..len], p)?;
                    put(&out, sources[k], off, &plain[..len])?;
                }
            }
            Some(r) => coder.run(
                r,
                JOB_RECOVER,
                len,
                |ins| {
                    for (k, chunk) in ins.chunks_mut(len).enumerate() {
                        let (p, f) = &files[k];
                        read_padded(f, off, chunk, p)?;
                        put(&out, sources[k], off, chunk)?;
                    }
                    Ok(())
                },
                |outs| {
                    for (o, chunk) in outs.chunks(len).enumerate() {
                        sums[o].update(chunk);
                        write_at(rebuilt[o].file_ref(), off, chunk, rebuilt[o].path())?;
                        put(&out, missing[o] as usize, off, chunk)?;
                    }
                    Ok(())
                },
            )?,
        }
        off += len as u64;
        pb.inc((len * layout.data) as u64);
    }
    pb.finish_and_clear();
    if let Some(want) = &layout.sums {
        for (o, &i) in missing.iter().enumerate() {
            if sums[o].digest() != want[i as usize] {
                return Err(Error::with_context(
                    ErrorCode::Unexpected,
                    format!(
                        "rebuilt {} does not match its checksum: other blocks are damaged in ways the checksums did not show; nothing was written",
                        layout.block_file(i as usize)
                    ),
                ));
            }
        }
    }
    out.file()
        .set_len(layout.size)
        .map_err(|e| io_error(format!("cannot write '{}'", output.display()), &e))?;
    for r in rebuilt {
        r.commit_with(opts.sync)?;
    }
    out.commit_with(opts.sync)?;
    Ok(RecoverReport {
        rebuilt: lost.into_iter().map(|(_, s)| s).collect(),
        layout,
        output: output.to_path_buf(),
        secs: t.elapsed().as_secs_f64(),
    })
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
}

impl VerifyReport {
    /// Whether everything is whole and consistent.
    pub fn ok(&self) -> bool {
        self.lost.is_empty() && self.inconsistent.is_empty()
    }
}

/// Checks every block (presence, size, checksum) and, when all are present, that the
/// redundancy blocks are what the data blocks encode to.
pub fn verify(
    dev: &Dev,
    dir: &Path,
    guess: Option<(MatrixType, usize, usize)>,
    opts: &Options,
) -> Result<VerifyReport> {
    let layout = Layout::read(dir, guess)?;
    let states = scan(dir, &layout, opts)?;
    let lost: Vec<String> = losses(&layout, &states)
        .into_iter()
        .map(|(_, s)| s)
        .collect();
    let mut inconsistent = Vec::new();
    if lost.is_empty() {
        let stripe = stripe_len(&layout, opts.stripe);
        let mut coder = StripeCoder::new(dev, layout.data, layout.rdnc, stripe)?;
        let coding = coder
            .ec
            .matrix_create(layout.kind, layout.data, layout.rdnc)?;
        let files: Vec<(PathBuf, File)> = (0..layout.count())
            .map(|i| {
                let p = dir.join(layout.block_file(i));
                crate::open_regular(&p).map(|f| (p.clone(), f))
            })
            .collect::<Result<_>>()?;
        let mut theirs = vec![0u8; stripe];
        let mut bad = vec![None::<u64>; layout.rdnc];
        let pb = progress(
            layout.block * layout.count() as u64,
            "verify",
            opts.progress,
        );
        let mut off = 0u64;
        while off < layout.block {
            crate::cleanup::interrupted()?;
            let len = stripe.min((layout.block - off) as usize);
            coder.run(
                &coding,
                JOB_CREATE,
                len,
                |ins| {
                    for (i, chunk) in ins.chunks_mut(len).enumerate() {
                        read_padded(&files[i].1, off, chunk, &files[i].0)?;
                    }
                    Ok(())
                },
                |parity| {
                    for (r, chunk) in parity.chunks(len).enumerate() {
                        let (p, f) = &files[layout.data + r];
                        read_padded(f, off, &mut theirs[..len], p)?;
                        if bad[r].is_none()
                            && let Some(at) =
                                chunk.iter().zip(&theirs[..len]).position(|(a, b)| a != b)
                        {
                            bad[r] = Some(off + at as u64);
                        }
                    }
                    Ok(())
                },
            )?;
            off += len as u64;
            pb.inc((len * layout.count()) as u64);
        }
        pb.finish_and_clear();
        for (r, b) in bad.iter().enumerate() {
            if let Some(at) = b {
                inconsistent.push(format!(
                    "{} differs from the data's encoding at byte {at}",
                    layout.block_file(layout.data + r)
                ));
            }
        }
    }
    Ok(VerifyReport {
        layout,
        lost,
        inconsistent,
    })
}
