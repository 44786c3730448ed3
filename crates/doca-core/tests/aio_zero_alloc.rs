//! Jobs awaited on tokio allocate nothing per job after start (apart from the
//! runtime's own task allocations, of which a `block_on` makes none), on both engines,
//! through a work queue and through a progress engine.
//! Alone in its test binary: the allocation counter is process-wide.

#![cfg(feature = "tokio")]

use doca_core::aio::AsyncWorkQ;
use doca_core::device::{self, Topology};
use doca_core::{AccessFlags, Buf, BufInventory, Dev, Mmap, WorkQ};
use doca_dma::{Dma, MemcpyJob};

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0x98 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

const SLOT: usize = 8192;

fn work_queue() {
    for dev in [device(0), device(2)] {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 128 * SLOT]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(64).unwrap();
        inv.start().unwrap();
        let dma = Dma::new();
        dma.as_ctx().dev_add(&dev).unwrap();
        dma.as_ctx().start().unwrap();
        let wq = rt.block_on(async { AsyncWorkQ::new(WorkQ::new(16).unwrap()).unwrap() });
        wq.attach(dma.as_ctx()).unwrap();
        // Buffers are made before counting; jobs reuse them round after round.
        let mut pairs: Vec<Option<(Buf, Buf)>> = (0..8)
            .map(|i| {
                let mut s = inv.buf_at(&mmap, i * SLOT, 4096).unwrap();
                s.append(&[i as u8; 4096]).unwrap();
                let d = inv.buf_at(&mmap, 64 * SLOT + i * SLOT, 4096).unwrap();
                Some((s, d))
            })
            .collect();
        let round = |pairs: &mut Vec<Option<(Buf, Buf)>>| {
            rt.block_on(async {
                let futs: [_; 8] = std::array::from_fn(|i| {
                    let (s, mut d) = pairs[i].take().unwrap();
                    d.reset_data_len();
                    wq.submit_job(dma.as_ctx(), MemcpyJob::new(s, d, i as u64))
                        .map_err(|(e, _)| e)
                        .unwrap()
                });
                for (i, f) in futs.into_iter().enumerate() {
                    let mut c = f.await;
                    c.status().unwrap();
                    let s = c.take_buf(MemcpyJob::SRC).unwrap();
                    let d = c.take_buf(MemcpyJob::DST).unwrap();
                    assert_eq!(d.data_len(), 4096);
                    pairs[i] = Some((s, d));
                }
            })
        };
        // Warm up (the runtime's first polls, the engine's first jobs).
        for _ in 0..20 {
            round(&mut pairs);
        }
        let n = doca_testkit::allocations_in(|| {
            for _ in 0..200 {
                round(&mut pairs);
            }
        });
        assert_eq!(n, 0, "allocations in 1600 async jobs");
        drop(pairs);
        wq.detach(dma.as_ctx()).unwrap();
    }
}

fn progress_engine() {
    use doca_core::aio::AsyncPe;
    use doca_core::exec::Pe;
    for dev in [device(0), device(2)] {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let mut mmap = Mmap::new();
        mmap.set_memory(vec![0u8; 128 * SLOT]).unwrap();
        mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
        mmap.dev_add(&dev).unwrap();
        mmap.start().unwrap();
        let mut inv = BufInventory::new(64).unwrap();
        inv.start().unwrap();
        let dma = Dma::new();
        dma.as_ctx().dev_add(&dev).unwrap();
        dma.as_ctx().set_task_room(doca_dma::JOB_MEMCPY, 8).unwrap();
        let pe = rt.block_on(async { AsyncPe::new(Pe::new().unwrap(), 8).unwrap() });
        pe.connect_and_start(dma.as_ctx()).unwrap();
        let mut pairs: Vec<Option<(Buf, Buf)>> = (0..8)
            .map(|i| {
                let mut s = inv.buf_at(&mmap, i * SLOT, 4096).unwrap();
                s.append(&[i as u8; 4096]).unwrap();
                let d = inv.buf_at(&mmap, 64 * SLOT + i * SLOT, 4096).unwrap();
                Some((s, d))
            })
            .collect();
        let round = |pairs: &mut Vec<Option<(Buf, Buf)>>| {
            rt.block_on(async {
                let futs: [_; 8] = std::array::from_fn(|i| {
                    let (s, mut d) = pairs[i].take().unwrap();
                    d.reset_data_len();
                    pe.submit_job(dma.as_ctx(), MemcpyJob::new(s, d, i as u64))
                        .map_err(|(e, _)| e)
                        .unwrap()
                });
                for (i, f) in futs.into_iter().enumerate() {
                    let mut c = f.await;
                    c.status().unwrap();
                    let s = c.take_buf(MemcpyJob::SRC).unwrap();
                    let d = c.take_buf(MemcpyJob::DST).unwrap();
                    pairs[i] = Some((s, d));
                }
            })
        };
        for _ in 0..20 {
            round(&mut pairs);
        }
        let n = doca_testkit::allocations_in(|| {
            for _ in 0..200 {
                round(&mut pairs);
            }
        });
        assert_eq!(n, 0, "allocations in 1600 async tasks");
        drop(pairs);
        rt.block_on(pe.stop_ctx(dma.as_ctx())).unwrap();
    }
}

/// One test: the allocation counter is process-wide, so the scenarios run in turn.
#[test]
fn no_allocation_per_job_after_start() {
    work_queue();
    progress_engine();
}
