//! The async face across processes, on both engines: a host process exports an mmap and
//! a sync event; a DPU-side process (this test binary run again) imports both and, on
//! tokio, awaits a sync event wait that the host's update passes, DMA jobs that read
//! and write the host's memory, and an update the host waits for.

#![cfg(feature = "tokio")]
#![allow(clippy::result_large_err)]

use doca_core::aio::AsyncWorkQ;
use doca_core::device::{DEFAULT_MACHINE, Topology};
use doca_core::{AccessFlags, BufInventory, Data, Dev, Mmap, SyncEvent, SyncEventJob, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use doca_testkit::peer::{self, Peer, hex, unhex};
use std::time::{Duration, Instant};

const LEN: usize = 1 << 20;

/// The default machine's device `pci` on `role`'s side, with `threads` engine threads.
fn device(role: &str, pci: &str, threads: u32) -> Dev {
    let text = DEFAULT_MACHINE.replace(
        &format!("\npci_addr = \"{pci}\"\n"),
        &format!("\npci_addr = \"{pci}\"\nengine_threads = {threads}\n"),
    );
    Topology::from_toml(&text, Some(role))
        .unwrap()
        .open_device(pci)
        .unwrap()
}

fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(13) ^ seed)
        .collect()
}

/// The DPU side: `import <threads> <mmap-blob> <addr> <event-blob>`, then it works on
/// its own and reports each step.
#[test]
fn dpu_process() {
    let Some(role) = peer::role() else {
        return;
    };
    assert_eq!(role, "dpu");
    let first = peer::commands().next().unwrap();
    let w: Vec<&str> = first.split_whitespace().collect();
    let threads: u32 = w[1].parse().unwrap();
    let addr: usize = w[3].parse().unwrap();
    let dev = device("dpu", "0000:03:00.0", threads);
    let remote = Mmap::create_from_export(Data(0), &unhex(w[2]), &dev).unwrap();
    let se = SyncEvent::create_from_export(&dev, &unhex(w[4])).unwrap();
    let mut local = Mmap::new();
    local.set_memory(vec![0u8; 2 * LEN]).unwrap();
    local
        .set_permissions(AccessFlags::LOCAL_READ_WRITE)
        .unwrap();
    local.dev_add(&dev).unwrap();
    local.start().unwrap();
    let mut inv = BufInventory::new(8).unwrap();
    inv.start().unwrap();
    let dma = Dma::new();
    dma.as_ctx().dev_add(&dev).unwrap();
    dma.as_ctx().start().unwrap();
    se.as_ctx().start().unwrap();

    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let wq = AsyncWorkQ::new(WorkQ::new(16).unwrap()).unwrap();
        wq.attach(dma.as_ctx()).unwrap();
        wq.attach(se.as_ctx()).unwrap();
        peer::say("ready");

        // 1. Wait for the host's update (another process: no local wake-up).
        let t = Instant::now();
        tokio::time::timeout(
            Duration::from_secs(20),
            wq.sync_event_wait_gt(&se, 41, u64::MAX),
        )
        .await
        .expect("the host's update passed the wait")
        .unwrap();
        peer::say(&format!("passed after {} ms", t.elapsed().as_millis()));

        // 2. Read the host's memory, then write it back changed.
        let src = inv.buf_by_data(&remote, addr as *mut u8, LEN).unwrap();
        let dst = inv.buf_at(&local, 0, LEN).unwrap();
        let mut done = wq
            .submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 1))
            .map_err(|(e, _)| e)
            .unwrap()
            .await;
        done.status().unwrap();
        let got = done.take_buf(MemcpyJob::DST).unwrap().data_to_vec();
        assert_eq!(got, pattern(LEN, 1), "the host's bytes arrived");
        drop(done);
        local.write_at(LEN, &pattern(LEN, 2)).unwrap();
        let src = inv.buf_with_data_at(&local, LEN, LEN).unwrap();
        let dst = inv.buf_by_addr(&remote, addr as *mut u8, LEN).unwrap();
        let done = wq
            .submit_job(dma.as_ctx(), MemcpyJob::new(src, dst, 2))
            .map_err(|(e, _)| e)
            .unwrap()
            .await;
        done.status().unwrap();
        drop(done);

        // 3. Tell the host.
        let set = wq.submit_job(se.as_ctx(), SyncEventJob::update_set(100, 0));
        set.map_err(|(e, _)| e).unwrap().await.status().unwrap();
        peer::say("written");
        wq.detach(se.as_ctx()).unwrap();
        wq.detach(dma.as_ctx()).unwrap();
    });
    se.as_ctx().stop().unwrap();
}

#[test]
fn memory_and_events_across_processes_on_tokio() {
    for threads in [0u32, 2] {
        let host = device("host", "0000:3b:00.0", 0);
        let mut mmap = Mmap::new();
        mmap.set_memory(doca_core::SharedMemory::new(LEN).unwrap())
            .unwrap();
        mmap.set_permissions(AccessFlags::DPU_READ_WRITE).unwrap();
        mmap.dev_add(&host).unwrap();
        mmap.start().unwrap();
        mmap.write_at(0, &pattern(LEN, 1)).unwrap();
        let blob = mmap.export_dpu(&host).unwrap().to_vec();
        let addr = mmap.memrange().unwrap().0 as usize;
        let se = SyncEvent::new();
        se.publisher_add_location_cpu(&host).unwrap();
        se.subscriber_add_location_dpu().unwrap();
        let ev_blob = se.export_to_dpu(&host).unwrap().to_vec();
        se.start().unwrap();

        let mut p = Peer::spawn("dpu_process", "dpu");
        p.send(&format!(
            "import {threads} {} {addr} {}",
            hex(&blob),
            hex(&ev_blob)
        ));
        assert_eq!(p.recv(), "ready");
        std::thread::sleep(Duration::from_millis(50));
        se.update_set(42).unwrap();
        let r = p.recv();
        assert!(r.starts_with("passed after"), "{r}");
        se.wait_gt_blocking(99, u64::MAX, Some(Duration::from_secs(20)))
            .unwrap();
        assert_eq!(p.recv(), "written");
        let mut back = vec![0u8; LEN];
        mmap.read_at(0, &mut back).unwrap();
        assert_eq!(back, pattern(LEN, 2), "the DPU side's bytes arrived");
        p.finish();
        se.stop().unwrap();
    }
}
