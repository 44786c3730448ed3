//! `doca_pe.h`'s task batches. In DOCA a task batch is allocated by a context of a
//! library that batches its tasks (the Ethernet send queue); no library here does, so no
//! task batch can exist. These functions answer as they do for a pointer that is not a
//! task batch: `INVALID_VALUE` with the reason, and neutral values from the getters, and
//! never read through the pointer.

use super::pe::doca_ctx3;
use crate::common::{doca_data, doca_error_t, ffi};
use doca_core::ErrorCode;

/// `struct doca_task_batch`: none is ever made here.
pub enum doca_task_batch {}

fn not_a_batch(task_batch: *const doca_task_batch) -> doca_error_t {
    ffi(|| {
        if task_batch.is_null() {
            return Err(crate::common::invalid("task_batch is NULL"));
        }
        Err(crate::common::err(
            ErrorCode::InvalidValue,
            "not a task batch of this implementation: no context here allocates task batches (in DOCA, Ethernet send queues do)",
        ))
    })
}

/// `doca_task_batch_submit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_submit(task_batch: *mut doca_task_batch) -> doca_error_t {
    not_a_batch(task_batch)
}

/// `doca_task_batch_try_submit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_try_submit(
    task_batch: *mut doca_task_batch,
) -> doca_error_t {
    not_a_batch(task_batch)
}

/// `doca_task_batch_get_status`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_get_status(
    task_batch: *const doca_task_batch,
) -> doca_error_t {
    not_a_batch(task_batch)
}

/// `doca_task_batch_free`: nothing to free.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_free(task_batch: *mut doca_task_batch) {
    let _ = not_a_batch(task_batch);
}

/// `doca_task_batch_set_user_data`: nothing to set.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_set_user_data(
    task_batch: *mut doca_task_batch,
    user_data: doca_data,
) {
    let _ = (not_a_batch(task_batch), user_data);
}

/// `doca_task_batch_get_user_data`: zero.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_get_user_data(
    task_batch: *const doca_task_batch,
) -> doca_data {
    let _ = not_a_batch(task_batch);
    doca_data::from_u64(0)
}

/// `doca_task_batch_get_ctx`: NULL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_get_ctx(
    task_batch: *const doca_task_batch,
) -> *mut doca_ctx3 {
    let _ = not_a_batch(task_batch);
    std::ptr::null_mut()
}

/// `doca_task_batch_get_ctx_user_data`: zero.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_get_ctx_user_data(
    task_batch: *const doca_task_batch,
) -> doca_data {
    let _ = not_a_batch(task_batch);
    doca_data::from_u64(0)
}

/// `doca_task_batch_get_tasks_num`: 0.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_task_batch_get_tasks_num(task_batch: *mut doca_task_batch) -> u16 {
    let _ = not_a_batch(task_batch);
    0
}
