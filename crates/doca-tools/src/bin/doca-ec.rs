//! `doca-ec`: erasure codes files through the DOCA EC context — the successor of DOCA's
//! `doca_erasure_coding_recover` sample, with its options and block-directory layout,
//! plus `encode`, `recover`, `verify` and `demo` subcommands for real use.

use clap::{ArgAction, Args, Parser, Subcommand};
use doca_core::device::Capability;
use doca_core::{Dev, Error, ErrorCode, Result};
use doca_ec::MatrixType;
use doca_tools::ecfile::{self, EncodeReport, Layout, Options, Proof, RecoverReport, VerifyReport};
use doca_tools::{MAX_CHUNK, cleanup, io_error, open_device, outln, parse_size, report};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Erasure code files with DOCA Erasure Coding (Reed-Solomon, Cauchy or Vandermonde).
///
/// Without a subcommand it behaves as DOCA's erasure coding recover sample: encode the
/// input file into the output directory, or (-i a block directory) recover it into the
/// output file, or (-b) both, deleting the data blocks given with -d in between.
#[derive(Parser, Debug)]
#[command(
    version,
    about,
    disable_version_flag = true,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    /// Print the version.
    #[arg(short = 'v', long, action = ArgAction::Version)]
    version: Option<bool>,
    #[command(subcommand)]
    cmd: Option<Cmd>,
    #[command(flatten)]
    sample: SampleArgs,
}

#[derive(Args, Debug, Clone)]
struct Common {
    /// DOCA device PCI address (XX:XX.X or XXXX:XX:XX.X; default: the first device with
    /// erasure coding).
    #[arg(short, long)]
    pci_addr: Option<String>,
    /// Bytes of each block per stripe, at most 256M (default: about 16 MiB per stripe in
    /// all).
    #[arg(long, value_parser = parse_stripe, default_value = "0")]
    stripe: usize,
    /// Replace existing outputs.
    #[arg(short, long)]
    force: bool,
    /// Do not flush outputs to disk before renaming them into place (faster; a crash
    /// may then lose data that appears complete).
    #[arg(long)]
    no_sync: bool,
    /// Print nothing but errors (no progress bar either).
    #[arg(short, long)]
    quiet: bool,
    /// Log level (DOCA's standard flag: 20 critical .. 60 debug); below 40 is quiet.
    #[arg(short = 'l', long = "log-level", value_parser = clap::value_parser!(u32).range(10..=70))]
    log_level: Option<u32>,
}

impl Common {
    fn quiet(&self) -> bool {
        self.quiet || self.log_level.is_some_and(|l| l < 40)
    }
    fn options(&self) -> Options {
        Options {
            stripe: self.stripe,
            force: self.force,
            progress: !self.quiet() && std::io::stderr().is_terminal(),
            sync: !self.no_sync,
            write_back: true,
        }
    }
    fn device(&self) -> Result<Dev> {
        open_device(self.pci_addr.as_deref(), Capability::Ec)
    }
}

#[derive(Args, Debug, Clone)]
struct Coding {
    /// Matrix: cauchy or vandermonde.
    #[arg(short = 'x', long, default_value = "cauchy", value_parser = ["cauchy", "vandermonde"])]
    matrix: String,
    /// Data block count (1..=128).
    #[arg(short = 't', long, default_value_t = 2)]
    data: usize,
    /// Redundancy block count (1..=32).
    #[arg(short = 'r', long, default_value_t = 2)]
    rdnc: usize,
}

impl Coding {
    fn kind(&self) -> Result<MatrixType> {
        ecfile::parse_kind(&self.matrix)
    }
    /// For block directories without a manifest (made by DOCA's sample).
    fn guess(&self) -> Result<Option<(MatrixType, usize, usize)>> {
        Ok(Some((self.kind()?, self.data, self.rdnc)))
    }
}

/// Matrix and counts of a block directory made without a manifest (by DOCA's sample).
#[derive(Args, Debug, Clone)]
struct Guess {
    /// Matrix: cauchy or vandermonde.
    #[arg(short = 'x', long, value_parser = ["cauchy", "vandermonde"])]
    matrix: Option<String>,
    /// Data block count.
    #[arg(short = 't', long)]
    data: Option<usize>,
    /// Redundancy block count.
    #[arg(short = 'r', long)]
    rdnc: Option<usize>,
}

impl Guess {
    fn get(&self) -> Result<Option<(MatrixType, usize, usize)>> {
        let kind = ecfile::parse_kind(self.matrix.as_deref().unwrap_or("cauchy"))?;
        match (self.data, self.rdnc) {
            (Some(t), Some(r)) => Ok(Some((kind, t, r))),
            (None, None) => Ok(None),
            _ => Err(Error::with_context(
                ErrorCode::InvalidValue,
                "give both the data (-t) and the redundancy (-r) block counts",
            )),
        }
    }
}

#[derive(Args, Debug)]
struct SampleArgs {
    /// Input file to encode, or block directory to recover ("self": this program).
    #[arg(short, long, default_value = "self")]
    input: String,
    /// Output directory (encode) or file (recover).
    #[arg(short, long, default_value = "/tmp")]
    output: PathBuf,
    /// Do both: encode, delete the -d data blocks, recover, compare.
    #[arg(short, long)]
    both: bool,
    /// Data blocks to delete with -b, comma separated (e.g. 0,3,4).
    #[arg(
        short = 'd',
        long = "delete_index",
        value_delimiter = ',',
        default_value = "0"
    )]
    delete_index: Vec<usize>,
    #[command(flatten)]
    coding: Coding,
    #[command(flatten)]
    common: Common,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Encode a file into a block directory.
    Encode {
        /// File to encode.
        #[arg(short, long)]
        input: PathBuf,
        /// Block directory (created if needed).
        #[arg(short, long)]
        output: PathBuf,
        #[command(flatten)]
        coding: Coding,
        #[command(flatten)]
        common: Common,
    },
    /// Find missing or damaged blocks, rebuild them, and write the original file.
    Recover {
        /// Block directory.
        #[arg(short, long)]
        input: PathBuf,
        /// Where the original file goes (a directory: under its original name).
        #[arg(short, long)]
        output: PathBuf,
        /// Leave the block directory as it is: rebuilt blocks only go into the output
        /// (the same happens when the directory cannot be written).
        #[arg(long)]
        no_write_back: bool,
        #[command(flatten)]
        guess: Guess,
        #[command(flatten)]
        common: Common,
    },
    /// Check that every block is present, whole and consistent with the others.
    Verify {
        /// Block directory.
        #[arg(short, long)]
        input: PathBuf,
        #[command(flatten)]
        guess: Guess,
        #[command(flatten)]
        common: Common,
    },
    /// Encode a file that ships with doca-ec, lose and damage blocks, recover, verify.
    Demo {
        /// Keep the demo directory instead of removing it.
        #[arg(long)]
        keep: bool,
        #[command(flatten)]
        common: Common,
    },
}

fn mbps(bytes: u64, secs: f64) -> f64 {
    bytes as f64 / secs.max(1e-9) / 1e6
}

fn say_encoded(r: &EncodeReport, input: &Path, dir: &Path) -> String {
    let l = &r.layout;
    // A shape that cannot undo every loss of K blocks is said, even with --quiet.
    match r.short {
        Some(Some((0, _))) | None => {}
        Some(Some((bad, total))) => eprintln!(
            "doca-ec: warning: with the vandermonde matrix, {bad} of the {total} ways to lose {} of these {} blocks cannot be recovered (`doca-ec verify` says whether a loss can be); cauchy, the default, recovers every one",
            l.rdnc,
            l.count()
        ),
        Some(None) => eprintln!(
            "doca-ec: warning: vandermonde matrices cannot recover every loss of {} blocks for some shapes, and this one is too large to try every loss (`doca-ec verify` says whether a loss can be); cauchy, the default, recovers every one",
            l.rdnc
        ),
    }
    format!(
        "encoded '{}' ({} bytes) into '{}': {} data + {} redundancy blocks of {} bytes ({} matrix), {:.1} MB/s",
        input.display(),
        l.size,
        dir.display(),
        l.data,
        l.rdnc,
        l.block,
        ecfile::kind_name(l.kind),
        mbps(l.size, r.secs)
    )
}

fn say_recovered(r: &RecoverReport) -> String {
    let what = if r.rebuilt.is_empty() {
        "all blocks intact".to_string()
    } else {
        format!("rebuilt {}", r.rebuilt.join(", "))
    };
    let proof = match &r.proof {
        Proof::Content => "verified against the original's digest".to_string(),
        Proof::Blocks => "verified against the block checksums (this manifest records no digest of the whole file)".to_string(),
        Proof::Consistent => "checked: the blocks agree with each other (no manifest: the size comes from data_info unchecked)".to_string(),
        Proof::Unproved(why) => format!("NOT PROVED to be the original: {why}"),
    };
    let kept = r
        .not_written_back
        .as_ref()
        .map(|why| format!(" (rebuilt blocks not written back: {why})"))
        .unwrap_or_default();
    format!(
        "{what}{kept}; wrote '{}' ({} bytes), {:.1} MB/s; {proof}",
        r.output.display(),
        r.layout.size,
        mbps(r.layout.size, r.secs)
    )
}

/// Exit code of a recover that wrote a file nothing could prove to be the original.
const UNPROVED: u8 = 3;

/// Says what a recover did; its exit code (0, or [`UNPROVED`]).
fn recovered(quiet: bool, r: &RecoverReport) -> u8 {
    if let Proof::Unproved(_) = r.proof {
        // Said even with --quiet: the output may not be the original.
        eprintln!("doca-ec: warning: {}", say_recovered(r));
        UNPROVED
    } else {
        print(quiet, &say_recovered(r));
        0
    }
}

fn say_verified(r: &VerifyReport) -> Vec<String> {
    let l = &r.layout;
    if r.ok() {
        return vec![format!(
            "OK: {} data + {} redundancy blocks intact and consistent",
            l.data, l.rdnc
        )];
    }
    let mut v: Vec<String> = r.lost.iter().map(|s| format!("LOST: {s}")).collect();
    v.extend(r.inconsistent.iter().map(|s| format!("INCONSISTENT: {s}")));
    let n = r.lost.len();
    v.push(if n > l.rdnc {
        format!(
            "{n} blocks lost: more than the {} that can be rebuilt",
            l.rdnc
        )
    } else if n > 0 && !r.recoverable {
        format!(
            "{n} block(s) lost, and this loss cannot be undone: with the {} matrix, no {} of the remaining blocks are independent",
            ecfile::kind_name(l.kind),
            l.data
        )
    } else if n > 0 {
        format!("{n} block(s) lost: run `doca-ec recover` to rebuild them")
    } else {
        "the redundancy does not match the data: re-encode from the original file".to_string()
    });
    v
}

/// `-o` may name a directory: the file then goes there under its original name.
fn output_file(
    output: &Path,
    dir: &Path,
    guess: Option<(MatrixType, usize, usize)>,
) -> Result<PathBuf> {
    if !output.is_dir() {
        return Ok(output.to_path_buf());
    }
    let layout = Layout::read(dir, guess)?;
    let name = Path::new(&layout.name)
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_else(|| "recovered".into());
    Ok(output.join(name))
}

fn print(quiet: bool, s: &str) {
    if !quiet {
        outln!("{s}");
    }
}

/// `--stripe`: 0 (chosen from the shape) up to [`MAX_CHUNK`].
fn parse_stripe(s: &str) -> std::result::Result<usize, String> {
    match parse_size(s)? {
        n if n > MAX_CHUNK => Err(format!(
            "'{s}' is larger than the {} MiB this option takes",
            MAX_CHUNK >> 20
        )),
        n => Ok(n),
    }
}

/// Compares two files; the first differing byte.
fn same_files(a: &Path, b: &Path) -> Result<Option<u64>> {
    let x = std::fs::read(a).map_err(|e| io_error(format!("cannot read '{}'", a.display()), &e))?;
    let y = std::fs::read(b).map_err(|e| io_error(format!("cannot read '{}'", b.display()), &e))?;
    if x == y {
        return Ok(None);
    }
    let at = x
        .iter()
        .zip(&y)
        .position(|(p, q)| p != q)
        .unwrap_or(x.len().min(y.len()));
    Ok(Some(at as u64))
}

fn sample(a: &SampleArgs) -> Result<u8> {
    let quiet = a.common.quiet();
    let dev = a.common.device()?;
    let opts = a.common.options();
    let input = if a.input == "self" {
        std::env::current_exe().map_err(|e| io_error("cannot find this program's own file", &e))?
    } else {
        PathBuf::from(&a.input)
    };
    let kind = a.coding.kind()?;
    if a.both {
        for (i, &d) in a.delete_index.iter().enumerate() {
            if a.delete_index[..i].contains(&d) {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!("delete index {d} is given twice; give each block once"),
                ));
            }
            if d >= a.coding.data {
                return Err(Error::with_context(
                    ErrorCode::InvalidValue,
                    format!(
                        "delete index {d} is out of range: data blocks are 0..{}",
                        a.coding.data
                    ),
                ));
            }
        }
        let dir = &a.output;
        let r = ecfile::encode(&dev, &input, dir, kind, a.coding.data, a.coding.rdnc, &opts)?;
        print(quiet, &say_encoded(&r, &input, dir));
        for &d in &a.delete_index {
            let p = dir.join(r.layout.block_file(d));
            std::fs::remove_file(&p)
                .map_err(|e| io_error(format!("cannot delete '{}'", p.display()), &e))?;
            print(quiet, &format!("deleted '{}'", p.display()));
        }
        let name = input
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        let mut out_name = name;
        out_name.push(".recovered");
        let out = dir.join(out_name);
        let r = ecfile::recover(
            &dev,
            dir,
            &out,
            None,
            &Options {
                force: true,
                ..opts
            },
        )?;
        print(quiet, &say_recovered(&r));
        match same_files(&input, &out)? {
            None => print(
                quiet,
                &format!("'{}' is identical to '{}'", out.display(), input.display()),
            ),
            Some(at) => {
                return Err(Error::with_context(
                    ErrorCode::Unexpected,
                    format!(
                        "'{}' differs from '{}' at byte {at}",
                        out.display(),
                        input.display()
                    ),
                ));
            }
        }
        return Ok(0);
    }
    if input.is_dir() {
        let guess = a.coding.guess()?;
        let out = output_file(&a.output, &input, guess)?;
        let r = ecfile::recover(&dev, &input, &out, guess, &opts)?;
        return Ok(recovered(quiet, &r));
    } else {
        let r = ecfile::encode(
            &dev,
            &input,
            &a.output,
            kind,
            a.coding.data,
            a.coding.rdnc,
            &opts,
        )?;
        print(quiet, &say_encoded(&r, &input, &a.output));
    }
    Ok(0)
}

/// The file the demo encodes: this program's own source, which ships with it.
const DEMO_INPUT: &[u8] = include_bytes!("doca-ec.rs");

fn demo(keep: bool, common: &Common) -> Result<()> {
    let quiet = common.quiet();
    let dev = common.device()?;
    let opts = Options {
        force: true,
        ..common.options()
    };
    let root = std::env::temp_dir().join(format!("doca-ec-demo-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root)
        .map_err(|e| io_error(format!("cannot create '{}'", root.display()), &e))?;
    // Removed also when the demo ends early (a closed pipe, a signal).
    cleanup::register(&root, true);
    let r = run_demo(&dev, &root, &opts, quiet);
    if keep {
        cleanup::forget(&root);
        print(quiet, &format!("kept '{}'", root.display()));
    } else {
        let _ = std::fs::remove_dir_all(&root);
        cleanup::forget(&root);
    }
    r
}

fn run_demo(dev: &Dev, root: &Path, opts: &Options, quiet: bool) -> Result<()> {
    let input = root.join("doca-ec.rs");
    std::fs::write(&input, DEMO_INPUT)
        .map_err(|e| io_error(format!("cannot write '{}'", input.display()), &e))?;
    let dir = root.join("blocks");
    print(
        quiet,
        &format!(
            "doca-ec demo on device {}: encode this tool's source ({} bytes) with 4 data + 2 redundancy blocks",
            dev.as_devinfo().pci_addr_str(),
            DEMO_INPUT.len()
        ),
    );
    let r = ecfile::encode(dev, &input, &dir, MatrixType::Cauchy, 4, 2, opts)?;
    print(quiet, &format!("1. {}", say_encoded(&r, &input, &dir)));
    let lose = dir.join(r.layout.block_file(1));
    std::fs::remove_file(&lose)
        .map_err(|e| io_error(format!("cannot delete '{}'", lose.display()), &e))?;
    let damage = dir.join(r.layout.block_file(2));
    let mut bytes = std::fs::read(&damage).map_err(|e| io_error("cannot read a block", &e))?;
    bytes[100] ^= 0x5a;
    std::fs::write(&damage, bytes).map_err(|e| io_error("cannot write a block", &e))?;
    print(
        quiet,
        &format!(
            "2. deleted {} and flipped a byte in {}",
            r.layout.block_file(1),
            r.layout.block_file(2)
        ),
    );
    let v = ecfile::verify(dev, &dir, None, opts)?;
    for line in say_verified(&v) {
        print(quiet, &format!("3. verify: {line}"));
    }
    let out = root.join("doca-ec.rs.recovered");
    let rr = ecfile::recover(dev, &dir, &out, None, opts)?;
    print(quiet, &format!("4. {}", say_recovered(&rr)));
    let v = ecfile::verify(dev, &dir, None, opts)?;
    for line in say_verified(&v) {
        print(quiet, &format!("5. verify: {line}"));
    }
    if !v.ok() {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            "the blocks are not whole after recovery",
        ));
    }
    match same_files(&input, &out)? {
        None => {
            print(
                quiet,
                "6. the recovered file is byte-identical to the original",
            );
            Ok(())
        }
        Some(at) => Err(Error::with_context(
            ErrorCode::Unexpected,
            format!("the recovered file differs from the original at byte {at}"),
        )),
    }
}

/// The tool's exit code: 0, 1 (verify found losses), or [`UNPROVED`].
fn run(cli: Cli) -> Result<u8> {
    match cli.cmd {
        None => sample(&cli.sample),
        Some(Cmd::Encode {
            input,
            output,
            coding,
            common,
        }) => {
            let dev = common.device()?;
            let r = ecfile::encode(
                &dev,
                &input,
                &output,
                coding.kind()?,
                coding.data,
                coding.rdnc,
                &common.options(),
            )?;
            print(common.quiet(), &say_encoded(&r, &input, &output));
            Ok(0)
        }
        Some(Cmd::Recover {
            input,
            output,
            no_write_back,
            guess,
            common,
        }) => {
            let dev = common.device()?;
            let guess = guess.get()?;
            let out = output_file(&output, &input, guess)?;
            let opts = Options {
                write_back: !no_write_back,
                ..common.options()
            };
            let r = ecfile::recover(&dev, &input, &out, guess, &opts)?;
            Ok(recovered(common.quiet(), &r))
        }
        Some(Cmd::Verify {
            input,
            guess,
            common,
        }) => {
            let dev = common.device()?;
            let r = ecfile::verify(&dev, &input, guess.get()?, &common.options())?;
            for line in say_verified(&r) {
                print(common.quiet(), &line);
            }
            Ok(u8::from(!r.ok()))
        }
        Some(Cmd::Demo { keep, common }) => demo(keep, &common).map(|_| 0),
    }
}

fn main() -> ExitCode {
    cleanup::install();
    match run(Cli::parse()) {
        Ok(code) => ExitCode::from(code),
        Err(e) => report("doca-ec", &e),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn command_line_is_well_formed() {
        use clap::CommandFactory;
        super::Cli::command().debug_assert();
    }
}
