//! Async jobs on tokio against the blocking API: 64 DMA memcpy jobs of 4 KiB kept in
//! flight from one tokio task (`AsyncWorkQ`: job futures awaited in turn, and detached
//! jobs read from the completion stream) against the same
//! through `WorkQ::submit` and `WorkQ::wait`, on the inline engine and on engine
//! threads; and the CPU an idle async program uses while it waits.

use crate::ec::{Runner, measure_all};
use clap::Args;
use doca_comm_channel::Endpoint;
use doca_comm_channel::aio::AsyncEndpoint;
use doca_core::aio::AsyncWorkQ;
use doca_core::device::{self, DEFAULT_MACHINE, Topology};
use doca_core::exec::Job;
use doca_core::{Buf, Dev, SyncEvent, WorkQ};
use doca_dma::{Dma, MemcpyJob};
use futures_util::StreamExt;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

#[derive(Args, Debug)]
pub struct AsyncArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Target duration of one sample, in milliseconds.
    #[arg(long, default_value_t = 100)]
    sample_ms: u64,
    /// How long the idle program waits, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    idle_ms: u64,
    /// Engine threads of the devices measured (0: inline).
    #[arg(long, value_delimiter = ',', default_values_t = [0u32, 2])]
    threads: Vec<u32>,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
}

const INFLIGHT: usize = 64;
const SIZE: usize = 4096;
/// Jobs per runner call.
const JOBS: usize = 1024;

fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0xe0 + threads), threads)
        .expect("topology");
    device::devinfo_list_from(&t)[0].open().expect("open")
}

/// Memory and a DMA context on `dev`, with `INFLIGHT` source/destination pairs.
struct Setup {
    dma: Dma,
    pairs: Vec<Option<(Buf, Buf)>>,
    _memory: (doca_core::Mmap, doca_core::BufInventory),
}

fn setup(dev: &Dev) -> Setup {
    let (mmap, inv) = doca_tools::local_memory(dev, vec![7u8; 2 * INFLIGHT * SIZE], 4 * INFLIGHT)
        .expect("memory");
    let pairs = (0..INFLIGHT)
        .map(|i| {
            let s = inv.buf_with_data_at(&mmap, i * SIZE, SIZE).expect("src");
            let d = inv.buf_at(&mmap, (INFLIGHT + i) * SIZE, SIZE).expect("dst");
            Some((s, d))
        })
        .collect();
    let dma = Dma::new();
    dma.as_ctx().dev_add(dev).expect("dev add");
    dma.as_ctx().start().expect("start");
    Setup {
        dma,
        pairs,
        _memory: (mmap, inv),
    }
}

fn job(pairs: &mut [Option<(Buf, Buf)>], i: usize) -> MemcpyJob {
    let (s, mut d) = pairs[i].take().expect("pair");
    d.reset_data_len();
    MemcpyJob::new(s, d, i as u64)
}

fn put_back(pairs: &mut [Option<(Buf, Buf)>], c: &mut doca_core::Completion) {
    c.status().expect("job");
    let i = c.record.user_data.u64() as usize;
    let s = c.take_buf(MemcpyJob::SRC).expect("src");
    let d = c.take_buf(MemcpyJob::DST).expect("dst");
    pairs[i] = Some((s, d));
}

pub fn run(a: &AsyncArgs) {
    let (reps, sample, idle) = if a.quick {
        (3, Duration::from_millis(10), Duration::from_millis(100))
    } else {
        (
            a.reps.max(1),
            Duration::from_millis(a.sample_ms),
            Duration::from_millis(a.idle_ms),
        )
    };
    println!(
        "median of {reps} samples; {INFLIGHT} DMA memcpy jobs of {SIZE} B in flight, {JOBS} per sample\n"
    );
    println!(
        "| engine | blocking `submit` + `wait` (GB/s) | async: a ring of job futures awaited in turn (GB/s, vs blocking) | async: detached jobs + `completions()` stream (GB/s, vs blocking) |"
    );
    println!("|---|---|---|---|");
    for &threads in &a.threads {
        let dev = device(threads);
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");

        let mut b = setup(&dev);
        let mut wq = WorkQ::new(INFLIGHT as u32).expect("workq");
        b.dma.as_ctx().workq_add(&mut wq).expect("workq add");

        let mut s = setup(&dev);
        let awq =
            rt.block_on(async { AsyncWorkQ::new(WorkQ::new(INFLIGHT as u32).expect("workq")) });
        let awq = awq.expect("async workq");
        awq.attach(s.dma.as_ctx()).expect("attach");
        let mut t = setup(&dev);
        let awq2 =
            rt.block_on(async { AsyncWorkQ::new(WorkQ::new(INFLIGHT as u32).expect("workq")) });
        let awq2 = awq2.expect("async workq");
        awq2.attach(t.dma.as_ctx()).expect("attach");

        let mut runners: Vec<Runner<'_>> = vec![
            Box::new(|| {
                let ctx = b.dma.as_ctx();
                let mut submitted = 0;
                for i in 0..INFLIGHT {
                    wq.submit_job(ctx, job(&mut b.pairs, i))
                        .map_err(|(e, _)| e)
                        .expect("submit");
                    submitted += 1;
                }
                let mut done = 0;
                while done < JOBS {
                    let mut c = wq.wait(None).expect("completion");
                    put_back(&mut b.pairs, &mut c);
                    done += 1;
                    if submitted < JOBS {
                        let i = c.record.user_data.u64() as usize;
                        wq.submit_job(ctx, job(&mut b.pairs, i))
                            .map_err(|(e, _)| e)
                            .expect("submit");
                        submitted += 1;
                    }
                }
            }),
            Box::new(|| {
                let ctx = s.dma.as_ctx();
                let pairs = &mut s.pairs;
                let awq = &awq;
                rt.block_on(async move {
                    // A ring of futures awaited oldest first, refilled as each ends.
                    let mut running = VecDeque::with_capacity(INFLIGHT);
                    for i in 0..INFLIGHT {
                        running.push_back(
                            awq.submit_job(ctx, job(pairs, i))
                                .map_err(|(e, _)| e)
                                .expect("submit"),
                        );
                    }
                    let mut submitted = INFLIGHT;
                    while let Some(f) = running.pop_front() {
                        let mut c = f.await;
                        put_back(pairs, &mut c);
                        if submitted < JOBS {
                            let i = c.record.user_data.u64() as usize;
                            running.push_back(
                                awq.submit_job(ctx, job(pairs, i))
                                    .map_err(|(e, _)| e)
                                    .expect("submit"),
                            );
                            submitted += 1;
                        }
                    }
                });
            }),
            Box::new(|| {
                let ctx = t.dma.as_ctx();
                let pairs = &mut t.pairs;
                let awq = &awq2;
                rt.block_on(async move {
                    for i in 0..INFLIGHT {
                        awq.submit_detached(ctx, job(pairs, i).into_record())
                            .map_err(|(e, _)| e)
                            .expect("submit");
                    }
                    let mut submitted = INFLIGHT;
                    let mut done = awq.completions();
                    while let Some(mut c) = done.next().await {
                        put_back(pairs, &mut c);
                        if submitted < JOBS {
                            let i = c.record.user_data.u64() as usize;
                            awq.submit_detached(ctx, job(pairs, i).into_record())
                                .map_err(|(e, _)| e)
                                .expect("submit");
                            submitted += 1;
                        }
                    }
                });
            }),
        ];
        let r = measure_all(JOBS * SIZE, reps, sample, &mut runners);
        drop(runners);
        let name = if threads == 0 {
            "inline".to_string()
        } else {
            format!("{threads} engine threads")
        };
        println!(
            "| {name} | {:.2} | {:.2} ({:.2}x) | {:.2} ({:.2}x) |",
            r[0],
            r[1],
            r[1] / r[0],
            r[2],
            r[2] / r[0]
        );
        b.dma.as_ctx().workq_rm(&mut wq).expect("workq rm");
        awq.detach(s.dma.as_ctx()).expect("detach");
        awq2.detach(t.dma.as_ctx()).expect("detach");
    }
    println!();
    idle_cpu(idle);
}

/// CPU time (user + system) this process used so far.
fn cpu_time() -> Duration {
    // SAFETY: getrusage fills the struct it is given.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// An async program waiting with nothing to do: how much CPU it uses.
fn idle_cpu(idle: Duration) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "| idle async program, waiting {} ms (engine threads on) | CPU time | CPU / wall |",
        idle.as_millis()
    );
    println!("|---|---|---|");
    let dev = device(2);
    let name = format!("bench-idle-{}", std::process::id());
    let dpu = Topology::from_toml(DEFAULT_MACHINE, Some("dpu"))
        .and_then(|t| t.open_device("0000:03:00.0"))
        .expect("dpu device");
    let rep = dpu.open_rep("0000:3b:00.0").expect("representor");
    let row = |what: &str, used: Duration, wall: Duration| {
        println!(
            "| {what} | {:.2} ms | {:.3}% |",
            used.as_secs_f64() * 1e3,
            100.0 * used.as_secs_f64() / wall.as_secs_f64()
        );
    };
    rt.block_on(async {
        // A comm channel service waiting for its first client.
        let mut ep = Endpoint::new();
        ep.set_device(&dpu).expect("device");
        ep.set_device_rep(&rep).expect("rep");
        ep.listen(&name).expect("listen");
        let mut server = AsyncEndpoint::new(ep).expect("async endpoint");
        let mut buf = [0u8; 4080];
        let (t, c) = (Instant::now(), cpu_time());
        let r = tokio::time::timeout(idle, server.recv_from(&mut buf)).await;
        assert!(r.is_err(), "nothing arrives");
        row(
            "comm channel `recv_from` with no client",
            cpu_time() - c,
            t.elapsed(),
        );

        // A job queue with engine threads and a DMA context, nothing in flight, while
        // the task sleeps on a timer.
        let s = setup(&dev);
        let awq =
            AsyncWorkQ::new(WorkQ::new(INFLIGHT as u32).expect("workq")).expect("async workq");
        awq.attach(s.dma.as_ctx()).expect("attach");
        let (t, c) = (Instant::now(), cpu_time());
        tokio::time::sleep(idle).await;
        row(
            "`AsyncWorkQ` with engine threads, no job in flight",
            cpu_time() - c,
            t.elapsed(),
        );

        // A sync event wait job that does not pass (retried every millisecond for
        // updates made by other processes).
        let se = SyncEvent::new();
        se.publisher_add_location_cpu(&dev).expect("publisher");
        se.subscriber_add_location_cpu(&dev).expect("subscriber");
        se.as_ctx().start().expect("start");
        awq.attach(se.as_ctx()).expect("attach");
        let (t, c) = (Instant::now(), cpu_time());
        let r = tokio::time::timeout(idle, awq.sync_event_wait_gt(&se, 1, u64::MAX)).await;
        assert!(r.is_err(), "the event stays at 0");
        row(
            "sync event wait that does not pass",
            cpu_time() - c,
            t.elapsed(),
        );
        // Let the abandoned wait end: raise the event, then drain.
        let f = awq.submit_job(se.as_ctx(), doca_core::SyncEventJob::update_set(5, 0));
        f.map_err(|(e, _)| e)
            .expect("update")
            .await
            .status()
            .expect("update");
        awq.settle().await;
        awq.detach(se.as_ctx()).expect("detach");
        awq.detach(s.dma.as_ctx()).expect("detach");
        se.as_ctx().stop().expect("stop");
    });
}
