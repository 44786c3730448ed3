//! `doca_mmap_advise.h`: a context whose task invalidates the CPU's cache over a buffer
//! (`doca_core::memory::advise`).

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::doca_ctx3;
use crate::common::doca_error_t;
use crate::v22::dev::{doca_dev, doca_devinfo};
use crate::v22::libs::devinfo_value;
use crate::v22::mem::doca_buf;
use doca_core::memory::advise::{MAX_BUF_SIZE, MmapAdvise};

/// `struct doca_mmap_advise`.
pub type doca_mmap_advise = Lib3<MmapAdvise>;

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

// ---- the invalidate-cache task: from the mmap advice's task table ----

doca_core::mmap_advise_task_table!(crate::common::tasks::c3_tasks);
