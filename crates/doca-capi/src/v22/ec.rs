//! `doca_erasure_coding.h` (2.2): the EC context, its jobs and matrices.

use crate::common::take_handle;
use crate::common::tasks::InputValue;
use crate::common::{
    Result, doca_ec_job_types, doca_ec_matrix_types, doca_error_t, ffi, handle, invalid, new_handle,
};
use crate::v22::dev::doca_devinfo;
use crate::v22::exec::doca_ctx;
use ::doca_ec::{Ec, Matrix, MatrixType};
use doca_core::JobRecord;
use doca_core::exec::{TaskInputs, TaskSpec};

use crate::v22::exec::doca_job;
use crate::v22::libs::*;
use crate::v22::mem::doca_buf;
use std::mem::{offset_of, size_of};

crate::common::handles::handle_kinds! {
    Boxed: doca_matrix;
}

/// `struct doca_ec`.
pub type doca_ec = LibHandle<Ec>;
/// `struct doca_matrix`.
pub type doca_matrix = Matrix;

/// `struct doca_ec_job` and the create/update/recover jobs (same layout).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_ec_job {
    /// Base.
    pub base: doca_job,
    /// The matrix.
    pub matrix: *mut crate::v22::ec::doca_matrix,
    /// Source blocks.
    pub src_buff: *const doca_buf,
    /// Destination.
    pub dst_buff: *mut doca_buf,
}

// The layouts of DOCA 2.2 (x86-64), mirrored by _Static_asserts in the C tests.
const _: () = {
    assert!(size_of::<doca_ec_job>() == 48);
    assert!(offset_of!(doca_ec_job, matrix) == 24);
    assert!(offset_of!(doca_ec_job, src_buff) == 32);
    assert!(offset_of!(doca_ec_job, dst_buff) == 40);
};

/// The translation of Erasure coding's 2.2 job structs into records, from its task table.
pub(crate) mod jobs {
    use super::*;
    ::doca_ec::ec_task_table!(crate::common::tasks::c22_jobs);
}

/// `doca_ec_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_create(ec: *mut *mut doca_ec) -> doca_error_t {
    let e = Ec::new();
    let c = e.as_ctx().clone();
    create(ec, e, &c, crate::v22::ec::jobs::fill)
}

/// `doca_ec_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_destroy(ec: *mut doca_ec) -> doca_error_t {
    destroy(ec)
}

/// `doca_ec_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_as_ctx(ctx: *mut doca_ec) -> *mut doca_ctx {
    as_ctx(ctx)
}

/// `doca_ec_job_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_job_get_supported(
    devinfo: *mut doca_devinfo,
    job_type_v: doca_ec_job_types,
) -> doca_error_t {
    devinfo_query(devinfo, |d| Ec::job_get_supported(d, job_type(job_type_v)?))
}

/// `doca_ec_get_max_buffer_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_get_max_buffer_size(
    devinfo: *const doca_devinfo,
    job_type_v: doca_ec_job_types,
    max_buffer_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buffer_size, |d| {
        Ec::max_buffer_size(d, job_type(job_type_v)?)
    })
}

/// `doca_ec_get_max_list_buf_num_elem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_get_max_list_buf_num_elem(
    devinfo: *const doca_devinfo,
    max_list_num_elem: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_list_num_elem, Ec::max_list_buf_num_elem)
}

fn new_matrix(out: *mut *mut doca_matrix, f: impl FnOnce() -> Result<Matrix>) -> doca_error_t {
    ffi(|| new_handle(out, "matrix", f))
}

/// `doca_ec_matrix_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_matrix_create(
    ctx: *mut doca_ec,
    type_: doca_ec_matrix_types,
    data_block_count: usize,
    rdnc_block_count: usize,
    matrix: *mut *mut doca_matrix,
) -> doca_error_t {
    new_matrix(matrix, || {
        // SAFETY: NULL or a live handle.
        let e = unsafe { handle(ctx, "ctx") }?;
        let kind = u32::try_from(type_)
            .map_err(|_| {
                invalid(format!(
                    "{type_} is not a matrix type (1: Cauchy, 2: Vandermonde)"
                ))
            })
            .and_then(MatrixType::try_from)?;
        e.lib
            .matrix_create(kind, data_block_count, rdnc_block_count)
    })
}

/// `doca_ec_matrix_from_raw`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_matrix_from_raw(
    ctx: *mut doca_ec,
    data: *mut u8,
    data_block_count: usize,
    rdnc_block_count: usize,
    matrix: *mut *mut doca_matrix,
) -> doca_error_t {
    new_matrix(matrix, || {
        // SAFETY: NULL or a live handle; data holds data_block_count * rdnc_block_count bytes.
        let (e, raw) = unsafe {
            (
                handle(ctx, "ctx")?,
                slice(
                    data,
                    data_block_count.saturating_mul(rdnc_block_count),
                    "data",
                )?,
            )
        };
        e.lib
            .matrix_from_raw(raw, data_block_count, rdnc_block_count)
    })
}

/// A matrix derived from a coding matrix and a list of block indices (update or recover).
///
/// # Safety
/// Handles are NULL or live; `indices` holds `n` entries.
unsafe fn derived_matrix(
    coding_matrix: *const doca_matrix,
    ctx: *mut doca_ec,
    indices: *const u32,
    n: usize,
    what: &str,
    matrix: *mut *mut doca_matrix,
    make: impl FnOnce(&Ec, &Matrix, &[u32]) -> Result<Matrix>,
) -> doca_error_t {
    new_matrix(matrix, || {
        // SAFETY: the caller's contract.
        let (c, e, idx) = unsafe {
            (
                handle(coding_matrix, "coding_matrix")?,
                handle(ctx, "ctx")?,
                slice(indices, n, what)?,
            )
        };
        make(&e.lib, c, idx)
    })
}

/// `doca_ec_update_matrix_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_update_matrix_create(
    coding_matrix: *const doca_matrix,
    ctx: *mut doca_ec,
    update_indices: *mut u32,
    n_updates: usize,
    matrix: *mut *mut doca_matrix,
) -> doca_error_t {
    // SAFETY: the C contract: live handles, n_updates indices.
    unsafe {
        derived_matrix(
            coding_matrix,
            ctx,
            update_indices,
            n_updates,
            "update_indices",
            matrix,
            |e, c, i| e.update_matrix_create(c, i),
        )
    }
}

/// `doca_ec_recover_matrix_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_recover_matrix_create(
    coding_matrix: *const doca_matrix,
    ctx: *mut doca_ec,
    missing_indices: *mut u32,
    n_missing: usize,
    matrix: *mut *mut doca_matrix,
) -> doca_error_t {
    // SAFETY: the C contract: live handles, n_missing indices.
    unsafe {
        derived_matrix(
            coding_matrix,
            ctx,
            missing_indices,
            n_missing,
            "missing_indices",
            matrix,
            |e, c, i| e.recover_matrix_create(c, i),
        )
    }
}

/// `doca_ec_matrix_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_matrix_destroy(matrix: *mut doca_matrix) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live boxed matrix, destroyed once; jobs in flight hold their
        // own reference to what they use.
        let m = unsafe { take_handle(matrix, "matrix") }?;
        m.destroy()
    })
}

unsafe fn matrix<'a>(p: *const ::doca_ec::Matrix, name: &str) -> Result<&'a ::doca_ec::Matrix> {
    // SAFETY: the caller's contract.
    unsafe { p.as_ref() }.ok_or_else(|| invalid(format!("the {name} is NULL")))
}

/// An EC matrix (the 3.x `doca_ec_matrix`, the 2.2 `doca_matrix`): its handle in the
/// parameter slot, the matrix kept alive by the record.
impl InputValue for *const ::doca_ec::Matrix {
    const NONE: Self = std::ptr::null();
    unsafe fn store(
        self,
        inputs: &TaskInputs,
        _: &TaskSpec,
        slot: usize,
        name: &str,
    ) -> Result<()> {
        // SAFETY: the caller's contract.
        let m = unsafe { matrix(self, name) }?;
        inputs.params[slot].set(self as usize as u64);
        *inputs.aux.borrow_mut() = Some(m.as_aux());
        Ok(())
    }
    fn load(inputs: &TaskInputs, slot: usize) -> Self {
        inputs.params[slot].get() as usize as *const ::doca_ec::Matrix
    }
    unsafe fn put(self, out: &mut JobRecord, _: &TaskSpec, slot: usize, name: &str) -> Result<()> {
        // SAFETY: the caller's contract.
        let m = unsafe { matrix(self, name) }?;
        out.params[slot] = self as usize as u64;
        out.aux = Some(m.as_aux());
        Ok(())
    }
}

impl InputValue for *mut ::doca_ec::Matrix {
    const NONE: Self = std::ptr::null_mut();
    unsafe fn store(
        self,
        inputs: &TaskInputs,
        spec: &TaskSpec,
        slot: usize,
        name: &str,
    ) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { (self as *const ::doca_ec::Matrix).store(inputs, spec, slot, name) }
    }
    fn load(inputs: &TaskInputs, slot: usize) -> Self {
        <*const ::doca_ec::Matrix>::load(inputs, slot) as *mut ::doca_ec::Matrix
    }
    unsafe fn put(
        self,
        out: &mut JobRecord,
        spec: &TaskSpec,
        slot: usize,
        name: &str,
    ) -> Result<()> {
        // SAFETY: forwarded.
        unsafe { (self as *const ::doca_ec::Matrix).put(out, spec, slot, name) }
    }
}
