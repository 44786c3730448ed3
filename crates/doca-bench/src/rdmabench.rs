//! RDMA: write and read throughput of 64 KiB and 1 MiB, and the 64 B send/receive round
//! trip, through DOCA RDMA contexts (each with its software NIC) against raw UCX on the
//! same machine in the same run: `ucp_put_nbx` + flush, `ucp_get_nbx`, and active
//! messages answered from the handler. The transports UCX chose are printed with the
//! table (`UCX_TLS=tcp` in the environment measures TCP; `--shm` lets our contexts use
//! shared memory, as the raw pair does).

use crate::median;
use clap::Args;
use doca_core::exec::{Pe, PeEvent};
use doca_core::{AccessFlags, BufInventory, Data, JobRecord, Mmap, device};
use doca_rdma::{JOB_READ, JOB_RECV, JOB_SEND, JOB_WRITE, Rdma, slot};
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};
use ucx_sys as u;

#[derive(Args, Debug)]
pub struct RdmaArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// Bytes moved per throughput sample.
    #[arg(long, default_value_t = 256 << 20)]
    bytes: usize,
    /// Round trips per latency sample.
    #[arg(long, default_value_t = 20_000)]
    rounds: u64,
    /// Operations in flight for throughput.
    #[arg(long, default_value_t = 4)]
    window: usize,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
    /// Let our contexts reach each other through shared memory (`DOCA_RDMA_SHM=1`;
    /// UCX then detects no peer failures: see the README).
    #[arg(long)]
    shm: bool,
}

const MEM: usize = 4 << 20;
const SIZES: [usize; 2] = [64 << 10, 1 << 20];

fn check(s: u::ucs_status_t, what: &str) {
    assert!(s == u::UCS_OK, "{what}: UCX status {s}");
}

/// Waits for a UCX request (or an immediate status) by progressing `workers`.
fn wait_req(p: u::ucs_status_ptr_t, workers: &[u::ucp_worker_h], what: &str) {
    if p.is_null() {
        return;
    }
    assert!(!u::ucs_ptr_is_err(p), "{what}: {}", u::ucs_ptr_status(p));
    loop {
        // SAFETY: a live request of these workers.
        let s = unsafe { u::ucp_request_check_status(p) };
        if s != u::UCS_INPROGRESS {
            check(s, what);
            break;
        }
        for &w in workers {
            // SAFETY: workers this thread progresses.
            unsafe { u::ucp_worker_progress(w) };
        }
    }
    // SAFETY: a completed request, freed once.
    unsafe { u::ucp_request_free(p) };
}

/// The raw UCX pair: two workers of one context with RMA and active messages, B's
/// memory mapped and its key unpacked at A.
struct Raw {
    ctx: u::ucp_context_h,
    wa: u::ucp_worker_h,
    wb: u::ucp_worker_h,
    ab: u::ucp_ep_h,
    ba: u::ucp_ep_h,
    memh: u::ucp_mem_h,
    rkey: u::ucp_rkey_h,
    mem_a: Vec<u8>,
    mem_b: Vec<u8>,
}

fn worker(ctx: u::ucp_context_h) -> (u::ucp_worker_h, Vec<u8>) {
    // SAFETY: zeroed params with the named fields set; outputs are locals.
    unsafe {
        let mut wp: u::ucp_worker_params_t = std::mem::zeroed();
        wp.field_mask = u::UCP_WORKER_PARAM_FIELD_THREAD_MODE as u64;
        wp.thread_mode = u::UCS_THREAD_MODE_SINGLE;
        let mut w = ptr::null_mut();
        check(u::ucp_worker_create(ctx, &wp, &mut w), "worker");
        let mut a = ptr::null_mut();
        let mut n = 0usize;
        check(u::ucp_worker_get_address(w, &mut a, &mut n), "address");
        let addr = std::slice::from_raw_parts(a as *const u8, n).to_vec();
        u::ucp_worker_release_address(w, a);
        (w, addr)
    }
}

fn endpoint(w: u::ucp_worker_h, addr: &[u8]) -> u::ucp_ep_h {
    // SAFETY: zeroed params with the named fields set; the address is a worker's.
    unsafe {
        let mut p: u::ucp_ep_params_t = std::mem::zeroed();
        p.field_mask = u::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS as u64;
        p.address = addr.as_ptr() as *const u::ucp_address_t;
        let mut ep = ptr::null_mut();
        check(u::ucp_ep_create(w, &p, &mut ep), "endpoint");
        ep
    }
}

/// Replies of the raw active message ping-pong arrive here (A's handler).
static PONGS: AtomicU64 = AtomicU64::new(0);
/// B's endpoint to A, for B's handler to answer on.
static BA: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" fn ping_cb(
    _arg: *mut c_void,
    _h: *const c_void,
    _hl: usize,
    data: *mut c_void,
    len: usize,
    _p: *const u::ucp_am_recv_param_t,
) -> u::ucs_status_t {
    let ep = BA.load(Ordering::Relaxed) as usize as u::ucp_ep_h;
    // SAFETY: zeroed params; the data is valid during the callback (eager, copied out
    // by the send or kept by UCX until it completes).
    unsafe {
        let p: u::ucp_request_param_t = std::mem::zeroed();
        let r = u::ucp_am_send_nbx(ep, 2, ptr::null(), 0, data, len, &p);
        if !r.is_null() && !u::ucs_ptr_is_err(r) {
            u::ucp_request_free(r);
        }
    }
    u::UCS_OK
}

unsafe extern "C" fn pong_cb(
    _arg: *mut c_void,
    _h: *const c_void,
    _hl: usize,
    _data: *mut c_void,
    _len: usize,
    _p: *const u::ucp_am_recv_param_t,
) -> u::ucs_status_t {
    PONGS.fetch_add(1, Ordering::Relaxed);
    u::UCS_OK
}

fn set_handler(w: u::ucp_worker_h, id: u32, cb: u::ucp_am_recv_callback_t) {
    // SAFETY: zeroed params with the named fields set; the callback is static.
    unsafe {
        let mut p: u::ucp_am_handler_param_t = std::mem::zeroed();
        p.field_mask = (u::UCP_AM_HANDLER_PARAM_FIELD_ID | u::UCP_AM_HANDLER_PARAM_FIELD_CB) as u64;
        p.id = id;
        p.cb = cb;
        check(u::ucp_worker_set_am_recv_handler(w, &p), "handler");
    }
}

impl Raw {
    fn new() -> Raw {
        // SAFETY: zeroed params with the named fields set; outputs are locals.
        let ctx = unsafe {
            let mut p: u::ucp_params_t = std::mem::zeroed();
            p.field_mask = u::UCP_PARAM_FIELD_FEATURES as u64;
            p.features = (u::UCP_FEATURE_RMA | u::UCP_FEATURE_AM) as u64;
            let mut ctx = ptr::null_mut();
            check(u::ucp_init(&p, ptr::null(), &mut ctx), "ucp_init");
            ctx
        };
        let (wa, aa) = worker(ctx);
        let (wb, ab_addr) = worker(ctx);
        let ab = endpoint(wa, &ab_addr);
        let ba = endpoint(wb, &aa);
        let mut mem_b = vec![0u8; MEM];
        let mem_a = vec![1u8; MEM];
        // SAFETY: zeroed params naming B's memory, which outlives the mapping.
        let (memh, rkey) = unsafe {
            let mut mp: u::ucp_mem_map_params_t = std::mem::zeroed();
            mp.field_mask =
                (u::UCP_MEM_MAP_PARAM_FIELD_ADDRESS | u::UCP_MEM_MAP_PARAM_FIELD_LENGTH) as u64;
            mp.address = mem_b.as_mut_ptr().cast();
            mp.length = MEM;
            let mut memh = ptr::null_mut();
            check(u::ucp_mem_map(ctx, &mp, &mut memh), "mem_map");
            let mut kb = ptr::null_mut();
            let mut kn = 0usize;
            check(u::ucp_rkey_pack(ctx, memh, &mut kb, &mut kn), "rkey_pack");
            let mut rkey = ptr::null_mut();
            check(u::ucp_ep_rkey_unpack(ab, kb, &mut rkey), "rkey_unpack");
            u::ucp_rkey_buffer_release(kb);
            (memh, rkey)
        };
        set_handler(wb, 1, Some(ping_cb));
        set_handler(wa, 2, Some(pong_cb));
        BA.store(ba as usize as u64, Ordering::Relaxed);
        let r = Raw {
            ctx,
            wa,
            wb,
            ab,
            ba,
            memh,
            rkey,
            mem_a,
            mem_b,
        };
        // Wire the endpoints up both ways before measuring.
        r.ping_pong(10);
        r
    }

    /// The transports of A's endpoint.
    fn transports(&self) -> String {
        // SAFETY: A's endpoint, of a worker this thread uses.
        unsafe { doca_rdma::transports_of(self.ab) }
    }

    /// Bytes per second of `total` bytes of puts (`get`: gets) of `size` bytes,
    /// `window` at a time, each batch flushed (remotely complete); B's worker is
    /// progressed by a thread of its own meanwhile, as a target's would be.
    fn rma(&mut self, get: bool, size: usize, total: usize, window: usize) -> f64 {
        let stop = Arc::new(AtomicBool::new(false));
        let wb = self.wb as usize;
        let s2 = Arc::clone(&stop);
        let t = std::thread::spawn(move || {
            while !s2.load(Ordering::Relaxed) {
                // SAFETY: B's worker, used by this thread only while it runs.
                unsafe { u::ucp_worker_progress(wb as u::ucp_worker_h) };
            }
        });
        let base = self.mem_b.as_ptr() as u64;
        let n = total.div_ceil(size);
        let slots = (MEM / size).max(1);
        let start = Instant::now();
        let mut done = 0;
        while done < n {
            let batch = window.min(n - done);
            let mut reqs = Vec::with_capacity(batch);
            for k in 0..batch {
                let off = ((done + k) % slots) * size;
                // SAFETY: zeroed params; A's and B's memory of `size` bytes at `off`
                // (inside both), B's key.
                let r = unsafe {
                    let p: u::ucp_request_param_t = std::mem::zeroed();
                    let local = self.mem_a.as_mut_ptr().add(off).cast::<c_void>();
                    if get {
                        u::ucp_get_nbx(self.ab, local, size, base + off as u64, self.rkey, &p)
                    } else {
                        u::ucp_put_nbx(self.ab, local, size, base + off as u64, self.rkey, &p)
                    }
                };
                reqs.push(r);
            }
            for r in reqs {
                wait_req(r, &[self.wa], "rma");
            }
            if !get {
                // SAFETY: zeroed params; A's endpoint.
                let f = unsafe {
                    let p: u::ucp_request_param_t = std::mem::zeroed();
                    u::ucp_ep_flush_nbx(self.ab, &p)
                };
                wait_req(f, &[self.wa], "flush");
            }
            done += batch;
        }
        let secs = start.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        let _ = t.join();
        (n * size) as f64 / secs
    }

    /// Round trips of 64 B active messages, B answering from its handler; one thread
    /// progresses both workers. Nanoseconds per round trip.
    fn ping_pong(&self, rounds: u64) -> f64 {
        let msg = [7u8; 64];
        let start = Instant::now();
        for _ in 0..rounds {
            let want = PONGS.load(Ordering::Relaxed) + 1;
            // SAFETY: zeroed params; the message outlives the send (waited for).
            let r = unsafe {
                let p: u::ucp_request_param_t = std::mem::zeroed();
                u::ucp_am_send_nbx(self.ab, 1, ptr::null(), 0, msg.as_ptr().cast(), 64, &p)
            };
            wait_req(r, &[self.wa, self.wb], "am");
            while PONGS.load(Ordering::Relaxed) < want {
                // SAFETY: the workers, progressed by this thread only.
                unsafe {
                    u::ucp_worker_progress(self.wb);
                    u::ucp_worker_progress(self.wa);
                }
            }
        }
        start.elapsed().as_nanos() as f64 / rounds as f64
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        // SAFETY: everything made in `new`, released once, endpoints before workers.
        unsafe {
            u::ucp_rkey_destroy(self.rkey);
            check(u::ucp_mem_unmap(self.ctx, self.memh), "mem_unmap");
            for (ep, w) in [(self.ab, self.wa), (self.ba, self.wb)] {
                let mut p: u::ucp_request_param_t = std::mem::zeroed();
                p.op_attr_mask = u::UCP_OP_ATTR_FIELD_FLAGS;
                p.flags = u::UCP_EP_CLOSE_FLAG_FORCE;
                let r = u::ucp_ep_close_nbx(ep, &p);
                if !r.is_null() && !u::ucs_ptr_is_err(r) {
                    while u::ucp_request_check_status(r) == u::UCS_INPROGRESS {
                        u::ucp_worker_progress(w);
                    }
                    u::ucp_request_free(r);
                }
            }
            u::ucp_worker_destroy(self.wa);
            u::ucp_worker_destroy(self.wb);
            u::ucp_cleanup(self.ctx);
        }
    }
}

/// Our pair: two RDMA contexts on progress engines, connected; B's memory exported and
/// imported at A.
struct Ours {
    a: Rdma,
    b: Rdma,
    pa: Pe,
    pb: Pe,
    conn_a: Arc<doca_rdma::Connection>,
    conn_b: Arc<doca_rdma::Connection>,
    local: Mmap,
    remote: Mmap,
    _exported: Mmap,
    inv: BufInventory,
}

fn rdma_side(dev: &doca_core::Dev) -> (Rdma, Pe) {
    let r = Rdma::new(dev).expect("rdma");
    r.set_permissions(
        (AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE).bits(),
    )
    .expect("permissions");
    let pe = Pe::new().expect("pe");
    pe.connect(r.ctx()).expect("connect");
    pe.start_ctx(r.ctx()).expect("start");
    (r, pe)
}

fn mmap(dev: &doca_core::Dev, perms: AccessFlags) -> Mmap {
    let mut m = Mmap::new();
    m.set_memory(vec![1u8; MEM]).expect("memory");
    m.set_permissions(AccessFlags::LOCAL_READ_WRITE | perms)
        .expect("perms");
    m.dev_add(dev).expect("dev");
    m.start().expect("start");
    m
}

impl Ours {
    fn new() -> Ours {
        let dev = device::devinfo_list().expect("devices")[0]
            .open()
            .expect("open");
        let (a, pa) = rdma_side(&dev);
        let (b, pb) = rdma_side(&dev);
        let (da, conn_a) = a.export().expect("export");
        let (db, conn_b) = b.export().expect("export");
        a.connect(&db, &conn_a).expect("connect");
        b.connect(&da, &conn_b).expect("connect");
        let exported = mmap(&dev, AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE);
        let remote =
            Mmap::create_from_export(Data(0), &exported.export_rdma(&dev).expect("export"), &dev)
                .expect("import");
        let local = mmap(&dev, AccessFlags::empty());
        let mut inv = BufInventory::new(64).expect("inventory");
        inv.start().expect("start");
        let o = Ours {
            a,
            b,
            pa,
            pb,
            conn_a,
            conn_b,
            local,
            remote,
            _exported: exported,
            inv,
        };
        o.ping_pong(10);
        o
    }

    fn transports(&self) -> String {
        self.a
            .transports(&self.conn_a)
            .unwrap_or_else(|e| e.to_string())
    }

    /// A write (`read`: a read) job of `size` bytes at `off` of both memories.
    fn rma_job(&self, read: bool, off: usize, size: usize, ud: u64) -> JobRecord {
        let (pl, _) = self.local.memrange().expect("range");
        let (pr, _) = self.remote.memrange().expect("range");
        // SAFETY: `off + size` lies inside both memories.
        let (pl, pr) = unsafe { (pl.add(off), pr.add(off)) };
        let (src, dst, t) = if read {
            (
                self.inv.buf_by_data(&self.remote, pr, size).expect("buf"),
                self.inv.buf_by_addr(&self.local, pl, size).expect("buf"),
                JOB_READ,
            )
        } else {
            (
                self.inv.buf_by_data(&self.local, pl, size).expect("buf"),
                self.inv.buf_by_addr(&self.remote, pr, size).expect("buf"),
                JOB_WRITE,
            )
        };
        let mut r = JobRecord::new(t, Data(ud));
        r.set_buf(slot::SRC, src);
        r.set_buf(slot::DST, dst);
        r.params[slot::CONN] = Arc::as_ptr(&self.conn_a) as usize as u64;
        r
    }

    /// Bytes per second of `total` bytes of writes (or reads) of `size` bytes, `window`
    /// in flight.
    fn rma(&self, read: bool, size: usize, total: usize, window: usize) -> f64 {
        let n = total.div_ceil(size);
        let slots = (MEM / size).max(1);
        let start = Instant::now();
        let (mut issued, mut done) = (0usize, 0usize);
        while issued < window.min(n) {
            let j = self.rma_job(read, (issued % slots) * size, size, issued as u64);
            // SAFETY: the record owns its buffers; nothing else touches their bytes.
            unsafe { self.a.submit(j) }
                .map_err(|(e, _)| e)
                .expect("submit");
            issued += 1;
        }
        while done < n {
            let mut fin = 0;
            self.pa.progress(|ev| {
                if let PeEvent::Task(c) = ev {
                    c.status().expect("rma job");
                    fin += 1;
                }
            });
            done += fin;
            for _ in 0..fin {
                if issued < n {
                    let j = self.rma_job(read, (issued % slots) * size, size, issued as u64);
                    // SAFETY: as above.
                    unsafe { self.a.submit(j) }
                        .map_err(|(e, _)| e)
                        .expect("submit");
                    issued += 1;
                }
            }
        }
        (n * size) as f64 / start.elapsed().as_secs_f64()
    }

    fn recv_job(&self, mmap: &Mmap, off: usize, ud: u64) -> JobRecord {
        let (p, _) = mmap.memrange().expect("range");
        // SAFETY: inside the memory.
        let b = self
            .inv
            .buf_by_addr(mmap, unsafe { p.add(off) }, 64)
            .expect("buf");
        let mut r = JobRecord::new(JOB_RECV, Data(ud));
        r.set_buf(slot::DST, b);
        r
    }

    fn send_job(&self, conn: &Arc<doca_rdma::Connection>, off: usize, ud: u64) -> JobRecord {
        let (p, _) = self.local.memrange().expect("range");
        // SAFETY: inside the memory.
        let b = self
            .inv
            .buf_by_data(&self.local, unsafe { p.add(off) }, 64)
            .expect("buf");
        let mut r = JobRecord::new(JOB_SEND, Data(ud));
        r.set_buf(slot::SRC, b);
        r.params[slot::CONN] = Arc::as_ptr(conn) as usize as u64;
        r
    }

    /// Progresses both engines (as the raw ping-pong progresses both workers) until
    /// `on`'s receive completes.
    fn until_received(&self, on: &Pe, other: &Pe) {
        const RECV: u64 = 1;
        let mut got = false;
        while !got {
            on.progress(|ev| {
                if let PeEvent::Task(c) = ev {
                    c.status().expect("ping-pong task");
                    if c.record.user_data.0 == RECV {
                        got = true;
                    }
                }
            });
            other.progress(|ev| {
                if let PeEvent::Task(c) = ev {
                    c.status().expect("ping-pong task");
                }
            });
        }
    }

    /// Round trips of 64 B sends, each side with a receive posted; one thread drives
    /// both progress engines. Nanoseconds per round trip.
    fn ping_pong(&self, rounds: u64) -> f64 {
        const RECV: u64 = 1;
        const SEND: u64 = 2;
        // Every submit below: the records own their buffers; the receive buffers lie in
        // memory nothing else touches meanwhile; the send sources are only read.
        // SAFETY: as just said.
        unsafe {
            self.a
                .submit(self.recv_job(&self.local, MEM - 4096, RECV))
                .map_err(|(e, _)| e)
                .expect("recv");
            self.b
                .submit(self.recv_job(&self.local, MEM - 8192, RECV))
                .map_err(|(e, _)| e)
                .expect("recv");
        }
        let start = Instant::now();
        for _ in 0..rounds {
            // SAFETY: as above.
            unsafe { self.a.submit(self.send_job(&self.conn_a, 0, SEND)) }
                .map_err(|(e, _)| e)
                .expect("send");
            self.until_received(&self.pb, &self.pa);
            // SAFETY: as above.
            unsafe {
                self.b
                    .submit(self.recv_job(&self.local, MEM - 8192, RECV))
                    .map_err(|(e, _)| e)
                    .expect("recv");
                self.b
                    .submit(self.send_job(&self.conn_b, 64, SEND))
                    .map_err(|(e, _)| e)
                    .expect("send");
            }
            self.until_received(&self.pa, &self.pb);
            // SAFETY: as above.
            unsafe { self.a.submit(self.recv_job(&self.local, MEM - 4096, RECV)) }
                .map_err(|(e, _)| e)
                .expect("recv");
        }
        let ns = start.elapsed().as_nanos() as f64 / rounds as f64;
        // The sends' completions and the last receives are left to the stop.
        ns
    }

    fn stop(self) {
        for (r, pe) in [(&self.a, &self.pa), (&self.b, &self.pb)] {
            let _ = r.ctx().stop();
            let t = Instant::now();
            while r.ctx().phase() != doca_core::exec::CtxPhase::Idle
                && t.elapsed() < Duration::from_secs(10)
            {
                pe.progress(|_| {});
            }
        }
    }
}

pub fn run(a: &RdmaArgs) {
    if a.shm {
        // SAFETY: set before any thread of this process starts or reads it.
        unsafe { std::env::set_var("DOCA_RDMA_SHM", "1") };
    }
    let (reps, bytes, rounds) = if a.quick {
        (1, 8 << 20, 200)
    } else {
        (a.reps, a.bytes, a.rounds)
    };
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    println!("# RDMA on UCX, one machine ({cpu}); {reps} samples, medians");
    let mut raw = Raw::new();
    let ours = Ours::new();
    println!(
        "# transports: ours {} | raw UCX {}",
        ours.transports(),
        raw.transports()
    );
    println!("| operation | ours | raw UCX | ratio (ours/raw) | target |");
    println!("|---|---|---|---|---|");
    for read in [false, true] {
        for &size in &SIZES {
            let (mut o, mut r) = (Vec::new(), Vec::new());
            for _ in 0..reps {
                o.push(ours.rma(read, size, bytes, a.window));
                r.push(raw.rma(read, size, bytes, a.window));
            }
            let (o, r) = (median(o), median(r));
            let ratio = o / r;
            println!(
                "| {} {} KiB (window {}) | {:.2} GB/s | {:.2} GB/s | {ratio:.2} | >= 0.9 {} |",
                if read { "read" } else { "write" },
                size >> 10,
                a.window,
                o / 1e9,
                r / 1e9,
                if ratio >= 0.9 { "met" } else { "NOT met" }
            );
        }
    }
    let (mut o, mut r) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        o.push(ours.ping_pong(rounds));
        r.push(raw.ping_pong(rounds));
    }
    let (o, r) = (median(o), median(r));
    let ratio = o / r;
    println!(
        "| 64 B send/receive round trip | {:.2} us | {:.2} us | {ratio:.2} | <= 1.2 {} |",
        o / 1e3,
        r / 1e3,
        if ratio <= 1.2 { "met" } else { "NOT met" }
    );
    ours.stop();
    drop(raw);
}
