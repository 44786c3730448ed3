//! A context's connections: their states, accepting, rejecting and ending them.

use super::*;
use doca_core::Error;
use doca_core::lock;

/// Connections of a context that hold a place (exported, connected, asked for,
/// connecting).
pub(super) fn live(conns: &[Arc<Connection>]) -> usize {
    conns
        .iter()
        .filter(|c| {
            matches!(
                c.state.load(Ordering::Acquire),
                C_EXPORTED | C_CONNECTED | C_REQUESTED | C_CONNECTING
            )
        })
        .count()
}

/// The context has no connection left (`FULL`).
pub(super) fn full(max: usize) -> Error {
    Error::with_context(
        ErrorCode::Full,
        format!(
            "all {max} connections of the context are in use (doca_rdma_set_max_num_connections)"
        ),
    )
}

impl Connection {
    pub(super) fn new(
        owner: &Arc<Shared>,
        id: u32,
        state: u8,
        user_data: Data,
        req: u64,
        peer: Option<std::net::SocketAddr>,
    ) -> Arc<Connection> {
        Arc::new(Connection {
            id,
            state: AtomicU8::new(state),
            user_data: AtomicU64::new(user_data.0),
            owner: Arc::downgrade(owner),
            req,
            peer: Mutex::new(peer),
            direct: std::sync::OnceLock::new(),
        })
    }

    /// `doca_rdma_connection_get_id`.
    pub fn id(&self) -> u32 {
        self.id
    }
    /// `doca_rdma_connection_get_user_data`.
    pub fn user_data(&self) -> Data {
        Data(self.user_data.load(Ordering::Relaxed))
    }
    /// `doca_rdma_connection_set_user_data`.
    pub fn set_user_data(&self, d: Data) {
        self.user_data.store(d.0, Ordering::Relaxed);
    }
    /// Whether the connection is connected (and not ended since).
    pub fn is_connected(&self) -> bool {
        self.state.load(Ordering::Acquire) == C_CONNECTED
    }

    /// Whether the connection ended (disconnected, failed or rejected).
    pub fn has_ended(&self) -> bool {
        matches!(
            self.state.load(Ordering::Acquire),
            C_DISCONNECTED | C_FAILED | C_REJECTED
        )
    }

    /// The peer's address, for a connection of the connection manager.
    pub fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        *lock(&self.peer)
    }

    /// `doca_rdma_connection_accept`: accepts a peer's request (reported by
    /// [`ConnectionEvent::Requested`]); the connection is up once
    /// [`ConnectionEvent::Established`] is reported.
    pub fn accept(&self) -> Result<()> {
        let s = self
            .owner
            .upgrade()
            .ok_or_else(|| Error::bad_state("the RDMA context is gone"))?;
        if self
            .state
            .compare_exchange(
                C_REQUESTED,
                C_CONNECTING,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            return Err(Error::with_context(
                ErrorCode::ConnectionAborted,
                "the connection is not a request waiting for an answer",
            ));
        }
        let nic = lock(&s.nic);
        let nic = nic
            .as_ref()
            .ok_or_else(|| Error::bad_state("the RDMA context is stopping"))?;
        let key = random_u64()?;
        // SAFETY: a control command names no memory.
        unsafe {
            nic.submit(Cmd::Accept {
                req: self.req,
                conn: self.id,
                key,
            })
        };
        Ok(())
    }

    /// `doca_rdma_connection_reject`.
    pub fn reject(&self) -> Result<()> {
        let s = self
            .owner
            .upgrade()
            .ok_or_else(|| Error::bad_state("the RDMA context is gone"))?;
        if self
            .state
            .compare_exchange(C_REQUESTED, C_REJECTED, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return Err(Error::with_context(
                ErrorCode::ConnectionAborted,
                "the connection is not a request waiting for an answer",
            ));
        }
        if let Some(nic) = lock(&s.nic).as_ref() {
            // SAFETY: a control command names no memory.
            unsafe { nic.submit(Cmd::Reject { req: self.req }) };
        }
        Ok(())
    }

    /// `doca_rdma_connection_disconnect`: the peer is told; tasks in flight on the
    /// connection end with an error; the context's other connections go on. A
    /// connection that has ended already (the peer disconnected: this is how DOCA's
    /// samples acknowledge the disconnect callback; it failed; it was rejected; it was
    /// disconnected before) is left as it is, with success. A request not answered yet
    /// is `BAD_STATE` (accept or reject it), one not connected yet `NOT_CONNECTED`.
    pub fn disconnect(&self) -> Result<()> {
        match self.state.compare_exchange(
            C_CONNECTED,
            C_DISCONNECTED,
            Ordering::AcqRel,
            Ordering::Acquire,
        ) {
            Ok(_) => {}
            Err(C_DISCONNECTED | C_FAILED | C_REJECTED) => return Ok(()),
            Err(C_REQUESTED) => {
                return Err(Error::bad_state(
                    "the connection is a peer's request not answered yet: accept or reject it",
                ));
            }
            Err(_) => {
                return Err(Error::with_context(
                    ErrorCode::NotConnected,
                    "the connection is not connected yet (connect it, or wait for its established callback)",
                ));
            }
        }
        if let Some(s) = self.owner.upgrade()
            && let Some(nic) = lock(&s.nic).as_ref()
        {
            // SAFETY: a control command names no memory.
            unsafe { nic.submit(Cmd::Disconnect { conn: self.id }) };
        }
        Ok(())
    }
}
