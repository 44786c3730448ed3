//! `doca_sha.h` of the task generation: the SHA instance, its hash task and its partial
//! hash task (one task submitted once per segment, the last one marked final).

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::{doca_ctx3, doca_task};
use crate::common::{Result, doca_error_t, err, ffi, ffi_value, handle};
use crate::v22::dev::{doca_dev, doca_devinfo};
use crate::v22::libs::{devinfo_query, devinfo_value};
use crate::v22::mem::doca_buf;
use doca_core::ErrorCode;
use doca_sha::task_hooks::{self, HAS_RESULT, session};
use doca_sha::{
    FLAG_PARTIAL_FINAL, JOB_SHA1, MAX_LIST_ELEMENTS, MAX_SRC_BUFFER_SIZE, Sha, ShaAlgo,
};
use std::ffi::c_int;

const HASH: u32 = JOB_SHA1;

/// `struct doca_sha`.
pub type doca_sha3 = Lib3<Sha>;
/// `enum doca_sha_algorithm`.
pub type doca_sha_algorithm = c_int;

fn algo(a: doca_sha_algorithm) -> Result<ShaAlgo> {
    task_hooks::algorithm(a as u64)
}

/// `doca_sha_create`.
#[unsafe(export_name = "doca3__sha_create")]
pub unsafe extern "C" fn doca_sha_create(
    dev: *mut doca_dev,
    sha: *mut *mut doca_sha3,
) -> doca_error_t {
    let s = Sha::new();
    let ctx = s.as_ctx().clone();
    // SAFETY: NULL or a live device.
    unsafe { lib_create(dev, sha, s, ctx) }
}

/// `doca_sha_destroy`: only while idle.
#[unsafe(export_name = "doca3__sha_destroy")]
pub unsafe extern "C" fn doca_sha_destroy(sha: *mut doca_sha3) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { lib_destroy(sha) }
}

/// `doca_sha_as_ctx`.
#[unsafe(export_name = "doca3__sha_as_ctx")]
pub unsafe extern "C" fn doca_sha_as_ctx(sha: *mut doca_sha3) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(sha) }
}

/// `doca_sha_cap_task_hash_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_cap_task_hash_get_supported(
    devinfo: *const doca_devinfo,
    algorithm: doca_sha_algorithm,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        Sha::job_get_supported(d, algo(algorithm)?.job_type())
    })
}

/// `doca_sha_cap_task_partial_hash_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_cap_task_partial_hash_get_supported(
    devinfo: *const doca_devinfo,
    algorithm: doca_sha_algorithm,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        Sha::job_get_supported(d, algo(algorithm)?.partial_job_type())
    })
}

/// `doca_sha_cap_get_max_list_buf_num_elem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_cap_get_max_list_buf_num_elem(
    devinfo: *const doca_devinfo,
    max_list_num_elem: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_list_num_elem, |d| {
        Sha::job_get_supported(d, HASH + 1).map(|_| MAX_LIST_ELEMENTS)
    })
}

/// `doca_sha_cap_get_max_src_buf_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_cap_get_max_src_buf_size(
    devinfo: *const doca_devinfo,
    max_buf_size: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_size, |d| {
        Sha::job_get_supported(d, HASH + 1).map(|_| MAX_SRC_BUFFER_SIZE)
    })
}

/// `doca_sha_cap_get_min_dst_buf_size`: the digest length.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_cap_get_min_dst_buf_size(
    devinfo: *const doca_devinfo,
    algorithm: doca_sha_algorithm,
    min_buf_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, min_buf_size, |d| {
        Sha::min_dst_buffer_size(d, algo(algorithm)?.job_type())
    })
}

/// `doca_sha_cap_get_partial_hash_block_size`: every non-final segment is a multiple
/// of it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_cap_get_partial_hash_block_size(
    devinfo: *const doca_devinfo,
    algorithm: doca_sha_algorithm,
    partial_block_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, partial_block_size, |d| {
        let a = algo(algorithm)?;
        Sha::job_get_supported(d, a.partial_job_type()).map(|_| a.block_len() as u32)
    })
}

// ---- tasks: from SHA's task table ----

doca_sha::sha_task_table!(crate::common::tasks::c3_tasks);

/// A partial hash task's own call, refused while it is submitted.
fn with_task(task: *mut doca_task, f: impl FnOnce(&doca_task) -> Result<()>) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        if t.is_submitted() {
            return Err(err(
                ErrorCode::BadState,
                "the task is submitted; change it once it has completed",
            ));
        }
        f(t)
    })
}

/// `doca_sha_task_partial_hash_reset`: forgets the segments hashed so far.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_reset(
    task: *mut doca_sha_task_partial_hash,
) -> doca_error_t {
    with_task(task, |t| {
        session(t)?.reset();
        t.params[0].set(0);
        t.state.set(0);
        Ok(())
    })
}

/// `doca_sha_task_partial_hash_set_is_final_buf`: the next submission is the last
/// segment.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_set_is_final_buf(
    task: *mut doca_sha_task_partial_hash,
) -> doca_error_t {
    with_task(task, |t| {
        t.params[0].set(FLAG_PARTIAL_FINAL);
        Ok(())
    })
}

fn flag(task: *const doca_task, f: impl FnOnce(&doca_task) -> bool) -> u8 {
    ffi_value(0, || {
        // SAFETY: NULL or a task the program holds.
        Ok(u8::from(f(unsafe { handle(task, "task") }?)))
    })
}

/// `doca_sha_task_partial_hash_get_is_final`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_get_is_final(
    task: *const doca_sha_task_partial_hash,
) -> u8 {
    flag(task, |t| t.params[0].get() & FLAG_PARTIAL_FINAL != 0)
}

/// `doca_sha_task_partial_hash_get_has_result`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_get_has_result(
    task: *const doca_sha_task_partial_hash,
) -> u8 {
    flag(task, |t| t.state.get() & HAS_RESULT != 0)
}
