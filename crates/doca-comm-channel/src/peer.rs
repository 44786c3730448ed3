//! A connection's far end, as an endpoint keeps it.

use crate::ctl::Ctl;
use crate::socket::queued_bytes;
use crate::{HELLO_MAX, MAX_MESSAGE_SIZE};
use doca_core::{Error, ErrorCode, Result};
use rustix::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

/// A peer's connection state.
pub(crate) const CONNECTING: u8 = 0;
pub(crate) const HANDSHAKE: u8 = 1;
pub(crate) const CONNECTED: u8 = 2;
pub(crate) const CLOSED: u8 = 3;

/// What a client's connection needs until its service has welcomed it: where the
/// service listens, the greeting (and the accounting page it carries), and the messages
/// sent meanwhile, kept so that a connection that a service in its last moments took
/// into its backlog, and never accepted, is made again with nothing lost.
#[derive(Debug)]
pub(crate) struct Dial {
    pub(crate) path: PathBuf,
    pub(crate) name: String,
    pub(crate) proto: u16,
    pub(crate) hello: ([u8; HELLO_MAX], usize),
    /// The send buffer a connection gets (the queue's worth of messages).
    pub(crate) sndbuf: usize,
    /// The accounting page, passed with every greeting until one is answered.
    pub(crate) page: Option<OwnedFd>,
    /// Messages sent before the welcome, in order, and how many of them the current
    /// connection has.
    pub(crate) early: Vec<Vec<u8>>,
    pub(crate) written: usize,
}

/// One connection's far end (`struct doca_comm_channel_addr_t`): user data and
/// statistics. It stays valid until disconnected or the endpoint is destroyed.
#[derive(Debug)]
pub struct PeerAddr {
    pub(crate) id: u64,
    pub(crate) fd: std::sync::Mutex<Option<OwnedFd>>,
    pub(crate) raw: std::sync::atomic::AtomicI32,
    pub(crate) state: AtomicU8,
    user_data: AtomicU64,
    pub(crate) send_msgs: AtomicU64,
    pub(crate) send_bytes: AtomicU64,
    pub(crate) recv_msgs: AtomicU64,
    pub(crate) recv_bytes: AtomicU64,
    /// The largest message the peer said it sends.
    pub(crate) peer_max: AtomicU32,
    /// The connection's accounting page, once shared.
    pub(crate) ctl: std::sync::OnceLock<Ctl>,
    /// A client's connection until its service welcomed it.
    pub(crate) dial: std::sync::Mutex<Option<Box<Dial>>>,
    /// Counts the sockets this peer has had (a client's connection may be made again
    /// before the welcome): its endpoint watches each new one.
    pub(crate) generation: AtomicU32,
}

/// Identifies a peer of an endpoint (Rust face; the C face uses `&PeerAddr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct PeerId(pub(crate) u64);

impl PeerAddr {
    pub(crate) fn new(id: u64, fd: Option<OwnedFd>, state: u8) -> Box<PeerAddr> {
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
            dial: std::sync::Mutex::new(None),
            generation: AtomicU32::new(0),
        })
    }

    pub(crate) fn state(&self) -> u8 {
        self.state.load(Ordering::Acquire)
    }

    /// `doca_comm_channel_peer_addr_update_info`: moves a client's connection on and
    /// says where it is: `CONNECTION_INPROGRESS` until the service has welcomed it,
    /// `CONNECTION_ABORTED` once it ended (or could not be made).
    pub fn update_info(&self) -> Result<()> {
        if matches!(self.state(), CONNECTING | HANDSHAKE) {
            self.advance()?;
        }
        match self.state() {
            CONNECTED => Ok(()),
            CLOSED => Err(Error::with_context(
                ErrorCode::ConnectionAborted,
                "the connection ended; disconnect the peer address to free it",
            )),
            _ => Err(Error::new(ErrorCode::ConnectionInProgress)),
        }
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
        let Some(queued) = queued_bytes(fd) else {
            return 0;
        };
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

    pub(crate) fn close(&self) {
        self.state.store(CLOSED, Ordering::Release);
        self.raw.store(-1, Ordering::Release);
        *self.fd.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}
