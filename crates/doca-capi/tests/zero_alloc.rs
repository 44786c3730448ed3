//! Through the C interface too, taking buffers, submitting, executing and retrieving jobs
//! allocates nothing once everything is started, on both engines.

use doca_capi::dev::*;
use doca_capi::dma::*;
use doca_capi::exec::*;
use doca_capi::mem::*;
use doca_capi::workq::*;
use doca_capi::{DOCA_SUCCESS, doca_error_t};
use std::ffi::c_void;
use std::ptr::null_mut;

#[global_allocator]
static GLOBAL: doca_testkit::Counting = doca_testkit::Counting;

fn ok(r: doca_error_t) {
    assert_eq!(r, DOCA_SUCCESS, "{:?}", unsafe {
        // SAFETY: the error name is a static NUL-terminated string.
        std::ffi::CStr::from_ptr(doca_capi::doca_get_error_name(r))
    });
}

/// One test: the allocation counter is global.
#[test]
fn c_data_path_allocates_nothing() {
    let topo =
        std::env::temp_dir().join(format!("doca-capi-zero-alloc-{}.toml", std::process::id()));
    std::fs::write(
        &topo,
        "[[host.device]]\npci_addr = \"0000:5a:00.0\"\nengine_threads = 2\n",
    )
    .unwrap();
    for engine in [false, true] {
        // SAFETY: this binary runs one test, on one thread, and sets the variable before
        // the devices are listed.
        unsafe {
            if engine {
                std::env::set_var("DOCA_SW_TOPOLOGY", &topo);
            } else {
                std::env::remove_var("DOCA_SW_TOPOLOGY");
            }
        }
        // SAFETY: the C interface used as a C program would.
        unsafe { scenario(engine) };
    }
    let _ = std::fs::remove_file(&topo);
}

unsafe fn scenario(engine: bool) {
    // SAFETY: every call gets live handles and valid output pointers.
    unsafe {
        let mut list = null_mut();
        let mut n = 0;
        ok(doca_devinfo_list_create(&mut list, &mut n));
        let mut dev = null_mut();
        ok(doca_dev_open(*list, &mut dev));
        let mut pci = [0 as std::ffi::c_char; 13];
        ok(doca_devinfo_get_pci_addr_str(
            doca_dev_as_devinfo(dev),
            pci.as_mut_ptr(),
        ));
        let pci = std::ffi::CStr::from_ptr(pci.as_ptr())
            .to_str()
            .unwrap()
            .to_owned();
        assert_eq!(
            pci == "0000:5a:00.0",
            engine,
            "the engine topology is in force"
        );
        ok(doca_devinfo_list_destroy(list));
        let mut mem = vec![0u8; 1 << 20];
        let base = mem.as_mut_ptr();
        let mut mmap = null_mut();
        ok(doca_mmap_create(std::ptr::null(), &mut mmap));
        ok(doca_mmap_set_memrange(mmap, base as *mut c_void, mem.len()));
        ok(doca_mmap_set_permissions(mmap, 1));
        ok(doca_mmap_dev_add(mmap, dev));
        ok(doca_mmap_start(mmap));
        let mut inv = null_mut();
        ok(doca_buf_inventory_create(std::ptr::null(), 64, 0, &mut inv));
        ok(doca_buf_inventory_start(inv));
        let mut dma = null_mut();
        ok(doca_dma_create(&mut dma));
        let ctx = doca_dma_as_ctx(dma);
        ok(doca_ctx_dev_add(ctx, dev));
        ok(doca_ctx_start(ctx));
        let mut wq = null_mut();
        ok(doca_workq_create(16, &mut wq));
        ok(doca_ctx_workq_add(ctx, wq));

        let round = |r: usize| {
            let mut bufs = [(null_mut(), null_mut()); 8];
            for (i, b) in bufs.iter_mut().enumerate() {
                let src = base.add(i * 4096) as *mut c_void;
                let dst = base.add(65536 + i * 4096) as *mut c_void;
                ok(doca_buf_inventory_buf_by_args(
                    inv, mmap, src, 2048, src, 2048, &mut b.0,
                ));
                ok(doca_buf_inventory_buf_by_args(
                    inv, mmap, dst, 4096, dst, 0, &mut b.1,
                ));
                let job = doca_dma_job_memcpy {
                    base: doca_job {
                        type_: ::doca_dma::JOB_MEMCPY as i32,
                        flags: 0,
                        ctx,
                        user_data: doca_core::Data((r * 8 + i) as u64),
                    },
                    dst_buff: b.1,
                    src_buff: b.0,
                };
                ok(doca_workq_submit(wq, &job.base));
            }
            let mut done = 0;
            let mut ev = doca_event {
                type_: 0,
                user_data: doca_core::Data(0),
                result: doca_core::Data(0),
            };
            while done < 8 {
                match doca_workq_progress_retrieve(wq, &mut ev, 0) {
                    0 => done += 1,
                    5 => std::hint::spin_loop(),
                    e => panic!("retrieve failed: {e}"),
                }
            }
            for b in bufs {
                ok(doca_buf_refcount_rm(b.0, null_mut()));
                ok(doca_buf_refcount_rm(b.1, null_mut()));
            }
        };
        round(0);
        doca_testkit::reset();
        doca_testkit::set_counting(true);
        for r in 1..50 {
            round(r);
        }
        doca_testkit::set_counting(false);
        assert_eq!(doca_testkit::count(), 0, "the C data path allocated");

        ok(doca_ctx_workq_rm(ctx, wq));
        ok(doca_workq_destroy(wq));
        ok(doca_ctx_stop(ctx));
        ok(doca_ctx_dev_rm(ctx, dev));
        ok(doca_dma_destroy(dma));

        // The 3.x face: tasks from the pool, submitted, completed by doca_pe_progress
        // through their callback, freed there.
        use doca_capi::v3;
        unsafe extern "C" fn done_cb(
            task: *mut v3::doca_task,
            _t: doca_core::Data,
            c: doca_core::Data,
        ) {
            // SAFETY: the context's user data is the counter; the task is ours again.
            unsafe {
                (*c.ptr::<std::sync::atomic::AtomicUsize>())
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                v3::doca_task_free(task);
            }
        }
        let done = std::sync::atomic::AtomicUsize::new(0);
        let mut pe = null_mut();
        ok(v3::doca_pe_create(&mut pe));
        let mut dma3 = null_mut();
        ok(v3::doca_dma_create(dev, &mut dma3));
        let ctx3 = v3::doca_dma_as_ctx(dma3);
        ok(v3::doca_pe_connect_ctx(pe, ctx3));
        ok(v3::doca_ctx_set_user_data(
            ctx3,
            doca_core::Data::from_ptr(&done),
        ));
        ok(v3::doca_dma_task_memcpy_set_conf(
            dma3,
            Some(done_cb),
            Some(done_cb),
            8,
        ));
        ok(v3::doca_ctx_start(ctx3));
        let round3 = |r: usize| {
            let mut bufs = [(null_mut(), null_mut()); 8];
            done.store(0, std::sync::atomic::Ordering::Relaxed);
            for (i, b) in bufs.iter_mut().enumerate() {
                let src = base.add(i * 4096) as *mut c_void;
                let dst = base.add(65536 + i * 4096) as *mut c_void;
                ok(doca_buf_inventory_buf_by_args(
                    inv, mmap, src, 2048, src, 2048, &mut b.0,
                ));
                ok(doca_buf_inventory_buf_by_args(
                    inv, mmap, dst, 4096, dst, 0, &mut b.1,
                ));
                let mut t = null_mut();
                ok(v3::doca_dma_task_memcpy_alloc_init(
                    dma3,
                    b.0,
                    b.1,
                    doca_core::Data((r * 8 + i) as u64),
                    &mut t,
                ));
                ok(v3::doca_task_submit(t));
            }
            while done.load(std::sync::atomic::Ordering::Relaxed) < 8 {
                v3::doca_pe_progress(pe);
            }
            for b in bufs {
                ok(doca_buf_refcount_rm(b.0, null_mut()));
                ok(doca_buf_refcount_rm(b.1, null_mut()));
            }
        };
        round3(0);
        doca_testkit::reset();
        doca_testkit::set_counting(true);
        for r in 1..50 {
            round3(r);
        }
        doca_testkit::set_counting(false);
        assert_eq!(doca_testkit::count(), 0, "the 3.x C data path allocated");
        ok(v3::doca_ctx_stop(ctx3));
        ok(v3::doca_dma_destroy(dma3));
        ok(v3::doca_pe_destroy(pe));
        ok(doca_buf_inventory_destroy(inv));
        ok(doca_mmap_destroy(mmap));
        ok(doca_dev_close(dev));
        drop(mem);
    }
}
