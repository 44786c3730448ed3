//! Jobs awaited on tokio allocate nothing per job after start (apart from the
//! runtime's own task allocations, of which a `block_on` makes none), on both engines,
//! through a work queue and through a progress engine.
//! Alone in its test binary: the allocation counter is process-wide.

#![cfg(feature = "tokio")]

use doca_core::aio::{AsyncPe, AsyncQueue, AsyncWorkQ, Queue};
use doca_core::device::{self, Topology};
use doca_core::exec::Pe;
use doca_core::{AccessFlags, Buf, BufInventory, Dev, Mmap, WorkQ};
use doca_dma::{Dma, JOB_MEMCPY, MemcpyJob};
use tokio::runtime::Runtime;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0x98 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

const SLOT: usize = 8192;

/// Memory, 8 buffer pairs (made before counting: jobs reuse them round after round)
/// and a DMA context on `dev`.
struct Setup {
    pairs: Vec<Option<(Buf, Buf)>>,
    dma: Dma,
    _memory: (Mmap, BufInventory),
}

fn setup(dev: &Dev) -> Setup {
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0u8; 128 * SLOT]).unwrap();
    mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
    mmap.dev_add(dev).unwrap();
    mmap.start().unwrap();
    let mut inv = BufInventory::new(64).unwrap();
    inv.start().unwrap();
    let pairs = (0..8)
        .map(|i| {
            let mut s = inv.buf_at(&mmap, i * SLOT, 4096).unwrap();
            s.append(&[i as u8; 4096]).unwrap();
            let d = inv.buf_at(&mmap, 64 * SLOT + i * SLOT, 4096).unwrap();
            Some((s, d))
        })
        .collect();
    let dma = Dma::new();
    dma.as_ctx().dev_add(dev).unwrap();
    Setup {
        pairs,
        dma,
        _memory: (mmap, inv),
    }
}

/// 20 warm-up rounds, then 200 counted rounds of 8 awaited 4 KiB copies on `q`.
fn count_rounds<Q: Queue>(rt: &Runtime, q: &AsyncQueue<Q>, s: &mut Setup) -> usize {
    let Setup { pairs, dma, .. } = s;
    let mut round = || {
        rt.block_on(async {
            let futs: [_; 8] = std::array::from_fn(|i| {
                let (src, mut dst) = pairs[i].take().unwrap();
                dst.reset_data_len();
                q.submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, i as u64))
                    .map_err(|(e, _)| e)
                    .unwrap()
            });
            for (i, f) in futs.into_iter().enumerate() {
                let mut c = f.await;
                c.status().unwrap();
                let src = c.take_buf(MemcpyJob::SRC).unwrap();
                let dst = c.take_buf(MemcpyJob::DST).unwrap();
                assert_eq!(dst.data_len(), 4096);
                pairs[i] = Some((src, dst));
            }
        })
    };
    // Warm up (the runtime's first polls, the engine's first jobs).
    for _ in 0..20 {
        round();
    }
    doca_testkit::allocations_in(|| {
        for _ in 0..200 {
            round();
        }
    })
}

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// One test: the allocation counter is process-wide, so the scenarios run in turn.
#[test]
fn no_allocation_per_job_after_start() {
    for dev in [device(0), device(2)] {
        // A work queue.
        let rt = runtime();
        let mut s = setup(&dev);
        s.dma.as_ctx().start().unwrap();
        let wq = rt.block_on(async { AsyncWorkQ::new(WorkQ::new(16).unwrap()).unwrap() });
        wq.attach(s.dma.as_ctx()).unwrap();
        assert_eq!(
            count_rounds(&rt, &wq, &mut s),
            0,
            "allocations in 1600 async jobs"
        );
        wq.detach(s.dma.as_ctx()).unwrap();

        // A progress engine.
        let mut s = setup(&dev);
        s.dma.as_ctx().set_task_room(JOB_MEMCPY, 8).unwrap();
        let pe = rt.block_on(async { AsyncPe::new(Pe::new().unwrap(), 8).unwrap() });
        pe.connect_and_start(s.dma.as_ctx()).unwrap();
        assert_eq!(
            count_rounds(&rt, &pe, &mut s),
            0,
            "allocations in 1600 async tasks"
        );
        rt.block_on(pe.stop_ctx(s.dma.as_ctx())).unwrap();
    }
}
