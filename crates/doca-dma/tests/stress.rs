//! Stress: several threads share one DMA, one SHA and one EC context, each thread with
//! its own work queue, memory and inventory, and keep a mix of jobs in flight for a
//! bounded time, on both engines (inline and two engine threads). Every job submitted
//! completes exactly once and every byte of every result is checked against a plain
//! computation (copy, the sha2 crate, ec-codec). `DOCA_STRESS_MS` sets the time per
//! engine (default 1500 ms).

#![allow(clippy::result_large_err)]

use doca_core::device::{self, Topology};
use doca_core::{Buf, BufInventory, Dev, Mmap, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use doca_ec::{Ec, EcCreateJob, Matrix, MatrixType};
use doca_sha::{Sha, ShaAlgo, ShaJob};
use sha2::Digest;
use std::time::{Duration, Instant};

const WORKERS: usize = 3;
const SLOTS: usize = 6;
const REGION: usize = 1 << 20;

fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0xa0 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 32) as u8).collect()
    }
}

/// What a job in flight must produce.
enum Want {
    Copy(Vec<u8>),
    Digest([u8; 32]),
    Parity(Vec<u8>),
}

struct Shared<'a> {
    dev: &'a Dev,
    dma: &'a Dma,
    sha: &'a Sha,
    ec: &'a Ec,
    coding: &'a Matrix,
    encoder: &'a ec_codec::Encoder,
    deadline: Instant,
}

/// One worker: returns (submitted, completed).
fn worker(s: &Shared<'_>, seed: u64) -> (u64, u64) {
    let mut rng = Rng(seed | 1);
    let mut mmap = Mmap::new();
    mmap.set_memory(vec![0u8; SLOTS * REGION]).unwrap();
    mmap.dev_add(s.dev).unwrap();
    mmap.start().unwrap();
    let mut inv = BufInventory::new(4 * SLOTS).unwrap();
    inv.start().unwrap();
    let mut wq = WorkQ::new(SLOTS as u32).unwrap();
    for ctx in [s.dma.as_ctx(), s.sha.as_ctx(), s.ec.as_ctx()] {
        ctx.workq_add(&mut wq).unwrap();
    }
    let mut want: Vec<Option<Want>> = (0..SLOTS).map(|_| None).collect();
    let (mut submitted, mut completed) = (0u64, 0u64);
    let buf = |inv: &BufInventory, off: usize, len: usize, data: &[u8]| -> Buf {
        let mut b = inv.buf_at(&mmap, off, len).unwrap();
        b.append(data).unwrap();
        b
    };
    loop {
        let running = Instant::now() < s.deadline;
        // Fill every free slot while time is left.
        for (slot, w) in want.iter_mut().enumerate() {
            if !running || w.is_some() {
                continue;
            }
            let base = slot * REGION;
            let ud = slot as u64;
            let r = match rng.below(3) {
                0 => {
                    let n = 1 + rng.below(256 << 10) as usize;
                    let data = rng.bytes(n);
                    let src = buf(&inv, base, n, &data);
                    let dst = inv.buf_at(&mmap, base + REGION / 2, n).unwrap();
                    *w = Some(Want::Copy(data));
                    wq.submit_job(s.dma.as_ctx(), MemcpyJob::new(src, dst, ud))
                }
                1 => {
                    let n = 1 + rng.below(256 << 10) as usize;
                    let data = rng.bytes(n);
                    let digest: [u8; 32] = sha2::Sha256::digest(&data).into();
                    let src = buf(&inv, base, n, &data);
                    let dst = inv.buf_at(&mmap, base + REGION / 2, 64).unwrap();
                    *w = Some(Want::Digest(digest));
                    wq.submit_job(s.sha.as_ctx(), ShaJob::new(ShaAlgo::Sha256, src, dst, ud))
                }
                _ => {
                    let block = 64 * (1 + rng.below(512) as usize);
                    let data = rng.bytes(4 * block);
                    let blocks: Vec<&[u8]> = data.chunks(block).collect();
                    let mut parity = vec![0u8; 2 * block];
                    {
                        let (p0, p1) = parity.split_at_mut(block);
                        s.encoder.encode(&blocks, &mut [p0, p1]).unwrap();
                    }
                    let src = buf(&inv, base, 4 * block, &data);
                    let dst = inv.buf_at(&mmap, base + REGION / 2, 2 * block).unwrap();
                    *w = Some(Want::Parity(parity));
                    wq.submit_job(s.ec.as_ctx(), EcCreateJob::new(s.coding, src, dst, ud))
                }
            };
            r.map_err(|(e, _)| e).unwrap();
            submitted += 1;
        }
        if want.iter().all(Option::is_none) {
            break;
        }
        let mut c = wq.wait(Some(Duration::from_secs(30))).unwrap();
        let slot = c.event().user_data.u64() as usize;
        let w = want[slot]
            .take()
            .expect("a completion for a slot with no job");
        let out = match &w {
            Want::Copy(_) => c.take_buf(MemcpyJob::DST),
            Want::Digest(_) => c.take_buf(ShaJob::RESP),
            Want::Parity(_) => c.take_buf(EcCreateJob::DST),
        }
        .unwrap()
        .data_to_vec();
        match w {
            Want::Copy(d) | Want::Parity(d) => assert!(out == d, "slot {slot}: wrong bytes"),
            Want::Digest(d) => assert_eq!(out, d, "slot {slot}: wrong digest"),
        }
        completed += 1;
    }
    assert_eq!(wq.inflight(), 0);
    for ctx in [s.dma.as_ctx(), s.sha.as_ctx(), s.ec.as_ctx()] {
        ctx.workq_rm(&mut wq).unwrap();
    }
    assert_eq!(inv.num_free_elements() as usize, 4 * SLOTS);
    (submitted, completed)
}

#[test]
fn shared_contexts_many_threads_every_job_and_byte_checked() {
    let ms: u64 = std::env::var("DOCA_STRESS_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    for engine_threads in [0, 2] {
        let dev = device(engine_threads);
        let dma = Dma::new();
        let sha = Sha::new();
        let ec = Ec::new();
        for ctx in [dma.as_ctx(), sha.as_ctx(), ec.as_ctx()] {
            ctx.dev_add(&dev).unwrap();
            ctx.start().unwrap();
        }
        let coding = ec.matrix_create(MatrixType::Cauchy, 4, 2).unwrap();
        let encoder =
            ec_codec::Encoder::new(&ec_codec::CodingMatrix::cauchy(4, 2).unwrap()).unwrap();
        let shared = Shared {
            dev: &dev,
            dma: &dma,
            sha: &sha,
            ec: &ec,
            coding: &coding,
            encoder: &encoder,
            deadline: Instant::now() + Duration::from_millis(ms),
        };
        let totals: Vec<(u64, u64)> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..WORKERS)
                .map(|t| {
                    let shared = &shared;
                    sc.spawn(move || worker(shared, 0x5EED + t as u64 * 7919))
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let (sub, done) = totals.iter().fold((0, 0), |a, t| (a.0 + t.0, a.1 + t.1));
        assert_eq!(sub, done);
        assert!(sub > 30, "only {sub} jobs ran in {ms} ms");
        eprintln!("engine threads {engine_threads}: {sub} jobs submitted and checked");
        for ctx in [dma.as_ctx(), sha.as_ctx(), ec.as_ctx()] {
            ctx.stop().unwrap();
        }
    }
}
