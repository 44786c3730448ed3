//! `doca_log.h` of the task generation: application and SDK backends with lower and
//! upper limits, global limits, and sources. The messages go through the same logger
//! as the job generation's (`crate::common::log`); the variadic `doca_log` of this generation
//! is in `csrc/log_variadic3.c`.

use crate::common::log::{
    Audience, FILE, GLOBAL_LEVEL, LEVEL_CRIT, LEVEL_INFO, LEVEL_WARNING, SDK_LEVEL, Sink,
    check_level, create_backend_with, doca_logger_backend, for_backends, log_flush_callback,
    log_text, push_backend, set_sdk_level, sink_buffer, sink_fd, sink_file, sink_syslog, state,
    with_backend,
};
use crate::common::{doca_error_t, ffi, invalid};
use std::ffi::{CStr, c_char, c_int};
use std::sync::atomic::{AtomicU32, Ordering};

/// `struct doca_log_backend`: the same backends as the job generation's.
pub type doca_log_backend = doca_logger_backend;

/// `DOCA_LOG_LEVEL_TRACE`.
const LEVEL_TRACE: u32 = 70;

/// The global upper limit (the most severe level printed): CRIT by default.
static GLOBAL_UPPER: AtomicU32 = AtomicU32::new(LEVEL_CRIT);

unsafe extern "C" {
    static stdout: *mut FILE;
    static stderr: *mut FILE;
}

fn add(sink: Sink, audience: Audience, level: u32, min: u32) -> *mut doca_logger_backend {
    let mut st = state();
    let b = doca_logger_backend {
        sink,
        level,
        upper: LEVEL_TRACE,
        level_frozen: false,
        upper_frozen: false,
        min,
        audience,
    };
    push_backend(&mut st, b)
}

fn app(sink: Sink) -> *mut doca_logger_backend {
    add(
        sink,
        Audience::App,
        GLOBAL_LEVEL.load(Ordering::Relaxed),
        GLOBAL_UPPER.load(Ordering::Relaxed),
    )
}

fn sdk(sink: Sink) -> *mut doca_logger_backend {
    add(sink, Audience::Sdk, SDK_LEVEL.load(Ordering::Relaxed), 0)
}

/// `doca_log_backend_create_standard`: stdout for INFO and less severe messages down
/// to the global lower limit, stderr for WARNING and more severe ones up to the global
/// upper limit.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_create_standard() -> doca_error_t {
    ffi(|| {
        // SAFETY: the C library's standard streams.
        let (out, err) = unsafe { (stdout, stderr) };
        let o = app(Sink::Stream(out));
        let e = app(Sink::Stream(err));
        let mut st = state();
        for b in st.backends.iter_mut() {
            if std::ptr::eq(&**b, o) {
                b.min = LEVEL_INFO;
                b.upper_frozen = true;
            } else if std::ptr::eq(&**b, e) {
                b.level = LEVEL_WARNING;
                b.level_frozen = true;
            }
        }
        Ok(())
    })
}

macro_rules! backends {
    ($($(#[$doc:meta])* pub unsafe extern "C" fn $name:ident($($arg:ident: $ty:ty),*) -> doca_error_t => $sink:expr, $who:ident, $out:ident;)*) => {
        $(
            $(#[$doc])*
            #[unsafe(no_mangle)]
            pub unsafe extern "C" fn $name($($arg: $ty),*) -> doca_error_t {
                // SAFETY: the arguments' contracts are the sink constructors'.
                #[allow(unused_unsafe)]
                let sink = || unsafe { $sink };
                create_backend_with($out, sink, $who)
            }
        )*
    };
}

backends! {
    /// `doca_log_backend_create_with_file`.
    pub unsafe extern "C" fn doca_log_backend_create_with_file(fptr: *mut FILE, backend: *mut *mut doca_log_backend) -> doca_error_t => sink_file(fptr), app, backend;
    /// `doca_log_backend_create_with_fd`.
    pub unsafe extern "C" fn doca_log_backend_create_with_fd(fd: c_int, backend: *mut *mut doca_log_backend) -> doca_error_t => sink_fd(fd), app, backend;
    /// `doca_log_backend_create_with_buffer`.
    pub unsafe extern "C" fn doca_log_backend_create_with_buffer(buffer: *mut c_char, capacity: usize, handler: log_flush_callback, backend: *mut *mut doca_log_backend) -> doca_error_t => sink_buffer(buffer, capacity, handler), app, backend;
    /// `doca_log_backend_create_with_syslog`.
    pub unsafe extern "C" fn doca_log_backend_create_with_syslog(name: *const c_char, backend: *mut *mut doca_log_backend) -> doca_error_t => sink_syslog(name), app, backend;
    /// `doca_log_backend_create_with_file_sdk`.
    pub unsafe extern "C" fn doca_log_backend_create_with_file_sdk(fptr: *mut FILE, backend: *mut *mut doca_log_backend) -> doca_error_t => sink_file(fptr), sdk, backend;
    /// `doca_log_backend_create_with_fd_sdk`.
    pub unsafe extern "C" fn doca_log_backend_create_with_fd_sdk(fd: c_int, backend: *mut *mut doca_log_backend) -> doca_error_t => sink_fd(fd), sdk, backend;
    /// `doca_log_backend_create_with_buffer_sdk`.
    pub unsafe extern "C" fn doca_log_backend_create_with_buffer_sdk(buffer: *mut c_char, capacity: usize, handler: log_flush_callback, backend: *mut *mut doca_log_backend) -> doca_error_t => sink_buffer(buffer, capacity, handler), sdk, backend;
    /// `doca_log_backend_create_with_syslog_sdk`.
    pub unsafe extern "C" fn doca_log_backend_create_with_syslog_sdk(name: *const c_char, backend: *mut *mut doca_log_backend) -> doca_error_t => sink_syslog(name), sdk, backend;
}

fn not_strict(frozen: bool, what: &str) -> crate::common::Result<()> {
    if frozen {
        Err(crate::common::err(
            doca_core::ErrorCode::NotPermitted,
            format!("the backend's {what} limit is strict"),
        ))
    } else {
        Ok(())
    }
}

/// `doca_log_backend_set_level_lower_limit`: the least severe level printed.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_set_level_lower_limit(
    backend: *mut doca_log_backend,
    level: u32,
) -> doca_error_t {
    with_backend(backend, |b| {
        check_level(level)?;
        not_strict(b.level_frozen, "lower")?;
        b.level = level;
        Ok(())
    })
}

/// `doca_log_backend_set_level_upper_limit`: the most severe level printed.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_set_level_upper_limit(
    backend: *mut doca_log_backend,
    level: u32,
) -> doca_error_t {
    with_backend(backend, |b| {
        check_level(level)?;
        not_strict(b.upper_frozen, "upper")?;
        b.min = level;
        Ok(())
    })
}

/// `doca_log_backend_set_level_lower_limit_strict`: later global changes leave it.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_set_level_lower_limit_strict(
    backend: *mut doca_log_backend,
) -> doca_error_t {
    crate::common::log::freeze_lower(backend)
}

/// `doca_log_backend_set_level_upper_limit_strict`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_set_level_upper_limit_strict(
    backend: *mut doca_log_backend,
) -> doca_error_t {
    crate::common::log::freeze_upper(backend)
}

/// `doca_log_backend_set_sdk_level`: the least severe of the library's messages an SDK
/// backend prints.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_set_sdk_level(
    backend: *mut doca_log_backend,
    level: u32,
) -> doca_error_t {
    with_backend(backend, |b| {
        check_level(level)?;
        if b.audience != Audience::Sdk {
            return Err(invalid(
                "not an SDK backend (doca_log_backend_create_with_*_sdk)",
            ));
        }
        b.level = level;
        Ok(())
    })
}

/// `doca_log_level_set_global_lower_limit`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_level_set_global_lower_limit(level: u32) -> doca_error_t {
    ffi(|| {
        check_level(level)?;
        GLOBAL_LEVEL.store(level, Ordering::Relaxed);
        for_backends(Audience::App, |b| {
            if !b.level_frozen {
                b.level = level;
            }
        });
        Ok(())
    })
}

/// `doca_log_level_get_global_lower_limit`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_level_get_global_lower_limit() -> u32 {
    GLOBAL_LEVEL.load(Ordering::Relaxed)
}

/// `doca_log_level_set_global_upper_limit`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_level_set_global_upper_limit(level: u32) -> doca_error_t {
    ffi(|| {
        check_level(level)?;
        GLOBAL_UPPER.store(level, Ordering::Relaxed);
        for_backends(Audience::App, |b| {
            if !b.upper_frozen {
                b.min = level;
            }
        });
        Ok(())
    })
}

/// `doca_log_level_get_global_upper_limit`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_level_get_global_upper_limit() -> u32 {
    GLOBAL_UPPER.load(Ordering::Relaxed)
}

/// `doca_log_level_set_global_sdk_limit`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_level_set_global_sdk_limit(level: u32) -> doca_error_t {
    ffi(|| set_sdk_level(level))
}

/// `doca_log_level_get_global_sdk_limit`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_level_get_global_sdk_limit() -> u32 {
    SDK_LEVEL.load(Ordering::Relaxed)
}

/// `doca_log_register_source`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_register_source(
    source_name: *const c_char,
    source: *mut c_int,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { crate::common::log::doca_log_source_register(source_name, source) }
}

/// `doca_log_unregister_source`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_unregister_source(source: c_int) -> doca_error_t {
    crate::common::log::doca_log_source_destroy(source)
}

/// Called by this generation's variadic entry points with the formatted message
/// (`bucket` -1: no rate limit); TRACE is a message level here.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_capi_log_text3(
    level: u32,
    source: c_int,
    line: c_int,
    bucket: c_int,
    text: *const c_char,
) -> doca_error_t {
    ffi(|| {
        if text.is_null() {
            return Err(invalid("format is NULL"));
        }
        // SAFETY: a NUL-terminated string formatted by the C entry point.
        let t = unsafe { CStr::from_ptr(text) }.to_string_lossy();
        log_text(level, source, line, bucket, &t, LEVEL_TRACE)
    })
}
