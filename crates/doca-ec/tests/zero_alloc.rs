//! After start, submitting, executing (small jobs and large ones shared by the engine
//! threads) and retrieving EC jobs allocates nothing, on both engines.

use doca_core::device::{self, Topology};
use doca_core::{AccessFlags, Buf, BufInventory, Dev, Mmap, WorkQ};
use doca_ec::{Ec, EcJob, MatrixType};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

struct Counting;
static ON: AtomicBool = AtomicBool::new(false);
static COUNT: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator; the bookkeeping is two atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if ON.load(Ordering::Relaxed) && !on_harness_thread() {
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
        if ON.load(Ordering::Relaxed) && !on_harness_thread() {
            COUNT.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The test harness's main thread (its thread id is the process id) runs beside the
/// test and may allocate at any time; the counter counts every other thread (the test
/// and the engine threads).
fn on_harness_thread() -> bool {
    rustix::thread::gettid().as_raw_nonzero().get() as u32 == std::process::id()
}

/// A device running jobs on `threads` engine threads (each test file on its own bus).
fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0x90 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

#[test]
fn ec_jobs_allocate_nothing() {
    for threads in [0, 2] {
        let dev = device(threads);
        // Small jobs (4 + 2 of 4 KiB) and large ones (8 + 2 of 1 MiB, split on engines).
        for (m, k, block) in [(4usize, 2usize, 4096usize), (8, 2, 1 << 20)] {
            let mut mmap = Mmap::new();
            mmap.set_memory(vec![3u8; 2 * (m + k) * block]).unwrap();
            mmap.set_permissions(AccessFlags::LOCAL_READ_WRITE).unwrap();
            mmap.dev_add(&dev).unwrap();
            mmap.start().unwrap();
            let mut inv = BufInventory::new(8).unwrap();
            inv.start().unwrap();
            let ec = Ec::new();
            ec.as_ctx().dev_add(&dev).unwrap();
            ec.as_ctx().start().unwrap();
            let mut wq = WorkQ::new(4).unwrap();
            ec.as_ctx().workq_add(&mut wq).unwrap();
            let coding = ec.matrix_create(MatrixType::Cauchy, m, k).unwrap();
            let rec = ec.recover_matrix_create(&coding, &[0, 1]).unwrap();
            let mut bufs: Vec<(Buf, Buf)> = vec![
                (
                    inv.buf_with_data_at(&mmap, 0, m * block).unwrap(),
                    inv.buf_at(&mmap, m * block, k * block).unwrap(),
                ),
                (
                    inv.buf_with_data_at(&mmap, (m + k) * block, m * block)
                        .unwrap(),
                    inv.buf_at(&mmap, (2 * m + k) * block, 2 * block).unwrap(),
                ),
            ];
            let mut round = |count: bool| {
                ON.store(count, Ordering::SeqCst);
                for (i, (src, mut dst)) in bufs.drain(..).enumerate() {
                    dst.reset_data_len();
                    let job = if i == 0 {
                        EcJob::create(&coding, src, dst, i as u64)
                    } else {
                        EcJob::recover(&rec, src, dst, i as u64)
                    };
                    wq.submit_job(ec.as_ctx(), job).map_err(|(e, _)| e).unwrap();
                }
                let mut back = [None, None];
                for _ in 0..2 {
                    let mut c = wq.wait(Some(Duration::from_secs(30))).unwrap();
                    let i = c.event().user_data.u64() as usize;
                    back[i] = Some((
                        c.take_buf(EcJob::SRC).unwrap(),
                        c.take_buf(EcJob::DST).unwrap(),
                    ));
                }
                ON.store(false, Ordering::SeqCst);
                bufs.extend(back.into_iter().map(Option::unwrap));
            };
            round(false);
            COUNT.store(0, Ordering::SeqCst);
            for _ in 0..20 {
                round(true);
            }
            assert_eq!(
                COUNT.load(Ordering::SeqCst),
                0,
                "allocations with {threads} engine threads, {m}+{k} x {block}"
            );
            drop(bufs);
            ec.as_ctx().workq_rm(&mut wq).unwrap();
        }
    }
}
