//! `doca_rdma.h` of the task generation: the RDMA context, its connections (exported
//! descriptors), its properties and capabilities, and its tasks (made from doca-rdma's
//! task table). Everything turns C arguments into calls on `doca_rdma::Rdma`.

use super::lib::{Lib3, lib_as_ctx, lib_destroy};
use super::pe::{doca_ctx3, doca_task};
use super::sync_event::doca_sync_event_remote_net;
use crate::common::handles::{Handle, kind};
use crate::common::{
    Result, doca_data, doca_error_t, err, ffi, ffi_value, handle, invalid, new_handle, out_ptr, put,
};
use crate::v22::dev::{doca_dev, doca_devinfo};
use crate::v22::libs::{devinfo_query, devinfo_value};
use crate::v22::mem::doca_buf;
use crate::v22::rdma::{doca_rdma_gid, gid_count, gids_into, rdma_dev};
use doca_core::ErrorCode;
use doca_core::exec::TaskInputs;
use doca_rdma::{Connection, ConnectionEvent, Rdma, slot};
use std::ffi::c_void;
use std::sync::Mutex;

/// What the C handle keeps beside the context: the descriptors handed out (valid until
/// the context is destroyed or exports again) and the connection callbacks.
#[derive(Debug)]
pub struct RdmaC {
    rdma: Rdma,
    descs: Mutex<Vec<Box<[u8]>>>,
}

/// `struct doca_rdma`.
pub type doca_rdma3 = Lib3<RdmaC>;
/// `struct doca_rdma_connection`.
pub type doca_rdma_connection = Connection;

impl Handle for Connection {
    type Kind = kind::Borrowed;
}

/// `doca_rdma_connection_established_cb_t`.
pub type doca_rdma_connection_established_cb_t =
    Option<unsafe extern "C" fn(*mut doca_rdma_connection, doca_data, doca_data)>;
/// `doca_rdma_connection_failure_cb_t`.
pub type doca_rdma_connection_failure_cb_t = doca_rdma_connection_established_cb_t;
/// `doca_rdma_connection_disconnection_cb_t`.
pub type doca_rdma_connection_disconnection_cb_t = doca_rdma_connection_established_cb_t;
/// `doca_rdma_connection_request_cb_t`.
pub type doca_rdma_connection_request_cb_t =
    Option<unsafe extern "C" fn(*mut doca_rdma_connection, doca_data)>;
/// `enum doca_rdma_transport_type`.
pub type doca_rdma_transport_type = u32;
/// `enum doca_mtu_size`.
pub type doca_mtu_size = u32;
/// `enum doca_rdma_opcode`.
pub type doca_rdma_opcode = u32;
/// `doca_be32_t`.
pub type doca_be32_t = u32;

/// `struct doca_gpu_dev_rdma` (no GPU data path here).
#[repr(C)]
#[derive(Debug)]
pub struct doca_gpu_dev_rdma {
    _private: [u8; 0],
}

fn no_device_datapath(what: &str) -> doca_core::Error {
    err(
        ErrorCode::NotSupported,
        format!("{what}: this device has the CPU data path only (no DPA or GPU)"),
    )
}

/// The RDMA context of a handle.
unsafe fn rdma_ref<'a>(p: *const doca_rdma3) -> Result<&'a doca_rdma3> {
    // SAFETY: the caller's contract: NULL or a live handle.
    unsafe { handle(p, "rdma") }
}

// ---- the context ----

/// `doca_rdma_create`: an idle RDMA context on `dev`.
#[unsafe(export_name = "doca3__rdma_create")]
pub unsafe extern "C" fn doca_rdma_create(
    dev: *mut doca_dev,
    rdma: *mut *mut doca_rdma3,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live device.
        let d = unsafe { handle(dev, "dev") }?;
        new_handle(rdma, "rdma", || {
            let r = Rdma::new(&d.dev)?;
            let ctx = r.ctx().clone();
            Ok(Lib3 {
                lib: RdmaC {
                    rdma: r,
                    descs: Mutex::new(Vec::new()),
                },
                ctx: doca_ctx3::new(ctx),
            })
        })
    })
}

/// `doca_rdma_destroy`: only while idle.
#[unsafe(export_name = "doca3__rdma_destroy")]
pub unsafe extern "C" fn doca_rdma_destroy(rdma: *mut doca_rdma3) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { lib_destroy(rdma) }
}

/// `doca_rdma_as_ctx`.
#[unsafe(export_name = "doca3__rdma_as_ctx")]
pub unsafe extern "C" fn doca_rdma_as_ctx(rdma: *mut doca_rdma3) -> *mut doca_ctx3 {
    // SAFETY: NULL or a live handle.
    unsafe { lib_as_ctx(rdma) }
}

/// `doca_rdma_export`: a new connection and its descriptor (valid until the context
/// is destroyed).
#[unsafe(export_name = "doca3__rdma_export")]
pub unsafe extern "C" fn doca_rdma_export(
    rdma: *mut doca_rdma3,
    local_rdma_conn_details: *mut *const c_void,
    local_rdma_conn_details_size: *mut usize,
    rdma_connection: *mut *mut doca_rdma_connection,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { rdma_of(rdma) }?;
        let d = out_ptr(local_rdma_conn_details, "local_rdma_conn_details")?;
        let n = out_ptr(local_rdma_conn_details_size, "local_rdma_conn_details_size")?;
        let c = out_ptr(rdma_connection, "rdma_connection")?;
        let (desc, conn) = h.lib.rdma.export()?;
        let desc: Box<[u8]> = desc.into_boxed_slice();
        let (p, len) = (desc.as_ptr(), desc.len());
        h.lib
            .descs
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(desc);
        // SAFETY: outputs checked; the descriptor's bytes stay in the handle; the
        // connection stays in the context until it is destroyed or starts again.
        unsafe {
            put(d, p as *const c_void);
            put(n, len);
            put(c, std::sync::Arc::as_ptr(&conn).cast_mut());
        }
        Ok(())
    })
}

/// `doca_rdma_connect`: connects a connection from `doca_rdma_export` to the peer's.
#[unsafe(export_name = "doca3__rdma_connect")]
pub unsafe extern "C" fn doca_rdma_connect(
    rdma: *mut doca_rdma3,
    remote_rdma_conn_details: *const c_void,
    remote_rdma_conn_details_size: usize,
    rdma_connection: *mut doca_rdma_connection,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { rdma_of(rdma) }?;
        if remote_rdma_conn_details.is_null() || remote_rdma_conn_details_size == 0 {
            return Err(invalid("the remote connection details are NULL or empty"));
        }
        if rdma_connection.is_null() {
            return Err(invalid("rdma_connection is NULL"));
        }
        // SAFETY: the program's buffer of that size (the C contract).
        let desc = unsafe {
            std::slice::from_raw_parts(
                remote_rdma_conn_details as *const u8,
                remote_rdma_conn_details_size,
            )
        };
        let conn = h
            .lib
            .rdma
            .connections()
            .into_iter()
            .find(|c| std::ptr::eq(std::sync::Arc::as_ptr(c), rdma_connection))
            .ok_or_else(|| invalid("the connection is not one this context exported"))?;
        h.lib.rdma.connect(desc, &conn)
    })
}

/// The handle, checked.
unsafe fn rdma_of<'a>(p: *mut doca_rdma3) -> Result<&'a doca_rdma3> {
    // SAFETY: the caller's contract.
    unsafe { rdma_ref(p) }
}

/// `doca_rdma_connection_disconnect`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_connection_disconnect(
    rdma_connection: *mut doca_rdma_connection,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        let c = unsafe { handle(rdma_connection, "rdma_connection") }?;
        c.disconnect()
    })
}

/// `doca_rdma_connection_set_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_connection_set_user_data(
    rdma_connection: *mut doca_rdma_connection,
    connection_user_data: doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        let c = unsafe { handle(rdma_connection, "rdma_connection") }?;
        c.set_user_data(connection_user_data);
        Ok(())
    })
}

/// `doca_rdma_connection_get_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_connection_get_user_data(
    rdma_connection: *const doca_rdma_connection,
    connection_user_data: *mut doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        let c = unsafe { handle(rdma_connection, "rdma_connection") }?;
        let o = out_ptr(
            connection_user_data.cast_const().cast_mut(),
            "connection_user_data",
        )?;
        // SAFETY: output checked.
        unsafe { put(o, c.user_data()) };
        Ok(())
    })
}

/// `doca_rdma_connection_get_id`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_connection_get_id(
    rdma_connection: *const doca_rdma_connection,
    connection_id: *mut u32,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        let c = unsafe { handle(rdma_connection, "rdma_connection") }?;
        let o = out_ptr(connection_id, "connection_id")?;
        // SAFETY: output checked.
        unsafe { put(o, c.id()) };
        Ok(())
    })
}

/// `doca_rdma_set_connection_state_callbacks`: called from progress: a request (a
/// listening server), established and failed connection manager connections, and
/// connections that end.
#[unsafe(export_name = "doca3__rdma_set_connection_state_callbacks")]
pub unsafe extern "C" fn doca_rdma_set_connection_state_callbacks(
    rdma: *mut doca_rdma3,
    doca_rdma_connect_request_cb: doca_rdma_connection_request_cb_t,
    doca_rdma_connect_established_cb: doca_rdma_connection_established_cb_t,
    doca_rdma_connect_failure_cb: doca_rdma_connection_failure_cb_t,
    doca_rdma_disconnect_cb: doca_rdma_connection_disconnection_cb_t,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { rdma_of(rdma) }?;
        if doca_rdma_connect_established_cb.is_none()
            || doca_rdma_connect_failure_cb.is_none()
            || doca_rdma_disconnect_cb.is_none()
        {
            return Err(invalid(
                "the established, failure and disconnection callbacks are needed (the request callback may be NULL for a client)",
            ));
        }
        let ctx = std::ptr::addr_of!(h.ctx) as usize;
        h.lib.rdma.on_connection_event(move |c, ev| {
            // SAFETY: the context lives while it reports events (they come on its
            // progress).
            let ctx_data = unsafe { &*(ctx as *const doca_ctx3) }.user_data.get();
            let conn = std::sync::Arc::as_ptr(c).cast_mut();
            let cb = match ev {
                ConnectionEvent::Requested => {
                    match doca_rdma_connect_request_cb {
                        // SAFETY: the program's callback, with its connection.
                        Some(f) => unsafe { f(conn, ctx_data) },
                        // A client with no request callback turns requests away.
                        None => {
                            let _ = c.reject();
                        }
                    }
                    return;
                }
                ConnectionEvent::Established => doca_rdma_connect_established_cb,
                ConnectionEvent::Disconnected => doca_rdma_disconnect_cb,
                ConnectionEvent::Failed => doca_rdma_connect_failure_cb,
            };
            if let Some(f) = cb {
                // SAFETY: the program's callback, with its connection.
                unsafe { f(conn, c.user_data(), ctx_data) };
            }
        });
        Ok(())
    })
}

// ---- the connection manager ----

/// `struct doca_rdma_addr`: an address and port to connect to.
#[derive(Debug)]
pub struct doca_rdma_addr {
    kind: doca_rdma_addr_type,
    text: std::ffi::CString,
    addr: std::net::SocketAddr,
}

impl Handle for doca_rdma_addr {
    type Kind = kind::Boxed;
}

/// `enum doca_rdma_addr_type`.
pub type doca_rdma_addr_type = u32;

/// `doca_rdma_addr_create`: an IPv4 or IPv6 address (GIDs are written as IPv6).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_addr_create(
    addr_type: doca_rdma_addr_type,
    address: *const std::ffi::c_char,
    port: u16,
    addr: *mut *mut doca_rdma_addr,
) -> doca_error_t {
    ffi(|| {
        if address.is_null() {
            return Err(invalid("address is NULL"));
        }
        // SAFETY: a NUL-terminated string of the program's (the C contract).
        let text = unsafe { std::ffi::CStr::from_ptr(address) };
        let t = text
            .to_str()
            .map_err(|_| invalid("the address is not text"))?;
        let ip: std::net::IpAddr = match addr_type {
            0 => t
                .parse::<std::net::Ipv4Addr>()
                .map_err(|_| invalid(format!("'{t}' is not an IPv4 address")))?
                .into(),
            1 | 2 => t
                .parse::<std::net::Ipv6Addr>()
                .map_err(|_| invalid(format!("'{t}' is not an IPv6 address or GID")))?
                .into(),
            k => return Err(invalid(format!("address type {k} is unknown"))),
        };
        new_handle(addr, "addr", || {
            Ok(doca_rdma_addr {
                kind: addr_type,
                text: text.to_owned(),
                addr: std::net::SocketAddr::new(ip, port),
            })
        })
    })
}

/// `doca_rdma_addr_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_addr_destroy(addr: *mut doca_rdma_addr) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle, freed once.
        unsafe { crate::common::free_handle(addr, "addr") }
    })
}

/// `doca_rdma_addr_get_params`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_addr_get_params(
    addr: *mut doca_rdma_addr,
    addr_type: *mut doca_rdma_addr_type,
    address: *mut *const std::ffi::c_char,
    port: *mut u16,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let a = unsafe { handle(addr, "addr") }?;
        let t = out_ptr(addr_type, "addr_type")?;
        let s = out_ptr(address, "address")?;
        let p = out_ptr(port, "port")?;
        // SAFETY: outputs checked; the text lives in the handle.
        unsafe {
            put(t, a.kind);
            put(s, a.text.as_ptr());
            put(p, a.addr.port());
        }
        Ok(())
    })
}

/// `doca_rdma_start_listen_to_port`: once the context runs.
#[unsafe(export_name = "doca3__rdma_start_listen_to_port")]
pub unsafe extern "C" fn doca_rdma_start_listen_to_port(
    rdma: *mut doca_rdma3,
    port: u16,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { rdma_of(rdma) }?
            .lib
            .rdma
            .start_listen_to_port(port)
    })
}

/// `doca_rdma_stop_listen_to_port`.
#[unsafe(export_name = "doca3__rdma_stop_listen_to_port")]
pub unsafe extern "C" fn doca_rdma_stop_listen_to_port(
    rdma: *mut doca_rdma3,
    port: u16,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { rdma_of(rdma) }?.lib.rdma.stop_listen_to_port(port)
    })
}

/// `doca_rdma_connect_to_addr`: the established or failure callback follows.
#[unsafe(export_name = "doca3__rdma_connect_to_addr")]
pub unsafe extern "C" fn doca_rdma_connect_to_addr(
    rdma: *mut doca_rdma3,
    addr: *mut doca_rdma_addr,
    connection_user_data: doca_data,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { rdma_of(rdma) }?;
        // SAFETY: NULL or a live handle.
        let a = unsafe { handle(addr, "addr") }?;
        h.lib.rdma.connect_to_addr(a.addr, connection_user_data)?;
        Ok(())
    })
}

/// `doca_rdma_connection_accept`: private data is not carried (none of the peers
/// here reads it).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_connection_accept(
    rdma_connection: *mut doca_rdma_connection,
    private_data: *mut c_void,
    private_data_len: u8,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        let c = unsafe { handle(rdma_connection, "rdma_connection") }?;
        if private_data.is_null() != (private_data_len == 0) {
            return Err(invalid(
                "private data and its length go together (NULL and 0 for none)",
            ));
        }
        c.accept()
    })
}

/// `doca_rdma_connection_reject`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_connection_reject(
    rdma_connection: *mut doca_rdma_connection,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live connection.
        unsafe { handle(rdma_connection, "rdma_connection") }?.reject()
    })
}

// ---- capabilities ----

crate::v22::rdma::cap_value!(pub unsafe extern "C" fn doca_rdma_cap_get_max_recv_queue_size(devinfo: *const doca_devinfo, max_recv_queue_size: *mut u32) -> doca_error_t => ::doca_rdma::MAX_QUEUE_SIZE);
crate::v22::rdma::cap_value!(pub unsafe extern "C" fn doca_rdma_cap_get_max_send_queue_size(devinfo: *const doca_devinfo, max_send_queue_size: *mut u32) -> doca_error_t => ::doca_rdma::MAX_QUEUE_SIZE);
crate::v22::rdma::cap_value!(pub unsafe extern "C" fn doca_rdma_cap_get_max_send_buf_list_len(devinfo: *const doca_devinfo, max_send_buf_list_len: *mut u32) -> doca_error_t => ::doca_rdma::MAX_SEND_BUF_LIST_LEN);
crate::v22::rdma::cap_value!(pub unsafe extern "C" fn doca_rdma_cap_get_max_message_size(devinfo: *const doca_devinfo, max_message_size: *mut u32) -> doca_error_t => ::doca_rdma::MAX_MESSAGE_SIZE);

/// `doca_rdma_cap_get_gid_table_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_cap_get_gid_table_size(
    devinfo: *const doca_devinfo,
    gid_table_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, gid_table_size, gid_count)
}

/// `doca_rdma_cap_get_gid`: `num_entries` GIDs from `start_index`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_cap_get_gid(
    devinfo: *const doca_devinfo,
    start_index: u32,
    num_entries: u32,
    gid_array: *mut doca_rdma_gid,
) -> doca_error_t {
    // SAFETY: the program's array of num_entries GIDs (the C contract).
    devinfo_query(devinfo, |d| unsafe {
        gids_into(d, start_index, num_entries, gid_array)
    })
}

/// `doca_rdma_cap_transport_type_is_supported`: RC and DC.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_cap_transport_type_is_supported(
    devinfo: *const doca_devinfo,
    transport_type: doca_rdma_transport_type,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        rdma_dev(d)?;
        doca_rdma::TransportType::from_raw(transport_type)
            .map(|_| ())
            .ok_or_else(|| invalid(format!("transport type {transport_type} is unknown")))
    })
}

/// `doca_rdma_cap_task_receive_get_max_dst_buf_list_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_cap_task_receive_get_max_dst_buf_list_len(
    devinfo: *const doca_devinfo,
    transport_type: doca_rdma_transport_type,
    max_buf_list_len: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_buf_list_len, |d| {
        rdma_dev(d)?;
        doca_rdma::TransportType::from_raw(transport_type)
            .ok_or_else(|| invalid(format!("transport type {transport_type} is unknown")))?;
        Ok(1)
    })
}

// ---- properties ----

macro_rules! setter {
    (pub unsafe extern "C" fn $name:ident(rdma: *mut doca_rdma3, $arg:ident: $t:ty) -> doca_error_t => $link:literal, |$r:ident| $body:expr) => {
        #[doc = concat!("`", stringify!($name), "`: before the context starts.")]
        #[unsafe(export_name = $link)]
        pub unsafe extern "C" fn $name(rdma: *mut doca_rdma3, $arg: $t) -> doca_error_t {
            ffi(|| {
                // SAFETY: NULL or a live handle.
                let $r = &unsafe { rdma_of(rdma) }?.lib.rdma;
                $body
            })
        }
    };
}

/// A setting of the context, written to `out`.
///
/// # Safety
/// `rdma` is NULL or a live handle.
unsafe fn conf_value<T>(
    rdma: *const doca_rdma3,
    out: *mut T,
    f: impl FnOnce(&doca_rdma::Conf) -> T,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { rdma_ref(rdma) }?.lib.rdma.conf();
        let o = out_ptr(out, "output")?;
        // SAFETY: output checked.
        unsafe { put(o, f(&c)) };
        Ok(())
    })
}

macro_rules! getter {
    (pub unsafe extern "C" fn $name:ident(rdma: *const doca_rdma3, out: *mut $t:ty) -> doca_error_t => $link:literal, |$c:ident| $val:expr) => {
        #[doc = concat!("`", stringify!($name), "`.")]
        #[unsafe(export_name = $link)]
        pub unsafe extern "C" fn $name(rdma: *const doca_rdma3, out: *mut $t) -> doca_error_t {
            ffi(|| {
                // SAFETY: NULL or a live handle.
                let $c = unsafe { rdma_ref(rdma) }?.lib.rdma.conf();
                let o = out_ptr(out, "output")?;
                // SAFETY: output checked.
                unsafe { put(o, $val) };
                Ok(())
            })
        }
    };
}

setter!(pub unsafe extern "C" fn doca_rdma_set_send_queue_size(rdma: *mut doca_rdma3, n: u32) -> doca_error_t => "doca3__rdma_set_send_queue_size", |r| r.set_queue_size(true, n));
setter!(pub unsafe extern "C" fn doca_rdma_set_recv_queue_size(rdma: *mut doca_rdma3, n: u32) -> doca_error_t => "doca3__rdma_set_recv_queue_size", |r| r.set_queue_size(false, n));
setter!(pub unsafe extern "C" fn doca_rdma_set_max_send_buf_list_len(rdma: *mut doca_rdma3, n: u32) -> doca_error_t => "doca3__rdma_set_max_send_buf_list_len", |r| {
    if n == 0 || n > doca_rdma::MAX_SEND_BUF_LIST_LEN {
        return Err(invalid(format!(
            "max_send_buf_list_len {n}: this device takes 1 (doca_rdma_cap_get_max_send_buf_list_len)"
        )));
    }
    r.update_conf(|c| {
        c.max_send_buf_list_len = n;
        Ok(())
    })
});
setter!(pub unsafe extern "C" fn doca_rdma_set_transport_type(rdma: *mut doca_rdma3, t: doca_rdma_transport_type) -> doca_error_t => "doca3__rdma_set_transport_type", |r| r.set_transport_type(t));
setter!(pub unsafe extern "C" fn doca_rdma_set_mtu(rdma: *mut doca_rdma3, mtu: doca_mtu_size) -> doca_error_t => "doca3__rdma_set_mtu", |r| {
    // enum doca_mtu_size: 256 B (0) to 4 KiB (4); raw Ethernet (5) is not an RDMA MTU.
    if mtu > 4 {
        return Err(err(ErrorCode::NotSupported, format!("MTU value {mtu} is not one of enum doca_mtu_size")));
    }
    r.update_conf(|c| {
        c.mtu = mtu;
        Ok(())
    })
});
setter!(pub unsafe extern "C" fn doca_rdma_set_permissions(rdma: *mut doca_rdma3, p: u32) -> doca_error_t => "doca3__rdma_set_permissions", |r| r.set_permissions(p));
setter!(pub unsafe extern "C" fn doca_rdma_set_grh_enabled(rdma: *mut doca_rdma3, g: u8) -> doca_error_t => "doca3__rdma_set_grh_enabled", |r| r.update_conf(|c| {
    c.grh = g != 0;
    Ok(())
}));
setter!(pub unsafe extern "C" fn doca_rdma_set_gid_index(rdma: *mut doca_rdma3, i: u32) -> doca_error_t => "doca3__rdma_set_gid_index", |r| r.set_gid_index(i));
setter!(pub unsafe extern "C" fn doca_rdma_set_sl(rdma: *mut doca_rdma3, sl: u32) -> doca_error_t => "doca3__rdma_set_sl", |r| {
    if sl > 15 {
        return Err(invalid(format!("service level {sl} is above 15")));
    }
    r.update_conf(|c| {
        c.sl = sl;
        Ok(())
    })
});
setter!(pub unsafe extern "C" fn doca_rdma_set_connection_request_timeout(rdma: *mut doca_rdma3, t: u16) -> doca_error_t => "doca3__rdma_set_connection_request_timeout", |r| r.update_conf(|c| {
    c.timeout_ms = t;
    Ok(())
}));
setter!(pub unsafe extern "C" fn doca_rdma_set_max_num_connections(rdma: *mut doca_rdma3, n: u16) -> doca_error_t => "doca3__rdma_set_max_num_connections", |r| r.set_max_num_connections(n));
setter!(pub unsafe extern "C" fn doca_rdma_set_rnr_retry_count(rdma: *mut doca_rdma3, n: u8) -> doca_error_t => "doca3__rdma_set_rnr_retry_count", |r| {
    if n > 7 {
        return Err(invalid(format!("rnr retry count {n} is above 7")));
    }
    r.update_conf(|c| {
        c.rnr_retry = n;
        Ok(())
    })
});
setter!(pub unsafe extern "C" fn doca_rdma_task_receive_set_dst_buf_list_len(rdma: *mut doca_rdma3, n: u32) -> doca_error_t => "doca3__rdma_task_receive_set_dst_buf_list_len", |r| {
    if n == 0 || n > 1 {
        return Err(invalid(format!(
            "receive buffer list length {n}: this device takes 1 (doca_rdma_cap_task_receive_get_max_dst_buf_list_len)"
        )));
    }
    r.update_conf(|c| {
        c.recv_buf_list_len = n;
        Ok(())
    })
});

getter!(pub unsafe extern "C" fn doca_rdma_get_send_queue_size(rdma: *const doca_rdma3, out: *mut u32) -> doca_error_t => "doca3__rdma_get_send_queue_size", |c| c.send_queue_size);
getter!(pub unsafe extern "C" fn doca_rdma_get_recv_queue_size(rdma: *const doca_rdma3, out: *mut u32) -> doca_error_t => "doca3__rdma_get_recv_queue_size", |c| c.recv_queue_size);
getter!(pub unsafe extern "C" fn doca_rdma_get_max_send_buf_list_len(rdma: *const doca_rdma3, out: *mut u32) -> doca_error_t => "doca3__rdma_get_max_send_buf_list_len", |c| c.max_send_buf_list_len);
getter!(pub unsafe extern "C" fn doca_rdma_get_transport_type(rdma: *const doca_rdma3, out: *mut doca_rdma_transport_type) -> doca_error_t => "doca3__rdma_get_transport_type", |c| c.transport as u32);
getter!(pub unsafe extern "C" fn doca_rdma_get_mtu(rdma: *const doca_rdma3, out: *mut doca_mtu_size) -> doca_error_t => "doca3__rdma_get_mtu", |c| c.mtu);
/// `doca_rdma_get_permissions`.
#[unsafe(export_name = "doca3__rdma_get_permissions")]
pub unsafe extern "C" fn doca_rdma_get_permissions(
    rdma: *mut doca_rdma3,
    permissions: *mut u32,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { conf_value(rdma, permissions, |c| c.permissions.bits()) }
}
getter!(pub unsafe extern "C" fn doca_rdma_get_grh_enabled(rdma: *const doca_rdma3, out: *mut u8) -> doca_error_t => "doca3__rdma_get_grh_enabled", |c| u8::from(c.grh));
getter!(pub unsafe extern "C" fn doca_rdma_get_gid_index(rdma: *const doca_rdma3, out: *mut u32) -> doca_error_t => "doca3__rdma_get_gid_index", |c| c.gid_index);
getter!(pub unsafe extern "C" fn doca_rdma_get_sl(rdma: *const doca_rdma3, out: *mut u32) -> doca_error_t => "doca3__rdma_get_sl", |c| c.sl);
getter!(pub unsafe extern "C" fn doca_rdma_get_connection_request_timeout(rdma: *const doca_rdma3, out: *mut u16) -> doca_error_t => "doca3__rdma_get_connection_request_timeout", |c| c.timeout_ms);
/// `doca_rdma_get_max_num_connections`.
#[unsafe(export_name = "doca3__rdma_get_max_num_connections")]
pub unsafe extern "C" fn doca_rdma_get_max_num_connections(
    rdma: *mut doca_rdma3,
    max_num_connections: *mut u16,
) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    unsafe { conf_value(rdma, max_num_connections, |c| c.max_connections) }
}
getter!(pub unsafe extern "C" fn doca_rdma_get_rnr_retry_count(rdma: *const doca_rdma3, out: *mut u8) -> doca_error_t => "doca3__rdma_get_rnr_retry_count", |c| c.rnr_retry);
getter!(pub unsafe extern "C" fn doca_rdma_task_receive_get_dst_buf_list_len(rdma: *const doca_rdma3, out: *mut u32) -> doca_error_t => "doca3__rdma_task_receive_get_dst_buf_list_len", |c| c.recv_buf_list_len);

/// `doca_rdma_get_dpa_handle`: `NOT_SUPPORTED` (no DPA data path here).
#[unsafe(export_name = "doca3__rdma_get_dpa_handle")]
pub unsafe extern "C" fn doca_rdma_get_dpa_handle(
    rdma: *mut doca_rdma3,
    dpa_rdma: *mut u64,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { rdma_of(rdma) }?;
        out_ptr(dpa_rdma, "dpa_rdma")?;
        Err(no_device_datapath(
            "the RDMA context is not on the DPA data path",
        ))
    })
}

/// `doca_rdma_get_gpu_handle`: `NOT_SUPPORTED` (no GPU data path here).
#[unsafe(export_name = "doca3__rdma_get_gpu_handle")]
pub unsafe extern "C" fn doca_rdma_get_gpu_handle(
    rdma: *mut doca_rdma3,
    gpu_rdma: *mut *mut doca_gpu_dev_rdma,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { rdma_of(rdma) }?;
        out_ptr(gpu_rdma, "gpu_rdma")?;
        Err(no_device_datapath(
            "the RDMA context is not on the GPU data path",
        ))
    })
}

// ---- tasks ----

doca_rdma::rdma_task_table!(crate::common::tasks::c3_tasks);

fn inputs<'a>(task: *const doca_task) -> Result<&'a TaskInputs> {
    // SAFETY: NULL or a task the program holds.
    Ok(unsafe { handle(task, "task") }?.inputs())
}

/// `doca_rdma_task_receive_get_result_opcode`: `enum doca_rdma_opcode`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_task_receive_get_result_opcode(
    task: *const doca_rdma_task_receive,
) -> doca_rdma_opcode {
    ffi_value(0, || {
        Ok((inputs(task)?.params[slot::RES_LEN_OP].get() >> 32) as u32)
    })
}

/// `doca_rdma_task_receive_get_result_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_task_receive_get_result_len(
    task: *const doca_rdma_task_receive,
) -> u32 {
    ffi_value(0, || {
        Ok((inputs(task)?.params[slot::RES_LEN_OP].get() & 0xffff_ffff) as u32)
    })
}

/// `doca_rdma_task_receive_get_result_immediate_data`: as the sender gave it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_task_receive_get_result_immediate_data(
    task: *const doca_rdma_task_receive,
) -> doca_be32_t {
    ffi_value(0, || Ok(inputs(task)?.params[slot::RES_IMM].get() as u32))
}

/// `doca_rdma_task_receive_get_result_rdma_connection`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_task_receive_get_result_rdma_connection(
    task: *const doca_rdma_task_receive,
) -> *const doca_rdma_connection {
    ffi_value(std::ptr::null(), || {
        Ok(inputs(task)?.params[slot::RES_CONN].get() as usize as *const doca_rdma_connection)
    })
}

/// `doca_rdma_task_remote_net_sync_event_get_get_result_len`: 8 after a success.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_task_remote_net_sync_event_get_get_result_len(
    task: *const doca_rdma_task_remote_net_sync_event_get,
) -> u32 {
    ffi_value(0, || Ok(inputs(task)?.state.get() as u32))
}

/// `doca_rdma_task_read_get_result_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_rdma_task_read_get_result_len(
    task: *const doca_rdma_task_read,
) -> u32 {
    ffi_value(0, || Ok(inputs(task)?.state.get() as u32))
}
