//! Host and DPU as two processes, against the same work in one process, in one run:
//!
//! - DMA of 64 MiB from an imported mmap (the host's memory, read by the DPU-side
//!   process) against a DMA copy of 64 MiB between two mmaps of one process: the host's
//!   memory in [`doca_core::SharedMemory`] (mapped by the importer) and in private memory
//!   (reached with process_vm_readv);
//! - sync event ping-pong between the two processes (an exported event) against the
//!   ping-pong between two threads of one process;
//! - comm channel message round trip against a raw Unix `SOCK_SEQPACKET` round trip of
//!   the same size, both polling without blocking;
//! - comch (3.x): its round trip against the raw one, and its fast path's throughput
//!   against the 2.2 comm channel's (see `comchbench`).
//!
//! The DPU side is this binary run again (`doca-bench xproc-peer`), talking over its
//! stdin/stdout.

use crate::median;
use crate::peers::{Backoff, Peer, RawPeer, device, hex, rep_of, runtime_dir, unhex};
use clap::Args;
use doca_comm_channel::Endpoint;
use doca_core::{AccessFlags, BufInventory, Data, ErrorCode, Mmap, SyncEvent, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use std::io::BufRead;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct XprocArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
}

#[derive(Args, Debug)]
pub struct PeerArgs {
    /// What to do: dma, sync-event, comm-channel or raw-socket.
    what: String,
}

const DMA_BYTES: usize = 64 << 20;

/// One DMA of `DMA_BYTES` from `src` (at `addr`) into a local buffer: milliseconds.
fn dma_once(
    wq: &mut WorkQ,
    dma: &Dma,
    inv: &BufInventory,
    src: &Mmap,
    addr: usize,
    dst: &Mmap,
) -> f64 {
    let s = inv
        .buf_by_data(src, addr as *mut u8, DMA_BYTES)
        .expect("src");
    let d = inv.buf_at(dst, 0, DMA_BYTES).expect("dst");
    let t = Instant::now();
    wq.submit_job(dma.as_ctx(), MemcpyJob::new(s, d, 0))
        .map_err(|(e, _)| e)
        .expect("submit");
    let c = wq.wait(None).map_err(|e| e.code()).expect("completion");
    let ms = t.elapsed().as_secs_f64() * 1e3;
    drop(c);
    ms
}

fn peer_dma(lines: &mut impl Iterator<Item = String>) {
    let w = lines.next().expect("descriptor");
    let mut it = w.split_whitespace();
    let blob = unhex(it.next().expect("blob"));
    let addr: usize = it.next().expect("addr").parse().expect("addr");
    let reps: usize = it.next().expect("reps").parse().expect("reps");
    let dev = device("dpu");
    let remote = Mmap::create_from_export(Data(0), &blob, &dev).expect("import");
    let mut local = Mmap::new();
    local.set_memory(vec![1u8; 2 * DMA_BYTES]).expect("memory");
    local.dev_add(&dev).expect("dev_add");
    local.start().expect("start");
    let mut other = Mmap::new();
    other.set_memory(vec![2u8; DMA_BYTES]).expect("memory");
    other.dev_add(&dev).expect("dev_add");
    other.start().expect("start");
    let local_base = local.memrange().expect("range").0 as usize;
    let mut inv = BufInventory::new(8).expect("inventory");
    inv.start().expect("start");
    let dma = Dma::new();
    dma.as_ctx().dev_add(&dev).expect("dev_add");
    dma.as_ctx().start().expect("start");
    let mut wq = WorkQ::new(4).expect("workq");
    dma.as_ctx().workq_add(&mut wq).expect("workq_add");
    let (mut r, mut l) = (Vec::new(), Vec::new());
    // Warm both paths (page faults of the destinations), then alternate.
    dma_once(&mut wq, &dma, &inv, &remote, addr, &other);
    dma_once(&mut wq, &dma, &inv, &local, local_base, &other);
    for _ in 0..reps {
        r.push(dma_once(&mut wq, &dma, &inv, &remote, addr, &other));
        l.push(dma_once(&mut wq, &dma, &inv, &local, local_base, &other));
    }
    println!("{} {}", median(r), median(l));
    dma.as_ctx().workq_rm(&mut wq).expect("workq_rm");
}

/// One side of a ping-pong on a counter starting at 0: the first side sets odd values
/// and waits for the next even one; the other waits for each odd value and answers.
fn ping_pong(se: &SyncEvent, rounds: u64, answering: bool) {
    for i in 0..rounds {
        if answering {
            se.wait_gt(2 * i, u64::MAX).expect("wait");
            se.update_set(2 * i + 2).expect("set");
        } else {
            se.update_set(2 * i + 1).expect("set");
            se.wait_gt(2 * i + 1, u64::MAX).expect("wait");
        }
    }
}

fn peer_sync_event(lines: &mut impl Iterator<Item = String>) {
    let w = lines.next().expect("descriptor");
    let mut it = w.split_whitespace();
    let blob = unhex(it.next().expect("blob"));
    let reps: usize = it.next().expect("reps").parse().expect("reps");
    let rounds: u64 = it.next().expect("rounds").parse().expect("rounds");
    let se = SyncEvent::create_from_export(&device("dpu"), &blob).expect("import");
    se.start().expect("start");
    println!("ready");
    for _ in 0..reps {
        lines.next().expect("go");
        ping_pong(&se, rounds, true);
    }
}

/// The 2.2 service: echoes every message; between a 0xfe and a 0xfd message it only
/// takes them (a stream), then answers 0xfd.
fn peer_comm_channel() {
    let dpu = device("dpu");
    let rep = rep_of(&dpu);
    let mut ep = Endpoint::new();
    ep.set_device(&dpu).expect("device");
    ep.set_device_rep(&rep).expect("rep");
    ep.listen("doca-bench").expect("listen");
    println!("listening");
    let mut buf = [0u8; 4096];
    let mut sink = false;
    let mut wait = Backoff::default();
    loop {
        match ep.recvfrom(&mut buf) {
            Ok((n, from)) => {
                wait.busy();
                if n == 1 && buf[0] == 0xff {
                    return;
                }
                if n == 1 && buf[0] == 0xfe {
                    sink = true;
                    continue;
                }
                if n == 1 && buf[0] == 0xfd {
                    sink = false;
                } else if sink {
                    continue;
                }
                while let Err(e) = ep.sendto(&buf[..n], from) {
                    assert_eq!(e.code(), ErrorCode::Again);
                }
            }
            Err((e, _)) if e.code() == ErrorCode::Again => wait.idle(),
            Err((e, _)) => panic!("{e}"),
        }
    }
}

/// Echoes on the socket inherited as descriptor 3 (busy polling).
fn peer_raw_socket() {
    // SAFETY: the parent passes the socket as descriptor 3; nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(3) };
    let mut buf = [0u8; 4096];
    let mut wait = Backoff::default();
    loop {
        // SAFETY: buf is valid for its length.
        let n = unsafe {
            libc::recv(
                fd.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n < 0 {
            wait.idle();
            continue;
        }
        wait.busy();
        if n == 0 || (n == 1 && buf[0] == 0xff) {
            return;
        }
        // SAFETY: n bytes of buf.
        unsafe {
            libc::send(
                fd.as_raw_fd(),
                buf.as_ptr().cast(),
                n as usize,
                libc::MSG_NOSIGNAL,
            )
        };
    }
}

pub fn peer(a: &PeerArgs) {
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines().map_while(Result::ok);
    match a.what.as_str() {
        "dma" => peer_dma(&mut lines),
        "sync-event" => peer_sync_event(&mut lines),
        "comm-channel" => peer_comm_channel(),
        "comch" => crate::comchbench::peer(),
        "raw-socket" => peer_raw_socket(),
        w => panic!("unknown peer work {w}"),
    }
}

fn bench_dma(reps: usize, shared: bool) -> (f64, f64) {
    let dev = device("host");
    let mut mmap = Mmap::new();
    if shared {
        let mut m = doca_core::SharedMemory::new(DMA_BYTES).expect("shared memory");
        use doca_core::MemoryRegion;
        // SAFETY: the region's bytes, borrowed exclusively here.
        unsafe { std::ptr::write_bytes(m.as_mut_ptr(), 3, DMA_BYTES) };
        mmap.set_memory(m).expect("memory");
    } else {
        mmap.set_memory(vec![3u8; DMA_BYTES]).expect("memory");
    }
    mmap.set_permissions(AccessFlags::DPU_READ_WRITE)
        .expect("permissions");
    mmap.dev_add(&dev).expect("dev_add");
    mmap.start().expect("start");
    let blob = mmap.export_dpu(&dev).expect("export");
    let addr = mmap.memrange().expect("range").0 as usize;
    let mut p = Peer::spawn("dma", &[]);
    p.send(&format!("{} {addr} {reps}", hex(&blob)));
    let l = p.recv();
    let mut it = l.split_whitespace().map(|x| x.parse::<f64>().expect("ms"));
    (it.next().expect("remote"), it.next().expect("local"))
}

fn bench_sync_event(reps: usize, rounds: u64) -> (f64, f64) {
    let dev = device("host");
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(&dev).expect("location");
    se.subscriber_add_location_dpu().expect("location");
    se.start().expect("start");
    let blob = se.export_to_dpu(&dev).expect("export");
    let mut p = Peer::spawn("sync-event", &[]);
    p.send(&format!("{} {reps} {rounds}", hex(&blob)));
    assert_eq!(p.recv(), "ready");
    let local = SyncEvent::new();
    local.publisher_add_location_cpu(&dev).expect("location");
    local.subscriber_add_location_cpu(&dev).expect("location");
    local.start().expect("start");
    let (mut x, mut l) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        se.update_set(0).expect("reset");
        p.send("go");
        let t = Instant::now();
        ping_pong(&se, rounds, false);
        x.push(t.elapsed().as_nanos() as f64 / rounds as f64);
        local.update_set(0).expect("reset");
        let t = Instant::now();
        std::thread::scope(|s| {
            s.spawn(|| ping_pong(&local, rounds, true));
            ping_pong(&local, rounds, false);
        });
        l.push(t.elapsed().as_nanos() as f64 / rounds as f64);
    }
    se.stop().expect("stop");
    local.stop().expect("stop");
    (median(x), median(l))
}

fn bench_messages(reps: usize, rounds: usize, size: usize) -> (f64, f64) {
    let rt = runtime_dir();
    let mut server = Peer::spawn("comm-channel", &[("DOCA_SW_RUNTIME_DIR", &rt)]);
    assert_eq!(server.recv(), "listening");
    // SAFETY: setting the variable before this process's endpoint reads it; no other
    // thread reads the environment meanwhile.
    unsafe { std::env::set_var("DOCA_SW_RUNTIME_DIR", &rt) };
    let mut ep = Endpoint::new();
    ep.set_device(&device("host")).expect("device");
    let to = ep.connect("doca-bench").expect("connect");
    let raw = RawPeer::spawn();
    let msg = vec![0x5au8; size];
    let mut buf = vec![0u8; 4096];
    let cc_round = |ep: &mut Endpoint, buf: &mut [u8]| {
        while let Err(e) = ep.sendto(&msg, to) {
            assert_eq!(e.code(), ErrorCode::Again);
        }
        loop {
            match ep.recvfrom(buf) {
                Ok((n, _)) => {
                    assert_eq!(n, size);
                    return;
                }
                Err((e, _)) if e.code() == ErrorCode::Again => std::hint::spin_loop(),
                Err((e, _)) => panic!("{e}"),
            }
        }
    };
    for _ in 0..rounds / 10 {
        cc_round(&mut ep, &mut buf);
        raw.round(&msg, &mut buf);
    }
    let (mut c_t, mut r_t) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        let t = Instant::now();
        for _ in 0..rounds {
            cc_round(&mut ep, &mut buf);
        }
        c_t.push(t.elapsed().as_nanos() as f64 / rounds as f64);
        let t = Instant::now();
        for _ in 0..rounds {
            raw.round(&msg, &mut buf);
        }
        r_t.push(t.elapsed().as_nanos() as f64 / rounds as f64);
    }
    let _ = ep.sendto(&[0xff], to);
    raw.quit();
    let _ = server.child.wait();
    let _ = std::fs::remove_dir_all(&rt);
    (median(c_t), median(r_t))
}

pub fn run(a: &XprocArgs) {
    let (reps, rounds, msgs) = if a.quick {
        (3, 2_000, 2_000)
    } else {
        (a.reps.max(1), 200_000, 50_000)
    };
    println!("medians of {reps} samples, the two sides taken in turn\n");
    println!(
        "| host and DPU as two processes | two processes | one process | ratio (DMA: of throughputs; others: of times) |"
    );
    println!("|---|---|---|---|");
    let gbs = |ms: f64| DMA_BYTES as f64 / ms / 1e6;
    for (shared, what) in [(true, "shared memory"), (false, "private memory")] {
        let (remote, local) = bench_dma(reps, shared);
        println!(
            "| DMA 64 MiB from an imported mmap ({what}) vs in-process (GB/s) | {:.2} | {:.2} | {:.2}x |",
            gbs(remote),
            gbs(local),
            local / remote
        );
    }
    let (x, l) = bench_sync_event(reps, rounds);
    println!(
        "| sync event ping-pong (ns per round trip) | {x:.0} | {l:.0} | {:.2}x |",
        x / l
    );
    for size in [64, 1024] {
        let (c, r) = bench_messages(reps, msgs, size);
        println!(
            "| comm channel round trip, {size} B (ns), vs raw SOCK_SEQPACKET | {c:.0} | {r:.0} | {:.2}x |",
            c / r
        );
    }
    let f = crate::comchbench::run(reps, msgs, if a.quick { 2_000 } else { 50_000 });
    for (size, c, r) in f.rounds {
        println!(
            "| comch round trip, {size} B (ns, send task, echo from the message callback), vs raw SOCK_SEQPACKET | {c:.0} | {r:.0} | {:.2}x |",
            c / r
        );
    }
    println!(
        "| comch fast path, 4080 B buffers, vs the 2.2 comm channel streaming 4080 B messages (MB/s; ratio: the 2.2 channel's over the fast path's) | {:.0} | {:.0} | {:.2}x |",
        f.fast.0,
        f.fast.1,
        f.fast.1 / f.fast.0
    );
    println!(
        "| comch fast path, 64 KiB buffers (MB/s) | {:.0} | | |",
        f.fast_64k
    );
}
