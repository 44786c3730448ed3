//! After start, submitting, executing and retrieving jobs allocates nothing, on both
//! engines (engine threads included: the counter sees every thread).

use doca_core::device::{self, Topology};
use doca_core::{AccessFlags, BufInventory, Dev, Mmap, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use doca_sha::{Sha, ShaAlgo, ShaJob};
use std::time::Duration;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

/// The counter is global (engine threads count too), so one test runs the scenarios in
/// turn: a second test, or the harness reporting one, would allocate meanwhile.
#[test]
fn nothing_allocates_after_start() {
    submit_execute_retrieve_allocate_nothing();
    sync_event_jobs_and_graphs_allocate_nothing();
    progress_engine_tasks_allocate_nothing();
}

/// The progress engine: tasks taken from a pool, submitted, completed through
/// `progress` with their handler, and given back, allocate nothing after start.
fn progress_engine_tasks_allocate_nothing() {
    use doca_core::exec::{Job, Pe, PeEvent, TaskPool};
    for threads in [0, 2] {
        let dev = device(threads);
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 1 << 20]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(64).unwrap();
        inv.start().unwrap();
        let dma = Dma::new();
        dma.as_ctx().dev_add(&dev).unwrap();
        dma.as_ctx().set_task_room(doca_dma::JOB_MEMCPY, 8).unwrap();
        let pe = Pe::new().unwrap();
        pe.connect(dma.as_ctx()).unwrap();
        pe.start_ctx(dma.as_ctx()).unwrap();
        let pool: TaskPool<u64> = TaskPool::new(dma.as_ctx(), 8, |i| i as u64);
        let run = |rounds: usize| {
            for r in 0..rounds {
                let mut taken = [std::ptr::NonNull::<u64>::dangling(); 8];
                for (i, t) in taken.iter_mut().enumerate() {
                    *t = pool.alloc().unwrap();
                    let src = inv.buf_with_data_at(&mmap, i * 4096, 2048).unwrap();
                    let dst = inv.buf_at(&mmap, 65536 + i * 4096, 4096).unwrap();
                    let job = MemcpyJob::new(src, dst, (r * 8 + i) as u64);
                    pe.submit(dma.as_ctx(), job.into_record())
                        .map_err(|(e, _)| e)
                        .unwrap();
                }
                let mut done = 0;
                let end = std::time::Instant::now() + Duration::from_secs(10);
                while done < 8 {
                    pe.progress(|ev| {
                        if let PeEvent::Task(c) = ev {
                            assert!(c.error.is_none());
                            done += 1;
                        }
                    });
                    assert!(std::time::Instant::now() < end, "timed out");
                }
                for t in taken {
                    pool.free(t.as_ptr()).unwrap();
                }
            }
        };
        run(20);
        doca_testkit::reset();
        doca_testkit::set_counting(true);
        run(200);
        doca_testkit::set_counting(false);
        let n = doca_testkit::count();
        assert_eq!(
            n, 0,
            "{n} allocations through the progress engine with {threads} engine threads"
        );
        assert_eq!(inv.num_free_elements(), 64);
        pe.stop_ctx(dma.as_ctx()).unwrap();
    }
}

/// A device running jobs on `threads` engine threads (each test file on its own bus).
fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0x60 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn submit_execute_retrieve_allocate_nothing() {
    for threads in [0, 2] {
        let dev = device(threads);
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 1 << 20]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(64).unwrap();
        inv.start().unwrap();
        let dma = Dma::new();
        dma.as_ctx().dev_add(&dev).unwrap();
        dma.as_ctx().start().unwrap();
        let sha = Sha::new();
        sha.as_ctx().dev_add(&dev).unwrap();
        sha.as_ctx().start().unwrap();
        let mut wq = WorkQ::new(32).unwrap();
        dma.as_ctx().workq_add(&mut wq).unwrap();
        sha.as_ctx().workq_add(&mut wq).unwrap();
        // Warm up once (thread-local state of the engine threads, lazily made statics).
        let run = |wq: &mut WorkQ, rounds: usize| {
            for r in 0..rounds {
                for i in 0..8 {
                    let src = inv.buf_with_data_at(&mmap, i * 4096, 2048).unwrap();
                    let dst = inv.buf_at(&mmap, 65536 + i * 4096, 4096).unwrap();
                    wq.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, (r * 8 + i) as u64))
                        .map_err(|(e, _)| e)
                        .unwrap();
                }
                let src = inv.buf_with_data_at(&mmap, 200_000, 1000).unwrap();
                let dst = inv.buf_at(&mmap, 300_000, 64).unwrap();
                wq.submit_job(sha.as_ctx(), ShaJob::new(ShaAlgo::Sha256, src, dst, 99))
                    .map_err(|(e, _)| e)
                    .unwrap();
                for _ in 0..9 {
                    let c = wq.wait(Some(Duration::from_secs(10))).unwrap();
                    assert_eq!(c.event().result, 0);
                }
            }
        };
        run(&mut wq, 20);
        doca_testkit::reset();
        doca_testkit::set_counting(true);
        run(&mut wq, 200);
        doca_testkit::set_counting(false);
        let n = doca_testkit::count();
        assert_eq!(n, 0, "{n} allocations with {threads} engine threads");
        assert_eq!(inv.num_free_elements(), 64);
        dma.as_ctx().workq_rm(&mut wq).unwrap();
        sha.as_ctx().workq_rm(&mut wq).unwrap();
    }
}

fn engine_device(threads: u32) -> doca_core::Dev {
    let text = format!(
        "[[host.device]]\npci_addr = \"0000:{:02x}:00.0\"\nengine_threads = {threads}\n",
        0x68 + threads
    );
    let t = doca_core::Topology::from_toml(&text, None).unwrap();
    doca_core::device::devinfo_list_from(&t)[0].open().unwrap()
}

/// Sync event jobs (a wait left pending and woken included) and graph instances
/// allocate nothing once started, on both engines.
fn sync_event_jobs_and_graphs_allocate_nothing() {
    use doca_core::sync_event::JOB_UPDATE_ADD;
    use doca_core::{Graph, SyncEvent, SyncEventJob, WorkQ};
    use std::time::Duration;
    for threads in [0, 2] {
        let dev = engine_device(threads);
        let se = SyncEvent::new();
        se.publisher_add_location_cpu(&dev).unwrap();
        se.subscriber_add_location_cpu(&dev).unwrap();
        se.as_ctx().start().unwrap();
        let mut wq = WorkQ::new(16).unwrap();
        se.as_ctx().workq_add(&mut wq).unwrap();
        let g = Graph::new();
        let a = g.ctx_node_create(JOB_UPDATE_ADD, se.as_ctx()).unwrap();
        let b = g.user_node_create(|_, _| Ok(())).unwrap();
        let c = g.ctx_node_create(JOB_UPDATE_ADD, se.as_ctx()).unwrap();
        g.add_dependency(a, b).unwrap();
        g.add_dependency(b, c).unwrap();
        g.start().unwrap();
        g.workq_add(&wq).unwrap();
        let mut inst = Some(g.instance_create().unwrap());
        let mut round = |wq: &mut WorkQ, k: u64| {
            // The reset completes first: with engine threads, jobs in flight together
            // run in any order, and an add overwritten by a later set would leave the
            // wait waiting.
            wq.submit_job(se.as_ctx(), SyncEventJob::update_set(k, 0))
                .map_err(|(e, _)| e)
                .unwrap();
            drop(wq.wait(Some(Duration::from_secs(10))).unwrap());
            // A wait that cannot complete yet, then the add that lets it.
            wq.submit_job(se.as_ctx(), SyncEventJob::wait_gt(0, 0xff, 1))
                .map_err(|(e, _)| e)
                .unwrap();
            wq.submit_job(se.as_ctx(), SyncEventJob::update_add(1, 2))
                .map_err(|(e, _)| e)
                .unwrap();
            for _ in 0..2 {
                drop(wq.wait(Some(Duration::from_secs(10))).unwrap());
            }
            let mut i = inst.take().unwrap();
            i.set_ctx_node_data(a, SyncEventJob::update_add(1, 3))
                .unwrap();
            i.set_ctx_node_data(c, SyncEventJob::update_add(1, 4))
                .unwrap();
            wq.graph_submit(i, 5).map_err(|(e, _)| e).unwrap();
            let mut done = wq.wait(Some(Duration::from_secs(10))).unwrap();
            inst = done.graph_instance.take();
        };
        round(&mut wq, 0);
        doca_testkit::reset();
        doca_testkit::set_counting(true);
        for _ in 0..50 {
            round(&mut wq, 0);
        }
        doca_testkit::set_counting(false);
        assert_eq!(
            doca_testkit::count(),
            0,
            "allocations with {threads} engine threads"
        );
        drop(inst);
        g.workq_rm(&wq).unwrap();
        se.as_ctx().workq_rm(&mut wq).unwrap();
        se.as_ctx().stop().unwrap();
    }
}
