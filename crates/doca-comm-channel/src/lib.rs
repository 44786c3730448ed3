//! DOCA Comm Channel in software: whole messages between a host process (client) and a
//! DPU-side process (service), as `libdoca_comm_channel` carries them over the
//! BlueField's PCIe link.
//!
//! The DPU side listens for a service name with its device and the representor of a
//! host function; the host side connects with its device, and reaches the service that
//! listens with that device's representor. Underneath: Unix `SOCK_SEQPACKET` sockets
//! (messages keep their bounds) in a directory of this user (`DOCA_SW_RUNTIME_DIR`, or
//! `/tmp/doca-sw-<uid>`), one per (representor, service). Everything is non-blocking:
//! `AGAIN` when there is nothing to receive or no room to send; the event channels are
//! epoll descriptors that turn readable when receiving or sending may proceed.
//!
//! ```
//! use doca_comm_channel::Endpoint;
//! use doca_core::device::{DEFAULT_MACHINE, Topology};
//! use doca_core::ErrorCode;
//!
//! // Both sides of the default machine in one process (DOCA programs run two).
//! let side = |role| Topology::from_toml(DEFAULT_MACHINE, Some(role));
//! let name = format!("doc-echo-{}", std::process::id());
//!
//! // DPU side: its device and the representor of the host function it serves.
//! let dpu = side("dpu")?.open_device("0000:03:00.0")?;
//! let rep = dpu.open_rep("0000:3b:00.0")?;
//! let mut service = Endpoint::new();
//! service.set_device(&dpu)?;
//! service.set_device_rep(&rep)?;
//! service.listen(&name)?;
//!
//! // Host side: its device; the service is reached through that function.
//! let host = side("host")?.open_device("0000:3b:00.0")?;
//! let mut client = Endpoint::new();
//! client.set_device(&host)?;
//! let server = client.connect(&name)?;
//! while let Err(e) = client.sendto(b"hello", server) {
//!     assert_eq!(e.code(), ErrorCode::Again); // the connection is being made
//!     let _ = service.recvfrom(&mut [0u8; 64]); // the service takes it meanwhile
//! }
//! let mut buf = [0u8; 4080];
//! let (n, from) = loop {
//!     match service.recvfrom(&mut buf) {
//!         Ok(got) => break got,
//!         Err((e, _)) => assert_eq!(e.code(), ErrorCode::Again),
//!     }
//! };
//! assert_eq!(&buf[..n], b"hello");
//! while let Err(e) = service.sendto(b"hi", from) {
//!     assert_eq!(e.code(), ErrorCode::Again);
//! }
//! let n = loop {
//!     match client.recvfrom(&mut buf) {
//!         Ok((n, _)) => break n,
//!         Err((e, _)) => assert_eq!(e.code(), ErrorCode::Again),
//!     }
//! };
//! assert_eq!(&buf[..n], b"hi");
//! # Ok::<(), doca_core::Error>(())
//! ```

use doca_core::device::{Capability, Role};
use doca_core::{Dev, DevInfo, DevRep, Error, ErrorCode, Result};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

#[cfg(feature = "tokio")]
pub mod aio;
pub mod comch;
pub mod fastpath;

/// Longest service name (`doca_comm_channel_get_max_service_name_len`), in bytes,
/// without the terminating NUL.
pub const MAX_SERVICE_NAME_LEN: u32 = 120;
/// Largest message (`doca_comm_channel_get_max_message_size`).
pub const MAX_MESSAGE_SIZE: u32 = 4080;
/// Largest send or receive queue (`..._get_max_send_queue_size`).
pub const MAX_QUEUE_SIZE: u32 = 8192;
/// Most connections one service accepts (`..._get_service_max_num_connections`).
pub const MAX_CONNECTIONS: u32 = 64;
/// Where the sockets live, when set (else `/tmp/doca-sw-<uid>`).
pub const RUNTIME_DIR_ENV: &str = "DOCA_SW_RUNTIME_DIR";

const DEFAULT_MSG_SIZE: u16 = 4080;
const DEFAULT_QUEUE_SIZE: u16 = 16;
const HELLO_MAGIC: &[u8; 8] = b"DOCASWCC";
const HELLO_VERSION: u16 = 1;
const COMCH_VERSION: u16 = 2;
const HELLO_MAX: usize = 8 + 2 + 2 + 4 + 2 + MAX_SERVICE_NAME_LEN as usize;

fn invalid(msg: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::with_context(ErrorCode::InvalidValue, msg)
}

fn bad_state(msg: &'static str) -> Error {
    Error::with_context(ErrorCode::BadState, msg)
}

fn os_error(what: &str) -> Error {
    Error::with_context(
        ErrorCode::OperatingSystem,
        format!("{what}: {}", std::io::Error::last_os_error()),
    )
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

fn needs_cap(info: &DevInfo) -> Result<()> {
    if info.has_capability(Capability::CommChannel) {
        Ok(())
    } else {
        Err(Error::with_context(
            ErrorCode::NotSupported,
            format!("device {} has no comm channel", info.pci_addr()),
        ))
    }
}

/// `doca_comm_channel_get_max_message_size`.
pub fn max_message_size(info: &DevInfo) -> Result<u32> {
    needs_cap(info).map(|()| MAX_MESSAGE_SIZE)
}

/// `doca_comm_channel_get_max_send_queue_size` (and the receive queue's).
pub fn max_queue_size(info: &DevInfo) -> Result<u32> {
    needs_cap(info).map(|()| MAX_QUEUE_SIZE)
}

/// `doca_comm_channel_get_service_max_num_connections`.
pub fn service_max_num_connections(info: &DevInfo) -> Result<u32> {
    needs_cap(info).map(|()| MAX_CONNECTIONS)
}

/// A failed receive: the error, and the peer it concerns when there is one.
pub type RecvError = (Error, Option<PeerId>);

/// A peer's connection state.
const CONNECTING: u8 = 0;
const HANDSHAKE: u8 = 1;
const CONNECTED: u8 = 2;
const CLOSED: u8 = 3;

/// A connection's accounting page, shared by its two processes (a sealed memfd the
/// client passes with its greeting): how many messages each side has taken, and each
/// side's receive queue size. Senders keep what is in flight within the queues.
struct Ctl {
    ptr: *mut u8,
    /// Whether this process is the client (its counters are the first ones).
    client: bool,
}

const CTL_LEN: usize = 4096;
const CTL_MAGIC: u64 = u64::from_le_bytes(*b"DOCASWQ1");

// SAFETY: the page is only reached through atomics.
unsafe impl Send for Ctl {}
// SAFETY: as above.
unsafe impl Sync for Ctl {}

impl std::fmt::Debug for Ctl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ctl").field("client", &self.client).finish()
    }
}

impl Ctl {
    /// Maps a page of `fd` (checked: a sealed regular file of at least a page).
    fn map(fd: RawFd, client: bool) -> Option<Ctl> {
        // SAFETY: all-zero stat is valid; fstat writes it.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fd is open; st is writable.
        if unsafe { libc::fstat(fd, &mut st) } != 0
            || st.st_mode & libc::S_IFMT != libc::S_IFREG
            || (st.st_size as u64) < CTL_LEN as u64
        {
            return None;
        }
        // SAFETY: F_GET_SEALS on an open descriptor.
        let seals = unsafe { libc::fcntl(fd, libc::F_GET_SEALS) };
        if seals < 0 || seals & libc::F_SEAL_SHRINK == 0 {
            return None;
        }
        // SAFETY: a shared mapping of a page of a file that cannot shrink.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                CTL_LEN,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        (p != libc::MAP_FAILED).then_some(Ctl {
            ptr: p.cast(),
            client,
        })
    }

    fn new_page() -> Option<(OwnedFd, Ctl)> {
        // SAFETY: a valid C string and flags.
        let fd = unsafe {
            libc::memfd_create(
                c"doca-sw comm channel".as_ptr(),
                libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING,
            )
        };
        if fd < 0 {
            return None;
        }
        // SAFETY: a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: plain calls on our memfd.
        unsafe {
            if libc::ftruncate(fd.as_raw_fd(), CTL_LEN as libc::off_t) != 0
                || libc::fcntl(
                    fd.as_raw_fd(),
                    libc::F_ADD_SEALS,
                    libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_SEAL,
                ) != 0
            {
                return None;
            }
        }
        let c = Ctl::map(fd.as_raw_fd(), true)?;
        c.word(0).store(CTL_MAGIC, Ordering::Release);
        Some((fd, c))
    }

    fn word(&self, i: usize) -> &AtomicU64 {
        // SAFETY: i < 4: inside the page, aligned; the page lives as long as self and is
        // only accessed atomically (by both processes).
        unsafe { AtomicU64::from_ptr(self.ptr.cast::<u64>().add(i)) }
    }

    /// Messages this side has taken.
    fn taken_here(&self) -> &AtomicU64 {
        self.word(if self.client { 1 } else { 2 })
    }

    /// Messages the other side has taken.
    fn taken_there(&self) -> u64 {
        self.word(if self.client { 2 } else { 1 })
            .load(Ordering::Acquire)
    }

    /// This side's receive queue size (published for the other side).
    fn set_recv_q(&self, q: u16) {
        self.word(if self.client { 3 } else { 4 })
            .store(u64::from(q), Ordering::Release);
    }

    /// The other side's receive queue size (0: not published yet).
    fn their_recv_q(&self) -> u64 {
        self.word(if self.client { 4 } else { 3 })
            .load(Ordering::Acquire)
    }
}

impl Drop for Ctl {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `map`, unmapped once.
        unsafe { libc::munmap(self.ptr.cast(), CTL_LEN) };
    }
}

/// One connection's far end (`struct doca_comm_channel_addr_t`): user data and
/// statistics. It stays valid until disconnected or the endpoint is destroyed.
#[derive(Debug)]
pub struct PeerAddr {
    id: u64,
    fd: std::sync::Mutex<Option<OwnedFd>>,
    raw: std::sync::atomic::AtomicI32,
    state: AtomicU8,
    user_data: AtomicU64,
    send_msgs: AtomicU64,
    send_bytes: AtomicU64,
    recv_msgs: AtomicU64,
    recv_bytes: AtomicU64,
    /// The largest message the peer said it sends.
    peer_max: AtomicU32,
    /// The connection's accounting page, once shared.
    ctl: std::sync::OnceLock<Ctl>,
}

/// Identifies a peer of an endpoint (Rust face; the C face uses `&PeerAddr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeerId(u64);

impl PeerAddr {
    fn new(id: u64, fd: Option<OwnedFd>, state: u8) -> Box<PeerAddr> {
        let raw = fd.as_ref().map_or(-1, |f| f.as_raw_fd());
        Box::new(PeerAddr {
            id,
            fd: std::sync::Mutex::new(fd),
            raw: std::sync::atomic::AtomicI32::new(raw),
            state: AtomicU8::new(state),
            user_data: AtomicU64::new(0),
            send_msgs: AtomicU64::new(0),
            send_bytes: AtomicU64::new(0),
            recv_msgs: AtomicU64::new(0),
            recv_bytes: AtomicU64::new(0),
            peer_max: AtomicU32::new(MAX_MESSAGE_SIZE),
            ctl: std::sync::OnceLock::new(),
        })
    }

    /// Its identity in its endpoint.
    pub fn id(&self) -> PeerId {
        PeerId(self.id)
    }

    /// `doca_comm_channel_peer_addr_get_user_data`.
    pub fn user_data(&self) -> u64 {
        self.user_data.load(Ordering::Relaxed)
    }

    /// `doca_comm_channel_peer_addr_set_user_data`.
    pub fn set_user_data(&self, v: u64) {
        self.user_data.store(v, Ordering::Relaxed);
    }

    /// Messages sent to the peer.
    pub fn send_messages(&self) -> u64 {
        self.send_msgs.load(Ordering::Relaxed)
    }

    /// Bytes sent to the peer.
    pub fn send_bytes(&self) -> u64 {
        self.send_bytes.load(Ordering::Relaxed)
    }

    /// Messages received from the peer.
    pub fn recv_messages(&self) -> u64 {
        self.recv_msgs.load(Ordering::Relaxed)
    }

    /// Bytes received from the peer.
    pub fn recv_bytes(&self) -> u64 {
        self.recv_bytes.load(Ordering::Relaxed)
    }

    /// Messages sent that the peer has not received yet (counted in the connection's
    /// shared accounting page; estimated from the queued bytes before it is shared).
    pub fn send_in_flight_messages(&self) -> u64 {
        if let Some(c) = self.ctl.get() {
            return self.send_messages().saturating_sub(c.taken_there());
        }
        let fd = self.raw.load(Ordering::Acquire);
        if fd < 0 {
            return 0;
        }
        let mut queued: libc::c_int = 0;
        // SAFETY: SIOCOUTQ writes one int; the descriptor is this peer's socket (or, after
        // a close, a number the call rejects or answers harmlessly).
        if unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut queued) } != 0 || queued <= 0 {
            return 0;
        }
        let (m, b) = (self.send_messages(), self.send_bytes());
        if m == 0 {
            return 0;
        }
        let avg = (b / m).max(1);
        (queued as u64).div_ceil(avg + 64).min(m)
    }

    /// Whether the connection is up.
    pub fn is_connected(&self) -> bool {
        self.state.load(Ordering::Acquire) == CONNECTED
    }

    fn close(&self) {
        self.state.store(CLOSED, Ordering::Release);
        self.raw.store(-1, Ordering::Release);
        *self.fd.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

enum Mode {
    Idle,
    Service {
        listener: OwnedFd,
        path: PathBuf,
        name: String,
    },
    Client {
        path: PathBuf,
        name: String,
    },
}

/// A comm channel endpoint (`struct doca_comm_channel_ep_t`).
pub struct Endpoint {
    dev: Option<Dev>,
    rep: Option<DevRep>,
    max_msg: u16,
    send_q: u16,
    recv_q: u16,
    mode: Mode,
    // Boxed: C holds pointers to the peer addresses, which must not move.
    #[allow(clippy::vec_box)]
    peers: Vec<Box<PeerAddr>>,
    next_id: u64,
    recv_ep: OwnedFd,
    send_ep: OwnedFd,
    service_ep: OwnedFd,
    /// The peer the last message came from: looked at first.
    hot: Option<u64>,
    /// Receives in a row that found nothing at the hot peer.
    misses: u32,
    /// The protocol spoken: [`HELLO_VERSION`] for the comm channel, [`COMCH_VERSION`]
    /// for comch (its services are others, even with the same name).
    proto: u16,
    /// Peers whose connection came up and that nobody was told about yet (comch reports
    /// them as connection events).
    joined: Vec<u64>,
    /// The descriptor the last message received carried (comch).
    got_fd: Option<OwnedFd>,
    /// Peers whose connection a send found ended: the next receive reports them, as
    /// it reports the ends it finds itself.
    lost: Vec<u64>,
}

impl std::fmt::Debug for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mode = match &self.mode {
            Mode::Idle => "idle".to_string(),
            Mode::Service { name, .. } => format!("service '{name}'"),
            Mode::Client { name, .. } => format!("client of '{name}'"),
        };
        f.debug_struct("Endpoint")
            .field("mode", &mode)
            .field("peers", &self.peers.len())
            .finish()
    }
}

fn epoll() -> OwnedFd {
    // SAFETY: epoll_create1 takes flags and returns a new descriptor or -1.
    let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
    assert!(
        fd >= 0,
        "epoll_create1: {}",
        std::io::Error::last_os_error()
    );
    // SAFETY: a new descriptor nothing else owns.
    unsafe { OwnedFd::from_raw_fd(fd) }
}

fn epoll_add(ep: &OwnedFd, fd: RawFd, events: u32, data: u64) {
    let mut ev = libc::epoll_event { events, u64: data };
    // SAFETY: both descriptors are open; the event is read during the call only.
    unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) };
}

fn epoll_del(ep: &OwnedFd, fd: RawFd) {
    let mut ev = libc::epoll_event { events: 0, u64: 0 };
    // SAFETY: as above; a descriptor not in the set is refused harmlessly.
    unsafe { libc::epoll_ctl(ep.as_raw_fd(), libc::EPOLL_CTL_DEL, fd, &mut ev) };
}

fn seqpacket() -> Result<OwnedFd> {
    // SAFETY: socket takes constants and returns a new descriptor or -1.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(os_error("cannot create a socket"));
    }
    // SAFETY: a new descriptor nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn sockaddr(path: &std::path::Path) -> Result<(libc::sockaddr_un, libc::socklen_t)> {
    use std::os::unix::ffi::OsStrExt;
    // SAFETY: all-zero is a valid sockaddr_un.
    let mut a: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    a.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let b = path.as_os_str().as_bytes();
    if b.len() >= a.sun_path.len() {
        return Err(invalid(format!(
            "the socket path {} is too long; set {RUNTIME_DIR_ENV} to a shorter directory",
            path.display()
        )));
    }
    for (d, s) in a.sun_path.iter_mut().zip(b) {
        *d = *s as libc::c_char;
    }
    let len = std::mem::size_of::<libc::sa_family_t>() + b.len() + 1;
    Ok((a, len as libc::socklen_t))
}

/// This user's directory of service sockets, made private (0700) and checked.
fn runtime_dir() -> Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let base = std::env::var_os(RUNTIME_DIR_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/doca-sw-{uid}")));
    let dir = base.join("cc");
    for d in [&base, &dir] {
        match std::fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(Error::with_context(
                    ErrorCode::NotPermitted,
                    format!(
                        "cannot make the comm channel directory {}: {e}",
                        d.display()
                    ),
                ));
            }
        }
        let m = std::fs::symlink_metadata(d).map_err(|e| {
            Error::with_context(ErrorCode::NotPermitted, format!("{}: {e}", d.display()))
        })?;
        if !m.is_dir() || m.uid() != uid || m.permissions().mode() & 0o077 != 0 {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                format!(
                    "{} must be a directory of this user that others cannot reach (mode 0700)",
                    d.display()
                ),
            ));
        }
    }
    Ok(dir)
}

pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_SERVICE_NAME_LEN as usize {
        return Err(invalid(format!(
            "a service name is 1 to {MAX_SERVICE_NAME_LEN} bytes; '{name}' is {}",
            name.len()
        )));
    }
    if name.bytes().any(|b| b == 0) {
        return Err(invalid("a service name cannot hold NUL bytes"));
    }
    Ok(())
}

/// The socket of service `name` listened for with the representor of host function
/// `pci`: the name is hashed, so that any name fits a socket path.
fn service_path(pci: &str, name: &str, proto: u16) -> Result<PathBuf> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    if proto != HELLO_VERSION {
        h = (h ^ u64::from(proto)).wrapping_mul(0x0100_0000_01b3);
    }
    for &b in name.as_bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    Ok(runtime_dir()?.join(format!("{pci}-{h:016x}")))
}

fn hello(name: &str, max_msg: u16, proto: u16) -> ([u8; HELLO_MAX], usize) {
    let mut b = [0u8; HELLO_MAX];
    b[..8].copy_from_slice(HELLO_MAGIC);
    b[8..10].copy_from_slice(&proto.to_le_bytes());
    b[10..12].copy_from_slice(&(name.len() as u16).to_le_bytes());
    b[12..16].copy_from_slice(&std::process::id().to_le_bytes());
    b[16..18].copy_from_slice(&max_msg.to_le_bytes());
    b[18..18 + name.len()].copy_from_slice(name.as_bytes());
    (b, 18 + name.len())
}

/// The peer's largest message, when `b` is a well-formed hello for service `name`.
fn check_hello(b: &[u8], name: &str, proto: u16) -> Option<u16> {
    if b.len() < 18 || &b[..8] != HELLO_MAGIC {
        return None;
    }
    let version = u16::from_le_bytes([b[8], b[9]]);
    let n = u16::from_le_bytes([b[10], b[11]]) as usize;
    let max = u16::from_le_bytes([b[16], b[17]]);
    (version == proto && b.len() == 18 + n && &b[18..] == name.as_bytes() && max > 0).then_some(max)
}

/// Sends `msg` on `sock`, with descriptor `fd` attached (SCM_RIGHTS) when given.
fn send_with_fd(sock: &OwnedFd, msg: &[u8], fd: Option<RawFd>) -> isize {
    send_parts_fd(sock.as_raw_fd(), &[], msg, fd)
}

/// Sends `head` then `msg` as one message on `sock` (without blocking, never raising
/// SIGPIPE), with descriptor `fd` attached (SCM_RIGHTS) when given.
fn send_parts_fd(sock: RawFd, head: &[u8], msg: &[u8], fd: Option<RawFd>) -> isize {
    let mut iov = [
        libc::iovec {
            iov_base: head.as_ptr() as *mut libc::c_void,
            iov_len: head.len(),
        },
        libc::iovec {
            iov_base: msg.as_ptr() as *mut libc::c_void,
            iov_len: msg.len(),
        },
    ];
    let skip = usize::from(head.is_empty());
    // Room for one descriptor's control message, aligned for cmsghdr.
    let mut cbuf = [0u64; 4];
    // SAFETY: all-zero msghdr is valid.
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    m.msg_iov = iov[skip..].as_mut_ptr();
    m.msg_iovlen = 2 - skip;
    if let Some(fd) = fd {
        // SAFETY: CMSG_SPACE is a pure computation.
        let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<RawFd>() as u32) } as usize;
        m.msg_control = cbuf.as_mut_ptr().cast();
        m.msg_controllen = space;
        // SAFETY: the control buffer holds one cmsghdr with one descriptor (space checked
        // against the buffer: 32 bytes >= CMSG_SPACE(4) = 24).
        unsafe {
            let c = libc::CMSG_FIRSTHDR(&m);
            (*c).cmsg_level = libc::SOL_SOCKET;
            (*c).cmsg_type = libc::SCM_RIGHTS;
            (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as usize;
            std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<RawFd>(), fd);
        }
    }
    // SAFETY: m describes live buffers for the call; a closed or foreign descriptor
    // number is refused by the kernel.
    unsafe { libc::sendmsg(sock, &m, libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL) }
}

/// Receives one message into `buf`, with the descriptor it carries (if any).
fn recv_with_fd(sock: RawFd, buf: &mut [u8]) -> (isize, Option<OwnedFd>) {
    recv_flags_fd(sock, buf, 0)
}

/// [`recv_with_fd`] with more `flags` (`MSG_TRUNC`).
fn recv_flags_fd(sock: RawFd, buf: &mut [u8], flags: i32) -> (isize, Option<OwnedFd>) {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut cbuf = [0u64; 8];
    // SAFETY: all-zero msghdr is valid.
    let mut m: libc::msghdr = unsafe { std::mem::zeroed() };
    m.msg_iov = &mut iov;
    m.msg_iovlen = 1;
    m.msg_control = cbuf.as_mut_ptr().cast();
    m.msg_controllen = std::mem::size_of_val(&cbuf);
    // SAFETY: m describes valid buffers; descriptors arrive close-on-exec.
    let n = unsafe {
        libc::recvmsg(
            sock,
            &mut m,
            libc::MSG_DONTWAIT | libc::MSG_CMSG_CLOEXEC | flags,
        )
    };
    if n < 0 {
        return (n, None);
    }
    let mut got = None;
    // SAFETY: walking the control messages the kernel wrote into cbuf.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&m);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c).cast::<RawFd>();
                let count =
                    ((*c).cmsg_len - libc::CMSG_LEN(0) as usize) / std::mem::size_of::<RawFd>();
                for i in 0..count {
                    let fd = std::ptr::read_unaligned(data.add(i));
                    // Every descriptor received is ours to close; the first is kept.
                    let owned = OwnedFd::from_raw_fd(fd);
                    if got.is_none() {
                        got = Some(owned);
                    }
                }
            }
            c = libc::CMSG_NXTHDR(&m, c);
        }
    }
    (n, got)
}

impl Default for Endpoint {
    fn default() -> Endpoint {
        Endpoint::new()
    }
}

impl Endpoint {
    /// `doca_comm_channel_ep_create`.
    pub fn new() -> Endpoint {
        Endpoint {
            dev: None,
            rep: None,
            max_msg: DEFAULT_MSG_SIZE,
            send_q: DEFAULT_QUEUE_SIZE,
            recv_q: DEFAULT_QUEUE_SIZE,
            mode: Mode::Idle,
            peers: Vec::new(),
            next_id: 1,
            recv_ep: epoll(),
            send_ep: epoll(),
            service_ep: epoll(),
            hot: None,
            misses: 0,
            proto: HELLO_VERSION,
            joined: Vec::new(),
            got_fd: None,
            lost: Vec::new(),
        }
    }

    /// An endpoint of comch (the 3.x channel): its own services, messages of up to
    /// `wire_max` bytes (the user's plus comch's own header).
    pub(crate) fn new_comch(wire_max: u16) -> Endpoint {
        let mut e = Endpoint::new();
        e.proto = COMCH_VERSION;
        e.max_msg = wire_max;
        e.joined.reserve(MAX_CONNECTIONS as usize);
        e
    }

    /// The descriptor the last message received carried, if any.
    pub(crate) fn take_fd(&mut self) -> Option<OwnedFd> {
        self.got_fd.take()
    }

    /// A peer whose connection came up since the last call.
    pub(crate) fn take_joined(&mut self) -> Option<PeerId> {
        if self.joined.is_empty() {
            return None;
        }
        Some(PeerId(self.joined.remove(0)))
    }

    fn configurable(&self) -> Result<()> {
        match self.mode {
            Mode::Idle => Ok(()),
            _ => Err(bad_state(
                "the endpoint already listens or connects; configure it before",
            )),
        }
    }

    /// `doca_comm_channel_ep_set_device`.
    pub fn set_device(&mut self, dev: &Dev) -> Result<()> {
        self.configurable()?;
        needs_cap(dev.as_devinfo())?;
        self.dev = Some(dev.clone());
        Ok(())
    }

    /// `doca_comm_channel_ep_set_device_rep` (the DPU side: the host function served).
    pub fn set_device_rep(&mut self, rep: &DevRep) -> Result<()> {
        self.configurable()?;
        self.rep = Some(rep.clone());
        Ok(())
    }

    /// `doca_comm_channel_ep_get_device`.
    pub fn device(&self) -> Option<&Dev> {
        self.dev.as_ref()
    }

    /// `doca_comm_channel_ep_get_device_rep`.
    pub fn device_rep(&self) -> Option<&DevRep> {
        self.rep.as_ref()
    }

    /// `doca_comm_channel_ep_set_max_msg_size`: 1 ..= [`MAX_MESSAGE_SIZE`].
    pub fn set_max_msg_size(&mut self, n: u16) -> Result<()> {
        self.configurable()?;
        if n == 0 || u32::from(n) > MAX_MESSAGE_SIZE {
            return Err(invalid(format!(
                "the largest message is 1 to {MAX_MESSAGE_SIZE} bytes, not {n}"
            )));
        }
        self.max_msg = n;
        Ok(())
    }

    /// `doca_comm_channel_ep_set_send_queue_size`: 1 ..= [`MAX_QUEUE_SIZE`].
    pub fn set_send_queue_size(&mut self, n: u16) -> Result<()> {
        self.configurable()?;
        self.send_q = queue_size(n)?;
        Ok(())
    }

    /// `doca_comm_channel_ep_set_recv_queue_size`: 1 ..= [`MAX_QUEUE_SIZE`].
    pub fn set_recv_queue_size(&mut self, n: u16) -> Result<()> {
        self.configurable()?;
        self.recv_q = queue_size(n)?;
        Ok(())
    }

    /// `doca_comm_channel_ep_get_max_msg_size`.
    pub fn max_msg_size(&self) -> u16 {
        self.max_msg
    }

    /// `doca_comm_channel_ep_get_send_queue_size`.
    pub fn send_queue_size(&self) -> u16 {
        self.send_q
    }

    /// `doca_comm_channel_ep_get_recv_queue_size`.
    pub fn recv_queue_size(&self) -> u16 {
        self.recv_q
    }

    /// `doca_comm_channel_ep_listen`: the DPU side serves `name` to the host function its
    /// representor stands for. `InUse` when a live endpoint already serves it.
    pub fn listen(&mut self, name: &str) -> Result<()> {
        self.configurable()?;
        check_name(name)?;
        let dev = self
            .dev
            .as_ref()
            .ok_or_else(|| bad_state("set the endpoint's device before listening"))?;
        if dev.as_devinfo().role() != Role::Dpu {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "services listen on the DPU side; a host endpoint connects",
            ));
        }
        let rep = self.rep.as_ref().ok_or_else(|| {
            bad_state("set the representor of the host function to serve before listening")
        })?;
        if rep.as_devinfo().parent() != dev {
            return Err(invalid(
                "the representor does not belong to the endpoint's device",
            ));
        }
        let path = service_path(&rep.as_devinfo().pci_addr_str(), name, self.proto)?;
        let (addr, len) = sockaddr(&path)?;
        let sock = seqpacket()?;
        // A socket file left by a process that is gone is replaced; a live one is not.
        if path.exists() {
            let probe = seqpacket()?;
            // SAFETY: a valid address of `len` bytes.
            let r = unsafe { libc::connect(probe.as_raw_fd(), (&raw const addr).cast(), len) };
            if r == 0 || errno() == libc::EAGAIN {
                return Err(Error::with_context(
                    ErrorCode::InUse,
                    format!("service '{name}' is already served for this host function"),
                ));
            }
            let _ = std::fs::remove_file(&path);
        }
        // SAFETY: a valid address of `len` bytes.
        if unsafe { libc::bind(sock.as_raw_fd(), (&raw const addr).cast(), len) } != 0 {
            return Err(os_error("cannot bind the service socket"));
        }
        // SAFETY: listen on our socket.
        if unsafe { libc::listen(sock.as_raw_fd(), MAX_CONNECTIONS as i32) } != 0 {
            let _ = std::fs::remove_file(&path);
            return Err(os_error("cannot listen on the service socket"));
        }
        epoll_add(&self.recv_ep, sock.as_raw_fd(), libc::EPOLLIN as u32, 0);
        epoll_add(&self.service_ep, sock.as_raw_fd(), libc::EPOLLIN as u32, 0);
        self.mode = Mode::Service {
            listener: sock,
            path,
            name: name.to_string(),
        };
        Ok(())
    }

    /// `doca_comm_channel_ep_connect`: the host side reaches service `name` of the DPU
    /// side that represents its device. Returns at once: until the service is there,
    /// sending answers `AGAIN`.
    pub fn connect(&mut self, name: &str) -> Result<PeerId> {
        self.configurable()?;
        check_name(name)?;
        let dev = self
            .dev
            .as_ref()
            .ok_or_else(|| bad_state("set the endpoint's device before connecting"))?;
        if dev.as_devinfo().role() != Role::Host {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "the host side connects; a DPU endpoint listens",
            ));
        }
        let path = service_path(&dev.as_devinfo().pci_addr_str(), name, self.proto)?;
        sockaddr(&path)?;
        self.mode = Mode::Client {
            path,
            name: name.to_string(),
        };
        let id = self.next_id;
        self.next_id += 1;
        self.peers.push(PeerAddr::new(id, None, CONNECTING));
        self.progress();
        Ok(PeerId(id))
    }

    fn add_peer_fd(&mut self, fd: &OwnedFd, id: u64) {
        let bytes = (i32::from(self.send_q)) * (i32::from(self.max_msg) + 512);
        // SAFETY: SO_SNDBUF takes an int; the socket is ours.
        unsafe {
            libc::setsockopt(
                fd.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_SNDBUF,
                (&raw const bytes).cast(),
                std::mem::size_of::<i32>() as libc::socklen_t,
            )
        };
        epoll_add(&self.recv_ep, fd.as_raw_fd(), libc::EPOLLIN as u32, id);
        epoll_add(&self.send_ep, fd.as_raw_fd(), libc::EPOLLOUT as u32, id);
    }

    /// Accepts new connections (service) or retries the connection (client).
    fn progress(&mut self) {
        let listener = match &self.mode {
            Mode::Service { listener, .. } => Some(listener.as_raw_fd()),
            _ => None,
        };
        match &self.mode {
            Mode::Idle => {}
            Mode::Service { .. } => {
                while let Some(lfd) = listener {
                    // SAFETY: accept4 on our listening socket; no address wanted.
                    let fd = unsafe {
                        libc::accept4(
                            lfd,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                        )
                    };
                    if fd < 0 {
                        break;
                    }
                    // SAFETY: a new descriptor nothing else owns.
                    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
                    if self.peers.len() >= MAX_CONNECTIONS as usize {
                        continue; // Dropped: the client sees the connection end.
                    }
                    let id = self.next_id;
                    self.next_id += 1;
                    self.add_peer_fd(&fd, id);
                    self.peers.push(PeerAddr::new(id, Some(fd), HANDSHAKE));
                }
            }
            Mode::Client { path, name } => {
                let Some(p) = self.peers.first() else {
                    return;
                };
                if p.state.load(Ordering::Acquire) != CONNECTING {
                    return;
                }
                let Ok(sock) = seqpacket() else {
                    return;
                };
                let Ok((addr, len)) = sockaddr(path) else {
                    return;
                };
                // SAFETY: a valid address of `len` bytes.
                if unsafe { libc::connect(sock.as_raw_fd(), (&raw const addr).cast(), len) } != 0 {
                    return; // Not there yet (or its backlog is full): try again later.
                }
                let (h, n) = hello(name, self.max_msg, self.proto);
                let page = Ctl::new_page();
                let sent =
                    send_with_fd(&sock, &h[..n], page.as_ref().map(|(fd, _)| fd.as_raw_fd()));
                if sent != n as isize {
                    return;
                }
                if let Some((_, c)) = page {
                    c.set_recv_q(self.recv_q);
                    let _ = p.ctl.set(c);
                }
                let id = p.id;
                self.add_peer_fd(&sock, id);
                let p = &self.peers[0];
                p.raw.store(sock.as_raw_fd(), Ordering::Release);
                *p.fd.lock().unwrap_or_else(|e| e.into_inner()) = Some(sock);
                p.state.store(CONNECTED, Ordering::Release);
                self.hot = Some(id);
                if self.proto == COMCH_VERSION {
                    self.joined.push(id);
                }
            }
        }
    }

    fn peer(&self, id: PeerId) -> Result<&PeerAddr> {
        self.peers
            .iter()
            .find(|p| p.id == id.0)
            .map(|b| &**b)
            .ok_or_else(|| invalid("the peer address is not one of this endpoint's peers"))
    }

    /// The peer whose address object is at `p`, if one is (addresses are compared,
    /// never dereferenced).
    pub fn peer_id_at(&self, p: *const PeerAddr) -> Option<PeerId> {
        self.peers
            .iter()
            .find(|b| std::ptr::eq(&***b, p))
            .map(|b| b.id())
    }

    /// The peer's address object (stable while the peer is not disconnected).
    pub fn peer_addr(&self, id: PeerId) -> Result<&PeerAddr> {
        self.peer(id)
    }

    /// `doca_comm_channel_ep_sendto`: one whole message, 1 byte to the endpoint's
    /// `max_msg_size`. `AGAIN` while not connected yet or while the peer's queue is full;
    /// `NotConnected` once the peer is gone.
    pub fn sendto(&mut self, msg: &[u8], to: PeerId) -> Result<()> {
        self.send_parts(&[], msg, to, None)
    }

    /// Sends `head` and `msg` as one message (comch puts its header first), with
    /// descriptor `pass` attached when given.
    pub(crate) fn send_parts(
        &mut self,
        head: &[u8],
        msg: &[u8],
        to: PeerId,
        pass: Option<RawFd>,
    ) -> Result<()> {
        if msg.is_empty() {
            return Err(invalid("a message holds at least one byte"));
        }
        if head.len() + msg.len() > usize::from(self.max_msg) {
            return Err(invalid(format!(
                "a {}-byte message is longer than the endpoint's largest ({} bytes)",
                msg.len(),
                usize::from(self.max_msg) - head.len()
            )));
        }
        if matches!(self.mode, Mode::Idle) {
            return Err(bad_state("the endpoint neither listens nor connects"));
        }
        if self.peer(to)?.state.load(Ordering::Acquire) == CONNECTING {
            self.progress();
        }
        let p = self.peer(to)?;
        match p.state.load(Ordering::Acquire) {
            CONNECTING => return Err(Error::new(ErrorCode::Again)),
            CLOSED => return Err(not_connected()),
            _ => {}
        }
        if let Some(c) = p.ctl.get() {
            // Within this side's send queue and the other side's receive queue.
            let theirs = c.their_recv_q();
            let limit = if theirs == 0 {
                u64::from(self.send_q)
            } else {
                u64::from(self.send_q).min(theirs)
            };
            if p.send_messages().saturating_sub(c.taken_there()) >= limit {
                return Err(Error::with_context(
                    ErrorCode::Again,
                    "the queue toward the peer is full (it has not taken its messages yet)",
                ));
            }
        }
        let fd = p.raw.load(Ordering::Acquire);
        // The peer's socket stays open while the peer entry we borrow lives.
        let n = send_parts_fd(fd, head, msg, pass);
        if n < 0 {
            return match errno() {
                libc::EAGAIN | libc::ENOBUFS | libc::EINTR => Err(Error::new(ErrorCode::Again)),
                _ => {
                    self.drop_peer_fd(to);
                    if !self.lost.contains(&to.0) {
                        self.lost.push(to.0);
                    }
                    Err(not_connected())
                }
            };
        }
        p.send_msgs.fetch_add(1, Ordering::Relaxed);
        p.send_bytes.fetch_add(msg.len() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn drop_peer_fd(&mut self, id: PeerId) {
        if let Some(p) = self.peers.iter().find(|p| p.id == id.0) {
            let fd = p.raw.load(Ordering::Acquire);
            if fd >= 0 {
                epoll_del(&self.recv_ep, fd);
                epoll_del(&self.send_ep, fd);
            }
            p.close();
        }
    }

    /// `doca_comm_channel_ep_recvfrom`: the next whole message from any peer, copied
    /// into `buf`; its length and sender come back. `AGAIN` when none is waiting;
    /// `InvalidValue` (the message stays queued) when `buf` is too short;
    /// `NotConnected` (with the peer) when a peer's connection ended.
    pub fn recvfrom(
        &mut self,
        buf: &mut [u8],
    ) -> std::result::Result<(usize, PeerId), (Error, Option<PeerId>)> {
        if matches!(self.mode, Mode::Idle) {
            return Err((bad_state("the endpoint neither listens nor connects"), None));
        }
        if let Some(id) = self.lost.pop() {
            if self.hot == Some(id) {
                self.hot = None;
            }
            return Err((not_connected(), Some(PeerId(id))));
        }
        // The peer that spoke last is asked first (one system call); the others, and new
        // connections, through epoll, at least every 16th call.
        if let Some(id) = self.hot {
            match self.receive_from(id, buf) {
                Ok(Some(got)) => {
                    self.misses = 0;
                    return Ok(got);
                }
                Ok(None) => {}
                Err(e) => {
                    self.hot = None;
                    return Err(e);
                }
            }
            self.misses = self.misses.wrapping_add(1);
            let only_peer = matches!(self.mode, Mode::Client { .. }) && self.peers.len() == 1;
            if only_peer || !self.misses.is_multiple_of(16) {
                return Err((Error::new(ErrorCode::Again), None));
            }
        }
        // SAFETY: all-zero epoll_events are valid.
        let mut evs: [libc::epoll_event; 16] = unsafe { std::mem::zeroed() };
        for _round in 0..4 {
            // SAFETY: evs has room for 16 events; no wait.
            let n = unsafe { libc::epoll_wait(self.recv_ep.as_raw_fd(), evs.as_mut_ptr(), 16, 0) };
            if n <= 0 {
                if matches!(self.mode, Mode::Client { .. }) {
                    self.progress();
                }
                return Err((Error::new(ErrorCode::Again), None));
            }
            for ev in &evs[..n as usize] {
                let id = ev.u64;
                if id == 0 {
                    self.progress();
                    continue;
                }
                match self.receive_from(id, buf) {
                    Ok(Some(got)) => {
                        self.hot = Some(id);
                        return Ok(got);
                    }
                    Ok(None) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Err((Error::new(ErrorCode::Again), None))
    }

    /// One message from peer `id`, if it has one for the user.
    fn receive_from(
        &mut self,
        id: u64,
        buf: &mut [u8],
    ) -> std::result::Result<Option<(usize, PeerId)>, RecvError> {
        let name = match &self.mode {
            Mode::Service { name, .. } | Mode::Client { name, .. } => name.as_str(),
            Mode::Idle => "",
        };
        let Some(p) = self.peers.iter().find(|p| p.id == id) else {
            return Ok(None);
        };
        let fd = p.raw.load(Ordering::Acquire);
        if fd < 0 {
            return Ok(None);
        }
        let handshake = p.state.load(Ordering::Acquire) == HANDSHAKE;
        if handshake {
            let mut h = [0u8; HELLO_MAX + 1];
            let (n, page) = recv_with_fd(fd, &mut h);
            if n < 0 && errno() == libc::EAGAIN {
                return Ok(None);
            }
            match (n > 0)
                .then(|| check_hello(&h[..n as usize], name, self.proto))
                .flatten()
            {
                Some(max) => {
                    p.peer_max.store(u32::from(max), Ordering::Relaxed);
                    if let Some(page) = page
                        && let Some(c) = Ctl::map(page.as_raw_fd(), false)
                        && c.word(0).load(Ordering::Acquire) == CTL_MAGIC
                    {
                        c.set_recv_q(self.recv_q);
                        let _ = p.ctl.set(c);
                    }
                    p.state.store(CONNECTED, Ordering::Release);
                    if self.proto == COMCH_VERSION {
                        self.joined.push(id);
                    }
                }
                None => {
                    // Not one of ours, or for another service: the connection ends, and
                    // the peer leaves the table.
                    self.drop_peer_fd(PeerId(id));
                    self.peers.retain(|p| p.id != id);
                }
            }
            return Ok(None);
        }
        let fits = buf.len() >= p.peer_max.load(Ordering::Relaxed) as usize;
        let flags = libc::MSG_DONTWAIT
            | if fits {
                libc::MSG_TRUNC
            } else {
                libc::MSG_PEEK | libc::MSG_TRUNC
            };
        let comch = self.proto == COMCH_VERSION && fits;
        let mut n = if comch {
            // comch passes descriptors with some of its own messages.
            let (n, got) = recv_flags_fd(fd, buf, libc::MSG_TRUNC);
            self.got_fd = got;
            n
        } else {
            // SAFETY: buf is valid for writes of its length.
            unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) }
        };
        if n < 0 && errno() == libc::ECONNRESET {
            // The peer closed with messages of ours unread: the kernel reports that once,
            // ahead of the messages the peer sent before closing. Those are still queued
            // here and come first; the end of the connection is reported after them.
            n = if comch {
                let (n, got) = recv_flags_fd(fd, buf, libc::MSG_TRUNC);
                self.got_fd = got;
                n
            } else {
                // SAFETY: as above.
                unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), flags) }
            };
        }
        if n < 0 {
            return match errno() {
                libc::EAGAIN | libc::EINTR => Ok(None),
                _ => {
                    self.drop_peer_fd(PeerId(id));
                    Err((not_connected(), Some(PeerId(id))))
                }
            };
        }
        if n == 0 {
            // The far end closed the connection.
            self.drop_peer_fd(PeerId(id));
            return Err((not_connected(), Some(PeerId(id))));
        }
        let n = n as usize;
        if n > buf.len() {
            if fits {
                // Longer than the peer said it sends: it broke the protocol.
                self.drop_peer_fd(PeerId(id));
                return Err((
                    invalid("the peer sent a message longer than it announced; disconnected"),
                    Some(PeerId(id)),
                ));
            }
            return Err((
                invalid(format!(
                    "the next message is {n} bytes; the buffer holds {} (the message stays queued)",
                    buf.len()
                )),
                Some(PeerId(id)),
            ));
        }
        if !fits {
            // SAFETY: as above; the message fits (peeked).
            unsafe { libc::recv(fd, buf.as_mut_ptr().cast(), buf.len(), libc::MSG_DONTWAIT) };
        }
        p.recv_msgs.fetch_add(1, Ordering::Relaxed);
        p.recv_bytes.fetch_add(n as u64, Ordering::Relaxed);
        if let Some(c) = p.ctl.get() {
            c.taken_here().fetch_add(1, Ordering::Release);
        }
        Ok(Some((n, PeerId(id))))
    }

    /// `doca_comm_channel_ep_disconnect`: ends the connection; the peer address is gone.
    pub fn disconnect(&mut self, id: PeerId) -> Result<()> {
        self.peer(id)?;
        self.lost.retain(|&x| x != id.0);
        if self.hot == Some(id.0) {
            self.hot = None;
        }
        self.drop_peer_fd(id);
        self.peers.retain(|p| p.id != id.0);
        Ok(())
    }

    /// `doca_comm_channel_ep_get_peer_addr_list`: connected peers.
    pub fn peers(&mut self) -> Vec<PeerId> {
        self.progress();
        self.peers
            .iter()
            .filter(|p| p.is_connected())
            .map(|p| p.id())
            .collect()
    }

    /// `doca_comm_channel_ep_get_pending_connections`: connections accepted whose
    /// greeting has not been read yet.
    pub fn pending_connections(&mut self) -> u32 {
        self.progress();
        self.peers
            .iter()
            .filter(|p| p.state.load(Ordering::Acquire) == HANDSHAKE)
            .count() as u32
    }

    /// `doca_comm_channel_ep_get_event_channel`: (send, receive) descriptors for epoll,
    /// readable while sending or receiving may proceed (level-triggered: arming is
    /// implied).
    pub fn event_channels(&self) -> (RawFd, RawFd) {
        (self.send_ep.as_raw_fd(), self.recv_ep.as_raw_fd())
    }

    /// `doca_comm_channel_ep_get_service_event_channel`: readable while connections wait
    /// to be accepted.
    pub fn service_event_channel(&self) -> RawFd {
        self.service_ep.as_raw_fd()
    }

    /// `doca_comm_channel_ep_event_handle_arm_send` / `_recv`: the channels are
    /// level-triggered, so they are always armed; this checks the endpoint is in use.
    pub fn arm(&mut self) -> Result<()> {
        if matches!(self.mode, Mode::Idle) {
            return Err(bad_state("the endpoint neither listens nor connects"));
        }
        self.progress();
        Ok(())
    }
}

fn queue_size(n: u16) -> Result<u16> {
    if n == 0 || u32::from(n) > MAX_QUEUE_SIZE {
        return Err(invalid(format!(
            "a queue holds 1 to {MAX_QUEUE_SIZE} messages, not {n}"
        )));
    }
    Ok(n)
}

fn not_connected() -> Error {
    Error::with_context(
        ErrorCode::NotConnected,
        "the peer disconnected or its process ended",
    )
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        if let Mode::Service { path, .. } = &self.mode {
            let _ = std::fs::remove_file(path);
        }
    }
}
