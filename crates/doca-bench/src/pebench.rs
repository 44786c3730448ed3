//! Progress-engine benchmark: a 64-byte DMA memcpy round trip through the C interface
//! of each API generation, in one run: the 3.x task (`doca_task_submit`, completion
//! callback from `doca_pe_progress`) against the 2.2 job (`doca_workq_submit`,
//! `doca_workq_progress_retrieve`), and the Rust progress engine against the Rust work
//! queue. Batches of 32, inline engine; the result is ns per task or job.

use crate::ec::{Runner, measure_all};
use clap::Args;
use doca_capi::dma::doca_dma_job_memcpy;
use doca_capi::exec::{doca_event, doca_job};
use doca_capi::mem::doca_buf;
use doca_capi::v3::doca_task;
use doca_capi::{dev, dma, exec, mem, v3, workq};
use doca_core::exec::{Pe, PeEvent};
use doca_core::{Buf, Data, JobRecord, WorkQ};
use doca_dma::{Dma, JOB_MEMCPY, MemcpyJob};
use std::cell::Cell;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct PeArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Target duration of one sample, in milliseconds.
    #[arg(long, default_value_t = 40)]
    sample_ms: u64,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
    /// Runs one path only (0: C 2.2, 1: C 3.x, 2: Rust WorkQ, 3: Rust Pe) for
    /// `reps` samples, to profile it.
    #[arg(long)]
    only: Option<usize>,
}

const BATCH: usize = 32;
const SIZE: usize = 64;

fn ok(r: i32, what: &str) {
    assert_eq!(r, 0, "{what} failed with DOCA error {r}");
}

/// The device, memory and buffers both C faces use (the same handle types).
struct CSetup {
    dev: *mut dev::doca_dev,
    mmap: *mut mem::doca_mmap,
    inv: *mut mem::doca_buf_inventory,
    src: Vec<*mut doca_buf>,
    dst: Vec<*mut doca_buf>,
    _memory: Vec<u8>,
}

fn c_setup() -> CSetup {
    let mut memory = vec![7u8; 2 * BATCH * 128];
    let mut list: *mut *mut dev::doca_devinfo = std::ptr::null_mut();
    let mut n = 0u32;
    let mut d: *mut dev::doca_dev = std::ptr::null_mut();
    let mut mmap: *mut mem::doca_mmap = std::ptr::null_mut();
    let mut inv: *mut mem::doca_buf_inventory = std::ptr::null_mut();
    let (mut src, mut dst) = (Vec::new(), Vec::new());
    // SAFETY: the calls a C program makes, with live out-pointers; `memory` outlives the
    // mmap (it moves into the returned setup, whose heap block does not move).
    unsafe {
        ok(
            dev::doca_devinfo_list_create(&mut list, &mut n),
            "devinfo list",
        );
        assert!(n > 0, "no device");
        ok(dev::doca_dev_open(*list, &mut d), "dev open");
        ok(dev::doca_devinfo_list_destroy(list), "devinfo list destroy");
        ok(
            mem::doca_mmap_create(std::ptr::null(), &mut mmap),
            "mmap create",
        );
        let base = memory.as_mut_ptr();
        ok(
            mem::doca_mmap_set_memrange(mmap, base.cast(), memory.len()),
            "memrange",
        );
        ok(mem::doca_mmap_dev_add(mmap, d), "mmap dev add");
        ok(mem::doca_mmap_start(mmap), "mmap start");
        ok(
            mem::doca_buf_inventory_create(std::ptr::null(), 4 * BATCH, 0, &mut inv),
            "inventory",
        );
        ok(mem::doca_buf_inventory_start(inv), "inventory start");
        for i in 0..BATCH {
            let (mut s, mut t) = (std::ptr::null_mut(), std::ptr::null_mut());
            let sp = base.add(i * 128);
            let dp = base.add(BATCH * 128 + i * 128);
            ok(
                mem::doca_buf_inventory_buf_by_args(
                    inv,
                    mmap,
                    sp.cast(),
                    SIZE,
                    sp.cast(),
                    SIZE,
                    &mut s,
                ),
                "src buf",
            );
            ok(
                mem::doca_buf_inventory_buf_by_args(
                    inv,
                    mmap,
                    dp.cast(),
                    SIZE,
                    dp.cast(),
                    0,
                    &mut t,
                ),
                "dst buf",
            );
            src.push(s);
            dst.push(t);
        }
    }
    CSetup {
        dev: d,
        mmap,
        inv,
        src,
        dst,
        _memory: memory,
    }
}

impl Drop for CSetup {
    fn drop(&mut self) {
        // SAFETY: the handles made in `c_setup`, released once.
        unsafe {
            for b in self.src.iter().chain(&self.dst) {
                mem::doca_buf_refcount_rm(*b, std::ptr::null_mut());
            }
            mem::doca_buf_inventory_stop(self.inv);
            mem::doca_buf_inventory_destroy(self.inv);
            mem::doca_mmap_stop(self.mmap);
            mem::doca_mmap_destroy(self.mmap);
            dev::doca_dev_close(self.dev);
        }
    }
}

unsafe extern "C" fn count_cb(_task: *mut doca_task, _t: doca_core::Data, ctx: doca_core::Data) {
    // SAFETY: the context's user data is the benchmark's counter, alive while the
    // context is; callbacks run on the thread that progresses the engine, which owns it.
    let n = unsafe { &*ctx.ptr::<Cell<usize>>() };
    n.set(n.get() + 1);
}

pub fn run(a: &PeArgs) {
    let (reps, sample) = if a.quick {
        (3, Duration::from_millis(5))
    } else {
        (a.reps.max(1), Duration::from_millis(a.sample_ms))
    };
    println!("median of {reps} samples; samples of each taken in turn; inline engine\n");
    let s = c_setup();

    // The 2.2 face: a DMA context on a work queue of depth 64.
    let mut dma22: *mut dma::doca_dma = std::ptr::null_mut();
    let mut wq: *mut exec::doca_workq = std::ptr::null_mut();
    // SAFETY: the calls a 2.2 C program makes.
    let ctx22 = unsafe {
        ok(dma::doca_dma_create(&mut dma22), "dma create");
        let ctx = dma::doca_dma_as_ctx(dma22);
        ok(exec::doca_ctx_dev_add(ctx, s.dev), "ctx dev add");
        ok(exec::doca_ctx_start(ctx), "ctx start");
        ok(workq::doca_workq_create(64, &mut wq), "workq create");
        ok(exec::doca_ctx_workq_add(ctx, wq), "workq add");
        ctx
    };
    let mut jobs: Vec<doca_dma_job_memcpy> = (0..BATCH)
        .map(|i| doca_dma_job_memcpy {
            base: doca_job {
                type_: JOB_MEMCPY as i32,
                flags: 0,
                ctx: ctx22,
                user_data: Data(i as u64),
            },
            dst_buff: s.dst[i],
            src_buff: s.src[i],
        })
        .collect();

    // The 3.x face: a DMA context on a progress engine, 32 tasks reused.
    let mut pe: *mut v3::doca_pe = std::ptr::null_mut();
    let mut dma3: *mut v3::doca_dma3 = std::ptr::null_mut();
    let done = Box::new(Cell::new(0usize));
    let mut tasks: Vec<*mut doca_task> = Vec::new();
    // SAFETY: the calls a 3.x C program makes; `done` outlives the context.
    unsafe {
        ok(v3::doca_pe_create(&mut pe), "pe create");
        ok(v3::doca_dma_create(s.dev, &mut dma3), "dma create");
        let ctx = v3::doca_dma_as_ctx(dma3);
        ok(v3::doca_pe_connect_ctx(pe, ctx), "connect");
        ok(
            v3::doca_ctx_set_user_data(ctx, Data::from_ptr(&*done as *const Cell<usize>)),
            "user data",
        );
        ok(
            v3::doca_dma_task_memcpy_set_conf(dma3, Some(count_cb), Some(count_cb), BATCH as u32),
            "set conf",
        );
        ok(v3::doca_ctx_start(ctx), "start");
        for i in 0..BATCH {
            let mut t = std::ptr::null_mut();
            ok(
                v3::doca_dma_task_memcpy_alloc_init(
                    dma3,
                    s.src[i],
                    s.dst[i],
                    Data(i as u64),
                    &mut t,
                ),
                "alloc",
            );
            tasks.push(t);
        }
    }

    // The Rust engines, on Rust buffers of the same shape.
    let rdev = doca_core::devinfo_list().expect("devices")[0]
        .open()
        .expect("open");
    let (rmmap, rinv) =
        doca_tools::local_memory(&rdev, vec![7u8; 2 * BATCH * 128], 4 * BATCH).expect("memory");
    let pairs = || -> Vec<(Buf, Buf)> {
        (0..BATCH)
            .map(|i| {
                (
                    rinv.buf_with_data_at(&rmmap, i * 128, SIZE).expect("src"),
                    rinv.buf_at(&rmmap, BATCH * 128 + i * 128, SIZE)
                        .expect("dst"),
                )
            })
            .collect()
    };
    let rdma_wq = Dma::new();
    rdma_wq.as_ctx().dev_add(&rdev).expect("dev add");
    rdma_wq.as_ctx().start().expect("start");
    let mut rwq = WorkQ::new(64).expect("workq");
    rdma_wq.as_ctx().workq_add(&mut rwq).expect("workq add");
    let mut wq_records: Vec<JobRecord> = pairs()
        .into_iter()
        .enumerate()
        .map(|(i, (s, d))| doca_core::exec::Job::into_record(MemcpyJob::new(s, d, i as u64)))
        .collect();
    let rdma_pe = Dma::new();
    rdma_pe.as_ctx().dev_add(&rdev).expect("dev add");
    rdma_pe
        .as_ctx()
        .set_task_room(JOB_MEMCPY, BATCH as u32)
        .expect("room");
    let rpe = Pe::new().expect("pe");
    rpe.connect(rdma_pe.as_ctx()).expect("connect");
    rpe.start_ctx(rdma_pe.as_ctx()).expect("start");
    let mut pe_records: Vec<JobRecord> = pairs()
        .into_iter()
        .enumerate()
        .map(|(i, (s, d))| doca_core::exec::Job::into_record(MemcpyJob::new(s, d, i as u64)))
        .collect();

    let reset = |b: *mut doca_buf| {
        // SAFETY: a live buffer of the setup.
        ok(unsafe { mem::doca_buf_reset_data_len(b) }, "reset");
    };
    let mut runners: Vec<Runner<'_>> = vec![
        Box::new(|| {
            // SAFETY: the 2.2 calls on live handles; `ev` is the program's event.
            unsafe {
                for j in jobs.iter_mut() {
                    reset(j.dst_buff);
                    ok(workq::doca_workq_submit(wq, &j.base), "submit");
                }
                let mut ev = doca_event {
                    type_: 0,
                    user_data: Data(0),
                    result: Data(0),
                };
                let mut got = 0;
                while got < BATCH {
                    match workq::doca_workq_progress_retrieve(wq, &mut ev, 0) {
                        0 => got += 1,
                        5 => {}
                        e => panic!("retrieve failed: {e}"),
                    }
                }
            }
        }),
        Box::new(|| {
            done.set(0);
            // SAFETY: the 3.x calls on live handles.
            unsafe {
                for (i, t) in tasks.iter().enumerate() {
                    reset(s.dst[i]);
                    ok(v3::doca_task_submit(*t), "submit");
                }
                while done.get() < BATCH {
                    v3::doca_pe_progress(pe);
                }
            }
        }),
        Box::new(|| {
            for mut r in wq_records.drain(..) {
                let mut d = r.take_buf(MemcpyJob::DST).expect("dst");
                d.reset_data_len();
                r.set_buf(MemcpyJob::DST, d);
                rwq.submit(rdma_wq.as_ctx(), r)
                    .map_err(|(e, _)| e)
                    .expect("submit");
            }
            while wq_records.len() < BATCH {
                if let Ok(c) = rwq.progress_retrieve() {
                    wq_records.push(c.record);
                }
            }
        }),
        Box::new(|| {
            for mut r in pe_records.drain(..) {
                let mut d = r.take_buf(MemcpyJob::DST).expect("dst");
                d.reset_data_len();
                r.set_buf(MemcpyJob::DST, d);
                rpe.submit(rdma_pe.as_ctx(), r)
                    .map_err(|(e, _)| e)
                    .expect("submit");
            }
            while pe_records.len() < BATCH {
                rpe.progress(|ev| {
                    if let PeEvent::Task(c) = ev {
                        pe_records.push(c.record);
                    }
                });
            }
        }),
    ];
    if let Some(k) = a.only {
        let mut r = runners.swap_remove(k.min(3));
        let mut rates = Vec::new();
        for _ in 0..reps {
            let t = std::time::Instant::now();
            let mut n = 0usize;
            while t.elapsed() < sample {
                for _ in 0..64 {
                    r();
                }
                n += 64 * BATCH;
            }
            rates.push(t.elapsed().as_nanos() as f64 / n as f64);
        }
        rates.sort_by(f64::total_cmp);
        println!(
            "path {k}: {:.1} ns per task (median)",
            rates[rates.len() / 2]
        );
        return;
    }
    // "bytes" = 32 tasks, so rates are in tasks per ns.
    let r = measure_all(BATCH, reps, sample, &mut runners);
    let ns: Vec<f64> = r.iter().map(|x| 1.0 / x).collect();
    println!("| 64 B memcpy round trip, batches of 32 | ns per task | 3.x / 2.2 |");
    println!("|---|---|---|");
    println!("| C, 2.2 work queue (doca_workq_*) | {:.1} | |", ns[0]);
    println!(
        "| C, 3.x progress engine (doca_task_submit, doca_pe_progress) | {:.1} | {:.2}x |",
        ns[1],
        ns[1] / ns[0]
    );
    println!("| Rust, WorkQ | {:.1} | |", ns[2]);
    println!("| Rust, Pe | {:.1} | {:.2}x |", ns[3], ns[3] / ns[2]);
    println!(
        "\n3.x task round trip: {:.1} ns, target <= 60 ns: {}",
        ns[1],
        if ns[1] <= 60.0 { "met" } else { "not met" }
    );

    drop(runners);
    // SAFETY: releasing the handles made above, in the order DOCA asks.
    unsafe {
        for t in tasks {
            v3::doca_task_free(t);
        }
        let ctx = v3::doca_dma_as_ctx(dma3);
        ok(v3::doca_ctx_stop(ctx), "stop");
        ok(v3::doca_dma_destroy(dma3), "dma destroy");
        ok(v3::doca_pe_destroy(pe), "pe destroy");
        ok(exec::doca_ctx_workq_rm(ctx22, wq), "workq rm");
        ok(workq::doca_workq_destroy(wq), "workq destroy");
        ok(exec::doca_ctx_stop(ctx22), "stop");
        ok(exec::doca_ctx_dev_rm(ctx22, s.dev), "dev rm");
        ok(dma::doca_dma_destroy(dma22), "dma destroy");
    }
    rpe.stop_ctx(rdma_pe.as_ctx()).expect("stop");
}
