//! `doca_pe.h` and `doca_ctx.h` of the task generation: the progress engine, contexts
//! with their states, and tasks. Everything here turns C arguments into calls on
//! `doca_core::exec::{Pe, TaskPool}`, which hold the logic.

use crate::common::handles::{Handle, kind};
use crate::common::{
    DOCA_SUCCESS, Result, doca_data, doca_error_t, err, ffi, ffi_value, free_handle, handle,
    invalid, new_handle, out_ptr, put,
};
use doca_core::exec::{CtxPhase, Pe, PeEvent, Task, TaskSpec, TaskTypes};
use doca_core::{Ctx, Data, ErrorCode, JobRecord};
use std::cell::{Cell, RefCell};
use std::ffi::c_int;
use std::ptr::NonNull;

/// `struct doca_pe`.
pub struct doca_pe {
    pub(crate) pe: Pe,
    /// The contexts connected here, for their state-changed callbacks.
    ctxs: RefCell<Vec<*const doca_ctx3>>,
    /// Graphs created on this engine and not destroyed yet.
    pub(crate) graphs: Cell<u32>,
    /// Where a graph instance's completion goes (set by the first graph created here).
    pub(crate) graph_done: Cell<Option<fn(doca_core::Completion)>>,
}

impl std::fmt::Debug for doca_pe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.pe.fmt(f)
    }
}

/// `doca_task_completion_cb_t` and every library's task callback type: the task pointer
/// is the library's typed task, which is the generic task here.
pub type TaskCb = Option<unsafe extern "C" fn(*mut doca_task, doca_data, doca_data)>;

/// `doca_ctx_state_changed_callback_t`.
pub type StateCb = Option<unsafe extern "C" fn(doca_data, *mut doca_ctx3, c_int, c_int)>;
/// `doca_ctx_state_changed_callback_t`, by its C name.
pub type doca_ctx_state_changed_callback_t = StateCb;
/// `enum doca_ctx_states`.
pub type doca_ctx_states = c_int;
/// `enum doca_pe_event_mode`.
pub type doca_pe_event_mode = c_int;
/// `doca_notification_handle_t`: a file descriptor.
pub type doca_notification_handle_t = c_int;

/// What the program is told a task completed with, fixed by its type's `*_set_conf`:
/// its two callbacks and its context.
#[derive(Clone, Copy, Debug)]
pub struct Conf3 {
    ok: TaskCb,
    err: TaskCb,
    ctx: *const doca_ctx3,
}

/// `struct doca_ctx` of the task generation: embedded in each library's handle.
pub struct doca_ctx3 {
    pub(crate) ctx: Ctx,
    pe: Cell<*const doca_pe>,
    pub(crate) user_data: Cell<doca_data>,
    state_cb: Cell<StateCb>,
    /// The configured task types and their pools (the core's task life cycle).
    tasks: TaskTypes<Conf3>,
}

impl std::fmt::Debug for doca_ctx3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.ctx.fmt(f)
    }
}

/// `struct doca_task` (and every library's typed task, which is this struct): a pooled
/// task of the core's task life cycle.
pub type doca_task = Task<Conf3>;

/// The context a task belongs to.
pub(crate) fn task_ctx(t: &doca_task) -> *const doca_ctx3 {
    t.handler().map_or(std::ptr::null(), |h| h.ctx)
}

impl Handle for doca_pe {
    type Kind = kind::Boxed;
}
impl Handle for doca_ctx3 {
    type Kind = kind::Borrowed;
}
impl Handle for Task<Conf3> {
    type Kind = kind::Borrowed;
}

impl doca_ctx3 {
    pub(crate) fn new(ctx: Ctx) -> doca_ctx3 {
        doca_ctx3 {
            tasks: TaskTypes::unboxed(&ctx),
            ctx,
            pe: Cell::new(std::ptr::null()),
            user_data: Cell::new(Data(0)),
            state_cb: Cell::new(None),
        }
    }

    fn pe(&self) -> Result<&doca_pe> {
        let p = self.pe.get();
        // SAFETY: a connected context's engine lives until the context is destroyed
        // (the engine refuses to go while contexts are connected).
        unsafe { p.as_ref() }.ok_or_else(|| {
            err(
                ErrorCode::NotConnected,
                "context is not connected to a progress engine (doca_pe_connect_ctx)",
            )
        })
    }

    /// A library's `*_set_conf`: the callbacks and pool size of one task type, only
    /// while idle.
    pub(crate) fn set_conf(
        &self,
        spec: &'static TaskSpec,
        ok: TaskCb,
        err_cb: TaskCb,
        num_tasks: u32,
    ) -> Result<()> {
        if ok.is_none() || err_cb.is_none() {
            return Err(invalid(
                "both the completion and the error callback are needed",
            ));
        }
        let conf = Conf3 {
            ok,
            err: err_cb,
            ctx: self,
        };
        self.tasks.set_conf(spec, conf, num_tasks)
    }

    /// A library's `*_alloc_init`: a task of `spec`'s type from the pool, with its
    /// user data, filled by `init`.
    pub(crate) fn alloc_task(
        &self,
        spec: &'static TaskSpec,
        user_data: doca_data,
        init: impl FnOnce(&doca_task) -> Result<()>,
    ) -> Result<*mut doca_task> {
        Ok(self.tasks.alloc(spec, user_data, init)?.as_ptr())
    }

    fn report_state(&self, prev: CtxPhase, next: CtxPhase) {
        if let Some(cb) = self.state_cb.get() {
            let me = self as *const doca_ctx3 as *mut doca_ctx3;
            // SAFETY: the program's callback, with its own user data and this context.
            unsafe { cb(self.user_data.get(), me, prev as c_int, next as c_int) };
        }
    }

    /// Before a library destroys its instance: only while idle; disconnects it from its
    /// engine.
    pub(crate) fn release(&self) -> Result<()> {
        self.tasks.clear()?;
        self.ctx.disconnect_pe()?;
        if let Ok(pe) = self.pe() {
            let me: *const doca_ctx3 = self;
            pe.ctxs.borrow_mut().retain(|c| *c != me);
        }
        self.pe.set(std::ptr::null());
        Ok(())
    }

    /// Destroys the context of a library that took its device at creation: idle and
    /// disconnected first, then without its device.
    pub(crate) fn destroy(&self) -> Result<()> {
        self.release()?;
        if let Some(d) = self.ctx.dev() {
            self.ctx.dev_rm(&d)?;
        }
        self.ctx.clone().destroy().map_err(|(_, e)| e)
    }
}

// ---- the engine ----

/// `doca_pe_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_pe_create(pe: *mut *mut doca_pe) -> doca_error_t {
    ffi(|| {
        new_handle(pe, "pe", || {
            Ok(doca_pe {
                pe: Pe::new()?,
                ctxs: RefCell::new(Vec::new()),
                graphs: Cell::new(0),
                graph_done: Cell::new(None),
            })
        })
    })
}

/// `doca_pe_destroy`: `IN_USE` while contexts are connected.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_pe_destroy(pe: *mut doca_pe) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live engine.
        let p = unsafe { handle(pe, "pe") }?;
        let n = p.pe.num_contexts();
        if n > 0 {
            return Err(err(
                ErrorCode::InUse,
                format!("{n} context(s) are still connected; destroy them first"),
            ));
        }
        if p.graphs.get() > 0 {
            return Err(err(
                ErrorCode::InUse,
                format!(
                    "{} graph(s) run on this engine; destroy them first",
                    p.graphs.get()
                ),
            ));
        }
        // SAFETY: a live boxed handle, freed once.
        unsafe { free_handle(pe, "pe") }
    })
}

/// `doca_pe_connect_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_pe_connect_ctx(
    pe: *mut doca_pe,
    ctx: *mut doca_ctx3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (p, c) = unsafe { (handle(pe, "pe")?, handle(ctx, "ctx")?) };
        p.pe.connect(&c.ctx)?;
        c.pe.set(p);
        p.ctxs.borrow_mut().push(c);
        Ok(())
    })
}

/// Delivers a task's completion to its callback (the completion is the engine's, read
/// where it lies; its buffers are given back before the callback).
#[inline(always)]
fn deliver_task(c: &mut doca_core::Completion) {
    // SAFETY: the record's user data is the task it was made from (set at submission),
    // a pool slot alive while its context is; its pointer parameters are the program's
    // (the C contract).
    let Some(d) = (unsafe { Task::<Conf3>::complete(c) }) else {
        return;
    };
    let cb = if d.status == DOCA_SUCCESS {
        d.handler.ok
    } else {
        d.handler.err
    };
    if let Some(cb) = cb {
        // SAFETY: a task's context outlives its pool.
        let ctx = unsafe { &*d.handler.ctx };
        // SAFETY: the program's callback, with the task it submitted.
        unsafe { cb(d.task.as_ptr(), d.task().user_data(), ctx.user_data.get()) };
    }
}

/// Delivers what the engine hands over: a task's completion to its callback, a state
/// change to its context's callback.
fn deliver(p: &doca_pe, ev: PeEvent) {
    match ev {
        PeEvent::Task(mut c) if c.graph_instance.is_none() => deliver_task(&mut c),
        ev => deliver_other(p, ev),
    }
}

/// [`deliver`] of graph instances and state changes.
#[inline(never)]
fn deliver_other(p: &doca_pe, ev: PeEvent) {
    match ev {
        PeEvent::Task(c) => {
            if let Some(done) = p.graph_done.get() {
                done(c)
            }
        }
        PeEvent::State { ctx, prev, next } => {
            let found = p
                .ctxs
                .borrow()
                .iter()
                .copied()
                // SAFETY: connected contexts are live (they leave the list first).
                .find(|c| unsafe { &**c }.ctx == ctx);
            if let Some(c) = found {
                // SAFETY: as above.
                unsafe { &*c }.report_state(prev, next);
            }
        }
    }
}

/// `doca_pe_progress`: 1 when a task completed or a context changed state, else 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_pe_progress(pe: *mut doca_pe) -> u8 {
    ffi_value(0, || {
        // SAFETY: NULL or a live engine.
        let p = unsafe { handle(pe, "pe") }?;
        Ok(u8::from(
            p.pe.progress_by_ref(deliver_task, |ev| deliver(p, ev)),
        ))
    })
}

crate::common::handles::getter!(
    /// `doca_pe_get_num_inflight_tasks`.
    pub unsafe extern "C" fn doca_pe_get_num_inflight_tasks(pe: *const doca_pe, num_inflight_tasks: *mut usize) -> doca_error_t => |p| p.pe.inflight() as usize);

crate::common::handles::getter!(
    /// `doca_pe_get_notification_handle`.
    pub unsafe extern "C" fn doca_pe_get_notification_handle(pe: *const doca_pe, handle: *mut doca_notification_handle_t) -> doca_error_t => |p| p.pe.notification_handle()?);

crate::common::handles::call!(handle;
    /// `doca_pe_request_notification`.
    pub unsafe extern "C" fn doca_pe_request_notification(pe: *mut doca_pe) -> doca_error_t => |p| p.pe.request_notification());

crate::common::handles::call!(handle;
    /// `doca_pe_clear_notification`.
    pub unsafe extern "C" fn doca_pe_clear_notification(pe: *mut doca_pe, notification: doca_notification_handle_t) -> doca_error_t => |p| p.pe.clear_notification(notification));

/// `enum doca_pe_event_mode`: every mode progresses every connected context here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_pe_set_event_mode(
    pe: *mut doca_pe,
    mode: doca_pe_event_mode,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live engine.
        unsafe { handle(pe, "pe") }?;
        match mode {
            0 | 1 => Ok(()),
            m => Err(invalid(format!(
                "event mode {m} is not DOCA_PE_EVENT_MODE_PROGRESS_SELECTIVE (0) or _PROGRESS_ALL (1)"
            ))),
        }
    })
}

// ---- contexts ----

/// `doca_ctx_start`.
#[unsafe(export_name = "doca3__ctx_start")]
pub unsafe extern "C" fn doca_ctx_start(ctx: *mut doca_ctx3) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live context.
        let c = unsafe { handle(ctx, "ctx") }?;
        match c.pe()?.pe.start_ctx(&c.ctx) {
            Ok(()) => {
                c.report_state(CtxPhase::Idle, CtxPhase::Running);
                Ok(())
            }
            Err(e) if e.code() == ErrorCode::InProgress => {
                // It runs once it is connected: a later progress reports that.
                c.report_state(CtxPhase::Idle, CtxPhase::Starting);
                Err(e)
            }
            Err(e) => Err(e),
        }
    })
}

/// `doca_ctx_stop`: `IN_PROGRESS` while tasks are in flight or allocated (the context
/// is stopping; progress reports it idle).
#[unsafe(export_name = "doca3__ctx_stop")]
pub unsafe extern "C" fn doca_ctx_stop(ctx: *mut doca_ctx3) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live context.
        let c = unsafe { handle(ctx, "ctx") }?;
        let before = c.ctx.phase();
        match c.pe()?.pe.stop_ctx(&c.ctx) {
            Ok(()) => {
                if before != CtxPhase::Idle {
                    c.report_state(before, CtxPhase::Idle);
                }
                Ok(())
            }
            Err(e) if e.code() == ErrorCode::InProgress => {
                if matches!(before, CtxPhase::Running | CtxPhase::Starting) {
                    c.report_state(before, CtxPhase::Stopping);
                }
                Err(e)
            }
            Err(e) => Err(e),
        }
    })
}

crate::common::handles::getter!(
    /// `doca_ctx_get_state`.
    pub unsafe extern "C" fn doca_ctx_get_state(ctx: *const doca_ctx3, state: *mut doca_ctx_states) -> doca_error_t => |c| c.ctx.phase() as doca_ctx_states);

/// `doca_ctx_get_num_inflight_tasks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ctx_get_num_inflight_tasks(
    ctx: *const doca_ctx3,
    num_inflight_tasks: *mut usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live context.
        let c = unsafe { handle(ctx, "ctx") }?;
        let o = out_ptr(num_inflight_tasks, "num_inflight_tasks")?;
        let n = c.pe().map_or(0, |p| p.pe.ctx_inflight(&c.ctx)) as usize;
        // SAFETY: output checked.
        unsafe { put(o, n) };
        Ok(())
    })
}

crate::common::handles::call!(handle;
/// `doca_ctx_set_user_data`.
pub unsafe extern "C" fn doca_ctx_set_user_data(ctx: *mut doca_ctx3, user_data: doca_data) -> doca_error_t => |c| {
    c.user_data.set(user_data);
    Ok(())
});

crate::common::handles::getter!(
    /// `doca_ctx_get_user_data`.
    pub unsafe extern "C" fn doca_ctx_get_user_data(ctx: *const doca_ctx3, user_data: *mut doca_data) -> doca_error_t => |c| c.user_data.get());

crate::common::handles::call!(handle;
/// `doca_ctx_set_state_changed_cb`.
pub unsafe extern "C" fn doca_ctx_set_state_changed_cb(ctx: *mut doca_ctx3, cb: doca_ctx_state_changed_callback_t) -> doca_error_t => |c| {
    if c.ctx.phase() != CtxPhase::Idle {
        return Err(err(ErrorCode::BadState, "context is started; set its callback while idle"));
    }
    c.state_cb.set(cb);
    Ok(())
});

/// `doca_ctx_flush_tasks`: every submit is carried out at once, so nothing is left to
/// flush; an idle context (or NULL) is reported, as DOCA requires a started one.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ctx_flush_tasks(ctx: *mut doca_ctx3) {
    ffi_value((), || {
        // SAFETY: NULL or a live context.
        let c = unsafe { handle(ctx, "ctx") }?;
        if c.ctx.phase() == CtxPhase::Idle {
            return Err(err(
                ErrorCode::BadState,
                "doca_ctx_flush_tasks: the context is idle (start it first)",
            ));
        }
        Ok(())
    })
}

/// How many completion vectors a device has: one (every completion of a context
/// reaches its progress engine's one notification handle).
const COMPLETION_VECTORS: u32 = 1;

/// `doca_ctx_cap_get_num_completion_vectors`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ctx_cap_get_num_completion_vectors(
    devinfo: *const crate::v22::dev::doca_devinfo,
    num_comp_vectors: *mut u32,
) -> doca_error_t {
    crate::v22::libs::devinfo_value(devinfo, num_comp_vectors, |_| Ok(COMPLETION_VECTORS))
}

crate::common::handles::call!(handle;
/// `doca_ctx_set_completion_vector`: vector 0 (the only one), while idle.
pub unsafe extern "C" fn doca_ctx_set_completion_vector(ctx: *mut doca_ctx3, comp_vector: u32) -> doca_error_t => |c| {
    if c.ctx.phase() != CtxPhase::Idle {
        return Err(err(ErrorCode::BadState, "context is started; set its completion vector while idle"));
    }
    if comp_vector >= COMPLETION_VECTORS {
        return Err(invalid(format!(
            "completion vector {comp_vector} does not exist (the device has {COMPLETION_VECTORS}: doca_ctx_cap_get_num_completion_vectors)"
        )));
    }
    Ok(())
});

/// `doca_ctx_set_datapath_on_dpa`: there is no DPA to run a data path on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ctx_set_datapath_on_dpa(
    ctx: *mut doca_ctx3,
    dpa_dev: *mut crate::v22::mem::doca_dpa,
) -> doca_error_t {
    datapath_elsewhere(ctx, dpa_dev.is_null(), "a DPA")
}

/// `doca_ctx_set_datapath_on_gpu`: there is no GPU to run a data path on.
#[unsafe(export_name = "doca3__ctx_set_datapath_on_gpu")]
pub unsafe extern "C" fn doca_ctx_set_datapath_on_gpu(
    ctx: *mut doca_ctx3,
    gpu_dev: *mut crate::v22::mem::doca_gpu,
) -> doca_error_t {
    datapath_elsewhere(ctx, gpu_dev.is_null(), "a GPU")
}

fn datapath_elsewhere(ctx: *mut doca_ctx3, dev_is_null: bool, what: &str) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live context.
        let c = unsafe { handle(ctx, "ctx") }?;
        if dev_is_null {
            return Err(invalid(format!("{what} device is NULL")));
        }
        if c.ctx.phase() != CtxPhase::Idle {
            return Err(err(ErrorCode::BadState, "context is started"));
        }
        Err(err(
            ErrorCode::NotSupported,
            format!("no data path runs on {what} here: contexts run on the CPU"),
        ))
    })
}

// ---- tasks ----

/// Submits a task: its record is made from its inputs, the engine runs it (or its
/// context takes it, for a context with its own tasks).
#[inline(always)]
fn submit(task: *mut doca_task) -> Result<()> {
    // SAFETY: NULL or a task the program holds.
    let t = unsafe { handle(task, "task") }?;
    let conf = t
        .handler()
        .ok_or_else(|| invalid("task type is not configured on its context"))?;
    // SAFETY: a task's context outlives its pool.
    let ctx = unsafe { &*conf.ctx };
    let pe = ctx.pe()?;
    // SAFETY: checked non-NULL above; the task's buffers are handles the program keeps
    // alive while it is in flight (the C contract).
    unsafe { pe.pe.submit_task(&ctx.ctx, NonNull::new_unchecked(task)) }
}

/// The record of a task given to a graph's context node: the task must be of the
/// node's context.
///
/// # Safety
/// `task` is a task the program holds.
pub(crate) unsafe fn task_record(task: *mut doca_task, ctx: *const doca_ctx3) -> Result<JobRecord> {
    // SAFETY: the caller's contract.
    let t = unsafe { handle(task, "task") }?;
    let conf = t
        .handler()
        .ok_or_else(|| invalid("task type is not configured on its context"))?;
    if !std::ptr::eq(conf.ctx, ctx) {
        return Err(err(
            ErrorCode::NotPermitted,
            "the task is not of the node's context",
        ));
    }
    // SAFETY: a task's context outlives its pool.
    if unsafe { &*conf.ctx }.ctx.is_channel() {
        return Err(err(
            ErrorCode::NotSupported,
            "this task runs on its own context only, not as a graph node",
        ));
    }
    let mut rec = JobRecord::new(0, Data(0));
    // SAFETY: checked non-NULL; the task's inputs are handles the program keeps alive
    // while it is in flight (the C contract).
    unsafe { t.fill_record(NonNull::new_unchecked(task), &mut rec) }?;
    Ok(rec)
}

/// Marks a task given to a submitted graph instance.
///
/// # Safety
/// `task` is a live task.
pub(crate) unsafe fn task_set_submitted(task: *mut doca_task) {
    // SAFETY: the caller's contract.
    unsafe { &*task }.set_submitted();
}

/// A graph's task completed with `status`, as the job `record` (when it ran): the
/// table's write-backs and the library's hook run; a task freed while its graph ran
/// goes back to its pool.
///
/// # Safety
/// `task` is a live task; the program's pointers in it are valid (the C contract).
pub(crate) unsafe fn task_set_done(
    task: *mut doca_task,
    status: doca_error_t,
    record: Option<&JobRecord>,
) {
    // SAFETY: the caller's contract.
    unsafe {
        let _ = (*task).finish(NonNull::new_unchecked(task), status, record);
    }
}

/// `doca_task_submit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_submit(task: *mut doca_task) -> doca_error_t {
    ffi(|| submit(task))
}

/// `doca_task_try_submit`: the task is checked before it is submitted (every
/// submission is, here).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_try_submit(task: *mut doca_task) -> doca_error_t {
    ffi(|| submit(task))
}

/// `doca_task_submit_ex`: flags ask for batching hints, which change nothing here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_submit_ex(task: *mut doca_task, flags: u32) -> doca_error_t {
    ffi(|| {
        if flags > 3 {
            return Err(invalid(format!(
                "submit flags {flags:#x} are not DOCA_TASK_SUBMIT_FLAG_NONE, _FLUSH or _OPTIMIZE_REPORTS"
            )));
        }
        submit(task)
    })
}

/// `doca_task_free`: back to its context's pool (a task in flight goes back once it
/// completes, unreported: DOCA's secure channel frees receives still posted).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_free(task: *mut doca_task) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        // SAFETY: a task's context outlives its pool.
        let ctx = unsafe { task_ctx(t).as_ref() }
            .ok_or_else(|| invalid("task is not a task of any context"))?;
        // SAFETY: checked non-NULL above.
        ctx.tasks.free(unsafe { NonNull::new_unchecked(task) })
    })
}

/// `doca_task_get_status`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_get_status(task: *const doca_task) -> doca_error_t {
    ffi_value(ErrorCode::InvalidValue as doca_error_t, || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.status())
    })
}

/// `doca_task_set_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_set_user_data(task: *mut doca_task, user_data: doca_data) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        unsafe { handle(task, "task") }?.set_user_data(user_data);
        Ok(())
    })
}

/// `doca_task_get_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_get_user_data(task: *const doca_task) -> doca_data {
    ffi_value(Data(0), || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.user_data())
    })
}

/// `doca_task_get_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_get_ctx(task: *const doca_task) -> *mut doca_ctx3 {
    ffi_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or a task the program holds.
        Ok(task_ctx(unsafe { handle(task, "task") }?) as *mut doca_ctx3)
    })
}
