//! What a tool leaves behind when it ends early, and how it ends.
//!
//! - **Interrupted** (SIGINT, SIGTERM, SIGHUP): the signal only sets a flag; the work in
//!   progress sees it at its next step ([`interrupted`]) and returns a `SHUTDOWN` error,
//!   so every guard runs and removes its temporary files; the tool exits with 128 plus the
//!   signal number, as a shell expects. A second signal ends the process at once.
//! - **Its reader went away** (a closed pipe, `tool | head -1`): [`outln!`](crate::outln)
//!   removes the registered temporaries and exits quietly with 141 (128 + SIGPIPE).
//! - **Killed** (SIGKILL, a crash): nothing can run then, so temporaries carry their
//!   process id in their name, and the next run that writes into the same directory
//!   removes those of processes that no longer exist ([`remove_stale`]).

use doca_core::{Error, ErrorCode, Result};
use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// The part of a temporary file's name before its owner's process id:
/// `.NAME.doca-tmp-PID`.
pub const TEMP_MARK: &str = ".doca-tmp-";

struct Flags {
    stop: Arc<AtomicBool>,
    signal: Arc<AtomicUsize>,
}

fn flags() -> &'static Flags {
    static FLAGS: OnceLock<Flags> = OnceLock::new();
    FLAGS.get_or_init(|| Flags {
        stop: Arc::new(AtomicBool::new(false)),
        signal: Arc::new(AtomicUsize::new(0)),
    })
}

/// Paths to remove if the tool ends early: (path, is a directory).
fn temps() -> std::sync::MutexGuard<'static, Vec<(PathBuf, bool)>> {
    static TEMPS: Mutex<Vec<(PathBuf, bool)>> = Mutex::new(Vec::new());
    TEMPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Makes SIGINT, SIGTERM and SIGHUP stop the work at its next step (see the module's
/// words). Tools call it first thing.
pub fn install() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let f = flags();
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        // The first handler ends the process when the flag is already set (a second
        // signal); the next ones set the flag and remember the signal. Failing to install
        // them leaves the default action, which is still safe (stale temporaries are
        // removed by the next run).
        let _ = signal_hook::flag::register_conditional_default(sig, Arc::clone(&f.stop));
        let _ = signal_hook::flag::register_usize(sig, Arc::clone(&f.signal), sig as usize);
        let _ = signal_hook::flag::register(sig, Arc::clone(&f.stop));
    }
}

/// `SHUTDOWN` once a stop signal arrived: long loops call it at every step.
pub fn interrupted() -> Result<()> {
    let f = flags();
    if !f.stop.load(Ordering::Relaxed) {
        return Ok(());
    }
    let sig = f.signal.load(Ordering::Relaxed);
    Err(Error::with_context(
        ErrorCode::Shutdown,
        format!(
            "interrupted by {}; the work in progress was abandoned, its temporary files removed and no existing file replaced",
            signal_name(sig)
        ),
    ))
}

fn signal_name(sig: usize) -> &'static str {
    match sig as i32 {
        libc::SIGINT => "SIGINT",
        libc::SIGTERM => "SIGTERM",
        libc::SIGHUP => "SIGHUP",
        _ => "a signal",
    }
}

/// The exit code for a tool that failed with `e`: 128 + the signal when interrupted,
/// else 1.
pub fn exit_code(e: &Error) -> ExitCode {
    let sig = flags().signal.load(Ordering::Relaxed);
    if e.code() == ErrorCode::Shutdown && sig > 0 && sig < 128 {
        ExitCode::from(128 + sig as u8)
    } else {
        ExitCode::FAILURE
    }
}

/// Registers a temporary file or directory to remove if the tool ends early.
pub fn register(path: &Path, dir: bool) {
    temps().push((path.to_path_buf(), dir));
}

/// Forgets a temporary (renamed into place, or removed by its owner).
pub fn forget(path: &Path) {
    let mut t = temps();
    if let Some(i) = t.iter().rposition(|(p, _)| p == path) {
        t.swap_remove(i);
    }
}

/// Removes every registered temporary and ends the process with `code`.
pub fn quit(code: i32) -> ! {
    let list = std::mem::take(&mut *temps());
    for (p, dir) in list {
        if dir {
            let _ = std::fs::remove_dir_all(&p);
        } else {
            let _ = std::fs::remove_file(&p);
        }
    }
    std::process::exit(code)
}

/// A temporary name beside `path` for this process: `.NAME.doca-tmp-PID`.
pub fn temp_name(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    let mut t = std::ffi::OsString::from(".");
    t.push(name);
    t.push(format!("{TEMP_MARK}{}", std::process::id()));
    Some(path.with_file_name(t))
}

/// The process id a temporary's name carries, if the name is one of ours.
fn temp_owner(name: &OsStr) -> Option<u32> {
    use std::os::unix::ffi::OsStrExt;
    let b = name.as_bytes();
    if b.first() != Some(&b'.') {
        return None;
    }
    let mark = TEMP_MARK.as_bytes();
    let at = b.windows(mark.len()).rposition(|w| w == mark)?;
    let pid = &b[at + mark.len()..];
    if pid.is_empty() || pid.len() > 10 || !pid.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(pid).ok()?.parse().ok()
}

/// Whether process `pid` exists (of any user).
fn alive(pid: u32) -> bool {
    let Ok(p) = i32::try_from(pid) else {
        return false;
    };
    if p <= 0 {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists.
    let r = unsafe { libc::kill(p, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// Removes the temporaries in `dir` that processes which no longer exist left behind
/// (killed mid-run): only entries named `.NAME.doca-tmp-PID`, owned by this user, whose
/// process is gone. Returns how many were removed.
pub fn remove_stale(dir: &Path) -> usize {
    use std::os::unix::fs::MetadataExt;
    // Once per directory and run: an encode creates a temporary per block.
    {
        static SCANNED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
        let mut seen = SCANNED.lock().unwrap_or_else(|e| e.into_inner());
        if seen.iter().any(|d| d == dir) {
            return 0;
        }
        seen.push(dir.to_path_buf());
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let mut n = 0;
    for e in rd.flatten() {
        let Some(pid) = temp_owner(&e.file_name()) else {
            continue;
        };
        if pid == std::process::id() || alive(pid) {
            continue;
        }
        let Ok(m) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if m.uid() != uid {
            continue;
        }
        let gone = if m.is_dir() {
            std::fs::remove_dir_all(e.path()).is_ok()
        } else if m.is_file() {
            std::fs::remove_file(e.path()).is_ok()
        } else {
            false
        };
        n += usize::from(gone);
    }
    n
}

/// Writes one line to standard output. A closed pipe ends the tool quietly (exit 141,
/// after removing its temporaries); another write failure (a full disk) is reported
/// and ends it with 1, so that no output is lost while the tool says it succeeded.
pub fn out_line(args: std::fmt::Arguments<'_>) {
    match args.as_str() {
        Some(s) => out_bytes(s.as_bytes()),
        None => out_bytes(args.to_string().as_bytes()),
    }
}

/// [`out_line`] for a line of bytes (a Unix path need not be UTF-8).
pub fn out_bytes(line: &[u8]) {
    let mut o = std::io::stdout().lock();
    if let Err(e) = o
        .write_all(line)
        .and_then(|()| o.write_all(b"\n"))
        .and_then(|()| o.flush())
    {
        drop(o);
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            quit(141);
        }
        let _ = writeln!(
            std::io::stderr(),
            "error: cannot write to standard output: {e}"
        );
        quit(1);
    }
}

/// `println!` for the tools: see [`out_line`].
#[macro_export]
macro_rules! outln {
    ($($t:tt)*) => {
        $crate::cleanup::out_line(format_args!($($t)*))
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_carry_their_owner() {
        let p = temp_name(Path::new("/x/data_block_0")).unwrap();
        let name = p.file_name().unwrap();
        assert_eq!(temp_owner(name), Some(std::process::id()));
        for not_ours in [
            "data_block_0",
            ".data.tmp-12",
            ".a.doca-tmp-",
            ".a.doca-tmp-12x",
            "a.doca-tmp-12",
            ".a.doca-tmp-99999999999",
        ] {
            assert_eq!(temp_owner(OsStr::new(not_ours)), None, "{not_ours}");
        }
    }
}
