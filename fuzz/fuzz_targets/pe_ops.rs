//! Sequences of the task generation's C calls, as a careless C program makes them:
//! contexts started and stopped at any time, tasks allocated until the pool is empty,
//! submitted twice, freed twice, re-pointed at other buffers, their buffers released
//! while they are in flight, the engine progressed or not. Tasks are never used after
//! their context is destroyed (the C program's own bug); everything else is fair. Every
//! call must return a DOCA code; the process must not crash, and memory stays clean
//! under AddressSanitizer.

#![no_main]

use arbitrary::Arbitrary;
use doca_capi::dev::{
    doca_dev, doca_dev_open, doca_devinfo, doca_devinfo_list_create, doca_devinfo_list_destroy,
};
use doca_capi::mem::{
    doca_buf, doca_buf_inventory, doca_buf_inventory_buf_by_args, doca_buf_refcount_rm,
    doca_buf_reset_data_len, doca_mmap, doca_mmap_set_memrange, doca_mmap_start,
};
use doca_capi::v3::*;
use libfuzzer_sys::fuzz_target;
use std::ffi::c_void;
use std::ptr::null_mut;

const SUCCESS: i32 = 0;
const POOL: u32 = 4;

#[derive(Arbitrary, Debug)]
enum Op {
    Alloc { src: u8, dst: u8 },
    Submit(u8),
    TrySubmit(u8),
    Free(u8),
    SetSrc { t: u8, b: u8 },
    SetDst { t: u8, b: u8 },
    NewBuf { off: u8, len: u8, data: u8 },
    Release(u8),
    Reset(u8),
    Progress(u8),
    Stop,
    Start,
    Inflight,
}

fn pick<T>(v: &[T], i: u8) -> Option<usize> {
    (!v.is_empty()).then(|| i as usize % v.len())
}

unsafe extern "C" fn cb(task: *mut doca_task, _t: doca_capi::doca_data, c: doca_capi::doca_data) {
    // SAFETY: the context's user data is the list of completed tasks; the task is ours.
    unsafe { (*c.ptr::<Vec<*mut doca_task>>()).push(task) };
}

/// One device, memory and inventory for the whole run (opening a device reads the
/// topology).
struct Fixed {
    dev: *mut doca_dev,
    mmap: *mut doca_mmap,
    inv: *mut doca_buf_inventory,
    mem: *mut u8,
}
// SAFETY: the fuzzer calls the target from one thread at a time.
unsafe impl Send for Fixed {}
// SAFETY: as above.
unsafe impl Sync for Fixed {}

fn fixed() -> &'static Fixed {
    static F: std::sync::OnceLock<Fixed> = std::sync::OnceLock::new();
    F.get_or_init(|| unsafe {
        let mut list: *mut *mut doca_devinfo = null_mut();
        let mut n = 0u32;
        assert_eq!(doca_devinfo_list_create(&mut list, &mut n), SUCCESS);
        let mut dev: *mut doca_dev = null_mut();
        assert_eq!(doca_dev_open(*list, &mut dev), SUCCESS);
        assert_eq!(doca_devinfo_list_destroy(list), SUCCESS);
        let mem = Box::leak(vec![7u8; 1 << 16].into_boxed_slice()).as_mut_ptr();
        let mut mmap = null_mut();
        assert_eq!(doca_mmap_create(&mut mmap), SUCCESS);
        assert_eq!(
            doca_mmap_set_memrange(mmap, mem as *mut c_void, 1 << 16),
            SUCCESS
        );
        assert_eq!(doca_mmap_add_dev(mmap, dev), SUCCESS);
        assert_eq!(doca_mmap_start(mmap), SUCCESS);
        let mut inv = null_mut();
        assert_eq!(doca_buf_inventory_create(64, &mut inv), SUCCESS);
        assert_eq!(doca_capi::mem::doca_buf_inventory_start(inv), SUCCESS);
        Fixed {
            dev,
            mmap,
            inv,
            mem,
        }
    })
}

fuzz_target!(|ops: Vec<Op>| unsafe {
    let Fixed {
        dev,
        mmap,
        inv,
        mem,
    } = *fixed();
    // Reached only through this pointer (the callback writes through it too).
    let done: *mut Vec<*mut doca_task> = Box::into_raw(Box::default());
    let mut pe = null_mut();
    assert_eq!(doca_pe_create(&mut pe), SUCCESS);
    let mut dma = null_mut();
    assert_eq!(doca_dma_create(dev, &mut dma), SUCCESS);
    let ctx = doca_dma_as_ctx(dma);
    assert_eq!(doca_pe_connect_ctx(pe, ctx), SUCCESS);
    let ud = doca_capi::doca_data::from_ptr(done as *const Vec<*mut doca_task>);
    assert_eq!(doca_ctx_set_user_data(ctx, ud), SUCCESS);
    assert_eq!(
        doca_dma_task_memcpy_set_conf(dma, Some(cb), Some(cb), POOL),
        SUCCESS
    );
    assert_eq!(doca_ctx_start(ctx), SUCCESS);
    // Buffers the program holds a reference to, and tasks it holds.
    let mut bufs: Vec<*mut doca_buf> = Vec::new();
    let mut tasks: Vec<*mut doca_task> = Vec::new();

    for op in ops.into_iter().take(200) {
        // Completed tasks are the program's again.
        tasks.extend((*done).drain(..));
        match op {
            Op::NewBuf { off, len, data } => {
                if bufs.len() < 32 {
                    let addr = mem.add(off as usize * 256);
                    let mut b = null_mut();
                    if doca_buf_inventory_buf_by_args(
                        inv,
                        mmap,
                        addr as *mut c_void,
                        len as usize + 1,
                        addr as *mut c_void,
                        data as usize % (len as usize + 2),
                        &mut b,
                    ) == SUCCESS
                    {
                        bufs.push(b);
                    }
                }
            }
            Op::Release(b) => {
                if let Some(i) = pick(&bufs, b) {
                    // Tasks may still point at it: using it then is refused or safe.
                    let _ = doca_buf_refcount_rm(bufs[i], null_mut());
                    bufs.swap_remove(i);
                }
            }
            Op::Reset(b) => {
                if let Some(i) = pick(&bufs, b) {
                    let _ = doca_buf_reset_data_len(bufs[i]);
                }
            }
            Op::Alloc { src, dst } => {
                let (s, d) = (pick(&bufs, src), pick(&bufs, dst));
                let (s, d) = (
                    s.map_or(null_mut(), |i| bufs[i]),
                    d.map_or(null_mut(), |i| bufs[i]),
                );
                let mut t = null_mut();
                if doca_dma_task_memcpy_alloc_init(
                    dma,
                    s,
                    d,
                    doca_capi::doca_data::from_u64(0),
                    &mut t,
                ) == SUCCESS
                {
                    tasks.push(t);
                }
            }
            Op::Submit(t) | Op::TrySubmit(t) => {
                if let Some(i) = pick(&tasks, t) {
                    if doca_task_submit(tasks[i]) == SUCCESS {
                        // DOCA's until its callback runs.
                        tasks.swap_remove(i);
                    }
                }
            }
            Op::Free(t) => {
                if let Some(i) = pick(&tasks, t) {
                    doca_task_free(tasks[i]);
                    tasks.swap_remove(i);
                }
            }
            Op::SetSrc { t, b } => {
                if let (Some(i), Some(j)) = (pick(&tasks, t), pick(&bufs, b)) {
                    doca_dma_task_memcpy_set_src(tasks[i], bufs[j]);
                }
            }
            Op::SetDst { t, b } => {
                if let (Some(i), Some(j)) = (pick(&tasks, t), pick(&bufs, b)) {
                    doca_dma_task_memcpy_set_dst(tasks[i], bufs[j]);
                }
            }
            Op::Progress(n) => {
                for _ in 0..n % 4 {
                    doca_pe_progress(pe);
                }
            }
            Op::Stop => {
                let _ = doca_ctx_stop(ctx);
            }
            Op::Start => {
                let _ = doca_ctx_start(ctx);
            }
            Op::Inflight => {
                let mut n = 0usize;
                assert_eq!(doca_pe_get_num_inflight_tasks(pe, &mut n), SUCCESS);
                assert!(n <= POOL as usize);
            }
        }
    }
    // Everything comes back: the engine runs until nothing is in flight, every task is
    // freed, the context stops and everything is destroyed.
    let mut n = 1usize;
    let mut spins = 0;
    while n > 0 {
        doca_pe_progress(pe);
        assert_eq!(doca_pe_get_num_inflight_tasks(pe, &mut n), SUCCESS);
        spins += 1;
        assert!(spins < 1_000_000, "tasks never completed");
    }
    tasks.extend((*done).drain(..));
    for t in tasks {
        doca_task_free(t);
    }
    let _ = doca_ctx_stop(ctx);
    doca_pe_progress(pe);
    let mut st = 0;
    assert_eq!(doca_ctx_get_state(ctx, &mut st), SUCCESS);
    assert_eq!(st, 0, "the context did not stop");
    assert_eq!(doca_dma_destroy(dma), SUCCESS);
    assert_eq!(doca_pe_destroy(pe), SUCCESS);
    for b in bufs {
        let _ = doca_buf_refcount_rm(b, null_mut());
    }
    let mut free = 0u32;
    assert_eq!(
        doca_capi::mem::doca_buf_inventory_get_num_free_elements(inv, &mut free),
        SUCCESS
    );
    assert_eq!(free, 64, "a buffer was kept");
    drop(Box::from_raw(done));
});
