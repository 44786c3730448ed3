//! `doca-sha`: hashes files through the DOCA SHA context, streaming each file through a
//! partial-hash session; prints and checks sums in `sha256sum`'s format.

use clap::Parser;
use doca_core::device::Capability;
use doca_core::{Buf, BufInventory, Error, ErrorCode, Mmap, Result, WorkQ};
use doca_sha::{PartialSession, Sha, ShaAlgo, ShaJob, ShaPartialJob};
use doca_tools::cleanup::{self, out_bytes};
use doca_tools::{io_error, open_device, parse_chunk, report, zeroed};
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::process::ExitCode;
use std::time::Duration;

/// Hash files with the DOCA SHA engine (output compatible with sha1sum/sha256sum/sha512sum).
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Algorithm.
    #[arg(short, long, default_value = "sha256", value_parser = ["sha1", "sha256", "sha512"])]
    algo: String,
    /// Device PCI address (XX:XX.X or XXXX:XX:XX.X; default: the first with SHA).
    #[arg(short, long)]
    pci_addr: Option<String>,
    /// Segment size of the partial jobs (a multiple of 128 bytes, at most 256M).
    #[arg(long, default_value = "1M", value_parser = parse_chunk)]
    chunk: usize,
    /// Read sums from the FILEs and check them.
    #[arg(short, long)]
    check: bool,
    /// With --check: print nothing for files that match.
    #[arg(long)]
    quiet: bool,
    /// With --check: print nothing at all; the exit code tells.
    #[arg(long)]
    status: bool,
    /// Files ('-' or none: standard input); any Unix path.
    files: Vec<OsString>,
}

/// Segments in flight per file (reading overlaps hashing on engine threads).
const SLOTS: usize = 4;

struct Hasher {
    algo: ShaAlgo,
    sha: Sha,
    wq: WorkQ,
    chunk: usize,
    /// Free (request, response) buffer pairs.
    free: Vec<(Buf, Buf)>,
    staging: Vec<u8>,
    _mmap: Mmap,
    _inv: BufInventory,
}

impl Hasher {
    fn new(args: &Args) -> Result<Hasher> {
        let algo = match args.algo.as_str() {
            "sha1" => ShaAlgo::Sha1,
            "sha512" => ShaAlgo::Sha512,
            _ => ShaAlgo::Sha256,
        };
        if args.chunk == 0 || !args.chunk.is_multiple_of(128) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "--chunk must be a positive multiple of 128 bytes, got {}",
                    args.chunk
                ),
            ));
        }
        let dev = open_device(args.pci_addr.as_deref(), Capability::Sha)?;
        let slot = args.chunk + 128;
        let memory = zeroed(SLOTS * slot, "the hashing buffers; lower --chunk")?;
        let (mmap, inv) = doca_tools::local_memory(&dev, memory, 2 * SLOTS)?;
        let free = (0..SLOTS)
            .map(|i| {
                Ok((
                    inv.buf_at(&mmap, i * slot, args.chunk)?,
                    inv.buf_at(&mmap, i * slot + args.chunk, 128)?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let sha = Sha::new();
        sha.as_ctx().dev_add(&dev)?;
        sha.as_ctx().start()?;
        let mut wq = WorkQ::new(SLOTS as u32)?;
        sha.as_ctx().workq_add(&mut wq)?;
        Ok(Hasher {
            algo,
            sha,
            wq,
            chunk: args.chunk,
            free,
            staging: zeroed(args.chunk, "the staging buffer; lower --chunk")?,
            _mmap: mmap,
            _inv: inv,
        })
    }

    /// Reads up to one chunk (short only at the end of the input).
    fn fill(&mut self, input: &mut dyn Read, name: &str) -> Result<usize> {
        cleanup::interrupted()?;
        let mut n = 0;
        while n < self.chunk {
            match input.read(&mut self.staging[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(io_error(format!("cannot read '{name}'"), &e)),
            }
        }
        Ok(n)
    }

    /// Takes back a finished segment's buffers; the final one's digest comes back.
    fn retrieve(&mut self) -> Result<Option<Vec<u8>>> {
        let mut c = self
            .wq
            .wait(Some(Duration::from_secs(60)))
            .map_err(Error::from)?;
        let req = c.take_buf(ShaJob::REQ);
        let resp = c.take_buf(ShaJob::RESP);
        let (Some(req), Some(resp)) = (req, resp) else {
            return Err(Error::with_context(
                ErrorCode::Unexpected,
                "a completed job came back without its buffers",
            ));
        };
        let digest = (resp.data_len() > 0).then(|| resp.data_to_vec());
        self.free.push((req, resp));
        Ok(digest)
    }

    /// The digest of everything `input` yields.
    fn hash(&mut self, input: &mut dyn Read, name: &str) -> Result<Vec<u8>> {
        let session = self.sha.partial_session_create(&self.wq)?;
        let r = self.hash_session(&session, input, name);
        // Drain what is still in flight (after a read error) before the session goes.
        while self.wq.inflight() > 0 {
            self.retrieve()?;
        }
        self.sha
            .partial_session_destroy(&self.wq, session)
            .map_err(|(_, e)| e)?;
        r
    }

    fn hash_session(
        &mut self,
        session: &PartialSession,
        input: &mut dyn Read,
        name: &str,
    ) -> Result<Vec<u8>> {
        let mut n = self.fill(input, name)?;
        loop {
            // A short read means this segment is the last.
            let last = n < self.chunk;
            if self.free.is_empty() {
                self.retrieve()?;
            }
            let (mut req, mut resp) = self.free.pop().expect("a free slot");
            req.reset_data_len();
            req.write_data(&self.staging[..n])?;
            resp.reset_data_len();
            let job = ShaPartialJob {
                algo: self.algo,
                session: session.clone(),
                req,
                resp,
                final_segment: last,
                user_data: doca_core::Data(0),
            };
            self.wq
                .submit_job(self.sha.as_ctx(), job)
                .map_err(|(e, _)| e)?;
            if last {
                let mut digest = None;
                while self.wq.inflight() > 0 {
                    if let Some(d) = self.retrieve()? {
                        digest = Some(d);
                    }
                }
                return digest.ok_or_else(|| {
                    Error::with_context(ErrorCode::Unexpected, "the final segment gave no digest")
                });
            }
            // A zero-length read leaves an empty final segment for the next turn.
            n = self.fill(input, name)?;
        }
    }

    fn hash_path(&mut self, path: &OsStr) -> Result<Vec<u8>> {
        if path == "-" {
            let stdin = io::stdin();
            let mut lock = stdin.lock();
            return self.hash(&mut lock, "standard input");
        }
        let shown = path.to_string_lossy();
        let mut f = File::open(path).map_err(|e| io_error(format!("cannot open '{shown}'"), &e))?;
        if f.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{shown}' is a directory"),
            ));
        }
        self.hash(&mut f, &shown)
    }

    fn teardown(mut self) {
        let _ = self.sha.as_ctx().workq_rm(&mut self.wq);
        let _ = self.sha.as_ctx().stop();
    }
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The name as sha256sum prints it: names with a backslash, CR or newline are escaped
/// and the line starts with a backslash. Names are bytes (any Unix path).
fn escaped(name: &[u8]) -> (bool, Vec<u8>) {
    if !name.iter().any(|b| matches!(b, b'\\' | b'\n' | b'\r')) {
        return (false, name.to_vec());
    }
    let mut e = Vec::with_capacity(name.len() + 8);
    for &b in name {
        match b {
            b'\\' => e.extend_from_slice(b"\\\\"),
            b'\n' => e.extend_from_slice(b"\\n"),
            b'\r' => e.extend_from_slice(b"\\r"),
            _ => e.push(b),
        }
    }
    (true, e)
}

fn unescape(name: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.len());
    let mut it = name.iter();
    while let Some(&c) = it.next() {
        if c == b'\\' {
            match it.next() {
                Some(b'n') => out.push(b'\n'),
                Some(b'r') => out.push(b'\r'),
                Some(b'\\') => out.push(b'\\'),
                Some(&o) => {
                    out.push(b'\\');
                    out.push(o);
                }
                None => out.push(b'\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Parses `<hex>  <name>` or `<hex> *<name>` (a leading backslash: escaped name).
fn parse_line(line: &[u8], digest_hex: usize) -> Option<(String, Vec<u8>)> {
    let (esc, line) = match line.strip_prefix(b"\\") {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (sum, rest) = line.split_at_checked(digest_hex)?;
    if !sum.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let name = rest
        .strip_prefix(b"  ")
        .or_else(|| rest.strip_prefix(b" *"))?;
    if name.is_empty() {
        return None;
    }
    let name = if esc { unescape(name) } else { name.to_vec() };
    Some((String::from_utf8_lossy(sum).to_ascii_lowercase(), name))
}

/// A line of output: `parts` joined, then a newline (a closed pipe ends the tool quietly).
fn say(parts: &[&[u8]]) {
    out_bytes(&parts.concat());
}

fn tool_name(algo: ShaAlgo) -> &'static str {
    match algo {
        ShaAlgo::Sha1 => "sha1sum",
        ShaAlgo::Sha256 => "sha256sum",
        ShaAlgo::Sha512 => "sha512sum",
    }
}

fn print_sums(h: &mut Hasher, files: &[OsString]) -> Result<bool> {
    let mut ok = true;
    for f in files {
        match h.hash_path(f) {
            Ok(d) => {
                let (esc, name) = escaped(f.as_bytes());
                let esc: &[u8] = if esc { b"\\" } else { b"" };
                say(&[esc, hex(&d).as_bytes(), b"  ", &name]);
            }
            Err(e) if e.code() == ErrorCode::Shutdown => return Err(e),
            Err(e) => {
                eprintln!("doca-sha: {}: {e}", f.to_string_lossy());
                ok = false;
            }
        }
    }
    Ok(ok)
}

/// The lines of a checksum list, as bytes (any name, UTF-8 or not); a read error ends
/// the list (and is counted).
fn list_lines(mut r: Box<dyn BufRead>) -> impl Iterator<Item = io::Result<Vec<u8>>> {
    std::iter::from_fn(move || {
        let mut l = Vec::new();
        match r.read_until(b'\n', &mut l) {
            Ok(0) => None,
            Ok(_) => {
                if l.last() == Some(&b'\n') {
                    l.pop();
                    if l.last() == Some(&b'\r') {
                        l.pop();
                    }
                }
                Some(Ok(l))
            }
            Err(e) => Some(Err(e)),
        }
    })
}

fn check_sums(h: &mut Hasher, args: &Args, files: &[OsString]) -> Result<bool> {
    let hex_len = 2 * h.algo.digest_len();
    let (mut bad, mut unreadable, mut malformed, mut checked) = (0, 0, 0, 0);
    for list in files {
        let shown = list.to_string_lossy();
        let reader: Box<dyn BufRead> = if list == "-" {
            Box::new(BufReader::new(io::stdin()))
        } else {
            match File::open(list) {
                Ok(f) => Box::new(BufReader::new(f)),
                Err(e) => {
                    eprintln!(
                        "doca-sha: {}",
                        io_error(format!("cannot open '{shown}'"), &e)
                    );
                    unreadable += 1;
                    continue;
                }
            }
        };
        for line in list_lines(reader) {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    eprintln!(
                        "doca-sha: {}",
                        io_error(format!("cannot read '{shown}'"), &e)
                    );
                    unreadable += 1;
                    break;
                }
            };
            let Some((want, name)) = parse_line(&line, hex_len) else {
                if !line.trim_ascii().is_empty() {
                    malformed += 1;
                }
                continue;
            };
            checked += 1;
            let path = OsString::from_vec(name);
            match h.hash_path(&path) {
                Ok(d) if hex(&d) == want => {
                    if !args.quiet && !args.status {
                        say(&[path.as_bytes(), b": OK"]);
                    }
                }
                Ok(_) => {
                    bad += 1;
                    if !args.status {
                        say(&[path.as_bytes(), b": FAILED"]);
                    }
                }
                Err(e) if e.code() == ErrorCode::Shutdown => return Err(e),
                Err(e) => {
                    unreadable += 1;
                    if !args.status {
                        eprintln!("doca-sha: {}: {e}", path.to_string_lossy());
                        say(&[path.as_bytes(), b": FAILED open or read"]);
                    }
                }
            }
        }
    }
    let tool = tool_name(h.algo);
    if !args.status {
        if malformed > 0 {
            eprintln!(
                "doca-sha: WARNING: {malformed} line(s) are improperly formatted ({tool} format)"
            );
        }
        if unreadable > 0 {
            eprintln!("doca-sha: WARNING: {unreadable} listed file(s) could not be read");
        }
        if bad > 0 {
            eprintln!("doca-sha: WARNING: {bad} computed checksum(s) did NOT match");
        }
    }
    if checked == 0 && !args.status {
        eprintln!("doca-sha: no properly formatted checksum lines found");
    }
    Ok(checked > 0 && bad == 0 && unreadable == 0)
}

fn main() -> ExitCode {
    cleanup::install();
    let args = Args::parse();
    let mut h = match Hasher::new(&args) {
        Ok(h) => h,
        Err(e) => return report("doca-sha", &e),
    };
    let files = if args.files.is_empty() {
        vec![OsString::from("-")]
    } else {
        args.files.clone()
    };
    let ok = if args.check {
        check_sums(&mut h, &args, &files)
    } else {
        print_sums(&mut h, &files)
    };
    h.teardown();
    match ok {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => report("doca-sha", &e),
    }
}
