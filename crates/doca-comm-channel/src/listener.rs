//! The two ways an endpoint starts: the DPU side listens for a service (and accepts its
//! connections), the host side connects to one; both greet with a hello that names the
//! service and the protocol.

use crate::ctl::Ctl;
use crate::peer::{CONNECTED, CONNECTING, Dial, HANDSHAKE, PeerAddr, PeerId};
use crate::socket::{
    accept, bind_listen, connect, epoll_add, raw, recv_with_fd, send_parts_fd, send_with_fd,
    seqpacket, service_path, set_send_buffer, unix_addr,
};
use crate::{
    COMCH_VERSION, Endpoint, Error, ErrorCode, HELLO_MAGIC, HELLO_MAX, MAX_CONNECTIONS, Mode,
    Result, check_name,
};
use doca_core::device::Role;
use rustix::event::epoll::EventFlags;
use rustix::fd::{AsFd, BorrowedFd};
use rustix::io::Errno;
use rustix::net::RecvFlags;
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
            .ok_or_else(|| Error::bad_state("set the endpoint's device before listening"))?;
        if dev.as_devinfo().role() != Role::Dpu {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "services listen on the DPU side; a host endpoint connects",
            ));
        }
        let rep = self.rep.as_ref().ok_or_else(|| {
            Error::bad_state("set the representor of the host function to serve before listening")
        })?;
        if rep.as_devinfo().parent() != dev {
            return Err(Error::invalid(
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
            .ok_or_else(|| Error::bad_state("set the endpoint's device before connecting"))?;
        if dev.as_devinfo().role() != Role::Host {
            return Err(Error::with_context(
                ErrorCode::NotSupported,
                "the host side connects; a DPU endpoint listens",
            ));
        }
        let path = service_path(&dev.as_devinfo().pci_addr_str(), name, self.proto)?;
        unix_addr(&path)?;
        let page = Ctl::new_page();
        let id = self.next_id;
        self.next_id += 1;
        let p = PeerAddr::new(id, None, CONNECTING);
        if let Some((_, c)) = &page {
            c.set_recv_q(self.recv_q);
        }
        let (fd, ctl) = page.unzip();
        if let Some(c) = ctl {
            let _ = p.ctl.set(c);
        }
        *p.dial.lock().unwrap_or_else(|e| e.into_inner()) = Some(Box::new(Dial {
            path,
            name: name.to_string(),
            proto: self.proto,
            hello: hello(name, self.max_msg, self.proto),
            sndbuf: self.send_buffer(),
            page: fd,
            early: Vec::new(),
            written: 0,
        }));
        self.mode = Mode::Client {
            name: name.to_string(),
        };
        self.peers.push(p);
        self.dialed = 0;
        self.welcomed = false;
        self.progress();
        Ok(PeerId(id))
    }

    /// A connection's send buffer: its queue's worth of messages.
    fn send_buffer(&self) -> usize {
        usize::from(self.send_q) * (usize::from(self.max_msg) + 512)
    }

    fn add_peer_fd(&self, fd: BorrowedFd<'_>, id: u64) {
        set_send_buffer(fd, self.send_buffer());
        epoll_add(&self.recv_ep, fd, EventFlags::IN, id);
        epoll_add(&self.send_ep, fd, EventFlags::OUT, id);
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
                        // Turned away: a welcome that offers nothing (largest message
                        // 0), and the connection ends.
                        if let Mode::Service { name, .. } = &self.mode {
                            let (mut w, k) = hello(name, self.max_msg, self.proto);
                            w[16..18].fill(0);
                            let _ = send_with_fd(&fd, &w[..k], None);
                        }
                        continue;
                    }
                    let id = self.next_id;
                    self.next_id += 1;
                    self.add_peer_fd(fd.as_fd(), id);
                    self.peers.push(PeerAddr::new(id, Some(fd), HANDSHAKE));
                }
            }
            Mode::Client { .. } => {
                let Some(p) = self.peers.first() else {
                    return;
                };
                if matches!(p.state(), CONNECTING | HANDSHAKE) {
                    self.connect_err = p.advance().err();
                }
                let fd = p.raw.load(Ordering::Acquire);
                let generation = p.generation.load(Ordering::Acquire);
                if fd >= 0 && generation != self.dialed {
                    // A new socket (the first, or one made again before the welcome):
                    // watched from now on.
                    self.dialed = generation;
                    // SAFETY: the peer's socket stays open while its number is not -1,
                    // and the endpoint is the one that closes it.
                    self.add_peer_fd(unsafe { BorrowedFd::borrow_raw(fd) }, p.id);
                }
                if p.is_connected() && !self.welcomed {
                    self.welcomed = true;
                    self.hot = Some(p.id);
                    if self.proto == COMCH_VERSION {
                        self.joined.push(p.id);
                    }
                }
            }
        }
    }
}

impl PeerAddr {
    /// Moves a client's connection on (its endpoint, and `update_info` without it):
    /// connects and greets, writes what was sent meanwhile, and takes the service's
    /// welcome. A connection that ends before the welcome (one a service in its last
    /// moments took into its backlog and never accepted) is made again, and what was
    /// sent on it is sent again: the service never read it. `Err` only when no socket
    /// can be had.
    pub(crate) fn advance(&self) -> Result<()> {
        let mut guard = self.dial.lock().unwrap_or_else(|e| e.into_inner());
        let Some(d) = guard.as_mut() else {
            return Ok(());
        };
        if self.state() == CONNECTING {
            let sock = seqpacket()?;
            let Ok(addr) = unix_addr(&d.path) else {
                return Ok(());
            };
            if connect(&sock, &addr).is_err() {
                return Ok(()); // Not there yet (or its backlog is full): try again later.
            }
            set_send_buffer(sock.as_fd(), d.sndbuf);
            let (h, n) = &d.hello;
            if send_with_fd(&sock, &h[..*n], d.page.as_ref().map(|f| f.as_fd())) != Ok(*n) {
                return Ok(());
            }
            d.written = 0;
            self.raw.store(raw(&sock), Ordering::Release);
            *self.fd.lock().unwrap_or_else(|e| e.into_inner()) = Some(sock);
            self.generation.fetch_add(1, Ordering::AcqRel);
            self.state.store(HANDSHAKE, Ordering::Release);
        }
        if self.state() != HANDSHAKE {
            return Ok(());
        }
        let fd = self.raw.load(Ordering::Acquire);
        // SAFETY: the socket stays open while its number is not -1; only this function
        // (under the dial lock) and the endpoint's close replace it.
        let sock = unsafe { BorrowedFd::borrow_raw(fd) };
        while d.written < d.early.len() {
            match send_parts_fd(sock, &[], &d.early[d.written], None) {
                Ok(_) => d.written += 1,
                Err(Errno::AGAIN | Errno::NOBUFS | Errno::INTR) => return Ok(()),
                Err(_) => {
                    self.redial();
                    return Ok(());
                }
            }
        }
        let mut h = [0u8; HELLO_MAX + 1];
        let mut r = recv_with_fd(sock, &mut h, RecvFlags::empty());
        if r.as_ref().err() == Some(&Errno::CONNRESET) {
            // The service went with messages of ours unread: reported once, ahead of
            // what it sent before it went (its welcome and more).
            r = recv_with_fd(sock, &mut h, RecvFlags::empty());
        }
        match r {
            Err(Errno::AGAIN | Errno::INTR) => {}
            Ok((n, _)) if n > 0 => {
                match check_hello(&h[..n.min(h.len())], &d.name, d.proto) {
                    Some(max) => {
                        self.peer_max.store(u32::from(max), Ordering::Relaxed);
                        self.state.store(CONNECTED, Ordering::Release);
                    }
                    // Turned away (the service is full), or something else listens
                    // there (another version): no connection.
                    None => self.close(),
                }
                *guard = None;
            }
            // Ended before the welcome: made again.
            _ => self.redial(),
        }
        Ok(())
    }

    /// Drops a client's socket that ended before the welcome; the next move connects
    /// again.
    fn redial(&self) {
        self.raw.store(-1, Ordering::Release);
        *self.fd.lock().unwrap_or_else(|e| e.into_inner()) = None;
        self.state.store(CONNECTING, Ordering::Release);
    }
}
