//! `doca_sync_event.h`.

use crate::common::destroy_in_place;
use crate::common::handles::call;
use crate::common::{
    Result, doca_error_t, doca_sync_event_job_types, err, ffi, handle, invalid, out_ptr, put,
};
use crate::v22::dev::{doca_dev, doca_devinfo};
use crate::v22::exec::doca_ctx;
use crate::v22::exec::doca_job;
use crate::v22::libs::{LibHandle, as_ctx, devinfo_query};
use crate::v22::mem::{doca_dpa, doca_gpu};
use doca_core::{ErrorCode, SyncEvent};
use std::mem::{offset_of, size_of};

/// `struct doca_sync_event`.
pub type doca_sync_event = LibHandle<SyncEvent>;

/// `doca_dpa_dev_sync_event_t`.
pub type doca_dpa_dev_sync_event_t = u64;
/// `doca_gpu_dev_sync_event_t`.
pub type doca_gpu_dev_sync_event_t = u64;

/// `doca_sync_event_remote_t`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_remote_t {
    /// Opaque handle data.
    pub data: [u64; 2],
}

const _: () = assert!(std::mem::size_of::<doca_sync_event_remote_t>() == 16);

fn no_export(what: &str) -> doca_core::Error {
    err(
        ErrorCode::NotSupported,
        format!("exporting a sync event {what} is not available: there is no {what} here"),
    )
}

/// The sync event behind a handle (sync events are thread-safe: shared use).
///
/// # Safety
/// `event` is NULL or a live handle.
unsafe fn event_lib<'a>(event: *mut doca_sync_event, what: &str) -> Result<&'a SyncEvent> {
    // SAFETY: the caller's contract.
    Ok(&unsafe { handle(event, what) }?.lib)
}

/// `doca_sync_event_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_create(event: *mut *mut doca_sync_event) -> doca_error_t {
    let e = SyncEvent::new();
    let c = e.as_ctx().clone();
    crate::v22::libs::create(event, e, &c, crate::v22::sync_event::jobs::fill)
}

/// The arguments every generation's `doca_sync_event_create_from_export` checks: the
/// device, the export blob (not NULL, not empty), the output.
///
/// # Safety
/// `dev` is NULL or live; `data` is NULL or `sz` readable bytes.
pub(crate) unsafe fn import_args<'a, T>(
    dev: *mut doca_dev,
    data: *const u8,
    sz: usize,
    event: *mut *mut T,
) -> Result<(&'a crate::v22::dev::doca_dev, &'a [u8])> {
    // SAFETY: the caller's contract.
    let d = unsafe { handle(dev, "dev") }?;
    if data.is_null() || sz == 0 {
        return Err(invalid("export data is NULL or empty"));
    }
    out_ptr(event, "event")?;
    // SAFETY: the caller passes sz readable bytes.
    Ok((d, unsafe { std::slice::from_raw_parts(data, sz) }))
}

/// `doca_sync_event_create_from_export`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_create_from_export(
    dev: *mut doca_dev,
    data: *const u8,
    sz: usize,
    event: *mut *mut doca_sync_event,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: the C contract: live handles, sz readable bytes.
        let (d, blob) = unsafe { import_args(dev, data, sz, event) }?;
        let e = SyncEvent::create_from_export(&d.dev, blob)?;
        crate::common::new_handle(event, "event", || {
            Ok(LibHandle {
                ctx: doca_ctx {
                    ctx: e.as_ctx().clone(),
                    jobs: crate::v22::sync_event::jobs::fill,
                },
                lib: e,
            })
        })
    })
}

/// `doca_sync_event_get_create_from_export_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_get_create_from_export_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        supported(
            SyncEvent::create_from_export_supported(d),
            "from an export (a DPU device with the capability is needed)",
        )
    })
}

/// `doca_sync_event_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_destroy(event: *mut doca_sync_event) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live boxed handle, destroyed in place or kept.
        unsafe {
            destroy_in_place(event, "event", |h: doca_sync_event| {
                let LibHandle { lib, ctx } = h;
                lib.destroy()
                    .map_err(|(lib, e)| (LibHandle { lib, ctx }, e))
            })
        }
    })
}

call!(event_lib;
    /// `doca_sync_event_publisher_add_location_cpu`.
    pub unsafe extern "C" fn doca_sync_event_publisher_add_location_cpu(event: *mut doca_sync_event, dev: *mut doca_dev) -> doca_error_t => |e| {
    // SAFETY: NULL or a live device handle.
    e.publisher_add_location_cpu(&unsafe { handle(dev, "dev") }?.dev)
});
call!(event_lib;
    /// `doca_sync_event_publisher_add_location_dpa`.
    pub unsafe extern "C" fn doca_sync_event_publisher_add_location_dpa(event: *mut doca_sync_event, _dpa: *mut doca_dpa) -> doca_error_t => |e| e.publisher_add_location_dpa());
call!(event_lib;
    /// `doca_sync_event_publisher_add_location_gpu`.
    pub unsafe extern "C" fn doca_sync_event_publisher_add_location_gpu(event: *mut doca_sync_event, _gpu: *mut doca_gpu) -> doca_error_t => |e| e.publisher_add_location_gpu());
call!(event_lib;
    /// `doca_sync_event_publisher_add_location_dpu`.
    pub unsafe extern "C" fn doca_sync_event_publisher_add_location_dpu(event: *mut doca_sync_event) -> doca_error_t => |e| e.publisher_add_location_dpu());
call!(event_lib;
    /// `doca_sync_event_subscriber_add_location_cpu`.
    pub unsafe extern "C" fn doca_sync_event_subscriber_add_location_cpu(event: *mut doca_sync_event, dev: *mut doca_dev) -> doca_error_t => |e| {
    // SAFETY: NULL or a live device handle.
    e.subscriber_add_location_cpu(&unsafe { handle(dev, "dev") }?.dev)
});
call!(event_lib;
    /// `doca_sync_event_subscriber_add_location_dpa`.
    pub unsafe extern "C" fn doca_sync_event_subscriber_add_location_dpa(event: *mut doca_sync_event, _dpa: *mut doca_dpa) -> doca_error_t => |e| e.subscriber_add_location_dpa());
call!(event_lib;
    /// `doca_sync_event_subscriber_add_location_gpu`.
    pub unsafe extern "C" fn doca_sync_event_subscriber_add_location_gpu(event: *mut doca_sync_event, _gpu: *mut doca_gpu) -> doca_error_t => |e| e.subscriber_add_location_gpu());
call!(event_lib;
    /// `doca_sync_event_subscriber_add_location_dpu`.
    pub unsafe extern "C" fn doca_sync_event_subscriber_add_location_dpu(event: *mut doca_sync_event) -> doca_error_t => |e| e.subscriber_add_location_dpu());
call!(event_lib;
    /// `doca_sync_event_set_addr`.
    pub unsafe extern "C" fn doca_sync_event_set_addr(event: *mut doca_sync_event, addr: *mut u64) -> doca_error_t => |e| {
    // SAFETY: the program's 8-byte aligned counter, valid until destroy (the C contract).
    unsafe { e.set_addr(addr) }
});
call!(event_lib;
    /// `doca_sync_event_start`.
    pub unsafe extern "C" fn doca_sync_event_start(event: *mut doca_sync_event) -> doca_error_t => |e| e.start());
call!(event_lib;
    /// `doca_sync_event_stop`.
    pub unsafe extern "C" fn doca_sync_event_stop(event: *mut doca_sync_event) -> doca_error_t => |e| e.stop());
call!(event_lib;
    /// `doca_sync_event_get`.
    pub unsafe extern "C" fn doca_sync_event_get(event: *mut doca_sync_event, value: *mut u64) -> doca_error_t => |e| {
    let o = out_ptr(value, "value")?;
    let v = e.get()?;
    // SAFETY: output checked.
    unsafe { put(o, v) };
    Ok(())
});
call!(event_lib;
    /// `doca_sync_event_update_add`.
    pub unsafe extern "C" fn doca_sync_event_update_add(event: *mut doca_sync_event, value: u64, fetched: *mut u64) -> doca_error_t => |e| {
    let before = e.update_add(value)?;
    if !fetched.is_null() {
        // SAFETY: non-NULL output.
        unsafe { put(fetched, before) };
    }
    Ok(())
});
call!(event_lib;
    /// `doca_sync_event_update_set`.
    pub unsafe extern "C" fn doca_sync_event_update_set(event: *mut doca_sync_event, value: u64) -> doca_error_t => |e| e.update_set(value));
call!(event_lib;
    /// `doca_sync_event_wait_gt`.
    pub unsafe extern "C" fn doca_sync_event_wait_gt(event: *mut doca_sync_event, value: u64, mask: u64) -> doca_error_t => |e| e.wait_gt(value, mask));
call!(event_lib;
    /// `doca_sync_event_wait_gt_yield`.
    pub unsafe extern "C" fn doca_sync_event_wait_gt_yield(event: *mut doca_sync_event, value: u64, mask: u64) -> doca_error_t => |e| e.wait_gt_yield(value, mask));
call!(event_lib;
    /// `doca_sync_event_export_to_dpu`.
    /// The descriptor stays valid, at the same address, until the event is destroyed.
    pub unsafe extern "C" fn doca_sync_event_export_to_dpu(event: *mut doca_sync_event, dev: *mut doca_dev, data: *mut *const u8, sz: *mut usize) -> doca_error_t => |e| {
    // SAFETY: NULL or a live device handle.
    let d = unsafe { handle(dev, "dev") }?;
    let data = out_ptr(data, "data")?;
    let sz = out_ptr(sz, "sz")?;
    let blob = e.export_to_dpu(&d.dev)?;
    // SAFETY: both out pointers are non-NULL and writable; the event keeps the blob.
    unsafe {
        put(data, blob.as_ptr());
        put(sz, blob.len());
    }
    Ok(())
});
call!(event_lib;
    /// `doca_sync_event_export_to_dpa`.
    pub unsafe extern "C" fn doca_sync_event_export_to_dpa(event: *mut doca_sync_event, _dpa: *mut doca_dpa, _h: *mut doca_dpa_dev_sync_event_t) -> doca_error_t => |_e| Err(no_export("to a DPA")));
call!(event_lib;
    /// `doca_sync_event_export_to_gpu`.
    pub unsafe extern "C" fn doca_sync_event_export_to_gpu(event: *mut doca_sync_event, _gpu: *mut doca_gpu, _h: *mut *mut doca_gpu_dev_sync_event_t) -> doca_error_t => |_e| Err(no_export("to a GPU")));
call!(event_lib;
    /// `doca_sync_event_export_remote`.
    pub unsafe extern "C" fn doca_sync_event_export_remote(event: *mut doca_sync_event, _h: *mut doca_sync_event_remote_t) -> doca_error_t => |_e| Err(no_export("to a remote peer")));

/// `doca_sync_event_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_as_ctx(event: *mut doca_sync_event) -> *mut doca_ctx {
    as_ctx(event)
}

/// `doca_sync_event_job_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_job_get_supported(
    devinfo: *mut doca_devinfo,
    type_: doca_sync_event_job_types,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        SyncEvent::job_get_supported(
            d,
            u32::try_from(type_).map_err(|_| invalid("negative job type"))?,
        )
    })
}

fn supported(yes: bool, what: &str) -> Result<()> {
    if yes {
        Ok(())
    } else {
        Err(err(
            ErrorCode::NotSupported,
            format!("the device cannot export sync events {what}"),
        ))
    }
}

/// `doca_sync_event_get_export_to_dpu_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_get_export_to_dpu_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        supported(
            SyncEvent::export_to_dpu_supported(d),
            "to the DPU (a host device with the capability is needed)",
        )
    })
}

/// `doca_sync_event_get_export_to_dpa_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_get_export_to_dpa_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        supported(SyncEvent::export_to_dpa_supported(d), "to a DPA")
    })
}

/// `doca_sync_event_get_export_to_gpu_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_get_export_to_gpu_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        supported(SyncEvent::export_to_gpu_supported(d), "to a GPU")
    })
}

/// `struct doca_sync_event_job_wait`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_job_wait {
    /// Base.
    pub base: doca_job,
    /// Threshold.
    pub value: u64,
    /// Mask.
    pub mask: u64,
}
/// `struct doca_sync_event_job_get`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_job_get {
    /// Base.
    pub base: doca_job,
    /// Receives the value.
    pub value: *mut u64,
}
/// `struct doca_sync_event_job_update_set`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_job_update_set {
    /// Base.
    pub base: doca_job,
    /// The new value.
    pub value: u64,
}
/// `struct doca_sync_event_job_update_add`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_job_update_add {
    /// Base.
    pub base: doca_job,
    /// Added.
    pub value: u64,
    /// Receives the value before (may be NULL).
    pub fetched: *mut u64,
}

// The layouts of DOCA 2.2 (x86-64), mirrored by _Static_asserts in the C tests.
const _: () = {
    assert!(size_of::<doca_sync_event_job_wait>() == 40);
    assert!(offset_of!(doca_sync_event_job_wait, mask) == 32);
    assert!(size_of::<doca_sync_event_job_get>() == 32);
    assert!(size_of::<doca_sync_event_job_update_set>() == 32);
    assert!(size_of::<doca_sync_event_job_update_add>() == 40);
    assert!(offset_of!(doca_sync_event_job_update_add, fetched) == 32);
};

/// The translation of The sync event's 2.2 job structs into records, from its task table.
pub(crate) mod jobs {
    use super::*;
    doca_core::sync_event_task_table!(crate::common::tasks::c22_jobs);
}

// A task keeps its handle in a parameter slot (the program keeps it alive).
crate::common::tasks::handle_inputs!(
    *const doca_core::sync_event::net::RemoteNetEvent,
    *mut doca_core::sync_event::net::RemoteNetEvent,
);
