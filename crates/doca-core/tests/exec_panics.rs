//! A library whose code panics (in `execute`, or in a piece of `ExecEnv::parallel` on
//! the owner or on a helper thread) fails that job with `Unexpected` and leaves the
//! engine working: no use after free, no owner spinning forever, no dead engine thread.

#![allow(clippy::result_large_err)]

use doca_core::device::{self, Capability, Topology};
use doca_core::exec::{CtxOps, ExecEnv, JobOps, JobRecord};
use doca_core::{Ctx, Dev, ErrorCode, Result, RetrieveError, WorkQ};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// The DMA memcpy job type, which every default device supports.
const JOB: u32 = (1 << 16) + 1;

struct Panicky {
    pieces: AtomicUsize,
}

impl CtxOps for Panicky {
    fn name(&self) -> &'static str {
        "panicky"
    }
    fn capability(&self) -> Capability {
        Capability::Dma
    }
    fn handles(&self, job_type: u32) -> bool {
        job_type == JOB
    }
}

impl JobOps for Panicky {
    fn validate(&self, _job: &mut JobRecord, _dev: &Dev) -> Result<()> {
        Ok(())
    }
    fn execute(&self, job: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()> {
        match job.params[0] {
            0 => panic!("a library bug"),
            1 => {
                // Piece 5 panics, wherever it runs; the others finish.
                env.parallel(16, &|i| {
                    self.pieces.fetch_add(1, Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(2));
                    assert!(i != 5, "a piece panics");
                });
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

fn device(threads: u32) -> Dev {
    let t = Topology::single_device(&format!("{:02x}:00.0", 0xd0 + threads), threads).unwrap();
    device::devinfo_list_from(&t)[0].open().unwrap()
}

fn job(kind: u64, user_data: u64) -> JobRecord {
    let mut r = JobRecord::new(JOB, doca_core::Data(user_data));
    r.params[0] = kind;
    r
}

#[test]
fn panics_become_unexpected_and_the_engine_carries_on() {
    for threads in [0, 2] {
        let dev = device(threads);
        let ctx = Ctx::new(Panicky {
            pieces: AtomicUsize::new(0),
        });
        ctx.dev_add(&dev).unwrap();
        ctx.start().unwrap();
        let mut wq = WorkQ::new(8).unwrap();
        ctx.workq_add(&mut wq).unwrap();
        for round in 0..3u64 {
            for (kind, fails) in [(0, true), (2, false), (1, true), (2, false)] {
                let ud = round * 10 + kind;
                wq.submit(&ctx, job(kind, ud)).map_err(|(e, _)| e).unwrap();
                match wq.wait(Some(Duration::from_secs(10))) {
                    Err(RetrieveError::IoFailed(c)) if fails => {
                        assert_eq!(c.event().user_data.u64(), ud);
                        assert_eq!(c.event().result, ErrorCode::Unexpected as u64);
                        let why = c.error.as_ref().unwrap().to_string();
                        assert!(why.contains("panicked"), "{why}");
                    }
                    Ok(c) if !fails => assert_eq!(c.event().user_data.u64(), ud),
                    other => panic!("threads {threads}, kind {kind}: {other:?}"),
                }
            }
        }
        assert_eq!(wq.inflight(), 0);
        ctx.workq_rm(&mut wq).unwrap();
        ctx.stop().unwrap();
    }
}
