//! `doca_dma.h` of the task generation: the DMA instance and its memcpy task.

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::{TaskCb, doca_ctx3, doca_task};
use crate::dev::{doca_dev, doca_devinfo};
use crate::libs::{devinfo_query, devinfo_value};
use crate::mem::doca_buf;
use crate::{Result, doca_data, doca_error_t, ffi, handle, invalid, out_ptr, put};
use doca_core::{BufDesc, Data, JobRecord};
use doca_dma::{Dma, JOB_MEMCPY, MAX_BUF_SIZE, MAX_LIST_ELEMENTS, MemcpyJob};

/// `struct doca_dma`.
pub type doca_dma3 = Lib3<Dma>;
/// `struct doca_dma_task_memcpy`: the generic task.
pub type doca_dma_task_memcpy = doca_task;
/// `doca_dma_task_memcpy_completion_cb_t`.
pub type doca_dma_task_memcpy_completion_cb_t = TaskCb;

/// `doca_dma_create`: an idle DMA context on `dev`.
#[unsafe(export_name = "doca3__dma_create")]
pub unsafe extern "C" fn doca_dma_create(
    dev: *mut doca_dev,
    dma: *mut *mut doca_dma3,
) -> doca_error_t {
    let d = Dma::new();
    let ctx = d.as_ctx().clone();
    // SAFETY: NULL or a live device.
    unsafe { lib_create(dev, dma, d, ctx) }
}

/// `doca_dma_destroy`: only while idle.
#[unsafe(export_name = "doca3__dma_destroy")]
pub unsafe extern "C" fn doca_dma_destroy(dma: *mut doca_dma3) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { lib_destroy(dma) }
}

/// `doca_dma_as_ctx`.
#[unsafe(export_name = "doca3__dma_as_ctx")]
pub unsafe extern "C" fn doca_dma_as_ctx(dma: *mut doca_dma3) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(dma) }
}

/// `doca_dma_cap_task_memcpy_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_cap_task_memcpy_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| Dma::job_get_supported(d, JOB_MEMCPY))
}

/// `doca_dma_cap_task_memcpy_get_max_buf_list_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_cap_task_memcpy_get_max_buf_list_len(
    devinfo: *const doca_devinfo,
    max_buf_list_len: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_list_len, |d| {
        Dma::job_get_supported(d, JOB_MEMCPY).map(|_| MAX_LIST_ELEMENTS)
    })
}

/// `doca_dma_cap_task_memcpy_get_max_buf_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_cap_task_memcpy_get_max_buf_size(
    devinfo: *const doca_devinfo,
    max_buf_size: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_size, |d| {
        Dma::job_get_supported(d, JOB_MEMCPY).map(|_| MAX_BUF_SIZE)
    })
}

/// `doca_dma_cap_get_max_num_tasks`: the most tasks one context's pool may hold.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_cap_get_max_num_tasks(
    dma: *mut doca_dma3,
    max_num_tasks: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(dma, "dma") }?;
        let o = out_ptr(max_num_tasks, "max_num_tasks")?;
        // SAFETY: output checked.
        unsafe { put(o, super::MAX_TASKS) };
        Ok(())
    })
}

/// The record of a memcpy task: its two buffers, borrowed, written in place.
unsafe fn memcpy_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    let (src, dst) = (t.bufs[0].get(), t.bufs[1].get());
    if src.is_null() || dst.is_null() {
        return Err(invalid(
            "the memcpy task's source or destination buffer is NULL",
        ));
    }
    // SAFETY: live buffers while the task is in flight (the C contract).
    // SAFETY: as above.
    unsafe { MemcpyJob::fill_borrowed(out, src as *mut BufDesc, dst as *mut BufDesc, ud) };
    Ok(())
}

/// `doca_dma_task_memcpy_set_conf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_task_memcpy_set_conf(
    dma: *mut doca_dma3,
    task_completion_cb: doca_dma_task_memcpy_completion_cb_t,
    task_error_cb: doca_dma_task_memcpy_completion_cb_t,
    num_memcpy_tasks: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(dma, "dma") }?;
        super::check_num_tasks(num_memcpy_tasks)?;
        h.ctx.set_conf(
            JOB_MEMCPY,
            task_completion_cb,
            task_error_cb,
            num_memcpy_tasks,
            memcpy_record,
            None,
        )
    })
}

/// `doca_dma_task_memcpy_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_task_memcpy_alloc_init(
    dma: *mut doca_dma3,
    src: *const doca_buf,
    dst: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_dma_task_memcpy,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(dma, "dma") }?;
        let o = out_ptr(task, "task")?;
        let t = h.ctx.alloc_task(JOB_MEMCPY, user_data, |t| {
            t.bufs[0].set(src);
            t.bufs[1].set(dst);
            Ok(())
        })?;
        // SAFETY: output checked.
        unsafe { put(o, t) };
        Ok(())
    })
}

/// `doca_dma_task_memcpy_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_task_memcpy_as_task(
    task: *mut doca_dma_task_memcpy,
) -> *mut doca_task {
    task
}

/// `doca_dma_task_memcpy_set_src`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_task_memcpy_set_src(
    task: *mut doca_dma_task_memcpy,
    src: *const doca_buf,
) {
    super::set_buf(task, 0, src);
}

/// `doca_dma_task_memcpy_get_src`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_task_memcpy_get_src(
    task: *const doca_dma_task_memcpy,
) -> *const doca_buf {
    super::get_buf(task, 0)
}

/// `doca_dma_task_memcpy_set_dst`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_task_memcpy_set_dst(
    task: *mut doca_dma_task_memcpy,
    dst: *mut doca_buf,
) {
    super::set_buf(task, 1, dst);
}

/// `doca_dma_task_memcpy_get_dst`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_task_memcpy_get_dst(
    task: *const doca_dma_task_memcpy,
) -> *mut doca_buf {
    super::get_buf(task, 1) as *mut doca_buf
}
