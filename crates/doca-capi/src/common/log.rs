//! `doca_log.h`: leveled logging with registered sources, backends and rate limits.
//! The variadic entry points (`doca_log`, `doca_log_developer`, `doca_log_rate_limit`)
//! are in `csrc/log_variadic.c`: they format the message and call
//! [`doca_capi_log_text`].

use crate::common::{Result, doca_error_t, err, ffi, ffi_value, invalid, out_ptr, put};
use doca_core::ErrorCode;
use std::ffi::{CStr, CString, c_char, c_int};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// `DOCA_LOG_LEVEL_CRIT`.
pub const LEVEL_CRIT: u32 = 20;
/// `DOCA_LOG_LEVEL_ERROR`.
pub const LEVEL_ERROR: u32 = 30;
/// `DOCA_LOG_LEVEL_WARNING`.
pub const LEVEL_WARNING: u32 = 40;
/// `DOCA_LOG_LEVEL_INFO`.
pub const LEVEL_INFO: u32 = 50;
/// `DOCA_LOG_LEVEL_DEBUG`.
pub const LEVEL_DEBUG: u32 = 60;
/// Below every message level: nothing is printed.
const LEVEL_DISABLE: u32 = 10;
/// Above every message level.
const LEVEL_TRACE: u32 = 70;

/// `log_flush_callback`.
pub type log_flush_callback = Option<unsafe extern "C" fn(buffer: *mut c_char)>;

/// The C stdio stream type.
pub type FILE = libc::FILE;

unsafe extern "C" {
    static stdout: *mut FILE;
    static stderr: *mut FILE;
}

pub(crate) enum Sink {
    /// stdout, with errors and critical messages on stderr.
    Standard,
    Stream(*mut FILE),
    Fd(c_int),
    Buffer {
        buf: *mut c_char,
        cap: usize,
        handler: unsafe extern "C" fn(*mut c_char),
    },
    Syslog,
}

/// Whose messages a backend prints.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Audience {
    /// The program's and the library's (the job generation's backends).
    All,
    /// The program's only (the task generation's application backends).
    App,
    /// The library's only (the task generation's SDK backends).
    Sdk,
}

/// `struct doca_logger_backend` (`struct doca_log_backend` in the task generation).
pub struct doca_logger_backend {
    pub(crate) sink: Sink,
    /// The least severe level printed (the highest number).
    pub(crate) level: u32,
    pub(crate) upper: u32,
    pub(crate) level_frozen: bool,
    pub(crate) upper_frozen: bool,
    /// The most severe level printed (the lowest number; 0: no bound).
    pub(crate) min: u32,
    pub(crate) audience: Audience,
}

impl std::fmt::Debug for doca_logger_backend {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("doca_logger_backend")
            .field("level", &self.level)
            .finish_non_exhaustive()
    }
}

struct Bucket {
    start: Instant,
    count: u32,
}

pub(crate) struct State {
    sources: Vec<Option<String>>,
    // Boxed: backend addresses are the program's handles.
    #[allow(clippy::vec_box)]
    pub(crate) backends: Vec<Box<doca_logger_backend>>,
    buckets: Vec<Bucket>,
    bucket_time: u16,
    quantity: u16,
    upper: u32,
}

// SAFETY: the raw pointers in sinks (FILE streams, program buffers) are the program's,
// handed over for logging from any thread, as the C API documents; they are only used
// under the state's mutex.
unsafe impl Send for State {}

pub(crate) static GLOBAL_LEVEL: AtomicU32 = AtomicU32::new(LEVEL_INFO);
/// The task generation's limit on the library's own messages.
pub(crate) static SDK_LEVEL: AtomicU32 = AtomicU32::new(LEVEL_INFO);
static STATE: Mutex<State> = Mutex::new(State {
    sources: Vec::new(),
    backends: Vec::new(),
    buckets: Vec::new(),
    bucket_time: 1,
    quantity: 10,
    upper: LEVEL_TRACE,
});

pub(crate) fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn check_level(level: u32) -> Result<()> {
    if (LEVEL_DISABLE..=LEVEL_TRACE).contains(&level) && level.is_multiple_of(10) {
        Ok(())
    } else {
        Err(invalid(format!(
            "log level {level} is not one of 10 (disable), 20 (critical), 30 (error), 40 (warning), 50 (info), 60 (debug), 70 (trace)"
        )))
    }
}

fn level_tag(level: u32) -> &'static str {
    match level {
        0..=20 => "CRIT",
        21..=30 => "ERR",
        31..=40 => "WARN",
        41..=50 => "INF",
        _ => "DBG",
    }
}

/// Whether a message at `level` could be printed.
pub(crate) fn enabled(level: u32) -> bool {
    level <= GLOBAL_LEVEL.load(Ordering::Relaxed)
}

fn timestamp() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as libc::time_t;
    // SAFETY: localtime_r fills the zeroed tm from a valid time_t.
    let tm = unsafe {
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&secs, &mut tm);
        tm
    };
    format!(
        "{:02}:{:02}:{:02}:{:06}",
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        now.subsec_micros()
    )
}

fn emit(st: &State, level: u32, source: &str, line: c_int, text: &str, sdk: bool) {
    let formatted = format!(
        "[{}][DOCA][{}][{source}:{line}]: {text}\n",
        timestamp(),
        level_tag(level)
    );
    let Ok(c) = CString::new(formatted.replace('\0', " ")) else {
        return;
    };
    let standard = standard_backend();
    let backends: Vec<&doca_logger_backend> = if st.backends.is_empty() {
        vec![&standard]
    } else {
        st.backends.iter().map(|b| &**b).collect()
    };
    for b in backends {
        if level > b.level || level < b.min {
            continue;
        }
        match (b.audience, sdk) {
            (Audience::App, true) | (Audience::Sdk, false) => continue,
            _ => {}
        }
        // SAFETY: each sink is the program's stream, fd or buffer of `cap` bytes (the
        // contracts of the backend constructors); `c` is NUL-terminated.
        unsafe {
            match &b.sink {
                Sink::Standard => {
                    let f = if level <= LEVEL_ERROR { stderr } else { stdout };
                    libc::fputs(c.as_ptr(), f);
                    libc::fflush(f);
                }
                Sink::Stream(f) => {
                    libc::fputs(c.as_ptr(), *f);
                    libc::fflush(*f);
                }
                Sink::Fd(fd) => {
                    let bytes = c.as_bytes();
                    let mut off = 0;
                    while off < bytes.len() {
                        let n = libc::write(*fd, bytes[off..].as_ptr().cast(), bytes.len() - off);
                        if n <= 0 {
                            break;
                        }
                        off += n as usize;
                    }
                }
                Sink::Buffer { buf, cap, handler } => {
                    let bytes = c.as_bytes();
                    let n = bytes.len().min(cap - 1);
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), *buf as *mut u8, n);
                    *buf.add(n) = 0;
                    handler(*buf);
                }
                Sink::Syslog => {
                    let prio = match level {
                        0..=20 => libc::LOG_CRIT,
                        21..=30 => libc::LOG_ERR,
                        31..=40 => libc::LOG_WARNING,
                        41..=50 => libc::LOG_INFO,
                        _ => libc::LOG_DEBUG,
                    };
                    libc::syslog(prio, c"%s".as_ptr(), c.as_ptr());
                }
            }
        }
    }
}

fn standard_backend() -> doca_logger_backend {
    doca_logger_backend {
        sink: Sink::Standard,
        level: LEVEL_TRACE,
        upper: LEVEL_TRACE,
        level_frozen: false,
        upper_frozen: false,
        min: 0,
        audience: Audience::All,
    }
}

/// Logs one of the library's own messages (the reasons behind returned errors, at debug
/// level).
pub(crate) fn internal(level: u32, text: &str) {
    if !enabled(level) && level > SDK_LEVEL.load(Ordering::Relaxed) {
        return;
    }
    let st = state();
    emit(&st, level, "DOCA", 0, text, true);
}

pub(crate) fn log_text(
    level: u32,
    source: c_int,
    line: c_int,
    bucket: c_int,
    text: &str,
    most: u32,
) -> Result<()> {
    if !(LEVEL_CRIT..=most).contains(&level) || !level.is_multiple_of(10) {
        return Err(invalid(format!(
            "message level {level} is not one of 20, 30, ..., {most}"
        )));
    }
    let mut st = state();
    let name = usize::try_from(source)
        .ok()
        .and_then(|i| st.sources.get(i).cloned().flatten())
        .ok_or_else(|| {
            invalid(format!(
                "log source {source} is not registered (DOCA_LOG_REGISTER)"
            ))
        })?;
    if bucket >= 0 {
        let window = Duration::from_secs(u64::from(st.bucket_time));
        let quantity = u32::from(st.quantity);
        let b = st
            .buckets
            .get_mut(bucket as usize)
            .ok_or_else(|| invalid(format!("rate bucket {bucket} is not registered")))?;
        let now = Instant::now();
        if now.duration_since(b.start) >= window {
            b.start = now;
            b.count = 0;
        }
        if b.count >= quantity {
            return Ok(());
        }
        b.count += 1;
    }
    if enabled(level) {
        emit(&st, level, &name, line, text, false);
    }
    Ok(())
}

/// Called by the variadic entry points with the formatted message (`bucket` -1: no rate
/// limit).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_capi_log_text(
    level: u32,
    source: c_int,
    line: c_int,
    bucket: c_int,
    _developer: c_int,
    text: *const c_char,
) -> doca_error_t {
    ffi(|| {
        if text.is_null() {
            return Err(invalid("format is NULL"));
        }
        // SAFETY: a NUL-terminated string formatted by the C entry point.
        let t = unsafe { CStr::from_ptr(text) }.to_string_lossy();
        log_text(level, source, line, bucket, &t, LEVEL_DEBUG)
    })
}

/// `doca_log_get_bucket_time`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_get_bucket_time() -> u16 {
    ffi_value(0, || Ok(state().bucket_time))
}

/// `doca_log_set_bucket_time`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_set_bucket_time(bucket_time: u16) {
    ffi_value((), || {
        state().bucket_time = bucket_time;
        Ok(())
    })
}

/// `doca_log_get_quantity`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_get_quantity() -> u16 {
    ffi_value(0, || Ok(state().quantity))
}

/// `doca_log_set_quantity`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_set_quantity(quantity: u16) {
    ffi_value((), || {
        state().quantity = quantity;
        Ok(())
    })
}

/// Later global level changes leave the backend's lower level (both generations' calls).
pub(crate) fn freeze_lower(logger: *mut doca_logger_backend) -> doca_error_t {
    with_backend(logger, |b| {
        b.level_frozen = true;
        Ok(())
    })
}

/// Later changes leave the backend's upper level (both generations' calls).
pub(crate) fn freeze_upper(logger: *mut doca_logger_backend) -> doca_error_t {
    with_backend(logger, |b| {
        b.upper_frozen = true;
        Ok(())
    })
}

pub(crate) fn with_backend(
    p: *mut doca_logger_backend,
    f: impl FnOnce(&mut doca_logger_backend) -> Result<()>,
) -> doca_error_t {
    ffi(|| {
        let mut st = state();
        let b = st
            .backends
            .iter_mut()
            .find(|b| std::ptr::eq(&***b, p))
            .ok_or_else(|| {
                invalid("logger is NULL or not a backend made by doca_log_create_*_backend")
            })?;
        f(b)
    })
}

fn set_level(b: &mut doca_logger_backend, level: u32) -> Result<()> {
    check_level(level)?;
    if b.level_frozen {
        return Err(err(
            ErrorCode::NotPermitted,
            "the backend's level is immutable",
        ));
    }
    if level > b.upper {
        return Err(invalid(format!(
            "level {level} is above the backend's upper limit {}",
            b.upper
        )));
    }
    b.level = level;
    Ok(())
}

fn set_upper(b: &mut doca_logger_backend, upper: u32) -> Result<()> {
    check_level(upper)?;
    if b.upper_frozen {
        return Err(err(
            ErrorCode::NotPermitted,
            "the backend's upper level limit is immutable",
        ));
    }
    b.upper = upper;
    if b.level > upper && !b.level_frozen {
        b.level = upper;
    }
    Ok(())
}

/// `doca_log_backend_level_set`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_level_set(
    logger: *mut doca_logger_backend,
    level: u32,
) -> doca_error_t {
    with_backend(logger, |b| set_level(b, level))
}

/// `doca_log_backend_set_upper_level_limit`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_set_upper_level_limit(
    logger: *mut doca_logger_backend,
    upper_level_limit: u32,
) -> doca_error_t {
    with_backend(logger, |b| set_upper(b, upper_level_limit))
}

/// `doca_log_backend_set_lower_level_immutable`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_set_lower_level_immutable(
    logger: *mut doca_logger_backend,
) -> doca_error_t {
    freeze_lower(logger)
}

/// `doca_log_backend_set_upper_level_immutable`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_backend_set_upper_level_immutable(
    logger: *mut doca_logger_backend,
) -> doca_error_t {
    freeze_upper(logger)
}

/// `doca_log_global_level_set`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_global_level_set(level: u32) -> doca_error_t {
    ffi(|| {
        check_level(level)?;
        let mut st = state();
        if level > st.upper {
            return Err(invalid(format!(
                "level {level} is above the global upper limit {}",
                st.upper
            )));
        }
        GLOBAL_LEVEL.store(level, Ordering::Relaxed);
        for b in st.backends.iter_mut().filter(|b| !b.level_frozen) {
            b.level = level.min(b.upper);
        }
        Ok(())
    })
}

/// `doca_log_global_set_upper_level_limit`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_global_set_upper_level_limit(upper_level_limit: u32) -> doca_error_t {
    ffi(|| {
        check_level(upper_level_limit)?;
        let mut st = state();
        st.upper = upper_level_limit;
        if GLOBAL_LEVEL.load(Ordering::Relaxed) > upper_level_limit {
            GLOBAL_LEVEL.store(upper_level_limit, Ordering::Relaxed);
        }
        for b in st.backends.iter_mut().filter(|b| !b.upper_frozen) {
            let _ = set_upper(b, upper_level_limit);
        }
        Ok(())
    })
}

/// `doca_log_global_level_get`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_global_level_get() -> u32 {
    GLOBAL_LEVEL.load(Ordering::Relaxed)
}

/// `doca_log_source_register`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_source_register(
    source_name: *const c_char,
    source: *mut c_int,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a NUL-terminated string.
        let name = unsafe { crate::common::cstr(source_name, "source_name") }?.to_owned();
        let out = out_ptr(source, "source")?;
        let mut st = state();
        let id = match st.sources.iter().position(Option::is_none) {
            Some(i) => {
                st.sources[i] = Some(name);
                i
            }
            None => {
                st.sources.push(Some(name));
                st.sources.len() - 1
            }
        };
        // SAFETY: output checked.
        unsafe { put(out, id as c_int) };
        Ok(())
    })
}

/// `doca_log_source_destroy`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_source_destroy(source: c_int) -> doca_error_t {
    ffi(|| {
        let mut st = state();
        let slot = usize::try_from(source)
            .ok()
            .and_then(|i| st.sources.get_mut(i))
            .filter(|s| s.is_some())
            .ok_or_else(|| invalid(format!("log source {source} is not registered")))?;
        *slot = None;
        if st.sources.iter().all(Option::is_none) {
            st.sources = Vec::new();
            st.buckets = Vec::new();
        }
        Ok(())
    })
}

/// `doca_log_rate_bucket_register`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_rate_bucket_register(
    source: c_int,
    bucket: *mut c_int,
) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(bucket, "bucket")?;
        let mut st = state();
        if usize::try_from(source)
            .ok()
            .and_then(|i| st.sources.get(i))
            .is_none_or(Option::is_none)
        {
            return Err(invalid(format!("log source {source} is not registered")));
        }
        st.buckets.push(Bucket {
            start: Instant::now(),
            count: 0,
        });
        let id = (st.buckets.len() - 1) as c_int;
        // SAFETY: output checked.
        unsafe { put(out, id) };
        Ok(())
    })
}

fn add_backend(sink: Sink) -> *mut doca_logger_backend {
    let mut st = state();
    let level = GLOBAL_LEVEL.load(Ordering::Relaxed).max(LEVEL_DEBUG);
    let upper = st.upper;
    let b = doca_logger_backend {
        sink,
        level: level.min(upper),
        upper,
        level_frozen: false,
        upper_frozen: false,
        min: 0,
        audience: Audience::All,
    };
    push_backend(&mut st, b)
}

/// Adds a backend; its address is the program's handle.
pub(crate) fn push_backend(st: &mut State, b: doca_logger_backend) -> *mut doca_logger_backend {
    let mut b = Box::new(b);
    let p = &mut *b as *mut doca_logger_backend;
    st.backends.push(b);
    p
}

fn create_backend(
    out: *mut *mut doca_logger_backend,
    sink: impl FnOnce() -> Result<Sink>,
) -> doca_error_t {
    create_backend_with(out, sink, add_backend)
}

/// Makes a backend with `add` and hands it out.
pub(crate) fn create_backend_with(
    out: *mut *mut doca_logger_backend,
    sink: impl FnOnce() -> Result<Sink>,
    add: impl FnOnce(Sink) -> *mut doca_logger_backend,
) -> doca_error_t {
    ffi(|| {
        let o = out_ptr(out, "backend")?;
        let p = add(sink()?);
        // SAFETY: output checked.
        unsafe { put(o, p) };
        Ok(())
    })
}

/// `doca_log_create_file_backend`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_create_file_backend(
    fptr: *mut FILE,
    backend: *mut *mut doca_logger_backend,
) -> doca_error_t {
    create_backend(backend, || sink_file(fptr))
}

pub(crate) fn sink_file(fptr: *mut FILE) -> Result<Sink> {
    if fptr.is_null() {
        return Err(invalid("fptr is NULL"));
    }
    Ok(Sink::Stream(fptr))
}

/// `doca_log_create_fd_backend`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_create_fd_backend(
    fd: c_int,
    backend: *mut *mut doca_logger_backend,
) -> doca_error_t {
    create_backend(backend, || sink_fd(fd))
}

pub(crate) fn sink_fd(fd: c_int) -> Result<Sink> {
    if fd < 0 {
        return Err(invalid(format!("fd {fd} is not a file descriptor")));
    }
    Ok(Sink::Fd(fd))
}

/// `doca_log_create_buffer_backend`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_create_buffer_backend(
    buffer: *mut c_char,
    capacity: usize,
    handler: log_flush_callback,
    backend: *mut *mut doca_logger_backend,
) -> doca_error_t {
    create_backend(backend, || sink_buffer(buffer, capacity, handler))
}

pub(crate) fn sink_buffer(
    buffer: *mut c_char,
    capacity: usize,
    handler: log_flush_callback,
) -> Result<Sink> {
    let handler = handler.ok_or_else(|| invalid("handler is NULL"))?;
    if buffer.is_null() || capacity < 2 {
        return Err(invalid("buffer is NULL or shorter than 2 bytes"));
    }
    Ok(Sink::Buffer {
        buf: buffer,
        cap: capacity,
        handler,
    })
}

/// `doca_log_create_syslog_backend`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_log_create_syslog_backend(
    name: *const c_char,
    backend: *mut *mut doca_logger_backend,
) -> doca_error_t {
    // SAFETY: the same contract.
    create_backend(backend, || unsafe { sink_syslog(name) })
}

/// # Safety
/// `name` is NULL or a NUL-terminated string.
pub(crate) unsafe fn sink_syslog(name: *const c_char) -> Result<Sink> {
    // SAFETY: the caller's contract.
    let n = unsafe { crate::common::cstr(name, "name") }?;
    let ident = CString::new(n).map_err(|_| invalid("name contains NUL"))?;
    // SAFETY: openlog keeps the identity pointer: it is leaked so it lives forever.
    unsafe {
        libc::openlog(
            Box::leak(ident.into_boxed_c_str()).as_ptr(),
            libc::LOG_PID,
            libc::LOG_USER,
        )
    };
    Ok(Sink::Syslog)
}

/// `doca_log_create_standard_backend`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_log_create_standard_backend() -> doca_error_t {
    ffi(|| {
        add_backend(Sink::Standard);
        Ok(())
    })
}

pub(crate) fn for_backends(audience: Audience, f: impl Fn(&mut doca_logger_backend)) {
    let mut st = state();
    for b in st.backends.iter_mut().filter(|b| b.audience == audience) {
        f(b);
    }
}

/// Sets the SDK's global log level (`doca_log_level_set_global_sdk_limit`, argp's
/// `--sdk-log-level`): every SDK backend whose level is not frozen follows it.
pub(crate) fn set_sdk_level(level: u32) -> Result<()> {
    check_level(level)?;
    SDK_LEVEL.store(level, Ordering::Relaxed);
    for_backends(Audience::Sdk, |b| {
        if !b.level_frozen {
            b.level = level;
        }
    });
    Ok(())
}
