//! `doca-sha`: hashes files through the DOCA SHA context, streaming each file through a
//! partial-hash session; prints and checks sums in `sha256sum`'s format.

use clap::Parser;
use doca_core::device::Capability;
use doca_core::{AccessFlags, Buf, BufInventory, Error, ErrorCode, Mmap, Result, WorkQ};
use doca_sha::{PartialSession, Sha, ShaAlgo, ShaJob, ShaPartialJob};
use doca_tools::{io_error, open_device, parse_size, report};
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Write};
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
    /// Segment size of the partial jobs (a multiple of 128 bytes).
    #[arg(long, default_value = "1M", value_parser = parse_size)]
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
    /// Files ('-' or none: standard input).
    files: Vec<String>,
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
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; SLOTS * slot])?;
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE)?;
        mmap.dev_add(&dev)?;
        mmap.start()?;
        let mut inv = BufInventory::new(2 * SLOTS)?;
        inv.start()?;
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
            staging: vec![0u8; args.chunk],
            _mmap: mmap,
            _inv: inv,
        })
    }

    /// Reads up to one chunk (short only at the end of the input).
    fn fill(&mut self, input: &mut dyn Read, name: &str) -> Result<usize> {
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

    fn hash_path(&mut self, path: &str) -> Result<Vec<u8>> {
        if path == "-" {
            let stdin = io::stdin();
            let mut lock = stdin.lock();
            return self.hash(&mut lock, "standard input");
        }
        let mut f = File::open(path).map_err(|e| io_error(format!("cannot open '{path}'"), &e))?;
        if f.metadata().is_ok_and(|m| m.is_dir()) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("'{path}' is a directory"),
            ));
        }
        self.hash(&mut f, path)
    }

    fn teardown(mut self) {
        let _ = self.sha.as_ctx().workq_rm(&mut self.wq);
        let _ = self.sha.as_ctx().stop();
    }
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// The name as sha256sum prints it: names with a backslash or newline are escaped and
/// the line starts with a backslash.
fn escaped(name: &str) -> (bool, String) {
    if !name.contains(['\\', '\n', '\r']) {
        return (false, name.to_string());
    }
    let e = name
        .replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r");
    (true, e)
}

fn unescape(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut it = name.chars();
    while let Some(c) = it.next() {
        if c == '\\' {
            match it.next() {
                Some('n') => out.push('\n'),
                Some('r') => out.push('\r'),
                Some('\\') => out.push('\\'),
                Some(o) => {
                    out.push('\\');
                    out.push(o);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Parses "<hex>  <name>" or "<hex> *<name>" (a leading backslash: escaped name).
fn parse_line(line: &str, digest_hex: usize) -> Option<(String, String)> {
    let (esc, line) = match line.strip_prefix('\\') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (sum, rest) = line.split_at_checked(digest_hex)?;
    if !sum.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let name = rest
        .strip_prefix("  ")
        .or_else(|| rest.strip_prefix(" *"))?;
    let name = if esc {
        unescape(name)
    } else {
        name.to_string()
    };
    Some((sum.to_ascii_lowercase(), name))
}

fn tool_name(algo: ShaAlgo) -> &'static str {
    match algo {
        ShaAlgo::Sha1 => "sha1sum",
        ShaAlgo::Sha256 => "sha256sum",
        ShaAlgo::Sha512 => "sha512sum",
    }
}

fn print_sums(h: &mut Hasher, files: &[String]) -> bool {
    let mut ok = true;
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for f in files {
        match h.hash_path(f) {
            Ok(d) => {
                let (esc, name) = escaped(f);
                let _ = writeln!(out, "{}{}  {}", if esc { "\\" } else { "" }, hex(&d), name);
            }
            Err(e) => {
                let _ = out.flush();
                eprintln!("doca-sha: {f}: {e}");
                ok = false;
            }
        }
    }
    ok
}

fn check_sums(h: &mut Hasher, args: &Args, files: &[String]) -> bool {
    let hex_len = 2 * h.algo.digest_len();
    let (mut bad, mut unreadable, mut malformed, mut checked) = (0, 0, 0, 0);
    let stdout = io::stdout();
    let mut out = stdout.lock();
    for list in files {
        let reader: Box<dyn BufRead> = if list == "-" {
            Box::new(BufReader::new(io::stdin()))
        } else {
            match File::open(list) {
                Ok(f) => Box::new(BufReader::new(f)),
                Err(e) => {
                    eprintln!(
                        "doca-sha: {}",
                        io_error(format!("cannot open '{list}'"), &e)
                    );
                    unreadable += 1;
                    continue;
                }
            }
        };
        for line in reader.lines() {
            let line = match line {
                Ok(l) => l,
                Err(e) => {
                    eprintln!(
                        "doca-sha: {}",
                        io_error(format!("cannot read '{list}'"), &e)
                    );
                    unreadable += 1;
                    break;
                }
            };
            let Some((want, name)) = parse_line(&line, hex_len) else {
                if !line.trim().is_empty() {
                    malformed += 1;
                }
                continue;
            };
            checked += 1;
            match h.hash_path(&name) {
                Ok(d) if hex(&d) == want => {
                    if !args.quiet && !args.status {
                        let _ = writeln!(out, "{name}: OK");
                    }
                }
                Ok(_) => {
                    bad += 1;
                    if !args.status {
                        let _ = writeln!(out, "{name}: FAILED");
                    }
                }
                Err(e) => {
                    unreadable += 1;
                    if !args.status {
                        let _ = out.flush();
                        eprintln!("doca-sha: {name}: {e}");
                        let _ = writeln!(out, "{name}: FAILED open or read");
                    }
                }
            }
        }
    }
    let _ = out.flush();
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
    checked > 0 && bad == 0 && unreadable == 0
}

fn main() -> ExitCode {
    let args = Args::parse();
    let mut h = match Hasher::new(&args) {
        Ok(h) => h,
        Err(e) => return report("doca-sha", &e),
    };
    let files = if args.files.is_empty() {
        vec!["-".to_string()]
    } else {
        args.files.clone()
    };
    let ok = if args.check {
        check_sums(&mut h, &args, &files)
    } else {
        print_sums(&mut h, &files)
    };
    h.teardown();
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
