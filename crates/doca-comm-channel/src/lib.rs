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

//! The parts: `socket` (the Unix sockets, descriptors passed with messages, epoll
//! sets, the runtime directory), `ctl` (a connection's shared accounting page), `peer`
//! (a connection's far end), `listener` (listening, accepting, connecting, the hello),
//! `messages` (sending and receiving), `events` (the event channels); `comch` and
//! `fastpath` are DOCA 3.x's channel and its producer/consumer fast path on top.

use doca_core::device::Capability;
use doca_core::{Dev, DevInfo, DevRep, Error, ErrorCode, Result};
use rustix::fd::OwnedFd;
use std::path::PathBuf;

#[cfg(feature = "tokio")]
pub mod aio;
pub mod comch;
mod ctl;
mod events;
pub mod fastpath;
mod listener;
mod messages;
mod peer;
mod socket;

pub use peer::{PeerAddr, PeerId};

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
// The service answers a client's hello with its own (the welcome) since version 3 of
// the comm channel's protocol and 4 of comch's.
const HELLO_VERSION: u16 = 3;
const COMCH_VERSION: u16 = 4;
const HELLO_MAX: usize = 8 + 2 + 2 + 4 + 2 + MAX_SERVICE_NAME_LEN as usize;

pub(crate) fn check_name(name: &str) -> Result<()> {
    if name.is_empty() || name.len() > MAX_SERVICE_NAME_LEN as usize {
        return Err(Error::invalid(format!(
            "a service name is 1 to {MAX_SERVICE_NAME_LEN} bytes; '{name}' is {}",
            name.len()
        )));
    }
    if name.bytes().any(|b| b == 0) {
        return Err(Error::invalid("a service name cannot hold NUL bytes"));
    }
    Ok(())
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

enum Mode {
    Idle,
    Service {
        listener: OwnedFd,
        path: PathBuf,
        name: String,
    },
    /// Its peer's dial holds where the service is.
    Client {
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
    /// Receives since the last look through epoll (every 16th looks at every peer).
    misses: u32,
    /// The protocol spoken: [`HELLO_VERSION`] for the comm channel, [`COMCH_VERSION`]
    /// for comch (its services are others, even with the same name).
    proto: u16,
    /// Peers whose connection came up and that nobody was told about yet (comch reports
    /// them as connection events).
    joined: Vec<u64>,
    /// The descriptor the last message received carried (comch).
    got_fd: Option<OwnedFd>,
    /// Why the last try to connect could not even start (no descriptors left): sending
    /// reports it rather than `AGAIN`.
    connect_err: Option<Error>,
    /// The generation of the client's socket its epoll sets watch.
    dialed: u32,
    /// Whether the client's connection was seen welcomed.
    welcomed: bool,
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

impl Default for Endpoint {
    fn default() -> Endpoint {
        Endpoint::new()
    }
}

impl Endpoint {
    /// `doca_comm_channel_ep_create`.
    ///
    /// # Panics
    ///
    /// When the process has no file descriptors left for the endpoint's three event
    /// channels; [`Endpoint::try_new`] reports that as an error instead.
    pub fn new() -> Endpoint {
        Endpoint::try_new().unwrap_or_else(|e| panic!("{e}"))
    }

    /// `doca_comm_channel_ep_create`: a new endpoint, or `DOCA_ERROR_OPERATING_SYSTEM`
    /// when the process is out of file descriptors.
    pub fn try_new() -> Result<Endpoint> {
        Ok(Endpoint {
            dev: None,
            rep: None,
            max_msg: DEFAULT_MSG_SIZE,
            send_q: DEFAULT_QUEUE_SIZE,
            recv_q: DEFAULT_QUEUE_SIZE,
            mode: Mode::Idle,
            peers: Vec::new(),
            next_id: 1,
            recv_ep: socket::epoll()?,
            send_ep: socket::epoll()?,
            service_ep: socket::epoll()?,
            hot: None,
            misses: 0,
            proto: HELLO_VERSION,
            joined: Vec::new(),
            got_fd: None,
            lost: Vec::new(),
            connect_err: None,
            dialed: 0,
            welcomed: false,
        })
    }

    /// An endpoint of comch (the 3.x channel): its own services, messages of up to
    /// `wire_max` bytes (the user's plus comch's own header).
    pub(crate) fn new_comch(wire_max: u16) -> Result<Endpoint> {
        let mut e = Endpoint::try_new()?;
        e.proto = COMCH_VERSION;
        e.max_msg = wire_max;
        e.joined.reserve(MAX_CONNECTIONS as usize);
        Ok(e)
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
            _ => Err(Error::bad_state(
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
            return Err(Error::invalid(format!(
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
}

fn queue_size(n: u16) -> Result<u16> {
    if n == 0 || u32::from(n) > MAX_QUEUE_SIZE {
        return Err(Error::invalid(format!(
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
