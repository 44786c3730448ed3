//! What the two-process NIC tests share: the sink that collects completions, test
//! patterns, and a target's start (its export said to the parent).
#![allow(dead_code)]

use doca_core::{AccessFlags, Dev, ErrorCode, Mmap, device};
use doca_rdma::nic::{Cmd, ConnEvent, Done, Nic, Sink, random_u64};
use doca_rdma::wire::ConnDesc;
use doca_testkit::peer::{self, Peer, hex, unhex};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct Col {
    pub done: Mutex<Vec<(u64, doca_core::Result<Done>)>>,
    pub cv: Condvar,
}

impl Sink for Col {
    fn complete(&self, user: u64, r: doca_core::Result<Done>) {
        self.done.lock().unwrap().push((user, r));
        self.cv.notify_all();
    }
    fn conn_event(&self, _conn: u32, _ev: ConnEvent) {}
}

impl Col {
    pub fn wait(&self, user: u64) -> doca_core::Result<Done> {
        let t = Instant::now();
        let mut g = self.done.lock().unwrap();
        loop {
            if let Some(i) = g.iter().position(|(u, _)| *u == user) {
                return g.remove(i).1;
            }
            assert!(
                t.elapsed() < Duration::from_secs(30),
                "operation {user} never ended"
            );
            g = self
                .cv
                .wait_timeout(g, Duration::from_millis(50))
                .unwrap()
                .0;
        }
    }
}

pub fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(29).wrapping_add(seed))
        .collect()
}

pub fn fnv(b: &[u8]) -> u64 {
    b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
        (h ^ u64::from(x)).wrapping_mul(0x0100_0000_01b3)
    })
}

pub const LEN: usize = 1 << 20;

/// The target: exports 1 MiB, posts two receives, answers "sum" with a digest of its
/// memory and what it received; "stop" stops (revokes) its mmap.
/// A target's start: a NIC with connection 7 registered and `len` bytes exported with
/// `perms`; the descriptor and the export are said to the parent.
pub fn start_target(len: usize, perms: AccessFlags) -> (Arc<Col>, Nic, Mmap) {
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let col = Arc::new(Col::default());
    let nic = Nic::start(&dev, doca_rdma::nic::GRANT_ALL, col.clone()).unwrap();
    let key = random_u64().unwrap();
    let mut m = Mmap::new();
    m.set_memory(vec![0u8; len]).unwrap();
    m.set_permissions(perms).unwrap();
    m.dev_add(&dev).unwrap();
    m.start().unwrap();
    let blob = m.export_rdma(&dev).unwrap();
    // SAFETY: a control command.
    unsafe { nic.submit(Cmd::Register { conn: 7, key }) };
    peer::say(&format!("{} {}", hex(&nic.descriptor(7, key)), hex(&blob)));
    (col, nic, m)
}

/// A target that exports 4 MiB, connects and then only waits: it is killed.
#[test]
pub fn victim_process() {
    let Some(_) = peer::role() else { return };
    let (_col, nic, _m) = start_target(4 * LEN, AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE);
    for line in peer::commands() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if w[0] == "connect" {
            let desc = ConnDesc::decode(&unhex(w[1])).unwrap();
            // SAFETY: a control command.
            unsafe { nic.submit(Cmd::Connect { conn: 7, desc }) };
            peer::say("connected");
        }
    }
    drop(nic);
}

/// Operation `n` of a stream of 1 MiB transfers on connection 1, against slot `n % 4`
/// of the export `k`: a write of `buf` when `write`, else a read into it.
pub fn transfer(n: u64, write: bool, buf: &mut [u8], k: &doca_core::memory::net::NetKey) -> Cmd {
    let addr = k.base + ((n % 4) as usize * LEN) as u64;
    if write {
        Cmd::Write {
            user: n,
            conn: 1,
            ptr: buf.as_ptr(),
            len: LEN,
            token: k.token,
            addr,
            imm: None,
        }
    } else {
        Cmd::Read {
            user: n,
            conn: 1,
            ptr: buf.as_mut_ptr(),
            len: LEN,
            token: k.token,
            addr,
        }
    }
}

/// A NIC of this process registered as connection 1, and the victim process connected
/// to it; the victim's first line (its descriptor and its export) comes back.
pub fn nic_and_victim(dev: &Dev, env: &[(&str, &str)]) -> (Nic, Arc<Col>, Peer, String) {
    let col = Arc::new(Col::default());
    let nic = Nic::start(dev, doca_rdma::nic::GRANT_ALL, col.clone()).unwrap();
    let key = random_u64().unwrap();
    // SAFETY: a control command.
    unsafe { nic.submit(Cmd::Register { conn: 1, key }) };
    let mut v = Peer::spawn_with("netns_shared::victim_process", "victim", env);
    let vd = v.recv();
    v.send(&format!("connect {}", hex(&nic.descriptor(1, key))));
    assert_eq!(v.recv(), "connected");
    (nic, col, v, vd)
}

/// Writes and reads of 1 MiB, four in flight, against a peer killed at a random moment
/// (`rounds` times): every operation ends (what was in flight with an error, none
/// hangs), later ones are refused, and the NIC stops cleanly.
pub fn kill_mid_transfer(env: Vec<(&str, &str)>, rounds: usize) {
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    for round in 0..rounds {
        let (mut nic, col, mut v, vd) = nic_and_victim(&dev, &env);
        let (vdesc, blob) = vd.split_once(' ').unwrap();
        let r = Mmap::create_from_export(Default::default(), &unhex(blob), &dev).unwrap();
        let k = r.remote().unwrap().net_key().unwrap();
        // SAFETY: a control command.
        unsafe {
            nic.submit(Cmd::Connect {
                conn: 1,
                desc: ConnDesc::decode(&unhex(vdesc)).unwrap(),
            })
        };
        let mut bufs: Vec<Vec<u8>> = (0..4).map(|i| pattern(LEN, i as u8)).collect();
        let kill_after = Duration::from_millis(20 + random_u64().unwrap() % 300);
        let start = Instant::now();
        let (mut issued, mut ended, mut ok_after_kill) = (0u64, 0u64, 0u64);
        let mut killed_at = None;
        let mut errors = Vec::new();
        let submit = |nic: &Nic, n: u64, buf: &mut Vec<u8>| {
            // SAFETY: each buffer is used by one operation at a time, awaited below
            // before it is used again, and outlives the NIC (stopped first).
            unsafe { nic.submit(transfer(n, n.is_multiple_of(2), buf, &k)) };
        };
        for b in bufs.iter_mut() {
            submit(&nic, issued, b);
            issued += 1;
        }
        // Keep four in flight until the kill, and a while after.
        while ended < issued {
            let r = col.wait(ended);
            if killed_at.is_some() {
                match &r {
                    Ok(_) => ok_after_kill += 1,
                    Err(e) => errors.push(e.code()),
                }
            }
            ended += 1;
            if killed_at.is_none() && start.elapsed() >= kill_after {
                v.kill();
                killed_at = Some(Instant::now());
            }
            let after = killed_at.map_or(Duration::ZERO, |t| t.elapsed());
            if after < Duration::from_millis(200) {
                let n = issued;
                submit(&nic, n, &mut bufs[(n % 4) as usize]);
                issued += 1;
            }
            assert!(
                after < Duration::from_secs(20),
                "round {round}: operations still in flight 20 s after the peer was killed"
            );
        }
        assert!(
            killed_at.is_some(),
            "round {round}: the transfers ended before the kill"
        );
        assert!(
            !errors.is_empty(),
            "round {round}: nothing failed after the kill ({ok_after_kill} ended well)"
        );
        for c in &errors {
            assert!(
                matches!(
                    c,
                    ErrorCode::ConnectionReset
                        | ErrorCode::ConnectionAborted
                        | ErrorCode::NotConnected
                ),
                "round {round}: {c:?} ({errors:?})"
            );
        }
        let t = Instant::now();
        nic.stop();
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the NIC took long to stop"
        );
        drop(r);
    }
}
