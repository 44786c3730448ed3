//! Sequences of C calls, as a careless C program makes them: mmaps, inventories and
//! buffers created, started, stopped and destroyed in any order; references added and
//! removed too often; data sections set anywhere; lists chained and unchained; DMA jobs
//! submitted between any buffers and retrieved later, their buffers released early.
//! The 1.x face is driven too: named memory maps populated chunk by chunk inside their
//! memory, properties read and set with any size, and 1.x DMA jobs with any
//! `num_bytes_to_copy`. Handles are never used after a successful destroy of their
//! owner, and chunks lie in memory the program owns (those are the C program's own
//! bugs); everything else is fair. Every call must return a DOCA code; the
//! process must not crash, and memory stays clean under AddressSanitizer.

#![no_main]

use arbitrary::Arbitrary;
use doca_capi::dev::{
    doca_dev, doca_dev_open, doca_devinfo, doca_devinfo_list_create, doca_devinfo_list_destroy,
};
use doca_capi::exec::{
    doca_ctx_dev_add, doca_ctx_start, doca_ctx_workq_add, doca_event,
    doca_job, doca_workq,
};
use doca_capi::workq::{doca_workq_create, doca_workq_progress_retrieve, doca_workq_submit};
use doca_capi::dma::{doca_dma, doca_dma_as_ctx, doca_dma_create, doca_dma_job_memcpy};
use doca_capi::mem::*;
use doca_capi::v1;
use libfuzzer_sys::fuzz_target;
use std::ffi::c_void;
use std::ptr::null_mut;

const SUCCESS: i32 = 0;

#[derive(Arbitrary, Debug)]
enum Op {
    NewMmap {
        size: u16,
    },
    StartMmap(u8),
    StopMmap(u8),
    DestroyMmap(u8),
    NewInventory {
        n: u8,
    },
    StartInventory(u8),
    StopInventory(u8),
    DestroyInventory(u8),
    Buf {
        inv: u8,
        mmap: u8,
        off: u16,
        len: u16,
        data_off: u16,
        data_len: u16,
    },
    RefAdd(u8),
    RefRm(u8),
    SetData {
        b: u8,
        off: u16,
        len: u16,
    },
    Chain {
        a: u8,
        b: u8,
    },
    Unchain {
        a: u8,
        b: u8,
    },
    Query(u8),
    Submit {
        src: u8,
        dst: u8,
        ud: u8,
    },
    Retrieve,
    /// A 1.x memory map: named, its chunk limit set (any value, any size), started.
    NewMmap1 {
        size: u16,
        max_chunks: u32,
        size_arg: u8,
    },
    /// `doca_mmap_populate` of a range inside the map's memory.
    Populate {
        m: u8,
        off: u16,
        len: u16,
        pg_shift: u8,
    },
    /// A property read or written with any size.
    MmapProp {
        m: u8,
        prop: u8,
        size: u8,
        set: bool,
        value: u32,
    },
    DevProp {
        prop: u8,
        size: u16,
    },
    /// A 1.x DMA job with any byte count.
    Submit1 {
        src: u8,
        dst: u8,
        n: u16,
    },
}

struct MmapH {
    h: *mut doca_mmap,
    mem: Vec<u8>,
}

struct InvH {
    h: *mut doca_buf_inventory,
    id: usize,
}

fn pick<T>(v: &[T], i: u8) -> Option<usize> {
    (!v.is_empty()).then(|| i as usize % v.len())
}

/// One device, one DMA context and one work queue for the whole run (set up once:
/// opening a device reads the topology).
struct Fixed {
    dev: *mut doca_dev,
    ctx: *mut doca_capi::exec::doca_ctx,
    wq: *mut doca_workq,
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
        let mut dma: *mut doca_dma = null_mut();
        assert_eq!(doca_dma_create(&mut dma), SUCCESS);
        let ctx = doca_dma_as_ctx(dma);
        assert_eq!(doca_ctx_dev_add(ctx, dev), SUCCESS);
        assert_eq!(doca_ctx_start(ctx), SUCCESS);
        let mut wq: *mut doca_workq = null_mut();
        assert_eq!(doca_workq_create(4, &mut wq), SUCCESS);
        assert_eq!(doca_ctx_workq_add(ctx, wq), SUCCESS);
        Fixed { dev, ctx, wq }
    })
}

fuzz_target!(|ops: Vec<Op>| unsafe {
    let Fixed { dev, ctx, wq } = *fixed();
    let mut mmaps: Vec<MmapH> = Vec::new();
    let mut invs: Vec<InvH> = Vec::new();
    let mut next_inv = 0usize;
    // Buffer pointers the program has seen, with their inventory (valid while it lives).
    let mut bufs: Vec<(*mut doca_buf, usize)> = Vec::new();
    // Jobs in flight: their structs live until retrieved (the C contract).
    let mut jobs: Vec<Box<doca_dma_job_memcpy>> = Vec::new();
    let mut jobs1: Vec<Box<v1::doca_dma_job_memcpy_v1>> = Vec::new();
    let mut inflight = 0usize;

    for op in ops.into_iter().take(200) {
        match op {
            Op::NewMmap { size } => {
                if mmaps.len() < 3 {
                    let mut m = MmapH {
                        h: null_mut(),
                        mem: vec![0u8; 1 + size as usize % 8192],
                    };
                    assert_eq!(doca_mmap_create(std::ptr::null(), &mut m.h), SUCCESS);
                    let _ =
                        doca_mmap_set_memrange(m.h, m.mem.as_mut_ptr() as *mut c_void, m.mem.len());
                    let _ = doca_mmap_dev_add(m.h, dev);
                    let _ = doca_mmap_start(m.h);
                    mmaps.push(m);
                }
            }
            Op::StartMmap(i) => {
                if let Some(i) = pick(&mmaps, i) {
                    let _ = doca_mmap_start(mmaps[i].h);
                }
            }
            Op::StopMmap(i) => {
                if let Some(i) = pick(&mmaps, i) {
                    let _ = doca_mmap_stop(mmaps[i].h);
                }
            }
            Op::DestroyMmap(i) => {
                if let Some(i) = pick(&mmaps, i) {
                    if doca_mmap_destroy(mmaps[i].h) == SUCCESS {
                        mmaps.swap_remove(i);
                    }
                }
            }
            Op::NewInventory { n } => {
                if invs.len() < 2 {
                    let mut h = null_mut();
                    assert_eq!(
                        doca_buf_inventory_create(std::ptr::null(), 1 + n as usize % 8, 0, &mut h),
                        SUCCESS
                    );
                    let _ = doca_buf_inventory_start(h);
                    invs.push(InvH { h, id: next_inv });
                    next_inv += 1;
                }
            }
            Op::StartInventory(i) => {
                if let Some(i) = pick(&invs, i) {
                    let _ = doca_buf_inventory_start(invs[i].h);
                }
            }
            Op::StopInventory(i) => {
                if let Some(i) = pick(&invs, i) {
                    let _ = doca_buf_inventory_stop(invs[i].h);
                }
            }
            Op::DestroyInventory(i) => {
                if let Some(i) = pick(&invs, i) {
                    let id = invs[i].id;
                    if doca_buf_inventory_destroy(invs[i].h) == SUCCESS {
                        invs.swap_remove(i);
                        // Its descriptors are gone with it.
                        bufs.retain(|b| b.1 != id);
                    }
                }
            }
            Op::Buf {
                inv,
                mmap,
                off,
                len,
                data_off,
                data_len,
            } => {
                if let (Some(i), Some(m)) = (pick(&invs, inv), pick(&mmaps, mmap)) {
                    let base = mmaps[m].mem.as_mut_ptr() as usize;
                    let addr = base.wrapping_add(off as usize) as *mut c_void;
                    let data = base.wrapping_add(data_off as usize) as *mut c_void;
                    let mut b = null_mut();
                    if doca_buf_inventory_buf_by_args(
                        invs[i].h,
                        mmaps[m].h,
                        addr,
                        len as usize,
                        data,
                        data_len as usize,
                        &mut b,
                    ) == SUCCESS
                    {
                        assert!(!b.is_null());
                        bufs.push((b, invs[i].id));
                    }
                }
            }
            Op::RefAdd(b) => {
                if let Some(b) = pick(&bufs, b) {
                    let mut rc = 0u16;
                    let _ = doca_buf_refcount_add(bufs[b].0, &mut rc);
                }
            }
            Op::RefRm(b) => {
                if let Some(b) = pick(&bufs, b) {
                    let mut rc = 0u16;
                    let _ = doca_buf_refcount_rm(bufs[b].0, &mut rc);
                }
            }
            Op::SetData { b, off, len } => {
                if let Some(b) = pick(&bufs, b) {
                    let mut head: *mut c_void = null_mut();
                    if doca_buf_get_head(bufs[b].0, &mut head) == SUCCESS {
                        let d = (head as usize).wrapping_add(off as usize).wrapping_sub(64)
                            as *mut c_void;
                        let _ = doca_buf_set_data(bufs[b].0, d, len as usize);
                    }
                }
            }
            Op::Chain { a, b } => {
                if let (Some(a), Some(b)) = (pick(&bufs, a), pick(&bufs, b)) {
                    let _ = doca_buf_list_chain(bufs[a].0, bufs[b].0);
                }
            }
            Op::Unchain { a, b } => {
                if let (Some(a), Some(b)) = (pick(&bufs, a), pick(&bufs, b)) {
                    let _ = doca_buf_list_unchain(bufs[a].0, bufs[b].0);
                }
            }
            Op::Query(b) => {
                if let Some(b) = pick(&bufs, b) {
                    let (mut len, mut dl, mut rc) = (0usize, 0usize, 0u16);
                    let mut data: *mut c_void = null_mut();
                    let mut head: *mut c_void = null_mut();
                    let ok = doca_buf_get_len(bufs[b].0, &mut len) == SUCCESS
                        && doca_buf_get_data_len(bufs[b].0, &mut dl) == SUCCESS
                        && doca_buf_get_data(bufs[b].0, &mut data) == SUCCESS
                        && doca_buf_get_head(bufs[b].0, &mut head) == SUCCESS;
                    let _ = doca_buf_get_refcount(bufs[b].0, &mut rc);
                    // A data section may lie anywhere (doca_buf_set_data takes any, as
                    // DOCA's does): a job refuses one outside its mmap, and the
                    // sanitizer sees any byte a job would touch outside.
                    let _ = (ok, data, dl, head, len);
                }
            }
            Op::Submit { src, dst, ud } => {
                if let (Some(s), Some(d)) = (pick(&bufs, src), pick(&bufs, dst)) {
                    let mut job = Box::new(doca_dma_job_memcpy {
                        base: doca_job {
                            type_: 65537,
                            flags: 0,
                            ctx,
                            user_data: doca_capi::doca_data::from_u64(ud as u64),
                        },
                        dst_buff: bufs[d].0,
                        src_buff: bufs[s].0,
                    });
                    if doca_workq_submit(wq, &mut job.base) == SUCCESS {
                        inflight += 1;
                        jobs.push(job);
                    }
                }
            }
            Op::Retrieve => {
                let mut ev = std::mem::zeroed::<doca_event>();
                let r = doca_workq_progress_retrieve(wq, &mut ev, 0);
                if r == SUCCESS || r == 17 {
                    inflight -= 1;
                }
            }
            Op::NewMmap1 {
                size,
                max_chunks,
                size_arg,
            } => {
                if mmaps.len() < 3 {
                    let mut m = MmapH {
                        h: null_mut(),
                        mem: vec![0u8; 1 + size as usize % 16384],
                    };
                    assert_eq!(v1::doca_mmap_create(c"fuzz".as_ptr(), &mut m.h), SUCCESS);
                    let v = max_chunks % 8;
                    let _ = v1::doca_mmap_property_set(
                        m.h,
                        v1::MMAP_MAX_NUM_CHUNKS,
                        (&v as *const u32).cast(),
                        u32::from(size_arg % 6),
                    );
                    let _ = doca_mmap_start(m.h);
                    let _ = doca_mmap_dev_add(m.h, dev);
                    mmaps.push(m);
                }
            }
            Op::Populate {
                m,
                off,
                len,
                pg_shift,
            } => {
                if let Some(m) = pick(&mmaps, m) {
                    let n = mmaps[m].mem.len();
                    let off = off as usize % n;
                    let len = (len as usize) % (n - off + 1);
                    let base = mmaps[m].mem.as_mut_ptr().add(off);
                    let _ = v1::doca_mmap_populate(
                        mmaps[m].h,
                        base.cast(),
                        len,
                        1usize << (pg_shift % 16),
                        None,
                        null_mut(),
                    );
                }
            }
            Op::MmapProp {
                m,
                prop,
                size,
                set,
                value,
            } => {
                if let Some(m) = pick(&mmaps, m) {
                    let mut buf = [0u8; 64];
                    buf[..4].copy_from_slice(&value.to_ne_bytes());
                    let size = u32::from(size) % 65;
                    let prop = i32::from(prop % 9);
                    if set {
                        let _ = v1::doca_mmap_property_set(mmaps[m].h, prop, buf.as_ptr(), size);
                    } else {
                        let _ =
                            v1::doca_mmap_property_get(mmaps[m].h, prop, buf.as_mut_ptr(), size);
                    }
                }
            }
            Op::DevProp { prop, size } => {
                let mut info: *mut doca_devinfo = null_mut();
                if v1::doca_dev_as_devinfo(dev, &mut info) == SUCCESS {
                    let mut buf = [0u8; 300];
                    let _ = v1::doca_devinfo_property_get(
                        info,
                        i32::from(prop % 8),
                        buf.as_mut_ptr(),
                        u32::from(size) % 301,
                    );
                }
            }
            Op::Submit1 { src, dst, n } => {
                if let (Some(s), Some(d)) = (pick(&bufs, src), pick(&bufs, dst)) {
                    let job = Box::new(v1::doca_dma_job_memcpy_v1 {
                        job: doca_dma_job_memcpy {
                            base: doca_job {
                                type_: 65537,
                                flags: 0,
                                ctx,
                                user_data: doca_capi::doca_data::from_u64(0),
                            },
                            dst_buff: bufs[d].0,
                            src_buff: bufs[s].0,
                        },
                        num_bytes_to_copy: n as usize,
                    });
                    if v1::doca_workq_submit(wq, &job.job.base) == SUCCESS {
                        inflight += 1;
                        jobs1.push(job);
                    }
                }
            }
        }
    }
    // Drain the work queue; then everything is torn down, whatever state it is in.
    while inflight > 0 {
        let mut ev = std::mem::zeroed::<doca_event>();
        let r = doca_workq_progress_retrieve(wq, &mut ev, 0);
        if r == SUCCESS || r == 17 {
            inflight -= 1;
        }
    }
    drop(jobs);
    drop(jobs1);
    // Buffers still referenced keep their inventories and mmaps: release them all, as
    // many times as it takes, then destroy.
    for _ in 0..70000 {
        let mut any = false;
        for b in &bufs {
            let mut rc = 0u16;
            if doca_buf_refcount_rm(b.0, &mut rc) == SUCCESS {
                any = true;
            }
        }
        if !any {
            break;
        }
    }
    for i in &invs {
        let _ = doca_buf_inventory_stop(i.h);
        assert_eq!(
            doca_buf_inventory_destroy(i.h),
            SUCCESS,
            "an inventory kept a buffer"
        );
    }
    for m in &mmaps {
        let _ = doca_mmap_stop(m.h);
        assert_eq!(doca_mmap_destroy(m.h), SUCCESS, "an mmap kept a buffer");
    }
});
