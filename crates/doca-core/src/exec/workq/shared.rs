//! The side of a work queue that engine threads and sync events reach: completions
//! posted from other threads, and the one wake-up of the owner, sleeping on a condition
//! variable or on the eventfd of event-driven mode.

use crate::error::Result;
use crate::exec::job::{Completion, JobRecord};
use crate::lock;
use rustix::fd::{AsRawFd, OwnedFd, RawFd};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

/// What engine threads share with the work queue's owner.
pub(crate) struct WqShared {
    /// Completions posted by engine threads (inline completions stay in the `WorkQ`).
    pub(crate) cq: Mutex<VecDeque<Completion>>,
    /// Set (under `cq`'s lock) while the owner sleeps in `wait` for engine completions.
    pub(super) sleeping: AtomicBool,
    pub(super) cv: Condvar,
    pub(super) armed: AtomicBool,
    pub(super) efd: OnceLock<OwnedFd>,
    /// How many jobs wait on a condition (retried by the owner in `progress_retrieve`).
    pub(super) pending_count: AtomicU32,
}

impl WqShared {
    pub(super) fn new() -> WqShared {
        WqShared {
            cq: Mutex::new(VecDeque::new()),
            sleeping: AtomicBool::new(false),
            cv: Condvar::new(),
            armed: AtomicBool::new(false),
            efd: OnceLock::new(),
            pending_count: AtomicU32::new(0),
        }
    }

    /// Jobs on this work queue waiting on a condition (a sync event wait not yet passed).
    pub(crate) fn pending_jobs(&self) -> u32 {
        self.pending_count.load(Ordering::Acquire)
    }

    /// The work queue's event handle, once event-driven mode made one.
    pub(crate) fn event_fd(&self) -> Option<RawFd> {
        self.efd.get().map(|f| f.as_raw_fd())
    }

    /// A condition some pending job waits on may have changed: wake the owner's armed
    /// event handle or sleeping `wait`.
    pub(crate) fn poke(&self) {
        if self.pending_count.load(Ordering::Acquire) == 0 {
            return;
        }
        let sleeping = {
            let _q = lock(&self.cq);
            self.sleeping.load(Ordering::Relaxed)
        };
        self.wake(sleeping);
    }

    /// Wakes the owner: the thread sleeping in `wait` when `sleeping` (read under the
    /// queue's lock), and the event handle when armed (disarming it: one wake per arm).
    pub(super) fn wake(&self, sleeping: bool) {
        if sleeping {
            self.cv.notify_one();
        }
        if self.armed.swap(false, Ordering::AcqRel)
            && let Some(fd) = self.efd.get()
        {
            // A full counter (never reached in practice) already wakes the reader.
            let _ = rustix::io::write(fd, &1u64.to_ne_bytes());
        }
    }

    /// [`wake`](WqShared::wake) of the armed handle from the owner's thread, which alone
    /// arms it: a plain load first saves an atomic swap per job.
    #[inline]
    pub(crate) fn wake_armed_from_owner(&self) {
        if self.armed.load(Ordering::Relaxed) {
            self.wake(false);
        }
    }
}

impl crate::exec::engine::Sink for WqShared {
    /// Posts a job finished on an engine thread to its work queue, and wakes the owner
    /// sleeping in `wait` and an armed event handle.
    fn complete(&self, record: JobRecord, r: Result<()>) {
        let c = Completion::of(record, r);
        let sleeping = {
            let mut q = lock(&self.cq);
            q.push_back(c);
            self.sleeping.load(Ordering::Relaxed)
        };
        self.wake(sleeping);
    }
}

impl crate::exec::ctx::WorkqLink for WqShared {
    fn pending_jobs(&self) -> u32 {
        WqShared::pending_jobs(self)
    }
    fn event_fd(&self) -> Option<RawFd> {
        WqShared::event_fd(self)
    }
    fn poke(&self) {
        WqShared::poke(self)
    }
    fn ring(&self) {
        let sleeping = {
            let _q = lock(&self.cq);
            self.sleeping.load(Ordering::Relaxed)
        };
        self.wake(sleeping);
    }
}
