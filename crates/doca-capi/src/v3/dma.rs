//! `doca_dma.h` of the task generation: the DMA instance and its memcpy task.

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::doca_ctx3;
use crate::common::{doca_error_t, ffi, handle, out_ptr, put};
use crate::v22::dev::doca_dev;
use crate::v22::mem::doca_buf;
use doca_dma::Dma;

/// `struct doca_dma`.
pub type doca_dma3 = Lib3<Dma>;

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

// ---- the memcpy task: from DMA's task table ----

doca_dma::dma_task_table!(crate::common::tasks::c3_tasks);
