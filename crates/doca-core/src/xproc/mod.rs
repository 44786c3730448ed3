//! Host and DPU as two processes of one user on one machine: what DOCA does over PCIe
//! (memory export, sync event export), done with the kernel's help and no daemon.
//!
//! - [`Page`]: one shared page (a memfd) per export, holding its [`Block`]: the export's
//!   token and state, and a slot per importing process with its accesses in flight.
//!   Importers open the page through `/proc/<pid>/fd/<fd>` of the exporter.
//! - [`blob`]: the descriptor a program passes out of band, versioned and checked.
//! - [`Peer`]: the other process, identified by pid and start time (against pid reuse),
//!   watched through a pidfd.
//!
//! Bytes move with `process_vm_readv`/`process_vm_writev`; the exporter lets peers of its
//! own user do so (`PR_SET_PTRACER` where Yama restricts ptrace). The OS user boundary is
//! the security boundary; within it, every blob and shared word is validated before use.

pub(crate) mod blob;
mod block;

pub(crate) use block::{Block, LIVE, MAX_IMPORTERS, REVOKED};

use crate::error::{Error, ErrorCode, Result};
use std::fs::File;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::AtomicU32;
use std::sync::{Once, OnceLock};
use std::time::Duration;

/// Size of a shared control page.
pub(crate) const PAGE: usize = 4096;

fn os_error(code: ErrorCode, what: &str) -> Error {
    Error::with_context(code, format!("{what}: {}", std::io::Error::last_os_error()))
}

/// The start time of process `pid` (clock ticks since boot, field 22 of
/// `/proc/<pid>/stat`) and whether it has exited (a zombie); `None` when there is no
/// such process.
pub(crate) fn proc_start(pid: u32) -> Option<(u64, bool)> {
    if pid == 0 || pid > i32::MAX as u32 {
        return None;
    }
    let stat = std::fs::read(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold anything: the fields after its last ')'.
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = std::str::from_utf8(&stat[close + 1..]).ok()?;
    let mut fields = rest.split_ascii_whitespace();
    let state = fields.next()?;
    let start = fields.nth(18)?.parse().ok()?;
    Some((start, matches!(state, "Z" | "X" | "x")))
}

/// This process's pid and start time.
pub(crate) fn me() -> (u32, u64) {
    static ME: OnceLock<(u32, u64)> = OnceLock::new();
    // The pid can change across fork: look it up each time, the start time once per pid.
    let pid = std::process::id();
    let cached = *ME.get_or_init(|| (pid, proc_start(pid).map_or(0, |s| s.0)));
    if cached.0 == pid {
        cached
    } else {
        (pid, proc_start(pid).map_or(0, |s| s.0))
    }
}

/// This process's real user id.
pub(crate) fn uid() -> u32 {
    // SAFETY: getuid has no preconditions and cannot fail.
    unsafe { libc::getuid() }
}

/// Whether the process `pid` that started at `start` still runs (not a zombie).
pub(crate) fn running(pid: u32, start: u64) -> bool {
    matches!(proc_start(pid), Some((s, false)) if s == start)
}

/// Whether the exporter `pid` (started at `start`, of user `uid`) runs on this machine
/// where this process can open its exports: same user, same process namespace.
pub(crate) fn reachable(pid: u32, start: u64, uid_: u32) -> bool {
    uid_ == uid() && running(pid, start)
}

/// Lets other processes of this user read and write this process's memory
/// (`process_vm_*`), as a BlueField's engines reach the host's: under Yama's ptrace
/// scope 1 only ancestors could otherwise. Once per process.
pub(crate) fn allow_peer_access() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: PR_SET_PTRACER takes a pid (or PR_SET_PTRACER_ANY) and touches no memory
        // of ours; without Yama it fails with EINVAL, which changes nothing.
        unsafe { libc::prctl(libc::PR_SET_PTRACER, libc::PR_SET_PTRACER_ANY, 0, 0, 0) };
    });
}

/// 128 random bits.
pub(crate) fn token() -> Result<[u64; 2]> {
    let mut b = [0u8; 16];
    crate::random_fill(&mut b, "an export token")?;
    let (lo, hi) = b.split_at(8);
    Ok([
        u64::from_ne_bytes(lo.try_into().expect("8 bytes")),
        u64::from_ne_bytes(hi.try_into().expect("8 bytes")),
    ])
}

/// Sleeps while `word` holds `expected`, at most `timeout` (a futex shared between
/// processes: the word may live in a page mapped by several).
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: the word is a live, aligned u32; FUTEX_WAIT only reads it and sleeps; the
    // timespec lives across the call. Errors (EAGAIN, ETIMEDOUT, EINTR) all mean "look
    // again", which every caller does.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        )
    };
}

/// Wakes every process and thread sleeping on `word`.
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address as a key; it reads no memory.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        )
    };
}

/// A new memfd of `len` bytes whose size is sealed: no process can shrink it under the
/// others' mappings (which would make their accesses fault).
pub(crate) fn sealed_memfd(what: &str, len: usize) -> Result<File> {
    let name = std::ffi::CString::new(format!("doca-sw {what}")).unwrap_or_default();
    // SAFETY: the name is a valid C string; the flags are valid.
    let fd =
        unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(os_error(
            ErrorCode::NoMemory,
            "cannot create shared memory (memfd)",
        ));
    }
    // SAFETY: memfd_create returned a new descriptor that nothing else owns.
    let file = File::from(unsafe { OwnedFd::from_raw_fd(fd) });
    file.set_len(len as u64)
        .map_err(|e| Error::with_context(ErrorCode::NoMemory, format!("shared memory: {e}")))?;
    let seals = libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL;
    // SAFETY: F_ADD_SEALS on our memfd.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_ADD_SEALS, seals) } != 0 {
        return Err(os_error(ErrorCode::NoMemory, "cannot seal shared memory"));
    }
    Ok(file)
}

/// Opens the regular file process `pid` holds as descriptor `fd`, when it belongs to
/// this user, is at least `min_len` bytes and cannot shrink (sealed). What the
/// descriptor names is looked at before it is opened: a device, a FIFO or a socket is
/// never opened.
pub(crate) fn open_peer_file(pid: u32, fd: i32, min_len: u64, write: bool) -> Result<File> {
    use std::os::unix::fs::MetadataExt;
    if fd < 0 {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "the descriptor names no shared memory",
        ));
    }
    let path = format!("/proc/{pid}/fd/{fd}");
    let gone = |e: std::io::Error| match e.kind() {
        std::io::ErrorKind::PermissionDenied => Error::with_context(
            ErrorCode::NotPermitted,
            format!("the export's shared memory cannot be opened: {e}"),
        ),
        _ => Error::with_context(
            ErrorCode::NotFound,
            format!("the exporting process or its export is gone: {e}"),
        ),
    };
    let not_ours = || {
        Error::with_context(
            ErrorCode::InvalidValue,
            "the descriptor does not name an export's shared memory",
        )
    };
    let before = std::fs::metadata(&path).map_err(gone)?;
    if !before.file_type().is_file() || before.len() < min_len {
        return Err(not_ours());
    }
    if before.uid() != uid() {
        return Err(Error::with_context(
            ErrorCode::NotPermitted,
            "the export belongs to another user",
        ));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(write)
        .open(&path)
        .map_err(gone)?;
    let meta = file.metadata().map_err(gone)?;
    if meta.dev() != before.dev() || meta.ino() != before.ino() || meta.len() < min_len {
        return Err(not_ours());
    }
    // SAFETY: F_GET_SEALS on our descriptor.
    let seals = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_GET_SEALS) };
    if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
        return Err(not_ours());
    }
    Ok(file)
}

/// One shared control page: a memfd mapped read-write and shared.
pub(crate) struct Page {
    map: memmap2::MmapMut,
    file: File,
}

impl std::fmt::Debug for Page {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Page").field("fd", &self.fd()).finish()
    }
}

impl Page {
    /// A new zeroed page of this process, for `what` (the memfd's name).
    pub(crate) fn create(what: &str) -> Result<Page> {
        Page::map(sealed_memfd(what, PAGE)?)
    }

    /// Opens the page that process `pid` holds as descriptor `fd`, after checking that it
    /// is a sealed page of this user.
    pub(crate) fn open(pid: u32, fd: i32) -> Result<Page> {
        let file = open_peer_file(pid, fd, PAGE as u64, true)?;
        if file.metadata().map(|m| m.len()).unwrap_or(0) != PAGE as u64 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the descriptor does not name an export (not a shared control page)",
            ));
        }
        Page::map(file)
    }

    fn map(file: File) -> Result<Page> {
        // SAFETY: the file is a page-sized memfd; the mapping is shared with the other
        // processes that map it, and is only ever read and written through the atomics
        // of `Block` (no `&[u8]` over it is handed out).
        let map = unsafe { memmap2::MmapOptions::new().len(PAGE).map_mut(&file) }
            .map_err(|e| Error::with_context(ErrorCode::NoMemory, format!("shared page: {e}")))?;
        Ok(Page { map, file })
    }

    /// The descriptor number in this process.
    pub(crate) fn fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// The control block the page holds.
    pub(crate) fn block(&self) -> &Block {
        const { assert!(std::mem::size_of::<Block>() <= PAGE) };
        // SAFETY: the mapping is PAGE bytes, page-aligned (more than Block's alignment)
        // and lives as long as `self`; Block is made of integer atomics only, valid for
        // any bit pattern, so whatever another process writes there is a valid Block.
        unsafe { &*(self.map.as_ptr() as *const Block) }
    }
}

/// The other process of an export: pid, start time, and a pidfd that says when it exits.
#[derive(Debug)]
pub(crate) struct Peer {
    pub(crate) pid: u32,
    pub(crate) start: u64,
    pidfd: Option<OwnedFd>,
    /// When [`alive_lately`](Peer::alive_lately) last saw the process run
    /// (microseconds since [`epoch`]; 0: never).
    seen: std::sync::atomic::AtomicU64,
}

/// The instant [`Peer::alive_lately`] counts from.
fn epoch() -> std::time::Instant {
    static E: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
    *E.get_or_init(std::time::Instant::now)
}

/// How long a look at a peer process stands for [`Peer::alive_lately`].
const SEEN_FOR_US: u64 = 1000;

impl Peer {
    /// The process `pid` that started at `start`; `NotFound` when it no longer runs.
    pub(crate) fn find(pid: u32, start: u64) -> Result<Peer> {
        let gone = || {
            Error::with_context(
                ErrorCode::NotFound,
                format!("the exporting process {pid} is gone"),
            )
        };
        if !running(pid, start) {
            return Err(gone());
        }
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        let pidfd = (fd >= 0).then(|| {
            // SAFETY: a new descriptor that nothing else owns.
            unsafe { OwnedFd::from_raw_fd(fd as RawFd) }
        });
        // The pidfd names whatever process had the pid when it was opened: check again
        // that it is the one that started at `start`.
        if !running(pid, start) {
            return Err(gone());
        }
        Ok(Peer {
            pid,
            start,
            pidfd,
            seen: std::sync::atomic::AtomicU64::new(0),
        })
    }

    /// Whether the process still runs, with a system call at most once a millisecond
    /// (the copies of a busy importer): a process that ends is noticed within a
    /// millisecond, in which its pid cannot go to another process (the kernel hands
    /// pids out in turn and reuses one only after going round the whole pid space), and
    /// a copy to a process that ended fails (`ESRCH`).
    pub(crate) fn alive_lately(&self) -> bool {
        use std::sync::atomic::Ordering;
        let now = epoch().elapsed().as_micros() as u64 + 1;
        let seen = self.seen.load(Ordering::Relaxed);
        if seen != 0 && now.saturating_sub(seen) < SEEN_FOR_US {
            return true;
        }
        let alive = self.alive();
        if alive {
            self.seen.store(now, Ordering::Relaxed);
        }
        alive
    }

    /// Whether the process still runs.
    pub(crate) fn alive(&self) -> bool {
        match &self.pidfd {
            Some(fd) => {
                let mut p = libc::pollfd {
                    fd: fd.as_raw_fd(),
                    events: libc::POLLIN,
                    revents: 0,
                };
                // SAFETY: one valid pollfd, no wait. A pidfd turns readable when the
                // process exits.
                let n = unsafe { libc::poll(&mut p, 1, 0) };
                n == 0
            }
            None => running(self.pid, self.start),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    #[test]
    fn this_process_runs_and_a_made_up_one_does_not() {
        let (pid, start) = me();
        assert!(start > 0);
        assert!(running(pid, start));
        assert!(!running(pid, start + 1));
        assert!(proc_start(0).is_none());
        assert!(proc_start(u32::MAX).is_none());
    }

    #[test]
    fn a_page_opens_again_through_proc() {
        let p = Page::create("test").unwrap();
        p.block().seq.store(7, Ordering::SeqCst);
        let q = Page::open(std::process::id(), p.fd()).unwrap();
        assert_eq!(q.block().seq.load(Ordering::SeqCst), 7);
        // Not a page: stdin or a missing descriptor.
        assert!(Page::open(std::process::id(), 100_000).is_err());
        assert!(Page::open(std::process::id(), -1).is_err());
    }

    #[test]
    fn tokens_differ() {
        assert_ne!(token().unwrap(), token().unwrap());
    }
}
