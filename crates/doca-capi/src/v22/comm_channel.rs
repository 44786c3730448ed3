//! `doca_comm_channel.h`: endpoints over `doca-comm-channel`.

use crate::common::{
    Result, doca_error_t, ffi, free_handle, handle, handle_mut, invalid, new_handle, out_ptr, put,
};
use crate::v22::dev::{doca_dev, doca_dev_rep, doca_devinfo};
use doca_comm_channel::{Endpoint, PeerAddr, PeerId};
use doca_core::{Error, ErrorCode};
use std::ffi::{c_char, c_int, c_void};

crate::common::handles::handle_kinds! {
    Boxed: doca_comm_channel_ep_t;
    Borrowed: doca_comm_channel_addr_t;
}

/// `struct doca_comm_channel_ep_t`: the endpoint and the handles C gave it.
#[derive(Debug)]
pub struct doca_comm_channel_ep_t {
    ep: Endpoint,
    dev: *mut doca_dev,
    rep: *mut doca_dev_rep,
    /// The array `get_peer_addr_list` hands out (valid until the next call).
    list: Vec<*mut doca_comm_channel_addr_t>,
}

/// `struct doca_comm_channel_addr_t`.
pub type doca_comm_channel_addr_t = PeerAddr;

pub(crate) fn addr_of(ep: &Endpoint, id: PeerId) -> Result<*mut doca_comm_channel_addr_t> {
    Ok(ep.peer_addr(id)? as *const PeerAddr as *mut PeerAddr)
}

/// The peer of `ep` at address `p` (compared, never dereferenced: a pointer that is not
/// one of the endpoint's peers is refused).
fn peer_id(ep: &Endpoint, p: *const doca_comm_channel_addr_t) -> Result<PeerId> {
    if p.is_null() {
        return Err(invalid("peer_addr is NULL"));
    }
    ep.peer_id_at(p)
        .ok_or_else(|| invalid("peer_addr is not a peer of this endpoint (disconnected?)"))
}

/// `doca_comm_channel_get_max_service_name_len`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_get_max_service_name_len(out: *mut u32) -> doca_error_t {
    ffi(|| {
        let o = out_ptr(out, "max_service_name_len")?;
        // SAFETY: non-NULL, writable (the caller's contract).
        unsafe { put(o, doca_comm_channel::MAX_SERVICE_NAME_LEN) };
        Ok(())
    })
}

fn devinfo_u32(
    devinfo: *mut doca_devinfo,
    out: *mut u32,
    f: fn(&doca_core::DevInfo) -> doca_core::Result<u32>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let d = unsafe { handle(devinfo, "devinfo") }?;
        let o = out_ptr(out, "output")?;
        let v = f(&d.info)?;
        // SAFETY: non-NULL, writable.
        unsafe { put(o, v) };
        Ok(())
    })
}

/// `doca_comm_channel_get_max_message_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_get_max_message_size(
    devinfo: *mut doca_devinfo,
    out: *mut u32,
) -> doca_error_t {
    devinfo_u32(devinfo, out, doca_comm_channel::max_message_size)
}

/// `doca_comm_channel_get_max_send_queue_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_get_max_send_queue_size(
    devinfo: *mut doca_devinfo,
    out: *mut u32,
) -> doca_error_t {
    devinfo_u32(devinfo, out, doca_comm_channel::max_queue_size)
}

/// `doca_comm_channel_get_max_recv_queue_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_get_max_recv_queue_size(
    devinfo: *mut doca_devinfo,
    out: *mut u32,
) -> doca_error_t {
    devinfo_u32(devinfo, out, doca_comm_channel::max_queue_size)
}

/// `doca_comm_channel_get_service_max_num_connections`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_get_service_max_num_connections(
    devinfo: *mut doca_devinfo,
    out: *mut u32,
) -> doca_error_t {
    devinfo_u32(devinfo, out, doca_comm_channel::service_max_num_connections)
}

/// `doca_comm_channel_ep_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_create(
    ep: *mut *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    ffi(|| {
        new_handle(ep, "ep", || {
            Ok(doca_comm_channel_ep_t {
                ep: Endpoint::try_new()?,
                dev: std::ptr::null_mut(),
                rep: std::ptr::null_mut(),
                list: Vec::new(),
            })
        })
    })
}

/// `doca_comm_channel_ep_destroy`: its peer addresses go with it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_destroy(
    ep: *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    // SAFETY: NULL or a live boxed handle, freed once.
    ffi(|| unsafe { free_handle(ep, "ep") })
}

fn with_ep(
    ep: *mut doca_comm_channel_ep_t,
    f: impl FnOnce(&mut doca_comm_channel_ep_t) -> Result<()>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle, used by one thread at a time (DOCA's rule).
        let e = unsafe { handle_mut(ep, "ep") }?;
        f(e)
    })
}

fn put_out<T>(p: *mut T, what: &str, v: T) -> Result<()> {
    let o = out_ptr(p, what)?;
    // SAFETY: non-NULL, writable (the caller's contract).
    unsafe { put(o, v) };
    Ok(())
}

/// `doca_comm_channel_ep_get_device`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_device(
    ep: *mut doca_comm_channel_ep_t,
    device: *mut *mut doca_dev,
) -> doca_error_t {
    with_ep(ep, |e| {
        if e.dev.is_null() {
            return Err(Error::with_context(
                ErrorCode::NotFound,
                "no device was set",
            ));
        }
        put_out(device, "device", e.dev)
    })
}

/// `doca_comm_channel_ep_get_device_rep`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_device_rep(
    ep: *mut doca_comm_channel_ep_t,
    rep: *mut *mut doca_dev_rep,
) -> doca_error_t {
    with_ep(ep, |e| {
        if e.rep.is_null() {
            return Err(Error::with_context(
                ErrorCode::NotFound,
                "no representor was set",
            ));
        }
        put_out(rep, "device_rep", e.rep)
    })
}

/// `doca_comm_channel_ep_get_max_msg_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_max_msg_size(
    ep: *mut doca_comm_channel_ep_t,
    v: *mut u16,
) -> doca_error_t {
    with_ep(ep, |e| put_out(v, "max_msg_size", e.ep.max_msg_size()))
}

/// `doca_comm_channel_ep_get_send_queue_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_send_queue_size(
    ep: *mut doca_comm_channel_ep_t,
    v: *mut u16,
) -> doca_error_t {
    with_ep(ep, |e| {
        put_out(v, "send_queue_size", e.ep.send_queue_size())
    })
}

/// `doca_comm_channel_ep_get_recv_queue_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_recv_queue_size(
    ep: *mut doca_comm_channel_ep_t,
    v: *mut u16,
) -> doca_error_t {
    with_ep(ep, |e| {
        put_out(v, "recv_queue_size", e.ep.recv_queue_size())
    })
}

/// `doca_comm_channel_ep_set_device`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_set_device(
    ep: *mut doca_comm_channel_ep_t,
    device: *mut doca_dev,
) -> doca_error_t {
    with_ep(ep, |e| {
        // SAFETY: NULL or a live handle.
        let d = unsafe { handle(device, "device") }?;
        e.ep.set_device(&d.dev)?;
        e.dev = device;
        Ok(())
    })
}

/// `doca_comm_channel_ep_set_device_rep`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_set_device_rep(
    ep: *mut doca_comm_channel_ep_t,
    rep: *mut doca_dev_rep,
) -> doca_error_t {
    with_ep(ep, |e| {
        // SAFETY: NULL or a live handle.
        let r = unsafe { handle(rep, "device_rep") }?;
        e.ep.set_device_rep(&r.rep)?;
        e.rep = rep;
        Ok(())
    })
}

/// `doca_comm_channel_ep_set_max_msg_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_set_max_msg_size(
    ep: *mut doca_comm_channel_ep_t,
    v: u16,
) -> doca_error_t {
    with_ep(ep, |e| e.ep.set_max_msg_size(v))
}

/// `doca_comm_channel_ep_set_send_queue_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_set_send_queue_size(
    ep: *mut doca_comm_channel_ep_t,
    v: u16,
) -> doca_error_t {
    with_ep(ep, |e| e.ep.set_send_queue_size(v))
}

/// `doca_comm_channel_ep_set_recv_queue_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_set_recv_queue_size(
    ep: *mut doca_comm_channel_ep_t,
    v: u16,
) -> doca_error_t {
    with_ep(ep, |e| e.ep.set_recv_queue_size(v))
}

/// `doca_comm_channel_ep_get_event_channel`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_event_channel(
    ep: *mut doca_comm_channel_ep_t,
    send: *mut c_int,
    recv: *mut c_int,
) -> doca_error_t {
    with_ep(ep, |e| {
        let (s, r) = (
            out_ptr(send, "send_event_channel")?,
            out_ptr(recv, "recv_event_channel")?,
        );
        let (sf, rf) = e.ep.event_channels();
        // SAFETY: both non-NULL and writable.
        unsafe {
            put(s, sf);
            put(r, rf);
        }
        Ok(())
    })
}

/// `doca_comm_channel_ep_get_service_event_channel`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_service_event_channel(
    ep: *mut doca_comm_channel_ep_t,
    ch: *mut c_int,
) -> doca_error_t {
    with_ep(ep, |e| {
        put_out(ch, "service_event_channel", e.ep.service_event_channel())
    })
}

/// `doca_comm_channel_ep_event_handle_arm_send`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_event_handle_arm_send(
    ep: *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    with_ep(ep, |e| e.ep.arm())
}

/// `doca_comm_channel_ep_event_handle_arm_recv`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_event_handle_arm_recv(
    ep: *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    with_ep(ep, |e| e.ep.arm())
}

/// `doca_comm_channel_ep_listen`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_listen(
    ep: *mut doca_comm_channel_ep_t,
    name: *const c_char,
) -> doca_error_t {
    with_ep(ep, |e| {
        // SAFETY: NULL or a NUL-terminated string.
        let n = unsafe { crate::common::cstr(name, "name") }?;
        e.ep.listen(n)
    })
}

/// `doca_comm_channel_ep_connect`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_connect(
    ep: *mut doca_comm_channel_ep_t,
    name: *const c_char,
    peer_addr: *mut *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep(ep, |e| {
        // SAFETY: NULL or a NUL-terminated string.
        let n = unsafe { crate::common::cstr(name, "name") }?;
        let out = out_ptr(peer_addr, "peer_addr")?;
        let id = e.ep.connect(n)?;
        let a = addr_of(&e.ep, id)?;
        // SAFETY: non-NULL, writable.
        unsafe { put(out, a) };
        Ok(())
    })
}

/// `doca_comm_channel_ep_sendto`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_sendto(
    ep: *mut doca_comm_channel_ep_t,
    msg: *const c_void,
    len: usize,
    _flags: c_int,
    peer_addr: *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep(ep, |e| {
        if msg.is_null() {
            return Err(invalid("msg is NULL"));
        }
        let id = peer_id(&e.ep, peer_addr)?;
        // SAFETY: msg is non-NULL; the caller passes len readable bytes.
        unsafe { send_bytes(&mut e.ep, msg, len, id) }
    })
}

/// Sends the `len` bytes at `msg` (non-NULL) to peer `id`: `INVALID_VALUE` for more
/// than the endpoint's largest message. Both generations' `sendto`.
///
/// # Safety
/// `msg` holds `len` readable bytes.
pub(crate) unsafe fn send_bytes(
    ep: &mut Endpoint,
    msg: *const c_void,
    len: usize,
    id: PeerId,
) -> Result<()> {
    if len > usize::from(ep.max_msg_size()) {
        return Err(invalid(format!(
            "a {len}-byte message is longer than the endpoint's largest ({} bytes)",
            ep.max_msg_size()
        )));
    }
    // SAFETY: the caller's contract.
    let m = unsafe { std::slice::from_raw_parts(msg as *const u8, len) };
    ep.sendto(m, id)
}

/// `doca_comm_channel_ep_recvfrom`: when a peer's connection ended, `NOT_CONNECTED`
/// with `*peer_addr` set to it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_recvfrom(
    ep: *mut doca_comm_channel_ep_t,
    msg: *mut c_void,
    len: *mut usize,
    _flags: c_int,
    peer_addr: *mut *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    // SAFETY: the caller's pointers, as recv_bytes asks.
    with_ep(ep, |e| unsafe {
        recv_bytes(&mut e.ep, msg, len, peer_addr)
    })
}

/// One receive into the caller's buffer (`*len` bytes of room at `msg`): the message's
/// length in `*len` and its peer in `*peer_addr`; when a peer's connection ended,
/// `NOT_CONNECTED` with `*peer_addr` set to it. Both generations' `recvfrom`.
///
/// # Safety
/// `msg` is NULL or holds `*len` writable bytes; `len` and `peer_addr` are NULL or
/// writable.
pub(crate) unsafe fn recv_bytes(
    ep: &mut Endpoint,
    msg: *mut c_void,
    len: *mut usize,
    peer_addr: *mut *mut doca_comm_channel_addr_t,
) -> Result<()> {
    if msg.is_null() {
        return Err(invalid("msg is NULL"));
    }
    let len = out_ptr(len, "len")?;
    let out = out_ptr(peer_addr, "peer_addr")?;
    // SAFETY: *len is the size of the caller's buffer at msg (the contract).
    let cap = unsafe { *len };
    // SAFETY: as above: msg holds cap writable bytes.
    let buf = unsafe { std::slice::from_raw_parts_mut(msg as *mut u8, cap) };
    match ep.recvfrom(buf) {
        Ok((n, id)) => {
            let a = addr_of(ep, id)?;
            // SAFETY: both non-NULL, writable.
            unsafe {
                put(len, n);
                put(out, a);
            }
            Ok(())
        }
        Err((err, id)) => {
            if let Some(id) = id
                && let Ok(a) = addr_of(ep, id)
            {
                // SAFETY: non-NULL, writable.
                unsafe { put(out, a) };
            }
            Err(err)
        }
    }
}

/// `doca_comm_channel_ep_disconnect`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_disconnect(
    ep: *mut doca_comm_channel_ep_t,
    peer_addr: *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep(ep, |e| {
        let id = peer_id(&e.ep, peer_addr)?;
        e.list.clear();
        e.ep.disconnect(id)
    })
}

fn with_peer(
    p: *const doca_comm_channel_addr_t,
    f: impl FnOnce(&PeerAddr) -> Result<()>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live peer address (valid until disconnected).
        let a = unsafe { handle(p, "peer_addr") }?;
        f(a)
    })
}

/// `doca_comm_channel_peer_addr_get_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_get_user_data(
    p: *mut doca_comm_channel_addr_t,
    v: *mut u64,
) -> doca_error_t {
    with_peer(p, |a| put_out(v, "user_data", a.user_data()))
}

/// `doca_comm_channel_peer_addr_set_user_data`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_set_user_data(
    p: *mut doca_comm_channel_addr_t,
    v: u64,
) -> doca_error_t {
    with_peer(p, |a| {
        a.set_user_data(v);
        Ok(())
    })
}

/// `doca_comm_channel_peer_addr_update_info`: the statistics are live;
/// `CONNECTION_INPROGRESS` until the service has accepted a client's connection,
/// `CONNECTION_ABORTED` once the connection ended.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_update_info(
    p: *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_peer(p, PeerAddr::update_info)
}

/// `doca_comm_channel_peer_addr_get_send_messages`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_get_send_messages(
    p: *const doca_comm_channel_addr_t,
    v: *mut u64,
) -> doca_error_t {
    with_peer(p, |a| put_out(v, "send_messages", a.send_messages()))
}

/// `doca_comm_channel_peer_addr_get_send_bytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_get_send_bytes(
    p: *const doca_comm_channel_addr_t,
    v: *mut u64,
) -> doca_error_t {
    with_peer(p, |a| put_out(v, "send_bytes", a.send_bytes()))
}

/// `doca_comm_channel_peer_addr_get_recv_messages`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_get_recv_messages(
    p: *const doca_comm_channel_addr_t,
    v: *mut u64,
) -> doca_error_t {
    with_peer(p, |a| put_out(v, "recv_messages", a.recv_messages()))
}

/// `doca_comm_channel_peer_addr_get_recv_bytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_get_recv_bytes(
    p: *const doca_comm_channel_addr_t,
    v: *mut u64,
) -> doca_error_t {
    with_peer(p, |a| put_out(v, "recv_bytes", a.recv_bytes()))
}

/// `doca_comm_channel_peer_addr_get_send_in_flight_messages`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_get_send_in_flight_messages(
    p: *const doca_comm_channel_addr_t,
    v: *mut u64,
) -> doca_error_t {
    with_peer(p, |a| {
        put_out(v, "send_in_flight_messages", a.send_in_flight_messages())
    })
}

/// `doca_comm_channel_ep_update_service_state_info`: accepts waiting connections.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_update_service_state_info(
    ep: *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    with_ep(ep, |e| {
        e.ep.pending_connections();
        Ok(())
    })
}

/// `doca_comm_channel_ep_get_peer_addr_list`: an array the endpoint owns, valid until
/// the next call (or a disconnect, or destroy).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_peer_addr_list(
    ep: *const doca_comm_channel_ep_t,
    array: *mut *mut *mut doca_comm_channel_addr_t,
    n: *mut u32,
) -> doca_error_t {
    with_ep(ep as *mut doca_comm_channel_ep_t, |e| {
        let (a, n) = (
            out_ptr(array, "peer_addr_array")?,
            out_ptr(n, "peer_addr_array_len")?,
        );
        let ids = e.ep.peers();
        e.list = ids
            .iter()
            .filter_map(|id| addr_of(&e.ep, *id).ok())
            .collect();
        // SAFETY: both non-NULL, writable; the array lives in the endpoint.
        unsafe {
            put(a, e.list.as_mut_ptr());
            put(n, e.list.len() as u32);
        }
        Ok(())
    })
}

/// `doca_comm_channel_ep_get_pending_connections`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_comm_channel_ep_get_pending_connections(
    ep: *const doca_comm_channel_ep_t,
    v: *mut u32,
) -> doca_error_t {
    with_ep(ep as *mut doca_comm_channel_ep_t, |e| {
        let n = e.ep.pending_connections();
        put_out(v, "pending_connections", n)
    })
}
