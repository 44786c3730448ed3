//! `doca_sync_event.h` of the task generation: the sync event with its 3.x location
//! names, its synchronous calls, and its tasks (get, notify_set, notify_add, wait_gt,
//! wait_eq) on a progress engine. Host/DPU export arrives with the comch generation.

use super::lib::{Lib3, lib_as_ctx};
use super::pe::{FinishFn, RecordFn, TaskCb, doca_ctx3, doca_task};
use crate::dev::{doca_dev, doca_devinfo};
use crate::libs::devinfo_query;
use crate::{
    Result, destroy_in_place, doca_data, doca_error_t, err, ffi, ffi_value, handle, invalid,
    new_handle, out_ptr, put,
};
use doca_core::exec::Job;
use doca_core::sync_event::{JOB_GET, JOB_UPDATE_ADD, JOB_UPDATE_SET, JOB_WAIT_EQ, JOB_WAIT_GT};
use doca_core::{Data, ErrorCode, JobRecord, SyncEvent, SyncEventJob};

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
        // SAFETY: NULL or a live handle.
        let d = unsafe { handle(dev, "dev") }?;
        if data.is_null() || sz == 0 {
            return Err(invalid("export data is NULL or empty"));
        }
        out_ptr(event, "event")?;
        // SAFETY: the caller passes sz readable bytes.
        let blob = unsafe { std::slice::from_raw_parts(data, sz) };
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

fn no_remote_net() -> doca_core::Error {
    err(
        ErrorCode::NotSupported,
        "a remote network location is not available: there is no remote peer here",
    )
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

/// `doca_sync_event_cap_is_export_to_remote_pci_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_is_export_to_remote_pci_supported(
    devinfo: *const crate::dev::doca_devinfo,
) -> doca_error_t {
    crate::libs::devinfo_query(devinfo, remote_pci)
}

/// `doca_sync_event_cap_is_create_from_export_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_is_create_from_export_supported(
    devinfo: *const crate::dev::doca_devinfo,
) -> doca_error_t {
    crate::libs::devinfo_query(devinfo, remote_pci)
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
    ffi(|| {
        se(event)?;
        Err(no_remote_net())
    })
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
    ffi(|| {
        se(event)?;
        Err(no_remote_net())
    })
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

/// The task's fields: `params[0]` the value (set/add/wait), `params[1]` the mask,
/// `params[2]` the program's result pointer (get: where the value goes; notify_add:
/// where the value before goes).
fn record_of(job: SyncEventJob, ud: Data) -> JobRecord {
    let mut r = job.into_record();
    r.user_data = ud;
    r
}

unsafe fn get_record(_t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record_of(SyncEventJob::get(0), ud);
    Ok(())
}

unsafe fn notify_set_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record_of(SyncEventJob::update_set(t.params[0].get(), 0), ud);
    Ok(())
}

unsafe fn notify_add_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record_of(SyncEventJob::update_add(t.params[0].get(), 0), ud);
    Ok(())
}

unsafe fn wait_gt_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record_of(
        SyncEventJob::wait_gt(t.params[0].get(), t.params[1].get(), 0),
        ud,
    );
    Ok(())
}

unsafe fn wait_eq_record(t: &doca_task, ud: Data, out: &mut JobRecord) -> Result<()> {
    *out = record_of(
        SyncEventJob::wait_eq(t.params[0].get(), t.params[1].get(), 0),
        ud,
    );
    Ok(())
}

/// Writes a get or notify_add task's value where the program asked.
unsafe fn write_result(t: &doca_task, record: &JobRecord, failed: bool) {
    let p = t.params[2].get() as usize as *mut u64;
    if !failed && !p.is_null() {
        // SAFETY: the program's pointer, valid while the task is in flight (the C
        // contract of the task's ret_val_ptr / fetched_val_ptr).
        unsafe { p.write(SyncEventJob::record_value(record)) };
    }
}

fn set_conf(
    event: *mut doca_sync_event3,
    job: u32,
    ok: TaskCb,
    err_cb: TaskCb,
    n: u32,
    rec: RecordFn,
    fin: Option<FinishFn>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(event, "event") }?;
        super::check_num_tasks(n)?;
        h.ctx.set_conf(job, ok, err_cb, n, rec, fin).map_err(|e| {
            if e.code() == ErrorCode::BadState {
                err(
                    ErrorCode::NotPermitted,
                    "tasks can be configured only while the context is idle",
                )
            } else {
                e
            }
        })
    })
}

fn alloc(
    event: *mut doca_sync_event3,
    job: u32,
    value: u64,
    mask: u64,
    ptr: *mut u64,
    user_data: doca_data,
    task: *mut *mut doca_task,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(event, "event") }?;
        let o = out_ptr(task, "task")?;
        let t = h.ctx.alloc_task(job, user_data, |t| {
            t.params[0].set(value);
            t.params[1].set(mask);
            t.params[2].set(ptr as usize as u64);
            Ok(())
        })?;
        // SAFETY: output checked.
        unsafe { put(o, t) };
        Ok(())
    })
}

fn param(task: *const doca_task, i: usize) -> u64 {
    ffi_value(0, || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.params[i].get())
    })
}

fn set_param(task: *mut doca_task, i: usize, v: u64) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        unsafe { handle(task, "task") }?.params[i].set(v);
        Ok(())
    })
}

// ---- get ----

/// `struct doca_sync_event_task_get`.
pub type doca_sync_event_task_get = doca_task;
/// `doca_sync_event_task_get_completion_cb_t`.
pub type doca_sync_event_task_get_completion_cb_t = TaskCb;

/// `doca_sync_event_cap_task_get_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_task_get_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| SyncEvent::job_get_supported(d, JOB_GET))
}

/// `doca_sync_event_task_get_set_conf`: only while the context is idle (`NOT_PERMITTED`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_get_set_conf(
    event: *mut doca_sync_event3,
    task_completion_cb: doca_sync_event_task_get_completion_cb_t,
    task_error_cb: doca_sync_event_task_get_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        event,
        JOB_GET,
        task_completion_cb,
        task_error_cb,
        num_tasks,
        get_record,
        Some(write_result),
    )
}

/// `doca_sync_event_task_get_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_get_alloc_init(
    event: *mut doca_sync_event3,
    ret_val_ptr: *mut u64,
    user_data: doca_data,
    task: *mut *mut doca_sync_event_task_get,
) -> doca_error_t {
    alloc(event, JOB_GET, 0, 0, ret_val_ptr, user_data, task)
}

/// `doca_sync_event_task_get_as_doca_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_get_as_doca_task(
    task: *mut doca_sync_event_task_get,
) -> *mut doca_task {
    task
}

/// `doca_sync_event_task_get_set_ret_val_ptr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_get_set_ret_val_ptr(
    task: *mut doca_sync_event_task_get,
    ret_val_ptr: *mut u64,
) {
    set_param(task, 2, ret_val_ptr as usize as u64)
}

/// `doca_sync_event_task_get_get_ret_val_ptr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_get_get_ret_val_ptr(
    task: *const doca_sync_event_task_get,
) -> *mut u64 {
    param(task, 2) as usize as *mut u64
}

// ---- notify_set ----

/// `struct doca_sync_event_task_notify_set`.
pub type doca_sync_event_task_notify_set = doca_task;
/// `doca_sync_event_task_notify_set_completion_cb_t`.
pub type doca_sync_event_task_notify_set_completion_cb_t = TaskCb;

/// `doca_sync_event_cap_task_notify_set_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_task_notify_set_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| SyncEvent::job_get_supported(d, JOB_UPDATE_SET))
}

/// `doca_sync_event_task_notify_set_set_conf`: only while the context is idle (`NOT_PERMITTED`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_set_set_conf(
    event: *mut doca_sync_event3,
    task_completion_cb: doca_sync_event_task_notify_set_completion_cb_t,
    task_error_cb: doca_sync_event_task_notify_set_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        event,
        JOB_UPDATE_SET,
        task_completion_cb,
        task_error_cb,
        num_tasks,
        notify_set_record,
        None,
    )
}

/// `doca_sync_event_task_notify_set_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_set_alloc_init(
    event: *mut doca_sync_event3,
    set_val: u64,
    user_data: doca_data,
    task: *mut *mut doca_sync_event_task_notify_set,
) -> doca_error_t {
    alloc(
        event,
        JOB_UPDATE_SET,
        set_val,
        0,
        std::ptr::null_mut(),
        user_data,
        task,
    )
}

/// `doca_sync_event_task_notify_set_as_doca_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_set_as_doca_task(
    task: *mut doca_sync_event_task_notify_set,
) -> *mut doca_task {
    task
}

/// `doca_sync_event_task_notify_set_set_set_val`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_set_set_set_val(
    task: *mut doca_sync_event_task_notify_set,
    set_val: u64,
) {
    set_param(task, 0, set_val)
}

/// `doca_sync_event_task_notify_set_get_set_val`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_set_get_set_val(
    task: *const doca_sync_event_task_notify_set,
) -> u64 {
    param(task, 0)
}

// ---- notify_add ----

/// `struct doca_sync_event_task_notify_add`.
pub type doca_sync_event_task_notify_add = doca_task;
/// `doca_sync_event_task_notify_add_completion_cb_t`.
pub type doca_sync_event_task_notify_add_completion_cb_t = TaskCb;

/// `doca_sync_event_cap_task_notify_add_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_task_notify_add_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| SyncEvent::job_get_supported(d, JOB_UPDATE_ADD))
}

/// `doca_sync_event_task_notify_add_set_conf`: only while the context is idle (`NOT_PERMITTED`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_add_set_conf(
    event: *mut doca_sync_event3,
    task_completion_cb: doca_sync_event_task_notify_add_completion_cb_t,
    task_error_cb: doca_sync_event_task_notify_add_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        event,
        JOB_UPDATE_ADD,
        task_completion_cb,
        task_error_cb,
        num_tasks,
        notify_add_record,
        Some(write_result),
    )
}

/// `doca_sync_event_task_notify_add_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_add_alloc_init(
    event: *mut doca_sync_event3,
    inc_val: u64,
    fetched_val_ptr: *mut u64,
    user_data: doca_data,
    task: *mut *mut doca_sync_event_task_notify_add,
) -> doca_error_t {
    alloc(
        event,
        JOB_UPDATE_ADD,
        inc_val,
        0,
        fetched_val_ptr,
        user_data,
        task,
    )
}

/// `doca_sync_event_task_notify_add_as_doca_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_add_as_doca_task(
    task: *mut doca_sync_event_task_notify_add,
) -> *mut doca_task {
    task
}

/// `doca_sync_event_task_notify_add_set_inc_val`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_add_set_inc_val(
    task: *mut doca_sync_event_task_notify_add,
    inc_val: u64,
) {
    set_param(task, 0, inc_val)
}

/// `doca_sync_event_task_notify_add_get_inc_val`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_add_get_inc_val(
    task: *const doca_sync_event_task_notify_add,
) -> u64 {
    param(task, 0)
}

/// `doca_sync_event_task_notify_add_set_fetched_val_ptr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_add_set_fetched_val_ptr(
    task: *mut doca_sync_event_task_notify_add,
    fetched_val_ptr: *mut u64,
) {
    set_param(task, 2, fetched_val_ptr as usize as u64)
}

/// `doca_sync_event_task_notify_add_get_fetched_val_ptr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_notify_add_get_fetched_val_ptr(
    task: *const doca_sync_event_task_notify_add,
) -> *mut u64 {
    param(task, 2) as usize as *mut u64
}

// ---- wait_gt ----

/// `struct doca_sync_event_task_wait_gt`.
pub type doca_sync_event_task_wait_gt = doca_task;
/// `doca_sync_event_task_wait_gt_completion_cb_t`.
pub type doca_sync_event_task_wait_gt_completion_cb_t = TaskCb;

/// `doca_sync_event_cap_task_wait_gt_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_task_wait_gt_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| SyncEvent::job_get_supported(d, JOB_WAIT_GT))
}

/// `doca_sync_event_task_wait_gt_set_conf`: only while the context is idle (`NOT_PERMITTED`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_gt_set_conf(
    event: *mut doca_sync_event3,
    task_completion_cb: doca_sync_event_task_wait_gt_completion_cb_t,
    task_error_cb: doca_sync_event_task_wait_gt_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        event,
        JOB_WAIT_GT,
        task_completion_cb,
        task_error_cb,
        num_tasks,
        wait_gt_record,
        None,
    )
}

/// `doca_sync_event_task_wait_gt_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_gt_alloc_init(
    event: *mut doca_sync_event3,
    wait_val: u64,
    mask: u64,
    user_data: doca_data,
    task: *mut *mut doca_sync_event_task_wait_gt,
) -> doca_error_t {
    alloc(
        event,
        JOB_WAIT_GT,
        wait_val,
        mask,
        std::ptr::null_mut(),
        user_data,
        task,
    )
}

/// `doca_sync_event_task_wait_gt_as_doca_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_gt_as_doca_task(
    task: *mut doca_sync_event_task_wait_gt,
) -> *mut doca_task {
    task
}

/// `doca_sync_event_task_wait_gt_set_wait_val`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_gt_set_wait_val(
    task: *mut doca_sync_event_task_wait_gt,
    wait_val: u64,
) {
    set_param(task, 0, wait_val)
}

/// `doca_sync_event_task_wait_gt_get_wait_val`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_gt_get_wait_val(
    task: *const doca_sync_event_task_wait_gt,
) -> u64 {
    param(task, 0)
}

/// `doca_sync_event_task_wait_gt_set_mask`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_gt_set_mask(
    task: *mut doca_sync_event_task_wait_gt,
    mask: u64,
) {
    set_param(task, 1, mask)
}

/// `doca_sync_event_task_wait_gt_get_mask`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_gt_get_mask(
    task: *const doca_sync_event_task_wait_gt,
) -> u64 {
    param(task, 1)
}

// ---- wait_eq ----

/// `struct doca_sync_event_task_wait_eq`.
pub type doca_sync_event_task_wait_eq = doca_task;
/// `doca_sync_event_task_wait_eq_completion_cb_t`.
pub type doca_sync_event_task_wait_eq_completion_cb_t = TaskCb;

/// `doca_sync_event_cap_task_wait_eq_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_cap_task_wait_eq_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, |d| SyncEvent::job_get_supported(d, JOB_WAIT_EQ))
}

/// `doca_sync_event_task_wait_eq_set_conf`: only while the context is idle (`NOT_PERMITTED`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_eq_set_conf(
    event: *mut doca_sync_event3,
    task_completion_cb: doca_sync_event_task_wait_eq_completion_cb_t,
    task_error_cb: doca_sync_event_task_wait_eq_completion_cb_t,
    num_tasks: u32,
) -> doca_error_t {
    set_conf(
        event,
        JOB_WAIT_EQ,
        task_completion_cb,
        task_error_cb,
        num_tasks,
        wait_eq_record,
        None,
    )
}

/// `doca_sync_event_task_wait_eq_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_eq_alloc_init(
    event: *mut doca_sync_event3,
    wait_val: u64,
    mask: u64,
    user_data: doca_data,
    task: *mut *mut doca_sync_event_task_wait_eq,
) -> doca_error_t {
    alloc(
        event,
        JOB_WAIT_EQ,
        wait_val,
        mask,
        std::ptr::null_mut(),
        user_data,
        task,
    )
}

/// `doca_sync_event_task_wait_eq_as_doca_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_eq_as_doca_task(
    task: *mut doca_sync_event_task_wait_eq,
) -> *mut doca_task {
    task
}

/// `doca_sync_event_task_wait_eq_set_wait_val`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_eq_set_wait_val(
    task: *mut doca_sync_event_task_wait_eq,
    wait_val: u64,
) {
    set_param(task, 0, wait_val)
}

/// `doca_sync_event_task_wait_eq_get_wait_val`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_eq_get_wait_val(
    task: *const doca_sync_event_task_wait_eq,
) -> u64 {
    param(task, 0)
}

/// `doca_sync_event_task_wait_eq_set_mask`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_eq_set_mask(
    task: *mut doca_sync_event_task_wait_eq,
    mask: u64,
) {
    set_param(task, 1, mask)
}

/// `doca_sync_event_task_wait_eq_get_mask`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sync_event_task_wait_eq_get_mask(
    task: *const doca_sync_event_task_wait_eq,
) -> u64 {
    param(task, 1)
}
