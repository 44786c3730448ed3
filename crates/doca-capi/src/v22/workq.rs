//! `doca_ctx.h`'s work queue (2.2): created, submitted to, progressed, and its
//! completions delivered as C events (each library's results where they go).

use crate::common::handles::getter;
use crate::common::{
    doca_data, doca_error_t, err, ffi, free_handle, handle, handle_mut, invalid, new_handle,
    out_ptr, put,
};
use crate::v22::rdma::doca_rdma_result;
use doca_core::{ErrorCode, RetrieveError, WorkQ};
use std::ffi::c_int;

use crate::v22::exec::*;

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
        unsafe { crate::v22::graph::deliver_graph(ev, c) };
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
    if !crate::common::log::enabled(crate::common::log::LEVEL_DEBUG) {
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
