//! The event channels: epoll sets that turn readable when receiving or sending may
//! proceed, or when connections wait to be accepted.

use crate::{Endpoint, Mode, Result};
use doca_core::Error;
use rustix::fd::{AsRawFd, RawFd};

impl Endpoint {
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
            return Err(Error::bad_state(
                "the endpoint neither listens nor connects",
            ));
        }
        self.progress();
        Ok(())
    }
}
