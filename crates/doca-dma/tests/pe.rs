//! The progress engine (the task generation) end to end with DMA and sync event
//! contexts, on both engines: tasks run in the caller (engine_threads = 0) or on two
//! engine threads. Every test runs on both.

#![allow(clippy::result_large_err)]

use doca_core::device::{self, Topology};
use doca_core::exec::{CtxPhase, Job, Pe, PeEvent, TaskPool};
use doca_core::{
    AccessFlags, Buf, BufInventory, Ctx, Dev, ErrorCode, JobRecord, Mmap, SyncEvent, SyncEventJob,
};
use doca_dma::{Dma, JOB_MEMCPY, MemcpyJob};
use std::cell::Cell;
use std::time::{Duration, Instant};

fn device(threads: u32) -> Dev {
    let text = format!(
        "[[host.device]]\npci_addr = \"0000:{:02x}:00.0\"\nibdev_name = \"pe{threads}\"\nengine_threads = {threads}\n",
        0x60 + threads
    );
    let t = Topology::from_toml(&text, None).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn engines() -> [Dev; 2] {
    [device(0), device(2)]
}

struct Env {
    mmap: Mmap,
    inv: BufInventory,
}

fn env(dev: &Dev) -> Env {
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0u8; 1 << 20]).unwrap();
    mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    mmap.dev_add(dev).unwrap();
    mmap.start().unwrap();
    let mut inv = BufInventory::new(512).unwrap();
    inv.start().unwrap();
    Env { mmap, inv }
}

impl Env {
    fn pair(&self, i: usize, len: usize, fill: u8) -> (Buf, Buf) {
        let mut src = self.inv.buf_at(&self.mmap, 2 * i * len, len).unwrap();
        src.write_data(&vec![fill; len]).unwrap();
        let dst = self.inv.buf_at(&self.mmap, (2 * i + 1) * len, len).unwrap();
        (src, dst)
    }
}

fn dma_on(pe: &Pe, dev: &Dev, tasks: u32) -> Dma {
    let dma = Dma::new();
    dma.as_ctx().dev_add(dev).unwrap();
    dma.as_ctx().set_task_room(JOB_MEMCPY, tasks).unwrap();
    pe.connect(dma.as_ctx()).unwrap();
    pe.start_ctx(dma.as_ctx()).unwrap();
    dma
}

/// Progresses until `until` holds, or panics after 10 s.
fn progress_until(pe: &Pe, mut on: impl FnMut(PeEvent), mut until: impl FnMut() -> bool) {
    let end = Instant::now() + Duration::from_secs(10);
    while !until() {
        pe.progress(&mut on);
        assert!(Instant::now() < end, "timed out progressing the engine");
    }
}

#[test]
fn memcpy_tasks_complete_through_progress_with_their_user_data() {
    for dev in engines() {
        let e = env(&dev);
        let pe = Pe::new().unwrap();
        let dma = dma_on(&pe, &dev, 32);
        for i in 0..32u64 {
            let (src, dst) = e.pair(i as usize, 4096, i as u8);
            pe.submit(dma.as_ctx(), MemcpyJob::new(src, dst, i).into_record())
                .unwrap();
        }
        assert_eq!(pe.inflight(), 32);
        let mut seen = [false; 32];
        let n = Cell::new(0);
        progress_until(
            &pe,
            |ev| {
                let PeEvent::Task(c) = ev else {
                    panic!("no state change expected")
                };
                assert!(c.error.is_none());
                let i = c.record.user_data.u64() as usize;
                let dst = c.record.buf(MemcpyJob::DST).unwrap();
                assert_eq!(dst.data_to_vec(), vec![i as u8; 4096]);
                seen[i] = true;
                n.set(n.get() + 1);
            },
            || n.get() == 32,
        );
        assert!(seen.iter().all(|s| *s));
        assert_eq!(pe.inflight(), 0);
        assert!(!pe.progress(|_| panic!("nothing left")));
        pe.stop_ctx(dma.as_ctx()).unwrap();
        assert_eq!(dma.as_ctx().phase(), CtxPhase::Idle);
    }
}

#[test]
fn a_handler_may_submit_again_and_progress_stays_bounded() {
    for dev in engines() {
        let e = env(&dev);
        let pe = Pe::new().unwrap();
        let dma = dma_on(&pe, &dev, 1);
        let (src, dst) = e.pair(0, 64, 7);
        pe.submit(dma.as_ctx(), MemcpyJob::new(src, dst, 0).into_record())
            .unwrap();
        let rounds = Cell::new(0u64);
        progress_until(
            &pe,
            |ev| {
                if let PeEvent::Task(c) = ev {
                    rounds.set(rounds.get() + 1);
                    if rounds.get() < 100 {
                        let mut r = c.record;
                        r.user_data = doca_core::Data(rounds.get());
                        let mut dst = r.take_buf(MemcpyJob::DST).unwrap();
                        dst.reset_data_len();
                        r.set_buf(MemcpyJob::DST, dst);
                        pe.submit(dma.as_ctx(), r).map_err(|(e, _)| e).unwrap();
                    }
                }
            },
            || rounds.get() == 100,
        );
        pe.stop_ctx(dma.as_ctx()).unwrap();
    }
}

#[test]
fn life_cycle_rules() {
    let dev = device(0);
    let pe = Pe::new().unwrap();
    let dma = Dma::new();
    dma.as_ctx().dev_add(&dev).unwrap();
    // Not connected: start is refused.
    assert_eq!(
        pe.start_ctx(dma.as_ctx()).unwrap_err().code(),
        ErrorCode::NotConnected
    );
    pe.connect(dma.as_ctx()).unwrap();
    assert_eq!(
        pe.connect(dma.as_ctx()).unwrap_err().code(),
        ErrorCode::NotPermitted
    );
    let other = Pe::new().unwrap();
    assert_eq!(
        other.connect(dma.as_ctx()).unwrap_err().code(),
        ErrorCode::NotPermitted
    );
    assert_eq!(
        other.start_ctx(dma.as_ctx()).unwrap_err().code(),
        ErrorCode::NotConnected
    );
    // Idle: no tasks, and stop is refused.
    let (err, _) = pe
        .submit(dma.as_ctx(), JobRecord::new(JOB_MEMCPY, doca_core::Data(0)))
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadState);
    // Stopping an idle context does nothing.
    pe.stop_ctx(dma.as_ctx()).unwrap();
    assert_eq!(dma.as_ctx().phase(), CtxPhase::Idle);
    pe.start_ctx(dma.as_ctx()).unwrap();
    assert_eq!(dma.as_ctx().phase(), CtxPhase::Running);
    assert_eq!(
        pe.start_ctx(dma.as_ctx()).unwrap_err().code(),
        ErrorCode::BadState
    );
    // Running: configuration and a second connection are refused.
    assert_eq!(
        dma.as_ctx()
            .set_task_room(JOB_MEMCPY, 4)
            .unwrap_err()
            .code(),
        ErrorCode::BadState
    );
    assert_eq!(
        dma.as_ctx().disconnect_pe().unwrap_err().code(),
        ErrorCode::BadState
    );
    // The engine cannot go while a context is connected.
    let pe = pe.destroy().unwrap_err().0;
    pe.stop_ctx(dma.as_ctx()).unwrap();
    // Restarting works, and so does stopping again.
    pe.start_ctx(dma.as_ctx()).unwrap();
    pe.stop_ctx(dma.as_ctx()).unwrap();
    dma.as_ctx().disconnect_pe().unwrap();
    pe.destroy().unwrap();
}

#[test]
fn stop_waits_for_tasks_in_flight_and_taken_then_reports_idle() {
    for dev in engines() {
        let e = env(&dev);
        let pe = Pe::new().unwrap();
        let dma = dma_on(&pe, &dev, 8);
        let pool: TaskPool<u32> = TaskPool::new(dma.as_ctx(), 8, |i| i as u32);
        let t = pool.alloc().unwrap();
        for i in 0..8 {
            let (src, dst) = e.pair(i, 1024, 1);
            pe.submit(
                dma.as_ctx(),
                MemcpyJob::new(src, dst, i as u64).into_record(),
            )
            .unwrap();
        }
        let err = pe.stop_ctx(dma.as_ctx()).unwrap_err();
        assert_eq!(err.code(), ErrorCode::InProgress, "{err}");
        assert_eq!(dma.as_ctx().phase(), CtxPhase::Stopping);
        // No new tasks while stopping, and a second stop says the same.
        assert_eq!(pool.alloc().unwrap_err().code(), ErrorCode::BadState);
        assert_eq!(
            pe.stop_ctx(dma.as_ctx()).unwrap_err().code(),
            ErrorCode::InProgress
        );
        let completions = Cell::new(0);
        progress_until(
            &pe,
            |ev| match ev {
                PeEvent::Task(_) => completions.set(completions.get() + 1),
                PeEvent::State { .. } => panic!("a task is still taken"),
            },
            || completions.get() == 8,
        );
        // Every completion came back, but a task is still taken: still stopping.
        assert!(!pe.progress(|_| panic!("nothing to report")));
        assert_eq!(dma.as_ctx().phase(), CtxPhase::Stopping);
        pool.free(t.as_ptr()).unwrap();
        assert_eq!(
            pool.free(t.as_ptr()).unwrap_err().code(),
            ErrorCode::InvalidValue
        );
        let mut changes = Vec::new();
        assert!(pe.progress(|ev| {
            if let PeEvent::State { prev, next, .. } = ev {
                changes.push((prev, next));
            }
        }));
        assert_eq!(changes, vec![(CtxPhase::Stopping, CtxPhase::Idle)]);
        assert_eq!(dma.as_ctx().phase(), CtxPhase::Idle);
    }
}

#[test]
fn stop_flushes_tasks_that_never_ran_with_an_error() {
    for dev in engines() {
        let pe = Pe::new().unwrap();
        let se = SyncEvent::new();
        se.publisher_add_location_cpu(&dev).unwrap();
        se.subscriber_add_location_cpu(&dev).unwrap();
        se.as_ctx().set_task_room(0, 4).unwrap();
        pe.connect(se.as_ctx()).unwrap();
        pe.start_ctx(se.as_ctx()).unwrap();
        // A wait whose value never comes: it stays in flight until the stop flushes it.
        pe.submit(
            se.as_ctx(),
            SyncEventJob::wait_gt(5, u64::MAX, 1).into_record(),
        )
        .unwrap();
        pe.submit(se.as_ctx(), SyncEventJob::update_add(1, 2).into_record())
            .unwrap();
        let mut done = Vec::new();
        let mut on = |ev| {
            if let PeEvent::Task(c) = ev {
                done.push((c.record.user_data.u64(), c.error.map(|e| e.code() as i32)));
            }
        };
        // Give the wait every chance to run (it cannot complete).
        for _ in 0..50 {
            pe.progress(&mut on);
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(
            pe.stop_ctx(se.as_ctx()).unwrap_err().code(),
            ErrorCode::InProgress
        );
        let idle = Cell::new(false);
        progress_until(
            &pe,
            |ev| match ev {
                PeEvent::State { next, .. } => idle.set(next == CtxPhase::Idle),
                ev => on(ev),
            },
            || idle.get(),
        );
        done.sort();
        assert_eq!(
            done,
            vec![(1, Some(ErrorCode::IoFailed as i32)), (2, None)],
            "the add completes, the wait is flushed"
        );
    }
}

#[test]
fn notification_handle_wakes_a_sleeping_program() {
    for dev in engines() {
        let e = env(&dev);
        let pe = Pe::new().unwrap();
        let dma = dma_on(&pe, &dev, 4);
        let fd = pe.notification_handle().unwrap();
        assert_eq!(pe.notification_handle().unwrap(), fd);
        pe.request_notification().unwrap();
        let (src, dst) = e.pair(0, 4096, 3);
        pe.submit(dma.as_ctx(), MemcpyJob::new(src, dst, 9).into_record())
            .unwrap();
        // SAFETY: `fd` is the engine's eventfd, alive while `pe` is.
        let bfd = unsafe { rustix::fd::BorrowedFd::borrow_raw(fd) };
        let mut fds = [rustix::event::PollFd::new(
            &bfd,
            rustix::event::PollFlags::IN,
        )];
        let ts = rustix::time::Timespec {
            tv_sec: 10,
            tv_nsec: 0,
        };
        let n = rustix::event::poll(&mut fds, Some(&ts)).unwrap();
        assert_eq!(n, 1, "the handle did not become readable");
        // Whatever handle the program passes, the engine's own is cleared.
        pe.clear_notification(0).unwrap();
        let got = Cell::new(0);
        progress_until(
            &pe,
            |ev| {
                if let PeEvent::Task(c) = ev {
                    got.set(c.record.user_data.u64());
                }
            },
            || got.get() == 9,
        );
        pe.stop_ctx(dma.as_ctx()).unwrap();
    }
}

#[test]
fn dropping_the_engine_leaves_its_contexts_idle_and_destroyable() {
    let dev = device(2);
    let pe = Pe::new().unwrap();
    let dma = dma_on(&pe, &dev, 4);
    drop(pe);
    assert_eq!(dma.as_ctx().phase(), CtxPhase::Idle);
    assert_eq!(dma.as_ctx().connected_pe(), None);
    let ctx: Ctx = dma.as_ctx().clone();
    ctx.dev_rm(&dev).unwrap();
}

/// What a program may do to an engine and a context, in any order.
#[derive(Debug, Clone)]
enum Op {
    Submit(usize),
    Progress,
    Stop,
    Start,
    Take,
    Give,
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        (1usize..4).prop_map(Op::Submit),
        Just(Op::Progress),
        Just(Op::Progress),
        Just(Op::Stop),
        Just(Op::Start),
        Just(Op::Take),
        Just(Op::Give),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Any sequence of submissions, progress, stops, starts and task pool use keeps the
    /// rules: submissions only while running, every accepted task completes exactly
    /// once, a stop is `Ok` exactly when nothing is in flight or taken, and a stopping
    /// context becomes idle once that holds and the engine progresses.
    #[test]
    fn any_sequence_keeps_the_life_cycle_rules(ops in proptest::collection::vec(op(), 1..40), threads in 0u32..3) {
        let dev = device(if threads == 1 { 0 } else { threads });
        let e = env(&dev);
        let pe = Pe::new().unwrap();
        let dma = dma_on(&pe, &dev, 16);
        let pool: TaskPool<u8> = TaskPool::new(dma.as_ctx(), 2, |_| 0);
        let mut taken = Vec::new();
        let mut next = 0u64;
        let mut outstanding = std::collections::BTreeSet::new();
        let deliver = |ev: PeEvent, outstanding: &mut std::collections::BTreeSet<u64>| {
            if let PeEvent::Task(c) = ev {
                assert!(outstanding.remove(&c.record.user_data.u64()), "completed twice or never submitted");
            }
        };
        for op in ops {
            let phase = dma.as_ctx().phase();
            match op {
                Op::Submit(n) => {
                    for _ in 0..n {
                        if outstanding.len() >= 16 {
                            break;
                        }
                        let i = (next % 64) as usize;
                        let (src, dst) = e.pair(i, 64, 1);
                        let r = pe.submit(dma.as_ctx(), MemcpyJob::new(src, dst, next).into_record());
                        if phase == CtxPhase::Running {
                            r.map_err(|(e, _)| e).unwrap();
                            outstanding.insert(next);
                        } else {
                            proptest::prop_assert_eq!(r.unwrap_err().0.code(), ErrorCode::BadState);
                        }
                        next += 1;
                    }
                }
                Op::Progress => {
                    pe.progress(|ev| deliver(ev, &mut outstanding));
                }
                Op::Stop => {
                    let r = pe.stop_ctx(dma.as_ctx());
                    match phase {
                        CtxPhase::Idle => proptest::prop_assert!(r.is_ok()),
                        _ => {
                            let busy = pe.ctx_inflight(dma.as_ctx()) > 0 || !taken.is_empty();
                            match r {
                                Ok(()) => proptest::prop_assert!(!busy),
                                Err(e) => {
                                    proptest::prop_assert_eq!(e.code(), ErrorCode::InProgress);
                                    proptest::prop_assert!(busy);
                                }
                            }
                        }
                    }
                }
                Op::Start => {
                    let r = pe.start_ctx(dma.as_ctx());
                    proptest::prop_assert_eq!(r.is_ok(), phase == CtxPhase::Idle);
                }
                Op::Take => {
                    match pool.alloc() {
                        Ok(p) => {
                            proptest::prop_assert_eq!(phase, CtxPhase::Running);
                            taken.push(p);
                        }
                        Err(e) => proptest::prop_assert!(
                            phase != CtxPhase::Running || e.code() == ErrorCode::NoMemory
                        ),
                    }
                }
                Op::Give => {
                    if let Some(p) = taken.pop() {
                        pool.free(p.as_ptr()).unwrap();
                    }
                }
            }
        }
        // Everything comes back, and the context stops.
        for p in taken.drain(..) {
            pool.free(p.as_ptr()).unwrap();
        }
        let _ = pe.stop_ctx(dma.as_ctx());
        let end = Instant::now() + Duration::from_secs(10);
        while !outstanding.is_empty() || dma.as_ctx().phase() != CtxPhase::Idle {
            pe.progress(|ev| deliver(ev, &mut outstanding));
            proptest::prop_assert!(Instant::now() < end, "never settled");
        }
        proptest::prop_assert_eq!(pe.inflight(), 0);
    }
}

/// `progress_by_ref` hands the completions of tasks that ran and succeeded to its first
/// handler, in place, and everything else (a failed task and the state change it makes,
/// a graph instance) to the second, as `progress` does; what the first handler leaves
/// in a completion (its buffers) goes back after it returns.
#[test]
fn progress_by_ref_splits_completions() {
    for dev in engines() {
        let e = env(&dev);
        let pe = Pe::new().unwrap();
        let dma = dma_on(&pe, &dev, 16);
        let free = e.inv.num_free_elements();
        let g = doca_core::Graph::new();
        let node = g.ctx_node_create(JOB_MEMCPY, dma.as_ctx()).unwrap();
        g.start().unwrap();
        pe.graph_attach(&g).unwrap();
        let mut inst = g.instance_create().unwrap();
        let (src, dst) = e.pair(40, 256, 0x5a);
        inst.set_ctx_node_data(node, MemcpyJob::new(src, dst, 0).into_record())
            .unwrap();
        pe.graph_submit(inst, 77).map_err(|(e, _)| e).unwrap();
        for i in 0..8u64 {
            let (src, dst) = e.pair(i as usize, 1024, i as u8);
            pe.submit(dma.as_ctx(), MemcpyJob::new(src, dst, i).into_record())
                .unwrap();
        }
        let (done, other) = (Cell::new(0u32), Cell::new(0u32));
        let mut instance = None;
        let end = Instant::now() + Duration::from_secs(10);
        while done.get() < 8 || instance.is_none() {
            pe.progress_by_ref(
                |c| {
                    assert!(c.error.is_none() && c.graph_instance.is_none());
                    let i = c.record.user_data.u64();
                    let dst = c.record.buf(MemcpyJob::DST).unwrap();
                    assert_eq!(dst.data_to_vec(), vec![i as u8; 1024]);
                    done.set(done.get() + 1);
                },
                |ev| match ev {
                    PeEvent::Task(mut c) => {
                        assert_eq!(c.event().user_data.u64(), 77);
                        instance = c.graph_instance.take();
                        other.set(other.get() + 1);
                    }
                    PeEvent::State { .. } => panic!("no state change expected"),
                },
            );
            assert!(Instant::now() < end, "timed out");
        }
        assert_eq!(other.get(), 1);
        drop(instance);
        // A failed task: its context stops, both reported through the second handler.
        let (src, _) = e.pair(50, 64, 1);
        let small = e.inv.buf_at(&e.mmap, 60 * 64, 16).unwrap();
        pe.submit(dma.as_ctx(), MemcpyJob::new(src, small, 9).into_record())
            .unwrap();
        let (failed, states) = (Cell::new(0u32), Cell::new(0u32));
        let end = Instant::now() + Duration::from_secs(10);
        while dma.as_ctx().phase() != CtxPhase::Idle {
            pe.progress_by_ref(
                |_| panic!("the task failed"),
                |ev| match ev {
                    PeEvent::Task(c) => {
                        assert_eq!(c.error.unwrap().code(), ErrorCode::InvalidValue);
                        failed.set(failed.get() + 1);
                    }
                    PeEvent::State { .. } => states.set(states.get() + 1),
                },
            );
            assert!(Instant::now() < end, "timed out");
        }
        assert_eq!((failed.get(), states.get()), (1, 2));
        pe.graph_detach(&g).unwrap();
        assert_eq!(e.inv.num_free_elements(), free);
    }
}
