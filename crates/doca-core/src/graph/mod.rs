//! `doca_graph`: jobs, user callbacks and sub-graphs run in dependency order as one unit
//! of work on a work queue.
//!
//! A [`Graph`] holds nodes — context nodes (a job type on a started context), user nodes
//! (a callback) and sub-graph nodes (another started graph) — and dependencies (no
//! cycles). Once started and added to a work queue, [`GraphInstance`]s of it carry the
//! per-node data (a job, a cookie, a sub-graph instance) and are submitted with
//! [`WorkQ::graph_submit`](crate::WorkQ::graph_submit): the roots start together, a node
//! starts when all its parents completed, a failed node stops its descendants, and one
//! completion event of type [`JOB_GRAPH`] reports the instance when all nodes that can
//! run have. Intermediate nodes produce no events. Instances are reusable.

mod run;

pub(crate) use run::GraphRun;

use crate::error::{Error, ErrorCode, Result};
use crate::exec::{Ctx, Event, Job, JobRecord};
use crate::memory::Buf;
use crate::types::{Data, action};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// `DOCA_GRAPH_JOB`: the event type of a completed graph instance.
pub const JOB_GRAPH: u32 = action::GRAPH_FIRST + 1;

/// `enum doca_graph_instance_node_state`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum NodeState {
    /// Not started (yet, or never: a parent failed).
    NotStarted = 0,
    /// Running.
    Started = 1,
    /// Completed successfully.
    Completed = 2,
    /// Failed.
    Error = 3,
}

/// A user node's callback: it sees the instance's nodes of its own graph level (to read
/// results) and its cookie; an error fails the node.
pub type UserNodeFn = dyn Fn(&NodeView<'_>, Data) -> Result<()> + Send + Sync;

/// A node of a graph (`struct doca_graph_node`): a handle valid with that graph and its
/// instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GraphNode {
    graph: u64,
    index: u32,
}

impl GraphNode {
    /// The node's position in its graph (creation order).
    pub fn index(&self) -> usize {
        self.index as usize
    }
}

enum NodeKind {
    Ctx { job_type: u32, ctx: Ctx },
    User(Arc<UserNodeFn>),
    Sub(Graph),
}

struct GraphState {
    nodes: Vec<NodeKind>,
    edges: Vec<(usize, usize)>,
    plan: Option<Arc<Plan>>,
    workqs: Vec<usize>,
}

struct GraphInner {
    id: u64,
    st: Mutex<GraphState>,
}

/// A graph (`struct doca_graph`). Clones share it.
#[derive(Clone)]
pub struct Graph {
    inner: Arc<GraphInner>,
}

impl fmt::Debug for Graph {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let st = self.state();
        f.debug_struct("Graph")
            .field("nodes", &st.nodes.len())
            .field("dependencies", &st.edges.len())
            .field("started", &st.plan.is_some())
            .finish()
    }
}

/// Where a flat node's user callback looks: the plan of its graph level and where that
/// level's nodes start in the flat list.
#[derive(Clone)]
pub(crate) struct Level {
    plan: Option<Arc<Plan>>,
    base: usize,
}

#[derive(Clone)]
pub(crate) enum FlatKind {
    Ctx { job_type: u32, ctx: Ctx },
    User { cb: Arc<UserNodeFn>, level: Level },
}

#[derive(Clone)]
pub(crate) struct FlatNode {
    pub(crate) kind: FlatKind,
    pub(crate) children: Vec<usize>,
    pub(crate) parents: u32,
}

/// A started graph, sub-graphs expanded: every node that runs, with its dependencies.
pub(crate) struct Plan {
    graph: u64,
    pub(crate) flat: Vec<FlatNode>,
    /// Per node of this level: its range in `flat`.
    ranges: Vec<(usize, usize)>,
    /// Per node of this level: the sub-graph's plan, for sub-graph nodes.
    subs: Vec<Option<Arc<Plan>>>,
    pub(crate) roots: Vec<usize>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Default for Graph {
    fn default() -> Graph {
        Graph::new()
    }
}

impl Graph {
    /// `doca_graph_create`.
    pub fn new() -> Graph {
        Graph {
            inner: Arc::new(GraphInner {
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                st: Mutex::new(GraphState {
                    nodes: Vec::new(),
                    edges: Vec::new(),
                    plan: None,
                    workqs: Vec::new(),
                }),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, GraphState> {
        self.inner.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn add(&self, kind: NodeKind) -> Result<GraphNode> {
        let mut st = self.state();
        if st.plan.is_some() {
            return Err(Error::bad_state(
                "graph is started; nodes are added before start",
            ));
        }
        if st.nodes.len() >= u16::MAX as usize {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                "graph has too many nodes",
            ));
        }
        st.nodes.push(kind);
        Ok(GraphNode {
            graph: self.inner.id,
            index: (st.nodes.len() - 1) as u32,
        })
    }

    /// `doca_graph_ctx_node_create`: a node running one job of `job_type` on `ctx`.
    pub fn ctx_node_create(&self, job_type: u32, ctx: &Ctx) -> Result<GraphNode> {
        if !ctx.ops().handles(job_type) {
            return Err(Error::invalid(format!(
                "job type {job_type} does not belong to the {} context",
                ctx.ops().name()
            )));
        }
        self.add(NodeKind::Ctx {
            job_type,
            ctx: ctx.clone(),
        })
    }

    /// `doca_graph_node_create_from_ctx` (the task generation): a node running one job
    /// of any of `ctx`'s types, chosen per instance.
    pub fn ctx_node_create_any(&self, ctx: &Ctx) -> Result<GraphNode> {
        self.add(NodeKind::Ctx {
            job_type: 0,
            ctx: ctx.clone(),
        })
    }

    /// `doca_graph_user_node_create`: a node running `cb` with the instance's cookie.
    pub fn user_node_create(
        &self,
        cb: impl Fn(&NodeView<'_>, Data) -> Result<()> + Send + Sync + 'static,
    ) -> Result<GraphNode> {
        self.add(NodeKind::User(Arc::new(cb)))
    }

    fn contains(&self, other: &Graph) -> bool {
        if Arc::ptr_eq(&self.inner, &other.inner) {
            return true;
        }
        let subs: Vec<Graph> = self
            .state()
            .nodes
            .iter()
            .filter_map(|n| match n {
                NodeKind::Sub(g) => Some(g.clone()),
                _ => None,
            })
            .collect();
        subs.iter().any(|g| g.contains(other))
    }

    /// `doca_graph_sub_graph_node_create`: a node running an instance of `sub` (started
    /// by the time this graph starts). A graph cannot contain itself.
    pub fn sub_graph_node_create(&self, sub: &Graph) -> Result<GraphNode> {
        if sub.contains(self) {
            return Err(Error::invalid(
                "a graph cannot be its own sub-graph (directly or through others)",
            ));
        }
        self.add(NodeKind::Sub(sub.clone()))
    }

    fn node_index(&self, n: GraphNode, len: usize) -> Result<usize> {
        if n.graph != self.inner.id || n.index() >= len {
            return Err(Error::invalid("the node belongs to another graph"));
        }
        Ok(n.index())
    }

    /// `doca_graph_add_dependency`: `to` starts after `from` completed. A dependency
    /// that closes a cycle is refused with `InvalidValue`.
    pub fn add_dependency(&self, from: GraphNode, to: GraphNode) -> Result<()> {
        let mut st = self.state();
        if st.plan.is_some() {
            return Err(Error::bad_state(
                "graph is started; dependencies are added before start",
            ));
        }
        let (a, b) = (
            self.node_index(from, st.nodes.len())?,
            self.node_index(to, st.nodes.len())?,
        );
        if a == b {
            return Err(Error::invalid("a node cannot depend on itself"));
        }
        if st.edges.contains(&(a, b)) {
            return Err(Error::with_context(
                ErrorCode::AlreadyExist,
                "the dependency already exists",
            ));
        }
        // A path from `to` back to `from` would close a cycle.
        let mut stack = vec![b];
        let mut seen = vec![false; st.nodes.len()];
        while let Some(n) = stack.pop() {
            if n == a {
                return Err(Error::invalid(format!(
                    "the dependency {a} -> {b} would make a cycle (graphs are acyclic)"
                )));
            }
            if !std::mem::replace(&mut seen[n], true) {
                stack.extend(st.edges.iter().filter(|e| e.0 == n).map(|e| e.1));
            }
        }
        st.edges.push((a, b));
        Ok(())
    }

    /// `doca_graph_start`: checks the graph (at least one context node, directly or in
    /// a sub-graph; started contexts and sub-graphs; no cycles) and fixes it.
    pub fn start(&self) -> Result<()> {
        let mut st = self.state();
        if st.plan.is_some() {
            return Err(Error::bad_state("graph is already started"));
        }
        if st.nodes.is_empty() {
            return Err(Error::invalid("graph has no nodes"));
        }
        let mut flat: Vec<FlatNode> = Vec::new();
        let mut ranges = Vec::with_capacity(st.nodes.len());
        let mut subs = Vec::with_capacity(st.nodes.len());
        // Per node: the flat nodes where it begins (sources) and ends (sinks).
        let mut sources: Vec<Vec<usize>> = Vec::with_capacity(st.nodes.len());
        let mut sinks: Vec<Vec<usize>> = Vec::with_capacity(st.nodes.len());
        for (i, n) in st.nodes.iter().enumerate() {
            let base = flat.len();
            match n {
                NodeKind::Ctx { job_type, ctx } => {
                    if !ctx.is_started() {
                        return Err(Error::with_context(
                            ErrorCode::BadState,
                            format!("node {i}'s {} context is not started", ctx.ops().name()),
                        ));
                    }
                    flat.push(FlatNode {
                        kind: FlatKind::Ctx {
                            job_type: *job_type,
                            ctx: ctx.clone(),
                        },
                        children: Vec::new(),
                        parents: 0,
                    });
                    subs.push(None);
                    sources.push(vec![base]);
                    sinks.push(vec![base]);
                }
                NodeKind::User(cb) => {
                    flat.push(FlatNode {
                        kind: FlatKind::User {
                            cb: Arc::clone(cb),
                            level: Level {
                                plan: None,
                                base: 0,
                            },
                        },
                        children: Vec::new(),
                        parents: 0,
                    });
                    subs.push(None);
                    sources.push(vec![base]);
                    sinks.push(vec![base]);
                }
                NodeKind::Sub(g) => {
                    let Some(p) = g.plan() else {
                        return Err(Error::with_context(
                            ErrorCode::BadState,
                            format!("node {i}'s sub-graph is not started"),
                        ));
                    };
                    for f in &p.flat {
                        let mut f = f.clone();
                        for c in &mut f.children {
                            *c += base;
                        }
                        if let FlatKind::User { level, .. } = &mut f.kind {
                            if level.plan.is_none() {
                                level.plan = Some(Arc::clone(&p));
                            }
                            level.base += base;
                        }
                        flat.push(f);
                    }
                    sources.push(p.roots.iter().map(|r| r + base).collect());
                    sinks.push(
                        (0..p.flat.len())
                            .filter(|&k| p.flat[k].children.is_empty())
                            .map(|k| k + base)
                            .collect(),
                    );
                    subs.push(Some(p));
                }
            }
            ranges.push((base, flat.len() - base));
        }
        if flat.len() > u16::MAX as usize {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                format!(
                    "the graph expands to {} nodes with its sub-graphs; at most {}",
                    flat.len(),
                    u16::MAX
                ),
            ));
        }
        if !flat.iter().any(|f| matches!(f.kind, FlatKind::Ctx { .. })) {
            return Err(Error::invalid(
                "a graph needs at least one context node (directly or in a sub-graph)",
            ));
        }
        for &(a, b) in &st.edges {
            for &s in &sinks[a] {
                for &t in &sources[b] {
                    if !flat[s].children.contains(&t) {
                        flat[s].children.push(t);
                        flat[t].parents += 1;
                    }
                }
            }
        }
        let roots = (0..flat.len()).filter(|&k| flat[k].parents == 0).collect();
        // Dependencies were checked as they were added; the expanded graph is acyclic.
        st.plan = Some(Arc::new(Plan {
            graph: self.inner.id,
            flat,
            ranges,
            subs,
            roots,
        }));
        Ok(())
    }

    fn plan(&self) -> Option<Arc<Plan>> {
        self.state().plan.clone()
    }

    /// `doca_graph_stop`: refused with `InUse` while work queues are attached.
    pub fn stop(&self) -> Result<()> {
        let mut st = self.state();
        if st.plan.is_none() {
            return Err(Error::bad_state("graph is not started"));
        }
        if !st.workqs.is_empty() {
            return Err(Error::with_context(
                ErrorCode::InUse,
                "work queues are still attached to the graph; remove them first",
            ));
        }
        st.plan = None;
        Ok(())
    }

    /// `doca_graph_workq_add`: instances may be submitted to `wq` (the graph must be
    /// started; its contexts must be attached to `wq`).
    pub fn workq_add(&self, wq: &crate::WorkQ) -> Result<()> {
        let mut st = self.state();
        let Some(plan) = &st.plan else {
            return Err(Error::bad_state(
                "graph is not started; start it before adding work queues",
            ));
        };
        if let Some(FlatKind::Ctx { ctx, .. }) = plan
            .flat
            .iter()
            .map(|f| &f.kind)
            .find(|k| matches!(k, FlatKind::Ctx { ctx, .. } if !wq.has_ctx(ctx)))
        {
            return Err(Error::with_context(
                ErrorCode::BadState,
                format!(
                    "the graph's {} context is not attached to the work queue; add it first",
                    ctx.ops().name()
                ),
            ));
        }
        if st.workqs.contains(&wq.id()) {
            return Err(Error::with_context(
                ErrorCode::AlreadyExist,
                "the work queue is already attached to the graph",
            ));
        }
        st.workqs.push(wq.id());
        Ok(())
    }

    /// `doca_graph_workq_rm`.
    pub fn workq_rm(&self, wq: &crate::WorkQ) -> Result<()> {
        let mut st = self.state();
        let Some(i) = st.workqs.iter().position(|w| *w == wq.id()) else {
            return Err(Error::with_context(
                ErrorCode::NotFound,
                "the work queue is not attached to the graph",
            ));
        };
        st.workqs.remove(i);
        Ok(())
    }

    pub(crate) fn has_workq(&self, id: usize) -> bool {
        self.state().workqs.contains(&id)
    }

    /// `doca_graph_destroy`: refused with `InUse` (the graph comes back) while started.
    pub fn destroy(self) -> std::result::Result<(), (Graph, Error)> {
        if self.state().plan.is_some() {
            return Err((
                self,
                Error::with_context(ErrorCode::InUse, "graph is started; stop it first"),
            ));
        }
        Ok(())
    }

    /// `doca_graph_instance_create`: an instance of this started graph.
    pub fn instance_create(&self) -> Result<GraphInstance> {
        let Some(plan) = self.plan() else {
            return Err(Error::bad_state("graph is not started"));
        };
        let slots = plan.flat.iter().map(|_| Slot::default()).collect();
        Ok(GraphInstance {
            inner: std::mem::ManuallyDrop::new(Box::new(InstanceInner {
                graph: self.clone(),
                plan,
                slots,
                outstanding: 0,
                error: None,
            })),
        })
    }
}

/// Per flat node: its data and how it went.
#[derive(Default)]
pub(crate) struct Slot {
    pub(crate) record: Option<JobRecord>,
    pub(crate) cookie: Data,
    pub(crate) state: Option<NodeState>,
    pub(crate) result: u64,
    pub(crate) remaining: u32,
    pub(crate) event: Option<Event>,
}

pub(crate) struct InstanceInner {
    graph: Graph,
    pub(crate) plan: Arc<Plan>,
    pub(crate) slots: Vec<Slot>,
    /// Nodes started and not finished.
    pub(crate) outstanding: usize,
    /// The first failure.
    pub(crate) error: Option<Error>,
}

/// An instance of a graph (`struct doca_graph_instance`): per-node data, submitted as
/// a whole; it comes back in the completion (`Completion::graph_instance`).
pub struct GraphInstance {
    /// Dropped by [`GraphInstance`]'s own `Drop`, out of line: a completion (which may
    /// hold an instance) is dropped on every task's delivery, and its drop glue stays
    /// small enough to inline.
    pub(crate) inner: std::mem::ManuallyDrop<Box<InstanceInner>>,
}

impl Drop for GraphInstance {
    #[inline]
    fn drop(&mut self) {
        #[inline(never)]
        fn drop_inner(inner: &mut std::mem::ManuallyDrop<Box<InstanceInner>>) {
            // SAFETY: dropped once, here, as the instance goes.
            unsafe { std::mem::ManuallyDrop::drop(inner) };
        }
        drop_inner(&mut self.inner);
    }
}

impl fmt::Debug for GraphInstance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GraphInstance")
            .field("nodes", &self.inner.slots.len())
            .field("failed", &self.num_failed_nodes())
            .finish()
    }
}

/// Node kinds, for checking what a per-node call is given.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Ctx,
    User,
    Sub,
}

impl GraphInstance {
    #[inline]
    fn range(&self, n: GraphNode) -> Result<(usize, usize)> {
        let p = &self.inner.plan;
        if n.graph != p.graph || n.index() >= p.ranges.len() {
            return Err(Error::invalid("the node belongs to another graph"));
        }
        Ok(p.ranges[n.index()])
    }

    #[inline]
    fn single(&self, n: GraphNode, what: Kind) -> Result<usize> {
        let (start, _) = self.range(n)?;
        let is = match (
            &self.inner.plan.subs[n.index()],
            &self.inner.plan.flat[start].kind,
        ) {
            (Some(_), _) => Kind::Sub,
            (None, FlatKind::Ctx { .. }) => Kind::Ctx,
            (None, FlatKind::User { .. }) => Kind::User,
        };
        if is != what {
            return Err(Error::invalid(match what {
                Kind::Ctx => "the node is not a context node",
                Kind::User => "the node is not a user node",
                Kind::Sub => "the node is not a sub-graph node",
            }));
        }
        Ok(start)
    }

    /// `doca_graph_instance_set_ctx_node_data`: the job the node runs (its type must be
    /// the node's). The job's buffers come back with the instance.
    pub fn set_ctx_node_data(&mut self, node: GraphNode, job: impl Job) -> Result<()> {
        let i = self.single(node, Kind::Ctx)?;
        let rec = job.into_record();
        if let FlatKind::Ctx { job_type, ctx } = &self.inner.plan.flat[i].kind {
            if *job_type != 0 && rec.job_type != *job_type {
                return Err(Error::invalid(format!(
                    "the node runs jobs of type {job_type}, not {}",
                    rec.job_type
                )));
            }
            if *job_type == 0 && !ctx.ops().handles(rec.job_type) {
                return Err(Error::invalid(format!(
                    "job type {} does not belong to the node's {} context",
                    rec.job_type,
                    ctx.ops().name()
                )));
            }
        }
        self.inner.slots[i].record = Some(rec);
        Ok(())
    }

    /// `doca_graph_instance_set_user_node_data`: the cookie the node's callback gets.
    pub fn set_user_node_data(&mut self, node: GraphNode, cookie: u64) -> Result<()> {
        let i = self.single(node, Kind::User)?;
        self.inner.slots[i].cookie = Data(cookie);
        Ok(())
    }

    /// `doca_graph_instance_set_sub_graph_node_data`: the instance of the sub-graph the
    /// node runs (it moves in; [`take_sub_graph_instance`](Self::take_sub_graph_instance)
    /// gives it back).
    pub fn set_sub_graph_node_data(
        &mut self,
        node: GraphNode,
        sub: GraphInstance,
    ) -> std::result::Result<(), (Error, GraphInstance)> {
        let (start, len) = match self.single(node, Kind::Sub).and_then(|_| self.range(node)) {
            Ok(r) => r,
            Err(e) => return Err((e, sub)),
        };
        let same = self.inner.plan.subs[node.index()]
            .as_ref()
            .is_some_and(|p| Arc::ptr_eq(p, &sub.inner.plan));
        if !same {
            return Err((
                Error::invalid("the instance is not of the node's sub-graph (as started)"),
                sub,
            ));
        }
        let mut sub = sub;
        for (dst, src) in self.inner.slots[start..start + len]
            .iter_mut()
            .zip(sub.inner.slots.drain(..))
        {
            *dst = src;
        }
        Ok(())
    }

    /// The sub-graph instance of a sub-graph node, with its nodes' data and results.
    pub fn take_sub_graph_instance(&mut self, node: GraphNode) -> Result<GraphInstance> {
        self.single(node, Kind::Sub)?;
        let (start, len) = self.range(node)?;
        let plan = self.inner.plan.subs[node.index()]
            .clone()
            .ok_or_else(|| Error::invalid("the node is not a sub-graph node"))?;
        let slots = self.inner.slots[start..start + len]
            .iter_mut()
            .map(std::mem::take)
            .collect();
        let graph = self.sub_graph(node.index());
        Ok(GraphInstance {
            inner: std::mem::ManuallyDrop::new(Box::new(InstanceInner {
                graph,
                plan,
                slots,
                outstanding: 0,
                error: None,
            })),
        })
    }

    fn sub_graph(&self, index: usize) -> Graph {
        match &self.inner.graph.state().nodes[index] {
            NodeKind::Sub(g) => g.clone(),
            _ => self.inner.graph.clone(),
        }
    }

    /// `doca_graph_instance_node_get_state` (a sub-graph node: failed if any of its
    /// nodes failed, completed if all completed, started if any began).
    pub fn node_state(&self, node: GraphNode) -> Result<NodeState> {
        let (start, len) = self.range(node)?;
        let states: Vec<NodeState> = self.inner.slots[start..start + len]
            .iter()
            .map(|s| s.state.unwrap_or(NodeState::NotStarted))
            .collect();
        Ok(if states.contains(&NodeState::Error) {
            NodeState::Error
        } else if states.iter().all(|s| *s == NodeState::Completed) {
            NodeState::Completed
        } else if states.iter().any(|s| *s != NodeState::NotStarted) {
            NodeState::Started
        } else {
            NodeState::NotStarted
        })
    }

    /// `doca_graph_instance_node_get_result`: 0, or the node's (first) error code.
    pub fn node_result(&self, node: GraphNode) -> Result<u64> {
        let (start, len) = self.range(node)?;
        Ok(self.inner.slots[start..start + len]
            .iter()
            .map(|s| s.result)
            .find(|r| *r != 0)
            .unwrap_or(0))
    }

    /// A context node's job completion event, once it ran.
    pub fn node_event(&self, node: GraphNode) -> Result<Option<Event>> {
        let i = self.single(node, Kind::Ctx)?;
        Ok(self.inner.slots[i].event)
    }

    /// A context node's job record (its buffers, and library results in its params).
    pub fn node_record(&self, node: GraphNode) -> Result<Option<&JobRecord>> {
        let i = self.single(node, Kind::Ctx)?;
        Ok(self.inner.slots[i].record.as_ref())
    }

    /// Takes back an owned buffer of a context node's job.
    pub fn take_node_buf(&mut self, node: GraphNode, slot: usize) -> Result<Option<Buf>> {
        let i = self.single(node, Kind::Ctx)?;
        Ok(self.inner.slots[i]
            .record
            .as_mut()
            .and_then(|r| r.take_buf(slot)))
    }

    /// `doca_graph_instance_get_failed_nodes`: nodes of this graph level that failed
    /// (a sub-graph node counts when any of its nodes failed).
    pub fn failed_nodes(&self) -> Vec<GraphNode> {
        let p = &self.inner.plan;
        (0..p.ranges.len())
            .map(|i| GraphNode {
                graph: p.graph,
                index: i as u32,
            })
            .filter(|n| self.node_state(*n) == Ok(NodeState::Error))
            .collect()
    }

    /// `doca_graph_instance_get_num_failed_nodes`.
    pub fn num_failed_nodes(&self) -> usize {
        self.failed_nodes().len()
    }

    /// The graph it is an instance of.
    pub fn graph(&self) -> &Graph {
        &self.inner.graph
    }
}

/// What a user node's callback sees: the nodes of its graph level in the running
/// instance.
pub struct NodeView<'a> {
    pub(crate) slots: &'a [Slot],
    pub(crate) plan: &'a Plan,
    pub(crate) base: usize,
}

impl fmt::Debug for NodeView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NodeView")
            .field("nodes", &self.plan.ranges.len())
            .finish()
    }
}

impl NodeView<'_> {
    fn slot(&self, node: GraphNode) -> Result<&Slot> {
        if node.graph != self.plan.graph || node.index() >= self.plan.ranges.len() {
            return Err(Error::invalid("the node belongs to another graph"));
        }
        let (start, _) = self.plan.ranges[node.index()];
        Ok(&self.slots[self.base + start])
    }

    /// A completed context node's job record (read its buffers, e.g. `data_to_vec`).
    pub fn record(&self, node: GraphNode) -> Result<Option<&JobRecord>> {
        Ok(self.slot(node)?.record.as_ref())
    }

    /// A node's state so far.
    pub fn state(&self, node: GraphNode) -> Result<NodeState> {
        Ok(self.slot(node)?.state.unwrap_or(NodeState::NotStarted))
    }
}

impl Plan {
    /// The view a user node at flat index `i` gets.
    pub(crate) fn view_of<'a>(&'a self, slots: &'a [Slot], i: usize) -> Option<NodeView<'a>> {
        match &self.flat[i].kind {
            FlatKind::User { level, .. } => {
                let plan: &Plan = match &level.plan {
                    Some(p) => p,
                    None => self,
                };
                Some(NodeView {
                    slots,
                    plan,
                    base: level.base,
                })
            }
            FlatKind::Ctx { .. } => None,
        }
    }
}
