//! `doca_dma.h` (2.2): the DMA context and its memcpy job.

use crate::common::{doca_dma_job_types, doca_error_t};
use crate::v22::dev::doca_devinfo;
use crate::v22::exec::doca_ctx;
use ::doca_dma::Dma;

use crate::v22::exec::doca_job;
use crate::v22::libs::*;
use crate::v22::mem::doca_buf;
use std::mem::{offset_of, size_of};

/// `struct doca_dma`.
pub type doca_dma = LibHandle<Dma>;

/// `struct doca_dma_job_memcpy`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_dma_job_memcpy {
    /// Base.
    pub base: doca_job,
    /// Destination.
    pub dst_buff: *mut doca_buf,
    /// Source.
    pub src_buff: *const doca_buf,
}

// The layouts of DOCA 2.2 (x86-64), mirrored by _Static_asserts in the C tests.
const _: () = {
    assert!(size_of::<doca_dma_job_memcpy>() == 40);
    assert!(offset_of!(doca_dma_job_memcpy, dst_buff) == 24);
    assert!(offset_of!(doca_dma_job_memcpy, src_buff) == 32);
};

/// The translation of DMA's 2.2 job structs into records, from its task table.
pub(crate) mod jobs {
    use super::*;
    ::doca_dma::dma_task_table!(crate::common::tasks::c22_jobs);
}

/// `doca_dma_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_dma_create(dma: *mut *mut doca_dma) -> doca_error_t {
    let d = Dma::new();
    let c = d.as_ctx().clone();
    create(dma, d, &c, crate::v22::dma::jobs::fill)
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
