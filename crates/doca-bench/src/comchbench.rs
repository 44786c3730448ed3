//! comch (DOCA 3.x) between two processes, part of `doca-bench xproc`:
//!
//! - the control path's message round trip (a client's send task, the server's echo
//!   from its message callback, the client's message event, all through progress
//!   engines) against a raw `SOCK_SEQPACKET` round trip of the same size;
//! - the fast path's throughput (a producer's buffers into the buffers a consumer in
//!   the other process posted) against the 2.2 comm channel streaming messages of the
//!   same size to its service.
//!
//! The DPU side is this binary run again (`doca-bench xproc-peer comch`).

use crate::median;
use crate::peers::{Backoff, Peer, RawPeer, device, rep_of, runtime_dir};
use doca_comm_channel::comch::{Comch, Connection};
use doca_comm_channel::fastpath::{Consumer, Producer};
use doca_comm_channel::{Endpoint, PeerId};
use doca_core::exec::{CtxPhase, Pe, PeEvent};
use doca_core::{AccessFlags, BufInventory, Data, ErrorCode, Mmap};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// The consumer's buffers (posted at once, reposted as they fill).
const POSTED: usize = 64;
/// Messages of the peer's control path: the fast-path test starts, and is done.
const FAST_START: u8 = 0xfe;
const FAST_DONE: u8 = 0xfd;
const QUIT: u8 = 0xff;

type Inbox = Arc<Mutex<Option<(PeerId, Vec<u8>)>>>;

fn inbox(c: &Comch) -> Inbox {
    let slot: Inbox = Arc::default();
    let s = Arc::clone(&slot);
    c.on_message(move |conn: &Connection, m: &mut [u8]| {
        let mut g = s.lock().expect("inbox");
        match &mut *g {
            Some((_, v)) => {
                v.clear();
                v.extend_from_slice(m)
            }
            None => *g = Some((conn.peer(), m.to_vec())),
        }
    })
    .expect("register");
    slot
}

fn take(slot: &Inbox) -> Option<(PeerId, Vec<u8>)> {
    slot.lock().expect("inbox").take()
}

fn send_to(c: &Comch, pe: &Pe, peer: PeerId, msg: &[u8]) {
    loop {
        match c.send_to(peer, msg, Data(0)) {
            Ok(()) => return,
            Err(e) if e.code() == ErrorCode::NoMemory => {
                pe.progress(|_| {});
            }
            Err(e) => panic!("{e}"),
        }
    }
}

/// An mmap of `n` buffers of `size` bytes on `dev`, with an inventory.
fn buffers(dev: &doca_core::Dev, n: usize, size: usize) -> (Vec<u8>, Mmap, BufInventory) {
    let mut mem = vec![0x5au8; n * size];
    let mut mm = Mmap::new();
    // SAFETY: the vector is returned with the mmap and outlives its use; it does not
    // move (its heap block stays put).
    unsafe { mm.set_memrange(mem.as_mut_ptr(), mem.len()) }.expect("memrange");
    mm.set_permissions(AccessFlags::LOCAL_READ_WRITE | AccessFlags::DPU_READ_WRITE)
        .expect("permissions");
    mm.dev_add(dev).expect("dev");
    mm.start().expect("mmap");
    let mut inv = BufInventory::new(2 * n).expect("inventory");
    inv.start().expect("inventory");
    (mem, mm, inv)
}

/// The DPU side: a comch server echoing messages; on [`FAST_START`] a consumer that
/// takes the announced number of buffers, then answers [`FAST_DONE`].
pub fn peer() {
    let dpu = device("dpu");
    let rep = rep_of(&dpu);
    let server = Arc::new(Comch::server(&dpu, &rep, "doca-bench-comch").expect("server"));
    server.set_send_tasks(64).expect("tasks");
    server.set_recv_queue_size(64).expect("queue");
    // Echoes go out from the message callback, as DOCA's samples answer; the test's
    // own messages go to the inbox.
    let slot: Inbox = Arc::default();
    let (s2, me) = (Arc::clone(&slot), Arc::downgrade(&server));
    server
        .on_message(move |conn: &Connection, m: &mut [u8]| {
            if matches!(m.first(), Some(&QUIT) | Some(&FAST_START)) {
                *s2.lock().expect("inbox") = Some((conn.peer(), m.to_vec()));
                return;
            }
            if let Some(s) = me.upgrade() {
                s.send(conn, m, Data(0)).expect("echo");
            }
        })
        .expect("register");
    let pe = Pe::new().expect("pe");
    pe.connect(server.ctx()).expect("connect");
    pe.start_ctx(server.ctx()).expect("start");
    println!("listening");
    let mut wait = Backoff::default();
    loop {
        if pe.progress(|_| {}) {
            wait.busy();
        }
        let Some((peer, m)) = take(&slot) else {
            wait.idle();
            continue;
        };
        wait.busy();
        match m.first() {
            Some(&QUIT) if m.len() == 1 => return,
            Some(&FAST_START) if m.len() == 13 => {
                let n = u64::from_le_bytes(m[1..9].try_into().expect("8"));
                let size = u32::from_le_bytes(m[9..13].try_into().expect("4")) as usize;
                let conn = server.connection_of(peer).expect("connection");
                consume(&dpu, &conn, &pe, n, size);
                send_to(&server, &pe, peer, &[FAST_DONE]);
            }
            _ => {}
        }
    }
}

/// Receives `n` buffers of up to `size` bytes on a consumer of `conn`.
fn consume(dev: &doca_core::Dev, conn: &Arc<Connection>, pe: &Pe, n: u64, size: usize) {
    let (mem, mm, inv) = buffers(dev, POSTED, size);
    let consumer = Consumer::new(conn).expect("consumer");
    consumer.set_num_tasks(POSTED as u32).expect("tasks");
    let kpe = Pe::new().expect("pe");
    kpe.connect(consumer.ctx()).expect("connect");
    let _ = kpe.start_ctx(consumer.ctx());
    while consumer.ctx().phase() != CtxPhase::Running {
        kpe.progress(|_| {});
        pe.progress(|_| {});
    }
    let base = mem.as_ptr() as *mut u8;
    for i in 0..POSTED {
        // SAFETY: inside the mmap.
        let b = inv
            .buf_by_addr(&mm, unsafe { base.add(i * size) }, size)
            .expect("buf");
        consumer.post_recv(b, Data(i as u64)).expect("post");
    }
    let mut got = 0u64;
    while got < n {
        kpe.progress(|ev| {
            if let PeEvent::Task(mut c) = ev {
                assert!(c.error.is_none(), "{:?}", c.error);
                got += 1;
                let mut b = c.take_buf(doca_core::JobRecord::DST).expect("buf");
                b.reset_data_len();
                if let Err((e, _)) = consumer.post_recv(b, c.record.user_data) {
                    panic!("{e}");
                }
            }
        });
        pe.progress(|_| {});
    }
    let _ = kpe.stop_ctx(consumer.ctx());
    while consumer.ctx().phase() != CtxPhase::Idle {
        kpe.progress(|_| {});
    }
    drop(mem);
}

struct Client {
    c: Comch,
    pe: Pe,
    slot: Inbox,
    conn: Arc<Connection>,
    consumers: Arc<Mutex<Vec<u32>>>,
}

fn client() -> Client {
    let c = Comch::client(&device("host"), "doca-bench-comch").expect("client");
    c.set_send_tasks(64).expect("tasks");
    c.set_recv_queue_size(64).expect("queue");
    let slot = inbox(&c);
    let consumers: Arc<Mutex<Vec<u32>>> = Arc::default();
    let k = Arc::clone(&consumers);
    c.on_consumer(move |_, id| k.lock().expect("ids").push(id), |_, _| {})
        .expect("consumer events");
    let pe = Pe::new().expect("pe");
    pe.connect(c.ctx()).expect("connect");
    let _ = pe.start_ctx(c.ctx());
    while c.ctx().phase() != CtxPhase::Running {
        pe.progress(|_| {});
    }
    let conn = c.connection().expect("connection");
    Client {
        c,
        pe,
        slot,
        conn,
        consumers,
    }
}

impl Client {
    fn round(&self, msg: &[u8]) {
        self.c.send(&self.conn, msg, Data(0)).expect("send");
        loop {
            self.pe.progress(|_| {});
            if let Some((_, m)) = take(&self.slot) {
                assert_eq!(m.len(), msg.len());
                return;
            }
        }
    }

    /// `n` buffers of `size` bytes to a consumer of the peer: seconds.
    fn stream(&self, n: u64, size: usize) -> f64 {
        let mut start = vec![FAST_START];
        start.extend_from_slice(&n.to_le_bytes());
        start.extend_from_slice(&(size as u32).to_le_bytes());
        self.consumers.lock().expect("ids").clear();
        self.c.send(&self.conn, &start, Data(0)).expect("send");
        let id = loop {
            self.pe.progress(|_| {});
            if let Some(id) = self.consumers.lock().expect("ids").first() {
                break *id;
            }
        };
        let (mem, mm, inv) = buffers(&device("host"), POSTED, size);
        let producer = Producer::new(&self.conn).expect("producer");
        producer.set_num_tasks(POSTED as u32).expect("tasks");
        let ppe = Pe::new().expect("pe");
        ppe.connect(producer.ctx()).expect("connect");
        ppe.start_ctx(producer.ctx()).expect("start");
        let base = mem.as_ptr() as *mut u8;
        let mut free: Vec<doca_core::Buf> = (0..POSTED)
            .map(|i| {
                // SAFETY: inside the mmap.
                let p = unsafe { base.add(i * size) };
                inv.buf_by_data(&mm, p, size).expect("buf")
            })
            .collect();
        let t = Instant::now();
        let mut sent = 0u64;
        while sent < n {
            while let Some(b) = free.pop() {
                if sent == n {
                    free.push(b);
                    break;
                }
                match producer.send(b, &[], id, Data(0)) {
                    Ok(()) => sent += 1,
                    Err((e, b)) if e.code() == ErrorCode::NoMemory => {
                        free.push(b);
                        break;
                    }
                    Err((e, _)) => panic!("{e}"),
                }
            }
            ppe.progress(|ev| {
                if let PeEvent::Task(mut c) = ev {
                    assert!(c.error.is_none(), "{:?}", c.error);
                    free.push(c.take_buf(doca_core::JobRecord::SRC).expect("buf"));
                }
            });
            self.pe.progress(|_| {});
        }
        loop {
            ppe.progress(|_| {});
            self.pe.progress(|_| {});
            if let Some((_, m)) = take(&self.slot) {
                assert_eq!(m, [FAST_DONE]);
                break;
            }
        }
        let secs = t.elapsed().as_secs_f64();
        while ppe.inflight() > 0 {
            ppe.progress(|_| {});
        }
        ppe.stop_ctx(producer.ctx()).expect("stop");
        drop(free);
        drop(mem);
        secs
    }
}

/// (comch round trip ns, raw round trip ns) per size, and (fast path MB/s, 2.2 comm
/// channel MB/s) at 4080 bytes, and fast path MB/s at 64 KiB.
pub struct Figures {
    pub rounds: Vec<(usize, f64, f64)>,
    pub fast: (f64, f64),
    pub fast_64k: f64,
}

/// Streams `n` messages of `size` bytes to the 2.2 service (in its sink mode): seconds.
fn stream_22(ep: &mut Endpoint, to: PeerId, n: u64, size: usize) -> f64 {
    let msg = vec![0x5au8; size];
    let send = |ep: &mut Endpoint, m: &[u8]| {
        while let Err(e) = ep.sendto(m, to) {
            assert_eq!(e.code(), ErrorCode::Again);
        }
    };
    let t = Instant::now();
    send(ep, &[FAST_START]);
    for _ in 0..n {
        send(ep, &msg);
    }
    send(ep, &[FAST_DONE]);
    let mut buf = [0u8; 8];
    loop {
        match ep.recvfrom(&mut buf) {
            Ok((1, _)) if buf[0] == FAST_DONE => break,
            Ok(_) => {}
            Err((e, _)) if e.code() == ErrorCode::Again => std::hint::spin_loop(),
            Err((e, _)) => panic!("{e}"),
        }
    }
    t.elapsed().as_secs_f64()
}

pub fn run(reps: usize, rounds: usize, stream: u64) -> Figures {
    let rt = runtime_dir();
    let mut server = Peer::spawn("comch", &[("DOCA_SW_RUNTIME_DIR", &rt)]);
    assert_eq!(server.recv(), "listening");
    let mut cc = Peer::spawn("comm-channel", &[("DOCA_SW_RUNTIME_DIR", &rt)]);
    assert_eq!(cc.recv(), "listening");
    // SAFETY: set before this process's channels read it; no other thread reads the
    // environment meanwhile.
    unsafe { std::env::set_var("DOCA_SW_RUNTIME_DIR", &rt) };
    let cl = client();
    let raw = RawPeer::spawn();
    let mut ep = Endpoint::new();
    ep.set_device(&device("host")).expect("device");
    let to = ep.connect("doca-bench").expect("connect");
    let mut figures = Figures {
        rounds: Vec::new(),
        fast: (0.0, 0.0),
        fast_64k: 0.0,
    };
    let mut buf = vec![0u8; 4096];
    for size in [64, 1024] {
        let msg = vec![0x5au8; size];
        for _ in 0..rounds / 10 {
            cl.round(&msg);
            raw.round(&msg, &mut buf);
        }
        let (mut c_t, mut r_t) = (Vec::new(), Vec::new());
        for _ in 0..reps {
            let t = Instant::now();
            for _ in 0..rounds {
                cl.round(&msg);
            }
            c_t.push(t.elapsed().as_nanos() as f64 / rounds as f64);
            let t = Instant::now();
            for _ in 0..rounds {
                raw.round(&msg, &mut buf);
            }
            r_t.push(t.elapsed().as_nanos() as f64 / rounds as f64);
        }
        figures.rounds.push((size, median(c_t), median(r_t)));
    }
    let mb = |n: u64, size: usize, s: f64| n as f64 * size as f64 / s / 1e6;
    let (mut f_t, mut c_t, mut big) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        f_t.push(mb(stream, 4080, cl.stream(stream, 4080)));
        c_t.push(mb(stream, 4080, stream_22(&mut ep, to, stream, 4080)));
        big.push(mb(stream / 8, 65536, cl.stream(stream / 8, 65536)));
    }
    figures.fast = (median(f_t), median(c_t));
    figures.fast_64k = median(big);
    cl.c.send(&cl.conn, &[QUIT], Data(0)).expect("quit");
    for _ in 0..100 {
        cl.pe.progress(|_| {});
    }
    let _ = ep.sendto(&[QUIT], to);
    raw.quit();
    let _ = server.child.wait();
    let _ = cc.child.wait();
    let _ = std::fs::remove_dir_all(&rt);
    figures
}
