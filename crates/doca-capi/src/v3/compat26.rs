//! Names DOCA 2.5-2.8 programs call that later releases renamed or dropped, over the
//! same objects: the 3.x face takes those programs unchanged.

use super::ec::doca_ec_task_recover;
use super::log::{doca_log_backend, doca_log_backend_create_with_buffer};
use super::pe::{doca_notification_handle_t, doca_pe};
use crate::common::log::log_flush_callback;
use crate::common::{doca_data, doca_error_t, ffi, handle};
use crate::v22::mem::doca_buf;
use doca_core::ErrorCode;
use std::ffi::c_char;

/// `doca_ec_task_recover_get_recovered_data` (DOCA 2.6's name of
/// `doca_ec_task_recover_get_recovered_data_blocks`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_get_recovered_data(
    task: *const doca_ec_task_recover,
) -> *mut doca_buf {
    // SAFETY: the same contract.
    unsafe { super::ec::doca_ec_task_recover_get_recovered_data_blocks(task) }
}

/// `doca_log_backend_create_with_buf` (DOCA 2.6's name of
/// `doca_log_backend_create_with_buffer`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_backend_create_with_buf(
    buf: *mut c_char,
    capacity: usize,
    handler: log_flush_callback,
    backend: *mut *mut doca_log_backend,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_log_backend_create_with_buffer(buf, capacity, handler, backend) }
}

/// `doca_log_backend_create_with_buf_sdk` (DOCA 2.6's name of
/// `doca_log_backend_create_with_buffer_sdk`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_backend_create_with_buf_sdk(
    buf: *mut c_char,
    capacity: usize,
    handler: log_flush_callback,
    backend: *mut *mut doca_log_backend,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { super::log::doca_log_backend_create_with_buffer_sdk(buf, capacity, handler, backend) }
}

/// `doca_pe_set_notification_handle` (DOCA 2.6): an I/O completion port for the engine
/// to notify, which DOCA takes on Windows only; on Linux it answers `NOT_SUPPORTED`, as
/// DOCA's does (the engine's handle comes from `doca_pe_get_notification_handle`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_pe_set_notification_handle(
    pe: *mut doca_pe,
    handle_: doca_notification_handle_t,
    completion_key: doca_data,
) -> doca_error_t {
    let _ = (handle_, completion_key);
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle(pe, "pe") }?;
        Err(crate::common::err(
            ErrorCode::NotSupported,
            "doca_pe_set_notification_handle takes a Windows I/O completion port; on Linux, use doca_pe_get_notification_handle",
        ))
    })
}
