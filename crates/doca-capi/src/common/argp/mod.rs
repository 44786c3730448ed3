//! `doca_argp.h`: command-line and JSON configuration parsing for DOCA programs.

use crate::common::take_handle;
use crate::common::{
    Result, doca_argp_type, doca_error_t, err, ffi, ffi_value, free_handle, handle, invalid,
    new_handle, out_ptr, put,
};
use doca_core::{Error, ErrorCode};
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::{Mutex, MutexGuard};

pub mod jsonc;
mod parse;
use parse::{Value, apply_json, parse_cli, taken, usage_text};

crate::common::handles::handle_kinds! {
    Boxed: doca_argp_param;
}

/// `callback_func`: (value, program_config).
pub type callback_func = Option<unsafe extern "C" fn(*mut c_void, *mut c_void) -> doca_error_t>;
/// `dpdk_callback`.
pub type dpdk_callback = Option<unsafe extern "C" fn(c_int, *mut *mut c_char) -> doca_error_t>;
/// `validation_callback`.
pub type validation_callback = Option<unsafe extern "C" fn(*mut c_void) -> doca_error_t>;

const TYPE_STRING: c_int = 1;
const TYPE_INT: c_int = 2;
const TYPE_BOOLEAN: c_int = 3;
const TYPE_JSON_OBJ: c_int = 4;

/// `struct doca_argp_param`.
#[derive(Debug, Default)]
pub struct doca_argp_param {
    short: Option<String>,
    long: Option<String>,
    arguments: Option<String>,
    description: Option<String>,
    callback: callback_func,
    kind: c_int,
    mandatory: bool,
    cli_only: bool,
    multiplicity: bool,
}

impl doca_argp_param {
    fn names(&self) -> String {
        match (&self.short, &self.long) {
            (Some(s), Some(l)) => format!("-{s}, --{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, Some(l)) => format!("--{l}"),
            (None, None) => String::new(),
        }
    }
}

struct Parser {
    program: String,
    config: *mut c_void,
    // Boxed: programs hold pointers to registered parameters.
    #[allow(clippy::vec_box)]
    params: Vec<Box<doca_argp_param>>,
    version_cb: callback_func,
    validation_cb: validation_callback,
    dpdk_cb: dpdk_callback,
    grpc: bool,
    grpc_addr: Option<CString>,
    log_level: c_int,
    /// The 3.x face's parser: `--sdk-log-level` is a standard flag.
    sdk_flag: bool,
    sdk_log_level: c_int,
}

// SAFETY: the program configuration pointer and callbacks are the program's, used only
// by the thread that calls doca_argp_start.
unsafe impl Send for Parser {}

static PARSER: Mutex<Option<Parser>> = Mutex::new(None);

fn parser() -> MutexGuard<'static, Option<Parser>> {
    PARSER.lock().unwrap_or_else(|e| e.into_inner())
}

fn not_init() -> Error {
    err(
        ErrorCode::BadState,
        "doca_argp_init was not called (or doca_argp_destroy was)",
    )
}

/// `doca_argp_usage`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_argp_usage() {
    ffi_value((), || {
        let g = parser();
        let p = g.as_ref().ok_or_else(not_init)?;
        print!("{}", usage_text(p));
        use std::io::Write;
        let _ = std::io::stdout().flush();
        Ok(())
    })
}

/// `doca_argp_init`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_init(
    program_name: *const c_char,
    program_config: *mut c_void,
) -> doca_error_t {
    // SAFETY: the same contract.
    unsafe { init(program_name, program_config, false) }
}

/// `doca_argp_init` of either face; `v3`: the 3.x face's parser, which also takes
/// `--sdk-log-level`.
///
/// # Safety
/// `program_name` is NULL or a NUL-terminated string.
pub(crate) unsafe fn init(
    program_name: *const c_char,
    program_config: *mut c_void,
    v3: bool,
) -> doca_error_t {
    ffi(|| {
        // NULL (allowed since DOCA 2.5): the program's name comes from argv[0] at start.
        let name = if program_name.is_null() {
            ""
        } else {
            // SAFETY: a NUL-terminated string.
            unsafe { crate::common::cstr(program_name, "program_name") }?
        };
        let mut g = parser();
        if g.is_some() {
            return Err(err(
                ErrorCode::BadState,
                "doca_argp_init was already called; doca_argp_destroy first",
            ));
        }
        *g = Some(Parser {
            program: name.to_owned(),
            config: program_config,
            params: Vec::new(),
            version_cb: None,
            validation_cb: None,
            dpdk_cb: None,
            grpc: false,
            grpc_addr: None,
            log_level: crate::common::log::doca_log_global_level_get() as c_int,
            sdk_flag: v3,
            sdk_log_level: crate::common::log::SDK_LEVEL.load(std::sync::atomic::Ordering::Relaxed)
                as c_int,
        });
        Ok(())
    })
}

/// `doca_argp_param_create`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_create(param: *mut *mut doca_argp_param) -> doca_error_t {
    ffi(|| new_handle(param, "param", || Ok(doca_argp_param::default())))
}

/// `doca_argp_param_destroy`: for parameters that were not registered.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_destroy(param: *mut doca_argp_param) -> doca_error_t {
    ffi(|| {
        if param.is_null() {
            return Err(invalid("param is NULL"));
        }
        let g = parser();
        if g.as_ref()
            .is_some_and(|p| p.params.iter().any(|b| std::ptr::eq(&**b, param)))
        {
            return Err(err(
                ErrorCode::InUse,
                "the parameter is registered: doca_argp_destroy frees it",
            ));
        }
        // SAFETY: an unregistered boxed parameter, destroyed once.
        unsafe { free_handle(param, "param") }
    })
}

fn set_param(param: *mut doca_argp_param, f: impl FnOnce(&mut doca_argp_param) -> Result<()>) {
    ffi_value((), || {
        // SAFETY: NULL or a live, unregistered parameter handle.
        let p = unsafe { crate::common::handle_mut(param, "param") }?;
        f(p)
    })
}

/// A string setter's value.
///
/// # Safety
/// `s` is NULL or NUL-terminated.
unsafe fn text(s: *const c_char, what: &str) -> Result<String> {
    // SAFETY: the caller's contract.
    Ok(unsafe { crate::common::cstr(s, what) }?.to_owned())
}

/// `doca_argp_param_set_short_name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_short_name(
    param: *mut doca_argp_param,
    name: *const c_char,
) {
    set_param(param, |p| {
        // SAFETY: NULL or NUL-terminated.
        p.short = Some(unsafe { text(name, "name") }?);
        Ok(())
    })
}

/// `doca_argp_param_set_long_name`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_long_name(
    param: *mut doca_argp_param,
    name: *const c_char,
) {
    set_param(param, |p| {
        // SAFETY: NULL or NUL-terminated.
        p.long = Some(unsafe { text(name, "name") }?);
        Ok(())
    })
}

/// `doca_argp_param_set_arguments`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_arguments(
    param: *mut doca_argp_param,
    arguments: *const c_char,
) {
    set_param(param, |p| {
        // SAFETY: NULL or NUL-terminated.
        p.arguments = Some(unsafe { text(arguments, "arguments") }?);
        Ok(())
    })
}

/// `doca_argp_param_set_description`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_description(
    param: *mut doca_argp_param,
    description: *const c_char,
) {
    set_param(param, |p| {
        // SAFETY: NULL or NUL-terminated.
        p.description = Some(unsafe { text(description, "description") }?);
        Ok(())
    })
}

/// `doca_argp_param_set_callback`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_callback(
    param: *mut doca_argp_param,
    callback: callback_func,
) {
    set_param(param, |p| {
        p.callback = callback;
        Ok(())
    })
}

/// `doca_argp_param_set_type`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_type(
    param: *mut doca_argp_param,
    type_: doca_argp_type,
) {
    set_param(param, |p| {
        if !(TYPE_STRING..=TYPE_JSON_OBJ).contains(&type_) {
            return Err(invalid(format!("{type_} is not a doca_argp_type (1..=4)")));
        }
        p.kind = type_;
        Ok(())
    })
}

/// `doca_argp_param_set_mandatory`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_mandatory(param: *mut doca_argp_param) {
    set_param(param, |p| {
        p.mandatory = true;
        Ok(())
    })
}

/// `doca_argp_param_set_cli_only`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_cli_only(param: *mut doca_argp_param) {
    set_param(param, |p| {
        p.cli_only = true;
        Ok(())
    })
}

/// `doca_argp_param_set_multiplicity`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_param_set_multiplicity(param: *mut doca_argp_param) {
    set_param(param, |p| {
        p.multiplicity = true;
        Ok(())
    })
}

/// `doca_argp_register_param`: the parser owns the parameter from now on.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_register_param(
    input_param: *mut doca_argp_param,
) -> doca_error_t {
    ffi(|| {
        // SAFETY: NULL or a live parameter handle.
        let prm = unsafe { handle(input_param, "input_param") }?;
        let mut g = parser();
        let p = g.as_mut().ok_or_else(not_init)?;
        if prm.short.is_none() && prm.long.is_none() {
            return Err(invalid("the parameter has neither a short nor a long name"));
        }
        if prm.short.as_deref().is_some_and(|s| {
            s.is_empty()
                || s.starts_with('-')
                || s.contains(|c: char| c == '=' || c.is_whitespace())
        }) {
            return Err(invalid(
                "a short name is one or more characters, without a leading '-', '=' or spaces",
            ));
        }
        if prm.callback.is_none() {
            return Err(invalid(format!(
                "parameter {} has no callback",
                prm.names()
            )));
        }
        if prm.kind == 0 {
            return Err(invalid(format!("parameter {} has no type", prm.names())));
        }
        if p.params.iter().any(|q| std::ptr::eq(&**q, input_param)) {
            return Err(err(
                ErrorCode::AlreadyExist,
                "the parameter is already registered",
            ));
        }
        if taken(p, prm.short.as_deref(), prm.long.as_deref()) {
            return Err(err(
                ErrorCode::AlreadyExist,
                format!("a parameter named {} exists already", prm.names()),
            ));
        }
        // SAFETY: a boxed parameter from doca_argp_param_create; ownership moves here.
        p.params.push(unsafe { take_handle(input_param, "param") }?);
        Ok(())
    })
}

/// `doca_argp_register_version_callback`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_argp_register_version_callback(callback: callback_func) -> doca_error_t {
    ffi(|| {
        let mut g = parser();
        g.as_mut().ok_or_else(not_init)?.version_cb =
            Some(callback.ok_or_else(|| invalid("callback is NULL"))?);
        Ok(())
    })
}

/// `doca_argp_register_validation_callback`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_argp_register_validation_callback(
    callback: validation_callback,
) -> doca_error_t {
    ffi(|| {
        let mut g = parser();
        g.as_mut().ok_or_else(not_init)?.validation_cb =
            Some(callback.ok_or_else(|| invalid("callback is NULL"))?);
        Ok(())
    })
}

/// `doca_argp_set_dpdk_program`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_argp_set_dpdk_program(callback: dpdk_callback) {
    ffi_value((), || {
        let mut g = parser();
        g.as_mut().ok_or_else(not_init)?.dpdk_cb = callback;
        Ok(())
    })
}

/// `doca_argp_set_grpc_program`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_argp_set_grpc_program() {
    ffi_value((), || {
        let mut g = parser();
        g.as_mut().ok_or_else(not_init)?.grpc = true;
        Ok(())
    })
}

/// `doca_argp_get_grpc_addr`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_get_grpc_addr(address: *mut *const c_char) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(address, "address")?;
        let g = parser();
        let p = g.as_ref().ok_or_else(not_init)?;
        let a = p
            .grpc_addr
            .as_ref()
            .ok_or_else(|| err(ErrorCode::NotFound, "no --grpc-address was given"))?;
        // SAFETY: output checked; the string lives until doca_argp_destroy.
        unsafe { put(out, a.as_ptr()) };
        Ok(())
    })
}

/// `doca_argp_get_log_level`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_get_log_level(log_level: *mut c_int) -> doca_error_t {
    ffi(|| {
        let out = out_ptr(log_level, "log_level")?;
        let g = parser();
        let lvl = g.as_ref().ok_or_else(not_init)?.log_level;
        // SAFETY: output checked.
        unsafe { put(out, lvl) };
        Ok(())
    })
}

/// The SDK log level `--sdk-log-level` set, or the SDK's global level when the program
/// was given none (`doca_argp_get_sdk_log_level`, 3.x).
pub(crate) fn sdk_log_level() -> Result<c_int> {
    let g = parser();
    Ok(g.as_ref().ok_or_else(not_init)?.sdk_log_level)
}

/// `doca_argp_destroy`.
#[unsafe(no_mangle)]
pub extern "C" fn doca_argp_destroy() -> doca_error_t {
    ffi(|| parser().take().map(drop).ok_or_else(not_init))
}

fn call(cb: callback_func, v: &Value, config: *mut c_void) -> Result<()> {
    let Some(cb) = cb else {
        return Ok(());
    };
    // SAFETY: the program's callback with a pointer to a value of the parameter's type,
    // live for the call.
    let r = unsafe {
        match v {
            Value::Text(s) => {
                let c = CString::new(s.as_str()).map_err(|_| invalid("a value contains NUL"))?;
                cb(c.as_ptr() as *mut c_void, config)
            }
            Value::Int(n) => {
                let mut n = *n;
                cb(&mut n as *mut c_int as *mut c_void, config)
            }
            Value::Bool(b) => {
                let mut b = *b;
                cb(&mut b as *mut bool as *mut c_void, config)
            }
        }
    };
    match Error::from_raw(r) {
        None => Ok(()),
        Some(e) => Err(e),
    }
}

fn run(p: &mut Parser, args: &[String], argv0: *mut c_char) -> Result<()> {
    let mut parsed = match parse_cli(p, args) {
        Ok(x) => x,
        Err(e) => {
            eprintln!(
                "{}: {}",
                p.program,
                e.context_str().unwrap_or("bad arguments")
            );
            print!("{}", usage_text(p));
            return Err(e);
        }
    };
    if parsed.help {
        print!("{}", usage_text(p));
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(0);
    }
    if parsed.version {
        match p.version_cb {
            Some(cb) => {
                call(Some(cb), &Value::Int(0), p.config)?;
            }
            None => println!(
                "DOCA SDK     Version (Compilation): 2.2.0080\nDOCA Runtime Version (Runtime):     2.2.0080"
            ),
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
        std::process::exit(0);
    }
    if let Some(path) = parsed.json.clone() {
        apply_json(p, &path, &mut parsed)?;
    }
    if let Some(l) = parsed.log_level {
        let lvl = u32::try_from(l).map_err(|_| invalid(format!("log level {l} is negative")))?;
        let r = crate::common::log::doca_log_global_level_set(lvl);
        if let Some(e) = Error::from_raw(r) {
            return Err(e);
        }
        p.log_level = l;
    }
    if let Some(l) = parsed.sdk_log_level {
        let lvl =
            u32::try_from(l).map_err(|_| invalid(format!("SDK log level {l} is negative")))?;
        crate::common::log::set_sdk_level(lvl)?;
        p.sdk_log_level = l;
    }
    if let Some(a) = parsed.grpc.take() {
        p.grpc_addr = Some(CString::new(a).map_err(|_| invalid("the gRPC address contains NUL"))?);
    }
    for (idx, prm) in p.params.iter().enumerate() {
        let n = parsed.values.iter().filter(|(i, _)| *i == idx).count();
        if n == 0 && prm.mandatory {
            print!("{}", usage_text(p));
            return Err(invalid(format!("{} is mandatory", prm.names())));
        }
        if n > 1 && !prm.multiplicity {
            return Err(invalid(format!(
                "{} was given {n} times (it is not repeatable)",
                prm.names()
            )));
        }
    }
    for (idx, v) in &parsed.values {
        call(p.params[*idx].callback, v, p.config)?;
    }
    if let Some(cb) = p.dpdk_cb {
        let mut owned: Vec<CString> = Vec::new();
        for a in &parsed.rest {
            owned.push(CString::new(a.as_str()).map_err(|_| invalid("an argument contains NUL"))?);
        }
        let mut argv: Vec<*mut c_char> = std::iter::once(argv0)
            .chain(owned.iter().map(|c| c.as_ptr() as *mut c_char))
            .collect();
        let argc = argv.len() as c_int;
        argv.push(std::ptr::null_mut());
        // SAFETY: the program's callback with a NULL-terminated argv, live for the call.
        let r = unsafe { cb(argc, argv.as_mut_ptr()) };
        if let Some(e) = Error::from_raw(r) {
            return Err(e);
        }
    }
    if let Some(cb) = p.validation_cb {
        // SAFETY: the program's callback with its configuration.
        let r = unsafe { cb(p.config) };
        if let Some(e) = Error::from_raw(r) {
            return Err(e);
        }
    }
    Ok(())
}

/// `doca_argp_start`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn doca_argp_start(argc: c_int, argv: *mut *mut c_char) -> doca_error_t {
    ffi(|| {
        let n = usize::try_from(argc).map_err(|_| invalid("argc is negative"))?;
        if n == 0 || argv.is_null() {
            return Err(invalid("argv is NULL or empty"));
        }
        let mut args = Vec::with_capacity(n);
        for i in 1..n {
            // SAFETY: argv holds argc NUL-terminated strings.
            let a = unsafe { *argv.add(i) };
            if a.is_null() {
                return Err(invalid(format!("argv[{i}] is NULL")));
            }
            // SAFETY: as above.
            args.push(unsafe { CStr::from_ptr(a) }.to_string_lossy().into_owned());
        }
        // SAFETY: argv[0] exists (argc >= 1).
        let argv0 = unsafe { *argv };
        // The parser leaves the lock while callbacks run (they may call doca_argp_*).
        let mut p = parser().take().ok_or_else(not_init)?;
        if p.program.is_empty() && !argv0.is_null() {
            // SAFETY: argv[0] is a NUL-terminated string.
            let a0 = unsafe { CStr::from_ptr(argv0) }.to_string_lossy();
            p.program = a0.rsplit('/').next().unwrap_or_default().to_owned();
        }
        let r = run(&mut p, &args, argv0);
        *parser() = Some(p);
        r
    })
}
