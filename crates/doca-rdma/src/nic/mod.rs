//! The software NIC of an RDMA context: a UCX worker and the one thread that serves it
//! (the documented exception to "no hidden threads": one-sided operations need no
//! program on the target, so the target's side must progress on its own, as a NIC
//! does).
//!
//! Every operation is a UCX active message with a [`Header`]; UCX picks the transport
//! (shared memory or CMA on one machine, TCP between machines, verbs where there is an
//! RDMA NIC) and the protocol (eager or rendezvous). The target checks every access to
//! its memory against both layers of access control a NIC checks: the access flags of
//! the context that owns the connection (the queue pair's, `doca_rdma_set_permissions`),
//! then the export's listing ([`doca_core::memory::net::access`]): range, permission,
//! device, revocation. A refused access touches nothing and leaves both sides working.
//!
//! A requester's operation completes when the target answers (after the bytes are in
//! its memory, or a message is in a posted receive), so that nothing that completed is
//! lost to a disconnect right after. A send, or a write with immediate, that finds no
//! posted receive waits for one at the target, as RC's receiver-not-ready retry does.
//!
//! Users hand commands over a queue and wake the worker; completions go to the
//! context's [`Sink`] from the NIC thread. A peer that stays silent while operations
//! wait for it is probed, and its connection fails once the retry budget is spent
//! (`connections.rs`), as an RC queue pair's does.
//!
//! By role: this file holds the face (commands, the [`Nic`], the driver) and the state;
//! `engine.rs` the thread, UCX's callbacks and the commands it takes; `requester.rs`
//! operations sent and answered; `target.rs` accesses checked and served, receives
//! matched; `connections.rs` connecting, the connection manager, ends and failures.

use crate::ucx::{Signal, Worker, ucx_error};
use crate::wire::{ConnDesc, F_ACK, F_CAS, F_EV_ADD, F_EV_SET, F_FRAG, F_IMM, HDR_LEN, Header, op};
use doca_core::memory::net::{self, NetAccess};
use doca_core::{AccessFlags, Error, ErrorCode, Result};
use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::ffi::c_void;
use std::hash::{BuildHasherDefault, Hasher};
use std::ptr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use ucx_sys as u;

mod connections;
mod engine;
mod requester;
mod target;

use connections::*;
use engine::*;

/// What a completed receive got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecvOpcode {
    /// A send.
    Send,
    /// A send with immediate data.
    SendImm,
    /// A write with immediate data (no bytes land in the receive buffer).
    WriteImm,
}

/// A completed operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// Bytes received (receives) or moved.
    pub len: u64,
    /// Immediate data, when the message carried some.
    pub imm: Option<u32>,
    /// The connection.
    pub conn: u32,
    /// What a receive got.
    pub opcode: RecvOpcode,
    /// The old value of an atomic.
    pub value: u64,
}

/// Changes of a connection's state that the context reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConnEvent {
    /// The peer ended the connection.
    Disconnected,
    /// The transport failed (the peer died or became unreachable), or a connection
    /// manager connection could not be made (refused, rejected, nobody listening).
    Failed,
    /// A connection manager connection is up (both sides greeted).
    Established,
}

/// Where a NIC hands its completions (on the NIC's thread).
pub trait Sink: Send + Sync + 'static {
    /// Operation `user` ended.
    fn complete(&self, user: u64, r: Result<Done>);
    /// Connection `conn` changed state.
    fn conn_event(&self, conn: u32, ev: ConnEvent);
    /// A peer asks to connect to a port this NIC listens on: request `req`, from the
    /// peer's address (as text); the context accepts or rejects it.
    fn conn_request(&self, req: u64, from: &str) {
        let _ = (req, from);
    }
}

/// An operation or a control step for the NIC thread.
#[derive(Debug)]
pub enum Cmd {
    /// Accept messages for local connection `conn` that carry `key`.
    Register {
        /// Local connection number.
        conn: u32,
        /// Its key.
        key: u64,
    },
    /// Connect local connection `conn` to the remote one the descriptor names.
    Connect {
        /// Local connection number.
        conn: u32,
        /// The peer's descriptor.
        desc: ConnDesc,
    },
    /// Listen for connection manager requests on a port (at the device's address, see
    /// [`crate::netdev`], or at every IPv4 address); the outcome goes back on `reply`.
    Listen {
        /// The port.
        port: u16,
        /// Where the outcome goes.
        reply: std::sync::mpsc::Sender<Result<()>>,
    },
    /// The transports UCX chose for local connection `conn` (empty: not connected).
    Describe {
        /// Local connection number.
        conn: u32,
        /// Where the answer goes.
        reply: std::sync::mpsc::Sender<String>,
    },
    /// Stop listening on a port.
    StopListen {
        /// The port.
        port: u16,
    },
    /// Accept request `req` as local connection `conn` (which carries `key`).
    Accept {
        /// The request.
        req: u64,
        /// Local connection number.
        conn: u32,
        /// Its key.
        key: u64,
    },
    /// Reject request `req`.
    Reject {
        /// The request.
        req: u64,
    },
    /// Connect local connection `conn` (key `key`) to a listener at `addr`.
    ConnectAddr {
        /// Local connection number.
        conn: u32,
        /// Its key.
        key: u64,
        /// The listener's address.
        addr: std::net::SocketAddr,
    },
    /// End a connection (the peer is told; operations in flight on it fail).
    Disconnect {
        /// Local connection number.
        conn: u32,
    },
    /// Post a receive buffer for any connection.
    Recv {
        /// Completion tag.
        user: u64,
        /// The buffer.
        ptr: *mut u8,
        /// Its size.
        cap: usize,
    },
    /// Send a message (with immediate data).
    Send {
        /// Completion tag.
        user: u64,
        /// Local connection number.
        conn: u32,
        /// The bytes.
        ptr: *const u8,
        /// How many.
        len: usize,
        /// Immediate data.
        imm: Option<u32>,
    },
    /// Write local bytes to remote memory (with immediate data for a receive there).
    Write {
        /// Completion tag.
        user: u64,
        /// Local connection number.
        conn: u32,
        /// Source bytes.
        ptr: *const u8,
        /// How many.
        len: usize,
        /// The remote export's token.
        token: [u64; 2],
        /// Remote address.
        addr: u64,
        /// Immediate data.
        imm: Option<u32>,
    },
    /// Read remote memory into local bytes.
    Read {
        /// Completion tag.
        user: u64,
        /// Local connection number.
        conn: u32,
        /// Destination.
        ptr: *mut u8,
        /// How many bytes.
        len: usize,
        /// The remote export's token.
        token: [u64; 2],
        /// Remote address.
        addr: u64,
    },
    /// An operation on a sync event a peer exported to the network; the value read
    /// (or the value before an add) goes to `result` (8 bytes) when it is not null.
    Event {
        /// Completion tag.
        user: u64,
        /// Local connection number.
        conn: u32,
        /// The event's token.
        token: [u64; 2],
        /// What to do.
        op: doca_core::sync_event::net::Op,
        /// Where the value goes (or null).
        result: *mut u8,
    },
    /// An atomic on 8 remote bytes; the old value goes to `result` (8 bytes).
    Atomic {
        /// Completion tag.
        user: u64,
        /// Local connection number.
        conn: u32,
        /// The remote export's token.
        token: [u64; 2],
        /// Remote address (8-byte aligned).
        addr: u64,
        /// Compare-and-swap (else fetch-and-add).
        cas: bool,
        /// Compare value, or the addend.
        b: u64,
        /// Swap value.
        c: u64,
        /// Where the old value goes (8 bytes).
        result: *mut u8,
    },
}

// SAFETY: the raw pointers in a command name the user's task buffers, which stay valid
// and untouched by the user until the command's completion (the submit contract of
// `Nic::submit`); the NIC thread is the only one that uses them meanwhile.
unsafe impl Send for Cmd {}

struct Shared {
    cmds: Mutex<Vec<Cmd>>,
    /// Set after a command is queued in `cmds`: a drive that finds it clear takes no
    /// lock for them.
    has_cmds: AtomicBool,
    signal: Signal,
    stop: AtomicBool,
    /// The NIC's state, for whichever thread drives the worker: the NIC thread, or a
    /// program thread that polls or submits ([`Driver::drive`]). `None` once stopped.
    state: Mutex<Option<StateBox>>,
    /// Whether a program thread progressed the worker since the NIC thread last looked.
    app_drove: AtomicBool,
    /// Peers of this machine whose end the NIC thread watches for: (connection, the
    /// peer process's pidfd (owned by the connection; -1: none, its PID is looked at),
    /// its PID).
    watch: Mutex<Vec<(u32, std::os::fd::RawFd, u32)>>,
}

/// The NIC state, moved between the threads that drive the worker.
struct StateBox(Box<State>);

// SAFETY: the state (with the UCX worker, created in serialized mode, and the raw
// pointers of the commands in flight) is used only by the holder of `Shared::state`'s
// lock, one thread at a time.
unsafe impl Send for StateBox {}

impl Shared {
    /// Whether a program thread progressed the worker since the last question (the
    /// NIC thread then stands by).
    fn app_driving(&self) -> bool {
        self.app_drove.swap(false, Ordering::Relaxed)
    }
}

/// Lets UCX's callbacks on this thread reach the state while this value lives.
struct Driving(*mut State);

impl Driving {
    fn enter(sp: *mut State) -> Driving {
        Driving(STATE.with(|s| s.replace(sp)))
    }
}

impl Drop for Driving {
    fn drop(&mut self) {
        STATE.with(|s| s.set(self.0));
    }
}

/// A handle that drives a NIC's worker from the calling thread.
#[derive(Clone)]
pub struct Driver(Arc<Shared>);

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver").finish()
    }
}

impl Driver {
    /// Carries out the commands handed over so far and progresses the transport on
    /// the calling thread, unless another thread is doing so (false then). Completions
    /// and events reach the sink from here. Call it with none of the sink's locks held.
    pub fn drive(&self) -> bool {
        self.drive_marked(None)
    }

    /// Carries out the commands handed over so far on the calling thread, without
    /// progressing the transport (whoever polls next does), unless another thread holds
    /// the worker (false then). Answers owed to received messages stay owed, so that a
    /// reply among these commands carries them.
    pub fn issue(&self) -> bool {
        self.holding(|sp| {
            // SAFETY: the state is this lock holder's; UCX calls back into it only from
            // progress, which is not called here, while no other reference to it is live.
            unsafe { (*sp).drain() };
        })
    }

    /// Carries out `cmd` on the calling thread, after the commands handed over before
    /// it, without progressing the transport; the command back when another thread
    /// holds the worker (or the NIC stopped): then hand it over ([`Nic::post`]).
    ///
    /// # Safety
    ///
    /// As [`Nic::submit`].
    pub unsafe fn issue_now(&self, cmd: Cmd) -> std::result::Result<(), Cmd> {
        let mut cmd = Some(cmd);
        let ran = self.holding(|sp| {
            // SAFETY: the state is this lock holder's; UCX calls back into it only from
            // progress, which is not called here, while no other reference to it is live.
            unsafe {
                (*sp).drain();
                if let Some(c) = cmd.take() {
                    (*sp).command(c);
                }
            }
        });
        match cmd {
            Some(c) if !ran => Err(c),
            _ => Ok(()),
        }
    }

    /// Runs `f` on the state while this thread holds the worker (its callbacks reach
    /// the state through `STATE` meanwhile); false, and `f` not run, when another thread
    /// holds it or the NIC stopped.
    fn holding(&self, f: impl FnOnce(*mut State)) -> bool {
        let mut g = match self.0.state.try_lock() {
            Ok(g) => g,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        let Some(b) = g.as_mut() else {
            return false;
        };
        let sp: *mut State = &mut *b.0;
        let _d = Driving::enter(sp);
        f(sp);
        true
    }

    /// [`drive`](Driver::drive), with `mark` set while this thread holds the worker
    /// (what the sink sees then comes from this thread).
    pub fn drive_marked(&self, mark: Option<&AtomicBool>) -> bool {
        let sh = &*self.0;
        self.holding(|sp| {
            if !sh.app_drove.load(Ordering::Relaxed) {
                sh.app_drove.store(true, Ordering::Relaxed);
            }
            if let Some(m) = mark {
                m.store(true, Ordering::Release);
            }
            // SAFETY: the state is this lock holder's; UCX calls back into it (through
            // STATE) only from ucp_worker_progress below, while no other reference to
            // it is live.
            unsafe {
                (*sp).drain();
                (*sp).flush_acks();
                // One round: what it brings reaches the program now, and the program
                // polls again (each round may be a system call, on TCP).
                u::ucp_worker_progress((*sp).w);
                (*sp).release_late();
            }
            if let Some(m) = mark {
                m.store(false, Ordering::Release);
            }
        })
    }

    /// Wakes the NIC thread (for commands handed over that nobody drove).
    pub fn wake(&self) {
        self.0.signal.wake();
    }
}

/// A running software NIC.
pub struct Nic {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    address: Vec<u8>,
    ctx_id: u64,
    /// The device served (its PCI address code).
    dev: u32,
    /// The remote accesses its connections grant.
    grants: AccessFlags,
}

impl std::fmt::Debug for Nic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nic").field("ctx_id", &self.ctx_id).finish()
    }
}

/// Most bytes of one piece of a large write or read answer over shared memory: what
/// one segment of UCX's shared-memory queue carries whole (the segment size of
/// [`crate::shm_segment`] less room for UCX's header and ours, in cache lines).
pub fn piece_max() -> usize {
    crate::ucx::shm_piece()
}

/// Transfers of this process moved in pieces (writes sent, read answers served).
static IN_PIECES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many transfers this process moved in pieces through shared memory so far
/// (writes it sent, read answers it served).
pub fn transfers_in_pieces() -> u64 {
    IN_PIECES.load(Ordering::Relaxed)
}

/// The length of each piece (but the last) of a transfer of `len` bytes: as many
/// pieces as [`piece_max`] needs, of equal length (in cache lines).
fn piece_len(len: usize) -> usize {
    let most = piece_max();
    let n = len.div_ceil(most).max(1);
    (len.div_ceil(n).div_ceil(64) * 64).min(most)
}

/// Writes arriving in pieces that a target keeps track of at once (a peer that starts
/// more gets `NO_MEMORY` for the others).
const MAX_PIECES_IN: usize = 4096;

impl Nic {
    /// Starts a NIC serving device `dev` (remote accesses reach only memory exported on
    /// it; its traffic goes through the network its topology names, see
    /// [`crate::netdev`]), whose connections grant peers the remote accesses in
    /// `grants` (the context's permissions: RDMA read, write, atomic; a peer's access
    /// without its flag is refused with `NOT_PERMITTED` whatever the memory allows),
    /// handing completions to `sink`.
    pub fn start(dev: &doca_core::Dev, grants: AccessFlags, sink: Arc<dyn Sink>) -> Result<Nic> {
        let net = crate::netdev::choice(dev.as_devinfo())?;
        let listen_addr = net.listen;
        let dev = net::dev_code(dev);
        let worker = Worker::new(net.iface.as_deref())?;
        let address = worker.address.clone();
        let shared = Arc::new(Shared {
            cmds: Mutex::new(Vec::with_capacity(256)),
            has_cmds: AtomicBool::new(false),
            signal: Signal(worker.w),
            stop: AtomicBool::new(false),
            state: Mutex::new(None),
            app_drove: AtomicBool::new(false),
            watch: Mutex::new(Vec::new()),
        });
        let ctx_id = random_u64()?;
        let sh = Arc::clone(&shared);
        let (tx, rx) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("doca-rdma-nic".into())
            .spawn(move || run(worker, sh, sink, (dev, grants), ctx_id, listen_addr, tx))
            .map_err(|e| {
                Error::with_context(
                    ErrorCode::NoMemory,
                    format!("cannot start the RDMA engine thread: {e}"),
                )
            })?;
        match rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                let _ = thread.join();
                return Err(e);
            }
            Err(_) => {
                let _ = thread.join();
                return Err(Error::with_context(
                    ErrorCode::Unexpected,
                    "the RDMA engine thread ended while starting",
                ));
            }
        }
        Ok(Nic {
            shared,
            thread: Some(thread),
            address,
            ctx_id,
            dev,
            grants: grants & GRANT_ALL,
        })
    }

    /// The descriptor of local connection `conn` (registered with `key`).
    pub fn descriptor(&self, conn: u32, key: u64) -> Vec<u8> {
        ConnDesc {
            conn,
            key,
            ctx_id: self.ctx_id,
            place: crate::wire::Place::here(),
            dev: self.dev,
            grants: self.grants.bits(),
            worker: self.address.clone(),
        }
        .encode()
    }

    /// This NIC's random identity.
    pub fn ctx_id(&self) -> u64 {
        self.ctx_id
    }

    /// A handle to drive this NIC's worker from a program thread.
    pub fn driver(&self) -> Driver {
        Driver(Arc::clone(&self.shared))
    }

    /// Hands a command over without waking the NIC thread: the caller drives it
    /// ([`Driver::drive`]) or wakes the thread ([`Driver::wake`]).
    ///
    /// # Safety
    ///
    /// As [`submit`](Nic::submit).
    pub unsafe fn post(&self, cmd: Cmd) {
        self.shared
            .cmds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(cmd);
        self.shared.has_cmds.store(true, Ordering::Release);
    }

    /// Hands a command to the NIC thread.
    ///
    /// # Safety
    ///
    /// The memory a command points to stays valid, and is neither read nor written by
    /// anything else (reads only, for a send's or write's source), until the NIC hands
    /// the command's completion to the sink, or until [`Nic::stop`] returns.
    pub unsafe fn submit(&self, cmd: Cmd) {
        self.shared
            .cmds
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(cmd);
        self.shared.has_cmds.store(true, Ordering::Release);
        self.shared.signal.wake();
    }

    /// Stops the thread: operations in flight end with `ConnectionAborted`, the peers'
    /// endpoints close, and no memory a command named is touched after this returns.
    pub fn stop(&mut self) {
        if let Some(t) = self.thread.take() {
            self.shared.stop.store(true, Ordering::SeqCst);
            self.shared.signal.wake();
            let _ = t.join();
        }
    }
}

impl Drop for Nic {
    fn drop(&mut self) {
        self.stop();
    }
}

/// 64 random bits.
pub fn random_u64() -> Result<u64> {
    let mut b = [0u8; 8];
    doca_core::random_fill(&mut b, "an RDMA key")?;
    Ok(u64::from_ne_bytes(b))
}

// ---- the NIC thread ----

/// Data of a message kept for later (no receive posted yet, or its connection is not
/// connected on this side yet).
enum Kept {
    None,
    /// Bytes we copied (data UCX would not let us keep).
    Owned(Vec<u8>),
    /// Eager data UCX keeps for us until `ucp_am_data_release`.
    Eager(*mut c_void, usize),
    /// A rendezvous descriptor: the bytes are fetched with `ucp_am_recv_data_nbx`.
    Rndv(*mut c_void, usize),
}

impl Kept {
    /// The bytes, when they are here (not behind a rendezvous).
    fn here(&self) -> Option<*const u8> {
        match self {
            Kept::Eager(p, _) => Some(*p as *const u8),
            Kept::Owned(v) => Some(v.as_ptr()),
            _ => None,
        }
    }

    fn len(&self) -> usize {
        match self {
            Kept::None => 0,
            Kept::Owned(v) => v.len(),
            Kept::Eager(_, n) | Kept::Rndv(_, n) => *n,
        }
    }
}

struct Incoming {
    am: u16,
    hdr: Header,
    data: Kept,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum ConnState {
    Registered,
    Connected,
    Closed,
}

struct Conn {
    key: u64,
    state: ConnState,
    ep: u::ucp_ep_h,
    peer_conn: u32,
    peer_key: u64,
    peer_ctx: u64,
    /// Requests that came before this side connected (answers need the endpoint).
    early: VecDeque<Incoming>,
    /// A peer of this machine, reached without UCX's failure detection (shared memory
    /// has none): its process, whose end fails the connection.
    peer_proc: Option<PeerProc>,
    /// Messages heard from the peer (any kind), and that count at the watchdog's last
    /// look.
    heard: u64,
    seen: u64,
    /// The watchdog's looks in a row that found operations waiting for the peer and
    /// nothing heard from it.
    quiet: u32,
}

impl Conn {
    /// A connection that accepts messages carrying `key`, not connected yet.
    fn registered(key: u64) -> Conn {
        Conn {
            key,
            state: ConnState::Registered,
            ep: ptr::null_mut(),
            peer_conn: 0,
            peer_key: 0,
            peer_ctx: 0,
            early: VecDeque::new(),
            peer_proc: None,
            heard: 0,
            seen: 0,
            quiet: 0,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum PendKind {
    Send,
    Write,
    Read,
    Atomic,
    Event,
}

/// A requester's operation waiting for its answer.
struct Pending {
    generation: u32,
    live: bool,
    conn: u32,
    user: u64,
    kind: PendKind,
    ptr: *mut u8,
    len: usize,
    /// The local send (our request message) is done with our memory.
    sent: bool,
    /// The answer (when it came before the local send finished).
    answer: Option<Result<Done>>,
    /// A transport request of ours still uses `ptr` (read data arriving).
    busy: bool,
    /// Header bytes of the request (UCX reads them until the send completes).
    hdr: [u8; HDR_LEN],
    /// Sends of the request still in flight (its pieces, for a write in pieces).
    sends_left: u32,
    /// Bytes of a read answered in pieces that are in.
    got: usize,
    /// Headers of a write's pieces (UCX reads them until each send completes); kept
    /// with the record for reuse.
    piece_hdrs: Vec<[u8; HDR_LEN]>,
}

/// A write arriving in pieces at the target: what is in so far.
struct PiecesIn {
    /// Bytes of the pieces that came.
    got: u64,
    /// The first failure (the answer says it once every piece came).
    err: Option<ErrorCode>,
    /// Immediate data, from the piece that carries it.
    imm: Option<u32>,
}

/// A target-side action in flight: an answer being sent (its header), the memory
/// guard of a read answer or a write landing, a receive's bytes landing.
struct TargetOp {
    live: bool,
    /// The connection it serves.
    conn: u32,
    hdr: [u8; HDR_LEN],
    guard: Option<NetAccess>,
    /// For a landing write or receive: what to do once the bytes are in.
    after: After,
    /// Bytes of relayed memory (imported from another process, see
    /// [`NetAccess::local_ptr`]) on their way: read out before a read's answer is
    /// sent, or received before they are copied in (`land`).
    bounce: Option<Vec<u8>>,
    land: bool,
    /// Sends of this action still in flight (the pieces of a read answer in pieces).
    sends_left: u32,
    /// The first failure among them.
    first_err: u::ucs_status_t,
    /// Headers of a read answer's pieces (UCX reads them until each send completes);
    /// kept with the record for reuse.
    piece_hdrs: Vec<[u8; HDR_LEN]>,
}

#[derive(Clone, Copy)]
enum After {
    Nothing,
    /// A write landed: answer `req` of `conn`, then (with immediate) deliver `imm`.
    WriteLanded {
        conn: u32,
        req: u64,
        imm: Option<u32>,
        len: u64,
    },
    /// A message landed in receive `user`: complete it and answer the sender.
    RecvLanded {
        conn: u32,
        req: u64,
        user: u64,
        imm: Option<u32>,
        len: u64,
    },
}

struct PostedRecv {
    user: u64,
    ptr: *mut u8,
    cap: usize,
}

/// The hasher of the NIC's tables, keyed by numbers this side hands out itself
/// (connection numbers, request numbers): one multiplication instead of SipHash on
/// every message. A peer only looks keys up; it never chooses what is inserted, so it
/// cannot crowd a bucket.
#[derive(Default)]
struct SmallKey(u64);

impl Hasher for SmallKey {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        }
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(u64::from(v));
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0 ^ v).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

type SmallKeys = BuildHasherDefault<SmallKey>;

struct State {
    w: u::ucp_worker_h,
    shared: Arc<Shared>,
    sink: Arc<dyn Sink>,
    dev: u32,
    /// The remote accesses the context's connections grant (its permissions).
    grants: AccessFlags,
    conns: HashMap<u32, Conn, SmallKeys>,
    /// Boxed: UCX reads a record's header bytes while the vector may grow.
    #[allow(clippy::vec_box)]
    pend: Vec<Box<Pending>>,
    pend_free: Vec<u32>,
    /// Boxed, as `pend`.
    #[allow(clippy::vec_box)]
    tops: Vec<Box<TargetOp>>,
    tops_free: Vec<u32>,
    /// Bounce buffers of relayed memory, kept for reuse.
    bounces: Vec<Vec<u8>>,
    recvs: VecDeque<PostedRecv>,
    /// Sends and write-immediates waiting for a receive.
    unmatched: VecDeque<Incoming>,
    spare: Vec<Cmd>,
    closing: Vec<*mut c_void>,
    /// Transport requests in flight (released at the end, before the worker goes).
    open_reqs: Vec<*mut c_void>,
    ctx_id: u64,
    listeners: Vec<(u16, u::ucp_listener_h)>,
    /// The address listeners bind to (`None`: every IPv4 address).
    listen_addr: Option<std::net::IpAddr>,
    /// Endpoints whose peer ended the connection, closed at stop.
    lingering: Vec<u::ucp_ep_h>,
    /// Connection requests not answered yet, by number.
    requests: HashMap<u64, u::ucp_conn_request_h, SmallKeys>,
    next_req: u64,
    /// Inside UCX's message callback: data kept from UCX is released after it returns.
    in_am: bool,
    /// Inside the message callback: its message's data (released by returning
    /// `UCS_OK`, when the NIC is done with it before the callback returns).
    am_data: *mut c_void,
    /// The callback's message data was released inside it.
    am_consumed: bool,
    /// Kept data to give back once the callback returned (UCX forbids it inside).
    late_release: Vec<*mut c_void>,
    /// Answers of received messages not sent yet: (connection, request).
    late_acks: Vec<(u32, u64)>,
    /// Writes arriving in pieces, by (connection, request).
    pieces: HashMap<(u32, u64), PiecesIn, SmallKeys>,
    /// The watchdog's looks a silent peer is given (see [`peer_timeout`]).
    quiet_limit: u32,
    /// Connections with operations waiting (the watchdog's scratch).
    waiting: Vec<u32>,
}

thread_local! {
    /// The NIC state of this thread, for UCX's callbacks (which run inside
    /// `ucp_worker_progress` on this thread only).
    static STATE: Cell<*mut State> = const { Cell::new(ptr::null_mut()) };
}

// Tags of UCX request user data: the low bits say what finished.
const T_PEND_SEND: usize = 1;
const T_PEND_DATA: usize = 2;
const T_TOP: usize = 3;
const T_MASK: usize = 3;

fn tag(kind: usize, index: u32) -> *mut c_void {
    (((index as usize) << 2) | kind) as *mut c_void
}

fn untag(p: *mut c_void) -> (usize, u32) {
    let v = p as usize;
    (v & T_MASK, (v >> 2) as u32)
}

pub use crate::wire::GRANT_ALL;

impl State {
    /// Remembers a transport request in flight.
    fn track(&mut self, r: u::ucs_status_ptr_t) {
        if u::ucs_ptr_is_ptr(r) {
            self.open_reqs.push(r);
        }
    }

    /// Forgets a finished transport request.
    fn untrack(&mut self, r: *mut c_void) {
        if let Some(i) = self.open_reqs.iter().position(|&x| x == r) {
            self.open_reqs.swap_remove(i);
        }
    }

    // ---- requester side ----

    // ---- target side ----
}

impl Done {
    fn empty() -> Done {
        Done {
            len: 0,
            imm: None,
            conn: 0,
            opcode: RecvOpcode::Send,
            value: 0,
        }
    }
}
