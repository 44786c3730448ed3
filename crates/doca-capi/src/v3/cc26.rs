//! DOCA 2.6's names of comch (`doca_cc.h`, `doca_cc_consumer.h`, `doca_cc_producer.h`):
//! the comm channel's task generation before DOCA 2.7 renamed it. Each function is the
//! `doca_comch` function of the same shape over the same objects; a 2.6 producer send
//! carries no immediate data.

#![allow(non_camel_case_types)]

use super::comch::*;
use super::comch_fast::*;
use crate::common::doca_data;
use crate::common::doca_error_t;
use crate::v3::pe::{doca_ctx3, doca_task};
use crate::v22::dev::{doca_dev, doca_dev_rep, doca_devinfo};
use crate::v22::mem::{doca_buf, doca_mmap};
use std::ffi::c_char;

/// `struct doca_cc_server`.
pub type doca_cc_server = doca_comch_server;
/// `struct doca_cc_client`.
pub type doca_cc_client = doca_comch_client;
/// `struct doca_cc_connection`.
pub type doca_cc_connection = doca_comch_connection;
/// `struct doca_cc_task_send`.
pub type doca_cc_task_send = doca_comch_task_send;
/// `enum doca_cc_counter`.
pub type doca_cc_counter = doca_comch_counter;
/// `struct doca_cc_consumer`.
pub type doca_cc_consumer = doca_comch_consumer;
/// `struct doca_cc_producer`.
pub type doca_cc_producer = doca_comch_producer;
/// `struct doca_cc_consumer_task_post_recv`.
pub type doca_cc_consumer_task_post_recv = doca_comch_consumer_task_post_recv;
/// `struct doca_cc_producer_task_send`.
pub type doca_cc_producer_task_send = doca_comch_producer_task_send;
/// `doca_cc_task_send_completion_cb_t`.
pub type doca_cc_task_send_completion_cb_t = doca_comch_task_send_completion_cb_t;
/// `doca_cc_event_msg_recv_cb_t`.
pub type doca_cc_event_msg_recv_cb_t = doca_comch_event_msg_recv_cb_t;
/// `doca_cc_event_connection_status_changed_cb_t`.
pub type doca_cc_event_connection_status_changed_cb_t =
    doca_comch_event_connection_status_changed_cb_t;
/// `doca_cc_event_consumer_cb_t`.
pub type doca_cc_event_consumer_cb_t = doca_comch_event_consumer_cb_t;
/// `doca_cc_consumer_task_post_recv_completion_cb_t`.
pub type doca_cc_consumer_task_post_recv_completion_cb_t =
    doca_comch_consumer_task_post_recv_completion_cb_t;
/// `doca_cc_producer_task_send_completion_cb_t`.
pub type doca_cc_producer_task_send_completion_cb_t = doca_comch_producer_task_send_completion_cb_t;

/// `doca_cc_cap_client_is_supported`: [`doca_comch_cap_client_is_supported`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_cap_client_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_cap_client_is_supported(devinfo) }
}

/// `doca_cc_cap_get_max_clients`: [`doca_comch_cap_get_max_clients`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_cap_get_max_clients(
    devinfo: *const doca_devinfo,
    num_clients: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_cap_get_max_clients(devinfo, num_clients) }
}

/// `doca_cc_cap_get_max_msg_size`: [`doca_comch_cap_get_max_msg_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_cap_get_max_msg_size(
    devinfo: *const doca_devinfo,
    size: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_cap_get_max_msg_size(devinfo, size) }
}

/// `doca_cc_cap_get_max_name_len`: [`doca_comch_cap_get_max_name_len`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_cap_get_max_name_len(
    devinfo: *const doca_devinfo,
    max_name_len: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_cap_get_max_name_len(devinfo, max_name_len) }
}

/// `doca_cc_cap_get_max_recv_queue_size`: [`doca_comch_cap_get_max_recv_queue_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_cap_get_max_recv_queue_size(
    devinfo: *const doca_devinfo,
    size: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_cap_get_max_recv_queue_size(devinfo, size) }
}

/// `doca_cc_cap_get_max_send_tasks`: [`doca_comch_cap_get_max_send_tasks`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_cap_get_max_send_tasks(
    devinfo: *const doca_devinfo,
    max_send_tasks: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_cap_get_max_send_tasks(devinfo, max_send_tasks) }
}

/// `doca_cc_cap_server_is_supported`: [`doca_comch_cap_server_is_supported`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_cap_server_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_cap_server_is_supported(devinfo) }
}

/// `doca_cc_client_as_ctx`: [`doca_comch_client_as_ctx`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_as_ctx(
    comch_client: *mut doca_cc_client,
) -> *mut doca_ctx3 {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_as_ctx(comch_client) }
}

/// `doca_cc_client_create`: [`doca_comch_client_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_create(
    dev: *mut doca_dev,
    name: *const c_char,
    comch_client: *mut *mut doca_cc_client,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_create(dev, name, comch_client) }
}

/// `doca_cc_client_destroy`: [`doca_comch_client_destroy`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_destroy(comch_client: *mut doca_cc_client) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_destroy(comch_client) }
}

/// `doca_cc_client_event_consumer_register`: [`doca_comch_client_event_consumer_register`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_event_consumer_register(
    comch_client: *mut doca_cc_client,
    new_consumer_event_cb: doca_cc_event_consumer_cb_t,
    expired_consumer_event_cb: doca_cc_event_consumer_cb_t,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        doca_comch_client_event_consumer_register(
            comch_client,
            new_consumer_event_cb,
            expired_consumer_event_cb,
        )
    }
}

/// `doca_cc_client_event_msg_recv_register`: [`doca_comch_client_event_msg_recv_register`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_event_msg_recv_register(
    comch_client: *mut doca_cc_client,
    recv_event_cb: doca_cc_event_msg_recv_cb_t,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_event_msg_recv_register(comch_client, recv_event_cb) }
}

/// `doca_cc_client_get_client_ctx`: [`doca_comch_client_get_client_ctx`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_get_client_ctx(
    connection: *const doca_cc_connection,
) -> *mut doca_cc_client {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_get_client_ctx(connection) }
}

/// `doca_cc_client_get_connection`: [`doca_comch_client_get_connection`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_get_connection(
    comch_client: *const doca_cc_client,
    connection: *mut *mut doca_cc_connection,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_get_connection(comch_client, connection) }
}

/// `doca_cc_client_get_device`: [`doca_comch_client_get_device`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_get_device(
    comch_client: *const doca_cc_client,
    dev: *mut *mut doca_dev,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_get_device(comch_client, dev) }
}

/// `doca_cc_client_get_max_msg_size`: [`doca_comch_client_get_max_msg_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_get_max_msg_size(
    comch_client: *const doca_cc_client,
    size: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_get_max_msg_size(comch_client, size) }
}

/// `doca_cc_client_get_recv_queue_size`: [`doca_comch_client_get_recv_queue_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_get_recv_queue_size(
    comch_client: *const doca_cc_client,
    size: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_get_recv_queue_size(comch_client, size) }
}

/// `doca_cc_client_set_max_msg_size`: [`doca_comch_client_set_max_msg_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_set_max_msg_size(
    comch_client: *mut doca_cc_client,
    size: u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_set_max_msg_size(comch_client, size) }
}

/// `doca_cc_client_set_recv_queue_size`: [`doca_comch_client_set_recv_queue_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_set_recv_queue_size(
    comch_client: *mut doca_cc_client,
    size: u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_set_recv_queue_size(comch_client, size) }
}

/// `doca_cc_client_task_send_alloc_init`: [`doca_comch_client_task_send_alloc_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_task_send_alloc_init(
    comch_client: *mut doca_cc_client,
    peer: *mut doca_cc_connection,
    msg: *const std::ffi::c_void,
    len: u32,
    task: *mut *mut doca_cc_task_send,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_client_task_send_alloc_init(comch_client, peer, msg, len, task) }
}

/// `doca_cc_client_task_send_set_conf`: [`doca_comch_client_task_send_set_conf`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_client_task_send_set_conf(
    comch_client: *mut doca_cc_client,
    task_completion_cb: doca_cc_task_send_completion_cb_t,
    task_error_cb: doca_cc_task_send_completion_cb_t,
    num_send_tasks: u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        doca_comch_client_task_send_set_conf(
            comch_client,
            task_completion_cb,
            task_error_cb,
            num_send_tasks,
        )
    }
}

/// `doca_cc_connection_get_counter`: [`doca_comch_connection_get_counter`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_connection_get_counter(
    connection: *const doca_cc_connection,
    counter_type: doca_cc_counter,
    counter_value: *mut u64,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_connection_get_counter(connection, counter_type, counter_value) }
}

/// `doca_cc_connection_get_user_data`: [`doca_comch_connection_get_user_data`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_connection_get_user_data(
    connection: *const doca_cc_connection,
) -> doca_data {
    // SAFETY: the same contract.
    unsafe { doca_comch_connection_get_user_data(connection) }
}

/// `doca_cc_connection_set_user_data`: [`doca_comch_connection_set_user_data`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_connection_set_user_data(
    connection: *mut doca_cc_connection,
    user_data: doca_data,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_connection_set_user_data(connection, user_data) }
}

/// `doca_cc_connection_update_info`: [`doca_comch_connection_update_info`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_connection_update_info(
    connection: *mut doca_cc_connection,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_connection_update_info(connection) }
}

/// `doca_cc_consumer_as_ctx`: [`doca_comch_consumer_as_ctx`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_as_ctx(
    consumer: *mut doca_cc_consumer,
) -> *mut doca_ctx3 {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_as_ctx(consumer) }
}

/// `doca_cc_consumer_cap_get_max_buf_size`: [`doca_comch_consumer_cap_get_max_buf_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_cap_get_max_buf_size(
    devinfo: *const doca_devinfo,
    max_buf_size: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_cap_get_max_buf_size(devinfo, max_buf_size) }
}

/// `doca_cc_consumer_cap_get_max_consumers`: [`doca_comch_consumer_cap_get_max_consumers`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_cap_get_max_consumers(
    devinfo: *const doca_devinfo,
    max_consumers: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_cap_get_max_consumers(devinfo, max_consumers) }
}

/// `doca_cc_consumer_cap_get_max_num_tasks`: [`doca_comch_consumer_cap_get_max_num_tasks`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_cap_get_max_num_tasks(
    devinfo: *const doca_devinfo,
    max_num_tasks: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_cap_get_max_num_tasks(devinfo, max_num_tasks) }
}

/// `doca_cc_consumer_cap_is_supported`: [`doca_comch_consumer_cap_is_supported`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_cap_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_cap_is_supported(devinfo) }
}

/// `doca_cc_consumer_create`: [`doca_comch_consumer_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_create(
    comch_connection: *mut doca_cc_connection,
    buf_mmap: *mut doca_mmap,
    consumer: *mut *mut doca_cc_consumer,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_create(comch_connection, buf_mmap, consumer) }
}

/// `doca_cc_consumer_destroy`: [`doca_comch_consumer_destroy`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_destroy(consumer: *mut doca_cc_consumer) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_destroy(consumer) }
}

/// `doca_cc_consumer_get_id`: [`doca_comch_consumer_get_id`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_get_id(
    consumer: *const doca_cc_consumer,
    id: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_get_id(consumer, id) }
}

/// `doca_cc_consumer_task_post_recv_alloc_init`: [`doca_comch_consumer_task_post_recv_alloc_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_task_post_recv_alloc_init(
    consumer: *mut doca_cc_consumer,
    buf: *mut doca_buf,
    task: *mut *mut doca_cc_consumer_task_post_recv,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_task_post_recv_alloc_init(consumer, buf, task) }
}

/// `doca_cc_consumer_task_post_recv_as_task`: [`doca_comch_consumer_task_post_recv_as_task`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_task_post_recv_as_task(
    task: *mut doca_cc_consumer_task_post_recv,
) -> *mut doca_task {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_task_post_recv_as_task(task) }
}

/// `doca_cc_consumer_task_post_recv_get_buf`: [`doca_comch_consumer_task_post_recv_get_buf`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_task_post_recv_get_buf(
    task: *mut doca_cc_consumer_task_post_recv,
) -> *mut doca_buf {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_task_post_recv_get_buf(task) }
}

/// `doca_cc_consumer_task_post_recv_get_producer_id`: [`doca_comch_consumer_task_post_recv_get_producer_id`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_task_post_recv_get_producer_id(
    task: *mut doca_cc_consumer_task_post_recv,
) -> u32 {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_task_post_recv_get_producer_id(task) }
}

/// `doca_cc_consumer_task_post_recv_set_buf`: [`doca_comch_consumer_task_post_recv_set_buf`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_task_post_recv_set_buf(
    task: *mut doca_cc_consumer_task_post_recv,
    buf: *mut doca_buf,
) {
    // SAFETY: the same contract.
    unsafe { doca_comch_consumer_task_post_recv_set_buf(task, buf) }
}

/// `doca_cc_consumer_task_post_recv_set_conf`: [`doca_comch_consumer_task_post_recv_set_conf`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_consumer_task_post_recv_set_conf(
    consumer: *mut doca_cc_consumer,
    task_completion_cb: doca_cc_consumer_task_post_recv_completion_cb_t,
    task_error_cb: doca_cc_consumer_task_post_recv_completion_cb_t,
    num_post_recv_tasks: u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        doca_comch_consumer_task_post_recv_set_conf(
            consumer,
            task_completion_cb,
            task_error_cb,
            num_post_recv_tasks,
        )
    }
}

/// `doca_cc_producer_as_ctx`: [`doca_comch_producer_as_ctx`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_as_ctx(
    producer: *mut doca_cc_producer,
) -> *mut doca_ctx3 {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_as_ctx(producer) }
}

/// `doca_cc_producer_cap_get_max_buf_size`: [`doca_comch_producer_cap_get_max_buf_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_cap_get_max_buf_size(
    devinfo: *const doca_devinfo,
    max_buf_size: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_cap_get_max_buf_size(devinfo, max_buf_size) }
}

/// `doca_cc_producer_cap_get_max_num_tasks`: [`doca_comch_producer_cap_get_max_num_tasks`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_cap_get_max_num_tasks(
    devinfo: *const doca_devinfo,
    max_num_tasks: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_cap_get_max_num_tasks(devinfo, max_num_tasks) }
}

/// `doca_cc_producer_cap_get_max_producers`: [`doca_comch_producer_cap_get_max_producers`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_cap_get_max_producers(
    devinfo: *const doca_devinfo,
    max_producers: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_cap_get_max_producers(devinfo, max_producers) }
}

/// `doca_cc_producer_cap_is_supported`: [`doca_comch_producer_cap_is_supported`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_cap_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_cap_is_supported(devinfo) }
}

/// `doca_cc_producer_create`: [`doca_comch_producer_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_create(
    comch_connection: *mut doca_cc_connection,
    producer: *mut *mut doca_cc_producer,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_create(comch_connection, producer) }
}

/// `doca_cc_producer_destroy`: [`doca_comch_producer_destroy`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_destroy(producer: *mut doca_cc_producer) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_destroy(producer) }
}

/// `doca_cc_producer_get_id`: [`doca_comch_producer_get_id`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_get_id(
    producer: *const doca_cc_producer,
    id: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_get_id(producer, id) }
}

/// `doca_cc_producer_task_send_alloc_init`: [`doca_comch_producer_task_send_alloc_init`]
/// with no immediate data.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_task_send_alloc_init(
    producer: *mut doca_cc_producer,
    buf: *mut doca_buf,
    consumer_id: u32,
    task: *mut *mut doca_cc_producer_task_send,
) -> doca_error_t {
    // SAFETY: the same contract, with no immediate data.
    unsafe {
        doca_comch_producer_task_send_alloc_init(
            producer,
            buf.cast_const(),
            std::ptr::null_mut(),
            0,
            consumer_id,
            task,
        )
    }
}

/// `doca_cc_producer_task_send_as_task`: [`doca_comch_producer_task_send_as_task`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_task_send_as_task(
    task: *mut doca_cc_producer_task_send,
) -> *mut doca_task {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_task_send_as_task(task) }
}

/// `doca_cc_producer_task_send_get_buf`: [`doca_comch_producer_task_send_get_buf`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_task_send_get_buf(
    task: *mut doca_cc_producer_task_send,
) -> *mut doca_buf {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_task_send_get_buf(task) }.cast_mut()
}

/// `doca_cc_producer_task_send_get_consumer_id`: [`doca_comch_producer_task_send_get_consumer_id`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_task_send_get_consumer_id(
    task: *mut doca_cc_producer_task_send,
) -> u32 {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_task_send_get_consumer_id(task) }
}

/// `doca_cc_producer_task_send_set_buf`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_task_send_set_buf(
    task: *mut doca_cc_producer_task_send,
    buf: *mut doca_buf,
) {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_task_send_set_buf(task, buf.cast_const()) }
}

/// `doca_cc_producer_task_send_set_conf`: [`doca_comch_producer_task_send_set_conf`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_task_send_set_conf(
    producer: *mut doca_cc_producer,
    task_completion_cb: doca_cc_producer_task_send_completion_cb_t,
    task_error_cb: doca_cc_producer_task_send_completion_cb_t,
    num_send_tasks: u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        doca_comch_producer_task_send_set_conf(
            producer,
            task_completion_cb,
            task_error_cb,
            num_send_tasks,
        )
    }
}

/// `doca_cc_producer_task_send_set_consumer_id`: [`doca_comch_producer_task_send_set_consumer_id`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_producer_task_send_set_consumer_id(
    task: *mut doca_cc_producer_task_send,
    consumer_id: u32,
) {
    // SAFETY: the same contract.
    unsafe { doca_comch_producer_task_send_set_consumer_id(task, consumer_id) }
}

/// `doca_cc_server_as_ctx`: [`doca_comch_server_as_ctx`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_as_ctx(
    comch_server: *mut doca_cc_server,
) -> *mut doca_ctx3 {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_as_ctx(comch_server) }
}

/// `doca_cc_server_create`: [`doca_comch_server_create`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_create(
    dev: *mut doca_dev,
    repr: *mut doca_dev_rep,
    name: *const c_char,
    comch_server: *mut *mut doca_cc_server,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_create(dev, repr, name, comch_server) }
}

/// `doca_cc_server_destroy`: [`doca_comch_server_destroy`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_destroy(comch_server: *mut doca_cc_server) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_destroy(comch_server) }
}

/// `doca_cc_server_event_connection_register`: [`doca_comch_server_event_connection_status_changed_register`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_event_connection_register(
    comch_server: *mut doca_cc_server,
    connect_event_cb: doca_cc_event_connection_status_changed_cb_t,
    disconnect_event_cb: doca_cc_event_connection_status_changed_cb_t,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        doca_comch_server_event_connection_status_changed_register(
            comch_server,
            connect_event_cb,
            disconnect_event_cb,
        )
    }
}

/// `doca_cc_server_event_consumer_register`: [`doca_comch_server_event_consumer_register`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_event_consumer_register(
    comch_server: *mut doca_cc_server,
    new_consumer_event_cb: doca_cc_event_consumer_cb_t,
    expired_consumer_event_cb: doca_cc_event_consumer_cb_t,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        doca_comch_server_event_consumer_register(
            comch_server,
            new_consumer_event_cb,
            expired_consumer_event_cb,
        )
    }
}

/// `doca_cc_server_event_msg_recv_register`: [`doca_comch_server_event_msg_recv_register`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_event_msg_recv_register(
    comch_server: *mut doca_cc_server,
    recv_event_cb: doca_cc_event_msg_recv_cb_t,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_event_msg_recv_register(comch_server, recv_event_cb) }
}

/// `doca_cc_server_get_device`: [`doca_comch_server_get_device`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_get_device(
    comch_server: *const doca_cc_server,
    dev: *mut *mut doca_dev,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_get_device(comch_server, dev) }
}

/// `doca_cc_server_get_device_repr`: [`doca_comch_server_get_device_repr`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_get_device_repr(
    comch_server: *const doca_cc_server,
    repr: *mut *mut doca_dev_rep,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_get_device_repr(comch_server, repr) }
}

/// `doca_cc_server_get_max_msg_size`: [`doca_comch_server_get_max_msg_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_get_max_msg_size(
    comch_server: *const doca_cc_server,
    size: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_get_max_msg_size(comch_server, size) }
}

/// `doca_cc_server_get_recv_queue_size`: [`doca_comch_server_get_recv_queue_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_get_recv_queue_size(
    comch_server: *const doca_cc_server,
    size: *mut u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_get_recv_queue_size(comch_server, size) }
}

/// `doca_cc_server_get_server_ctx`: [`doca_comch_server_get_server_ctx`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_get_server_ctx(
    connection: *const doca_cc_connection,
) -> *mut doca_cc_server {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_get_server_ctx(connection) }
}

/// `doca_cc_server_set_max_msg_size`: [`doca_comch_server_set_max_msg_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_set_max_msg_size(
    comch_server: *mut doca_cc_server,
    size: u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_set_max_msg_size(comch_server, size) }
}

/// `doca_cc_server_set_recv_queue_size`: [`doca_comch_server_set_recv_queue_size`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_set_recv_queue_size(
    comch_server: *mut doca_cc_server,
    size: u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_set_recv_queue_size(comch_server, size) }
}

/// `doca_cc_server_task_send_alloc_init`: [`doca_comch_server_task_send_alloc_init`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_task_send_alloc_init(
    comch_server: *mut doca_cc_server,
    peer: *mut doca_cc_connection,
    msg: *const std::ffi::c_void,
    len: u32,
    task: *mut *mut doca_cc_task_send,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { doca_comch_server_task_send_alloc_init(comch_server, peer, msg, len, task) }
}

/// `doca_cc_server_task_send_set_conf`: [`doca_comch_server_task_send_set_conf`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_server_task_send_set_conf(
    comch_server: *mut doca_cc_server,
    task_completion_cb: doca_cc_task_send_completion_cb_t,
    task_error_cb: doca_cc_task_send_completion_cb_t,
    num_send_tasks: u32,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe {
        doca_comch_server_task_send_set_conf(
            comch_server,
            task_completion_cb,
            task_error_cb,
            num_send_tasks,
        )
    }
}

/// `doca_cc_task_send_as_task`: [`doca_comch_task_send_as_task`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_cc_task_send_as_task(task: *mut doca_cc_task_send) -> *mut doca_task {
    // SAFETY: the same contract.
    unsafe { doca_comch_task_send_as_task(task) }
}
