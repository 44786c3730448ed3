//! What every library instance of the task generation shares: the handle with its
//! context inside, created on a device, destroyed only while idle.

use super::pe::doca_ctx3;
use crate::common::handles::{Handle, kind};
use crate::common::{doca_error_t, ffi, ffi_value, free_handle, handle, new_handle};
use crate::v22::dev::doca_dev;
use doca_core::Ctx;

/// A library instance (`struct doca_dma`, ...) with its `struct doca_ctx`.
#[derive(Debug)]
pub struct Lib3<T> {
    pub(crate) lib: T,
    pub(crate) ctx: doca_ctx3,
}

impl<T> Lib3<T> {
    /// The library instance.
    pub fn lib(&self) -> &T {
        &self.lib
    }
}

impl<T> Handle for Lib3<T> {
    type Kind = kind::Boxed;
}

/// Creates a library handle on a device (which must have the library's capability).
///
/// # Safety
/// `dev` is NULL or a live device.
pub(crate) unsafe fn lib_create<T>(
    dev: *mut doca_dev,
    out: *mut *mut Lib3<T>,
    lib: T,
    ctx: Ctx,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: the caller's contract.
        let d = unsafe { handle(dev, "dev") }?;
        new_handle(out, "output", || {
            ctx.dev_add(&d.dev)?;
            Ok(Lib3 {
                lib,
                ctx: doca_ctx3::new(ctx),
            })
        })
    })
}

/// Destroys a library handle: only while idle with no task allocated.
///
/// # Safety
/// `p` is NULL or a live handle.
pub(crate) unsafe fn lib_destroy<T>(p: *mut Lib3<T>) -> doca_error_t {
    ffi(|| {
        // SAFETY: the caller's contract.
        let h = unsafe { handle(p, "context") }?;
        h.ctx.destroy()?;
        // SAFETY: a live boxed handle, freed once.
        unsafe { free_handle(p, "context") }
    })
}

/// The `struct doca_ctx` of a library handle.
///
/// # Safety
/// `p` is NULL or a live handle.
pub(crate) unsafe fn lib_as_ctx<T>(p: *mut Lib3<T>) -> *mut doca_ctx3 {
    ffi_value(std::ptr::null_mut(), || {
        // SAFETY: the caller's contract.
        let h = unsafe { handle(p, "context") }?;
        Ok(&h.ctx as *const doca_ctx3 as *mut doca_ctx3)
    })
}
