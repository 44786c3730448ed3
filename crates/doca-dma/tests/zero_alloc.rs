//! After start, submitting, executing and retrieving jobs allocates nothing, on both
//! engines (engine threads included: the counter sees every thread).

use doca_core::device::{self, Topology};
use doca_core::{AccessFlags, BufInventory, Dev, Mmap, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use doca_sha::{Sha, ShaAlgo, ShaJob};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

struct Counting;
static ON: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; the bookkeeping is two atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.load(Ordering::Relaxed) {
            COUNT.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if ON.load(Ordering::Relaxed) {
            COUNT.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn device(threads: u32) -> Dev {
    let text = format!(
        "[[host.device]]\npci_addr = \"0000:{:02x}:00.0\"\nengine_threads = {threads}\n",
        0x60 + threads
    );
    let t = Topology::from_toml(&text, None).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

#[test]
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
                    assert_eq!(c.event.result, 0);
                }
            }
        };
        run(&mut wq, 20);
        COUNT.store(0, Ordering::SeqCst);
        ON.store(true, Ordering::SeqCst);
        run(&mut wq, 200);
        ON.store(false, Ordering::SeqCst);
        let n = COUNT.load(Ordering::SeqCst);
        assert_eq!(n, 0, "{n} allocations with {threads} engine threads");
        assert_eq!(inv.num_free_elements(), 64);
        dma.as_ctx().workq_rm(&mut wq).unwrap();
        sha.as_ctx().workq_rm(&mut wq).unwrap();
    }
}
