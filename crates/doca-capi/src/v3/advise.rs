//! `doca_mmap_advise.h`: a context whose task invalidates the CPU's cache over a buffer
//! (`doca_core::memory::advise`).

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::{TaskCb, doca_ctx3, doca_task};
use crate::dev::{doca_dev, doca_devinfo};
use crate::libs::{devinfo_query, devinfo_value};
use crate::mem::doca_buf;
use crate::{Result, doca_data, doca_error_t, err, ffi, handle, invalid, out_ptr, put};
use doca_core::memory::advise::{JOB_INVALIDATE_CACHE, MAX_BUF_SIZE, MmapAdvise};
use doca_core::{BufDesc, Data, ErrorCode, JobRecord};

/// `struct doca_mmap_advise`.
pub type doca_mmap_advise = Lib3<MmapAdvise>;
/// `struct doca_mmap_advise_task_invalidate_cache`.
pub type doca_mmap_advise_task_invalidate_cache = doca_task;
/// `doca_mmap_advise_task_invalidate_cache_completion_cb_t`.
pub type doca_mmap_advise_task_invalidate_cache_completion_cb_t = TaskCb;

/// `doca_mmap_advise_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_create(
    dev: *mut doca_dev,
    mmap_advise: *mut *mut doca_mmap_advise,
) -> doca_error_t {
    let a = MmapAdvise::new();
    let ctx = a.as_ctx().clone();
    // SAFETY: NULL or a live device.
    unsafe { lib_create(dev, mmap_advise, a, ctx) }
}

/// `doca_mmap_advise_destroy`: only while idle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_destroy(
    mmap_advise: *mut doca_mmap_advise,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { lib_destroy(mmap_advise) }
}

/// `doca_mmap_advise_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_as_ctx(
    mmap_advise: *mut doca_mmap_advise,
) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(mmap_advise) }
}

/// `doca_mmap_advise_cap_task_cache_invalidate_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_cap_task_cache_invalidate_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, MmapAdvise::invalidate_supported)
}

/// `doca_mmap_advise_task_cache_invalidate_get_max_buf_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_task_cache_invalidate_get_max_buf_size(
    devinfo: *const doca_devinfo,
    buf_size: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, buf_size, |d| {
        MmapAdvise::invalidate_supported(d).map(|_| MAX_BUF_SIZE)
    })
}

unsafe fn record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    let b = t.bufs[0].get();
    if b.is_null() {
        return Err(invalid("the cache invalidation task's buffer is NULL"));
    }
    // SAFETY: a live buffer while the task is in flight (the C contract).
    *out = unsafe { MmapAdvise::record_borrowed(b as *mut BufDesc, ud) };
    Ok(())
}

/// `doca_mmap_advise_task_invalidate_cache_set_conf`: only while idle
/// (`NOT_PERMITTED`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_task_invalidate_cache_set_conf(
    mmap_advise: *mut doca_mmap_advise,
    completion_cb: doca_mmap_advise_task_invalidate_cache_completion_cb_t,
    error_cb: doca_mmap_advise_task_invalidate_cache_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(mmap_advise, "mmap_advise") }?;
        super::check_num_tasks(num_tasks)?;
        h.ctx
            .set_conf(
                JOB_INVALIDATE_CACHE,
                completion_cb,
                error_cb,
                num_tasks,
                record,
                None,
            )
            .map_err(|e| {
                if e.code() == ErrorCode::BadState {
                    err(
                        ErrorCode::NotPermitted,
                        "tasks can be configured only while the context is idle",
                    )
                } else {
                    e
                }
            })
    })
}

/// `doca_mmap_advise_task_invalidate_cache_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_task_invalidate_cache_alloc_init(
    mmap_advise: *mut doca_mmap_advise,
    buf: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_mmap_advise_task_invalidate_cache,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(mmap_advise, "mmap_advise") }?;
        let o = out_ptr(task, "task")?;
        let t = h.ctx.alloc_task(JOB_INVALIDATE_CACHE, user_data, |t| {
            t.bufs[0].set(buf);
            Ok(())
        })?;
        // SAFETY: output checked.
        unsafe { put(o, t) };
        Ok(())
    })
}

/// `doca_mmap_advise_task_invalidate_cache_as_doca_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_task_invalidate_cache_as_doca_task(
    task: *mut doca_mmap_advise_task_invalidate_cache,
) -> *mut doca_task {
    task
}

/// `doca_mmap_advise_task_invalidate_cache_set_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_task_invalidate_cache_set_buf(
    task: *mut doca_mmap_advise_task_invalidate_cache,
    buf: *mut doca_buf,
) {
    super::set_buf(task, 0, buf)
}

/// `doca_mmap_advise_task_invalidate_cache_get_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_advise_task_invalidate_cache_get_buf(
    task: *const doca_mmap_advise_task_invalidate_cache,
) -> *mut doca_buf {
    super::get_buf(task, 0) as *mut doca_buf
}
