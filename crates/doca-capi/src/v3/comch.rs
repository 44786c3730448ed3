//! `doca_comch.h`: the 3.x comm channel's control path. Servers (DPU side) and clients
//! (host side) are contexts on a progress engine; messages go out as send tasks and
//! come in as events. Everything here turns C arguments into calls on
//! `doca_comm_channel::comch::Comch`, which holds the logic.

use super::lib::{Lib3, lib_as_ctx, lib_destroy};
use super::pe::{TaskCb, doca_ctx3, doca_task};
use crate::common::handles::{Handle, kind};
use crate::common::{
    Result, cstr, doca_data, doca_error_t, ffi, ffi_value, handle, invalid, new_handle, out_ptr,
    put,
};
use crate::v22::dev::{doca_dev, doca_dev_rep, doca_devinfo};
use crate::v22::libs::{devinfo_query, devinfo_value};
use doca_comm_channel::comch::tasks::send;
use doca_comm_channel::comch::{self, Comch, Connection};
use doca_core::Data;
use std::ffi::c_char;
use std::sync::Arc;

/// A server or client as C holds it: the channel, and the device (and representor)
/// handles it was created with, which its getters give back.
#[derive(Debug)]
pub struct ComchC {
    comch: Comch,
    dev: *mut doca_dev,
    rep: *mut doca_dev_rep,
}

impl std::ops::Deref for ComchC {
    type Target = Comch;
    fn deref(&self) -> &Comch {
        &self.comch
    }
}

/// `struct doca_comch_server`.
pub type doca_comch_server = Lib3<ComchC>;
/// `struct doca_comch_client`.
pub type doca_comch_client = Lib3<ComchC>;
/// `struct doca_comch_connection`.
pub type doca_comch_connection = Connection;
/// `struct doca_comch_task_send`: the generic task.
pub type doca_comch_task_send = doca_task;
/// `enum doca_comch_counter`.
pub type doca_comch_counter = std::ffi::c_int;
/// `doca_comch_task_send_completion_cb_t`.
pub type doca_comch_task_send_completion_cb_t = TaskCb;

/// `struct doca_comch_event_msg_recv`, `..._connection_status_changed` and
/// `..._consumer`: events carry nothing beyond the callback's arguments here.
#[repr(C)]
#[derive(Debug)]
pub struct doca_comch_event {
    _private: u8,
}

static EVENT: doca_comch_event = doca_comch_event { _private: 0 };

fn event() -> *mut doca_comch_event {
    (&raw const EVENT).cast_mut()
}

/// `doca_comch_event_msg_recv_cb_t`.
pub type doca_comch_event_msg_recv_cb_t =
    Option<unsafe extern "C" fn(*mut doca_comch_event, *mut u8, u32, *mut Connection)>;
/// `doca_comch_event_connection_status_changed_cb_t`.
pub type doca_comch_event_connection_status_changed_cb_t =
    Option<unsafe extern "C" fn(*mut doca_comch_event, *mut Connection, u8)>;
/// `doca_comch_event_consumer_cb_t`.
pub type doca_comch_event_consumer_cb_t =
    Option<unsafe extern "C" fn(*mut doca_comch_event, *mut Connection, u32)>;

impl Handle for Connection {
    type Kind = kind::Borrowed;
}

// ---- capabilities ----

/// `doca_comch_cap_get_max_name_len`: with the terminating NUL.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_cap_get_max_name_len(
    devinfo: *const doca_devinfo,
    max_name_len: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_name_len, |_| Ok(comch::MAX_NAME_LEN))
}

/// `doca_comch_cap_get_max_msg_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_cap_get_max_msg_size(
    devinfo: *const doca_devinfo,
    size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, size, |d| {
        any_side(d)?;
        Ok(comch::MAX_MSG_SIZE)
    })
}

/// `doca_comch_cap_get_max_recv_queue_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_cap_get_max_recv_queue_size(
    devinfo: *const doca_devinfo,
    size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, size, |d| {
        any_side(d)?;
        Ok(comch::MAX_RECV_QUEUE_SIZE)
    })
}

/// `doca_comch_cap_get_max_clients`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_cap_get_max_clients(
    devinfo: *const doca_devinfo,
    num_clients: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, num_clients, |d| {
        comch::server_supported(d)?;
        Ok(comch::MAX_CLIENTS)
    })
}

/// `doca_comch_cap_get_max_send_tasks`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_cap_get_max_send_tasks(
    devinfo: *const doca_devinfo,
    max_send_tasks: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_send_tasks, |d| {
        any_side(d)?;
        Ok(comch::MAX_SEND_TASKS)
    })
}

/// `doca_comch_cap_server_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_cap_server_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, comch::server_supported)
}

/// `doca_comch_cap_client_is_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_cap_client_is_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, comch::client_supported)
}

fn any_side(d: &doca_core::DevInfo) -> Result<()> {
    comch::server_supported(d).or_else(|_| comch::client_supported(d))
}

// ---- server and client ----

/// Makes the handle, and tells the channel its address (its connections name it).
fn create(
    out: *mut *mut Lib3<ComchC>,
    dev: *mut doca_dev,
    rep: *mut doca_dev_rep,
    make: impl FnOnce() -> Result<Comch>,
) -> Result<()> {
    new_handle(out, "output", || {
        let comch = make()?;
        let ctx = doca_ctx3::new(comch.ctx().clone());
        Ok(Lib3 {
            lib: ComchC { comch, dev, rep },
            ctx,
        })
    })?;
    // SAFETY: `out` was checked and written by new_handle.
    let h = unsafe { *out };
    // SAFETY: the handle just made.
    unsafe { &*h }.lib.set_owner(h as usize);
    Ok(())
}

/// `doca_comch_server_create`: serves `name` to the host function `repr` stands for.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_server_create(
    dev: *mut doca_dev,
    repr: *mut doca_dev_rep,
    name: *const c_char,
    comch_server: *mut *mut doca_comch_server,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles and a C string.
        let (d, r, n) = unsafe {
            (
                handle(dev, "dev")?,
                handle(repr, "repr")?,
                cstr(name, "name")?,
            )
        };
        create(comch_server, dev, repr, || Comch::server(&d.dev, &r.rep, n))
    })
}

/// `doca_comch_client_create`: a client of server `name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_client_create(
    dev: *mut doca_dev,
    name: *const c_char,
    comch_client: *mut *mut doca_comch_client,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle and a C string.
        let (d, n) = unsafe { (handle(dev, "dev")?, cstr(name, "name")?) };
        create(comch_client, dev, std::ptr::null_mut(), || {
            Comch::client(&d.dev, n)
        })
    })
}

/// The handle of the right kind (server or client).
///
/// # Safety
/// `p` is NULL or a live handle.
unsafe fn side<'a>(p: *const Lib3<ComchC>, server: bool) -> Result<&'a Lib3<ComchC>> {
    // SAFETY: the caller's contract.
    let h = unsafe {
        handle(
            p,
            if server {
                "comch_server"
            } else {
                "comch_client"
            },
        )
    }?;
    if h.lib.is_server() != server {
        return Err(invalid(if server {
            "this is a comch client, not a server"
        } else {
            "this is a comch server, not a client"
        }));
    }
    Ok(h)
}

macro_rules! both_sides {
    (pub unsafe extern "C" fn $sf:ident($sh:ident : $sty:ty $(, $arg:ident : $ty:ty)*) -> doca_error_t =>
     pub unsafe extern "C" fn $cf:ident($ch:ident : $cty:ty $(, $arg2:ident : $ty2:ty)*) -> doca_error_t =>
     |$h:ident| $body:expr) => {
        #[doc = concat!("`", stringify!($sf), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $sf($sh: $sty $(, $arg: $ty)*) -> doca_error_t {
            ffi(|| {
                // SAFETY: NULL or a live handle.
                let $h = unsafe { side($sh, true) }?;
                $body
            })
        }
        #[doc = concat!("`", stringify!($cf), "`.")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $cf($ch: $cty $(, $arg2: $ty2)*) -> doca_error_t {
            ffi(|| {
                // SAFETY: NULL or a live handle.
                let $h = unsafe { side($ch, false) }?;
                $body
            })
        }
    };
}

/// `doca_comch_server_destroy`: only while idle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_server_destroy(
    comch_server: *mut doca_comch_server,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    if let Err(e) = unsafe { side(comch_server, true) } {
        return ffi(|| Err(e));
    }
    // SAFETY: a live handle, destroyed once.
    unsafe { lib_destroy(comch_server) }
}

/// `doca_comch_client_destroy`: only while idle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_client_destroy(
    comch_client: *mut doca_comch_client,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    if let Err(e) = unsafe { side(comch_client, false) } {
        return ffi(|| Err(e));
    }
    // SAFETY: a live handle, destroyed once.
    unsafe { lib_destroy(comch_client) }
}

both_sides!(
    pub unsafe extern "C" fn doca_comch_server_set_max_msg_size(comch_server: *mut doca_comch_server, size: u32) -> doca_error_t =>
    pub unsafe extern "C" fn doca_comch_client_set_max_msg_size(comch_client: *mut doca_comch_client, size: u32) -> doca_error_t =>
    |h| h.lib.set_max_msg_size(size));
both_sides!(
    pub unsafe extern "C" fn doca_comch_server_get_max_msg_size(comch_server: *const doca_comch_server, size: *mut u32) -> doca_error_t =>
    pub unsafe extern "C" fn doca_comch_client_get_max_msg_size(comch_client: *const doca_comch_client, size: *mut u32) -> doca_error_t =>
    |h| {
    let o = out_ptr(size, "size")?;
    // SAFETY: output checked.
    unsafe { put(o, h.lib.max_msg_size()) };
    Ok(())
});
both_sides!(
    pub unsafe extern "C" fn doca_comch_server_set_recv_queue_size(comch_server: *mut doca_comch_server, size: u32) -> doca_error_t =>
    pub unsafe extern "C" fn doca_comch_client_set_recv_queue_size(comch_client: *mut doca_comch_client, size: u32) -> doca_error_t =>
    |h| h.lib.set_recv_queue_size(size));
both_sides!(
    pub unsafe extern "C" fn doca_comch_server_get_recv_queue_size(comch_server: *const doca_comch_server, size: *mut u32) -> doca_error_t =>
    pub unsafe extern "C" fn doca_comch_client_get_recv_queue_size(comch_client: *const doca_comch_client, size: *mut u32) -> doca_error_t =>
    |h| {
    let o = out_ptr(size, "size")?;
    // SAFETY: output checked.
    unsafe { put(o, h.lib.recv_queue_size()) };
    Ok(())
});
both_sides!(
pub unsafe extern "C" fn doca_comch_server_get_device(comch_server: *const doca_comch_server, dev: *mut *mut doca_dev) -> doca_error_t =>
pub unsafe extern "C" fn doca_comch_client_get_device(comch_client: *const doca_comch_client, dev: *mut *mut doca_dev) -> doca_error_t =>
|h| {
    let o = out_ptr(dev, "dev")?;
    // SAFETY: output checked.
    unsafe { put(o, h.lib.dev) };
    Ok(())
});

/// `doca_comch_server_get_device_repr`: the representor given at creation.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_server_get_device_repr(
    comch_server: *const doca_comch_server,
    repr: *mut *mut doca_dev_rep,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { side(comch_server, true) }?;
        let o = out_ptr(repr, "repr")?;
        // SAFETY: output checked.
        unsafe { put(o, h.lib.rep) };
        Ok(())
    })
}

/// `doca_comch_server_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_server_as_ctx(
    comch_server: *mut doca_comch_server,
) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(comch_server) }
}

/// `doca_comch_client_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_client_as_ctx(
    comch_client: *mut doca_comch_client,
) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(comch_client) }
}

/// `doca_comch_client_get_connection`: once the client runs.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_client_get_connection(
    comch_client: *const doca_comch_client,
    connection: *mut *mut doca_comch_connection,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { side(comch_client, false) }?;
        let o = out_ptr(connection, "connection")?;
        let c = h.lib.connection()?;
        // SAFETY: output checked; the client keeps the connection until it starts
        // again or is destroyed.
        unsafe { put(o, Arc::as_ptr(&c).cast_mut()) };
        Ok(())
    })
}

/// `doca_comch_server_disconnect`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_server_disconnect(
    comch_server: *mut doca_comch_server,
    connection: *mut doca_comch_connection,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { side(comch_server, true) }?;
        if connection.is_null() {
            return Err(invalid("connection is NULL"));
        }
        h.lib.disconnect(connection)
    })
}

// ---- send tasks ----

both_sides!(
pub unsafe extern "C" fn doca_comch_server_task_send_set_conf(comch_server: *mut doca_comch_server, task_completion_cb: doca_comch_task_send_completion_cb_t, task_error_cb: doca_comch_task_send_completion_cb_t, num_send_tasks: u32) -> doca_error_t =>
pub unsafe extern "C" fn doca_comch_client_task_send_set_conf(comch_client: *mut doca_comch_client, task_completion_cb: doca_comch_task_send_completion_cb_t, task_error_cb: doca_comch_task_send_completion_cb_t, num_send_tasks: u32) -> doca_error_t =>
|h| {
    if num_send_tasks > comch::MAX_SEND_TASKS {
        return Err(invalid(format!(
            "{num_send_tasks} send tasks; at most {} (doca_comch_cap_get_max_send_tasks)",
            comch::MAX_SEND_TASKS
        )));
    }
    h.ctx.set_conf(&comch::SEND_TASK, task_completion_cb, task_error_cb, num_send_tasks)?;
    h.lib.set_send_tasks(num_send_tasks)
});

both_sides!(
pub unsafe extern "C" fn doca_comch_server_task_send_alloc_init(comch_server: *mut doca_comch_server, peer: *mut doca_comch_connection, msg: *const std::ffi::c_void, len: u32, task: *mut *mut doca_comch_task_send) -> doca_error_t =>
pub unsafe extern "C" fn doca_comch_client_task_send_alloc_init(comch_client: *mut doca_comch_client, peer: *mut doca_comch_connection, msg: *const std::ffi::c_void, len: u32, task: *mut *mut doca_comch_task_send) -> doca_error_t =>
|h| {
    let o = out_ptr(task, "task")?;
    if peer.is_null() || msg.is_null() {
        return Err(invalid("the connection or the message is NULL"));
    }
    if len == 0 || len > h.lib.max_msg_size() {
        return Err(invalid(format!(
            "a message is 1 to {} bytes (the context's max_msg_size), not {len}",
            h.lib.max_msg_size()
        )));
    }
    let t = h.ctx.alloc_task(&comch::SEND_TASK, Data(0), |t| {
        t.params[send::connection].set(peer as u64);
        t.params[send::msg].set(msg as u64);
        t.params[send::len].set(u64::from(len));
        Ok(())
    })?;
    // SAFETY: output checked.
    unsafe { put(o, t) };
    Ok(())
});

/// `doca_comch_task_send_as_task`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_task_send_as_task(
    task: *mut doca_comch_task_send,
) -> *mut doca_task {
    task
}

fn task_param(task: *const doca_task, i: usize) -> u64 {
    ffi_value(0, || {
        // SAFETY: NULL or a task the program holds.
        Ok(unsafe { handle(task, "task") }?.params[i].get())
    })
}

/// `doca_comch_task_send_get_peer`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_task_send_get_peer(
    task: *const doca_comch_task_send,
) -> *mut doca_comch_connection {
    task_param(task, 0) as *mut Connection
}

/// `doca_comch_task_send_get_msg`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_task_send_get_msg(
    task: *const doca_comch_task_send,
) -> *const std::ffi::c_void {
    task_param(task, 1) as *const std::ffi::c_void
}

/// `doca_comch_task_send_get_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_task_send_get_len(task: *const doca_comch_task_send) -> u32 {
    task_param(task, 2) as u32
}

// ---- events ----

both_sides!(
pub unsafe extern "C" fn doca_comch_server_event_msg_recv_register(comch_server: *mut doca_comch_server, recv_event_cb: doca_comch_event_msg_recv_cb_t) -> doca_error_t =>
pub unsafe extern "C" fn doca_comch_client_event_msg_recv_register(comch_client: *mut doca_comch_client, recv_event_cb: doca_comch_event_msg_recv_cb_t) -> doca_error_t =>
|h| {
    let cb = recv_event_cb.ok_or_else(|| invalid("recv_event_cb is NULL"))?;
    h.lib.on_message(move |conn, msg| {
        let c = conn as *const Connection as *mut Connection;
        // SAFETY: the program's callback, with the message (valid during the call)
        // and its connection.
        unsafe { cb(event(), msg.as_mut_ptr(), msg.len() as u32, c) };
    })
});

/// `doca_comch_server_event_connection_status_changed_register`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_server_event_connection_status_changed_register(
    comch_server: *mut doca_comch_server,
    connect_event_cb: doca_comch_event_connection_status_changed_cb_t,
    disconnect_event_cb: doca_comch_event_connection_status_changed_cb_t,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { side(comch_server, true) }?;
        let (Some(up), Some(down)) = (connect_event_cb, disconnect_event_cb) else {
            return Err(invalid(
                "both the connect and the disconnect callback are needed",
            ));
        };
        let call = |f: unsafe extern "C" fn(*mut doca_comch_event, *mut Connection, u8)| {
            move |conn: &Connection, ok: bool| {
                // SAFETY: the program's callback, with the connection.
                unsafe {
                    f(
                        event(),
                        conn as *const Connection as *mut Connection,
                        u8::from(ok),
                    )
                }
            }
        };
        h.lib.on_connection(call(up), call(down))
    })
}

both_sides!(
pub unsafe extern "C" fn doca_comch_server_event_consumer_register(comch_server: *mut doca_comch_server, new_consumer_event_cb: doca_comch_event_consumer_cb_t, expired_consumer_event_cb: doca_comch_event_consumer_cb_t) -> doca_error_t =>
pub unsafe extern "C" fn doca_comch_client_event_consumer_register(comch_client: *mut doca_comch_client, new_consumer_event_cb: doca_comch_event_consumer_cb_t, expired_consumer_event_cb: doca_comch_event_consumer_cb_t) -> doca_error_t =>
|h| {
    let (Some(new), Some(expired)) = (new_consumer_event_cb, expired_consumer_event_cb) else {
        return Err(invalid("both consumer callbacks are needed"));
    };
    let call = |f: unsafe extern "C" fn(*mut doca_comch_event, *mut Connection, u32)| {
        move |conn: &Connection, id: u32| {
            // SAFETY: the program's callback, with the connection and the id.
            unsafe { f(event(), conn as *const Connection as *mut Connection, id) }
        }
    };
    h.lib.on_consumer(call(new), call(expired))
});

// ---- connections ----

/// `doca_comch_connection_set_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_connection_set_user_data(
    connection: *mut doca_comch_connection,
    user_data: doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        unsafe { handle(connection, "connection") }?.set_user_data(user_data);
        Ok(())
    })
}

/// `doca_comch_connection_get_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_connection_get_user_data(
    connection: *const doca_comch_connection,
) -> doca_data {
    ffi_value(Data(0), || {
        // SAFETY: NULL or a live connection.
        Ok(unsafe { handle(connection, "connection") }?.user_data())
    })
}

fn owner(connection: *const Connection, server: bool) -> *mut Lib3<ComchC> {
    ffi_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or a live connection.
        let c = unsafe { handle(connection, "connection") }?;
        Ok(if c.is_server() == server {
            c.owner() as *mut Lib3<ComchC>
        } else {
            std::ptr::null_mut()
        })
    })
}

/// `doca_comch_server_get_server_ctx`: NULL for a client's connection.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_server_get_server_ctx(
    connection: *const doca_comch_connection,
) -> *mut doca_comch_server {
    owner(connection, true)
}

/// `doca_comch_client_get_client_ctx`: NULL for a server's connection.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_client_get_client_ctx(
    connection: *const doca_comch_connection,
) -> *mut doca_comch_client {
    owner(connection, false)
}

/// `doca_comch_connection_update_info`: counters are always current here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_connection_update_info(
    connection: *mut doca_comch_connection,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        unsafe { handle(connection, "connection") }?;
        Ok(())
    })
}

/// `doca_comch_connection_get_counter`: `DOCA_COMCH_COUNTER_SENT_MESSAGES` (1) to
/// `_RECV_BYTES` (4).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comch_connection_get_counter(
    connection: *const doca_comch_connection,
    counter_type: doca_comch_counter,
    counter_value: *mut u64,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        let c = unsafe { handle(connection, "connection") }?;
        let o = out_ptr(counter_value, "counter_value")?;
        let v = match counter_type {
            1..=4 => c.counters()[counter_type as usize - 1],
            t => return Err(invalid(format!("counter type {t} is not 1 to 4"))),
        };
        // SAFETY: output checked.
        unsafe { put(o, v) };
        Ok(())
    })
}
