//! Tasks to NIC commands: each task's buffers checked and turned into the command that
//! carries it, the records kept until they complete, and the direct copies between two
//! processes of one machine.

use super::*;
use doca_core::Error;
use doca_core::lock;

/// A span of a local buffer (none for no buffer): `f` of it.
pub(super) fn local_span(
    b: Option<&BufDesc>,
    what: &str,
    f: fn(&BufDesc) -> (usize, usize),
) -> Result<(usize, usize)> {
    match b {
        None => Ok((0, 0)),
        Some(b) if b.remote().is_some() => Err(Error::invalid(format!(
            "the {what} buffer must be local memory (it is in an mmap created from an export)"
        ))),
        Some(b) => {
            if b.next().is_some() {
                return Err(Error::invalid(format!(
                    "the {what} buffer is a list; this device takes one buffer (max_send_buf_list_len 1)"
                )));
            }
            Ok(f(b))
        }
    }
}

/// A local buffer's data segment: (address, length).
pub(super) fn local_data(b: Option<&BufDesc>, what: &str) -> Result<(usize, usize)> {
    local_span(b, what, BufDesc::data_span)
}

/// A local buffer's tailroom: (address, length).
pub(super) fn local_tail(b: Option<&BufDesc>, what: &str) -> Result<(usize, usize)> {
    local_span(b, what, BufDesc::tail_span)
}

/// A local buffer from its data address to its end: (address, length).
pub(super) fn local_room(b: Option<&BufDesc>, what: &str) -> Result<(usize, usize)> {
    local_span(b, what, BufDesc::data_room_span)
}

/// A remote buffer: its export's token and the address (exporter's) of `span`.
pub(super) fn remote_of<'a>(b: Option<&'a BufDesc>, what: &str) -> Result<([u64; 2], &'a BufDesc)> {
    let b = b.ok_or_else(|| Error::invalid(format!("the {what} buffer is missing")))?;
    let r = b.remote().ok_or_else(|| {
        Error::invalid(format!(
            "the {what} buffer must be remote memory: take it from an mmap created from the peer's doca_mmap_export_rdma"
        ))
    })?;
    let k = r.net_key().ok_or_else(|| {
        Error::invalid(format!(
            "the {what} buffer's mmap was exported to the DPU, not for RDMA (doca_mmap_export_rdma)"
        ))
    })?;
    Ok((k.token, b))
}

impl Shared {
    /// [`Rdma::submit`] on the context `ctx` (this one's).
    ///
    /// # Safety
    /// As [`Rdma::submit`].
    pub(super) unsafe fn submit(
        &self,
        ctx: &Ctx,
        rec: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        // SAFETY: the caller's contract.
        match unsafe { self.command(ctx, &rec) } {
            Ok(cmd) => {
                // SAFETY: the command's memory is the record's buffers (contract).
                if let Some(outcome) = unsafe { self.direct(&cmd, &rec) } {
                    self.inflight.fetch_add(1, Ordering::AcqRel);
                    let mut ops = lock(&self.ops);
                    let i = Self::keep_in(&mut ops, rec);
                    ops.done.push_back((i, outcome));
                    drop(ops);
                    self.queued.store(true, Ordering::Release);
                    self.ring();
                    return Ok(());
                }
                if self.nic_gen.load(Ordering::Acquire) == 0 {
                    return Err((Error::bad_state("the RDMA context is stopping"), rec));
                }
                let mut user = u64::from(self.keep(rec));
                self.inflight.fetch_add(1, Ordering::AcqRel);
                if !matches!(cmd, Cmd::Recv { .. }) {
                    self.nic_ops.fetch_add(1, Ordering::AcqRel);
                    user |= OUTGOING;
                }
                let cmd = with_user(cmd, user);
                // The submitting thread starts the operation itself when the NIC
                // thread is not at work (no hand-over); else it is handed over and the
                // NIC thread woken. The transport progresses where the program polls.
                let first = self.with_driver(|d| match d {
                    // SAFETY: the command's memory is the record's buffers, which the
                    // caller keeps live and untouched until completion (contract).
                    Some(d) => unsafe { d.issue_now(cmd) },
                    None => Err(cmd),
                });
                if let Err(cmd) = first {
                    let nic = lock(&self.nic);
                    let Some(n) = nic.as_ref() else {
                        // Stopped meanwhile: the stop ended what was in flight; this
                        // one ends the same way.
                        drop(nic);
                        self.fail_unposted(user);
                        return Ok(());
                    };
                    // SAFETY: as for `issue_now` above.
                    unsafe { n.post(cmd) };
                    let driver = n.driver();
                    drop(nic);
                    // The holder may have finished before the command was queued.
                    if !driver.issue() {
                        driver.wake();
                    }
                }
                Ok(())
            }
            Err(e) => Err((e, rec)),
        }
    }

    /// Keeps a record in flight; its index.
    pub(super) fn keep(&self, rec: JobRecord) -> u32 {
        Self::keep_in(&mut lock(&self.ops), rec)
    }

    /// [`keep`](Self::keep) under the lock already taken.
    pub(super) fn keep_in(ops: &mut Ops, rec: JobRecord) -> u32 {
        match ops.free.pop() {
            Some(i) => {
                ops.recs[i as usize] = Some(rec);
                i
            }
            None => {
                ops.recs.push(Some(rec));
                (ops.recs.len() - 1) as u32
            }
        }
    }

    /// A read or write between two processes of this machine that both allow shared
    /// memory (`DOCA_RDMA_SHM=1`), of memory the peer process exported on the device its
    /// end of the connection serves, while no operation of this context is with the
    /// NIC (none is passed): this side copies the bytes itself (`process_vm_readv` /
    /// `process_vm_writev` up to one piece of the NIC's, or through a mapping when the
    /// memory is shared), counted in
    /// the export's control block so that the exporter's stop or destroy waits for it,
    /// after the checks the target would make (range, permission, revocation). Its
    /// outcome, or `None` when the NIC carries the operation.
    ///
    /// # Safety
    /// The command's local memory is valid for the copy (the submit contract).
    pub(super) unsafe fn direct(&self, cmd: &Cmd, rec: &JobRecord) -> Option<Result<Done>> {
        let (conn, ptr, len, addr, write) = match *cmd {
            Cmd::Write {
                conn,
                ptr,
                len,
                addr,
                imm: None,
                ..
            } if len > 0 => (conn, ptr as *mut u8, len, addr, true),
            Cmd::Read {
                conn,
                ptr,
                len,
                addr,
                ..
            } if len > 0 => (conn, ptr, len, addr, false),
            _ => return None,
        };
        if self.nic_ops.load(Ordering::Acquire) != 0 {
            return None;
        }
        let c = self.conn_by_id(conn)?;
        let &(pid, dev, grants) = c.direct.get()?;
        // The peer's context does not grant it: its NIC refuses it, in words.
        let need = if write {
            AccessFlags::RDMA_WRITE
        } else {
            AccessFlags::RDMA_READ
        };
        if !grants.contains(need) {
            return None;
        }
        if c.state.load(Ordering::Acquire) != C_CONNECTED {
            return None;
        }
        let b = rec.buf(if write { slot::DST } else { slot::SRC })?;
        let remote = b.remote()?;
        let key = remote.net_key()?;
        if !remote.is_local() || remote.exporter_pid() != pid || key.dev != dev {
            return None;
        }
        if len > crate::nic::piece_max() && !remote.is_mapped() {
            // Larger copies through the kernel run on this CPU alone, page by page; the
            // NIC moves them in pieces through the shared-memory queue, the target's
            // CPU copying out while this one copies in.
            return None;
        }
        let r = if write {
            // SAFETY: `ptr` holds `len` bytes of the record's source (contract).
            unsafe { remote.write_raw(addr as usize, ptr, len) }
        } else if !key.perms.contains(AccessFlags::RDMA_READ) {
            Err(Error::with_context(
                ErrorCode::NotPermitted,
                "the exporter did not grant DOCA_ACCESS_RDMA_READ on this memory",
            ))
        } else {
            // SAFETY: `ptr` has room for `len` bytes in the record's destination
            // (contract).
            unsafe { remote.read_raw(addr as usize, ptr, len) }
        };
        self.direct_copies.fetch_add(1, Ordering::Relaxed);
        Some(
            r.map(|()| Done {
                len: len as u64,
                imm: None,
                conn,
                opcode: RecvOpcode::Send,
                value: 0,
            })
            .map_err(|e| {
                if e.code() == ErrorCode::ConnectionAborted {
                    // As the target answers: the export is gone.
                    Error::with_context(
                        ErrorCode::NotFound,
                        "no live RDMA export has this key (revoked by a stop or destroy of its mmap)",
                    )
                } else {
                    e
                }
            }),
        )
    }

    /// # Safety
    /// As [`submit`](Rdma::submit).
    pub(super) unsafe fn command(&self, ctx: &Ctx, rec: &JobRecord) -> Result<Cmd> {
        if ctx.phase() != CtxPhase::Running {
            return Err(Error::bad_state(
                "the RDMA context is not running: start it (and connect) before submitting",
            ));
        }
        rec.check_data_sections()?;
        let conn = || -> Result<u32> {
            let p = rec.params[slot::CONN] as usize as *const Connection;
            if p.is_null() {
                return Err(Error::invalid("the task has no RDMA connection"));
            }
            self.own_conn(p)
        };
        let src = rec.buf(slot::SRC);
        let dst = rec.buf(slot::DST);
        let imm = (rec.params[slot::ARG] & 0xffff_ffff) as u32;
        Ok(match rec.job_type {
            JOB_SEND | JOB_SEND_IMM => {
                let (p, n) = local_data(src, "source")?;
                check_len(n)?;
                Cmd::Send {
                    user: 0,
                    conn: conn()?,
                    ptr: p as *const u8,
                    len: n,
                    imm: (rec.job_type == JOB_SEND_IMM).then_some(imm),
                }
            }
            JOB_RECV => {
                let (p, room) = if rec.params[slot::ARG] == slot::RECV_OVER_DATA {
                    local_room(dst, "destination")?
                } else {
                    local_tail(dst, "destination")?
                };
                Cmd::Recv {
                    user: 0,
                    ptr: p as *mut u8,
                    cap: room,
                }
            }
            JOB_WRITE | JOB_WRITE_IMM => {
                let (p, n) = local_data(src, "source")?;
                check_len(n)?;
                let (token, d) = if dst.is_none() && n == 0 {
                    ([0; 2], None)
                } else {
                    let (t, d) = remote_of(dst, "destination")?;
                    (t, Some(d))
                };
                let addr = match d {
                    Some(d) => {
                        let (to, room) = d.tail_span();
                        if n > room {
                            return Err(Error::invalid(format!(
                                "{n} bytes to write; the remote destination buffer has room for {room}"
                            )));
                        }
                        to as u64
                    }
                    None => 0,
                };
                Cmd::Write {
                    user: 0,
                    conn: conn()?,
                    ptr: p as *const u8,
                    len: n,
                    token,
                    addr,
                    imm: (rec.job_type == JOB_WRITE_IMM).then_some(imm),
                }
            }
            JOB_READ => {
                if src.is_none() {
                    // A read of nothing.
                    return Ok(Cmd::Read {
                        user: 0,
                        conn: conn()?,
                        ptr: std::ptr::null_mut(),
                        len: 0,
                        token: [0; 2],
                        addr: 0,
                    });
                }
                let (token, s) = remote_of(src, "source")?;
                let (from, n) = s.data_span();
                check_len(n)?;
                let (to, room) = local_tail(dst, "destination")?;
                if dst.is_none() || n > room {
                    return Err(Error::invalid(format!(
                        "{n} bytes to read; the destination buffer has room for {room}"
                    )));
                }
                Cmd::Read {
                    user: 0,
                    conn: conn()?,
                    ptr: to as *mut u8,
                    len: n,
                    token,
                    addr: from as u64,
                }
            }
            JOB_ATOMIC_CMP_SWP | JOB_ATOMIC_FETCH_ADD => {
                let (token, d) = remote_of(src, "destination")?;
                let (at, n) = d.data_span();
                if n < 8 {
                    return Err(Error::invalid(
                        "an atomic works on 8 bytes: the remote buffer holds fewer",
                    ));
                }
                if at % 8 != 0 {
                    return Err(Error::invalid(
                        "an atomic's remote address must be 8-byte aligned",
                    ));
                }
                let (res, room) = local_tail(dst, "result")?;
                if dst.is_none() || room < 8 {
                    return Err(Error::invalid("the result buffer needs room for 8 bytes"));
                }
                Cmd::Atomic {
                    user: 0,
                    conn: conn()?,
                    token,
                    addr: at as u64,
                    cas: rec.job_type == JOB_ATOMIC_CMP_SWP,
                    b: rec.params[slot::ARG],
                    c: rec.params[slot::SWAP],
                    result: res as *mut u8,
                }
            }
            JOB_SYNC_EVENT_GET | JOB_SYNC_EVENT_NOTIFY_SET | JOB_SYNC_EVENT_NOTIFY_ADD => {
                use doca_core::sync_event::net::{Op, RemoteNetEvent};
                let ev = rec.params[slot::EVENT] as usize as *const RemoteNetEvent;
                // SAFETY: the caller's contract: a live handle of the program's.
                let ev = unsafe { ev.as_ref() }
                    .ok_or_else(|| Error::invalid("the task has no remote net sync event"))?;
                let (op, result) = match rec.job_type {
                    JOB_SYNC_EVENT_NOTIFY_SET => {
                        let (p, n) = local_data(src, "source")?;
                        if n < 8 {
                            return Err(Error::invalid(
                                "the source buffer must hold the 8-byte value to set",
                            ));
                        }
                        // SAFETY: 8 bytes of the source's data (checked), live while
                        // the task is (contract).
                        let v = unsafe { (p as *const u64).read_unaligned() };
                        (Op::Set(v), 0usize)
                    }
                    t => {
                        let (res, room) = local_tail(dst, "destination")?;
                        if dst.is_none() || room < 8 {
                            return Err(Error::invalid(
                                "the destination buffer needs room for the 8-byte value",
                            ));
                        }
                        let op = if t == JOB_SYNC_EVENT_GET {
                            Op::Get
                        } else {
                            Op::Add(rec.params[slot::ARG])
                        };
                        (op, res)
                    }
                };
                Cmd::Event {
                    user: 0,
                    conn: conn()?,
                    token: ev.token(),
                    op,
                    result: result as *mut u8,
                }
            }
            t => {
                return Err(Error::invalid(format!("job type {t} is not an RDMA job")));
            }
        })
    }
}

pub(super) fn check_len(n: usize) -> Result<()> {
    if n as u64 > u64::from(MAX_MESSAGE_SIZE) {
        return Err(Error::invalid(format!(
            "{n} bytes is above the largest message ({MAX_MESSAGE_SIZE} bytes)"
        )));
    }
    Ok(())
}

pub(super) fn with_user(c: Cmd, user: u64) -> Cmd {
    match c {
        Cmd::Send {
            conn,
            ptr,
            len,
            imm,
            ..
        } => Cmd::Send {
            user,
            conn,
            ptr,
            len,
            imm,
        },
        Cmd::Recv { ptr, cap, .. } => Cmd::Recv { user, ptr, cap },
        Cmd::Write {
            conn,
            ptr,
            len,
            token,
            addr,
            imm,
            ..
        } => Cmd::Write {
            user,
            conn,
            ptr,
            len,
            token,
            addr,
            imm,
        },
        Cmd::Read {
            conn,
            ptr,
            len,
            token,
            addr,
            ..
        } => Cmd::Read {
            user,
            conn,
            ptr,
            len,
            token,
            addr,
        },
        Cmd::Event {
            conn,
            token,
            op,
            result,
            ..
        } => Cmd::Event {
            user,
            conn,
            token,
            op,
            result,
        },
        Cmd::Atomic {
            conn,
            token,
            addr,
            cas,
            b,
            c,
            result,
            ..
        } => Cmd::Atomic {
            user,
            conn,
            token,
            addr,
            cas,
            b,
            c,
            result,
        },
        other => other,
    }
}
