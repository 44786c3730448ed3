//! `doca-dma-copy`: copies a file through DMA memcpy jobs, streaming it in chunks with
//! several jobs in flight, then verifies the copy against the source before the output
//! appears under its name.
//!
//! With `--role`, the copy goes between two processes, as NVIDIA's DMA copy application
//! does between host and DPU: the host exports its memory and passes the descriptor over
//! the comm channel; the DPU side imports it and moves the bytes with DMA jobs; both
//! sides check a SHA-256 of what arrived before it is kept. Start the DPU side first:
//!
//! ```text
//! doca-dma-copy --role dpu received.bin      # DPU side: writes what the host sends
//! doca-dma-copy --role host file.bin         # host side: sends file.bin
//! doca-dma-copy --role host --fetch out.bin  # host side: fetches the DPU side's file
//! ```

use clap::Parser;
use doca_core::device::Capability;
use doca_core::{AccessFlags, Buf, BufInventory, Error, ErrorCode, Mmap, Result, WorkQ};
use doca_core::{BufDesc, Data, SharedMemory};
use doca_dma::{Dma, MemcpyJob};
use doca_tools::cleanup;
use doca_tools::pair::{self, Side as Role};
use doca_tools::{
    AtomicFile, io_error, open_device, open_regular, outln, parse_chunk, report, zeroed,
};
use sha2::Digest;
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
    #[arg(long, default_value = "1M", value_parser = parse_chunk)]
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
    /// Run as one side of a host/DPU pair of processes (start the DPU side first).
    #[arg(long, value_enum)]
    role: Option<Role>,
    /// The representor of the host function to serve (DPU side of a pair).
    #[arg(short, long = "rep-pci", default_value = "3b:00.0")]
    rep_pci: String,
    /// Host side of a pair: fetch the DPU side's file into SRC (the path to write)
    /// instead of sending SRC.
    #[arg(long)]
    fetch: bool,
    /// File to copy (with --role: the file to send, or to write when receiving).
    src: PathBuf,
    /// Where the copy goes (not with --role).
    dst: Option<PathBuf>,
}

/// The comm channel service the two processes meet at.
const SERVICE: &str = "doca-dma-copy";

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
        let memory = zeroed(total, "the DMA buffers; lower --chunk or --depth")?;
        let (mmap, inv) = doca_tools::local_memory(&dev, memory, 2 * depth)?;
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
            staging: zeroed(args.chunk, "the staging buffer; lower --chunk")?,
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
            if let Err(e) = cleanup::interrupted() {
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
    let (mut x, mut y) = (
        zeroed(chunk, "verification").map_err(io::Error::other)?,
        zeroed(chunk, "verification").map_err(io::Error::other)?,
    );
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

/// Reads a whole regular file into new shared memory (at least one byte long).
fn read_shared(path: &std::path::Path) -> Result<(SharedMemory, usize)> {
    let name = path.display().to_string();
    let mut f = open_regular(path)?;
    let meta = f
        .metadata()
        .map_err(|e| io_error(format!("cannot stat '{name}'"), &e))?;
    let len = usize::try_from(meta.len()).map_err(|_| Error::invalid("the file is too large"))?;
    let mut mem = SharedMemory::new(len.max(1))?;
    use doca_core::MemoryRegion;
    // SAFETY: the region's len bytes, borrowed exclusively while it is filled.
    let bytes = unsafe { std::slice::from_raw_parts_mut(mem.as_mut_ptr(), len) };
    let n = read_full(&mut f, bytes).map_err(|e| io_error(format!("cannot read '{name}'"), &e))?;
    let mut more = [0u8; 1];
    let extra = read_full(&mut f, &mut more).unwrap_or(1);
    if n != len || extra != 0 {
        return Err(Error::with_context(
            ErrorCode::IoFailed,
            format!("'{name}' changed size while it was read"),
        ));
    }
    Ok((mem, len))
}

fn sha256_hex(b: &[u8]) -> String {
    pair::hex(&sha2::Sha256::digest(b))
}

/// The DPU side's DMA engine for one transfer: moves bytes between the host's imported
/// memory and a local staging buffer, chunk by chunk.
struct Mover {
    dma: Dma,
    wq: WorkQ,
    inv: BufInventory,
    local: Mmap,
    remote: Mmap,
    chunk: usize,
}

impl Mover {
    fn new(dev: &doca_core::Dev, blob: &[u8], chunk: usize) -> Result<Mover> {
        if chunk == 0 || chunk as u64 > doca_dma::MAX_BUF_SIZE {
            return Err(Error::invalid(format!(
                "--chunk must be 1..={} bytes",
                doca_dma::MAX_BUF_SIZE
            )));
        }
        let remote = Mmap::create_from_export(Data(0), blob, dev)?;
        let mut local = Mmap::new();
        local.set_memory(zeroed(chunk, "a chunk; lower --chunk")?)?;
        local.dev_add(dev)?;
        local.start()?;
        let mut inv = BufInventory::new(4)?;
        inv.start()?;
        let dma = Dma::new();
        dma.as_ctx().dev_add(dev)?;
        dma.as_ctx().start()?;
        let mut wq = WorkQ::new(2)?;
        dma.as_ctx().workq_add(&mut wq)?;
        Ok(Mover {
            dma,
            wq,
            inv,
            local,
            remote,
            chunk,
        })
    }

    fn job(&mut self, src: doca_core::Buf, dst: doca_core::Buf) -> Result<doca_core::Buf> {
        self.wq
            .submit_job(self.dma.as_ctx(), MemcpyJob::new(src, dst, 0))
            .map_err(|(e, _)| e)?;
        let mut c = self
            .wq
            .wait(Some(Duration::from_secs(60)))
            .map_err(Error::from)?;
        c.take_buf(MemcpyJob::DST).ok_or_else(|| {
            Error::with_context(ErrorCode::Unexpected, "a job came back without its buffer")
        })
    }

    /// Host memory [addr, addr + len) -> `out`, hashing what arrived.
    fn pull(&mut self, addr: usize, len: usize, out: &File, out_name: &str) -> Result<String> {
        let mut h = sha2::Sha256::new();
        let mut staging = vec![0u8; self.chunk];
        let mut off = 0;
        while off < len {
            cleanup::interrupted()?;
            let n = (len - off).min(self.chunk);
            let src = self
                .inv
                .buf_by_data(&self.remote, (addr + off) as *mut u8, n)?;
            let dst = self.inv.buf_at(&self.local, 0, n)?;
            let got = self.job(src, dst)?;
            let k = BufDesc::copy_data_to(&got, &mut staging)?;
            h.update(&staging[..k]);
            out.write_all_at(&staging[..k], off as u64)
                .map_err(|e| io_error(format!("cannot write '{out_name}'"), &e))?;
            off += n;
        }
        Ok(pair::hex(&h.finalize()))
    }

    /// `input` -> host memory [addr, addr + len), hashing what was sent.
    fn push(&mut self, input: &mut File, in_name: &str, addr: usize, len: usize) -> Result<String> {
        let mut h = sha2::Sha256::new();
        let mut staging = vec![0u8; self.chunk];
        let mut off = 0;
        while off < len {
            cleanup::interrupted()?;
            let n = (len - off).min(self.chunk);
            let k = read_full(input, &mut staging[..n])
                .map_err(|e| io_error(format!("cannot read '{in_name}'"), &e))?;
            if k != n {
                return Err(Error::with_context(
                    ErrorCode::IoFailed,
                    format!("'{in_name}' shrank while it was sent"),
                ));
            }
            h.update(&staging[..n]);
            let mut src = self.inv.buf_at(&self.local, 0, n)?;
            src.write_data(&staging[..n])?;
            let dst = self
                .inv
                .buf_by_addr(&self.remote, (addr + off) as *mut u8, n)?;
            self.job(src, dst)?;
            off += n;
        }
        Ok(pair::hex(&h.finalize()))
    }

    fn teardown(mut self) {
        let _ = self.dma.as_ctx().workq_rm(&mut self.wq);
        let _ = self.dma.as_ctx().stop();
    }
}

fn field<'a>(w: &[&'a str], i: usize) -> Result<&'a str> {
    w.get(i)
        .copied()
        .ok_or_else(|| Error::invalid("the other side sent an incomplete message"))
}

fn number(w: &[&str], i: usize) -> Result<usize> {
    field(w, i)?
        .parse()
        .map_err(|_| Error::invalid("the other side sent a malformed number"))
}

/// The DPU side of a pair: serves one transfer of `args.src`.
fn run_dpu(args: &Args) -> Result<String> {
    let dev = pair::side_device(Role::Dpu, args.pci_addr.as_deref(), Capability::Dma)?;
    let mut ch = pair::serve(&dev, &args.rep_pci, SERVICE)?;
    let name = args.src.display().to_string();
    let msg = ch.recv()?;
    let w: Vec<&str> = msg.split_whitespace().collect();
    match field(&w, 0)? {
        // PUT <len> <addr> <descriptor>: the host sends; write it to our file.
        "PUT" => {
            let (len, addr) = (number(&w, 1)?, number(&w, 2)?);
            let blob = pair::unhex(field(&w, 3)?)?;
            let out = match AtomicFile::create(&args.src, args.force) {
                Ok(o) => o,
                Err(e) => {
                    let _ = ch.send(format!("ERR {e}").as_bytes());
                    return Err(e);
                }
            };
            let mut mover = Mover::new(&dev, &blob, args.chunk)?;
            let t = Instant::now();
            let r = mover.pull(addr, len, out.file_ref(), &name);
            mover.teardown();
            let digest = r?;
            let secs = t.elapsed().as_secs_f64();
            ch.send(format!("HASH {digest}").as_bytes())?;
            match ch.recv()?.as_str() {
                "OK" => {
                    out.commit()?;
                    Ok(format!(
                        "DPU side: received {len} bytes from the host into '{name}' with DMA jobs, {:.1} MB/s; verified (SHA-256 {digest})",
                        len as f64 / secs.max(1e-9) / 1e6
                    ))
                }
                other => Err(Error::with_context(
                    ErrorCode::Unexpected,
                    format!(
                        "the host did not confirm the copy ({other}); '{name}' was not written"
                    ),
                )),
            }
        }
        // GET: the host fetches our file.
        "GET" => {
            let mut input = match open_regular(&args.src).and_then(|f| match f.metadata() {
                Ok(m) => Ok((f, m.len())),
                Err(e) => Err(io_error(format!("cannot stat '{name}'"), &e)),
            }) {
                Ok(x) => x,
                Err(e) => {
                    let _ = ch.send(format!("ERR {e}").as_bytes());
                    return Err(e);
                }
            };
            let len = input.1 as usize;
            ch.send(format!("SIZE {len}").as_bytes())?;
            let msg = ch.recv()?;
            let w: Vec<&str> = msg.split_whitespace().collect();
            if field(&w, 0)? != "BUF" {
                return Err(Error::invalid(format!(
                    "the host answered '{msg}' instead of a buffer"
                )));
            }
            let addr = number(&w, 1)?;
            let blob = pair::unhex(field(&w, 2)?)?;
            let mut mover = Mover::new(&dev, &blob, args.chunk)?;
            let t = Instant::now();
            let r = mover.push(&mut input.0, &name, addr, len);
            mover.teardown();
            let digest = r?;
            let secs = t.elapsed().as_secs_f64();
            ch.send(format!("HASH {digest}").as_bytes())?;
            match ch.recv()?.as_str() {
                "OK" => Ok(format!(
                    "DPU side: sent {len} bytes of '{name}' to the host with DMA jobs, {:.1} MB/s; verified (SHA-256 {digest})",
                    len as f64 / secs.max(1e-9) / 1e6
                )),
                other => Err(Error::with_context(
                    ErrorCode::Unexpected,
                    format!("the host did not confirm the copy ({other})"),
                )),
            }
        }
        other => Err(Error::invalid(format!("the host asked for '{other}'"))),
    }
}

/// Waits for the DPU side's HASH and checks it against ours.
fn confirm(ch: &mut pair::Channel, ours: &str) -> Result<()> {
    let msg = ch.recv()?;
    let w: Vec<&str> = msg.split_whitespace().collect();
    if field(&w, 0)? == "ERR" {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            format!("the DPU side failed: {}", msg.trim_start_matches("ERR ")),
        ));
    }
    if field(&w, 0)? != "HASH" || field(&w, 1)? != ours {
        let _ = ch.send(b"BAD");
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            format!("verification failed: the DPU side saw SHA-256 {msg}, the host {ours}"),
        ));
    }
    Ok(())
}

/// The host side of a pair: sends `args.src`, or fetches into it with --fetch.
fn run_host(args: &Args) -> Result<String> {
    let dev = pair::side_device(Role::Host, args.pci_addr.as_deref(), Capability::Dma)?;
    let name = args.src.display().to_string();
    if !args.fetch {
        let (mem, len) = read_shared(&args.src)?;
        let digest = {
            let mut m = mem;
            use doca_core::MemoryRegion;
            // SAFETY: the region's len bytes, read before the mmap takes it.
            let d = sha256_hex(unsafe { std::slice::from_raw_parts(m.as_mut_ptr(), len) });
            (m, d)
        };
        let (mem, digest) = digest;
        let mut mmap = Mmap::new();
        mmap.set_memory(mem)?;
        mmap.set_permissions(AccessFlags::DPU_READ_ONLY)?;
        mmap.dev_add(&dev)?;
        mmap.start()?;
        let blob = mmap.export_dpu(&dev)?;
        let addr = mmap.memrange()?.0 as usize;
        let mut ch = pair::connect(&dev, SERVICE)?;
        let t = Instant::now();
        ch.send(format!("PUT {len} {addr} {}", pair::hex(&blob)).as_bytes())?;
        confirm(&mut ch, &digest)?;
        ch.send(b"OK")?;
        let secs = t.elapsed().as_secs_f64();
        mmap.stop()?;
        return Ok(format!(
            "host side: sent {len} bytes of '{name}' to the DPU process through an exported mmap, {:.1} MB/s; verified (SHA-256 {digest})",
            len as f64 / secs.max(1e-9) / 1e6
        ));
    }
    let mut out = AtomicFile::create(&args.src, args.force)?;
    let mut ch = pair::connect(&dev, SERVICE)?;
    ch.send(b"GET")?;
    let msg = ch.recv()?;
    let w: Vec<&str> = msg.split_whitespace().collect();
    if field(&w, 0)? != "SIZE" {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            format!("the DPU side failed: {}", msg.trim_start_matches("ERR ")),
        ));
    }
    let len = number(&w, 1)?;
    let mut mmap = Mmap::new();
    mmap.set_memory(SharedMemory::new(len.max(1))?)?;
    mmap.set_permissions(AccessFlags::DPU_READ_WRITE)?;
    mmap.dev_add(&dev)?;
    mmap.start()?;
    let blob = mmap.export_dpu(&dev)?;
    let addr = mmap.memrange()?.0 as usize;
    let t = Instant::now();
    ch.send(format!("BUF {addr} {}", pair::hex(&blob)).as_bytes())?;
    let mut got = vec![0u8; len];
    // The DPU side writes while we wait; read once it reports its hash.
    let msg = ch.recv()?;
    mmap.read_at(0, &mut got)?;
    let digest = sha256_hex(&got);
    let w: Vec<&str> = msg.split_whitespace().collect();
    if field(&w, 0)? != "HASH" || field(&w, 1)? != digest {
        let _ = ch.send(b"BAD");
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            format!(
                "verification failed: the DPU side sent SHA-256 {msg}, the host received {digest}; '{name}' was not written"
            ),
        ));
    }
    out.file()
        .write_all_at(&got, 0)
        .map_err(|e| io_error(format!("cannot write '{name}'"), &e))?;
    out.commit()?;
    ch.send(b"OK")?;
    let secs = t.elapsed().as_secs_f64();
    mmap.stop()?;
    Ok(format!(
        "host side: fetched {len} bytes from the DPU process into '{name}' through an exported mmap, {:.1} MB/s; verified (SHA-256 {digest})",
        len as f64 / secs.max(1e-9) / 1e6
    ))
}

fn run(args: &Args) -> Result<String> {
    match args.role {
        Some(side) => {
            if args.dst.is_some() {
                return Err(Error::invalid(
                    "with --role, give one file: the one to send or to write (the other side has the other)",
                ));
            }
            pair::become_side(side);
            return match side {
                Role::Dpu => run_dpu(args),
                Role::Host => run_host(args),
            };
        }
        None if args.fetch => {
            return Err(Error::invalid(
                "--fetch is for the host side of a pair (--role host)",
            ));
        }
        None => {}
    }
    let Some(dst) = args.dst.as_ref() else {
        return Err(Error::invalid(
            "give SRC and DST (or --role host|dpu and one file)",
        ));
    };
    let in_name = args.src.display().to_string();
    let out_name = dst.display().to_string();
    let mut input = open_regular(&args.src)?;
    if let (Ok(a), Ok(b)) = (args.src.canonicalize(), dst.canonicalize())
        && a == b
    {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "source and destination are the same file",
        ));
    }
    let mut out = AtomicFile::create(dst, args.force)?;
    let mut copier = Copier::new(args)?;
    let t = Instant::now();
    let r = copier.copy(&mut input, &in_name, out.file(), &out_name);
    copier.teardown();
    let (bytes, jobs) = r?;
    let secs = t.elapsed().as_secs_f64();
    // Verify what reached the file against the source before it takes the name.
    let mut a = open_regular(&args.src)?;
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
    cleanup::install();
    let args = Args::parse();
    match run(&args) {
        Ok(msg) => {
            if !args.quiet {
                outln!("{msg}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => report("doca-dma-copy", &e),
    }
}
