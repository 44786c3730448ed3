//! `doca_rdma`: the RDMA context. A context on a device holds connections (made with
//! exported descriptors, or through the connection manager) and runs tasks on them:
//! send, send with immediate, receive, read, write, write with immediate, atomic
//! compare-and-swap and fetch-and-add. Its software NIC ([`crate::nic`]) moves the
//! bytes; the context turns tasks into NIC commands and the NIC's completions into
//! task completions on the progress engine.
//!
//! Buffers follow DOCA: a task reads its source's data segment and appends to its
//! destination (which grows by what arrived); a remote buffer comes from an mmap made
//! with `doca_mmap_create_from_export` of an RDMA export.
//!
//! By role: this file holds the face and the settings; `connection.rs` a connection's
//! states and ends; `submit.rs` tasks turned into NIC commands (and direct copies);
//! `channel.rs` the context as the engine polls it.

use crate::nic::{Cmd, ConnEvent, Done, Driver, Nic, RecvOpcode, Sink, random_u64};
use crate::wire::ConnDesc;
use doca_core::device::Capability;
use doca_core::exec::{ChannelOps, CtxOps, CtxPhase, PollOut};
use doca_core::lock;
use doca_core::memory::net;
use doca_core::types::action;
use doca_core::{AccessFlags, BufDesc, Ctx, Data, Dev, Error, ErrorCode, JobRecord, Result};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

mod channel;
mod connection;
mod submit;

use connection::*;

// The job types: DOCA 2.2's `enum doca_rdma_job_types` (receive first), then the
// 3.x tasks 2.2 has no job for.
/// `DOCA_RDMA_JOB_RECV`.
pub const JOB_RECV: u32 = action::RDMA_FIRST + 1;
/// `DOCA_RDMA_JOB_SEND`.
pub const JOB_SEND: u32 = action::RDMA_FIRST + 2;
/// `DOCA_RDMA_JOB_SEND_IMM`.
pub const JOB_SEND_IMM: u32 = action::RDMA_FIRST + 3;
/// `DOCA_RDMA_JOB_READ`.
pub const JOB_READ: u32 = action::RDMA_FIRST + 4;
/// `DOCA_RDMA_JOB_WRITE`.
pub const JOB_WRITE: u32 = action::RDMA_FIRST + 5;
/// `DOCA_RDMA_JOB_WRITE_IMM`.
pub const JOB_WRITE_IMM: u32 = action::RDMA_FIRST + 6;
/// `DOCA_RDMA_JOB_ATOMIC_CMP_SWP`.
pub const JOB_ATOMIC_CMP_SWP: u32 = action::RDMA_FIRST + 7;
/// `DOCA_RDMA_JOB_ATOMIC_FETCH_ADD`.
pub const JOB_ATOMIC_FETCH_ADD: u32 = action::RDMA_FIRST + 8;
/// Read a remote net sync event (3.x task).
pub const JOB_SYNC_EVENT_GET: u32 = action::RDMA_FIRST + 9;
/// Set a remote net sync event (3.x task).
pub const JOB_SYNC_EVENT_NOTIFY_SET: u32 = action::RDMA_FIRST + 10;
/// Add to a remote net sync event (3.x task).
pub const JOB_SYNC_EVENT_NOTIFY_ADD: u32 = action::RDMA_FIRST + 11;

/// Whether `job_type` is one of RDMA's.
#[inline]
pub const fn is_rdma_job(job_type: u32) -> bool {
    job_type >= JOB_RECV && job_type <= JOB_SYNC_EVENT_NOTIFY_ADD
}

/// The record layout of an RDMA job: buffer 0 is the source (a remote one for a read,
/// the remote target of an atomic), buffer 1 the destination (the local one of a read
/// or a receive, the remote one of a write, an atomic's result).
pub mod slot {
    /// Buffer: source.
    pub const SRC: usize = 0;
    /// Buffer: destination.
    pub const DST: usize = 1;
    /// Parameter: the connection (`*const Connection`).
    pub const CONN: usize = 0;
    /// Parameter: immediate data (big-endian on the wire, as given), compare value or
    /// addend; for a receive, [`RECV_OVER_DATA`] or 0.
    pub const ARG: usize = 1;
    /// A receive's [`ARG`]: the message is written at the destination's data address,
    /// over its data section (DOCA 2.2's receive job), instead of appended to it.
    pub const RECV_OVER_DATA: u64 = 1;
    /// Parameter: swap value; a remote net sync event task's event
    /// (`*const RemoteNetEvent`).
    pub const SWAP: usize = 2;
    /// Parameter: a remote net sync event task's event.
    pub const EVENT: usize = 2;
    /// Result parameter of a receive: length (low 32 bits) and opcode (high 32).
    pub const RES_LEN_OP: usize = 0;
    /// Result parameter of a receive: immediate data.
    pub const RES_IMM: usize = 1;
    /// Result parameter of a receive: the connection it came on (`*const Connection`);
    /// of a read: length.
    pub const RES_CONN: usize = 2;
}

/// Largest message or transfer (`doca_rdma_cap_get_max_message_size`): 1 GiB, as a
/// BlueField-3 answers.
pub const MAX_MESSAGE_SIZE: u32 = 1 << 30;
/// `doca_rdma_cap_get_max_send_queue_size` and `..._recv_queue_size`.
pub const MAX_QUEUE_SIZE: u32 = 32768;
/// Default maximum number of connections of a context.
pub const DEFAULT_MAX_CONNECTIONS: u16 = 1;
/// Most connections a context may have.
pub const MAX_CONNECTIONS: u16 = 4096;
/// `doca_rdma_cap_get_max_send_buf_list_len`.
pub const MAX_SEND_BUF_LIST_LEN: u32 = 1;

/// `enum doca_rdma_transport_type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransportType {
    /// Reliable connection.
    Rc = 0,
    /// Dynamically connected (export/connect flow only).
    Dc = 1,
}

impl TransportType {
    /// From the C value.
    pub fn from_raw(v: u32) -> Option<TransportType> {
        match v {
            0 => Some(TransportType::Rc),
            1 => Some(TransportType::Dc),
            _ => None,
        }
    }
}

/// The settings a context starts with.
#[derive(Debug, Clone)]
pub struct Conf {
    /// `DOCA_ACCESS_*` the context's connections grant the peer.
    pub permissions: AccessFlags,
    /// Transport type.
    pub transport: TransportType,
    /// GID index.
    pub gid_index: u32,
    /// Most connections.
    pub max_connections: u16,
    /// Send queue size (rounded up to a power of two).
    pub send_queue_size: u32,
    /// Receive queue size (rounded up to a power of two).
    pub recv_queue_size: u32,
    /// `enum doca_mtu_size`.
    pub mtu: u32,
    /// Service level.
    pub sl: u32,
    /// GRH use.
    pub grh: bool,
    /// Connection request timeout, ms.
    pub timeout_ms: u16,
    /// RNR retry count (7: retry for ever, as the sends here wait).
    pub rnr_retry: u8,
    /// Max send buffer list length.
    pub max_send_buf_list_len: u32,
    /// Receive buffer list length.
    pub recv_buf_list_len: u32,
}

impl Default for Conf {
    fn default() -> Conf {
        Conf {
            permissions: AccessFlags::LOCAL_READ_WRITE,
            transport: TransportType::Rc,
            gid_index: 0,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            send_queue_size: 64,
            recv_queue_size: 64,
            mtu: 4, // DOCA_MTU_SIZE_4K_BYTES
            sl: 0,
            grh: true,
            timeout_ms: 5000,
            rnr_retry: 7,
            max_send_buf_list_len: 1,
            recv_buf_list_len: 1,
        }
    }
}

const C_EXPORTED: u8 = 0;
const C_CONNECTED: u8 = 1;
const C_DISCONNECTED: u8 = 2;
const C_FAILED: u8 = 3;
/// A peer's connection manager request, not answered yet.
const C_REQUESTED: u8 = 4;
/// Accepted, or asked for with connect_to_addr: waiting for the peer's greeting.
const C_CONNECTING: u8 = 5;
/// Rejected.
const C_REJECTED: u8 = 6;

/// `struct doca_rdma_connection`: one connection of a context.
#[derive(Debug)]
pub struct Connection {
    id: u32,
    state: AtomicU8,
    user_data: AtomicU64,
    owner: Weak<Shared>,
    /// The connection manager request this connection answers (0: none).
    req: u64,
    /// The peer's address (connection manager connections).
    peer: Mutex<Option<std::net::SocketAddr>>,
    /// The peer's process and device, when it runs on this machine and both sides
    /// allow shared memory (`DOCA_RDMA_SHM=1`): reads and writes of memory that process
    /// exported on that device are then copied by this side (see [`Shared::direct`]),
    /// where the peer's context grants the access (its permissions, the third).
    direct: std::sync::OnceLock<(u32, u32, AccessFlags)>,
}

/// A connection event the context reports on progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// A peer asks to connect (a port this context listens on): accept or reject it.
    Requested,
    /// A connection manager connection is up.
    Established,
    /// The peer ended the connection.
    Disconnected,
    /// The connection failed (the peer died or cannot be reached), or could not be made
    /// (rejected, nobody listening).
    Failed,
}

type EventCb = Box<dyn FnMut(&Arc<Connection>, ConnectionEvent) + Send>;

/// The records in flight and the outcomes the NIC reported for them, under one lock
/// (a completion takes it once where it reports, once where the poll collects it).
struct Ops {
    recs: Vec<Option<JobRecord>>,
    free: Vec<u32>,
    done: VecDeque<(u32, Result<Done>)>,
}

pub(crate) struct Shared {
    /// The device's code in RDMA exports (its device, once started).
    dev_code: AtomicU32,
    conf: Mutex<Conf>,
    nic: Mutex<Option<Nic>>,
    /// Which NIC `nic` holds (unique in the process; 0: none), for the polling and
    /// submitting threads' cache of its driver ([`Shared::with_driver`]).
    nic_gen: AtomicU64,
    conns: Mutex<Vec<Arc<Connection>>>,
    ops: Mutex<Ops>,
    events: Mutex<VecDeque<(u32, ConnEvent)>>,
    /// Connection manager requests not reported yet: (connection number).
    requests: Mutex<VecDeque<u32>>,
    inflight: AtomicU32,
    /// The NIC is being stopped by the context's own thread, which may hold the
    /// context's locks while it waits for the NIC: completions are only queued then
    /// (the stopping thread reports them), nobody is woken.
    stopping: std::sync::atomic::AtomicBool,
    /// The polling thread drives the NIC: what completes now is collected by the same
    /// poll, so nobody needs waking.
    quiet: std::sync::atomic::AtomicBool,
    /// Set after something is queued in `done`, `events` or `requests`: a poll that
    /// finds it clear takes none of their locks.
    queued: std::sync::atomic::AtomicBool,
    /// Outgoing operations handed to the NIC and not yet ended (direct copies wait for
    /// none, so that they pass none).
    nic_ops: AtomicU32,
    /// Reads and writes copied directly (see `Shared::direct`).
    direct_copies: AtomicU64,
    ctx: std::sync::OnceLock<doca_core::exec::WeakCtx>,
    on_event: Mutex<Option<EventCb>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("dev_code", &self.dev_code.load(Ordering::Relaxed))
            .finish()
    }
}

struct SinkOf(Weak<Shared>);

/// Numbers the NICs started in this process (see `Shared::nic_gen`).
static NIC_GEN: AtomicU64 = AtomicU64::new(0);

/// Drivers cached per thread: the latest NICs this thread polled or submitted to.
const DRIVER_CACHE: usize = 8;

thread_local! {
    static DRIVERS: std::cell::RefCell<Vec<(u64, Driver)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The bit of a NIC operation's user value that marks an outgoing operation (not a
/// receive): direct copies wait until none is with the NIC.
const OUTGOING: u64 = 1 << 32;

impl Shared {
    /// Wakes the progress engine, unless the context is stopping its NIC.
    fn ring(&self) {
        if self.stopping.load(Ordering::Acquire) || self.quiet.load(Ordering::Acquire) {
            return;
        }
        if let Some(c) = self.ctx.get().and_then(|w| w.upgrade()) {
            c.ring();
        }
    }

    /// Runs `f` with the driver of the running NIC (`None`: none runs). The driver
    /// comes from a small per-thread cache checked against `nic_gen`, so that the
    /// threads that poll and submit take no lock and touch no shared count for it.
    fn with_driver<R>(&self, f: impl FnOnce(Option<&Driver>) -> R) -> R {
        let g = self.nic_gen.load(Ordering::Acquire);
        if g == 0 {
            return f(None);
        }
        let mut f = Some(f);
        let cached = DRIVERS.with(|c| {
            let Ok(mut c) = c.try_borrow_mut() else {
                return None;
            };
            let at = match c.iter().position(|(x, _)| *x == g) {
                Some(at) => at,
                None => {
                    let d = lock(&self.nic).as_ref().map(Nic::driver);
                    // Checked again under the lock: the NIC `g` names is the one held.
                    let d = d.filter(|_| self.nic_gen.load(Ordering::Acquire) == g)?;
                    if c.len() == DRIVER_CACHE {
                        c.remove(0);
                    }
                    c.push((g, d));
                    c.len() - 1
                }
            };
            let f = f.take()?;
            Some(f(Some(&c[at].1)))
        });
        match (cached, f) {
            (Some(r), _) => r,
            // Reentered, or the NIC went meanwhile: the slow way.
            (None, Some(f)) => {
                let d = lock(&self.nic).as_ref().map(Nic::driver);
                f(d.as_ref())
            }
            (None, None) => unreachable!("the closure runs at most once"),
        }
    }

    /// Ends operation `user` that never reached the NIC because it stopped meanwhile,
    /// as the stop ends those in flight.
    fn fail_unposted(&self, user: u64) {
        if user & OUTGOING != 0 {
            self.nic_ops.fetch_sub(1, Ordering::AcqRel);
        }
        let e = Error::with_context(
            ErrorCode::ConnectionAborted,
            "the RDMA context stopped before the operation ended",
        );
        lock(&self.ops).done.push_back((user as u32, Err(e)));
        self.queued.store(true, Ordering::Release);
        self.ring();
    }

    /// Stops the NIC (what is in flight ends with an error, queued for the next poll).
    fn stop_nic(&self) {
        let nic = {
            let mut slot = lock(&self.nic);
            self.nic_gen.store(0, Ordering::Release);
            slot.take()
        };
        if nic.is_some() {
            self.stopping.store(true, Ordering::Release);
            drop(nic);
            self.stopping.store(false, Ordering::Release);
        }
    }
}

struct RdmaOps(Arc<Shared>);

impl Shared {
    fn conn_by_id(&self, id: u32) -> Option<Arc<Connection>> {
        lock(&self.conns).iter().find(|c| c.id == id).cloned()
    }

    /// The address of connection `id` (`struct doca_rdma_connection *`; 0: none).
    fn conn_ptr(&self, id: u32) -> u64 {
        lock(&self.conns)
            .iter()
            .find(|c| c.id == id)
            .map_or(0, |c| Arc::as_ptr(c) as usize as u64)
    }

    fn own_conn(&self, c: *const Connection) -> Result<u32> {
        let conns = lock(&self.conns);
        let found = conns.iter().find(|x| std::ptr::eq(Arc::as_ptr(x), c));
        match found {
            None => Err(Error::invalid(
                "the connection is not one of this RDMA context (or the context restarted since)",
            )),
            Some(x) if x.state.load(Ordering::Acquire) != C_CONNECTED => Err(Error::with_context(
                ErrorCode::NotConnected,
                "the RDMA connection is not connected (connect it first, or it ended)",
            )),
            Some(x) => Ok(x.id),
        }
    }
}

/// A DOCA RDMA context (`struct doca_rdma`).
#[derive(Debug)]
pub struct Rdma {
    ctx: Ctx,
    s: Arc<Shared>,
}

impl Rdma {
    /// `doca_rdma_create`: a context on `dev`, which must have the RDMA capability.
    pub fn new(dev: &Dev) -> Result<Rdma> {
        let info = dev.as_devinfo();
        if !info.has_capability(Capability::Rdma) {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                format!("device {} does not support RDMA", info.pci_addr()),
            ));
        }
        let r = Rdma::new_unbound();
        r.ctx.dev_add(dev)?;
        Ok(r)
    }

    /// DOCA 2.2's `doca_rdma_create`: a context with no device yet (the program adds
    /// one with `doca_ctx_dev_add` before it sets permissions or the GID index).
    pub fn new_unbound() -> Rdma {
        let s = Arc::new(Shared {
            dev_code: AtomicU32::new(0),
            conf: Mutex::new(Conf::default()),
            nic: Mutex::new(None),
            nic_gen: AtomicU64::new(0),
            conns: Mutex::new(Vec::new()),
            ops: Mutex::new(Ops {
                recs: Vec::new(),
                free: Vec::new(),
                done: VecDeque::new(),
            }),
            events: Mutex::new(VecDeque::new()),
            requests: Mutex::new(VecDeque::new()),
            inflight: AtomicU32::new(0),
            stopping: std::sync::atomic::AtomicBool::new(false),
            quiet: std::sync::atomic::AtomicBool::new(false),
            queued: std::sync::atomic::AtomicBool::new(false),
            nic_ops: AtomicU32::new(0),
            direct_copies: AtomicU64::new(0),
            ctx: std::sync::OnceLock::new(),
            on_event: Mutex::new(None),
        });
        let ctx = Ctx::new_channel(RdmaOps(Arc::clone(&s)));
        let _ = s.ctx.set(ctx.downgrade());
        Rdma { ctx, s }
    }

    /// `doca_rdma_as_ctx`.
    pub fn ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// The device, once added.
    pub fn dev(&self) -> Option<Dev> {
        self.ctx.dev()
    }

    /// The device, which the settings that depend on it need.
    fn dev_for(&self, what: &str) -> Result<Dev> {
        self.ctx.dev().ok_or_else(|| {
            Error::bad_state(format!(
                "the RDMA context has no device: add one (doca_ctx_dev_add) before setting {what}"
            ))
        })
    }

    fn configurable(&self) -> Result<MutexGuard<'_, Conf>> {
        if self.ctx.phase() != CtxPhase::Idle {
            return Err(Error::bad_state(
                "the RDMA context is started: set its properties before doca_ctx_start",
            ));
        }
        Ok(lock(&self.s.conf))
    }

    /// The settings.
    pub fn conf(&self) -> Conf {
        lock(&self.s.conf).clone()
    }

    /// `doca_rdma_set_permissions`: RDMA access flags only.
    pub fn set_permissions(&self, p: u32) -> Result<()> {
        let allowed = AccessFlags::LOCAL_READ_WRITE
            | AccessFlags::RDMA_READ
            | AccessFlags::RDMA_WRITE
            | AccessFlags::RDMA_ATOMIC;
        self.dev_for("permissions")?;
        let f = AccessFlags::from_bits(p)
            .filter(|f| allowed.contains(*f))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "permissions {p:#x} hold flags other than DOCA_ACCESS_LOCAL_READ_WRITE and the RDMA ones"
                ))
            })?;
        self.configurable()?.permissions = f;
        Ok(())
    }

    /// `doca_rdma_set_transport_type`.
    pub fn set_transport_type(&self, t: u32) -> Result<()> {
        let t = TransportType::from_raw(t)
            .ok_or_else(|| Error::invalid(format!("transport type {t} is not RC (0) or DC (1)")))?;
        self.configurable()?.transport = t;
        Ok(())
    }

    /// `doca_rdma_set_gid_index`.
    pub fn set_gid_index(&self, i: u32) -> Result<()> {
        let n = crate::gid::table(&self.dev_for("the GID index")?).len() as u32;
        if i >= n.max(1) {
            return Err(Error::invalid(format!(
                "GID index {i}: the device's GID table has {n} entries"
            )));
        }
        self.configurable()?.gid_index = i;
        Ok(())
    }

    /// `doca_rdma_set_max_num_connections`.
    pub fn set_max_num_connections(&self, n: u16) -> Result<()> {
        if n == 0 {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "a context has at least one connection",
            ));
        }
        if n > MAX_CONNECTIONS {
            return Err(Error::invalid(format!(
                "{n} connections; at most {MAX_CONNECTIONS}"
            )));
        }
        self.configurable()?.max_connections = n;
        Ok(())
    }

    /// `doca_rdma_set_send_queue_size` / `..._recv_queue_size`.
    pub fn set_queue_size(&self, send: bool, n: u32) -> Result<()> {
        if n == 0 || n > MAX_QUEUE_SIZE {
            return Err(Error::invalid(format!(
                "queue size {n}: 1 to {MAX_QUEUE_SIZE}"
            )));
        }
        let mut c = self.configurable()?;
        let v = n.next_power_of_two();
        if send {
            c.send_queue_size = v;
        } else {
            c.recv_queue_size = v;
        }
        Ok(())
    }

    /// Changes other settings while idle.
    pub fn update_conf(&self, f: impl FnOnce(&mut Conf) -> Result<()>) -> Result<()> {
        let mut c = self.configurable()?;
        f(&mut c)
    }

    /// Reports connection events (disconnections, failures) on progress.
    pub fn on_connection_event(
        &self,
        f: impl FnMut(&Arc<Connection>, ConnectionEvent) + Send + 'static,
    ) {
        *lock(&self.s.on_event) = Some(Box::new(f));
    }

    /// `doca_rdma_export`: a new connection of this (started) context and its
    /// descriptor, for the peer's `doca_rdma_connect`.
    pub fn export(&self) -> Result<(Vec<u8>, Arc<Connection>)> {
        if !matches!(self.ctx.phase(), CtxPhase::Running | CtxPhase::Starting) {
            return Err(Error::bad_state(
                "the RDMA context is not started: export after doca_ctx_start",
            ));
        }
        let max = lock(&self.s.conf).max_connections as usize;
        let nic = lock(&self.s.nic);
        let nic = nic
            .as_ref()
            .ok_or_else(|| Error::bad_state("the RDMA context is stopping"))?;
        let mut conns = lock(&self.s.conns);
        if conns.len() >= max {
            return Err(full(max));
        }
        let id = conns.len() as u32 + 1;
        let key = random_u64()?;
        let c = Connection::new(&self.s, id, C_EXPORTED, Data(0), 0, None);
        // SAFETY: a control command names no memory.
        unsafe { nic.submit(Cmd::Register { conn: id, key }) };
        conns.push(Arc::clone(&c));
        Ok((nic.descriptor(id, key), c))
    }

    /// `doca_rdma_connect`: connects `conn` (from [`export`](Rdma::export)) to the
    /// peer's connection that `desc` describes.
    pub fn connect(&self, desc: &[u8], conn: &Connection) -> Result<()> {
        if !matches!(self.ctx.phase(), CtxPhase::Running | CtxPhase::Starting) {
            return Err(Error::bad_state(
                "the RDMA context is not started: connect after doca_ctx_start",
            ));
        }
        if !conn
            .owner
            .upgrade()
            .is_some_and(|o| Arc::ptr_eq(&o, &self.s))
        {
            return Err(Error::invalid(
                "the connection is not one of this RDMA context",
            ));
        }
        let d = ConnDesc::decode(desc).map_err(|e| {
            Error::with_context(
                ErrorCode::ConnectionAborted,
                format!(
                    "the peer's connection details are corrupted: {}",
                    e.context_str().unwrap_or("")
                ),
            )
        })?;
        if conn
            .state
            .compare_exchange(C_EXPORTED, C_CONNECTED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(Error::bad_state(
                "the connection is already connected (or ended): export a new one",
            ));
        }
        if crate::wire::Place::here().shares_machine(&d.place) {
            let grants = AccessFlags::from_bits_truncate(d.grants);
            let _ = conn.direct.set((d.place.pid, d.dev, grants));
        }
        let nic = lock(&self.s.nic);
        let Some(nic) = nic.as_ref() else {
            conn.state.store(C_EXPORTED, Ordering::Release);
            return Err(Error::bad_state("the RDMA context is stopping"));
        };
        // SAFETY: a control command names no memory.
        unsafe {
            nic.submit(Cmd::Connect {
                conn: conn.id,
                desc: d,
            })
        };
        Ok(())
    }

    /// `doca_rdma_connection_disconnect`.
    pub fn disconnect(&self, conn: &Connection) -> Result<()> {
        if !conn
            .owner
            .upgrade()
            .is_some_and(|o| Arc::ptr_eq(&o, &self.s))
        {
            return Err(Error::invalid(
                "the connection is not one of this RDMA context",
            ));
        }
        conn.disconnect()
    }

    /// `doca_rdma_start_listen_to_port`: peers may ask to connect on `port` (every
    /// address of this machine); requests are reported as
    /// [`ConnectionEvent::Requested`] on progress.
    pub fn start_listen_to_port(&self, port: u16) -> Result<()> {
        if self.ctx.phase() != CtxPhase::Running {
            return Err(Error::bad_state(
                "the RDMA context is not running: listen once it runs",
            ));
        }
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let nic = lock(&self.s.nic);
            let nic = nic
                .as_ref()
                .ok_or_else(|| Error::bad_state("the RDMA context is stopping"))?;
            // SAFETY: a control command names no memory.
            unsafe { nic.submit(Cmd::Listen { port, reply: tx }) };
        }
        rx.recv().unwrap_or_else(|_| {
            Err(Error::with_context(
                ErrorCode::ConnectionAborted,
                "the RDMA engine stopped before listening",
            ))
        })
    }

    /// `doca_rdma_stop_listen_to_port`: no new requests on `port` (connections stay).
    pub fn stop_listen_to_port(&self, port: u16) -> Result<()> {
        let nic = lock(&self.s.nic);
        let nic = nic
            .as_ref()
            .ok_or_else(|| Error::bad_state("the RDMA context is not running"))?;
        // SAFETY: a control command names no memory.
        unsafe { nic.submit(Cmd::StopListen { port }) };
        Ok(())
    }

    /// `doca_rdma_connect_to_addr`: asks the peer listening at `addr` for a connection;
    /// [`ConnectionEvent::Established`] or [`ConnectionEvent::Failed`] follows on
    /// progress.
    pub fn connect_to_addr(
        &self,
        addr: std::net::SocketAddr,
        user_data: Data,
    ) -> Result<Arc<Connection>> {
        if self.ctx.phase() != CtxPhase::Running {
            return Err(Error::bad_state(
                "the RDMA context is not running: connect once it runs",
            ));
        }
        let max = lock(&self.s.conf).max_connections as usize;
        let nic = lock(&self.s.nic);
        let nic = nic
            .as_ref()
            .ok_or_else(|| Error::bad_state("the RDMA context is stopping"))?;
        let mut conns = lock(&self.s.conns);
        let live = live(&conns);
        if live >= max {
            return Err(full(max));
        }
        let id = conns.len() as u32 + 1;
        let key = random_u64()?;
        let c = Connection::new(&self.s, id, C_CONNECTING, user_data, 0, Some(addr));
        conns.push(Arc::clone(&c));
        // SAFETY: a control command names no memory.
        unsafe {
            nic.submit(Cmd::ConnectAddr {
                conn: id,
                key,
                addr,
            })
        };
        Ok(c)
    }

    /// The transports UCX chose for `conn` (`transport/device` names joined with `,`).
    pub fn transports(&self, conn: &Connection) -> Result<String> {
        let (tx, rx) = std::sync::mpsc::channel();
        {
            let nic = lock(&self.s.nic);
            let nic = nic
                .as_ref()
                .ok_or_else(|| Error::bad_state("the RDMA context is not running"))?;
            // SAFETY: a control command names no memory.
            unsafe {
                nic.submit(Cmd::Describe {
                    conn: conn.id,
                    reply: tx,
                })
            };
        }
        let t = rx
            .recv()
            .map_err(|_| Error::bad_state("the RDMA engine stopped"))?;
        if t.is_empty() {
            return Err(Error::with_context(
                ErrorCode::NotConnected,
                "the connection has no transport yet (not connected)",
            ));
        }
        Ok(t)
    }

    /// How many reads and writes this context copied itself: between two processes of
    /// one machine that both allow shared memory (`DOCA_RDMA_SHM=1`), a read or write of
    /// memory the peer exported, with no other operation of the context at the NIC, is
    /// copied by the submitting thread (after the checks the target makes).
    pub fn direct_copies(&self) -> u64 {
        self.s.direct_copies.load(Ordering::Relaxed)
    }

    /// The connections exported so far (since the last start).
    pub fn connections(&self) -> Vec<Arc<Connection>> {
        lock(&self.s.conns).clone()
    }

    /// Submits the job `rec` (its type one of the `JOB_*` here, its buffers and
    /// parameters as [`slot`] says); it completes on the progress engine the context
    /// is connected to, as a [`PeEvent::Task`](doca_core::exec::PeEvent) with the same
    /// record (results in its parameters). A refusal gives the record back.
    ///
    /// # Safety
    ///
    /// The buffers set in the record are live descriptors, and their bytes are left
    /// alone by everything else, until the job completes; the connection parameter, if
    /// any, points to a [`Connection`] of this context.
    pub unsafe fn submit(&self, rec: JobRecord) -> std::result::Result<(), (Error, JobRecord)> {
        // SAFETY: the caller's contract.
        unsafe { self.s.submit(&self.ctx, rec) }
    }
}

impl Rdma {
    /// `doca_rdma_destroy`: refused (`BadState`) unless the context is idle.
    pub fn destroy(self) -> std::result::Result<(), (Rdma, Error)> {
        if self.ctx.phase() != CtxPhase::Idle {
            let e = Error::bad_state("stop the RDMA context before destroying it");
            return Err((self, e));
        }
        Ok(())
    }
}

impl Drop for Rdma {
    fn drop(&mut self) {
        self.s.stop_nic();
    }
}
