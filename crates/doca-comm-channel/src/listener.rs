//! The two ways an endpoint starts: the DPU side listens for a service (and accepts its
//! connections), the host side connects to one; both greet with a hello that names the
//! service and the protocol.

use crate::ctl::Ctl;
use crate::peer::{CONNECTED, CONNECTING, HANDSHAKE, PeerAddr, PeerId};
use crate::socket::{
    accept, bind_listen, connect, epoll_add, raw, send_with_fd, seqpacket, service_path,
    set_send_buffer, unix_addr,
};
use crate::{
    COMCH_VERSION, Endpoint, Error, ErrorCode, HELLO_MAGIC, HELLO_MAX, MAX_CONNECTIONS, Mode,
    Result, bad_state, check_name, invalid,
};
use doca_core::device::Role;
use rustix::event::epoll::EventFlags;
use rustix::fd::{AsFd, OwnedFd};
use rustix::io::Errno;
use std::sync::atomic::Ordering;

pub(crate) fn hello(name: &str, max_msg: u16, proto: u16) -> ([u8; HELLO_MAX], usize) {
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
pub(crate) fn check_hello(b: &[u8], name: &str, proto: u16) -> Option<u16> {
    if b.len() < 18 || &b[..8] != HELLO_MAGIC {
        return None;
    }
    let version = u16::from_le_bytes([b[8], b[9]]);
    let n = u16::from_le_bytes([b[10], b[11]]) as usize;
    let max = u16::from_le_bytes([b[16], b[17]]);
    (version == proto && b.len() == 18 + n && &b[18..] == name.as_bytes() && max > 0).then_some(max)
}

impl Endpoint {
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
        let addr = unix_addr(&path)?;
        let sock = seqpacket()?;
        // A socket file left by a process that is gone is replaced; a live one is not.
        if path.exists() {
            let probe = seqpacket()?;
            match connect(&probe, &addr) {
                Ok(()) | Err(Errno::AGAIN) => {
                    return Err(Error::with_context(
                        ErrorCode::InUse,
                        format!("service '{name}' is already served for this host function"),
                    ));
                }
                Err(_) => {
                    let _ = std::fs::remove_file(&path);
                }
            }
        }
        if let Err(e) = bind_listen(&sock, &addr, MAX_CONNECTIONS as i32) {
            let _ = std::fs::remove_file(&path);
            return Err(e);
        }
        epoll_add(&self.recv_ep, sock.as_fd(), EventFlags::IN, 0);
        epoll_add(&self.service_ep, sock.as_fd(), EventFlags::IN, 0);
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
        unix_addr(&path)?;
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
        let bytes = usize::from(self.send_q) * (usize::from(self.max_msg) + 512);
        set_send_buffer(fd, bytes);
        epoll_add(&self.recv_ep, fd.as_fd(), EventFlags::IN, id);
        epoll_add(&self.send_ep, fd.as_fd(), EventFlags::OUT, id);
    }

    /// Accepts new connections (service) or retries the connection (client).
    pub(crate) fn progress(&mut self) {
        match &self.mode {
            Mode::Idle => {}
            Mode::Service { .. } => {
                while let Mode::Service { listener, .. } = &self.mode
                    && let Some(fd) = accept(listener)
                {
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
                let sock = match seqpacket() {
                    Ok(sock) => sock,
                    Err(e) => {
                        self.connect_err = Some(e);
                        return;
                    }
                };
                self.connect_err = None;
                let Ok(addr) = unix_addr(path) else {
                    return;
                };
                if connect(&sock, &addr).is_err() {
                    return; // Not there yet (or its backlog is full): try again later.
                }
                let (h, n) = hello(name, self.max_msg, self.proto);
                let page = Ctl::new_page();
                let sent = send_with_fd(&sock, &h[..n], page.as_ref().map(|(fd, _)| fd.as_fd()));
                if sent != Ok(n) {
                    return;
                }
                if let Some((_, c)) = page {
                    c.set_recv_q(self.recv_q);
                    let _ = p.ctl.set(c);
                }
                let id = p.id;
                self.add_peer_fd(&sock, id);
                let p = &self.peers[0];
                p.raw.store(raw(&sock), Ordering::Release);
                *p.fd.lock().unwrap_or_else(|e| e.into_inner()) = Some(sock);
                p.state.store(CONNECTED, Ordering::Release);
                self.hot = Some(id);
                if self.proto == COMCH_VERSION {
                    self.joined.push(id);
                }
            }
        }
    }
}
