//! A connection's far end, as an endpoint keeps it.

use crate::MAX_MESSAGE_SIZE;
use crate::ctl::Ctl;
use crate::socket::queued_bytes;
use rustix::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicU8, AtomicU32, AtomicU64, Ordering};

/// A peer's connection state.
pub(crate) const CONNECTING: u8 = 0;
pub(crate) const HANDSHAKE: u8 = 1;
pub(crate) const CONNECTED: u8 = 2;
pub(crate) const CLOSED: u8 = 3;

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
