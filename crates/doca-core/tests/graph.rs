//! Graphs on both engines: chains, diamonds, wide fan-outs and nested sub-graphs run in
//! dependency order with one event per instance; cycles are refused; a failed node stops
//! its descendants; instances are reusable; misuse gets its code.

#![allow(clippy::result_large_err)]

use doca_core::device::{self, Topology};
use doca_core::graph::JOB_GRAPH;
use doca_core::sync_event::{JOB_UPDATE_ADD, JOB_WAIT_GT};
use doca_core::{
    Completion, Dev, ErrorCode, Graph, GraphInstance, NodeState, RetrieveError, SyncEvent,
    SyncEventJob, WorkQ,
};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A device running jobs on `threads` engine threads (each test file on its own bus).
fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0xc0 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

struct Env {
    se: SyncEvent,
    wq: WorkQ,
}

impl Env {
    fn new(dev: &Dev) -> Env {
        let se = SyncEvent::new();
        se.publisher_add_location_cpu(dev).unwrap();
        se.subscriber_add_location_cpu(dev).unwrap();
        se.as_ctx().start().unwrap();
        let mut wq = WorkQ::new(256).unwrap();
        se.as_ctx().workq_add(&mut wq).unwrap();
        Env { se, wq }
    }

    fn value(&mut self) -> u64 {
        self.wq
            .submit_job(self.se.as_ctx(), SyncEventJob::get(0))
            .map_err(|(e, _)| e)
            .unwrap();
        let c = self.wq.wait(Some(Duration::from_secs(10))).unwrap();
        SyncEventJob::result_value(&c)
    }

    fn run(
        &mut self,
        g: &Graph,
        inst: GraphInstance,
        user_data: u64,
    ) -> Result<Completion, RetrieveError> {
        self.wq
            .graph_submit(inst, user_data)
            .map_err(|(e, _)| e)
            .unwrap();
        let r = self.wq.wait(Some(Duration::from_secs(10)));
        let _ = g;
        r
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        while self.wq.inflight() > 0 {
            let _ = self.wq.wait(Some(Duration::from_secs(10)));
        }
        let _ = self.se.as_ctx().workq_rm(&mut self.wq);
        let _ = self.se.as_ctx().stop();
    }
}

type Log = Arc<Mutex<Vec<String>>>;

fn logger(
    log: &Log,
    name: &str,
) -> impl Fn(&doca_core::graph::NodeView<'_>, doca_core::Data) -> doca_core::Result<()>
+ Send
+ Sync
+ 'static {
    let (log, name) = (Arc::clone(log), name.to_string());
    move |_, cookie| {
        log.lock().unwrap().push(format!("{name}:{}", cookie.u64()));
        Ok(())
    }
}

fn engines() -> [Dev; 2] {
    [device(0), device(2)]
}

#[test]
fn chain_runs_in_order_and_makes_one_event() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        let log: Log = Arc::default();
        let g = Graph::new();
        let u0 = g.user_node_create(logger(&log, "u0")).unwrap();
        let c1 = g.ctx_node_create(JOB_UPDATE_ADD, e.se.as_ctx()).unwrap();
        let log2 = Arc::clone(&log);
        let u2 = g
            .user_node_create(move |v, _| {
                // The add before it completed and read the value before adding.
                assert_eq!(v.state(c1)?, NodeState::Completed);
                let fetched = v.record(c1)?.map(|r| r.params[2]);
                log2.lock().unwrap().push(format!("u2 saw {fetched:?}"));
                Ok(())
            })
            .unwrap();
        let c3 = g.ctx_node_create(JOB_UPDATE_ADD, e.se.as_ctx()).unwrap();
        let u4 = g.user_node_create(logger(&log, "u4")).unwrap();
        for (a, b) in [(u0, c1), (c1, u2), (u2, c3), (c3, u4)] {
            g.add_dependency(a, b).unwrap();
        }
        g.start().unwrap();
        g.workq_add(&e.wq).unwrap();
        let mut inst = g.instance_create().unwrap();
        for round in 0..3u64 {
            inst.set_user_node_data(u0, round).unwrap();
            inst.set_user_node_data(u4, round).unwrap();
            inst.set_ctx_node_data(c1, SyncEventJob::update_add(1, 10))
                .unwrap();
            inst.set_ctx_node_data(c3, SyncEventJob::update_add(2, 11))
                .unwrap();
            let c = e.run(&g, inst, 77 + round).unwrap();
            assert_eq!(
                (
                    c.event().job_type,
                    c.event().user_data.u64(),
                    c.event().result
                ),
                (JOB_GRAPH, 77 + round, 0)
            );
            inst = c.graph_instance.unwrap();
            for n in [u0, c1, u2, c3, u4] {
                assert_eq!(inst.node_state(n).unwrap(), NodeState::Completed);
            }
            assert_eq!(inst.node_event(c3).unwrap().unwrap().user_data.u64(), 11);
            // No other event: intermediate nodes make none.
            assert!(matches!(
                e.wq.progress_retrieve(),
                Err(RetrieveError::Again)
            ));
        }
        assert_eq!(
            *log.lock().unwrap(),
            [
                "u0:0",
                "u2 saw Some(0)",
                "u4:0",
                "u0:1",
                "u2 saw Some(3)",
                "u4:1",
                "u0:2",
                "u2 saw Some(6)",
                "u4:2"
            ]
        );
        assert_eq!(e.value(), 9);
        g.workq_rm(&e.wq).unwrap();
    }
}

#[test]
fn diamond_and_wide_fan_out() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        let g = Graph::new();
        let top = g.user_node_create(|_, _| Ok(())).unwrap();
        let adds: Vec<_> = (0..100)
            .map(|_| g.ctx_node_create(JOB_UPDATE_ADD, e.se.as_ctx()).unwrap())
            .collect();
        let adds2 = adds.clone();
        let join = g
            .user_node_create(move |v, _| {
                for a in &adds2 {
                    if v.state(*a)? != NodeState::Completed {
                        return Err(doca_core::Error::with_context(
                            ErrorCode::Unexpected,
                            "join ran before a parent",
                        ));
                    }
                }
                Ok(())
            })
            .unwrap();
        for a in &adds {
            g.add_dependency(top, *a).unwrap();
            g.add_dependency(*a, join).unwrap();
        }
        g.start().unwrap();
        g.workq_add(&e.wq).unwrap();
        let mut inst = g.instance_create().unwrap();
        for (k, a) in adds.iter().enumerate() {
            inst.set_ctx_node_data(*a, SyncEventJob::update_add(1, k as u64))
                .unwrap();
        }
        let c = e.run(&g, inst, 5).unwrap();
        let inst = c.graph_instance.unwrap();
        assert_eq!(inst.node_state(join).unwrap(), NodeState::Completed);
        assert_eq!(inst.num_failed_nodes(), 0);
        assert_eq!(e.value(), 100);
        g.workq_rm(&e.wq).unwrap();
        g.stop().unwrap();
    }
}

#[test]
fn nested_sub_graphs() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        let log: Log = Arc::default();
        // g3: add 1 -> "g3 done"
        let g3 = Graph::new();
        let g3_add = g3.ctx_node_create(JOB_UPDATE_ADD, e.se.as_ctx()).unwrap();
        let g3_user = g3.user_node_create(logger(&log, "g3")).unwrap();
        g3.add_dependency(g3_add, g3_user).unwrap();
        g3.start().unwrap();
        // g2: sub(g3) -> add 10
        let g2 = Graph::new();
        let g2_sub = g2.sub_graph_node_create(&g3).unwrap();
        let g2_add = g2.ctx_node_create(JOB_UPDATE_ADD, e.se.as_ctx()).unwrap();
        g2.add_dependency(g2_sub, g2_add).unwrap();
        g2.start().unwrap();
        // g1: "start" -> sub(g2) -> "end"
        let g1 = Graph::new();
        let first = g1.user_node_create(logger(&log, "start")).unwrap();
        let g1_sub = g1.sub_graph_node_create(&g2).unwrap();
        let last = g1.user_node_create(logger(&log, "end")).unwrap();
        g1.add_dependency(first, g1_sub).unwrap();
        g1.add_dependency(g1_sub, last).unwrap();
        // A graph cannot hold itself, directly or through its sub-graphs.
        assert_eq!(
            g1.sub_graph_node_create(&g1).unwrap_err().code(),
            ErrorCode::InvalidValue
        );
        assert_eq!(
            g3.sub_graph_node_create(&g1).unwrap_err().code(),
            ErrorCode::InvalidValue
        );
        g1.start().unwrap();
        g1.workq_add(&e.wq).unwrap();

        let mut i3 = g3.instance_create().unwrap();
        i3.set_ctx_node_data(g3_add, SyncEventJob::update_add(1, 0))
            .unwrap();
        i3.set_user_node_data(g3_user, 3).unwrap();
        let mut i2 = g2.instance_create().unwrap();
        i2.set_sub_graph_node_data(g2_sub, i3)
            .map_err(|(e, _)| e)
            .unwrap();
        i2.set_ctx_node_data(g2_add, SyncEventJob::update_add(10, 0))
            .unwrap();
        let mut i1 = g1.instance_create().unwrap();
        // An instance of the wrong graph is refused and handed back.
        let wrong = g3.instance_create().unwrap();
        let (err, _wrong) = i1.set_sub_graph_node_data(g1_sub, wrong).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InvalidValue);
        i1.set_sub_graph_node_data(g1_sub, i2)
            .map_err(|(e, _)| e)
            .unwrap();
        let c = e.run(&g1, i1, 1).unwrap();
        let mut i1 = c.graph_instance.unwrap();
        assert_eq!(*log.lock().unwrap(), ["start:0", "g3:3", "end:0"]);
        assert_eq!(i1.node_state(g1_sub).unwrap(), NodeState::Completed);
        let mut i2 = i1.take_sub_graph_instance(g1_sub).unwrap();
        assert_eq!(i2.node_state(g2_add).unwrap(), NodeState::Completed);
        let i3 = i2.take_sub_graph_instance(g2_sub).unwrap();
        assert_eq!(i3.node_state(g3_user).unwrap(), NodeState::Completed);
        assert_eq!(e.value(), 11);
        g1.workq_rm(&e.wq).unwrap();
    }
}

#[test]
fn a_failed_node_stops_its_descendants_only() {
    for dev in engines() {
        let mut e = Env::new(&dev);
        let g = Graph::new();
        let a = g.user_node_create(|_, _| Ok(())).unwrap();
        let bad = g.ctx_node_create(JOB_WAIT_GT, e.se.as_ctx()).unwrap();
        let after_bad = g.user_node_create(|_, _| panic!("must not run")).unwrap();
        let ok = g.ctx_node_create(JOB_UPDATE_ADD, e.se.as_ctx()).unwrap();
        let failing_user = g
            .user_node_create(|_, _| {
                Err(doca_core::Error::with_context(
                    ErrorCode::NotPermitted,
                    "no",
                ))
            })
            .unwrap();
        g.add_dependency(a, bad).unwrap();
        g.add_dependency(bad, after_bad).unwrap();
        g.add_dependency(a, ok).unwrap();
        g.start().unwrap();
        g.workq_add(&e.wq).unwrap();
        // The event's value will be 300: above what asynchronous waits accept.
        e.wq.submit_job(e.se.as_ctx(), SyncEventJob::update_set(300, 0))
            .map_err(|(e, _)| e)
            .unwrap();
        e.wq.wait(Some(Duration::from_secs(10))).unwrap();
        let mut inst = g.instance_create().unwrap();
        inst.set_ctx_node_data(bad, SyncEventJob::wait_gt(1, 0xff, 0))
            .unwrap();
        inst.set_ctx_node_data(ok, SyncEventJob::update_add(1, 0))
            .unwrap();
        let c = match e.run(&g, inst, 9) {
            Err(RetrieveError::IoFailed(c)) => c,
            other => panic!("expected a failed instance, got {other:?}"),
        };
        assert_eq!(
            (c.event().job_type, c.event().user_data.u64()),
            (JOB_GRAPH, 9)
        );
        // The status is the first failure in time: either failing node's.
        assert!(
            c.event().result == ErrorCode::NotPermitted as u64
                || c.event().result == ErrorCode::InvalidValue as u64,
            "{}",
            c.event().result
        );
        let inst = c.graph_instance.unwrap();
        assert_eq!(inst.failed_nodes(), vec![bad, failing_user]);
        assert_eq!(inst.node_state(after_bad).unwrap(), NodeState::NotStarted);
        assert_eq!(inst.node_state(ok).unwrap(), NodeState::Completed);
        assert_eq!(
            inst.node_result(failing_user).unwrap(),
            ErrorCode::NotPermitted as u64
        );
        assert_eq!(
            inst.node_result(bad).unwrap(),
            ErrorCode::InvalidValue as u64
        );
        g.workq_rm(&e.wq).unwrap();
    }
}

#[test]
fn graphs_and_single_jobs_share_a_work_queue() {
    let mut e = Env::new(&device(0));
    let g = Graph::new();
    let n = g.ctx_node_create(JOB_UPDATE_ADD, e.se.as_ctx()).unwrap();
    g.start().unwrap();
    g.workq_add(&e.wq).unwrap();
    let mut inst = g.instance_create().unwrap();
    inst.set_ctx_node_data(n, SyncEventJob::update_add(5, 0))
        .unwrap();
    e.wq.graph_submit(inst, 1).map_err(|(e, _)| e).unwrap();
    e.wq.submit_job(e.se.as_ctx(), SyncEventJob::update_add(7, 2))
        .map_err(|(e, _)| e)
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..2 {
        let c = e.wq.wait(Some(Duration::from_secs(10))).unwrap();
        seen.push((c.event().job_type, c.event().user_data.u64()));
    }
    seen.sort();
    assert_eq!(
        seen,
        [(JOB_UPDATE_ADD, 2), (JOB_GRAPH, 1)]
            .into_iter()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(e.value(), 12);
    g.workq_rm(&e.wq).unwrap();
}

#[test]
fn cycles_and_misuse_are_refused() {
    let dev = device(0);
    let mut e = Env::new(&dev);
    let g = Graph::new();
    let a = g.user_node_create(|_, _| Ok(())).unwrap();
    let b = g.user_node_create(|_, _| Ok(())).unwrap();
    let c = g.user_node_create(|_, _| Ok(())).unwrap();
    g.add_dependency(a, b).unwrap();
    g.add_dependency(b, c).unwrap();
    let err = g.add_dependency(c, a).unwrap_err();
    assert!(
        err.code() == ErrorCode::InvalidValue && err.to_string().contains("cycle"),
        "{err}"
    );
    assert_eq!(
        g.add_dependency(a, a).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        g.add_dependency(a, b).unwrap_err().code(),
        ErrorCode::AlreadyExist
    );
    let other = Graph::new();
    let foreign = other.user_node_create(|_, _| Ok(())).unwrap();
    assert_eq!(
        g.add_dependency(a, foreign).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    // Only user nodes: no context node.
    let err = g.start().unwrap_err();
    assert!(
        err.to_string().contains("at least one context node"),
        "{err}"
    );
    assert_eq!(g.instance_create().unwrap_err().code(), ErrorCode::BadState);
    assert_eq!(g.workq_add(&e.wq).unwrap_err().code(), ErrorCode::BadState);
    let x = g.ctx_node_create(JOB_UPDATE_ADD, e.se.as_ctx()).unwrap();
    assert_eq!(
        g.ctx_node_create(doca_core::sync_event::JOB_UPDATE_ADD + 100, e.se.as_ctx())
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    g.add_dependency(c, x).unwrap();
    // A stopped context cannot be started into a graph.
    let idle = SyncEvent::new();
    idle.publisher_add_location_cpu(&dev).unwrap();
    idle.subscriber_add_location_cpu(&dev).unwrap();
    let g2 = Graph::new();
    g2.ctx_node_create(JOB_UPDATE_ADD, idle.as_ctx()).unwrap();
    assert_eq!(g2.start().unwrap_err().code(), ErrorCode::BadState);

    g.start().unwrap();
    assert_eq!(
        g.user_node_create(|_, _| Ok(())).unwrap_err().code(),
        ErrorCode::BadState
    );
    let mut inst = g.instance_create().unwrap();
    // Not on this work queue yet.
    let (err, mut inst2) = e.wq.graph_submit(inst, 0).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NotFound);
    g.workq_add(&e.wq).unwrap();
    // A context node without its job.
    let (err, back) = e.wq.graph_submit(inst2, 0).unwrap_err();
    assert!(
        err.code() == ErrorCode::InvalidValue && err.to_string().contains("has no job"),
        "{err}"
    );
    inst2 = back;
    assert_eq!(
        inst2
            .set_ctx_node_data(x, SyncEventJob::get(0))
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        inst2
            .set_ctx_node_data(a, SyncEventJob::update_add(1, 0))
            .unwrap_err()
            .code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        inst2.set_user_node_data(foreign, 1).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    inst2
        .set_ctx_node_data(x, SyncEventJob::update_add(1, 0))
        .unwrap();
    inst = inst2;
    // The work queue's depth bounds an instance with its jobs.
    let mut small = WorkQ::new(1).unwrap();
    e.se.as_ctx().workq_add(&mut small).unwrap();
    g.workq_add(&small).unwrap();
    let (err, back) = small.graph_submit(inst, 0).unwrap_err();
    assert_eq!(err.code(), ErrorCode::NoMemory);
    g.workq_rm(&small).unwrap();
    e.se.as_ctx().workq_rm(&mut small).unwrap();
    let c = e.run(&g, back, 3).unwrap();
    assert_eq!(c.event().user_data.u64(), 3);
    assert_eq!(g.stop().unwrap_err().code(), ErrorCode::InUse);
    let g = match g.destroy() {
        Err((g, err)) => {
            assert_eq!(err.code(), ErrorCode::InUse);
            g
        }
        Ok(()) => panic!("destroyed while started"),
    };
    g.workq_rm(&e.wq).unwrap();
    assert_eq!(g.workq_rm(&e.wq).unwrap_err().code(), ErrorCode::NotFound);
    g.stop().unwrap();
    g.destroy().unwrap();
}
