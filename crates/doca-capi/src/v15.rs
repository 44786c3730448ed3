//! The C interface of DOCA 1.5, the last 1.x release: 2.x's getters and setters, work
//! queues and jobs (2.2's, which keeps them), with the 1.x memory map (started, then
//! given devices and populated chunk by chunk, exported as a descriptor the caller
//! frees), PCI addresses as `struct doca_pci_bdf`, and `enum doca_dev_rep_filter`.
//!
//! A name 1.5 shares with 2.2 but with another meaning (`doca_mmap_create` makes a
//! chunked map; `doca_mmap_create_from_export` takes the descriptor `doca_mmap_export`
//! gives; `doca_version_runtime`) is defined here under the link name `doca15__<rest>`,
//! and `scripts/install-capi.sh` gives it its public name in the 1.5 library. Names only
//! 1.5 has are exported as they are (the 2.2 headers declare them only for 1.5
//! programs, `DOCA_API_1_5`); everything else is 2.2's.

use crate::common::{
    Result, doca_data, doca_error_t, ffi, handle, handle_mut, invalid, new_handle, out_ptr, put,
};
use crate::v1::bdf;
use crate::v22::dev::{doca_devinfo, doca_devinfo_rep};
use crate::v22::mem::{doca_mmap, user_data};
use doca_core::Mmap;
use std::ffi::{c_char, c_void};

/// `struct doca_pci_bdf`: bus (bits 8-15), device (3-7) and function (0-2) in one
/// `uint16_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_pci_bdf {
    /// All three numbers.
    pub raw: u16,
}

/// Writes a `struct doca_pci_bdf` to `out`.
fn put_bdf(out: *mut doca_pci_bdf, raw: u16) -> Result<()> {
    let out = out_ptr(out, "pci_addr")?;
    // SAFETY: checked non-NULL; the caller's `struct doca_pci_bdf`.
    unsafe { put(out, doca_pci_bdf { raw }) };
    Ok(())
}

/// `doca_devinfo_get_pci_addr` of 1.4-1.5: the device's bus, device and function as
/// `struct doca_pci_bdf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_pci_addr(
    devinfo: *const doca_devinfo,
    pci_addr: *mut doca_pci_bdf,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let info = unsafe { handle(devinfo, "devinfo") }?;
        put_bdf(pci_addr, bdf(info.info.pci_addr()))
    })
}

/// `doca_devinfo_rep_get_pci_addr` of 1.4-1.5: a representor's PCI address as
/// `struct doca_pci_bdf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_rep_get_pci_addr(
    devinfo_rep: *const doca_devinfo_rep,
    pci_addr: *mut doca_pci_bdf,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let info = unsafe { handle(devinfo_rep, "devinfo_rep") }?;
        put_bdf(pci_addr, bdf(info.info().pci_addr()))
    })
}

/// `doca_devinfo_get_is_mmap_export_supported`: 1.5's name of
/// `doca_devinfo_get_is_mmap_export_dpu_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_is_mmap_export_supported(
    devinfo: *const doca_devinfo,
    mmap_export: *mut u8,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::v22::dev::doca_devinfo_get_is_mmap_export_dpu_supported(devinfo, mmap_export) }
}

/// `doca_devinfo_get_is_mmap_from_export_supported`: 1.5's name of
/// `doca_devinfo_get_is_mmap_from_export_dpu_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_devinfo_get_is_mmap_from_export_supported(
    devinfo: *const doca_devinfo,
    from_export: *mut u8,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        crate::v22::dev::doca_devinfo_get_is_mmap_from_export_dpu_supported(devinfo, from_export)
    }
}

/// `doca_mmap_create` of 1.5: a memory map with the user data given, populated chunk by
/// chunk after it is started (`doca_mmap_populate`).
#[unsafe(export_name = "doca15__mmap_create")]
pub unsafe extern "C" fn doca_mmap_create(
    user_data_p: *const doca_data,
    mmap: *mut *mut doca_mmap,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or readable user data.
        let ud = unsafe { user_data(user_data_p) };
        new_handle(mmap, "mmap", || Ok(Mmap::chunked(ud)))
    })
}

/// `doca_mmap_set_max_num_chunks` of 1.5: before the first start.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_set_max_num_chunks(
    mmap: *mut doca_mmap,
    max_num_chunks: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let m = unsafe { handle_mut(mmap, "mmap") }?;
        if max_num_chunks == 0 {
            return Err(invalid("max_num_chunks must be at least 1"));
        }
        m.set_max_num_chunks(max_num_chunks)
    })
}

/// `doca_mmap_get_max_num_chunks` of 1.5.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_mmap_get_max_num_chunks(
    mmap: *mut doca_mmap,
    max_num_chunks: *mut u32,
) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(max_num_chunks, "max_num_chunks")?;
        // SAFETY: NULL or a live handle.
        let m = unsafe { handle(mmap, "mmap") }?;
        // SAFETY: checked non-NULL.
        unsafe { put(out, m.max_num_chunks()) };
        Ok(())
    })
}

/// `doca_mmap_create_from_export` of 1.5: the descriptor `doca_mmap_export` gave (its
/// text, with or without the NUL that ends it), on a device that reaches the exporter.
#[unsafe(export_name = "doca15__mmap_create_from_export")]
pub unsafe extern "C" fn doca_mmap_create_from_export(
    user_data_p: *const doca_data,
    export_desc: *const c_void,
    export_desc_len: usize,
    dev: *mut crate::v22::dev::doca_dev,
    mmap: *mut *mut doca_mmap,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        crate::v1::create_from_json_export(
            user_data_p,
            export_desc.cast(),
            export_desc_len,
            dev,
            mmap,
        )
    }
}

/// `doca_version_runtime` of the 1.5 library.
#[unsafe(export_name = "doca15__version_runtime")]
pub extern "C" fn doca_version_runtime() -> *const c_char {
    c"1.5.1007".as_ptr()
}

/// `doca_workq_submit` of the 1.5 library: as 2.2's, except that a job's destination is
/// written from the start of its data section, over the data it holds, and its data
/// length becomes what the job wrote. DOCA up to 2.0.2 treats output buffers so (the 2.2
/// Core guide's note on what changed after 2.0.2); 1.5 programs copy into the same
/// destination buffer again and again.
#[unsafe(export_name = "doca15__workq_submit")]
pub unsafe extern "C" fn doca_workq_submit(
    workq: *mut crate::v22::exec::doca_workq,
    job: *const crate::v22::exec::doca_job,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let w = unsafe { handle_mut(workq, "workq") }?;
        // SAFETY: the job struct matches its type; its context is live (the C contract).
        let (ctx, t) = unsafe { crate::v22::exec::job_head(job) }?;
        w.wq.submit_in_place(&ctx.ctx, |rec| {
            // SAFETY: as above.
            unsafe { crate::v22::exec::fill_from_c(job, ctx, t, rec) }?;
            rec.flags |= doca_core::JobRecord::OVERWRITES_DST;
            Ok(())
        })
    })
}
