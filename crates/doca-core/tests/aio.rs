//! Jobs as futures on tokio, on both engines: many in flight from one task
//! (`join_all`, `FuturesUnordered`, a fixed array), the detached-completion stream,
//! graph instances, sync event waits woken by another task, futures dropped while their
//! jobs run (the buffers come back when the jobs end), refusals that hand the record
//! back; the same on a progress engine (`AsyncPe`), with a stop awaited while tasks
//! are in flight. (`aio_zero_alloc.rs`: no allocation per job after start.)

#![cfg(feature = "tokio")]

use doca_core::aio::AsyncWorkQ;
use doca_core::device::{self, Topology};
use doca_core::graph::JOB_GRAPH;
use doca_core::sync_event::JOB_UPDATE_ADD;
use doca_core::{
    AccessFlags, BufInventory, Dev, ErrorCode, Graph, Mmap, NodeState, SyncEvent, SyncEventJob,
    WorkQ,
};
use doca_dma::{Dma, MemcpyJob};
use futures_util::StreamExt;
use futures_util::stream::FuturesUnordered;
use std::sync::Arc;
use std::time::Duration;

/// A device running jobs on `threads` engine threads (this file's own bus).
fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0x90 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

const SLOT: usize = 8192;

struct Env {
    slots: usize,
    mmap: Mmap,
    inv: BufInventory,
    dma: Dma,
}

impl Env {
    fn new(dev: &Dev, slots: usize) -> Env {
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 2 * slots * SLOT]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(4 * slots).unwrap();
        inv.start().unwrap();
        let dma = Dma::new();
        dma.as_ctx().dev_add(dev).unwrap();
        dma.as_ctx().start().unwrap();
        Env {
            slots,
            mmap,
            inv,
            dma,
        }
    }

    /// A memcpy job of `len` bytes from source slot `i` (filled with a pattern of `i`)
    /// into destination slot `i`.
    fn job(&self, i: usize, len: usize) -> MemcpyJob {
        let mut src = self.inv.buf_at(&self.mmap, i * SLOT, len).unwrap();
        let fill: Vec<u8> = (0..len).map(|k| (i * 31 + k) as u8).collect();
        src.append(&fill).unwrap();
        let dst = self
            .inv
            .buf_at(&self.mmap, (self.slots + i) * SLOT, len)
            .unwrap();
        MemcpyJob::new(src, dst, i as u64)
    }

    fn check(&self, c: &mut doca_core::Completion, len: usize) {
        c.status().unwrap();
        let i = c.record.user_data.u64() as usize;
        let dst = c.take_buf(MemcpyJob::DST).unwrap();
        let want: Vec<u8> = (0..len).map(|k| (i * 31 + k) as u8).collect();
        assert_eq!(dst.data_to_vec(), want, "job {i}");
    }
}

fn engines() -> [Dev; 2] {
    [device(0), device(2)]
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn many_jobs_in_flight_from_one_task() {
    for dev in engines() {
        runtime().block_on(async {
            let env = Env::new(&dev, 1024);
            let wq = AsyncWorkQ::new(WorkQ::new(64).unwrap()).unwrap();
            wq.attach(env.dma.as_ctx()).unwrap();
            for len in [64, 4096] {
                // join_all over 64 jobs.
                let futs: Vec<_> = (0..64)
                    .map(|i| wq.submit_job(env.dma.as_ctx(), env.job(i, len)).unwrap())
                    .collect();
                for mut c in futures_util::future::join_all(futs).await {
                    env.check(&mut c, len);
                }
                // FuturesUnordered, refilled as jobs complete: 500 jobs, 64 at a time.
                let mut next = 0usize;
                let mut running = FuturesUnordered::new();
                let mut seen = 0;
                while seen < 500 {
                    while next < 500 && running.len() < 64 {
                        running.push(
                            wq.submit_job(env.dma.as_ctx(), env.job(next % 256, len))
                                .unwrap(),
                        );
                        next += 1;
                    }
                    let mut c = running.next().await.unwrap();
                    env.check(&mut c, len);
                    seen += 1;
                }
            }
            assert_eq!(wq.inflight(), 0);
            wq.detach(env.dma.as_ctx()).unwrap();
        });
    }
}

#[test]
fn jobs_polled_from_several_tasks_of_a_multi_threaded_runtime() {
    for dev in engines() {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(3)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let wq = Arc::new(AsyncWorkQ::new(WorkQ::new(64).unwrap()).unwrap());
            let mut tasks = Vec::new();
            for t in 0..8usize {
                // Inventories are used by one thread at a time: each task has its own
                // memory and context, all on the one queue.
                let env = Env::new(&dev, 64);
                wq.attach(env.dma.as_ctx()).unwrap();
                let wq = Arc::clone(&wq);
                tasks.push(tokio::spawn(async move {
                    for round in 0..50 {
                        let i = (t * 50 + round) % 64;
                        let f = wq
                            .submit_job(env.dma.as_ctx(), env.job(i, 2048))
                            .map_err(|(e, _)| e);
                        let mut c = f.unwrap().await;
                        env.check(&mut c, 2048);
                    }
                    wq.detach(env.dma.as_ctx()).unwrap();
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
        });
    }
}

#[test]
fn detached_jobs_come_out_of_the_stream() {
    for dev in engines() {
        runtime().block_on(async {
            let env = Env::new(&dev, 256);
            let wq = AsyncWorkQ::new(WorkQ::new(32).unwrap()).unwrap();
            wq.attach(env.dma.as_ctx()).unwrap();
            for i in 0..32 {
                wq.submit_detached(env.dma.as_ctx(), env.job(i, 1000).into_record_for_test())
                    .unwrap();
            }
            // The queue is full: the next submission is refused and the job comes back.
            let (e, rec) = wq
                .submit_detached(env.dma.as_ctx(), env.job(40, 10).into_record_for_test())
                .unwrap_err();
            assert_eq!(e.code(), ErrorCode::NoMemory);
            assert_eq!(rec.user_data.u64(), 40);
            drop(rec);
            let mut seen = [false; 32];
            let mut s = wq.completions();
            while let Some(mut c) = s.next().await {
                seen[c.record.user_data.u64() as usize] = true;
                env.check(&mut c, 1000);
            }
            assert!(seen.iter().all(|&b| b));
            drop(s);
            wq.detach(env.dma.as_ctx()).unwrap();
        });
    }
}

/// `MemcpyJob` into its record (the detached path takes records).
trait IntoRecord {
    fn into_record_for_test(self) -> doca_core::JobRecord;
}

impl IntoRecord for MemcpyJob {
    fn into_record_for_test(self) -> doca_core::JobRecord {
        doca_core::exec::Job::into_record(self)
    }
}

#[test]
fn dropped_futures_leave_their_jobs_running_and_buffers_come_back() {
    for dev in engines() {
        runtime().block_on(async {
            let env = Env::new(&dev, 64);
            let free_before = env.inv.num_free_elements();
            let wq = AsyncWorkQ::new(WorkQ::new(64).unwrap()).unwrap();
            wq.attach(env.dma.as_ctx()).unwrap();
            for i in 0..48 {
                // Large jobs, dropped at once: on engine threads they are still running.
                drop(wq.submit_job(env.dma.as_ctx(), env.job(i, SLOT)).unwrap());
            }
            // A dropped future that was polled once (registered with the reactor).
            let mut f = wq.submit_job(env.dma.as_ctx(), env.job(50, SLOT)).unwrap();
            let polled = futures_util::poll!(&mut f);
            drop(polled);
            drop(f);
            // Another job still completes, and the abandoned ones drain behind it.
            let mut c = wq
                .submit_job(env.dma.as_ctx(), env.job(60, 512))
                .unwrap()
                .await;
            env.check(&mut c, 512);
            drop(c);
            tokio::time::timeout(Duration::from_secs(10), wq.settle())
                .await
                .expect("the abandoned jobs ended");
            assert_eq!(wq.inflight(), 0);
            assert_eq!(
                env.inv.num_free_elements(),
                free_before,
                "every buffer came back"
            );
            wq.detach(env.dma.as_ctx()).unwrap();
        });
    }
}

#[test]
fn graph_instances_and_sync_event_waits() {
    for dev in engines() {
        runtime().block_on(async {
            let se = Arc::new(SyncEvent::new());
            se.publisher_add_location_cpu(&dev).unwrap();
            se.subscriber_add_location_cpu(&dev).unwrap();
            se.as_ctx().start().unwrap();
            let wq = Arc::new(AsyncWorkQ::new(WorkQ::new(64).unwrap()).unwrap());
            wq.attach(se.as_ctx()).unwrap();

            let g = Graph::new();
            let a = g.ctx_node_create(JOB_UPDATE_ADD, se.as_ctx()).unwrap();
            let b = g.ctx_node_create(JOB_UPDATE_ADD, se.as_ctx()).unwrap();
            g.add_dependency(a, b).unwrap();
            g.start().unwrap();
            wq.graph_add(&g).unwrap();
            let mut inst = g.instance_create().unwrap();
            for round in 0..3u64 {
                inst.set_ctx_node_data(a, SyncEventJob::update_add(1, 1))
                    .unwrap();
                inst.set_ctx_node_data(b, SyncEventJob::update_add(2, 2))
                    .unwrap();
                let c = wq
                    .submit_graph(inst, 500 + round)
                    .map_err(|(e, _)| e)
                    .unwrap()
                    .await;
                assert_eq!(c.event().job_type, JOB_GRAPH);
                assert_eq!(c.event().user_data.u64(), 500 + round);
                c.status().unwrap();
                inst = c.graph_instance.unwrap();
                assert_eq!(inst.node_state(b).unwrap(), NodeState::Completed);
            }
            let c = wq
                .submit_job(se.as_ctx(), SyncEventJob::get(0))
                .map_err(|(e, _)| e)
                .unwrap()
                .await;
            assert_eq!(SyncEventJob::result_value(&c), 9);

            // A wait passes once another task raises the value (with a job of its own).
            let raiser = {
                let (se, wq) = (Arc::clone(&se), Arc::clone(&wq));
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(30)).await;
                    let f = wq.submit_job(se.as_ctx(), SyncEventJob::update_set(100, 0));
                    f.map_err(|(e, _)| e).unwrap().await.status().unwrap();
                })
            };
            tokio::time::timeout(
                Duration::from_secs(10),
                wq.sync_event_wait_gt(&se, 99, u64::MAX),
            )
            .await
            .expect("the wait passed")
            .unwrap();
            raiser.await.unwrap();
            // Already passed: ready at once.
            wq.sync_event_wait_gt(&se, 5, u64::MAX).await.unwrap();

            wq.graph_rm(&g).unwrap();
            wq.detach(se.as_ctx()).unwrap();
            se.as_ctx().stop().unwrap();
        });
    }
}

#[test]
fn refusals_and_misuse() {
    // Outside a runtime: a clear error, no panic.
    let e = AsyncWorkQ::new(WorkQ::new(4).unwrap()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::BadState);
    let dev = device(0);
    runtime().block_on(async {
        let env = Env::new(&dev, 16);
        let wq = AsyncWorkQ::new(WorkQ::new(4).unwrap()).unwrap();
        // Not attached: NotFound, the job comes back with its buffers and user data.
        let (e, mut rec) = wq
            .submit_job(env.dma.as_ctx(), env.job(3, 100))
            .unwrap_err();
        assert_eq!(e.code(), ErrorCode::NotFound);
        assert_eq!(rec.user_data.u64(), 3);
        assert!(rec.take_buf(MemcpyJob::SRC).is_some());
        // A failed job: its future resolves with the error and the buffers.
        wq.attach(env.dma.as_ctx()).unwrap();
        let src = env.inv.buf_at(&env.mmap, 0, 64).unwrap(); // no data: the copy fails
        let dst = env.inv.buf_at(&env.mmap, 4096, 64).unwrap();
        let mut c = wq
            .submit_job(env.dma.as_ctx(), MemcpyJob::new(src, dst, 9))
            .map_err(|(e, _)| e)
            .unwrap()
            .await;
        assert_eq!(c.status().unwrap_err().code(), ErrorCode::InvalidValue);
        assert_eq!(c.record.user_data.u64(), 9);
        assert!(c.take_buf(MemcpyJob::DST).is_some());
        wq.detach(env.dma.as_ctx()).unwrap();
    });
}

#[test]
fn tasks_on_a_progress_engine_as_futures() {
    use doca_core::aio::AsyncPe;
    use doca_core::exec::{CtxPhase, Pe};
    for dev in engines() {
        runtime().block_on(async {
            let env = Env::new(&dev, 256);
            env.dma.as_ctx().stop().unwrap();
            env.dma
                .as_ctx()
                .set_task_room(doca_dma::JOB_MEMCPY, 64)
                .unwrap();
            // A pool of 64 tasks, and room for 64 futures.
            let pe = AsyncPe::new(Pe::new().unwrap(), 64).unwrap();
            pe.connect_and_start(env.dma.as_ctx()).unwrap();
            let futs: Vec<_> = (0..64)
                .map(|i| pe.submit_job(env.dma.as_ctx(), env.job(i, 4096)).unwrap())
                .collect();
            for mut c in futures_util::future::join_all(futs).await {
                env.check(&mut c, 4096);
            }
            // Detached tasks and the stream.
            for i in 0..32 {
                let rec = env.job(100 + i, 1000).into_record_for_test();
                pe.submit_detached(env.dma.as_ctx(), rec).unwrap();
            }
            let mut n = 0;
            let mut s = pe.completions();
            while let Some(mut c) = s.next().await {
                env.check(&mut c, 1000);
                n += 1;
            }
            assert_eq!(n, 32);
            drop(s);
            // A graph of two copies in a chain, run as awaited instances.
            let g = Graph::new();
            let a = g
                .ctx_node_create(doca_dma::JOB_MEMCPY, env.dma.as_ctx())
                .unwrap();
            let b = g
                .ctx_node_create(doca_dma::JOB_MEMCPY, env.dma.as_ctx())
                .unwrap();
            g.add_dependency(a, b).unwrap();
            g.start().unwrap();
            pe.graph_attach(&g).unwrap();
            let mut inst = g.instance_create().unwrap();
            for round in 0..3u64 {
                inst.set_ctx_node_data(a, env.job(10, 512)).unwrap();
                inst.set_ctx_node_data(b, env.job(11, 512)).unwrap();
                let c = pe
                    .submit_graph(inst, 900 + round)
                    .map_err(|(e, _)| e)
                    .unwrap()
                    .await;
                c.status().unwrap();
                assert_eq!(c.event().user_data.u64(), 900 + round);
                inst = c.graph_instance.unwrap();
                assert_eq!(inst.node_state(b).unwrap(), NodeState::Completed);
            }
            drop(inst);
            pe.graph_detach(&g).unwrap();
            // A stop with tasks in flight: they end (done, or flushed with an error),
            // then the context is idle.
            let futs: Vec<_> = (0..16)
                .map(|i| pe.submit_job(env.dma.as_ctx(), env.job(i, SLOT)).unwrap())
                .collect();
            tokio::time::timeout(Duration::from_secs(10), pe.stop_ctx(env.dma.as_ctx()))
                .await
                .expect("the stop ended")
                .unwrap();
            assert_eq!(env.dma.as_ctx().phase(), CtxPhase::Idle);
            let mut flushed = 0;
            for c in futures_util::future::join_all(futs).await {
                if let Err(e) = c.status() {
                    assert_eq!(e.code(), ErrorCode::IoFailed, "{e}");
                    flushed += 1;
                }
            }
            // On engine threads the stop usually finds tasks not yet run.
            let _ = flushed;
            // Stopped: submissions are refused and give the job back.
            let (e, _) = pe.submit_job(env.dma.as_ctx(), env.job(1, 64)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::BadState);
        });
    }
}
