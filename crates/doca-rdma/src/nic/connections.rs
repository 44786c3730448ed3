//! Connections of the NIC: connecting, the connection manager (listen, request,
//! accept, reject, greeting), disconnects and failures, and peers of this machine watched
//! for their end.

use super::*;
use doca_core::Error;

/// `addr` as a C socket address, with its length.
pub(super) fn sockaddr_of(addr: std::net::SocketAddr) -> (libc::sockaddr_storage, usize) {
    let mut storage: libc::sockaddr_storage =
        // SAFETY: all-zero is a valid sockaddr_storage.
        unsafe { std::mem::zeroed() };
    let len = match addr {
        std::net::SocketAddr::V4(a) => {
            let sa = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: a sockaddr_in fits in a sockaddr_storage.
            unsafe {
                ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in, sa);
            }
            std::mem::size_of::<libc::sockaddr_in>()
        }
        std::net::SocketAddr::V6(a) => {
            let sa = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: a sockaddr_in6 fits in a sockaddr_storage.
            unsafe {
                ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in6, sa);
            }
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len)
}

/// The process of a peer on this machine reached through shared memory
/// (`DOCA_RDMA_SHM=1` on both sides), watched for its end: through a pidfd where the
/// system gives one, else by its PID.
pub(super) struct PeerProc {
    pid: u32,
    fd: Option<std::os::fd::OwnedFd>,
}

impl PeerProc {
    fn open(pid: u32) -> PeerProc {
        // SAFETY: pidfd_open takes a PID and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        let fd = (fd >= 0).then(|| {
            // SAFETY: a descriptor just opened, owned from here on.
            unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) }
        });
        PeerProc { pid, fd }
    }

    fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.fd.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// Whether the process ended.
    fn ended(&self) -> bool {
        match &self.fd {
            Some(f) => {
                use std::os::fd::AsRawFd;
                readable(f.as_raw_fd(), 0)
            }
            None => pid_ended(self.pid),
        }
    }
}

/// Whether the process `pid` ended (gone, or a zombie nobody reaped yet).
pub(super) fn pid_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) S ...": the state follows the last ')'.
        Ok(t) => t
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|st| st == "Z" || st == "X"),
        Err(_) => true,
    }
}

/// Whether `fd` is readable within `timeout_ms` (a pidfd: its process ended).
pub(super) fn readable(fd: std::os::fd::RawFd, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout_ms) == 1 && p.revents & libc::POLLIN != 0 }
}

/// The peer address of a connection request, as text ("" when UCX does not say).
pub(super) fn request_peer(r: u::ucp_conn_request_h) -> String {
    // SAFETY: zeroed attributes with the named field; the request is live in the
    // callback that calls this.
    unsafe {
        let mut a: u::ucp_conn_request_attr_t = std::mem::zeroed();
        a.field_mask = u::UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR as u64;
        if u::ucp_conn_request_query(r, &mut a) != u::UCS_OK {
            return String::new();
        }
        let sa = &a.client_address as *const _ as *const libc::sockaddr;
        match i32::from((*sa).sa_family) {
            libc::AF_INET => {
                let v = &*(sa as *const libc::sockaddr_in);
                std::net::Ipv4Addr::from(u32::from_be(v.sin_addr.s_addr)).to_string()
            }
            libc::AF_INET6 => {
                let v = &*(sa as *const libc::sockaddr_in6);
                std::net::Ipv6Addr::from(v.sin6_addr.s6_addr).to_string()
            }
            _ => String::new(),
        }
    }
}

impl State {
    /// The watchdog's look: a connection whose operations wait for a peer (ours, or
    /// answers of ours that hold exported memory) that said nothing since the last look
    /// is probed; one silent for the whole budget ([`peer_timeout`]) fails, with every
    /// operation on it.
    pub(super) fn look_for_silence(&mut self) {
        let mut waiting = std::mem::take(&mut self.waiting);
        waiting.clear();
        for p in &self.pend {
            if p.live && p.answer.is_none() && !waiting.contains(&p.conn) {
                waiting.push(p.conn);
            }
        }
        // Answers of ours that hold exported memory (a read's bytes on their way): an
        // unreachable requester must not keep the exporter's stop waiting for ever.
        for t in &self.tops {
            if t.live && t.guard.is_some() && !waiting.contains(&t.conn) {
                waiting.push(t.conn);
            }
        }
        let mut probe = Vec::new();
        let mut failed = Vec::new();
        for (&id, c) in self.conns.iter_mut() {
            if c.state != ConnState::Connected || !waiting.contains(&id) || c.heard != c.seen {
                c.seen = c.heard;
                c.quiet = 0;
                continue;
            }
            c.quiet += 1;
            if c.quiet >= self.quiet_limit {
                failed.push(id);
            } else {
                probe.push(id);
            }
        }
        for id in probe {
            self.probe(id, op::PING);
        }
        for id in failed {
            self.conn_failed(id, u::UCS_ERR_ENDPOINT_TIMEOUT);
        }
        self.waiting = waiting;
    }

    /// Sends `am` (a probe, or the answer to one) with no data to the peer of `conn`.
    pub(super) fn probe(&mut self, conn: u32, am: u16) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        if c.state != ConnState::Connected {
            return;
        }
        let h = Header {
            conn: c.peer_conn,
            key: c.peer_key,
            ..Header::default()
        };
        let ep = c.ep;
        let i = self.top_new(conn, h.encode(), None, After::Nothing);
        self.top_send(ep, am, i, ptr::null(), 0);
    }

    pub(super) fn connect(&mut self, conn: u32, desc: ConnDesc) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.state != ConnState::Registered {
            return;
        }
        // A peer of this machine is watched through its process, so that UCX may use
        // shared memory (whose transports detect no failures); others through UCX. Both
        // sides decide alike (their endpoints must agree).
        let peer_proc = crate::wire::Place::here()
            .shares_machine(&desc.place)
            .then(|| PeerProc::open(desc.place.pid));
        // SAFETY: zeroed endpoint params with the named fields set; the address bytes
        // live across the call (UCX copies what it needs).
        let (s, ep) = unsafe {
            let mut p: u::ucp_ep_params_t = std::mem::zeroed();
            p.field_mask = (u::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
            p.address = desc.worker.as_ptr() as *const u::ucp_address_t;
            p.err_mode = if peer_proc.is_some() {
                u::UCP_ERR_HANDLING_MODE_NONE
            } else {
                u::UCP_ERR_HANDLING_MODE_PEER
            };
            p.err_handler.cb = Some(ep_err_cb);
            p.err_handler.arg = conn as usize as *mut c_void;
            let mut ep = ptr::null_mut();
            (u::ucp_ep_create(self.w, &p, &mut ep), ep)
        };
        if s == u::UCS_OK
            && let Some(p) = &peer_proc
        {
            self.shared
                .watch
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((conn, p.raw_fd(), p.pid));
        }
        c.peer_proc = peer_proc;
        if s != u::UCS_OK {
            c.state = ConnState::Closed;
            self.sink.conn_event(conn, ConnEvent::Failed);
            return;
        }
        c.ep = ep;
        c.state = ConnState::Connected;
        c.peer_conn = desc.conn;
        c.peer_key = desc.key;
        c.peer_ctx = desc.ctx_id;
        let early = std::mem::take(&mut c.early);
        for m in early {
            let _ = self.dispatch(m);
        }
    }

    pub(super) fn listen(&mut self, port: u16) -> Result<()> {
        if self.listeners.iter().any(|&(p, _)| p == port) {
            return Ok(());
        }
        let ip = self
            .listen_addr
            .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
        let (sa, len) = sockaddr_of(std::net::SocketAddr::new(ip, port));
        // SAFETY: zeroed listener params with the named fields; the address lives
        // across the call (UCX copies it).
        let (s, l) = unsafe {
            let mut p: u::ucp_listener_params_t = std::mem::zeroed();
            p.field_mask = (u::UCP_LISTENER_PARAM_FIELD_SOCK_ADDR
                | u::UCP_LISTENER_PARAM_FIELD_CONN_HANDLER) as u64;
            p.sockaddr.addr = &sa as *const _ as *const u::sockaddr;
            p.sockaddr.addrlen = len as u::socklen_t;
            p.conn_handler.cb = Some(conn_req_cb);
            p.conn_handler.arg = ptr::null_mut();
            let mut l = ptr::null_mut();
            (u::ucp_listener_create(self.w, &p, &mut l), l)
        };
        if s != u::UCS_OK {
            return Err(ucx_error(
                &format!(
                    "cannot listen on {} (in use, or no address to listen on)",
                    std::net::SocketAddr::new(ip, port)
                ),
                s,
            ));
        }
        self.listeners.push((port, l));
        Ok(())
    }

    pub(super) fn conn_requested(&mut self, r: u::ucp_conn_request_h) {
        let from = request_peer(r);
        let id = self.next_req;
        self.next_req += 1;
        self.requests.insert(id, r);
        self.sink.conn_request(id, &from);
    }

    pub(super) fn reject(&mut self, r: u::ucp_conn_request_h) {
        if let Some(&(_, l)) = self.listeners.first() {
            // SAFETY: a request of one of this worker's listeners, answered once.
            unsafe { u::ucp_listener_reject(l, r) };
        }
    }

    /// Creates the endpoint of a connection manager connection and greets the peer.
    pub(super) fn cm_endpoint(&mut self, conn: u32, key: u64, p: &u::ucp_ep_params_t) {
        self.conns.insert(conn, Conn::registered(key));
        let mut ep = ptr::null_mut();
        // SAFETY: the parameters are valid for the call.
        let s = unsafe { u::ucp_ep_create(self.w, p, &mut ep) };
        if s != u::UCS_OK {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.state = ConnState::Closed;
            }
            self.sink.conn_event(conn, ConnEvent::Failed);
            return;
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            c.ep = ep;
        }
        let h = Header {
            a: u64::from(conn),
            b: key,
            c: self.ctx_id,
            ..Header::default()
        };
        let i = self.top_new(conn, h.encode(), None, After::Nothing);
        let hp = self.tops[i as usize].hdr.as_ptr();
        // SAFETY: the header lives in the boxed record until the send completes.
        let r = unsafe {
            let mut rp: u::ucp_request_param_t = std::mem::zeroed();
            rp.op_attr_mask = u::UCP_OP_ATTR_FIELD_CALLBACK
                | u::UCP_OP_ATTR_FIELD_USER_DATA
                | u::UCP_OP_ATTR_FIELD_FLAGS;
            rp.cb.send = Some(send_cb);
            rp.user_data = tag(T_TOP, i);
            rp.flags = u::UCP_AM_SEND_FLAG_REPLY;
            u::ucp_am_send_nbx(
                ep,
                u32::from(op::CM_HELLO),
                hp as *const c_void,
                HDR_LEN,
                ptr::null(),
                0,
                &rp,
            )
        };
        self.track(r);
        if !u::ucs_ptr_is_ptr(r) {
            self.top_finished(i, u::ucs_ptr_status(r));
        }
    }

    pub(super) fn accept(&mut self, req: u64, conn: u32, key: u64) {
        let Some(r) = self.requests.remove(&req) else {
            self.sink.conn_event(conn, ConnEvent::Failed);
            return;
        };
        // SAFETY: zeroed endpoint params with the named fields set.
        let p = unsafe {
            let mut p: u::ucp_ep_params_t = std::mem::zeroed();
            p.field_mask = (u::UCP_EP_PARAM_FIELD_CONN_REQUEST
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
            p.conn_request = r;
            p.err_mode = u::UCP_ERR_HANDLING_MODE_PEER;
            p.err_handler.cb = Some(ep_err_cb);
            p.err_handler.arg = conn as usize as *mut c_void;
            p
        };
        self.cm_endpoint(conn, key, &p);
    }

    pub(super) fn connect_addr(&mut self, conn: u32, key: u64, addr: std::net::SocketAddr) {
        let (storage, len) = sockaddr_of(addr);
        // SAFETY: zeroed endpoint params with the named fields set; the address lives
        // across the ep_create call.
        let p = unsafe {
            let mut p: u::ucp_ep_params_t = std::mem::zeroed();
            p.field_mask = (u::UCP_EP_PARAM_FIELD_SOCK_ADDR
                | u::UCP_EP_PARAM_FIELD_FLAGS
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
            p.flags = u::UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
            p.sockaddr.addr = &storage as *const _ as *const u::sockaddr;
            p.sockaddr.addrlen = len as u::socklen_t;
            p.err_mode = u::UCP_ERR_HANDLING_MODE_PEER;
            p.err_handler.cb = Some(ep_err_cb);
            p.err_handler.arg = conn as usize as *mut c_void;
            p
        };
        self.cm_endpoint(conn, key, &p);
    }

    /// The peer's greeting on a connection manager endpoint: the connection is up.
    pub(super) fn cm_hello(&mut self, h: Header, ep: u::ucp_ep_h) {
        if ep.is_null() {
            return;
        }
        let Some((&id, c)) = self.conns.iter_mut().find(|(_, c)| c.ep == ep) else {
            return;
        };
        if c.state != ConnState::Registered {
            return;
        }
        c.peer_conn = h.a as u32;
        c.peer_key = h.b;
        c.peer_ctx = h.c;
        c.state = ConnState::Connected;
        let early = std::mem::take(&mut c.early);
        self.sink.conn_event(id, ConnEvent::Established);
        for m in early {
            self.dispatch(m);
        }
    }

    pub(super) fn disconnect(&mut self, conn: u32, tell: bool) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let was = c.state;
        c.state = ConnState::Closed;
        let ep = std::mem::replace(&mut c.ep, ptr::null_mut());
        let early = std::mem::take(&mut c.early);
        let watched = c.peer_proc.take();
        let (pc, pk) = (c.peer_conn, c.peer_key);
        for m in early {
            self.release(m.data);
        }
        self.unwatch(conn, watched);
        if was == ConnState::Connected && !ep.is_null() {
            if tell {
                let h = Header {
                    conn: pc,
                    key: pk,
                    ..Header::default()
                };
                let i = self.top_new(conn, h.encode(), None, After::Nothing);
                self.top_send(ep, op::DISCONNECT, i, ptr::null(), 0);
                self.close_ep(ep, false);
            } else {
                // The peer ended it and closes its side: this side closes last (at
                // stop), so that its connection manager port is not left waiting in
                // TCP's TIME_WAIT, and a server that restarts can listen on it again.
                self.lingering.push(ep);
            }
        }
        self.fail_conn_ops(
            conn,
            ErrorCode::ConnectionAborted,
            "the connection was ended",
        );
        self.drop_unmatched_of(conn);
        self.pieces.retain(|&(c, _), _| c != conn);
    }

    pub(super) fn close_ep(&mut self, ep: u::ucp_ep_h, force: bool) {
        // SAFETY: zeroed request params with the named fields; the endpoint is ours and
        // not used after this.
        let r = unsafe {
            let mut p: u::ucp_request_param_t = std::mem::zeroed();
            p.op_attr_mask = u::UCP_OP_ATTR_FIELD_CALLBACK | u::UCP_OP_ATTR_FIELD_FLAGS;
            p.cb.send = Some(close_cb);
            p.flags = if force { u::UCP_EP_CLOSE_FLAG_FORCE } else { 0 };
            u::ucp_ep_close_nbx(ep, &p)
        };
        if u::ucs_ptr_is_ptr(r) {
            self.closing.push(r);
        }
    }

    pub(super) fn conn_failed(&mut self, conn: u32, status: u::ucs_status_t) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.state == ConnState::Closed {
            return;
        }
        c.state = ConnState::Closed;
        let ep = std::mem::replace(&mut c.ep, ptr::null_mut());
        let watched = c.peer_proc.take();
        // A peer of this machine reached through shared memory: its endpoint has no
        // UCX error handling, so it cannot be closed by force; it is left to the
        // worker's end, and what is stuck in it is retired below.
        let stranded = watched.is_some();
        self.unwatch(conn, watched);
        if !ep.is_null() && !stranded {
            self.close_ep(ep, true);
        }
        let what = format!("the connection failed: {}", crate::ucx::status_text(status));
        self.fail_conn_ops(conn, ErrorCode::ConnectionReset, &what);
        if stranded {
            self.retire_stranded(conn, &what);
        }
        self.drop_unmatched_of(conn);
        self.pieces.retain(|&(c, _), _| c != conn);
        self.flush_recvs_if_alone(&what);
        self.sink.conn_event(conn, ConnEvent::Failed);
    }

    /// A context whose one queue pair failed (no other connection, made or coming,
    /// and no listener that may bring one) has its posted receives flushed with an
    /// error, as a NIC flushes the receive queue of a queue pair in error: a program
    /// waiting for a peer's answer learns of the peer's end though it sends nothing.
    fn flush_recvs_if_alone(&mut self, what: &str) {
        if !self.listeners.is_empty() || self.conns.values().any(|c| c.state != ConnState::Closed) {
            return;
        }
        for r in std::mem::take(&mut self.recvs) {
            self.sink.complete(
                r.user,
                Err(Error::with_context(
                    ErrorCode::ConnectionReset,
                    format!("{what}; the receive was flushed"),
                )),
            );
        }
    }

    /// Stops watching a connection's peer process.
    pub(super) fn unwatch(&mut self, conn: u32, p: Option<PeerProc>) {
        if p.is_some() {
            self.shared
                .watch
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|&(c, _, _)| c != conn);
        }
        drop(p);
    }

    /// Fails the connections whose watched peer process ended.
    pub(super) fn reap_peers(&mut self, conns: &[u32]) {
        for &conn in conns {
            let gone = self
                .conns
                .get(&conn)
                .and_then(|c| c.peer_proc.as_ref())
                .is_some_and(PeerProc::ended);
            if gone {
                self.conn_failed(conn, u::UCS_ERR_CONNECTION_RESET);
            }
        }
    }

    pub(super) fn fail_conn_ops(&mut self, conn: u32, code: ErrorCode, what: &str) {
        for i in 0..self.pend.len() {
            let p = &mut self.pend[i];
            if p.live && p.conn == conn && p.answer.is_none() {
                // Done once UCX lets go of the request's memory (closing the
                // endpoint ends its requests).
                p.answer = Some(Err(Error::with_context(code, what.to_string())));
                self.pend_try_done(i as u32);
            }
        }
    }

    /// Ends what a connection whose peer process ended still has in UCX's
    /// shared-memory transport, which (with no error handling on such an endpoint)
    /// never ends it: a send waits for room in the peer's queue and a receive for the
    /// peer's bytes, and only the peer, gone, could give either. So UCX touches their
    /// memory no more. Requests end with an error and target actions let go of their
    /// memory guards; their records are retired (never reused), so that a late
    /// callback, at the worker's end, finds a record that is not live, and the
    /// headers and bounce buffers UCX still points at stay valid.
    pub(super) fn retire_stranded(&mut self, conn: u32, what: &str) {
        for i in 0..self.pend.len() {
            let p = &mut self.pend[i];
            if p.live && p.conn == conn {
                p.live = false;
                let r = p.answer.take().unwrap_or_else(|| {
                    Err(Error::with_context(
                        ErrorCode::ConnectionReset,
                        what.to_string(),
                    ))
                });
                let user = p.user;
                self.sink.complete(user, r);
            }
        }
        for i in 0..self.tops.len() {
            let t = &mut self.tops[i];
            if !t.live || t.conn != conn {
                continue;
            }
            t.live = false;
            t.guard = None;
            if let After::RecvLanded { user, .. } = std::mem::replace(&mut t.after, After::Nothing)
            {
                self.sink.complete(
                    user,
                    Err(Error::with_context(
                        ErrorCode::ConnectionReset,
                        what.to_string(),
                    )),
                );
            }
        }
    }

    pub(super) fn drop_unmatched_of(&mut self, conn: u32) {
        let mut keep = VecDeque::with_capacity(self.unmatched.len());
        while let Some(m) = self.unmatched.pop_front() {
            if m.hdr.conn == conn {
                self.release(m.data);
            } else {
                keep.push_back(m);
            }
        }
        self.unmatched = keep;
    }
}
