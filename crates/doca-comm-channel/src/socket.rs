//! The sockets underneath the comm channel: `SOCK_SEQPACKET` Unix sockets (messages
//! keep their bounds) in a private directory of this user, one per (representor,
//! service); messages with a descriptor attached; the epoll sets behind the event
//! channels. Everything is non-blocking and never raises `SIGPIPE`.

use crate::{Error, ErrorCode, RUNTIME_DIR_ENV, Result};
use rustix::event::epoll;
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use rustix::io::Errno;
use rustix::net::{
    AddressFamily, RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags, SendAncillaryBuffer,
    SendAncillaryMessage, SendFlags, SocketAddrUnix, SocketFlags, SocketType,
};
use std::io::{IoSlice, IoSliceMut};
use std::mem::MaybeUninit;
use std::path::{Path, PathBuf};

/// An epoll set (an event channel); refused when the process is out of descriptors.
pub(crate) fn epoll() -> Result<OwnedFd> {
    epoll::create(epoll::CreateFlags::CLOEXEC)
        .map_err(|e| os_error("cannot create an event channel (epoll set)", e))
}

/// Adds `fd` to the set `ep`, reporting `data` when `flags` happen.
pub(crate) fn epoll_add(ep: &OwnedFd, fd: BorrowedFd<'_>, flags: epoll::EventFlags, data: u64) {
    let _ = epoll::add(ep, fd, epoll::EventData::new_u64(data), flags);
}

/// Removes descriptor number `fd` from the set `ep` (a number not in the set is refused
/// harmlessly).
pub(crate) fn epoll_del(ep: &OwnedFd, fd: RawFd) {
    // SAFETY: the number is only passed to epoll_ctl, which refuses one that is closed.
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let _ = epoll::delete(ep, fd);
}

/// The data of up to `N` events ready in the set `ep`, without waiting.
pub(crate) fn epoll_ready<const N: usize>(ep: &OwnedFd, out: &mut [u64; N]) -> usize {
    let mut evs = [MaybeUninit::<epoll::Event>::uninit(); N];
    let zero = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    match epoll::wait(ep, &mut evs, Some(&zero)) {
        Ok((ready, _)) => {
            for (o, ev) in out.iter_mut().zip(ready.iter()) {
                *o = ev.data.u64();
            }
            ready.len()
        }
        Err(_) => 0,
    }
}

/// A new non-blocking `SOCK_SEQPACKET` Unix socket.
pub(crate) fn seqpacket() -> Result<OwnedFd> {
    rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::SEQPACKET,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|e| os_error("cannot create a socket", e))
}

/// The address of the socket file at `path`.
pub(crate) fn unix_addr(path: &Path) -> Result<SocketAddrUnix> {
    use std::os::unix::ffi::OsStrExt;
    // The path and its NUL must fit sun_path (108 bytes on Linux).
    if path.as_os_str().as_bytes().len() >= 108 {
        return Err(too_long(path));
    }
    SocketAddrUnix::new(path).map_err(|_| too_long(path))
}

fn too_long(path: &Path) -> Error {
    Error::invalid(format!(
        "the socket path {} is too long; set {RUNTIME_DIR_ENV} to a shorter directory",
        path.display()
    ))
}

/// An operating system error, with what was being done.
pub(crate) fn os_error(what: &str, e: Errno) -> Error {
    Error::with_context(
        ErrorCode::OperatingSystem,
        format!("{what}: {}", std::io::Error::from(e)),
    )
}

/// Connects `sock` to `addr` (`AGAIN` while the listener's backlog is full).
pub(crate) fn connect(sock: &OwnedFd, addr: &SocketAddrUnix) -> std::result::Result<(), Errno> {
    rustix::net::connect(sock, addr)
}

/// Binds `sock` to `addr` and listens with room for `backlog` connections.
pub(crate) fn bind_listen(sock: &OwnedFd, addr: &SocketAddrUnix, backlog: i32) -> Result<()> {
    rustix::net::bind(sock, addr).map_err(|e| os_error("cannot bind the service socket", e))?;
    rustix::net::listen(sock, backlog)
        .map_err(|e| os_error("cannot listen on the service socket", e))
}

/// A connection waiting on `listener`, if any (non-blocking, close-on-exec).
pub(crate) fn accept(listener: &OwnedFd) -> Option<OwnedFd> {
    rustix::net::accept_with(listener, SocketFlags::NONBLOCK | SocketFlags::CLOEXEC).ok()
}

/// Room for `bytes` queued in the socket's send buffer.
pub(crate) fn set_send_buffer(fd: BorrowedFd<'_>, bytes: usize) {
    let _ = rustix::net::sockopt::set_socket_send_buffer_size(fd, bytes);
}

/// Bytes queued in a socket's send buffer and not taken by the far end (`SIOCOUTQ`),
/// or `None` for a descriptor number that is not an open socket.
pub(crate) fn queued_bytes(fd: RawFd) -> Option<usize> {
    let mut queued: libc::c_int = 0;
    // SAFETY: SIOCOUTQ writes one int; the number is a socket of this process (or,
    // after a close, a number the call rejects or answers harmlessly). rustix has no
    // wrapper for this request.
    if unsafe { libc::ioctl(fd, libc::TIOCOUTQ, &mut queued) } != 0 || queued <= 0 {
        return None;
    }
    Some(queued as usize)
}

/// Sends `msg` on `sock`, with descriptor `fd` attached (SCM_RIGHTS) when given.
pub(crate) fn send_with_fd(
    sock: &OwnedFd,
    msg: &[u8],
    fd: Option<BorrowedFd<'_>>,
) -> std::result::Result<usize, Errno> {
    send_parts_fd(sock.as_fd(), &[], msg, fd)
}

/// Sends `head` then `msg` as one message on `sock`, with descriptor `fd` attached
/// (SCM_RIGHTS) when given.
pub(crate) fn send_parts_fd(
    sock: BorrowedFd<'_>,
    head: &[u8],
    msg: &[u8],
    fd: Option<BorrowedFd<'_>>,
) -> std::result::Result<usize, Errno> {
    let iov = [IoSlice::new(head), IoSlice::new(msg)];
    let skip = usize::from(head.is_empty());
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    let fds;
    if let Some(fd) = fd {
        fds = [fd];
        control.push(SendAncillaryMessage::ScmRights(&fds));
    }
    rustix::net::sendmsg(
        sock,
        &iov[skip..],
        &mut control,
        SendFlags::DONTWAIT | SendFlags::NOSIGNAL,
    )
}

/// Receives one message into `buf` with `flags` (`TRUNC`: the length returned is the
/// message's, which may exceed the buffer), with the first descriptor it carries (any
/// others are closed).
pub(crate) fn recv_with_fd(
    sock: BorrowedFd<'_>,
    buf: &mut [u8],
    flags: RecvFlags,
) -> std::result::Result<(usize, Option<OwnedFd>), Errno> {
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(4))];
    let mut control = RecvAncillaryBuffer::new(&mut space);
    let mut iov = [IoSliceMut::new(buf)];
    let r = rustix::net::recvmsg(
        sock,
        &mut iov,
        &mut control,
        RecvFlags::DONTWAIT | RecvFlags::CMSG_CLOEXEC | flags,
    )?;
    let mut got = None;
    for m in control.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = m {
            for fd in fds {
                // Every descriptor received is ours; the first is kept.
                if got.is_none() {
                    got = Some(fd);
                }
            }
        }
    }
    Ok((r.bytes, got))
}

/// Receives one message into `buf` (no descriptors), with `flags`; the length is the
/// message's with `TRUNC`.
pub(crate) fn recv(
    sock: BorrowedFd<'_>,
    buf: &mut [u8],
    flags: RecvFlags,
) -> std::result::Result<usize, Errno> {
    rustix::net::recv(sock, buf, RecvFlags::DONTWAIT | flags).map(|(_, n)| n)
}

/// This user's directory of service sockets, made private (0700) and checked.
pub(crate) fn runtime_dir() -> Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
    let uid = rustix::process::getuid().as_raw();
    let base = std::env::var_os(RUNTIME_DIR_ENV)
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(format!("/tmp/doca-sw-{uid}")));
    let dir = base.join("cc");
    for d in [&base, &dir] {
        match std::fs::DirBuilder::new().mode(0o700).create(d) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(Error::with_context(
                    ErrorCode::NotPermitted,
                    format!(
                        "cannot make the comm channel directory {}: {e}",
                        d.display()
                    ),
                ));
            }
        }
        let m = std::fs::symlink_metadata(d).map_err(|e| {
            Error::with_context(ErrorCode::NotPermitted, format!("{}: {e}", d.display()))
        })?;
        if !m.is_dir() || m.uid() != uid || m.permissions().mode() & 0o077 != 0 {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                format!(
                    "{} must be a directory of this user that others cannot reach (mode 0700)",
                    d.display()
                ),
            ));
        }
    }
    Ok(dir)
}

/// The socket of service `name` listened for with the representor of host function
/// `pci`: the name is hashed, so that any name fits a socket path.
pub(crate) fn service_path(pci: &str, name: &str, proto: u16) -> Result<PathBuf> {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    if proto != crate::HELLO_VERSION {
        h = (h ^ u64::from(proto)).wrapping_mul(0x0100_0000_01b3);
    }
    for &b in name.as_bytes() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    Ok(runtime_dir()?.join(format!("{pci}-{h:016x}")))
}

/// The raw number of a descriptor, for the peer table's lock-free sends.
pub(crate) fn raw(fd: &OwnedFd) -> RawFd {
    fd.as_raw_fd()
}
