//! Execution-model benchmark: work queue overhead, DMA memcpy and SHA-256 through their
//! contexts, each against the plain operation measured in the same run.

use crate::ec::{Runner, measure_all};
use clap::Args;
use doca_core::device::{self, Topology};
use doca_core::{Buf, BufInventory, Dev, Mmap, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use doca_sha::{Sha, ShaAlgo, ShaJob};
use sha2::Digest;
use std::time::Duration;

#[derive(Args, Debug)]
pub struct ExecArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Target duration of one sample, in milliseconds.
    #[arg(long, default_value_t = 40)]
    sample_ms: u64,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
    /// Run only these parts (a: work queue round trip, b: DMA memcpy, c: SHA-256).
    #[arg(long, value_delimiter = ',', default_value = "a,b,c")]
    only: Vec<char>,
}

fn device(threads: u32) -> Dev {
    let pci = format!("{:02x}:00.0", 0xa0 + threads);
    let t = Topology::single_device(&pci, threads).expect("topology");
    device::devinfo_list_from(&t)[0].open().expect("open")
}

struct Setup {
    mmap: Mmap,
    inv: BufInventory,
    dma: Dma,
    sha: Sha,
    wq: WorkQ,
}

fn setup(dev: &Dev, bytes: usize) -> Setup {
    let (mmap, inv) = doca_tools::local_memory(dev, vec![7u8; bytes], 128).expect("memory");
    let dma = Dma::new();
    dma.as_ctx().dev_add(dev).expect("dev_add");
    dma.as_ctx().start().expect("start");
    let sha = Sha::new();
    sha.as_ctx().dev_add(dev).expect("dev_add");
    sha.as_ctx().start().expect("start");
    let mut wq = WorkQ::new(64).expect("workq");
    dma.as_ctx().workq_add(&mut wq).expect("workq_add");
    sha.as_ctx().workq_add(&mut wq).expect("workq_add");
    Setup {
        mmap,
        inv,
        dma,
        sha,
        wq,
    }
}

/// Copies `pairs` through the DMA context: submits all, retrieves all, keeps the buffers.
fn dma_round(s: &mut Setup, pairs: &mut Vec<(Buf, Buf)>) {
    let n = pairs.len();
    for (i, (src, mut dst)) in pairs.drain(..).enumerate() {
        dst.reset_data_len();
        s.wq.submit_job(s.dma.as_ctx(), MemcpyJob::new(src, dst, i as u64))
            .map_err(|(e, _)| e)
            .expect("submit");
    }
    for _ in 0..n {
        let mut c = s.wq.wait(Some(Duration::from_secs(30))).expect("memcpy");
        let dst = c.take_buf(MemcpyJob::DST).expect("dst");
        let src = c.take_buf(MemcpyJob::SRC).expect("src");
        pairs.push((src, dst));
    }
}

pub fn run(a: &ExecArgs) {
    let (reps, sample) = if a.quick {
        (3, Duration::from_millis(5))
    } else {
        (a.reps.max(1), Duration::from_millis(a.sample_ms))
    };
    println!("median of {reps} samples; samples of each pair taken in turn\n");

    // (a) Work queue round trip: 32 jobs of a 64-byte memcpy, vs 32 copy_from_slice.
    if a.only.contains(&'a') {
        let dev = device(0);
        let mut s = setup(&dev, 1 << 20);
        let mut pairs: Vec<(Buf, Buf)> = (0..32)
            .map(|i| {
                (
                    s.inv.buf_with_data_at(&s.mmap, i * 128, 64).expect("src"),
                    s.inv.buf_at(&s.mmap, 65536 + i * 128, 64).expect("dst"),
                )
            })
            .collect();
        let src = vec![1u8; 64 * 32];
        let mut dst = vec![0u8; 64 * 32];
        let mut runners: Vec<Runner<'_>> = vec![
            Box::new(|| dma_round(&mut s, &mut pairs)),
            Box::new(|| {
                for (d, s) in dst.chunks_mut(64).zip(src.chunks(64)) {
                    d.copy_from_slice(std::hint::black_box(s));
                }
                std::hint::black_box(&dst);
            }),
        ];
        // "bytes" = 32 jobs, so rates are in jobs per ns.
        let r = measure_all(32, reps, sample, &mut runners);
        let (ours, plain) = (1.0 / r[0], 1.0 / r[1]);
        println!("| (a) 64 B memcpy, batches of 32 | ns per job | overhead over copy_from_slice |");
        println!("|---|---|---|");
        println!(
            "| work queue (inline engine) | {ours:.1} | {:.1} ns (copy_from_slice: {plain:.1} ns) |\n",
            ours - plain
        );
    }

    if a.only.contains(&'b') {
        dma_copies(a, reps, sample);
    }

    // (c) SHA-256 of 1 MiB through the context vs the sha2 crate.
    if a.only.contains(&'c') {
        let size = 1 << 20;
        let dev = device(0);
        let mut s = setup(&dev, size + 4096);
        let mut req = Some(s.inv.buf_with_data_at(&s.mmap, 0, size).expect("req"));
        let mut resp = Some(s.inv.buf_at(&s.mmap, size, 64).expect("resp"));
        let data = vec![7u8; size];
        let mut runners: Vec<Runner<'_>> = vec![
            Box::new(|| {
                let mut r = resp.take().expect("resp");
                r.reset_data_len();
                let job = ShaJob::new(ShaAlgo::Sha256, req.take().expect("req"), r, 0);
                s.wq.submit_job(s.sha.as_ctx(), job)
                    .map_err(|(e, _)| e)
                    .expect("submit");
                let mut c = s.wq.wait(Some(Duration::from_secs(30))).expect("sha");
                req = c.take_buf(ShaJob::REQ);
                resp = c.take_buf(ShaJob::RESP);
            }),
            Box::new(|| {
                std::hint::black_box(sha2::Sha256::digest(std::hint::black_box(&data)));
            }),
        ];
        let r = measure_all(size, reps, sample, &mut runners);
        println!("| (c) SHA-256, 1 MiB | context GB/s | sha2 GB/s | ratio |");
        println!("|---|---|---|---|");
        println!(
            "| inline engine | {:.2} | {:.2} | {:.2}x |",
            r[0],
            r[1],
            r[0] / r[1]
        );
    }
}

/// (b) DMA memcpy vs copy_from_slice, and the engine threads' scaling.
fn dma_copies(a: &ExecArgs, reps: usize, sample: Duration) {
    // (b) DMA memcpy vs copy_from_slice.
    println!("| (b) DMA memcpy | DMA GB/s | copy_from_slice GB/s | ratio |");
    println!("|---|---|---|---|");
    let sizes: &[usize] = if a.quick {
        &[64 << 10, 1 << 20]
    } else {
        &[64 << 10, 1 << 20, 64 << 20]
    };
    for &size in sizes {
        let dev = device(0);
        let mut s = setup(&dev, 2 * size);
        let mut pairs = vec![(
            s.inv.buf_with_data_at(&s.mmap, 0, size).expect("src"),
            s.inv.buf_at(&s.mmap, size, size).expect("dst"),
        )];
        // The plain copy gets the same layout as the mmap: source and destination back to
        // back in one allocation.
        let mut plain = vec![1u8; 2 * size];
        let (src, dst) = plain.split_at_mut(size);
        let mut runners: Vec<Runner<'_>> = vec![
            Box::new(|| dma_round(&mut s, &mut pairs)),
            Box::new(|| {
                dst.copy_from_slice(std::hint::black_box(&*src));
                std::hint::black_box(&*dst);
            }),
        ];
        let r = measure_all(size, reps, sample, &mut runners);
        println!(
            "| {} KiB | {:.2} | {:.2} | {:.2}x |",
            size >> 10,
            r[0],
            r[1],
            r[0] / r[1]
        );
    }
    // Engine threads: a 64 MiB copy as two 32 MiB jobs, and as one job that the engine
    // shares among its threads, on 1 and on 2 engine threads.
    let size = if a.quick { 4 << 20 } else { 64 << 20 };
    let mut rates = Vec::new();
    for jobs in [2usize, 1] {
        for threads in [1, 2] {
            let dev = device(threads);
            let mut s = setup(&dev, 2 * size);
            let part = size / jobs;
            let mut pairs: Vec<(Buf, Buf)> = (0..jobs)
                .map(|i| {
                    (
                        s.inv
                            .buf_with_data_at(&s.mmap, i * part, part)
                            .expect("src"),
                        s.inv.buf_at(&s.mmap, size + i * part, part).expect("dst"),
                    )
                })
                .collect();
            let mut runners: Vec<Runner<'_>> = vec![Box::new(|| dma_round(&mut s, &mut pairs))];
            rates.push(measure_all(size, reps, sample, &mut runners)[0]);
        }
    }
    // The machine's own scaling: the same two halves copied by 1 and by 2 plain threads.
    let src = vec![1u8; size];
    let (mut dst1, mut dst2) = (vec![0u8; size], vec![0u8; size]);
    let half = size / 2;
    let src = &src;
    let mut runners: Vec<Runner<'_>> = vec![
        Box::new(|| dst1.copy_from_slice(std::hint::black_box(src))),
        Box::new(|| {
            let dst = &mut dst2;
            std::thread::scope(|sc| {
                for (d, s) in dst.chunks_mut(half).zip(src.chunks(half)) {
                    sc.spawn(move || d.copy_from_slice(std::hint::black_box(s)));
                }
            })
        }),
    ];
    let p = measure_all(size, reps, sample, &mut runners);
    println!(
        "| {} MiB as 2 jobs, engine threads 1 -> 2 | {:.2} -> {:.2} | | {:.2}x |",
        size >> 20,
        rates[0],
        rates[1],
        rates[1] / rates[0]
    );
    println!(
        "| {} MiB as 1 job, engine threads 1 -> 2 | {:.2} -> {:.2} | | {:.2}x |",
        size >> 20,
        rates[2],
        rates[3],
        rates[3] / rates[2]
    );
    println!(
        "| {} MiB, plain copy_from_slice threads 1 -> 2 (the machine's scaling) | | {:.2} -> {:.2} | {:.2}x |\n",
        size >> 20,
        p[0],
        p[1],
        p[1] / p[0]
    );
}
