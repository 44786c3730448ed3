//! The library contexts' common part: a library handle with its `doca_ctx`, and the
//! device queries every library answers through.

use crate::common::{
    Result, doca_error_t, ffi, ffi_value, free_handle, handle, handle_mut, invalid, new_handle,
    out_ptr, put,
};
use crate::v22::dev::doca_devinfo;
use crate::v22::exec::{JobFill, doca_ctx};
use doca_core::Ctx;

/// The library handles (`doca_dma`, `doca_sha`, `doca_ec`, `doca_sync_event`), with
/// their `doca_ctx` inside.
impl<T> crate::common::handles::Handle for LibHandle<T> {
    type Kind = crate::common::handles::kind::Boxed;
}

/// A library handle: the library object and its context.
#[derive(Debug)]
pub struct LibHandle<T> {
    pub(crate) lib: T,
    pub(crate) ctx: doca_ctx,
}

/// Creates a library handle.
pub(crate) fn create<T>(
    out: *mut *mut LibHandle<T>,
    lib: T,
    ctx: &Ctx,
    jobs: JobFill,
) -> doca_error_t {
    ffi(|| {
        new_handle(out, "output", || {
            Ok(LibHandle {
                ctx: doca_ctx {
                    ctx: ctx.clone(),
                    jobs,
                },
                lib,
            })
        })
    })
}

/// Destroys a library handle: refused (the handle stays valid) while its context is
/// started or has a device or work queues.
pub(crate) fn destroy<T>(p: *mut LibHandle<T>) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle(p, "context") }?;
        h.ctx.ctx.clone().destroy().map_err(|(_, e)| e)?;
        // SAFETY: a live boxed handle, destroyed once.
        unsafe { free_handle(p, "context") }
    })
}

/// The `struct doca_ctx` of a library handle.
pub(crate) fn as_ctx<T>(p: *mut LibHandle<T>) -> *mut doca_ctx {
    ffi_value(std::ptr::null_mut(), || {
        // SAFETY: NULL or a live handle.
        let h = unsafe { handle_mut(p, "context") }?;
        Ok(&mut h.ctx as *mut doca_ctx)
    })
}

/// Runs a devinfo query.
pub(crate) fn devinfo_query(
    devinfo: *const doca_devinfo,
    f: impl FnOnce(&doca_core::DevInfo) -> Result<()>,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live handle.
        let d = unsafe { handle(devinfo, "devinfo") }?;
        f(&d.info)
    })
}

/// Answers a devinfo query with a value.
pub(crate) fn devinfo_value<T>(
    devinfo: *const doca_devinfo,
    out: *mut T,
    f: impl FnOnce(&doca_core::DevInfo) -> Result<T>,
) -> doca_error_t {
    devinfo_query(devinfo, |d| {
        let o = out_ptr(out, "output")?;
        let v = f(d)?;
        // SAFETY: output checked.
        unsafe { put(o, v) };
        Ok(())
    })
}

/// A C array argument.
///
/// # Safety
/// `p` is NULL or readable for `n` elements.
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize, what: &str) -> Result<&'a [T]> {
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    if n > 1 << 20 {
        return Err(invalid(format!("{what}: {n} elements is too many")));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { std::slice::from_raw_parts(p, n) })
}

/// A 2.2 job type argument.
pub(crate) fn job_type(t: i32) -> Result<u32> {
    u32::try_from(t).map_err(|_| invalid(format!("{t} is not a job type")))
}
