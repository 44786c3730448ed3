//! DOCA Comch, the channel of DOCA 3.x: a server context on the DPU side and client
//! contexts on the host side, each on a progress engine ([`Pe`](doca_core::exec::Pe)).
//!
//! - Messages go out as send tasks ([`Comch::send`]): a task taken is always accepted,
//!   kept in order when the peer's queue is full, and completes (through the engine's
//!   progress, job type [`JOB_SEND`]) once it is on its way.
//! - Messages come in as events: the callback registered with
//!   [`Comch::on_message`] runs from the engine's progress with the message and its
//!   connection.
//! - A server reports connections and disconnections ([`Comch::on_connection`]); a
//!   client starts (`Starting`) and runs once it reached its server, which may come up
//!   later.
//! - Stopping closes the connections; messages sent before a close still reach the far
//!   end, and come before the close is seen there.
//!
//! Underneath is the comm channel's transport (sockets of this user that keep message
//! bounds), with a one-byte header of comch's own in front of every message.
//!
//! ```no_run
//! use doca_comm_channel::comch::Comch;
//! use doca_core::exec::{Pe, PeEvent};
//! use doca_core::{devinfo_list, Data};
//!
//! // Host side: a client of the service "ping".
//! let dev = devinfo_list()?[0].open()?;
//! let client = Comch::client(&dev, "ping")?;
//! client.on_message(|_conn, msg| println!("got {} bytes", msg.len()))?;
//! let pe = Pe::new()?;
//! pe.connect(client.ctx())?;
//! let _ = pe.start_ctx(client.ctx()); // IN_PROGRESS: it runs once connected
//! while client.ctx().phase() != doca_core::exec::CtxPhase::Running {
//!     pe.progress(|_| {});
//! }
//! let conn = client.connection().expect("a running client has its connection");
//! client.send(&conn, b"hello", Data(1))?;
//! # Ok::<(), doca_core::Error>(())
//! ```

use crate::{Endpoint, MAX_CONNECTIONS, MAX_MESSAGE_SIZE, MAX_QUEUE_SIZE, MAX_SERVICE_NAME_LEN};
use crate::{PeerId, check_name};
use doca_core::device::{Capability, Role};
use doca_core::exec::ChannelOps;
use doca_core::exec::{CtxPhase, PollOut};
use doca_core::lock;
use doca_core::types::action::COMCH_FIRST;
use doca_core::{Ctx, CtxOps, Data, Dev, DevInfo, DevRep, Error, ErrorCode, JobRecord, Result};
use std::collections::VecDeque;
use std::os::fd::{OwnedFd, RawFd};
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

/// The job type of a send task's completion.
pub const JOB_SEND: u32 = COMCH_FIRST + 1;

/// comch's task types (`doca_comch_task_send` of a server or client), from its task
/// table: the channel takes its tasks itself (through the engine's submit, never as
/// records on a work queue).
pub mod tasks {
    doca_core::task_specs! {
        lib: "comch",
        capability: CommChannel,
        topology: "comch",
        c3_handle: (),
        tasks: [
            {
                spec: SEND_TASK @ crate::comch::tasks::SEND_TASK,
                module: send,
                name: "send",
                job: super::JOB_SEND,
                job_types: [send = super::JOB_SEND],
                inputs: [
                    param connection: 0 (*mut doca_comch_connection),
                    param msg: 1 (*const c_void),
                    param len: 2 (u32),
                ],
                write_back: [],
                hooks: doca_core::exec::TaskHooks::NONE,
                c3: {},
                c22: {},
            },
        ],
    }
}
pub use tasks::SEND_TASK;

/// Longest server name, with its terminating NUL (`doca_comch_cap_get_max_name_len`).
pub const MAX_NAME_LEN: u32 = MAX_SERVICE_NAME_LEN + 1;
/// Largest message (`doca_comch_cap_get_max_msg_size`).
pub const MAX_MSG_SIZE: u32 = MAX_MESSAGE_SIZE;
/// Largest receive queue (`doca_comch_cap_get_max_recv_queue_size`).
pub const MAX_RECV_QUEUE_SIZE: u32 = MAX_QUEUE_SIZE;
/// Most clients of one server (`doca_comch_cap_get_max_clients`).
pub const MAX_CLIENTS: u32 = MAX_CONNECTIONS;
/// Most consumers (or producers) on one connection.
pub const MAX_PER_CONNECTION: u32 = 512;
/// Most send tasks of one context (`doca_comch_cap_get_max_send_tasks`).
pub const MAX_SEND_TASKS: u32 = MAX_QUEUE_SIZE;
/// The default largest message and receive queue.
pub const DEFAULT_MSG_SIZE: u32 = MAX_MESSAGE_SIZE;
/// The default receive queue size.
pub const DEFAULT_RECV_QUEUE_SIZE: u32 = 16;

/// Comch's header byte: a message of the user.
const TAG_USER: u8 = 0;
/// A consumer came up: its id (u32, little-endian); its data socket is attached.
pub(crate) const TAG_CONSUMER_NEW: u8 = 1;
/// A consumer went away: its id.
pub(crate) const TAG_CONSUMER_GONE: u8 = 2;
/// Messages received per progress, at most.
const RECV_BUDGET: usize = 32;

/// The id a consumer message carries.
fn rest_id(rest: &[u8]) -> Option<u32> {
    (rest.len() == 4).then(|| u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]))
}

/// Whether `info` can run a comch server (a DPU-side device with the comm channel).
pub fn server_supported(info: &DevInfo) -> Result<()> {
    supported(info, Role::Dpu, "server")
}

/// Whether `info` can run a comch client (a host-side device with the comm channel).
pub fn client_supported(info: &DevInfo) -> Result<()> {
    supported(info, Role::Host, "client")
}

fn supported(info: &DevInfo, role: Role, what: &str) -> Result<()> {
    if !info.has_capability(Capability::CommChannel) {
        return Err(Error::with_context(
            ErrorCode::NotSupported,
            format!("device {} has no comm channel", info.pci_addr()),
        ));
    }
    if info.role() != role {
        return Err(Error::with_context(
            ErrorCode::NotSupported,
            format!(
                "device {} cannot run a comch {what}: servers run on the DPU side, clients on the host side",
                info.pci_addr()
            ),
        ));
    }
    Ok(())
}

/// One connection (`struct doca_comch_connection`): its user data, and the context it
/// belongs to. A server's is valid until its disconnection was reported; a client's,
/// and those a server still had when it stopped, until the context starts again or is
/// destroyed.
#[derive(Debug)]
pub struct Connection {
    peer: PeerId,
    user_data: AtomicU64,
    owner: usize,
    server: bool,
    sent_msgs: AtomicU64,
    sent_bytes: AtomicU64,
    recv_msgs: AtomicU64,
    recv_bytes: AtomicU64,
    /// Consumers the far side announced on this connection: id and data socket.
    remote_consumers: Mutex<Vec<(u32, Arc<OwnedFd>)>>,
    /// Its context's channel (consumers announce themselves through it).
    shared: Weak<Shared>,
}

impl Connection {
    /// The data socket of the far side's consumer `id`, while it is announced.
    pub(crate) fn remote_consumer(&self, id: u32) -> Option<Arc<OwnedFd>> {
        lock(&self.remote_consumers)
            .iter()
            .find(|c| c.0 == id)
            .map(|c| Arc::clone(&c.1))
    }

    /// Sends one of comch's own messages on this connection (`Again` when the queue
    /// toward the peer is full).
    pub(crate) fn send_ctl(&self, tag: u8, payload: &[u8], pass: Option<RawFd>) -> Result<()> {
        let s = self.shared.upgrade().ok_or_else(|| {
            Error::with_context(ErrorCode::NotConnected, "the connection's context is gone")
        })?;
        let mut ep = lock(&s.ep);
        let ep = ep.as_mut().ok_or_else(|| {
            Error::with_context(
                ErrorCode::NotConnected,
                "the connection's context is stopped",
            )
        })?;
        ep.send_parts(&[tag], payload, self.peer, pass)
    }

    /// The device of the connection's context.
    pub(crate) fn dev(&self) -> Result<Dev> {
        self.shared.upgrade().map(|s| s.dev.clone()).ok_or_else(|| {
            Error::with_context(ErrorCode::NotConnected, "the connection's context is gone")
        })
    }

    fn count_sent(&self, n: usize) {
        self.sent_msgs.fetch_add(1, Ordering::Relaxed);
        self.sent_bytes.fetch_add(n as u64, Ordering::Relaxed);
    }

    /// Whether the connection's context runs and the connection is up.
    pub(crate) fn is_up(&self) -> bool {
        self.shared.upgrade().is_some_and(|s| {
            lock(&s.conns)
                .iter()
                .any(|c| std::ptr::eq(Arc::as_ptr(c), self))
                && lock(&s.ep)
                    .as_ref()
                    .is_some_and(|ep| ep.peer_addr(self.peer).is_ok_and(|p| p.is_connected()))
        })
    }
    /// The connection's peer in the transport.
    pub fn peer(&self) -> PeerId {
        self.peer
    }

    /// `doca_comch_connection_get_user_data`.
    pub fn user_data(&self) -> Data {
        Data(self.user_data.load(Ordering::Relaxed))
    }

    /// `doca_comch_connection_set_user_data`.
    pub fn set_user_data(&self, d: Data) {
        self.user_data.store(d.0, Ordering::Relaxed);
    }

    /// The word its context's owner set ([`Comch::set_owner`]) when the connection
    /// came up.
    pub fn owner(&self) -> usize {
        self.owner
    }

    /// Whether the connection is a server's (else a client's).
    pub fn is_server(&self) -> bool {
        self.server
    }

    /// Statistics (`doca_comch_connection_get_counter`): messages and bytes sent and
    /// received.
    pub fn counters(&self) -> [u64; 4] {
        [
            self.sent_msgs.load(Ordering::Relaxed),
            self.sent_bytes.load(Ordering::Relaxed),
            self.recv_msgs.load(Ordering::Relaxed),
            self.recv_bytes.load(Ordering::Relaxed),
        ]
    }
}

/// A message-received callback: the connection and the message (in the context's
/// receive buffer, the callback's until it returns).
pub type MsgFn = Box<dyn FnMut(&Connection, &mut [u8]) + Send>;
/// A connection callback: the connection and whether the change succeeded.
pub type ConnFn = Box<dyn FnMut(&Connection, bool) + Send>;
/// A consumer callback: the connection and the far side's consumer id.
pub type ConsumerFn = Box<dyn FnMut(&Connection, u32) + Send>;

#[derive(Default)]
struct Callbacks {
    msg: Option<MsgFn>,
    connect: Option<ConnFn>,
    disconnect: Option<ConnFn>,
    consumer_new: Option<ConsumerFn>,
    consumer_gone: Option<ConsumerFn>,
}

/// A message waiting for room toward its peer: a copy, as DOCA's send queue takes the
/// message at submit (programs reuse their buffer as soon as the submit returns).
struct Payload(Box<[u8]>);

impl Payload {
    fn bytes(&self) -> &[u8] {
        &self.0
    }
}

struct Pending {
    conn: Arc<Connection>,
    msg: Payload,
    user_data: Data,
}

struct Conf {
    max_msg: u32,
    recv_q: u32,
    send_tasks: u32,
}

struct Shared {
    me: Weak<Shared>,
    server: bool,
    dev: Dev,
    rep: Option<DevRep>,
    name: String,
    conf: Mutex<Conf>,
    owner: AtomicUsize,
    ep: Mutex<Option<Endpoint>>,
    // Shared: callbacks and the Rust face hold them while the table may change; the C
    // face hands out their addresses.
    conns: Mutex<Vec<Arc<Connection>>>,
    /// Sends waiting for room, in order.
    pending: Mutex<VecDeque<Pending>>,
    /// Sends done whose completion was not reported yet.
    done: Mutex<VecDeque<(Data, Option<Error>)>>,
    /// Sends taken and not reported.
    inflight: AtomicU32,
    cbs: Mutex<Callbacks>,
    rbuf: Mutex<Vec<u8>>,
}

/// A comch server or client: its context, configuration, callbacks and sends.
pub struct Comch {
    ctx: Ctx,
    s: Arc<Shared>,
}

impl std::fmt::Debug for Comch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Comch")
            .field("server", &self.s.server)
            .field("name", &self.s.name)
            .field("phase", &self.ctx.phase())
            .finish()
    }
}

impl Comch {
    /// `doca_comch_server_create`: serves `name` to the host function `rep` stands for.
    pub fn server(dev: &Dev, rep: &DevRep, name: &str) -> Result<Comch> {
        server_supported(dev.as_devinfo())?;
        if rep.as_devinfo().parent() != dev {
            return Err(Error::invalid(
                "the representor does not belong to the server's device",
            ));
        }
        Comch::new(dev, Some(rep.clone()), name)
    }

    /// `doca_comch_client_create`: a client of server `name`.
    pub fn client(dev: &Dev, name: &str) -> Result<Comch> {
        client_supported(dev.as_devinfo())?;
        Comch::new(dev, None, name)
    }

    fn new(dev: &Dev, rep: Option<DevRep>, name: &str) -> Result<Comch> {
        check_name(name)?;
        let s = Arc::new_cyclic(|me| Shared {
            me: Weak::clone(me),
            server: rep.is_some(),
            dev: dev.clone(),
            rep,
            name: name.to_string(),
            conf: Mutex::new(Conf {
                max_msg: DEFAULT_MSG_SIZE,
                recv_q: DEFAULT_RECV_QUEUE_SIZE,
                send_tasks: 1,
            }),
            owner: AtomicUsize::new(0),
            ep: Mutex::new(None),
            conns: Mutex::new(Vec::new()),
            pending: Mutex::new(VecDeque::new()),
            done: Mutex::new(VecDeque::new()),
            inflight: AtomicU32::new(0),
            cbs: Mutex::new(Callbacks::default()),
            rbuf: Mutex::new(Vec::new()),
        });
        let ctx = Ctx::new_channel(Ops(Arc::clone(&s)));
        ctx.dev_add(dev)?;
        Ok(Comch { ctx, s })
    }

    /// Its context, to connect to a progress engine, start and stop.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// Whether this is a server.
    pub fn is_server(&self) -> bool {
        self.s.server
    }

    /// The device.
    pub fn dev(&self) -> &Dev {
        &self.s.dev
    }

    /// A server's representor.
    pub fn rep(&self) -> Option<&DevRep> {
        self.s.rep.as_ref()
    }

    fn idle(&self) -> Result<()> {
        if self.ctx.phase() == CtxPhase::Idle {
            Ok(())
        } else {
            Err(Error::with_context(
                ErrorCode::BadState,
                "the comch context is started; configure it while idle",
            ))
        }
    }

    /// A word for the face that owns this context, given to its connections.
    pub fn set_owner(&self, word: usize) {
        self.s.owner.store(word, Ordering::Relaxed);
    }

    /// `*_set_max_msg_size`: 1 to [`MAX_MSG_SIZE`], while idle.
    pub fn set_max_msg_size(&self, n: u32) -> Result<()> {
        self.idle()?;
        if n == 0 || n > MAX_MSG_SIZE {
            return Err(Error::invalid(format!(
                "the largest message is 1 to {MAX_MSG_SIZE} bytes, not {n}"
            )));
        }
        lock(&self.s.conf).max_msg = n;
        Ok(())
    }

    /// `*_get_max_msg_size`.
    pub fn max_msg_size(&self) -> u32 {
        lock(&self.s.conf).max_msg
    }

    /// `*_set_recv_queue_size`: 1 to [`MAX_RECV_QUEUE_SIZE`], while idle.
    pub fn set_recv_queue_size(&self, n: u32) -> Result<()> {
        self.idle()?;
        if n == 0 || n > MAX_RECV_QUEUE_SIZE {
            return Err(Error::invalid(format!(
                "the receive queue holds 1 to {MAX_RECV_QUEUE_SIZE} messages, not {n}"
            )));
        }
        lock(&self.s.conf).recv_q = n;
        Ok(())
    }

    /// `*_get_recv_queue_size`.
    pub fn recv_queue_size(&self) -> u32 {
        lock(&self.s.conf).recv_q
    }

    /// The number of send tasks (`*_task_send_set_conf`): 1 to [`MAX_SEND_TASKS`],
    /// while idle. Sends in flight stay within it.
    pub fn set_send_tasks(&self, n: u32) -> Result<()> {
        self.idle()?;
        if n == 0 || n > MAX_SEND_TASKS {
            return Err(Error::invalid(format!(
                "the number of send tasks is 1 to {MAX_SEND_TASKS}, not {n}"
            )));
        }
        lock(&self.s.conf).send_tasks = n;
        Ok(())
    }

    /// `*_event_msg_recv_register`: while idle.
    pub fn on_message(&self, f: impl FnMut(&Connection, &mut [u8]) + Send + 'static) -> Result<()> {
        self.idle()?;
        lock(&self.s.cbs).msg = Some(Box::new(f));
        Ok(())
    }

    /// `doca_comch_server_event_connection_status_changed_register`: a server's
    /// connection and disconnection callbacks, while idle.
    pub fn on_connection(
        &self,
        connect: impl FnMut(&Connection, bool) + Send + 'static,
        disconnect: impl FnMut(&Connection, bool) + Send + 'static,
    ) -> Result<()> {
        self.idle()?;
        if !self.s.server {
            return Err(Error::invalid("only a server reports connections"));
        }
        let mut cbs = lock(&self.s.cbs);
        cbs.connect = Some(Box::new(connect));
        cbs.disconnect = Some(Box::new(disconnect));
        Ok(())
    }

    /// `*_event_consumer_register`: callbacks for the far side's consumers coming up and
    /// going away on a connection, while idle.
    pub fn on_consumer(
        &self,
        new: impl FnMut(&Connection, u32) + Send + 'static,
        expired: impl FnMut(&Connection, u32) + Send + 'static,
    ) -> Result<()> {
        self.idle()?;
        let mut cbs = lock(&self.s.cbs);
        cbs.consumer_new = Some(Box::new(new));
        cbs.consumer_gone = Some(Box::new(expired));
        Ok(())
    }

    /// `doca_comch_client_get_connection`: a running client's connection.
    pub fn connection(&self) -> Result<Arc<Connection>> {
        if self.s.server {
            return Err(Error::invalid("a server has one connection per client"));
        }
        if self.ctx.phase() != CtxPhase::Running {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the client is not running yet; progress its engine until it is",
            ));
        }
        lock(&self.s.conns).first().cloned().ok_or_else(|| {
            Error::with_context(ErrorCode::NotConnected, "the client lost its server")
        })
    }

    /// The connection of `peer`, while it is up.
    pub fn connection_of(&self, peer: PeerId) -> Option<Arc<Connection>> {
        self.s.conn(peer)
    }

    /// Whether `conn` is a live connection of this context.
    fn check_conn(&self, conn: *const Connection) -> Result<Arc<Connection>> {
        lock(&self.s.conns)
            .iter()
            .find(|c| std::ptr::eq(Arc::as_ptr(c), conn))
            .cloned()
            .ok_or_else(|| {
                Error::with_context(
                    ErrorCode::NotConnected,
                    "the connection is not one of this context's live connections",
                )
            })
    }

    fn take(&self, len: usize) -> Result<()> {
        if self.ctx.phase() != CtxPhase::Running {
            return Err(Error::with_context(
                ErrorCode::BadState,
                "the comch context is not running; start it (and progress until it runs) first",
            ));
        }
        if len == 0 {
            return Err(Error::invalid("a message holds at least one byte"));
        }
        let max = self.max_msg_size();
        if len > max as usize {
            return Err(Error::invalid(format!(
                "a {len}-byte message is longer than the context's largest ({max} bytes)"
            )));
        }
        let limit = lock(&self.s.conf).send_tasks;
        if self.s.inflight.load(Ordering::Acquire) >= limit {
            return Err(Error::with_context(
                ErrorCode::NoMemory,
                format!("all {limit} send tasks are in flight; progress the engine"),
            ));
        }
        Ok(())
    }

    /// Sends now when there is room (and nothing waits before it), else keeps `msg` in
    /// order: `make` copies it when it must wait.
    fn send_with(
        &self,
        conn: Result<Arc<Connection>>,
        msg: &[u8],
        user_data: Data,
        make: impl FnOnce() -> Payload,
    ) -> Result<()> {
        self.take(msg.len())?;
        let conn = conn?;
        let s = &*self.s;
        let mut pending = lock(&s.pending);
        let r = if pending.is_empty() {
            match lock(&s.ep).as_mut() {
                Some(ep) => ep.send_parts(&[TAG_USER], msg, conn.peer, None),
                None => Err(Error::new(ErrorCode::NotConnected)),
            }
        } else {
            Err(Error::new(ErrorCode::Again))
        };
        s.inflight.fetch_add(1, Ordering::AcqRel);
        match r {
            Err(e) if e.code() == ErrorCode::Again => pending.push_back(Pending {
                conn,
                msg: make(),
                user_data,
            }),
            r => {
                if r.is_ok() {
                    conn.count_sent(msg.len());
                }
                lock(&s.done).push_back((user_data, r.err()));
            }
        }
        Ok(())
    }

    /// A send task: `msg` to `conn`. Accepted whenever fewer than the configured send
    /// tasks are in flight (`NoMemory` otherwise); its completion ([`JOB_SEND`], with
    /// `user_data`) comes through the engine's progress.
    pub fn send(&self, conn: &Connection, msg: &[u8], user_data: Data) -> Result<()> {
        self.send_with(self.check_conn(conn), msg, user_data, || {
            Payload(msg.into())
        })
    }

    /// [`send`](Comch::send) to the connection of `peer` ([`Connection::peer`]).
    pub fn send_to(&self, peer: PeerId, msg: &[u8], user_data: Data) -> Result<()> {
        let p = self.s.conn(peer).ok_or_else(|| {
            Error::with_context(
                ErrorCode::NotConnected,
                "the peer is not connected to this context",
            )
        });
        self.send_with(p, msg, user_data, || Payload(msg.into()))
    }

    /// [`send`](Comch::send) of a message the program gives as a pointer: its bytes are
    /// sent, or copied to wait for room, before this returns, so the program may reuse
    /// its buffer at once (as with DOCA, whose send queue takes the message at submit).
    ///
    /// # Safety
    /// `msg` points to `len` readable bytes for the call.
    pub unsafe fn send_raw(
        &self,
        conn: *const Connection,
        msg: *const u8,
        len: usize,
        user_data: Data,
    ) -> Result<()> {
        if msg.is_null() {
            return Err(Error::invalid("the message is NULL"));
        }
        // SAFETY: the caller's contract.
        let bytes = unsafe { std::slice::from_raw_parts(msg, len) };
        self.send_with(self.check_conn(conn), bytes, user_data, || {
            Payload(bytes.into())
        })
    }

    /// `doca_comch_server_disconnect`: ends one connection (its messages sent before
    /// still arrive first); the disconnect callback runs before this returns.
    pub fn disconnect(&self, conn: *const Connection) -> Result<()> {
        if !self.s.server {
            return Err(Error::invalid("only a server disconnects a connection"));
        }
        let c = self.check_conn(conn)?;
        let peer = c.peer;
        self.s.flush();
        if let Some(ep) = lock(&self.s.ep).as_mut() {
            let _ = ep.disconnect(peer);
        }
        self.s.fail_pending(
            Some(peer),
            &Error::with_context(ErrorCode::NotConnected, "the connection was ended"),
        );
        self.s.conn_event(&c, false);
        lock(&self.s.conns).retain(|x| x.peer != peer);
        Ok(())
    }

    /// The connections up now.
    pub fn connections(&self) -> Vec<Arc<Connection>> {
        lock(&self.s.conns).clone()
    }

    /// Connections up now.
    pub fn num_connections(&self) -> usize {
        lock(&self.s.conns).len()
    }

    /// `*_destroy`: only while idle.
    pub fn destroy(self) -> std::result::Result<(), (Comch, Error)> {
        if let Err(e) = self.idle() {
            return Err((self, e));
        }
        let _ = self.ctx.disconnect_pe();
        let _ = self.ctx.dev_rm(&self.s.dev);
        if let Err((ctx, e)) = self.ctx.clone().destroy() {
            drop(ctx);
            return Err((self, e));
        }
        Ok(())
    }
}

/// Hooks for the fuzz targets: what a misbehaving far side could put on the wire.
#[doc(hidden)]
pub mod fuzzing {
    use super::{Comch, Connection, Result};
    use std::os::fd::RawFd;

    /// Sends `bytes` as one message on `conn` of `c`, with no comch header of its own
    /// (the first byte is the header the far side reads), with `pass` attached.
    pub fn send_raw(c: &Comch, conn: &Connection, bytes: &[u8], pass: Option<RawFd>) -> Result<()> {
        let _ = c;
        let (tag, rest) = bytes.split_first().unwrap_or((&0, &[]));
        if rest.is_empty() {
            return conn.send_ctl(*tag, &[0], pass);
        }
        conn.send_ctl(*tag, rest, pass)
    }

    /// Writes `bytes` as one message into the data socket of the far side's consumer
    /// `id` announced on `conn`. False when there is no such consumer or no room.
    pub fn to_consumer(conn: &Connection, id: u32, bytes: &[u8]) -> bool {
        let Some(sock) = conn.remote_consumer(id) else {
            return false;
        };
        // The socket is kept open by the Arc.
        rustix::net::send(
            &*sock,
            bytes,
            rustix::net::SendFlags::DONTWAIT | rustix::net::SendFlags::NOSIGNAL,
        )
        .is_ok()
    }
}

mod ops;
use ops::Ops;
