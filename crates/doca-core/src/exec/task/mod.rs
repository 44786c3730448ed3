//! Task types as data, and the task generation's life cycle.
//!
//! Each library declares its task types once, in a task table (see
//! `docs/adding-a-task-type.md`): for each type a [`TaskSpec`] says which record slots
//! hold its buffers and parameters, which library object it keeps alive, and what a
//! completed task writes back to the program. The engine's record layout, the C faces'
//! translations (a DOCA 2.2 job struct, a 3.x task) and the Rust names of the slots all
//! come from that one declaration, so no two of them can disagree about a slot.
//!
//! The task generation's life cycle lives here too, for the Rust face and the C face
//! alike: [`TaskTypes`] holds a context's configured task types and their pools,
//! [`Task`] is one pooled task (its inputs in the record's layout, its user data, its
//! status), submitted with [`Pe::submit_task`](super::Pe::submit_task) and completed
//! with [`Task::complete`], which also gives back a task its program freed while it was
//! in flight.
//!
//! ```
//! use doca_core::exec::{Pe, PeEvent, Task, TaskTypes};
//! use doca_core::{devinfo_list, Data};
//!
//! # fn main() -> doca_core::Result<()> {
//! let dev = devinfo_list()?[0].open()?;
//! let se = doca_core::SyncEvent::new();
//! se.publisher_add_location_cpu(&dev)?;
//! se.subscriber_add_location_cpu(&dev)?;
//! // The handler kind is the program's choice: here, a plain function.
//! type Done = fn(&Task<Handler>, i32);
//! #[derive(Clone, Copy)]
//! struct Handler(Done);
//! fn count(t: &Task<Handler>, status: i32) {
//!     assert_eq!(status, 0);
//!     t.state.set(t.state.get() + 1);
//! }
//! let types = TaskTypes::new(se.as_ctx());
//! let spec = &doca_core::sync_event::tasks::NOTIFY_ADD;
//! types.set_conf(spec, Handler(count), 4)?;
//! let pe = Pe::new()?;
//! pe.connect(se.as_ctx())?;
//! pe.start_ctx(se.as_ctx())?;
//! let task = types.alloc(spec, Data(9), |t| {
//!     t.params[0].set(5); // inc_val
//!     Ok(())
//! })?;
//! // SAFETY: the task has no buffers.
//! unsafe { pe.submit_task(se.as_ctx(), task) }?;
//! while pe.progress(|ev| {
//!     if let PeEvent::Task(mut c) = ev {
//!         // SAFETY: the completion is of a task submitted above.
//!         if let Some(d) = unsafe { Task::<Handler>::complete(&mut c) } {
//!             (d.handler.0)(d.task(), d.status);
//!         }
//!     }
//! }) {}
//! // SAFETY: a task of `types`, not in flight.
//! assert_eq!(unsafe { task.as_ref() }.state.get(), 1);
//! types.free(task)?;
//! pe.stop_ctx(se.as_ctx())?;
//! # Ok(())
//! # }
//! ```

use super::ctx::{Ctx, CtxPhase};
use super::job::{Completion, JobRecord, MAX_JOB_BUFS};
use crate::error::{Error, ErrorCode, Result};
use crate::lock;
use crate::memory::BufDesc;
use crate::types::Data;
use std::any::Any;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::fmt;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// A task's inputs, in its record's layout, plus the library's own state of the task.
/// Used by one thread at a time (the task's holder, or the engine while submitted).
pub struct TaskInputs {
    /// Buffer slots (descriptors the program keeps alive while the task is in flight).
    pub bufs: [Cell<*const BufDesc>; MAX_JOB_BUFS],
    /// Parameter slots.
    pub params: [Cell<u64>; MAX_JOB_PARAMS],
    /// The library object kept alive while in flight (a matrix, a partial session).
    pub aux: RefCell<Option<Arc<dyn Any + Send + Sync>>>,
    /// The library's own state of this task, not part of its record (a partial hash's
    /// progress).
    pub state: Cell<u64>,
}

impl Default for TaskInputs {
    fn default() -> TaskInputs {
        TaskInputs::new()
    }
}

impl TaskInputs {
    fn new() -> TaskInputs {
        TaskInputs {
            bufs: [const { Cell::new(std::ptr::null()) }; MAX_JOB_BUFS],
            params: [const { Cell::new(0) }; MAX_JOB_PARAMS],
            aux: RefCell::new(None),
            state: Cell::new(0),
        }
    }

    fn clear(&self) {
        for b in &self.bufs {
            b.set(std::ptr::null());
        }
        for p in &self.params {
            p.set(0);
        }
        *self.aux.borrow_mut() = None;
        self.state.set(0);
    }
}

impl fmt::Debug for TaskInputs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskInputs")
            .field("params", &self.params)
            .field("state", &self.state.get())
            .finish_non_exhaustive()
    }
}

/// The status of a task submitted and not yet completed (`DOCA_ERROR_IN_PROGRESS`).
const IN_PROGRESS: i32 = ErrorCode::InProgress as i32;

/// A task of the task generation: a slot of its context's pool for its type. `H` is
/// what the program is told with (the C face: its callbacks), fixed by `set_conf`.
pub struct Task<H> {
    spec: &'static TaskSpec,
    types: *const TaskTypes<H>,
    inputs: TaskInputs,
    user_data: Cell<Data>,
    /// `doca_error_t`: 0 once succeeded (and before the first submission),
    /// `IN_PROGRESS` while submitted, the failure's code once failed.
    status: Cell<i32>,
    handler: Cell<Option<H>>,
    /// Freed by the program while in flight: back to the pool, unreported, once it
    /// completes.
    orphan: Cell<bool>,
}

// SAFETY: a task is used by one thread at a time (its holder's, or the engine's while
// submitted); its raw pointers are descriptors the program keeps alive and the task
// set it belongs to, which outlives it.
unsafe impl<H: Send> Send for Task<H> {}

impl<H> fmt::Debug for Task<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Task")
            .field("type", &self.spec.name)
            .field("status", &self.status.get())
            .finish_non_exhaustive()
    }
}

impl<H> std::ops::Deref for Task<H> {
    type Target = TaskInputs;
    fn deref(&self) -> &TaskInputs {
        &self.inputs
    }
}

impl<H: Copy> Task<H> {
    /// Its task type.
    pub fn spec(&self) -> &'static TaskSpec {
        self.spec
    }

    /// Its inputs.
    pub fn inputs(&self) -> &TaskInputs {
        &self.inputs
    }

    /// Its user data.
    pub fn user_data(&self) -> Data {
        self.user_data.get()
    }

    /// Sets its user data.
    pub fn set_user_data(&self, d: Data) {
        self.user_data.set(d);
    }

    /// Its status (`doca_task_get_status`): 0 on success, `DOCA_ERROR_IN_PROGRESS`
    /// while submitted, the failure's code once failed.
    pub fn status(&self) -> i32 {
        self.status.get()
    }

    /// Whether it is submitted and not completed yet.
    pub fn is_submitted(&self) -> bool {
        self.status.get() == IN_PROGRESS
    }

    /// What the program is told with, as configured when it was taken from the pool.
    #[inline]
    pub fn handler(&self) -> Option<H> {
        self.handler.get()
    }

    /// Refuses a change while submitted (`BadState`), then asks the library
    /// ([`TaskHooks::before_set`]).
    pub fn check_settable(&self, input: &'static str) -> Result<()> {
        if self.is_submitted() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the task is submitted; change it once it has completed",
            ));
        }
        self.spec
            .hooks
            .before_set
            .map_or(Ok(()), |f| f(&self.inputs, input))
    }

    /// Sets parameter `slot` after the library's check.
    pub fn set_param(&self, slot: usize, value: u64) -> Result<()> {
        self.spec.check_param(slot, value)?;
        self.inputs.params[slot].set(value);
        Ok(())
    }

    /// The record this task submits as, written into `out` (an empty record); its user
    /// data is `me`, the task's address.
    ///
    /// # Safety
    /// As [`TaskSpec::fill`]; `me` is this task.
    #[inline]
    pub unsafe fn fill_record(&self, me: NonNull<Task<H>>, out: &mut JobRecord) -> Result<()> {
        let spec = self.spec;
        let ud = Data::from_ptr(me.as_ptr());
        if spec.plain {
            // SAFETY: the caller's contract.
            return unsafe { spec.fill(&self.inputs, spec.job_type, ud, out) };
        }
        let job_type = match spec.hooks.job_type {
            Some(f) => f(&self.inputs)?,
            None => spec.job_type,
        };
        // SAFETY: the caller's contract.
        unsafe { spec.fill(&self.inputs, job_type, ud, out) }?;
        match spec.hooks.prepare {
            Some(f) => f(&self.inputs, out),
            None => Ok(()),
        }
    }

    /// The task is submitted (by the engine, or as a graph's node).
    #[inline]
    pub fn set_submitted(&self) {
        self.status.set(IN_PROGRESS);
    }

    /// A submission was refused: the task is the program's again, unchanged.
    #[inline]
    pub fn set_refused(&self) {
        self.status.set(0);
    }

    /// The task completed with `status` as `record` (when it ran): the table's
    /// write-backs and the library's finish hook run, and a task the program freed
    /// while in flight goes back to its pool. Whether the program is to be told.
    ///
    /// # Safety
    /// As [`TaskSpec::write_back`].
    #[inline]
    pub unsafe fn finish(
        &self,
        me: NonNull<Task<H>>,
        status: i32,
        record: Option<&JobRecord>,
    ) -> bool {
        if self.orphan.replace(false) {
            self.status.set(status);
            self.give_back(me);
            return false;
        }
        if let Some(rec) = record
            && !self.spec.plain
        {
            // SAFETY: the caller's contract.
            unsafe { self.spec.write_back(rec, status != 0) };
            if let Some(f) = self.spec.hooks.finish {
                f(&self.inputs, rec, status != 0);
            }
        }
        self.status.set(status);
        true
    }

    /// Delivers the completion of a submitted task: its buffers are given back to their
    /// holders, the table's write-backs and the library's finish hook run, and its
    /// status is set. `None` when the program freed it while in flight (it is back in
    /// its pool now, and nobody is told).
    ///
    /// # Safety
    /// `c` is the completion of a record made by [`fill_record`](Task::fill_record)
    /// (its user data is the task, alive in its pool), and as [`TaskSpec::write_back`].
    #[inline]
    pub unsafe fn complete(c: &mut Completion) -> Option<Delivered<H>> {
        let task = c.record.user_data.ptr::<Task<H>>();
        // SAFETY: the caller's contract: the user data is a live pooled task.
        let me = unsafe { NonNull::new_unchecked(task) };
        // SAFETY: as above.
        let t = unsafe { me.as_ref() };
        let status = c.error.as_ref().map_or(0, |e| e.raw());
        let handler = t.handler.get()?;
        if t.orphan.get() {
            c.record.release_bufs();
        }
        // SAFETY: the caller's contract.
        if !unsafe { t.finish(me, status, Some(&c.record)) } {
            return None;
        }
        // The record's buffer references go before the program sees the task.
        c.record.release_bufs();
        Some(Delivered {
            task: me,
            handler,
            status,
        })
    }

    #[cold]
    fn give_back(&self, me: NonNull<Task<H>>) {
        // SAFETY: a task's set outlives its pools, and so every task.
        let types = unsafe { &*self.types };
        let _ = types.free_now(me);
    }
}

/// A completed task to tell the program about ([`Task::complete`]).
#[derive(Debug)]
pub struct Delivered<H> {
    /// The task.
    pub task: NonNull<Task<H>>,
    /// What to tell the program with.
    pub handler: H,
    /// 0 on success, else the task's `doca_error_t`.
    pub status: i32,
}

impl<H> Delivered<H> {
    /// The task.
    pub fn task(&self) -> &Task<H> {
        // SAFETY: a pooled task stays at its address while its set lives, and the
        // program holds it until it frees it.
        unsafe { self.task.as_ref() }
    }
}

struct TypeConf<H> {
    spec: &'static TaskSpec,
    handler: H,
    pool: TaskPool<Task<H>>,
}

/// A context's configured task types (`*_set_conf`), each with its pool. Used by one
/// thread at a time, at a stable address (its tasks point back to it): keep it boxed,
/// or inside a boxed handle.
pub struct TaskTypes<H> {
    ctx: Ctx,
    confs: RefCell<Vec<TypeConf<H>>>,
}

impl<H> fmt::Debug for TaskTypes<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskTypes")
            .field("types", &self.confs.borrow().len())
            .finish()
    }
}

impl<H: Copy> TaskTypes<H> {
    /// No task type configured yet.
    pub fn new(ctx: &Ctx) -> Box<TaskTypes<H>> {
        Box::new(TaskTypes::unboxed(ctx))
    }

    /// [`new`](TaskTypes::new) for a value the caller keeps at a stable address (inside
    /// a boxed handle) before configuring any type.
    pub fn unboxed(ctx: &Ctx) -> TaskTypes<H> {
        TaskTypes {
            ctx: ctx.clone(),
            confs: RefCell::new(Vec::new()),
        }
    }

    /// The context.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// A library's `*_set_conf`: `num_tasks` tasks of `spec`'s type, told through
    /// `handler`; only while the context is idle (`BadState`), and not while tasks of
    /// the type are taken (`BadState`). `num_tasks` must be at least 1.
    pub fn set_conf(&self, spec: &'static TaskSpec, handler: H, num_tasks: u32) -> Result<()> {
        if num_tasks == 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the number of tasks must be at least 1",
            ));
        }
        let mut confs = self.confs.borrow_mut();
        if confs
            .iter()
            .any(|c| c.spec.job_type == spec.job_type && c.pool.outstanding() > 0)
        {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "tasks of this type are still allocated; free them first",
            ));
        }
        self.ctx.set_task_room(spec.job_type, num_tasks)?;
        let me: *const TaskTypes<H> = self;
        let pool = TaskPool::new(&self.ctx, num_tasks, |_| Task {
            spec,
            types: me,
            inputs: TaskInputs::new(),
            user_data: Cell::new(Data(0)),
            status: Cell::new(0),
            handler: Cell::new(None),
            orphan: Cell::new(false),
        });
        confs.retain(|c| c.spec.job_type != spec.job_type);
        confs.push(TypeConf {
            spec,
            handler,
            pool,
        });
        Ok(())
    }

    /// Whether `spec`'s type is configured.
    pub fn is_configured(&self, spec: &'static TaskSpec) -> bool {
        self.confs
            .borrow()
            .iter()
            .any(|c| c.spec.job_type == spec.job_type)
    }

    /// A library's `*_alloc_init`: a task of `spec`'s type from its pool, its inputs
    /// cleared, with `user_data`, filled by `init` (which may refuse: the task goes
    /// back). `BadState` when the type is not configured or the context is not running,
    /// `NoMemory` when its pool is empty.
    #[inline]
    pub fn alloc(
        &self,
        spec: &'static TaskSpec,
        user_data: Data,
        init: impl FnOnce(&Task<H>) -> Result<()>,
    ) -> Result<NonNull<Task<H>>> {
        let confs = self.confs.borrow();
        let Some(conf) = confs.iter().find(|c| c.spec.job_type == spec.job_type) else {
            return Err(Error::with_context(
                ErrorCode::BadState,
                format!(
                    "the {} {} task type is not configured: call its *_set_conf before starting the context",
                    spec.lib, spec.name
                ),
            ));
        };
        let p = conf.pool.alloc()?;
        // SAFETY: a pool slot just taken: this call has it to itself.
        let t = unsafe { p.as_ref() };
        t.handler.set(Some(conf.handler));
        t.orphan.set(false);
        t.user_data.set(user_data);
        t.status.set(0);
        t.inputs.clear();
        if let Some(f) = spec.hooks.init {
            f(&t.inputs);
        }
        if let Err(e) = init(t) {
            let _ = conf.pool.free(p.as_ptr());
            return Err(e);
        }
        Ok(p)
    }

    /// `doca_task_free`: back to its pool, or, while it is in flight, once it completes
    /// (unreported). `InvalidValue` for a task that is not a taken task of this set.
    pub fn free(&self, task: NonNull<Task<H>>) -> Result<()> {
        let confs = self.confs.borrow();
        let conf = confs
            .iter()
            .find(|c| c.pool.is_taken(task.as_ptr()))
            .ok_or_else(|| {
                Error::with_context(
                    ErrorCode::InvalidValue,
                    "not a task of this context, or already freed",
                )
            })?;
        // SAFETY: a taken task of this set's pool.
        let t = unsafe { task.as_ref() };
        if t.is_submitted() {
            t.orphan.set(true);
            return Ok(());
        }
        *t.inputs.aux.borrow_mut() = None;
        conf.pool.free(task.as_ptr())
    }

    fn free_now(&self, task: NonNull<Task<H>>) -> Result<()> {
        // SAFETY: a taken task of this set.
        *unsafe { task.as_ref() }.inputs.aux.borrow_mut() = None;
        let confs = self.confs.borrow();
        let conf = confs
            .iter()
            .find(|c| c.pool.is_taken(task.as_ptr()))
            .ok_or_else(|| Error::with_context(ErrorCode::InvalidValue, "task's pool is gone"))?;
        conf.pool.free(task.as_ptr())
    }

    /// Tasks taken from every pool and not given back.
    pub fn outstanding(&self) -> usize {
        self.confs
            .borrow()
            .iter()
            .map(|c| c.pool.outstanding())
            .sum()
    }

    /// Forgets every task type (before the context goes): only while the context is
    /// idle (`BadState`) with no task taken (`InUse`).
    pub fn clear(&self) -> Result<()> {
        if self.ctx.phase() != CtxPhase::Idle {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "context is not idle; stop it (and progress until it is idle) before destroying it",
            ));
        }
        if self.outstanding() > 0 {
            return Err(Error::with_context(
                ErrorCode::InUse,
                "tasks of this context are still allocated; free them first",
            ));
        }
        self.confs.borrow_mut().clear();
        Ok(())
    }
}

mod pool;
mod spec;
pub use pool::TaskPool;
pub use spec::{
    InputKind, MAX_JOB_PARAMS, SlotSpec, TaskHooks, TaskSpec, WriteBack, job_supported_in,
};
