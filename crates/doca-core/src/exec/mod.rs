//! The DOCA execution model: contexts ([`Ctx`]) that libraries plug into, work queues
//! ([`WorkQ`]) that carry jobs ([`JobRecord`]) and return completions ([`Completion`],
//! [`Event`]), by polling or through an eventfd. Jobs run in the caller by default, or
//! on the device's engine threads when the topology configures them.

//! The modules build on each other in one direction, with no circle:
//! `job` (records) <- `engine` (engine threads; what runs a job and where it completes,
//! as traits) <- `ctx` (contexts, the two kinds of library: [`JobOps`] and
//! [`ChannelOps`]) <- `task` (task types as data, task pools and the task generation's
//! life cycle) and `workq` (work queues, attaching contexts) <- `pe` (the progress
//! engine).

// Refusals hand the job record back and failed jobs come with their completion: boxing
// them would allocate in the data path, which the work queue never does.
#![allow(clippy::result_large_err)]

mod ctx;
mod engine;
mod job;
mod lists;
mod pe;
mod task;
mod workq;

pub(crate) use ctx::CtxShared;
pub use ctx::{ChannelOps, Ctx, CtxOps, CtxPhase, JobOps, PeEvent, PollOut, WeakCtx};
pub use engine::ExecEnv;
pub use job::{Completion, Event, Job, JobRecord, MAX_JOB_BUFS, RetrieveError};
pub use lists::{local_src_dst, run_on_lists, staged};
pub use pe::Pe;
pub use task::{
    Delivered, InputKind, MAX_JOB_PARAMS, SlotSpec, Task, TaskHooks, TaskInputs, TaskPool,
    TaskSpec, TaskTypes, WriteBack, job_supported_in,
};
pub(crate) use workq::Start;
pub use workq::{MAX_DEPTH, WorkQ};
