//! `doca_graph.h`.

use crate::common::destroy_in_place;
use crate::common::{
    Result, doca_data, doca_error_t, doca_graph_instance_node_state, err, ffi, free_handle, handle,
    handle_mut, into_handle, invalid, new_handle, out_ptr, put,
};
use crate::v22::exec::{doca_ctx, doca_event, doca_job, doca_workq, with_job_from_c, write_back};
use doca_core::graph::JOB_GRAPH;
use doca_core::{Error, ErrorCode, Graph, GraphInstance, GraphNode};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

crate::common::handles::handle_kinds! {
    Boxed: doca_graph, doca_graph_instance;
    Borrowed: doca_graph_node;
}

/// `doca_graph_user_node_cb_t`.
pub type doca_graph_user_node_cb_t =
    Option<unsafe extern "C" fn(cookie: *mut c_void, ev: *mut doca_event) -> doca_error_t>;

/// `struct doca_graph`: the graph and its nodes (boxed: their addresses are handles).
#[derive(Debug)]
pub struct doca_graph {
    graph: Graph,
    /// Instances made from this handle and not destroyed: they point back at it, so the
    /// graph is not destroyed before them.
    instances: AtomicUsize,
    // Boxed: node addresses are the program's handles.
    #[allow(clippy::vec_box)]
    nodes: Vec<Box<doca_graph_node>>,
}

/// `struct doca_graph_node`.
#[derive(Debug)]
pub struct doca_graph_node {
    node: GraphNode,
}

/// What a user node's callback gets: the program's cookie and event.
#[derive(Debug)]
struct UserSlot {
    cookie: *mut c_void,
    ev: *mut doca_event,
}

/// `struct doca_graph_instance`: the instance (absent while it runs), and per node the
/// program's event to fill, user node data and lent sub-graph instance.
#[derive(Debug)]
pub struct doca_graph_instance {
    inst: Option<GraphInstance>,
    graph: *const doca_graph,
    evs: Vec<*mut doca_event>,
    users: Vec<Option<Box<UserSlot>>>,
    subs: Vec<*mut doca_graph_instance>,
    user_data: doca_data,
}

/// `doca_graph_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_create(graph: *mut *mut doca_graph) -> doca_error_t {
    ffi(|| {
        new_handle(graph, "graph", || {
            Ok(doca_graph {
                graph: Graph::new(),
                instances: AtomicUsize::new(0),
                nodes: Vec::new(),
            })
        })
    })
}

/// `doca_graph_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_destroy(graph: *mut doca_graph) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let n = unsafe { handle(graph, "graph") }?
            .instances
            .load(Ordering::Acquire);
        if n > 0 {
            return Err(err(
                ErrorCode::InUse,
                format!("{n} instance(s) of the graph exist; destroy them first"),
            ));
        }
        // SAFETY: a live boxed handle, destroyed in place or kept.
        unsafe {
            destroy_in_place(graph, "graph", |g: doca_graph| {
                let doca_graph {
                    graph,
                    instances,
                    nodes,
                } = g;
                graph.destroy().map_err(|(graph, e)| {
                    let back = doca_graph {
                        graph,
                        instances,
                        nodes,
                    };
                    (back, e)
                })
            })
        }
    })
}

fn add_node(
    g: &mut doca_graph,
    out: *mut *mut doca_graph_node,
    node: Result<GraphNode>,
) -> Result<()> {
    let node = node?;
    // SAFETY: output checked by the caller.
    unsafe { keep_node(&mut g.nodes, doca_graph_node { node }, out) };
    Ok(())
}

/// Keeps a node's handle in its graph (boxed: C holds its address) and gives C that
/// address (both generations' node handles).
///
/// # Safety
/// `out` is writable.
pub(crate) unsafe fn keep_node<N>(nodes: &mut Vec<Box<N>>, node: N, out: *mut *mut N) {
    let mut b = Box::new(node);
    let p: *mut N = &mut *b;
    nodes.push(b);
    // SAFETY: the caller's contract.
    unsafe { put(out, p) };
}

/// `doca_graph_ctx_node_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_ctx_node_create(
    graph: *mut doca_graph,
    job_type: c_int,
    ctx: *const doca_ctx,
    node: *mut *mut doca_graph_node,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (g, c) = unsafe { (handle_mut(graph, "graph")?, handle(ctx, "ctx")?) };
        let out = out_ptr(node, "node")?;
        let t = u32::try_from(job_type)
            .map_err(|_| invalid(format!("{job_type} is not a job type")))?;
        let n = g.graph.ctx_node_create(t, &c.ctx);
        add_node(g, out, n)
    })
}

/// `doca_graph_user_node_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_user_node_create(
    graph: *mut doca_graph,
    cb: doca_graph_user_node_cb_t,
    node: *mut *mut doca_graph_node,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle_mut(graph, "graph") }?;
        let out = out_ptr(node, "node")?;
        let cb = cb.ok_or_else(|| invalid("cb is NULL"))?;
        let n = g.graph.user_node_create(move |_, data| {
            let slot = data.ptr::<UserSlot>();
            if slot.is_null() {
                return Err(invalid(
                    "the user node has no data (doca_graph_instance_set_user_node_data)",
                ));
            }
            // SAFETY: the slot lives in the instance handle, which outlives its runs;
            // the callback is the program's.
            let r = unsafe { cb((*slot).cookie, (*slot).ev) };
            match Error::from_raw(r) {
                None => Ok(()),
                Some(e) => Err(e),
            }
        });
        add_node(g, out, n)
    })
}

/// `doca_graph_sub_graph_node_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_sub_graph_node_create(
    graph: *mut doca_graph,
    sub_graph: *mut doca_graph,
    node: *mut *mut doca_graph_node,
) -> doca_error_t {
    ffi(|| {
        if std::ptr::eq(graph, sub_graph) {
            return Err(invalid("a graph cannot be its own sub-graph"));
        }
        // SAFETY: NULL or live handles, distinct.
        let (g, s) = unsafe { (handle_mut(graph, "graph")?, handle(sub_graph, "sub_graph")?) };
        let out = out_ptr(node, "node")?;
        let n = g.graph.sub_graph_node_create(&s.graph);
        add_node(g, out, n)
    })
}

/// `doca_graph_add_dependency`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_add_dependency(
    graph: *mut doca_graph,
    from: *mut doca_graph_node,
    to: *mut doca_graph_node,
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
        g.graph.add_dependency(f.node, t.node)
    })
}

/// `doca_graph_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_start(graph: *mut doca_graph) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle(graph, "graph") }?.graph.start())
}

/// `doca_graph_stop`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_stop(graph: *mut doca_graph) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle(graph, "graph") }?.graph.stop())
}

/// `doca_graph_workq_add`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_workq_add(
    graph: *mut doca_graph,
    workq: *mut doca_workq,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (g, w) = unsafe { (handle(graph, "graph")?, handle(workq, "workq")?) };
        g.graph.workq_add(&w.wq)
    })
}

/// `doca_graph_workq_rm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_workq_rm(
    graph: *mut doca_graph,
    workq: *mut doca_workq,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (g, w) = unsafe { (handle(graph, "graph")?, handle(workq, "workq")?) };
        g.graph.workq_rm(&w.wq)
    })
}

/// `doca_graph_instance_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_create(
    graph: *const doca_graph,
    graph_instance: *mut *mut doca_graph_instance,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let g = unsafe { handle(graph, "graph") }?;
        let out = out_ptr(graph_instance, "graph_instance")?;
        let inst = g.graph.instance_create()?;
        g.instances.fetch_add(1, Ordering::AcqRel);
        let n = g.nodes.len();
        let h = into_handle(doca_graph_instance {
            inst: Some(inst),
            graph,
            evs: vec![std::ptr::null_mut(); n],
            users: (0..n).map(|_| None).collect(),
            subs: vec![std::ptr::null_mut(); n],
            user_data: doca_data::default(),
        });
        // SAFETY: output checked.
        unsafe { put(out, h) };
        Ok(())
    })
}

fn running() -> Error {
    err(
        ErrorCode::BadState,
        "the graph instance is running (or lent to a parent instance as a sub-graph)",
    )
}

/// `doca_graph_instance_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_destroy(
    graph_instance: *mut doca_graph_instance,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(graph_instance, "graph_instance") }?;
        if h.inst.is_none() {
            return Err(running());
        }
        // SAFETY: the graph handle outlives its instances (its destroy is refused until
        // they are gone).
        unsafe { &*h.graph }
            .instances
            .fetch_sub(1, Ordering::AcqRel);
        // SAFETY: a live boxed handle, destroyed once.
        unsafe { free_handle(graph_instance, "graph_instance") }
    })
}

/// The instance handle and its node's index.
///
/// # Safety
/// NULL or live handles.
unsafe fn inst_node<'a>(
    inst: *mut doca_graph_instance,
    node: *const doca_graph_node,
) -> Result<(&'a mut doca_graph_instance, GraphNode)> {
    // SAFETY: the caller's contract.
    let (h, n) = unsafe { (handle_mut(inst, "graph_instance")?, handle(node, "node")?) };
    if h.inst.is_none() {
        return Err(running());
    }
    if n.node.index() >= h.evs.len() {
        return Err(invalid("the node is not of the instance's graph"));
    }
    Ok((h, n.node))
}

/// `doca_graph_instance_set_ctx_node_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_set_ctx_node_data(
    graph_instance: *mut doca_graph_instance,
    node: *mut doca_graph_node,
    job: *mut doca_job,
    ev: *mut doca_event,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles; the job struct matches its type.
        let ((h, n), rec) = unsafe {
            (
                inst_node(graph_instance, node)?,
                with_job_from_c(job, |_, rec| Ok(rec))?,
            )
        };
        let ev = out_ptr(ev, "ev")?;
        h.inst
            .as_mut()
            .ok_or_else(running)?
            .set_ctx_node_data(n, rec)?;
        h.evs[n.index()] = ev;
        Ok(())
    })
}

/// `doca_graph_instance_set_user_node_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_set_user_node_data(
    graph_instance: *mut doca_graph_instance,
    node: *mut doca_graph_node,
    cookie: *mut c_void,
    ev: *mut doca_event,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (h, n) = unsafe { inst_node(graph_instance, node) }?;
        let slot = Box::new(UserSlot { cookie, ev });
        let addr = &*slot as *const UserSlot as u64;
        h.inst
            .as_mut()
            .ok_or_else(running)?
            .set_user_node_data(n, addr)?;
        h.users[n.index()] = Some(slot);
        h.evs[n.index()] = ev;
        Ok(())
    })
}

/// `doca_graph_instance_set_sub_graph_node_data`: the sub-graph instance is lent to
/// this one until this one completes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_set_sub_graph_node_data(
    graph_instance: *mut doca_graph_instance,
    node: *mut doca_graph_node,
    sub_graph_instance: *mut doca_graph_instance,
    ev: *mut doca_event,
) -> doca_error_t {
    ffi(|| {
        if std::ptr::eq(graph_instance, sub_graph_instance) {
            return Err(invalid("an instance cannot be its own sub-graph instance"));
        }
        // SAFETY: NULL or live, distinct handles.
        let ((h, n), sub) = unsafe {
            (
                inst_node(graph_instance, node)?,
                handle_mut(sub_graph_instance, "sub_graph_instance")?,
            )
        };
        let sub_inst = sub.inst.take().ok_or_else(running)?;
        if let Err((e, back)) = h
            .inst
            .as_mut()
            .ok_or_else(running)?
            .set_sub_graph_node_data(n, sub_inst)
        {
            sub.inst = Some(back);
            return Err(e);
        }
        h.subs[n.index()] = sub_graph_instance;
        h.evs[n.index()] = ev;
        Ok(())
    })
}

/// `doca_workq_graph_submit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_graph_submit(
    workq: *mut doca_workq,
    graph_instance: *mut doca_graph_instance,
    user_data: doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (w, h) = unsafe {
            (
                handle_mut(workq, "workq")?,
                handle_mut(graph_instance, "graph_instance")?,
            )
        };
        let inst = h.inst.take().ok_or_else(running)?;
        match w.wq.graph_submit(inst, graph_instance as usize as u64) {
            Ok(()) => {
                h.user_data = user_data;
                Ok(())
            }
            Err((e, back)) => {
                h.inst = Some(back);
                Err(e)
            }
        }
    })
}

/// Puts a completed instance back in its handle and fills the program's node events
/// (sub-graphs first, recursively).
///
/// # Safety
/// `h` is a live instance handle whose instance just completed.
unsafe fn settle(h: &mut doca_graph_instance, mut inst: GraphInstance) {
    // SAFETY: the graph handle outlives its instances (the C contract).
    let g = unsafe { &*h.graph };
    for (i, node) in g.nodes.iter().enumerate() {
        let n = node.node;
        if !h.subs[i].is_null() {
            // SAFETY: the lent sub-instance handle is live.
            let sub = unsafe { &mut *h.subs[i] };
            if let Ok(si) = inst.take_sub_graph_instance(n) {
                // SAFETY: recursion on the sub-instance handle.
                unsafe { settle(sub, si) };
            }
            h.subs[i] = std::ptr::null_mut();
        }
        if let Ok(Some(rec)) = inst.node_record(n) {
            let failed = inst.node_result(n).unwrap_or(0) != 0;
            // SAFETY: the record came from with_job_from_c.
            unsafe { write_back(rec, failed) };
        }
        let ev = h.evs[i];
        if ev.is_null() {
            continue;
        }
        let result = inst.node_result(n).unwrap_or(0);
        let (type_, user_data) = match inst.node_event(n) {
            Ok(Some(e)) => (e.job_type as c_int, e.user_data),
            // SAFETY: the program's event, valid while the instance lives.
            _ => unsafe { ((*ev).type_, (*ev).user_data) },
        };
        // SAFETY: the program's event struct.
        unsafe {
            put(
                ev,
                doca_event {
                    type_,
                    user_data,
                    result: doca_data::from_u64(result),
                },
            )
        };
    }
    h.inst = Some(inst);
}

/// Delivers a graph instance's completion.
///
/// # Safety
/// `ev` is writable; the completion is of an instance submitted by
/// [`doca_workq_graph_submit`].
pub(crate) unsafe fn deliver_graph(ev: *mut doca_event, mut c: doca_core::Completion) {
    let h = c.record.user_data.ptr::<doca_graph_instance>();
    let result = c.event().result;
    // SAFETY: user_data is the handle given at submit, live until destroyed, which is
    // refused while it runs.
    let h = unsafe { &mut *h };
    if let Some(inst) = c.graph_instance.take() {
        // SAFETY: the instance just completed.
        unsafe { settle(h, inst) };
    }
    // SAFETY: the program's event.
    unsafe {
        put(
            ev,
            doca_event {
                type_: JOB_GRAPH as c_int,
                user_data: h.user_data,
                result: doca_data::from_u64(result),
            },
        )
    };
}

/// `doca_graph_instance_get_num_failed_nodes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_get_num_failed_nodes(
    graph_instance: *const doca_graph_instance,
    num_failed_nodes: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(graph_instance, "graph_instance") }?;
        let out = out_ptr(num_failed_nodes, "num_failed_nodes")?;
        let n = h.inst.as_ref().ok_or_else(running)?.num_failed_nodes() as u32;
        // SAFETY: output checked.
        unsafe { put(out, n) };
        Ok(())
    })
}

/// `doca_graph_instance_get_failed_nodes`: `*num_failed_nodes` is the array's capacity
/// on input and the number written on output.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_get_failed_nodes(
    graph_instance: *const doca_graph_instance,
    failed_nodes: *mut *const doca_graph_node,
    num_failed_nodes: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(graph_instance, "graph_instance") }?;
        let arr = out_ptr(failed_nodes, "failed_nodes")?;
        let num = out_ptr(num_failed_nodes, "num_failed_nodes")?;
        let failed = h.inst.as_ref().ok_or_else(running)?.failed_nodes();
        // SAFETY: num is readable; the graph handle outlives its instances.
        let (cap, g) = unsafe { (*num as usize, &*h.graph) };
        if failed.len() > cap {
            return Err(err(
                ErrorCode::NoMemory,
                format!("{} nodes failed; the array holds {cap}", failed.len()),
            ));
        }
        for (i, n) in failed.iter().enumerate() {
            let p = g
                .nodes
                .iter()
                .find(|b| b.node == *n)
                .map_or(std::ptr::null(), |b| &**b as *const doca_graph_node);
            // SAFETY: i < cap entries of the program's array.
            unsafe { put(arr.add(i), p) };
        }
        // SAFETY: output checked.
        unsafe { put(num, failed.len() as u32) };
        Ok(())
    })
}

/// `doca_graph_instance_node_get_state`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_node_get_state(
    graph_instance: *const doca_graph_instance,
    node: *const doca_graph_node,
    state: *mut doca_graph_instance_node_state,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles; only read here.
        let (h, n) = unsafe { inst_node(graph_instance as *mut doca_graph_instance, node) }?;
        let out = out_ptr(state, "state")?;
        let s = h.inst.as_ref().ok_or_else(running)?.node_state(n)?;
        // SAFETY: output checked.
        unsafe { put(out, s as c_int) };
        Ok(())
    })
}

/// `doca_graph_instance_node_get_result`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_graph_instance_node_get_result(
    graph_instance: *const doca_graph_instance,
    node: *const doca_graph_node,
    result: *mut doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles; only read here.
        let (h, n) = unsafe { inst_node(graph_instance as *mut doca_graph_instance, node) }?;
        let out = out_ptr(result, "result")?;
        let r = h.inst.as_ref().ok_or_else(running)?.node_result(n)?;
        // SAFETY: output checked.
        unsafe { put(out, doca_data::from_u64(r)) };
        Ok(())
    })
}
