//! What a comch context does on the engine's polls: taking messages and connections
//! in, sending what waits, failing what cannot be sent, and the context's start and
//! stop.

use super::*;
use doca_core::Error;
use doca_core::lock;

impl Shared {
    pub(super) fn conn(&self, peer: PeerId) -> Option<Arc<Connection>> {
        lock(&self.conns).iter().find(|c| c.peer == peer).cloned()
    }

    /// Sends what waits, in order, as far as there is room.
    pub(super) fn flush(&self) -> bool {
        let mut pending = lock(&self.pending);
        if pending.is_empty() {
            return false;
        }
        let mut ep = lock(&self.ep);
        let Some(ep) = ep.as_mut() else {
            return false;
        };
        let mut any = false;
        while let Some(p) = pending.front() {
            let r = ep.send_parts(&[TAG_USER], p.msg.bytes(), p.conn.peer, None);
            if matches!(&r, Err(e) if e.code() == ErrorCode::Again) {
                break;
            }
            let p = pending.pop_front().expect("front was there");
            if r.is_ok() {
                p.conn.count_sent(p.msg.bytes().len());
            }
            lock(&self.done).push_back((p.user_data, r.err()));
            any = true;
        }
        any
    }

    /// One of comch's own messages: a consumer of the far side came or went.
    fn control(&self, conn: &Connection, tag: u8, id: Option<u32>, pass: Option<OwnedFd>) {
        let Some(id) = id else {
            return; // Malformed: ignored.
        };
        let new = match (tag, pass) {
            (TAG_CONSUMER_NEW, Some(fd)) => {
                let mut t = lock(&conn.remote_consumers);
                t.retain(|c| c.0 != id);
                if t.len() >= MAX_PER_CONNECTION as usize {
                    return; // More than a far side may announce: ignored.
                }
                t.push((id, Arc::new(fd)));
                true
            }
            (TAG_CONSUMER_GONE, _) => {
                let mut t = lock(&conn.remote_consumers);
                let before = t.len();
                t.retain(|c| c.0 != id);
                if t.len() == before {
                    return;
                }
                false
            }
            _ => return, // Unknown, or a consumer without its socket: ignored.
        };
        let cb = {
            let mut cbs = lock(&self.cbs);
            if new {
                cbs.consumer_new.take()
            } else {
                cbs.consumer_gone.take()
            }
        };
        if let Some(mut f) = cb {
            f(conn, id);
            let mut cbs = lock(&self.cbs);
            let slot = if new {
                &mut cbs.consumer_new
            } else {
                &mut cbs.consumer_gone
            };
            if slot.is_none() {
                *slot = Some(f);
            }
        }
    }

    /// Fails the waiting sends toward `peer` (or all of them).
    pub(super) fn fail_pending(&self, peer: Option<PeerId>, e: &Error) {
        let mut pending = lock(&self.pending);
        let mut done = lock(&self.done);
        pending.retain(|p| {
            if peer.is_none_or(|x| x == p.conn.peer) {
                done.push_back((p.user_data, Some(e.clone())));
                false
            } else {
                true
            }
        });
    }

    fn add_conn(&self, peer: PeerId) -> Arc<Connection> {
        let c = Arc::new(Connection {
            peer,
            user_data: AtomicU64::new(0),
            owner: self.owner.load(Ordering::Relaxed),
            server: self.server,
            sent_msgs: AtomicU64::new(0),
            sent_bytes: AtomicU64::new(0),
            recv_msgs: AtomicU64::new(0),
            recv_bytes: AtomicU64::new(0),
            remote_consumers: Mutex::new(Vec::new()),
            shared: Weak::clone(&self.me),
        });
        lock(&self.conns).push(Arc::clone(&c));
        c
    }

    /// Runs the connection callback of `which` (connect or disconnect) with no lock
    /// held (the callback may send, or stop the context).
    pub(super) fn conn_event(&self, conn: &Connection, connect: bool) {
        let cb = {
            let mut cbs = lock(&self.cbs);
            if connect {
                cbs.connect.take()
            } else {
                cbs.disconnect.take()
            }
        };
        if let Some(mut f) = cb {
            f(conn, true);
            let mut cbs = lock(&self.cbs);
            let slot = if connect {
                &mut cbs.connect
            } else {
                &mut cbs.disconnect
            };
            if slot.is_none() {
                *slot = Some(f);
            }
        }
    }

    /// Closes the channel. The connection objects stay until the context starts again
    /// or is destroyed (a program may still ask them for counters and user data).
    fn close(&self) {
        *lock(&self.ep) = None;
        let e = Error::with_context(ErrorCode::IoFailed, "the context stopped");
        self.fail_pending(None, &e);
    }
}

pub(super) struct Ops(pub(super) Arc<Shared>);

impl CtxOps for Ops {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        super::tasks::ALL
    }
    fn name(&self) -> &'static str {
        "comch"
    }
    fn capability(&self) -> Capability {
        Capability::CommChannel
    }
    fn handles(&self, job_type: u32) -> bool {
        job_type == JOB_SEND
    }
    fn on_start(&self, _dev: &doca_core::Dev) -> Result<()> {
        let s = &self.0;
        let conf = lock(&s.conf);
        let mut ep = Endpoint::new_comch((conf.max_msg + 1) as u16)?;
        ep.set_recv_queue_size(conf.recv_q as u16)?;
        ep.set_send_queue_size(conf.send_tasks.clamp(1, MAX_QUEUE_SIZE) as u16)?;
        ep.set_device(&s.dev)?;
        let mut rbuf = lock(&s.rbuf);
        rbuf.clear();
        rbuf.resize(MAX_MESSAGE_SIZE as usize + 1, 0);
        {
            let mut conns = lock(&s.conns);
            conns.clear();
            conns.reserve(MAX_CONNECTIONS as usize);
        }
        lock(&s.pending).reserve(conf.send_tasks as usize);
        lock(&s.done).reserve(conf.send_tasks as usize);
        if s.server {
            let rep = s.rep.as_ref().expect("a server has its representor");
            ep.set_device_rep(rep)?;
            ep.listen(&s.name)?;
        } else {
            ep.connect(&s.name)?;
        }
        *lock(&s.ep) = Some(ep);
        Ok(())
    }
    fn on_stop(&self) {
        self.0.close();
    }
}

impl ChannelOps for Ops {
    fn starts_later(&self) -> bool {
        !self.0.server
    }
    unsafe fn submit_task(
        &self,
        ctx: &Ctx,
        rec: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        use super::tasks::send;
        let conn = rec.params[send::connection] as usize as *const super::Connection;
        let msg = rec.params[send::msg] as usize as *const u8;
        let len = rec.params[send::len] as usize;
        let view = super::Comch {
            ctx: ctx.clone(),
            s: self.0.clone(),
        };
        // SAFETY: the message is readable during the submit (the caller's contract); it
        // is sent or copied before this returns.
        unsafe { view.send_raw(conn, msg, len, rec.user_data) }.map_err(|e| (e, rec))
    }
    fn inflight(&self) -> u32 {
        self.0.inflight.load(Ordering::Acquire)
    }
    fn poll(&self, ctx: &Ctx, out: &mut PollOut<'_>) -> bool {
        let s = &*self.0;
        let mut any = false;
        if ctx.phase() == CtxPhase::Starting {
            let up = {
                let mut ep = lock(&s.ep);
                let Some(ep) = ep.as_mut() else {
                    return false;
                };
                let _ = ep.peers();
                ep.take_joined()
            };
            let Some(peer) = up else {
                return false;
            };
            s.add_conn(peer);
            out.started();
            // Messages wait for the next progress: the program sees the client running
            // (and sets up its connection) before any of them is handed over.
            return true;
        }
        if ctx.phase() == CtxPhase::Stopping {
            // What can still go out goes; the rest is flushed.
            any |= s.flush();
            let e = Error::with_context(ErrorCode::IoFailed, "the context is stopping");
            s.fail_pending(None, &e);
        } else {
            // Completions first: their callbacks free tasks that the message callbacks
            // may need.
            any |= s.flush();
            any |= self.report(out);
            any |= self.receive(ctx, out);
        }
        any | self.report(out)
    }
}

impl Ops {
    /// New connections, messages and disconnections, in the order they happened.
    fn receive(&self, ctx: &Ctx, out: &mut PollOut<'_>) -> bool {
        let s = &*self.0;
        let mut any = false;
        for _ in 0..RECV_BUDGET {
            if ctx.phase() != CtxPhase::Running {
                break;
            }
            // A progress called from a callback of this one finds the buffer taken and
            // leaves the receiving to its caller.
            let Ok(mut rbuf) = s.rbuf.try_lock() else {
                return any;
            };
            let (joined, r, pass) = {
                let mut ep = lock(&s.ep);
                let Some(ep) = ep.as_mut() else {
                    return any;
                };
                let r = ep.recvfrom(&mut rbuf);
                let pass = if r.is_ok() { ep.take_fd() } else { None };
                (ep.take_joined(), r, pass)
            };
            if let Some(peer) = joined {
                any = true;
                let c = s.add_conn(peer);
                if s.server {
                    s.conn_event(&c, true);
                }
            }
            match r {
                Ok((n, peer)) => {
                    any = true;
                    let Some(conn) = s.conn(peer) else { continue };
                    if n == 0 {
                        continue;
                    }
                    if rbuf[0] != TAG_USER {
                        let (tag, id) = (rbuf[0], rest_id(&rbuf[1..n]));
                        drop(rbuf);
                        s.control(&conn, tag, id, pass);
                        continue;
                    }
                    conn.recv_msgs.fetch_add(1, Ordering::Relaxed);
                    conn.recv_bytes.fetch_add((n - 1) as u64, Ordering::Relaxed);
                    let cb = lock(&s.cbs).msg.take();
                    if let Some(mut f) = cb {
                        f(&conn, &mut rbuf[1..n]);
                        let mut cbs = lock(&s.cbs);
                        if cbs.msg.is_none() {
                            cbs.msg = Some(f);
                        }
                    }
                }
                Err((e, Some(peer)))
                    if e.code() == ErrorCode::NotConnected || !self.peer_up(peer) =>
                {
                    any = true;
                    drop(rbuf);
                    self.peer_gone(peer, out);
                }
                Err(_) => {
                    if joined.is_none() {
                        break;
                    }
                }
            }
        }
        any
    }

    fn peer_up(&self, peer: PeerId) -> bool {
        lock(&self.0.ep)
            .as_ref()
            .and_then(|ep| ep.peer_addr(peer).ok())
            .is_some_and(|p| p.is_connected())
    }

    fn peer_gone(&self, peer: PeerId, out: &mut PollOut<'_>) {
        let s = &*self.0;
        s.fail_pending(
            Some(peer),
            &Error::with_context(
                ErrorCode::NotConnected,
                "the peer disconnected before the message went out",
            ),
        );
        if !s.server {
            // A client without its server cannot go on; its connection stays (sends
            // to it fail) until the client stops.
            out.failed();
            return;
        }
        // A server's connection is gone once its disconnection was reported.
        if let Some(c) = s.conn(peer) {
            s.conn_event(&c, false);
            lock(&s.conns).retain(|x| x.peer != peer);
        }
        if let Some(ep) = lock(&s.ep).as_mut() {
            let _ = ep.disconnect(peer);
        }
    }

    /// Completions of sends, one at a time with no lock held.
    fn report(&self, out: &mut PollOut<'_>) -> bool {
        let s = &*self.0;
        let mut any = false;
        loop {
            let Some((ud, e)) = lock(&s.done).pop_front() else {
                return any;
            };
            any = true;
            s.inflight.fetch_sub(1, Ordering::AcqRel);
            out.complete(JobRecord::new(JOB_SEND, ud), e);
        }
    }
}
