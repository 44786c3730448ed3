//! comch's fast path (`doca_comch_consumer.h`, `doca_comch_producer.h`): buffers from
//! a producer on one side into buffers a consumer posted on the other, over an
//! established comch connection. Each is a context on a progress engine of its own
//! (often on another thread than the connection's).
//!
//! - A consumer starts (`Starting`) by announcing itself on its connection; the far
//!   side's connection context reports the new consumer id (the callbacks of
//!   [`Comch::on_consumer`](crate::comch::Comch::on_consumer)), and the consumer runs.
//! - A producer's send task names a consumer id of the far side; its buffer's data,
//!   with up to [`MAX_IMM_DATA_LEN`] bytes of immediate data, lands in the consumer's
//!   oldest posted buffer (appended to its data), whose post-receive task then completes
//!   with the producer's id and the immediate data.
//! - Sends wait in order while the consumer has no room; a consumer that stops is
//!   reported expired on the far side, and sends to it fail.
//!
//! Underneath, each consumer has a socket pair that keeps message bounds; its far end
//! travels to the other process with the announcement.

use crate::comch::{Connection, TAG_CONSUMER_GONE, TAG_CONSUMER_NEW};
use doca_core::device::Capability;
use doca_core::exec::ChannelOps;
use doca_core::exec::{CtxPhase, PollOut};
use doca_core::lock;
use doca_core::memory::with_io_locked;
use doca_core::types::action::COMCH_FIRST;
use doca_core::{Buf, BufDesc, Ctx, CtxOps, Data, Error, ErrorCode, JobRecord, Result};
use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// The job type of a producer's send completion.
pub const JOB_PRODUCER_SEND: u32 = COMCH_FIRST + 2;
/// The job type of a consumer's post-receive completion.
pub const JOB_CONSUMER_RECV: u32 = COMCH_FIRST + 3;

/// The fast path's task types, from its task table: a producer's send
/// (`doca_comch_producer_task_send`: buffer 0 the data; parameter 0 the consumer id in
/// its low half and the immediate data's length in its high half, 1 and 2 the immediate
/// data) and a consumer's post-receive (`doca_comch_consumer_task_post_recv`: buffer 1
/// the buffer received into; once it completes, its parameters are the record's: the
/// producer's id and the immediate data). Each channel takes its tasks itself.
pub mod tasks {
    doca_core::task_specs! {
        lib: "comch fast path",
        capability: CommChannel,
        topology: "comch",
        c3_handle: (),
        tasks: [
            {
                spec: PRODUCER_SEND_TASK @ crate::fastpath::tasks::PRODUCER_SEND_TASK,
                module: producer_send,
                name: "send",
                job: super::JOB_PRODUCER_SEND,
                job_types: [producer_send = super::JOB_PRODUCER_SEND],
                inputs: [
                    buf buf: 0 (*const doca_buf),
                    param consumer_and_imm_len: 0 (u64),
                    param imm_lo: 1 (u64),
                    param imm_hi: 2 (u64),
                ],
                write_back: [],
                hooks: doca_core::exec::TaskHooks::NONE,
                c3: {},
                c22: {},
            },
            {
                spec: CONSUMER_POST_RECV_TASK @ crate::fastpath::tasks::CONSUMER_POST_RECV_TASK,
                module: consumer_post_recv,
                name: "post_recv",
                job: super::JOB_CONSUMER_RECV,
                job_types: [consumer_post_recv = super::JOB_CONSUMER_RECV],
                inputs: [buf buf: 1 (*mut doca_buf)],
                write_back: [],
                hooks: doca_core::exec::TaskHooks {
                    finish: Some(|t, rec, _| {
                        for (p, v) in t.params.iter().zip(rec.params) {
                            p.set(v);
                        }
                    }),
                    ..doca_core::exec::TaskHooks::NONE
                },
                c3: {},
                c22: {},
            },
        ],
    }
}
pub use tasks::{CONSUMER_POST_RECV_TASK, PRODUCER_SEND_TASK};

/// Largest buffer one send carries (`*_cap_get_max_buf_size`).
pub const MAX_BUF_SIZE: u32 = 64 * 1024;
/// Most immediate data bytes (`doca_comch_consumer_cap_get_max_imm_data_len`).
pub const MAX_IMM_DATA_LEN: u32 = 16;
/// Most tasks of one producer or consumer (`*_cap_get_max_num_tasks`).
pub const MAX_NUM_TASKS: u32 = 8192;
/// Most consumers (or producers) on one connection.
pub use crate::comch::MAX_PER_CONNECTION;

/// The header of a data message: producer id, immediate data length, immediate data.
const HDR: usize = 4 + 4 + MAX_IMM_DATA_LEN as usize;
/// Data messages received per progress, at most.
const RECV_BUDGET: usize = 32;

static NEXT_ID: AtomicU32 = AtomicU32::new(1);

fn next_id() -> u32 {
    NEXT_ID.fetch_add(1, Ordering::Relaxed)
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn stopped() -> Error {
    Error::with_context(
        ErrorCode::IoFailed,
        "the context stopped before the task ran",
    )
}

fn local_buf(b: &BufDesc) -> Result<()> {
    if b.remote().is_some() {
        return Err(Error::with_context(
            ErrorCode::NotSupported,
            "the fast path moves local buffers only (not buffers of an imported mmap)",
        ));
    }
    Ok(())
}

/// What the fast path's contexts share: tasks taken, their completions, the limit.
struct Tasks {
    done: Mutex<VecDeque<(JobRecord, Option<Error>)>>,
    inflight: AtomicU32,
    limit: AtomicU32,
}

impl Tasks {
    fn new() -> Tasks {
        Tasks {
            done: Mutex::new(VecDeque::new()),
            inflight: AtomicU32::new(0),
            limit: AtomicU32::new(1),
        }
    }

    fn take(&self, ctx: &Ctx) -> Result<()> {
        if ctx.phase() != CtxPhase::Running {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the context is not running; start it (and progress until it runs) first",
            ));
        }
        let limit = self.limit.load(Ordering::Relaxed);
        if self.inflight.load(Ordering::Acquire) >= limit {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                format!("all {limit} tasks are in flight; progress the engine"),
            ));
        }
        self.inflight.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    fn finish(&self, r: JobRecord, e: Option<Error>) {
        lock(&self.done).push_back((r, e));
    }

    fn report(&self, out: &mut PollOut<'_>) -> bool {
        let mut any = false;
        loop {
            let Some((r, e)) = lock(&self.done).pop_front() else {
                return any;
            };
            any = true;
            self.inflight.fetch_sub(1, Ordering::AcqRel);
            out.complete(r, e);
        }
    }

    fn set_limit(&self, ctx: &Ctx, n: u32) -> Result<()> {
        if ctx.phase() != CtxPhase::Idle {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the context is started; configure it while idle",
            ));
        }
        if n == 0 || n > MAX_NUM_TASKS {
            return Err(Error::invalid(format!(
                "the number of tasks is 1 to {MAX_NUM_TASKS}, not {n}"
            )));
        }
        self.limit.store(n, Ordering::Relaxed);
        lock(&self.done).reserve(n as usize);
        Ok(())
    }
}

// ---- consumer ----

struct ConsumerShared {
    conn: Arc<Connection>,
    id: u32,
    imm_len: AtomicU32,
    sock: Mutex<Option<OwnedFd>>,
    far_end: Mutex<Option<OwnedFd>>,
    announced: AtomicBool,
    posted: Mutex<VecDeque<JobRecord>>,
    tasks: Tasks,
}

struct ConsumerOps(Arc<ConsumerShared>);

impl CtxOps for ConsumerOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "comch consumer"
    }
    fn capability(&self) -> Capability {
        Capability::CommChannel
    }
    fn handles(&self, job_type: u32) -> bool {
        job_type == JOB_CONSUMER_RECV
    }
    fn on_start(&self, _dev: &doca_core::Dev) -> Result<()> {
        let s = &self.0;
        if !s.conn.is_up() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the consumer's connection is not established",
            ));
        }
        let (mine, far) = rustix::net::socketpair(
            rustix::net::AddressFamily::UNIX,
            rustix::net::SocketType::SEQPACKET,
            rustix::net::SocketFlags::NONBLOCK | rustix::net::SocketFlags::CLOEXEC,
            None,
        )
        .map_err(|e| {
            Error::with_context(
                ErrorCode::OperatingSystem,
                format!(
                    "cannot make the consumer's socket: {}",
                    std::io::Error::from(e)
                ),
            )
        })?;
        // Room for a few of the largest messages in flight.
        let _ = rustix::net::sockopt::set_socket_send_buffer_size(
            &far,
            4 * (MAX_BUF_SIZE as usize + 512),
        );
        *lock(&s.sock) = Some(mine);
        s.announced.store(false, Ordering::Release);
        lock(&s.posted).reserve(s.tasks.limit.load(Ordering::Relaxed) as usize);
        // The far side hears of the consumer now, as DOCA's does at start: programs
        // wait for that event before they progress this side's engine again. When
        // the connection cannot take it now, the first poll sends it.
        match s
            .conn
            .send_ctl(TAG_CONSUMER_NEW, &s.id.to_le_bytes(), Some(far.as_raw_fd()))
        {
            Ok(()) => s.announced.store(true, Ordering::Release),
            Err(e) if e.code() == ErrorCode::Again => *lock(&s.far_end) = Some(far),
            Err(e) => {
                *lock(&s.sock) = None;
                return Err(e);
            }
        }
        Ok(())
    }
    fn on_stop(&self) {
        let s = &self.0;
        if s.announced.swap(false, Ordering::AcqRel) {
            // Best effort: the far side also sees the socket close.
            let _ = s
                .conn
                .send_ctl(TAG_CONSUMER_GONE, &s.id.to_le_bytes(), None);
        }
        *lock(&s.sock) = None;
        *lock(&s.far_end) = None;
    }
}

impl ChannelOps for ConsumerOps {
    unsafe fn submit_task(
        &self,
        ctx: &Ctx,
        rec: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        let view = Consumer {
            ctx: ctx.clone(),
            s: self.0.clone(),
        };
        view.post(rec)
    }
    fn starts_later(&self) -> bool {
        true
    }
    fn inflight(&self) -> u32 {
        self.0.tasks.inflight.load(Ordering::Acquire)
    }
    fn poll(&self, ctx: &Ctx, out: &mut PollOut<'_>) -> bool {
        let s = &*self.0;
        let mut any = false;
        if ctx.phase() == CtxPhase::Starting {
            if s.announced.load(Ordering::Acquire) {
                out.started();
                return true;
            }
            let far = lock(&s.far_end).as_ref().map(|f| f.as_raw_fd());
            let Some(far) = far else { return false };
            match s
                .conn
                .send_ctl(TAG_CONSUMER_NEW, &s.id.to_le_bytes(), Some(far))
            {
                Ok(()) => {
                    *lock(&s.far_end) = None;
                    s.announced.store(true, Ordering::Release);
                    out.started();
                    return true;
                }
                Err(e) if e.code() == ErrorCode::Again => return false,
                Err(_) => {
                    out.failed();
                    return true;
                }
            }
        }
        if ctx.phase() == CtxPhase::Running {
            any |= s.tasks.report(out);
            any |= s.receive();
        } else if ctx.phase() == CtxPhase::Stopping {
            let mut posted = lock(&s.posted);
            while let Some(r) = posted.pop_front() {
                s.tasks.finish(r, Some(stopped()));
            }
        }
        any | s.tasks.report(out)
    }
}

impl ConsumerShared {
    /// Fills posted buffers, oldest first, with the messages waiting.
    fn receive(&self) -> bool {
        let mut any = false;
        let sock = lock(&self.sock).as_ref().map(|f| f.as_raw_fd());
        let Some(sock) = sock else { return false };
        for _ in 0..RECV_BUDGET {
            let mut posted = lock(&self.posted);
            let Some(rec) = posted.front_mut() else { break };
            let Some(dst) = rec.buf(JobRecord::DST) else {
                break;
            };
            let mut hdr = [0u8; HDR];
            let mut got: isize = -1;
            let mut err = None;
            let mut room = 0usize;
            with_io_locked(&[], &[dst], || {
                let (tail, r) = dst.tail_span();
                room = r;
                let mut iov = [
                    libc::iovec {
                        iov_base: hdr.as_mut_ptr().cast(),
                        iov_len: HDR,
                    },
                    libc::iovec {
                        iov_base: tail as *mut libc::c_void,
                        iov_len: r,
                    },
                ];
                // SAFETY: all-zero msghdr is valid.
                let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
                m.msg_iov = iov.as_mut_ptr();
                m.msg_iovlen = 2;
                // SAFETY: the iovecs are the header and the buffer's tailroom, which the
                // io lock keeps ours for the call.
                got = unsafe { libc::recvmsg(sock, &mut m, libc::MSG_DONTWAIT | libc::MSG_TRUNC) };
                if got < 0 {
                    err = Some(errno());
                }
            });
            let gone = match (got, err) {
                (n, Some(libc::EAGAIN) | Some(libc::EINTR)) if n < 0 => break,
                (n, _) if n < 0 => true,
                // End of file: every process that could send here closed its end (the
                // far side's process ended, or it let go of this consumer).
                (0, _) => true,
                _ => false,
            };
            if gone {
                // Nothing can arrive any more: the posted receives end with an error
                // instead of waiting forever, as a lost connection ends them on DOCA.
                while let Some(r) = posted.pop_front() {
                    self.tasks.finish(
                        r,
                        Some(Error::with_context(
                            ErrorCode::NotConnected,
                            "the far side of the consumer's connection is gone (its process ended or let go of this consumer): nothing more can arrive",
                        )),
                    );
                }
                return true;
            }
            any = true;
            let n = got as usize;
            let mut rec = posted.pop_front().expect("front was there");
            drop(posted);
            if n < HDR {
                self.tasks.finish(
                    rec,
                    Some(Error::invalid("a malformed message reached the consumer")),
                );
                continue;
            }
            let data = n - HDR;
            if data > room {
                self.tasks.finish(
                    rec,
                    Some(Error::invalid(format!(
                        "a {data}-byte message does not fit the posted buffer's {room} bytes of room"
                    ))),
                );
                continue;
            }
            let producer = u32::from_le_bytes([hdr[0], hdr[1], hdr[2], hdr[3]]);
            let imm_len =
                u32::from_le_bytes([hdr[4], hdr[5], hdr[6], hdr[7]]).min(MAX_IMM_DATA_LEN);
            let r = rec
                .buf(JobRecord::DST)
                .map(|b| b.grow_data_len(data))
                .unwrap_or(Ok(()));
            rec.params[0] = u64::from(producer) | (u64::from(imm_len) << 32);
            rec.params[1] = u64::from_le_bytes(hdr[8..16].try_into().expect("8 bytes"));
            rec.params[2] = u64::from_le_bytes(hdr[16..24].try_into().expect("8 bytes"));
            self.tasks.finish(rec, r.err());
        }
        any
    }
}

/// A consumer (`struct doca_comch_consumer`): receives a producer's buffers into the
/// buffers it posts.
pub struct Consumer {
    ctx: Ctx,
    s: Arc<ConsumerShared>,
}

impl std::fmt::Debug for Consumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer").field("id", &self.s.id).finish()
    }
}

impl Consumer {
    /// `doca_comch_consumer_create`: on an established connection. (The mmap that
    /// holds the buffers it will post is the program's own here: any local buffer
    /// will do.)
    pub fn new(conn: &Arc<Connection>) -> Result<Consumer> {
        if !conn.is_up() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the connection is not established",
            ));
        }
        let s = Arc::new(ConsumerShared {
            conn: Arc::clone(conn),
            id: next_id(),
            imm_len: AtomicU32::new(0),
            sock: Mutex::new(None),
            far_end: Mutex::new(None),
            announced: AtomicBool::new(false),
            posted: Mutex::new(VecDeque::new()),
            tasks: Tasks::new(),
        });
        let ctx = Ctx::new_channel(ConsumerOps(Arc::clone(&s)));
        ctx.dev_add(&conn.dev()?)?;
        Ok(Consumer { ctx, s })
    }

    /// Its context.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_comch_consumer_get_id`: unique on its connection.
    pub fn id(&self) -> u32 {
        self.s.id
    }

    /// `doca_comch_consumer_set_imm_data_len`: up to [`MAX_IMM_DATA_LEN`], while idle.
    pub fn set_imm_data_len(&self, n: u32) -> Result<()> {
        if self.ctx.phase() != CtxPhase::Idle {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the consumer is started",
            ));
        }
        if n > MAX_IMM_DATA_LEN {
            return Err(Error::invalid(format!(
                "immediate data is at most {MAX_IMM_DATA_LEN} bytes, not {n}"
            )));
        }
        self.s.imm_len.store(n, Ordering::Relaxed);
        Ok(())
    }

    /// `doca_comch_consumer_get_imm_data_len`.
    pub fn imm_data_len(&self) -> u32 {
        self.s.imm_len.load(Ordering::Relaxed)
    }

    /// The number of post-receive tasks (`*_task_post_recv_set_conf`), while idle.
    pub fn set_num_tasks(&self, n: u32) -> Result<()> {
        self.s.tasks.set_limit(&self.ctx, n)
    }

    fn post(&self, rec: JobRecord) -> std::result::Result<(), (Error, JobRecord)> {
        if let Err(e) = rec
            .buf(JobRecord::DST)
            .ok_or_else(|| Error::invalid("the post-receive task has no buffer"))
            .and_then(local_buf)
            .and_then(|()| rec.check_data_sections())
        {
            return Err((e, rec));
        }
        if let Err(e) = self.s.tasks.take(&self.ctx) {
            return Err((e, rec));
        }
        lock(&self.s.posted).push_back(rec);
        Ok(())
    }

    /// A post-receive task: `buf` (its tailroom) receives the next message; the
    /// completion ([`JOB_CONSUMER_RECV`], with `user_data`) gives the buffer back with
    /// the data appended, `params[0]` the producer id (low 32 bits) and immediate data
    /// length (high), `params[1..3]` the immediate data.
    pub fn post_recv(&self, buf: Buf, user_data: Data) -> std::result::Result<(), (Error, Buf)> {
        let mut rec = JobRecord::new(JOB_CONSUMER_RECV, user_data);
        rec.set_buf(JobRecord::DST, buf);
        self.post(rec).map_err(|(e, mut r)| {
            let b = r.take_buf(JobRecord::DST).expect("the buffer was set");
            (e, b)
        })
    }

    /// [`post_recv`](Consumer::post_recv) of a buffer the caller keeps its reference
    /// of.
    ///
    /// # Safety
    /// `desc` stays a live buffer until the task's completion is delivered.
    pub unsafe fn post_recv_raw(&self, desc: *mut BufDesc, user_data: Data) -> Result<()> {
        if desc.is_null() {
            return Err(Error::invalid("the buffer is NULL"));
        }
        let mut rec = JobRecord::new(JOB_CONSUMER_RECV, user_data);
        // SAFETY: the caller's contract.
        unsafe { rec.set_buf_raw(JobRecord::DST, desc) };
        self.post(rec).map_err(|(e, _)| e)
    }
}

// ---- producer ----

struct Send1 {
    rec: JobRecord,
    sock: Arc<OwnedFd>,
    hdr: [u8; HDR],
}

struct ProducerShared {
    conn: Arc<Connection>,
    id: u32,
    pending: Mutex<VecDeque<Send1>>,
    tasks: Tasks,
}

/// Sends one message: `Ok(false)` when the consumer has no room now.
fn send_one(p: &Send1) -> Result<bool> {
    let src = p
        .rec
        .buf(JobRecord::SRC)
        .ok_or_else(|| Error::invalid("the send task has no buffer"))?;
    let mut got: isize = -1;
    let mut err = 0;
    with_io_locked(&[src], &[], || {
        let (data, n) = src.data_span();
        let iov = [
            libc::iovec {
                iov_base: p.hdr.as_ptr() as *mut libc::c_void,
                iov_len: HDR,
            },
            libc::iovec {
                iov_base: data as *mut libc::c_void,
                iov_len: n,
            },
        ];
        // SAFETY: all-zero msghdr is valid.
        let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
        m.msg_iov = iov.as_ptr().cast_mut();
        m.msg_iovlen = 2;
        // SAFETY: the iovecs are the header and the buffer's data, which the io lock
        // keeps unchanged for the call.
        got = unsafe {
            libc::sendmsg(
                p.sock.as_raw_fd(),
                &m,
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        if got < 0 {
            err = errno();
        }
    });
    if got >= 0 {
        return Ok(true);
    }
    match err {
        libc::EAGAIN | libc::ENOBUFS | libc::EINTR => Ok(false),
        _ => Err(Error::with_context(
            ErrorCode::NotConnected,
            "the consumer went away before the buffer reached it",
        )),
    }
}

impl ProducerShared {
    fn flush(&self) -> bool {
        let mut pending = lock(&self.pending);
        let mut any = false;
        while let Some(p) = pending.front() {
            match send_one(p) {
                Ok(false) => break,
                r => {
                    let p = pending.pop_front().expect("front was there");
                    self.tasks.finish(p.rec, r.err());
                    any = true;
                }
            }
        }
        any
    }
}

struct ProducerOps(Arc<ProducerShared>);

impl CtxOps for ProducerOps {
    fn tasks(&self) -> &'static [&'static doca_core::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "comch producer"
    }
    fn capability(&self) -> Capability {
        Capability::CommChannel
    }
    fn handles(&self, job_type: u32) -> bool {
        job_type == JOB_PRODUCER_SEND
    }
    fn on_start(&self, _dev: &doca_core::Dev) -> Result<()> {
        if !self.0.conn.is_up() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the producer's connection is not established",
            ));
        }
        lock(&self.0.pending).reserve(self.0.tasks.limit.load(Ordering::Relaxed) as usize);
        Ok(())
    }
}

impl ChannelOps for ProducerOps {
    unsafe fn submit_task(
        &self,
        ctx: &Ctx,
        rec: JobRecord,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        use tasks::producer_send as t;
        let p = rec.params;
        let mut imm = [0u8; MAX_IMM_DATA_LEN as usize];
        imm[..8].copy_from_slice(&p[t::imm_lo].to_le_bytes());
        imm[8..].copy_from_slice(&p[t::imm_hi].to_le_bytes());
        let n = ((p[t::consumer_and_imm_len] >> 32) as usize).min(imm.len());
        let consumer = p[t::consumer_and_imm_len] as u32;
        let view = Producer {
            ctx: ctx.clone(),
            s: self.0.clone(),
        };
        view.submit(rec, &imm[..n], consumer)
    }
    fn inflight(&self) -> u32 {
        self.0.tasks.inflight.load(Ordering::Acquire)
    }
    fn poll(&self, ctx: &Ctx, out: &mut PollOut<'_>) -> bool {
        let s = &*self.0;
        let mut any = s.flush();
        if ctx.phase() == CtxPhase::Stopping {
            let mut pending = lock(&s.pending);
            while let Some(p) = pending.pop_front() {
                s.tasks.finish(p.rec, Some(stopped()));
            }
        }
        any |= s.tasks.report(out);
        any
    }
}

/// A producer (`struct doca_comch_producer`): sends buffers to the far side's
/// consumers.
pub struct Producer {
    ctx: Ctx,
    s: Arc<ProducerShared>,
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer").field("id", &self.s.id).finish()
    }
}

impl Producer {
    /// `doca_comch_producer_create`: on an established connection.
    pub fn new(conn: &Arc<Connection>) -> Result<Producer> {
        if !conn.is_up() {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the connection is not established",
            ));
        }
        let s = Arc::new(ProducerShared {
            conn: Arc::clone(conn),
            id: next_id(),
            pending: Mutex::new(VecDeque::new()),
            tasks: Tasks::new(),
        });
        let ctx = Ctx::new_channel(ProducerOps(Arc::clone(&s)));
        ctx.dev_add(&conn.dev()?)?;
        Ok(Producer { ctx, s })
    }

    /// Its context.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_comch_producer_get_id`: unique on its connection.
    pub fn id(&self) -> u32 {
        self.s.id
    }

    /// The number of send tasks (`*_task_send_set_conf`), while idle.
    pub fn set_num_tasks(&self, n: u32) -> Result<()> {
        self.s.tasks.set_limit(&self.ctx, n)
    }

    fn submit(
        &self,
        rec: JobRecord,
        imm: &[u8],
        consumer: u32,
    ) -> std::result::Result<(), (Error, JobRecord)> {
        let checked = (|| {
            rec.check_data_sections()?;
            let src = rec
                .buf(JobRecord::SRC)
                .ok_or_else(|| Error::invalid("the send task has no buffer"))?;
            local_buf(src)?;
            if src.data_len() > MAX_BUF_SIZE as usize {
                return Err(Error::invalid(format!(
                    "a {}-byte buffer is larger than the fast path's largest ({MAX_BUF_SIZE})",
                    src.data_len()
                )));
            }
            if imm.len() > MAX_IMM_DATA_LEN as usize {
                return Err(Error::invalid(format!(
                    "immediate data is at most {MAX_IMM_DATA_LEN} bytes, not {}",
                    imm.len()
                )));
            }
            self.s.conn.remote_consumer(consumer).ok_or_else(|| {
                Error::with_context(
                    ErrorCode::NotFound,
                    format!("no consumer {consumer} on the far side of this connection"),
                )
            })
        })();
        let sock = match checked {
            Ok(s) => s,
            Err(e) => return Err((e, rec)),
        };
        if let Err(e) = self.s.tasks.take(&self.ctx) {
            return Err((e, rec));
        }
        let mut hdr = [0u8; HDR];
        hdr[..4].copy_from_slice(&self.s.id.to_le_bytes());
        hdr[4..8].copy_from_slice(&(imm.len() as u32).to_le_bytes());
        hdr[8..8 + imm.len()].copy_from_slice(imm);
        let one = Send1 { rec, sock, hdr };
        let mut pending = lock(&self.s.pending);
        if pending.is_empty() {
            match send_one(&one) {
                Ok(false) => pending.push_back(one),
                r => self.s.tasks.finish(one.rec, r.err()),
            }
        } else {
            pending.push_back(one);
        }
        Ok(())
    }

    /// A send task: `buf`'s data (and `imm`) to the far side's consumer `consumer`;
    /// the completion ([`JOB_PRODUCER_SEND`], with `user_data`) gives the buffer back.
    pub fn send(
        &self,
        buf: Buf,
        imm: &[u8],
        consumer: u32,
        user_data: Data,
    ) -> std::result::Result<(), (Error, Buf)> {
        let mut rec = JobRecord::new(JOB_PRODUCER_SEND, user_data);
        rec.set_buf(JobRecord::SRC, buf);
        self.submit(rec, imm, consumer).map_err(|(e, mut r)| {
            let b = r.take_buf(JobRecord::SRC).expect("the buffer was set");
            (e, b)
        })
    }

    /// [`send`](Producer::send) of a buffer the caller keeps its reference of.
    ///
    /// # Safety
    /// `desc` stays a live buffer, its data unchanged, until the task's completion is
    /// delivered.
    pub unsafe fn send_raw(
        &self,
        desc: *mut BufDesc,
        imm: &[u8],
        consumer: u32,
        user_data: Data,
    ) -> Result<()> {
        if desc.is_null() {
            return Err(Error::invalid("the buffer is NULL"));
        }
        let mut rec = JobRecord::new(JOB_PRODUCER_SEND, user_data);
        // SAFETY: the caller's contract.
        unsafe { rec.set_buf_raw(JobRecord::SRC, desc) };
        self.submit(rec, imm, consumer).map_err(|(e, _)| e)
    }
}
