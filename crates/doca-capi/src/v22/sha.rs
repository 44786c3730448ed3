//! `doca_sha.h` (2.2): the SHA context, its jobs and partial sessions.

use crate::common::destroy_in_place;
use crate::common::invalid;
use crate::common::tasks::InputValue;
use crate::common::{doca_error_t, doca_sha_job_type, ffi, handle, new_handle};
use crate::v22::dev::doca_devinfo;
use crate::v22::exec::{doca_ctx, doca_workq};
use ::doca_sha::{PartialSession, Sha};
use doca_core::JobRecord;
use doca_core::exec::{TaskInputs, TaskSpec};

use crate::v22::exec::doca_job;
use crate::v22::libs::*;
use crate::v22::mem::doca_buf;
use std::mem::{offset_of, size_of};

crate::common::handles::handle_kinds! {
    Boxed: doca_sha_partial_session;
}

/// `struct doca_sha`.
pub type doca_sha = LibHandle<Sha>;
/// `struct doca_sha_partial_session`.
#[derive(Debug)]
pub struct doca_sha_partial_session {
    pub(crate) session: PartialSession,
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

// The layouts of DOCA 2.2 (x86-64), mirrored by _Static_asserts in the C tests.
const _: () = {
    assert!(size_of::<doca_sha_job>() == 48);
    assert!(offset_of!(doca_sha_job, req_buf) == 24);
    assert!(offset_of!(doca_sha_job, resp_buf) == 32);
    assert!(offset_of!(doca_sha_job, flags) == 40);
    assert!(size_of::<doca_sha_partial_job>() == 56);
    assert!(offset_of!(doca_sha_partial_job, session) == 48);
};

/// The translation of SHA's 2.2 job structs into records, from its task table.
pub(crate) mod jobs {
    use super::*;
    ::doca_sha::sha_task_table!(crate::common::tasks::c22_jobs);
}

/// `doca_sha_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_create(ctx: *mut *mut doca_sha) -> doca_error_t {
    let s = Sha::new();
    let c = s.as_ctx().clone();
    create(ctx, s, &c, crate::v22::sha::jobs::fill)
}

/// `doca_sha_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_destroy(ctx: *mut doca_sha) -> doca_error_t {
    destroy(ctx)
}

/// `doca_sha_as_ctx`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_as_ctx(ctx: *mut doca_sha) -> *mut doca_ctx {
    as_ctx(ctx)
}

/// `doca_sha_job_get_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_job_get_supported(
    devinfo: *const doca_devinfo,
    job_type_v: doca_sha_job_type,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        Sha::job_get_supported(d, job_type(job_type_v)?)
    })
}

/// `doca_sha_get_max_list_buf_num_elem`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_get_max_list_buf_num_elem(
    devinfo: *const doca_devinfo,
    max_list_num_elem: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, max_list_num_elem, Sha::max_list_buf_num_elem)
}

/// `doca_sha_get_max_src_buffer_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_get_max_src_buffer_size(
    devinfo: *const doca_devinfo,
    max_buffer_size: *mut u64,
) -> doca_error_t {
    devinfo_value(devinfo, max_buffer_size, Sha::max_src_buffer_size)
}

/// `doca_sha_get_min_dst_buffer_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_get_min_dst_buffer_size(
    devinfo: *const doca_devinfo,
    job_type_v: doca_sha_job_type,
    min_buffer_size: *mut u32,
) -> doca_error_t {
    devinfo_value(devinfo, min_buffer_size, |d| {
        Sha::min_dst_buffer_size(d, job_type(job_type_v)?)
    })
}

/// `doca_sha_get_hardware_supported`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_get_hardware_supported(
    devinfo: *const doca_devinfo,
) -> doca_error_t {
    devinfo_query(devinfo, Sha::hardware_supported)
}

/// `doca_sha_partial_session_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_partial_session_create(
    ctx: *mut doca_sha,
    workq: *mut doca_workq,
    session: *mut *mut doca_sha_partial_session,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (s, w) = unsafe { (handle(ctx, "ctx")?, handle(workq, "workq")?) };
        new_handle(session, "session", || {
            let session = s.lib.partial_session_create(&w.wq)?;
            Ok(doca_sha_partial_session { session })
        })
    })
}

/// `doca_sha_partial_session_destroy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_partial_session_destroy(
    ctx: *mut doca_sha,
    workq: *mut doca_workq,
    session: *mut doca_sha_partial_session,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles; the session is destroyed in place or kept.
        unsafe {
            let (s, w) = (handle(ctx, "ctx")?, handle(workq, "workq")?);
            destroy_in_place(session, "session", |h: doca_sha_partial_session| {
                s.lib
                    .partial_session_destroy(&w.wq, h.session)
                    .map_err(|(session, e)| (doca_sha_partial_session { session }, e))
            })
        }
    })
}

/// `doca_sha_partial_session_copy`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_sha_partial_session_copy(
    ctx: *mut doca_sha,
    workq: *mut doca_workq,
    from_session: *const doca_sha_partial_session,
    to_session: *mut doca_sha_partial_session,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or live handles.
        let (s, w, from, to) = unsafe {
            (
                handle(ctx, "ctx")?,
                handle(workq, "workq")?,
                handle(from_session, "from_session")?,
                handle(to_session, "to_session")?,
            )
        };
        s.lib
            .partial_session_copy(&w.wq, &from.session, &to.session)
    })
}

/// A 2.2 partial hash session: kept alive by the record (it has no parameter slot).
impl InputValue for *mut doca_sha_partial_session {
    const NONE: Self = std::ptr::null_mut();
    unsafe fn store(
        self,
        inputs: &TaskInputs,
        _: &TaskSpec,
        _: usize,
        name: &str,
    ) -> crate::common::Result<()> {
        // SAFETY: the caller's contract.
        let s = unsafe { self.as_ref() }.ok_or_else(|| invalid(format!("the {name} is NULL")))?;
        *inputs.aux.borrow_mut() = Some(s.session.as_aux());
        Ok(())
    }
    fn load(_: &TaskInputs, _: usize) -> Self {
        std::ptr::null_mut()
    }
    unsafe fn put(
        self,
        out: &mut JobRecord,
        _: &TaskSpec,
        _: usize,
        name: &str,
    ) -> crate::common::Result<()> {
        // SAFETY: the caller's contract.
        let s = unsafe { self.as_ref() }.ok_or_else(|| invalid(format!("the {name} is NULL")))?;
        out.aux = Some(s.session.as_aux());
        Ok(())
    }
}
