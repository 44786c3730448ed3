//! RDMA: write and read throughput of 64 KiB and 1 MiB, and the 64 B send/receive round
//! trip, through DOCA RDMA contexts (each with its software NIC) against raw UCX in the
//! same run: `ucp_put_nbx` + flush, `ucp_get_nbx`, and active messages answered from
//! the responder's handler. A responder (a thread, or with `--netns` a process in
//! another network namespace, over TCP) serves both; the requester measures. The
//! transports UCX chose are printed with the table (`UCX_TLS=tcp` in the environment
//! measures TCP on one machine; `--shm` lets our contexts use shared memory, as the raw
//! pair does).

use crate::median;
use clap::Args;
use doca_core::exec::{Pe, PeEvent};
use doca_core::{AccessFlags, BufInventory, Data, JobRecord, Mmap, device};
use doca_rdma::{JOB_READ, JOB_RECV, JOB_SEND, JOB_WRITE, Rdma, slot};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::ptr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// UCX then detects no peer failures: see docs/rdma.md).
    #[arg(long)]
    shm: bool,
    /// Requester and responder in two network namespaces joined by a veth pair (TCP,
    /// as between two machines; needs root and iproute2's ip).
    #[arg(long)]
    netns: bool,
    /// Only the round trip, of one peer (`ours`, `raw` or `raw-loop`): for profiling.
    #[arg(long, hide = true)]
    rtt_only: Option<String>,
    /// The side this process plays (set by `--netns` for the processes it starts).
    #[arg(long, hide = true)]
    side: Option<String>,
    /// Where the two sides leave what they tell each other.
    #[arg(long, hide = true)]
    dir: Option<std::path::PathBuf>,
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

/// What the two sides tell each other: files in a directory both see.
struct Dir(PathBuf);

impl Dir {
    fn put(&self, name: &str, data: &[u8]) {
        let tmp = self.0.join(format!("{name}.tmp"));
        std::fs::write(&tmp, data).expect("write");
        std::fs::rename(&tmp, self.0.join(name)).expect("rename");
    }

    fn get(&self, name: &str) -> Vec<u8> {
        let t = Instant::now();
        loop {
            if let Ok(d) = std::fs::read(self.0.join(name)) {
                return d;
            }
            assert!(t.elapsed() < Duration::from_secs(60), "{name} never came");
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn has(&self, name: &str) -> bool {
        self.0.join(name).exists()
    }
}

/// One side's raw UCX: a context with RMA and active messages, a worker, 4 MiB mapped
/// for the peer's puts and gets, and (once connected) an endpoint to the peer.
struct RawEnd {
    ctx: u::ucp_context_h,
    w: u::ucp_worker_h,
    addr: Vec<u8>,
    mem: Vec<u8>,
    memh: u::ucp_mem_h,
    ep: u::ucp_ep_h,
}

impl RawEnd {
    /// With `seg`: UCX's shared-memory segments of that size (as our contexts use).
    fn new(seg: Option<u32>) -> RawEnd {
        // SAFETY: zeroed params with the named fields set; the configuration is read,
        // modified and released here; outputs are locals.
        let ctx = unsafe {
            let mut cfg = ptr::null_mut();
            check(
                u::ucp_config_read(ptr::null(), ptr::null(), &mut cfg),
                "config",
            );
            if let Some(seg) = seg {
                let v = std::ffi::CString::new(seg.to_string()).expect("number");
                check(
                    u::ucp_config_modify(cfg, c"MM_SEG_SIZE".as_ptr(), v.as_ptr()),
                    "segment size",
                );
            }
            let mut p: u::ucp_params_t = std::mem::zeroed();
            p.field_mask = u::UCP_PARAM_FIELD_FEATURES as u64;
            p.features = (u::UCP_FEATURE_RMA | u::UCP_FEATURE_AM) as u64;
            let mut ctx = ptr::null_mut();
            let s = u::ucp_init(&p, cfg, &mut ctx);
            u::ucp_config_release(cfg);
            check(s, "ucp_init");
            ctx
        };
        // SAFETY: zeroed params with the named fields set; outputs are locals.
        let (w, addr) = unsafe {
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
        };
        let mut mem = vec![1u8; MEM];
        // SAFETY: zeroed params naming this end's memory, which outlives the mapping.
        let memh = unsafe {
            let mut mp: u::ucp_mem_map_params_t = std::mem::zeroed();
            mp.field_mask =
                (u::UCP_MEM_MAP_PARAM_FIELD_ADDRESS | u::UCP_MEM_MAP_PARAM_FIELD_LENGTH) as u64;
            mp.address = mem.as_mut_ptr().cast();
            mp.length = MEM;
            let mut memh = ptr::null_mut();
            check(u::ucp_mem_map(ctx, &mp, &mut memh), "mem_map");
            memh
        };
        RawEnd {
            ctx,
            w,
            addr,
            mem,
            memh,
            ep: ptr::null_mut(),
        }
    }

    /// Leaves this end's worker address, packed key and memory address in `dir`
    /// (`<name>_addr`, `_rkey`, `_base`).
    fn offer(&self, dir: &Dir, name: &str) {
        let (rkey, base) = self.rkey();
        dir.put(&format!("{name}_addr"), &self.addr);
        dir.put(&format!("{name}_rkey"), &rkey);
        dir.put(&format!("{name}_base"), &base.to_le_bytes());
    }

    /// The requester's side: connects to the responder's end `name` and unpacks its key.
    fn join(mut self, dir: &Dir, name: &str) -> RawReq {
        self.connect(&dir.get(&format!("{name}_addr")));
        let kb = dir.get(&format!("{name}_rkey"));
        let mut rkey = ptr::null_mut();
        // SAFETY: the responder's packed key, for this end's endpoint.
        check(
            unsafe { u::ucp_ep_rkey_unpack(self.ep, kb.as_ptr().cast(), &mut rkey) },
            "rkey_unpack",
        );
        let mut b = [0u8; 8];
        b.copy_from_slice(&dir.get(&format!("{name}_base")));
        RawReq {
            end: self,
            rkey,
            rbase: u64::from_le_bytes(b),
        }
    }

    /// The packed key of this end's memory, and its address.
    fn rkey(&self) -> (Vec<u8>, u64) {
        // SAFETY: this end's mapping; the packed buffer is copied and released.
        unsafe {
            let mut kb = ptr::null_mut();
            let mut kn = 0usize;
            check(
                u::ucp_rkey_pack(self.ctx, self.memh, &mut kb, &mut kn),
                "rkey_pack",
            );
            let v = std::slice::from_raw_parts(kb as *const u8, kn).to_vec();
            u::ucp_rkey_buffer_release(kb);
            (v, self.mem.as_ptr() as u64)
        }
    }

    fn connect(&mut self, peer: &[u8]) {
        // SAFETY: zeroed params with the named fields set; the address is a worker's.
        unsafe {
            let mut p: u::ucp_ep_params_t = std::mem::zeroed();
            p.field_mask = u::UCP_EP_PARAM_FIELD_REMOTE_ADDRESS as u64;
            p.address = peer.as_ptr() as *const u::ucp_address_t;
            check(u::ucp_ep_create(self.w, &p, &mut self.ep), "endpoint");
        }
    }

    fn progress(&self) {
        // SAFETY: this end's worker, used by one thread.
        unsafe { u::ucp_worker_progress(self.w) };
    }

    fn transports(&self) -> String {
        // SAFETY: this end's endpoint, of a worker this thread uses.
        unsafe { doca_rdma::transports_of(self.ep) }
    }
}

impl Drop for RawEnd {
    fn drop(&mut self) {
        // SAFETY: everything made here, released once, the endpoint before the worker.
        unsafe {
            if !self.ep.is_null() {
                let mut p: u::ucp_request_param_t = std::mem::zeroed();
                p.op_attr_mask = u::UCP_OP_ATTR_FIELD_FLAGS;
                p.flags = u::UCP_EP_CLOSE_FLAG_FORCE;
                let r = u::ucp_ep_close_nbx(self.ep, &p);
                if !r.is_null() && !u::ucs_ptr_is_err(r) {
                    while u::ucp_request_check_status(r) == u::UCS_INPROGRESS {
                        u::ucp_worker_progress(self.w);
                    }
                    u::ucp_request_free(r);
                }
            }
            check(u::ucp_mem_unmap(self.ctx, self.memh), "mem_unmap");
            u::ucp_worker_destroy(self.w);
            u::ucp_cleanup(self.ctx);
        }
    }
}

/// Replies of the raw active message ping-pong arrive here (the requester's handler).
static PONGS: AtomicU64 = AtomicU64::new(0);
/// The responder's endpoint to the requester, for its handler to answer on.
static BACK: AtomicU64 = AtomicU64::new(0);

unsafe extern "C" fn ping_cb(
    _arg: *mut c_void,
    _h: *const c_void,
    _hl: usize,
    data: *mut c_void,
    len: usize,
    _p: *const u::ucp_am_recv_param_t,
) -> u::ucs_status_t {
    let ep = BACK.load(Ordering::Relaxed) as usize as u::ucp_ep_h;
    // SAFETY: the data is valid during the callback.
    unsafe { reply(ep, data, len) };
    u::UCS_OK
}

/// Sends `len` bytes at `data` to the requester as a reply (active message 2), letting
/// go of the request at once: a 64-byte message completes inline or is copied out.
///
/// # Safety
/// `ep` is a live endpoint; `data` is readable for `len` bytes during the call.
unsafe fn reply(ep: u::ucp_ep_h, data: *const c_void, len: usize) {
    // SAFETY: zeroed params; the caller's contract.
    unsafe {
        let p: u::ucp_request_param_t = std::mem::zeroed();
        let r = u::ucp_am_send_nbx(ep, 2, ptr::null(), 0, data, len, &p);
        if u::ucs_ptr_is_ptr(r) {
            u::ucp_request_free(r);
        }
    }
}

/// Messages of the second raw ping-pong: the responder's handler only keeps them (as a
/// receive into a posted buffer does), and its main loop answers each.
static LOOP_PINGS: AtomicU64 = AtomicU64::new(0);
static LOOP_MSG: [AtomicU64; 8] = [const { AtomicU64::new(0) }; 8];

unsafe extern "C" fn ping_kept_cb(
    _arg: *mut c_void,
    _h: *const c_void,
    _hl: usize,
    data: *mut c_void,
    len: usize,
    _p: *const u::ucp_am_recv_param_t,
) -> u::ucs_status_t {
    let n = len.min(64) / 8;
    for (k, w) in LOOP_MSG.iter().enumerate().take(n) {
        // SAFETY: the message's `len` bytes are valid during the callback; `k * 8 + 8`
        // is within them.
        let v = unsafe { data.cast::<u8>().add(k * 8).cast::<u64>().read_unaligned() };
        w.store(v, Ordering::Relaxed);
    }
    LOOP_PINGS.fetch_add(1, Ordering::Release);
    u::UCS_OK
}

/// The responder's main loop answers the messages `ping_kept_cb` kept since `answered`.
fn answer_kept(ep: u::ucp_ep_h, answered: &mut u64) {
    while *answered < LOOP_PINGS.load(Ordering::Acquire) {
        let msg: [u64; 8] = std::array::from_fn(|k| LOOP_MSG[k].load(Ordering::Relaxed));
        // SAFETY: the responder's live endpoint; the message is readable during the call.
        unsafe { reply(ep, msg.as_ptr().cast(), 64) };
        *answered += 1;
    }
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

/// The raw requester: its end and the responder's key.
struct RawReq {
    end: RawEnd,
    rkey: u::ucp_rkey_h,
    rbase: u64,
}

impl RawReq {
    /// Bytes per second of `total` bytes of puts (`get`: gets) of `size` bytes,
    /// `window` at a time, each batch of puts flushed (remotely complete).
    fn rma(&mut self, get: bool, size: usize, total: usize, window: usize) -> f64 {
        let n = total.div_ceil(size);
        let slots = (MEM / size).max(1);
        let w = [self.end.w];
        let start = Instant::now();
        let mut done = 0;
        while done < n {
            let batch = window.min(n - done);
            let mut reqs = Vec::with_capacity(batch);
            for k in 0..batch {
                let off = ((done + k) % slots) * size;
                // SAFETY: zeroed params; both memories hold `size` bytes at `off`; the
                // responder's key.
                let r = unsafe {
                    let p: u::ucp_request_param_t = std::mem::zeroed();
                    let local = self.end.mem.as_mut_ptr().add(off).cast::<c_void>();
                    let raddr = self.rbase + off as u64;
                    if get {
                        u::ucp_get_nbx(self.end.ep, local, size, raddr, self.rkey, &p)
                    } else {
                        u::ucp_put_nbx(self.end.ep, local, size, raddr, self.rkey, &p)
                    }
                };
                reqs.push(r);
            }
            for r in reqs {
                wait_req(r, &w, "rma");
            }
            if !get {
                // SAFETY: zeroed params; the requester's endpoint.
                let f = unsafe {
                    let p: u::ucp_request_param_t = std::mem::zeroed();
                    u::ucp_ep_flush_nbx(self.end.ep, &p)
                };
                wait_req(f, &w, "flush");
            }
            done += batch;
        }
        (n * size) as f64 / start.elapsed().as_secs_f64()
    }

    /// Nanoseconds per round trip of 64 B active messages (`id` 1: answered in the
    /// responder's handler; 3: kept by the handler, answered by its main loop).
    fn ping_pong(&self, rounds: u64, id: u32) -> f64 {
        let msg = [7u8; 64];
        let start = Instant::now();
        for _ in 0..rounds {
            let want = PONGS.load(Ordering::Relaxed) + 1;
            // SAFETY: zeroed params; the message outlives the send (waited for).
            let r = unsafe {
                let p: u::ucp_request_param_t = std::mem::zeroed();
                u::ucp_am_send_nbx(self.end.ep, id, ptr::null(), 0, msg.as_ptr().cast(), 64, &p)
            };
            wait_req(r, &[self.end.w], "am");
            while PONGS.load(Ordering::Relaxed) < want {
                self.end.progress();
            }
        }
        start.elapsed().as_nanos() as f64 / rounds as f64
    }
}

impl Drop for RawReq {
    fn drop(&mut self) {
        // SAFETY: the key unpacked for this end's endpoint, destroyed once.
        unsafe { u::ucp_rkey_destroy(self.rkey) };
    }
}

/// One side's DOCA RDMA: a context on a progress engine, its connection, 4 MiB of
/// memory (exported by the responder), buffers.
struct OursEnd {
    rdma: Rdma,
    pe: Pe,
    conn: Arc<doca_rdma::Connection>,
    desc: Vec<u8>,
    mem: Mmap,
    inv: BufInventory,
}

impl OursEnd {
    fn new(dev: &doca_core::Dev) -> OursEnd {
        let rdma = Rdma::new(dev).expect("rdma");
        rdma.set_permissions(
            (AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE)
                .bits(),
        )
        .expect("permissions");
        let pe = Pe::new().expect("pe");
        pe.connect(rdma.ctx()).expect("connect");
        pe.start_ctx(rdma.ctx()).expect("start");
        let (desc, conn) = rdma.export().expect("export");
        let mut mem = Mmap::new();
        mem.set_memory(vec![1u8; MEM]).expect("memory");
        mem.set_permissions(
            AccessFlags::LOCAL_READ_WRITE | AccessFlags::RDMA_READ | AccessFlags::RDMA_WRITE,
        )
        .expect("perms");
        mem.dev_add(dev).expect("dev");
        mem.start().expect("start");
        let mut inv = BufInventory::new(64).expect("inventory");
        inv.start().expect("start");
        OursEnd {
            rdma,
            pe,
            conn,
            desc,
            mem,
            inv,
        }
    }

    fn conn_param(&self) -> u64 {
        Arc::as_ptr(&self.conn) as usize as u64
    }

    fn submit(&self, r: JobRecord) {
        // SAFETY: the record owns its buffers; received bytes land in memory nothing
        // else touches meanwhile, sources are only read.
        unsafe { self.rdma.submit(r) }
            .map_err(|(e, _)| e)
            .expect("submit");
    }

    fn recv(&self, off: usize, ud: u64) {
        let (p, _) = self.mem.memrange().expect("range");
        // SAFETY: inside the memory.
        let b = self
            .inv
            .buf_by_addr(&self.mem, unsafe { p.add(off) }, 64)
            .expect("buf");
        let mut r = JobRecord::new(JOB_RECV, Data(ud));
        r.set_buf(slot::DST, b);
        self.submit(r);
    }

    fn send(&self, off: usize, ud: u64) {
        let (p, _) = self.mem.memrange().expect("range");
        // SAFETY: inside the memory.
        let b = self
            .inv
            .buf_by_data(&self.mem, unsafe { p.add(off) }, 64)
            .expect("buf");
        let mut r = JobRecord::new(JOB_SEND, Data(ud));
        r.set_buf(slot::SRC, b);
        r.params[slot::CONN] = self.conn_param();
        self.submit(r);
    }

    fn stop(self) {
        let _ = self.pe.stop_ctx(self.rdma.ctx());
        let t = Instant::now();
        while self.rdma.ctx().phase() != doca_core::exec::CtxPhase::Idle
            && t.elapsed() < Duration::from_secs(10)
        {
            self.pe.progress(|_| {});
        }
    }
}

const RECV: u64 = 1;
const SEND: u64 = 2;

/// The responder: serves raw puts, gets and active messages, and our writes, reads and
/// sends (each received message is answered with one), until the requester says stop.
fn serve(dir: &Dir) {
    let dev = device::devinfo_list().expect("devices")[0]
        .open()
        .expect("open");
    let mut raw = RawEnd::new(None);
    let mut same = like_for_like().map(|seg| RawEnd::new(Some(seg)));
    let ours = OursEnd::new(&dev);
    raw.offer(dir, "resp_raw");
    if let Some(e) = &mut same {
        e.offer(dir, "resp_same");
        e.connect(&dir.get("req_same_addr"));
    }
    dir.put("resp_desc", &ours.desc);
    dir.put("resp_mem", &ours.mem.export_rdma(&dev).expect("export"));
    raw.connect(&dir.get("req_raw_addr"));
    BACK.store(raw.ep as usize as u64, Ordering::Relaxed);
    set_handler(raw.w, 1, Some(ping_cb));
    set_handler(raw.w, 3, Some(ping_kept_cb));
    let mut answered = 0u64;
    ours.rdma
        .connect(&dir.get("req_desc"), &ours.conn)
        .expect("connect");
    ours.recv(MEM - 4096, RECV);
    dir.put("ready", b"1");
    let mut checked = Instant::now();
    let mut turns = 0u32;
    loop {
        raw.progress();
        answer_kept(raw.ep, &mut answered);
        if let Some(e) = &same {
            e.progress();
        }
        let mut got = 0;
        ours.pe.progress(|ev| {
            if let PeEvent::Task(c) = ev {
                c.status().expect("responder task");
                if c.record.user_data.0 == RECV {
                    got += 1;
                }
            }
        });
        for _ in 0..got {
            ours.recv(MEM - 4096, RECV);
            ours.send(MEM - 8192, SEND);
        }
        turns = turns.wrapping_add(1);
        if turns.is_multiple_of(4096) && checked.elapsed() > Duration::from_millis(50) {
            checked = Instant::now();
            if dir.has("stop") {
                break;
            }
        }
    }
    ours.stop();
    drop(same);
    drop(raw);
}

/// The shared-memory segment size of our contexts, when they reach their peer through
/// shared memory and it is not UCX's own default: raw UCX is then measured a second
/// time with it, like for like.
fn like_for_like() -> Option<u32> {
    let user = ["UCX_MM_SEG_SIZE", "UCX_SYSV_SEG_SIZE", "UCX_POSIX_SEG_SIZE"]
        .iter()
        .any(|k| std::env::var_os(k).is_some());
    let seg = doca_rdma::shm_segment();
    (seg != 0 && !user).then_some(seg)
}

/// The requester's side of our pair.
struct OursReq {
    end: OursEnd,
    remote: Mmap,
}

impl OursReq {
    fn rma_job(&self, read: bool, off: usize, size: usize, ud: u64) -> JobRecord {
        let (pl, _) = self.end.mem.memrange().expect("range");
        let (pr, _) = self.remote.memrange().expect("range");
        // SAFETY: `off + size` lies inside both memories.
        let (pl, pr) = unsafe { (pl.add(off), pr.add(off)) };
        let inv = &self.end.inv;
        let (src, dst, t) = if read {
            (
                inv.buf_by_data(&self.remote, pr, size).expect("buf"),
                inv.buf_by_addr(&self.end.mem, pl, size).expect("buf"),
                JOB_READ,
            )
        } else {
            (
                inv.buf_by_data(&self.end.mem, pl, size).expect("buf"),
                inv.buf_by_addr(&self.remote, pr, size).expect("buf"),
                JOB_WRITE,
            )
        };
        let mut r = JobRecord::new(t, Data(ud));
        r.set_buf(slot::SRC, src);
        r.set_buf(slot::DST, dst);
        r.params[slot::CONN] = self.end.conn_param();
        r
    }

    /// Bytes per second of `total` bytes of writes (or reads) of `size` bytes, `window`
    /// in flight.
    fn rma(&self, read: bool, size: usize, total: usize, window: usize) -> f64 {
        let n = total.div_ceil(size);
        let slots = (MEM / 2 / size).max(1);
        let start = Instant::now();
        let (mut issued, mut done) = (0usize, 0usize);
        while issued < window.min(n) {
            self.end
                .submit(self.rma_job(read, (issued % slots) * size, size, 10));
            issued += 1;
        }
        while done < n {
            let mut fin = 0;
            self.end.pe.progress(|ev| {
                if let PeEvent::Task(c) = ev {
                    c.status().expect("rma job");
                    fin += 1;
                }
            });
            done += fin;
            for _ in 0..fin {
                if issued < n {
                    self.end
                        .submit(self.rma_job(read, (issued % slots) * size, size, 10));
                    issued += 1;
                }
            }
        }
        (n * size) as f64 / start.elapsed().as_secs_f64()
    }

    /// Nanoseconds per round trip of 64 B sends (the responder answers each).
    fn ping_pong(&self, rounds: u64) -> f64 {
        let start = Instant::now();
        for _ in 0..rounds {
            self.end.send(MEM - 8192, SEND);
            let mut got = false;
            while !got {
                self.end.pe.progress(|ev| {
                    if let PeEvent::Task(c) = ev {
                        c.status().expect("ping-pong task");
                        if c.record.user_data.0 == RECV {
                            got = true;
                        }
                    }
                });
            }
            self.end.recv(MEM - 4096, RECV);
        }
        start.elapsed().as_nanos() as f64 / rounds as f64
    }
}

fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// The requester: connects to the responder through `dir`, measures, prints the table.
fn measure(a: &RdmaArgs, dir: &Dir, place: &str) {
    let (reps, bytes, rounds) = if a.quick {
        (1, 8 << 20, 200)
    } else {
        (a.reps, a.bytes, a.rounds)
    };
    let dev = device::devinfo_list().expect("devices")[0]
        .open()
        .expect("open");
    let raw_end = RawEnd::new(None);
    let seg = like_for_like();
    let same_end = seg.map(|s| RawEnd::new(Some(s)));
    let ours_end = OursEnd::new(&dev);
    dir.put("req_raw_addr", &raw_end.addr);
    if let Some(e) = &same_end {
        dir.put("req_same_addr", &e.addr);
    }
    dir.put("req_desc", &ours_end.desc);
    let mut raw = raw_end.join(dir, "resp_raw");
    set_handler(raw.end.w, 2, Some(pong_cb));
    let mut same = same_end.map(|e| e.join(dir, "resp_same"));
    ours_end
        .rdma
        .connect(&dir.get("resp_desc"), &ours_end.conn)
        .expect("connect");
    let remote = Mmap::create_from_export(Data(0), &dir.get("resp_mem"), &dev).expect("import");
    dir.get("ready");
    let ours = OursReq {
        end: ours_end,
        remote,
    };
    ours.end.recv(MEM - 4096, RECV);
    // Wire everything up both ways before measuring.
    ours.ping_pong(10);
    raw.ping_pong(10, 1);
    raw.ping_pong(10, 3);
    println!(
        "# RDMA on UCX, {place} ({}); {reps} samples, medians",
        cpu_name()
    );
    println!(
        "# transports: ours {} | raw UCX {}",
        ours.end
            .rdma
            .transports(&ours.end.conn)
            .unwrap_or_else(|e| e.to_string()),
        raw.end.transports()
    );
    println!("| operation | ours | raw UCX | ratio (ours/raw) | target |");
    println!("|---|---|---|---|---|");
    if let Some(which) = &a.rtt_only {
        let ns = if which == "raw" {
            raw.ping_pong(rounds, 1)
        } else if which == "raw-loop" {
            raw.ping_pong(rounds, 3)
        } else {
            ours.ping_pong(rounds)
        };
        println!("| 64 B round trip, {which} only | {:.2} us |", ns / 1e3);
        dir.put("stop", b"1");
        ours.end.stop();
        return;
    }
    let mut like = Vec::new();
    for read in [false, true] {
        for &size in &SIZES {
            let (mut o, mut r, mut l) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..reps {
                o.push(ours.rma(read, size, bytes, a.window));
                r.push(raw.rma(read, size, bytes, a.window));
                if let Some(e) = &mut same {
                    l.push(e.rma(read, size, bytes, a.window));
                }
            }
            let (o, r) = (median(o), median(r));
            if !l.is_empty() {
                like.push((read, size, o, median(l)));
            }
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
    if let Some(seg) = seg {
        println!(
            "# like for like: raw UCX with the shared-memory segment size our contexts use ({seg} bytes; UCX's default is 8256)"
        );
        println!("| operation | ours | raw UCX, same segments | ratio (ours/raw) |");
        println!("|---|---|---|---|");
        for (read, size, o, l) in like {
            println!(
                "| {} {} KiB (window {}) | {:.2} GB/s | {:.2} GB/s | {:.2} |",
                if read { "read" } else { "write" },
                size >> 10,
                a.window,
                o / 1e9,
                l / 1e9,
                o / l
            );
        }
    }
    let (mut o, mut r, mut k) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..reps {
        o.push(ours.ping_pong(rounds));
        r.push(raw.ping_pong(rounds, 1));
        k.push(raw.ping_pong(rounds, 3));
    }
    let (o, r, k) = (median(o), median(r), median(k));
    let ratio = o / r;
    println!(
        "| 64 B send/receive round trip | {:.2} us | {:.2} us | {ratio:.2} | <= 1.2 {} |",
        o / 1e3,
        r / 1e3,
        if ratio <= 1.2 { "met" } else { "NOT met" }
    );
    println!(
        "| 64 B round trip, raw UCX answered from the responder's loop | {:.2} us | {:.2} us | {:.2} | (the handler keeps the message, as a posted receive does) |",
        o / 1e3,
        k / 1e3,
        o / k
    );
    println!(
        "# ours: {} small reads and writes copied directly by the requester, {} writes sent in pieces of at most {} bytes (two processes of one machine, both allowing shared memory)",
        ours.end.rdma.direct_copies(),
        doca_rdma::nic::transfers_in_pieces(),
        doca_rdma::nic::piece_max()
    );
    dir.put("stop", b"1");
    ours.end.stop();
    drop(raw);
}

pub fn run(a: &RdmaArgs) {
    if a.shm {
        // SAFETY: set before any thread of this process starts or reads it.
        unsafe { std::env::set_var("DOCA_RDMA_SHM", "1") };
    }
    let place = if a.netns {
        "two processes in two network namespaces over TCP"
    } else {
        "two processes on one machine"
    };
    match (a.side.as_deref(), &a.dir) {
        (Some("responder"), Some(d)) => return serve(&Dir(d.clone())),
        (Some("requester"), Some(d)) => return measure(a, &Dir(d.clone()), place),
        (Some(s), _) => panic!("unknown side {s}, or no --dir"),
        _ => {}
    }
    let dir = std::env::temp_dir().join(format!("doca-bench-rdma-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("mkdir");
    run_pair(a, &dir);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the two sides as processes in two namespaces (UCX over TCP).
/// Runs the responder and the requester as two processes: on this machine, or with
/// `--netns` each in its own network namespace (TCP over a veth pair).
fn run_pair(a: &RdmaArgs, dir: &Path) {
    let pair = if a.netns {
        Some(
            doca_testkit::netns::NetPair::new("bench")
                .expect("two network namespaces (root and iproute2's ip are needed)"),
        )
    } else {
        None
    };
    let exe = std::env::current_exe().expect("this program");
    let side = |i: usize, role: &str| {
        let mut c = match &pair {
            Some(pair) => {
                let mut c = std::process::Command::new("ip");
                c.args(["netns", "exec", &pair.ns[i], "env", "UCX_TLS=tcp"])
                    .arg(format!("UCX_NET_DEVICES={}", pair.dev[i]))
                    .arg(&exe);
                c
            }
            None => std::process::Command::new(&exe),
        };
        c.args(["rdma", "--side", role, "--dir"])
            .arg(dir)
            .args(["--reps", &a.reps.to_string()])
            .args(["--bytes", &a.bytes.to_string()])
            .args(["--rounds", &a.rounds.to_string()])
            .args(["--window", &a.window.to_string()]);
        for (on, flag) in [(a.quick, "--quick"), (a.shm, "--shm"), (a.netns, "--netns")] {
            if on {
                c.arg(flag);
            }
        }
        if let Some(w) = &a.rtt_only {
            c.args(["--rtt-only", w]);
        }
        c.spawn().expect("a side")
    };
    let mut resp = side(1, "responder");
    let mut req = side(0, "requester");
    let st = req.wait().expect("requester");
    let _ = std::fs::write(dir.join("stop"), b"1");
    let rst = resp.wait().expect("responder");
    assert!(
        st.success() && rst.success(),
        "a side failed: {st:?} {rst:?}"
    );
}
