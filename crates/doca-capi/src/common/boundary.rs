//! The boundary every C entry point crosses: DOCA's C types, error codes and their
//! names, the panic boundary, and the checks of pointer arguments and outputs.

use doca_core::{Error, ErrorCode};
use std::ffi::{CStr, c_char, c_int};
use std::panic::{AssertUnwindSafe, catch_unwind};

/// `doca_error_t`.
pub type doca_error_t = c_int;
/// `union doca_data`.
pub type doca_data = doca_core::Data;

/// `enum doca_pci_func_type`.
pub type doca_pci_func_type = c_int;
/// `enum doca_dma_job_types`.
pub type doca_dma_job_types = c_int;
/// `enum doca_sha_job_type`.
pub type doca_sha_job_type = c_int;
/// `enum doca_ec_job_types`.
pub type doca_ec_job_types = c_int;
/// `enum doca_ec_matrix_types`.
pub type doca_ec_matrix_types = c_int;
/// `enum doca_sync_event_job_types`.
pub type doca_sync_event_job_types = c_int;
/// `enum doca_graph_instance_node_state`.
pub type doca_graph_instance_node_state = c_int;
/// `enum doca_argp_type`.
pub type doca_argp_type = c_int;

/// `DOCA_SUCCESS`.
pub const DOCA_SUCCESS: doca_error_t = 0;

pub(crate) use super::handles::{
    destroy_in_place, free_handle, handle, handle_mut, into_handle, new_handle, take_handle,
};

pub(crate) type Result<T> = std::result::Result<T, Error>;

pub(crate) fn err(code: ErrorCode, msg: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    Error::with_context(code, msg)
}

pub(crate) fn invalid(msg: impl Into<std::borrow::Cow<'static, str>>) -> Error {
    err(ErrorCode::InvalidValue, msg)
}

/// Logs the reason behind a returned error at debug level ("nothing completed yet" is
/// not worth a line). Formats nothing unless debug messages are wanted.
fn report(e: &Error) {
    if e.code() != ErrorCode::Again && super::log::enabled(super::log::LEVEL_DEBUG) {
        super::log::internal(super::log::LEVEL_DEBUG, &e.to_string());
    }
}

/// Runs a C entry point's body: its error becomes the returned code (and a debug log
/// line with the reason), a panic becomes `DOCA_ERROR_UNEXPECTED`.
pub(crate) fn ffi(f: impl FnOnce() -> Result<()>) -> doca_error_t {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => DOCA_SUCCESS,
        Ok(Err(e)) => {
            report(&e);
            e.raw()
        }
        Err(_) => ErrorCode::Unexpected as doca_error_t,
    }
}

/// Runs a C entry point that returns a value rather than a code; `fallback` on error
/// or panic.
pub(crate) fn ffi_value<T>(fallback: T, f: impl FnOnce() -> Result<T>) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => {
            report(&e);
            fallback
        }
        Err(_) => fallback,
    }
}

/// Checks an output pointer before the work is done, so that outputs are written only
/// on success.
pub(crate) fn out_ptr<T>(p: *mut T, what: &str) -> Result<*mut T> {
    if p.is_null() {
        Err(invalid(format!("output {what} is NULL")))
    } else {
        Ok(p)
    }
}

/// Writes an output checked by [`out_ptr`].
///
/// # Safety
/// `p` points to writable memory for a `T`.
pub(crate) unsafe fn put<T>(p: *mut T, v: T) {
    // SAFETY: the caller's contract.
    unsafe { p.write(v) }
}

/// A C string argument.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
pub(crate) unsafe fn cstr<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    // SAFETY: the caller's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| invalid(format!("{what} is not valid UTF-8")))
}

/// `doca_get_error_name`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_get_error_name(error: doca_error_t) -> *const c_char {
    name_of(error).as_ptr()
}

/// `doca_get_error_string`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_get_error_string(error: doca_error_t) -> *const c_char {
    string_of(error).as_ptr()
}

fn name_of(e: doca_error_t) -> &'static CStr {
    match usize::try_from(e) {
        Ok(i) if i < ERROR_TEXT.len() => ERROR_TEXT[i].0,
        _ => c"DOCA_ERROR_UNRECOGNIZED",
    }
}

fn string_of(e: doca_error_t) -> &'static CStr {
    match usize::try_from(e) {
        Ok(0) => c"Success",
        Ok(i) if i < ERROR_TEXT.len() => ERROR_TEXT[i].1,
        _ => c"Unrecognized error code",
    }
}

/// NUL-terminated names and descriptions, indexed by code, built from the core's table.
static ERROR_TEXT: std::sync::LazyLock<Vec<(&'static CStr, &'static CStr)>> =
    std::sync::LazyLock::new(|| {
        let max = ErrorCode::ALL
            .iter()
            .map(|c| *c as usize)
            .max()
            .unwrap_or(0);
        let mut v: Vec<(&'static CStr, &'static CStr)> =
            vec![(c"DOCA_ERROR_UNRECOGNIZED", c"Unrecognized error code"); max + 1];
        v[0] = (c"DOCA_SUCCESS", c"Success");
        for c in ErrorCode::ALL {
            let leak = |s: &str| -> &'static CStr {
                let owned = std::ffi::CString::new(s).unwrap_or_default();
                Box::leak(owned.into_boxed_c_str())
            };
            v[*c as usize] = (leak(c.name()), leak(c.description()));
        }
        v
    });

/// `doca_version_runtime`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_version_runtime() -> *const c_char {
    c"2.2.0080".as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_unexpected() {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(|_| {}));
        let r = ffi(|| panic!("a bug"));
        let v = ffi_value(7u32, || panic!("a bug"));
        std::panic::set_hook(prev);
        assert_eq!(r, ErrorCode::Unexpected as doca_error_t);
        assert_eq!(v, 7);
    }

    #[test]
    fn every_code_has_a_name_and_out_of_range_codes_do_not_crash() {
        for c in ErrorCode::ALL {
            // SAFETY: the names are static NUL-terminated strings.
            let name = unsafe { CStr::from_ptr(doca_get_error_name(*c as doca_error_t)) };
            assert_eq!(name.to_str().unwrap(), c.name());
        }
        for bad in [-1, 28, 1000, i32::MIN, i32::MAX] {
            // SAFETY: as above.
            let s = unsafe { CStr::from_ptr(doca_get_error_string(bad)) };
            assert_eq!(s.to_str().unwrap(), "Unrecognized error code");
        }
    }
}
