//! `doca_compress.h` (2.2): the compress context and its deflate jobs.

use crate::common::{Result, doca_error_t};
use crate::v22::dev::doca_devinfo;
use crate::v22::exec::doca_ctx;
use ::doca_compress::Compress;

use crate::v22::exec::doca_job;
use crate::v22::libs::*;
use crate::v22::mem::doca_buf;

/// `struct doca_compress`.
pub type doca_compress = LibHandle<Compress>;

/// `struct doca_compress_deflate_job`: DOCA 2.2's compress and decompress deflate job.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_compress_deflate_job {
    /// Base.
    pub base: doca_job,
    /// Destination.
    pub dst_buff: *mut doca_buf,
    /// Source.
    pub src_buff: *const doca_buf,
    /// Where the checksums go once the job succeeded (NULL for nowhere): the CRC-32 of
    /// the uncompressed data in the low 32 bits, its Adler-32 in the high 32 bits.
    pub output_chksum: *mut u64,
}

/// The translation of Compress's (deflate both ways; the LZ4 tasks have no 2.2 job) 2.2 job structs into records, from its task table.
pub(crate) mod jobs {
    use super::*;
    ::doca_compress::compress_task_table!(crate::common::tasks::c22_jobs);
}

/// `enum doca_compress_job_types`.
pub type doca_compress_job_types = std::ffi::c_int;

/// `doca_compress_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_compress_create(ctx: *mut *mut doca_compress) -> doca_error_t {
    let c = Compress::new();
    let x = c.as_ctx().clone();
    create(ctx, c, &x, crate::v22::compress::jobs::fill)
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
