//! `doca_comch_consumer.h` and `doca_comch_producer.h`: comch's fast path. Consumers
//! post buffers, producers on the far side fill them. Everything here turns C
//! arguments into calls on `doca_comm_channel::fastpath`, which holds the logic.

use super::comch::doca_comch_connection;
use super::lib::{Lib3, lib_as_ctx, lib_destroy};
use super::pe::{TaskCb, doca_ctx3, doca_task};
use crate::common::{
    Result, doca_error_t, ffi, ffi_value, handle, invalid, new_handle, out_ptr, put,
};
use crate::v22::dev::doca_devinfo;
use crate::v22::libs::{devinfo_query, devinfo_value};
use crate::v22::mem::{doca_buf, doca_mmap};
use doca_comm_channel::comch::Connection;
use doca_comm_channel::fastpath::tasks::producer_send;
use doca_comm_channel::fastpath::{
    CONSUMER_POST_RECV_TASK, Consumer, MAX_BUF_SIZE, MAX_IMM_DATA_LEN, MAX_NUM_TASKS,
    MAX_PER_CONNECTION, PRODUCER_SEND_TASK, Producer,
};
use doca_core::device::Capability;
use doca_core::{Data, DevInfo, Error, ErrorCode};
use std::sync::Arc;

/// `struct doca_comch_consumer`.
pub type doca_comch_consumer = Lib3<Consumer>;
/// `struct doca_comch_producer`.
pub type doca_comch_producer = Lib3<Producer>;
/// `struct doca_comch_consumer_task_post_recv`: the generic task.
pub type doca_comch_consumer_task_post_recv = doca_task;
/// `struct doca_comch_producer_task_send`: the generic task.
pub type doca_comch_producer_task_send = doca_task;
/// `doca_comch_consumer_task_post_recv_completion_cb_t`.
pub type doca_comch_consumer_task_post_recv_completion_cb_t = TaskCb;
/// `doca_comch_producer_task_send_completion_cb_t`.
pub type doca_comch_producer_task_send_completion_cb_t = TaskCb;

fn supported(d: &DevInfo) -> Result<()> {
    if d.has_capability(Capability::CommChannel) {
        Ok(())
    } else {
        Err(Error::with_context(
            ErrorCode::NotSupported,
            format!("device {} has no comm channel", d.pci_addr()),
        ))
    }
}

/// The connection behind a C pointer, shared.
///
/// # Safety
/// `conn` is NULL or a live connection.
unsafe fn conn_arc(conn: *mut doca_comch_connection) -> Result<Arc<Connection>> {
    if conn.is_null() {
        return Err(invalid("comch_connection is NULL"));
    }
    // SAFETY: a live connection handed out as `Arc::as_ptr` of its table entry: one
    // more strong count, then a clone of it.
    unsafe {
        Arc::increment_strong_count(conn.cast_const());
        Ok(Arc::from_raw(conn.cast_const()))
    }
}

fn wrap<T>(lib: T, ctx: &doca_core::Ctx) -> Lib3<T> {
    Lib3 {
        lib,
        ctx: doca_ctx3::new(ctx.clone()),
    }
}

// ---- consumer ----

/// `doca_comch_consumer_create`: on an established connection; buffers posted later
/// lie in `buf_mmap` (or any local mmap).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_create(
    comch_connection: *mut doca_comch_connection,
    buf_mmap: *mut doca_mmap,
    consumer: *mut *mut doca_comch_consumer,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let c = unsafe { conn_arc(comch_connection) }?;
        // SAFETY: NULL or a live mmap.
        unsafe { handle(buf_mmap, "buf_mmap") }?;
        new_handle(consumer, "consumer", || {
            let k = Consumer::new(&c)?;
            let ctx = k.ctx().clone();
            Ok(wrap(k, &ctx))
        })
    })
}

/// `doca_comch_consumer_destroy`: only while idle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_destroy(
    consumer: *mut doca_comch_consumer,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { lib_destroy(consumer) }
}

/// `doca_comch_consumer_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_as_ctx(
    consumer: *mut doca_comch_consumer,
) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(consumer) }
}

/// `doca_comch_consumer_cap_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_cap_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, supported)
}

crate::common::handles::getter!(
    /// `doca_comch_consumer_get_id`.
    pub unsafe extern "C" fn doca_comch_consumer_get_id(consumer: *const doca_comch_consumer, id: *mut u32) -> doca_error_t => |c| c.lib.id());

/// `doca_comch_consumer_cap_get_max_num_tasks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_cap_get_max_num_tasks(
    devinfo: *const doca_devinfo,
    max_num_tasks: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_num_tasks, |d| {
        supported(d).map(|()| MAX_NUM_TASKS)
    })
}

/// `doca_comch_consumer_cap_get_max_buf_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_cap_get_max_buf_size(
    devinfo: *const doca_devinfo,
    max_buf_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_size, |d| {
        supported(d).map(|()| MAX_BUF_SIZE)
    })
}

/// `doca_comch_consumer_cap_get_max_buf_list_len`: one buffer per task.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_cap_get_max_buf_list_len(
    devinfo: *const doca_devinfo,
    max_buf_list_len: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_list_len, |d| supported(d).map(|()| 1))
}

/// `doca_comch_consumer_cap_get_max_consumers`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_cap_get_max_consumers(
    devinfo: *const doca_devinfo,
    max_consumers: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_consumers, |d| {
        supported(d).map(|()| MAX_PER_CONNECTION)
    })
}

/// `doca_comch_consumer_cap_get_max_imm_data_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_cap_get_max_imm_data_len(
    devinfo: *const doca_devinfo,
    max_imm_data_len: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_imm_data_len, |d| {
        supported(d).map(|()| MAX_IMM_DATA_LEN)
    })
}

crate::common::handles::getter!(
    /// `doca_comch_consumer_get_imm_data_len`.
    pub unsafe extern "C" fn doca_comch_consumer_get_imm_data_len(consumer: *const doca_comch_consumer, imm_data_len: *mut u32) -> doca_error_t => |c| c.lib.imm_data_len());

crate::common::handles::call!(handle;
    /// `doca_comch_consumer_set_imm_data_len`.
    pub unsafe extern "C" fn doca_comch_consumer_set_imm_data_len(consumer: *mut doca_comch_consumer, imm_data_len: u32) -> doca_error_t => |c| c.lib.set_imm_data_len(imm_data_len));

/// `doca_comch_consumer_task_post_recv_set_conf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_task_post_recv_set_conf(
    consumer: *mut doca_comch_consumer,
    task_completion_cb: doca_comch_consumer_task_post_recv_completion_cb_t,
    task_error_cb: doca_comch_consumer_task_post_recv_completion_cb_t,
    num_post_recv_tasks: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(consumer, "consumer") }?;
        h.lib.set_num_tasks(num_post_recv_tasks)?;
        h.ctx.set_conf(
            &CONSUMER_POST_RECV_TASK,
            task_completion_cb,
            task_error_cb,
            num_post_recv_tasks,
        )
    })
}

/// `doca_comch_consumer_task_post_recv_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_task_post_recv_alloc_init(
    consumer: *mut doca_comch_consumer,
    buf: *mut doca_buf,
    task: *mut *mut doca_comch_consumer_task_post_recv,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(consumer, "consumer") }?;
        let o = out_ptr(task, "task")?;
        let t = h.ctx.alloc_task(&CONSUMER_POST_RECV_TASK, Data(0), |t| {
            t.bufs[1].set(buf);
            Ok(())
        })?;
        // SAFETY: output checked.
        unsafe { put(o, t) };
        Ok(())
    })
}

/// `doca_comch_consumer_task_post_recv_get_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_task_post_recv_get_buf(
    task: *mut doca_comch_consumer_task_post_recv,
) -> *mut doca_buf {
    super::get_buf(task, 1) as *mut doca_buf
}

/// `doca_comch_consumer_task_post_recv_set_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_task_post_recv_set_buf(
    task: *mut doca_comch_consumer_task_post_recv,
    buf: *mut doca_buf,
) {
    super::set_buf(task, 1, buf);
}

fn param(task: *const doca_task, i: usize) -> u64 {
    ffi_value(0, || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.params[i].get())
    })
}

/// The task's immediate data bytes (`params[1..3]`).
fn imm_ptr(task: *mut doca_task) -> *mut u8 {
    ffi_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        // `params` is three contiguous u64 cells: 16 bytes from the second.
        Ok(t.params[1].as_ptr().cast::<u8>())
    })
}

/// `doca_comch_consumer_task_post_recv_get_producer_id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_task_post_recv_get_producer_id(
    task: *mut doca_comch_consumer_task_post_recv,
) -> u32 {
    param(task, 0) as u32
}

/// `doca_comch_consumer_task_post_recv_get_imm_data`: NULL when none came.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_task_post_recv_get_imm_data(
    task: *mut doca_comch_consumer_task_post_recv,
) -> *mut u8 {
    if param(task, 0) >> 32 == 0 {
        return std::ptr::null_mut();
    }
    imm_ptr(task)
}

/// `doca_comch_consumer_task_post_recv_get_imm_data_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_task_post_recv_get_imm_data_len(
    task: *mut doca_comch_consumer_task_post_recv,
) -> u32 {
    (param(task, 0) >> 32) as u32
}

/// `doca_comch_consumer_task_post_recv_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_consumer_task_post_recv_as_task(
    task: *mut doca_comch_consumer_task_post_recv,
) -> *mut doca_task {
    task
}

// ---- producer ----

/// `doca_comch_producer_create`: on an established connection.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_create(
    comch_connection: *mut doca_comch_connection,
    producer: *mut *mut doca_comch_producer,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        let c = unsafe { conn_arc(comch_connection) }?;
        new_handle(producer, "producer", || {
            let p = Producer::new(&c)?;
            let ctx = p.ctx().clone();
            Ok(wrap(p, &ctx))
        })
    })
}

/// `doca_comch_producer_destroy`: only while idle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_destroy(
    producer: *mut doca_comch_producer,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { lib_destroy(producer) }
}

/// `doca_comch_producer_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_as_ctx(
    producer: *mut doca_comch_producer,
) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(producer) }
}

/// `doca_comch_producer_cap_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_cap_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, supported)
}

crate::common::handles::getter!(
    /// `doca_comch_producer_get_id`.
    pub unsafe extern "C" fn doca_comch_producer_get_id(producer: *const doca_comch_producer, id: *mut u32) -> doca_error_t => |p| p.lib.id());

/// `doca_comch_producer_cap_get_max_num_tasks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_cap_get_max_num_tasks(
    devinfo: *const doca_devinfo,
    max_num_tasks: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_num_tasks, |d| {
        supported(d).map(|()| MAX_NUM_TASKS)
    })
}

/// `doca_comch_producer_cap_get_max_buf_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_cap_get_max_buf_size(
    devinfo: *const doca_devinfo,
    max_buf_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_size, |d| {
        supported(d).map(|()| MAX_BUF_SIZE)
    })
}

/// `doca_comch_producer_cap_get_max_buf_list_len`: one buffer per task.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_cap_get_max_buf_list_len(
    devinfo: *const doca_devinfo,
    max_buf_list_len: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_list_len, |d| supported(d).map(|()| 1))
}

/// `doca_comch_producer_cap_get_max_producers`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_cap_get_max_producers(
    devinfo: *const doca_devinfo,
    max_producers: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_producers, |d| {
        supported(d).map(|()| MAX_PER_CONNECTION)
    })
}

/// `doca_comch_producer_task_send_set_conf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_set_conf(
    producer: *mut doca_comch_producer,
    task_completion_cb: doca_comch_producer_task_send_completion_cb_t,
    task_error_cb: doca_comch_producer_task_send_completion_cb_t,
    num_send_tasks: u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(producer, "producer") }?;
        h.lib.set_num_tasks(num_send_tasks)?;
        h.ctx.set_conf(
            &PRODUCER_SEND_TASK,
            task_completion_cb,
            task_error_cb,
            num_send_tasks,
        )
    })
}

/// Stores immediate data in a task's parameters.
fn set_imm(t: &doca_task, imm: *const u8, len: u32) -> Result<()> {
    if len > MAX_IMM_DATA_LEN {
        return Err(invalid(format!(
            "immediate data is at most {MAX_IMM_DATA_LEN} bytes, not {len}"
        )));
    }
    if len > 0 && imm.is_null() {
        return Err(invalid("imm_data is NULL"));
    }
    let mut b = [0u8; 16];
    if len > 0 {
        // SAFETY: the caller passes `len` readable bytes.
        b[..len as usize].copy_from_slice(unsafe { std::slice::from_raw_parts(imm, len as usize) });
    }
    let consumer = t.params[producer_send::consumer_and_imm_len].get() & 0xffff_ffff;
    t.params[producer_send::consumer_and_imm_len].set(consumer | (u64::from(len) << 32));
    t.params[producer_send::imm_lo].set(u64::from_le_bytes(b[..8].try_into().expect("8 bytes")));
    t.params[producer_send::imm_hi].set(u64::from_le_bytes(b[8..].try_into().expect("8 bytes")));
    Ok(())
}

/// `doca_comch_producer_task_send_alloc_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_alloc_init(
    producer: *mut doca_comch_producer,
    buf: *const doca_buf,
    imm_data: *mut u8,
    imm_data_len: u32,
    consumer_id: u32,
    task: *mut *mut doca_comch_producer_task_send,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(producer, "producer") }?;
        let o = out_ptr(task, "task")?;
        let t = h.ctx.alloc_task(&PRODUCER_SEND_TASK, Data(0), |t| {
            t.bufs[0].set(buf);
            t.params[producer_send::consumer_and_imm_len].set(u64::from(consumer_id));
            set_imm(t, imm_data, imm_data_len)
        })?;
        // SAFETY: output checked.
        unsafe { put(o, t) };
        Ok(())
    })
}

/// `doca_comch_producer_task_send_get_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_get_buf(
    task: *mut doca_comch_producer_task_send,
) -> *const doca_buf {
    super::get_buf(task, 0)
}

/// `doca_comch_producer_task_send_set_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_set_buf(
    task: *mut doca_comch_producer_task_send,
    buf: *const doca_buf,
) {
    super::set_buf(task, 0, buf);
}

/// `doca_comch_producer_task_send_get_consumer_id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_get_consumer_id(
    task: *mut doca_comch_producer_task_send,
) -> u32 {
    param(task, 0) as u32
}

/// `doca_comch_producer_task_send_set_consumer_id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_set_consumer_id(
    task: *mut doca_comch_producer_task_send,
    consumer_id: u32,
) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        let imm_len = t.params[producer_send::consumer_and_imm_len].get() & !0xffff_ffff;
        t.params[producer_send::consumer_and_imm_len].set(imm_len | u64::from(consumer_id));
        Ok(())
    })
}

/// `doca_comch_producer_task_send_get_imm_data`: NULL when there is none.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_get_imm_data(
    task: *mut doca_comch_producer_task_send,
) -> *mut u8 {
    if param(task, 0) >> 32 == 0 {
        return std::ptr::null_mut();
    }
    imm_ptr(task)
}

/// `doca_comch_producer_task_send_get_imm_data_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_get_imm_data_len(
    task: *mut doca_comch_producer_task_send,
) -> u32 {
    (param(task, 0) >> 32) as u32
}

/// `doca_comch_producer_task_send_set_imm_data`: copied into the task.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_set_imm_data(
    task: *mut doca_comch_producer_task_send,
    imm_data: *mut u8,
    imm_data_len: u32,
) {
    ffi_value((), || {
        // SAFETY: NULL or a task the program holds.
        let t = unsafe { handle(task, "task") }?;
        set_imm(t, imm_data, imm_data_len)
    })
}

/// `doca_comch_producer_task_send_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_producer_task_send_as_task(
    task: *mut doca_comch_producer_task_send,
) -> *mut doca_task {
    task
}
