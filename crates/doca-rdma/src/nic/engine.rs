//! The NIC's thread: its loop (UCX progress, sleeping on the worker's descriptor,
//! watching peer processes), the commands it takes, UCX's callbacks into the state, the
//! messages they hand over (routed to the requester or the target side), and the
//! shutdown.

use super::*;
use doca_core::Error;

/// How long the NIC thread keeps polling after its last piece of work before it sleeps
/// in the kernel (latency of a reply against CPU burnt while idle).
pub(super) const SPIN: Duration = Duration::from_micros(50);

/// While a program thread polls (it progressed the worker since the NIC thread last
/// looked), the NIC thread stands by this long before looking again: it would only
/// compete for the CPUs. It takes over at most this long after the program stops.
pub(super) const STANDBY: Duration = Duration::from_micros(500);

/// How often the NIC thread looks at watched peer processes while busy.
pub(super) const WATCH_EVERY: Duration = Duration::from_millis(20);
/// How often the watchdog looks for peers that are silent while operations wait for
/// them (see [`peer_timeout`]).
pub(super) const WATCHDOG_EVERY: Duration = Duration::from_millis(250);

/// How long a peer may stay silent while operations of ours wait for it before the
/// connection fails: 10 s, or `DOCA_RDMA_PEER_TIMEOUT_MS` (at least 500 ms). A silent
/// peer is probed meanwhile ([`op::PING`]; its NIC answers whatever its program
/// does), so only a peer that cannot be reached (a partition, a link down, a machine
/// gone) reaches it; a NIC's RC queue pair gives up after its retry budget the same
/// way, and its operations end with an error.
pub(super) fn peer_timeout() -> Duration {
    let ms = std::env::var("DOCA_RDMA_PEER_TIMEOUT_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .map_or(10_000, |v| v.max(500));
    Duration::from_millis(ms)
}

pub(super) fn run(
    worker: Worker,
    shared: Arc<Shared>,
    sink: Arc<dyn Sink>,
    (dev, grants): (u32, AccessFlags),
    ctx_id: u64,
    listen_addr: Option<std::net::IpAddr>,
    ready: std::sync::mpsc::Sender<Result<()>>,
) {
    let mut st = Box::new(State {
        w: worker.w,
        shared: Arc::clone(&shared),
        sink,
        dev,
        grants: grants & GRANT_ALL,
        conns: HashMap::default(),
        pend: Vec::new(),
        pend_free: Vec::new(),
        tops: Vec::new(),
        tops_free: Vec::new(),
        bounces: Vec::new(),
        recvs: VecDeque::new(),
        unmatched: VecDeque::new(),
        spare: Vec::with_capacity(256),
        closing: Vec::new(),
        open_reqs: Vec::with_capacity(256),
        ctx_id,
        listeners: Vec::new(),
        listen_addr,
        lingering: Vec::new(),
        requests: HashMap::default(),
        next_req: 1,
        in_am: false,
        am_data: ptr::null_mut(),
        am_consumed: false,
        late_release: Vec::with_capacity(64),
        late_acks: Vec::with_capacity(64),
        pieces: HashMap::default(),
        quiet_limit: (peer_timeout().as_millis() / WATCHDOG_EVERY.as_millis()).max(2) as u32,
        waiting: Vec::with_capacity(16),
    });
    let sp: *mut State = &mut *st;
    STATE.with(|s| s.set(sp));
    for id in 1..=op::LAST {
        // SAFETY: zeroed handler params with the named fields set; the callback and
        // its argument stay valid while the worker lives (the state outlives it).
        let s = unsafe {
            let mut p: u::ucp_am_handler_param_t = std::mem::zeroed();
            p.field_mask = (u::UCP_AM_HANDLER_PARAM_FIELD_ID
                | u::UCP_AM_HANDLER_PARAM_FIELD_CB
                | u::UCP_AM_HANDLER_PARAM_FIELD_ARG
                | u::UCP_AM_HANDLER_PARAM_FIELD_FLAGS) as u64;
            p.id = u32::from(id);
            p.cb = Some(am_cb);
            p.arg = usize::from(id) as *mut c_void;
            p.flags = u::UCP_AM_FLAG_WHOLE_MSG | u::UCP_AM_FLAG_PERSISTENT_DATA;
            u::ucp_worker_set_am_recv_handler(worker.w, &p)
        };
        if s != u::UCS_OK {
            let _ = ready.send(Err(ucx_error("cannot set the UCX message handlers", s)));
            STATE.with(|s| s.set(ptr::null_mut()));
            return;
        }
    }
    // The worker's event descriptor: the NIC thread sleeps on it once idle.
    let mut efd: std::ffi::c_int = -1;
    // SAFETY: the worker is this thread's until it is shared below.
    if unsafe { u::ucp_worker_get_efd(worker.w, &mut efd) } != u::UCS_OK {
        efd = -1;
    }
    STATE.with(|s| s.set(ptr::null_mut()));
    *shared.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(StateBox(st));
    let _ = ready.send(Ok(()));
    let mut idle_since = Instant::now();
    let mut watched_at = Instant::now();
    let mut watchdog_at = Instant::now();
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            break;
        }
        if watchdog_at.elapsed() > WATCHDOG_EVERY {
            watchdog_at = Instant::now();
            with_locked_state(&shared, State::look_for_silence);
        }
        // A transport that stays busy (retrying a peer that is gone) must not keep the
        // watched peers from being looked at.
        if watched_at.elapsed() > WATCH_EVERY {
            watched_at = Instant::now();
            let ended = wait_peers(&shared, None, Duration::ZERO);
            if !ended.is_empty() {
                reap(&shared, &ended);
            }
        }
        if shared.app_driving() {
            let ended = wait_peers(&shared, None, STANDBY);
            if !ended.is_empty() {
                reap(&shared, &ended);
            }
            continue;
        }
        let mut armed = false;
        {
            let mut g = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            let Some(b) = g.as_mut() else { break };
            let sp: *mut State = &mut *b.0;
            let _d = Driving::enter(sp);
            // SAFETY: the state is this lock holder's; UCX calls back into it (through
            // STATE) only from ucp_worker_progress, while no other reference is live.
            let mut busy = unsafe { (*sp).drain() } > 0;
            // SAFETY: as above.
            unsafe {
                if !(*sp).late_acks.is_empty() {
                    (*sp).flush_acks();
                    busy = true;
                }
            }
            // A bounded batch: a transport that always has something to do (a peer
            // that is gone, being retried) must not keep commands and the stop waiting.
            for _ in 0..64 {
                // SAFETY: as above.
                let n = unsafe { u::ucp_worker_progress(worker.w) };
                // SAFETY: as above.
                unsafe { (*sp).release_late() };
                if n == 0 {
                    break;
                }
                busy = true;
            }
            if busy {
                idle_since = Instant::now();
            } else if idle_since.elapsed() > SPIN && efd >= 0 {
                // SAFETY: the worker, held under the lock.
                armed = unsafe { u::ucp_worker_arm(worker.w) } == u::UCS_OK;
            }
        }
        if armed {
            // A command or the stop signals the worker, which makes its descriptor
            // readable; the timeout bounds a missed wake-up.
            let ended = wait_peers(&shared, Some(efd), Duration::from_millis(100));
            if !ended.is_empty() {
                reap(&shared, &ended);
            }
        } else {
            std::hint::spin_loop();
        }
    }
    let Some(StateBox(mut st)) = shared
        .state
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
    else {
        drop(worker);
        return;
    };
    let sp: *mut State = &mut *st;
    let d = Driving::enter(sp);
    // SAFETY: the state is this thread's alone now (taken out of the lock).
    unsafe { (*sp).begin_shutdown() };
    let t = Instant::now();
    while t.elapsed() < Duration::from_millis(500) && st_ref(sp).busy() {
        // SAFETY: the worker is this thread's; no reference to the state is live.
        unsafe {
            u::ucp_worker_progress(worker.w);
            (*sp).release_late();
        }
    }
    // SAFETY: as above.
    unsafe { (*sp).finish_shutdown() };
    drop(d);
    drop(worker);
    // SAFETY: as above; the worker is gone, so nothing touches user memory now.
    unsafe { (*sp).fail_leftovers() };
    drop(st);
}

/// Waits up to `timeout` for the worker's descriptor `efd` (when given) or the end of
/// a watched peer process; the connections whose peer may have ended.
pub(super) fn wait_peers(
    shared: &Shared,
    efd: Option<std::ffi::c_int>,
    timeout: Duration,
) -> Vec<u32> {
    let watched: Vec<(u32, std::os::fd::RawFd, u32)> = shared
        .watch
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    // Peers with no pidfd are looked at by PID, at least every 100 ms.
    let by_pid: Vec<u32> = watched
        .iter()
        .filter(|w| w.1 < 0 && pid_ended(w.2))
        .map(|w| w.0)
        .collect();
    if !by_pid.is_empty() {
        return by_pid;
    }
    let timeout = if watched.iter().any(|w| w.1 < 0) {
        timeout.min(Duration::from_millis(100))
    } else {
        timeout
    };
    if watched.is_empty() {
        // The common case, with nothing to allocate: the worker's descriptor or a nap.
        match efd {
            None => std::thread::sleep(timeout),
            Some(fd) => {
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLIN,
                    revents: 0,
                };
                let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut p, 1, ms) };
            }
        }
        return Vec::new();
    }
    let mut fds: Vec<libc::pollfd> = efd
        .into_iter()
        .chain(watched.iter().map(|&(_, fd, _)| fd))
        .map(|fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let ts = libc::timespec {
        tv_sec: timeout.as_secs() as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `fds` are valid pollfds; a descriptor closed meanwhile reports POLLNVAL,
    // and what a reused number reports is checked again under the state's lock.
    let n = unsafe {
        libc::ppoll(
            fds.as_mut_ptr(),
            fds.len() as libc::nfds_t,
            &ts,
            ptr::null(),
        )
    };
    if n <= 0 {
        return Vec::new();
    }
    let skip = usize::from(efd.is_some());
    fds[skip..]
        .iter()
        .zip(&watched)
        .filter(|(p, _)| p.revents & libc::POLLIN != 0)
        .map(|(_, &(conn, _, _))| conn)
        .collect()
}

/// Fails the connections whose peer process ended (checked under the state's lock).
pub(super) fn reap(shared: &Shared, conns: &[u32]) {
    with_locked_state(shared, |st| st.reap_peers(conns));
}

/// Runs `f` on the state under its lock, as the thread that drives the worker (closing
/// endpoints may call back into the state).
pub(super) fn with_locked_state(shared: &Shared, f: impl FnOnce(&mut State)) {
    let mut g = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    let Some(b) = g.as_mut() else { return };
    let sp: *mut State = &mut *b.0;
    let _d = Driving::enter(sp);
    // SAFETY: the state is this lock holder's; UCX calls back into it only through
    // STATE, from calls `f` makes, while `f`'s reference is the only one in use.
    f(unsafe { &mut *sp });
}

pub(super) fn st_ref<'a>(sp: *mut State) -> &'a State {
    // SAFETY: the state lives for the thread's loop; shared access only to read flags.
    unsafe { &*sp }
}

pub(super) fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> Option<R> {
    let sp = STATE.with(|s| s.get());
    if sp.is_null() {
        return None;
    }
    // SAFETY: UCX calls back only from ucp_worker_progress on the NIC thread, during
    // which the loop holds no reference to the state.
    Some(f(unsafe { &mut *sp }))
}

pub(super) unsafe extern "C" fn am_cb(
    arg: *mut c_void,
    header: *const c_void,
    header_length: usize,
    data: *mut c_void,
    length: usize,
    param: *const u::ucp_am_recv_param_t,
) -> u::ucs_status_t {
    let am = arg as usize as u16;
    let hdr = if header.is_null() {
        None
    } else {
        // SAFETY: UCX hands a header of header_length bytes valid during the call.
        Header::decode(unsafe { std::slice::from_raw_parts(header as *const u8, header_length) })
    };
    // SAFETY: param is valid during the call.
    let attr = unsafe { (*param).recv_attr };
    let rndv = attr & u::UCP_AM_RECV_ATTR_FLAG_RNDV as u64 != 0;
    let Some(hdr) = hdr else {
        // Not one of ours: dropped (a rendezvous sender is told it failed).
        return if rndv { u::UCS_ERR_REJECTED } else { u::UCS_OK };
    };
    let (kept, owned) = if rndv {
        (Kept::Rndv(data, length), true)
    } else if attr & u::UCP_AM_RECV_ATTR_FLAG_DATA as u64 != 0 {
        (Kept::Eager(data, length), true)
    } else if length == 0 || data.is_null() {
        (Kept::None, false)
    } else {
        // SAFETY: eager data valid during the call; copied, since UCX does not let
        // us keep it.
        let v = unsafe { std::slice::from_raw_parts(data as *const u8, length) }.to_vec();
        (Kept::Owned(v), false)
    };
    if am == op::CM_HELLO {
        // SAFETY: param is valid during the call.
        let ep = unsafe { (*param).reply_ep };
        with_state(|st| st.cm_hello(hdr, ep));
        return if rndv { u::UCS_ERR_REJECTED } else { u::UCS_OK };
    }
    let accepted = with_state(|st| {
        st.in_am = true;
        st.am_data = data;
        st.am_consumed = false;
        let r = st.incoming(Incoming {
            am,
            hdr,
            data: kept,
        });
        st.in_am = false;
        st.am_data = ptr::null_mut();
        r.map(|()| st.am_consumed)
    });
    match accepted {
        // Done with before the callback returned: UCX releases it.
        Some(Ok(true)) => u::UCS_OK,
        // Ours now: released or consumed by the NIC (never by UCX after this).
        Some(Ok(false)) if owned => u::UCS_INPROGRESS,
        Some(Ok(false)) => u::UCS_OK,
        // Refused before it was taken: UCX drops it.
        _ if rndv => u::UCS_ERR_REJECTED,
        _ => u::UCS_OK,
    }
}

pub(super) unsafe extern "C" fn send_cb(
    req: *mut c_void,
    status: u::ucs_status_t,
    user: *mut c_void,
) {
    let ours = with_state(|st| {
        st.untrack(req);
        st.finished(user, status, 0)
    });
    if ours.is_some() {
        // SAFETY: a request UCX handed to us, finished; freed once (at the end of the
        // NIC, requests still open were released already, and there is no state).
        unsafe { u::ucp_request_free(req) };
    }
}

pub(super) unsafe extern "C" fn recv_cb(
    req: *mut c_void,
    status: u::ucs_status_t,
    len: usize,
    user: *mut c_void,
) {
    let ours = with_state(|st| {
        st.untrack(req);
        st.finished(user, status, len)
    });
    if ours.is_some() {
        // SAFETY: as in send_cb.
        unsafe { u::ucp_request_free(req) };
    }
}

pub(super) unsafe extern "C" fn conn_req_cb(req: u::ucp_conn_request_h, _arg: *mut c_void) {
    with_state(|st| st.conn_requested(req));
}

pub(super) unsafe extern "C" fn ep_err_cb(
    arg: *mut c_void,
    _ep: u::ucp_ep_h,
    status: u::ucs_status_t,
) {
    let conn = arg as usize as u32;
    with_state(|st| st.conn_failed(conn, status));
}

pub(super) unsafe extern "C" fn close_cb(
    req: *mut c_void,
    _status: u::ucs_status_t,
    _user: *mut c_void,
) {
    let ours = with_state(|st| st.closing.retain(|&r| r != req));
    if ours.is_some() {
        // SAFETY: as in send_cb.
        unsafe { u::ucp_request_free(req) };
    }
}

impl State {
    /// Runs the queued commands; how many.
    pub(super) fn drain(&mut self) -> usize {
        if !self.shared.has_cmds.load(Ordering::Acquire)
            || !self.shared.has_cmds.swap(false, Ordering::AcqRel)
        {
            return 0;
        }
        {
            let mut q = self.shared.cmds.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::swap(&mut *q, &mut self.spare);
        }
        let mut cmds = std::mem::take(&mut self.spare);
        let n = cmds.len();
        for c in cmds.drain(..) {
            self.command(c);
        }
        self.spare = cmds;
        n
    }

    pub(super) fn command(&mut self, c: Cmd) {
        match c {
            Cmd::Register { conn, key } => {
                self.conns.insert(conn, Conn::registered(key));
            }
            Cmd::Connect { conn, desc } => self.connect(conn, desc),
            Cmd::Listen { port, reply } => {
                let _ = reply.send(self.listen(port));
            }
            Cmd::Describe { conn, reply } => {
                let t = match self.conns.get(&conn) {
                    // SAFETY: the connection's endpoint, of this thread's worker.
                    Some(c) if !c.ep.is_null() => unsafe { crate::ucx::transports_of(c.ep) },
                    _ => String::new(),
                };
                let _ = reply.send(t);
            }
            Cmd::StopListen { port } => {
                self.listeners.retain(|&(p, l)| {
                    if p == port {
                        // SAFETY: a listener of this worker, destroyed once.
                        unsafe { u::ucp_listener_destroy(l) };
                        false
                    } else {
                        true
                    }
                });
            }
            Cmd::Accept { req, conn, key } => self.accept(req, conn, key),
            Cmd::Reject { req } => {
                if let Some(r) = self.requests.remove(&req) {
                    self.reject(r);
                }
            }
            Cmd::ConnectAddr { conn, key, addr } => self.connect_addr(conn, key, addr),
            Cmd::Disconnect { conn } => self.disconnect(conn, true),
            Cmd::Recv { user, ptr, cap } => {
                self.recvs.push_back(PostedRecv { user, ptr, cap });
                self.match_receives();
            }
            Cmd::Send {
                user,
                conn,
                ptr,
                len,
                imm,
            } => {
                let mut h = Header {
                    flags: if imm.is_some() { F_IMM } else { 0 },
                    c: u64::from(imm.unwrap_or(0)),
                    ..Header::default()
                };
                // An answer owed on this connection rides with the send.
                if let Some(k) = self.late_acks.iter().position(|&(c, _)| c == conn) {
                    let (_, req) = self.late_acks.remove(k);
                    h.flags |= F_ACK;
                    h.t0 = req;
                }
                self.request(
                    op::SEND,
                    PendKind::Send,
                    conn,
                    user,
                    h,
                    ptr as *mut u8,
                    len,
                    len,
                );
            }
            Cmd::Write {
                user,
                conn,
                ptr,
                len,
                token,
                addr,
                imm,
            } => {
                let h = Header {
                    flags: if imm.is_some() { F_IMM } else { 0 },
                    a: addr,
                    b: len as u64,
                    c: u64::from(imm.unwrap_or(0)),
                    t0: token[0],
                    t1: token[1],
                    ..Header::default()
                };
                self.request(
                    op::WRITE,
                    PendKind::Write,
                    conn,
                    user,
                    h,
                    ptr as *mut u8,
                    len,
                    len,
                );
            }
            Cmd::Read {
                user,
                conn,
                ptr,
                len,
                token,
                addr,
            } => {
                let h = Header {
                    a: addr,
                    b: len as u64,
                    t0: token[0],
                    t1: token[1],
                    ..Header::default()
                };
                self.request(op::READ, PendKind::Read, conn, user, h, ptr, len, 0);
            }
            Cmd::Event {
                user,
                conn,
                token,
                op,
                result,
            } => {
                use doca_core::sync_event::net::Op;
                let (flags, a) = match op {
                    Op::Get => (0, 0),
                    Op::Set(v) => (F_EV_SET, v),
                    Op::Add(v) => (F_EV_ADD, v),
                };
                let h = Header {
                    flags,
                    a,
                    t0: token[0],
                    t1: token[1],
                    ..Header::default()
                };
                self.request(op::EVENT, PendKind::Event, conn, user, h, result, 8, 0);
            }
            Cmd::Atomic {
                user,
                conn,
                token,
                addr,
                cas,
                b,
                c,
                result,
            } => {
                let h = Header {
                    flags: if cas { F_CAS } else { 0 },
                    a: addr,
                    b,
                    c,
                    t0: token[0],
                    t1: token[1],
                    ..Header::default()
                };
                self.request(op::ATOMIC, PendKind::Atomic, conn, user, h, result, 8, 0);
            }
        }
    }

    /// Gives back the data kept inside message callbacks (call after progress).
    pub(super) fn release_late(&mut self) {
        for p in self.late_release.drain(..) {
            // SAFETY: data UCX let us keep, its callback returned; released once.
            unsafe { u::ucp_am_data_release(self.w, p) };
        }
    }

    pub(super) fn release(&mut self, d: Kept) {
        match d {
            // Inside the message callback, after it returns.
            // The callback's own message: UCX releases it when the callback returns.
            Kept::Eager(p, _) if self.in_am && p == self.am_data => {
                self.am_consumed = true;
            }
            Kept::Eager(p, _) | Kept::Rndv(p, _) if self.in_am => self.late_release.push(p),
            // SAFETY: data UCX let us keep (persistent eager data or a rendezvous
            // descriptor), released once.
            Kept::Eager(p, _) | Kept::Rndv(p, _) => unsafe { u::ucp_am_data_release(self.w, p) },
            Kept::None | Kept::Owned(_) => {}
        }
    }

    /// A message came; refused (and left to UCX) unless it names a connection of this
    /// context with its key.
    pub(super) fn incoming(&mut self, m: Incoming) -> std::result::Result<(), ()> {
        if !self.conns.contains_key(&m.hdr.conn) {
            // Perhaps registered by a command not run yet.
            self.drain();
        }
        let ok = self
            .conns
            .get(&m.hdr.conn)
            .is_some_and(|c| c.key == m.hdr.key && c.state != ConnState::Closed);
        if !ok {
            // Unknown connection or wrong key: dropped without an answer.
            return Err(());
        }
        if let Some(c) = self.conns.get_mut(&m.hdr.conn) {
            c.heard += 1;
        }
        self.dispatch(m);
        Ok(())
    }

    pub(super) fn dispatch(&mut self, m: Incoming) -> u::ucs_status_t {
        let conn = m.hdr.conn;
        match m.am {
            op::ACK | op::READ_RESP => return self.answer(m),
            op::PING => {
                self.release(m.data);
                self.probe(conn, op::PONG);
                return u::UCS_OK;
            }
            op::PONG => {
                // Heard (counted on arrival): nothing else to do.
                self.release(m.data);
                return u::UCS_OK;
            }
            op::DISCONNECT => {
                self.release(m.data);
                let was = self.conns.get(&conn).map(|c| c.state);
                self.disconnect(conn, false);
                if was == Some(ConnState::Connected) {
                    self.sink.conn_event(conn, ConnEvent::Disconnected);
                }
                return u::UCS_OK;
            }
            _ => {}
        }
        let connected = self
            .conns
            .get(&conn)
            .is_some_and(|c| c.state == ConnState::Connected);
        if !connected {
            // The answer needs this side's endpoint: keep the request until connect.
            let keep = !matches!(m.data, Kept::None);
            if let Some(c) = self.conns.get_mut(&conn) {
                c.early.push_back(m);
            }
            return if keep { u::UCS_INPROGRESS } else { u::UCS_OK };
        }
        if m.am == op::SEND && m.hdr.flags & F_ACK != 0 {
            // The answer to an earlier send of ours, riding with this one.
            let ack = Header {
                conn,
                key: m.hdr.key,
                req: m.hdr.t0,
                ..Header::default()
            };
            self.answer(Incoming {
                am: op::ACK,
                hdr: ack,
                data: Kept::None,
            });
        }
        match m.am {
            op::SEND => {
                let keep = !matches!(m.data, Kept::None);
                self.unmatched.push_back(m);
                let st = self.match_receives_status();
                if keep && st {
                    u::UCS_INPROGRESS
                } else {
                    u::UCS_OK
                }
            }
            op::WRITE if m.hdr.flags & F_FRAG != 0 => self.target_write_piece(m),
            op::WRITE => self.target_write(m),
            op::READ => {
                self.target_read(m);
                u::UCS_OK
            }
            op::ATOMIC => {
                self.target_atomic(m);
                u::UCS_OK
            }
            op::EVENT => {
                self.target_event(m);
                u::UCS_OK
            }
            _ => {
                self.release(m.data);
                u::UCS_OK
            }
        }
    }

    /// First half of the end: goodbyes, closes, pending receives failed.
    pub(super) fn begin_shutdown(&mut self) {
        self.flush_acks();
        let reqs: Vec<u::ucp_conn_request_h> = self.requests.drain().map(|(_, r)| r).collect();
        for r in reqs {
            self.reject(r);
        }
        for (_, l) in std::mem::take(&mut self.listeners) {
            // SAFETY: a listener of this worker, destroyed once.
            unsafe { u::ucp_listener_destroy(l) };
        }
        for ep in std::mem::take(&mut self.lingering) {
            self.close_ep(ep, true);
        }
        let conns: Vec<u32> = self.conns.keys().copied().collect();
        for c in conns {
            self.disconnect(c, true);
        }
        while let Some(m) = self.unmatched.pop_front() {
            self.release(m.data);
        }
        for r in std::mem::take(&mut self.recvs) {
            self.sink.complete(
                r.user,
                Err(Error::with_context(
                    ErrorCode::ConnectionAborted,
                    "the RDMA context stopped",
                )),
            );
        }
    }

    pub(super) fn busy(&self) -> bool {
        !self.closing.is_empty()
            || self.tops.iter().any(|t| t.live)
            || self.pend.iter().any(|p| p.live)
    }

    /// Second half, once the worker made what progress it could: requests still in
    /// flight are cancelled, and operations still pending end with an error.
    pub(super) fn finish_shutdown(&mut self) {
        // Requests still open (a peer that does not answer) are released now: UCX
        // frees them when they end, at the latest while the worker goes; their
        // callbacks then find no state and do nothing.
        for r in std::mem::take(&mut self.closing)
            .into_iter()
            .chain(std::mem::take(&mut self.open_reqs))
        {
            // SAFETY: a request of this worker not released yet, released once.
            unsafe { u::ucp_request_free(r) };
        }
        for t in &mut self.tops {
            t.guard = None;
            t.live = false;
        }
    }

    /// After the worker is gone (no transport touches user memory any more): the
    /// operations that did not end.
    pub(super) fn fail_leftovers(&mut self) {
        for i in 0..self.pend.len() {
            let p = &mut self.pend[i];
            if p.live {
                p.live = false;
                let r = p.answer.take().unwrap_or_else(|| {
                    Err(Error::with_context(
                        ErrorCode::ConnectionAborted,
                        "the RDMA context stopped before the operation ended",
                    ))
                });
                self.sink.complete(p.user, r);
            }
        }
    }
}
