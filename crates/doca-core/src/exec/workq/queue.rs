//! The work queue: its contexts, the jobs in flight, the one path every job starts by,
//! and retrieval.

use super::shared::WqShared;
use crate::device::Dev;
use crate::error::{Error, ErrorCode, Result};
use crate::exec::ctx::{Ctx, CtxShared, WorkqLink};
use crate::exec::engine::Sink;
use crate::exec::engine::{Engine, ExecEnv, Runner, Task};
use crate::exec::job::{Completion, JobRecord, RetrieveError};
use crate::lock;
use std::collections::VecDeque;
use std::fmt;
use std::marker::PhantomData;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

/// Largest work queue depth.
pub const MAX_DEPTH: u32 = 1 << 20;

/// Whether a job's result means "not done yet: run it again later".
#[inline]
pub(crate) fn is_pending(r: &Result<()>) -> bool {
    matches!(r, Err(e) if e.code() == ErrorCode::InProgress)
}

/// A context attached to the work queue, with its device and engine as of attaching
/// (fixed: a context cannot stop while work queues are attached).
pub(crate) struct Attached {
    pub(crate) ctx: Arc<CtxShared>,
    dev: Dev,
    pub(crate) engine: Option<Arc<Engine>>,
    /// This context's jobs in flight here.
    pub(crate) inflight: u32,
    /// The last job type found supported by the device (0: none yet).
    supported: u32,
    /// Completions room reserved for this context (given back on detaching).
    room: usize,
}

/// How a job went on once started.
pub(crate) enum Start {
    /// To be queued (with `queue_job`): on the engine, or pending on a condition.
    Queue {
        /// Pending on a condition (else for the engine).
        pending: bool,
    },
    /// Run inline to its end, with this error if it failed.
    Finished(Option<Error>),
    /// Not started: the device, the library or a buffer refused it.
    Refused(Error),
    /// For a polled channel's context, which takes the job
    /// ([`ChannelOps::submit_job`](crate::exec::ChannelOps::submit_job)); it comes back
    /// when the work queue polls the channel on retrieval.
    Channel,
}

/// A work queue (`struct doca_workq`): up to `depth` jobs in flight, of any contexts
/// attached to it. Used by one thread at a time (`Send`, not `Sync`).
pub struct WorkQ {
    pub(crate) shared: Arc<WqShared>,
    /// Most jobs in flight.
    depth: u32,
    /// Completions of jobs run inline.
    pub(crate) local: super::ring::Ring<Completion>,
    /// Jobs whose condition does not hold yet, retried in `progress_retrieve`.
    pub(crate) pending: VecDeque<JobRecord>,
    /// Graph instances in flight (slot index + 1 tags their nodes' jobs).
    pub(crate) runs: Vec<Option<crate::graph::GraphRun>>,
    /// Jobs and graph instances submitted and not yet retrieved.
    pub(crate) inflight: u32,
    /// Jobs handed to engine threads and not yet retrieved.
    engine_inflight: u32,
    /// Jobs handed to polled channels and not yet completed there.
    channel_inflight: u32,
    /// Context-node jobs of the graph instances in flight (room kept for them).
    pub(crate) graph_jobs: u32,
    pub(crate) attached: Vec<Attached>,
    pub(crate) event_driven: bool,
    _not_sync: PhantomData<std::cell::Cell<()>>,
}

impl fmt::Debug for WorkQ {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorkQ")
            .field("depth", &self.depth)
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
            shared: Arc::new(WqShared::new()),
            depth,
            local: super::ring::Ring::new(),
            pending: VecDeque::new(),
            runs: Vec::new(),
            inflight: 0,
            engine_inflight: 0,
            channel_inflight: 0,
            graph_jobs: 0,
            attached: Vec::new(),
            event_driven: false,
            _not_sync: PhantomData,
        })
    }

    /// `doca_workq_get_depth`.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// `doca_workq_set_depth` (the 1.x `DOCA_WORKQ_PROPERTY_DEPTH`): only while the
    /// queue is attached to no context (`NotPermitted`) and has nothing in flight.
    pub fn set_depth(&mut self, depth: u32) -> Result<()> {
        if !self.attached.is_empty() {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "work queue is attached to a context; remove it from every context first",
            ));
        }
        if self.inflight > 0 {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "work queue has jobs in flight",
            ));
        }
        if depth == 0 || depth > MAX_DEPTH {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("work queue depth must be 1..={MAX_DEPTH}, got {depth}"),
            ));
        }
        self.depth = depth;
        Ok(())
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
        self.slot_of(&ctx.shared).is_some()
    }

    /// What a context keeps of a work queue attached to it: its identity, and the
    /// shared half (for wake-ups and event handles).
    pub(crate) fn link(&self) -> (usize, Weak<dyn WorkqLink>) {
        let w: Weak<WqShared> = Arc::downgrade(&self.shared);
        (self.id(), w)
    }

    /// Where `ctx` is in the attached list.
    #[inline]
    pub(crate) fn slot_of(&self, ctx: &Arc<CtxShared>) -> Option<usize> {
        self.attached.iter().position(|a| Arc::ptr_eq(&a.ctx, ctx))
    }

    /// Attaches a context with its device and engine, with room reserved for `room`
    /// more completions and pending jobs (the data path allocates nothing).
    pub(crate) fn attach(
        &mut self,
        ctx: Arc<CtxShared>,
        dev: Dev,
        engine: Option<Arc<Engine>>,
        room: usize,
    ) {
        let depth = room;
        match &engine {
            Some(e) => {
                e.reserve(depth);
                let mut q = lock(&self.shared.cq);
                let want = depth.saturating_sub(q.len());
                q.reserve(want);
            }
            None => {
                let want = depth.saturating_sub(self.local.len());
                self.local.reserve(want);
            }
        }
        let want = depth.saturating_sub(self.pending.len());
        self.pending.reserve(want);
        self.attached.push(Attached {
            ctx,
            dev,
            engine,
            inflight: 0,
            supported: 0,
            room,
        });
    }

    /// Detaches the context in `slot`, giving back its engine's reservation.
    pub(crate) fn detach(&mut self, slot: usize) {
        let gone = self.attached.remove(slot);
        if let Some(e) = &gone.engine {
            e.release(gone.room);
        }
    }

    /// `doca_workq_submit`. Refusals give the job back: `BadState` when the context is
    /// stopped, `NotFound` when it is not attached here, `InvalidValue` for a job of
    /// another library or a malformed one, `NoMemory` when `depth` jobs are in flight.
    #[inline]
    pub fn submit(
        &mut self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        let slot = match self.admit(ctx) {
            Ok(slot) => slot,
            Err(e) => return Err((e, record)),
        };
        self.local.push_back(Completion {
            error: None,
            record,
            graph_instance: None,
        });
        self.start_last(ctx, slot).map_err(|e| {
            let c = self.local.pop_back().expect("the job just pushed");
            (e, c.record)
        })
    }

    /// [`submit`](WorkQ::submit) of a job whose record `fill` writes where the queue
    /// keeps it (an empty record, [`JobRecord::new`]`(0, Data(0))`, comes in): the C
    /// faces build their records this way, with no copy between building and running.
    /// A refusal (or `fill`'s error) drops the record.
    #[inline(always)]
    pub fn submit_in_place(
        &mut self,
        ctx: &Ctx,
        fill: impl FnOnce(&mut JobRecord) -> Result<()>,
    ) -> Result<()> {
        let slot = self.admit(ctx)?;
        let last = self.local.push_empty();
        let r = fill(&mut last.record).and_then(|()| self.start_last(ctx, slot));
        if r.is_err() {
            drop(self.local.pop_back());
        }
        r
    }

    /// The checks of a submission that need no record: the attachment's slot.
    #[inline]
    fn admit(&self, ctx: &Ctx) -> Result<usize> {
        if !ctx.is_started() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the job's context is not started",
            ));
        }
        let Some(slot) = self.slot_of(&ctx.shared) else {
            return Err(Error::with_context(
                ErrorCode::NotFound,
                "the job's context is not attached to this work queue",
            ));
        };
        if self.inflight >= self.depth {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                "work queue is full: retrieve completions first",
            ));
        }
        Ok(slot)
    }

    /// Starts the job last pushed on `local`: its completion stays there when it ran
    /// inline; it moves to the engine or the pending jobs otherwise. On a refusal it is
    /// still there, for the caller to take back.
    #[inline(always)]
    fn start_last(&mut self, ctx: &Ctx, slot: usize) -> Result<()> {
        let c = self.local.back_mut().expect("the job just pushed");
        if !ctx.shared.ops().handles(c.record.job_type) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "job type does not belong to the context's library",
            ));
        }
        let a = &mut self.attached[slot];
        match start_job(a, &mut c.record, 0) {
            Start::Finished(error) => {
                c.error = error;
                a.inflight += 1;
                self.shared.wake_armed_from_owner();
            }
            Start::Queue { pending } => {
                let c = self.local.pop_back().expect("the job just pushed");
                self.queue_job(slot, c.record, pending);
            }
            Start::Refused(e) => return Err(e),
            Start::Channel => {
                let c = self.local.pop_back().expect("the job just pushed");
                let ctx = Ctx {
                    shared: Arc::clone(&a.ctx),
                };
                let channel = a.ctx.channel().expect("a channel's context");
                if let Err((e, mut record)) = channel.submit_job(&ctx, c.record) {
                    // Back where the caller takes a refused job from.
                    record.unpin();
                    self.local.push_back(Completion {
                        error: None,
                        record,
                        graph_instance: None,
                    });
                    return Err(e);
                }
                a.inflight += 1;
                self.channel_inflight += 1;
            }
        }
        self.inflight += 1;
        Ok(())
    }

    /// Submits a typed job (see [`submit`](WorkQ::submit)).
    #[inline]
    pub fn submit_job(
        &mut self,
        ctx: &Ctx,
        job: impl crate::exec::job::Job,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        self.submit(ctx, job.into_record())
    }

    /// The one path by which a job starts, submitted or a graph node's (`tag` marks the
    /// latter), where it is: the device must support its type, the library validates
    /// it, borrowed buffers are pinned, then it runs inline, or is to be queued with
    /// [`queue_job`](WorkQ::queue_job) (on the context's engine, or pending on a
    /// condition).
    #[inline]
    pub(crate) fn start_job(&mut self, slot: usize, rec: &mut JobRecord, tag: u32) -> Start {
        start_job(&mut self.attached[slot], rec, tag)
    }

    /// Queues a job [`start_job`](WorkQ::start_job) started: on the context's engine,
    /// or among the pending jobs. It comes back through retrieval, counted in its
    /// context's `inflight` until then.
    #[inline]
    pub(crate) fn queue_job(&mut self, slot: usize, record: JobRecord, pending: bool) {
        let a = &mut self.attached[slot];
        a.inflight += 1;
        match (&a.engine, pending) {
            (Some(engine), false) => {
                self.engine_inflight += 1;
                engine.push(Task {
                    runner: Arc::clone(&a.ctx) as Arc<dyn Runner>,
                    sink: Arc::clone(&self.shared) as Arc<dyn Sink>,
                    dev: a.dev.clone(),
                    record,
                });
            }
            _ => {
                self.pending.push_back(record);
                self.shared.pending_count.fetch_add(1, Ordering::AcqRel);
            }
        }
    }

    /// Jobs running on engine threads (their completions come from other threads).
    pub fn engine_inflight(&self) -> u32 {
        self.engine_inflight
    }

    /// `doca_workq_progress_retrieve`: a completed job, `Again` when none, or `IoFailed`
    /// with the failed job's completion. Completion order is not guaranteed.
    #[inline]
    pub fn progress_retrieve(&mut self) -> std::result::Result<Completion, RetrieveError> {
        match self.retrieve_done() {
            Some(c) => Ok(c),
            None => self.progress_retrieve_slow(),
        }
    }

    /// The common retrieval, in a straight line: the oldest completion of a job that
    /// ran inline and succeeded (not a graph instance's), when nothing is pending (else `None`, and
    /// [`progress_retrieve`](WorkQ::progress_retrieve) does the rest).
    #[inline(always)]
    pub(crate) fn retrieve_done(&mut self) -> Option<Completion> {
        if self.done_ready() {
            Some(self.take_done())
        } else {
            None
        }
    }

    /// Whether [`retrieve_done`](WorkQ::retrieve_done) has a completion to give.
    #[inline(always)]
    pub(crate) fn done_ready(&self) -> bool {
        match self.local.front() {
            Some(c) => {
                self.pending.is_empty()
                    && c.record.graph_tag == 0
                    && c.error.is_none()
                    && c.graph_instance.is_none()
            }
            None => false,
        }
    }

    /// The completion [`done_ready`](WorkQ::done_ready) found (it panics if there is
    /// none), straight from its slot.
    #[inline(always)]
    pub(crate) fn take_done(&mut self) -> Completion {
        let ctx = self.local.front().map_or(0, |c| c.record.ctx_id);
        self.inflight -= 1;
        self.ctx_job_done(ctx);
        let mut c = self.local.take_front();
        c.record.deliver_results();
        c
    }

    #[inline(never)]
    fn progress_retrieve_slow(&mut self) -> std::result::Result<Completion, RetrieveError> {
        if !self.pending.is_empty() {
            self.retry_pending();
        }
        if self.channel_inflight > 0 && self.local.is_empty() {
            self.poll_channels();
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
            let mut c = c;
            c.record.deliver_results();
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

    /// The attachment of the context `record.ctx_id` names.
    #[inline]
    fn attached_by_id(&mut self, ctx: usize) -> Option<&mut Attached> {
        self.attached
            .iter_mut()
            .find(|a| Arc::as_ptr(&a.ctx) as *const () as usize == ctx)
    }

    /// Counts a retrieved job off its context's attachment.
    #[inline]
    fn ctx_job_done(&mut self, ctx: usize) {
        if ctx == 0 {
            return;
        }
        if let Some(a) = self.attached_by_id(ctx) {
            a.inflight -= 1;
        }
    }

    /// Polls the channels that hold jobs of this queue: their completions join the
    /// queue's (room for them was reserved on attaching).
    fn poll_channels(&mut self) {
        for i in 0..self.attached.len() {
            let a = &self.attached[i];
            if a.inflight == 0 {
                continue;
            }
            let Some(channel) = a.ctx.channel() else {
                continue;
            };
            let ctx = Ctx {
                shared: Arc::clone(&a.ctx),
            };
            let local = &mut self.local;
            let mut done = 0u32;
            let mut on = |ev: crate::exec::PeEvent| {
                if let crate::exec::PeEvent::Task(c) = ev {
                    local.push_back(c);
                    done += 1;
                }
            };
            let mut out = crate::exec::PollOut {
                ctx: &ctx,
                on: &mut on,
            };
            channel.poll(&ctx, &mut out);
            self.channel_inflight = self.channel_inflight.saturating_sub(done);
        }
    }

    /// Runs every pending job once more; those done become completions.
    pub(super) fn retry_pending(&mut self) {
        for _ in 0..self.pending.len() {
            let Some(mut record) = self.pending.pop_front() else {
                break;
            };
            let r = match self.attached_by_id(record.ctx_id) {
                Some(a) => a.ctx.run(&mut record, &ExecEnv::new(&a.dev, None)),
                None => Err(Error::with_context(
                    ErrorCode::Unexpected,
                    "the job's context is no longer attached",
                )),
            };
            if is_pending(&r) {
                self.pending.push_back(record);
            } else {
                self.shared.pending_count.fetch_sub(1, Ordering::AcqRel);
                self.local.push_back(Completion::of(record, r));
            }
        }
    }
}

impl Drop for WorkQ {
    fn drop(&mut self) {
        let id = self.id();
        for a in &self.attached {
            a.ctx.detach_link(&mut a.ctx.state(), id);
            if let Some(e) = &a.engine {
                e.release(a.room);
            }
        }
    }
}

/// What the free slots of [`WorkQ::local`] hold.
impl super::ring::Empty for Completion {
    #[inline(always)]
    unsafe fn write_empty(p: *mut Completion) {
        // SAFETY: the caller's contract; every field is written once.
        unsafe {
            (&raw mut (*p).error).write(None);
            JobRecord::write_empty(&raw mut (*p).record);
            (&raw mut (*p).graph_instance).write(None);
        }
    }
}

/// [`WorkQ::start_job`] on the attachment `a`.
#[inline(always)]
fn start_job(a: &mut Attached, rec: &mut JobRecord, tag: u32) -> Start {
    if a.supported != rec.job_type {
        let ops = a.ctx.ops();
        let info = a.dev.as_devinfo();
        let r = match ops.tasks().iter().find(|s| s.covers(rec.job_type)) {
            Some(spec) => info.task_supported(spec, rec.job_type),
            None => info.job_supported_by(rec.job_type, ops.capability()),
        };
        if let Err(e) = r {
            return Start::Refused(e);
        }
        a.supported = rec.job_type;
    }
    let channel = a.ctx.is_channel();
    if channel && tag != 0 {
        return Start::Refused(Error::with_context(
            ErrorCode::NotSupported,
            "a channel's jobs cannot be graph nodes",
        ));
    }
    if let Err(e) = rec.check_data_sections() {
        return Start::Refused(e);
    }
    if !channel && let Err(e) = a.ctx.validate(rec, &a.dev) {
        return Start::Refused(e);
    }
    // Where the job's results go is fixed now, as a work request is made at submit.
    rec.take_dst_base();
    // Borrowed buffers (the C face) stay alive until the job completes, whatever
    // the program does with its own references meanwhile.
    if let Err(e) = rec.pin_borrowed() {
        return Start::Refused(e);
    }
    rec.ctx_id = Arc::as_ptr(&a.ctx) as *const () as usize;
    rec.graph_tag = tag;
    if channel {
        return Start::Channel;
    }
    if a.engine.is_some() {
        return Start::Queue { pending: false };
    }
    let r = a.ctx.run(rec, &ExecEnv::new(&a.dev, None));
    if is_pending(&r) {
        return Start::Queue { pending: true };
    }
    rec.graph_tag = 0;
    Start::Finished(r.err())
}

/// Attaching contexts to work queues: the context's side of it.
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
        if wq.event_driven && !self.event_driven_supported() {
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
        self.shared.attach_link(&mut st, wq.link());
        let room = wq.depth() as usize;
        wq.attach(Arc::clone(&self.shared), dev, st.engine.clone(), room);
        Ok(())
    }

    /// `doca_ctx_workq_rm`: `NotFound` when not attached; `InUse` while this context's
    /// jobs on that work queue are not yet retrieved.
    pub fn workq_rm(&self, wq: &mut WorkQ) -> Result<()> {
        let Some(i) = wq.slot_of(&self.shared) else {
            return Err(Error::with_context(
                ErrorCode::NotFound,
                "work queue is not attached to this context",
            ));
        };
        let inflight = wq.attached[i].inflight;
        if inflight > 0 {
            return Err(Error::with_context(
                ErrorCode::InUse,
                format!("{inflight} job(s) of this context are still in flight on the work queue"),
            ));
        }
        wq.detach(i);
        let id = wq.id();
        self.shared.detach_link(&mut self.shared.state(), id);
        Ok(())
    }
}
