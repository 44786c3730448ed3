//! The context as the engine sees it (a polled channel): start and stop, what the NIC
//! hands over (completions, connection events, requests), polled into the engine in
//! order, and each task's results finished.

use super::*;
use doca_core::Error;
use doca_core::lock;

/// Hands the operations the NIC finished to the engine, in the order they finished;
/// whether there were any.
pub(super) fn drain_done(s: &Shared, out: &mut PollOut<'_>) -> bool {
    let mut any = false;
    let mut more = true;
    while more {
        // One lock per completion: its outcome, its record, and whether more wait.
        let (rec, r) = {
            let mut ops = lock(&s.ops);
            let Some((i, r)) = ops.done.pop_front() else {
                break;
            };
            more = !ops.done.is_empty();
            let rec = ops.recs.get_mut(i as usize).and_then(Option::take);
            if rec.is_some() {
                ops.free.push(i);
            }
            (rec, r)
        };
        let Some(mut rec) = rec else { continue };
        any = true;
        s.inflight.fetch_sub(1, Ordering::AcqRel);
        let err = match r {
            Ok(d) => finish(&mut rec, &d, s).err(),
            Err(e) => Some(e),
        };
        out.complete(rec, err);
    }
    any
}

impl Sink for SinkOf {
    fn complete(&self, user: u64, r: Result<Done>) {
        if let Some(s) = self.0.upgrade() {
            if user & OUTGOING != 0 {
                s.nic_ops.fetch_sub(1, Ordering::AcqRel);
            }
            lock(&s.ops).done.push_back((user as u32, r));
            s.queued.store(true, Ordering::Release);
            s.ring();
        }
    }
    fn conn_event(&self, conn: u32, ev: ConnEvent) {
        if let Some(s) = self.0.upgrade() {
            lock(&s.events).push_back((conn, ev));
            s.queued.store(true, Ordering::Release);
            s.ring();
        }
    }
    fn conn_request(&self, req: u64, from: &str) {
        let Some(s) = self.0.upgrade() else { return };
        let max = lock(&s.conf).max_connections as usize;
        let mut conns = lock(&s.conns);
        let live = live(&conns);
        let nic_guard = lock(&s.nic);
        let Some(nic) = nic_guard.as_ref() else {
            return;
        };
        if live >= max {
            // Full: turned away at once (the peer hears of a failure).
            // SAFETY: a control command names no memory.
            unsafe { nic.submit(Cmd::Reject { req }) };
            return;
        }
        let id = conns.len() as u32 + 1;
        let peer = from
            .parse::<std::net::IpAddr>()
            .ok()
            .map(|ip| (ip, 0).into());
        conns.push(Connection::new(&s, id, C_REQUESTED, Data(0), req, peer));
        drop(nic_guard);
        drop(conns);
        lock(&s.requests).push_back(id);
        s.queued.store(true, Ordering::Release);
        s.ring();
    }
}

impl CtxOps for RdmaOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        crate::tasks::ALL
    }
    fn name(&self) -> &'static str {
        "rdma"
    }
    fn capability(&self) -> Capability {
        Capability::Rdma
    }
    fn handles(&self, job_type: u32) -> bool {
        is_rdma_job(job_type)
    }
    fn on_start(&self, dev: &Dev) -> Result<()> {
        let s = &self.0;
        let code = net::dev_code(dev);
        s.dev_code.store(code, Ordering::Release);
        lock(&s.conns).clear();
        s.nic_ops.store(0, Ordering::Release);
        lock(&s.events).clear();
        {
            let mut ops = lock(&s.ops);
            ops.recs.clear();
            ops.free.clear();
            ops.done.clear();
        }
        let sink: Arc<dyn Sink> = Arc::new(SinkOf(Arc::downgrade(s)));
        let nic = Nic::start(dev, lock(&s.conf).permissions, sink)?;
        let mut slot = lock(&s.nic);
        *slot = Some(nic);
        s.nic_gen.store(
            NIC_GEN.fetch_add(1, Ordering::Relaxed) + 1,
            Ordering::Release,
        );
        drop(slot);
        Ok(())
    }
    fn on_stop(&self) {
        // Normally stopped already while stopping (poll); a context stopped with
        // nothing in flight comes here directly.
        self.0.stop_nic();
        for c in lock(&self.0.conns).iter() {
            c.state.store(C_DISCONNECTED, Ordering::Release);
        }
    }
}

impl ChannelOps for RdmaOps {
    unsafe fn submit_task(
        &self,
        ctx: &Ctx,
        rec: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        // SAFETY: the caller's contract: the record's connection parameter is the
        // program's connection handle, which the context checks is one of its own.
        unsafe { self.0.submit(ctx, rec) }
    }
    fn inflight(&self) -> u32 {
        self.0.inflight.load(Ordering::Acquire)
    }

    fn poll(&self, ctx: &Ctx, out: &mut PollOut<'_>) -> bool {
        let s = &*self.0;
        if ctx.phase() == CtxPhase::Stopping {
            // Stopping: the NIC ends what is in flight (each with an error) and goes.
            s.stop_nic();
        } else {
            // The polling thread progresses the transport itself when the NIC thread
            // is not at work: completions come with no hand-over between threads.
            s.with_driver(|d| {
                if let Some(d) = d {
                    // Only this thread runs the sink while it holds the worker.
                    d.drive_marked(Some(&s.quiet));
                }
            });
        }
        if !s.queued.load(Ordering::Acquire) || !s.queued.swap(false, Ordering::AcqRel) {
            return false;
        }
        let mut any = drain_done(s, out);
        loop {
            let next = {
                let req = lock(&s.requests).pop_front();
                match req {
                    Some(id) => Some((id, None)),
                    None => lock(&s.events).pop_front().map(|(i, e)| (i, Some(e))),
                }
            };
            let Some((id, ev)) = next else { break };
            any = true;
            // What the NIC finished before a connection's end is reported before it
            // (a message received, then its sender's disconnect): completions that
            // came in since the drain above go first.
            drain_done(s, out);
            let Some(c) = s.conn_by_id(id) else { continue };
            let ev = match ev {
                None => ConnectionEvent::Requested,
                Some(ConnEvent::Established) => {
                    if c.state
                        .compare_exchange(
                            C_CONNECTING,
                            C_CONNECTED,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_err()
                    {
                        continue;
                    }
                    ConnectionEvent::Established
                }
                // Each end is reported once: not after this side disconnected itself
                // (both sides' disconnects crossed), nor a failure after an end.
                Some(ConnEvent::Disconnected) => {
                    if c.state
                        .compare_exchange(
                            C_CONNECTED,
                            C_DISCONNECTED,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_err()
                    {
                        continue;
                    }
                    ConnectionEvent::Disconnected
                }
                Some(ConnEvent::Failed) => {
                    let ended = c
                        .state
                        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |was| {
                            (!matches!(was, C_DISCONNECTED | C_FAILED | C_REJECTED))
                                .then_some(C_FAILED)
                        })
                        .is_err();
                    if ended {
                        continue;
                    }
                    ConnectionEvent::Failed
                }
            };
            let cb = lock(&s.on_event).take();
            if let Some(mut f) = cb {
                f(&c, ev);
                let mut slot = lock(&s.on_event);
                if slot.is_none() {
                    *slot = Some(f);
                }
            }
        }
        any
    }

    fn event_driven_supported(&self) -> bool {
        true
    }

    fn submit_job(
        &self,
        ctx: &Ctx,
        mut rec: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        // The remote net sync event tasks (3.x) name a program's event by address: only
        // the task face, which holds the event, gives them.
        if rec.job_type > JOB_ATOMIC_FETCH_ADD {
            return Err((
                Error::with_context(
                    ErrorCode::NotSupported,
                    "the remote net sync event operations are tasks of DOCA 3.x; they have no work queue job",
                ),
                rec,
            ));
        }
        // DOCA 2.2's receive writes its message over the destination's data section
        // (its samples receive into buffers whose data spans them).
        if rec.job_type == JOB_RECV {
            rec.params[slot::ARG] = slot::RECV_OVER_DATA;
        }
        // A DOCA 2.2 job names no connection: the context's one connection runs it.
        if rec.params[slot::CONN] == 0 && rec.job_type != JOB_RECV {
            match lock(&self.0.conns).first() {
                Some(c) => rec.params[slot::CONN] = Arc::as_ptr(c) as usize as u64,
                None => {
                    return Err((
                        Error::with_context(
                            ErrorCode::NotConnected,
                            "the RDMA context is not connected: doca_rdma_connect first",
                        ),
                        rec,
                    ));
                }
            }
        }
        // SAFETY: a work queue's job pins its buffers until it is retrieved, and their
        // bytes belong to the job while it is in flight (the work queue's contract);
        // the connection is this context's own (checked when the command is made).
        unsafe { self.0.submit(ctx, rec) }
    }
}

/// Applies a completed operation's results to its record: destinations grow by what
/// arrived, results go to the result parameters.
pub(super) fn finish(rec: &mut JobRecord, d: &Done, s: &Shared) -> Result<()> {
    match rec.job_type {
        JOB_RECV => {
            // A write with immediate put its bytes in the target memory, not here (its
            // length is reported, as a verbs completion does).
            if d.opcode != RecvOpcode::WriteImm
                && let Some(dst) = rec.buf(slot::DST)
            {
                if rec.params[slot::ARG] == slot::RECV_OVER_DATA {
                    dst.set_written_data_len(d.len as usize)?;
                } else if d.len > 0 {
                    dst.grow_data_len(d.len as usize)?;
                }
            }
            let op = match d.opcode {
                RecvOpcode::Send => 0u64,
                RecvOpcode::SendImm => 1,
                RecvOpcode::WriteImm => 2,
            };
            rec.params[slot::RES_LEN_OP] = (d.len & 0xffff_ffff) | (op << 32);
            rec.params[slot::RES_IMM] = u64::from(d.imm.unwrap_or(0));
            rec.params[slot::RES_CONN] = s.conn_ptr(d.conn);
        }
        JOB_READ => {
            if d.len > 0
                && let Some(dst) = rec.buf(slot::DST)
            {
                dst.grow_data_len(d.len as usize)?;
            }
            rec.params[slot::RES_CONN] = d.len;
        }
        JOB_ATOMIC_CMP_SWP
        | JOB_ATOMIC_FETCH_ADD
        | JOB_SYNC_EVENT_GET
        | JOB_SYNC_EVENT_NOTIFY_ADD => {
            if let Some(dst) = rec.buf(slot::DST) {
                dst.grow_data_len(8)?;
            }
            rec.params[slot::RES_CONN] = 8;
        }
        _ => {}
    }
    Ok(())
}
