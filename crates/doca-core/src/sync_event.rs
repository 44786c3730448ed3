//! `doca_sync_event`: a 64-bit counter that one side publishes (set, add) and another
//! subscribes to (get, wait until greater than a value), used synchronously or, as a
//! context, through jobs on a work queue.
//!
//! ```
//! use doca_core::{devinfo_list, SyncEvent};
//! use std::time::Duration;
//!
//! let dev = devinfo_list()?[0].open()?;
//! let se = SyncEvent::new();
//! se.publisher_add_location_cpu(&dev)?;
//! se.subscriber_add_location_cpu(&dev)?;
//! se.start()?;
//! std::thread::scope(|s| {
//!     s.spawn(|| se.update_add(5));
//!     se.wait_gt_blocking(4, u64::MAX, Some(Duration::from_secs(10)))
//! })?;
//! assert_eq!(se.get()?, 5);
//! se.stop()?;
//! # Ok::<(), doca_core::Error>(())
//! ```

use crate::device::{Capability, Dev, DevInfo};
use crate::error::{Error, ErrorCode, Result};
use crate::exec::{Ctx, CtxOps, ExecEnv, Job, JobRecord};
use crate::types::{Data, action};
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicPtr, AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock, Weak};
use std::time::{Duration, Instant};

/// `DOCA_SYNC_EVENT_JOB_WAIT_GT`.
pub const JOB_WAIT_GT: u32 = action::SYNC_EVENT_FIRST + 1;
/// `DOCA_SYNC_EVENT_JOB_GET`.
pub const JOB_GET: u32 = action::SYNC_EVENT_FIRST + 2;
/// `DOCA_SYNC_EVENT_JOB_UPDATE_SET`.
pub const JOB_UPDATE_SET: u32 = action::SYNC_EVENT_FIRST + 3;
/// `DOCA_SYNC_EVENT_JOB_UPDATE_ADD`.
pub const JOB_UPDATE_ADD: u32 = action::SYNC_EVENT_FIRST + 4;

/// Largest value and threshold of an asynchronous wait job (the guide's limit).
pub const MAX_ASYNC_WAIT_VALUE: u64 = 254;

/// Where a publisher or subscriber runs.
#[derive(Clone, PartialEq, Eq)]
enum Location {
    Cpu(Dev),
    Dpu,
}

const IDLE: u8 = 0;
const SYNC: u8 = 1;
const ASYNC: u8 = 2;

struct Config {
    publisher: Option<Location>,
    subscriber: Option<Location>,
}

struct Shared {
    cfg: Mutex<Config>,
    /// IDLE, SYNC or ASYNC.
    mode: AtomicU8,
    internal: AtomicU64,
    /// Caller-supplied backing memory (`set_addr`), or null for `internal`.
    external: AtomicPtr<u64>,
    /// Threads in `wait_gt_blocking`.
    blocked: AtomicU32,
    /// Threads in any wait: `stop` makes them return, `destroy` waits until they have.
    waiters: AtomicU32,
    sleep: Mutex<()>,
    cv: Condvar,
    /// The context's shared state, for waking its work queues.
    ctx: OnceLock<Weak<crate::exec::CtxShared>>,
}

impl Shared {
    fn counter(&self) -> &AtomicU64 {
        let p = self.external.load(Ordering::Acquire);
        if p.is_null() {
            &self.internal
        } else {
            // SAFETY: `set_addr`'s caller promised 8 aligned bytes that stay valid and are
            // only accessed atomically for the sync event's life.
            unsafe { AtomicU64::from_ptr(p) }
        }
    }

    /// The value changed: wake blocking waiters and work queues with waiting jobs.
    fn changed(&self) {
        if self.blocked.load(Ordering::SeqCst) > 0 {
            let _g = self.sleep.lock().unwrap_or_else(|e| e.into_inner());
            self.cv.notify_all();
        }
        if self.mode.load(Ordering::Acquire) == ASYNC
            && let Some(ctx) = self.ctx.get().and_then(Weak::upgrade)
        {
            ctx.wake_workqs();
        }
    }
}

fn masked_gt(v: u64, value: u64, mask: u64) -> bool {
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
            Ok(())
        } else {
            Err(bad_state(
                "the sync event was stopped while this thread waited on it",
            ))
        }
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
fn satisfiable(value: u64, mask: u64, reach: u64) -> Result<()> {
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

/// A sync event (`struct doca_sync_event`): configure its publisher and subscriber
/// locations, then start it synchronously ([`start`](SyncEvent::start)) or as a
/// context ([`as_ctx`](SyncEvent::as_ctx)) for jobs; the mode is fixed until stopped.
/// Thread-safe: clones share the event.
#[derive(Clone)]
pub struct SyncEvent {
    shared: Arc<Shared>,
    ctx: Ctx,
}

impl fmt::Debug for SyncEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mode = match self.shared.mode.load(Ordering::Acquire) {
            SYNC => "synchronous",
            ASYNC => "asynchronous",
            _ => "stopped",
        };
        f.debug_struct("SyncEvent")
            .field("mode", &mode)
            .field("value", &self.shared.counter().load(Ordering::Acquire))
            .finish()
    }
}

impl Default for SyncEvent {
    fn default() -> SyncEvent {
        SyncEvent::new()
    }
}

fn bad_state(msg: &'static str) -> Error {
    Error::with_context(ErrorCode::BadState, msg)
}

fn not_supported(what: &'static str) -> Error {
    Error::with_context(
        ErrorCode::NotSupported,
        format!("{what} locations are not supported: use the CPU or the DPU"),
    )
}

impl SyncEvent {
    /// `doca_sync_event_create`: value 0, no locations.
    pub fn new() -> SyncEvent {
        let shared = Arc::new(Shared {
            cfg: Mutex::new(Config {
                publisher: None,
                subscriber: None,
            }),
            mode: AtomicU8::new(IDLE),
            internal: AtomicU64::new(0),
            external: AtomicPtr::new(std::ptr::null_mut()),
            blocked: AtomicU32::new(0),
            waiters: AtomicU32::new(0),
            sleep: Mutex::new(()),
            cv: Condvar::new(),
            ctx: OnceLock::new(),
        });
        let ctx = Ctx::new(SyncEventOps {
            shared: Arc::clone(&shared),
        });
        let _ = shared.ctx.set(Arc::downgrade(&ctx.shared));
        SyncEvent { shared, ctx }
    }

    fn configure(&self, publisher: bool, loc: Location) -> Result<()> {
        if self.shared.mode.load(Ordering::Acquire) != IDLE || self.ctx.is_started() {
            return Err(bad_state(
                "sync event is started; locations are set before start",
            ));
        }
        // The context (asynchronous mode) runs its jobs on the CPU location's device.
        // (Taken before the configuration lock: starting takes them the other way.)
        if let Location::Cpu(dev) = &loc
            && self.ctx.dev().is_none()
        {
            match self.ctx.dev_add_implied(dev) {
                Ok(()) => {}
                Err(e) if e.code() == ErrorCode::AlreadyExist => {}
                Err(e) => return Err(e),
            }
        }
        let mut cfg = self.shared.cfg.lock().unwrap_or_else(|e| e.into_inner());
        let slot = if publisher {
            &mut cfg.publisher
        } else {
            &mut cfg.subscriber
        };
        if slot.is_some() {
            return Err(Error::with_context(
                ErrorCode::AlreadyExist,
                if publisher {
                    "the sync event already has its (single) publisher location"
                } else {
                    "the sync event already has its (single) subscriber location"
                },
            ));
        }
        *slot = Some(loc);
        Ok(())
    }

    /// `doca_sync_event_publisher_add_location_cpu`.
    pub fn publisher_add_location_cpu(&self, dev: &Dev) -> Result<()> {
        self.configure(true, Location::Cpu(dev.clone()))
    }

    /// `doca_sync_event_publisher_add_location_dpu`.
    pub fn publisher_add_location_dpu(&self) -> Result<()> {
        self.configure(true, Location::Dpu)
    }

    /// `doca_sync_event_publisher_add_location_dpa`: `NotSupported`.
    pub fn publisher_add_location_dpa(&self) -> Result<()> {
        Err(not_supported("DPA"))
    }

    /// `doca_sync_event_publisher_add_location_gpu`: `NotSupported`.
    pub fn publisher_add_location_gpu(&self) -> Result<()> {
        Err(not_supported("GPU"))
    }

    /// `doca_sync_event_subscriber_add_location_cpu`.
    pub fn subscriber_add_location_cpu(&self, dev: &Dev) -> Result<()> {
        self.configure(false, Location::Cpu(dev.clone()))
    }

    /// `doca_sync_event_subscriber_add_location_dpu`.
    pub fn subscriber_add_location_dpu(&self) -> Result<()> {
        self.configure(false, Location::Dpu)
    }

    /// `doca_sync_event_subscriber_add_location_dpa`: `NotSupported`.
    pub fn subscriber_add_location_dpa(&self) -> Result<()> {
        Err(not_supported("DPA"))
    }

    /// `doca_sync_event_subscriber_add_location_gpu`: `NotSupported`.
    pub fn subscriber_add_location_gpu(&self) -> Result<()> {
        Err(not_supported("GPU"))
    }

    /// `doca_sync_event_set_addr`: the counter lives in caller memory from now on (its
    /// current content is the value). Only before start.
    ///
    /// # Safety
    /// `addr` must point to 8 bytes, aligned to 8, that stay valid until the sync event
    /// is dropped and are accessed only atomically meanwhile (by this or other sync
    /// events, or other processes sharing the memory).
    pub unsafe fn set_addr(&self, addr: *mut u64) -> Result<()> {
        if self.shared.mode.load(Ordering::Acquire) != IDLE || self.ctx.is_started() {
            return Err(bad_state(
                "sync event is started; set its memory before start",
            ));
        }
        let Some(p) = NonNull::new(addr) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the sync event's memory address is NULL",
            ));
        };
        if !(p.as_ptr() as usize).is_multiple_of(8) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the sync event's memory must be aligned to 8 bytes",
            ));
        }
        self.shared.external.store(p.as_ptr(), Ordering::Release);
        Ok(())
    }

    fn check_configured(&self) -> Result<()> {
        let cfg = self.shared.cfg.lock().unwrap_or_else(|e| e.into_inner());
        if cfg.publisher.is_none() || cfg.subscriber.is_none() {
            return Err(bad_state(
                "a sync event needs a publisher and a subscriber location before start",
            ));
        }
        Ok(())
    }

    /// `doca_sync_event_start`: synchronous mode.
    pub fn start(&self) -> Result<()> {
        self.check_configured()?;
        if self.ctx.is_started() {
            return Err(bad_state(
                "sync event is started as a context (asynchronous mode)",
            ));
        }
        self.shared
            .mode
            .compare_exchange(IDLE, SYNC, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|_| bad_state("sync event is already started"))
    }

    /// `doca_sync_event_stop` (synchronous mode; a context is stopped with `Ctx::stop`).
    pub fn stop(&self) -> Result<()> {
        match self
            .shared
            .mode
            .compare_exchange(SYNC, IDLE, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                // Waiters see the stop at their next look; sleeping ones are woken now.
                self.shared.cv.notify_all();
                Ok(())
            }
            Err(ASYNC) => Err(bad_state(
                "sync event runs as a context: stop it with its context",
            )),
            Err(_) => Err(bad_state("sync event is not started")),
        }
    }

    /// `doca_sync_event_as_ctx`: start this context for asynchronous mode.
    pub fn as_ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_sync_event_destroy`: refused with `InUse` (the event comes back) while
    /// started. Threads still inside a wait (it was stopped under them) return
    /// `BadState` within a millisecond; destroy returns once they have, so that none of
    /// them is left reading a destroyed event.
    pub fn destroy(self) -> std::result::Result<(), (SyncEvent, Error)> {
        if self.shared.mode.load(Ordering::Acquire) != IDLE || self.ctx.is_started() {
            return Err((
                self,
                Error::with_context(ErrorCode::InUse, "sync event is started; stop it first"),
            ));
        }
        while self.shared.waiters.load(Ordering::SeqCst) > 0 {
            self.shared.cv.notify_all();
            std::thread::yield_now();
        }
        Ok(())
    }

    fn sync_mode(&self) -> Result<&AtomicU64> {
        match self.shared.mode.load(Ordering::Acquire) {
            SYNC => Ok(self.shared.counter()),
            ASYNC => Err(bad_state(
                "sync event runs in asynchronous mode: submit jobs on a work queue",
            )),
            _ => Err(bad_state("sync event is not started")),
        }
    }

    /// `doca_sync_event_get`.
    pub fn get(&self) -> Result<u64> {
        Ok(self.sync_mode()?.load(Ordering::Acquire))
    }

    /// `doca_sync_event_update_set`.
    pub fn update_set(&self, value: u64) -> Result<()> {
        self.sync_mode()?.store(value, Ordering::Release);
        self.shared.changed();
        Ok(())
    }

    /// `doca_sync_event_update_add`: adds atomically; the previous value comes back.
    pub fn update_add(&self, value: u64) -> Result<u64> {
        let prev = self.sync_mode()?.fetch_add(value, Ordering::AcqRel);
        self.shared.changed();
        Ok(prev)
    }

    /// `doca_sync_event_wait_gt`: busy-polls until `(event & mask) > value`. A wait that
    /// can never end (`value >= mask`) is refused with `InvalidValue`.
    pub fn wait_gt(&self, value: u64, mask: u64) -> Result<()> {
        satisfiable(value, mask, mask)?;
        let w = self.enter_wait()?;
        while !masked_gt(w.counter.load(Ordering::Acquire), value, mask) {
            w.still_started()?;
            std::hint::spin_loop();
        }
        Ok(())
    }

    /// `doca_sync_event_wait_gt_yield`: polls, yielding the processor between polls.
    pub fn wait_gt_yield(&self, value: u64, mask: u64) -> Result<()> {
        satisfiable(value, mask, mask)?;
        let w = self.enter_wait()?;
        while !masked_gt(w.counter.load(Ordering::Acquire), value, mask) {
            w.still_started()?;
            std::thread::yield_now();
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

    /// Waits until `(event & mask) > value` without burning a core: the thread sleeps
    /// and updates through this library wake it (changes made directly in shared memory
    /// are seen within a millisecond). `TimeOut` when `timeout` passes first. An
    /// addition to DOCA's API.
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
        let sh = &self.shared;
        sh.blocked.fetch_add(1, Ordering::SeqCst);
        let mut g = sh.sleep.lock().unwrap_or_else(|e| e.into_inner());
        let r = loop {
            if masked_gt(c.load(Ordering::SeqCst), value, mask) {
                break Ok(());
            }
            if let Err(e) = w.still_started() {
                break Err(e);
            }
            let now = Instant::now();
            if deadline.is_some_and(|d| now >= d) {
                break Err(Error::with_context(
                    ErrorCode::TimeOut,
                    "the sync event did not pass the value in time",
                ));
            }
            let nap = deadline.map_or(Duration::from_millis(1), |d| {
                (d - now).min(Duration::from_millis(1))
            });
            g = sh
                .cv
                .wait_timeout(g, nap)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        };
        drop(g);
        sh.blocked.fetch_sub(1, Ordering::SeqCst);
        r
    }

    /// `doca_sync_event_job_get_supported`.
    pub fn job_get_supported(devinfo: &DevInfo, job_type: u32) -> Result<()> {
        if !(JOB_WAIT_GT..=JOB_UPDATE_ADD).contains(&job_type) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!("job type {job_type} is not a sync event job"),
            ));
        }
        devinfo.job_supported(job_type)
    }

    /// `doca_sync_event_get_export_to_dpu_supported`: whether the device can export a
    /// sync event to the DPU (a topology capability).
    pub fn export_to_dpu_supported(devinfo: &DevInfo) -> bool {
        devinfo.has_capability(Capability::SyncEventExportDpu)
    }

    /// `doca_sync_event_get_create_from_export_supported`.
    pub fn create_from_export_supported(devinfo: &DevInfo) -> bool {
        devinfo.has_capability(Capability::SyncEventExportDpu)
    }

    /// `doca_sync_event_get_export_to_dpa_supported`: no DPA here.
    pub fn export_to_dpa_supported(_devinfo: &DevInfo) -> bool {
        false
    }

    /// `doca_sync_event_get_export_to_gpu_supported`: no GPU here.
    pub fn export_to_gpu_supported(_devinfo: &DevInfo) -> bool {
        false
    }
}

/// A sync event job (`doca_sync_event_job_get`, `_update_set`, `_update_add`, `_wait`).
/// The value read by a get job, and the previous value of an add job, come back in the
/// completion ([`SyncEventJob::result_value`]).
#[derive(Debug, Clone, Copy)]
pub struct SyncEventJob {
    /// One of the `JOB_*` types.
    pub job_type: u32,
    /// Set or add value, or the wait threshold.
    pub value: u64,
    /// Wait mask.
    pub mask: u64,
    /// Echoed in the completion.
    pub user_data: Data,
}

impl SyncEventJob {
    /// Reads the value.
    pub fn get(user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_GET,
            value: 0,
            mask: 0,
            user_data: Data(user_data),
        }
    }

    /// Sets the value.
    pub fn update_set(value: u64, user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_UPDATE_SET,
            value,
            mask: 0,
            user_data: Data(user_data),
        }
    }

    /// Adds to the value atomically.
    pub fn update_add(value: u64, user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_UPDATE_ADD,
            value,
            mask: 0,
            user_data: Data(user_data),
        }
    }

    /// Completes once `(event & mask) > value` (value and event within 0..=254).
    pub fn wait_gt(value: u64, mask: u64, user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_WAIT_GT,
            value,
            mask,
            user_data: Data(user_data),
        }
    }

    /// The value a completed get job read, or the value before a completed add job.
    pub fn result_value(c: &crate::exec::Completion) -> u64 {
        c.record.params[2]
    }
}

impl Job for SyncEventJob {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(self.job_type, self.user_data);
        r.params[0] = self.value;
        r.params[1] = self.mask;
        r
    }
}

struct SyncEventOps {
    shared: Arc<Shared>,
}

impl CtxOps for SyncEventOps {
    fn name(&self) -> &'static str {
        "sync event"
    }

    fn capability(&self) -> Capability {
        Capability::SyncEvent
    }

    fn handles(&self, job_type: u32) -> bool {
        (JOB_WAIT_GT..=JOB_UPDATE_ADD).contains(&job_type)
    }

    fn validate(&self, job: &mut JobRecord, _dev: &Dev) -> Result<()> {
        if job.job_type == JOB_WAIT_GT && job.params[0] > MAX_ASYNC_WAIT_VALUE {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "wait threshold {} is outside 0..={MAX_ASYNC_WAIT_VALUE} (the limit of asynchronous waits)",
                    job.params[0]
                ),
            ));
        }
        if job.job_type == JOB_WAIT_GT {
            let mask = job.params[1];
            satisfiable(job.params[0], mask, (mask & 0xff).min(MAX_ASYNC_WAIT_VALUE))?;
        }
        Ok(())
    }

    fn execute(&self, job: &mut JobRecord, _env: &ExecEnv<'_>) -> Result<()> {
        let c = self.shared.counter();
        match job.job_type {
            JOB_GET => job.params[2] = c.load(Ordering::Acquire),
            JOB_UPDATE_SET => {
                c.store(job.params[0], Ordering::Release);
                self.shared.changed();
            }
            JOB_UPDATE_ADD => {
                job.params[2] = c.fetch_add(job.params[0], Ordering::AcqRel);
                self.shared.changed();
            }
            _ => {
                let v = c.load(Ordering::Acquire);
                if v > MAX_ASYNC_WAIT_VALUE {
                    return Err(Error::with_context(
                        ErrorCode::InvalidValue,
                        format!(
                            "the sync event's value {v} is outside 0..={MAX_ASYNC_WAIT_VALUE} (the limit of asynchronous waits)"
                        ),
                    ));
                }
                if !masked_gt(v, job.params[0], job.params[1]) {
                    return Err(Error::new(ErrorCode::InProgress));
                }
            }
        }
        Ok(())
    }

    fn on_start(&self) -> Result<()> {
        {
            let cfg = self.shared.cfg.lock().unwrap_or_else(|e| e.into_inner());
            if cfg.publisher.is_none() || cfg.subscriber.is_none() {
                return Err(bad_state(
                    "a sync event needs a publisher and a subscriber location before start",
                ));
            }
        }
        self.shared
            .mode
            .compare_exchange(IDLE, ASYNC, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|_| bad_state("sync event is already started in synchronous mode"))
    }

    fn on_stop(&self) {
        self.shared.mode.store(IDLE, Ordering::Release);
    }
}
