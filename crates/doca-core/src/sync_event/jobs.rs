//! Sync event jobs on a work queue (asynchronous mode): the job, and the context that
//! runs them.

use super::wait::{masked_gt, satisfiable};
use super::*;
use crate::Error;

/// A sync event job (`doca_sync_event_job_get`, `_update_set`, `_update_add`, `_wait`).
/// The value read by a get job, and the previous value of an add job, come back in the
/// completion ([`SyncEventJob::result_value`]).
#[derive(Debug, Clone, Copy)]
pub struct SyncEventJob {
    /// One of the `JOB_*` types.
    pub job_type: u32,
    /// Set or add value, or the wait threshold.
    pub value: u64,
    /// Wait mask.
    pub mask: u64,
    /// Echoed in the completion.
    pub user_data: Data,
}

impl SyncEventJob {
    /// Reads the value.
    pub fn get(user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_GET,
            value: 0,
            mask: 0,
            user_data: Data(user_data),
        }
    }

    /// Sets the value.
    pub fn update_set(value: u64, user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_UPDATE_SET,
            value,
            mask: 0,
            user_data: Data(user_data),
        }
    }

    /// Adds to the value atomically.
    pub fn update_add(value: u64, user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_UPDATE_ADD,
            value,
            mask: 0,
            user_data: Data(user_data),
        }
    }

    /// Completes once `(event & mask) > value` (value and event within 0..=254).
    pub fn wait_gt(value: u64, mask: u64, user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_WAIT_GT,
            value,
            mask,
            user_data: Data(user_data),
        }
    }

    /// Completes once `(event & mask) != value` (the task generation's `wait_neq`).
    pub fn wait_neq(value: u64, mask: u64, user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_WAIT_NEQ,
            value,
            mask,
            user_data: Data(user_data),
        }
    }

    /// Completes once `(event & mask) == value` (the task generation's `wait_eq`).
    pub fn wait_eq(value: u64, mask: u64, user_data: u64) -> SyncEventJob {
        SyncEventJob {
            job_type: JOB_WAIT_EQ,
            value,
            mask,
            user_data: Data(user_data),
        }
    }

    /// The value a completed get job read, or the value before a completed add job.
    pub fn result_value(c: &crate::exec::Completion) -> u64 {
        SyncEventJob::record_value(&c.record)
    }

    /// [`result_value`](SyncEventJob::result_value) from the job's record (a graph
    /// node's, say).
    pub fn record_value(r: &JobRecord) -> u64 {
        r.params[2]
    }
}

impl Job for SyncEventJob {
    fn into_record(self) -> JobRecord {
        let mut r = JobRecord::new(self.job_type, self.user_data);
        r.params[0] = self.value;
        r.params[1] = self.mask;
        r
    }
}

pub(super) struct SyncEventOps {
    pub(super) shared: Arc<Shared>,
}

impl CtxOps for SyncEventOps {
    fn tasks(&self) -> &'static [&'static crate::exec::TaskSpec] {
        super::tasks::ALL
    }
    fn name(&self) -> &'static str {
        "sync event"
    }

    fn capability(&self) -> Capability {
        Capability::SyncEvent
    }

    fn handles(&self, job_type: u32) -> bool {
        (JOB_WAIT_GT..=JOB_WAIT_NEQ).contains(&job_type)
    }

    fn on_start(&self, _dev: &crate::device::Dev) -> Result<()> {
        if self.shared.imported().is_some() {
            self.shared.remote_ok(true)?;
        } else {
            let cfg = self.shared.cfg.lock().unwrap_or_else(|e| e.into_inner());
            if cfg.publisher.is_none() || cfg.subscriber.is_none() {
                return Err(Error::bad_state(
                    "a sync event needs a publisher and a subscriber location before start",
                ));
            }
        }
        self.shared
            .mode
            .compare_exchange(IDLE, ASYNC, Ordering::AcqRel, Ordering::Acquire)
            .map(|_| ())
            .map_err(|_| Error::bad_state("sync event is already started in synchronous mode"))
    }

    fn on_stop(&self) {
        self.shared.mode.store(IDLE, Ordering::Release);
    }
}

impl JobOps for SyncEventOps {
    fn validate(&self, job: &mut JobRecord, _dev: &Dev) -> Result<()> {
        if job.job_type == JOB_WAIT_GT && job.params[0] > MAX_ASYNC_WAIT_VALUE {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "wait threshold {} is outside 0..={MAX_ASYNC_WAIT_VALUE} (the limit of asynchronous waits)",
                    job.params[0]
                ),
            ));
        }
        if job.job_type == JOB_WAIT_GT {
            let mask = job.params[1];
            satisfiable(job.params[0], mask, (mask & 0xff).min(MAX_ASYNC_WAIT_VALUE))?;
        }
        if job.job_type == JOB_WAIT_EQ && job.params[0] & !job.params[1] != 0 {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!(
                    "a wait for (event & {:#x}) == {:#x} can never end: the value has bits outside the mask",
                    job.params[1], job.params[0]
                ),
            ));
        }
        Ok(())
    }

    fn execute(&self, job: &mut JobRecord, _env: &ExecEnv<'_>) -> Result<()> {
        self.shared.remote_ok(matches!(
            job.job_type,
            JOB_WAIT_GT | JOB_WAIT_EQ | JOB_WAIT_NEQ
        ))?;
        let c = self.shared.counter();
        match job.job_type {
            JOB_WAIT_EQ => {
                if c.load(Ordering::Acquire) & job.params[1] != job.params[0] {
                    // Updates from another process ring this process's event handle.
                    self.shared.register_bell();
                    return Err(Error::new(ErrorCode::InProgress));
                }
            }
            JOB_WAIT_NEQ => {
                if c.load(Ordering::Acquire) & job.params[1] == job.params[0] {
                    self.shared.register_bell();
                    return Err(Error::new(ErrorCode::InProgress));
                }
            }
            JOB_GET => job.params[2] = c.load(Ordering::Acquire),
            JOB_UPDATE_SET => {
                c.store(job.params[0], Ordering::Release);
                self.shared.changed();
            }
            JOB_UPDATE_ADD => {
                job.params[2] = c.fetch_add(job.params[0], Ordering::AcqRel);
                self.shared.changed();
            }
            _ => {
                let v = c.load(Ordering::Acquire);
                if v > MAX_ASYNC_WAIT_VALUE {
                    return Err(Error::with_context(
                        ErrorCode::InvalidValue,
                        format!(
                            "the sync event's value {v} is outside 0..={MAX_ASYNC_WAIT_VALUE} (the limit of asynchronous waits)"
                        ),
                    ));
                }
                if !masked_gt(v, job.params[0], job.params[1]) {
                    // Updates from another process ring this process's event handle.
                    self.shared.register_bell();
                    return Err(Error::new(ErrorCode::InProgress));
                }
            }
        }
        Ok(())
    }
}
