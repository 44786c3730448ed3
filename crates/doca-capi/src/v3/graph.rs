//! `doca_graph.h` of the task generation: graphs bound to a progress engine, whose
//! context nodes take tasks. The graph machinery is the job generation's
//! (`doca_core::graph`), run on the engine's work queue.

use super::pe::{doca_ctx3, doca_pe, doca_task};
use crate::common::handles::{Handle, kind};
use crate::common::{
    Result, destroy_in_place, doca_data, doca_error_t, err, ffi, free_handle, handle, handle_mut,
    into_handle, invalid, new_handle, out_ptr, put,
};
use doca_core::{Data, Error, ErrorCode, Graph, GraphInstance, GraphNode};
use std::cell::Cell;
use std::ffi::c_void;

/// `doca_graph_completion_cb_t`.
pub type doca_graph_completion_cb_t =
    Option<unsafe extern "C" fn(*mut doca_graph_instance3, doca_data, doca_data)>;
/// `doca_graph_user_node_cb_t`.
pub type doca_graph_user_node_cb_t =
    Option<unsafe extern "C" fn(cookie: *mut c_void) -> doca_error_t>;

/// `struct doca_graph`.
pub struct doca_graph3 {
    graph: Graph,
    pe: *const doca_pe,
    user_data: Cell<Data>,
    ok: Cell<doca_graph_completion_cb_t>,
    err: Cell<doca_graph_completion_cb_t>,
    num_instances: Cell<u32>,
    instances: Cell<u32>,
    started: Cell<bool>,
    #[allow(clippy::vec_box)]
    nodes: Vec<Box<doca_graph_node3>>,
}

/// `struct doca_graph_node`.
#[derive(Debug)]
pub struct doca_graph_node3 {
    node: GraphNode,
    ctx: *const doca_ctx3,
}

/// `struct doca_graph_instance`.
pub struct doca_graph_instance3 {
    inst: Option<GraphInstance>,
    graph: *const doca_graph3,
    user_data: doca_data,
    /// The task each context node runs, by node index.
    tasks: Vec<*mut doca_task>,
}

impl std::fmt::Debug for doca_graph3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("doca_graph")
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

impl std::fmt::Debug for doca_graph_instance3 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("doca_graph_instance")
            .field("submitted", &self.inst.is_none())
            .finish()
    }
}

impl Handle for doca_graph3 {
    type Kind = kind::Boxed;
}
impl Handle for doca_graph_node3 {
    type Kind = kind::Borrowed;
}
impl Handle for doca_graph_instance3 {
    type Kind = kind::Boxed;
}

fn started(g: &doca_graph3) -> Result<()> {
    if g.started.get() {
        Err(err(
            ErrorCode::BadState,
            "the graph is started; stop it first",
        ))
    } else {
        Ok(())
    }
}

/// `doca_graph_create`: a graph whose instances run on `pe`.
#[unsafe(export_name = "doca3__graph_create")]
pub unsafe extern "C" fn doca_graph_create(
    pe: *mut doca_pe,
    graph: *mut *mut doca_graph3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live engine (it cannot be destroyed while graphs exist).
        let p = unsafe { handle(pe, "pe") }?;
        out_ptr(graph, "graph")?;
        p.graphs.set(p.graphs.get() + 1);
        p.graph_done.set(Some(deliver_instance));
        new_handle(graph, "graph", || {
            Ok(doca_graph3 {
                graph: Graph::new(),
                pe,
                user_data: Cell::new(Data(0)),
                ok: Cell::new(None),
                err: Cell::new(None),
                num_instances: Cell::new(0),
                instances: Cell::new(0),
                started: Cell::new(false),
                nodes: Vec::new(),
            })
        })
    })
}

/// `doca_graph_destroy`: only while stopped, with no instance left.
#[unsafe(export_name = "doca3__graph_destroy")]
pub unsafe extern "C" fn doca_graph_destroy(graph: *mut doca_graph3) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle(graph, "graph") }?;
        started(g)?;
        if g.instances.get() > 0 {
            return Err(err(
                ErrorCode::InUse,
                format!(
                    "{} instance(s) of the graph exist; destroy them first",
                    g.instances.get()
                ),
            ));
        }
        let pe = g.pe;
        // SAFETY: a live boxed handle, destroyed in place or kept.
        let r = unsafe {
            destroy_in_place(graph, "graph", |g: doca_graph3| {
                let doca_graph3 {
                    graph,
                    pe,
                    user_data,
                    ok,
                    err,
                    num_instances,
                    instances,
                    started,
                    nodes,
                } = g;
                graph.destroy().map_err(|(graph, e)| {
                    (
                        doca_graph3 {
                            graph,
                            pe,
                            user_data,
                            ok,
                            err,
                            num_instances,
                            instances,
                            started,
                            nodes,
                        },
                        e,
                    )
                })
            })
        };
        if r.is_ok() {
            // SAFETY: the engine outlives its graphs (its destroy is refused until then).
            let p = unsafe { &*pe };
            p.graphs.set(p.graphs.get() - 1);
        }
        r
    })
}

/// `doca_graph_set_conf`: the instance callbacks and how many instances may exist.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_set_conf(
    graph: *mut doca_graph3,
    graph_completion_cb: doca_graph_completion_cb_t,
    graph_error_cb: doca_graph_completion_cb_t,
    num_graph_instances: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle(graph, "graph") }?;
        started(g)?;
        if graph_completion_cb.is_none() || graph_error_cb.is_none() {
            return Err(invalid(
                "both the completion and the error callback are needed",
            ));
        }
        if num_graph_instances == 0 {
            return Err(invalid("the number of instances must be at least 1"));
        }
        g.ok.set(graph_completion_cb);
        g.err.set(graph_error_cb);
        g.num_instances.set(num_graph_instances);
        Ok(())
    })
}

/// `doca_graph_set_user_data`: before start.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_set_user_data(
    graph: *mut doca_graph3,
    user_data: doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle(graph, "graph") }?;
        started(g)?;
        g.user_data.set(user_data);
        Ok(())
    })
}

/// `doca_graph_get_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_get_user_data(
    graph: *const doca_graph3,
    user_data: *mut doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle(graph, "graph") }?;
        let o = out_ptr(user_data, "user_data")?;
        // SAFETY: output checked.
        unsafe { put(o, g.user_data.get()) };
        Ok(())
    })
}

fn add_node(
    g: &mut doca_graph3,
    out: *mut *mut doca_graph_node3,
    node: Result<GraphNode>,
    ctx: *const doca_ctx3,
) -> Result<()> {
    let o = out_ptr(out, "node")?;
    started(g)?;
    let node = node?;
    // SAFETY: output checked.
    unsafe { crate::v22::graph::keep_node(&mut g.nodes, doca_graph_node3 { node, ctx }, o) };
    Ok(())
}

/// `doca_graph_node_create_from_ctx`: a node running one task of `ctx` per instance.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_node_create_from_ctx(
    graph: *mut doca_graph3,
    ctx: *const doca_ctx3,
    node: *mut *mut doca_graph_node3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (g, c) = unsafe { (handle_mut(graph, "graph")?, handle(ctx, "ctx")?) };
        let n = g.graph.ctx_node_create_any(&c.ctx);
        add_node(g, node, n, ctx)
    })
}

/// `doca_graph_node_create_from_user`: a node calling `cb` with the instance's cookie.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_node_create_from_user(
    graph: *mut doca_graph3,
    cb: doca_graph_user_node_cb_t,
    node: *mut *mut doca_graph_node3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle_mut(graph, "graph") }?;
        let cb = cb.ok_or_else(|| invalid("cb is NULL"))?;
        let n = g.graph.user_node_create(move |_, cookie| {
            // SAFETY: the program's callback with the cookie it set on the instance.
            let r = unsafe { cb(cookie.ptr()) };
            match Error::from_raw(r) {
                None => Ok(()),
                Some(e) => Err(e),
            }
        });
        add_node(g, node, n, std::ptr::null())
    })
}

/// `doca_graph_node_create_from_graph`: a node running an instance of a started
/// sub-graph.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_node_create_from_graph(
    graph: *mut doca_graph3,
    sub_graph: *mut doca_graph3,
    node: *mut *mut doca_graph_node3,
) -> doca_error_t {
    ffi(|| {
        if std::ptr::eq(graph, sub_graph) {
            return Err(err(
                ErrorCode::NotPermitted,
                "a graph cannot be its own sub-graph",
            ));
        }
        // SAFETY: NULL or live handles, distinct.
        let (g, s) = unsafe { (handle_mut(graph, "graph")?, handle(sub_graph, "sub_graph")?) };
        let n = g.graph.sub_graph_node_create(&s.graph).map_err(|e| {
            if e.code() == ErrorCode::InvalidValue {
                err(ErrorCode::NotPermitted, e.to_string())
            } else {
                e
            }
        });
        add_node(g, node, n, std::ptr::null())
    })
}

/// `doca_graph_add_dependency`: `to` runs after `from` (a cycle is `NOT_PERMITTED`).
#[unsafe(export_name = "doca3__graph_add_dependency")]
pub unsafe extern "C" fn doca_graph_add_dependency(
    graph: *mut doca_graph3,
    from: *mut doca_graph_node3,
    to: *mut doca_graph_node3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (g, f, t) = unsafe {
            (
                handle(graph, "graph")?,
                handle(from, "from")?,
                handle(to, "to")?,
            )
        };
        started(g)?;
        g.graph.add_dependency(f.node, t.node).map_err(|e| {
            if e.code() == ErrorCode::InvalidValue {
                err(ErrorCode::NotPermitted, e.to_string())
            } else {
                e
            }
        })
    })
}

/// `doca_graph_start`: needs `set_conf` and every context node's context running.
#[unsafe(export_name = "doca3__graph_start")]
pub unsafe extern "C" fn doca_graph_start(graph: *mut doca_graph3) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle(graph, "graph") }?;
        started(g)?;
        if g.ok.get().is_none() {
            return Err(err(
                ErrorCode::BadState,
                "the graph is not configured (doca_graph_set_conf)",
            ));
        }
        // SAFETY: the engine outlives its graphs.
        let pe = unsafe { &*g.pe };
        g.graph
            .start()
            .map_err(|e| err(ErrorCode::BadState, e.to_string()))?;
        if let Err(e) = pe.pe.graph_attach(&g.graph) {
            let _ = g.graph.stop();
            return Err(err(ErrorCode::BadState, e.to_string()));
        }
        g.started.set(true);
        Ok(())
    })
}

/// `doca_graph_stop`: `IN_USE` while instances exist.
#[unsafe(export_name = "doca3__graph_stop")]
pub unsafe extern "C" fn doca_graph_stop(graph: *mut doca_graph3) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle(graph, "graph") }?;
        if !g.started.get() {
            return Err(err(ErrorCode::BadState, "the graph is not started"));
        }
        if g.instances.get() > 0 {
            return Err(err(
                ErrorCode::InUse,
                "instances of the graph exist; destroy them first",
            ));
        }
        // SAFETY: the engine outlives its graphs.
        let pe = unsafe { &*g.pe };
        pe.pe.graph_detach(&g.graph)?;
        g.graph.stop()?;
        g.started.set(false);
        Ok(())
    })
}

/// `doca_graph_instance_create`: only on a started graph, within its configured count.
#[unsafe(export_name = "doca3__graph_instance_create")]
pub unsafe extern "C" fn doca_graph_instance_create(
    graph: *const doca_graph3,
    graph_instance: *mut *mut doca_graph_instance3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle(graph, "graph") }?;
        let out = out_ptr(graph_instance, "graph_instance")?;
        if !g.started.get() {
            return Err(err(ErrorCode::BadState, "the graph is not started"));
        }
        if g.instances.get() >= g.num_instances.get() {
            return Err(err(
                ErrorCode::NoMemory,
                format!("all {} instances of the graph exist", g.num_instances.get()),
            ));
        }
        let inst = g.graph.instance_create()?;
        g.instances.set(g.instances.get() + 1);
        let h = into_handle(doca_graph_instance3 {
            inst: Some(inst),
            graph,
            user_data: Data(0),
            tasks: vec![std::ptr::null_mut(); g.nodes.len()],
        });
        // SAFETY: output checked.
        unsafe { put(out, h) };
        Ok(())
    })
}

fn submitted() -> Error {
    err(ErrorCode::InUse, "the graph instance is submitted")
}

/// `doca_graph_instance_destroy`: `IN_USE` while submitted.
#[unsafe(export_name = "doca3__graph_instance_destroy")]
pub unsafe extern "C" fn doca_graph_instance_destroy(
    graph_instance: *mut doca_graph_instance3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(graph_instance, "graph_instance") }?;
        if h.inst.is_none() {
            return Err(submitted());
        }
        // SAFETY: the graph outlives its instances (its destroy is refused until then).
        let g = unsafe { &*h.graph };
        g.instances.set(g.instances.get() - 1);
        // SAFETY: a live boxed handle, destroyed once.
        unsafe { free_handle(graph_instance, "graph_instance") }
    })
}

/// `doca_graph_instance_set_user_data`: not while submitted.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_set_user_data(
    graph_instance: *mut doca_graph_instance3,
    user_data: doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle_mut(graph_instance, "graph_instance") }?;
        if h.inst.is_none() {
            return Err(submitted());
        }
        h.user_data = user_data;
        Ok(())
    })
}

/// `doca_graph_instance_get_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_get_user_data(
    graph_instance: *const doca_graph_instance3,
    user_data: *mut doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(graph_instance, "graph_instance") }?;
        let o = out_ptr(user_data, "user_data")?;
        // SAFETY: output checked.
        unsafe { put(o, h.user_data) };
        Ok(())
    })
}

/// The instance (not submitted) and the node (of its graph).
unsafe fn inst_node<'a>(
    inst: *mut doca_graph_instance3,
    node: *mut doca_graph_node3,
) -> Result<(&'a mut doca_graph_instance3, &'a doca_graph_node3)> {
    // SAFETY: the caller's contract.
    let (h, n) = unsafe { (handle_mut(inst, "graph_instance")?, handle(node, "node")?) };
    if h.inst.is_none() {
        return Err(err(ErrorCode::BadState, "the graph instance is submitted"));
    }
    // SAFETY: the graph outlives its instances.
    let g = unsafe { &*h.graph };
    if !g.nodes.iter().any(|b| std::ptr::eq(&**b, n)) {
        return Err(err(
            ErrorCode::NotPermitted,
            "the node is not of the instance's graph",
        ));
    }
    Ok((h, n))
}

/// `doca_graph_instance_set_ctx_node_data`: the task the node runs (a task of the
/// node's context; its own callbacks are not called inside a graph).
#[unsafe(export_name = "doca3__graph_instance_set_ctx_node_data")]
pub unsafe extern "C" fn doca_graph_instance_set_ctx_node_data(
    graph_instance: *mut doca_graph_instance3,
    node: *mut doca_graph_node3,
    task: *mut doca_task,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (h, n) = unsafe { inst_node(graph_instance, node) }?;
        if n.ctx.is_null() {
            return Err(err(
                ErrorCode::NotPermitted,
                "the node is not a context node",
            ));
        }
        if task.is_null() {
            return Err(invalid("task is NULL"));
        }
        // SAFETY: a task the program holds.
        let rec = unsafe { super::pe::task_record(task, n.ctx) }?;
        let inst = h.inst.as_mut().ok_or_else(submitted)?;
        inst.set_ctx_node_data(n.node, rec)
            .map_err(|e| err(ErrorCode::NotPermitted, e.to_string()))?;
        h.tasks[n.node.index()] = task;
        Ok(())
    })
}

/// `doca_graph_instance_set_user_node_data`: the cookie the node's callback gets.
#[unsafe(export_name = "doca3__graph_instance_set_user_node_data")]
pub unsafe extern "C" fn doca_graph_instance_set_user_node_data(
    graph_instance: *mut doca_graph_instance3,
    node: *mut doca_graph_node3,
    cookie: *mut c_void,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (h, n) = unsafe { inst_node(graph_instance, node) }?;
        let inst = h.inst.as_mut().ok_or_else(submitted)?;
        inst.set_user_node_data(n.node, cookie as usize as u64)
    })
}

/// `doca_graph_instance_set_sub_graph_node_data`: the sub-graph's instance the node
/// runs (it comes back with this one).
#[unsafe(export_name = "doca3__graph_instance_set_sub_graph_node_data")]
pub unsafe extern "C" fn doca_graph_instance_set_sub_graph_node_data(
    graph_instance: *mut doca_graph_instance3,
    node: *mut doca_graph_node3,
    sub_graph_instance: *mut doca_graph_instance3,
) -> doca_error_t {
    ffi(|| {
        if std::ptr::eq(graph_instance, sub_graph_instance) {
            return Err(invalid("an instance cannot be its own sub-graph instance"));
        }
        // SAFETY: NULL or live handles, distinct.
        let (h, n) = unsafe { inst_node(graph_instance, node) }?;
        // SAFETY: as above.
        let s = unsafe { handle_mut(sub_graph_instance, "sub_graph_instance") }?;
        let sub = s.inst.take().ok_or_else(submitted)?;
        let inst = h.inst.as_mut().ok_or_else(submitted)?;
        match inst.set_sub_graph_node_data(n.node, sub) {
            Ok(()) => Ok(()),
            Err((e, back)) => {
                s.inst = Some(back);
                Err(e)
            }
        }
    })
}

/// `doca_graph_instance_submit`: runs the instance; its graph's completion or error
/// callback reports it from `doca_pe_progress`.
#[unsafe(export_name = "doca3__graph_instance_submit")]
pub unsafe extern "C" fn doca_graph_instance_submit(
    graph_instance: *mut doca_graph_instance3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle_mut(graph_instance, "graph_instance") }?;
        let inst = h.inst.take().ok_or_else(submitted)?;
        // SAFETY: the graph and its engine outlive the instance.
        let pe = unsafe { &*(*h.graph).pe };
        match pe.pe.graph_submit(inst, graph_instance as usize as u64) {
            Ok(()) => {
                for t in h.tasks.iter().filter(|t| !t.is_null()) {
                    // SAFETY: tasks the program gave the instance.
                    unsafe { super::pe::task_set_submitted(*t) };
                }
                Ok(())
            }
            Err((e, back)) => {
                h.inst = Some(back);
                Err(e)
            }
        }
    })
}

/// A graph instance completed: the instance comes back, its tasks get their status,
/// and the graph's callback runs.
fn deliver_instance(c: doca_core::Completion) {
    let p: *mut doca_graph_instance3 = c.record.user_data.ptr();
    let failed = c.error.is_some();
    let Some(inst) = c.graph_instance else {
        return;
    };
    // SAFETY: the record's user data is the instance handle submitted (it cannot be
    // destroyed while submitted).
    let h = unsafe { &mut *p };
    // SAFETY: the graph outlives its instances.
    let g = unsafe { &*h.graph };
    for (i, t) in h.tasks.iter().enumerate().filter(|(_, t)| !t.is_null()) {
        let node = g.nodes[i].node;
        let status = inst
            .node_result(node)
            .map(|r| r as doca_error_t)
            .unwrap_or(ErrorCode::Unexpected as doca_error_t);
        let record = inst.node_record(node).ok().flatten();
        // SAFETY: tasks the program gave the instance.
        unsafe { super::pe::task_set_done(*t, status, record) };
    }
    h.inst = Some(inst);
    let cb = if failed { g.err.get() } else { g.ok.get() };
    if let Some(cb) = cb {
        // SAFETY: the program's callback with its instance.
        unsafe { cb(p, h.user_data, g.user_data.get()) };
    }
}
