//! The comm channel on tokio (feature `tokio`): [`AsyncEndpoint`] receives (and
//! sends) with `.await`, sleeping in tokio's epoll on the endpoint's event channels.
//!
//! ```no_run
//! # async fn f() -> doca_core::Result<()> {
//! use doca_comm_channel::Endpoint;
//! use doca_comm_channel::aio::AsyncEndpoint;
//! use doca_core::devinfo_list;
//!
//! let dev = devinfo_list()?[0].open()?;
//! let mut ep = Endpoint::new();
//! ep.set_device(&dev)?;
//! let server = ep.connect("my_service")?;
//! let mut ep = AsyncEndpoint::new(ep)?;
//! ep.send_to(b"hello", server).await?;
//! let mut buf = [0u8; 4080];
//! let (n, _from) = ep.recv_from(&mut buf).await.map_err(|(e, _)| e)?;
//! println!("{:?}", &buf[..n]);
//! # Ok(())
//! # }
//! ```

use crate::{Endpoint, PeerId};
use doca_core::aio::{EventFd, watch};
use doca_core::{Error, ErrorCode, Result};
use std::time::Duration;
use tokio::io::unix::AsyncFd;

/// Longest pause between send attempts while the peer's queue is full (the peer taking
/// its messages makes no event on this side).
const SEND_NAP_MAX: Duration = Duration::from_millis(1);

/// An [`Endpoint`] (listening or connected) whose receives and sends are awaited.
#[derive(Debug)]
pub struct AsyncEndpoint {
    recv: AsyncFd<EventFd>,
    service: AsyncFd<EventFd>,
    ep: Endpoint,
}

impl AsyncEndpoint {
    /// Wraps `ep`, which listens or connects already, registering its event channels
    /// with the current tokio runtime. `BadState` for an idle endpoint or outside a
    /// runtime.
    pub fn new(mut ep: Endpoint) -> Result<AsyncEndpoint> {
        ep.arm()?;
        let (_, recv) = ep.event_channels();
        Ok(AsyncEndpoint {
            recv: watch(recv)?,
            service: watch(ep.service_event_channel())?,
            ep,
        })
    }

    /// The endpoint, for its other calls (peers, statistics, disconnect).
    pub fn get_ref(&self) -> &Endpoint {
        &self.ep
    }

    /// The endpoint, mutably.
    pub fn get_mut(&mut self) -> &mut Endpoint {
        &mut self.ep
    }

    /// The endpoint back (its event channels leave tokio).
    pub fn into_inner(self) -> Endpoint {
        self.ep
    }

    /// The next whole message from any peer, as [`Endpoint::recvfrom`] gives it, once
    /// one arrives: new connections are taken meanwhile. `NotConnected` (with the peer)
    /// when a peer's connection ended; `InvalidValue` (the message stays queued) when
    /// `buf` is too short. Cancelling the future loses nothing.
    pub async fn recv_from(
        &mut self,
        buf: &mut [u8],
    ) -> std::result::Result<(usize, PeerId), (Error, Option<PeerId>)> {
        loop {
            // Ask every peer, not only the one that spoke last.
            self.ep.misses = 15;
            match self.ep.recvfrom(buf) {
                Err((e, _)) if e.code() == ErrorCode::Again => {}
                other => return other,
            }
            tokio::select! {
                r = self.recv.readable() => match r {
                    Ok(mut g) => g.clear_ready(),
                    Err(e) => return Err((reactor_gone(e), None)),
                },
                r = self.service.readable() => match r {
                    Ok(mut g) => g.clear_ready(),
                    Err(e) => return Err((reactor_gone(e), None)),
                },
            }
        }
    }

    /// Sends `msg` to `to`, waiting while the connection is being made or the peer's
    /// queue is full. Other refusals (`NotConnected`, `InvalidValue`) come back at once.
    pub async fn send_to(&mut self, msg: &[u8], to: PeerId) -> Result<()> {
        let mut nap = Duration::from_micros(20);
        loop {
            match self.ep.sendto(msg, to) {
                Err(e) if e.code() == ErrorCode::Again => {}
                other => return other,
            }
            tokio::time::sleep(nap).await;
            nap = (nap * 2).min(SEND_NAP_MAX);
        }
    }
}

fn reactor_gone(e: std::io::Error) -> Error {
    Error::with_context(
        ErrorCode::OperatingSystem,
        format!("the tokio reactor stopped watching the endpoint: {e}"),
    )
}
