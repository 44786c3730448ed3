//! Running graph instances on a work queue: the roots start together, a node starts
//! once all its parents completed, descendants of a failed node never start, and one
//! completion reports the instance.

use super::{FlatKind, GraphInstance, JOB_GRAPH, NodeState, Plan};
use crate::error::{Error, ErrorCode, Result};
use crate::exec::{Completion, Event, JobRecord, Start, WorkQ};
use crate::types::Data;
use std::sync::Arc;

/// A graph instance in flight on a work queue.
pub(crate) struct GraphRun {
    inst: GraphInstance,
    user_data: Data,
    /// Its context nodes.
    jobs: u32,
}

/// The tag of node `node`'s job in run slot `run`.
fn graph_tag(run: usize, node: usize) -> u32 {
    (((run + 1) as u32) << 16) | node as u32
}

impl WorkQ {
    /// `doca_workq_graph_submit`: runs `instance` (its graph started and added to this
    /// work queue, every context node given a job). One completion of type
    /// [`JOB_GRAPH`] with `user_data` reports it, with the instance. Refusals give the
    /// instance back: `NotFound` when the graph is not on this work queue,
    /// `InvalidValue` for a node without data, `NoMemory` when the instance's jobs do
    /// not fit the depth.
    pub fn graph_submit(
        &mut self,
        instance: GraphInstance,
        user_data: u64,
    ) -> std::result::Result<(), (Error, GraphInstance)> {
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
        if self.inflight + self.graph_jobs + 1 + jobs > self.depth() {
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
        inst.inner.error = None;
        // Counted as running while the roots start (a root finishing at once must not
        // complete the instance early).
        inst.inner.outstanding = 1;
        let run = match self.runs.iter().position(Option::is_none) {
            Some(r) => r,
            None => {
                if self.runs.capacity() == self.runs.len() {
                    self.runs.reserve(self.depth() as usize);
                }
                self.runs.push(None);
                self.runs.len() - 1
            }
        };
        self.runs[run] = Some(GraphRun {
            inst,
            user_data: Data(user_data),
            jobs,
        });
        self.inflight += 1;
        self.graph_jobs += jobs;
        for &r in &plan.roots {
            self.start_node(&plan, run, r);
        }
        if let Some(g) = self.runs[run].as_mut() {
            g.inst.inner.outstanding -= 1;
        }
        self.maybe_complete(run);
        Ok(())
    }

    /// Starts node `i` of run `run`. `plan` is the run's plan (its instance holds it;
    /// callers hold another reference, so that it outlives the run's slot).
    fn start_node(&mut self, plan: &Plan, run: usize, i: usize) {
        let Some(r) = self.runs[run].as_mut() else {
            return;
        };
        let inner = &mut r.inst.inner;
        inner.slots[i].state = Some(NodeState::Started);
        inner.outstanding += 1;
        match &plan.flat[i].kind {
            FlatKind::User { cb, .. } => {
                let result = match plan.view_of(&inner.slots, i) {
                    Some(v) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        cb(&v, inner.slots[i].cookie)
                    }))
                    .unwrap_or_else(|_| {
                        Err(Error::with_context(
                            ErrorCode::Unexpected,
                            "the user node's callback panicked",
                        ))
                    }),
                    None => Ok(()),
                };
                self.node_finished(plan, run, i, None, None, result);
            }
            FlatKind::Ctx { ctx, .. } => {
                let Some(slot) = self.slot_of(&ctx.shared) else {
                    let e = Error::with_context(
                        ErrorCode::NotFound,
                        "the node's context is not attached to this work queue",
                    );
                    self.node_finished(plan, run, i, None, None, Err(e));
                    return;
                };
                // The run leaves its slot while the job starts in place in the instance
                // (a cheap move: the instance is boxed).
                let Some(mut g) = self.runs[run].take() else {
                    return;
                };
                let record = &mut g.inst.inner.slots[i].record;
                let Some(rec) = record.as_mut() else {
                    self.runs[run] = Some(g);
                    let e = Error::with_context(
                        ErrorCode::InvalidValue,
                        "graph context node has no job",
                    );
                    self.node_finished(plan, run, i, None, None, Err(e));
                    return;
                };
                match self.start_job(slot, rec, graph_tag(run, i)) {
                    // Back through retrieval, into `graph_node_done`.
                    Start::Queue { pending } => {
                        let taken = record.take();
                        self.runs[run] = Some(g);
                        if let Some(rec) = taken {
                            self.queue_job(slot, rec, pending);
                        }
                    }
                    // Done at once: the instance moves on without a completion.
                    Start::Finished(error) => {
                        // What it wrote is visible to the nodes that follow.
                        rec.deliver_results();
                        rec.unpin();
                        let event = Event {
                            job_type: rec.job_type,
                            user_data: rec.user_data,
                            result: error.as_ref().map_or(0, |e| e.raw() as u64),
                        };
                        self.runs[run] = Some(g);
                        let res = error.map_or(Ok(()), Err);
                        self.node_finished(plan, run, i, None, Some(event), res);
                    }
                    Start::Refused(e) => {
                        self.runs[run] = Some(g);
                        self.node_finished(plan, run, i, None, None, Err(e));
                    }
                    // `start_job` refuses a channel's job as a graph node.
                    Start::Channel => {
                        self.runs[run] = Some(g);
                        let e = Error::with_context(
                            ErrorCode::NotSupported,
                            "a channel's jobs cannot be graph nodes",
                        );
                        self.node_finished(plan, run, i, None, None, Err(e));
                    }
                }
            }
        }
    }

    /// A graph node's job came back through retrieval.
    pub(crate) fn graph_node_done(&mut self, c: Completion) {
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
        let Some(g) = self.runs[run].as_ref() else {
            return;
        };
        let plan = Arc::clone(&g.inst.inner.plan);
        self.node_finished(&plan, run, i, Some(record), Some(event), r);
    }

    #[allow(clippy::too_many_arguments)]
    fn node_finished(
        &mut self,
        plan: &Plan,
        run: usize,
        i: usize,
        record: Option<JobRecord>,
        event: Option<Event>,
        r: Result<()>,
    ) {
        let Some(g) = self.runs[run].as_mut() else {
            return;
        };
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
                        self.start_node(plan, run, child);
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
            record: JobRecord::new(JOB_GRAPH, user_data),
            graph_instance: Some(inst),
        });
        // Keep the slot list short when its tail is free.
        while self.runs.last().is_some_and(Option::is_none) {
            self.runs.pop();
        }
        self.shared.wake_armed_from_owner();
    }
}
