//! The comm channel of DOCA 1.3: endpoints created with their attributes, sends and
//! receives with 1.3's flags, event channels and polling.

use super::*;

crate::common::handles::handle_kinds! {
    Boxed: doca_comm_channel_ep_t;
}

/// `struct doca_comm_channel_init_attr` (1.3).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_comm_channel_init_attr {
    /// The program's value (kept, not used).
    pub cookie: u32,
    /// 0 or `DOCA_COMM_CHANNEL_INIT_FLAG_NONBLOCK`.
    pub flags: u32,
    /// Messages a send queue holds (0: the default).
    pub maxmsgs: u32,
    /// The largest message (0: the default).
    pub msgsize: u32,
}

/// `DOCA_COMM_CHANNEL_INIT_FLAG_NONBLOCK`.
const CC_INIT_NONBLOCK: u32 = 1;
/// `DOCA_CC_MSG_FLAG_DONTWAIT`.
const CC_MSG_DONTWAIT: c_int = 1;
/// `DOCA_CC_MSG_FLAG_MORE` (not supported).
const CC_MSG_MORE: c_int = 2;

/// `struct doca_comm_channel_ep_t` of 1.3: an endpoint with the device (and, on the DPU
/// side, the representor) this process talks through, and whether its calls block.
pub struct doca_comm_channel_ep_t {
    ep: doca_comm_channel::Endpoint,
    dev: doca_core::Dev,
    rep: Option<doca_core::DevRep>,
    attr: doca_comm_channel_init_attr,
    nonblock: bool,
    /// Readable when the endpoint has a message or a new peer: the endpoint's receive
    /// and service descriptors in one epoll set (`doca_comm_channel_ep_event_channel_get`).
    events: std::os::fd::OwnedFd,
}

impl std::fmt::Debug for doca_comm_channel_ep_t {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("doca_comm_channel_ep_t")
            .field("nonblock", &self.nonblock)
            .finish()
    }
}

/// `struct doca_comm_channel_addr_t`.
pub type doca_comm_channel_addr_t = doca_comm_channel::PeerAddr;
/// `doca_event_channel_t`: a descriptor.
pub type doca_event_channel_t = c_int;
/// `struct doca_pollfd` (`struct pollfd`).
pub type doca_pollfd = libc::pollfd;

/// `struct doca_comm_channel_peer_addr_info`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct doca_comm_channel_peer_addr_info {
    /// The peer's function (0: no switch ports here).
    pub vport: u16,
    /// The largest message.
    pub msgsize: u32,
    /// Messages a send queue holds.
    pub maxmsgs: u32,
    /// Messages sent and not yet taken by the peer.
    pub curmsgs: u32,
    /// Messages received.
    pub rx_msgs: u64,
    /// Messages sent.
    pub tx_msgs: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
}

/// How long a blocking connect waits for the service before it gives up.
const CC_CONNECT_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

impl doca_comm_channel_ep_t {
    /// Waits (up to `ms` milliseconds) until the endpoint may have something to receive
    /// or a peer to accept.
    fn wait_readable(&self, ms: c_int) {
        use std::os::fd::AsRawFd;
        let mut p = libc::pollfd {
            fd: self.events.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut p, 1, ms) };
    }

    fn blocks(&self, flags: c_int) -> Result<bool> {
        if flags & CC_MSG_MORE != 0 {
            return Err(err(
                ErrorCode::NotSupported,
                "DOCA_CC_MSG_FLAG_MORE is not supported",
            ));
        }
        if flags & !(CC_MSG_DONTWAIT | CC_MSG_MORE) != 0 {
            return Err(invalid(format!("unknown message flags {flags:#x}")));
        }
        Ok(!self.nonblock && flags & CC_MSG_DONTWAIT == 0)
    }
}

/// An epoll set of the endpoint's receive and service descriptors.
fn cc_event_set(ep: &doca_comm_channel::Endpoint) -> Result<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: plain system calls; the new descriptor is owned once made.
    unsafe {
        let fd = libc::epoll_create1(libc::EPOLL_CLOEXEC);
        if fd < 0 {
            return Err(err(
                ErrorCode::NoMemory,
                "cannot make the endpoint's event channel (epoll_create1 failed)",
            ));
        }
        let owned = std::os::fd::OwnedFd::from_raw_fd(fd);
        let (_, recv) = ep.event_channels();
        for inner in [recv, ep.service_event_channel()] {
            let mut ev = libc::epoll_event {
                events: libc::EPOLLIN as u32,
                u64: inner as u64,
            };
            if libc::epoll_ctl(fd, libc::EPOLL_CTL_ADD, inner, &mut ev) != 0 {
                return Err(err(
                    ErrorCode::Unexpected,
                    "cannot make the endpoint's event channel (epoll_ctl failed)",
                ));
            }
        }
        Ok(owned)
    }
}

/// An endpoint of `dev` (and `rep`) as `a` asks.
fn cc_endpoint(
    dev: &doca_core::Dev,
    rep: Option<&doca_core::DevRep>,
    a: &doca_comm_channel_init_attr,
) -> Result<doca_comm_channel::Endpoint> {
    let mut e = doca_comm_channel::Endpoint::try_new()?;
    e.set_device(dev)?;
    if let Some(r) = rep {
        e.set_device_rep(r)?;
    }
    if a.msgsize > 0 {
        e.set_max_msg_size(a.msgsize as u16)?;
    }
    if a.maxmsgs > 0 {
        e.set_send_queue_size(a.maxmsgs as u16)?;
        e.set_recv_queue_size(a.maxmsgs as u16)?;
    }
    Ok(e)
}

/// `doca_comm_channel_ep_create` of 1.3: the endpoint talks through this process's
/// first device (on the DPU side, for its first host function's representor).
#[unsafe(export_name = "doca1__comm_channel_ep_create")]
pub unsafe extern "C" fn doca_comm_channel_ep_create(
    attr: *mut doca_comm_channel_init_attr,
    ep: *mut *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    ffi(|| {
        if attr.is_null() {
            return Err(invalid("attr is NULL"));
        }
        // SAFETY: non-NULL, the caller's attributes.
        let a = unsafe { *attr };
        if a.flags & !CC_INIT_NONBLOCK != 0 {
            return Err(invalid(format!("unknown endpoint flags {:#x}", a.flags)));
        }
        let max = doca_comm_channel::MAX_MESSAGE_SIZE;
        if a.msgsize > max {
            return Err(err(
                ErrorCode::NotPermitted,
                format!(
                    "msgsize {} is over the largest message, {max} bytes",
                    a.msgsize
                ),
            ));
        }
        if a.maxmsgs > doca_comm_channel::MAX_QUEUE_SIZE {
            return Err(err(
                ErrorCode::NotPermitted,
                format!(
                    "maxmsgs {} is over the largest queue, {}",
                    a.maxmsgs,
                    doca_comm_channel::MAX_QUEUE_SIZE
                ),
            ));
        }
        new_handle(ep, "ep", || {
            let info = crate::v22::dev::machine_devices()?
                .into_iter()
                .next()
                .ok_or_else(|| {
                    err(
                        ErrorCode::NotFound,
                        "this process has no device for the comm channel",
                    )
                })?;
            let dev = info.open()?;
            let rep = if dev.as_devinfo().role() == doca_core::device::Role::Dpu {
                let r = dev
                    .rep_list(doca_core::RepFilter::Net)?
                    .into_iter()
                    .next()
                    .ok_or_else(|| {
                        err(
                            ErrorCode::NotFound,
                            "the DPU device serves no host function",
                        )
                    })?
                    .open()?;
                Some(r)
            } else {
                None
            };
            let e = cc_endpoint(&dev, rep.as_ref(), &a)?;
            let events = cc_event_set(&e)?;
            Ok(doca_comm_channel_ep_t {
                ep: e,
                dev,
                rep,
                attr: a,
                nonblock: a.flags & CC_INIT_NONBLOCK != 0,
                events,
            })
        })
    })
}

fn with_ep1(
    ep: *mut doca_comm_channel_ep_t,
    f: impl FnOnce(&mut doca_comm_channel_ep_t) -> Result<()>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle, used by one thread at a time (DOCA's rule).
        let e = unsafe { handle_mut(ep, "local_ep") }?;
        f(e)
    })
}

fn cc_peer(
    ep: &doca_comm_channel::Endpoint,
    p: *const doca_comm_channel_addr_t,
) -> Result<doca_comm_channel::PeerId> {
    if p.is_null() {
        return Err(err(ErrorCode::NotConnected, "peer_addr is NULL"));
    }
    ep.peer_id_at(p).ok_or_else(|| {
        err(
            ErrorCode::NotConnected,
            "peer_addr is not a peer of this endpoint (disconnected?)",
        )
    })
}

/// `doca_comm_channel_ep_listen` of 1.3.
#[unsafe(export_name = "doca1__comm_channel_ep_listen")]
pub unsafe extern "C" fn doca_comm_channel_ep_listen(
    local_ep: *mut doca_comm_channel_ep_t,
    name: *const c_char,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        // SAFETY: NULL or a NUL-terminated string.
        let n = unsafe { cstr(name, "name") }?;
        e.ep.listen(n)
    })
}

/// `doca_comm_channel_ep_connect` of 1.3: blocks until connected (unless the endpoint
/// does not block); `CONNECTION_ABORTED` when no such service listens.
#[unsafe(export_name = "doca1__comm_channel_ep_connect")]
pub unsafe extern "C" fn doca_comm_channel_ep_connect(
    local_ep: *mut doca_comm_channel_ep_t,
    name: *const c_char,
    peer_addr: *mut *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        // SAFETY: NULL or a NUL-terminated string.
        let n = unsafe { cstr(name, "name") }?;
        let out = out_ptr(peer_addr, "peer_addr")?;
        let id = e.ep.connect(n)?;
        if !e.nonblock {
            let t = std::time::Instant::now();
            while !e.ep.peers().contains(&id) {
                if t.elapsed() > CC_CONNECT_WAIT {
                    // The endpoint is as it was before the call: it may connect again.
                    let fresh = cc_endpoint(&e.dev, e.rep.as_ref(), &e.attr)?;
                    e.events = cc_event_set(&fresh)?;
                    e.ep = fresh;
                    return Err(err(
                        ErrorCode::ConnectionAborted,
                        format!(
                            "no service \"{n}\" listens for this device (start the DPU side first)"
                        ),
                    ));
                }
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        let a = crate::v22::comm_channel::addr_of(&e.ep, id)?;
        // SAFETY: non-NULL, writable.
        unsafe { put(out, a) };
        Ok(())
    })
}

/// `doca_comm_channel_ep_sendto` of 1.3: blocks while the peer's queue is full unless
/// flags or the endpoint say not to.
#[unsafe(export_name = "doca1__comm_channel_ep_sendto")]
pub unsafe extern "C" fn doca_comm_channel_ep_sendto(
    local_ep: *mut doca_comm_channel_ep_t,
    msg: *const c_void,
    len: usize,
    flags: c_int,
    peer_addr: *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        let block = e.blocks(flags)?;
        if msg.is_null() {
            return Err(invalid("msg is NULL"));
        }
        let id = cc_peer(&e.ep, peer_addr)?;
        loop {
            // SAFETY: msg is non-NULL; the caller passes len readable bytes.
            match unsafe { crate::v22::comm_channel::send_bytes(&mut e.ep, msg, len, id) } {
                Err(x) if block && x.code() == ErrorCode::Again => {
                    std::thread::sleep(std::time::Duration::from_micros(50));
                }
                r => return r,
            }
        }
    })
}

/// `doca_comm_channel_ep_recvfrom` of 1.3: blocks while nothing came unless flags or
/// the endpoint say not to; `NOT_CONNECTED` with `*peer_addr` set when a peer's
/// connection ended.
#[unsafe(export_name = "doca1__comm_channel_ep_recvfrom")]
pub unsafe extern "C" fn doca_comm_channel_ep_recvfrom(
    local_ep: *mut doca_comm_channel_ep_t,
    msg: *mut c_void,
    len: *mut usize,
    flags: c_int,
    peer_addr: *mut *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        let block = e.blocks(flags)?;
        loop {
            // SAFETY: the caller's pointers, as recv_bytes asks.
            match unsafe { crate::v22::comm_channel::recv_bytes(&mut e.ep, msg, len, peer_addr) } {
                Err(x) if block && x.code() == ErrorCode::Again => e.wait_readable(10),
                r => return r,
            }
        }
    })
}

/// `doca_comm_channel_ep_disconnect` of 1.3.
#[unsafe(export_name = "doca1__comm_channel_ep_disconnect")]
pub unsafe extern "C" fn doca_comm_channel_ep_disconnect(
    local_ep: *mut doca_comm_channel_ep_t,
    peer_addr: *mut doca_comm_channel_addr_t,
) -> doca_error_t {
    with_ep1(local_ep, |e| {
        let id = cc_peer(&e.ep, peer_addr)?;
        e.ep.disconnect(id)
    })
}

/// `doca_comm_channel_ep_destroy` of 1.3.
#[unsafe(export_name = "doca1__comm_channel_ep_destroy")]
pub unsafe extern "C" fn doca_comm_channel_ep_destroy(
    ep: *mut doca_comm_channel_ep_t,
) -> doca_error_t {
    // SAFETY: NULL or a live boxed handle, freed once.
    ffi(|| unsafe { crate::common::free_handle(ep, "ep") })
}

/// `doca_comm_channel_peer_addr_user_data_get` (1.3).
#[unsafe(export_name = "doca1__comm_channel_peer_addr_user_data_get")]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_user_data_get(
    peer_addr: *mut doca_comm_channel_addr_t,
    user_data: *mut u64,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live peer address.
        let a = unsafe { handle(peer_addr, "peer_addr") }?;
        let o = out_ptr(user_data, "user_data")?;
        // SAFETY: non-NULL, writable.
        unsafe { put(o, a.user_data()) };
        Ok(())
    })
}

/// `doca_comm_channel_peer_addr_user_data_set` (1.3).
#[unsafe(export_name = "doca1__comm_channel_peer_addr_user_data_set")]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_user_data_set(
    peer_addr: *mut doca_comm_channel_addr_t,
    user_context: u64,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live peer address.
        let a = unsafe { handle(peer_addr, "peer_addr") }?;
        a.set_user_data(user_context);
        Ok(())
    })
}

/// `doca_comm_channel_ep_event_channel_get` (1.3): -1 for a NULL endpoint.
#[unsafe(export_name = "doca1__comm_channel_ep_event_channel_get")]
pub unsafe extern "C" fn doca_comm_channel_ep_event_channel_get(
    local_ep: *mut doca_comm_channel_ep_t,
) -> doca_event_channel_t {
    use std::os::fd::AsRawFd;
    crate::common::ffi_value(-1, || {
        // SAFETY: NULL or a live handle.
        let e = unsafe { handle(local_ep, "local_ep") }?;
        Ok(e.events.as_raw_fd())
    })
}

/// `doca_comm_channels_poll` (1.3): `poll()` over the descriptors.
#[unsafe(export_name = "doca1__comm_channels_poll")]
pub unsafe extern "C" fn doca_comm_channels_poll(
    fds: *mut doca_pollfd,
    nfds: u32,
    timeout: c_int,
) -> c_int {
    if fds.is_null() && nfds > 0 {
        return -1;
    }
    // SAFETY: the caller's array of nfds pollfds (the contract of poll()).
    unsafe { libc::poll(fds, libc::nfds_t::from(nfds), timeout) }
}

/// `doca_comm_channel_peer_addr_info_get` (1.3).
#[unsafe(export_name = "doca1__comm_channel_peer_addr_info_get")]
pub unsafe extern "C" fn doca_comm_channel_peer_addr_info_get(
    peer_addr: *mut doca_comm_channel_addr_t,
    info: *mut doca_comm_channel_peer_addr_info,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live peer address.
        let a = unsafe { handle(peer_addr, "peer_addr") }?;
        let o = out_ptr(info, "info")?;
        if !a.is_connected() {
            return Err(err(ErrorCode::NotConnected, "the peer is not connected"));
        }
        let i = doca_comm_channel_peer_addr_info {
            vport: 0,
            msgsize: doca_comm_channel::MAX_MESSAGE_SIZE,
            maxmsgs: 0,
            curmsgs: a.send_in_flight_messages() as u32,
            rx_msgs: a.recv_messages(),
            tx_msgs: a.send_messages(),
            rx_bytes: a.recv_bytes(),
            tx_bytes: a.send_bytes(),
        };
        // SAFETY: non-NULL, writable.
        unsafe { put(o, i) };
        Ok(())
    })
}
