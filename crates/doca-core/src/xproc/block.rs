//! The control block of one export, in a page shared by the exporter and its importers.

use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, Ordering};

/// `Block::magic`.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"DOCASWCB");
/// `Block::version`.
pub(crate) const VERSION: u32 = 1;
/// `Block::state`: importers may access the memory or event.
pub(crate) const LIVE: u32 = 1;
/// `Block::state`: the exporter stopped or destroyed it; no access from now on.
pub(crate) const REVOKED: u32 = 2;

/// Most processes importing one export at a time.
pub(crate) const MAX_IMPORTERS: usize = 48;

/// One importing process.
#[repr(C)]
pub(crate) struct Slot {
    /// Its pid (0: free).
    pub(crate) pid: AtomicU32,
    /// Its accesses in flight.
    pub(crate) inflight: AtomicU32,
    /// Its start time (with the pid: the process, even after pid reuse).
    pub(crate) start: AtomicU64,
    /// An eventfd of its (armed event handles), or -1.
    pub(crate) bell: AtomicI32,
    _pad: u32,
}

/// The control block. Only integer atomics: any bits a peer writes are a valid block,
/// and every value read from it is checked before use.
#[repr(C)]
pub(crate) struct Block {
    pub(crate) magic: AtomicU64,
    pub(crate) version: AtomicU32,
    /// What is exported (a `blob::Kind` value).
    pub(crate) kind: AtomicU32,
    pub(crate) token: [AtomicU64; 2],
    /// 0 (not exported yet), LIVE or REVOKED.
    pub(crate) state: AtomicU32,
    /// The exporter's pid.
    pub(crate) owner: AtomicU32,
    pub(crate) base: AtomicU64,
    pub(crate) len: AtomicU64,
    pub(crate) perms: AtomicU32,
    pub(crate) dev: AtomicU32,
    /// A sync event's value.
    pub(crate) value: AtomicU64,
    /// Changes with every update of `value`: the futex blocking waiters sleep on.
    pub(crate) seq: AtomicU32,
    /// Threads (of any process) asleep on `seq`.
    pub(crate) sleepers: AtomicU32,
    /// The exporter's eventfd of armed event handles, or -1.
    pub(crate) owner_bell: AtomicI32,
    _pad: u32,
    pub(crate) slots: [Slot; MAX_IMPORTERS],
}

impl Block {
    /// Whether the block holds this live export.
    pub(crate) fn matches(&self, kind: u32, token: [u64; 2]) -> bool {
        self.magic.load(Ordering::Acquire) == MAGIC
            && self.version.load(Ordering::Acquire) == VERSION
            && self.kind.load(Ordering::Acquire) == kind
            && self.token[0].load(Ordering::Acquire) == token[0]
            && self.token[1].load(Ordering::Acquire) == token[1]
    }

    /// Writes the header of a new export (the state last).
    pub(crate) fn publish(&self, kind: u32, token: [u64; 2], owner: u32) {
        self.magic.store(MAGIC, Ordering::Relaxed);
        self.version.store(VERSION, Ordering::Relaxed);
        self.kind.store(kind, Ordering::Relaxed);
        self.token[0].store(token[0], Ordering::Relaxed);
        self.token[1].store(token[1], Ordering::Relaxed);
        self.owner.store(owner, Ordering::Relaxed);
        self.owner_bell.store(-1, Ordering::Relaxed);
        for s in &self.slots {
            s.bell.store(-1, Ordering::Relaxed);
        }
        self.state.store(LIVE, Ordering::SeqCst);
    }

    /// Claims a free slot (or one of a process that is gone) for process (pid, start).
    pub(crate) fn claim(&self, pid: u32, start: u64) -> Option<usize> {
        for (i, s) in self.slots.iter().enumerate() {
            let cur = s.pid.load(Ordering::Acquire);
            // A slot of a process that no longer exists is free again (a live pid is never
            // taken over, even one whose start time is not written yet).
            let free =
                cur == 0 || (cur != pid && !matches!(super::proc_start(cur), Some((_, false))));
            if free
                && s.pid
                    .compare_exchange(cur, pid, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                s.start.store(start, Ordering::Release);
                s.inflight.store(0, Ordering::Release);
                s.bell.store(-1, Ordering::Release);
                return Some(i);
            }
        }
        None
    }
}
