//! Waiting for a sync event's value: polling, yielding and blocking waits.

use super::*;
use crate::Error;

pub(super) fn masked_gt(v: u64, value: u64, mask: u64) -> bool {
    (v & mask) > value
}

/// A thread inside a synchronous wait (counted in `Shared::waiters`).
struct Waiting<'a> {
    shared: &'a Shared,
    counter: &'a AtomicU64,
}

impl Waiting<'_> {
    /// `BadState` once the event was stopped under the waiter.
    #[inline]
    fn still_started(&self) -> Result<()> {
        if self.shared.mode.load(Ordering::Acquire) == SYNC {
            self.shared.remote_ok(false)
        } else {
            Err(Error::bad_state(
                "the sync event was stopped while this thread waited on it",
            ))
        }
    }

    /// As `still_started`, and the exporter (if any) still runs (a system call).
    fn still_there(&self) -> Result<()> {
        self.still_started()?;
        self.shared.remote_ok(true)
    }
}

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.shared.waiters.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Refuses a wait for `(event & mask) > value` that no event value can end: the masked
/// event is at most `reach` (the mask itself, or less for asynchronous waits, whose event
/// stays within 0..=254).
pub(super) fn satisfiable(value: u64, mask: u64, reach: u64) -> Result<()> {
    if value < reach {
        return Ok(());
    }
    Err(Error::with_context(
        ErrorCode::InvalidValue,
        format!(
            "a wait for (event & {mask:#x}) > {value} can never end: the masked event is at most {reach}"
        ),
    ))
}

/// A wait for `(event & mask) == value` ends only if `value` has no bit outside `mask`.
pub(super) fn eq_satisfiable(value: u64, mask: u64) -> Result<()> {
    if value & !mask == 0 {
        return Ok(());
    }
    Err(Error::with_context(
        ErrorCode::InvalidValue,
        format!(
            "a wait for (event & {mask:#x}) == {value:#x} can never end: the value has bits outside the mask"
        ),
    ))
}
impl SyncEvent {
    /// `doca_sync_event_wait_gt`: busy-polls until `(event & mask) > value`. A wait that
    /// can never end (`value >= mask`) is refused with `InvalidValue`.
    pub fn wait_gt(&self, value: u64, mask: u64) -> Result<()> {
        satisfiable(value, mask, mask)?;
        self.poll_until(|v| masked_gt(v, value, mask), false)
    }

    /// `doca_sync_event_wait_gt_yield`: polls, yielding the processor between polls.
    pub fn wait_gt_yield(&self, value: u64, mask: u64) -> Result<()> {
        satisfiable(value, mask, mask)?;
        self.poll_until(|v| masked_gt(v, value, mask), true)
    }

    /// `doca_sync_event_wait_eq` (3.x): polls until `(event & mask) == value`.
    pub fn wait_eq(&self, value: u64, mask: u64) -> Result<()> {
        eq_satisfiable(value, mask)?;
        self.poll_until(|v| v & mask == value, false)
    }

    /// `doca_sync_event_wait_eq_yield` (3.x): as [`wait_eq`](SyncEvent::wait_eq),
    /// yielding the processor between polls.
    pub fn wait_eq_yield(&self, value: u64, mask: u64) -> Result<()> {
        eq_satisfiable(value, mask)?;
        self.poll_until(|v| v & mask == value, true)
    }

    /// `doca_sync_event_wait_neq` (3.x): polls until `(event & mask) != value`.
    pub fn wait_neq(&self, value: u64, mask: u64) -> Result<()> {
        self.poll_until(|v| v & mask != value, false)
    }

    /// `doca_sync_event_wait_neq_yield` (3.x): as [`wait_neq`](SyncEvent::wait_neq),
    /// yielding the processor between polls.
    pub fn wait_neq_yield(&self, value: u64, mask: u64) -> Result<()> {
        self.poll_until(|v| v & mask != value, true)
    }

    /// Polls the counter until `done` holds (spinning, or yielding between polls),
    /// checking that the event stays started and its exporter alive.
    fn poll_until(&self, done: impl Fn(u64) -> bool, yielding: bool) -> Result<()> {
        let w = self.enter_wait()?;
        // Whether the exporter still lives is asked by the clock, not by the count of
        // polls: a yield lasts as long as the other threads' turns, so that a count
        // stretches to seconds on a busy machine. A spinning wait reads the clock every
        // 1024 polls, a yielding one at every poll.
        let every: u32 = if yielding { 1 } else { 1024 };
        let mut asked = Instant::now();
        let mut n = 0u32;
        while !done(w.counter.load(Ordering::Acquire)) {
            n = n.wrapping_add(1);
            if n.is_multiple_of(every) && asked.elapsed() >= Duration::from_millis(20) {
                w.still_there()?;
                asked = Instant::now();
            } else {
                w.still_started()?;
            }
            if yielding {
                std::thread::yield_now();
            } else {
                std::hint::spin_loop();
            }
        }
        Ok(())
    }

    /// Counts this thread as a waiter for as long as the guard lives (synchronous mode
    /// only).
    fn enter_wait(&self) -> Result<Waiting<'_>> {
        self.shared.waiters.fetch_add(1, Ordering::SeqCst);
        let w = Waiting {
            shared: &self.shared,
            counter: self.shared.counter(),
        };
        self.sync_mode()?;
        Ok(w)
    }

    /// Waits until `(event & mask) > value` without burning a core: the thread sleeps on
    /// a futex in the event's shared page, and updates through this library, from this
    /// process or the other side's, wake it (changes made directly in `set_addr` memory
    /// are seen within a millisecond). `TimeOut` when `timeout` passes first; for an
    /// event created from an export, an error once the exporter destroyed it or exited.
    /// An addition to DOCA's API.
    pub fn wait_gt_blocking(&self, value: u64, mask: u64, timeout: Option<Duration>) -> Result<()> {
        satisfiable(value, mask, mask)?;
        let w = self.enter_wait()?;
        let c = w.counter;
        let deadline = timeout.map(|t| Instant::now() + t);
        // A few polls first: a value that is about to change costs no sleep.
        for _ in 0..64 {
            if masked_gt(c.load(Ordering::Acquire), value, mask) {
                return Ok(());
            }
            std::hint::spin_loop();
        }
        let b = self.shared.block();
        // Sleeps are cut into slices to look at the exporter (and at memory outside the
        // page, which no futex watches).
        let slice = if self.shared.external.load(Ordering::Acquire).is_null() {
            Duration::from_millis(50)
        } else {
            Duration::from_millis(1)
        };
        loop {
            let seq = b.seq.load(Ordering::SeqCst);
            if masked_gt(c.load(Ordering::SeqCst), value, mask) {
                return Ok(());
            }
            w.still_there()?;
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                return Err(Error::with_context(
                    ErrorCode::TimeOut,
                    "the sync event did not pass the value in time",
                ));
            }
            let nap = deadline.map_or(slice, |d| (d - now).min(slice));
            b.sleepers.fetch_add(1, Ordering::SeqCst);
            xproc::futex_wait(&b.seq, seq, nap);
            b.sleepers.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
