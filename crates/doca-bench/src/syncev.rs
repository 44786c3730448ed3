//! Sync event ping-pong between two threads (`wait_gt` / `update_set`) against the same
//! ping-pong on a raw `AtomicU64`, in the same run.

use crate::median;
use clap::Args;
use doca_core::{SyncEvent, devinfo_list};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[derive(Args, Debug)]
pub struct SyncEventArgs {
    /// Samples per measurement (the median is reported).
    #[arg(long, default_value_t = 7)]
    reps: usize,
    /// Round trips per sample.
    #[arg(long, default_value_t = 200_000)]
    rounds: u64,
    /// A short run to check that everything works.
    #[arg(long)]
    quick: bool,
}

/// Nanoseconds per round trip of the raw atomic ping-pong.
fn raw(rounds: u64) -> f64 {
    let v = AtomicU64::new(1);
    let t = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..rounds {
                while v.load(Ordering::Acquire) <= 2 * i + 1 {
                    std::hint::spin_loop();
                }
                v.store(2 * i + 3, Ordering::Release);
            }
        });
        for i in 0..rounds {
            while v.load(Ordering::Acquire) <= 2 * i {
                std::hint::spin_loop();
            }
            v.store(2 * i + 2, Ordering::Release);
        }
        while v.load(Ordering::Acquire) <= 2 * rounds {
            std::hint::spin_loop();
        }
    });
    t.elapsed().as_nanos() as f64 / rounds as f64
}

/// Nanoseconds per round trip through a started sync event.
fn sync_event(se: &SyncEvent, rounds: u64) -> f64 {
    se.update_set(1).expect("set");
    let t = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..rounds {
                se.wait_gt(2 * i + 1, u64::MAX).expect("wait");
                se.update_set(2 * i + 3).expect("set");
            }
        });
        for i in 0..rounds {
            se.wait_gt(2 * i, u64::MAX).expect("wait");
            se.update_set(2 * i + 2).expect("set");
        }
        se.wait_gt(2 * rounds, u64::MAX).expect("wait");
    });
    t.elapsed().as_nanos() as f64 / rounds as f64
}

pub fn run(a: &SyncEventArgs) {
    let (reps, rounds) = if a.quick {
        (3, 2_000)
    } else {
        (a.reps.max(1), a.rounds.max(1))
    };
    let dev = devinfo_list().expect("devices")[0].open().expect("open");
    let se = SyncEvent::new();
    se.publisher_add_location_cpu(&dev).expect("location");
    se.subscriber_add_location_cpu(&dev).expect("location");
    se.start().expect("start");
    let (mut r, mut s) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        r.push(raw(rounds));
        s.push(sync_event(&se, rounds));
    }
    let (r, s) = (median(r), median(s));
    println!("median of {reps} samples of {rounds} round trips, taken in turn\n");
    println!("| ping-pong between two threads | ns per round trip | ratio to AtomicU64 |");
    println!("|---|---|---|");
    println!("| raw AtomicU64 (spin) | {r:.1} | 1.00x |");
    println!(
        "| sync event wait_gt / update_set | {s:.1} | {:.2}x |",
        s / r
    );
    se.stop().expect("stop");
}
