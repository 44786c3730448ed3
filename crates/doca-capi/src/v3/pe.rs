//! `doca_pe.h` and `doca_ctx.h` of the task generation: the progress engine, contexts
//! with their states, and tasks. Everything here turns C arguments into calls on
//! `doca_core::exec::{Pe, TaskPool}`, which hold the logic.

use crate::handles::{Handle, kind};
use crate::{
    DOCA_SUCCESS, Result, doca_data, doca_error_t, err, ffi, ffi_value, free_handle, handle,
    invalid, new_handle, out_ptr, put,
};
use doca_core::exec::{CtxPhase, Pe, PeEvent, TaskPool};
use doca_core::{Ctx, Data, ErrorCode, JobRecord};
use std::cell::{Cell, RefCell};
use std::ffi::c_int;

/// `struct doca_pe`.
pub struct doca_pe {
    pub(crate) pe: Pe,
    /// The contexts connected here, for their state-changed callbacks.
    ctxs: RefCell<Vec<*const doca_ctx3>>,
    /// Graphs created on this engine and not destroyed yet.
    pub(crate) graphs: Cell<u32>,
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

/// What a library does with its tasks: writes the job record a task describes into an
/// empty record ([`JobRecord::new`]), where the engine keeps it.
pub(crate) type RecordFn = unsafe fn(&doca_task, Data, &mut JobRecord) -> Result<()>;

/// What a library does when one of its tasks completed (`failed` or not), before the
/// callback runs: writes results the task promises (values read, state of a partial
/// hash) from the job record it ran as.
pub(crate) type FinishFn = unsafe fn(&doca_task, &JobRecord, bool);

/// What a library whose context runs its own tasks (comch) does on submission: takes
/// the task (`task` is its address, the completion's user data).
pub(crate) type DirectFn = unsafe fn(&doca_task, *mut doca_task) -> Result<()>;

/// One task type of a context: its callbacks, its pool, and how to make its records.
pub(crate) struct TaskConf {
    pub(crate) task_type: u32,
    ok: TaskCb,
    err: TaskCb,
    pool: Option<TaskPool<doca_task>>,
    record: RecordFn,
    finish: Option<FinishFn>,
    direct: Option<DirectFn>,
}

/// `struct doca_ctx` of the task generation: embedded in each library's handle.
pub struct doca_ctx3 {
    pub(crate) ctx: Ctx,
    pe: Cell<*const doca_pe>,
    user_data: Cell<doca_data>,
    state_cb: Cell<StateCb>,
    confs: RefCell<Vec<TaskConf>>,
}

impl std::fmt::Debug for doca_ctx3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.ctx.fmt(f)
    }
}

/// `struct doca_task` (and every library's typed task, which is this struct): a pool
/// slot of its context.
pub struct doca_task {
    pub(crate) ctx: *const doca_ctx3,
    pub(crate) task_type: u32,
    user_data: Cell<doca_data>,
    pub(crate) status: Cell<doca_error_t>,
    /// The library's inputs: buffers (`doca_buf` pointers) and parameters.
    pub(crate) bufs: [Cell<*const crate::mem::doca_buf>; 2],
    pub(crate) params: [Cell<u64>; 3],
    /// A library object the task refers to (a matrix, ...).
    pub(crate) aux: RefCell<Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>>,
    /// Its type's callbacks and hooks, as configured when it was taken from the pool
    /// (the configuration cannot change while a task of the type is taken).
    conf: Cell<Option<Conf>>,
    /// Its type's direct submission, if its context takes tasks itself.
    direct: Cell<Option<DirectFn>>,
    /// Freed by the program while in flight: it goes back to the pool, unreported,
    /// once it completes.
    orphan: Cell<bool>,
}

/// A task type's callbacks and the library's hooks.
type Conf = (TaskCb, TaskCb, RecordFn, Option<FinishFn>);

impl std::fmt::Debug for doca_task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("doca_task")
            .field("task_type", &self.task_type)
            .field("status", &self.status.get())
            .finish_non_exhaustive()
    }
}

// SAFETY: a task is used by one thread at a time (its holder's, or the engine's while
// submitted); the raw pointers are handles the program keeps alive.
unsafe impl Send for doca_task {}

impl Handle for doca_pe {
    type Kind = kind::Boxed;
}
impl Handle for doca_ctx3 {
    type Kind = kind::Borrowed;
}
impl Handle for doca_task {
    type Kind = kind::Borrowed;
}

impl doca_ctx3 {
    pub(crate) fn new(ctx: Ctx) -> doca_ctx3 {
        doca_ctx3 {
            ctx,
            pe: Cell::new(std::ptr::null()),
            user_data: Cell::new(Data(0)),
            state_cb: Cell::new(None),
            confs: RefCell::new(Vec::new()),
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
        task_type: u32,
        ok: TaskCb,
        err_cb: TaskCb,
        num_tasks: u32,
        record: RecordFn,
        finish: Option<FinishFn>,
    ) -> Result<()> {
        if ok.is_none() || err_cb.is_none() {
            return Err(invalid(
                "both the completion and the error callback are needed",
            ));
        }
        if num_tasks == 0 {
            return Err(invalid("the number of tasks must be at least 1"));
        }
        let mut confs = self.confs.borrow_mut();
        if let Some(c) = confs.iter().find(|c| c.task_type == task_type)
            && c.pool.as_ref().is_some_and(|p| p.outstanding() > 0)
        {
            return Err(err(
                ErrorCode::BadState,
                "tasks of this type are still allocated; free them first",
            ));
        }
        self.ctx.set_task_room(task_type, num_tasks)?;
        let me: *const doca_ctx3 = self;
        let pool = TaskPool::new(&self.ctx, num_tasks, |_| doca_task {
            ctx: me,
            task_type,
            user_data: Cell::new(Data(0)),
            status: Cell::new(DOCA_SUCCESS),
            bufs: [Cell::new(std::ptr::null()), Cell::new(std::ptr::null())],
            params: [Cell::new(0), Cell::new(0), Cell::new(0)],
            aux: RefCell::new(None),
            conf: Cell::new(None),
            direct: Cell::new(None),
            orphan: Cell::new(false),
        });
        confs.retain(|c| c.task_type != task_type);
        confs.push(TaskConf {
            task_type,
            ok,
            err: err_cb,
            pool: Some(pool),
            record,
            finish,
            direct: None,
        });
        Ok(())
    }

    /// [`set_conf`](doca_ctx3::set_conf) of a task type the library's context takes
    /// itself (`direct`), outside the engine's work queue and graphs.
    pub(crate) fn set_conf_direct(
        &self,
        task_type: u32,
        ok: TaskCb,
        err_cb: TaskCb,
        num_tasks: u32,
        direct: DirectFn,
        finish: Option<FinishFn>,
    ) -> Result<()> {
        unsafe fn no_record(_: &doca_task, _: Data, _: &mut JobRecord) -> Result<()> {
            Err(err(
                ErrorCode::NotSupported,
                "this task runs on its own context only, not as a graph node",
            ))
        }
        self.set_conf(task_type, ok, err_cb, num_tasks, no_record, finish)?;
        if let Some(c) = self
            .confs
            .borrow_mut()
            .iter_mut()
            .find(|c| c.task_type == task_type)
        {
            c.direct = Some(direct);
        }
        Ok(())
    }

    /// A library's `*_alloc_init`: a task of `task_type` from the pool, with its user
    /// data, filled by `init`.
    pub(crate) fn alloc_task(
        &self,
        task_type: u32,
        user_data: doca_data,
        init: impl FnOnce(&doca_task) -> Result<()>,
    ) -> Result<*mut doca_task> {
        let confs = self.confs.borrow();
        let conf = confs.iter().find(|c| c.task_type == task_type);
        let pool = conf.and_then(|c| c.pool.as_ref()).ok_or_else(|| {
            err(
                ErrorCode::BadState,
                "this task type is not configured: call its *_set_conf before starting the context",
            )
        })?;
        let p = pool.alloc()?;
        // SAFETY: a pool slot just taken: this call has it to itself.
        let t = unsafe { p.as_ref() };
        t.conf.set(conf.map(|c| (c.ok, c.err, c.record, c.finish)));
        t.direct.set(conf.and_then(|c| c.direct));
        t.orphan.set(false);
        t.user_data.set(user_data);
        t.status.set(DOCA_SUCCESS);
        for b in &t.bufs {
            b.set(std::ptr::null());
        }
        for v in &t.params {
            v.set(0);
        }
        *t.aux.borrow_mut() = None;
        if let Err(e) = init(t) {
            let _ = pool.free(p.as_ptr());
            return Err(e);
        }
        Ok(p.as_ptr())
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
        if self.ctx.phase() != CtxPhase::Idle {
            return Err(err(
                ErrorCode::BadState,
                "context is not idle; stop it (and progress until it is idle) before destroying it",
            ));
        }
        if self
            .confs
            .borrow()
            .iter()
            .any(|c| c.pool.as_ref().is_some_and(|p| p.outstanding() > 0))
        {
            return Err(err(
                ErrorCode::InUse,
                "tasks of this context are still allocated; free them first",
            ));
        }
        self.ctx.disconnect_pe()?;
        if let Ok(pe) = self.pe() {
            let me: *const doca_ctx3 = self;
            pe.ctxs.borrow_mut().retain(|c| *c != me);
        }
        self.pe.set(std::ptr::null());
        self.confs.borrow_mut().clear();
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
    let task = c.record.user_data.ptr::<doca_task>();
    let status = c.error.as_ref().map_or(DOCA_SUCCESS, |e| e.raw());
    // SAFETY: the record's user data is the task it was made from (set at submission), a
    // pool slot alive while its context is.
    let t = unsafe { &*task };
    // SAFETY: a task's context outlives its pool.
    let ctx = unsafe { &*t.ctx };
    let Some((ok, err_cb, _, finish)) = t.conf.get() else {
        return;
    };
    if t.orphan.get() {
        // The program gave it back while it was in flight: it is the pool's again now,
        // and nobody is told.
        c.record.release_bufs();
        t.status.set(status);
        t.orphan.set(false);
        let _ = give_back(t, task);
        return;
    }
    if let Some(f) = finish {
        // SAFETY: the library's own hook, on its task and completion.
        unsafe { f(t, &c.record, c.error.is_some()) };
    }
    // The record's buffer references go before the program sees the task.
    c.record.release_bufs();
    t.status.set(status);
    let cb = if status == DOCA_SUCCESS { ok } else { err_cb };
    if let Some(cb) = cb {
        // SAFETY: the program's callback, with the task it submitted.
        unsafe { cb(task, t.user_data.get(), ctx.user_data.get()) };
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
        PeEvent::Task(c) => super::graph::deliver_instance(c),
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

crate::handles::getter!(
    /// `doca_pe_get_num_inflight_tasks`.
    pub unsafe extern "C" fn doca_pe_get_num_inflight_tasks(pe: *const doca_pe, num_inflight_tasks: *mut usize) -> doca_error_t => |p| p.pe.inflight() as usize);

crate::handles::getter!(
    /// `doca_pe_get_notification_handle`.
    pub unsafe extern "C" fn doca_pe_get_notification_handle(pe: *const doca_pe, handle: *mut doca_notification_handle_t) -> doca_error_t => |p| p.pe.notification_handle()?);

crate::handles::call!(handle;
    /// `doca_pe_request_notification`.
    pub unsafe extern "C" fn doca_pe_request_notification(pe: *mut doca_pe) -> doca_error_t => |p| p.pe.request_notification());

crate::handles::call!(handle;
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

crate::handles::getter!(
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

crate::handles::call!(handle;
/// `doca_ctx_set_user_data`.
pub unsafe extern "C" fn doca_ctx_set_user_data(ctx: *mut doca_ctx3, user_data: doca_data) -> doca_error_t => |c| {
    c.user_data.set(user_data);
    Ok(())
});

crate::handles::getter!(
    /// `doca_ctx_get_user_data`.
    pub unsafe extern "C" fn doca_ctx_get_user_data(ctx: *const doca_ctx3, user_data: *mut doca_data) -> doca_error_t => |c| c.user_data.get());

crate::handles::call!(handle;
/// `doca_ctx_set_state_changed_cb`.
pub unsafe extern "C" fn doca_ctx_set_state_changed_cb(ctx: *mut doca_ctx3, cb: doca_ctx_state_changed_callback_t) -> doca_error_t => |c| {
    if c.ctx.phase() != CtxPhase::Idle {
        return Err(err(ErrorCode::BadState, "context is started; set its callback while idle"));
    }
    c.state_cb.set(cb);
    Ok(())
});

// ---- tasks ----

/// Submits a task: the library makes its record, the engine runs it.
#[inline(always)]
fn submit(task: *mut doca_task) -> Result<()> {
    // SAFETY: NULL or a task the program holds.
    let t = unsafe { handle(task, "task") }?;
    // SAFETY: a task's context outlives its pool.
    let ctx = unsafe { &*t.ctx };
    let (_, _, record, _) = t
        .conf
        .get()
        .ok_or_else(|| invalid("task type is not configured on its context"))?;
    if let Some(direct) = t.direct.get() {
        t.status.set(ErrorCode::InProgress as doca_error_t);
        // SAFETY: the library's own hook, on its task.
        let r = unsafe { direct(t, task) };
        if r.is_err() {
            t.status.set(DOCA_SUCCESS);
        }
        return r;
    }
    let pe = ctx.pe()?;
    t.status.set(ErrorCode::InProgress as doca_error_t);
    let r = pe.pe.submit_in_place(&ctx.ctx, |rec| {
        // SAFETY: the task's inputs are handles the program keeps alive while it is in
        // flight (the C contract).
        unsafe { record(t, Data::from_ptr(task), rec) }
    });
    if r.is_err() {
        t.status.set(DOCA_SUCCESS);
    }
    r
}

/// The record of a task given to a graph's context node: the task must be of the
/// node's context.
///
/// # Safety
/// `task` is a task the program holds.
pub(crate) unsafe fn task_record(task: *mut doca_task, ctx: *const doca_ctx3) -> Result<JobRecord> {
    // SAFETY: the caller's contract.
    let t = unsafe { handle(task, "task") }?;
    if !std::ptr::eq(t.ctx, ctx) {
        return Err(err(
            ErrorCode::NotPermitted,
            "the task is not of the node's context",
        ));
    }
    let (_, _, record, _) = t
        .conf
        .get()
        .ok_or_else(|| invalid("task type is not configured on its context"))?;
    let mut rec = JobRecord::new(0, Data(0));
    // SAFETY: the task's inputs are handles the program keeps alive while it is in
    // flight (the C contract).
    unsafe { record(t, Data::from_ptr(task), &mut rec) }?;
    Ok(rec)
}

/// Marks a task given to a submitted graph instance.
///
/// # Safety
/// `task` is a live task.
pub(crate) unsafe fn task_set_submitted(task: *mut doca_task) {
    // SAFETY: the caller's contract.
    unsafe { &*task }
        .status
        .set(ErrorCode::InProgress as doca_error_t);
}

/// A graph's task completed with `status`, as the job `record` (when it ran): the
/// library's hook writes what the task promises.
///
/// # Safety
/// `task` is a live task.
pub(crate) unsafe fn task_set_done(
    task: *mut doca_task,
    status: doca_error_t,
    record: Option<&JobRecord>,
) {
    // SAFETY: the caller's contract.
    let t = unsafe { &*task };
    if let (Some(rec), Some((_, _, _, Some(f)))) = (record, t.conf.get()) {
        // SAFETY: the library's own hook, on its task and the record it ran as.
        unsafe { f(t, rec, status != DOCA_SUCCESS) };
    }
    t.status.set(status);
    if t.orphan.replace(false) {
        // Freed by the program while its graph ran.
        let _ = give_back(t, task);
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

/// `doca_task_free`: back to its context's pool.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_free(task: *mut doca_task) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        if t.status.get() == ErrorCode::InProgress as doca_error_t {
            // Freed in flight (DOCA's secure channel does this with receives still
            // posted): it goes back to the pool once it completes, unreported.
            t.orphan.set(true);
            return Ok(());
        }
        give_back(t, task)
    })
}

/// Returns a task to its context's pool.
fn give_back(t: &doca_task, task: *mut doca_task) -> Result<()> {
    // SAFETY: a task's context outlives its pool.
    let ctx = unsafe { &*t.ctx };
    *t.aux.borrow_mut() = None;
    let confs = ctx.confs.borrow();
    let pool = confs
        .iter()
        .find(|c| c.task_type == t.task_type)
        .and_then(|c| c.pool.as_ref())
        .ok_or_else(|| invalid("task's pool is gone"))?;
    pool.free(task)
}

/// `doca_task_get_status`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_get_status(task: *const doca_task) -> doca_error_t {
    ffi_value(ErrorCode::InvalidValue as doca_error_t, || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.status.get())
    })
}

/// `doca_task_set_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_set_user_data(task: *mut doca_task, user_data: doca_data) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        unsafe { handle(task, "task") }?.user_data.set(user_data);
        Ok(())
    })
}

/// `doca_task_get_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_get_user_data(task: *const doca_task) -> doca_data {
    ffi_value(Data(0), || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.user_data.get())
    })
}

/// `doca_task_get_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_get_ctx(task: *const doca_task) -> *mut doca_ctx3 {
    ffi_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.ctx as *mut doca_ctx3)
    })
}
