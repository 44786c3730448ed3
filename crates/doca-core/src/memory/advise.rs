//! `doca_mmap_advise`: a context whose task invalidates the CPU's cache over a buffer,
//! so that the CPU sees what a device wrote there. A software device writes through the
//! CPU, whose caches are coherent: the task checks its buffer and orders the CPU's
//! later reads after everything written before it completed.

use crate::device::{Capability, Dev, DevInfo};
use crate::error::{Error, ErrorCode, Result};
use crate::exec::{Ctx, CtxOps, ExecEnv, JobOps, JobRecord};
use crate::types::action;

/// The cache invalidation task's job type.
pub const JOB_INVALIDATE_CACHE: u32 = action::MMAP_ADVISE_FIRST + 1;

/// The mmap advice's task table: the one declaration of its task type, handed to a
/// generator macro (`$gen`): [`task_specs!`](crate::task_specs) makes [`tasks`] from it,
/// and the 3.x C face its task functions. Record layout: buffer 0 the range to write
/// back from the cache.
#[macro_export]
macro_rules! mmap_advise_task_table {
    ($gen:path) => {
        $gen! {
            lib: "mmap advise",
            capability: Dma,
            topology: "mmap_advise",
            c3_handle: doca_mmap_advise,
            tasks: [
                {
                    spec: INVALIDATE_CACHE @ $crate::memory::advise::tasks::INVALIDATE_CACHE,
                    module: invalidate_cache,
                    name: "invalidate_cache",
                    job: $crate::memory::advise::JOB_INVALIDATE_CACHE,
                    job_types: [invalidate_cache = $crate::memory::advise::JOB_INVALIDATE_CACHE],
                    inputs: [
                        buf buf: 0 (*mut doca_buf)
                            get doca_mmap_advise_task_invalidate_cache_get_buf
                            set doca_mmap_advise_task_invalidate_cache_set_buf,
                    ],
                    write_back: [],
                    hooks: $crate::exec::TaskHooks::NONE,
                    c3: {
                        task: doca_mmap_advise_task_invalidate_cache,
                        cb: doca_mmap_advise_task_invalidate_cache_completion_cb_t,
                        set_conf: doca_mmap_advise_task_invalidate_cache_set_conf (num_idle_not_permitted),
                        alloc_init: doca_mmap_advise_task_invalidate_cache_alloc_init,
                        as_task: doca_mmap_advise_task_invalidate_cache_as_doca_task,
                        setters: void,
                        caps: [
                            supported doca_mmap_advise_cap_task_cache_invalidate_is_supported,
                        ],
                    },
                    c22: {},
                },
            ],
        }
    };
}

/// The mmap advice's task types, from
/// [`mmap_advise_task_table!`](crate::mmap_advise_task_table).
pub mod tasks {
    crate::mmap_advise_task_table!(crate::task_specs);
}

/// Largest buffer one task covers.
pub const MAX_BUF_SIZE: u64 = 1 << 32;

/// A memory map advice context (`struct doca_mmap_advise`).
#[derive(Debug, Clone)]
pub struct MmapAdvise {
    ctx: Ctx,
}

impl Default for MmapAdvise {
    fn default() -> MmapAdvise {
        MmapAdvise::new()
    }
}

impl MmapAdvise {
    /// `doca_mmap_advise_create` (the device is added to its context).
    pub fn new() -> MmapAdvise {
        MmapAdvise {
            ctx: Ctx::new(AdviseOps),
        }
    }

    /// Its context.
    pub fn as_ctx(&self) -> &Ctx {
        &self.ctx
    }

    /// `doca_mmap_advise_cap_task_cache_invalidate_is_supported`.
    pub fn invalidate_supported(devinfo: &DevInfo) -> Result<()> {
        crate::exec::job_supported_in(tasks::ALL, devinfo, JOB_INVALIDATE_CACHE)
    }

    /// The record of an invalidation of `buf` (borrowed, as the C face gives it).
    ///
    /// # Safety
    /// `buf` must be a live descriptor until the job completes.
    pub unsafe fn record_borrowed(
        buf: *mut crate::memory::BufDesc,
        user_data: crate::types::Data,
    ) -> JobRecord {
        let mut r = JobRecord::new(JOB_INVALIDATE_CACHE, user_data);
        // SAFETY: the caller's contract.
        unsafe { r.set_buf_raw(JobRecord::SRC, buf) };
        r
    }
}

struct AdviseOps;

impl CtxOps for AdviseOps {
    fn tasks(&self) -> &'static [&'static crate::exec::TaskSpec] {
        tasks::ALL
    }
    fn name(&self) -> &'static str {
        "mmap_advise"
    }

    fn capability(&self) -> Capability {
        Capability::Dma
    }

    fn handles(&self, job_type: u32) -> bool {
        job_type == JOB_INVALIDATE_CACHE
    }
}

impl JobOps for AdviseOps {
    fn validate(&self, job: &mut JobRecord, _dev: &Dev) -> Result<()> {
        let Some(b) = job.buf(JobRecord::SRC) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the cache invalidation needs a buffer",
            ));
        };
        if b.len() as u64 > MAX_BUF_SIZE {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                format!("the buffer is larger than {MAX_BUF_SIZE} bytes"),
            ));
        }
        Ok(())
    }

    fn execute(&self, job: &mut JobRecord, env: &ExecEnv<'_>) -> Result<()> {
        let Some(b) = job.buf(JobRecord::SRC) else {
            return Err(Error::with_context(
                ErrorCode::InvalidValue,
                "the cache invalidation needs a buffer",
            ));
        };
        if !b.mmap_has_device(env.dev()) {
            return Err(Error::with_context(
                ErrorCode::NotPermitted,
                "the buffer's mmap was not given access to the context's device (mmap dev_add)",
            ));
        }
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        Ok(())
    }
}
