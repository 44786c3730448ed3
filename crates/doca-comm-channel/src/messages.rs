//! Messages: sending to a peer within the queues both sides agreed on, receiving the
//! next message from any peer, and the peer table.

use crate::ctl::{CTL_MAGIC, Ctl};
use crate::listener::check_hello;
use crate::peer::{CLOSED, CONNECTED, CONNECTING, HANDSHAKE, PeerAddr, PeerId};
use crate::socket::{epoll_del, epoll_ready, recv, recv_with_fd, send_parts_fd};
use crate::{
    COMCH_VERSION, Endpoint, Error, ErrorCode, HELLO_MAX, Mode, RecvError, Result, not_connected,
};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use rustix::io::Errno;
use rustix::net::RecvFlags;
use std::sync::atomic::Ordering;

impl Endpoint {
    pub(crate) fn peer(&self, id: PeerId) -> Result<&PeerAddr> {
        self.peers
            .iter()
            .find(|p| p.id == id.0)
            .map(|b| &**b)
            .ok_or_else(|| Error::invalid("the peer address is not one of this endpoint's peers"))
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
            return Err(Error::invalid("a message holds at least one byte"));
        }
        if head.len() + msg.len() > usize::from(self.max_msg) {
            return Err(Error::invalid(format!(
                "a {}-byte message is longer than the endpoint's largest ({} bytes)",
                msg.len(),
                usize::from(self.max_msg) - head.len()
            )));
        }
        if matches!(self.mode, Mode::Idle) {
            return Err(Error::bad_state(
                "the endpoint neither listens nor connects",
            ));
        }
        if matches!(self.peer(to)?.state(), CONNECTING | HANDSHAKE) {
            self.progress();
        }
        let p = self.peer(to)?;
        let state = p.state();
        match state {
            CONNECTING => {
                return Err(match &self.connect_err {
                    Some(e) => e.clone(),
                    None => Error::new(ErrorCode::Again),
                });
            }
            CLOSED => return Err(not_connected()),
            // Descriptors travel once the service has welcomed the connection.
            HANDSHAKE if pass.is_some() => return Err(Error::new(ErrorCode::Again)),
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
        if state == HANDSHAKE {
            // Kept until the welcome, so that a connection made again loses nothing;
            // a queue's worth at most, as a connection's socket holds.
            if let Some(d) = p.dial.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
                if d.early.len() >= usize::from(self.send_q) {
                    return Err(Error::with_context(
                        ErrorCode::Again,
                        "the service has not taken the connection yet, and a queue's worth of messages waits for it",
                    ));
                }
                d.early.push([head, msg].concat());
            }
            let _ = p.advance();
            p.send_msgs.fetch_add(1, Ordering::Relaxed);
            p.send_bytes.fetch_add(msg.len() as u64, Ordering::Relaxed);
            return Ok(());
        }
        let fd = p.raw.load(Ordering::Acquire);
        // SAFETY: the peer's socket stays open while the peer entry we borrow lives (a
        // closed one has the number -1, which the kernel refuses).
        let sock = unsafe { BorrowedFd::borrow_raw(fd) };
        // SAFETY: the descriptor to pass is the caller's, open for the call.
        let pass = pass.map(|f| unsafe { BorrowedFd::borrow_raw(f) });
        if let Err(e) = send_parts_fd(sock, head, msg, pass) {
            return match e {
                Errno::AGAIN | Errno::NOBUFS | Errno::INTR => Err(Error::new(ErrorCode::Again)),
                // The peer closed. What it sent before is still queued on this socket:
                // the socket stays, so that receiving hands those messages over first
                // and reports the end after them.
                Errno::PIPE | Errno::CONNRESET => {
                    if !self.lost.contains(&to.0) {
                        self.lost.push(to.0);
                    }
                    Err(not_connected())
                }
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

    /// Whether peer `id`'s socket is still open here.
    fn peer_open(&self, id: u64) -> bool {
        self.peers
            .iter()
            .any(|p| p.id == id && p.raw.load(Ordering::Acquire) >= 0)
    }

    pub(crate) fn drop_peer_fd(&mut self, id: PeerId) {
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
            return Err((
                Error::bad_state("the endpoint neither listens nor connects"),
                None,
            ));
        }
        // A peer whose end a send found: what it sent before it went comes first, then
        // its end.
        if let Some(&id) = self.lost.last() {
            match self.receive_from(id, buf) {
                Ok(Some(got)) => return Ok(got),
                // A buffer too short for the next message: it stays queued, and so
                // does the end behind it.
                Err(e) if self.peer_open(id) => return Err(e),
                r => {
                    self.lost.pop();
                    if self.hot == Some(id) {
                        self.hot = None;
                    }
                    // receive_from closed it where it saw the end; a socket with
                    // nothing more to give (or none) is closed here.
                    self.drop_peer_fd(PeerId(id));
                    return Err(r.err().unwrap_or((not_connected(), Some(PeerId(id)))));
                }
            }
        }
        // The peer that spoke last is asked first (one system call); the others, and new
        // connections, through epoll, at least every 16th call: also while the hot peer
        // always has a message, so that it cannot starve the others (nor hide their
        // ends).
        self.misses = self.misses.wrapping_add(1);
        let only_peer = matches!(self.mode, Mode::Client { .. }) && self.peers.len() == 1;
        let epoll_turn = !only_peer && self.misses.is_multiple_of(16);
        if let Some(id) = self.hot
            && !epoll_turn
        {
            match self.receive_from(id, buf) {
                Ok(Some(got)) => return Ok(got),
                Ok(None) => {}
                Err(e) => {
                    self.hot = None;
                    return Err(e);
                }
            }
            return Err((Error::new(ErrorCode::Again), None));
        }
        let mut ready = [0u64; 16];
        for _round in 0..4 {
            let n = epoll_ready(&self.recv_ep, &mut ready);
            if n == 0 {
                if matches!(self.mode, Mode::Client { .. }) {
                    self.progress();
                }
                return Err((Error::new(ErrorCode::Again), None));
            }
            for &id in &ready[..n] {
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
        // SAFETY: the peer's socket stays open while its entry lives and its number is
        // not -1 (closing sets it so first).
        let sock = unsafe { BorrowedFd::borrow_raw(fd) };
        let handshake = p.state() == HANDSHAKE;
        if handshake && matches!(self.mode, Mode::Client { .. }) {
            // The service's welcome (or the end of a connection it never accepted).
            self.progress();
            return Ok(None);
        }
        if handshake {
            let mut h = [0u8; HELLO_MAX + 1];
            let (n, page) = match recv_with_fd(sock, &mut h, RecvFlags::empty()) {
                Err(Errno::AGAIN) => return Ok(None),
                Ok(got) => got,
                Err(_) => (0, None),
            };
            match (n > 0)
                .then(|| check_hello(&h[..n.min(h.len())], name, self.proto))
                .flatten()
            {
                Some(max) => {
                    // The welcome: the client's sends count from here.
                    let (w, k) = crate::listener::hello(name, self.max_msg, self.proto);
                    if send_parts_fd(sock, &[], &w[..k], None) != Ok(k) {
                        self.drop_peer_fd(PeerId(id));
                        self.peers.retain(|p| p.id != id);
                        return Ok(None);
                    }
                    p.peer_max.store(u32::from(max), Ordering::Relaxed);
                    if let Some(page) = page
                        && let Some(c) = Ctl::map(page.as_fd(), false)
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
        let flags = if fits {
            RecvFlags::TRUNC
        } else {
            RecvFlags::PEEK | RecvFlags::TRUNC
        };
        let comch = self.proto == COMCH_VERSION && fits;
        let mut take = |got_fd: &mut Option<OwnedFd>| {
            if comch {
                // comch passes descriptors with some of its own messages.
                let (n, got) = recv_with_fd(sock, buf, RecvFlags::TRUNC)?;
                *got_fd = got;
                Ok(n)
            } else {
                recv(sock, buf, flags)
            }
        };
        let mut r = take(&mut self.got_fd);
        if r == Err(Errno::CONNRESET) {
            // The peer closed with messages of ours unread: the kernel reports that once,
            // ahead of the messages the peer sent before closing. Those are still queued
            // here and come first; the end of the connection is reported after them.
            r = take(&mut self.got_fd);
        }
        let n = match r {
            Ok(n) => n,
            Err(Errno::AGAIN | Errno::INTR) => return Ok(None),
            Err(_) => {
                self.drop_peer_fd(PeerId(id));
                return Err((not_connected(), Some(PeerId(id))));
            }
        };
        if n == 0 {
            // The far end closed the connection.
            self.drop_peer_fd(PeerId(id));
            return Err((not_connected(), Some(PeerId(id))));
        }
        if n > buf.len() {
            if fits {
                // Longer than the peer said it sends: it broke the protocol.
                self.drop_peer_fd(PeerId(id));
                return Err((
                    Error::invalid(
                        "the peer sent a message longer than it announced; disconnected",
                    ),
                    Some(PeerId(id)),
                ));
            }
            return Err((
                Error::invalid(format!(
                    "the next message is {n} bytes; the buffer holds {} (the message stays queued)",
                    buf.len()
                )),
                Some(PeerId(id)),
            ));
        }
        if !fits {
            // The message fits (peeked): take it (after the one report of an end with
            // messages unread, as above, which leaves the message queued).
            if recv(sock, buf, RecvFlags::empty()) == Err(Errno::CONNRESET) {
                let _ = recv(sock, buf, RecvFlags::empty());
            }
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
}
