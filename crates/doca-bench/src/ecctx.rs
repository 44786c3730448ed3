//! The full DOCA EC path (context, work queue, jobs) against calling `ec-codec`
//! directly, and the `doca-ec` tool's end-to-end file throughput against `cat` and a
//! plain file copy of the same file.

use crate::ec::{Runner, measure_all};
use crate::median;
use clap::Args;
use doca_core::exec::Job;
use doca_core::{Buf, WorkQ, devinfo_list};
use doca_ec::{Ec, EcCreateJob, EcRecoverJob, MatrixType};
use doca_tools::ecfile::{self, Options};
use ec_codec::{CodingMatrix, Decoder, Encoder};
use std::io::Read;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct EcCtxArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Target duration of one sample, in milliseconds.
    #[arg(long, default_value_t = 60)]
    sample_ms: u64,
    /// Size of the file for the tool's end-to-end run, in MiB.
    #[arg(long, default_value_t = 1024)]
    file_mib: usize,
    /// Directory for that file and its blocks (default: the system's temporary directory).
    #[arg(long)]
    dir: Option<std::path::PathBuf>,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
    /// Only the doca-ec tool's end-to-end rows (the file, its blocks).
    #[arg(long)]
    tool_only: bool,
}

/// A started EC context on `dev` with a work queue of depth 4, its Cauchy coding
/// matrix for `m + k`, and the recover matrix for the first `k` blocks lost.
fn ec_context(
    dev: &doca_core::Dev,
    m: usize,
    k: usize,
) -> (Ec, WorkQ, doca_ec::Matrix, doca_ec::Matrix) {
    let ec = Ec::new();
    ec.as_ctx().dev_add(dev).expect("dev_add");
    ec.as_ctx().start().expect("start");
    let mut wq = WorkQ::new(4).expect("workq");
    ec.as_ctx().workq_add(&mut wq).expect("workq_add");
    let coding = ec.matrix_create(MatrixType::Cauchy, m, k).expect("matrix");
    let lost: Vec<u32> = (0..k as u32).collect();
    let rec = ec
        .recover_matrix_create(&coding, &lost)
        .expect("recover matrix");
    (ec, wq, coding, rec)
}

/// Encode and recover of 10 + 4 through the context vs the codec.
fn context_vs_codec(block: usize, reps: usize, sample: Duration) {
    let (m, k) = (10usize, 4usize);
    let dev = devinfo_list().expect("devices")[0].open().expect("open");
    let data: Vec<u8> = (0..m * block).map(|i| (i * 131 % 251) as u8).collect();
    // Page-aligned memory for the context, like the codec's vectors below.
    let mut memory = memmap2::MmapMut::map_anon((2 * m + 2 * k) * block).expect("anonymous memory");
    memory[..m * block].copy_from_slice(&data);
    let (mmap, inv) = doca_tools::local_memory(&dev, memory, 8).expect("memory");
    let (ec, mut wq, coding, rec) = ec_context(&dev, m, k);
    // Encode: data blocks in [0, m), parity in [m, m + k) (in blocks). Recover (data
    // blocks 0..k lost): the survivors, data k..m then the parity, in [m + k, 2m + k),
    // the rebuilt blocks after them.
    let mut enc_bufs = Some((
        inv.buf_with_data_at(&mmap, 0, m * block).expect("src"),
        inv.buf_at(&mmap, m * block, k * block).expect("dst"),
    ));
    let run = |wq: &mut WorkQ,
               bufs: &mut Option<(Buf, Buf)>,
               job: fn(&doca_ec::Matrix, Buf, Buf, u64) -> doca_core::JobRecord,
               mx: &doca_ec::Matrix| {
        let (src, mut dst) = bufs.take().expect("buffers");
        dst.reset_data_len();
        wq.submit_job(ec.as_ctx(), job(mx, src, dst, 0))
            .map_err(|(e, _)| e)
            .expect("submit");
        let mut c = wq.wait(Some(Duration::from_secs(30))).expect("job");
        *bufs = Some((
            c.take_buf(doca_core::JobRecord::SRC).expect("src"),
            c.take_buf(doca_core::JobRecord::DST).expect("dst"),
        ));
    };
    run(
        &mut wq,
        &mut enc_bufs,
        |m, s, d, u| EcCreateJob::new(m, s, d, u).into_record(),
        &coding,
    );
    let parity = enc_bufs.as_ref().expect("buffers").1.data_to_vec();
    let mut survivors = data[k * block..].to_vec();
    survivors.extend_from_slice(&parity);
    let base = (m + k) * block;
    let mut src = inv.buf_at(&mmap, base, m * block).expect("src");
    src.write_data(&survivors).expect("write");
    let mut rec_bufs = Some((
        src,
        inv.buf_at(&mmap, base + m * block, k * block).expect("dst"),
    ));

    let data = aligned(&data);
    let survivors = aligned(&survivors);
    let cm = CodingMatrix::cauchy(m, k).expect("matrix");
    let enc = Encoder::new(&cm).expect("encoder");
    let dec = Decoder::new(&cm, &(0..k).collect::<Vec<_>>()).expect("decoder");
    let mut out = memmap2::MmapMut::map_anon(k * block).expect("anonymous memory");
    let bytes = m * block;
    let mut r = Vec::new();
    {
        let mut runners: Vec<Runner<'_>> = vec![
            Box::new(|| {
                run(
                    &mut wq,
                    &mut enc_bufs,
                    |m, s, d, u| EcCreateJob::new(m, s, d, u).into_record(),
                    &coding,
                )
            }),
            Box::new(|| {
                enc.matrix()
                    .apply_contiguous(std::hint::black_box(&data), &mut out, 1)
                    .expect("encode");
            }),
        ];
        r.extend(measure_all(bytes, reps, sample, &mut runners));
    }
    {
        let mut runners: Vec<Runner<'_>> = vec![
            Box::new(|| {
                run(
                    &mut wq,
                    &mut rec_bufs,
                    |m, s, d, u| EcRecoverJob::new(m, s, d, u).into_record(),
                    &rec,
                )
            }),
            Box::new(|| {
                dec.matrix()
                    .apply_contiguous(std::hint::black_box(&survivors), &mut out, 1)
                    .expect("recover");
            }),
        ];
        r.extend(measure_all(bytes, reps, sample, &mut runners));
    }
    let rebuilt = rec_bufs.as_ref().expect("buffers").1.data_to_vec();
    assert_eq!(
        rebuilt[..],
        data[..k * block],
        "recover through the context is wrong"
    );
    let kib = block >> 10;
    println!(
        "| 10+4, {kib} KiB blocks, encode | {:.2} | {:.2} | {:.3}x |",
        r[0],
        r[1],
        r[0] / r[1]
    );
    println!(
        "| 10+4, {kib} KiB blocks, recover 4 lost | {:.2} | {:.2} | {:.3}x |",
        r[2],
        r[3],
        r[2] / r[3]
    );
    drop((enc_bufs, rec_bufs));
    ec.as_ctx().workq_rm(&mut wq).expect("workq_rm");
}

/// Encode and recover of 10 + 4 with `block`-byte blocks through a device whose jobs
/// run on `threads` engine threads, two jobs in flight (each on a stripe of its own):
/// GB/s of data in, encode then recover.
fn engine_rates(block: usize, threads: u32, reps: usize, sample: Duration) -> (f64, f64) {
    let (m, k) = (10usize, 4usize);
    let t = doca_core::device::Topology::single_device(&format!("e{threads}:00.0"), threads)
        .expect("topology");
    let dev = doca_core::device::devinfo_list_from(&t)[0]
        .open()
        .expect("open");
    let stripe = (m + k) * block;
    let mut memory = memmap2::MmapMut::map_anon(2 * stripe).expect("anonymous memory");
    for (i, b) in memory.iter_mut().enumerate() {
        *b = (i * 131 % 251) as u8;
    }
    let (mmap, inv) = doca_tools::local_memory(&dev, memory, 8).expect("memory");
    let (ec, mut wq, coding, rec) = ec_context(&dev, m, k);
    let mut rates = [0.0; 2];
    for (which, rate) in rates.iter_mut().enumerate() {
        let job = |mx: &doca_ec::Matrix, s: Buf, d: Buf, u: u64| {
            if which == 0 {
                EcCreateJob::new(mx, s, d, u).into_record()
            } else {
                EcRecoverJob::new(mx, s, d, u).into_record()
            }
        };
        let mx = if which == 0 { &coding } else { &rec };
        for i in 0..2u64 {
            let at = i as usize * stripe;
            let src = inv.buf_with_data_at(&mmap, at, m * block).expect("src");
            let dst = inv.buf_at(&mmap, at + m * block, k * block).expect("dst");
            wq.submit_job(ec.as_ctx(), job(mx, src, dst, i))
                .map_err(|(e, _)| e)
                .expect("submit");
        }
        // Each call: one job ends, and its stripe goes again.
        let mut next = || {
            let mut c = wq.wait(Some(Duration::from_secs(30))).expect("job");
            assert!(c.error.is_none(), "an erasure coding job failed");
            let u = c.record.user_data.0;
            let src = c.take_buf(doca_core::JobRecord::SRC).expect("src");
            let mut dst = c.take_buf(doca_core::JobRecord::DST).expect("dst");
            dst.reset_data_len();
            wq.submit_job(ec.as_ctx(), job(mx, src, dst, u))
                .map_err(|(e, _)| e)
                .expect("submit");
        };
        *rate = {
            let mut rs: [Runner<'_>; 1] = [Box::new(&mut next)];
            measure_all(m * block, reps, sample, &mut rs)[0]
        };
        for _ in 0..2 {
            wq.wait(Some(Duration::from_secs(30))).expect("job");
        }
    }
    ec.as_ctx().workq_rm(&mut wq).expect("workq_rm");
    (rates[0], rates[1])
}

/// Two engine threads against one, through the context.
fn engine_scaling(reps: usize, sample: Duration, quick: bool) {
    println!(
        "\n| 10+4 through the context, two jobs in flight | 1 engine thread GB/s | 2 engine threads GB/s | 2/1 (target >= 1.8x) |"
    );
    println!("|---|---|---|---|");
    let blocks: &[usize] = if quick {
        &[1 << 20]
    } else {
        &[1 << 20, 16 << 20]
    };
    for &block in blocks {
        let one = engine_rates(block, 1, reps, sample);
        let two = engine_rates(block, 2, reps, sample);
        for (op, a, b) in [("encode", one.0, two.0), ("recover 4 lost", one.1, two.1)] {
            println!(
                "| {} MiB blocks, {op} | {a:.2} | {b:.2} | {:.2}x |",
                block >> 20,
                b / a
            );
        }
    }
}

/// A page-aligned copy.
fn aligned(b: &[u8]) -> memmap2::MmapMut {
    let mut m = memmap2::MmapMut::map_anon(b.len()).expect("anonymous memory");
    m.copy_from_slice(b);
    m
}

/// Seconds `f` takes, from a clean page cache state: dirty pages left by the previous
/// measurement are written out first (untimed), so that no measurement pays for
/// another's write-back.
fn timed(f: impl FnOnce()) -> f64 {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// The tool's encode and recover of a whole file vs reading it (`cat`) and copying it.
fn tool_end_to_end(a: &EcCtxArgs, reps: usize) {
    let mib = if a.quick { 16 } else { a.file_mib.max(1) };
    let size = mib << 20;
    let root = a
        .dir
        .clone()
        .unwrap_or_else(std::env::temp_dir)
        .join(format!("doca-bench-ec-{}", std::process::id()));
    std::fs::create_dir_all(&root).expect("bench directory");
    let input = root.join("input.bin");
    {
        let mut chunk = vec![0u8; 1 << 20];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut f = std::fs::File::create(&input).expect("input");
        for _ in 0..mib {
            for b in chunk.iter_mut() {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                *b = x as u8;
            }
            std::io::Write::write_all(&mut f, &chunk).expect("write input");
        }
    }
    let dev = devinfo_list().expect("devices")[0].open().expect("open");
    // Like the file copy it is compared with, without flushing to disk.
    let opts = Options {
        stripe: 0,
        force: true,
        progress: false,
        sync: false,
        write_back: true,
    };
    let blocks = root.join("blocks");
    let out = root.join("output.bin");
    let copy = root.join("copy.bin");
    let (mut cat, mut cp, mut enc, mut rec) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut cat_blocks, mut ver) = (Vec::new(), Vec::new());
    // One untimed round first (the first writes of a run land on memory the machine has
    // not handed out yet, and measured up to 4x slower on a VM), except in a quick run.
    let warm = usize::from(reps > 1);
    for round in 0..reps + warm {
        if warm == 1 && round == 1 {
            for v in [
                &mut cat,
                &mut cp,
                &mut enc,
                &mut cat_blocks,
                &mut ver,
                &mut rec,
            ] {
                v.clear();
            }
        }
        cat.push(timed(|| {
            let mut f = std::fs::File::open(&input).expect("open");
            let mut buf = vec![0u8; 1 << 20];
            while f.read(&mut buf).expect("read") > 0 {}
        }));
        cp.push(timed(|| {
            let _ = std::fs::remove_file(&copy);
            std::fs::copy(&input, &copy).expect("copy");
        }));
        let _ = std::fs::remove_dir_all(&blocks);
        enc.push(timed(|| {
            ecfile::encode(&dev, &input, &blocks, MatrixType::Cauchy, 10, 4, &opts)
                .expect("encode");
        }));
        cat_blocks.push(timed(|| {
            let mut buf = vec![0u8; 1 << 20];
            for e in std::fs::read_dir(&blocks).expect("blocks") {
                let p = e.expect("entry").path();
                let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
                if name.starts_with("data_block_") || name.starts_with("rdnc_block_") {
                    let mut f = std::fs::File::open(&p).expect("open");
                    while f.read(&mut buf).expect("read") > 0 {}
                }
            }
        }));
        ver.push(timed(|| {
            let r = ecfile::verify(&dev, &blocks, None, &opts).expect("verify");
            assert!(r.ok(), "verify of a fresh set failed: {:?}", r.lost);
        }));
        for f in [
            "data_block_0",
            "data_block_5",
            "rdnc_block_1",
            "rdnc_block_3",
        ] {
            std::fs::remove_file(blocks.join(f)).expect("delete a block");
        }
        let _ = std::fs::remove_file(&out);
        rec.push(timed(|| {
            ecfile::recover(&dev, &blocks, &out, None, &opts).expect("recover");
        }));
    }
    let same = {
        let mut a = std::fs::File::open(&input).expect("open");
        let mut b = std::fs::File::open(&out).expect("open");
        let (mut x, mut y) = (vec![0u8; 1 << 20], vec![0u8; 1 << 20]);
        loop {
            let n = a.read(&mut x).expect("read");
            let m = b.read(&mut y).expect("read");
            if n != m || x[..n] != y[..m] {
                break false;
            }
            if n == 0 {
                break true;
            }
        }
    };
    let _ = std::fs::remove_dir_all(&root);
    assert!(same, "the recovered file differs from the input");
    // Ratios pair the rounds: each is the median over rounds of that round's two times
    // (taken seconds apart), so that the machine's slow drifts (page reclaim, a busy
    // host) cancel out instead of landing on one side.
    let paired =
        |base: &[f64], op: &[f64]| median(base.iter().zip(op).map(|(b, o)| b / o).collect());
    let per_round = |base: &[f64], op: &[f64]| {
        base.iter()
            .zip(op)
            .map(|(b, o)| format!("{:.2}x", b / o))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let gbs = |v: &[f64]| size as f64 / median(v.to_vec()) / 1e9;
    println!(
        "\n| doca-ec tool, {mib} MiB file, 10+4 | GB/s of file | vs cat (read) | vs file copy |"
    );
    println!("|---|---|---|---|");
    println!("| cat (read the file) | {:.2} | 1.00x | |", gbs(&cat));
    println!(
        "| file copy (read + write the file) | {:.2} | | 1.00x |",
        gbs(&cp)
    );
    println!(
        "| encode (read file, write 14 blocks: 1.4x the file) | {:.2} | {:.2}x | {:.2}x |",
        gbs(&enc),
        paired(&cat, &enc),
        paired(&cp, &enc)
    );
    println!(
        "| recover 4 lost + write the file (verify checksums first) | {:.2} | {:.2}x | {:.2}x |",
        gbs(&rec),
        paired(&cat, &rec),
        paired(&cp, &rec)
    );
    println!(
        "\nratios: medians of each round's pair ({} rounds{}); against the file copy, round by round: encode {}, recover {}",
        cp.len(),
        if warm == 1 {
            " after an untimed one"
        } else {
            ""
        },
        per_round(&cp, &enc),
        per_round(&cp, &rec)
    );
    // The blocks hold 1.4 times the file.
    println!(
        "\n| doca-ec tool, the 14 blocks of the same file | GB/s of blocks | vs reading the blocks |"
    );
    println!("|---|---|---|");
    println!(
        "| read every block (1 MiB reads) | {:.2} | 1.00x |",
        gbs(&cat_blocks) * 1.4
    );
    println!(
        "| verify (every block's checksum, from the manifest) | {:.2} | {:.2}x |",
        gbs(&ver) * 1.4,
        paired(&cat_blocks, &ver)
    );
}

pub fn run(a: &EcCtxArgs) {
    let (reps, sample) = if a.quick {
        (3, Duration::from_millis(5))
    } else {
        (a.reps.max(1), Duration::from_millis(a.sample_ms))
    };
    println!("median of {reps} samples; samples of each pair taken in turn\n");
    if !a.tool_only {
        println!("| shape | DOCA context GB/s | ec-codec GB/s | ratio |");
        println!("|---|---|---|---|");
        for block in [64 << 10, 1 << 20] {
            context_vs_codec(block, reps, sample);
        }
        engine_scaling(reps, sample, a.quick);
    }
    // Whole files: at least three rounds (each writes gigabytes).
    tool_end_to_end(a, if a.quick { 1 } else { reps.max(3) });
}
