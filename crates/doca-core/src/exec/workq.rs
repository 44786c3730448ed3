//! `doca_workq`: submit jobs, retrieve completions, by polling or event-driven.

use super::ctx::{Ctx, CtxShared};
use super::engine::{Engine, Task};
use super::job::{Completion, Event, JobRecord, RetrieveError};
use crate::device::Dev;
use crate::error::{Error, ErrorCode, Result};
use crate::lock;
use rustix::event::{EventfdFlags, PollFd, PollFlags};
use rustix::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Largest work queue depth.
pub const MAX_DEPTH: u32 = 1 << 20;

/// What engine threads share with the work queue's owner.
pub(crate) struct WqShared {
    depth: u32,
    /// Completions posted by engine threads (inline completions stay in the `WorkQ`).
    cq: Mutex<VecDeque<Completion>>,
    /// Set (under `cq`'s lock) while the owner sleeps in `wait` for engine completions.
    sleeping: AtomicBool,
    cv: Condvar,
    armed: AtomicBool,
    efd: OnceLock<OwnedFd>,
    /// How many jobs wait on a condition (retried by the owner in `progress_retrieve`).
    pending_count: std::sync::atomic::AtomicU32,
}

impl WqShared {
    /// Jobs on this work queue waiting on a condition (a sync event wait not yet passed).
    pub(crate) fn pending_jobs(&self) -> u32 {
        self.pending_count.load(Ordering::Acquire)
    }
}

/// The work queue's event handle, once event-driven mode made one.
pub(crate) fn event_fd(wq: &WqShared) -> Option<RawFd> {
    wq.efd.get().map(|f| f.as_raw_fd())
}

/// A condition some pending job waits on may have changed: wake the owner's armed event
/// handle or sleeping `wait`.
pub(crate) fn poke(wq: &WqShared) {
    if wq.pending_count.load(Ordering::Acquire) == 0 {
        return;
    }
    let wake = {
        let _q = lock(&wq.cq);
        wq.sleeping.load(Ordering::Relaxed)
    };
    if wake {
        wq.cv.notify_one();
    }
    if wq.armed.swap(false, Ordering::AcqRel) {
        signal(wq);
    }
}

/// Whether a job's result means "not done yet: run it again later".
fn is_pending(r: &Result<()>) -> bool {
    matches!(r, Err(e) if e.code() == ErrorCode::InProgress)
}

fn completion(record: JobRecord, r: Result<()>) -> Completion {
    Completion {
        error: r.err(),
        record,
        graph_instance: None,
    }
}

/// Posts a job finished on an engine thread to its work queue, and wakes the owner
/// sleeping in `wait` and an armed event handle.
pub(crate) fn complete(wq: &WqShared, record: JobRecord, r: Result<()>) {
    let c = completion(record, r);
    let wake = {
        let mut q = lock(&wq.cq);
        q.push_back(c);
        wq.sleeping.load(Ordering::Relaxed)
    };
    if wake {
        wq.cv.notify_one();
    }
    if wq.armed.swap(false, Ordering::AcqRel) {
        signal(wq);
    }
}

fn signal(wq: &WqShared) {
    if let Some(fd) = wq.efd.get() {
        // A full counter (never reached in practice) already wakes the reader.
        let _ = rustix::io::write(fd, &1u64.to_ne_bytes());
    }
}

/// A context attached to the work queue, with its device and engine as of attaching
/// (fixed: a context cannot stop while work queues are attached).
struct Attached {
    ctx: Arc<CtxShared>,
    dev: Dev,
    engine: Option<Arc<Engine>>,
    inflight: u32,
    /// The last job type found supported by the device (0: none yet).
    supported: u32,
}

/// A work queue (`struct doca_workq`): up to `depth` jobs in flight, of any contexts
/// attached to it. Used by one thread at a time (`Send`, not `Sync`).
pub struct WorkQ {
    shared: Arc<WqShared>,
    /// Completions of jobs run inline.
    local: VecDeque<Completion>,
    /// Jobs whose condition does not hold yet, retried in `progress_retrieve`.
    pending: VecDeque<JobRecord>,
    /// Graph instances in flight (slot index + 1 tags their nodes' jobs).
    runs: Vec<Option<GraphRun>>,
    inflight: u32,
    /// Jobs handed to engine threads and not yet retrieved.
    engine_inflight: u32,
    /// Context-node jobs of the graph instances in flight (room kept for them).
    graph_jobs: u32,
    attached: Vec<Attached>,
    event_driven: bool,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl fmt::Debug for WorkQ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkQ")
            .field("depth", &self.shared.depth)
            .field("inflight", &self.inflight)
            .field("contexts", &self.attached.len())
            .field("event_driven", &self.event_driven)
            .finish()
    }
}

impl WorkQ {
    /// `doca_workq_create`: depth 1..=2^20.
    pub fn new(depth: u32) -> Result<WorkQ> {
        if depth == 0 || depth > MAX_DEPTH {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("work queue depth must be 1..={MAX_DEPTH}, got {depth}"),
            ));
        }
        Ok(WorkQ {
            shared: Arc::new(WqShared {
                depth,
                cq: Mutex::new(VecDeque::new()),
                sleeping: AtomicBool::new(false),
                cv: Condvar::new(),
                armed: AtomicBool::new(false),
                efd: OnceLock::new(),
                pending_count: std::sync::atomic::AtomicU32::new(0),
            }),
            local: VecDeque::new(),
            pending: VecDeque::new(),
            runs: Vec::new(),
            inflight: 0,
            engine_inflight: 0,
            graph_jobs: 0,
            attached: Vec::new(),
            event_driven: false,
            _not_sync: PhantomData,
        })
    }

    /// `doca_workq_get_depth`.
    pub fn depth(&self) -> u32 {
        self.shared.depth
    }

    /// Jobs submitted and not yet retrieved.
    pub fn inflight(&self) -> u32 {
        self.inflight
    }

    /// An identity, stable while the work queue lives.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// Contexts attached (`doca_workq_destroy` is refused while there are any).
    pub fn num_contexts(&self) -> usize {
        self.attached.len()
    }

    /// Whether `ctx` is attached.
    pub fn has_ctx(&self, ctx: &Ctx) -> bool {
        self.attached
            .iter()
            .any(|a| Arc::ptr_eq(&a.ctx, &ctx.shared))
    }

    /// `doca_workq_submit`. Refusals give the job back: `BadState` when the context is
    /// stopped, `NotFound` when it is not attached here, `InvalidValue` for a job of
    /// another library or a malformed one, `NoMemory` when `depth` jobs are in flight.
    pub fn submit(
        &mut self,
        ctx: &Ctx,
        mut record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        let shared = &ctx.shared;
        if !ctx.is_started() {
            return Err((
                Error::with_context(ErrorCode::BadState, "the job's context is not started"),
                record,
            ));
        }
        let Some(slot) = self
            .attached
            .iter()
            .position(|a| Arc::ptr_eq(&a.ctx, shared))
        else {
            return Err((
                Error::with_context(
                    ErrorCode::NotFound,
                    "the job's context is not attached to this work queue",
                ),
                record,
            ));
        };
        if !shared.ops.handles(record.job_type) {
            return Err((
                Error::with_context(
                    ErrorCode::InvalidValue,
                    "job type does not belong to the context's library",
                ),
                record,
            ));
        }
        if self.inflight >= self.shared.depth {
            return Err((
                Error::with_context(
                    ErrorCode::NoMemory,
                    "work queue is full: retrieve completions first",
                ),
                record,
            ));
        }
        let a = &mut self.attached[slot];
        if a.supported != record.job_type {
            if let Err(e) = a.dev.as_devinfo().job_supported(record.job_type) {
                return Err((e, record));
            }
            a.supported = record.job_type;
        }
        if let Err(e) = shared.ops.validate(&mut record, &a.dev) {
            return Err((e, record));
        }
        // Borrowed buffers (the C face) stay alive until the job completes, whatever
        // the program does with its own references meanwhile.
        if let Err(e) = record.pin_borrowed() {
            return Err((e, record));
        }
        self.inflight += 1;
        a.inflight += 1;
        record.ctx_id = Arc::as_ptr(shared) as *const () as usize;
        match &a.engine {
            Some(engine) => {
                self.engine_inflight += 1;
                engine.push(Task {
                    ctx: Arc::clone(shared),
                    wq: Arc::clone(&self.shared),
                    dev: a.dev.clone(),
                    record,
                });
            }
            None => {
                let r = super::engine::execute_caught(
                    shared,
                    &mut record,
                    &super::engine::ExecEnv::new(&a.dev, None),
                );
                if is_pending(&r) {
                    self.pending.push_back(record);
                    self.shared.pending_count.fetch_add(1, Ordering::AcqRel);
                    return Ok(());
                }
                self.local.push_back(completion(record, r));
                // Armed only by this thread: a plain load saves an atomic swap per job.
                if self.shared.armed.load(Ordering::Relaxed)
                    && self.shared.armed.swap(false, Ordering::AcqRel)
                {
                    signal(&self.shared);
                }
            }
        }
        Ok(())
    }

    /// Submits a typed job (see [`submit`](WorkQ::submit)).
    #[inline]
    pub fn submit_job(
        &mut self,
        ctx: &Ctx,
        job: impl super::job::Job,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        self.submit(ctx, job.into_record())
    }

    /// `doca_workq_progress_retrieve`: a completed job, `Again` when none, or `IoFailed`
    /// with the failed job's completion. Completion order is not guaranteed.
    #[inline]
    pub fn progress_retrieve(&mut self) -> std::result::Result<Completion, RetrieveError> {
        if !self.pending.is_empty() {
            self.retry_pending();
        }
        let c = loop {
            let c = match self.local.pop_front() {
                Some(c) => c,
                None if self.engine_inflight > 0 => {
                    let Some(c) = lock(&self.shared.cq).pop_front() else {
                        return Err(RetrieveError::Again);
                    };
                    self.engine_inflight -= 1;
                    if c.error
                        .as_ref()
                        .is_some_and(|e| e.code() == ErrorCode::InProgress)
                    {
                        // Not done on the engine: the owner retries it from now on.
                        self.pending.push_back(c.record);
                        self.shared.pending_count.fetch_add(1, Ordering::AcqRel);
                        continue;
                    }
                    c
                }
                None => return Err(RetrieveError::Again),
            };
            if c.record.graph_tag != 0 {
                // A graph node's job: it moves its instance on, and makes no event.
                self.ctx_job_done(c.record.ctx_id);
                self.graph_node_done(c);
                continue;
            }
            break c;
        };
        self.inflight -= 1;
        self.ctx_job_done(c.record.ctx_id);
        if c.error.is_some() {
            Err(RetrieveError::IoFailed(c))
        } else {
            Ok(c)
        }
    }

    /// Counts a retrieved job off its context's attachment.
    #[inline]
    fn ctx_job_done(&mut self, ctx: usize) {
        if ctx == 0 {
            return;
        }
        if let Some(a) = self
            .attached
            .iter_mut()
            .find(|a| Arc::as_ptr(&a.ctx) as *const () as usize == ctx)
        {
            a.inflight -= 1;
        }
    }

    /// Runs every pending job once more; those done become completions.
    fn retry_pending(&mut self) {
        for _ in 0..self.pending.len() {
            let Some(mut record) = self.pending.pop_front() else {
                break;
            };
            let a = self
                .attached
                .iter()
                .find(|a| Arc::as_ptr(&a.ctx) as *const () as usize == record.ctx_id);
            let r = match a {
                Some(a) => super::engine::execute_caught(
                    &a.ctx,
                    &mut record,
                    &super::engine::ExecEnv::new(&a.dev, None),
                ),
                None => Err(Error::with_context(
                    ErrorCode::Unexpected,
                    "the job's context is no longer attached",
                )),
            };
            if is_pending(&r) {
                self.pending.push_back(record);
            } else {
                self.shared.pending_count.fetch_sub(1, Ordering::AcqRel);
                self.local.push_back(completion(record, r));
            }
        }
    }

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
                let h = self.shared.efd.get().map(|f| f.as_raw_fd());
                if let Some(h) = h {
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
        let waiting = !self.local.is_empty() || !lock(&self.shared.cq).is_empty();
        if waiting && self.shared.armed.swap(false, Ordering::AcqRel) {
            signal(&self.shared);
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

impl Drop for WorkQ {
    fn drop(&mut self) {
        let id = self.id();
        let depth = self.depth() as usize;
        for a in &self.attached {
            a.ctx.state().workqs.retain(|w| w.0 != id);
            if let Some(e) = &a.engine {
                e.release(depth);
            }
        }
    }
}

impl Ctx {
    /// `doca_ctx_workq_add`: only while started; an event-driven work queue needs a
    /// context that supports it (`NotSupported`).
    pub fn workq_add(&self, wq: &mut WorkQ) -> Result<()> {
        let mut st = self.shared.state();
        if !self.is_started() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "context is not started; start it before adding work queues",
            ));
        }
        if wq.has_ctx(self) {
            return Err(Error::with_context(
                ErrorCode::AlreadyExist,
                "work queue is already attached to this context",
            ));
        }
        if wq.event_driven && !self.shared.ops.event_driven_supported() {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "this context cannot serve an event-driven work queue",
            ));
        }
        let Some(dev) = st.dev.clone() else {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "context has no device",
            ));
        };
        let depth = wq.depth() as usize;
        match &st.engine {
            Some(e) => {
                e.reserve(depth);
                let mut q = lock(&wq.shared.cq);
                let want = depth.saturating_sub(q.len());
                q.reserve(want);
            }
            None => {
                let want = depth.saturating_sub(wq.local.len());
                wq.local.reserve(want);
            }
        }
        st.workqs.push((wq.id(), Arc::downgrade(&wq.shared)));
        let want = depth.saturating_sub(wq.pending.len());
        wq.pending.reserve(want);
        wq.attached.push(Attached {
            ctx: Arc::clone(&self.shared),
            dev,
            engine: st.engine.clone(),
            inflight: 0,
            supported: 0,
        });
        Ok(())
    }

    /// `doca_ctx_workq_rm`: `NotFound` when not attached; `InUse` while this context's
    /// jobs on that work queue are not yet retrieved.
    pub fn workq_rm(&self, wq: &mut WorkQ) -> Result<()> {
        let Some(i) = wq
            .attached
            .iter()
            .position(|a| Arc::ptr_eq(&a.ctx, &self.shared))
        else {
            return Err(Error::with_context(
                ErrorCode::NotFound,
                "work queue is not attached to this context",
            ));
        };
        if wq.attached[i].inflight > 0 {
            return Err(Error::with_context(
                ErrorCode::InUse,
                format!(
                    "{} job(s) of this context are still in flight on the work queue",
                    wq.attached[i].inflight
                ),
            ));
        }
        let gone = wq.attached.remove(i);
        if let Some(e) = &gone.engine {
            e.release(wq.depth() as usize);
        }
        let id = wq.id();
        self.shared.state().workqs.retain(|w| w.0 != id);
        Ok(())
    }
}

/// A graph instance in flight on a work queue.
struct GraphRun {
    inst: crate::graph::GraphInstance,
    user_data: crate::types::Data,
    /// Its context nodes.
    jobs: u32,
}

fn graph_tag(run: usize, node: usize) -> u32 {
    (((run + 1) as u32) << 16) | node as u32
}

impl WorkQ {
    /// `doca_workq_graph_submit`: runs `instance` (its graph started and added to this
    /// work queue, every context node given a job). One completion of type
    /// [`JOB_GRAPH`](crate::graph::JOB_GRAPH) with `user_data` reports it, with the
    /// instance. Refusals give the instance back: `NotFound` when the graph is not on
    /// this work queue, `InvalidValue` for a node without data, `NoMemory` when the
    /// instance's jobs do not fit the depth.
    pub fn graph_submit(
        &mut self,
        instance: crate::graph::GraphInstance,
        user_data: u64,
    ) -> std::result::Result<(), (Error, crate::graph::GraphInstance)> {
        use crate::graph::FlatKind;
        let mut inst = instance;
        if !inst.graph().has_workq(self.id()) {
            return Err((
                Error::with_context(
                    ErrorCode::NotFound,
                    "the graph is not attached to this work queue (graph workq_add)",
                ),
                inst,
            ));
        }
        let plan = Arc::clone(&inst.inner.plan);
        let mut jobs = 0u32;
        for (i, f) in plan.flat.iter().enumerate() {
            if let FlatKind::Ctx { ctx, .. } = &f.kind {
                jobs += 1;
                if inst.inner.slots[i].record.is_none() {
                    return Err((
                        Error::with_context(
                            ErrorCode::InvalidValue,
                            format!("graph context node {i} has no job (set_ctx_node_data)"),
                        ),
                        inst,
                    ));
                }
                if !self.has_ctx(ctx) {
                    return Err((
                        Error::with_context(
                            ErrorCode::NotFound,
                            format!(
                                "the graph's {} context is not attached to this work queue",
                                ctx.ops().name()
                            ),
                        ),
                        inst,
                    ));
                }
            }
        }
        if self.inflight + self.graph_jobs + 1 + jobs > self.shared.depth {
            return Err((
                Error::with_context(
                    ErrorCode::NoMemory,
                    "the work queue has no room for the instance and its jobs: retrieve completions first",
                ),
                inst,
            ));
        }
        if self.runs.len() >= (u16::MAX - 1) as usize && !self.runs.iter().any(Option::is_none) {
            return Err((
                Error::with_context(ErrorCode::NoMemory, "too many graph instances in flight"),
                inst,
            ));
        }
        for (slot, f) in inst.inner.slots.iter_mut().zip(&plan.flat) {
            slot.state = None;
            slot.result = 0;
            slot.event = None;
            slot.remaining = f.parents;
        }
        inst.inner.outstanding = 0;
        inst.inner.error = None;
        let run = match self.runs.iter().position(Option::is_none) {
            Some(r) => r,
            None => {
                if self.runs.capacity() == self.runs.len() {
                    self.runs.reserve(self.shared.depth as usize);
                }
                self.runs.push(None);
                self.runs.len() - 1
            }
        };
        self.runs[run] = Some(GraphRun {
            inst,
            user_data: crate::types::Data(user_data),
            jobs,
        });
        self.inflight += 1;
        self.graph_jobs += jobs;
        // Counted as running while the roots start (a root finishing at once must not
        // complete the instance early).
        if let Some(g) = self.runs[run].as_mut() {
            g.inst.inner.outstanding += 1;
        }
        for &r in &plan.roots {
            self.start_node(run, r);
        }
        if let Some(g) = self.runs[run].as_mut() {
            g.inst.inner.outstanding -= 1;
        }
        self.maybe_complete(run);
        Ok(())
    }

    fn start_node(&mut self, run: usize, i: usize) {
        use crate::graph::{FlatKind, NodeState};
        let Some(r) = self.runs[run].as_mut() else {
            return;
        };
        let plan: *const crate::graph::Plan = Arc::as_ptr(&r.inst.inner.plan);
        // SAFETY: the instance holding this Arc stays in `self.runs`, or moves into
        // `self.local` as a completion, for the whole call: the user can drop it only after
        // retrieving it, which needs `&mut self`; plans are never changed once made.
        let plan = unsafe { &*plan };
        r.inst.inner.slots[i].state = Some(NodeState::Started);
        r.inst.inner.outstanding += 1;
        match &plan.flat[i].kind {
            FlatKind::User { cb, .. } => {
                let cookie = r.inst.inner.slots[i].cookie;
                let result = {
                    let view = plan.view_of(&r.inst.inner.slots, i);
                    match view {
                        Some(v) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                            cb(&v, cookie)
                        }))
                        .unwrap_or_else(|_| {
                            Err(Error::with_context(
                                ErrorCode::Unexpected,
                                "the user node's callback panicked",
                            ))
                        }),
                        None => Ok(()),
                    }
                };
                self.node_finished(run, i, None, None, result);
            }
            FlatKind::Ctx { ctx, .. } => {
                let Some(slot) = self
                    .attached
                    .iter()
                    .position(|a| Arc::ptr_eq(&a.ctx, &ctx.shared))
                else {
                    let e = Error::with_context(
                        ErrorCode::NotFound,
                        "the node's context is not attached to this work queue",
                    );
                    self.node_finished(run, i, None, None, Err(e));
                    return;
                };
                let a = &mut self.attached[slot];
                let Some(record) = r.inst.inner.slots[i].record.as_mut() else {
                    let e = Error::with_context(
                        ErrorCode::InvalidValue,
                        "graph context node has no job",
                    );
                    self.node_finished(run, i, None, None, Err(e));
                    return;
                };
                let supported = if a.supported == record.job_type {
                    Ok(())
                } else {
                    a.dev.as_devinfo().job_supported(record.job_type)
                };
                if supported.is_ok() {
                    a.supported = record.job_type;
                }
                if let Err(e) = supported.and_then(|_| a.ctx.ops.validate(record, &a.dev)) {
                    self.node_finished(run, i, None, None, Err(e));
                    return;
                }
                record.ctx_id = Arc::as_ptr(&a.ctx) as *const () as usize;
                match &a.engine {
                    Some(engine) => {
                        let Some(mut record) = r.inst.inner.slots[i].record.take() else {
                            return;
                        };
                        // As at submit: borrowed buffers live until the node's job is
                        // back (unpinned in `node_finished`).
                        if let Err(e) = record.pin_borrowed() {
                            r.inst.inner.slots[i].record = Some(record);
                            self.node_finished(run, i, None, None, Err(e));
                            return;
                        }
                        record.graph_tag = graph_tag(run, i);
                        a.inflight += 1;
                        self.engine_inflight += 1;
                        engine.push(Task {
                            ctx: Arc::clone(&a.ctx),
                            wq: Arc::clone(&self.shared),
                            dev: a.dev.clone(),
                            record,
                        });
                    }
                    None => {
                        // Run in place in the instance: done at once, the instance moves
                        // on without a completion.
                        let res = super::engine::execute_caught(
                            &a.ctx,
                            record,
                            &super::engine::ExecEnv::new(&a.dev, None),
                        );
                        if is_pending(&res) {
                            let Some(mut record) = r.inst.inner.slots[i].record.take() else {
                                return;
                            };
                            record.graph_tag = graph_tag(run, i);
                            a.inflight += 1;
                            self.pending.push_back(record);
                            self.shared.pending_count.fetch_add(1, Ordering::AcqRel);
                            return;
                        }
                        let event = Event {
                            job_type: record.job_type,
                            user_data: record.user_data,
                            result: res.as_ref().err().map_or(0, |e| e.raw() as u64),
                        };
                        self.node_finished(run, i, None, Some(event), res);
                    }
                }
            }
        }
    }

    /// A graph node's job came back.
    fn graph_node_done(&mut self, c: Completion) {
        let tag = c.record.graph_tag;
        let (run, i) = (((tag >> 16) - 1) as usize, (tag & 0xffff) as usize);
        let event = c.event();
        let Completion {
            error, mut record, ..
        } = c;
        record.graph_tag = 0;
        let r = match error {
            None => Ok(()),
            Some(e) => Err(e),
        };
        self.node_finished(run, i, Some(record), Some(event), r);
    }

    fn node_finished(
        &mut self,
        run: usize,
        i: usize,
        record: Option<JobRecord>,
        event: Option<Event>,
        r: Result<()>,
    ) {
        use crate::graph::NodeState;
        let Some(g) = self.runs[run].as_mut() else {
            return;
        };
        let plan: *const crate::graph::Plan = Arc::as_ptr(&g.inst.inner.plan);
        // SAFETY: as in `start_node`: the instance outlives this call.
        let plan = unsafe { &*plan };
        let inner = &mut g.inst.inner;
        {
            let slot = &mut inner.slots[i];
            if let Some(mut rec) = record {
                rec.unpin();
                slot.record = Some(rec);
            }
            slot.event = event;
            slot.result = r.as_ref().err().map_or(0, |e| e.raw() as u64);
            slot.state = Some(if r.is_ok() {
                NodeState::Completed
            } else {
                NodeState::Error
            });
        }
        // The node stays counted until its children are started: one of them finishing
        // at once must not complete the instance early.
        match r {
            Ok(()) => {
                for &child in &plan.flat[i].children {
                    inner.slots[child].remaining -= 1;
                }
                // Children whose parents are all done start now (a user node finishing
                // at once may start some of them itself: they are started already).
                for &child in &plan.flat[i].children {
                    let ready = self.runs[run].as_ref().is_some_and(|g| {
                        let s = &g.inst.inner.slots[child];
                        s.remaining == 0 && s.state.is_none()
                    });
                    if ready {
                        self.start_node(run, child);
                    }
                }
            }
            Err(e) => {
                // Descendants of a failed node never start.
                if inner.error.is_none() {
                    inner.error = Some(e);
                }
            }
        }
        if let Some(g) = self.runs[run].as_mut() {
            g.inst.inner.outstanding -= 1;
        }
        self.maybe_complete(run);
    }

    /// Completes the instance once no node is running and none can start.
    fn maybe_complete(&mut self, run: usize) {
        let done = self.runs[run]
            .as_ref()
            .is_some_and(|g| g.inst.inner.outstanding == 0);
        if !done {
            return;
        }
        let Some(GraphRun {
            mut inst,
            user_data,
            jobs,
        }) = self.runs[run].take()
        else {
            return;
        };
        self.graph_jobs -= jobs;
        let error = inst.inner.error.take();
        self.local.push_back(Completion {
            error,
            record: JobRecord::new(crate::graph::JOB_GRAPH, user_data),
            graph_instance: Some(inst),
        });
        // Keep the slot list short when its tail is free.
        while self.runs.last().is_some_and(Option::is_none) {
            self.runs.pop();
        }
        if self.shared.armed.swap(false, Ordering::AcqRel) {
            signal(&self.shared);
        }
    }
}
