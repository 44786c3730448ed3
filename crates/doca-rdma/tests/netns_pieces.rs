//! Two processes each with its software NIC: large transfers through shared memory move
//! in pieces (odd lengths and offsets, writes checked whole, stops in the middle), a
//! requester killed mid-transfer in pieces, and a peer killed while this side only
//! waits for its message.

mod common;
mod netns_shared;

use doca_core::{AccessFlags, ErrorCode, Mmap, device};
use doca_rdma::nic::{Cmd, Nic, RecvOpcode, piece_max, random_u64, transfers_in_pieces};
use doca_rdma::wire::ConnDesc;
use doca_testkit::peer::{self, Peer, hex, unhex};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netns_shared::*;

const SHM: (&str, &str) = ("DOCA_RDMA_SHM", "1");

fn bytes_of(m: &Mmap) -> Vec<u8> {
    let (p, n) = m.memrange().unwrap();
    // SAFETY: the mmap's memory, alive while `m` is; no operation is in flight.
    unsafe { std::slice::from_raw_parts(p, n) }.to_vec()
}

/// In a process that allows shared memory: large writes and reads move in pieces
/// (odd lengths and offsets, a write with immediate data), and the target checks a
/// write in pieces whole: one that runs past the export, or lacks the permission,
/// changes no byte; a stop in the middle of a stream of them ends every one (landed,
/// or refused with `NOT_FOUND`) and refuses what comes after.
#[test]
fn pieces_process() {
    let Some(_) = peer::role() else { return };
    let (a, ca, b, cb) = common::pair::<Col>();
    let most = piece_max();
    assert!(most >= 8000, "a piece carries {most} bytes");
    let all = AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE;
    let (m, token, base) = common::exported(8 << 20, all);
    let before = transfers_in_pieces();
    let mut user = 1;
    for (k, n) in [most + 1, 64 << 10, 100_003, (1 << 20) + 17, 3 << 20]
        .into_iter()
        .enumerate()
    {
        let src = pattern(n, k as u8);
        let at = 13 + k * 4099;
        let mut back = vec![0u8; n];
        // SAFETY: src and back live until their completions are awaited.
        unsafe {
            a.submit(Cmd::Write {
                user,
                conn: 1,
                ptr: src.as_ptr(),
                len: n,
                token,
                addr: base + at as u64,
                imm: None,
            });
            assert_eq!(ca.wait(user).unwrap().len, n as u64);
            assert!(bytes_of(&m)[at..at + n] == src[..], "{n} bytes written");
            a.submit(Cmd::Read {
                user: user + 1,
                conn: 1,
                ptr: back.as_mut_ptr(),
                len: n,
                token,
                addr: base + at as u64,
            });
            assert_eq!(ca.wait(user + 1).unwrap().len, n as u64);
        }
        assert!(back == src, "{n} bytes read back");
        user += 2;
    }
    assert!(
        transfers_in_pieces() >= before + 10,
        "the writes and reads went in pieces"
    );
    // A write with immediate data in pieces: the receive completes once all landed.
    let mut rbuf = [0u8; 16];
    let src = pattern(200_000, 9);
    // SAFETY: rbuf and src live until the completions are awaited.
    unsafe {
        b.submit(Cmd::Recv {
            user: 500,
            ptr: rbuf.as_mut_ptr(),
            cap: rbuf.len(),
        });
        a.submit(Cmd::Write {
            user: 501,
            conn: 1,
            ptr: src.as_ptr(),
            len: src.len(),
            token,
            addr: base + 64,
            imm: Some(0xfeed),
        });
    }
    let d = cb.wait(500).unwrap();
    assert_eq!((d.imm, d.opcode), (Some(0xfeed), RecvOpcode::WriteImm));
    assert!(bytes_of(&m)[64..64 + src.len()] == src[..]);
    ca.wait(501).unwrap();
    // Past the end, or without permission: refused whole.
    let snapshot = bytes_of(&m);
    let big = pattern(300_000, 77);
    // SAFETY: big lives until the completion is awaited.
    let write = |user, token, addr| unsafe {
        a.submit(Cmd::Write {
            user,
            conn: 1,
            ptr: big.as_ptr(),
            len: big.len(),
            token,
            addr,
            imm: None,
        });
        ca.wait(user).map(|d| d.len).map_err(|e| e.code())
    };
    let end = base + (8 << 20) as u64;
    assert_eq!(
        write(600, token, end - 100_000),
        Err(ErrorCode::InvalidValue)
    );
    assert_eq!(write(601, token, base - 4096), Err(ErrorCode::InvalidValue));
    assert_eq!(
        write(602, [token[0] ^ 1, token[1]], base),
        Err(ErrorCode::NotFound)
    );
    let (ro, ro_token, ro_base) = common::exported(1 << 20, AccessFlags::RDMA_READ);
    assert_eq!(write(603, ro_token, ro_base), Err(ErrorCode::NotPermitted));
    assert!(bytes_of(&m) == snapshot, "a refused write changed no byte");
    assert!(bytes_of(&ro).iter().all(|&x| x == 0));
    // A stop in the middle of a stream of writes and reads of 1 MiB.
    let mut m = m;
    let mut bufs: Vec<Vec<u8>> = (0..8).map(|i| pattern(LEN, i as u8)).collect();
    for (i, buf) in bufs.iter_mut().enumerate() {
        let addr = base + (i * LEN) as u64;
        // SAFETY: each buffer is used by one operation, awaited below.
        unsafe {
            a.submit(if i % 2 == 0 {
                Cmd::Write {
                    user: 700 + i as u64,
                    conn: 1,
                    ptr: buf.as_ptr(),
                    len: LEN,
                    token,
                    addr,
                    imm: None,
                }
            } else {
                Cmd::Read {
                    user: 700 + i as u64,
                    conn: 1,
                    ptr: buf.as_mut_ptr(),
                    len: LEN,
                    token,
                    addr,
                }
            })
        };
    }
    m.stop().unwrap();
    for i in 0..8u64 {
        match ca.wait(700 + i) {
            Ok(d) => assert_eq!(d.len, LEN as u64),
            Err(e) => assert_eq!(e.code(), ErrorCode::NotFound, "{e}"),
        }
    }
    assert_eq!(write(800, token, base), Err(ErrorCode::NotFound));
    drop((a, b));
    peer::say("ok");
}

/// Runs this binary's test `test` as a child allowing shared memory, which says "ok".
fn in_child_with_shared_memory(test: &str) {
    let mut p = Peer::spawn_with(test, "shm", &[SHM]);
    assert_eq!(p.recv(), "ok");
    p.finish();
}

#[test]
fn large_transfers_move_in_pieces_through_shared_memory() {
    in_child_with_shared_memory("pieces_process");
}

/// A peer killed in the middle of writes and reads in pieces, both processes allowing
/// shared memory (UCX detects nothing there: the peer's process is watched).
#[test]
fn killer_in_pieces_process() {
    let Some(_) = peer::role() else { return };
    kill_mid_transfer(vec![SHM], 3);
    peer::say("ok");
}

#[test]
fn a_peer_killed_mid_transfer_in_pieces_through_shared_memory() {
    in_child_with_shared_memory("killer_in_pieces_process");
}

/// A requester that reads and writes 1 MiB at a time, four in flight, against the
/// export it is given, until it is killed.
#[test]
fn requester_victim_process() {
    let Some(_) = peer::role() else { return };
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let col = Arc::new(Col::default());
    let nic = Nic::start(&dev, doca_rdma::nic::GRANT_ALL, col.clone()).unwrap();
    let key = random_u64().unwrap();
    // SAFETY: a control command.
    unsafe { nic.submit(Cmd::Register { conn: 1, key }) };
    peer::say(&hex(&nic.descriptor(1, key)));
    let line = peer::commands().next().unwrap();
    let (tdesc, blob) = line.split_once(' ').unwrap();
    let r = Mmap::create_from_export(Default::default(), &unhex(blob), &dev).unwrap();
    let k = r.remote().unwrap().net_key().unwrap();
    // SAFETY: a control command.
    unsafe {
        nic.submit(Cmd::Connect {
            conn: 1,
            desc: ConnDesc::decode(&unhex(tdesc)).unwrap(),
        })
    };
    let mut bufs: Vec<Vec<u8>> = (0..4).map(|i| pattern(LEN, i as u8)).collect();
    let submit = |n: u64, buf: &mut Vec<u8>| {
        // SAFETY: each buffer is used by one operation at a time, awaited before it is
        // used again; the process is killed while they are in flight.
        unsafe { nic.submit(transfer(n, n % 4 == 3, buf, &k)) };
    };
    for (n, b) in bufs.iter_mut().enumerate() {
        submit(n as u64, b);
    }
    let mut n = 0u64;
    loop {
        col.wait(n).unwrap();
        if n == 0 {
            peer::say("running");
        }
        let next = n + 4;
        submit(next, &mut bufs[(next % 4) as usize]);
        n += 1;
    }
}

/// The target's side of a requester killed mid-transfer through shared memory: the
/// answers in pieces it was sending stop waiting for the dead peer, so that its
/// export stops (its memory guards are let go of) and its NIC stops, in time.
#[test]
fn target_of_a_killed_requester_process() {
    let Some(_) = peer::role() else { return };
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    for round in 0..3 {
        let col = Arc::new(Col::default());
        let mut nic = Nic::start(&dev, doca_rdma::nic::GRANT_ALL, col.clone()).unwrap();
        let key = random_u64().unwrap();
        let mut m = Mmap::new();
        m.set_memory(vec![0u8; 4 * LEN]).unwrap();
        m.set_permissions(AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE)
            .unwrap();
        m.dev_add(&dev).unwrap();
        m.start().unwrap();
        let blob = m.export_rdma(&dev).unwrap();
        // SAFETY: a control command.
        unsafe { nic.submit(Cmd::Register { conn: 7, key }) };
        let mut v = Peer::spawn_with("requester_victim_process", "requester", &[SHM]);
        let vdesc = ConnDesc::decode(&unhex(&v.recv())).unwrap();
        v.send(&format!("{} {}", hex(&nic.descriptor(7, key)), hex(&blob)));
        // SAFETY: a control command.
        unsafe {
            nic.submit(Cmd::Connect {
                conn: 7,
                desc: vdesc,
            })
        };
        assert_eq!(v.recv(), "running");
        std::thread::sleep(Duration::from_millis(10 + random_u64().unwrap() % 200));
        v.kill();
        let (tx, rx) = std::sync::mpsc::channel();
        let stopper = std::thread::spawn(move || {
            let r = m.stop();
            let _ = tx.send(());
            (r, m)
        });
        assert!(
            rx.recv_timeout(Duration::from_secs(10)).is_ok(),
            "round {round}: the export did not stop within 10 s of its requester's end"
        );
        let (r, m) = stopper.join().unwrap();
        r.unwrap();
        let t = Instant::now();
        nic.stop();
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "round {round}: the NIC took long to stop"
        );
        drop(m);
    }
    peer::say("ok");
}

#[test]
fn a_requester_killed_mid_transfer_in_pieces_through_shared_memory() {
    in_child_with_shared_memory("target_of_a_killed_requester_process");
}

/// A context waiting only for its peer's message (a receive posted, nothing of its own
/// in flight) when the peer is killed: the connection fails, and the receive is flushed
/// with an error within a second, as a NIC flushes a failed queue pair's receive queue.
/// Over TCP, as between machines, and on one machine.
#[test]
fn a_receive_waiting_for_a_killed_peer_is_flushed_within_a_second() {
    for env in [vec![("UCX_TLS", "tcp")], vec![]] {
        let dev = device::devinfo_list().unwrap()[0].open().unwrap();
        let (mut nic, col, mut v, vd) = nic_and_victim(&dev, &env);
        let (vdesc, _) = vd.split_once(' ').unwrap();
        let mut rbuf = vec![0u8; 64];
        // SAFETY: control commands; the receive buffer outlives the NIC (stopped first).
        unsafe {
            nic.submit(Cmd::Connect {
                conn: 1,
                desc: ConnDesc::decode(&unhex(vdesc)).unwrap(),
            });
            nic.submit(Cmd::Recv {
                user: 77,
                ptr: rbuf.as_mut_ptr(),
                cap: rbuf.len(),
            });
        }
        // Let the connection come up on both sides.
        std::thread::sleep(Duration::from_millis(200));
        v.kill();
        let killed = Instant::now();
        let r = col.wait(77);
        let took = killed.elapsed();
        eprintln!("{env:?}: the receive ended {took:?} after the kill: {r:?}");
        let e = r.expect_err("a receive from a killed peer cannot succeed");
        assert_eq!(e.code(), ErrorCode::ConnectionReset, "{e}");
        assert!(
            took < Duration::from_secs(1),
            "flushed {took:?} after the kill"
        );
        nic.stop();
        drop(rbuf);
    }
}
