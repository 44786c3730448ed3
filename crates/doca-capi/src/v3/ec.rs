//! `doca_erasure_coding.h` of the task generation: the EC instance, its matrices, and
//! its four tasks (galois_mul, create, update, recover).

use super::lib::{Lib3, lib_as_ctx, lib_create, lib_destroy};
use super::pe::doca_ctx3;
use crate::common::{Result, doca_error_t, ffi, handle, invalid, new_handle};
use crate::v22::dev::{doca_dev, doca_devinfo};
use crate::v22::libs::{devinfo_value, slice};
use crate::v22::mem::doca_buf;
use doca_ec::{Ec, JOB_CREATE, MAX_BLOCK_SIZE, Matrix, MatrixType};
use std::ffi::c_int;

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

// ---- tasks: from erasure coding's task table ----

doca_ec::ec_task_table!(crate::common::tasks::c3_tasks);
