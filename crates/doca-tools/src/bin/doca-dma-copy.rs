//! `doca-dma-copy`: copies a file through DMA memcpy jobs, streaming it in chunks with
//! several jobs in flight, then verifies the copy against the source before the output
//! appears under its name.

use clap::Parser;
use doca_core::device::Capability;
use doca_core::{AccessFlags, Buf, BufInventory, Error, ErrorCode, Mmap, Result, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use doca_tools::{AtomicFile, io_error, open_device, parse_size, report};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Copy a file through DOCA DMA jobs and verify the copy.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Device PCI address (XX:XX.X or XXXX:XX:XX.X; default: the first with DMA).
    #[arg(short, long)]
    pci_addr: Option<String>,
    /// Bytes per DMA job.
    #[arg(long, default_value = "1M", value_parser = parse_size)]
    chunk: usize,
    /// Jobs in flight.
    #[arg(long, default_value_t = 8)]
    depth: u32,
    /// Replace DST if it exists.
    #[arg(short, long)]
    force: bool,
    /// Print nothing on success.
    #[arg(short, long)]
    quiet: bool,
    /// File to copy.
    src: PathBuf,
    /// Where the copy goes.
    dst: PathBuf,
}

/// One chunk's source and destination buffers.
struct Slot {
    id: usize,
    src: Buf,
    dst: Buf,
}

struct Copier {
    dma: Dma,
    wq: WorkQ,
    free: Vec<Slot>,
    /// Output offset of each in-flight chunk, by slot index (the job's user data).
    offsets: Vec<u64>,
    staging: Vec<u8>,
    _mmap: Mmap,
    _inv: BufInventory,
}

impl Copier {
    fn new(args: &Args) -> Result<Copier> {
        if args.chunk == 0 || args.chunk as u64 > doca_dma::MAX_BUF_SIZE {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "--chunk must be 1..={} bytes, got {}",
                    doca_dma::MAX_BUF_SIZE,
                    args.chunk
                ),
            ));
        }
        if args.depth == 0 || args.depth > 1024 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("--depth must be 1..=1024, got {}", args.depth),
            ));
        }
        let dev = open_device(args.pci_addr.as_deref(), Capability::Dma)?;
        let depth = args.depth as usize;
        let total = depth.checked_mul(2 * args.chunk).ok_or_else(|| {
            Error::with_context(ErrorCode::NoMemory, "--chunk x --depth is too large")
        })?;
        let mut memory = Vec::new();
        memory.try_reserve_exact(total).map_err(|_| {
            Error::with_context(
                ErrorCode::NoMemory,
                format!("cannot allocate {total} bytes of buffers; lower --chunk or --depth"),
            )
        })?;
        memory.resize(total, 0u8);
        let mut mmap = Mmap::new();
        mmap.set_memory(memory)?;
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
        mmap.dev_add(&dev)?;
        mmap.start()?;
        let mut inv = BufInventory::new(2 * depth)?;
        inv.start()?;
        let free = (0..depth)
            .rev()
            .map(|i| {
                let base = 2 * i * args.chunk;
                Ok(Slot {
                    id: i,
                    src: inv.buf_at(&mmap, base, args.chunk)?,
                    dst: inv.buf_at(&mmap, base + args.chunk, args.chunk)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let dma = Dma::new();
        dma.as_ctx().dev_add(&dev)?;
        dma.as_ctx().start()?;
        let mut wq = WorkQ::new(args.depth)?;
        dma.as_ctx().workq_add(&mut wq)?;
        Ok(Copier {
            dma,
            wq,
            free,
            offsets: vec![0; depth],
            staging: vec![0u8; args.chunk],
            _mmap: mmap,
            _inv: inv,
        })
    }

    /// Waits for one job, writes its chunk to `out` and frees its slot.
    fn retrieve(&mut self, out: &File, out_name: &str) -> Result<()> {
        let mut c = self
            .wq
            .wait(Some(Duration::from_secs(60)))
            .map_err(Error::from)?;
        let slot = c.event().user_data.u64() as usize;
        let (Some(dst), Some(src)) = (c.take_buf(MemcpyJob::DST), c.take_buf(MemcpyJob::SRC))
        else {
            return Err(Error::with_context(
                ErrorCode::Unexpected,
                "a completed job came back without its buffers",
            ));
        };
        let n = dst.copy_data_to(&mut self.staging)?;
        out.write_all_at(&self.staging[..n], self.offsets[slot])
            .map_err(|e| io_error(format!("cannot write '{out_name}'"), &e))?;
        self.free.push(Slot { id: slot, src, dst });
        Ok(())
    }

    /// Copies `input` into `out`; returns the bytes and jobs.
    fn copy(
        &mut self,
        input: &mut File,
        in_name: &str,
        out: &File,
        out_name: &str,
    ) -> Result<(u64, u64)> {
        let (mut offset, mut jobs) = (0u64, 0u64);
        let r = loop {
            // A free slot first: collecting a finished chunk reuses the staging buffer.
            if self.free.is_empty()
                && let Err(e) = self.retrieve(out, out_name)
            {
                break Err(e);
            }
            let n = match read_full(input, &mut self.staging) {
                Ok(n) => n,
                Err(e) => break Err(io_error(format!("cannot read '{in_name}'"), &e)),
            };
            if n == 0 {
                break Ok(());
            }
            let Slot {
                id: slot,
                mut src,
                mut dst,
            } = self.free.pop().expect("a free slot");
            src.reset_data_len();
            dst.reset_data_len();
            if let Err(e) = src.write_data(&self.staging[..n]) {
                self.free.push(Slot { id: slot, src, dst });
                break Err(e);
            }
            self.offsets[slot] = offset;
            let job = MemcpyJob::new(src, dst, slot as u64);
            if let Err((e, mut rec)) = self.wq.submit_job(self.dma.as_ctx(), job) {
                if let (Some(dst), Some(src)) =
                    (rec.take_buf(MemcpyJob::DST), rec.take_buf(MemcpyJob::SRC))
                {
                    self.free.push(Slot { id: slot, src, dst });
                }
                break Err(e);
            }
            offset += n as u64;
            jobs += 1;
        };
        // Everything in flight is collected, also after a failure.
        let mut drained = Ok(());
        while self.wq.inflight() > 0 {
            if let Err(e) = self.retrieve(out, out_name) {
                drained = Err(e);
                if self.wq.inflight() == 0 {
                    break;
                }
            }
        }
        r.and(drained).map(|_| (offset, jobs))
    }

    fn teardown(mut self) {
        let _ = self.dma.as_ctx().workq_rm(&mut self.wq);
        let _ = self.dma.as_ctx().stop();
    }
}

/// Reads until `buf` is full or the input ends.
fn read_full(input: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Compares two files byte for byte; the first differing offset, if any.
fn first_difference(a: &mut File, b: &mut File, chunk: usize) -> io::Result<Option<u64>> {
    let (mut x, mut y) = (vec![0u8; chunk], vec![0u8; chunk]);
    let mut at = 0u64;
    loop {
        let n = read_full(a, &mut x)?;
        let m = read_full(b, &mut y)?;
        if let Some(i) = x[..n.min(m)]
            .iter()
            .zip(&y[..n.min(m)])
            .position(|(p, q)| p != q)
        {
            return Ok(Some(at + i as u64));
        }
        if n != m {
            return Ok(Some(at + n.min(m) as u64));
        }
        if n == 0 {
            return Ok(None);
        }
        at += n as u64;
    }
}

fn run(args: &Args) -> Result<String> {
    let in_name = args.src.display().to_string();
    let out_name = args.dst.display().to_string();
    let mut input =
        File::open(&args.src).map_err(|e| io_error(format!("cannot open '{in_name}'"), &e))?;
    let meta = input
        .metadata()
        .map_err(|e| io_error(format!("cannot stat '{in_name}'"), &e))?;
    if !meta.is_file() {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!("'{in_name}' is not a regular file"),
        ));
    }
    if let (Ok(a), Ok(b)) = (args.src.canonicalize(), args.dst.canonicalize())
        && a == b
    {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "source and destination are the same file",
        ));
    }
    let mut out = AtomicFile::create(&args.dst, args.force)?;
    let mut copier = Copier::new(args)?;
    let t = Instant::now();
    let r = copier.copy(&mut input, &in_name, out.file(), &out_name);
    copier.teardown();
    let (bytes, jobs) = r?;
    let secs = t.elapsed().as_secs_f64();
    // Verify what reached the file against the source before it takes the name.
    let mut a =
        File::open(&args.src).map_err(|e| io_error(format!("cannot reopen '{in_name}'"), &e))?;
    let f = out.file();
    f.sync_data()
        .map_err(|e| io_error(format!("cannot write '{out_name}'"), &e))?;
    let mut b = f
        .try_clone()
        .map_err(|e| io_error(format!("cannot reopen '{out_name}'"), &e))?;
    std::io::Seek::rewind(&mut b)
        .map_err(|e| io_error(format!("cannot reopen '{out_name}'"), &e))?;
    let diff = first_difference(&mut a, &mut b, args.chunk.min(8 << 20))
        .map_err(|e| io_error("cannot verify the copy", &e))?;
    if let Some(at) = diff {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            format!(
                "verification failed: the copy differs from '{in_name}' at byte {at} (did the source change while copying?); '{out_name}' was not written"
            ),
        ));
    }
    out.commit()?;
    Ok(format!(
        "copied {bytes} bytes from '{in_name}' to '{out_name}' in {jobs} DMA job(s), {:.1} MB/s; verified",
        bytes as f64 / secs.max(1e-9) / 1e6
    ))
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args) {
        Ok(msg) => {
            if !args.quiet {
                println!("{msg}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => report("doca-dma-copy", &e),
    }
}
