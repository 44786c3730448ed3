//! Exclusive byte access for libraries executing jobs: the io locks of every mmap a job
//! touches, taken in address order (no deadlock), so that safe code elsewhere cannot read
//! or write the same bytes meanwhile.

use super::buf::BufDesc;
use super::mmap::MmapShared;
use std::sync::MutexGuard;

/// Most distinct mmaps one job may touch.
pub const MAX_JOB_MMAPS: usize = 16;

/// Holds the io locks of a job's mmaps until dropped.
#[derive(Default)]
pub struct IoGuard<'a> {
    guards: [Option<MutexGuard<'a, ()>>; MAX_JOB_MMAPS],
}

impl std::fmt::Debug for IoGuard<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IoGuard")
            .field("locks", &self.guards.iter().filter(|g| g.is_some()).count())
            .finish()
    }
}

impl<'a> IoGuard<'a> {
    /// Locks the mmaps of every element of the given buffer lists. `None` when they span
    /// more than [`MAX_JOB_MMAPS`] mmaps. Allocates nothing.
    pub fn lock(lists: &[&'a BufDesc]) -> Option<IoGuard<'a>> {
        let mut keys: [(usize, *const MmapShared); MAX_JOB_MMAPS] =
            [(0, std::ptr::null()); MAX_JOB_MMAPS];
        let mut n = 0;
        for head in lists {
            for e in head.iter() {
                let k = e.mmap_key();
                if keys[..n].iter().any(|(x, _)| *x == k) {
                    continue;
                }
                if n == MAX_JOB_MMAPS {
                    return None;
                }
                keys[n] = (k, e.mmap_shared() as *const MmapShared);
                n += 1;
            }
        }
        keys[..n].sort_unstable_by_key(|(k, _)| *k);
        let mut g = IoGuard::default();
        for (slot, (_, m)) in g.guards.iter_mut().zip(&keys[..n]) {
            // SAFETY: each mmap is kept alive by the buffers borrowed for 'a.
            let m: &'a MmapShared = unsafe { &**m };
            *slot = Some(super::mmap::lock(&m.io));
        }
        Some(g)
    }
}
