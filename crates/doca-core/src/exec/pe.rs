//! `doca_pe`: the progress engine of the task generation (DOCA 2.5 and later).
//!
//! A progress engine is a work queue underneath: the same submission path (device
//! support, validation, pinning, inline or engine-thread execution), the same retrieval
//! and the same eventfd. What it adds is the task generation's model:
//!
//! - contexts are *connected* once and then started and stopped through the engine, with
//!   the states of [`CtxPhase`];
//! - a task that fails stops its context, as a hardware error does (the state changes
//!   to `Stopping` are reported, and what is in flight is flushed);
//! - stopping a context with tasks in flight answers `InProgress`: the context is
//!   `Stopping`, tasks that never ran complete with an error (flushed), and the engine
//!   moves the context to `Idle` once nothing of it is in flight or taken from its pools;
//! - [`Pe::progress`] hands each completion and each state change to a handler, with no
//!   borrow of the engine held, so the handler may submit again, stop a context, or give
//!   a task back (what DOCA's callbacks do).
//!
//! ```
//! use doca_core::exec::{ExecEnv, Pe, PeEvent};
//! use doca_core::types::action::DMA_FIRST;
//! use doca_core::exec::JobOps;
//! use doca_core::{devinfo_list, Capability, Ctx, CtxOps, Data, Dev, JobRecord, Result};
//!
//! // A library whose one task type does nothing.
//! struct Nop;
//! impl CtxOps for Nop {
//!     fn name(&self) -> &'static str { "nop" }
//!     fn capability(&self) -> Capability { Capability::Dma }
//!     fn handles(&self, t: u32) -> bool { t == DMA_FIRST + 1 }
//! }
//! impl JobOps for Nop {
//!     fn validate(&self, _: &mut JobRecord, _: &Dev) -> Result<()> { Ok(()) }
//!     fn execute(&self, _: &mut JobRecord, _: &ExecEnv<'_>) -> Result<()> { Ok(()) }
//! }
//!
//! let dev = devinfo_list()?[0].open()?;
//! let ctx = Ctx::new(Nop);
//! ctx.dev_add(&dev)?;
//! ctx.set_task_room(DMA_FIRST + 1, 16)?;
//! let pe = Pe::new()?;
//! pe.connect(&ctx)?;
//! pe.start_ctx(&ctx)?;
//! pe.submit(&ctx, JobRecord::new(DMA_FIRST + 1, Data(7))).map_err(|(e, _)| e)?;
//! let mut done = 0;
//! while pe.progress(|ev| {
//!     if let PeEvent::Task(c) = ev {
//!         done += c.record.user_data.u64();
//!     }
//! }) {}
//! assert_eq!(done, 7);
//! pe.stop_ctx(&ctx)?;
//! # Ok::<(), doca_core::Error>(())
//! ```

use super::ctx::{Ctx, CtxPhase, PeEvent, PollOut};
use super::job::{Completion, JobRecord, RetrieveError};
use super::workq::{MAX_DEPTH, WorkQ};
use crate::error::{Error, ErrorCode, Result};
use std::cell::RefCell;
use std::fmt;
use std::os::fd::RawFd;
use std::ptr::NonNull;

struct PeInner {
    wq: WorkQ,
    /// Contexts connected here (a context's own record says whether it still is).
    ctxs: Vec<Ctx>,
    /// Whether any of `ctxs` is a polled channel's.
    channels: bool,
}

/// A progress engine (`struct doca_pe`): contexts connected to it submit tasks, and
/// [`progress`](Pe::progress) delivers their completions. Used by one thread at a time
/// (`Send`, not `Sync`), as DOCA says; its handler may call back into it.
pub struct Pe {
    inner: RefCell<PeInner>,
    id: usize,
}

impl fmt::Debug for Pe {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pe")
            .field("inflight", &self.inflight())
            .field("contexts", &self.num_contexts())
            .finish()
    }
}

/// A task given to the engine for a channel's context: channels take their tasks
/// through their own calls.
#[cold]
fn channel_task(ctx: &Ctx) -> Error {
    Error::with_context(
        ErrorCode::NotSupported,
        format!(
            "a {} context takes its own tasks (doca_task_submit of a task of its type), not records",
            ctx.ops().name()
        ),
    )
}

fn not_connected() -> Error {
    Error::with_context(
        ErrorCode::NotConnected,
        "context is not connected to this progress engine; connect it first (doca_pe_connect_ctx)",
    )
}

impl Pe {
    /// `doca_pe_create`: an engine with its notification handle (an eventfd).
    pub fn new() -> Result<Pe> {
        let mut wq = WorkQ::new(MAX_DEPTH)?;
        wq.set_event_driven_enable(true)?;
        let id = wq.id();
        Ok(Pe {
            inner: RefCell::new(PeInner {
                wq,
                ctxs: Vec::new(),
                channels: false,
            }),
            id,
        })
    }

    /// An identity, stable while the engine lives.
    pub fn id(&self) -> usize {
        self.id
    }

    fn inner(&self) -> std::cell::RefMut<'_, PeInner> {
        self.inner.borrow_mut()
    }

    /// `doca_pe_connect_ctx`: the context must be idle (`BadState`) and not connected to
    /// an engine yet (`NotPermitted`). Only destroying the context (or
    /// [`Ctx::disconnect_pe`]) breaks the connection.
    pub fn connect(&self, ctx: &Ctx) -> Result<()> {
        let mut inner = self.inner();
        {
            let mut st = ctx.shared.state();
            if ctx.phase() != CtxPhase::Idle {
                return Err(Error::with_context(
                    ErrorCode::BadState,
                    "context is not idle; connect it before starting it",
                ));
            }
            if st.pe.is_some() {
                return Err(Error::with_context(
                    ErrorCode::NotPermitted,
                    "context is already connected to a progress engine",
                ));
            }
            st.pe = Some(self.id);
            ctx.shared
                .pe_id
                .store(self.id, std::sync::atomic::Ordering::Release);
        }
        inner.ctxs.retain(|c| c.connected_pe() == Some(self.id));
        inner.ctxs.push(ctx.clone());
        inner.channels = inner.ctxs.iter().any(|c| c.is_channel());
        Ok(())
    }

    /// Contexts connected (`doca_pe_destroy` is refused while there are any).
    pub fn num_contexts(&self) -> usize {
        let inner = self.inner.borrow();
        inner
            .ctxs
            .iter()
            .filter(|c| c.connected_pe() == Some(self.id))
            .count()
    }

    fn check_connected(&self, ctx: &Ctx) -> Result<()> {
        if ctx.connected_pe() == Some(self.id) {
            Ok(())
        } else {
            Err(not_connected())
        }
    }

    /// `doca_ctx_start` of a connected context: it starts at once (`Running`), with
    /// room kept for every task its pools can have in flight.
    pub fn start_ctx(&self, ctx: &Ctx) -> Result<()> {
        self.check_connected(ctx)?;
        let mut inner = self.inner();
        match ctx.phase() {
            CtxPhase::Idle => {}
            CtxPhase::Stopping => {
                return Err(Error::with_context(
                    ErrorCode::BadState,
                    "context is still stopping; progress the engine until it is idle",
                ));
            }
            _ => {
                return Err(Error::with_context(
                    ErrorCode::BadState,
                    "context is already started",
                ));
            }
        }
        ctx.start()?;
        let (dev, engine, room) = {
            let st = ctx.shared.state();
            let room: usize = st.task_room.iter().map(|(_, n)| *n as usize).sum();
            (st.dev.clone(), st.engine.clone(), room.max(1))
        };
        let Some(dev) = dev else {
            // `start` needs a device, so this does not happen; undo all the same.
            let _ = ctx.stop();
            return Err(Error::with_context(
                ErrorCode::BadState,
                "context has no device",
            ));
        };
        ctx.shared
            .attach_link(&mut ctx.shared.state(), inner.wq.link());
        inner
            .wq
            .attach(std::sync::Arc::clone(&ctx.shared), dev, engine, room);
        if ctx.phase() == CtxPhase::Starting {
            return Err(Error::with_context(
                ErrorCode::InProgress,
                "context is starting; progress the engine until it runs",
            ));
        }
        Ok(())
    }

    /// `doca_ctx_stop` of a connected context: `Ok` when it is idle now (also when it
    /// already was, or when a stop asked earlier has nothing left to wait for);
    /// `InProgress` while tasks are in flight or taken from its pools (it is `Stopping`,
    /// and a later [`progress`](Pe::progress) reports it idle).
    pub fn stop_ctx(&self, ctx: &Ctx) -> Result<()> {
        self.check_connected(ctx)?;
        let mut inner = self.inner();
        match ctx.phase() {
            CtxPhase::Running | CtxPhase::Stopping => {}
            CtxPhase::Idle => return Ok(()),
            CtxPhase::Starting if ctx.is_channel() => {}
            CtxPhase::Starting => {
                return Err(Error::with_context(
                    ErrorCode::BadState,
                    "context is still starting",
                ));
            }
        }
        ctx.shared.set_phase(CtxPhase::Stopping);
        if inner.can_finish(ctx) {
            inner.finish_stop(ctx);
            Ok(())
        } else {
            Err(stopping(&inner, ctx))
        }
    }

    /// `doca_task_submit`: the context must be connected here and running (`BadState`
    /// otherwise); refusals give the record back, as the work queue does.
    #[inline]
    pub fn submit(
        &self,
        ctx: &Ctx,
        record: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        if ctx.phase() != CtxPhase::Running {
            return Err((
                Error::with_context(
                    ErrorCode::BadState,
                    "the task's context is not running; start it before submitting",
                ),
                record,
            ));
        }
        if ctx.is_channel() {
            return Err((channel_task(ctx), record));
        }
        self.inner().wq.submit(ctx, record)
    }

    /// [`submit`](Pe::submit) of a task whose record `fill` writes where the engine
    /// keeps it (see [`WorkQ::submit_in_place`]); a refusal drops the record.
    #[inline]
    pub fn submit_in_place(
        &self,
        ctx: &Ctx,
        fill: impl FnOnce(&mut JobRecord) -> Result<()>,
    ) -> Result<()> {
        if ctx.phase() != CtxPhase::Running {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the task's context is not running; start it before submitting",
            ));
        }
        if ctx.is_channel() {
            return Err(channel_task(ctx));
        }
        self.inner().wq.submit_in_place(ctx, fill)
    }

    /// `doca_task_submit` of a pooled task ([`Task`](super::Task)): its record is made
    /// from its inputs where the engine keeps it; the task is submitted until
    /// [`Task::complete`](super::Task::complete) delivers it. A refusal leaves the task
    /// as it was (the program's).
    ///
    /// # Safety
    /// `task` is a live task of `ctx`'s task types, held by the caller; the buffers set
    /// in it are live descriptors until it completes.
    #[inline]
    pub unsafe fn submit_task<H: Copy>(
        &self,
        ctx: &Ctx,
        task: NonNull<super::Task<H>>,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        let t = unsafe { task.as_ref() };
        t.set_submitted();
        if let Some(ch) = ctx.shared.channel() {
            // A channel takes its tasks itself: the record is made from the task's table
            // here and handed over.
            let r = (|| {
                if ctx.phase() != CtxPhase::Running {
                    return Err(Error::with_context(
                        ErrorCode::BadState,
                        "the task's context is not running; start it before submitting",
                    ));
                }
                let mut rec = JobRecord::new(0, crate::Data(0));
                // SAFETY: the caller's contract.
                unsafe { t.fill_record(task, &mut rec) }?;
                // SAFETY: the record was made from a live task of this context by its
                // table; its pointers are the program's (the caller's contract).
                unsafe { ch.submit_task(ctx, rec) }.map_err(|(e, mut rec)| {
                    rec.release_bufs();
                    e
                })
            })();
            if r.is_err() {
                t.set_refused();
            }
            return r;
        }
        let r = self.submit_in_place(ctx, |rec| {
            // SAFETY: the caller's contract.
            unsafe { t.fill_record(task, rec) }
        });
        if r.is_err() {
            t.set_refused();
        }
        r
    }

    /// `doca_pe_progress`: delivers the completions at hand (at most as many as were in
    /// flight on entry, so that a handler that submits again cannot keep it busy
    /// forever) and the state changes of stopping contexts. Whether anything happened.
    pub fn progress(&self, mut on: impl FnMut(PeEvent)) -> bool {
        let budget = self.inner.borrow().wq.inflight();
        let n = self.progress_done(budget, |c| on(PeEvent::Task(c)));
        self.progress_rest(budget - n, &mut on) || n > 0
    }

    /// [`progress`](Pe::progress) with the completions of tasks that succeeded (not
    /// graph instances) handed to `on_done` by reference (what the handler leaves in the
    /// completion is dropped after it returns); failed tasks, graph instances and state
    /// changes go to `on` as [`progress`](Pe::progress) gives them. The C face delivers
    /// this way: no copy of a completion is made for its handler.
    pub fn progress_by_ref(
        &self,
        mut on_done: impl FnMut(&mut Completion),
        mut on: impl FnMut(PeEvent),
    ) -> bool {
        let budget = self.inner.borrow().wq.inflight();
        let n = self.progress_done(budget, |mut c| on_done(&mut c));
        let mut rest = |ev| match ev {
            PeEvent::Task(mut c) if c.error.is_none() && c.graph_instance.is_none() => {
                on_done(&mut c)
            }
            ev => on(ev),
        };
        self.progress_rest(budget - n, &mut rest) || n > 0
    }

    /// The common case of progress, with the handler called from one place only (so
    /// that it is inlined): completions of tasks that ran inline and succeeded, at most
    /// `budget`. How many were handed over.
    #[inline(always)]
    fn progress_done(&self, budget: u32, mut on: impl FnMut(Completion)) -> u32 {
        let mut n = 0;
        while n < budget {
            // One borrow per completion: the handler may call back into the engine.
            let c = {
                let mut inner = self.inner();
                if !inner.wq.done_ready() {
                    break;
                }
                inner.wq.take_done()
            };
            on(c);
            n += 1;
        }
        n
    }

    /// The rest of [`progress`](Pe::progress): completions of failed tasks and of
    /// tasks run elsewhere, polled contexts, state changes.
    #[inline(never)]
    fn progress_rest(&self, budget: u32, on: &mut dyn FnMut(PeEvent)) -> bool {
        let mut progressed = false;
        for _ in 0..budget {
            let mut inner = self.inner();
            let r = inner.wq.progress_retrieve();
            drop(inner);
            match r {
                Ok(c) => on(PeEvent::Task(c)),
                Err(RetrieveError::Again) => break,
                Err(RetrieveError::IoFailed(c)) => {
                    // A failed task stops its context, as a hardware error does: what
                    // is still in flight is flushed.
                    let ctx = self
                        .inner
                        .borrow()
                        .ctxs
                        .iter()
                        .find(|x| x.id() == c.record.ctx_id)
                        .filter(|x| x.phase() == CtxPhase::Running)
                        .cloned();
                    if let Some(ctx) = ctx {
                        ctx.shared.set_phase(CtxPhase::Stopping);
                        on(PeEvent::State {
                            ctx,
                            prev: CtxPhase::Running,
                            next: CtxPhase::Stopping,
                        });
                    }
                    on(PeEvent::Task(c));
                }
            }
            progressed = true;
        }
        // Contexts that run their own tasks and events (channels) are polled, with no
        // borrow held: their callbacks may call back into the engine.
        let mut i = 0;
        while self.inner.borrow().channels {
            let ctx = {
                let inner = self.inner.borrow();
                match inner.ctxs.get(i) {
                    Some(c) => c.clone(),
                    None => break,
                }
            };
            i += 1;
            let Some(channel) = ctx.shared.channel() else {
                continue;
            };
            if ctx.phase() == CtxPhase::Idle || ctx.connected_pe() != Some(self.id) {
                continue;
            }
            let mut out = PollOut {
                ctx: &ctx,
                on: &mut *on,
            };
            progressed |= channel.poll(&ctx, &mut out);
        }
        loop {
            let ev = {
                let mut inner = self.inner();
                let Some(ctx) = inner
                    .ctxs
                    .iter()
                    .find(|c| c.phase() == CtxPhase::Stopping && c.connected_pe() == Some(self.id))
                    .cloned()
                else {
                    break;
                };
                if !inner.can_finish(&ctx) {
                    break;
                }
                inner.finish_stop(&ctx);
                PeEvent::State {
                    ctx,
                    prev: CtxPhase::Stopping,
                    next: CtxPhase::Idle,
                }
            };
            progressed = true;
            on(ev);
        }
        progressed
    }

    /// A started graph whose context nodes' contexts run here (the task generation
    /// binds a graph to its engine at `doca_graph_start`).
    pub fn graph_attach(&self, graph: &crate::graph::Graph) -> Result<()> {
        graph.workq_add(&self.inner.borrow().wq)
    }

    /// Undoes [`graph_attach`](Pe::graph_attach) (at `doca_graph_stop`).
    pub fn graph_detach(&self, graph: &crate::graph::Graph) -> Result<()> {
        graph.workq_rm(&self.inner.borrow().wq)
    }

    /// `doca_graph_instance_submit`: one [`PeEvent::Task`] whose completion carries
    /// the instance (and `user_data`) reports it.
    pub fn graph_submit(
        &self,
        instance: crate::graph::GraphInstance,
        user_data: u64,
    ) -> std::result::Result<(), (Error, crate::graph::GraphInstance)> {
        self.inner().wq.graph_submit(instance, user_data)
    }

    /// Jobs waiting on a condition, and jobs on engine threads (for the async face's
    /// waits).
    #[cfg(feature = "tokio")]
    pub(crate) fn queue_stats(&self) -> (u32, u32) {
        let inner = self.inner.borrow();
        (inner.wq.pending_jobs(), inner.wq.engine_inflight())
    }

    /// `doca_pe_get_num_inflight_tasks`.
    pub fn inflight(&self) -> u32 {
        let inner = self.inner.borrow();
        let polled: u32 = inner
            .ctxs
            .iter()
            .filter(|c| c.connected_pe() == Some(self.id))
            .filter_map(|c| c.shared.channel().map(|ch| ch.inflight()))
            .sum();
        inner.wq.inflight() + polled
    }

    /// `doca_ctx_get_num_inflight_tasks`: 0 for a context not started here.
    pub fn ctx_inflight(&self, ctx: &Ctx) -> u32 {
        ctx_inflight(&self.inner.borrow(), ctx)
    }

    /// `doca_pe_get_notification_handle`: an eventfd, the same for the engine's life.
    pub fn notification_handle(&self) -> Result<RawFd> {
        self.inner.borrow().wq.event_handle()
    }

    /// `doca_pe_request_notification`: arms the handle; it becomes readable when a
    /// completion is ready (at once, if one is).
    pub fn request_notification(&self) -> Result<()> {
        self.inner().wq.event_handle_arm()
    }

    /// `doca_pe_clear_notification`: clears the engine's own handle. The handle given
    /// is not checked: DOCA's own event sample passes 0 there.
    pub fn clear_notification(&self, _handle: RawFd) -> Result<()> {
        let mut inner = self.inner();
        let own = inner.wq.event_handle()?;
        inner.wq.event_handle_clear(own)
    }

    /// `doca_pe_destroy`: refused with `InUse` (the engine comes back) while contexts
    /// are connected.
    pub fn destroy(self) -> std::result::Result<(), (Pe, Error)> {
        let n = self.num_contexts();
        if n > 0 {
            return Err((
                self,
                Error::with_context(
                    ErrorCode::InUse,
                    format!("{n} context(s) are still connected; destroy them first"),
                ),
            ));
        }
        Ok(())
    }
}

/// Tasks of `ctx` in flight on this engine (on its work queue, or held by a polled
/// context).
fn ctx_inflight(inner: &PeInner, ctx: &Ctx) -> u32 {
    let own = ctx.shared.channel().map_or(0, |c| c.inflight());
    own + inner
        .wq
        .slot_of(&ctx.shared)
        .map_or(0, |i| inner.wq.attached[i].inflight)
}

fn stopping(inner: &PeInner, ctx: &Ctx) -> Error {
    let inflight = ctx_inflight(inner, ctx);
    Error::with_context(
        ErrorCode::InProgress,
        format!(
            "context is stopping: {inflight} task(s) in flight and {} taken from its pools; progress the engine and free the tasks",
            ctx.tasks_out()
        ),
    )
}

impl PeInner {
    fn can_finish(&self, ctx: &Ctx) -> bool {
        ctx_inflight(self, ctx) == 0 && ctx.tasks_out() == 0
    }

    /// Detaches a context with nothing in flight and stops it.
    fn finish_stop(&mut self, ctx: &Ctx) {
        if let Some(i) = self.wq.slot_of(&ctx.shared) {
            self.wq.detach(i);
        }
        let id = self.wq.id();
        ctx.shared.detach_link(&mut ctx.shared.state(), id);
        if ctx.stop().is_err() {
            // Nothing is attached or pending any more, so the stop cannot be refused;
            // leave the context idle whatever happens.
            ctx.shared.set_phase(CtxPhase::Idle);
        }
    }
}

impl Drop for Pe {
    fn drop(&mut self) {
        // Contexts still connected (a Rust program that drops the engine first) are
        // stopped and disconnected, so that they can be destroyed.
        let inner = self.inner.get_mut();
        for ctx in std::mem::take(&mut inner.ctxs) {
            if ctx.connected_pe() != Some(self.id) {
                continue;
            }
            if ctx.is_started() {
                inner.finish_stop(&ctx);
            }
            let mut st = ctx.shared.state();
            st.pe = None;
            ctx.shared
                .pe_id
                .store(usize::MAX, std::sync::atomic::Ordering::Release);
        }
    }
}

impl Ctx {
    /// Breaks the context's connection to its progress engine (what destroying it does
    /// in DOCA): only while idle (`BadState`).
    pub fn disconnect_pe(&self) -> Result<()> {
        let mut st = self.shared.state();
        if self.phase() != CtxPhase::Idle {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "context is not idle; stop it first",
            ));
        }
        st.pe = None;
        self.shared
            .pe_id
            .store(usize::MAX, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}
