//! The target side of the NIC: remote reads, writes, atomics and sync event updates
//! checked against both layers of access control (the context's grants, the export's
//! listing) and served; messages matched to posted receives; the answers.

use super::*;
use doca_core::Error;

/// An access to exported memory, checked; `None` for one of no bytes that names no
/// export (a task without buffers), which touches nothing.
pub(super) fn checked_access(
    grants: AccessFlags,
    token: [u64; 2],
    addr: u64,
    len: u64,
    need: AccessFlags,
    dev: u32,
) -> std::result::Result<Option<NetAccess>, ErrorCode> {
    granted(grants, need)?;
    if len == 0 && token == [0, 0] {
        return Ok(None);
    }
    net::access(token, addr, len, need, dev)
        .map(Some)
        .map_err(|e| e.code())
}

/// The first layer of a remote access's check: the context that owns the connection
/// (its queue pair's access flags, `doca_rdma_set_permissions`) must grant `need`, as
/// the NIC refuses an RDMA read, write or atomic on a queue pair without the flag
/// whatever the memory allows.
pub(super) fn granted(
    grants: AccessFlags,
    need: AccessFlags,
) -> std::result::Result<(), ErrorCode> {
    if grants.contains(need) {
        Ok(())
    } else {
        Err(ErrorCode::NotPermitted)
    }
}

/// Bounce buffers kept for reuse at most.
pub(super) const MAX_BOUNCES: usize = 64;

/// The code a remote side gets for a failed copy of relayed memory: the original
/// exporter revoked it (`NotFound`, as for any revoked export), or the copy failed.
pub(super) fn relay_error(e: &Error) -> ErrorCode {
    match e.code() {
        ErrorCode::ConnectionAborted => ErrorCode::NotFound,
        ErrorCode::InvalidValue | ErrorCode::NotPermitted => e.code(),
        _ => ErrorCode::IoFailed,
    }
}

/// A compare-and-swap (`cas`: compare `b`, swap in `c`) or fetch-and-add (`b`) on 8
/// bytes of relayed memory; the old value.
pub(super) fn relayed_atomic(g: &NetAccess, cas: bool, b: u64, c: u64) -> doca_core::Result<u64> {
    let mut v = [0u8; 8];
    // SAFETY: `v` holds 8 bytes.
    unsafe { g.copy_out(0, v.as_mut_ptr(), 8) }?;
    let old = u64::from_ne_bytes(v);
    let new = match (cas, old == b) {
        (true, true) => Some(c),
        (true, false) => None,
        (false, _) => Some(old.wrapping_add(b)),
    };
    if let Some(n) = new {
        let w = n.to_ne_bytes();
        // SAFETY: `w` holds 8 bytes.
        unsafe { g.copy_in(0, w.as_ptr(), 8) }?;
    }
    Ok(old)
}

impl State {
    pub(super) fn top_new(
        &mut self,
        conn: u32,
        hdr: [u8; HDR_LEN],
        guard: Option<NetAccess>,
        after: After,
    ) -> u32 {
        let i = match self.tops_free.pop() {
            Some(i) => i,
            None => {
                self.tops.push(Box::new(TargetOp {
                    live: false,
                    conn: 0,
                    hdr: [0; HDR_LEN],
                    guard: None,
                    after: After::Nothing,
                    bounce: None,
                    land: false,
                    sends_left: 0,
                    first_err: u::UCS_OK,
                    piece_hdrs: Vec::new(),
                }));
                (self.tops.len() - 1) as u32
            }
        };
        let t = &mut self.tops[i as usize];
        t.live = true;
        t.conn = conn;
        t.hdr = hdr;
        t.guard = guard;
        t.after = after;
        t.bounce = None;
        t.land = false;
        t.sends_left = 1;
        t.first_err = u::UCS_OK;
        i
    }

    /// A bounce buffer of `n` bytes.
    pub(super) fn take_bounce(&mut self, n: usize) -> Vec<u8> {
        let mut b = self.bounces.pop().unwrap_or_default();
        b.clear();
        b.resize(n, 0);
        b
    }

    pub(super) fn give_bounce(&mut self, b: Vec<u8>) {
        if self.bounces.len() < MAX_BOUNCES {
            self.bounces.push(b);
        }
    }

    pub(super) fn top_send(
        &mut self,
        ep: u::ucp_ep_h,
        am: u16,
        i: u32,
        data: *const u8,
        len: usize,
    ) {
        let hp = self.tops[i as usize].hdr.as_ptr();
        // SAFETY: the header lives in the boxed record, and the data under the record's
        // guard (exported memory checked for this access), until the send completes.
        let r = unsafe { self.send_am(ep, am, hp, data, len, tag(T_TOP, i), false) };
        if !u::ucs_ptr_is_ptr(r) {
            self.top_finished(i, u::ucs_ptr_status(r));
        }
    }

    pub(super) fn top_finished(&mut self, i: u32, status: u::ucs_status_t) {
        let Some(t) = self.tops.get_mut(i as usize) else {
            return;
        };
        if !t.live {
            return;
        }
        if t.first_err == u::UCS_OK {
            t.first_err = status;
        }
        t.sends_left = t.sends_left.saturating_sub(1);
        if t.sends_left > 0 {
            return;
        }
        let status = t.first_err;
        t.live = false;
        let guard = t.guard.take();
        let after = std::mem::replace(&mut t.after, After::Nothing);
        let (bounce, land) = (t.bounce.take(), t.land);
        self.tops_free.push(i);
        let mut status = status;
        if let (true, Some(b), Some(g)) = (land && status == u::UCS_OK, &bounce, &guard) {
            // SAFETY: the bounce buffer holds its length in bytes.
            if unsafe { g.copy_in(0, b.as_ptr(), b.len()) }.is_err() {
                status = u::UCS_ERR_IO_ERROR;
            }
        }
        drop(guard);
        if let Some(b) = bounce {
            self.give_bounce(b);
        }
        let ok = status == u::UCS_OK;
        match after {
            After::Nothing => {}
            After::WriteLanded {
                conn,
                req,
                imm,
                len,
            } => {
                if !ok {
                    self.ack(conn, req, ErrorCode::IoFailed as i32 as u64, 0);
                } else if let Some(imm) = imm {
                    let hdr = Header {
                        conn,
                        req,
                        flags: F_IMM,
                        b: len,
                        c: u64::from(imm),
                        ..Header::default()
                    };
                    self.unmatched.push_back(Incoming {
                        am: op::WRITE,
                        hdr,
                        data: Kept::None,
                    });
                    self.match_receives();
                } else {
                    self.ack(conn, req, 0, 0);
                }
            }
            After::RecvLanded {
                conn,
                req,
                user,
                imm,
                len,
            } => {
                if ok {
                    self.sink.complete(
                        user,
                        Ok(Done {
                            len,
                            imm,
                            conn,
                            opcode: if imm.is_some() {
                                RecvOpcode::SendImm
                            } else {
                                RecvOpcode::Send
                            },
                            value: 0,
                        }),
                    );
                    self.ack_later(conn, req);
                } else {
                    self.sink.complete(
                        user,
                        Err(ucx_error("receiving the message's bytes failed", status)),
                    );
                    self.ack(conn, req, ErrorCode::IoFailed as i32 as u64, 0);
                }
            }
        }
    }

    /// Answers request `req` of the peer of local connection `conn`.
    /// Answers a message a posted receive took, once the program had a chance to
    /// answer it first (its reply leaves before this; see `flush_acks`).
    pub(super) fn ack_later(&mut self, conn: u32, req: u64) {
        self.late_acks.push((conn, req));
    }

    /// Sends the answers `ack_later` kept (after the commands of a drive are carried out).
    pub(super) fn flush_acks(&mut self) {
        if self.late_acks.is_empty() {
            return;
        }
        let mut acks = std::mem::take(&mut self.late_acks);
        for &(conn, req) in &acks {
            self.ack(conn, req, 0, 0);
        }
        acks.clear();
        self.late_acks = acks;
    }

    pub(super) fn ack(&mut self, conn: u32, req: u64, status: u64, value: u64) {
        let Some(c) = self.conns.get(&conn) else {
            return;
        };
        if c.state != ConnState::Connected {
            return;
        }
        let h = Header {
            conn: c.peer_conn,
            key: c.peer_key,
            req,
            a: status,
            b: value,
            ..Header::default()
        };
        let ep = c.ep;
        let i = self.top_new(conn, h.encode(), None, After::Nothing);
        self.top_send(ep, op::ACK, i, ptr::null(), 0);
    }

    pub(super) fn match_receives(&mut self) {
        let _ = self.match_receives_status();
    }

    /// Matches kept messages with posted receives. Whether the data of the message
    /// that came last stays kept by UCX (so its handler must say "in progress").
    pub(super) fn match_receives_status(&mut self) -> bool {
        while !self.recvs.is_empty() && !self.unmatched.is_empty() {
            let (Some(r), Some(m)) = (self.recvs.pop_front(), self.unmatched.pop_front()) else {
                break;
            };
            let conn = m.hdr.conn;
            let imm = (m.hdr.flags & F_IMM != 0).then_some(m.hdr.c as u32);
            if m.am == op::WRITE {
                // A write with immediate: its bytes are in; the receive gets the
                // immediate only.
                self.sink.complete(
                    r.user,
                    Ok(Done {
                        len: m.hdr.b,
                        imm,
                        conn,
                        opcode: RecvOpcode::WriteImm,
                        value: 0,
                    }),
                );
                self.ack_later(conn, m.hdr.req);
                continue;
            }
            let n = m.data.len();
            if n > r.cap {
                self.release(m.data);
                self.sink.complete(
                    r.user,
                    Err(Error::with_context(
                        ErrorCode::InvalidValue,
                        format!(
                            "a {n}-byte message came for a {}-byte receive buffer",
                            r.cap
                        ),
                    )),
                );
                self.ack(conn, m.hdr.req, ErrorCode::InvalidValue as i32 as u64, 0);
                continue;
            }
            match m.data {
                Kept::None | Kept::Eager(..) | Kept::Owned(_) => {
                    if let Some(d) = m.data.here() {
                        // SAFETY: the data holds n bytes; the receive buffer holds at
                        // least n (checked), valid until its completion.
                        unsafe { ptr::copy_nonoverlapping(d, r.ptr, n) };
                    }
                    self.release(m.data);
                    self.sink.complete(
                        r.user,
                        Ok(Done {
                            len: n as u64,
                            imm,
                            conn,
                            opcode: if imm.is_some() {
                                RecvOpcode::SendImm
                            } else {
                                RecvOpcode::Send
                            },
                            value: 0,
                        }),
                    );
                    self.ack_later(conn, m.hdr.req);
                }
                Kept::Rndv(d, _) => {
                    let after = After::RecvLanded {
                        conn,
                        req: m.hdr.req,
                        user: r.user,
                        imm,
                        len: n as u64,
                    };
                    let i = self.top_new(conn, [0; HDR_LEN], None, after);
                    self.recv_into(d, r.ptr, n, i);
                }
            }
        }
        // What came last is still waiting (kept) when nothing matched it.
        !self.unmatched.is_empty()
    }

    pub(super) fn recv_into(&mut self, desc: *mut c_void, dst: *mut u8, n: usize, i: u32) {
        // SAFETY: `dst` holds n bytes until the target op finishes (a receive buffer,
        // or exported memory under the op's guard).
        let r = unsafe {
            let mut rp: u::ucp_request_param_t = std::mem::zeroed();
            rp.op_attr_mask = u::UCP_OP_ATTR_FIELD_CALLBACK | u::UCP_OP_ATTR_FIELD_USER_DATA;
            rp.cb.recv_am = Some(recv_cb);
            rp.user_data = tag(T_TOP, i);
            u::ucp_am_recv_data_nbx(self.w, desc, dst as *mut c_void, n, &rp)
        };
        self.track(r);
        if !u::ucs_ptr_is_ptr(r) {
            self.top_finished(i, u::ucs_ptr_status(r));
        }
    }

    pub(super) fn target_write(&mut self, m: Incoming) -> u::ucs_status_t {
        let h = m.hdr;
        let n = m.data.len();
        let access = if h.b != n as u64 {
            Err(ErrorCode::InvalidValue)
        } else {
            checked_access(
                self.grants,
                [h.t0, h.t1],
                h.a,
                h.b,
                AccessFlags::RDMA_WRITE,
                self.dev,
            )
        };
        let g = match access {
            // A write of nothing (no buffers): only its immediate, if any, matters.
            Ok(None) => {
                self.release(m.data);
                let imm = (h.flags & F_IMM != 0).then_some(h.c as u32);
                let after = After::WriteLanded {
                    conn: h.conn,
                    req: h.req,
                    imm,
                    len: 0,
                };
                let i = self.top_new(h.conn, [0; HDR_LEN], None, after);
                self.top_finished(i, u::UCS_OK);
                return u::UCS_OK;
            }
            Ok(Some(g)) => g,
            Err(code) => {
                self.release(m.data);
                self.ack(h.conn, h.req, code as i32 as u64, 0);
                return u::UCS_OK;
            }
        };
        let imm = (h.flags & F_IMM != 0).then_some(h.c as u32);
        let after = After::WriteLanded {
            conn: h.conn,
            req: h.req,
            imm,
            len: h.b,
        };
        match m.data {
            Kept::Rndv(d, _) => match g.local_ptr() {
                Some(dst) => {
                    let i = self.top_new(h.conn, [0; HDR_LEN], Some(g), after);
                    self.recv_into(d, dst, n, i);
                    u::UCS_INPROGRESS
                }
                None => {
                    // Relayed memory: the bytes land in a bounce buffer first.
                    let mut b = self.take_bounce(n);
                    let dst = b.as_mut_ptr();
                    let i = self.top_new(h.conn, [0; HDR_LEN], Some(g), after);
                    let t = &mut self.tops[i as usize];
                    t.bounce = Some(b);
                    t.land = true;
                    self.recv_into(d, dst, n, i);
                    u::UCS_INPROGRESS
                }
            },
            Kept::Eager(..) | Kept::Owned(_) => {
                let mut status = u::UCS_OK;
                if let Some(d) = m.data.here() {
                    // SAFETY: the data holds n bytes; the guard checked that the n
                    // bytes it covers are exported writable memory.
                    if unsafe { g.copy_in(0, d, n) }.is_err() {
                        status = u::UCS_ERR_IO_ERROR;
                    }
                }
                self.release(m.data);
                let i = self.top_new(h.conn, [0; HDR_LEN], Some(g), after);
                self.top_finished(i, status);
                u::UCS_OK
            }
            Kept::None => {
                let i = self.top_new(h.conn, [0; HDR_LEN], Some(g), after);
                self.top_finished(i, u::UCS_OK);
                u::UCS_OK
            }
        }
    }

    /// One piece of a write in pieces: in place at once, after the whole write's range
    /// is checked; the write is answered once its pieces are all in (with the first
    /// failure, if one failed).
    pub(super) fn target_write_piece(&mut self, m: Incoming) -> u::ucs_status_t {
        let h = m.hdr;
        let (total, k) = (h.b >> 32, h.b & 0xffff_ffff);
        let (off, imm) = (h.c & 0xffff_ffff, (h.c >> 32) as u32);
        let key = (h.conn, h.req);
        if !self.pieces.contains_key(&key) && self.pieces.len() >= MAX_PIECES_IN {
            self.release(m.data);
            self.ack(h.conn, h.req, ErrorCode::NoMemory as i32 as u64, 0);
            return u::UCS_OK;
        }
        let err = match m.data.here() {
            Some(d) if k > 0 && k == m.data.len() as u64 && off + k <= total => {
                let at = [h.t0, h.t1];
                match checked_access(
                    self.grants,
                    at,
                    h.a,
                    total,
                    AccessFlags::RDMA_WRITE,
                    self.dev,
                ) {
                    // SAFETY: the data holds k bytes; the guard checked that the whole
                    // write's bytes are exported writable memory, and copy_in keeps
                    // [off, off + k) inside them.
                    Ok(Some(g)) => unsafe { g.copy_in(off as usize, d, k as usize) }
                        .err()
                        .map(|_| ErrorCode::IoFailed),
                    Ok(None) => Some(ErrorCode::InvalidValue),
                    Err(code) => Some(code),
                }
            }
            _ => Some(ErrorCode::InvalidValue),
        };
        self.release(m.data);
        let e = self.pieces.entry(key).or_insert(PiecesIn {
            got: 0,
            err: None,
            imm: None,
        });
        // A piece that says nothing sensible still counts, so that the write ends.
        e.got += k.max(1);
        if e.err.is_none() {
            e.err = err;
        }
        if h.flags & F_IMM != 0 {
            e.imm = Some(imm);
        }
        if e.got >= total {
            let imm = e.imm;
            let err = e.err;
            self.pieces.remove(&key);
            match err {
                Some(code) => self.ack(h.conn, h.req, code as i32 as u64, 0),
                None => {
                    let after = After::WriteLanded {
                        conn: h.conn,
                        req: h.req,
                        imm,
                        len: total,
                    };
                    let i = self.top_new(h.conn, [0; HDR_LEN], None, after);
                    self.top_finished(i, u::UCS_OK);
                }
            }
        }
        u::UCS_OK
    }

    pub(super) fn target_read(&mut self, m: Incoming) {
        let h = m.hdr;
        self.release(m.data);
        let Some(c) = self.conns.get(&h.conn) else {
            return;
        };
        let (ep, pc, pk) = (c.ep, c.peer_conn, c.peer_key);
        let answer = |status: u64| {
            Header {
                conn: pc,
                key: pk,
                req: h.req,
                a: status,
                ..Header::default()
            }
            .encode()
        };
        match checked_access(
            self.grants,
            [h.t0, h.t1],
            h.a,
            h.b,
            AccessFlags::RDMA_READ,
            self.dev,
        ) {
            Ok(Some(g)) => match g.local_ptr() {
                Some(p) if h.flags & F_FRAG != 0 && g.len() > piece_max() => {
                    // In pieces, all under the one access, which ends with the last.
                    let n = g.len();
                    let step = piece_len(n);
                    let count = n.div_ceil(step);
                    let i = self.top_new(h.conn, [0; HDR_LEN], Some(g), After::Nothing);
                    IN_PIECES.fetch_add(1, Ordering::Relaxed);
                    let t = &mut self.tops[i as usize];
                    t.sends_left = count as u32;
                    t.piece_hdrs.clear();
                    for k in 0..count {
                        let off = k * step;
                        t.piece_hdrs.push(
                            Header {
                                flags: F_FRAG,
                                conn: pc,
                                key: pk,
                                req: h.req,
                                b: off as u64,
                                c: (n - off).min(step) as u64,
                                ..Header::default()
                            }
                            .encode(),
                        );
                    }
                    for k in 0..count {
                        let off = k * step;
                        let hp = self.tops[i as usize].piece_hdrs[k].as_ptr();
                        // SAFETY: the piece headers live in the boxed record (not resized
                        // while its sends are in flight); [off, off + len) lies in the
                        // access (n bytes from p), live until the last send completes.
                        let r = unsafe {
                            self.send_am(
                                ep,
                                op::READ_RESP,
                                hp,
                                p.add(off),
                                (n - off).min(step),
                                tag(T_TOP, i),
                                true,
                            )
                        };
                        if !u::ucs_ptr_is_ptr(r) {
                            self.top_finished(i, u::ucs_ptr_status(r));
                        }
                    }
                }
                Some(p) => {
                    let n = g.len();
                    let i = self.top_new(h.conn, answer(0), Some(g), After::Nothing);
                    self.top_send(ep, op::READ_RESP, i, p, n);
                }
                None => {
                    // Relayed memory: read out into a bounce buffer, sent from there.
                    let n = g.len();
                    let mut b = self.take_bounce(n);
                    // SAFETY: the bounce buffer holds n bytes.
                    match unsafe { g.copy_out(0, b.as_mut_ptr(), n) } {
                        Ok(()) => {
                            let p = b.as_ptr();
                            let i = self.top_new(h.conn, answer(0), Some(g), After::Nothing);
                            self.tops[i as usize].bounce = Some(b);
                            self.top_send(ep, op::READ_RESP, i, p, n);
                        }
                        Err(e) => {
                            self.give_bounce(b);
                            drop(g);
                            let code = relay_error(&e);
                            let i = self.top_new(
                                h.conn,
                                answer(code as i32 as u64),
                                None,
                                After::Nothing,
                            );
                            self.top_send(ep, op::READ_RESP, i, ptr::null(), 0);
                        }
                    }
                }
            },
            Ok(None) => {
                let i = self.top_new(h.conn, answer(0), None, After::Nothing);
                self.top_send(ep, op::READ_RESP, i, ptr::null(), 0);
            }
            Err(code) => {
                let i = self.top_new(h.conn, answer(code as i32 as u64), None, After::Nothing);
                self.top_send(ep, op::READ_RESP, i, ptr::null(), 0);
            }
        }
    }

    pub(super) fn target_event(&mut self, m: Incoming) {
        use doca_core::sync_event::net::{Op, apply};
        let h = m.hdr;
        self.release(m.data);
        // As the NIC carries them: a set is a write of the event's value, an add an
        // atomic fetch-and-add on it, a get a read of it.
        let (op, need) = if h.flags & F_EV_ADD != 0 {
            (Op::Add(h.a), AccessFlags::RDMA_ATOMIC)
        } else if h.flags & F_EV_SET != 0 {
            (Op::Set(h.a), AccessFlags::RDMA_WRITE)
        } else {
            (Op::Get, AccessFlags::RDMA_READ)
        };
        if let Err(code) = granted(self.grants, need) {
            self.ack(h.conn, h.req, code as i32 as u64, 0);
            return;
        }
        match apply([h.t0, h.t1], op) {
            Ok(v) => self.ack(h.conn, h.req, 0, v),
            Err(e) => self.ack(h.conn, h.req, e.code() as i32 as u64, 0),
        }
    }

    pub(super) fn target_atomic(&mut self, m: Incoming) {
        let h = m.hdr;
        self.release(m.data);
        let r = if let Err(code) = granted(self.grants, AccessFlags::RDMA_ATOMIC) {
            Err(code)
        } else if !h.a.is_multiple_of(8) {
            Err(ErrorCode::InvalidValue)
        } else {
            net::access([h.t0, h.t1], h.a, 8, AccessFlags::RDMA_ATOMIC, self.dev)
                .map_err(|e| e.code())
        };
        match r {
            Ok(g) => {
                let cas = h.flags & F_CAS != 0;
                let r = match g.local_ptr() {
                    Some(p) => {
                        // SAFETY: 8 aligned bytes of exported memory (checked), live
                        // while the guard is; other atomics of this NIC run on this
                        // thread, and local users of the memory agree to atomics by
                        // granting RDMA_ATOMIC.
                        let a = unsafe { &*(p as *const std::sync::atomic::AtomicU64) };
                        Ok(if cas {
                            match a.compare_exchange(h.b, h.c, Ordering::SeqCst, Ordering::SeqCst) {
                                Ok(v) | Err(v) => v,
                            }
                        } else {
                            a.fetch_add(h.b, Ordering::SeqCst)
                        })
                    }
                    // Relayed memory: read, update, write back, as one operation of
                    // this NIC (its atomics run on one thread).
                    None => relayed_atomic(&g, cas, h.b, h.c),
                };
                drop(g);
                match r {
                    Ok(old) => self.ack(h.conn, h.req, 0, old),
                    Err(e) => self.ack(h.conn, h.req, relay_error(&e) as i32 as u64, 0),
                }
            }
            Err(code) => self.ack(h.conn, h.req, code as i32 as u64, 0),
        }
    }
}
