//! Two processes, each with its software NIC: across two network namespaces joined by
//! a veth pair (TCP, as between two machines) and on one machine (UCX's choice of
//! shared memory or CMA). The target exports memory and waits in its command loop
//! while the initiator writes, reads, updates atomically and sends.

mod netns_shared;

use doca_core::{AccessFlags, ErrorCode, Mmap, device};
use doca_rdma::nic::{Cmd, Nic, random_u64};
use doca_rdma::wire::ConnDesc;
use doca_testkit::netns::{Fault, NetPair};
use doca_testkit::peer::{self, Peer, hex, unhex};
use std::sync::Arc;
use std::time::{Duration, Instant};

use netns_shared::*;

#[test]
fn target_process() {
    let Some(_) = peer::role() else { return };
    let (col, nic, mut m) = start_target(
        LEN,
        AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE | AccessFlags::RDMA_ATOMIC,
    );
    let mut r1 = vec![0u8; 256];
    let mut r2 = vec![0u8; LEN];
    for line in peer::commands() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[0] {
            "connect" => {
                let desc = ConnDesc::decode(&unhex(w[1])).unwrap();
                // SAFETY: the receive buffers live until the process ends (the NIC
                // stops first, when it drops).
                unsafe {
                    nic.submit(Cmd::Connect { conn: 7, desc });
                    nic.submit(Cmd::Recv {
                        user: 1,
                        ptr: r1.as_mut_ptr(),
                        cap: r1.len(),
                    });
                    nic.submit(Cmd::Recv {
                        user: 2,
                        ptr: r2.as_mut_ptr(),
                        cap: r2.len(),
                    });
                }
                peer::say("connected");
            }
            "sum" => {
                let d1 = col.wait(1).unwrap();
                let d2 = col.wait(2).unwrap();
                let (p, n) = m.memrange().unwrap();
                // SAFETY: the mmap's memory, alive while `m` is.
                let mem = unsafe { std::slice::from_raw_parts(p, n) };
                peer::say(&format!(
                    "{:x} {} {:?} {:x} {} {:x}",
                    fnv(mem),
                    d1.len,
                    d1.imm,
                    fnv(&r1[..d1.len as usize]),
                    d2.len,
                    fnv(&r2[..d2.len as usize])
                ));
            }
            "stop" => {
                m.stop().unwrap();
                peer::say("stopped");
            }
            "listen" => {
                let port: u16 = w[1].parse().unwrap();
                let (tx, rx) = std::sync::mpsc::channel();
                // SAFETY: a control command.
                unsafe { nic.submit(Cmd::Listen { port, reply: tx }) };
                rx.recv().unwrap().unwrap();
                peer::say(&listening_on(port));
            }
            _ => panic!("unknown command {line}"),
        }
    }
    drop(nic);
}

/// The initiator: connects, then on "run" writes, reads back, adds atomically and sends;
/// on "read" reads once more (after the target's stop: refused).
#[test]
fn initiator_process() {
    let Some(_) = peer::role() else { return };
    let dev = device::devinfo_list().unwrap()[0].open().unwrap();
    let col = Arc::new(Col::default());
    let nic = Nic::start(&dev, doca_rdma::nic::GRANT_ALL, col.clone()).unwrap();
    let key = random_u64().unwrap();
    // SAFETY: a control command.
    unsafe { nic.submit(Cmd::Register { conn: 1, key }) };
    peer::say(&hex(&nic.descriptor(1, key)));
    let mut remote = None;
    let src = pattern(LEN, 3);
    let mut back = vec![0u8; LEN];
    let mut old = [0u8; 8];
    let small = pattern(100, 8);
    for line in peer::commands() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w[0] {
            "connect" => {
                let desc = ConnDesc::decode(&unhex(w[1])).unwrap();
                let r = Mmap::create_from_export(Default::default(), &unhex(w[2]), &dev).unwrap();
                remote = Some(r.remote().unwrap().net_key().unwrap());
                // SAFETY: a control command.
                unsafe { nic.submit(Cmd::Connect { conn: 1, desc }) };
                peer::say("connected");
            }
            "run" => {
                let k = remote.unwrap();
                // SAFETY: every buffer lives until its completion is awaited here.
                unsafe {
                    nic.submit(Cmd::Write {
                        user: 1,
                        conn: 1,
                        ptr: src.as_ptr(),
                        len: LEN,
                        token: k.token,
                        addr: k.base,
                        imm: None,
                    });
                    col.wait(1).unwrap();
                    nic.submit(Cmd::Read {
                        user: 2,
                        conn: 1,
                        ptr: back.as_mut_ptr(),
                        len: LEN,
                        token: k.token,
                        addr: k.base,
                    });
                    col.wait(2).unwrap();
                    assert!(back == src, "read back what was written");
                    nic.submit(Cmd::Atomic {
                        user: 3,
                        conn: 1,
                        token: k.token,
                        addr: k.base + 64,
                        cas: false,
                        b: 1000,
                        c: 0,
                        result: old.as_mut_ptr(),
                    });
                    let d = col.wait(3).unwrap();
                    assert_eq!(d.value, u64::from_ne_bytes(src[64..72].try_into().unwrap()));
                    nic.submit(Cmd::Send {
                        user: 4,
                        conn: 1,
                        ptr: small.as_ptr(),
                        len: small.len(),
                        imm: Some(55),
                    });
                    nic.submit(Cmd::Send {
                        user: 5,
                        conn: 1,
                        ptr: src.as_ptr(),
                        len: LEN,
                        imm: None,
                    });
                    col.wait(4).unwrap();
                    col.wait(5).unwrap();
                }
                let mut expect = src.clone();
                let v = u64::from_ne_bytes(src[64..72].try_into().unwrap()).wrapping_add(1000);
                expect[64..72].copy_from_slice(&v.to_ne_bytes());
                peer::say(&format!(
                    "{:x} 100 Some(55) {:x} {LEN} {:x}",
                    fnv(&expect),
                    fnv(&small),
                    fnv(&src)
                ));
            }
            "transports" => {
                let (tx, rx) = std::sync::mpsc::channel();
                // SAFETY: a control command.
                unsafe { nic.submit(Cmd::Describe { conn: 1, reply: tx }) };
                peer::say(&rx.recv().unwrap());
            }
            "gids" => {
                let t = doca_rdma::gid::table(&dev);
                let v: Vec<String> = t
                    .iter()
                    .map(|g| std::net::Ipv6Addr::from(*g).to_string())
                    .collect();
                peer::say(&v.join(" "));
            }
            "timed" => {
                // Four writes under whatever the network does now: each one's outcome,
                // and how long the last took to come (at most a minute).
                let k = remote.unwrap();
                let t = Instant::now();
                for u in 20..24u64 {
                    // SAFETY: src lives until the completions are awaited (or the
                    // process ends).
                    unsafe {
                        nic.submit(Cmd::Write {
                            user: u,
                            conn: 1,
                            ptr: src.as_ptr(),
                            len: 4096,
                            token: k.token,
                            addr: k.base + 4096 * (u - 20),
                            imm: None,
                        });
                    }
                }
                let mut got = Vec::new();
                let mut g = col.done.lock().unwrap();
                while got.len() < 4 && t.elapsed() < Duration::from_secs(60) {
                    if let Some(i) = g.iter().position(|(u, _)| (20..24).contains(u)) {
                        let (_, r) = g.remove(i);
                        got.push(format!("{:?}", r.map(|d| d.len).map_err(|e| e.code())));
                    } else {
                        g = col.cv.wait_timeout(g, Duration::from_millis(50)).unwrap().0;
                    }
                }
                drop(g);
                peer::say(&format!("{} {}", got.join(","), t.elapsed().as_millis()));
            }
            "read" => {
                // "read [LEN]": 64 bytes unless told.
                let len = w.get(1).map_or(64, |l| l.parse::<usize>().unwrap());
                let k = remote.unwrap();
                // SAFETY: back lives until the completion is awaited.
                let r = unsafe {
                    nic.submit(Cmd::Read {
                        user: 9,
                        conn: 1,
                        ptr: back.as_mut_ptr(),
                        len,
                        token: k.token,
                        addr: k.base,
                    });
                    col.wait(9)
                };
                peer::say(&format!("{:?}", r.map(|d| d.len).map_err(|e| e.code())));
            }
            _ => panic!("unknown command {line}"),
        }
    }
    drop(nic);
}

/// Starts the target and the initiator, connects them and runs the initiator's
/// operations, checked at the target: the two peers, for more.
fn connect_and_run(prefix: [Vec<String>; 2], env: [Vec<(&str, &str)>; 2]) -> (Peer, Peer) {
    let mut t = Peer::spawn_in(&prefix[0], "target_process", "target", &env[0]);
    let mut i = Peer::spawn_in(&prefix[1], "initiator_process", "initiator", &env[1]);
    let td = t.recv();
    let (tdesc, blob) = td.split_once(' ').unwrap();
    let idesc = i.recv();
    t.send(&format!("connect {idesc}"));
    assert_eq!(t.recv(), "connected");
    i.send(&format!("connect {tdesc} {blob}"));
    assert_eq!(i.recv(), "connected");
    i.send("run");
    let expect = i.recv();
    t.send("sum");
    assert_eq!(t.recv(), expect, "the target's memory and receives");
    (t, i)
}

/// Runs the pair through revocation; answers the transports UCX chose for the
/// initiator's connection.
fn run_pair(prefix: [Vec<String>; 2], env: [Vec<(&str, &str)>; 2]) -> String {
    let (mut t, mut i) = connect_and_run(prefix, env);
    i.send("transports");
    let transports = i.recv();
    t.send("stop");
    assert_eq!(t.recv(), "stopped");
    i.send("read");
    assert_eq!(
        i.recv(),
        format!("{:?}", Err::<u64, _>(ErrorCode::NotFound))
    );
    i.finish();
    t.finish();
    transports
}

#[test]
fn two_processes_on_one_machine() {
    let tr = run_pair([vec![], vec![]], [vec![], vec![]]);
    assert!(
        tr.contains("tcp/"),
        "UCX's choice with failure detection: {tr}"
    );
}

/// Both sides allow shared memory (`DOCA_RDMA_SHM=1`): UCX moves the bytes through
/// shared memory or CMA, and every access is still checked at the target (the
/// revocation at the end is refused).
#[test]
fn two_processes_on_one_machine_through_shared_memory() {
    let env = || vec![("DOCA_RDMA_SHM", "1")];
    let tr = run_pair([vec![], vec![]], [env(), env()]);
    assert!(
        !tr.contains("tcp") && tr.contains("memory"),
        "shared memory transports only: {tr}"
    );
}

/// The local addresses of this network namespace's TCP sockets listening on `port`
/// (from `/proc/net/tcp` and `tcp6`), joined with spaces.
fn listening_on(port: u16) -> String {
    let mut out = Vec::new();
    for (file, v6) in [("/proc/net/tcp", false), ("/proc/net/tcp6", true)] {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // sl local_address rem_address st: "0100007F:1F90 00000000:0000 0A" (LISTEN).
            if f.len() < 4 || f[3] != "0A" {
                continue;
            }
            let Some((a, p)) = f[1].split_once(':') else {
                continue;
            };
            if u16::from_str_radix(p, 16) != Ok(port) {
                continue;
            }
            let ip = if v6 {
                let mut b = [0u8; 16];
                for (k, w) in b.chunks_mut(4).enumerate() {
                    let x = u32::from_str_radix(&a[8 * k..8 * k + 8], 16).unwrap();
                    w.copy_from_slice(&x.to_ne_bytes());
                }
                std::net::IpAddr::from(b)
            } else {
                let x = u32::from_str_radix(a, 16).unwrap();
                std::net::IpAddr::from(x.to_ne_bytes())
            };
            out.push(ip.to_string());
        }
    }
    out.join(" ")
}

#[test]
fn two_processes_in_two_network_namespaces_over_tcp() {
    let Some(pair) = NetPair::new("rdma") else {
        return;
    };
    let env = |i: usize| {
        vec![
            ("UCX_TLS", "tcp"),
            ("UCX_NET_DEVICES", pair.dev[i].as_str()),
        ]
    };
    let tr = run_pair([pair.prefix(0), pair.prefix(1)], [env(0), env(1)]);
    assert!(tr.starts_with("tcp/"), "{tr}");
}

/// A lossy network between the two machines (each side drops 1%, then 5%, of the
/// packets it receives, at random, with nftables): every write, read, atomic and send
/// completes, and every byte is right (UCX's TCP retransmits what was lost). Then the
/// link goes down and up again between two pairs of processes: new connections work.
#[test]
fn a_lossy_network_loses_no_bytes() {
    let Some(pair) = NetPair::new("loss") else {
        return;
    };
    let env = |i: usize| {
        vec![
            ("UCX_TLS", "tcp"),
            ("UCX_NET_DEVICES", pair.dev[i].as_str()),
        ]
    };
    for pct in [1, 5] {
        if !pair.fault(Fault::Loss(pct)) {
            eprintln!("skipped: nftables cannot be used here");
            return;
        }
        // Segments are large on a veth (64 KiB with offloads): the pair runs again
        // until the rule has dropped something (a few rounds at 1%).
        let t = Instant::now();
        let mut rounds = 0;
        while rounds < 3 || pair.dropped() == 0 {
            let tr = run_pair([pair.prefix(0), pair.prefix(1)], [env(0), env(1)]);
            assert!(tr.starts_with("tcp/"), "{tr}");
            rounds += 1;
            assert!(
                rounds < 60,
                "the loss rule dropped nothing in {rounds} rounds"
            );
        }
        eprintln!(
            "{pct}% loss each way: {rounds} rounds whole in {:?}, {} packets dropped",
            t.elapsed(),
            pair.dropped()
        );
    }
    assert!(pair.fault(Fault::Healed));
    assert!(pair.link(0, false) && pair.link(0, true));
    run_pair([pair.prefix(0), pair.prefix(1)], [env(0), env(1)]);
}

/// The environment of side `i` of a pair across namespaces: UCX over TCP on the veth,
/// with a silent peer given 2 s.
fn tcp_env(pair: &NetPair, i: usize) -> Vec<(&str, &str)> {
    vec![
        ("UCX_TLS", "tcp"),
        ("UCX_NET_DEVICES", pair.dev[i].as_str()),
        ("DOCA_RDMA_PEER_TIMEOUT_MS", "2000"),
    ]
}

/// A pair connects and runs whole, then `fault` cuts the network (a partition, or side
/// 0's link down): four writes in flight all end with `CONNECTION_RESET` within the 2 s
/// budget; then the network heals and a new pair runs whole. `false` where the fault
/// cannot be injected here.
fn cut_mid_connection(pair: &NetPair, fault: Fault) -> bool {
    let env = |i: usize| tcp_env(pair, i);
    let (t, mut i) = connect_and_run([pair.prefix(0), pair.prefix(1)], [env(0), env(1)]);
    let cut = match fault {
        Fault::Healed => pair.link(0, false),
        f => pair.fault(f),
    };
    if !cut {
        return false;
    }
    let fault = match fault {
        Fault::Healed => "link down".to_string(),
        f => format!("{f:?}"),
    };
    i.send("timed");
    let got = i.recv();
    let (outcomes, ms) = got.rsplit_once(' ').unwrap();
    let ms: u64 = ms.parse().unwrap();
    eprintln!("{fault}: {outcomes} after {ms} ms");
    let reset = format!("{:?}", Err::<u64, _>(ErrorCode::ConnectionReset));
    assert!(
        outcomes.split(',').all(|o| o == reset),
        "{fault}: every write in flight ends with CONNECTION_RESET: {got}"
    );
    assert!(
        (1500..6000).contains(&ms),
        "{fault}: the writes ended after {ms} ms, not within the 2 s budget"
    );
    drop(i);
    drop(t);
    assert!(pair.fault(Fault::Healed) && pair.link(0, true));
    // Healed: a new pair connects and runs whole.
    run_pair([pair.prefix(0), pair.prefix(1)], [env(0), env(1)]);
    true
}

/// A partition between the two machines, then a link that goes down: writes in flight
/// end with `CONNECTION_RESET` once the peer has been silent for the budget
/// (`DOCA_RDMA_PEER_TIMEOUT_MS`, 2 s here: probed meanwhile, never answered), none is
/// reported successful, and once the network heals new connections work.
#[test]
fn a_partition_ends_operations_in_flight_within_the_budget_and_heals() {
    let Some(pair) = NetPair::new("part") else {
        return;
    };
    // `Healed` stands for the link taken down (no nftables rule).
    for fault in [Fault::Partition, Fault::Healed] {
        if !cut_mid_connection(&pair, fault) {
            eprintln!("skipped: the fault cannot be injected here");
            return;
        }
    }
}

/// A read whose answer is cut by a partition: the target's answer holds its access to
/// the exported memory, and its peer can no longer be heard; once the budget is spent
/// the target's connection fails, the access ends, and the target's mmap stop (which
/// waits for accesses in flight) returns. The requester's read ends with
/// `CONNECTION_RESET`.
#[test]
fn an_answer_cut_by_a_partition_does_not_hold_the_exporters_stop() {
    let Some(pair) = NetPair::new("cutans") else {
        return;
    };
    let env = |i: usize| tcp_env(&pair, i);
    let (mut t, mut i) = connect_and_run([pair.prefix(0), pair.prefix(1)], [env(0), env(1)]);
    // The requester hears nothing: its read reaches the target, the answer does not
    // come back.
    if !pair.fault_on(1, Fault::Partition) {
        eprintln!("skipped: nftables cannot be used here");
        return;
    }
    // The whole 1 MiB: more than the sockets hold, so the answer cannot be sent off.
    i.send(&format!("read {LEN}"));
    std::thread::sleep(Duration::from_millis(300));
    // Now nothing passes either way.
    assert!(pair.fault_on(0, Fault::Partition));
    let started = Instant::now();
    t.send("stop");
    assert_eq!(t.recv(), "stopped");
    let took = started.elapsed();
    eprintln!("the exporter's stop returned after {took:?}");
    assert!(
        took < Duration::from_secs(6),
        "the stop waited {took:?} for an access to an unreachable peer"
    );
    assert_eq!(
        i.recv(),
        format!("{:?}", Err::<u64, _>(ErrorCode::ConnectionReset))
    );
    assert!(pair.fault(Fault::Healed));
}

/// A soak, run by `scripts/soak.sh --minutes N` (which sets `DOCA_SOAK_SECONDS`; the
/// test does nothing without it): RDMA pairs between two namespaces under faults chosen
/// at random until the time is up: loss of 1-5% each way, a partition or a link down
/// with operations in flight (each must end with `CONNECTION_RESET` within the budget,
/// then the network heals), a peer killed mid-transfer. Every byte is checked (a wrong
/// one, a hang past its bound or a crash fails the run); the totals are printed.
#[test]
fn soak() {
    let Some(secs) = std::env::var("DOCA_SOAK_SECONDS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    else {
        eprintln!("skipped: DOCA_SOAK_SECONDS is not set (scripts/soak.sh sets it)");
        return;
    };
    let Some(pair) = NetPair::new("soak") else {
        return;
    };
    // Under loss, the default budget (10 s): TCP's retransmissions back off (0.2, 0.4,
    // 0.8, 1.6 s, ...), and a segment lost three times in a row at 5% (once in 8,000)
    // keeps a healthy peer silent past 2 s; six times in a row (once in 64 million)
    // past 10 s.
    let lossy_env = |i: usize| {
        let mut e = tcp_env(&pair, i);
        e.retain(|(k, _)| *k != "DOCA_RDMA_PEER_TIMEOUT_MS");
        e
    };
    let mut rng = doca_testkit::Rng(random_u64().unwrap() | 1);
    let t = Instant::now();
    let (mut rounds, mut ops, mut failed_as_due) = (0u64, 0u64, 0u64);
    let mut faults = [0u64; 4];
    while t.elapsed() < Duration::from_secs(secs) {
        let kind = rng.below(4);
        match kind {
            0 => {
                let pct = 1 + rng.below(5) as u32;
                assert!(pair.fault(Fault::Loss(pct)));
                run_pair(
                    [pair.prefix(0), pair.prefix(1)],
                    [lossy_env(0), lossy_env(1)],
                );
                assert!(pair.fault(Fault::Healed));
                // Write, read back, atomic, two sends; and the read after the stop.
                ops += 6;
            }
            1 | 2 => {
                let fault = if kind == 1 {
                    Fault::Partition
                } else {
                    Fault::Healed
                };
                assert!(cut_mid_connection(&pair, fault));
                ops += 12;
                failed_as_due += 4;
            }
            _ => kill_mid_transfer(vec![("UCX_TLS", "tcp")], 1),
        }
        faults[kind] += 1;
        rounds += 1;
    }
    println!(
        "soak: {:.0} s, {rounds} rounds, {ops} operations checked ({failed_as_due} of them failed as due, in a cut network), faults: {} loss, {} partitions, {} links down, {} peers killed mid-transfer; wrong bytes 0, hangs 0, crashes 0",
        t.elapsed().as_secs_f64(),
        faults[0],
        faults[1],
        faults[2],
        faults[3]
    );
}

/// Two networks join the two machines; each side's topology names the second one for
/// its device (`rdma_iface` on one side, `rdma_addr` on the other). UCX carries the
/// traffic over that interface only, the GID table lists its addresses only, and the
/// connection manager listens on its address only.
#[test]
fn the_topology_names_the_network_a_device_uses() {
    let Some(mut pair) = NetPair::new("rtop") else {
        return;
    };
    let (dev2, addr2) = pair.add_link().expect("a second veth pair");
    let dir = std::env::temp_dir().join(format!("doca-rtop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let files: Vec<String> = (0..2)
        .map(|i| {
            let which = if i == 0 {
                format!("rdma_iface = \"{}\"", dev2[0])
            } else {
                format!("rdma_addr = \"{}\"", addr2[1])
            };
            let path = dir.join(format!("side{i}.toml"));
            std::fs::write(
                &path,
                format!("[[host.device]]\npci_addr = \"0000:3b:00.0\"\n{which}\n"),
            )
            .unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect();
    let env = |i: usize| vec![("UCX_TLS", "tcp"), ("DOCA_SW_TOPOLOGY", files[i].as_str())];
    let (mut t, mut i) = connect_and_run([pair.prefix(0), pair.prefix(1)], [env(0), env(1)]);
    i.send("transports");
    // "tcp/IFACE.PATH" per lane (without the topology, UCX takes the first link).
    let tr = i.recv();
    assert!(
        tr.split(',')
            .all(|l| l.starts_with(&format!("tcp/{}.", dev2[1]))),
        "UCX used the named interface only: {tr}"
    );
    i.send("gids");
    let gids = i.recv();
    let mine = format!("::ffff:{}", addr2[1]);
    assert_eq!(
        gids.split(' ').filter(|g| *g == mine).count(),
        2,
        "the GID table lists the named interface's IPv4 address (RoCE v1 and v2): {gids}"
    );
    for other in [&pair.addr[1], &addr2[0], &pair.addr[0]] {
        assert!(
            !gids.contains(&format!("::ffff:{other}")),
            "the GID table lists only the named interface's addresses: {gids}"
        );
    }
    t.send("listen 18515");
    assert_eq!(
        t.recv(),
        addr2[0],
        "the connection manager listens on the device's address"
    );
    i.finish();
    t.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_peer_killed_mid_transfer_on_one_machine() {
    kill_mid_transfer(vec![], 3);
}

/// The same with UCX limited to TCP, as between machines.
#[test]
fn a_peer_killed_mid_transfer_over_tcp() {
    kill_mid_transfer(vec![("UCX_TLS", "tcp")], 3);
}
