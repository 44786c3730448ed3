//! A connection's accounting page, shared by its two processes.

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FileType, MemfdFlags, SealFlags};
use rustix::mm::{MapFlags, ProtFlags};
use std::sync::atomic::{AtomicU64, Ordering};

/// A connection's accounting page, shared by its two processes (a sealed memfd the
/// client passes with its greeting): how many messages each side has taken, and each
/// side's receive queue size. Senders keep what is in flight within the queues.
pub(crate) struct Ctl {
    ptr: *mut u8,
    /// Whether this process is the client (its counters are the first ones).
    client: bool,
}

pub(crate) const CTL_LEN: usize = 4096;
pub(crate) const CTL_MAGIC: u64 = u64::from_le_bytes(*b"DOCASWQ1");

// SAFETY: the page is only reached through atomics.
unsafe impl Send for Ctl {}
// SAFETY: as above.
unsafe impl Sync for Ctl {}

impl std::fmt::Debug for Ctl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctl").field("client", &self.client).finish()
    }
}

impl Ctl {
    /// Maps a page of `fd` (checked: a sealed regular file of at least a page).
    pub(crate) fn map(fd: BorrowedFd<'_>, client: bool) -> Option<Ctl> {
        let st = rustix::fs::fstat(fd).ok()?;
        if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
            || (st.st_size as u64) < CTL_LEN as u64
        {
            return None;
        }
        let seals = rustix::fs::fcntl_get_seals(fd).ok()?;
        if !seals.contains(SealFlags::SHRINK) {
            return None;
        }
        // SAFETY: a new shared mapping (no address given) of a page of a file that
        // cannot shrink; nothing else refers to it until it is unmapped in `drop`.
        let p = unsafe {
            rustix::mm::mmap(
                std::ptr::null_mut(),
                CTL_LEN,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                fd,
                0,
            )
        }
        .ok()?;
        Some(Ctl {
            ptr: p.cast(),
            client,
        })
    }

    /// A new page (the client's), with its descriptor to pass to the service.
    pub(crate) fn new_page() -> Option<(OwnedFd, Ctl)> {
        let fd = rustix::fs::memfd_create(
            c"doca-sw comm channel",
            MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
        )
        .ok()?;
        rustix::fs::ftruncate(&fd, CTL_LEN as u64).ok()?;
        rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL)
            .ok()?;
        let c = Ctl::map(fd.as_fd(), true)?;
        c.word(0).store(CTL_MAGIC, Ordering::Release);
        Some((fd, c))
    }

    pub(crate) fn word(&self, i: usize) -> &AtomicU64 {
        // SAFETY: i < 5: inside the page, aligned; the page lives as long as self and is
        // only accessed atomically (by both processes).
        unsafe { AtomicU64::from_ptr(self.ptr.cast::<u64>().add(i)) }
    }

    /// Messages this side has taken.
    pub(crate) fn taken_here(&self) -> &AtomicU64 {
        self.word(if self.client { 1 } else { 2 })
    }

    /// Messages the other side has taken.
    pub(crate) fn taken_there(&self) -> u64 {
        self.word(if self.client { 2 } else { 1 })
            .load(Ordering::Acquire)
    }

    /// This side's receive queue size (published for the other side).
    pub(crate) fn set_recv_q(&self, q: u16) {
        self.word(if self.client { 3 } else { 4 })
            .store(u64::from(q), Ordering::Release);
    }

    /// The other side's receive queue size (0: not published yet).
    pub(crate) fn their_recv_q(&self) -> u64 {
        self.word(if self.client { 4 } else { 3 })
            .load(Ordering::Acquire)
    }
}

impl Drop for Ctl {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once; nothing refers to it after.
        let _ = unsafe { rustix::mm::munmap(self.ptr.cast(), CTL_LEN) };
    }
}
