//! C handles. Every type C holds pointers to declares beside its struct, once, how it is
//! owned ([`Handle`]), and the functions that make, free and borrow handles accept only the kinds that fit: a
//! borrowed handle cannot be freed and a shared one cannot be borrowed mutably, by
//! construction (the compiler refuses the call). The shape is rustls-ffi's `Castable`.
//!
//! The macros C entry points share (`getter!` and `call!`) are here too.
//!
//! Freeing a handle that is not boxed does not compile:
//!
//! ```compile_fail
//! # use doca_capi::handles::free_handle;
//! // A library's `doca_ctx` lives inside the library's handle.
//! let ctx: *mut doca_capi::exec::doca_ctx = std::ptr::null_mut();
//! let _ = unsafe { free_handle(ctx, "ctx") };
//! ```
//!
//! nor does borrowing a buffer (shared, reference counted) mutably:
//!
//! ```compile_fail
//! # use doca_capi::handles::handle_mut;
//! let buf: *mut doca_capi::mem::doca_buf = std::ptr::null_mut();
//! let _ = unsafe { handle_mut(buf, "buf") };
//! ```
//!
//! while the same calls on handles of the fitting kinds do:
//!
//! ```
//! # use doca_capi::handles::{free_handle, handle, handle_mut};
//! let wq: *mut doca_capi::exec::doca_workq = std::ptr::null_mut();
//! let buf: *mut doca_capi::mem::doca_buf = std::ptr::null_mut();
//! // SAFETY: NULL is refused before anything is read.
//! unsafe {
//!     assert!(free_handle(wq, "workq").is_err());
//!     assert!(handle_mut(wq, "workq").is_err());
//!     assert!(handle(buf, "buf").is_err());
//! }
//! ```

use crate::common::{Result, invalid, out_ptr, put};
use doca_core::Error;

/// How a C handle is owned.
pub mod kind {
    /// Made by `into_handle`/`new_handle`, freed once by `free_handle`, taken back whole
    /// by `take_handle`, or destroyed in place by `destroy_in_place`.
    #[derive(Debug)]
    pub enum Boxed {}
    /// Lives inside its parent (a library's context, a graph's node, a list's entry):
    /// valid while the parent is, never freed on its own.
    #[derive(Debug)]
    pub enum Borrowed {}
    /// Reference counted through its own functions (buffers): several holders at once,
    /// so only shared references are ever made from it.
    #[derive(Debug)]
    pub enum Shared {}
    /// A structure the program owns and fills (jobs, events): read or written during a
    /// call, never made or freed here.
    #[derive(Debug)]
    pub enum Program {}
}

/// One of the kinds in [`kind`].
pub trait Ownership {}
impl Ownership for kind::Boxed {}
impl Ownership for kind::Borrowed {}
impl Ownership for kind::Shared {}
impl Ownership for kind::Program {}

/// Kinds whose holder may have the handle to itself for a call (one user at a time, as
/// DOCA's threading rules say), so a mutable reference may be made.
pub trait Exclusive: Ownership {}
impl Exclusive for kind::Boxed {}
impl Exclusive for kind::Borrowed {}
impl Exclusive for kind::Program {}

/// A type C holds pointers to, and how it is owned.
pub trait Handle {
    /// One of the [`kind`]s.
    type Kind: Ownership;
}

/// Declares how C handles of the types named are owned (beside their structs): `Boxed:
/// a, b; Shared: c;`.
macro_rules! handle_kinds {
    ($($kind:ident: $($t:ty),+ $(,)?;)*) => {
        $($(impl $crate::common::handles::Handle for $t {
            type Kind = $crate::common::handles::kind::$kind;
        })+)*
    };
}
pub(crate) use handle_kinds;

/// A shared reference from a C handle of any kind.
///
/// # Safety
/// `p` is NULL or points to a live `T`.
pub unsafe fn handle<'a, T: Handle>(p: *const T, what: &str) -> Result<&'a T> {
    // SAFETY: the caller's contract.
    unsafe { p.as_ref() }.ok_or_else(|| invalid(format!("{what} is NULL")))
}

/// An exclusive reference from a C handle of a kind that allows one.
///
/// # Safety
/// `p` is NULL or points to a live `T` nobody else uses during the call.
pub unsafe fn handle_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T>
where
    T: Handle<Kind: Exclusive>,
{
    // SAFETY: the caller's contract.
    unsafe { p.as_mut() }.ok_or_else(|| invalid(format!("{what} is NULL")))
}

/// A boxed handle for C.
pub fn into_handle<T: Handle<Kind = kind::Boxed>>(v: T) -> *mut T {
    Box::into_raw(Box::new(v))
}

/// Makes an object and hands it to C through `out` (checked before it is made).
pub fn new_handle<T: Handle<Kind = kind::Boxed>>(
    out: *mut *mut T,
    what: &str,
    make: impl FnOnce() -> Result<T>,
) -> Result<()> {
    let out = out_ptr(out, what)?;
    let h = into_handle(make()?);
    // SAFETY: checked non-NULL; the C caller gives writable memory for the handle.
    unsafe { put(out, h) };
    Ok(())
}

/// Takes a boxed handle back from C: the pointer is no longer valid afterwards.
///
/// # Safety
/// `p` is NULL or a live boxed handle, taken once.
pub unsafe fn take_handle<T: Handle<Kind = kind::Boxed>>(p: *mut T, what: &str) -> Result<Box<T>> {
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    // SAFETY: the caller's contract.
    Ok(unsafe { Box::from_raw(p) })
}

/// Frees a boxed handle.
///
/// # Safety
/// `p` is NULL or a live boxed handle, freed once.
pub unsafe fn free_handle<T: Handle<Kind = kind::Boxed>>(p: *mut T, what: &str) -> Result<()> {
    // SAFETY: the caller's contract.
    drop(unsafe { take_handle(p, what) }?);
    Ok(())
}

/// Destroys a boxed handle in place: on refusal the object goes back where it was, so
/// the C pointer stays valid. Should the destruction panic, the object it had taken is
/// gone (dropped while unwinding): the box is freed too, exactly once, and the error
/// says the handle no longer exists.
///
/// # Safety
/// `p` is a live boxed handle, not used by anyone else during the call.
pub unsafe fn destroy_in_place<T: Handle<Kind = kind::Boxed>>(
    p: *mut T,
    what: &str,
    f: impl FnOnce(T) -> std::result::Result<(), (T, Error)>,
) -> Result<()> {
    if p.is_null() {
        return Err(invalid(format!("{what} is NULL")));
    }
    // SAFETY: p is a live boxed T; it is either written back or its box freed, once.
    unsafe {
        let t = std::ptr::read(p);
        let free_box = || drop(Box::from_raw(p as *mut std::mem::MaybeUninit<T>));
        match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(t))) {
            Ok(Ok(())) => {
                free_box();
                Ok(())
            }
            Ok(Err((t, e))) => {
                std::ptr::write(p, t);
                Err(e)
            }
            Err(_) => {
                free_box();
                Err(crate::common::err(
                    doca_core::ErrorCode::Unexpected,
                    format!("destroying the {what} panicked; the {what} no longer exists"),
                ))
            }
        }
    }
}

/// A C getter: `fn name(handle, *mut out) -> doca_error_t`. The handle (shared
/// reference) is `$x` in `$val`, whose value is written to `out` on success only.
macro_rules! getter {
    ($(#[$doc:meta])* pub unsafe extern "C" fn $name:ident($h:ident : $hty:ty, $out:ident : *mut $oty:ty) -> doca_error_t => |$x:ident| $val:expr) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($h: $hty, $out: *mut $oty) -> doca_error_t {
            $crate::common::ffi(|| {
                let p: *const _ = $h;
                // SAFETY: NULL or a live handle.
                let $x = unsafe { $crate::common::handles::handle(p, stringify!($h)) }?;
                let o = $crate::common::out_ptr($out, stringify!($out))?;
                let v: $oty = $val;
                // SAFETY: output checked.
                unsafe { $crate::common::put(o, v) };
                Ok(())
            })
        }
    };
}

/// A C entry point on one handle: `fn name(handle, args...) -> doca_error_t`, whose
/// body `$body` gets the handle as `$x` through `$get` (`handle` for shared use,
/// `handle_mut` for the one user's, or a function of the same shape that looks
/// further).
macro_rules! call {
    ($get:path; $(#[$doc:meta])* pub unsafe extern "C" fn $name:ident($h:ident : *mut $hty:ty $(, $arg:ident : $ty:ty)*) -> doca_error_t => |$x:ident| $body:expr) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $name($h: *mut $hty $(, $arg: $ty)*) -> doca_error_t {
            $crate::common::ffi(|| {
                // SAFETY: NULL or a live handle, used as `$get` allows.
                let $x = unsafe { $get($h, stringify!($h)) }?;
                $body
            })
        }
    };
}
pub(crate) use {call, getter};

#[cfg(test)]
mod destroy_tests {
    use super::{Handle, destroy_in_place, kind};
    use std::sync::atomic::{AtomicUsize, Ordering};

    static DROPS: AtomicUsize = AtomicUsize::new(0);

    struct Counted;
    impl Handle for Counted {
        type Kind = kind::Boxed;
    }
    impl Drop for Counted {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// A destruction that panics drops the object once and frees its box once; a refused
    /// one leaves the object in place; a successful one drops it once.
    #[test]
    fn a_panicking_destroy_frees_once() {
        let p = Box::into_raw(Box::new(Counted));
        // SAFETY: p is a live box, used by nobody else.
        let r = unsafe {
            destroy_in_place(p, "thing", |t: Counted| {
                let _keep = t;
                panic!("destroy bug")
            })
        };
        assert_eq!(r.unwrap_err().code(), doca_core::ErrorCode::Unexpected);
        assert_eq!(DROPS.load(Ordering::SeqCst), 1);

        let p = Box::into_raw(Box::new(Counted));
        // SAFETY: as above.
        let r = unsafe {
            destroy_in_place(p, "thing", |t: Counted| {
                Err((t, doca_core::Error::new(doca_core::ErrorCode::InUse)))
            })
        };
        assert_eq!(r.unwrap_err().code(), doca_core::ErrorCode::InUse);
        assert_eq!(DROPS.load(Ordering::SeqCst), 1, "refused: still alive");
        // SAFETY: as above: the refusal put it back.
        unsafe { destroy_in_place(p, "thing", |_t: Counted| Ok(())) }.unwrap();
        assert_eq!(DROPS.load(Ordering::SeqCst), 2);
    }
}
