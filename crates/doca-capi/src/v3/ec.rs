//! `doca_erasure_coding.h` of the task generation: the EC instance, its matrices, and
//! its four tasks (galois_mul, create, update, recover).

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::{TaskCb, doca_ctx3, doca_task};
use crate::dev::{doca_dev, doca_devinfo};
use crate::libs::{devinfo_query, devinfo_value, slice};
use crate::mem::doca_buf;
use crate::{
    Result, doca_data, doca_error_t, ffi, ffi_value, handle, invalid, new_handle, out_ptr, put,
};
use doca_core::{BufDesc, Data, JobRecord};
use doca_ec::{
    Ec, JOB_CREATE, JOB_GALOIS_MUL, JOB_RECOVER, JOB_UPDATE, MAX_BLOCK_SIZE, Matrix, MatrixType,
};
use std::ffi::c_int;
use std::sync::Arc;

/// `struct doca_ec`.
pub type doca_ec3 = Lib3<Ec>;
/// `struct doca_ec_matrix`: the job generation's matrix.
pub type doca_ec_matrix = Matrix;
/// `enum doca_ec_matrix_type`.
pub type doca_ec_matrix_type = c_int;

/// `doca_ec_create`.
#[unsafe(export_name = "doca3__ec_create")]
pub unsafe extern "C" fn doca_ec_create(
    dev: *mut doca_dev,
    ec: *mut *mut doca_ec3,
) -> doca_error_t {
    let e = Ec::new();
    let ctx = e.as_ctx().clone();
    // SAFETY: NULL or a live device.
    unsafe { lib_create(dev, ec, e, ctx) }
}

/// `doca_ec_destroy`: only while idle.
#[unsafe(export_name = "doca3__ec_destroy")]
pub unsafe extern "C" fn doca_ec_destroy(ec: *mut doca_ec3) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { lib_destroy(ec) }
}

/// `doca_ec_as_ctx`.
#[unsafe(export_name = "doca3__ec_as_ctx")]
pub unsafe extern "C" fn doca_ec_as_ctx(ec: *mut doca_ec3) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(ec) }
}

/// `doca_ec_cap_get_max_block_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_cap_get_max_block_size(
    devinfo: *const doca_devinfo,
    max_block_size: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, max_block_size, |d| {
        Ec::job_get_supported(d, JOB_CREATE).map(|_| MAX_BLOCK_SIZE as u64)
    })
}

/// `doca_ec_cap_get_max_buf_list_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_cap_get_max_buf_list_len(
    devinfo: *const doca_devinfo,
    max_buf_list_len: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_list_len, Ec::max_list_buf_num_elem)
}

fn ec_of<'a>(ec: *mut doca_ec3) -> Result<&'a Ec> {
    // SAFETY: NULL or a live handle.
    Ok(&unsafe { handle(ec, "ec") }?.lib)
}

/// `doca_ec_matrix_create`: a Cauchy or Vandermonde coding matrix.
#[unsafe(export_name = "doca3__ec_matrix_create")]
pub unsafe extern "C" fn doca_ec_matrix_create(
    ec: *mut doca_ec3,
    type_: doca_ec_matrix_type,
    data_block_count: usize,
    rdnc_block_count: usize,
    matrix: *mut *mut doca_ec_matrix,
) -> doca_error_t {
    ffi(|| {
        new_handle(matrix, "matrix", || {
            let e = ec_of(ec)?;
            let kind = u32::try_from(type_)
                .map_err(|_| {
                    invalid(format!(
                        "{type_} is not a doca_ec_matrix_type (1: Cauchy, 2: Vandermonde)"
                    ))
                })
                .and_then(MatrixType::try_from)?;
            e.matrix_create(kind, data_block_count, rdnc_block_count)
        })
    })
}

/// `doca_ec_matrix_create_from_raw`: `data` holds `data_block_count *
/// rdnc_block_count` coefficients.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_matrix_create_from_raw(
    ec: *mut doca_ec3,
    data: *mut u8,
    data_block_count: usize,
    rdnc_block_count: usize,
    matrix: *mut *mut doca_ec_matrix,
) -> doca_error_t {
    ffi(|| {
        new_handle(matrix, "matrix", || {
            let e = ec_of(ec)?;
            let n = data_block_count
                .checked_mul(rdnc_block_count)
                .ok_or_else(|| invalid("matrix dimensions overflow"))?;
            // SAFETY: the C contract: `data` holds n coefficients.
            let raw = unsafe { slice(data, n, "data") }?;
            e.matrix_from_raw(raw, data_block_count, rdnc_block_count)
        })
    })
}

/// A matrix derived from a coding matrix and ascending indices.
fn derived(
    ec: *mut doca_ec3,
    coding: *const doca_ec_matrix,
    indices: *const u32,
    n: usize,
    what: &str,
    out: *mut *mut doca_ec_matrix,
    make: impl FnOnce(&Ec, &Matrix, &[u32]) -> Result<Matrix>,
) -> doca_error_t {
    ffi(|| {
        new_handle(out, "matrix", || {
            let e = ec_of(ec)?;
            // SAFETY: NULL or live handles; `indices` holds n entries (the C contract).
            let (c, idx) = unsafe { (handle(coding, "coding_matrix")?, slice(indices, n, what)?) };
            make(e, c, idx)
        })
    })
}

/// `doca_ec_matrix_create_update`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_matrix_create_update(
    ec: *mut doca_ec3,
    coding_matrix: *const doca_ec_matrix,
    update_indices: *mut u32,
    n_updates: usize,
    matrix: *mut *mut doca_ec_matrix,
) -> doca_error_t {
    derived(
        ec,
        coding_matrix,
        update_indices,
        n_updates,
        "update_indices",
        matrix,
        |e, c, i| e.update_matrix_create(c, i),
    )
}

/// `doca_ec_matrix_create_recover`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_matrix_create_recover(
    ec: *mut doca_ec3,
    coding_matrix: *const doca_ec_matrix,
    missing_indices: *mut u32,
    n_missing: usize,
    matrix: *mut *mut doca_ec_matrix,
) -> doca_error_t {
    derived(
        ec,
        coding_matrix,
        missing_indices,
        n_missing,
        "missing_indices",
        matrix,
        |e, c, i| e.recover_matrix_create(c, i),
    )
}

/// The record of an EC task: its matrix (kept alive by the record) and two buffers.
fn record(job: u32, t: &doca_task, ud: Data) -> Result<JobRecord> {
    let (src, dst) = (t.bufs[0].get(), t.bufs[1].get());
    if src.is_null() || dst.is_null() {
        return Err(invalid(
            "the EC task's source or destination buffer is NULL",
        ));
    }
    let aux = t.aux.borrow();
    let m = aux
        .as_ref()
        .and_then(|a| a.downcast_ref::<Matrix>())
        .ok_or_else(|| invalid("the EC task has no matrix"))?;
    // SAFETY: live buffers while the task is in flight (the C contract).
    Ok(unsafe { doca_ec::record_borrowed(job, m, src as *mut BufDesc, dst as *mut BufDesc, ud) })
}

fn set_conf(
    ec: *mut doca_ec3,
    job: u32,
    ok: TaskCb,
    err_cb: TaskCb,
    n: u32,
    rec: super::pe::RecordFn,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(ec, "ec") }?;
        super::check_num_tasks(n)?;
        h.ctx.set_conf(job, ok, err_cb, n, rec, None)
    })
}

fn set_matrix(t: &doca_task, m: *const doca_ec_matrix) -> Result<()> {
    // SAFETY: NULL or a live matrix handle.
    let mm = unsafe { handle(m, "matrix") }?;
    t.params[0].set(m as usize as u64);
    *t.aux.borrow_mut() = Some(Arc::new(mm.clone()));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn allocate(
    ec: *mut doca_ec3,
    job: u32,
    matrix: *const doca_ec_matrix,
    src: *const doca_buf,
    dst: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_task,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(ec, "ec") }?;
        let o = out_ptr(task, "task")?;
        let t = h.ctx.alloc_task(job, user_data, |t| {
            set_matrix(t, matrix)?;
            t.bufs[0].set(src);
            t.bufs[1].set(dst);
            Ok(())
        })?;
        // SAFETY: output checked.
        unsafe { put(o, t) };
        Ok(())
    })
}

fn task_matrix(task: *const doca_task) -> *const doca_ec_matrix {
    ffi_value(std::ptr::null(), || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.params[0].get() as usize as *const doca_ec_matrix)
    })
}

fn task_set_matrix(task: *mut doca_task, m: *const doca_ec_matrix) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        set_matrix(unsafe { handle(task, "task") }?, m)
    })
}

// ---- galois_mul ----

/// `struct doca_ec_task_galois_mul`.
pub type doca_ec_task_galois_mul = doca_task;
/// `doca_ec_task_galois_mul_completion_cb_t`.
pub type doca_ec_task_galois_mul_completion_cb_t = TaskCb;

unsafe fn galois_mul_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record(JOB_GALOIS_MUL, t, ud)?;
    Ok(())
}

/// `doca_ec_cap_task_galois_mul_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_cap_task_galois_mul_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| Ec::job_get_supported(d, JOB_GALOIS_MUL))
}

/// `doca_ec_task_galois_mul_set_conf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_set_conf(
    ec: *mut doca_ec3,
    successful_task_completion_cb: doca_ec_task_galois_mul_completion_cb_t,
    error_task_completion_cb: doca_ec_task_galois_mul_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        ec,
        JOB_GALOIS_MUL,
        successful_task_completion_cb,
        error_task_completion_cb,
        num_tasks,
        galois_mul_record,
    )
}

/// `doca_ec_task_galois_mul_allocate_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_allocate_init(
    ec: *mut doca_ec3,
    coding_matrix: *const doca_ec_matrix,
    src_buf: *const doca_buf,
    dst_buf: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_ec_task_galois_mul,
) -> doca_error_t {
    allocate(
        ec,
        JOB_GALOIS_MUL,
        coding_matrix,
        src_buf,
        dst_buf,
        user_data,
        task,
    )
}

/// `doca_ec_task_galois_mul_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_as_task(
    task: *mut doca_ec_task_galois_mul,
) -> *mut doca_task {
    task
}

/// `doca_ec_task_galois_mul_set_coding_matrix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_set_coding_matrix(
    task: *mut doca_ec_task_galois_mul,
    coding_matrix: *const doca_ec_matrix,
) {
    task_set_matrix(task, coding_matrix)
}

/// `doca_ec_task_galois_mul_get_coding_matrix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_get_coding_matrix(
    task: *const doca_ec_task_galois_mul,
) -> *const doca_ec_matrix {
    task_matrix(task)
}

/// `doca_ec_task_galois_mul_set_src_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_set_src_buf(
    task: *mut doca_ec_task_galois_mul,
    src_buf: *const doca_buf,
) {
    super::set_buf(task, 0, src_buf)
}

/// `doca_ec_task_galois_mul_get_src_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_get_src_buf(
    task: *const doca_ec_task_galois_mul,
) -> *const doca_buf {
    super::get_buf(task, 0)
}

/// `doca_ec_task_galois_mul_set_dst_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_set_dst_buf(
    task: *mut doca_ec_task_galois_mul,
    dst_buf: *mut doca_buf,
) {
    super::set_buf(task, 1, dst_buf)
}

/// `doca_ec_task_galois_mul_get_dst_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_galois_mul_get_dst_buf(
    task: *const doca_ec_task_galois_mul,
) -> *mut doca_buf {
    super::get_buf(task, 1) as *mut doca_buf
}

// ---- create ----

/// `struct doca_ec_task_create`.
pub type doca_ec_task_create = doca_task;
/// `doca_ec_task_create_completion_cb_t`.
pub type doca_ec_task_create_completion_cb_t = TaskCb;

unsafe fn create_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record(JOB_CREATE, t, ud)?;
    Ok(())
}

/// `doca_ec_cap_task_create_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_cap_task_create_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| Ec::job_get_supported(d, JOB_CREATE))
}

/// `doca_ec_task_create_set_conf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_set_conf(
    ec: *mut doca_ec3,
    successful_task_completion_cb: doca_ec_task_create_completion_cb_t,
    error_task_completion_cb: doca_ec_task_create_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        ec,
        JOB_CREATE,
        successful_task_completion_cb,
        error_task_completion_cb,
        num_tasks,
        create_record,
    )
}

/// `doca_ec_task_create_allocate_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_allocate_init(
    ec: *mut doca_ec3,
    coding_matrix: *const doca_ec_matrix,
    original_data_blocks: *const doca_buf,
    rdnc_blocks: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_ec_task_create,
) -> doca_error_t {
    allocate(
        ec,
        JOB_CREATE,
        coding_matrix,
        original_data_blocks,
        rdnc_blocks,
        user_data,
        task,
    )
}

/// `doca_ec_task_create_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_as_task(
    task: *mut doca_ec_task_create,
) -> *mut doca_task {
    task
}

/// `doca_ec_task_create_set_coding_matrix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_set_coding_matrix(
    task: *mut doca_ec_task_create,
    coding_matrix: *const doca_ec_matrix,
) {
    task_set_matrix(task, coding_matrix)
}

/// `doca_ec_task_create_get_coding_matrix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_get_coding_matrix(
    task: *const doca_ec_task_create,
) -> *const doca_ec_matrix {
    task_matrix(task)
}

/// `doca_ec_task_create_set_original_data_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_set_original_data_blocks(
    task: *mut doca_ec_task_create,
    original_data_blocks: *const doca_buf,
) {
    super::set_buf(task, 0, original_data_blocks)
}

/// `doca_ec_task_create_get_original_data_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_get_original_data_blocks(
    task: *const doca_ec_task_create,
) -> *const doca_buf {
    super::get_buf(task, 0)
}

/// `doca_ec_task_create_set_rdnc_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_set_rdnc_blocks(
    task: *mut doca_ec_task_create,
    rdnc_blocks: *mut doca_buf,
) {
    super::set_buf(task, 1, rdnc_blocks)
}

/// `doca_ec_task_create_get_rdnc_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_create_get_rdnc_blocks(
    task: *const doca_ec_task_create,
) -> *mut doca_buf {
    super::get_buf(task, 1) as *mut doca_buf
}

// ---- update ----

/// `struct doca_ec_task_update`.
pub type doca_ec_task_update = doca_task;
/// `doca_ec_task_update_completion_cb_t`.
pub type doca_ec_task_update_completion_cb_t = TaskCb;

unsafe fn update_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record(JOB_UPDATE, t, ud)?;
    Ok(())
}

/// `doca_ec_cap_task_update_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_cap_task_update_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| Ec::job_get_supported(d, JOB_UPDATE))
}

/// `doca_ec_task_update_set_conf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_set_conf(
    ec: *mut doca_ec3,
    successful_task_completion_cb: doca_ec_task_update_completion_cb_t,
    error_task_completion_cb: doca_ec_task_update_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        ec,
        JOB_UPDATE,
        successful_task_completion_cb,
        error_task_completion_cb,
        num_tasks,
        update_record,
    )
}

/// `doca_ec_task_update_allocate_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_allocate_init(
    ec: *mut doca_ec3,
    update_matrix: *const doca_ec_matrix,
    original_updated_and_rdnc_blocks: *const doca_buf,
    updated_rdnc_blocks: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_ec_task_update,
) -> doca_error_t {
    allocate(
        ec,
        JOB_UPDATE,
        update_matrix,
        original_updated_and_rdnc_blocks,
        updated_rdnc_blocks,
        user_data,
        task,
    )
}

/// `doca_ec_task_update_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_as_task(
    task: *mut doca_ec_task_update,
) -> *mut doca_task {
    task
}

/// `doca_ec_task_update_set_update_matrix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_set_update_matrix(
    task: *mut doca_ec_task_update,
    update_matrix: *const doca_ec_matrix,
) {
    task_set_matrix(task, update_matrix)
}

/// `doca_ec_task_update_get_update_matrix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_get_update_matrix(
    task: *const doca_ec_task_update,
) -> *const doca_ec_matrix {
    task_matrix(task)
}

/// `doca_ec_task_update_set_original_updated_and_rdnc_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_set_original_updated_and_rdnc_blocks(
    task: *mut doca_ec_task_update,
    original_updated_and_rdnc_blocks: *const doca_buf,
) {
    super::set_buf(task, 0, original_updated_and_rdnc_blocks)
}

/// `doca_ec_task_update_get_original_updated_and_rdnc_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_get_original_updated_and_rdnc_blocks(
    task: *const doca_ec_task_update,
) -> *const doca_buf {
    super::get_buf(task, 0)
}

/// `doca_ec_task_update_set_updated_rdnc_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_set_updated_rdnc_blocks(
    task: *mut doca_ec_task_update,
    updated_rdnc_blocks: *mut doca_buf,
) {
    super::set_buf(task, 1, updated_rdnc_blocks)
}

/// `doca_ec_task_update_get_updated_rdnc_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_update_get_updated_rdnc_blocks(
    task: *const doca_ec_task_update,
) -> *mut doca_buf {
    super::get_buf(task, 1) as *mut doca_buf
}

// ---- recover ----

/// `struct doca_ec_task_recover`.
pub type doca_ec_task_recover = doca_task;
/// `doca_ec_task_recover_completion_cb_t`.
pub type doca_ec_task_recover_completion_cb_t = TaskCb;

unsafe fn recover_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record(JOB_RECOVER, t, ud)?;
    Ok(())
}

/// `doca_ec_cap_task_recover_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_cap_task_recover_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| Ec::job_get_supported(d, JOB_RECOVER))
}

/// `doca_ec_task_recover_set_conf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_set_conf(
    ec: *mut doca_ec3,
    successful_task_completion_cb: doca_ec_task_recover_completion_cb_t,
    error_task_completion_cb: doca_ec_task_recover_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        ec,
        JOB_RECOVER,
        successful_task_completion_cb,
        error_task_completion_cb,
        num_tasks,
        recover_record,
    )
}

/// `doca_ec_task_recover_allocate_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_allocate_init(
    ec: *mut doca_ec3,
    recover_matrix: *const doca_ec_matrix,
    available_blocks: *const doca_buf,
    recovered_data_blocks: *mut doca_buf,
    user_data: doca_data,
    task: *mut *mut doca_ec_task_recover,
) -> doca_error_t {
    allocate(
        ec,
        JOB_RECOVER,
        recover_matrix,
        available_blocks,
        recovered_data_blocks,
        user_data,
        task,
    )
}

/// `doca_ec_task_recover_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_as_task(
    task: *mut doca_ec_task_recover,
) -> *mut doca_task {
    task
}

/// `doca_ec_task_recover_set_recover_matrix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_set_recover_matrix(
    task: *mut doca_ec_task_recover,
    recover_matrix: *const doca_ec_matrix,
) {
    task_set_matrix(task, recover_matrix)
}

/// `doca_ec_task_recover_get_recover_matrix`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_get_recover_matrix(
    task: *const doca_ec_task_recover,
) -> *const doca_ec_matrix {
    task_matrix(task)
}

/// `doca_ec_task_recover_set_available_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_set_available_blocks(
    task: *mut doca_ec_task_recover,
    available_blocks: *const doca_buf,
) {
    super::set_buf(task, 0, available_blocks)
}

/// `doca_ec_task_recover_get_available_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_get_available_blocks(
    task: *const doca_ec_task_recover,
) -> *const doca_buf {
    super::get_buf(task, 0)
}

/// `doca_ec_task_recover_set_recovered_data_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_set_recovered_data_blocks(
    task: *mut doca_ec_task_recover,
    recovered_data_blocks: *mut doca_buf,
) {
    super::set_buf(task, 1, recovered_data_blocks)
}

/// `doca_ec_task_recover_get_recovered_data_blocks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_task_recover_get_recovered_data_blocks(
    task: *const doca_ec_task_recover,
) -> *mut doca_buf {
    super::get_buf(task, 1) as *mut doca_buf
}
