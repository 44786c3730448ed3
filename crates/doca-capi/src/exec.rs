//! `doca_ctx.h`: contexts, work queues, jobs and events; the job structs of every
//! library and their translation into the work queue's job record.

use crate::dev::doca_dev;
use crate::handles::{call, getter};
use crate::libs::doca_sha_partial_session;
use crate::mem::{doca_buf, doca_gpu};
use crate::{
    Result, doca_data, doca_error_t, err, ffi, free_handle, handle, handle_mut, invalid,
    new_handle, out_ptr, put,
};
use doca_core::exec::JobRecord;
use doca_core::{Ctx, ErrorCode, RetrieveError, WorkQ};
use std::ffi::{c_int, c_void};
use std::mem::{offset_of, size_of};

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

/// `struct doca_dma_job_memcpy`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_dma_job_memcpy {
    /// Base.
    pub base: doca_job,
    /// Destination.
    pub dst_buff: *mut doca_buf,
    /// Source.
    pub src_buff: *const doca_buf,
}

/// `struct doca_compress_deflate_job`: DOCA 2.2's compress and decompress deflate job.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_compress_deflate_job {
    /// Base.
    pub base: doca_job,
    /// Destination.
    pub dst_buff: *mut doca_buf,
    /// Source.
    pub src_buff: *const doca_buf,
    /// Where the checksums go once the job succeeded (NULL for nowhere): the CRC-32 of
    /// the uncompressed data in the low 32 bits, its Adler-32 in the high 32 bits.
    pub output_chksum: *mut u64,
}

/// `struct doca_sha_job`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sha_job {
    /// Base.
    pub base: doca_job,
    /// Source.
    pub req_buf: *mut doca_buf,
    /// Digest destination.
    pub resp_buf: *mut doca_buf,
    /// `enum doca_sha_job_flags`.
    pub flags: u64,
}

/// `struct doca_sha_partial_job`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sha_partial_job {
    /// The SHA job.
    pub sha_job: doca_sha_job,
    /// The session.
    pub session: *mut doca_sha_partial_session,
}

/// `struct doca_ec_job` and the create/update/recover jobs (same layout).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_ec_job {
    /// Base.
    pub base: doca_job,
    /// The matrix.
    pub matrix: *mut crate::libs::doca_matrix,
    /// Source blocks.
    pub src_buff: *const doca_buf,
    /// Destination.
    pub dst_buff: *mut doca_buf,
}

/// `struct doca_sync_event_job_wait`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_job_wait {
    /// Base.
    pub base: doca_job,
    /// Threshold.
    pub value: u64,
    /// Mask.
    pub mask: u64,
}

/// `struct doca_sync_event_job_get`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_job_get {
    /// Base.
    pub base: doca_job,
    /// Receives the value.
    pub value: *mut u64,
}

/// `struct doca_sync_event_job_update_set`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_job_update_set {
    /// Base.
    pub base: doca_job,
    /// The new value.
    pub value: u64,
}

/// `struct doca_sync_event_job_update_add`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_sync_event_job_update_add {
    /// Base.
    pub base: doca_job,
    /// Added.
    pub value: u64,
    /// Receives the value before (may be NULL).
    pub fetched: *mut u64,
}

/// `struct doca_rdma_job_recv`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_job_recv {
    /// Base.
    pub base: doca_job,
    /// Where the message goes (appended to its data; may be NULL for an empty message
    /// or a write with immediate).
    pub dst_buff: *mut doca_buf,
}

/// `struct doca_rdma_job_send`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_job_send {
    /// Base.
    pub base: doca_job,
    /// The message (its data).
    pub src_buff: *const doca_buf,
    /// Immediate data (send with immediate).
    pub immediate_data: u32,
    /// The peer (DC and UD only; not used by RC).
    pub rdma_peer_addr: *const c_void,
}

/// `struct doca_rdma_job_read_write`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_job_read_write {
    /// Base.
    pub base: doca_job,
    /// Destination (remote for a write, local for a read).
    pub dst_buff: *mut doca_buf,
    /// Source (local for a write, remote for a read).
    pub src_buff: *const doca_buf,
    /// Immediate data (write with immediate).
    pub immediate_data: u32,
    /// The peer (DC only; not used by RC).
    pub rdma_peer_addr: *const c_void,
}

/// `struct doca_rdma_job_atomic`.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_job_atomic {
    /// Base.
    pub base: doca_job,
    /// The remote 8 bytes.
    pub cmp_or_add_dest_buff: *mut doca_buf,
    /// Receives the remote value before the operation.
    pub result_buff: *mut doca_buf,
    /// The value swapped in, or added.
    pub swap_or_add_data: u64,
    /// The value compared with (compare and swap).
    pub cmp_data: u64,
    /// The peer (DC only; not used by RC).
    pub rdma_peer_addr: *const c_void,
}

/// `struct doca_rdma_result`: what a completed RDMA job reports, written where the
/// event's `result.ptr` points.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct doca_rdma_result {
    /// The job's status.
    pub result: doca_error_t,
    /// A receive's `enum doca_rdma_opcode_t`.
    pub opcode: u32,
    /// Bytes received (receive) or read (read); 0 otherwise.
    pub length: u32,
    /// The peer (DC and UD only): NULL.
    pub rdma_peer_addr: *mut c_void,
    /// A receive's immediate data.
    pub immediate_data: u32,
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
    assert!(size_of::<doca_dma_job_memcpy>() == 40);
    assert!(offset_of!(doca_dma_job_memcpy, dst_buff) == 24);
    assert!(offset_of!(doca_dma_job_memcpy, src_buff) == 32);
    assert!(size_of::<doca_sha_job>() == 48);
    assert!(offset_of!(doca_sha_job, req_buf) == 24);
    assert!(offset_of!(doca_sha_job, resp_buf) == 32);
    assert!(offset_of!(doca_sha_job, flags) == 40);
    assert!(size_of::<doca_sha_partial_job>() == 56);
    assert!(offset_of!(doca_sha_partial_job, session) == 48);
    assert!(size_of::<doca_ec_job>() == 48);
    assert!(offset_of!(doca_ec_job, matrix) == 24);
    assert!(offset_of!(doca_ec_job, src_buff) == 32);
    assert!(offset_of!(doca_ec_job, dst_buff) == 40);
    assert!(size_of::<doca_sync_event_job_wait>() == 40);
    assert!(offset_of!(doca_sync_event_job_wait, mask) == 32);
    assert!(size_of::<doca_sync_event_job_get>() == 32);
    assert!(size_of::<doca_sync_event_job_update_set>() == 32);
    assert!(size_of::<doca_sync_event_job_update_add>() == 40);
    assert!(offset_of!(doca_sync_event_job_update_add, fetched) == 32);
    assert!(size_of::<doca_data>() == 8);
    assert!(size_of::<doca_rdma_job_recv>() == 32);
    assert!(offset_of!(doca_rdma_job_recv, dst_buff) == 24);
    assert!(size_of::<doca_rdma_job_send>() == 48);
    assert!(offset_of!(doca_rdma_job_send, src_buff) == 24);
    assert!(offset_of!(doca_rdma_job_send, immediate_data) == 32);
    assert!(offset_of!(doca_rdma_job_send, rdma_peer_addr) == 40);
    assert!(size_of::<doca_rdma_job_read_write>() == 56);
    assert!(offset_of!(doca_rdma_job_read_write, dst_buff) == 24);
    assert!(offset_of!(doca_rdma_job_read_write, src_buff) == 32);
    assert!(offset_of!(doca_rdma_job_read_write, immediate_data) == 40);
    assert!(offset_of!(doca_rdma_job_read_write, rdma_peer_addr) == 48);
    assert!(size_of::<doca_rdma_job_atomic>() == 64);
    assert!(offset_of!(doca_rdma_job_atomic, result_buff) == 32);
    assert!(offset_of!(doca_rdma_job_atomic, swap_or_add_data) == 40);
    assert!(offset_of!(doca_rdma_job_atomic, cmp_data) == 48);
    assert!(size_of::<doca_rdma_result>() == 32);
    assert!(offset_of!(doca_rdma_result, length) == 8);
    assert!(offset_of!(doca_rdma_result, rdma_peer_addr) == 16);
    assert!(offset_of!(doca_rdma_result, immediate_data) == 24);
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

/// The 2.2 job translations, one per library, made from each library's task table.
pub(crate) mod jobs {
    /// DMA's.
    pub(crate) mod dma {
        use crate::exec::*;
        doca_dma::dma_task_table!(crate::tasks::c22_jobs);
    }
    /// SHA's.
    pub(crate) mod sha {
        use crate::exec::*;
        doca_sha::sha_task_table!(crate::tasks::c22_jobs);
    }
    /// Erasure coding's.
    pub(crate) mod ec {
        use crate::exec::*;
        doca_ec::ec_task_table!(crate::tasks::c22_jobs);
    }
    /// The sync event's.
    pub(crate) mod sync_event {
        use crate::exec::*;
        doca_core::sync_event_task_table!(crate::tasks::c22_jobs);
    }
    /// Compress's (deflate both ways; the LZ4 tasks have no 2.2 job).
    pub(crate) mod compress {
        use crate::exec::*;
        doca_compress::compress_task_table!(crate::tasks::c22_jobs);
    }
    /// RDMA's (its task table also declares the 3.x tasks, which have no job struct).
    pub(crate) mod rdma {
        use crate::exec::*;
        doca_rdma::rdma_task_table!(crate::tasks::c22_jobs);
    }
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

/// `doca_workq_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_create(
    depth: u32,
    workq: *mut *mut doca_workq,
) -> doca_error_t {
    ffi(|| {
        new_handle(workq, "workq", || {
            Ok(doca_workq {
                wq: WorkQ::new(depth)?,
            })
        })
    })
}

/// `doca_workq_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_destroy(workq: *mut doca_workq) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let w = unsafe { handle(workq, "workq") }?;
        if w.wq.num_contexts() > 0 {
            return Err(err(
                ErrorCode::InUse,
                format!(
                    "{} context(s) are still attached; remove them first (doca_ctx_workq_rm)",
                    w.wq.num_contexts()
                ),
            ));
        }
        // SAFETY: a live boxed handle, destroyed once.
        unsafe { free_handle(workq, "workq") }
    })
}

/// `doca_workq_submit`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_submit(
    workq: *mut doca_workq,
    job: *const doca_job,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle used by this thread.
        let w = unsafe { handle_mut(workq, "workq") }?;
        // SAFETY: the job struct matches its type; its context is live.
        let (ctx, t) = unsafe { job_head(job) }?;
        w.wq.submit_in_place(&ctx.ctx, |rec| {
            // SAFETY: as above.
            unsafe { fill_from_c(job, ctx, t, rec) }
        })
    })
}

/// Fills `ev` from a completion (and the program's output pointers).
///
/// # Safety
/// `ev` is writable; the completion's record came from [`with_job_from_c`] or a graph.
pub(crate) unsafe fn deliver(ev: *mut doca_event, c: doca_core::Completion) {
    if c.record.job_type == doca_core::graph::JOB_GRAPH {
        // SAFETY: forwarded.
        unsafe { crate::graph::deliver_graph(ev, c) };
        return;
    }
    if doca_rdma::is_rdma_job(c.record.job_type) {
        // SAFETY: forwarded.
        unsafe { deliver_rdma(ev, &c) };
        return;
    }
    // SAFETY: forwarded.
    unsafe {
        write_back(&c.record, c.error.is_some());
        put(ev, event_of(&c));
    }
}

/// Fills `ev` from an RDMA job's completion: its `struct doca_rdma_result` goes where
/// the program pointed `ev->result.ptr` (when it did; `result.u64` holds the status
/// otherwise).
///
/// # Safety
/// As [`deliver`]: `ev` is readable and writable, and its `result.ptr`, when not NULL,
/// points to a `struct doca_rdma_result` of the program's.
unsafe fn deliver_rdma(ev: *mut doca_event, c: &doca_core::Completion) {
    use doca_rdma::slot;
    let mut e = event_of(c);
    // SAFETY: the caller's contract.
    let out: *mut doca_rdma_result = unsafe { std::ptr::addr_of!((*ev).result).read() }.ptr();
    if !out.is_null() {
        let p = &c.record.params;
        let t = c.record.job_type;
        let ok = c.error.is_none() && e.result.u64() == 0;
        let (opcode, length, imm) = match t {
            doca_rdma::JOB_RECV if ok => (
                (p[slot::RES_LEN_OP] >> 32) as u32,
                p[slot::RES_LEN_OP] as u32,
                p[slot::RES_IMM] as u32,
            ),
            doca_rdma::JOB_READ if ok => (0, p[slot::RES_CONN] as u32, 0),
            _ => (0, 0, 0),
        };
        let r = doca_rdma_result {
            result: e.result.u64() as doca_error_t,
            opcode,
            length,
            rdma_peer_addr: std::ptr::null_mut(),
            immediate_data: imm,
        };
        // SAFETY: the program's result struct (the caller's contract).
        unsafe { out.write(r) };
        e.result = doca_data::from_ptr(out);
    }
    // SAFETY: the caller's contract.
    unsafe { put(ev, e) };
}

/// `doca_workq_progress_retrieve`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_progress_retrieve(
    workq: *mut doca_workq,
    ev: *mut doca_event,
    flags: c_int,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let w = unsafe { handle_mut(workq, "workq") }?;
        let ev = out_ptr(ev, "ev")?;
        if flags != 0 {
            return Err(invalid(format!(
                "retrieve flags {flags:#x} are not DOCA_WORKQ_RETRIEVE_FLAGS_NONE"
            )));
        }
        match w.wq.progress_retrieve() {
            Ok(c) => {
                // SAFETY: output checked.
                unsafe { deliver(ev, c) };
                Ok(())
            }
            Err(RetrieveError::Again) => Err(doca_core::Error::new(ErrorCode::Again)),
            Err(RetrieveError::IoFailed(c)) => {
                let failed = failure_report(&c);
                // SAFETY: output checked.
                unsafe { deliver(ev, c) };
                Err(failed)
            }
        }
    })
}

/// The error `progress_retrieve` returns for a failed job: `DOCA_ERROR_IO_FAILED`, with
/// the job's own error as its context when debug messages are wanted (the returned error
/// is logged then: "job 0x10001 (user data 0x7) failed: DOCA_ERROR_NOT_PERMITTED: ...").
/// Formats nothing otherwise, so that the data path allocates nothing.
fn failure_report(c: &doca_core::Completion) -> doca_core::Error {
    if !crate::log::enabled(crate::log::LEVEL_DEBUG) {
        return doca_core::Error::new(ErrorCode::IoFailed);
    }
    let why = match &c.error {
        Some(e) => e.to_string(),
        None => ErrorCode::from_raw(c.event().result as i32)
            .map_or_else(|| format!("error {}", c.event().result), |e| e.to_string()),
    };
    err(
        ErrorCode::IoFailed,
        format!(
            "job {:#x} (user data {:#x}) failed: {why}",
            c.event().job_type,
            c.event().user_data.u64()
        ),
    )
}

/// `doca_workq_event_handle_arm`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_event_handle_arm(workq: *mut doca_workq) -> doca_error_t {
    // SAFETY: NULL or a live handle.
    ffi(|| unsafe { handle_mut(workq, "workq") }?.wq.event_handle_arm())
}

/// `doca_workq_event_handle_clear`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_event_handle_clear(
    workq: *mut doca_workq,
    handle_fd: c_int,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle_mut(workq, "workq") }?
            .wq
            .event_handle_clear(handle_fd)
    })
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

getter!(
    /// `doca_workq_get_depth`.
    pub unsafe extern "C" fn doca_workq_get_depth(workq: *const doca_workq, depth: *mut u32) -> doca_error_t => |w| w.wq.depth());
getter!(
    /// `doca_workq_get_event_driven_enable`.
    pub unsafe extern "C" fn doca_workq_get_event_driven_enable(workq: *mut doca_workq, enabled: *mut u8) -> doca_error_t => |w| w.wq.event_driven_enabled() as u8);
getter!(
    /// `doca_workq_get_event_handle`.
    pub unsafe extern "C" fn doca_workq_get_event_handle(workq: *mut doca_workq, event_handle: *mut c_int) -> doca_error_t => |w| w.wq.event_handle()?);

/// `doca_workq_set_event_driven_enable`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_set_event_driven_enable(
    workq: *mut doca_workq,
    enable: u8,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle_mut(workq, "workq") }?
            .wq
            .set_event_driven_enable(enable != 0)
    })
}

/// `doca_workq_set_event_handle`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_workq_set_event_handle(
    workq: *mut doca_workq,
    _event_handle: c_int,
    _completion_key: usize,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        unsafe { handle_mut(workq, "workq") }?;
        Err(err(
            ErrorCode::NotSupported,
            "external completion ports are a Windows feature; on Linux use doca_workq_get_event_handle",
        ))
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
