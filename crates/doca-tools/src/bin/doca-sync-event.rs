//! `doca-sync-event`: a host side and a DPU side signal each other through one DOCA sync
//! event, like DOCA's sync_event_host / sync_event_dpu samples: synchronously or
//! (`--async`) with jobs on work queues, by setting the value or (`--atomic`) adding to
//! it. By default the two sides are two threads; with `--role host` and `--role dpu`
//! they are two processes: the host exports the event and sends the descriptor over the
//! comm channel, the DPU side creates its handle from it (start the DPU side first).

use clap::Parser;
use doca_core::device::Capability;
use doca_core::sync_event::MAX_ASYNC_WAIT_VALUE;
use doca_core::{Ctx, Error, ErrorCode, Result, SyncEvent, SyncEventJob, WorkQ};
use doca_tools::pair::{self, Side as Role};
use doca_tools::{cleanup, open_device, outln, report};
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
    /// Run as one side of a two-process pair (start the DPU side first).
    #[arg(long, value_enum)]
    role: Option<Role>,
    /// The representor of the host function to serve (DPU side of a pair).
    #[arg(short, long = "rep-pci-addr", default_value = "3b:00.0")]
    rep_pci_addr: String,
    /// Print nothing on success.
    #[arg(short, long)]
    quiet: bool,
}

/// The comm channel service the two processes meet at.
const SERVICE: &str = "doca-sync-event";

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

fn check_rounds(a: &Args) -> Result<()> {
    if a.rounds == 0 {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            "--rounds must be at least 1 (there is no latency to measure without a round)",
        ));
    }
    let Some(top) = a.rounds.checked_mul(2) else {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!("--rounds {} is too large", a.rounds),
        ));
    };
    if a.asynchronous && top > MAX_ASYNC_WAIT_VALUE {
        return Err(Error::with_context(
            ErrorCode::InvalidValue,
            format!(
                "asynchronous waits work on values up to {MAX_ASYNC_WAIT_VALUE}: use at most {} rounds with --async",
                MAX_ASYNC_WAIT_VALUE / 2
            ),
        ));
    }
    Ok(())
}

fn start(se: &SyncEvent, a: &Args) -> Result<()> {
    if a.asynchronous {
        se.as_ctx().start()
    } else {
        se.start()
    }
}

fn mode(a: &Args) -> String {
    format!(
        "{} mode, {}",
        if a.asynchronous {
            "asynchronous"
        } else {
            "synchronous"
        },
        if a.atomic { "add" } else { "set" }
    )
}

/// The DPU side of a pair: imports the host's event and answers each signal.
fn run_dpu(a: &Args) -> Result<String> {
    let dev = pair::side_device(Role::Dpu, a.dev_pci_addr.as_deref(), Capability::SyncEvent)?;
    let mut ch = pair::serve(&dev, &a.rep_pci_addr, SERVICE)?;
    let msg = ch.recv()?;
    let blob = pair::unhex(msg.strip_prefix("EVENT ").ok_or_else(|| {
        Error::with_context(
            ErrorCode::InvalidValue,
            "the host sent no sync event descriptor",
        )
    })?)?;
    let se = SyncEvent::create_from_export(&dev, &blob)?;
    start(&se, a)?;
    let t = Instant::now();
    let mut me = side(&se, a)?;
    let mut r = Ok(());
    for i in 0..a.rounds {
        cleanup::interrupted()?;
        r = me
            .wait_gt(2 * i)
            .and_then(|_| me.signal(2 * i + 1, a.atomic));
        if r.is_err() {
            break;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    me.done()?;
    if a.asynchronous {
        se.as_ctx().stop()?;
    } else {
        se.stop()?;
    }
    r?;
    Ok(format!(
        "DPU side: answered {} signals of the host process through its exported sync event ({}): {:.2} us per round trip",
        a.rounds,
        mode(a),
        secs * 1e6 / a.rounds.max(1) as f64
    ))
}

/// The host side of a pair: exports the event, sends the descriptor, signals and waits.
fn run_host(a: &Args) -> Result<String> {
    let dev = pair::side_device(Role::Host, a.dev_pci_addr.as_deref(), Capability::SyncEvent)?;
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(&dev)?;
    se.subscriber_add_location_dpu()?;
    start(&se, a)?;
    let blob = se.export_to_dpu(&dev)?;
    let mut ch = pair::connect(&dev, SERVICE)?;
    ch.send(format!("EVENT {}", pair::hex(&blob)).as_bytes())?;
    let t = Instant::now();
    let mut me = side(&se, a)?;
    let mut r = Ok(());
    for i in 0..a.rounds {
        cleanup::interrupted()?;
        r = me
            .signal(2 * i, a.atomic)
            .and_then(|_| me.wait_gt(2 * i + 1));
        if r.is_err() {
            break;
        }
    }
    let secs = t.elapsed().as_secs_f64();
    let value = if a.asynchronous {
        let v = me.job(SyncEventJob::get(0));
        me.done()?;
        se.as_ctx().stop()?;
        v
    } else {
        me.done()?;
        let v = se.get();
        se.stop()?;
        v
    };
    r?;
    let value = value?;
    if value != 2 * a.rounds {
        return Err(Error::with_context(
            ErrorCode::Unexpected,
            format!("the sync event ended at {value}, expected {}", 2 * a.rounds),
        ));
    }
    Ok(format!(
        "host side: exchanged {} signals with the DPU process through an exported sync event ({}): {:.2} us per round trip; final value {value}",
        2 * a.rounds,
        mode(a),
        secs * 1e6 / a.rounds.max(1) as f64
    ))
}

fn run(a: &Args) -> Result<String> {
    check_rounds(a)?;
    match a.role {
        Some(Role::Dpu) => {
            pair::become_side(Role::Dpu);
            return run_dpu(a);
        }
        Some(Role::Host) => {
            pair::become_side(Role::Host);
            return run_host(a);
        }
        None => {}
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
    cleanup::install();
    let a = Args::parse();
    match run(&a) {
        Ok(msg) => {
            if !a.quiet {
                outln!("{msg}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => report("doca-sync-event", &e),
    }
}
