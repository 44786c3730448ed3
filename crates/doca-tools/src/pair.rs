//! The two-process modes of the tools: a host process and a DPU-side process that find
//! each other over the comm channel (the DPU side serves, the host connects) and pass
//! export descriptors and short text messages.

use doca_comm_channel::{Endpoint, PeerId};
use doca_core::device::{self, Capability, Role};
use doca_core::{Dev, DevRep, Error, ErrorCode, Result};
use std::time::{Duration, Instant};

/// Which side a tool plays (`--role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Side {
    /// The host: exports its memory or sync event and connects to the DPU side.
    Host,
    /// The DPU side: serves the comm channel, imports and runs the DMA jobs.
    Dpu,
}

/// Makes this process `side` of the machine (`DOCA_SW_ROLE`, when set, still rules).
pub fn become_side(side: Side) {
    device::set_build_role(match side {
        Side::Host => Role::Host,
        Side::Dpu => Role::Dpu,
    });
}

/// How long a side waits for the other before giving up.
pub const PEER_TIMEOUT: Duration = Duration::from_secs(120);

/// A connected pair's channel: the endpoint and the other side.
#[derive(Debug)]
pub struct Channel {
    /// The endpoint.
    pub ep: Endpoint,
    /// The other side (for the DPU side: once it has spoken).
    pub peer: Option<PeerId>,
}

/// The DPU side: serves `service` to the host function `rep_pci` with device `dev`.
pub fn serve(dev: &Dev, rep_pci: &str, service: &str) -> Result<Channel> {
    let rep: DevRep = dev.open_rep(rep_pci)?;
    let mut ep = Endpoint::new();
    ep.set_device(dev)?;
    ep.set_device_rep(&rep)?;
    ep.listen(service)?;
    Ok(Channel { ep, peer: None })
}

/// The host side: connects to `service` with device `dev`.
pub fn connect(dev: &Dev, service: &str) -> Result<Channel> {
    let mut ep = Endpoint::new();
    ep.set_device(dev)?;
    let peer = ep.connect(service)?;
    Ok(Channel {
        ep,
        peer: Some(peer),
    })
}

fn timed_out(what: &str) -> Error {
    Error::with_context(
        ErrorCode::TimeOut,
        format!(
            "{what}: the other side did not answer within {} s (is it running, with the matching device and representor?)",
            PEER_TIMEOUT.as_secs()
        ),
    )
}

impl Channel {
    /// Sends one message to the other side (waiting while the channel is not ready).
    pub fn send(&mut self, msg: &[u8]) -> Result<()> {
        let to = self.peer.ok_or_else(|| {
            Error::with_context(ErrorCode::BadState, "the other side has not spoken yet")
        })?;
        let t = Instant::now();
        loop {
            match self.ep.sendto(msg, to) {
                Ok(()) => return Ok(()),
                Err(e) if e.code() == ErrorCode::Again => {
                    crate::cleanup::interrupted()?;
                    if t.elapsed() > PEER_TIMEOUT {
                        return Err(timed_out("sending"));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The next message from the other side, as text.
    pub fn recv(&mut self) -> Result<String> {
        let mut buf = [0u8; doca_comm_channel::MAX_MESSAGE_SIZE as usize];
        let t = Instant::now();
        loop {
            match self.ep.recvfrom(&mut buf) {
                Ok((n, from)) => {
                    self.peer = Some(from);
                    return String::from_utf8(buf[..n].to_vec()).map_err(|_| {
                        Error::with_context(
                            ErrorCode::InvalidValue,
                            "the other side sent a message that is not text",
                        )
                    });
                }
                Err((e, _)) if e.code() == ErrorCode::Again => {
                    crate::cleanup::interrupted()?;
                    if t.elapsed() > PEER_TIMEOUT {
                        return Err(timed_out("waiting for a message"));
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err((e, _)) => return Err(e),
            }
        }
    }
}

/// Bytes as lowercase hex.
pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The bytes of lowercase or uppercase hex; `InvalidValue` for anything else.
pub fn unhex(s: &str) -> Result<Vec<u8>> {
    let bad = || Error::with_context(ErrorCode::InvalidValue, "the other side sent malformed hex");
    if !s.len().is_multiple_of(2) {
        return Err(bad());
    }
    (0..s.len() / 2)
        .map(|i| {
            u8::from_str_radix(s.get(2 * i..2 * i + 2).ok_or_else(bad)?, 16).map_err(|_| bad())
        })
        .collect()
}

/// The device for this side: `pci`, or the side's default (the DPU side's 03:00.0, the
/// host's first device with `cap`).
pub fn side_device(side: Side, pci: Option<&str>, cap: Capability) -> Result<Dev> {
    match (side, pci) {
        (Side::Dpu, None) => crate::open_device(Some("03:00.0"), cap),
        (_, p) => crate::open_device(p, cap),
    }
}
