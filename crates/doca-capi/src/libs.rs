//! `doca_dma.h`, `doca_sha.h`, `doca_erasure_coding.h`: the library contexts.

use crate::destroy_in_place;
use crate::dev::doca_devinfo;
use crate::exec::{JobFill, doca_ctx, doca_workq};
use crate::take_handle;
use crate::{
    Result, doca_dma_job_types, doca_ec_job_types, doca_ec_matrix_types, doca_error_t,
    doca_sha_job_type, ffi, ffi_value, free_handle, handle, handle_mut, invalid, new_handle,
    out_ptr, put,
};
use ::doca_compress::Compress;
use ::doca_dma::Dma;
use ::doca_ec::{Ec, Matrix, MatrixType};
use ::doca_sha::{PartialSession, Sha};
use doca_core::Ctx;

/// A library handle: the library object and its context.
#[derive(Debug)]
pub struct LibHandle<T> {
    pub(crate) lib: T,
    pub(crate) ctx: doca_ctx,
}

/// `struct doca_dma`.
pub type doca_dma = LibHandle<Dma>;
/// `struct doca_sha`.
pub type doca_sha = LibHandle<Sha>;
/// `struct doca_ec`.
pub type doca_ec = LibHandle<Ec>;
/// `struct doca_compress`.
pub type doca_compress = LibHandle<Compress>;
/// `struct doca_matrix`.
pub type doca_matrix = Matrix;

/// `struct doca_sha_partial_session`.
#[derive(Debug)]
pub struct doca_sha_partial_session {
    pub(crate) session: PartialSession,
}

fn job_type(t: i32) -> Result<u32> {
    u32::try_from(t).map_err(|_| invalid(format!("{t} is not a job type")))
}

/// Creates a library handle.
pub(crate) fn create<T>(
    out: *mut *mut LibHandle<T>,
    lib: T,
    ctx: &Ctx,
    jobs: JobFill,
) -> doca_error_t {
    ffi(|| {
        new_handle(out, "output", || {
            Ok(LibHandle {
                ctx: doca_ctx {
                    ctx: ctx.clone(),
                    jobs,
                },
                lib,
            })
        })
    })
}

/// Destroys a library handle: refused (the handle stays valid) while its context is
/// started or has a device or work queues.
pub(crate) fn destroy<T>(p: *mut LibHandle<T>) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(p, "context") }?;
        h.ctx.ctx.clone().destroy().map_err(|(_, e)| e)?;
        // SAFETY: a live boxed handle, destroyed once.
        unsafe { free_handle(p, "context") }
    })
}

/// The `struct doca_ctx` of a library handle.
pub(crate) fn as_ctx<T>(p: *mut LibHandle<T>) -> *mut doca_ctx {
    ffi_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle_mut(p, "context") }?;
        Ok(&mut h.ctx as *mut doca_ctx)
    })
}

/// Runs a devinfo query.
pub(crate) fn devinfo_query(
    devinfo: *const doca_devinfo,
    f: impl FnOnce(&doca_core::DevInfo) -> Result<()>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let d = unsafe { handle(devinfo, "devinfo") }?;
        f(&d.info)
    })
}

/// Answers a devinfo query with a value.
pub(crate) fn devinfo_value<T>(
    devinfo: *const doca_devinfo,
    out: *mut T,
    f: impl FnOnce(&doca_core::DevInfo) -> Result<T>,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        let o = out_ptr(out, "output")?;
        let v = f(d)?;
        // SAFETY: output checked.
        unsafe { put(o, v) };
        Ok(())
    })
}

// ---- DMA ----

/// `doca_dma_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_create(dma: *mut *mut doca_dma) -> doca_error_t {
    let d = Dma::new();
    let c = d.as_ctx().clone();
    create(dma, d, &c, crate::exec::jobs::dma::fill)
}

/// `doca_dma_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_destroy(dma: *mut doca_dma) -> doca_error_t {
    destroy(dma)
}

/// `doca_dma_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_as_ctx(dma: *mut doca_dma) -> *mut doca_ctx {
    as_ctx(dma)
}

/// `doca_dma_job_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_job_get_supported(
    devinfo: *mut doca_devinfo,
    job_type_v: doca_dma_job_types,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        Dma::job_get_supported(d, job_type(job_type_v)?)
    })
}

/// `doca_dma_get_max_list_buf_num_elem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_get_max_list_buf_num_elem(
    devinfo: *const doca_devinfo,
    max_list_num_elem: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_list_num_elem, Dma::max_list_buf_num_elem)
}

/// `doca_dma_get_max_buf_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_get_max_buf_size(
    devinfo: *const doca_devinfo,
    buf_size: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, buf_size, Dma::max_buf_size)
}

// ---- Compress ----

/// `enum doca_compress_job_types`.
pub type doca_compress_job_types = std::ffi::c_int;

/// `doca_compress_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_create(ctx: *mut *mut doca_compress) -> doca_error_t {
    let c = Compress::new();
    let x = c.as_ctx().clone();
    create(ctx, c, &x, crate::exec::jobs::compress::fill)
}

/// `doca_compress_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_destroy(ctx: *mut doca_compress) -> doca_error_t {
    destroy(ctx)
}

/// `doca_compress_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_as_ctx(ctx: *mut doca_compress) -> *mut doca_ctx {
    as_ctx(ctx)
}

/// `doca_compress_job_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_job_get_supported(
    devinfo: *mut doca_devinfo,
    job_type_v: doca_compress_job_types,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        Compress::job_get_supported(d, deflate_job(job_type_v)?)
    })
}

/// A 2.2 compress job type: deflate one way or the other.
fn deflate_job(t: doca_compress_job_types) -> Result<u32> {
    let t = job_type(t)?;
    if t == ::doca_compress::JOB_COMPRESS_DEFLATE || t == ::doca_compress::JOB_DECOMPRESS_DEFLATE {
        Ok(t)
    } else {
        Err(doca_core::Error::with_context(
            doca_core::ErrorCode::NotSupported,
            format!(
                "job type {t} is not a DOCA 2.2 compress job (DOCA_COMPRESS_DEFLATE_JOB or DOCA_DECOMPRESS_DEFLATE_JOB)"
            ),
        ))
    }
}

/// `doca_compress_get_max_buf_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_get_max_buf_size(
    devinfo: *const doca_devinfo,
    job_type_v: doca_compress_job_types,
    max_buf_size: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_size, |d| {
        Compress::max_buf_size(d, deflate_job(job_type_v)?)
    })
}

/// `doca_compress_get_max_list_buf_num_elem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_get_max_list_buf_num_elem(
    devinfo: *const doca_devinfo,
    max_list_num_elem: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_list_num_elem, |d| {
        Compress::max_buf_list_len(d, ::doca_compress::JOB_COMPRESS_DEFLATE)
    })
}

// ---- SHA ----

/// `doca_sha_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_create(ctx: *mut *mut doca_sha) -> doca_error_t {
    let s = Sha::new();
    let c = s.as_ctx().clone();
    create(ctx, s, &c, crate::exec::jobs::sha::fill)
}

/// `doca_sha_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_destroy(ctx: *mut doca_sha) -> doca_error_t {
    destroy(ctx)
}

/// `doca_sha_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_as_ctx(ctx: *mut doca_sha) -> *mut doca_ctx {
    as_ctx(ctx)
}

/// `doca_sha_job_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_job_get_supported(
    devinfo: *const doca_devinfo,
    job_type_v: doca_sha_job_type,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        Sha::job_get_supported(d, job_type(job_type_v)?)
    })
}

/// `doca_sha_get_max_list_buf_num_elem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_get_max_list_buf_num_elem(
    devinfo: *const doca_devinfo,
    max_list_num_elem: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_list_num_elem, Sha::max_list_buf_num_elem)
}

/// `doca_sha_get_max_src_buffer_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_get_max_src_buffer_size(
    devinfo: *const doca_devinfo,
    max_buffer_size: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, max_buffer_size, Sha::max_src_buffer_size)
}

/// `doca_sha_get_min_dst_buffer_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_get_min_dst_buffer_size(
    devinfo: *const doca_devinfo,
    job_type_v: doca_sha_job_type,
    min_buffer_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, min_buffer_size, |d| {
        Sha::min_dst_buffer_size(d, job_type(job_type_v)?)
    })
}

/// `doca_sha_get_hardware_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_get_hardware_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, Sha::hardware_supported)
}

/// `doca_sha_partial_session_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_partial_session_create(
    ctx: *mut doca_sha,
    workq: *mut doca_workq,
    session: *mut *mut doca_sha_partial_session,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (s, w) = unsafe { (handle(ctx, "ctx")?, handle(workq, "workq")?) };
        new_handle(session, "session", || {
            let session = s.lib.partial_session_create(&w.wq)?;
            Ok(doca_sha_partial_session { session })
        })
    })
}

/// `doca_sha_partial_session_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_partial_session_destroy(
    ctx: *mut doca_sha,
    workq: *mut doca_workq,
    session: *mut doca_sha_partial_session,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles; the session is destroyed in place or kept.
        unsafe {
            let (s, w) = (handle(ctx, "ctx")?, handle(workq, "workq")?);
            destroy_in_place(session, "session", |h: doca_sha_partial_session| {
                s.lib
                    .partial_session_destroy(&w.wq, h.session)
                    .map_err(|(session, e)| (doca_sha_partial_session { session }, e))
            })
        }
    })
}

/// `doca_sha_partial_session_copy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_partial_session_copy(
    ctx: *mut doca_sha,
    workq: *mut doca_workq,
    from_session: *const doca_sha_partial_session,
    to_session: *mut doca_sha_partial_session,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (s, w, from, to) = unsafe {
            (
                handle(ctx, "ctx")?,
                handle(workq, "workq")?,
                handle(from_session, "from_session")?,
                handle(to_session, "to_session")?,
            )
        };
        s.lib
            .partial_session_copy(&w.wq, &from.session, &to.session)
    })
}

// ---- erasure coding ----

/// `doca_ec_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ec_create(ec: *mut *mut doca_ec) -> doca_error_t {
    let e = Ec::new();
    let c = e.as_ctx().clone();
    create(ec, e, &c, crate::exec::jobs::ec::fill)
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

/// A C array argument.
///
/// # Safety
/// `p` is NULL or readable for `n` elements.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    if n > 1 << 20 {
        return Err(invalid(format!("{what}: {n} elements is too many")));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
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
