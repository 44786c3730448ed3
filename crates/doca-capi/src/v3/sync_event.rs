//! `doca_sync_event.h` of the task generation: the sync event with its 3.x location
//! names, its synchronous calls, and its tasks (get, notify_set, notify_add, wait_gt,
//! wait_eq) on a progress engine. Host/DPU export arrives with the comch generation.

use super::lib::{Lib3, lib_as_ctx};
use super::pe::doca_ctx3;
use crate::common::{
    Result, destroy_in_place, doca_error_t, err, ffi, handle, new_handle, out_ptr, put,
};
use crate::v22::dev::{doca_dev, doca_devinfo};
use crate::v22::libs::devinfo_query;
use doca_core::sync_event::net::RemoteNetEvent;
use doca_core::{ErrorCode, SyncEvent};

/// `struct doca_sync_event`.
pub type doca_sync_event3 = Lib3<SyncEvent>;

fn se<'a>(event: *mut doca_sync_event3) -> Result<&'a SyncEvent> {
    // SAFETY: NULL or a live handle (sync events are thread-safe: shared use).
    Ok(&unsafe { handle(event, "event") }?.lib)
}

fn wrap(e: SyncEvent) -> Lib3<SyncEvent> {
    let ctx = doca_ctx3::new(e.as_ctx().clone());
    Lib3 { lib: e, ctx }
}

/// `doca_sync_event_create`.
#[unsafe(export_name = "doca3__sync_event_create")]
pub unsafe extern "C" fn doca_sync_event_create(event: *mut *mut doca_sync_event3) -> doca_error_t {
    ffi(|| new_handle(event, "event", || Ok(wrap(SyncEvent::new()))))
}

/// `doca_sync_event_create_from_export`.
#[unsafe(export_name = "doca3__sync_event_create_from_export")]
pub unsafe extern "C" fn doca_sync_event_create_from_export(
    dev: *mut doca_dev,
    data: *const u8,
    sz: usize,
    event: *mut *mut doca_sync_event3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: the C contract: live handles, sz readable bytes.
        let (d, blob) = unsafe { crate::v22::sync_event::import_args(dev, data, sz, event) }?;
        let e = SyncEvent::create_from_remote_pci_export(&d.dev, blob)?;
        new_handle(event, "event", || Ok(wrap(e)))
    })
}

/// `doca_sync_event_destroy`: refused while started (in either mode).
#[unsafe(export_name = "doca3__sync_event_destroy")]
pub unsafe extern "C" fn doca_sync_event_destroy(event: *mut doca_sync_event3) -> doca_error_t {
    ffi(|| {
        // The context leaves its engine where it lives (the engine knows it by address).
        // SAFETY: NULL or a live handle.
        unsafe { handle(event, "event") }?.ctx.release()?;
        // SAFETY: a live boxed handle, destroyed in place or kept.
        unsafe {
            destroy_in_place(event, "event", |h: doca_sync_event3| {
                let Lib3 { lib, ctx } = h;
                lib.destroy().map_err(|(lib, e)| (Lib3 { lib, ctx }, e))
            })
        }
    })
}

/// `doca_sync_event_as_ctx`: the event as a context of a progress engine.
#[unsafe(export_name = "doca3__sync_event_as_ctx")]
pub unsafe extern "C" fn doca_sync_event_as_ctx(event: *mut doca_sync_event3) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(event) }
}

/// `struct doca_sync_event_remote_net`: a peer's handle of an event exported to the
/// network.
pub type doca_sync_event_remote_net = RemoteNetEvent;

impl crate::common::handles::Handle for RemoteNetEvent {
    type Kind = crate::common::handles::kind::Boxed;
}

fn rdma_dev(d: &doca_core::DevInfo) -> Result<()> {
    if d.has_capability(doca_core::device::Capability::Rdma) {
        Ok(())
    } else {
        Err(err(
            ErrorCode::NotSupported,
            format!(
                "device {} has no RDMA: it cannot share sync events with remote peers",
                d.pci_addr()
            ),
        ))
    }
}

/// `doca_sync_event_export_to_remote_net`: a descriptor for a peer on the network
/// (valid, at the same address, until the event is destroyed).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_export_to_remote_net(
    event: *mut doca_sync_event3,
    data: *mut *const u8,
    sz: *mut usize,
) -> doca_error_t {
    ffi(|| {
        let e = se(event)?;
        let data = out_ptr(data, "data")?;
        let sz = out_ptr(sz, "sz")?;
        let blob = e.export_to_remote_net()?;
        // SAFETY: both outputs are checked; the event keeps the blob.
        unsafe {
            put(data, blob.as_ptr());
            put(sz, blob.len());
        }
        Ok(())
    })
}

/// `doca_sync_event_cap_is_export_to_remote_net_supported`: devices with RDMA.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_is_export_to_remote_net_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, rdma_dev)
}

/// `doca_sync_event_remote_net_create_from_export`: the handle RDMA's remote net sync
/// event tasks name.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_remote_net_create_from_export(
    dev: *mut doca_dev,
    data: *const u8,
    sz: usize,
    event: *mut *mut doca_sync_event_remote_net,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live device handle.
        let d = unsafe { handle(dev, "dev") }?;
        rdma_dev(d.dev.as_devinfo())?;
        if data.is_null() || sz == 0 {
            return Err(crate::common::invalid("the export data is NULL or empty"));
        }
        // SAFETY: the program's buffer of `sz` bytes (the C contract).
        let bytes = unsafe { std::slice::from_raw_parts(data, sz) };
        new_handle(event, "event", || RemoteNetEvent::from_export(bytes))
    })
}

/// `doca_sync_event_cap_remote_net_is_create_from_export_supported`: devices with RDMA.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_remote_net_is_create_from_export_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, rdma_dev)
}

/// `doca_sync_event_remote_net_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_remote_net_destroy(
    event: *mut doca_sync_event_remote_net,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle, freed once.
        unsafe { crate::common::free_handle(event, "event") }
    })
}

/// `doca_sync_event_add_publisher_location_cpu`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_add_publisher_location_cpu(
    event: *mut doca_sync_event3,
    dev: *mut doca_dev,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live device.
        se(event)?.publisher_add_location_cpu(&unsafe { handle(dev, "dev") }?.dev)
    })
}

/// `doca_sync_event_add_publisher_location_dpu`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_add_publisher_location_dpu(
    event: *mut doca_sync_event3,
) -> doca_error_t {
    ffi(|| se(event)?.publisher_add_location_dpu())
}

/// `doca_sync_event_add_publisher_location_remote_pci`: the other side of the PCIe
/// link publishes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_add_publisher_location_remote_pci(
    event: *mut doca_sync_event3,
) -> doca_error_t {
    ffi(|| se(event)?.publisher_add_location_dpu())
}

/// `doca_sync_event_add_subscriber_location_remote_pci`: the other side of the PCIe
/// link subscribes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_add_subscriber_location_remote_pci(
    event: *mut doca_sync_event3,
) -> doca_error_t {
    ffi(|| se(event)?.subscriber_add_location_dpu())
}

/// `doca_sync_event_export_to_remote_pci`: a descriptor for the process on the other
/// side of the PCIe link; it stays valid, at the same address, until the event is
/// destroyed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_export_to_remote_pci(
    event: *mut doca_sync_event3,
    dev: *mut doca_dev,
    data: *mut *const u8,
    sz: *mut usize,
) -> doca_error_t {
    ffi(|| {
        let e = se(event)?;
        // SAFETY: NULL or a live device handle.
        let d = unsafe { handle(dev, "dev") }?;
        let data = out_ptr(data, "data")?;
        let sz = out_ptr(sz, "sz")?;
        let blob = e.export_to_remote_pci(&d.dev)?;
        // SAFETY: both outputs are checked; the event keeps the blob.
        unsafe {
            put(data, blob.as_ptr());
            put(sz, blob.len());
        }
        Ok(())
    })
}

/// `doca_sync_event_export_to_dpu`: DOCA 2.5-2.8's name of
/// [`doca_sync_event_export_to_remote_pci`], which programs of that time call.
#[unsafe(export_name = "doca3__sync_event_export_to_dpu")]
pub unsafe extern "C" fn doca_sync_event_export_to_dpu(
    event: *mut doca_sync_event3,
    dev: *mut doca_dev,
    data: *mut *const u8,
    sz: *mut usize,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_sync_event_export_to_remote_pci(event, dev, data, sz) }
}

/// `doca_sync_event_cap_is_export_to_dpu_supported`: DOCA 2.5-2.8's name of
/// [`doca_sync_event_cap_is_export_to_remote_pci_supported`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_is_export_to_dpu_supported(
    devinfo: *const crate::v22::dev::doca_devinfo,
) -> doca_error_t {
    crate::v22::libs::devinfo_query(devinfo, remote_pci)
}

/// `doca_sync_event_cap_is_export_to_remote_pci_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_is_export_to_remote_pci_supported(
    devinfo: *const crate::v22::dev::doca_devinfo,
) -> doca_error_t {
    crate::v22::libs::devinfo_query(devinfo, remote_pci)
}

/// `doca_sync_event_cap_is_create_from_export_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_is_create_from_export_supported(
    devinfo: *const crate::v22::dev::doca_devinfo,
) -> doca_error_t {
    crate::v22::libs::devinfo_query(devinfo, remote_pci)
}

fn remote_pci(d: &doca_core::DevInfo) -> Result<()> {
    if SyncEvent::export_to_remote_pci_supported(d) {
        Ok(())
    } else {
        Err(err(
            ErrorCode::NotSupported,
            format!("device {} cannot share sync events over PCIe", d.pci_addr()),
        ))
    }
}

/// `doca_sync_event_add_publisher_location_remote_net`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_add_publisher_location_remote_net(
    event: *mut doca_sync_event3,
) -> doca_error_t {
    ffi(|| se(event)?.publisher_add_location_remote_net())
}

/// `doca_sync_event_add_subscriber_location_cpu`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_add_subscriber_location_cpu(
    event: *mut doca_sync_event3,
    dev: *mut doca_dev,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live device.
        se(event)?.subscriber_add_location_cpu(&unsafe { handle(dev, "dev") }?.dev)
    })
}

/// `doca_sync_event_add_subscriber_location_dpu`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_add_subscriber_location_dpu(
    event: *mut doca_sync_event3,
) -> doca_error_t {
    ffi(|| se(event)?.subscriber_add_location_dpu())
}

/// `doca_sync_event_add_subscriber_location_remote_net`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_add_subscriber_location_remote_net(
    event: *mut doca_sync_event3,
) -> doca_error_t {
    ffi(|| se(event)?.subscriber_add_location_remote_net())
}

/// `doca_sync_event_set_addr`: the program's counter (before start).
#[unsafe(export_name = "doca3__sync_event_set_addr")]
pub unsafe extern "C" fn doca_sync_event_set_addr(
    event: *mut doca_sync_event3,
    addr: *mut u64,
) -> doca_error_t {
    // SAFETY: the program's 8-byte aligned counter, valid until destroy (the C contract).
    ffi(|| unsafe { se(event)?.set_addr(addr) })
}

/// `doca_sync_event_start`: the synchronous mode (no context).
#[unsafe(export_name = "doca3__sync_event_start")]
pub unsafe extern "C" fn doca_sync_event_start(event: *mut doca_sync_event3) -> doca_error_t {
    ffi(|| se(event)?.start())
}

/// `doca_sync_event_stop`.
#[unsafe(export_name = "doca3__sync_event_stop")]
pub unsafe extern "C" fn doca_sync_event_stop(event: *mut doca_sync_event3) -> doca_error_t {
    ffi(|| se(event)?.stop())
}

/// `doca_sync_event_get`.
#[unsafe(export_name = "doca3__sync_event_get")]
pub unsafe extern "C" fn doca_sync_event_get(
    event: *mut doca_sync_event3,
    value: *mut u64,
) -> doca_error_t {
    ffi(|| {
        let o = out_ptr(value, "value")?;
        let v = se(event)?.get()?;
        // SAFETY: output checked.
        unsafe { put(o, v) };
        Ok(())
    })
}

/// `doca_sync_event_update_add`: `fetched` (may be NULL) gets the value before.
#[unsafe(export_name = "doca3__sync_event_update_add")]
pub unsafe extern "C" fn doca_sync_event_update_add(
    event: *mut doca_sync_event3,
    value: u64,
    fetched: *mut u64,
) -> doca_error_t {
    ffi(|| {
        let before = se(event)?.update_add(value)?;
        if !fetched.is_null() {
            // SAFETY: non-NULL output.
            unsafe { put(fetched, before) };
        }
        Ok(())
    })
}

/// `doca_sync_event_update_set`.
#[unsafe(export_name = "doca3__sync_event_update_set")]
pub unsafe extern "C" fn doca_sync_event_update_set(
    event: *mut doca_sync_event3,
    value: u64,
) -> doca_error_t {
    ffi(|| se(event)?.update_set(value))
}

/// `doca_sync_event_wait_gt`.
#[unsafe(export_name = "doca3__sync_event_wait_gt")]
pub unsafe extern "C" fn doca_sync_event_wait_gt(
    event: *mut doca_sync_event3,
    value: u64,
    mask: u64,
) -> doca_error_t {
    ffi(|| se(event)?.wait_gt(value, mask))
}

/// `doca_sync_event_wait_neq`: polls until `(event & mask) != value`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_wait_neq(
    event: *mut doca_sync_event3,
    value: u64,
    mask: u64,
) -> doca_error_t {
    ffi(|| se(event)?.wait_neq(value, mask))
}

/// `doca_sync_event_wait_neq_yield`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_wait_neq_yield(
    event: *mut doca_sync_event3,
    value: u64,
    mask: u64,
) -> doca_error_t {
    ffi(|| se(event)?.wait_neq_yield(value, mask))
}

/// `doca_sync_event_wait_eq`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_wait_eq(
    event: *mut doca_sync_event3,
    value: u64,
    mask: u64,
) -> doca_error_t {
    ffi(|| se(event)?.wait_eq(value, mask))
}

/// `doca_sync_event_wait_eq_yield`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_wait_eq_yield(
    event: *mut doca_sync_event3,
    value: u64,
    mask: u64,
) -> doca_error_t {
    ffi(|| se(event)?.wait_eq_yield(value, mask))
}

/// `doca_sync_event_wait_gt_yield`.
#[unsafe(export_name = "doca3__sync_event_wait_gt_yield")]
pub unsafe extern "C" fn doca_sync_event_wait_gt_yield(
    event: *mut doca_sync_event3,
    value: u64,
    mask: u64,
) -> doca_error_t {
    ffi(|| se(event)?.wait_gt_yield(value, mask))
}

// ---- tasks: from the sync event's task table ----

doca_core::sync_event_task_table!(crate::common::tasks::c3_tasks);
