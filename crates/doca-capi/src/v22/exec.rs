//! `doca_ctx.h`: contexts, jobs and events (2.2), and a C job's translation into the
//! engine's job record through its library's task table. The work queue's calls are
//! in `workq.rs`.

use crate::common::handles::call;
use crate::common::{
    Result, doca_data, doca_error_t, err, ffi, handle, handle_mut, invalid, out_ptr, put,
};
use crate::v22::dev::doca_dev;
use crate::v22::mem::doca_gpu;
use doca_core::exec::JobRecord;
use doca_core::{Ctx, ErrorCode, WorkQ};
use std::ffi::c_int;
use std::mem::{offset_of, size_of};

crate::common::handles::handle_kinds! {
    Boxed: doca_workq;
    Borrowed: doca_ctx;
    Program: doca_job;
}

/// How a library's 2.2 job structs become records (made from its task table by
/// `c22_jobs!` (in `tasks.rs`)): it says which job structs a context's jobs
/// are.
pub(crate) type JobFill =
    unsafe fn(*const doca_job, u32, doca_core::Data, &mut JobRecord) -> Result<()>;

/// `struct doca_ctx`: embedded in each library's handle.
#[derive(Debug)]
pub struct doca_ctx {
    pub(crate) ctx: Ctx,
    pub(crate) jobs: JobFill,
}

/// `struct doca_workq`.
#[derive(Debug)]
pub struct doca_workq {
    pub(crate) wq: WorkQ,
}

/// `struct doca_job`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_job {
    /// Job type.
    pub type_: c_int,
    /// Job flags.
    pub flags: c_int,
    /// The context that runs it.
    pub ctx: *mut doca_ctx,
    /// Echoed in the event.
    pub user_data: doca_data,
}

/// `struct doca_event`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_event {
    /// Job type.
    pub type_: c_int,
    /// The job's user data.
    pub user_data: doca_data,
    /// `result.u64`: the job's `doca_error_t`.
    pub result: doca_data,
}

// The layouts of DOCA 2.2 (x86-64), mirrored by _Static_asserts in the C tests.
const _: () = {
    assert!(size_of::<doca_job>() == 24);
    assert!(offset_of!(doca_job, flags) == 4);
    assert!(offset_of!(doca_job, ctx) == 8);
    assert!(offset_of!(doca_job, user_data) == 16);
    assert!(size_of::<doca_event>() == 24);
    assert!(offset_of!(doca_event, user_data) == 8);
    assert!(offset_of!(doca_event, result) == 16);
    assert!(size_of::<doca_data>() == 8);
};

/// Runs `f` with the context and the job record a C job describes; the context is
/// borrowed for the call only. The record borrows the job's buffers (pinned by the work
/// queue while the job is in flight).
///
/// # Safety
/// `job` is NULL or points to the full job struct of its type; `job->ctx` is NULL or a
/// live context handle for the whole call.
pub(crate) unsafe fn with_job_from_c<R>(
    job: *const doca_job,
    f: impl FnOnce(&doca_ctx, JobRecord) -> Result<R>,
) -> Result<R> {
    // SAFETY: the caller's contract.
    let (ctx, t) = unsafe { job_head(job) }?;
    let mut rec = JobRecord::new(0, doca_core::Data(0));
    // SAFETY: as above.
    unsafe { fill_from_c(job, ctx, t, &mut rec) }?;
    f(ctx, rec)
}

/// The checks of a C job that need no record: its context (borrowed for the caller's
/// call) and its type.
///
/// # Safety
/// As [`with_job_from_c`].
pub(crate) unsafe fn job_head<'a>(job: *const doca_job) -> Result<(&'a doca_ctx, u32)> {
    // SAFETY: the caller's contract.
    let base = unsafe { handle(job, "job") }?;
    // SAFETY: a job's ctx is NULL or a live context handle (the caller's contract).
    let ctx: &doca_ctx = unsafe { handle(base.ctx, "job->ctx") }?;
    let t = u32::try_from(base.type_)
        .map_err(|_| invalid(format!("job type {} is not a DOCA job type", base.type_)))?;
    if !ctx.ctx.ops().handles(t) {
        return Err(invalid(format!(
            "job type {t} does not belong to the job's context (a {} context)",
            ctx.ctx.ops().name()
        )));
    }
    if base.flags != 0 {
        return Err(invalid(format!(
            "job flags {:#x} are not DOCA_JOB_FLAGS_NONE",
            base.flags
        )));
    }
    Ok((ctx, t))
}

/// Writes the record of a C job that passed [`job_head`] into `out`, an empty record
/// (where the work queue keeps it, for a submission), through the job's library's task
/// table.
///
/// # Safety
/// As [`with_job_from_c`].
pub(crate) unsafe fn fill_from_c(
    job: *const doca_job,
    ctx: &doca_ctx,
    t: u32,
    out: &mut JobRecord,
) -> Result<()> {
    // SAFETY: checked by `job_head`.
    let ud = unsafe { &*job }.user_data;
    // SAFETY: the job type belongs to the context's library, so the struct is that
    // library's job struct for this type (the caller's contract); buffers and handles
    // are live while the job is in flight (the C contract).
    unsafe { (ctx.jobs)(job, t, ud, out) }
}

/// What a finished job writes back to the program's memory beyond its buffers, as its
/// task table says: the value a sync event get job read, the previous value of an add
/// job.
///
/// # Safety
/// The record came from [`with_job_from_c`]; its output pointers are still valid.
#[inline]
pub(crate) unsafe fn write_back(rec: &JobRecord, failed: bool) {
    if rec.flags & JobRecord::WRITES_BACK != 0 {
        // SAFETY: forwarded.
        unsafe { write_back_slow(rec, failed) };
    }
}

/// [`write_back`] of a record whose table writes results back.
///
/// # Safety
/// As [`write_back`].
#[cold]
unsafe fn write_back_slow(rec: &JobRecord, failed: bool) {
    let tables = [
        doca_dma::tasks::ALL,
        doca_sha::tasks::ALL,
        doca_ec::tasks::ALL,
        doca_core::sync_event::tasks::ALL,
        doca_compress::tasks::ALL,
    ];
    if let Some(spec) = tables
        .iter()
        .flat_map(|t| t.iter())
        .find(|s| !s.write_back.is_empty() && s.covers(rec.job_type))
    {
        // SAFETY: the caller's contract.
        unsafe { spec.write_back(rec, failed) };
    }
}

/// The C event of a completion.
pub(crate) fn event_of(c: &doca_core::Completion) -> doca_event {
    let e = c.event();
    doca_event {
        type_: e.job_type as c_int,
        user_data: e.user_data,
        result: doca_data::from_u64(e.result),
    }
}

/// `doca_ctx_get_max_num_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_ctx_get_max_num_ctx(max_num_ctx: *mut u32) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(max_num_ctx, "max_num_ctx")?;
        // SAFETY: output checked.
        unsafe { put(out, u32::MAX) };
        Ok(())
    })
}

call!(handle;
    /// `doca_ctx_dev_add`.
    pub unsafe extern "C" fn doca_ctx_dev_add(ctx: *mut doca_ctx, dev: *mut doca_dev) -> doca_error_t => |c| {
    // SAFETY: NULL or a live device handle.
    c.ctx.dev_add(&unsafe { handle(dev, "dev") }?.dev)
});
call!(handle;
    /// `doca_ctx_dev_rm`.
    pub unsafe extern "C" fn doca_ctx_dev_rm(ctx: *mut doca_ctx, dev: *mut doca_dev) -> doca_error_t => |c| {
    // SAFETY: NULL or a live device handle.
    c.ctx.dev_rm(&unsafe { handle(dev, "dev") }?.dev)
});
call!(handle;
    /// `doca_ctx_start`.
    pub unsafe extern "C" fn doca_ctx_start(ctx: *mut doca_ctx) -> doca_error_t => |c| c.ctx.start());
call!(handle;
    /// `doca_ctx_stop`.
    pub unsafe extern "C" fn doca_ctx_stop(ctx: *mut doca_ctx) -> doca_error_t => |c| c.ctx.stop());
call!(handle;
    /// `doca_ctx_workq_add`.
    pub unsafe extern "C" fn doca_ctx_workq_add(ctx: *mut doca_ctx, workq: *mut doca_workq) -> doca_error_t => |c| {
    // SAFETY: NULL or a live work queue handle used by this thread.
    c.ctx.workq_add(&mut unsafe { handle_mut(workq, "workq") }?.wq)
});
call!(handle;
    /// `doca_ctx_workq_rm`.
    pub unsafe extern "C" fn doca_ctx_workq_rm(ctx: *mut doca_ctx, workq: *mut doca_workq) -> doca_error_t => |c| {
    // SAFETY: NULL or a live work queue handle used by this thread.
    c.ctx.workq_rm(&mut unsafe { handle_mut(workq, "workq") }?.wq)
});
call!(handle;
    /// `doca_ctx_get_event_driven_supported`.
    pub unsafe extern "C" fn doca_ctx_get_event_driven_supported(ctx: *mut doca_ctx, event_supported: *mut u8) -> doca_error_t => |c| {
    let o = out_ptr(event_supported, "event_supported")?;
    // SAFETY: output checked.
    unsafe { put(o, c.ctx.event_driven_supported() as u8) };
    Ok(())
});
call!(handle;
    /// `doca_ctx_set_datapath_on_gpu`.
    pub unsafe extern "C" fn doca_ctx_set_datapath_on_gpu(ctx: *mut doca_ctx, _gpu_dev: *mut doca_gpu) -> doca_error_t => |_c| {
    Err(err(ErrorCode::NotSupported, "no GPU exists here; the datapath runs on the CPU"))
});
