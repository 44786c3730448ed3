//! `doca_workq`: submit jobs, retrieve completions, by polling or event-driven.
//!
//! - [`queue`]: the work queue itself, the one path every job (submitted, or a graph
//!   node's) starts by, and retrieval.
//! - [`ring`]: the queue of inline completions.
//! - [`shared`]: what engine threads and sync events share with the owner, and the
//!   wake-ups.
//! - [`wait`]: waiting on a sleeping thread or the eventfd.
//!
//! Attaching contexts (`Ctx::workq_add`) is at the end of `queue.rs`; running graph
//! instances lives beside the graphs (`graph/run.rs`).

mod queue;
mod ring;
mod shared;
mod wait;

pub(crate) use queue::Start;
pub use queue::{MAX_DEPTH, WorkQ};
