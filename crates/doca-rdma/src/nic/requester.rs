//! The requester side of the NIC: operations sent to the peer, their answers, and
//! their completions.

use super::*;
use doca_core::Error;

pub(super) fn refused(code: ErrorCode) -> Error {
    Error::with_context(
        code,
        match code {
            ErrorCode::NotFound => {
                "the remote side has no live export with this key (never exported, forged, or revoked: its mmap stopped or its sync event was destroyed)"
            }
            ErrorCode::NotPermitted => {
                "the remote side refused the access: its RDMA context's permissions (doca_rdma_set_permissions) or its exported memory's (doca_mmap_set_permissions) do not grant it, or the memory is on another device"
            }
            ErrorCode::InvalidValue => {
                "the remote side refused the access: the range lies outside its exported memory, or the message is longer than the posted receive"
            }
            ErrorCode::ConnectionAborted => "the remote side ended the operation (stopped)",
            _ => "the remote side refused the operation",
        },
    )
}

pub(super) fn code_of(status: u64) -> ErrorCode {
    ErrorCode::from_raw(status as i64 as i32).unwrap_or(ErrorCode::Unknown)
}

impl State {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn request(
        &mut self,
        am: u16,
        kind: PendKind,
        conn: u32,
        user: u64,
        mut h: Header,
        ptr: *mut u8,
        len: usize,
        payload: usize,
    ) {
        let (ep, pc, pk, shm) = match self.conns.get(&conn) {
            Some(c) if c.state == ConnState::Connected => {
                (c.ep, c.peer_conn, c.peer_key, c.peer_proc.is_some())
            }
            _ => {
                self.sink.complete(
                    user,
                    Err(Error::with_context(
                        ErrorCode::NotConnected,
                        "the RDMA connection is not connected (connect it, or it was ended)",
                    )),
                );
                return;
            }
        };
        // Over shared memory, large writes and read answers move in pieces that each
        // fit one segment of UCX's shared-memory queue: the sender copies one piece in
        // while the receiver copies the one before out (as UCX's own emulated puts and
        // gets do), where one message would go by rendezvous with a single copier.
        let pieces = shm && len > piece_max();
        if pieces && am == op::READ {
            h.flags |= F_FRAG;
        }
        let i = match self.pend_free.pop() {
            Some(i) => i,
            None => {
                self.pend.push(Box::new(Pending {
                    generation: 0,
                    live: false,
                    conn: 0,
                    user: 0,
                    kind,
                    ptr: ptr::null_mut(),
                    len: 0,
                    sent: false,
                    answer: None,
                    busy: false,
                    hdr: [0; HDR_LEN],
                    sends_left: 0,
                    got: 0,
                    piece_hdrs: Vec::new(),
                }));
                (self.pend.len() - 1) as u32
            }
        };
        let p = &mut self.pend[i as usize];
        p.generation = p.generation.wrapping_add(1);
        p.live = true;
        p.conn = conn;
        p.user = user;
        p.kind = kind;
        p.ptr = ptr;
        p.len = len;
        p.sent = false;
        p.answer = None;
        p.busy = false;
        p.got = 0;
        h.conn = pc;
        h.key = pk;
        h.req = (u64::from(p.generation) << 32) | u64::from(i);
        p.hdr = h.encode();
        if pieces && am == op::WRITE && payload == len && u32::try_from(len).is_ok() {
            // Every piece names the whole write (checked whole at the target, as a
            // NIC checks a write's range before its first byte) and its own place in
            // it; the total lets the target answer once all are in.
            let step = piece_len(len);
            let n = len.div_ceil(step);
            p.piece_hdrs.clear();
            for k in 0..n {
                let off = k * step;
                let piece = Header {
                    flags: h.flags | F_FRAG,
                    b: ((len as u64) << 32) | (len - off).min(step) as u64,
                    c: (h.c << 32) | off as u64,
                    ..h
                };
                p.piece_hdrs.push(piece.encode());
            }
            p.sends_left = n as u32;
            IN_PIECES.fetch_add(1, Ordering::Relaxed);
            for k in 0..n {
                let off = k * step;
                let hp = self.pend[i as usize].piece_hdrs[k].as_ptr();
                // SAFETY: the piece headers live in the boxed record (not resized while
                // its sends are in flight) and the payload is the user's buffer, valid
                // until the operation completes (the submit contract), which is after
                // every send completed.
                let r = unsafe {
                    self.send_am(
                        ep,
                        op::WRITE,
                        hp,
                        ptr.add(off),
                        (len - off).min(step),
                        tag(T_PEND_SEND, i),
                        true,
                    )
                };
                self.pend_sent(i, r);
            }
            return;
        }
        p.sends_left = 1;
        let hp = p.hdr.as_ptr();
        // SAFETY: the header lives in the boxed record until the send completes; the
        // payload is the user's buffer, valid until the operation completes (the
        // submit contract), which is after the send completes.
        let r = unsafe { self.send_am(ep, am, hp, ptr, payload, tag(T_PEND_SEND, i), false) };
        self.pend_sent(i, r);
    }

    /// Sends one message; `eager` keeps UCX from choosing rendezvous (a piece).
    ///
    /// # Safety
    /// The header (`HDR_LEN` bytes) and the payload stay valid until the send completes.
    #[allow(clippy::too_many_arguments)]
    pub(super) unsafe fn send_am(
        &mut self,
        ep: u::ucp_ep_h,
        am: u16,
        hdr: *const u8,
        data: *const u8,
        len: usize,
        user: *mut c_void,
        eager: bool,
    ) -> u::ucs_status_ptr_t {
        // SAFETY: the caller keeps the header and the payload valid; zeroed params with
        // the named fields set.
        let r = unsafe {
            let mut rp: u::ucp_request_param_t = std::mem::zeroed();
            rp.op_attr_mask = u::UCP_OP_ATTR_FIELD_CALLBACK | u::UCP_OP_ATTR_FIELD_USER_DATA;
            if eager {
                rp.op_attr_mask |= u::UCP_OP_ATTR_FIELD_FLAGS;
                rp.flags = u::UCP_AM_SEND_FLAG_EAGER;
            }
            rp.cb.send = Some(send_cb);
            rp.user_data = user;
            u::ucp_am_send_nbx(
                ep,
                u32::from(am),
                hdr as *const c_void,
                HDR_LEN,
                data as *const c_void,
                len,
                &rp,
            )
        };
        self.track(r);
        r
    }

    /// One send of request `i` was started (`r`: its request, or how it ended).
    pub(super) fn pend_sent(&mut self, i: u32, r: u::ucs_status_ptr_t) {
        if u::ucs_ptr_is_ptr(r) {
            return;
        }
        let st = if u::ucs_ptr_is_err(r) {
            u::ucs_ptr_status(r)
        } else {
            u::UCS_OK
        };
        self.pend_send_done(i, st);
    }

    /// One send of request `i` finished with `status`.
    pub(super) fn pend_send_done(&mut self, i: u32, status: u::ucs_status_t) {
        let Some(p) = self.pend.get_mut(i as usize) else {
            return;
        };
        p.sends_left = p.sends_left.saturating_sub(1);
        if status != u::UCS_OK && p.answer.is_none() {
            p.answer = Some(Err(ucx_error("sending the request failed", status)));
        }
        if p.sends_left == 0 {
            p.sent = true;
            self.pend_try_done(i);
        }
    }

    pub(super) fn pend_try_done(&mut self, i: u32) {
        let p = &mut self.pend[i as usize];
        if !p.live || !p.sent || p.busy || p.answer.is_none() {
            return;
        }
        p.live = false;
        let (user, r) = (p.user, p.answer.take().unwrap_or(Ok(Done::empty())));
        self.pend_free.push(i);
        self.sink.complete(user, r);
    }

    pub(super) fn pend_lookup(&self, conn: u32, req: u64) -> Option<u32> {
        let i = (req & 0xffff_ffff) as u32;
        let generation = (req >> 32) as u32;
        let p = self.pend.get(i as usize)?;
        (p.live && p.generation == generation && p.conn == conn && p.answer.is_none()).then_some(i)
    }

    pub(super) fn answer(&mut self, m: Incoming) -> u::ucs_status_t {
        let Some(i) = self.pend_lookup(m.hdr.conn, m.hdr.req) else {
            self.release(m.data);
            return u::UCS_OK;
        };
        let status = m.hdr.a;
        let p = &mut self.pend[i as usize];
        if status != 0 {
            p.answer = Some(Err(refused(code_of(status))));
            let d = m.data;
            self.release(d);
            self.pend_try_done(i);
            return u::UCS_OK;
        }
        let conn = p.conn;
        match (m.am, p.kind) {
            (op::ACK, PendKind::Send | PendKind::Write) => {
                p.answer = Some(Ok(Done {
                    len: p.len as u64,
                    conn,
                    ..Done::empty()
                }));
                self.release(m.data);
            }
            (op::ACK, PendKind::Atomic | PendKind::Event) => {
                if !p.ptr.is_null() {
                    // SAFETY: the result buffer holds 8 bytes, valid until completion.
                    unsafe { ptr::write_unaligned(p.ptr as *mut u64, m.hdr.b) };
                }
                p.answer = Some(Ok(Done {
                    len: 8,
                    conn,
                    value: m.hdr.b,
                    ..Done::empty()
                }));
                self.release(m.data);
            }
            (op::READ_RESP, PendKind::Read) if m.hdr.flags & F_FRAG != 0 => {
                let (off, n) = (m.hdr.b as usize, m.hdr.c as usize);
                let fits = m.data.len() == n && off <= p.len && n <= p.len - off;
                match m.data.here() {
                    Some(d) if fits => {
                        // SAFETY: the data holds n bytes; the user's destination holds
                        // the read's length, of which [off, off + n) (checked), valid
                        // until completion.
                        unsafe { ptr::copy_nonoverlapping(d, p.ptr.add(off), n) };
                        p.got += n;
                        if p.got >= p.len {
                            p.answer = Some(Ok(Done {
                                len: p.len as u64,
                                conn,
                                ..Done::empty()
                            }));
                        }
                    }
                    _ => {
                        p.answer = Some(Err(Error::with_context(
                            ErrorCode::IoFailed,
                            "the remote side answered a read with a piece outside it",
                        )));
                    }
                }
                self.release(m.data);
            }
            (op::READ_RESP, PendKind::Read) => {
                let n = m.data.len();
                if n != p.len {
                    p.answer = Some(Err(Error::with_context(
                        ErrorCode::IoFailed,
                        "the remote side answered a read with another length",
                    )));
                    self.release(m.data);
                    self.pend_try_done(i);
                    return u::UCS_OK;
                }
                let dst = p.ptr;
                p.answer = Some(Ok(Done {
                    len: n as u64,
                    conn,
                    ..Done::empty()
                }));
                match m.data {
                    Kept::Eager(..) | Kept::Owned(_) => {
                        if let Some(d) = m.data.here() {
                            // SAFETY: the data holds n bytes; the user's destination
                            // holds n (the read's length), valid until completion.
                            unsafe { ptr::copy_nonoverlapping(d, dst, n) };
                        }
                        self.release(m.data);
                    }
                    Kept::Rndv(d, _) => {
                        self.pend[i as usize].busy = true;
                        // SAFETY: the destination holds n bytes until completion.
                        let r = unsafe {
                            let mut rp: u::ucp_request_param_t = std::mem::zeroed();
                            rp.op_attr_mask =
                                u::UCP_OP_ATTR_FIELD_CALLBACK | u::UCP_OP_ATTR_FIELD_USER_DATA;
                            rp.cb.recv_am = Some(recv_cb);
                            rp.user_data = tag(T_PEND_DATA, i);
                            u::ucp_am_recv_data_nbx(self.w, d, dst as *mut c_void, n, &rp)
                        };
                        self.track(r);
                        if !u::ucs_ptr_is_ptr(r) {
                            let st = u::ucs_ptr_status(r);
                            self.finished(tag(T_PEND_DATA, i), st, n);
                        }
                        return u::UCS_INPROGRESS;
                    }
                    Kept::None => {}
                }
            }
            _ => {
                p.answer = Some(Err(Error::with_context(
                    ErrorCode::IoFailed,
                    "the remote side answered with a message of another kind",
                )));
                self.release(m.data);
            }
        }
        self.pend_try_done(i);
        u::UCS_OK
    }

    /// A transport request of ours finished.
    pub(super) fn finished(&mut self, user: *mut c_void, status: u::ucs_status_t, _len: usize) {
        let (kind, i) = untag(user);
        match kind {
            T_PEND_SEND => self.pend_send_done(i, status),
            T_PEND_DATA => {
                let Some(p) = self.pend.get_mut(i as usize) else {
                    return;
                };
                p.busy = false;
                if status != u::UCS_OK {
                    p.answer = Some(Err(ucx_error("receiving the read's bytes failed", status)));
                }
                self.pend_try_done(i);
            }
            T_TOP => self.top_finished(i, status),
            _ => {}
        }
    }
}
