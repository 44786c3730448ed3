//! `doca-sync-event`: two threads — a host side and a DPU side — signal each other
//! through one DOCA sync event, like DOCA's sync_event_host / sync_event_dpu samples:
//! synchronously or (`--async`) with jobs on work queues, by setting the value or
//! (`--atomic`) adding to it.

use clap::Parser;
use doca_core::device::Capability;
use doca_core::sync_event::MAX_ASYNC_WAIT_VALUE;
use doca_core::{Ctx, Error, ErrorCode, Result, SyncEvent, SyncEventJob, WorkQ};
use doca_tools::{open_device, report};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Signal between a host thread and a DPU thread through a DOCA sync event.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Device PCI address (default: the first device with sync events).
    #[arg(short, long = "dev-pci-addr")]
    dev_pci_addr: Option<String>,
    /// Start the sync event in asynchronous mode (jobs on work queues).
    #[arg(long = "async")]
    asynchronous: bool,
    /// Work queue depth (asynchronous mode).
    #[arg(long, default_value_t = 8)]
    qdepth: u32,
    /// Update with add (atomic increment) instead of set.
    #[arg(long)]
    atomic: bool,
    /// Round trips (host signals, DPU answers).
    #[arg(long, default_value_t = 100)]
    rounds: u64,
    /// Print nothing on success.
    #[arg(short, long)]
    quiet: bool,
}

/// One side's operations on the shared event.
enum Side<'a> {
    Sync(&'a SyncEvent),
    Async { ctx: &'a Ctx, wq: WorkQ },
}

impl Side<'_> {
    fn job(&mut self, job: SyncEventJob) -> Result<u64> {
        let Side::Async { ctx, wq } = self else {
            unreachable!("jobs are for asynchronous sides")
        };
        wq.submit_job(ctx, job).map_err(|(e, _)| e)?;
        let c = wq
            .wait(Some(Duration::from_secs(30)))
            .map_err(Error::from)?;
        Ok(SyncEventJob::result_value(&c))
    }

    /// Waits until the value is above `v`.
    fn wait_gt(&mut self, v: u64) -> Result<()> {
        match self {
            Side::Sync(se) => se.wait_gt_yield(v, u64::MAX),
            Side::Async { .. } => self.job(SyncEventJob::wait_gt(v, u64::MAX, v)).map(|_| ()),
        }
    }

    /// Moves the value from `from` to `from + 1`.
    fn signal(&mut self, from: u64, atomic: bool) -> Result<()> {
        match (self, atomic) {
            (Side::Sync(se), true) => se.update_add(1).map(|_| ()),
            (Side::Sync(se), false) => se.update_set(from + 1),
            (s, true) => s.job(SyncEventJob::update_add(1, from)).map(|_| ()),
            (s, false) => s.job(SyncEventJob::update_set(from + 1, from)).map(|_| ()),
        }
    }

    fn done(self) -> Result<()> {
        if let Side::Async { ctx, mut wq } = self {
            ctx.workq_rm(&mut wq)?;
        }
        Ok(())
    }
}

fn side<'a>(se: &'a SyncEvent, a: &Args) -> Result<Side<'a>> {
    if !a.asynchronous {
        return Ok(Side::Sync(se));
    }
    let mut wq = WorkQ::new(a.qdepth)?;
    se.as_ctx().workq_add(&mut wq)?;
    Ok(Side::Async {
        ctx: se.as_ctx(),
        wq,
    })
}

fn run(a: &Args) -> Result<String> {
    if a.asynchronous && 2 * a.rounds > MAX_ASYNC_WAIT_VALUE {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "asynchronous waits work on values up to {MAX_ASYNC_WAIT_VALUE}: use at most {} rounds with --async",
                MAX_ASYNC_WAIT_VALUE / 2
            ),
        ));
    }
    let dev = open_device(a.dev_pci_addr.as_deref(), Capability::SyncEvent)?;
    let se = SyncEvent::new();
    // The host publishes and the DPU subscribes; the answers go the other way on the
    // same counter.
    se.publisher_add_location_cpu(&dev)?;
    se.subscriber_add_location_dpu()?;
    if a.asynchronous {
        se.as_ctx().start()?;
    } else {
        se.start()?;
    }
    let t = Instant::now();
    let r = std::thread::scope(|s| -> Result<()> {
        let dpu = s.spawn(|| -> Result<()> {
            let mut me = side(&se, a)?;
            for i in 0..a.rounds {
                // The host's signal moves the value to 2i + 1; answer with 2i + 2.
                me.wait_gt(2 * i)?;
                me.signal(2 * i + 1, a.atomic)?;
            }
            me.done()
        });
        let mut host = side(&se, a)?;
        let mut r = Ok(());
        for i in 0..a.rounds {
            r = host
                .signal(2 * i, a.atomic)
                .and_then(|_| host.wait_gt(2 * i + 1));
            if r.is_err() {
                break;
            }
        }
        let d = dpu.join().unwrap_or_else(|_| {
            Err(Error::with_context(
                ErrorCode::Unexpected,
                "the DPU thread panicked",
            ))
        });
        r.and(d).and(host.done())
    });
    let secs = t.elapsed().as_secs_f64();
    let value = if a.asynchronous {
        let mut wq = WorkQ::new(1)?;
        se.as_ctx().workq_add(&mut wq)?;
        let mut s = Side::Async {
            ctx: se.as_ctx(),
            wq,
        };
        let v = s.job(SyncEventJob::get(0));
        s.done()?;
        se.as_ctx().stop()?;
        v?
    } else {
        let v = se.get()?;
        se.stop()?;
        v
    };
    r?;
    if value != 2 * a.rounds {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            format!("the sync event ended at {value}, expected {}", 2 * a.rounds),
        ));
    }
    Ok(format!(
        "host and DPU threads exchanged {} signals through a sync event ({} mode, {}): {:.2} us per round trip; final value {value}",
        2 * a.rounds,
        if a.asynchronous {
            "asynchronous"
        } else {
            "synchronous"
        },
        if a.atomic { "add" } else { "set" },
        secs * 1e6 / a.rounds.max(1) as f64
    ))
}

fn main() -> ExitCode {
    let a = Args::parse();
    match run(&a) {
        Ok(msg) => {
            if !a.quiet {
                println!("{msg}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => report("doca-sync-event", &e),
    }
}
