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
//! context's [`Sink`] from the NIC thread.

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

/// How long the NIC thread keeps polling after its last piece of work before it sleeps
/// in the kernel (latency of a reply against CPU burnt while idle).
const SPIN: Duration = Duration::from_micros(50);
/// While a program thread polls (it progressed the worker since the NIC thread last
/// looked), the NIC thread stands by this long before looking again: it would only
/// compete for the CPUs. It takes over at most this long after the program stops.
const STANDBY: Duration = Duration::from_micros(500);
/// How often the NIC thread looks at watched peer processes while busy.
const WATCH_EVERY: Duration = Duration::from_millis(20);

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
    let mut got = 0;
    while got < 8 {
        // SAFETY: the pointer and length stay inside `b`.
        let n = unsafe { libc::getrandom(b.as_mut_ptr().add(got) as *mut c_void, 8 - got, 0) };
        if n < 0 {
            if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(Error::with_context(
                ErrorCode::Unknown,
                "no random bits for an RDMA key",
            ));
        }
        got += n as usize;
    }
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

/// `addr` as a C socket address, with its length.
fn sockaddr_of(addr: std::net::SocketAddr) -> (libc::sockaddr_storage, usize) {
    let mut storage: libc::sockaddr_storage =
        // SAFETY: all-zero is a valid sockaddr_storage.
        unsafe { std::mem::zeroed() };
    let len = match addr {
        std::net::SocketAddr::V4(a) => {
            let sa = libc::sockaddr_in {
                sin_family: libc::AF_INET as libc::sa_family_t,
                sin_port: a.port().to_be(),
                sin_addr: libc::in_addr {
                    s_addr: u32::from_ne_bytes(a.ip().octets()),
                },
                sin_zero: [0; 8],
            };
            // SAFETY: a sockaddr_in fits in a sockaddr_storage.
            unsafe {
                ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in, sa);
            }
            std::mem::size_of::<libc::sockaddr_in>()
        }
        std::net::SocketAddr::V6(a) => {
            let sa = libc::sockaddr_in6 {
                sin6_family: libc::AF_INET6 as libc::sa_family_t,
                sin6_port: a.port().to_be(),
                sin6_flowinfo: 0,
                sin6_addr: libc::in6_addr {
                    s6_addr: a.ip().octets(),
                },
                sin6_scope_id: a.scope_id(),
            };
            // SAFETY: a sockaddr_in6 fits in a sockaddr_storage.
            unsafe {
                ptr::write(&mut storage as *mut _ as *mut libc::sockaddr_in6, sa);
            }
            std::mem::size_of::<libc::sockaddr_in6>()
        }
    };
    (storage, len)
}

fn run(
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
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            break;
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
fn wait_peers(shared: &Shared, efd: Option<std::ffi::c_int>, timeout: Duration) -> Vec<u32> {
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
fn reap(shared: &Shared, conns: &[u32]) {
    let mut g = shared.state.lock().unwrap_or_else(|e| e.into_inner());
    let Some(b) = g.as_mut() else { return };
    let sp: *mut State = &mut *b.0;
    let _d = Driving::enter(sp);
    // SAFETY: the state is this lock holder's; closing endpoints may call back into it
    // through STATE only.
    unsafe { (*sp).reap_peers(conns) };
}

fn st_ref<'a>(sp: *mut State) -> &'a State {
    // SAFETY: the state lives for the thread's loop; shared access only to read flags.
    unsafe { &*sp }
}

fn with_state<R>(f: impl FnOnce(&mut State) -> R) -> Option<R> {
    let sp = STATE.with(|s| s.get());
    if sp.is_null() {
        return None;
    }
    // SAFETY: UCX calls back only from ucp_worker_progress on the NIC thread, during
    // which the loop holds no reference to the state.
    Some(f(unsafe { &mut *sp }))
}

unsafe extern "C" fn am_cb(
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

unsafe extern "C" fn send_cb(req: *mut c_void, status: u::ucs_status_t, user: *mut c_void) {
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

unsafe extern "C" fn recv_cb(
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

unsafe extern "C" fn conn_req_cb(req: u::ucp_conn_request_h, _arg: *mut c_void) {
    with_state(|st| st.conn_requested(req));
}

unsafe extern "C" fn ep_err_cb(arg: *mut c_void, _ep: u::ucp_ep_h, status: u::ucs_status_t) {
    let conn = arg as usize as u32;
    with_state(|st| st.conn_failed(conn, status));
}

unsafe extern "C" fn close_cb(req: *mut c_void, _status: u::ucs_status_t, _user: *mut c_void) {
    let ours = with_state(|st| st.closing.retain(|&r| r != req));
    if ours.is_some() {
        // SAFETY: as in send_cb.
        unsafe { u::ucp_request_free(req) };
    }
}

/// The process of a peer on this machine reached through shared memory
/// (`DOCA_RDMA_SHM=1` on both sides), watched for its end: through a pidfd where the
/// system gives one, else by its PID.
struct PeerProc {
    pid: u32,
    fd: Option<std::os::fd::OwnedFd>,
}

impl PeerProc {
    fn open(pid: u32) -> PeerProc {
        // SAFETY: pidfd_open takes a PID and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::pid_t, 0) };
        let fd = (fd >= 0).then(|| {
            // SAFETY: a descriptor just opened, owned from here on.
            unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd as i32) }
        });
        PeerProc { pid, fd }
    }

    fn raw_fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.fd.as_ref().map_or(-1, |f| f.as_raw_fd())
    }

    /// Whether the process ended.
    fn ended(&self) -> bool {
        match &self.fd {
            Some(f) => {
                use std::os::fd::AsRawFd;
                readable(f.as_raw_fd(), 0)
            }
            None => pid_ended(self.pid),
        }
    }
}

/// Whether the process `pid` ended (gone, or a zombie nobody reaped yet).
fn pid_ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // "pid (comm) S ...": the state follows the last ')'.
        Ok(t) => t
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|st| st == "Z" || st == "X"),
        Err(_) => true,
    }
}

/// Whether `fd` is readable within `timeout_ms` (a pidfd: its process ended).
fn readable(fd: std::os::fd::RawFd, timeout_ms: i32) -> bool {
    let mut p = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    unsafe { libc::poll(&mut p, 1, timeout_ms) == 1 && p.revents & libc::POLLIN != 0 }
}

/// An access to exported memory, checked; `None` for one of no bytes that names no
/// export (a task without buffers), which touches nothing.
fn checked_access(
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
fn granted(grants: AccessFlags, need: AccessFlags) -> std::result::Result<(), ErrorCode> {
    if grants.contains(need) {
        Ok(())
    } else {
        Err(ErrorCode::NotPermitted)
    }
}

/// Every remote access a NIC's connections can grant: RDMA read, write and atomic.
pub const GRANT_ALL: AccessFlags = AccessFlags::RDMA_READ
    .union(AccessFlags::RDMA_WRITE)
    .union(AccessFlags::RDMA_ATOMIC);

/// Bounce buffers kept for reuse at most.
const MAX_BOUNCES: usize = 64;

/// The code a remote side gets for a failed copy of relayed memory: the original
/// exporter revoked it (`NotFound`, as for any revoked export), or the copy failed.
fn relay_error(e: &Error) -> ErrorCode {
    match e.code() {
        ErrorCode::ConnectionAborted => ErrorCode::NotFound,
        ErrorCode::InvalidValue | ErrorCode::NotPermitted => e.code(),
        _ => ErrorCode::IoFailed,
    }
}

/// A compare-and-swap (`cas`: compare `b`, swap in `c`) or fetch-and-add (`b`) on 8
/// bytes of relayed memory; the old value.
fn relayed_atomic(g: &NetAccess, cas: bool, b: u64, c: u64) -> doca_core::Result<u64> {
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

/// The peer address of a connection request, as text ("" when UCX does not say).
fn request_peer(r: u::ucp_conn_request_h) -> String {
    // SAFETY: zeroed attributes with the named field; the request is live in the
    // callback that calls this.
    unsafe {
        let mut a: u::ucp_conn_request_attr_t = std::mem::zeroed();
        a.field_mask = u::UCP_CONN_REQUEST_ATTR_FIELD_CLIENT_ADDR as u64;
        if u::ucp_conn_request_query(r, &mut a) != u::UCS_OK {
            return String::new();
        }
        let sa = &a.client_address as *const _ as *const libc::sockaddr;
        match i32::from((*sa).sa_family) {
            libc::AF_INET => {
                let v = &*(sa as *const libc::sockaddr_in);
                std::net::Ipv4Addr::from(u32::from_be(v.sin_addr.s_addr)).to_string()
            }
            libc::AF_INET6 => {
                let v = &*(sa as *const libc::sockaddr_in6);
                std::net::Ipv6Addr::from(v.sin6_addr.s6_addr).to_string()
            }
            _ => String::new(),
        }
    }
}

fn refused(code: ErrorCode) -> Error {
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

fn code_of(status: u64) -> ErrorCode {
    ErrorCode::from_raw(status as i64 as i32).unwrap_or(ErrorCode::Unknown)
}

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

    /// Runs the queued commands; how many.
    fn drain(&mut self) -> usize {
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

    fn command(&mut self, c: Cmd) {
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

    fn connect(&mut self, conn: u32, desc: ConnDesc) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.state != ConnState::Registered {
            return;
        }
        // A peer of this machine is watched through its process, so that UCX may use
        // shared memory (whose transports detect no failures); others through UCX. Both
        // sides decide alike (their endpoints must agree).
        let peer_proc = crate::wire::Place::here()
            .shares_machine(&desc.place)
            .then(|| PeerProc::open(desc.place.pid));
        // SAFETY: zeroed endpoint params with the named fields set; the address bytes
        // live across the call (UCX copies what it needs).
        let (s, ep) = unsafe {
            let mut p: u::ucp_ep_params_t = std::mem::zeroed();
            p.field_mask = (u::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
            p.address = desc.worker.as_ptr() as *const u::ucp_address_t;
            p.err_mode = if peer_proc.is_some() {
                u::UCP_ERR_HANDLING_MODE_NONE
            } else {
                u::UCP_ERR_HANDLING_MODE_PEER
            };
            p.err_handler.cb = Some(ep_err_cb);
            p.err_handler.arg = conn as usize as *mut c_void;
            let mut ep = ptr::null_mut();
            (u::ucp_ep_create(self.w, &p, &mut ep), ep)
        };
        if s == u::UCS_OK
            && let Some(p) = &peer_proc
        {
            self.shared
                .watch
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((conn, p.raw_fd(), p.pid));
        }
        c.peer_proc = peer_proc;
        if s != u::UCS_OK {
            c.state = ConnState::Closed;
            self.sink.conn_event(conn, ConnEvent::Failed);
            return;
        }
        c.ep = ep;
        c.state = ConnState::Connected;
        c.peer_conn = desc.conn;
        c.peer_key = desc.key;
        c.peer_ctx = desc.ctx_id;
        let early = std::mem::take(&mut c.early);
        for m in early {
            let _ = self.dispatch(m);
        }
    }

    fn listen(&mut self, port: u16) -> Result<()> {
        if self.listeners.iter().any(|&(p, _)| p == port) {
            return Ok(());
        }
        let ip = self
            .listen_addr
            .unwrap_or(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED));
        let (sa, len) = sockaddr_of(std::net::SocketAddr::new(ip, port));
        // SAFETY: zeroed listener params with the named fields; the address lives
        // across the call (UCX copies it).
        let (s, l) = unsafe {
            let mut p: u::ucp_listener_params_t = std::mem::zeroed();
            p.field_mask = (u::UCP_LISTENER_PARAM_FIELD_SOCK_ADDR
                | u::UCP_LISTENER_PARAM_FIELD_CONN_HANDLER) as u64;
            p.sockaddr.addr = &sa as *const _ as *const u::sockaddr;
            p.sockaddr.addrlen = len as u::socklen_t;
            p.conn_handler.cb = Some(conn_req_cb);
            p.conn_handler.arg = ptr::null_mut();
            let mut l = ptr::null_mut();
            (u::ucp_listener_create(self.w, &p, &mut l), l)
        };
        if s != u::UCS_OK {
            return Err(ucx_error(
                &format!(
                    "cannot listen on {} (in use, or no address to listen on)",
                    std::net::SocketAddr::new(ip, port)
                ),
                s,
            ));
        }
        self.listeners.push((port, l));
        Ok(())
    }

    fn conn_requested(&mut self, r: u::ucp_conn_request_h) {
        let from = request_peer(r);
        let id = self.next_req;
        self.next_req += 1;
        self.requests.insert(id, r);
        self.sink.conn_request(id, &from);
    }

    fn reject(&mut self, r: u::ucp_conn_request_h) {
        if let Some(&(_, l)) = self.listeners.first() {
            // SAFETY: a request of one of this worker's listeners, answered once.
            unsafe { u::ucp_listener_reject(l, r) };
        }
    }

    /// Creates the endpoint of a connection manager connection and greets the peer.
    fn cm_endpoint(&mut self, conn: u32, key: u64, p: &u::ucp_ep_params_t) {
        self.conns.insert(conn, Conn::registered(key));
        let mut ep = ptr::null_mut();
        // SAFETY: the parameters are valid for the call.
        let s = unsafe { u::ucp_ep_create(self.w, p, &mut ep) };
        if s != u::UCS_OK {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.state = ConnState::Closed;
            }
            self.sink.conn_event(conn, ConnEvent::Failed);
            return;
        }
        if let Some(c) = self.conns.get_mut(&conn) {
            c.ep = ep;
        }
        let h = Header {
            a: u64::from(conn),
            b: key,
            c: self.ctx_id,
            ..Header::default()
        };
        let i = self.top_new(conn, h.encode(), None, After::Nothing);
        let hp = self.tops[i as usize].hdr.as_ptr();
        // SAFETY: the header lives in the boxed record until the send completes.
        let r = unsafe {
            let mut rp: u::ucp_request_param_t = std::mem::zeroed();
            rp.op_attr_mask = u::UCP_OP_ATTR_FIELD_CALLBACK
                | u::UCP_OP_ATTR_FIELD_USER_DATA
                | u::UCP_OP_ATTR_FIELD_FLAGS;
            rp.cb.send = Some(send_cb);
            rp.user_data = tag(T_TOP, i);
            rp.flags = u::UCP_AM_SEND_FLAG_REPLY;
            u::ucp_am_send_nbx(
                ep,
                u32::from(op::CM_HELLO),
                hp as *const c_void,
                HDR_LEN,
                ptr::null(),
                0,
                &rp,
            )
        };
        self.track(r);
        if !u::ucs_ptr_is_ptr(r) {
            self.top_finished(i, u::ucs_ptr_status(r));
        }
    }

    fn accept(&mut self, req: u64, conn: u32, key: u64) {
        let Some(r) = self.requests.remove(&req) else {
            self.sink.conn_event(conn, ConnEvent::Failed);
            return;
        };
        // SAFETY: zeroed endpoint params with the named fields set.
        let p = unsafe {
            let mut p: u::ucp_ep_params_t = std::mem::zeroed();
            p.field_mask = (u::UCP_EP_PARAM_FIELD_CONN_REQUEST
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
            p.conn_request = r;
            p.err_mode = u::UCP_ERR_HANDLING_MODE_PEER;
            p.err_handler.cb = Some(ep_err_cb);
            p.err_handler.arg = conn as usize as *mut c_void;
            p
        };
        self.cm_endpoint(conn, key, &p);
    }

    fn connect_addr(&mut self, conn: u32, key: u64, addr: std::net::SocketAddr) {
        let (storage, len) = sockaddr_of(addr);
        // SAFETY: zeroed endpoint params with the named fields set; the address lives
        // across the ep_create call.
        let p = unsafe {
            let mut p: u::ucp_ep_params_t = std::mem::zeroed();
            p.field_mask = (u::UCP_EP_PARAM_FIELD_SOCK_ADDR
                | u::UCP_EP_PARAM_FIELD_FLAGS
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE
                | u::UCP_EP_PARAM_FIELD_ERR_HANDLER) as u64;
            p.flags = u::UCP_EP_PARAMS_FLAGS_CLIENT_SERVER;
            p.sockaddr.addr = &storage as *const _ as *const u::sockaddr;
            p.sockaddr.addrlen = len as u::socklen_t;
            p.err_mode = u::UCP_ERR_HANDLING_MODE_PEER;
            p.err_handler.cb = Some(ep_err_cb);
            p.err_handler.arg = conn as usize as *mut c_void;
            p
        };
        self.cm_endpoint(conn, key, &p);
    }

    /// The peer's greeting on a connection manager endpoint: the connection is up.
    fn cm_hello(&mut self, h: Header, ep: u::ucp_ep_h) {
        if ep.is_null() {
            return;
        }
        let Some((&id, c)) = self.conns.iter_mut().find(|(_, c)| c.ep == ep) else {
            return;
        };
        if c.state != ConnState::Registered {
            return;
        }
        c.peer_conn = h.a as u32;
        c.peer_key = h.b;
        c.peer_ctx = h.c;
        c.state = ConnState::Connected;
        let early = std::mem::take(&mut c.early);
        self.sink.conn_event(id, ConnEvent::Established);
        for m in early {
            self.dispatch(m);
        }
    }

    fn disconnect(&mut self, conn: u32, tell: bool) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        let was = c.state;
        c.state = ConnState::Closed;
        let ep = std::mem::replace(&mut c.ep, ptr::null_mut());
        let early = std::mem::take(&mut c.early);
        let watched = c.peer_proc.take();
        let (pc, pk) = (c.peer_conn, c.peer_key);
        for m in early {
            self.release(m.data);
        }
        self.unwatch(conn, watched);
        if was == ConnState::Connected && !ep.is_null() {
            if tell {
                let h = Header {
                    conn: pc,
                    key: pk,
                    ..Header::default()
                };
                let i = self.top_new(conn, h.encode(), None, After::Nothing);
                self.top_send(ep, op::DISCONNECT, i, ptr::null(), 0);
                self.close_ep(ep, false);
            } else {
                // The peer ended it and closes its side: this side closes last (at
                // stop), so that its connection manager port is not left waiting in
                // TCP's TIME_WAIT, and a server that restarts can listen on it again.
                self.lingering.push(ep);
            }
        }
        self.fail_conn_ops(
            conn,
            ErrorCode::ConnectionAborted,
            "the connection was ended",
        );
        self.drop_unmatched_of(conn);
        self.pieces.retain(|&(c, _), _| c != conn);
    }

    fn close_ep(&mut self, ep: u::ucp_ep_h, force: bool) {
        // SAFETY: zeroed request params with the named fields; the endpoint is ours and
        // not used after this.
        let r = unsafe {
            let mut p: u::ucp_request_param_t = std::mem::zeroed();
            p.op_attr_mask = u::UCP_OP_ATTR_FIELD_CALLBACK | u::UCP_OP_ATTR_FIELD_FLAGS;
            p.cb.send = Some(close_cb);
            p.flags = if force { u::UCP_EP_CLOSE_FLAG_FORCE } else { 0 };
            u::ucp_ep_close_nbx(ep, &p)
        };
        if u::ucs_ptr_is_ptr(r) {
            self.closing.push(r);
        }
    }

    fn conn_failed(&mut self, conn: u32, status: u::ucs_status_t) {
        let Some(c) = self.conns.get_mut(&conn) else {
            return;
        };
        if c.state == ConnState::Closed {
            return;
        }
        c.state = ConnState::Closed;
        let ep = std::mem::replace(&mut c.ep, ptr::null_mut());
        let watched = c.peer_proc.take();
        // A peer of this machine reached through shared memory: its endpoint has no
        // UCX error handling, so it cannot be closed by force; it is left to the
        // worker's end, and what is stuck in it is retired below.
        let stranded = watched.is_some();
        self.unwatch(conn, watched);
        if !ep.is_null() && !stranded {
            self.close_ep(ep, true);
        }
        let what = format!("the connection failed: {}", crate::ucx::status_text(status));
        self.fail_conn_ops(conn, ErrorCode::ConnectionReset, &what);
        if stranded {
            self.retire_stranded(conn, &what);
        }
        self.drop_unmatched_of(conn);
        self.pieces.retain(|&(c, _), _| c != conn);
        self.sink.conn_event(conn, ConnEvent::Failed);
    }

    /// Stops watching a connection's peer process.
    fn unwatch(&mut self, conn: u32, p: Option<PeerProc>) {
        if p.is_some() {
            self.shared
                .watch
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|&(c, _, _)| c != conn);
        }
        drop(p);
    }

    /// Fails the connections whose watched peer process ended.
    fn reap_peers(&mut self, conns: &[u32]) {
        for &conn in conns {
            let gone = self
                .conns
                .get(&conn)
                .and_then(|c| c.peer_proc.as_ref())
                .is_some_and(PeerProc::ended);
            if gone {
                self.conn_failed(conn, u::UCS_ERR_CONNECTION_RESET);
            }
        }
    }

    fn fail_conn_ops(&mut self, conn: u32, code: ErrorCode, what: &str) {
        for i in 0..self.pend.len() {
            let p = &mut self.pend[i];
            if p.live && p.conn == conn && p.answer.is_none() {
                // Done once UCX lets go of the request's memory (closing the
                // endpoint ends its requests).
                p.answer = Some(Err(Error::with_context(code, what.to_string())));
                self.pend_try_done(i as u32);
            }
        }
    }

    /// Ends what a connection whose peer process ended still has in UCX's
    /// shared-memory transport, which (with no error handling on such an endpoint)
    /// never ends it: a send waits for room in the peer's queue and a receive for the
    /// peer's bytes, and only the peer, gone, could give either. So UCX touches their
    /// memory no more. Requests end with an error and target actions let go of their
    /// memory guards; their records are retired (never reused), so that a late
    /// callback, at the worker's end, finds a record that is not live, and the
    /// headers and bounce buffers UCX still points at stay valid.
    fn retire_stranded(&mut self, conn: u32, what: &str) {
        for i in 0..self.pend.len() {
            let p = &mut self.pend[i];
            if p.live && p.conn == conn {
                p.live = false;
                let r = p.answer.take().unwrap_or_else(|| {
                    Err(Error::with_context(
                        ErrorCode::ConnectionReset,
                        what.to_string(),
                    ))
                });
                let user = p.user;
                self.sink.complete(user, r);
            }
        }
        for i in 0..self.tops.len() {
            let t = &mut self.tops[i];
            if !t.live || t.conn != conn {
                continue;
            }
            t.live = false;
            t.guard = None;
            if let After::RecvLanded { user, .. } = std::mem::replace(&mut t.after, After::Nothing)
            {
                self.sink.complete(
                    user,
                    Err(Error::with_context(
                        ErrorCode::ConnectionReset,
                        what.to_string(),
                    )),
                );
            }
        }
    }

    fn drop_unmatched_of(&mut self, conn: u32) {
        let mut keep = VecDeque::with_capacity(self.unmatched.len());
        while let Some(m) = self.unmatched.pop_front() {
            if m.hdr.conn == conn {
                self.release(m.data);
            } else {
                keep.push_back(m);
            }
        }
        self.unmatched = keep;
    }

    /// Gives back the data kept inside message callbacks (call after progress).
    fn release_late(&mut self) {
        for p in self.late_release.drain(..) {
            // SAFETY: data UCX let us keep, its callback returned; released once.
            unsafe { u::ucp_am_data_release(self.w, p) };
        }
    }

    fn release(&mut self, d: Kept) {
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

    // ---- requester side ----

    #[allow(clippy::too_many_arguments)]
    fn request(
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
    unsafe fn send_am(
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
    fn pend_sent(&mut self, i: u32, r: u::ucs_status_ptr_t) {
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
    fn pend_send_done(&mut self, i: u32, status: u::ucs_status_t) {
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

    fn pend_try_done(&mut self, i: u32) {
        let p = &mut self.pend[i as usize];
        if !p.live || !p.sent || p.busy || p.answer.is_none() {
            return;
        }
        p.live = false;
        let (user, r) = (p.user, p.answer.take().unwrap_or(Ok(Done::empty())));
        self.pend_free.push(i);
        self.sink.complete(user, r);
    }

    fn pend_lookup(&self, conn: u32, req: u64) -> Option<u32> {
        let i = (req & 0xffff_ffff) as u32;
        let generation = (req >> 32) as u32;
        let p = self.pend.get(i as usize)?;
        (p.live && p.generation == generation && p.conn == conn && p.answer.is_none()).then_some(i)
    }

    fn answer(&mut self, m: Incoming) -> u::ucs_status_t {
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
    fn finished(&mut self, user: *mut c_void, status: u::ucs_status_t, _len: usize) {
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

    // ---- target side ----

    fn top_new(
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
    fn take_bounce(&mut self, n: usize) -> Vec<u8> {
        let mut b = self.bounces.pop().unwrap_or_default();
        b.clear();
        b.resize(n, 0);
        b
    }

    fn give_bounce(&mut self, b: Vec<u8>) {
        if self.bounces.len() < MAX_BOUNCES {
            self.bounces.push(b);
        }
    }

    fn top_send(&mut self, ep: u::ucp_ep_h, am: u16, i: u32, data: *const u8, len: usize) {
        let hp = self.tops[i as usize].hdr.as_ptr();
        // SAFETY: the header lives in the boxed record, and the data under the record's
        // guard (exported memory checked for this access), until the send completes.
        let r = unsafe { self.send_am(ep, am, hp, data, len, tag(T_TOP, i), false) };
        if !u::ucs_ptr_is_ptr(r) {
            self.top_finished(i, u::ucs_ptr_status(r));
        }
    }

    fn top_finished(&mut self, i: u32, status: u::ucs_status_t) {
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
    fn ack_later(&mut self, conn: u32, req: u64) {
        self.late_acks.push((conn, req));
    }

    /// Sends the answers `ack_later` kept (after the commands of a drive are carried out).
    fn flush_acks(&mut self) {
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

    fn ack(&mut self, conn: u32, req: u64, status: u64, value: u64) {
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

    /// A message came; refused (and left to UCX) unless it names a connection of this
    /// context with its key.
    fn incoming(&mut self, m: Incoming) -> std::result::Result<(), ()> {
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
        self.dispatch(m);
        Ok(())
    }

    fn dispatch(&mut self, m: Incoming) -> u::ucs_status_t {
        let conn = m.hdr.conn;
        match m.am {
            op::ACK | op::READ_RESP => return self.answer(m),
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

    fn match_receives(&mut self) {
        let _ = self.match_receives_status();
    }

    /// Matches kept messages with posted receives. Whether the data of the message
    /// that came last stays kept by UCX (so its handler must say "in progress").
    fn match_receives_status(&mut self) -> bool {
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

    fn recv_into(&mut self, desc: *mut c_void, dst: *mut u8, n: usize, i: u32) {
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

    fn target_write(&mut self, m: Incoming) -> u::ucs_status_t {
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
    fn target_write_piece(&mut self, m: Incoming) -> u::ucs_status_t {
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

    fn target_read(&mut self, m: Incoming) {
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

    fn target_event(&mut self, m: Incoming) {
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

    fn target_atomic(&mut self, m: Incoming) {
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

    /// First half of the end: goodbyes, closes, pending receives failed.
    fn begin_shutdown(&mut self) {
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

    fn busy(&self) -> bool {
        !self.closing.is_empty()
            || self.tops.iter().any(|t| t.live)
            || self.pend.iter().any(|p| p.live)
    }

    /// Second half, once the worker made what progress it could: requests still in
    /// flight are cancelled, and operations still pending end with an error.
    fn finish_shutdown(&mut self) {
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
    fn fail_leftovers(&mut self) {
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
