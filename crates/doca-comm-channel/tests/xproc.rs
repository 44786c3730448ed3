//! The comm channel between two processes: a DPU-side service (this test binary run
//! again) and host-side clients.

#![allow(clippy::result_large_err)]

use doca_comm_channel::{Endpoint, MAX_MESSAGE_SIZE, PeerId};
use doca_core::ErrorCode;
use doca_testkit::peer::{self, Peer};
use std::time::{Duration, Instant};

mod common;
use common::device;

fn name(what: &str) -> String {
    format!("{what}-{}", std::process::id())
}

/// The service: echoes every message with "echo:" in front; "bye" ends it.
#[test]
fn service_process() {
    let Some(role) = peer::role() else {
        return;
    };
    let w: Vec<&str> = role.split_whitespace().collect();
    let dpu = device("dpu", "0000:03:00.0");
    let mut ep = Endpoint::new();
    ep.set_device(&dpu).unwrap();
    ep.set_device_rep(&dpu.open_rep(w[1]).unwrap()).unwrap();
    ep.set_max_msg_size(1024).unwrap();
    ep.set_send_queue_size(8).unwrap();
    ep.set_recv_queue_size(8).unwrap();
    ep.listen(w[0]).unwrap();
    peer::say("listening");
    let mut buf = [0u8; 1024];
    loop {
        match ep.recvfrom(&mut buf) {
            Ok((n, from)) => {
                if &buf[..n] == b"bye" {
                    break;
                }
                let mut reply = b"echo:".to_vec();
                reply.extend_from_slice(&buf[..n]);
                while let Err(e) = ep.sendto(&reply, from) {
                    assert_eq!(e.code(), ErrorCode::Again);
                }
            }
            Err((e, _)) if e.code() == ErrorCode::Again => {
                std::thread::sleep(Duration::from_micros(200))
            }
            Err((e, _)) if e.code() == ErrorCode::NotConnected => {}
            Err((e, _)) => panic!("{e}"),
        }
    }
}

/// 65 endpoints (five descriptors each) beside the other tests of this process: as
/// many descriptors as the system lets the process have.
fn raise_descriptor_limit() {
    let mut l = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `l` is a valid rlimit to fill and then to pass back.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut l) == 0 && l.rlim_cur < l.rlim_max {
            l.rlim_cur = l.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &l);
        }
    }
}

fn service(name: &str, rep: &str) -> Peer {
    let mut p = Peer::spawn("service_process", &format!("{name} {rep}"));
    assert_eq!(p.recv(), "listening");
    p
}

fn client(name: &str) -> (Endpoint, PeerId) {
    let mut ep = Endpoint::new();
    ep.set_device(&device("host", "0000:3b:00.0")).unwrap();
    let server = ep.connect(name).unwrap();
    (ep, server)
}

fn send(ep: &mut Endpoint, msg: &[u8], to: PeerId) {
    let t = Instant::now();
    loop {
        match ep.sendto(msg, to) {
            Ok(()) => return,
            Err(e) if e.code() == ErrorCode::Again => {
                assert!(t.elapsed() < Duration::from_secs(10), "never connected");
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("{e}"),
        }
    }
}

fn recv(ep: &mut Endpoint, buf: &mut [u8]) -> Result<(usize, PeerId), ErrorCode> {
    let t = Instant::now();
    loop {
        match ep.recvfrom(buf) {
            Err((e, _)) if e.code() == ErrorCode::Again => {
                if t.elapsed() > Duration::from_secs(10) {
                    return Err(ErrorCode::TimeOut);
                }
                std::thread::sleep(Duration::from_micros(200));
            }
            Err((e, _)) => return Err(e.code()),
            Ok(r) => return Ok(r),
        }
    }
}

#[test]
fn messages_go_both_ways_whole_with_statistics() {
    let n = name("echo");
    let s = service(&n, "0000:3b:00.0");
    let (mut ep, server) = client(&n);
    let mut buf = [0u8; 2048];
    for i in 0..50 {
        let msg = format!("message {i}");
        send(&mut ep, msg.as_bytes(), server);
        let (len, from) = recv(&mut ep, &mut buf).unwrap();
        assert_eq!(from, server);
        assert_eq!(&buf[..len], format!("echo:{msg}").as_bytes());
    }
    // Empty messages are refused; large ones keep their bounds.
    assert_eq!(
        ep.sendto(b"", server).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    send(&mut ep, b"1", server);
    let (len, _) = recv(&mut ep, &mut buf).unwrap();
    assert_eq!(&buf[..len], b"echo:1");
    let big = vec![7u8; 1000];
    send(&mut ep, &big, server);
    let (len, _) = recv(&mut ep, &mut buf).unwrap();
    assert_eq!(len, 1005);
    let p = ep.peer_addr(server).unwrap();
    assert_eq!(p.send_messages(), 52);
    assert_eq!(p.recv_messages(), 52);
    p.set_user_data(99);
    assert_eq!(ep.peer_addr(server).unwrap().user_data(), 99);
    assert_eq!(ep.peers(), vec![server]);
    send(&mut ep, b"bye", server);
    s.finish();
}

#[test]
fn too_long_messages_and_short_buffers_are_refused_and_nothing_is_lost() {
    let n = name("sizes");
    let s = service(&n, "0000:3b:00.0");
    let (mut ep, server) = client(&n);
    let too_long = vec![0u8; MAX_MESSAGE_SIZE as usize + 1];
    assert_eq!(
        ep.sendto(&too_long, server).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    send(&mut ep, b"0123456789", server);
    let mut small = [0u8; 4];
    let t = Instant::now();
    let e = loop {
        match ep.recvfrom(&mut small) {
            Err((e, _))
                if e.code() == ErrorCode::Again && t.elapsed() < Duration::from_secs(10) => {}
            Err((e, _)) => break e,
            Ok(_) => panic!("a 15-byte message fit in 4 bytes"),
        }
    };
    assert_eq!(e.code(), ErrorCode::InvalidValue);
    let mut buf = [0u8; 64];
    let (len, _) = recv(&mut ep, &mut buf).unwrap();
    assert_eq!(&buf[..len], b"echo:0123456789", "the message stayed queued");
    send(&mut ep, b"bye", server);
    s.finish();
}

#[test]
fn a_client_may_start_first_and_reaches_only_its_own_representors_service() {
    let n = name("late");
    let (mut ep, server) = client(&n);
    assert_eq!(
        ep.sendto(b"x", server).unwrap_err().code(),
        ErrorCode::Again
    );
    // A service for the other host function (b1:00.0) is not ours.
    let mut other = service(&n, "0000:b1:00.0");
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(
        ep.sendto(b"x", server).unwrap_err().code(),
        ErrorCode::Again
    );
    let s = service(&n, "0000:3b:00.0");
    send(&mut ep, b"hello", server);
    let mut buf = [0u8; 64];
    let (len, _) = recv(&mut ep, &mut buf).unwrap();
    assert_eq!(&buf[..len], b"echo:hello");
    send(&mut ep, b"bye", server);
    s.finish();
    other.kill();
}

#[test]
fn a_peer_that_dies_is_seen_as_not_connected() {
    let n = name("dies");
    let mut s = service(&n, "0000:3b:00.0");
    let (mut ep, server) = client(&n);
    send(&mut ep, b"hi", server);
    let mut buf = [0u8; 64];
    recv(&mut ep, &mut buf).unwrap();
    s.kill();
    assert_eq!(recv(&mut ep, &mut buf), Err(ErrorCode::NotConnected));
    assert_eq!(
        ep.sendto(b"x", server).unwrap_err().code(),
        ErrorCode::NotConnected
    );
    ep.disconnect(server).unwrap();
    assert_eq!(
        ep.sendto(b"x", server).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
}

#[test]
fn the_receive_channel_wakes_epoll_when_a_message_arrives() {
    let n = name("events");
    let s = service(&n, "0000:3b:00.0");
    let (mut ep, server) = client(&n);
    send(&mut ep, b"ping", server);
    let (_, recv_fd) = ep.event_channels();
    ep.arm().unwrap();
    let mut p = libc::pollfd {
        fd: recv_fd,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let r = unsafe { libc::poll(&mut p, 1, 10_000) };
    assert_eq!(r, 1, "the receive channel turned readable");
    let mut buf = [0u8; 64];
    let (len, _) = recv(&mut ep, &mut buf).unwrap();
    assert_eq!(&buf[..len], b"echo:ping");
    send(&mut ep, b"bye", server);
    s.finish();
}

#[test]
fn strangers_on_the_socket_are_dropped_and_the_service_goes_on() {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    let n = name("hostile");
    let s = service(&n, "0000:3b:00.0");
    // Find the socket: the only one of this host function whose service is ours. A
    // stream connect to a seqpacket socket is refused; a seqpacket stranger sends junk.
    // SAFETY: getuid cannot fail.
    let uid = unsafe { libc::getuid() };
    let dir = std::path::PathBuf::from(format!("/tmp/doca-sw-{uid}/cc"));
    let _ = UnixStream::connect(dir.join("nothing")).map(|mut x| x.write_all(b"junk"));
    let (mut ep, server) = client(&n);
    for junk in [&b"DOCASWCC"[..], b"", &[0xffu8; 300][..]] {
        // A raw seqpacket connection to every service socket of 3b:00.0 that sends junk.
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with("0000:3b:00.0-") {
                continue;
            }
            // SAFETY: plain socket calls on a descriptor we own and close.
            unsafe {
                let fd = libc::socket(libc::AF_UNIX, libc::SOCK_SEQPACKET, 0);
                let mut a: libc::sockaddr_un = std::mem::zeroed();
                a.sun_family = libc::AF_UNIX as libc::sa_family_t;
                let p = e.path();
                let b = p.as_os_str().as_encoded_bytes();
                for (d, c) in a.sun_path.iter_mut().zip(b) {
                    *d = *c as libc::c_char;
                }
                if libc::connect(
                    fd,
                    (&raw const a).cast(),
                    std::mem::size_of::<libc::sockaddr_un>() as u32,
                ) == 0
                {
                    libc::send(fd, junk.as_ptr().cast(), junk.len(), libc::MSG_NOSIGNAL);
                }
                libc::close(fd);
            }
        }
    }
    send(&mut ep, b"still there?", server);
    let mut buf = [0u8; 64];
    let (len, _) = recv(&mut ep, &mut buf).unwrap();
    assert_eq!(&buf[..len], b"echo:still there?");
    send(&mut ep, b"bye", server);
    s.finish();
}

#[test]
fn misuse_gets_doca_errors() {
    let mut ep = Endpoint::new();
    assert_eq!(ep.listen("x").unwrap_err().code(), ErrorCode::BadState);
    assert_eq!(ep.connect("x").unwrap_err().code(), ErrorCode::BadState);
    assert_eq!(
        ep.set_max_msg_size(0).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    assert_eq!(
        ep.set_send_queue_size(0).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let host = device("host", "0000:3b:00.0");
    ep.set_device(&host).unwrap();
    assert_eq!(ep.listen("x").unwrap_err().code(), ErrorCode::NotSupported);
    assert_eq!(ep.connect("").unwrap_err().code(), ErrorCode::InvalidValue);
    assert_eq!(
        ep.connect(&"n".repeat(121)).unwrap_err().code(),
        ErrorCode::InvalidValue
    );
    let mut buf = [0u8; 8];
    assert_eq!(
        ep.recvfrom(&mut buf).unwrap_err().0.code(),
        ErrorCode::BadState
    );
    let dpu = device("dpu", "0000:03:00.0");
    let mut d = Endpoint::new();
    d.set_device(&dpu).unwrap();
    assert_eq!(d.connect("x").unwrap_err().code(), ErrorCode::NotSupported);
    assert_eq!(
        d.listen("x").unwrap_err().code(),
        ErrorCode::BadState,
        "no representor"
    );
    d.set_device_rep(&dpu.open_rep("0000:3b:00.0").unwrap())
        .unwrap();
    let n = name("twice");
    d.listen(&n).unwrap();
    let mut e = Endpoint::new();
    e.set_device(&dpu).unwrap();
    e.set_device_rep(&dpu.open_rep("0000:3b:00.0").unwrap())
        .unwrap();
    assert_eq!(e.listen(&n).unwrap_err().code(), ErrorCode::InUse);
    assert_eq!(
        d.set_max_msg_size(10).unwrap_err().code(),
        ErrorCode::BadState
    );
    drop(d);
    e.listen(&n).unwrap();
}

#[test]
fn queues_are_enforced_and_in_flight_messages_counted() {
    let n = name("queues");
    let dpu = device("dpu", "0000:03:00.0");
    let mut server = Endpoint::new();
    server.set_device(&dpu).unwrap();
    server
        .set_device_rep(&dpu.open_rep("0000:3b:00.0").unwrap())
        .unwrap();
    server.set_recv_queue_size(3).unwrap();
    server.listen(&n).unwrap();
    let (mut ep, to) = client(&n);
    send(&mut ep, b"m0", to);
    let mut buf = [0u8; 64];
    let (len, from) = recv(&mut server, &mut buf).unwrap();
    assert_eq!(&buf[..len], b"m0");
    // The service takes at most 3 messages in its queue: a 4th waits (AGAIN).
    for m in [&b"m1"[..], b"m2", b"m3"] {
        ep.sendto(m, to).unwrap();
    }
    assert_eq!(ep.peer_addr(to).unwrap().send_in_flight_messages(), 3);
    assert_eq!(ep.sendto(b"m4", to).unwrap_err().code(), ErrorCode::Again);
    let (len, _) = recv(&mut server, &mut buf).unwrap();
    assert_eq!(&buf[..len], b"m1");
    assert_eq!(ep.peer_addr(to).unwrap().send_in_flight_messages(), 2);
    ep.sendto(b"m4", to).unwrap();
    // The other way: the client's receive queue (2) bounds the service's replies.
    let mut c2 = Endpoint::new();
    c2.set_device(&device("host", "0000:3b:00.0")).unwrap();
    c2.set_recv_queue_size(2).unwrap();
    let to2 = c2.connect(&n).unwrap();
    send(&mut c2, b"hello", to2);
    let from2 = loop {
        let (len, f) = recv(&mut server, &mut buf).unwrap();
        if &buf[..len] == b"hello" {
            break f;
        }
    };
    server.sendto(b"r1", from2).unwrap();
    server.sendto(b"r2", from2).unwrap();
    assert_eq!(
        server.sendto(b"r3", from2).unwrap_err().code(),
        ErrorCode::Again
    );
    let (len, _) = recv(&mut c2, &mut buf).unwrap();
    assert_eq!(&buf[..len], b"r1");
    server.sendto(b"r3", from2).unwrap();
    assert_ne!(from, from2);
}

#[test]
fn a_service_accepts_at_most_its_connections_and_its_service_channel_wakes() {
    raise_descriptor_limit();
    let n = name("limit");
    let dpu = device("dpu", "0000:03:00.0");
    let mut server = Endpoint::new();
    server.set_device(&dpu).unwrap();
    server
        .set_device_rep(&dpu.open_rep("0000:3b:00.0").unwrap())
        .unwrap();
    server.listen(&n).unwrap();
    let mut p = libc::pollfd {
        fd: server.service_event_channel(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let ready = unsafe { libc::poll(&mut p, 1, 0) };
    assert_eq!(ready, 0, "nobody waits yet");
    let mut clients: Vec<(Endpoint, PeerId)> = Vec::new();
    let (mut first, to) = client(&n);
    send(&mut first, b"0", to);
    // SAFETY: as above.
    let ready = unsafe { libc::poll(&mut p, 1, 5000) };
    assert_eq!(ready, 1, "a connection waits");
    clients.push((first, to));
    let mut buf = [0u8; 16];
    let max = doca_comm_channel::MAX_CONNECTIONS as usize;
    let mut got = 0;
    for i in 1..max {
        let (mut c, to) = client(&n);
        // The service accepts while it progresses: keep it going so that a listen
        // backlog the system caps below the channel's maximum fills no matter.
        let t = Instant::now();
        loop {
            match c.sendto(i.to_string().as_bytes(), to) {
                Ok(()) => break,
                Err(e) if e.code() == ErrorCode::Again => {
                    while server.recvfrom(&mut buf).is_ok() {
                        got += 1;
                    }
                    assert!(t.elapsed() < Duration::from_secs(10), "never connected");
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => panic!("client {i}: {e}"),
            }
        }
        clients.push((c, to));
    }
    while got < max {
        recv(&mut server, &mut buf).unwrap();
        got += 1;
    }
    assert_eq!(server.peers().len(), max);
    // One more: accepted by the kernel, turned away by the service.
    let (mut extra, to) = client(&n);
    let _ = extra.sendto(b"x", to);
    assert_eq!(
        server.recvfrom(&mut buf).unwrap_err().0.code(),
        ErrorCode::Again
    );
    let t = std::time::Instant::now();
    let refused = loop {
        let _ = server.recvfrom(&mut buf);
        match extra.sendto(b"x", to) {
            Err(e) if e.code() == ErrorCode::NotConnected => break true,
            _ if t.elapsed() > Duration::from_secs(10) => break false,
            _ => std::thread::sleep(Duration::from_millis(1)),
        }
    };
    assert!(refused, "the 65th client was not turned away");
    assert_eq!(server.peers().len(), max);
}

/// A service (the DPU's 03:00.0 for the host's 3b:00.0) listening as `name`, in this
/// process.
fn listening(name: &str) -> Endpoint {
    let dpu = device("dpu", "0000:03:00.0");
    let mut s = Endpoint::new();
    s.set_device(&dpu).unwrap();
    s.set_device_rep(&dpu.open_rep("0000:3b:00.0").unwrap())
        .unwrap();
    s.listen(name).unwrap();
    s
}

/// The service takes one message, replies "reply" to its sender, and goes at once.
fn reply_and_go(mut s: Endpoint, buf: &mut [u8]) {
    let from = loop {
        match s.recvfrom(buf) {
            Ok((_, from)) => break from,
            Err((e, _)) if e.code() == ErrorCode::Again => {
                std::thread::sleep(Duration::from_micros(100))
            }
            Err((e, _)) => panic!("{e}"),
        }
    };
    while let Err(e) = s.sendto(b"reply", from) {
        assert_eq!(e.code(), ErrorCode::Again);
    }
}

/// A client that connects while a service is in its last moments: the kernel takes the
/// connection into the going service's backlog, the service goes without accepting it,
/// and a new service takes the name. The client's connection is made again, its message
/// reaches the new service once, and the reply comes back. Until a service has taken
/// the connection, `update_info` says `CONNECTION_INPROGRESS`.
#[test]
fn a_connection_a_going_service_never_took_is_made_again_with_nothing_lost() {
    for round in 0..20 {
        let n = name(&format!("regone{round}"));
        let going = listening(&n);
        let (mut c, server) = client(&n);
        assert_eq!(
            c.peer_addr(server)
                .unwrap()
                .update_info()
                .unwrap_err()
                .code(),
            ErrorCode::ConnectionInProgress
        );
        send(&mut c, format!("one{round}").as_bytes(), server);
        drop(going);
        let next = listening(&n);
        let service = std::thread::spawn(move || {
            let mut buf = [0u8; 64];
            let mut s = next;
            let mut got = Vec::new();
            let t = Instant::now();
            let from = loop {
                match s.recvfrom(&mut buf) {
                    Ok((k, from)) => {
                        got.push(buf[..k].to_vec());
                        break from;
                    }
                    Err((e, _)) if e.code() == ErrorCode::Again => {
                        assert!(t.elapsed() < Duration::from_secs(10), "no message");
                        std::thread::sleep(Duration::from_micros(100))
                    }
                    Err((e, _)) => panic!("{e}"),
                }
            };
            while let Err(e) = s.sendto(b"reply", from) {
                assert_eq!(e.code(), ErrorCode::Again);
            }
            // Nothing more comes (the message came once).
            let t = Instant::now();
            while t.elapsed() < Duration::from_millis(20) {
                if let Ok((k, _)) = s.recvfrom(&mut buf) {
                    got.push(buf[..k].to_vec());
                }
            }
            got
        });
        let mut buf = [0u8; 64];
        let reply = recv(&mut c, &mut buf).map(|(k, _)| buf[..k].to_vec());
        assert_eq!(reply, Ok(b"reply".to_vec()), "round {round}");
        assert_eq!(c.peer_addr(server).unwrap().update_info(), Ok(()));
        let got = service.join().unwrap();
        assert_eq!(
            got,
            vec![format!("one{round}").into_bytes()],
            "round {round}"
        );
    }
}

/// A reply sent just before the service goes (with a message of the client's still
/// unread there) reaches the client before the end of the connection does.
#[test]
fn a_message_sent_before_the_peer_closes_comes_before_the_close() {
    for round in 0..50 {
        let n = name(&format!("close{round}"));
        let s = listening(&n);
        let (mut c, server) = client(&n);
        send(&mut c, b"one", server);
        send(&mut c, b"two", server);
        let mut buf = [0u8; 64];
        reply_and_go(s, &mut buf);
        let got = recv(&mut c, &mut buf).map(|(k, _)| buf[..k].to_vec());
        assert_eq!(got, Ok(b"reply".to_vec()), "round {round}");
        assert_eq!(
            recv(&mut c, &mut buf).unwrap_err(),
            ErrorCode::NotConnected,
            "round {round}"
        );
    }
}

/// A reply sent just before the service goes stays the client's even when the client
/// sends first and its send is what finds the service gone (with or without a message
/// of the client's unread there): the send says `NOT_CONNECTED`, the reply still comes,
/// and the end after it.
#[test]
fn a_reply_comes_before_the_close_even_after_a_send_found_it() {
    for (round, unread) in [(0, false), (1, true), (2, false), (3, true)] {
        let n = name(&format!("late{round}"));
        let s = listening(&n);
        let (mut c, server) = client(&n);
        send(&mut c, b"one", server);
        if unread {
            send(&mut c, b"two", server);
        }
        let mut buf = [0u8; 64];
        reply_and_go(s, &mut buf);
        assert_eq!(
            c.sendto(b"late", server).unwrap_err().code(),
            ErrorCode::NotConnected,
            "round {round}"
        );
        // A buffer too short: the reply stays queued, and so does the end.
        assert_eq!(
            recv(&mut c, &mut buf[..2]).unwrap_err(),
            ErrorCode::InvalidValue,
            "round {round}"
        );
        let got = recv(&mut c, &mut buf).map(|(k, _)| buf[..k].to_vec());
        assert_eq!(got, Ok(b"reply".to_vec()), "round {round}");
        assert_eq!(
            recv(&mut c, &mut buf).unwrap_err(),
            ErrorCode::NotConnected,
            "round {round}"
        );
    }
}

/// A service that answers one message and exits at once (NVIDIA's 2.2 `cc_server`).
#[test]
fn reply_then_exit_process() {
    let Some(role) = peer::role() else {
        return;
    };
    let mut ep = listening(&role);
    peer::say("listening");
    let mut buf = [0u8; 256];
    loop {
        match ep.recvfrom(&mut buf) {
            Ok((n, from)) => {
                let mut reply = b"re:".to_vec();
                reply.extend_from_slice(&buf[..n]);
                while let Err(e) = ep.sendto(&reply, from) {
                    assert_eq!(e.code(), ErrorCode::Again);
                }
                let _ = ep.disconnect(from);
                // Gone before the client looks: no destructor, no flush.
                std::process::exit(0);
            }
            Err((e, _)) if e.code() == ErrorCode::Again => std::thread::yield_now(),
            Err((e, _)) => panic!("{e}"),
        }
    }
}

/// The pair of NVIDIA's 2.2 `cc_server`/`cc_client` (the service replies and exits at
/// once; the client sends, then waits for the reply) run again and again with busy
/// threads taking the CPUs: every reply is received, none is reported as a lost
/// connection. `DOCA_CC_CLOSE_ROUNDS` sets the number of rounds (default 200).
#[test]
fn a_service_that_replies_and_exits_is_heard_every_time_under_load() {
    if peer::role().is_some() {
        return;
    }
    let rounds: usize = std::env::var("DOCA_CC_CLOSE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy: Vec<_> = (0..3)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 0u64;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
        })
        .collect();
    let mut replies = 0;
    let mut failures = Vec::new();
    for round in 0..rounds {
        let n = name(&format!("ccx{round}"));
        let mut p = Peer::spawn("reply_then_exit_process", &n);
        assert_eq!(p.recv(), "listening");
        let (mut c, server) = client(&n);
        let msg = format!("hello {round}");
        send(&mut c, msg.as_bytes(), server);
        let mut buf = [0u8; 256];
        match recv(&mut c, &mut buf) {
            Ok((k, _)) if buf[..k] == *format!("re:{msg}").as_bytes() => replies += 1,
            other => failures.push((round, other.map(|(k, _)| buf[..k].to_vec()))),
        }
        p.finish();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for b in busy {
        b.join().unwrap();
    }
    assert!(
        failures.is_empty(),
        "{replies} of {rounds} replies; lost: {failures:?}"
    );
    assert_eq!(replies, rounds);
}

/// A client that talks with the service until it is killed: message after message,
/// each echo checked.
#[test]
fn chatter_process() {
    let Some(role) = peer::role() else {
        return;
    };
    let (mut c, server) = client(&role);
    peer::say("started");
    let mut buf = [0u8; 256];
    for i in 0u64.. {
        let msg = format!("m{i}");
        send(&mut c, msg.as_bytes(), server);
        let (k, _) = recv(&mut c, &mut buf).expect("the echo");
        assert_eq!(&buf[..k], format!("echo:{msg}").as_bytes());
    }
}

/// A service's side of the kill test: echoes every message, notes every loss (and
/// disconnects it at once, as the samples do).
#[derive(Default)]
struct Served {
    echoes: std::collections::HashMap<PeerId, u64>,
    lost: Vec<PeerId>,
}

impl Served {
    fn serve(&mut self, s: &mut Endpoint, d: Duration) {
        let mut buf = [0u8; 256];
        let t = Instant::now();
        while t.elapsed() < d {
            match s.recvfrom(&mut buf) {
                Ok((k, from)) => {
                    let mut reply = b"echo:".to_vec();
                    reply.extend_from_slice(&buf[..k]);
                    while let Err(e) = s.sendto(&reply, from) {
                        if e.code() != ErrorCode::Again {
                            break;
                        }
                    }
                    *self.echoes.entry(from).or_default() += 1;
                }
                Err((e, Some(from))) if e.code() == ErrorCode::NotConnected => {
                    self.lost.push(from);
                    let _ = s.disconnect(from);
                }
                Err((e, _)) if e.code() == ErrorCode::Again => std::thread::yield_now(),
                Err((e, _)) => panic!("{e}"),
            }
        }
    }
}

/// A service with a steady client and clients killed (SIGKILL) at random moments:
/// while connecting, mid-send, mid-receive. Each killed client is reported
/// (`NOT_CONNECTED` with its address) within a second, the steady client is served
/// all along, and once every peer is gone and disconnected the service holds the
/// descriptors, threads and shared mappings it held before (the service runs in a
/// process of its own, so that no other test's descriptors count).
#[test]
fn clients_killed_at_random_moments_are_reported_and_the_rest_served() {
    match peer::role().as_deref() {
        None => {
            let mut p = Peer::spawn(
                "clients_killed_at_random_moments_are_reported_and_the_rest_served",
                "service",
            );
            assert_eq!(p.recv(), "done");
            p.finish();
            return;
        }
        Some("service") => {}
        Some(_) => return,
    }
    let n = name("kills");
    let mut s = listening(&n);
    s.set_max_msg_size(256).ok();
    let before = doca_testkit::held();
    let mut rng = doca_testkit::Rng(0x5eed_0000 ^ u64::from(std::process::id()));
    let mut sv = Served::default();
    let mut steady = Peer::spawn("chatter_process", &n);
    assert_eq!(steady.recv(), "started");
    sv.serve(&mut s, Duration::from_millis(100));
    let steady_id = *sv
        .echoes
        .keys()
        .next()
        .expect("the steady client is served");
    let rounds = 12;
    let mut must_report = 0;
    for round in 0..rounds {
        let p = Peer::spawn("chatter_process", &n);
        // Odd rounds kill at a random moment from the spawn (while the client starts,
        // connects or talks, whichever the machine's speed makes it); even rounds kill
        // at a random moment after the client has been served, so that at least half
        // the kills must be reported however slow the machine is.
        if round % 2 == 0 {
            must_report += 1;
            let t = Instant::now();
            while !sv
                .echoes
                .keys()
                .any(|id| *id != steady_id && !sv.lost.contains(id))
            {
                sv.serve(&mut s, Duration::from_millis(10));
                assert!(
                    t.elapsed() < Duration::from_secs(30),
                    "round {round}: the new client was never served"
                );
            }
        }
        let wait = Duration::from_millis(rng.below(60) as u64);
        sv.serve(&mut s, wait);
        let steady_before = sv.echoes.get(&steady_id).copied().unwrap_or(0);
        drop(p);
        let killed = Instant::now();
        let lost_before = sv.lost.len();
        // The killed client, if it was served (one killed before its first message
        // may leave nothing to report).
        let served = sv
            .echoes
            .keys()
            .any(|id| *id != steady_id && !sv.lost.contains(id));
        while sv.lost.len() == lost_before {
            sv.serve(&mut s, Duration::from_millis(10));
            if killed.elapsed() > Duration::from_secs(1) {
                assert!(
                    !served,
                    "round {round}: a killed client not reported within 1 s"
                );
                break;
            }
        }
        let reported = sv.lost.len() > lost_before;
        eprintln!(
            "round {round}: killed after {wait:?}, {} in {:?}",
            if reported {
                "reported"
            } else {
                "never connected"
            },
            killed.elapsed()
        );
        sv.serve(&mut s, Duration::from_millis(20));
        assert!(
            sv.echoes.get(&steady_id).copied().unwrap_or(0) > steady_before,
            "round {round}: the steady client was not served"
        );
        assert!(
            !sv.lost.contains(&steady_id),
            "round {round}: the steady client lost"
        );
    }
    drop(steady);
    let killed = Instant::now();
    while !sv.lost.contains(&steady_id) {
        sv.serve(&mut s, Duration::from_millis(10));
        assert!(
            killed.elapsed() < Duration::from_secs(1),
            "the steady client's end was not reported within a second"
        );
    }
    sv.serve(&mut s, Duration::from_millis(50));
    // The steady client's end, and each client killed after it was served.
    assert!(
        sv.lost.len() > must_report,
        "{} of {rounds} kills reported, {must_report} at least expected",
        sv.lost.len() - 1
    );
    assert_eq!(
        doca_testkit::held(),
        before,
        "descriptors, threads, shared mappings"
    );
    peer::say("done");
}

/// A process out of file descriptors: creating an endpoint is refused with
/// `OPERATING_SYSTEM`, and a client whose connection cannot even get a socket reports
/// that when it sends instead of answering `AGAIN` for ever.
#[test]
fn out_of_descriptors_is_an_error_not_a_panic_or_a_wait() {
    let Some(role) = peer::role() else {
        let mut p = Peer::spawn("out_of_descriptors_is_an_error_not_a_panic_or_a_wait", "x");
        assert_eq!(p.recv(), "done");
        p.finish();
        return;
    };
    assert_eq!(role, "x");
    let n = name("nofds");
    let dpu = device("dpu", "0000:03:00.0");
    let mut server = Endpoint::new();
    server.set_device(&dpu).unwrap();
    server
        .set_device_rep(&dpu.open_rep("0000:3b:00.0").unwrap())
        .unwrap();
    server.listen(&n).unwrap();
    let mut c = Endpoint::new();
    c.set_device(&device("host", "0000:3b:00.0")).unwrap();
    // Use up every descriptor below a small limit.
    let l = libc::rlimit {
        rlim_cur: 64,
        rlim_max: 64,
    };
    // SAFETY: a valid rlimit; this child process is the only one it changes.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &l) }, 0);
    let mut held = Vec::new();
    while let Ok(f) = std::fs::File::open("/dev/null") {
        held.push(f);
    }
    let e = Endpoint::try_new().unwrap_err();
    assert_eq!(e.code(), ErrorCode::OperatingSystem, "{e}");
    let to = c.connect(&n).unwrap();
    let e = c.sendto(b"x", to).unwrap_err();
    assert_eq!(e.code(), ErrorCode::OperatingSystem, "{e}");
    // With descriptors back the same connection comes up.
    held.clear();
    send(&mut c, b"x", to);
    let mut buf = [0u8; 8];
    assert_eq!(recv(&mut server, &mut buf).unwrap().0, 1);
    peer::say("done");
}
