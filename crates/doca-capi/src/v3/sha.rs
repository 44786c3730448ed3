//! `doca_sha.h` of the task generation: the SHA instance, its hash task and its partial
//! hash task (one task submitted once per segment, the last one marked final).

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::{TaskCb, doca_ctx3, doca_task};
use crate::dev::{doca_dev, doca_devinfo};
use crate::libs::{devinfo_query, devinfo_value};
use crate::mem::doca_buf;
use crate::{Result, doca_data, doca_error_t, err, ffi, ffi_value, handle, invalid, out_ptr, put};
use doca_core::{BufDesc, Data, ErrorCode, JobRecord};
use doca_sha::{
    JOB_SHA1, JOB_SHA1_PARTIAL, MAX_LIST_ELEMENTS, MAX_SRC_BUFFER_SIZE, PartialSession, Sha,
    ShaAlgo, ShaJob, ShaPartialJob,
};
use std::ffi::c_int;
use std::sync::Arc;

/// `struct doca_sha`.
pub type doca_sha3 = Lib3<Sha>;
/// `struct doca_sha_task_hash`.
pub type doca_sha_task_hash = doca_task;
/// `struct doca_sha_task_partial_hash`.
pub type doca_sha_task_partial_hash = doca_task;
/// `doca_sha_task_hash_completion_cb_t`.
pub type doca_sha_task_hash_completion_cb_t = TaskCb;
/// `doca_sha_task_partial_hash_completion_cb_t`.
pub type doca_sha_task_partial_hash_completion_cb_t = TaskCb;
/// `enum doca_sha_algorithm`.
pub type doca_sha_algorithm = c_int;

/// The pool keys of the two task types (their job types differ by algorithm).
const HASH: u32 = JOB_SHA1;
const PARTIAL: u32 = JOB_SHA1_PARTIAL;

/// Bits of a partial task's `params[1]`.
const FINAL: u64 = 1;
const HAS_RESULT: u64 = 2;
const STARTED: u64 = 4;

/// The largest `log_num_tasks`.
const MAX_LOG_TASKS: u8 = 16;

fn algo(a: doca_sha_algorithm) -> Result<ShaAlgo> {
    match a {
        0 => Ok(ShaAlgo::Sha1),
        1 => Ok(ShaAlgo::Sha256),
        2 => Ok(ShaAlgo::Sha512),
        _ => Err(invalid(format!(
            "{a} is not a doca_sha_algorithm (0: SHA1, 1: SHA256, 2: SHA512)"
        ))),
    }
}

fn algo_of(t: &doca_task) -> ShaAlgo {
    algo(t.params[0].get() as c_int).unwrap_or(ShaAlgo::Sha256)
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

fn bufs(t: &doca_task) -> Result<(*mut BufDesc, *mut BufDesc)> {
    let (src, dst) = (t.bufs[0].get(), t.bufs[1].get());
    if src.is_null() || dst.is_null() {
        return Err(invalid(
            "the SHA task's source or destination buffer is NULL",
        ));
    }
    Ok((src as *mut BufDesc, dst as *mut BufDesc))
}

unsafe fn hash_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    let (src, dst) = bufs(t)?;
    // SAFETY: live buffers while the task is in flight (the C contract).
    *out = unsafe { ShaJob::record_borrowed(algo_of(t).job_type(), src, dst, ud) };
    Ok(())
}

fn session(t: &doca_task) -> Result<PartialSession> {
    t.aux
        .borrow()
        .as_ref()
        .and_then(|a| a.downcast_ref::<PartialSession>())
        .cloned()
        .ok_or_else(|| err(ErrorCode::BadState, "the partial hash task has no session"))
}

unsafe fn partial_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    let (src, dst) = bufs(t)?;
    let flags = t.params[1].get();
    if flags & STARTED == 0 && flags & FINAL != 0 {
        return Err(invalid(
            "the first segment of a partial hash cannot be the final one: use a hash task",
        ));
    }
    let s = session(t)?;
    t.params[1].set((flags | STARTED) & !HAS_RESULT);
    // SAFETY: live buffers while the task is in flight (the C contract).
    *out = unsafe {
        ShaPartialJob::record_borrowed(
            algo_of(t).partial_job_type(),
            &s,
            src,
            dst,
            flags & FINAL != 0,
            ud,
        )
    };
    Ok(())
}

/// A partial segment completed: after the final one the destination holds the digest
/// and the task may start again.
unsafe fn partial_finish(t: &doca_task, _record: &JobRecord, failed: bool) {
    let flags = t.params[1].get();
    if failed {
        if let Ok(s) = session(t) {
            s.reset();
        }
        t.params[1].set(flags & !(STARTED | HAS_RESULT));
    } else if flags & FINAL != 0 {
        t.params[1].set((flags & !STARTED) | HAS_RESULT);
    }
}

fn set_conf(
    sha: *mut doca_sha3,
    key: u32,
    ok: TaskCb,
    err_cb: TaskCb,
    log_num_tasks: u8,
    record: super::pe::RecordFn,
    finish: Option<super::pe::FinishFn>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(sha, "sha") }?;
        if log_num_tasks > MAX_LOG_TASKS {
            return Err(invalid(format!(
                "log_num_tasks {log_num_tasks} is above {MAX_LOG_TASKS}"
            )));
        }
        h.ctx
            .set_conf(key, ok, err_cb, 1 << log_num_tasks, record, finish)
    })
}

/// `doca_sha_task_hash_set_conf`: the pool holds `2^log_num_tasks` tasks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_set_conf(
    sha: *mut doca_sha3,
    task_completion_cb: doca_sha_task_hash_completion_cb_t,
    task_error_cb: doca_sha_task_hash_completion_cb_t,
    log_num_tasks: u8,
) -> doca_error_t {
    set_conf(
        sha,
        HASH,
        task_completion_cb,
        task_error_cb,
        log_num_tasks,
        hash_record,
        None,
    )
}

/// `doca_sha_task_partial_hash_set_conf`: the pool holds `2^log_num_tasks` tasks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_set_conf(
    sha: *mut doca_sha3,
    task_completion_cb: doca_sha_task_partial_hash_completion_cb_t,
    task_error_cb: doca_sha_task_partial_hash_completion_cb_t,
    log_num_tasks: u8,
) -> doca_error_t {
    set_conf(
        sha,
        PARTIAL,
        task_completion_cb,
        task_error_cb,
        log_num_tasks,
        partial_record,
        Some(partial_finish),
    )
}

fn alloc(
    sha: *mut doca_sha3,
    key: u32,
    algorithm: doca_sha_algorithm,
    src: *const doca_buf,
    dst: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_task,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(sha, "sha") }?;
        let o = out_ptr(task, "task")?;
        algo(algorithm)?;
        let t = h.ctx.alloc_task(key, user_data, |t| {
            t.bufs[0].set(src);
            t.bufs[1].set(dst);
            t.params[0].set(algorithm as u64);
            if key == PARTIAL {
                *t.aux.borrow_mut() = Some(Arc::new(PartialSession::new()));
            }
            Ok(())
        })?;
        // SAFETY: output checked.
        unsafe { put(o, t) };
        Ok(())
    })
}

/// `doca_sha_task_hash_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_alloc_init(
    sha: *mut doca_sha3,
    algorithm: doca_sha_algorithm,
    src_buf: *const doca_buf,
    dst_buf: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_sha_task_hash,
) -> doca_error_t {
    alloc(sha, HASH, algorithm, src_buf, dst_buf, user_data, task)
}

/// `doca_sha_task_partial_hash_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_alloc_init(
    sha: *mut doca_sha3,
    algorithm: doca_sha_algorithm,
    src_buf: *const doca_buf,
    dst_buf: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_sha_task_partial_hash,
) -> doca_error_t {
    alloc(sha, PARTIAL, algorithm, src_buf, dst_buf, user_data, task)
}

/// A task setter that answers `doca_error_t`.
fn with_task(task: *mut doca_task, f: impl FnOnce(&doca_task) -> Result<()>) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        if t.status.get() == ErrorCode::InProgress as doca_error_t {
            return Err(err(
                ErrorCode::BadState,
                "the task is submitted; change it once it has completed",
            ));
        }
        f(t)
    })
}

fn not_started(t: &doca_task) -> Result<()> {
    if t.params[1].get() & STARTED != 0 {
        return Err(err(
            ErrorCode::BadState,
            "the partial hash is in progress; reset the task first",
        ));
    }
    Ok(())
}

fn set_src(task: *mut doca_task, src: *const doca_buf) -> doca_error_t {
    with_task(task, |t| {
        t.bufs[0].set(src);
        Ok(())
    })
}

fn set_dst(task: *mut doca_task, dst: *mut doca_buf, partial: bool) -> doca_error_t {
    with_task(task, |t| {
        if partial {
            not_started(t)?;
        }
        t.bufs[1].set(dst);
        Ok(())
    })
}

fn set_algorithm(
    task: *mut doca_task,
    algorithm: doca_sha_algorithm,
    partial: bool,
) -> doca_error_t {
    with_task(task, |t| {
        algo(algorithm)?;
        if partial {
            not_started(t)?;
        }
        t.params[0].set(algorithm as u64);
        Ok(())
    })
}

fn get_algorithm(task: *const doca_task) -> doca_sha_algorithm {
    ffi_value(0, || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.params[0].get() as doca_sha_algorithm)
    })
}

/// `doca_sha_task_hash_set_src`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_set_src(
    task: *mut doca_sha_task_hash,
    src_buf: *const doca_buf,
) -> doca_error_t {
    set_src(task, src_buf)
}

/// `doca_sha_task_hash_get_src`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_get_src(
    task: *const doca_sha_task_hash,
) -> *const doca_buf {
    super::get_buf(task, 0)
}

/// `doca_sha_task_hash_set_dst`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_set_dst(
    task: *mut doca_sha_task_hash,
    dst_buf: *mut doca_buf,
) -> doca_error_t {
    set_dst(task, dst_buf, false)
}

/// `doca_sha_task_hash_get_dst`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_get_dst(
    task: *const doca_sha_task_hash,
) -> *const doca_buf {
    super::get_buf(task, 1)
}

/// `doca_sha_task_hash_set_algorithm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_set_algorithm(
    task: *mut doca_sha_task_hash,
    algorithm: doca_sha_algorithm,
) -> doca_error_t {
    set_algorithm(task, algorithm, false)
}

/// `doca_sha_task_hash_get_algorithm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_get_algorithm(
    task: *const doca_sha_task_hash,
) -> doca_sha_algorithm {
    get_algorithm(task)
}

/// `doca_sha_task_hash_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_hash_as_task(
    task: *mut doca_sha_task_hash,
) -> *mut doca_task {
    task
}

/// `doca_sha_task_partial_hash_set_src`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_set_src(
    task: *mut doca_sha_task_partial_hash,
    src_buf: *const doca_buf,
) -> doca_error_t {
    set_src(task, src_buf)
}

/// `doca_sha_task_partial_hash_get_src`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_get_src(
    task: *const doca_sha_task_partial_hash,
) -> *const doca_buf {
    super::get_buf(task, 0)
}

/// `doca_sha_task_partial_hash_set_dst`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_set_dst(
    task: *mut doca_sha_task_partial_hash,
    dst_buf: *mut doca_buf,
) -> doca_error_t {
    set_dst(task, dst_buf, true)
}

/// `doca_sha_task_partial_hash_get_dst`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_get_dst(
    task: *const doca_sha_task_partial_hash,
) -> *const doca_buf {
    super::get_buf(task, 1)
}

/// `doca_sha_task_partial_hash_set_algorithm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_set_algorithm(
    task: *mut doca_sha_task_partial_hash,
    algorithm: doca_sha_algorithm,
) -> doca_error_t {
    set_algorithm(task, algorithm, true)
}

/// `doca_sha_task_partial_hash_get_algorithm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_get_algorithm(
    task: *const doca_sha_task_partial_hash,
) -> doca_sha_algorithm {
    get_algorithm(task)
}

/// `doca_sha_task_partial_hash_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_as_task(
    task: *mut doca_sha_task_partial_hash,
) -> *mut doca_task {
    task
}

/// `doca_sha_task_partial_hash_reset`: forgets the segments hashed so far.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_reset(
    task: *mut doca_sha_task_partial_hash,
) -> doca_error_t {
    with_task(task, |t| {
        session(t)?.reset();
        t.params[1].set(0);
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
        t.params[1].set(t.params[1].get() | FINAL);
        Ok(())
    })
}

fn flag(task: *const doca_task, bit: u64) -> u8 {
    ffi_value(0, || {
        // SAFETY: NULL or a task the program holds.
        Ok(u8::from(
            unsafe { handle(task, "task") }?.params[1].get() & bit != 0,
        ))
    })
}

/// `doca_sha_task_partial_hash_get_is_final`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_get_is_final(
    task: *const doca_sha_task_partial_hash,
) -> u8 {
    flag(task, FINAL)
}

/// `doca_sha_task_partial_hash_get_has_result`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_task_partial_hash_get_has_result(
    task: *const doca_sha_task_partial_hash,
) -> u8 {
    flag(task, HAS_RESULT)
}
