//! Waiting for completions: on a sleeping thread (woken by engine threads) or on the
//! eventfd of event-driven mode.

use super::queue::WorkQ;
use crate::error::{Error, ErrorCode, Result};
use crate::exec::job::{Completion, RetrieveError};
use crate::lock;
use rustix::event::{EventfdFlags, PollFd, PollFlags};
use rustix::fd::{AsFd, AsRawFd, RawFd};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

impl WorkQ {
    /// Waits for the next completion: on the event handle in event-driven mode, else
    /// sleeping until an engine thread posts one. `Again` when nothing is in flight or the
    /// timeout passes.
    #[inline]
    pub fn wait(
        &mut self,
        timeout: Option<Duration>,
    ) -> std::result::Result<Completion, RetrieveError> {
        match self.progress_retrieve() {
            Err(RetrieveError::Again) if self.inflight > 0 => self.wait_slow(timeout),
            other => other,
        }
    }

    fn wait_slow(
        &mut self,
        timeout: Option<Duration>,
    ) -> std::result::Result<Completion, RetrieveError> {
        let mut deadline = None;
        let mut spins = 0u32;
        loop {
            match self.progress_retrieve() {
                Err(RetrieveError::Again) => {}
                other => return other,
            }
            if self.inflight == 0 {
                return Err(RetrieveError::Again);
            }
            let now = Instant::now();
            let end = *deadline.get_or_insert_with(|| timeout.map(|t| now + t));
            if end.is_some_and(|d| now >= d) {
                return Err(RetrieveError::Again);
            }
            let left = end.map(|d| d.saturating_duration_since(now));
            if self.event_driven {
                if self.event_handle_arm().is_err() {
                    return Err(RetrieveError::Again);
                }
                // The queue's lock is released before sleeping: engine threads need it.
                let empty = lock(&self.shared.cq).is_empty();
                if empty && let Some(fd) = self.shared.efd.get() {
                    // Conditions changed behind the library's back (shared memory) are
                    // seen within a millisecond.
                    let left = if self.pending.is_empty() {
                        left
                    } else {
                        Some(left.map_or(Duration::from_millis(1), |l| {
                            l.min(Duration::from_millis(1))
                        }))
                    };
                    let ts = left.map(|l| rustix::time::Timespec {
                        tv_sec: l.as_secs() as i64,
                        tv_nsec: l.subsec_nanos() as i64,
                    });
                    let mut fds = [PollFd::new(fd, PollFlags::IN)];
                    let _ = rustix::event::poll(&mut fds, ts.as_ref());
                }
                if let Some(h) = self.shared.event_fd() {
                    let _ = self.event_handle_clear(h);
                }
            } else if spins < 64 {
                // Short jobs finish within a few yields; longer ones are slept on.
                spins += 1;
                std::thread::yield_now();
            } else {
                let q = lock(&self.shared.cq);
                if q.is_empty() {
                    self.shared.sleeping.store(true, Ordering::Relaxed);
                    // Pending jobs are woken by a poke; a short nap also covers
                    // conditions changed behind the library's back (shared memory).
                    let cap = if self.pending.is_empty() {
                        Duration::from_millis(100)
                    } else {
                        Duration::from_millis(1)
                    };
                    let nap = left.map_or(cap, |l| l.min(cap));
                    let (q, _) = self
                        .shared
                        .cv
                        .wait_timeout(q, nap)
                        .unwrap_or_else(|e| e.into_inner());
                    self.shared.sleeping.store(false, Ordering::Relaxed);
                    drop(q);
                }
            }
        }
    }

    /// Jobs waiting on a condition (sync event waits not yet passed).
    pub fn pending_jobs(&self) -> u32 {
        self.shared.pending_jobs()
    }

    /// `doca_workq_set_event_driven_enable`: only while no context is attached.
    pub fn set_event_driven_enable(&mut self, enable: bool) -> Result<()> {
        if !self.attached.is_empty() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "event-driven mode can change only while no context is attached",
            ));
        }
        if enable && self.shared.efd.get().is_none() {
            let fd = rustix::event::eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
                .map_err(|e| {
                    Error::with_context(
                        ErrorCode::OperatingSystem,
                        format!("cannot create the event handle (eventfd): {e}"),
                    )
                })?;
            let _ = self.shared.efd.set(fd);
        }
        self.event_driven = enable;
        Ok(())
    }

    /// `doca_workq_get_event_driven_enable`.
    pub fn event_driven_enabled(&self) -> bool {
        self.event_driven
    }

    /// `doca_workq_get_event_handle`: a Linux eventfd for epoll/poll/select.
    /// `BadState` unless event-driven mode is enabled.
    pub fn event_handle(&self) -> Result<RawFd> {
        match (self.event_driven, self.shared.efd.get()) {
            (true, Some(fd)) => Ok(fd.as_fd().as_raw_fd()),
            _ => Err(Error::with_context(
                ErrorCode::BadState,
                "event-driven mode is not enabled on this work queue",
            )),
        }
    }

    /// `doca_workq_event_handle_arm`: the next completion makes the handle readable (at
    /// once when completions are already waiting).
    pub fn event_handle_arm(&mut self) -> Result<()> {
        if !self.event_driven {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "event-driven mode is not enabled on this work queue",
            ));
        }
        self.shared.armed.store(true, Ordering::Release);
        // A pending job whose condition came true before arming completes now (later
        // changes poke the armed handle).
        if !self.pending.is_empty() {
            self.retry_pending();
        }
        if !self.local.is_empty() || !lock(&self.shared.cq).is_empty() {
            self.shared.wake(false);
        }
        Ok(())
    }

    /// `doca_workq_event_handle_clear`: acknowledges a wake-up on `handle` (this work
    /// queue's handle; `InvalidValue` otherwise).
    pub fn event_handle_clear(&mut self, handle: RawFd) -> Result<()> {
        let fd = self.event_handle()?;
        if fd != handle {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "handle is not this work queue's event handle",
            ));
        }
        if let Some(f) = self.shared.efd.get() {
            let mut buf = [0u8; 8];
            // Nothing to read (EAGAIN) means nothing to clear.
            let _ = rustix::io::read(f, &mut buf);
        }
        Ok(())
    }
}
