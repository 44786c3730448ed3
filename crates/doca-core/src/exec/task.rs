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

/// Parameters a record carries.
pub const MAX_JOB_PARAMS: usize = 5;

/// What an input of a task type is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A buffer (or list head): a buffer slot of the record, which must be set.
    Buf,
    /// A buffer that may be NULL (an RDMA send of an empty message): a buffer slot of
    /// the record, left empty when not set.
    OptBuf,
    /// A value (or a pointer the program gives): a parameter slot of the record.
    Param,
    /// A library object (a matrix): its C handle in a parameter slot, the object kept
    /// alive by the record while in flight.
    Handle,
    /// A library object with no parameter slot (a partial hash's session): kept alive
    /// by the record while in flight. A pooled task makes its own
    /// ([`TaskHooks::init`]); a DOCA 2.2 job names it.
    Object,
    /// A parameter that a pooled task sets through calls of its own (a partial hash's
    /// final flag), not through its `alloc_init`; a DOCA 2.2 job has it as a field.
    Flag,
}

/// One named input of a task type and the record slot it goes to.
#[derive(Debug, Clone, Copy)]
pub struct SlotSpec {
    /// Its name in DOCA's API (`src`, `dst`, `inc_val`, ...).
    pub name: &'static str,
    /// What it is.
    pub kind: InputKind,
    /// The record slot (a buffer slot for [`InputKind::Buf`], else a parameter slot).
    pub slot: usize,
    /// Its C type, as DOCA's headers declare it.
    pub c_type: &'static str,
}

/// A value a completed task writes through a pointer the program gave (a sync event
/// get's value): record parameter `value` is written to the address in parameter `to`,
/// when the task succeeded and the address is not NULL.
#[derive(Debug, Clone, Copy)]
pub struct WriteBack {
    /// The record parameter holding the result.
    pub value: usize,
    /// The record parameter holding the program's pointer.
    pub to: usize,
}

/// What a library does beyond the table's slots for one task type; each is optional.
/// `init`, `job_type`, `before_set`, `prepare` and `finish` concern a pooled task (the
/// task generation); a DOCA 2.2 job, which has no state of its own, gets its job type
/// from its struct and runs none of them.
#[derive(Debug, Clone, Copy)]
pub struct TaskHooks {
    /// Sets up a task just taken from its pool (its inputs cleared): a partial hash's
    /// session.
    pub init: Option<fn(&TaskInputs)>,
    /// The record's job type from the task's inputs (SHA: by algorithm); without it,
    /// the spec's `job_type`.
    pub job_type: Option<fn(&TaskInputs) -> Result<u32>>,
    /// Checks a value given for a parameter slot (alloc_init and setters) before it is
    /// stored.
    pub check_param: Option<fn(usize, u64) -> Result<()>>,
    /// Checks that an input (by name) may change now (SHA partial: not mid-hash).
    pub before_set: Option<fn(&TaskInputs, &'static str) -> Result<()>>,
    /// Before a task's record is submitted, with the record made from its slots: may
    /// refuse, and may update the task's own state.
    pub prepare: Option<fn(&TaskInputs, &mut JobRecord) -> Result<()>>,
    /// Once a task completed (`failed` or not), from the record it ran as: updates the
    /// task's own state.
    pub finish: Option<fn(&TaskInputs, &JobRecord, bool)>,
}

impl TaskHooks {
    /// No hooks.
    pub const NONE: TaskHooks = TaskHooks {
        init: None,
        job_type: None,
        check_param: None,
        before_set: None,
        prepare: None,
        finish: None,
    };
}

/// A task type of a library, as its task table declares it.
#[derive(Debug)]
pub struct TaskSpec {
    /// The library ("dma", ...).
    pub lib: &'static str,
    /// The task type's name in DOCA's API ("memcpy", ...).
    pub name: &'static str,
    /// Its key, and its record's job type unless [`TaskHooks::job_type`] says otherwise.
    pub job_type: u32,
    /// Every job type its records may have (the DOCA 2.2 job types it covers).
    pub job_types: &'static [u32],
    /// Its inputs, in the order of its C `alloc_init`'s arguments.
    pub inputs: &'static [SlotSpec],
    /// Bit i set: buffer slot i is an input (made from `inputs` by
    /// [`TaskSpec::buf_mask`]).
    pub bufs: u8,
    /// Bit i set: buffer slot i may be NULL (made by [`TaskSpec::opt_buf_mask`]).
    pub opt_bufs: u8,
    /// Bit i set: parameter slot i is an input (made from `inputs` by
    /// [`TaskSpec::param_mask`]).
    pub params: u8,
    /// Whether the record keeps a library object (a `Handle` or `Object` input).
    pub keeps_object: bool,
    /// No hooks and no write-backs (made by [`TaskSpec::is_plain`]): the record is its
    /// slots, and a completion needs nothing of the library.
    pub plain: bool,
    /// What a completed task writes back.
    pub write_back: &'static [WriteBack],
    /// The library's hooks.
    pub hooks: TaskHooks,
}

impl TaskSpec {
    /// The spec of a channel's task type (comch's sends and receives): the channel takes
    /// its tasks itself, so the table has no inputs of its own; `job_types[0]` is its key.
    pub const fn channel(
        lib: &'static str,
        name: &'static str,
        job_types: &'static [u32],
        hooks: TaskHooks,
    ) -> TaskSpec {
        TaskSpec {
            lib,
            name,
            job_type: job_types[0],
            job_types,
            inputs: &[],
            bufs: 0,
            opt_bufs: 0,
            params: 0,
            keeps_object: false,
            plain: TaskSpec::is_plain(&hooks, &[]),
            write_back: &[],
            hooks,
        }
    }

    /// The buffer slots among `inputs`, as bits.
    pub const fn buf_mask(inputs: &[SlotSpec]) -> u8 {
        let mut m = 0u8;
        let mut i = 0;
        while i < inputs.len() {
            if matches!(inputs[i].kind, InputKind::Buf | InputKind::OptBuf) {
                m |= 1 << inputs[i].slot;
            }
            i += 1;
        }
        m
    }

    /// The buffer slots among `inputs` that may be NULL, as bits.
    pub const fn opt_buf_mask(inputs: &[SlotSpec]) -> u8 {
        let mut m = 0u8;
        let mut i = 0;
        while i < inputs.len() {
            if matches!(inputs[i].kind, InputKind::OptBuf) {
                m |= 1 << inputs[i].slot;
            }
            i += 1;
        }
        m
    }

    /// The parameter slots among `inputs`, as bits.
    pub const fn param_mask(inputs: &[SlotSpec]) -> u8 {
        let mut m = 0u8;
        let mut i = 0;
        while i < inputs.len() {
            if !matches!(
                inputs[i].kind,
                InputKind::Buf | InputKind::OptBuf | InputKind::Object
            ) {
                m |= 1 << inputs[i].slot;
            }
            i += 1;
        }
        m
    }

    /// Whether a task type with these hooks and write-backs is plain (see
    /// [`TaskSpec::plain`]).
    pub const fn is_plain(hooks: &TaskHooks, write_back: &[WriteBack]) -> bool {
        write_back.is_empty()
            && hooks.init.is_none()
            && hooks.job_type.is_none()
            && hooks.check_param.is_none()
            && hooks.before_set.is_none()
            && hooks.prepare.is_none()
            && hooks.finish.is_none()
    }

    /// Whether `inputs` name a library object the record keeps.
    pub const fn keeps_object(inputs: &[SlotSpec]) -> bool {
        let mut i = 0;
        while i < inputs.len() {
            if matches!(inputs[i].kind, InputKind::Handle | InputKind::Object) {
                return true;
            }
            i += 1;
        }
        false
    }

    /// The record slot of the input called `name` among `names` (with `slots` beside
    /// them), at compile time: a table's DOCA 2.2 field mapping names inputs, and a
    /// name it does not declare stops the build.
    pub const fn slot_named(names: &[&str], slots: &[usize], name: &str) -> usize {
        let mut i = 0;
        while i < names.len() {
            let (a, b) = (names[i].as_bytes(), name.as_bytes());
            if a.len() == b.len() {
                let mut k = 0;
                while k < a.len() && a[k] == b[k] {
                    k += 1;
                }
                if k == a.len() {
                    return slots[i];
                }
            }
            i += 1;
        }
        panic!("the task table's 2.2 mapping names an input it does not declare")
    }

    /// Whether records of `job_type` are of this task type.
    #[inline]
    pub fn covers(&self, job_type: u32) -> bool {
        job_type == self.job_type
            || (self.job_types.len() > 1 && self.job_types.contains(&job_type))
    }

    /// An input by its name.
    pub fn input(&self, name: &str) -> Option<&'static SlotSpec> {
        self.inputs.iter().find(|s| s.name == name)
    }

    /// Checks a value for parameter `slot` ([`TaskHooks::check_param`]).
    pub fn check_param(&self, slot: usize, value: u64) -> Result<()> {
        self.hooks.check_param.map_or(Ok(()), |f| f(slot, value))
    }

    /// Writes the record of a job of type `job_type` (one this task type covers) with
    /// these inputs into `out`, an empty record (where the engine keeps it): the job
    /// type, the buffers (borrowed: the program keeps its references), the parameters,
    /// the library object. `InvalidValue` names a buffer that is not set.
    ///
    /// # Safety
    /// The buffers set in `inputs` are live descriptors until the task completes.
    #[inline(always)]
    pub unsafe fn fill(
        &self,
        inputs: &TaskInputs,
        job_type: u32,
        user_data: Data,
        out: &mut JobRecord,
    ) -> Result<()> {
        let (b0, b1) = (inputs.bufs[0].get(), inputs.bufs[1].get());
        let m = self.bufs;
        let need = m & !self.opt_bufs;
        if (need & 1 != 0 && b0.is_null()) || (need & 2 != 0 && b1.is_null()) {
            return Err(self.missing(usize::from(need & 1 == 0 || !b0.is_null())));
        }
        out.job_type = job_type;
        out.user_data = user_data;
        // SAFETY: the caller's contract.
        unsafe {
            if m & 1 != 0 && !b0.is_null() {
                out.set_buf_raw(0, b0 as *mut BufDesc);
            }
            if m & 2 != 0 && !b1.is_null() {
                out.set_buf_raw(1, b1 as *mut BufDesc);
            }
        }
        if self.params != 0 || self.keeps_object || !self.write_back.is_empty() {
            self.fill_rest(inputs, out);
        }
        Ok(())
    }

    /// [`fill`](TaskSpec::fill)'s parameters, object and flags.
    #[inline(never)]
    fn fill_rest(&self, inputs: &TaskInputs, out: &mut JobRecord) {
        if !self.write_back.is_empty() {
            out.flags |= JobRecord::WRITES_BACK;
        }
        // Parameters the table does not name are 0 in the inputs, as in a new record.
        for (o, p) in out.params.iter_mut().zip(&inputs.params) {
            *o = p.get();
        }
        if self.keeps_object {
            out.aux = inputs.aux.borrow().clone();
        }
    }

    /// Finishes a record whose inputs were stored straight into it (a DOCA 2.2 job's
    /// fields): its job type, its user data, the table's flags; `InvalidValue` names a
    /// buffer that is not set.
    #[inline]
    pub fn seal(&self, job_type: u32, user_data: Data, out: &mut JobRecord) -> Result<()> {
        for slot in 0..MAX_JOB_BUFS {
            if self.bufs & !self.opt_bufs & (1 << slot) != 0 && out.buf(slot).is_none() {
                return Err(self.missing(slot));
            }
        }
        out.job_type = job_type;
        out.user_data = user_data;
        if !self.write_back.is_empty() {
            out.flags |= JobRecord::WRITES_BACK;
        }
        Ok(())
    }

    #[cold]
    fn missing(&self, slot: usize) -> Error {
        let buf = self
            .inputs
            .iter()
            .find(|i| i.kind == InputKind::Buf && i.slot == slot)
            .map_or("a", |i| i.name);
        Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "the {} {} task's {buf} buffer is NULL; set it before submitting",
                self.lib, self.name
            ),
        )
    }

    /// Writes back what the table says a completed record gives the program
    /// ([`WriteBack`]).
    ///
    /// # Safety
    /// The program's pointers in the record's parameters are NULL or writable (the C
    /// contract of the task's pointer parameters).
    #[inline]
    pub unsafe fn write_back(&self, record: &JobRecord, failed: bool) {
        if failed {
            return;
        }
        for w in self.write_back {
            let p = record.params[w.to] as usize as *mut u64;
            if !p.is_null() {
                // SAFETY: the caller's contract.
                unsafe { p.write_unaligned(record.params[w.value]) };
            }
        }
    }
}

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

/// Declares a library's task specs from its task table (the library's
/// `<lib>_task_table!` macro hands its declaration to this one): one
/// [`TaskSpec`] static per task type, and a module per task type with the record slot
/// of each input by its DOCA name (`tasks::memcpy::src`). What the C faces generate from
/// the same declaration (the `c3` and `c22` parts) is read by their own generators.
#[macro_export]
macro_rules! task_specs {
    (
        lib: $lib:literal,
        c3_handle: $h:ty,
        tasks: [$({
            spec: $spec:ident @ $specpath:path,
            module: $module:ident,
            name: $name:literal,
            job: $job:expr,
            job_types: [$($jt:expr),* $(,)?],
            inputs: [$($kind:ident $input:ident: $slot:literal ($cty:ty) $(get $getter:ident $(as ($gty:ty))?)? $(set $setter:ident)?),* $(,)?],
            write_back: [$($wv:literal -> $wto:literal),* $(,)?],
            hooks: $hooks:expr,
            c3: $c3:tt,
            c22: $c22:tt $(,)?
        }),* $(,)?] $(,)?
    ) => {
        #[doc = concat!("Every task type of the ", $lib, " library.")]
        pub static ALL: &[&$crate::exec::TaskSpec] = &[$(&$spec),*];
        $(
            #[doc = concat!("The `", $name, "` task type of the ", $lib, " library, from its task table.")]
            pub static $spec: $crate::exec::TaskSpec = {
                const HOOKS: $crate::exec::TaskHooks = $hooks;
                const WRITE_BACK: &[$crate::exec::WriteBack] =
                    &[$($crate::exec::WriteBack { value: $wv, to: $wto }),*];
                const INPUTS: &[$crate::exec::SlotSpec] = &[$($crate::exec::SlotSpec {
                    name: stringify!($input),
                    kind: $crate::__task_input_kind!($kind),
                    slot: $slot,
                    c_type: stringify!($cty),
                }),*];
                $crate::exec::TaskSpec {
                    lib: $lib,
                    name: $name,
                    job_type: $job,
                    job_types: &[$($jt),*],
                    inputs: INPUTS,
                    bufs: $crate::exec::TaskSpec::buf_mask(INPUTS),
                    opt_bufs: $crate::exec::TaskSpec::opt_buf_mask(INPUTS),
                    params: $crate::exec::TaskSpec::param_mask(INPUTS),
                    keeps_object: $crate::exec::TaskSpec::keeps_object(INPUTS),
                    plain: $crate::exec::TaskSpec::is_plain(&HOOKS, WRITE_BACK),
                    write_back: WRITE_BACK,
                    hooks: HOOKS,
                }
            };
            #[doc = concat!("The record slots of the `", $name, "` task type's inputs, by their DOCA names.")]
            #[allow(non_upper_case_globals)]
            pub mod $module {
                $(
                    #[doc = concat!("The record slot of `", stringify!($input), "`.")]
                    pub const $input: usize = $slot;
                )*
            }
        )*
    };
}

/// The [`InputKind`] of a task table's input keyword.
#[doc(hidden)]
#[macro_export]
macro_rules! __task_input_kind {
    (buf) => {
        $crate::exec::InputKind::Buf
    };
    (opt_buf) => {
        $crate::exec::InputKind::OptBuf
    };
    (param) => {
        $crate::exec::InputKind::Param
    };
    (handle) => {
        $crate::exec::InputKind::Handle
    };
    (object) => {
        $crate::exec::InputKind::Object
    };
    (flag) => {
        $crate::exec::InputKind::Flag
    };
}

struct Slot<T> {
    taken: AtomicBool,
    value: UnsafeCell<T>,
}

/// A context's pool of tasks of one type (what `*_set_conf` sizes): slots at stable
/// addresses, taken and given back without allocating. Tasks taken and not given back
/// keep the context from finishing a stop.
pub struct TaskPool<T> {
    slots: Box<[Slot<T>]>,
    free: Mutex<Vec<u32>>,
    ctx: Ctx,
}

// SAFETY: a slot's value is reached only through the pointer `alloc` hands out, by the
// one holder of that task at a time (the pool itself never reads it); the free list is
// behind a mutex and the taken flags are atomics.
unsafe impl<T: Send> Sync for TaskPool<T> {}
// SAFETY: as above; the values move with the pool.
unsafe impl<T: Send> Send for TaskPool<T> {}

impl<T> fmt::Debug for TaskPool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TaskPool")
            .field("capacity", &self.capacity())
            .field("outstanding", &self.outstanding())
            .finish()
    }
}

impl<T> TaskPool<T> {
    /// A pool of `n` tasks of `ctx`, each made by `init`.
    pub fn new(ctx: &Ctx, n: u32, mut init: impl FnMut(usize) -> T) -> TaskPool<T> {
        let slots: Box<[Slot<T>]> = (0..n as usize)
            .map(|i| Slot {
                taken: AtomicBool::new(false),
                value: UnsafeCell::new(init(i)),
            })
            .collect();
        TaskPool {
            slots,
            free: Mutex::new((0..n).rev().collect()),
            ctx: ctx.clone(),
        }
    }

    /// Takes a task: `BadState` unless the context is running, `NoMemory` when every
    /// task is taken. The pointer stays valid while the pool lives; the holder has the
    /// task to itself until [`free`](TaskPool::free).
    #[inline]
    pub fn alloc(&self) -> Result<NonNull<T>> {
        if self.ctx.phase() != CtxPhase::Running {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "context is not running; start it before allocating tasks",
            ));
        }
        let Some(i) = lock(&self.free).pop() else {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                format!(
                    "all {} tasks of this type are taken; free some, or configure a larger pool",
                    self.slots.len()
                ),
            ));
        };
        let slot = &self.slots[i as usize];
        slot.taken.store(true, Ordering::Release);
        self.ctx.shared.tasks_out.fetch_add(1, Ordering::AcqRel);
        // SAFETY: `UnsafeCell::get` of a live slot is never null.
        Ok(unsafe { NonNull::new_unchecked(slot.value.get()) })
    }

    /// The index of a task of this pool.
    pub fn index_of(&self, p: *const T) -> Option<usize> {
        let base = self.slots.as_ptr() as usize;
        let size = std::mem::size_of::<Slot<T>>().max(1);
        let a = p as usize;
        if a < base {
            return None;
        }
        let i = (a - base) / size;
        (i < self.slots.len() && std::ptr::eq(self.slots[i].value.get(), p)).then_some(i)
    }

    /// Whether `p` is a task of this pool that is taken.
    pub fn is_taken(&self, p: *const T) -> bool {
        self.index_of(p)
            .is_some_and(|i| self.slots[i].taken.load(Ordering::Acquire))
    }

    /// Gives a task back: `InvalidValue` for a pointer that is not a taken task of this
    /// pool (freed twice, or another pool's). The holder must not use it afterwards.
    pub fn free(&self, p: *const T) -> Result<()> {
        let Some(i) = self.index_of(p) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "not a task of this pool",
            ));
        };
        if !self.slots[i].taken.swap(false, Ordering::AcqRel) {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "task was already freed",
            ));
        }
        lock(&self.free).push(i as u32);
        self.ctx.shared.tasks_out.fetch_sub(1, Ordering::AcqRel);
        Ok(())
    }

    /// Tasks in the pool.
    pub fn capacity(&self) -> usize {
        self.slots.len()
    }

    /// Tasks taken and not given back.
    pub fn outstanding(&self) -> usize {
        self.slots.len() - lock(&self.free).len()
    }
}

impl<T> Drop for TaskPool<T> {
    fn drop(&mut self) {
        let out = self.outstanding();
        self.ctx.shared.tasks_out.fetch_sub(out, Ordering::AcqRel);
    }
}
