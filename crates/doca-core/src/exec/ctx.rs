//! `doca_ctx`: the life cycle every library context shares.

use super::engine::{Engine, ExecEnv, Runner};
use super::job::{Completion, JobRecord};
use crate::device::{Capability, Dev};
use crate::error::{Error, ErrorCode, Result};
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// What every library says about its contexts, whichever of the two kinds they are:
/// its name, the device capability it needs, its task types, and what it does when a
/// context starts and stops. A library implements this and one of [`JobOps`] (contexts
/// whose jobs the engine validates and runs) or [`ChannelOps`] (contexts that take their
/// own tasks and are polled).
pub trait CtxOps: Send + Sync + 'static {
    /// Library name, for messages ("dma", "sha", ...).
    fn name(&self) -> &'static str;
    /// The device capability the library needs.
    fn capability(&self) -> Capability;
    /// Whether `job_type` belongs to this library.
    fn handles(&self, job_type: u32) -> bool;
    /// The library's task table (its `tasks::ALL`): which job types a device runs
    /// follows from it ([`DevInfo::task_supported`](crate::DevInfo::task_supported)).
    /// A library without one is answered by its capability alone.
    fn tasks(&self) -> &'static [&'static super::TaskSpec] {
        &[]
    }
    /// Called by `Ctx::start` with the context's device before the context counts as
    /// started; an error refuses the start.
    fn on_start(&self, _dev: &Dev) -> Result<()> {
        Ok(())
    }
    /// Called by `Ctx::stop` once the context is stopped.
    fn on_stop(&self) {}
}

/// A job library (DMA, SHA, EC, sync events, ...): the engine checks its jobs at submit
/// and runs them, inline or on engine threads, on a work queue or a progress engine.
pub trait JobOps: CtxOps {
    /// Checks a job at submit time (the work queue has already checked that the device
    /// supports the job type): a malformed job is refused with `InvalidValue`. Once it
    /// passes, the job is accepted (so a library may take an ordering ticket here).
    fn validate(&self, job: &mut JobRecord, dev: &Dev) -> Result<()>;
    /// Runs a job on `env`'s device (large jobs may share work through
    /// [`ExecEnv::parallel`]). Failures are reported in the completion event.
    fn execute(&self, job: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()>;
    /// Whether the context can run with event-driven work queues.
    fn event_driven_supported(&self) -> bool {
        true
    }
}

/// A polled channel (comch, its fast path): its context takes its own tasks (through
/// the channel's own calls, which count them in flight) and runs its own events; a
/// progress engine polls it on every progress. It runs no jobs on a work queue.
pub trait ChannelOps: CtxOps {
    /// Whether a start completes later (the context stays `Starting` until
    /// [`PollOut::started`] says it runs, as a channel's client does until it reaches
    /// its server).
    fn starts_later(&self) -> bool {
        false
    }
    /// Tasks taken and not completed yet.
    fn inflight(&self) -> u32;
    /// Makes progress (the context is not idle), handing completions and state changes
    /// to `out`. Whether anything happened.
    fn poll(&self, ctx: &Ctx, out: &mut PollOut<'_>) -> bool;
    /// Whether a work queue in event-driven mode may hold this channel's jobs: the
    /// channel rings its context ([`Ctx::ring`]) whenever something completes that no
    /// poll is collecting at that moment.
    fn event_driven_supported(&self) -> bool {
        false
    }
    /// Takes a task submitted to a progress engine ([`Pe::submit_task`](super::Pe::submit_task)),
    /// as the record its task table made (its user data the task); it completes through
    /// [`poll`](ChannelOps::poll). A refusal gives the record back (its borrowed buffers
    /// still set). A channel with no tasks of its own refuses them all (the default).
    ///
    /// # Safety
    /// The record was made by the task table of one of this channel's task types from a
    /// live task: its buffers are live descriptors and the pointers in its parameters
    /// are what the program gave, valid as its C contract says, until it completes.
    unsafe fn submit_task(
        &self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        let _ = ctx;
        Err((
            Error::with_context(
                ErrorCode::NotSupported,
                format!("a {} context takes no tasks", self.name()),
            ),
            record,
        ))
    }
    /// Takes a job submitted on a DOCA 2.2 work queue (the device supports its type and
    /// its borrowed buffers are pinned); it completes through [`poll`](ChannelOps::poll),
    /// which the work queue calls on retrieval. A refusal gives the record back. A
    /// channel that runs no work queue jobs refuses them all (the default).
    fn submit_job(
        &self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        let _ = ctx;
        Err((
            Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "a {} context takes its own tasks (doca_task_submit); it runs no jobs on a work queue",
                    self.name()
                ),
            ),
            record,
        ))
    }
}

/// The library of a context: one of the two kinds, which the engine tells apart.
pub(crate) enum Lib {
    /// Jobs the engine validates and runs.
    Jobs(Box<dyn JobOps>),
    /// A channel that takes its own tasks and is polled.
    Channel(Box<dyn ChannelOps>),
}

impl Lib {
    #[inline(always)]
    fn common(&self) -> &dyn CtxOps {
        match self {
            Lib::Jobs(j) => &**j,
            Lib::Channel(c) => &**c,
        }
    }
}

/// What [`Pe::progress`](super::Pe::progress) hands its handler.
#[derive(Debug)]
pub enum PeEvent {
    /// A task completed: `error` is `None` on success.
    Task(Completion),
    /// A context changed state (it is already in `next`).
    State {
        /// The context.
        ctx: Ctx,
        /// The state it left.
        prev: CtxPhase,
        /// The state it is in.
        next: CtxPhase,
    },
}

/// What a work queue attached to a context offers it: what sync events and the
/// context's own checks need, without the context knowing the work queue's type.
pub(crate) trait WorkqLink: Send + Sync {
    /// Jobs waiting on a condition.
    fn pending_jobs(&self) -> u32;
    /// The event handle (eventfd), once event-driven mode made one.
    fn event_fd(&self) -> Option<std::os::fd::RawFd>;
    /// Jobs waiting on a condition may proceed.
    fn poke(&self);
    /// A polled channel has something to report: wake the owner (its armed event
    /// handle, or a thread waiting for completions).
    fn ring(&self);
}

/// What a polled channel ([`ChannelOps::poll`]) reports to its progress engine.
pub struct PollOut<'a> {
    pub(crate) ctx: &'a Ctx,
    pub(crate) on: &'a mut dyn FnMut(PeEvent),
}

impl fmt::Debug for PollOut<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PollOut").field("ctx", self.ctx).finish()
    }
}

impl PollOut<'_> {
    /// A task completed (`error` is `None` on success).
    pub fn complete(&mut self, record: JobRecord, error: Option<Error>) {
        (self.on)(PeEvent::Task(Completion {
            error,
            record,
            graph_instance: None,
        }));
    }

    /// A context that was starting runs now: the change is reported. False (and
    /// nothing changes) when it was not starting.
    pub fn started(&mut self) -> bool {
        if self
            .ctx
            .shared
            .phase
            .compare_exchange(
                CtxPhase::Starting as u8,
                CtxPhase::Running as u8,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            return false;
        }
        (self.on)(PeEvent::State {
            ctx: self.ctx.clone(),
            prev: CtxPhase::Starting,
            next: CtxPhase::Running,
        });
        true
    }

    /// The context failed (its channel ended): a running or starting context is
    /// stopping now, and the change is reported; the engine makes it idle once nothing
    /// of it is in flight or taken.
    pub fn failed(&mut self) {
        let prev = self.ctx.phase();
        if !matches!(prev, CtxPhase::Running | CtxPhase::Starting) {
            return;
        }
        self.ctx.shared.set_phase(CtxPhase::Stopping);
        (self.on)(PeEvent::State {
            ctx: self.ctx.clone(),
            prev,
            next: CtxPhase::Stopping,
        });
    }
}

pub(crate) struct CtxState {
    pub(crate) dev: Option<Dev>,
    /// The device was added on the library's behalf (a sync event's CPU location): the
    /// program may still add the same device itself, once.
    pub(crate) dev_implied: bool,
    /// Attached work queues: identity and shared half (for wake-ups).
    pub(crate) workqs: Vec<(usize, Weak<dyn WorkqLink>)>,
    pub(crate) engine: Option<Arc<Engine>>,
    /// The progress engine the context is connected to (its identity), if any.
    pub(crate) pe: Option<usize>,
    /// Task pool sizes configured per task type: the room a progress engine keeps for
    /// this context's completions.
    pub(crate) task_room: Vec<(u32, u32)>,
}

/// Where a context is in its life (`enum doca_ctx_states`): the task generation's
/// state machine. A context of the job generation is `Idle` or `Running`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum CtxPhase {
    /// Created, or stopped: configurable, takes no tasks.
    Idle = 0,
    /// Starting asynchronously (a channel's client until it reaches its server).
    Starting = 1,
    /// Takes tasks.
    Running = 2,
    /// Stop was asked while tasks were in flight: they complete (those that never ran
    /// are flushed with an error) as the engine progresses, then the context is idle.
    Stopping = 3,
}

impl CtxPhase {
    fn from_raw(v: u8) -> CtxPhase {
        match v {
            1 => CtxPhase::Starting,
            2 => CtxPhase::Running,
            3 => CtxPhase::Stopping,
            _ => CtxPhase::Idle,
        }
    }
}

pub(crate) struct CtxShared {
    pub(crate) lib: Lib,
    pub(crate) state: Mutex<CtxState>,
    pub(crate) started: AtomicBool,
    /// A [`CtxPhase`].
    pub(crate) phase: AtomicU8,
    /// `state.pe` as an atomic (`usize::MAX`: none), for the progress engine's poll,
    /// which reads it without the state lock. Written with `state.pe`, under its lock.
    pub(crate) pe_id: AtomicUsize,
    /// Tasks taken from this context's pools and not given back.
    pub(crate) tasks_out: AtomicUsize,
    /// The attached work queues again, for [`Ctx::ring`] alone: a channel's own thread
    /// rings without the state lock, which a thread stopping the channel may hold
    /// while it waits for that thread.
    pub(crate) ring_to: Mutex<Vec<(usize, Weak<dyn WorkqLink>)>>,
}

impl CtxShared {
    /// Attaches a work queue (`state.workqs`, held by the caller as `st`).
    pub(crate) fn attach_link(&self, st: &mut CtxState, link: (usize, Weak<dyn WorkqLink>)) {
        self.ring_to
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(link.clone());
        st.workqs.push(link);
    }

    /// Detaches work queue `id` (`state.workqs`, held by the caller as `st`).
    pub(crate) fn detach_link(&self, st: &mut CtxState, id: usize) {
        self.ring_to
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|w| w.0 != id);
        st.workqs.retain(|w| w.0 != id);
    }

    pub(crate) fn state(&self) -> MutexGuard<'_, CtxState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The common part of the library.
    #[inline(always)]
    pub(crate) fn ops(&self) -> &dyn CtxOps {
        self.lib.common()
    }

    /// The library, when it is a polled channel.
    #[inline]
    pub(crate) fn channel(&self) -> Option<&dyn ChannelOps> {
        match &self.lib {
            Lib::Channel(c) => Some(&**c),
            Lib::Jobs(_) => None,
        }
    }

    /// Whether the library is a polled channel.
    #[inline]
    pub(crate) fn is_channel(&self) -> bool {
        matches!(self.lib, Lib::Channel(_))
    }

    /// The library checks a job at submit ([`JobOps::validate`]); a channel's context
    /// runs no jobs on a work queue (`NotSupported`).
    #[inline(always)]
    pub(crate) fn validate(&self, job: &mut JobRecord, dev: &Dev) -> Result<()> {
        match &self.lib {
            Lib::Jobs(j) => j.validate(job, dev),
            Lib::Channel(c) => Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "a {} context takes its own tasks (doca_task_submit); it runs no jobs on a work queue",
                    c.name()
                ),
            )),
        }
    }

    #[inline]
    pub(crate) fn phase(&self) -> CtxPhase {
        CtxPhase::from_raw(self.phase.load(Ordering::Acquire))
    }

    pub(crate) fn set_phase(&self, p: CtxPhase) {
        self.phase.store(p as u8, Ordering::Release);
    }

    /// The event handle (eventfd) of an attached event-driven work queue, if any.
    pub(crate) fn event_fd(&self) -> Option<std::os::fd::RawFd> {
        let st = self.state();
        st.workqs
            .iter()
            .filter_map(|(_, w)| w.upgrade())
            .find_map(|wq| wq.event_fd())
    }

    /// See [`Ctx::ring`].
    pub(crate) fn ring_workqs(&self) {
        let st = self.ring_to.lock().unwrap_or_else(|e| e.into_inner());
        for (_, w) in st.iter() {
            if let Some(wq) = w.upgrade() {
                wq.ring();
            }
        }
    }

    /// Tells the attached work queues that jobs waiting on a condition may proceed.
    pub(crate) fn wake_workqs(&self) {
        let st = self.state();
        for (_, w) in &st.workqs {
            if let Some(wq) = w.upgrade() {
                wq.poke();
            }
        }
    }
}

/// A context (`struct doca_ctx`): a library instance bound to a device, started, and
/// attached to work queues. Clones share it; thread-safe.
#[derive(Clone)]
pub struct Ctx {
    pub(crate) shared: Arc<CtxShared>,
}

impl fmt::Debug for Ctx {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ctx")
            .field("library", &self.shared.ops().name())
            .field("started", &self.is_started())
            .finish()
    }
}

impl PartialEq for Ctx {
    fn eq(&self, o: &Ctx) -> bool {
        Arc::ptr_eq(&self.shared, &o.shared)
    }
}
impl Eq for Ctx {}

impl Runner for CtxShared {
    /// Runs a job: a panic in the library's code becomes the job's `Unexpected` error,
    /// and the thread (an engine thread, or the program's) carries on.
    #[inline]
    fn run(&self, record: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()> {
        if self.phase() == CtxPhase::Stopping {
            // The context is stopping: what has not run yet is flushed.
            return Err(Error::with_context(
                ErrorCode::IoFailed,
                "task flushed: its context was stopped before it ran",
            ));
        }
        let Lib::Jobs(ops) = &self.lib else {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "a channel's context runs no jobs",
            ));
        };
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ops.execute(record, env)))
            .unwrap_or_else(|_| {
                Err(Error::with_context(
                    ErrorCode::Unexpected,
                    "the job's execution panicked",
                ))
            })
    }
}

/// A weak handle of a context ([`Ctx::downgrade`]): what a library's own state keeps
/// of its context without keeping it alive (the context owns that state).
#[derive(Clone, Debug, Default)]
pub struct WeakCtx(Weak<CtxShared>);

impl WeakCtx {
    /// The context, while it lives.
    pub fn upgrade(&self) -> Option<Ctx> {
        self.0.upgrade().map(|shared| Ctx { shared })
    }
}

impl Ctx {
    /// A weak handle of this context.
    pub fn downgrade(&self) -> WeakCtx {
        WeakCtx(Arc::downgrade(&self.shared))
    }

    /// A polled channel ([`ChannelOps`]) has completions or events to report, found by
    /// a thread of its own: the progress engine it is started on wakes (its armed
    /// notification handle fires, a thread waiting for completions returns).
    pub fn ring(&self) {
        self.shared.ring_workqs();
    }
}

impl Ctx {
    /// A stopped context for a job library.
    pub fn new(ops: impl JobOps) -> Ctx {
        Ctx::with_lib(Lib::Jobs(Box::new(ops)))
    }

    /// A stopped context for a polled channel.
    pub fn new_channel(ops: impl ChannelOps) -> Ctx {
        Ctx::with_lib(Lib::Channel(Box::new(ops)))
    }

    fn with_lib(lib: Lib) -> Ctx {
        Ctx {
            shared: Arc::new(CtxShared {
                lib,
                state: Mutex::new(CtxState {
                    dev: None,
                    dev_implied: false,
                    workqs: Vec::new(),
                    engine: None,
                    pe: None,
                    task_room: Vec::new(),
                }),
                started: AtomicBool::new(false),
                phase: AtomicU8::new(CtxPhase::Idle as u8),
                pe_id: AtomicUsize::new(usize::MAX),
                tasks_out: AtomicUsize::new(0),
                ring_to: Mutex::new(Vec::new()),
            }),
        }
    }

    /// What the library says about itself (name, capability, task types).
    pub fn ops(&self) -> &dyn CtxOps {
        self.shared.ops()
    }

    /// Whether the context is a polled channel's ([`ChannelOps`]).
    pub fn is_channel(&self) -> bool {
        self.shared.is_channel()
    }

    /// An identity, stable while the context lives.
    pub fn id(&self) -> usize {
        Arc::as_ptr(&self.shared) as *const () as usize
    }

    /// `doca_ctx_dev_add`: only while stopped; the device must have the library's
    /// capability (`NotSupported` otherwise); one device per context.
    pub fn dev_add(&self, dev: &Dev) -> Result<()> {
        let mut st = self.shared.state();
        if self.is_started() {
            return Err(Error::bad_state(
                "context is started; stop it before changing devices",
            ));
        }
        let cap = self.shared.ops().capability();
        if !dev.as_devinfo().has_capability(cap) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!(
                    "device {} does not support the {} library",
                    dev.as_devinfo().pci_addr(),
                    self.shared.ops().name()
                ),
            ));
        }
        match &st.dev {
            Some(d) if d == dev && st.dev_implied => {
                st.dev_implied = false;
                Ok(())
            }
            Some(d) if d == dev => Err(Error::with_context(
                ErrorCode::AlreadyExist,
                "device was already added to this context",
            )),
            Some(_) => Err(Error::with_context(
                ErrorCode::InvalidValue,
                "context already has a device; remove it first",
            )),
            None => {
                st.dev = Some(dev.clone());
                Ok(())
            }
        }
    }

    /// `doca_ctx_dev_rm`: only while stopped.
    pub fn dev_rm(&self, dev: &Dev) -> Result<()> {
        let mut st = self.shared.state();
        if self.is_started() {
            return Err(Error::bad_state(
                "context is started; stop it before changing devices",
            ));
        }
        match &st.dev {
            Some(d) if d == dev => {
                st.dev = None;
                st.dev_implied = false;
                Ok(())
            }
            _ => Err(Error::with_context(
                ErrorCode::NotFound,
                "device was not added to this context",
            )),
        }
    }

    /// Adds `dev` on the library's behalf (when it has none yet): the program may still
    /// add the same device itself.
    pub(crate) fn dev_add_implied(&self, dev: &Dev) -> Result<()> {
        self.dev_add(dev)?;
        self.shared.state().dev_implied = true;
        Ok(())
    }

    /// The device, once added.
    pub fn dev(&self) -> Option<Dev> {
        self.shared.state().dev.clone()
    }

    /// `doca_ctx_start`: needs a device. On a device with engine threads, jobs will run
    /// on them.
    pub fn start(&self) -> Result<()> {
        let mut st = self.shared.state();
        if self.is_started() {
            return Err(Error::bad_state("context is already started"));
        }
        let Some(dev) = st.dev.clone() else {
            return Err(Error::bad_state(
                "context has no device; add one before start",
            ));
        };
        self.shared.ops().on_start(&dev)?;
        st.engine = Engine::for_device(&dev);
        self.shared.started.store(true, Ordering::Release);
        let later = self.shared.channel().is_some_and(|c| c.starts_later());
        self.shared.set_phase(if later {
            CtxPhase::Starting
        } else {
            CtxPhase::Running
        });
        Ok(())
    }

    /// `doca_ctx_stop`: refused with `NotPermitted` while jobs are pending on an attached
    /// work queue (as DOCA 2.2 says), and with `InUse` while work queues are attached.
    pub fn stop(&self) -> Result<()> {
        let mut st = self.shared.state();
        if !self.is_started() {
            return Err(Error::bad_state("context is not started"));
        }
        let pending: u32 = st
            .workqs
            .iter()
            .filter_map(|(_, w)| w.upgrade())
            .map(|w| w.pending_jobs())
            .sum();
        if pending > 0 {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                format!(
                    "{pending} job(s) are still pending on an attached work queue (a wait whose value has not passed yet); let them complete and retrieve them first"
                ),
            ));
        }
        if !st.workqs.is_empty() {
            return Err(Error::with_context(
                ErrorCode::InUse,
                format!(
                    "{} work queue(s) are still attached; remove them first",
                    st.workqs.len()
                ),
            ));
        }
        st.engine = None;
        self.shared.started.store(false, Ordering::Release);
        self.shared.set_phase(CtxPhase::Idle);
        self.shared.ops().on_stop();
        Ok(())
    }

    /// Whether started.
    #[inline]
    pub fn is_started(&self) -> bool {
        self.shared.started.load(Ordering::Acquire)
    }

    /// `doca_ctx_get_state`: where the context is in its life.
    #[inline]
    pub fn phase(&self) -> CtxPhase {
        self.shared.phase()
    }

    /// The identity of the progress engine the context is connected to.
    pub fn connected_pe(&self) -> Option<usize> {
        match self.shared.pe_id.load(Ordering::Acquire) {
            usize::MAX => None,
            id => Some(id),
        }
    }

    /// Sets the pool size of one task type (the libraries' `*_set_conf`): only while
    /// idle (`BadState`). A progress engine keeps room for the sum of them, so that
    /// completing tasks allocates nothing.
    pub fn set_task_room(&self, task_type: u32, num_tasks: u32) -> Result<()> {
        let mut st = self.shared.state();
        if self.phase() != CtxPhase::Idle {
            return Err(Error::bad_state(
                "tasks can be configured only while the context is idle; stop it first",
            ));
        }
        match st.task_room.iter_mut().find(|(t, _)| *t == task_type) {
            Some(e) => e.1 = num_tasks,
            None => st.task_room.push((task_type, num_tasks)),
        }
        Ok(())
    }

    /// The pool size configured for a task type (0: none configured).
    pub fn task_room(&self, task_type: u32) -> u32 {
        let st = self.shared.state();
        st.task_room
            .iter()
            .find(|(t, _)| *t == task_type)
            .map_or(0, |e| e.1)
    }

    /// Tasks taken from this context's pools and not given back.
    pub fn tasks_out(&self) -> usize {
        self.shared.tasks_out.load(Ordering::Acquire)
    }

    /// `doca_ctx_get_event_driven_supported`: a channel's context has its own events,
    /// not a work queue's.
    pub fn event_driven_supported(&self) -> bool {
        match &self.shared.lib {
            Lib::Jobs(j) => j.event_driven_supported(),
            Lib::Channel(c) => c.event_driven_supported(),
        }
    }

    /// Work queues attached.
    pub fn num_workqs(&self) -> usize {
        self.shared.state().workqs.len()
    }

    /// Engine threads running this context's jobs (0: jobs run in the caller).
    pub fn engine_threads(&self) -> usize {
        self.shared
            .state()
            .engine
            .as_ref()
            .map_or(0, |e| e.threads())
    }

    /// `doca_ctx_destroy` (through the library's destroy): refused with `InUse` (the
    /// context comes back) while a device or work queues are attached, or while started.
    pub fn destroy(self) -> std::result::Result<(), (Ctx, Error)> {
        let msg = {
            let st = self.shared.state();
            if self.is_started() {
                Some("context is started; stop it first")
            } else if st.pe.is_some() {
                Some("context is connected to a progress engine; disconnect it first")
            } else if !st.workqs.is_empty() {
                Some("work queues are still attached")
            } else if st.dev.is_some() {
                Some("a device is still attached; remove it first")
            } else {
                None
            }
        };
        match msg {
            Some(m) => Err((self, Error::with_context(ErrorCode::InUse, m))),
            None => Ok(()),
        }
    }
}
